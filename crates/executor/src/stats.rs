//! Executor counters.

use crate::sync::{AtomicU64, Ordering};

/// A snapshot of an executor's counters (see
/// [`PipelineExecutor::stats`](crate::PipelineExecutor::stats)).
///
/// Counters are read one by one while workers run, so a snapshot taken
/// mid-flight need not be consistent across fields; once every ticket has
/// been waited for, the job counters are final.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExecutorStats {
    /// Steps run (to `Ok`, `Err` or a panic) by main workers.
    pub steps_run_main: u64,
    /// Steps run by reserve workers.
    pub steps_run_reserve: u64,
    /// Steps run by threads waiting for their DAG (where waiters work; see
    /// [`ExecutorConfig::waiters_work`](crate::ExecutorConfig::waiters_work)).
    pub steps_run_waiting: u64,
    /// Steps a worker ran of a job it did not receive from the queue itself
    /// (it found the job on the board).
    pub steals: u64,
    /// Jobs accepted by `submit` or `try_submit`.
    pub jobs_submitted: u64,
    /// Jobs that completed (every step returned `Ok`).
    pub jobs_completed: u64,
    /// Jobs failed by a step's error or panic.
    pub jobs_failed: u64,
    /// Jobs cancelled through their ticket.
    pub jobs_cancelled: u64,
    /// Panics caught in a step's `run`, `name` or `Drop`.
    pub step_panics: u64,
    /// Jobs taken off the board; each job put on the board is taken off
    /// exactly once.
    pub board_removals: u64,
    /// Jobs on the board now (jobs with more than one step are put on the
    /// board while their steps are being claimed).
    pub board_len: usize,
}

#[derive(Debug)]
pub(crate) struct Counters {
    pub(crate) steps_run_main: AtomicU64,
    pub(crate) steps_run_reserve: AtomicU64,
    pub(crate) steps_run_waiting: AtomicU64,
    pub(crate) steals: AtomicU64,
    pub(crate) jobs_submitted: AtomicU64,
    pub(crate) jobs_completed: AtomicU64,
    pub(crate) jobs_failed: AtomicU64,
    pub(crate) jobs_cancelled: AtomicU64,
    pub(crate) step_panics: AtomicU64,
    pub(crate) board_removals: AtomicU64,
}

impl Counters {
    pub(crate) fn new() -> Self {
        Counters {
            steps_run_main: AtomicU64::new(0),
            steps_run_reserve: AtomicU64::new(0),
            steps_run_waiting: AtomicU64::new(0),
            steals: AtomicU64::new(0),
            jobs_submitted: AtomicU64::new(0),
            jobs_completed: AtomicU64::new(0),
            jobs_failed: AtomicU64::new(0),
            jobs_cancelled: AtomicU64::new(0),
            step_panics: AtomicU64::new(0),
            board_removals: AtomicU64::new(0),
        }
    }

    pub(crate) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self, board_len: usize) -> ExecutorStats {
        let read = |c: &AtomicU64| c.load(Ordering::Relaxed);
        ExecutorStats {
            steps_run_main: read(&self.steps_run_main),
            steps_run_reserve: read(&self.steps_run_reserve),
            steps_run_waiting: read(&self.steps_run_waiting),
            steals: read(&self.steals),
            jobs_submitted: read(&self.jobs_submitted),
            jobs_completed: read(&self.jobs_completed),
            jobs_failed: read(&self.jobs_failed),
            jobs_cancelled: read(&self.jobs_cancelled),
            step_panics: read(&self.step_panics),
            board_removals: read(&self.board_removals),
            board_len,
        }
    }
}
