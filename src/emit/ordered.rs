//! Writing a long stream as it is produced: items are worked on in parallel, and each printed
//! piece is written as soon as every piece before it has been, then freed.
//!
//! Holding every printed document until the end costs fresh pages, and fresh pages are what a
//! large run spends its system time on: 10,000 expanded VMs print about 16 MB. Written as they
//! come, the same few batches of memory are used again and again.
//!
//! The workers take batches of items in input order from a shared counter, so the pieces
//! become ready nearly in order and only a few batches wait for an earlier one. Whichever
//! worker hands over the batch that is next in line writes it, and every batch after it that
//! is ready, outside the lock; a worker that finds someone else writing leaves its batch to
//! them.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use rayon::prelude::*;

/// Items per batch: enough that taking a batch costs little next to working on it, few enough
/// that the batches waiting for an earlier one hold little.
pub const BATCH: usize = 32;

/// What became of one item.
pub enum Piece<R> {
    /// Text to write, in item order.
    Print(String),
    /// Something for the caller, returned with the item's index.
    Keep(R),
    /// Text to write and something for the caller.
    PrintKeep(String, R),
    /// Nothing.
    Skip,
    /// Stop: take no further batches. The stream is left unfinished (see [`Streamed::stopped`]).
    Stop,
}

/// What [`stream`] did.
pub struct Streamed<R> {
    /// The [`Piece::Keep`] values, with their item indices, in item order.
    pub kept: Vec<(usize, R)>,
    /// A [`Piece::Stop`] came: some items were not worked on and some pieces not written.
    pub stopped: bool,
    /// Whether any text was handed to the writer (even if writing it failed).
    pub wrote: bool,
    /// The first write error, if any. Nothing was written after it.
    pub error: Option<io::Error>,
}

/// Work on every item of `items` on the current thread pool's workers and write the printed
/// pieces to `out` in item order, each as soon as all pieces before it are written.
pub fn stream<T, R, W>(items: &[T], out: W, work: impl Fn(&T) -> Piece<R> + Sync) -> Streamed<R>
where
    T: Sync,
    R: Send,
    W: Write + Send,
{
    let batches = items.len().div_ceil(BATCH);
    let taken = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let sink = Sink::new(out);
    let kept = Mutex::new(Vec::new());
    // One task per worker; each takes batches until there are none left. A worker that starts
    // late finds fewer, or none.
    (0..rayon::current_num_threads())
        .into_par_iter()
        .with_max_len(1)
        .for_each(|_| {
            let mut mine = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let n = taken.fetch_add(1, Ordering::Relaxed);
                if n >= batches {
                    break;
                }
                let from = n * BATCH;
                let to = (from + BATCH).min(items.len());
                let mut printed = Vec::with_capacity(to - from);
                let mut stopped = false;
                for (i, item) in items[from..to].iter().enumerate() {
                    match work(item) {
                        Piece::Print(text) => printed.push(text),
                        Piece::Keep(r) => mine.push((from + i, r)),
                        Piece::PrintKeep(text, r) => {
                            printed.push(text);
                            mine.push((from + i, r));
                        }
                        Piece::Skip => {}
                        Piece::Stop => {
                            stopped = true;
                            break;
                        }
                    }
                }
                if stopped {
                    stop.store(true, Ordering::Relaxed);
                    break;
                }
                sink.put(n, printed);
            }
            if !mine.is_empty() {
                lock(&kept).append(&mut mine);
            }
        });
    let mut kept = kept.into_inner().unwrap_or_else(PoisonError::into_inner);
    kept.sort_by_key(|(i, _)| *i);
    let state = sink
        .state
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner);
    Streamed {
        kept,
        stopped: stop.into_inner(),
        wrote: state.wrote,
        error: state.error,
    }
}

/// The batches handed over so far and the writer.
struct Sink<W> {
    state: Mutex<State<W>>,
}

struct State<W> {
    /// The writer; `None` while a worker writes with it outside the lock.
    out: Option<W>,
    /// The batch to write next.
    next: usize,
    /// Batches handed over before their turn.
    waiting: BTreeMap<usize, Vec<String>>,
    wrote: bool,
    error: Option<io::Error>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<W: Write> Sink<W> {
    fn new(out: W) -> Self {
        Sink {
            state: Mutex::new(State {
                out: Some(out),
                next: 0,
                waiting: BTreeMap::new(),
                wrote: false,
                error: None,
            }),
        }
    }

    /// Hand over batch `n` (each number once). Writes it, and every batch after it that is
    /// waiting, when it is next in line and no other worker is writing.
    fn put(&self, n: usize, parts: Vec<String>) {
        let mut state = lock(&self.state);
        state.waiting.insert(n, parts);
        let Some(mut out) = state.out.take() else {
            // Another worker is writing; it looks at the waiting batches before it stops.
            return;
        };
        loop {
            let mut due = Vec::new();
            loop {
                let next = state.next;
                let Some(parts) = state.waiting.remove(&next) else {
                    break;
                };
                due.extend(parts);
                state.next = next + 1;
            }
            if due.is_empty() {
                state.out = Some(out);
                return;
            }
            let failed = state.error.is_some();
            state.wrote = true;
            drop(state);
            // After a failed write nothing more is written; the pieces are only freed.
            let result = if failed {
                Ok(())
            } else {
                super::write_parts(&mut out, &due)
            };
            drop(due);
            state = lock(&self.state);
            if let Err(e) = result {
                state.error.get_or_insert(e);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A writer that records what it was given, shared so a test can read it afterwards.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            lock(&self.0).extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool")
    }

    fn run(threads: usize, items: &[u32]) -> (String, Streamed<u32>) {
        let out = Shared::default();
        let streamed = pool(threads).install(|| {
            stream(items, out.clone(), |&i| match i % 7 {
                0 => Piece::Keep(i),
                3 => Piece::Skip,
                5 => Piece::PrintKeep(format!("{i}\n"), i),
                _ => {
                    // Uneven work, so batches finish out of order.
                    if i % 5 == 0 {
                        std::thread::sleep(std::time::Duration::from_micros(50));
                    }
                    Piece::Print(format!("{i}\n"))
                }
            })
        });
        let text = String::from_utf8(lock(&out.0).clone()).expect("utf-8");
        (text, streamed)
    }

    #[test]
    fn pieces_are_written_in_item_order_at_any_thread_count() {
        let items: Vec<u32> = (0..1000).collect();
        let expected: String = items
            .iter()
            .filter(|i| !matches!(*i % 7, 0 | 3))
            .map(|i| format!("{i}\n"))
            .collect();
        for threads in [1, 2, 4] {
            let (text, streamed) = run(threads, &items);
            assert_eq!(text, expected, "{threads} threads");
            let kept: Vec<u32> = streamed.kept.iter().map(|(_, r)| *r).collect();
            let want: Vec<u32> = items
                .iter()
                .copied()
                .filter(|i| matches!(i % 7, 0 | 5))
                .collect();
            assert_eq!(kept, want, "{threads} threads");
            assert!(streamed.kept.iter().all(|(i, r)| *i as u32 == *r));
            assert!(!streamed.stopped && streamed.wrote && streamed.error.is_none());
        }
    }

    #[test]
    fn nothing_is_written_for_no_items() {
        let (text, streamed) = run(2, &[]);
        assert!(text.is_empty());
        assert!(!streamed.wrote && !streamed.stopped);
    }

    #[test]
    fn a_stop_in_the_first_batch_writes_nothing() {
        let items: Vec<u32> = (0..1000).collect();
        let out = Shared::default();
        let streamed = pool(2).install(|| {
            stream(&items, out.clone(), |&i| {
                if i == 5 {
                    Piece::<()>::Stop
                } else {
                    Piece::Print(format!("{i}\n"))
                }
            })
        });
        assert!(streamed.stopped);
        // Batches after the first may have been worked on, but none can be written before it.
        assert!(!streamed.wrote);
        assert!(lock(&out.0).is_empty());
    }

    /// A writer that fails after a number of bytes.
    struct Failing(usize);

    impl Write for Failing {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.0 == 0 {
                return Err(io::ErrorKind::BrokenPipe.into());
            }
            let n = buf.len().min(self.0);
            self.0 -= n;
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_write_error_is_reported_and_the_rest_is_only_freed() {
        let items: Vec<u32> = (0..1000).collect();
        let streamed = pool(2).install(|| {
            stream(&items, Failing(100), |&i| {
                Piece::<()>::Print(format!("{i}\n"))
            })
        });
        let error = streamed.error.expect("the write error");
        assert_eq!(error.kind(), io::ErrorKind::BrokenPipe);
        assert!(streamed.wrote && !streamed.stopped);
    }
}
