use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use weir_executor::{
    ExecutorConfig, Job, JobFailure, JobOutcome, PipelineExecutor, StepContext, WorkerKind, step_fn,
};

use crate::{Gate, PATIENCE, Rendezvous, counting_job, executor, loads, zeroed};

#[test]
fn every_step_runs_exactly_once_for_1_to_8_threads() {
    for threads in 1..=8 {
        let executor = executor(threads);
        let jobs: Vec<_> = (0..200)
            .map(|i| {
                let counts = zeroed(i % 12 + 1);
                let ticket = executor
                    .submit(counting_job(&format!("job {i}"), &counts))
                    .unwrap();
                (counts, ticket)
            })
            .collect();
        let mut steps = 0;
        for (counts, ticket) in &jobs {
            assert_eq!(ticket.wait(), JobOutcome::Completed);
            assert_eq!(ticket.steps_finished(), counts.len());
            assert_eq!(loads(counts), vec![1; counts.len()], "threads {threads}");
            steps += counts.len() as u64;
        }
        let stats = executor.stats();
        assert_eq!(stats.steps_run_main + stats.steps_run_reserve, steps);
        assert_eq!(stats.jobs_submitted, 200);
        assert_eq!(stats.jobs_completed, 200);
        assert_eq!(
            stats.jobs_failed + stats.jobs_cancelled + stats.step_panics,
            0
        );
        // A job is off the board before its ticket reports `Completed`.
        assert_eq!(stats.board_len, 0);
        assert_eq!(executor.board_len(), 0);
        // Every multi-step job was put on the board and taken off once.
        let multi_step = jobs.iter().filter(|(c, _)| c.len() > 1).count() as u64;
        assert_eq!(stats.board_removals, multi_step);
    }
}

#[test]
fn equal_cost_jobs_run_oldest_first() {
    let executor = executor(1);
    let (gate, gate_job) = Gate::job();
    let gate_ticket = executor.submit(gate_job).unwrap();
    gate.wait_started();
    // Submitted while the only worker is held: they queue up.
    let order = Arc::new(Mutex::new(Vec::new()));
    let tickets: Vec<_> = (0..10)
        .map(|job| {
            let mut steps = Job::new(format!("job {job}"));
            for step in 0..3 {
                let order = Arc::clone(&order);
                steps.push_step(Box::new(move |_: &StepContext<'_>| {
                    order.lock().unwrap().push((job, step));
                    Ok(())
                }));
            }
            executor.submit(steps).unwrap()
        })
        .collect();
    gate.open();
    assert_eq!(gate_ticket.wait(), JobOutcome::Completed);
    for ticket in &tickets {
        assert_eq!(ticket.wait(), JobOutcome::Completed);
    }
    let expected: Vec<_> = (0..10)
        .flat_map(|job| (0..3).map(move |step| (job, step)))
        .collect();
    assert_eq!(*order.lock().unwrap(), expected);
    // Ids are submission numbers.
    let ids: Vec<_> = tickets.iter().map(|t| t.id().get()).collect();
    assert_eq!(ids, (1..=10).collect::<Vec<u64>>());
}

#[test]
fn a_panicking_step_fails_only_its_job_and_every_worker_lives_on() {
    let executor = executor(4);
    assert_eq!(executor.split(), (3, 1));
    let counts = zeroed(3);
    let mut failing = Vec::new();
    for i in 0..20 {
        let counts = Arc::clone(&counts);
        let job = Job::new(format!("panics {i}"))
            .with_step(step_fn("first", |_ctx| Ok(())))
            .with_step(step_fn("explodes", |_ctx| panic!("boom")))
            .with_step(step_fn("after", move |_ctx| {
                counts[2].fetch_add(1, Ordering::SeqCst);
                Ok(())
            }));
        failing.push(executor.submit(job).unwrap());
    }
    let healthy = zeroed(5);
    let healthy_ticket = executor.submit(counting_job("healthy", &healthy)).unwrap();
    for ticket in &failing {
        let expected = JobFailure {
            step: 1,
            step_name: "explodes".to_owned(),
            message: "boom".to_owned(),
        };
        assert_eq!(ticket.wait(), JobOutcome::Failed(expected));
    }
    assert_eq!(healthy_ticket.wait(), JobOutcome::Completed);
    assert_eq!(loads(&healthy), vec![1; 5]);
    let stats = executor.stats();
    assert_eq!(stats.step_panics, 20);
    assert_eq!(stats.jobs_failed, 20);

    // All four workers are still alive and help a lone job: its four steps
    // only finish if four workers run them at once. (Waiting for a
    // higher-index step breaks the step contract; it is done here on
    // purpose, to prove every worker takes part.)
    let meet = Rendezvous::new(4);
    let workers = Arc::new(Mutex::new(HashSet::new()));
    let mut job = Job::new("everyone");
    for _ in 0..4 {
        let meet = meet.clone();
        let workers = Arc::clone(&workers);
        job.push_step(Box::new(move |ctx: &StepContext<'_>| {
            let name = std::thread::current().name().unwrap().to_owned();
            workers.lock().unwrap().insert((name, ctx.worker()));
            meet.arrive()
        }));
    }
    let ticket = executor.submit(job).unwrap();
    assert_eq!(ticket.wait_timeout(PATIENCE), Some(JobOutcome::Completed));
    let workers = workers.lock().unwrap();
    assert_eq!(workers.len(), 4);
    assert!(workers.contains(&("it-4-reserve-0".to_owned(), WorkerKind::Reserve)));
    for i in 0..3 {
        assert!(workers.contains(&(format!("it-4-main-{i}"), WorkerKind::Main)));
    }
    // counted once each helper's step returned, maybe after the job
    // completed: read when every worker has been joined
    assert!(executor.shutdown().steals >= 3);
}

#[test]
fn a_step_error_fails_the_job_with_its_message() {
    let executor = executor(2);
    let job = Job::new("errs")
        .with_step(step_fn("ok", |_ctx| Ok(())))
        .with_step(step_fn("bad", |ctx| {
            Err(format!("bad row in step {}", ctx.step_index()).into())
        }));
    let ticket = executor.submit(job).unwrap();
    let outcome = ticket.wait();
    let JobOutcome::Failed(failure) = outcome else {
        panic!("expected a failure, got {outcome:?}");
    };
    assert_eq!(failure.step, 1);
    assert_eq!(
        failure.to_string(),
        "step 1 (bad) failed: bad row in step 1"
    );
    assert_eq!(executor.stats().step_panics, 0);
}

#[test]
fn a_lone_heavy_job_uses_both_threads() {
    // With two threads, main and reserve must each run a step at once.
    let executor = executor(2);
    let meet = Rendezvous::new(2);
    let kinds = Arc::new(Mutex::new(HashSet::new()));
    let mut job = Job::new("heavy");
    for _ in 0..2 {
        let meet = meet.clone();
        let kinds = Arc::clone(&kinds);
        job.push_step(Box::new(move |ctx: &StepContext<'_>| {
            kinds.lock().unwrap().insert(ctx.worker());
            meet.arrive()
        }));
    }
    assert_eq!(executor.submit(job).unwrap().wait(), JobOutcome::Completed);
    let kinds = kinds.lock().unwrap();
    assert_eq!(
        *kinds,
        HashSet::from([WorkerKind::Main, WorkerKind::Reserve])
    );
}

#[test]
fn steps_see_their_job_and_index() {
    let executor = executor(2);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut job = Job::new("ctx").with_cost(1);
    for _ in 0..3 {
        let seen = Arc::clone(&seen);
        job.push_step(Box::new(move |ctx: &StepContext<'_>| {
            assert!(!ctx.is_cancelled());
            seen.lock().unwrap().push((ctx.job_id(), ctx.step_index()));
            Ok(())
        }));
    }
    assert_eq!(job.cost(), 1);
    let ticket = executor.submit(job).unwrap();
    assert_eq!(ticket.wait(), JobOutcome::Completed);
    let mut seen = seen.lock().unwrap().clone();
    seen.sort();
    assert_eq!(seen, (0..3).map(|i| (ticket.id(), i)).collect::<Vec<_>>());
}

#[test]
fn an_empty_job_completes() {
    let executor = executor(2);
    let job = Job::new("empty");
    assert!(job.is_empty());
    let ticket = executor.submit(job).unwrap();
    assert_eq!(ticket.wait(), JobOutcome::Completed);
    assert_eq!(ticket.steps_total(), 0);
}

#[test]
fn all_main_split_runs_jobs() {
    let executor = PipelineExecutor::new(ExecutorConfig {
        split: Some((2, 0)),
        ..ExecutorConfig::with_threads(2)
    })
    .unwrap();
    let counts = zeroed(8);
    let ticket = executor.submit(counting_job("all main", &counts)).unwrap();
    assert_eq!(ticket.wait(), JobOutcome::Completed);
    assert_eq!(loads(&counts), vec![1; 8]);
    assert_eq!(executor.stats().steps_run_reserve, 0);
}
