//! `weir-pool`: a fixed-size thread pool with named workers, panic
//! isolation and join on drop.
//!
//! It is the lowest layer of Weir: `weir-executor` runs its long-lived
//! worker loops on it, one closure per worker. It knows nothing about jobs,
//! steps or SQL.
//!
//! - Workers are named `{name}-{index}`.
//! - A closure that panics is caught with `catch_unwind` and counted in
//!   [`ThreadPool::panicked_jobs`]; the worker lives on, so the pool never
//!   shrinks.
//! - Dropping the pool drains: every closure already passed to
//!   [`ThreadPool::execute`] still runs, then every worker is joined.
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicUsize, Ordering};
//!
//! # fn main() -> weir_pool::Result<()> {
//! let pool = weir_pool::ThreadPool::builder()
//!     .name("doc")
//!     .threads(2)
//!     .build()?;
//! let sum = Arc::new(AtomicUsize::new(0));
//! for i in 1..=10 {
//!     let sum = Arc::clone(&sum);
//!     pool.execute(move || {
//!         sum.fetch_add(i, Ordering::Relaxed);
//!     });
//! }
//! pool.execute(|| panic!("isolated"));
//! drop(pool); // drains the queue and joins both workers
//! assert_eq!(sum.load(Ordering::Relaxed), 55);
//! # Ok(())
//! # }
//! ```
//!
//! Under `cfg(weir_loom)` threads, atomics and the queue come from `loom`
//! (see the [`channel`] module), so loom models can drive the pool.

pub mod channel;
mod sync;

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::sync::{Arc, AtomicUsize, Ordering, thread};

/// Errors from building a [`ThreadPool`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The configuration cannot make a pool (for example zero threads).
    #[error("invalid thread pool configuration: {0}")]
    InvalidConfig(String),
    /// The operating system refused to start a worker thread.
    #[error("could not spawn a worker thread")]
    Spawn(#[source] std::io::Error),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

type Task = Box<dyn FnOnce() + Send + 'static>;

/// Configures and builds a [`ThreadPool`].
#[derive(Clone, Debug)]
pub struct Builder {
    name: String,
    threads: usize,
    stack_size: Option<usize>,
}

impl Default for Builder {
    /// Named `weir-pool`, one thread per available core.
    fn default() -> Self {
        Builder {
            name: "weir-pool".to_owned(),
            threads: available_parallelism(),
            stack_size: None,
        }
    }
}

impl Builder {
    /// Worker threads are named `{name}-{index}`.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Number of worker threads; must be at least one.
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// Stack size of each worker thread in bytes (the platform default if
    /// unset).
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = Some(bytes);
        self
    }

    /// Starts every worker thread.
    ///
    /// Fails with [`Error::InvalidConfig`] for zero threads and with
    /// [`Error::Spawn`] if a thread cannot be started; workers already
    /// started are then joined before returning.
    pub fn build(self) -> Result<ThreadPool> {
        if self.threads == 0 {
            return Err(Error::InvalidConfig(
                "a thread pool needs at least one thread".to_owned(),
            ));
        }
        let (sender, receiver) = channel::unbounded::<Task>();
        let panicked = Arc::new(AtomicUsize::new(0));
        let mut pool = ThreadPool {
            name: self.name,
            sender: Some(sender),
            workers: Vec::with_capacity(self.threads),
            panicked: Arc::clone(&panicked),
        };
        for index in 0..self.threads {
            let mut builder = thread::Builder::new().name(format!("{}-{index}", pool.name));
            if let Some(bytes) = self.stack_size {
                builder = builder.stack_size(bytes);
            }
            let receiver = receiver.clone();
            let panicked = Arc::clone(&panicked);
            // On error `pool` is dropped, which joins the workers started so far.
            let handle = builder
                .spawn(move || worker_loop(receiver, panicked))
                .map_err(Error::Spawn)?;
            pool.workers.push(handle);
        }
        Ok(pool)
    }
}

/// A fixed set of named worker threads running closures from a shared FIFO
/// queue.
pub struct ThreadPool {
    name: String,
    /// `None` only while dropping.
    sender: Option<channel::Sender<Task>>,
    workers: Vec<thread::JoinHandle<()>>,
    panicked: Arc<AtomicUsize>,
}

impl ThreadPool {
    /// A [`Builder`] with the defaults (see [`Builder::default`]).
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// Queues `job` to run on some worker thread.
    ///
    /// Never blocks: the queue is unbounded. A panic in `job` is caught and
    /// counted in [`ThreadPool::panicked_jobs`].
    pub fn execute<F>(&self, job: F)
    where
        F: FnOnce() + Send + 'static,
    {
        let sender = self
            .sender
            .as_ref()
            .expect("the sender is only taken in drop");
        // Workers hold the receivers and only exit once the sender is gone,
        // so while `self` is alive the queue is connected.
        if sender.send(Box::new(job)).is_err() {
            unreachable!("thread pool workers exited while the pool is alive");
        }
    }

    /// Number of worker threads; constant for the pool's life.
    pub fn threads(&self) -> usize {
        self.workers.len()
    }

    /// The name prefix of the worker threads.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many closures have panicked so far.
    pub fn panicked_jobs(&self) -> usize {
        self.panicked.load(Ordering::Relaxed)
    }
}

impl Drop for ThreadPool {
    /// Drains: closures already queued still run; then joins every worker.
    fn drop(&mut self) {
        // Disconnect the queue: workers finish what is queued, then exit.
        drop(self.sender.take());
        for handle in self.workers.drain(..) {
            // The worker loop catches every panic of a task, so a join error
            // means the loop itself is broken.
            if handle.join().is_err() {
                panic!("a weir-pool worker loop panicked");
            }
        }
    }
}

impl fmt::Debug for ThreadPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadPool")
            .field("name", &self.name)
            .field("threads", &self.workers.len())
            .field("panicked_jobs", &self.panicked_jobs())
            .finish()
    }
}

fn worker_loop(receiver: channel::Receiver<Task>, panicked: Arc<AtomicUsize>) {
    while let Ok(task) = receiver.recv() {
        if catch_unwind(AssertUnwindSafe(task)).is_err() {
            panicked.fetch_add(1, Ordering::Relaxed);
        }
    }
}

fn available_parallelism() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(all(test, not(weir_loom)))]
mod tests {
    use std::collections::HashSet;
    use std::sync::{Arc, Barrier, Mutex, mpsc};

    use super::*;

    #[test]
    fn zero_threads_is_invalid() {
        let err = ThreadPool::builder().threads(0).build().unwrap_err();
        assert!(matches!(err, Error::InvalidConfig(_)), "{err}");
    }

    #[test]
    fn workers_are_named_and_all_run() {
        let pool = ThreadPool::builder()
            .name("named")
            .threads(3)
            .build()
            .unwrap();
        assert_eq!(pool.threads(), 3);
        assert_eq!(pool.name(), "named");
        // Three closures that wait for each other can only finish if all
        // three workers run at once.
        let barrier = Arc::new(Barrier::new(3));
        let names = Arc::new(Mutex::new(HashSet::new()));
        for _ in 0..3 {
            let barrier = Arc::clone(&barrier);
            let names = Arc::clone(&names);
            pool.execute(move || {
                barrier.wait();
                let name = std::thread::current().name().unwrap().to_owned();
                names.lock().unwrap().insert(name);
            });
        }
        drop(pool);
        let names = names.lock().unwrap();
        let expected: HashSet<String> = (0..3).map(|i| format!("named-{i}")).collect();
        assert_eq!(*names, expected);
    }

    #[test]
    fn panics_are_counted_and_the_pool_keeps_every_worker() {
        let pool = ThreadPool::builder().threads(2).build().unwrap();
        let (done_tx, done_rx) = mpsc::channel();
        for _ in 0..10 {
            let done_tx = done_tx.clone();
            pool.execute(move || {
                let _signal = SendOnDrop(done_tx);
                panic!("boom");
            });
        }
        for _ in 0..10 {
            done_rx.recv().unwrap();
        }
        // Both workers still alive: two closures meeting at a barrier finish.
        let barrier = Arc::new(Barrier::new(2));
        for _ in 0..2 {
            let barrier = Arc::clone(&barrier);
            let done_tx = done_tx.clone();
            pool.execute(move || {
                barrier.wait();
                done_tx.send(()).unwrap();
            });
        }
        done_rx.recv().unwrap();
        done_rx.recv().unwrap();
        assert_eq!(pool.panicked_jobs(), 10);
    }

    #[test]
    fn drop_drains_queued_work() {
        let pool = ThreadPool::builder().threads(1).build().unwrap();
        let (gate_tx, gate_rx) = mpsc::channel::<()>();
        let count = Arc::new(AtomicUsize::new(0));
        pool.execute(move || gate_rx.recv().unwrap());
        for _ in 0..100 {
            let count = Arc::clone(&count);
            pool.execute(move || {
                count.fetch_add(1, Ordering::Relaxed);
            });
        }
        gate_tx.send(()).unwrap();
        drop(pool);
        assert_eq!(count.load(Ordering::Relaxed), 100);
    }

    struct SendOnDrop(mpsc::Sender<()>);

    impl Drop for SendOnDrop {
        fn drop(&mut self) {
            let _ = self.0.send(());
        }
    }
}
