//! The thread pool every kvrender command runs in.
//!
//! The calling thread is the pool's first worker (`use_current_thread`): the command hands out
//! each parallel step itself and takes part in it, one thread fewer is started, and nothing
//! waits for the others to start.
//!
//! On Linux the new workers are also helped off the calling thread's processor. A new thread
//! is often queued on the processor of the thread that created it, and there it waits until
//! that busy thread is preempted: one to five milliseconds, longer than a whole catalog build
//! spends rendering. So the calling thread steps aside once after starting the pool, and a
//! worker that then finds itself on the caller's processor moves to another one and lets the
//! system place it freely from there on. A worker that started elsewhere does nothing.
//!
//! A new worker then keeps looking for work until it has found none for [`FIRST_LOOK`], before
//! it may sleep. A command's first parallel steps (reading, parsing, rendering) follow each
//! other closely, with short serial stretches between them, while rayon puts an idle worker to
//! sleep within about 50 µs, and waking one can take milliseconds when the system queues it
//! behind the busy caller.

use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rayon::{ThreadPool, ThreadPoolBuildError, ThreadPoolBuilder, Yield};

/// Stack size of every thread of the pool, the calling thread's included (see
/// [`room_on_the_calling_thread`]). Parsing a deeply nested document recurses, but stops at its
/// own depth budget long before that. What needs the room is a catalog template that nests a
/// value in itself in a loop (`{% set ns.v = [[ns.v]] %}`): minijinja frees such a value, and
/// compares it, one level per call. Its fuel bounds the depth at about 100,000 levels (one
/// level per instruction), which take about 10 MiB to free in a release build and about
/// 40 MiB in a debug build; comparing two of them takes about as much again. The room is reserved, not used: a thread's stack takes memory
/// only as deep as it has gone.
pub const WORKER_STACK: usize = 128 << 20;

/// The stack the workers get where the system refuses to reserve [`WORKER_STACK`] for each
/// (strict accounting of memory): enough for everything but such a value.
const SMALL_STACK: usize = 16 << 20;

/// The most worker threads, as `--threads` allows; `RAYON_NUM_THREADS` does not raise it.
pub const MAX_THREADS: usize = 256;

/// Let the calling thread's stack grow as far as the workers' ([`WORKER_STACK`]), where the
/// system lets it: the main thread's stack grows on demand up to the soft `RLIMIT_STACK`
/// (8 MiB by default), read as it grows, so raising that limit to what the hard one allows
/// gives it the room. Whether it has the room now: where the hard limit is lower (`ulimit -Hs
/// 1024`), the command is better run on a thread of its own ([`on_a_thread_with_room`]).
#[cfg(unix)]
pub fn room_on_the_calling_thread() -> bool {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let wanted = WORKER_STACK as u64;
    match getrlimit(Resource::RLIMIT_STACK) {
        Ok((soft, _)) if soft >= wanted => true,
        Ok((_, hard)) => {
            setrlimit(Resource::RLIMIT_STACK, wanted.min(hard), hard).is_ok() && hard >= wanted
        }
        Err(_) => false,
    }
}

/// Where there is no stack limit to raise, the calling thread keeps the stack it was given.
#[cfg(not(unix))]
pub fn room_on_the_calling_thread() -> bool {
    false
}

/// Run `main` on a new thread with the workers' stack ([`WORKER_STACK`], else the smaller
/// one they fall back to), for a calling thread that cannot have that room; on the calling thread
/// where the system starts no such thread. `None` if `main` panicked.
pub fn on_a_thread_with_room<T: Send + 'static>(main: fn() -> T) -> Option<T> {
    for stack in [WORKER_STACK, SMALL_STACK] {
        let started = std::thread::Builder::new()
            .name("main".into())
            .stack_size(stack)
            .spawn(main);
        if let Ok(thread) = started {
            return thread.join().ok();
        }
    }
    Some(main())
}

/// How long a new worker looks for work without finding any before it first goes idle the
/// ordinary way.
pub const FIRST_LOOK: Duration = Duration::from_micros(200);

/// A pool of `threads` workers (one per processor when `None`) whose first worker is the
/// calling thread (where the system lets every worker have [`WORKER_STACK`]).
///
/// # Errors
/// When the system refuses to start a thread.
pub fn pool(threads: Option<usize>) -> Result<ThreadPool, ThreadPoolBuildError> {
    // One per processor unless told otherwise, and never more than `--threads` allows:
    // rayon's own default reads `RAYON_NUM_THREADS`, which may ask for thousands.
    let threads = threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
        .clamp(1, MAX_THREADS);
    // Where the address space is limited (`ulimit -v`), the large stacks are asked for only when
    // they take at most a quarter of it: the allocator reserves address space of its own for
    // each thread, and a worker that finds none left for an allocation ends the process.
    let stack = if stacks_fit(threads, WORKER_STACK) {
        WORKER_STACK
    } else {
        SMALL_STACK
    };
    // rayon makes the calling thread the first worker before it starts the others, and leaves
    // it so when one of them cannot start: the calling thread cannot join another pool after
    // that. So the second try, with the smaller stacks, starts all its workers anew; the
    // command then runs on one of them (`ThreadPool::install`), the caller waiting.
    pool_with(threads, stack, true).or_else(|_| pool_with(threads, SMALL_STACK, false))
}

/// Whether `threads` stacks of `stack` bytes take at most a quarter of the address space the
/// process may have.
#[cfg(unix)]
fn stacks_fit(threads: usize, stack: usize) -> bool {
    use nix::sys::resource::{Resource, getrlimit};
    match getrlimit(Resource::RLIMIT_AS) {
        Ok((soft, _)) => (threads as u64).saturating_mul(stack as u64) <= soft / 4,
        Err(_) => true,
    }
}

/// Where no limit can be read, the large stacks are asked for (and the small ones on failure).
#[cfg(not(unix))]
fn stacks_fit(_threads: usize, _stack: usize) -> bool {
    true
}

/// A pool of `threads` workers with `stack` bytes of stack each, the calling thread the first of
/// them when `on_the_caller`. When a worker cannot start, the ones that did are waited for
/// before the error is returned: their stacks are then given back, for a second try to use.
fn pool_with(
    threads: usize,
    stack: usize,
    on_the_caller: bool,
) -> Result<ThreadPool, ThreadPoolBuildError> {
    let started: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
    let record = Arc::clone(&started);
    let mut builder = ThreadPoolBuilder::new()
        .stack_size(stack)
        .spawn_handler(move |worker| {
            let mut thread = std::thread::Builder::new();
            if let Some(size) = worker.stack_size() {
                thread = thread.stack_size(size);
            }
            let handle = thread.spawn(|| worker.run())?;
            record
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(handle);
            Ok(())
        });
    if on_the_caller {
        builder = builder.use_current_thread();
    }
    builder = builder.num_threads(threads);
    let spread = spread::Spread::here();
    let step_aside = spread.is_some();
    builder = builder.start_handler(move |_| {
        if let Some(spread) = &spread {
            spread.leave_creator();
        }
        // memchr asks which vector instructions the processor has at its first search, and the
        // answer is kept for the process. Finding out runs `cpuid` several times, and in a
        // virtual machine each is a trip to the hypervisor: about 65 µs in all on the machine
        // the README's figures come from. The new worker asks at once, off the caller's path.
        #[cfg(target_arch = "x86_64")]
        let _ = std::arch::is_x86_feature_detected!("avx2");
        look_for_work(FIRST_LOOK);
    });
    let pool = match builder.build() {
        Ok(pool) => pool,
        Err(e) => {
            // rayon has told the workers that started to end.
            let started =
                std::mem::take(&mut *started.lock().unwrap_or_else(PoisonError::into_inner));
            for handle in started {
                let _ = handle.join();
            }
            return Err(e);
        }
    };
    if step_aside && pool.current_num_threads() > 1 {
        std::thread::yield_now();
    }
    Ok(pool)
}

/// On a worker: run the pool's jobs as they come, until none has come for `patience`.
fn look_for_work(patience: Duration) {
    let mut idle_since = Instant::now();
    loop {
        match rayon::yield_now() {
            Some(Yield::Executed) => idle_since = Instant::now(),
            Some(Yield::Idle) if idle_since.elapsed() < patience => std::hint::spin_loop(),
            Some(Yield::Idle) | None => return,
        }
    }
}

#[cfg(target_os = "linux")]
mod spread {
    use nix::sched::{CpuSet, sched_getaffinity, sched_getcpu, sched_setaffinity};
    use nix::unistd::Pid;

    /// Where the creating thread runs and which processors it may use.
    pub struct Spread {
        cpu: usize,
        allowed: CpuSet,
    }

    impl Spread {
        /// The calling thread's processor and affinity, when it may run on more than one.
        pub fn here() -> Option<Spread> {
            let allowed = sched_getaffinity(Pid::from_raw(0)).ok()?;
            let count = (0..CpuSet::count())
                .filter(|&i| allowed.is_set(i).unwrap_or(false))
                .take(2)
                .count();
            if count < 2 {
                return None;
            }
            let cpu = sched_getcpu().ok()?;
            Some(Spread { cpu, allowed })
        }

        /// Run on a new worker: when it shares the creator's processor, move to another of
        /// the allowed ones, then allow them all again. Best effort: a refusal changes nothing.
        pub fn leave_creator(&self) {
            if sched_getcpu().ok() != Some(self.cpu) {
                return;
            }
            let mut elsewhere = self.allowed;
            if elsewhere.unset(self.cpu).is_ok()
                && sched_setaffinity(Pid::from_raw(0), &elsewhere).is_ok()
            {
                let _ = sched_setaffinity(Pid::from_raw(0), &self.allowed);
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod spread {
    /// Nothing to do where the placement of new threads is not known.
    pub struct Spread;

    impl Spread {
        pub fn here() -> Option<Spread> {
            None
        }

        pub fn leave_creator(&self) {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_calling_thread_is_the_first_of_the_workers_asked_for() {
        // On a thread of its own: a thread can be a worker of one pool only.
        std::thread::spawn(|| {
            let pool = pool(Some(3)).unwrap();
            assert_eq!(pool.current_num_threads(), 3);
            let caller = std::thread::current().id();
            let (index, thread) =
                pool.install(|| (rayon::current_thread_index(), std::thread::current().id()));
            assert_eq!(index, Some(0));
            assert_eq!(thread, caller);
            // Every worker takes part: a broadcast runs once on each.
            let mut seen = pool.broadcast(|ctx| ctx.index());
            seen.sort_unstable();
            assert_eq!(seen, vec![0, 1, 2]);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_worker_looking_for_work_runs_what_comes_then_stops() {
        // Not on a worker: nothing to look for.
        look_for_work(Duration::from_secs(3600));

        let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let ran = std::sync::atomic::AtomicBool::new(false);
        let patience = Duration::from_millis(5);
        let (ran_while_looking, waited) = pool.install(|| {
            rayon::scope(|s| {
                s.spawn(|_| ran.store(true, std::sync::atomic::Ordering::SeqCst));
                let started = Instant::now();
                look_for_work(patience);
                (
                    ran.load(std::sync::atomic::Ordering::SeqCst),
                    started.elapsed(),
                )
            })
        });
        assert!(ran_while_looking, "the job waiting was not run");
        assert!(waited >= patience, "stopped looking after {waited:?}");
    }

    #[test]
    fn zero_threads_means_one() {
        std::thread::spawn(|| {
            let pool = pool(Some(0)).unwrap();
            assert_eq!(pool.current_num_threads(), 1);
        })
        .join()
        .unwrap();
    }

    #[cfg(target_os = "linux")]
    mod linux {
        use nix::sched::{CpuSet, sched_getaffinity, sched_setaffinity};
        use nix::unistd::Pid;

        use super::super::spread::Spread;

        fn allowed() -> CpuSet {
            sched_getaffinity(Pid::from_raw(0)).unwrap()
        }

        fn same(a: &CpuSet, b: &CpuSet) -> bool {
            (0..CpuSet::count()).all(|i| a.is_set(i).unwrap() == b.is_set(i).unwrap())
        }

        #[test]
        fn a_worker_that_moves_may_then_run_anywhere_again() {
            // On a thread of its own: the test changes the affinity of the thread it runs on.
            std::thread::spawn(|| {
                let before = allowed();
                let Some(spread) = Spread::here() else {
                    return; // one processor: nothing to spread over
                };
                spread.leave_creator();
                assert!(same(&allowed(), &before), "the affinity was not given back");
            })
            .join()
            .unwrap();
        }

        #[test]
        fn a_thread_bound_to_one_processor_is_left_alone() {
            std::thread::spawn(|| {
                let cpu = nix::sched::sched_getcpu().unwrap();
                let mut one = CpuSet::new();
                one.set(cpu).unwrap();
                sched_setaffinity(Pid::from_raw(0), &one).unwrap();
                assert!(Spread::here().is_none());
            })
            .join()
            .unwrap();
        }
    }
}
