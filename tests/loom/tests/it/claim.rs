//! Step claim: racing claimers run every step of a job exactly once, and
//! none is skipped.

use loom::thread;
use weir_executor::{JobHandle, JobOutcome, JobState, StepClaim, WorkerKind};

use crate::{check, counting_job, run_counts};

const STEPS: usize = 3;

/// Claims and runs steps of `handle` until every step is claimed; the
/// indices this caller ran.
fn claim_all(handle: &JobHandle, worker: WorkerKind) -> Vec<usize> {
    let mut ran = Vec::new();
    loop {
        match handle.run_next_step(worker) {
            StepClaim::Ran(index) => ran.push(index),
            StepClaim::Discarded(index) => panic!("step {index} discarded by a live job"),
            StepClaim::Exhausted => return ran,
        }
    }
}

/// Three claimers (two threads and the model's own) race through the
/// `next_free_slot` compare-and-swap of one three-step job. Every index is
/// claimed by exactly one of them, every step runs exactly once, and the
/// claimer retiring the last step completes the job.
pub(crate) fn step_claim_model() {
    let (job, runs) = counting_job("claim", STEPS);
    let handle = JobHandle::new(job, 0);
    let ticket = handle.ticket();
    assert!(handle.start());
    let claimers: Vec<_> = [WorkerKind::Main, WorkerKind::Reserve]
        .into_iter()
        .map(|worker| {
            let handle = handle.clone();
            thread::spawn(move || claim_all(&handle, worker))
        })
        .collect();
    let mut ran = claim_all(&handle, WorkerKind::Reserve);
    for claimer in claimers {
        ran.extend(claimer.join().unwrap());
    }
    ran.sort_unstable();
    assert_eq!(
        ran,
        (0..STEPS).collect::<Vec<_>>(),
        "each index claimed once"
    );
    assert_eq!(run_counts(&runs), [1; STEPS], "each step ran once");
    assert!(handle.is_exhausted());
    assert_eq!(ticket.state(), JobState::Completed);
    assert_eq!(ticket.wait(), JobOutcome::Completed);
    assert_eq!(ticket.steps_finished(), STEPS);
}

#[test]
fn step_claim_runs_every_step_once() {
    check("step_claim", step_claim_model);
}
