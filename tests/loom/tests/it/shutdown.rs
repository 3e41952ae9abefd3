//! Shutdown: dropping the executor while a job is in flight. The stated
//! policy is to drain: every submitted job still runs to completion, then
//! every worker thread is joined. Nothing may hang (loom reports a
//! deadlock) or leak (loom reports leaked objects).

use weir_executor::{JobOutcome, JobState};

use crate::wake::tiny_executor;
use crate::{check, counting_job, run_counts};

/// Submits a two-step job and drops the executor at once, racing the
/// workers receiving, announcing and running it.
pub(crate) fn shutdown_model() {
    let executor = tiny_executor();
    let (job, runs) = counting_job("in flight", 2);
    let ticket = executor.submit(job).unwrap();
    drop(executor);
    // Every thread has been joined; the job was drained, not dropped.
    assert_eq!(ticket.state(), JobState::Completed);
    assert_eq!(ticket.wait(), JobOutcome::Completed);
    assert_eq!(run_counts(&runs), [1, 1]);
}

#[test]
fn shutdown_drains_and_joins() {
    check("shutdown", shutdown_model);
}

/// Drops the executor with two jobs queued while another thread cancels the
/// second: the first still completes, the second completes or is
/// cancelled, no step runs twice, and every thread is joined.
pub(crate) fn shutdown_with_cancel_model() {
    let executor = tiny_executor();
    let (first, first_runs) = counting_job("first", 2);
    let (second, second_runs) = counting_job("second", 1);
    let first = executor.submit(first).unwrap();
    let second = executor.submit(second).unwrap();
    let canceller = {
        let second = second.clone();
        loom::thread::spawn(move || second.cancel())
    };
    drop(executor);
    let cancelled = canceller.join().unwrap();
    assert_eq!(first.wait(), JobOutcome::Completed);
    assert_eq!(run_counts(&first_runs), [1, 1]);
    let outcome = second.wait();
    assert_eq!(cancelled, outcome == JobOutcome::Cancelled);
    match outcome {
        JobOutcome::Completed => assert_eq!(run_counts(&second_runs), [1]),
        JobOutcome::Cancelled => assert!(run_counts(&second_runs)[0] <= 1),
        JobOutcome::Failed(failure) => panic!("unexpected failure: {failure}"),
    }
    assert!(second.state().is_terminal());
}

#[test]
fn shutdown_drains_with_a_racing_cancel() {
    check("shutdown_with_cancel", shutdown_with_cancel_model);
}
