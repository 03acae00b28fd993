//! A bound on the memory and time a catalog's templates may take while its combinations
//! render.
//!
//! minijinja measures nothing while it joins strings (`~`, `+`) or repeats them (`*`), and
//! fuel counts instructions, not bytes: a template that doubles a string thirty times in a
//! loop asks for gigabytes long before its leaf prints anything, and one that makes a 100 MB
//! string in each pass of a loop runs for minutes on little fuel. Nor does fuel weigh what one
//! instruction reads: `range(99999) == range(99999)` is a few instructions. So whenever a leaf
//! runs in minijinja, a watcher thread looks every few milliseconds at how long each
//! combination has been rendering, and when a leaf can also grow a value (see
//! [`super::template::Templates::may_grow`]), at the process's resident memory. It also looks
//! at how long the whole catalog has been rendering: combinations that each stay just under
//! their own time would otherwise add up to hours. Past any budget it reports the first
//! combination being rendered as a `KV040` error and ends the process with exit code 1.
//! Rendering comes before any output, so nothing has been written by then. Since the memory
//! is the whole process's, combinations watched for it render one at a time (see `render`):
//! the budget then means the same at any thread count.
//!
//! The watcher reads the resident memory from `/proc/self/status`. Where there is none (Unix
//! systems other than Linux, such as macOS), it reads the peak resident memory that
//! `getrusage` reports instead: the process grows past its budget all the same. Elsewhere
//! (Windows) only time is watched.
//!
//! The report goes to stderr. A KRM function's caller reads only the ResourceList on stdout:
//! while one runs, the function sets what to answer there (see [`answer_when_stopped`]).

use std::io::Write as _;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError, mpsc};
use std::time::{Duration, Instant};

use crate::diagnostic::{Diagnostic, codes};
use crate::emit::diagnostics::human_line;
use crate::origin::{ObjectRef, Origin};

/// How much the process may grow while a catalog renders, beyond [`PER_JOB`] for each
/// combination: far more than any catalog needs, far less than memory.
pub const GROWTH_BUDGET: u64 = 512 << 20;
/// What each combination may add to [`GROWTH_BUDGET`]: a rendered pair of objects takes
/// about 16 KiB.
pub const PER_JOB: u64 = 256 << 10;
/// How long one combination may render: about a million times what one takes.
pub const JOB_TIME: Duration = Duration::from_secs(10);
/// How long a whole catalog may render: six combinations that each take nearly [`JOB_TIME`].
/// [`super::MAX_COMBINATIONS`] combinations whose leaves run in minijinja take seconds.
pub const RENDER_TIME: Duration = Duration::from_secs(60);
/// How often the watcher looks.
const PERIOD: Duration = Duration::from_millis(2);

/// Which job each thread is rendering, for the report.
pub struct Running {
    /// One slot per pool thread and one for any other thread: the job's index plus one, or 0.
    slots: Vec<AtomicUsize>,
    /// Per slot, when the watch began timing its job, in milliseconds since `epoch`.
    started: Vec<AtomicU64>,
    /// When the watch began; `None` when nothing watches (no job is timed then).
    epoch: Option<Instant>,
}

impl Running {
    fn new(epoch: Option<Instant>) -> Self {
        let slots = rayon::current_num_threads() + 1;
        Running {
            slots: (0..slots).map(|_| AtomicUsize::new(0)).collect(),
            started: (0..slots).map(|_| AtomicU64::new(0)).collect(),
            epoch,
        }
    }

    /// Note that this thread renders job `job` until the returned guard is dropped.
    pub fn enter(&self, job: usize) -> Entered<'_> {
        let slot = rayon::current_thread_index()
            .unwrap_or(self.slots.len() - 1)
            .min(self.slots.len() - 1);
        if let Some(epoch) = self.epoch {
            self.started[slot].store(millis(epoch.elapsed()), Ordering::Relaxed);
        }
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

    /// Which time has run out, if any: a job's, when one has been rendering for longer than
    /// [`JOB_TIME`], else the whole render's, after [`RENDER_TIME`].
    fn overdue(&self) -> Option<Spent> {
        let now = millis(self.epoch?.elapsed());
        let job = self.slots.iter().zip(&self.started).any(|(slot, started)| {
            slot.load(Ordering::Relaxed) != 0
                && now.saturating_sub(started.load(Ordering::Relaxed)) > millis(JOB_TIME)
        });
        if job {
            Some(Spent::JobTime)
        } else if now > millis(RENDER_TIME) {
            Some(Spent::RenderTime)
        } else {
            None
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
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

/// The process's resident memory in bytes, where `/proc` tells it, else the most it has had.
fn resident() -> Option<u64> {
    proc_resident().or_else(peak_resident)
}

/// The process's resident memory in bytes, where `/proc` tells it.
fn proc_resident() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix("VmRSS:"))?;
    let kib: u64 = line.trim().strip_suffix("kB")?.trim().parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// The most resident memory the process has had, in bytes, as `getrusage` tells it: in bytes
/// on Apple's systems, in KiB on the others.
#[cfg(unix)]
fn peak_resident() -> Option<u64> {
    use nix::sys::resource::{UsageWho, getrusage};
    let most = u64::try_from(getrusage(UsageWho::RUSAGE_SELF).ok()?.max_rss()).ok()?;
    let unit = if cfg!(target_vendor = "apple") {
        1
    } else {
        1024
    };
    (most > 0).then(|| most.saturating_mul(unit))
}

#[cfg(not(unix))]
fn peak_resident() -> Option<u64> {
    None
}

/// Which budget a render has spent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Spent {
    /// The process grew by more than this many bytes.
    Memory(u64),
    /// One combination rendered for longer than [`JOB_TIME`].
    JobTime,
    /// The catalog rendered for longer than [`RENDER_TIME`] in all.
    RenderTime,
}

impl Spent {
    /// What happened, said of `whose` templates (`its`, `the catalog's`).
    fn what(self, whose: &str) -> String {
        match self {
            Spent::Memory(budget) => format!(
                "{whose} templates took more than {} MiB of memory (a string or list grown \
                 without bound by `~`, `+` or `*`?)",
                budget >> 20
            ),
            Spent::JobTime => format!(
                "{whose} templates ran for more than {} s (a loop, or one that compares or \
                 searches large values?)",
                JOB_TIME.as_secs()
            ),
            Spent::RenderTime => format!(
                "the catalog's templates ran for more than {} s in all, the most a whole catalog \
                 may take to render (combinations that each take seconds?)",
                RENDER_TIME.as_secs()
            ),
        }
    }
}

/// What the process writes to stdout, given the finding, when the watch stops it.
type Answer = Box<dyn Fn(&Diagnostic) -> String + Send + Sync>;

/// The answer set by [`answer_when_stopped`], if any.
static ANSWER: Mutex<Option<Answer>> = Mutex::new(None);

/// Until the returned guard is dropped, a render the watch stops writes `answer(finding)` to
/// stdout before the process ends (the finding goes to stderr as well, as always).
pub fn answer_when_stopped(
    answer: impl Fn(&Diagnostic) -> String + Send + Sync + 'static,
) -> Answering {
    *ANSWER.lock().unwrap_or_else(PoisonError::into_inner) = Some(Box::new(answer));
    Answering(())
}

/// Keeps the answer set by [`answer_when_stopped`] until dropped.
#[must_use = "the answer is dropped with the guard"]
pub struct Answering(());

impl Drop for Answering {
    fn drop(&mut self) {
        *ANSWER.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }
}

/// What the watch looks at while a catalog renders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Watch {
    /// Nothing: every leaf is answered without minijinja, in microseconds.
    Nothing,
    /// How long each combination takes: some leaf runs in minijinja, and even one that builds
    /// nothing may compare or search large values on every instruction its fuel allows.
    Time,
    /// Time and the process's memory: some leaf can also grow a value (see
    /// [`super::template::Templates::may_grow`]).
    TimeAndMemory,
}

/// Run `work` over `jobs` combinations, watched as `watch` says. `describe` gives, for a
/// job, the file and line of its document and the combination it renders (`family `g1` size
/// `small``), for the report.
pub fn watched<R>(
    watch: Watch,
    jobs: usize,
    describe: impl Fn(usize) -> Described + Sync,
    work: impl FnOnce(&Running) -> R,
) -> R {
    if watch == Watch::Nothing {
        return work(&Running::new(None));
    }
    let running = Running::new(Some(Instant::now()));
    // Where the system does not tell the memory, only time is watched.
    let start = if watch == Watch::TimeAndMemory {
        resident()
    } else {
        None
    };
    let budget = GROWTH_BUDGET.saturating_add(PER_JOB.saturating_mul(jobs as u64));
    let limit = start.map(|start| start.saturating_add(budget));
    std::thread::scope(|scope| {
        let (stop, stopped) = mpsc::channel::<()>();
        let (running, describe) = (&running, &describe);
        scope.spawn(move || {
            while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(PERIOD) {
                if limit.is_some_and(|limit| resident().is_some_and(|now| now > limit)) {
                    stop_the_run(running, describe, Spent::Memory(budget));
                }
                if let Some(spent) = running.overdue() {
                    stop_the_run(running, describe, spent);
                }
            }
        });
        let result = work(running);
        drop(stop);
        result
    })
}

/// What a stopped render reports of one job: where its combination is written, the
/// combination, and the family or preference document it belongs to, when that has a name.
pub struct Described {
    pub origin: Origin,
    pub combination: String,
    pub object: Option<ObjectRef>,
}

/// Report the first combination (in catalog order) being rendered and end the process.
///
/// Only the first: which others the threads had begun when the watch looked depends on the
/// thread count and on timing, and a report must not. The first is the one a single thread
/// would have been rendering, whenever every combination grows alike.
fn stop_the_run(
    running: &Running,
    describe: &(impl Fn(usize) -> Described + Sync),
    spent: Spent,
) -> ! {
    let (finding, line) = report(running, describe, spent);
    let answer = ANSWER
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .as_ref()
        .map(|answer| answer(&finding));
    if let Some(answer) = answer {
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(answer.as_bytes());
        let _ = stdout.flush();
    }
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
    std::process::exit(1)
}

/// The report of a render stopped for `spent`, as a finding and as its line for stderr: the
/// first combination (in catalog order) being rendered, and what it spent.
fn report(
    running: &Running,
    describe: &(impl Fn(usize) -> Described + Sync),
    spent: Spent,
) -> (Diagnostic, String) {
    let code = codes::CATALOG_RENDER;
    match running.jobs().first() {
        Some(&job) => {
            let Described {
                origin,
                combination,
                object,
            } = describe(job);
            let message = format!(
                "cannot render {combination}: {}; stopped before anything was written",
                spent.what("its")
            );
            let mut finding = Diagnostic::error(code, origin, message);
            if let Some(object) = object {
                finding = finding.with_object(object);
            }
            let line = human_line(&finding) + "\n";
            (finding, line)
        }
        None => {
            let message = format!(
                "{}; stopped before anything was written",
                spent.what("the catalog's")
            );
            let line = format!("error[{code}] {message}\n");
            (
                Diagnostic::error(code, Origin::new("-", 0, None), message),
                line,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_notes_its_job_while_it_renders() {
        let running = Running::new(None);
        assert!(running.jobs().is_empty());
        {
            let _entered = running.enter(4);
            assert_eq!(running.jobs(), [4]);
        }
        assert!(running.jobs().is_empty());
    }

    #[test]
    fn a_job_is_overdue_after_its_time() {
        let epoch = Instant::now().checked_sub(JOB_TIME * 3).unwrap();
        let running = Running::new(Some(epoch));
        assert_eq!(running.overdue(), None);
        let entered = running.enter(0);
        assert_eq!(running.overdue(), None, "just begun");
        // Begun at the epoch, three times its time ago.
        running.started[0].store(0, Ordering::Relaxed);
        running.started[running.started.len() - 1].store(0, Ordering::Relaxed);
        assert_eq!(running.overdue(), Some(Spent::JobTime));
        drop(entered);
        assert_eq!(running.overdue(), None, "done");
    }

    /// Combinations that each stay under their own time still add up: once the catalog has
    /// rendered for longer than its time, the one being rendered is reported, however
    /// recently it began.
    #[test]
    fn a_render_is_overdue_after_the_catalogs_time() {
        let epoch = Instant::now()
            .checked_sub(RENDER_TIME + Duration::from_secs(1))
            .unwrap();
        let running = Running::new(Some(epoch));
        assert_eq!(running.overdue(), Some(Spent::RenderTime));
        let _entered = running.enter(6);
        assert_eq!(running.overdue(), Some(Spent::RenderTime), "just begun");
        let describe = |job: usize| Described {
            origin: Origin::new("c.yaml", 0, Some(9)),
            combination: format!("family `s1` size `s{job}`"),
            object: (job == 6).then(|| ObjectRef {
                api_version: "kvrender.io/v1alpha1".into(),
                kind: "InstancetypeFamily".into(),
                namespace: None,
                name: "s".into(),
            }),
        };
        let (finding, line) = report(&running, &describe, Spent::RenderTime);
        assert_eq!(
            line,
            "c.yaml:9: error[KV040] InstancetypeFamily/s: cannot render family `s1` size `s6`: \
             the catalog's templates ran for more than 60 s in all, the most a whole catalog may \
             take to render (combinations that each take seconds?); stopped before anything was \
             written\n"
        );
        assert_eq!(finding.object.as_ref().map(|o| o.name.as_str()), Some("s"));
        assert_eq!(human_line(&finding) + "\n", line);
        // Nothing is timed where nothing is watched.
        assert_eq!(Running::new(None).overdue(), None);
    }

    #[test]
    fn resident_memory_is_read_where_proc_has_it() {
        if std::path::Path::new("/proc/self/status").exists() {
            assert!(proc_resident().is_some_and(|b| b > 0));
            assert!(resident().is_some());
        }
    }

    /// The fallback reads the peak in bytes: at least a large block the process has touched.
    /// (Not what `/proc` says the process holds plus the block: other tests, running at the
    /// same time, may have held more before and freed it since, and the kernel's two counts
    /// need not agree to the page.)
    #[cfg(unix)]
    #[test]
    fn peak_memory_is_read_from_getrusage() {
        let block = vec![1u8; 256 << 20];
        std::hint::black_box(&block);
        let peak = peak_resident().expect("getrusage tells the peak");
        assert!(peak >= 256 << 20, "peak {peak} below the block's 256 MiB");
        drop(block);
    }
}
