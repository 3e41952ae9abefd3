//! Wake-up: a job published to the board while a helper goes to sleep
//! always gets help; no wake-up is lost.
//!
//! The models run the real executor (on loom threads) on a job whose step 0
//! blocks until step 1 has run. That breaks the `Step` contract on purpose
//! (a step must not wait for a higher-index one): it is a probe that turns
//! a lost wake-up into a deadlock loom reports. Whichever worker claims
//! step 0 blocks, so the job completes only if another worker claims step
//! 1, which means it was not left asleep while step 1 sat on the board.
//!
//! - `wake`: one main and one reserve worker, the rendezvous job alone.
//! - `wake_pending_token`: the same executor runs a two-step job first, so
//!   its wake token may still be pending when the rendezvous job is
//!   announced: the announcer's `try_send` finds the channel full and the
//!   reserve worker must see the new job when it takes the old token. That
//!   is the store-buffering pattern the `SeqCst` fences in `wake` and
//!   `reserve_worker` close; the loom stand-ins of the board and the
//!   channel synchronise no more than the real ones there, so deleting the
//!   fences (`weir_loom_bug = "fences"`) deadlocks this model.
//! - `wake_idle_main`: two main workers and no reserve: the second main
//!   worker helps through the idle-main path (`idle_mains`, its fence, and
//!   the `Help` message) or by finding the job on the board.

use loom::sync::{Arc, Condvar, Mutex};
use weir_executor::{ExecutorConfig, Job, JobOutcome, PipelineExecutor, step_fn};

use crate::{check, counting_job, run_counts};

/// The real executor with one main and one reserve worker.
pub(crate) fn tiny_executor() -> PipelineExecutor {
    executor_with((1, 1))
}

/// The real executor with `(main, reserve)` workers.
fn executor_with(split: (usize, usize)) -> PipelineExecutor {
    PipelineExecutor::new(ExecutorConfig {
        threads: split.0 + split.1,
        split: Some(split),
        queue_capacity: None,
        thread_name: "loom".to_owned(),
        waiters_work: false,
    })
    .unwrap()
}

/// Step 0 waits for step 1: the job needs both workers at once.
pub(crate) fn rendezvous_job() -> Job {
    let signal = Arc::new((Mutex::new(false), Condvar::new()));
    let waiter = Arc::clone(&signal);
    Job::new("rendezvous")
        .with_step(step_fn("wait for step 1", move |_ctx| {
            let (done, changed) = &*waiter;
            let mut done = done.lock().unwrap();
            while !*done {
                done = changed.wait(done).unwrap();
            }
            Ok(())
        }))
        .with_step(step_fn("release step 0", move |_ctx| {
            let (done, changed) = &*signal;
            *done.lock().unwrap() = true;
            changed.notify_all();
            Ok(())
        }))
}

/// Submits the rendezvous job while the reserve worker is starting up and
/// going to sleep; the job must complete in every interleaving.
pub(crate) fn wake_model() {
    let executor = tiny_executor();
    let ticket = executor.submit(rendezvous_job()).unwrap();
    assert_eq!(ticket.wait(), JobOutcome::Completed);
    assert_eq!(executor.board_len(), 0, "a finished job leaves the board");
    drop(executor);
}

#[test]
fn wake_no_lost_wakeup() {
    check("wake", wake_model);
}

/// A two-step job, then the rendezvous job: the first job's wake token may
/// still be pending when the second is announced.
pub(crate) fn wake_pending_token_model() {
    let executor = tiny_executor();
    let (first, runs) = counting_job("first", 2);
    let first = executor.submit(first).unwrap();
    let second = executor.submit(rendezvous_job()).unwrap();
    assert_eq!(second.wait(), JobOutcome::Completed);
    assert_eq!(first.wait(), JobOutcome::Completed);
    assert_eq!(run_counts(&runs), [1, 1]);
    drop(executor);
}

#[test]
fn wake_pending_token_no_lost_wakeup() {
    check("wake_pending_token", wake_pending_token_model);
}

/// Two main workers, no reserve: one receives the rendezvous job, the
/// other must help, asleep on the job queue or not.
pub(crate) fn wake_idle_main_model() {
    let executor = executor_with((2, 0));
    let ticket = executor.submit(rendezvous_job()).unwrap();
    assert_eq!(ticket.wait(), JobOutcome::Completed);
    assert_eq!(executor.board_len(), 0, "a finished job leaves the board");
    drop(executor);
}

#[test]
fn wake_idle_main_no_lost_wakeup() {
    check("wake_idle_main", wake_idle_main_model);
}
