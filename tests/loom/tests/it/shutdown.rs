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
