//! Wake-up: a job published to the board while the reserve worker goes to
//! sleep always gets help; no wake-up is lost.
//!
//! The model runs the real executor (one main and one reserve worker, on
//! loom threads) on a job whose step 0 blocks until step 1 has run. That
//! breaks the `Step` contract on purpose (a step must not wait for a
//! higher-index one): it is a probe that turns a lost wake-up into a
//! deadlock loom reports. Whichever worker claims step 0 blocks, so the job
//! completes only if the other worker claims step 1, which for the reserve
//! worker means it was not left asleep while step 1 sat on the board.

use loom::sync::{Arc, Condvar, Mutex};
use weir_executor::{ExecutorConfig, Job, JobOutcome, PipelineExecutor, step_fn};

use crate::check;

/// The real executor with one main and one reserve worker.
pub(crate) fn tiny_executor() -> PipelineExecutor {
    PipelineExecutor::new(ExecutorConfig {
        threads: 2,
        split: Some((1, 1)),
        queue_capacity: None,
        thread_name: "loom".to_owned(),
    })
    .unwrap()
}

/// Step 0 waits for step 1: the job needs both workers at once.
fn rendezvous_job() -> Job {
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
