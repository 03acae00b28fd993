//! A bound on the memory a catalog's templates may take while its combinations render.
//!
//! minijinja measures nothing while it joins strings (`~`, `+`) or repeats them (`*`), and
//! fuel counts instructions, not bytes: a template that doubles a string thirty times in a
//! loop asks for gigabytes long before its leaf prints anything. When a catalog has leaves
//! that can grow a value that way (see [`super::template::Templates::may_grow`]), a watcher
//! thread reads the process's resident memory every few milliseconds while the combinations
//! render. Past the budget it reports the combinations being rendered as `KV040` errors and
//! ends the process with exit code 1. Rendering comes before any output, so nothing has been
//! written by then.
//!
//! The watcher reads `/proc/self/status`; where there is none (not Linux) it does not run.

use std::io::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use crate::diagnostic::codes;

/// How much the process may grow while a catalog renders, beyond [`PER_JOB`] for each
/// combination: far more than any catalog needs, far less than memory.
pub const GROWTH_BUDGET: u64 = 512 << 20;
/// What each combination may add to [`GROWTH_BUDGET`]: a rendered pair of objects takes
/// about 16 KiB.
pub const PER_JOB: u64 = 256 << 10;
/// How often the watcher looks.
const PERIOD: Duration = Duration::from_millis(2);

/// Which job each thread is rendering, for the report.
pub struct Running {
    /// One slot per pool thread and one for any other thread: the job's index plus one, or 0.
    slots: Vec<AtomicUsize>,
}

impl Running {
    fn new() -> Self {
        Running {
            slots: (0..=rayon::current_num_threads())
                .map(|_| AtomicUsize::new(0))
                .collect(),
        }
    }

    /// Note that this thread renders job `job` until the returned guard is dropped.
    pub fn enter(&self, job: usize) -> Entered<'_> {
        let slot = rayon::current_thread_index()
            .unwrap_or(self.slots.len() - 1)
            .min(self.slots.len() - 1);
        self.slots[slot].store(job + 1, Ordering::Relaxed);
        Entered {
            slot: &self.slots[slot],
        }
    }

    /// The jobs being rendered now, in job order.
    fn jobs(&self) -> Vec<usize> {
        let mut jobs: Vec<usize> = self
            .slots
            .iter()
            .filter_map(|s| s.load(Ordering::Relaxed).checked_sub(1))
            .collect();
        jobs.sort_unstable();
        jobs.dedup();
        jobs
    }
}

/// A thread's job, noted until dropped.
pub struct Entered<'r> {
    slot: &'r AtomicUsize,
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        self.slot.store(0, Ordering::Relaxed);
    }
}

/// The process's resident memory in bytes, where `/proc` tells it.
fn resident() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix("VmRSS:"))?;
    let kib: u64 = line.trim().strip_suffix("kB")?.trim().parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// Run `work` over `jobs` combinations, watched when `watch` holds. `describe` gives, for a
/// job, the file and line of its document and the combination it renders (`family `g1` size
/// `small``), for the report.
pub fn watched<R>(
    watch: bool,
    jobs: usize,
    describe: impl Fn(usize) -> (String, String) + Sync,
    work: impl FnOnce(&Running) -> R,
) -> R {
    let running = Running::new();
    if !watch {
        return work(&running);
    }
    let Some(start) = resident() else {
        return work(&running);
    };
    let budget = GROWTH_BUDGET.saturating_add(PER_JOB.saturating_mul(jobs as u64));
    let limit = start.saturating_add(budget);
    std::thread::scope(|scope| {
        let (stop, stopped) = mpsc::channel::<()>();
        let (running, describe) = (&running, &describe);
        scope.spawn(move || {
            while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(PERIOD) {
                if resident().is_some_and(|now| now > limit) {
                    stop_the_run(running, describe, budget);
                }
            }
        });
        let result = work(running);
        drop(stop);
        result
    })
}

/// Report the combinations being rendered and end the process.
fn stop_the_run(
    running: &Running,
    describe: &(impl Fn(usize) -> (String, String) + Sync),
    budget: u64,
) -> ! {
    let mut report = String::new();
    let mib = budget >> 20;
    for job in running.jobs() {
        let (location, combination) = describe(job);
        report.push_str(&format!(
            "{location}: error[{}] cannot render {combination}: its templates took more than \
             {mib} MiB of memory (a string or list grown without bound by `~`, `+` or `*`?); \
             stopped before anything was written\n",
            codes::CATALOG_RENDER
        ));
    }
    if report.is_empty() {
        report = format!(
            "error[{}] the catalog's templates took more than {mib} MiB of memory; stopped \
             before anything was written\n",
            codes::CATALOG_RENDER
        );
    }
    let _ = std::io::stderr().lock().write_all(report.as_bytes());
    std::process::exit(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_notes_its_job_while_it_renders() {
        let running = Running::new();
        assert!(running.jobs().is_empty());
        {
            let _entered = running.enter(4);
            assert_eq!(running.jobs(), [4]);
        }
        assert!(running.jobs().is_empty());
    }

    #[test]
    fn resident_memory_is_read_where_proc_has_it() {
        if std::path::Path::new("/proc/self/status").exists() {
            assert!(resident().is_some_and(|b| b > 0));
        }
    }
}
