//! Completion: a job's last step finishing (or failing) races a cancel
//! through a ticket. Exactly one outcome wins, it is signalled once, the
//! state is terminal and agrees with it, and every waiter sees it.

use loom::thread;
use weir_executor::{
    Job, JobFailure, JobHandle, JobOutcome, JobState, StepClaim, WorkerKind, step_fn,
};

use crate::{check, counting_job, run_counts};

/// The state a ticket must report once `outcome` has been signalled.
fn state_of(outcome: &JobOutcome) -> JobState {
    match outcome {
        JobOutcome::Completed => JobState::Completed,
        JobOutcome::Failed(_) => JobState::Failed,
        JobOutcome::Cancelled => JobState::Cancelled,
    }
}

/// Races `handle`'s only step (run on a worker thread) against a cancel (on
/// another thread) while the model's thread waits on a ticket. Returns the
/// outcome the waiter saw, whether the cancel won, and what the worker's
/// claim did, after checking that they agree with each other and with the
/// state.
fn race_cancel(handle: JobHandle) -> (JobOutcome, bool, StepClaim) {
    let ticket = handle.ticket();
    assert!(handle.start());
    let worker = thread::spawn(move || handle.run_next_step(WorkerKind::Main));
    let canceller = {
        let ticket = ticket.clone();
        thread::spawn(move || ticket.cancel())
    };
    let seen = ticket.wait();
    let claim = worker.join().unwrap();
    let cancelled = canceller.join().unwrap();
    assert_eq!(
        cancelled,
        seen == JobOutcome::Cancelled,
        "the cancel wins iff the waiter sees `Cancelled`"
    );
    let state = ticket.state();
    assert!(state.is_terminal());
    assert_eq!(state, state_of(&seen), "the state agrees with the outcome");
    assert_eq!(ticket.wait(), seen, "a later waiter sees the same outcome");
    assert!(!ticket.cancel(), "a finished job cannot be cancelled");
    (seen, cancelled, claim)
}

/// The last step finishing races a cancel.
pub(crate) fn finish_races_cancel_model() {
    let (job, runs) = counting_job("finish", 1);
    let (seen, _cancelled, claim) = race_cancel(JobHandle::new(job, 0));
    let ran = run_counts(&runs)[0];
    match claim {
        StepClaim::Ran(0) => assert_eq!(ran, 1),
        StepClaim::Discarded(0) => {
            assert_eq!(ran, 0);
            assert_eq!(
                seen,
                JobOutcome::Cancelled,
                "a step is discarded only once cancelled"
            );
        }
        other => panic!("unexpected claim {other:?}"),
    }
    if seen == JobOutcome::Completed {
        assert_eq!(ran, 1, "a completed job ran its step");
    }
}

/// A failing step races a cancel.
pub(crate) fn failure_races_cancel_model() {
    let job = Job::new("fail").with_step(step_fn("bad", |_ctx| Err("no such column".into())));
    let (seen, _cancelled, claim) = race_cancel(JobHandle::new(job, 0));
    match seen {
        JobOutcome::Failed(failure) => {
            assert_eq!(claim, StepClaim::Ran(0));
            assert_eq!(
                failure,
                JobFailure {
                    step: 0,
                    step_name: "bad".to_owned(),
                    message: "no such column".to_owned(),
                }
            );
        }
        JobOutcome::Cancelled => {}
        JobOutcome::Completed => panic!("a job whose only step fails completed"),
    }
}

#[test]
fn completion_finish_races_cancel() {
    check("finish_races_cancel", finish_races_cancel_model);
}

#[test]
fn completion_failure_races_cancel() {
    check("failure_races_cancel", failure_races_cancel_model);
}
