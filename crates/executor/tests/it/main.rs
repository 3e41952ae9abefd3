//! Integration tests for weir-executor: one binary, a module per area.

mod board;
mod config;
mod dag;
mod fairness;
mod lifecycle;
mod panics;
mod running;
mod stress;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, mpsc};
use std::time::Duration;

use weir_executor::{ExecutorConfig, Job, PipelineExecutor, StepResult, step_fn};

/// Generous bound for waits that should end almost at once; reaching it
/// means a bug (a hang), and the test fails instead of hanging.
const PATIENCE: Duration = Duration::from_secs(30);

fn executor(threads: usize) -> PipelineExecutor {
    PipelineExecutor::new(ExecutorConfig {
        thread_name: format!("it-{threads}"),
        ..ExecutorConfig::with_threads(threads)
    })
    .unwrap()
}

/// A job whose step `i` increments `counts[i]`.
fn counting_job(name: &str, counts: &Arc<Vec<AtomicUsize>>) -> Job {
    let mut job = Job::new(name);
    for i in 0..counts.len() {
        let counts = Arc::clone(counts);
        job.push_step(Box::new(step_fn(format!("count {i}"), move |_ctx| {
            counts[i].fetch_add(1, Ordering::SeqCst);
            Ok(())
        })));
    }
    job
}

fn zeroed(n: usize) -> Arc<Vec<AtomicUsize>> {
    Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect())
}

fn loads(counts: &[AtomicUsize]) -> Vec<usize> {
    counts.iter().map(|c| c.load(Ordering::SeqCst)).collect()
}

/// Holds a worker inside a step until opened; `started` tells when the
/// step is running.
struct Gate {
    open_tx: mpsc::Sender<()>,
    started_rx: mpsc::Receiver<()>,
}

impl Gate {
    /// A one-step job that blocks until the gate opens.
    fn job() -> (Gate, Job) {
        let (open_tx, open_rx) = mpsc::channel::<()>();
        let (started_tx, started_rx) = mpsc::channel::<()>();
        let open_rx = Mutex::new(open_rx);
        let job = Job::new("gate").with_step(step_fn("gate", move |_ctx| -> StepResult {
            started_tx.send(()).unwrap();
            open_rx
                .lock()
                .unwrap()
                .recv_timeout(PATIENCE)
                .map_err(|_| "gate never opened")?;
            Ok(())
        }));
        (
            Gate {
                open_tx,
                started_rx,
            },
            job,
        )
    }

    fn wait_started(&self) {
        self.started_rx.recv_timeout(PATIENCE).unwrap();
    }

    fn open(&self) {
        self.open_tx.send(()).unwrap();
    }
}

/// `n` parties meet; each waits until all have arrived (or `PATIENCE`
/// passes, then it fails). Steps meeting here prove that `n` workers run
/// them at the same time.
#[derive(Clone)]
struct Rendezvous {
    inner: Arc<(Mutex<usize>, Condvar)>,
    parties: usize,
}

impl Rendezvous {
    fn new(parties: usize) -> Self {
        Rendezvous {
            inner: Arc::new((Mutex::new(0), Condvar::new())),
            parties,
        }
    }

    fn arrive(&self) -> StepResult {
        let (count, cvar) = &*self.inner;
        let mut arrived = count.lock().unwrap();
        *arrived += 1;
        cvar.notify_all();
        let (arrived, timeout) = cvar
            .wait_timeout_while(arrived, PATIENCE, |n| *n < self.parties)
            .unwrap();
        if timeout.timed_out() {
            return Err(format!("only {} of {} arrived", *arrived, self.parties).into());
        }
        Ok(())
    }
}

/// Counts drops, to prove that steps are released.
struct DropGuard(Arc<AtomicUsize>);

impl Drop for DropGuard {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}
