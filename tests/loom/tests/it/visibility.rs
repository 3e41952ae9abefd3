//! Visibility: whoever waits on a job sees the plain (non-atomic) writes of
//! every one of its steps once the job has completed, whichever worker ran
//! them. `execute` relies on it when it reads the lanes' reports.
//!
//! The chain: a step's writes happen before its worker's `AcqRel`
//! `fetch_add` on `finished`; the worker whose `fetch_add` retires the last
//! step reads every earlier one (a chain of read-modify-writes), completes
//! the job by compare-and-swap and publishes the outcome under the
//! outcome's mutex, which the waiter locks. Each step writes its own loom
//! `UnsafeCell`, so loom reports any write the waiter's read is not ordered
//! after. The cells live in a `std` `Arc`, whose reference counts loom does
//! not see, so they add no ordering of their own.

use loom::cell::UnsafeCell;
use loom::thread;
use weir_executor::{Job, JobHandle, JobOutcome, StepClaim, WorkerKind, step_fn};

use crate::check;

const STEPS: usize = 2;

/// One cell per step.
struct Cells(Vec<UnsafeCell<usize>>);

// SAFETY: cell `i` is written only by step `i`, which runs once, and read
// only by the waiter after the job completed; loom checks that those
// accesses are ordered, which is what the model is about.
unsafe impl Sync for Cells {}

/// Two workers race through a two-step job whose step `i` writes `i + 1`
/// into cell `i`; the model's thread waits for the job and reads both
/// cells before joining the workers (a join would order them itself).
pub(crate) fn step_writes_seen_by_the_waiter_model() {
    let cells = std::sync::Arc::new(Cells((0..STEPS).map(|_| UnsafeCell::new(0)).collect()));
    let mut job = Job::new("writes");
    for i in 0..STEPS {
        let cells = std::sync::Arc::clone(&cells);
        job.push_step(Box::new(step_fn(format!("write {i}"), move |_ctx| {
            // SAFETY: only step `i` writes cell `i`, and it runs once.
            cells.0[i].with_mut(|cell| unsafe { *cell = i + 1 });
            Ok(())
        })));
    }
    let handle = JobHandle::new(job, 0);
    let ticket = handle.ticket();
    assert!(handle.start());
    let workers: Vec<_> = [WorkerKind::Main, WorkerKind::Reserve]
        .into_iter()
        .map(|worker| {
            let handle = handle.clone();
            thread::spawn(move || while handle.run_next_step(worker) != StepClaim::Exhausted {})
        })
        .collect();
    drop(handle);
    assert_eq!(ticket.wait(), JobOutcome::Completed);
    // SAFETY: loom checks that every write happens before these reads.
    let seen: Vec<usize> = cells
        .0
        .iter()
        .map(|cell| cell.with(|value| unsafe { *value }))
        .collect();
    assert_eq!(seen, [1, 2]);
    for worker in workers {
        worker.join().unwrap();
    }
}

#[test]
fn visibility_step_writes_seen_by_the_waiter() {
    check("visibility", step_writes_seen_by_the_waiter_model);
}
