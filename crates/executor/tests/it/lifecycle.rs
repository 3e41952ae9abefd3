use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use weir_executor::{
    ExecutorConfig, Job, JobOutcome, JobState, PipelineExecutor, StepContext, TrySubmitError,
};

use crate::{DropGuard, Gate, PATIENCE, counting_job, executor, loads, zeroed};

#[test]
fn cancel_before_run_skips_every_step_and_drops_them() {
    let executor = executor(1);
    let (gate, gate_job) = Gate::job();
    executor.submit(gate_job).unwrap();
    gate.wait_started();
    let counts = zeroed(3);
    let drops = Arc::new(AtomicUsize::new(0));
    let guard = DropGuard(Arc::clone(&drops));
    let job = counting_job("cancelled", &counts).with_step(move |_: &StepContext<'_>| {
        let _keep = &guard;
        Ok(())
    });
    let ticket = executor.submit(job).unwrap();
    assert_eq!(ticket.state(), JobState::Queued);
    assert!(ticket.cancel());
    assert!(!ticket.cancel(), "only the first cancel moves the state");
    assert_eq!(ticket.state(), JobState::Cancelled);
    assert_eq!(ticket.wait(), JobOutcome::Cancelled);
    gate.open();
    drop(executor);
    assert_eq!(loads(&counts), vec![0; 3]);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert_eq!(ticket.steps_finished(), 0);
}

#[test]
fn cancel_during_run_wakes_waiters_at_once_and_stops_later_steps() {
    let executor = executor(1);
    let (started_tx, started_rx) = mpsc::channel();
    let release = Arc::new(AtomicBool::new(false));
    let saw_cancel = Arc::new(AtomicBool::new(false));
    let counts = zeroed(2);
    let job = {
        let release = Arc::clone(&release);
        let saw_cancel = Arc::clone(&saw_cancel);
        Job::new("long").with_step(move |ctx: &StepContext<'_>| {
            started_tx.send(()).unwrap();
            let deadline = Instant::now() + PATIENCE;
            // A long step polls for cancellation; it stays here until the
            // test has seen `wait` return, proving cancel does not wait for
            // running steps.
            while !(ctx.is_cancelled() && release.load(Ordering::SeqCst)) {
                if Instant::now() > deadline {
                    return Err("never released".into());
                }
                std::thread::yield_now();
            }
            saw_cancel.store(true, Ordering::SeqCst);
            Ok(())
        })
    };
    let mut job = job;
    for step in counting_job("rest", &counts).into_steps() {
        job.push_step(step);
    }
    let ticket = executor.submit(job).unwrap();
    started_rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!(ticket.state(), JobState::Running);
    assert!(ticket.cancel());
    assert_eq!(ticket.wait(), JobOutcome::Cancelled);
    release.store(true, Ordering::SeqCst);
    drop(executor);
    assert!(saw_cancel.load(Ordering::SeqCst));
    assert_eq!(
        loads(&counts),
        vec![0; 2],
        "steps after the cancel never ran"
    );
    assert_eq!(ticket.state(), JobState::Cancelled);
}

#[test]
fn cancel_after_completion_changes_nothing() {
    let executor = executor(2);
    let counts = zeroed(2);
    let ticket = executor.submit(counting_job("done", &counts)).unwrap();
    assert_eq!(ticket.wait(), JobOutcome::Completed);
    assert!(!ticket.cancel());
    assert_eq!(ticket.state(), JobState::Completed);
    assert_eq!(ticket.wait(), JobOutcome::Completed);
    let stats = executor.stats();
    assert_eq!((stats.jobs_completed, stats.jobs_cancelled), (1, 0));
}

#[test]
fn wait_timeout_gives_up_then_sees_the_outcome() {
    let executor = executor(1);
    let (gate, gate_job) = Gate::job();
    let ticket = executor.submit(gate_job).unwrap();
    gate.wait_started();
    let begin = Instant::now();
    assert_eq!(ticket.wait_timeout(Duration::from_millis(20)), None);
    assert!(begin.elapsed() >= Duration::from_millis(20));
    gate.open();
    assert_eq!(ticket.wait_timeout(PATIENCE), Some(JobOutcome::Completed));
    assert_eq!(
        ticket.wait_timeout(Duration::ZERO),
        Some(JobOutcome::Completed)
    );
}

#[test]
fn try_submit_fails_when_the_bounded_queue_is_full_and_submit_blocks() {
    let executor = Arc::new(
        PipelineExecutor::new(ExecutorConfig {
            queue_capacity: Some(1),
            ..ExecutorConfig::with_threads(1)
        })
        .unwrap(),
    );
    let (gate, gate_job) = Gate::job();
    executor.submit(gate_job).unwrap();
    gate.wait_started();
    let counts = zeroed(1);
    let queued = executor.try_submit(counting_job("fits", &counts)).unwrap();
    let rejected = executor
        .try_submit(counting_job("rejected", &counts))
        .unwrap_err();
    assert!(matches!(rejected, TrySubmitError::Full(_)));
    assert_eq!(rejected.to_string(), "the executor's job queue is full");
    let job = rejected.into_job();
    assert_eq!((job.name(), job.len()), ("rejected", 1));

    // `submit` blocks until the worker takes a job off the queue.
    let submitter = {
        let executor = Arc::clone(&executor);
        std::thread::spawn(move || executor.submit(job).unwrap())
    };
    gate.open();
    let blocked = submitter.join().unwrap();
    assert_eq!(queued.wait(), JobOutcome::Completed);
    assert_eq!(blocked.wait(), JobOutcome::Completed);
    assert_eq!(loads(&counts), vec![2]);
    assert_eq!(executor.stats().jobs_submitted, 3);
}

#[test]
fn drop_runs_all_queued_work_then_joins() {
    let executor = executor(2);
    let (gate, gate_job) = Gate::job();
    executor.submit(gate_job).unwrap();
    gate.wait_started();
    let jobs: Vec<_> = (0..100)
        .map(|i| {
            let counts = zeroed(i % 5 + 1);
            let ticket = executor
                .submit(counting_job(&format!("queued {i}"), &counts))
                .unwrap();
            (counts, ticket)
        })
        .collect();
    gate.open();
    drop(executor);
    for (counts, ticket) in jobs {
        assert_eq!(ticket.state(), JobState::Completed);
        assert_eq!(ticket.wait(), JobOutcome::Completed);
        assert_eq!(loads(&counts), vec![1; counts.len()]);
    }
}
