//! Fairness: a step that calls `StepContext::yield_now` between units of
//! work lends its worker to jobs that wait, so a short job submitted while
//! a long one holds every worker finishes in about its own time. And the
//! waiting rule: a step must not wait for a job of its own executor.

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use weir_executor::{Job, JobOutcome, JobState, StepContext, StepResult, step_fn};

use crate::{Gate, PATIENCE, counting_job, executor, loads, zeroed};

/// One unit of busy work (no sleeping): about 0.1 ms optimised, 1 ms in
/// a debug build.
fn unit() {
    let mut x = 1u64;
    for _ in 0..40_000 {
        x = black_box(
            x.wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407),
        );
    }
}

/// Spins (no sleep) until `cond` holds; false if `PATIENCE` passes first.
fn spin_until(cond: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + PATIENCE;
    while !cond() {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::yield_now();
    }
    true
}

/// A long job of `lanes` steps. Each counts itself in `started`, then runs
/// units of work, yielding between them, until `done` is set (or it gives
/// up after `PATIENCE` with an error).
fn long_job(lanes: usize, started: &Arc<AtomicUsize>, done: &Arc<AtomicBool>) -> Job {
    let mut job = Job::new("long");
    for lane in 0..lanes {
        let started = Arc::clone(started);
        let done = Arc::clone(done);
        job.push_step(Box::new(step_fn(
            format!("lane {lane}"),
            move |ctx: &StepContext<'_>| -> StepResult {
                started.fetch_add(1, Ordering::SeqCst);
                let deadline = Instant::now() + PATIENCE;
                while !done.load(Ordering::SeqCst) {
                    if Instant::now() > deadline {
                        return Err("the short job never ran".into());
                    }
                    ctx.yield_now();
                    unit();
                }
                Ok(())
            },
        )));
    }
    job
}

/// A short job: `steps` steps of `units` units each.
fn short_job(steps: usize, units: usize) -> Job {
    let mut job = Job::new("short");
    for _ in 0..steps {
        job.push_step(Box::new(move |_: &StepContext<'_>| {
            for _ in 0..units {
                unit();
            }
            Ok(())
        }));
    }
    job
}

#[test]
fn a_yielding_step_runs_a_queued_job_on_its_worker() {
    // One worker: the queued job can only run inside the long step's yield.
    let executor = executor(1);
    let counts = zeroed(3);
    let (submitted_tx, submitted_rx) = std::sync::mpsc::channel::<weir_executor::JobTicket>();
    let submitted_rx = std::sync::Mutex::new(submitted_rx);
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<()>();
    let checked = Arc::new(AtomicBool::new(false));
    let long = {
        let checked = Arc::clone(&checked);
        Job::new("long").with_step(move |ctx: &StepContext<'_>| -> StepResult {
            assert!(!ctx.should_yield(), "nothing waits yet");
            assert!(!ctx.yield_now(), "nothing to run");
            ready_tx.send(()).unwrap();
            let ticket = submitted_rx
                .lock()
                .unwrap()
                .recv_timeout(PATIENCE)
                .map_err(|_| "no job submitted")?;
            if !spin_until(|| ctx.should_yield()) {
                return Err("should_yield never turned true".into());
            }
            assert!(ctx.yield_now(), "ran the queued job");
            // The borrowed job ran to its end on this very worker.
            assert_eq!(ticket.state(), JobState::Completed);
            assert!(!ctx.should_yield());
            checked.store(true, Ordering::SeqCst);
            Ok(())
        })
    };
    let long = executor.submit(long).unwrap();
    ready_rx.recv_timeout(PATIENCE).unwrap();
    let short = executor.submit(counting_job("short", &counts)).unwrap();
    submitted_tx.send(short.clone()).unwrap();
    assert_eq!(long.wait_timeout(PATIENCE), Some(JobOutcome::Completed));
    assert!(checked.load(Ordering::SeqCst));
    assert_eq!(short.wait(), JobOutcome::Completed);
    assert_eq!(loads(&counts), vec![1; 3]);
}

#[test]
fn a_short_job_behind_a_long_yielding_job_finishes_on_both_pools() {
    // 1 main + 1 reserve, both held by the long job's two lanes. The short
    // job's two steps run only if the main worker takes it from the queue
    // in a yield and the reserve worker helps it from the board in one.
    let executor = executor(2);
    let started = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let long = executor.submit(long_job(2, &started, &done)).unwrap();
    assert!(spin_until(|| started.load(Ordering::SeqCst) == 2));
    // Step 0 waits (allowed: a lower index) until step 1 has run, so both
    // workers must take part in the short job.
    let step1_ran = Arc::new(AtomicBool::new(false));
    let short = {
        let seen = Arc::clone(&step1_ran);
        let set = Arc::clone(&step1_ran);
        Job::new("short")
            .with_step(move |ctx: &StepContext<'_>| -> StepResult {
                let mine = ctx.worker();
                if spin_until(|| seen.load(Ordering::SeqCst)) {
                    Ok(())
                } else {
                    Err(format!("step 1 never ran beside step 0 on {mine:?}").into())
                }
            })
            .with_step(move |_: &StepContext<'_>| -> StepResult {
                set.store(true, Ordering::SeqCst);
                Ok(())
            })
    };
    let short = executor.submit(short).unwrap();
    assert_eq!(short.wait_timeout(PATIENCE), Some(JobOutcome::Completed));
    assert_eq!(
        long.state(),
        JobState::Running,
        "the long job is still running"
    );
    done.store(true, Ordering::SeqCst);
    assert_eq!(long.wait_timeout(PATIENCE), Some(JobOutcome::Completed));
    // read when every worker has been joined (see `shutdown`)
    assert!(executor.shutdown().steals >= 1);
}

/// Submits `short` and returns how long until it completed.
fn latency(executor: &weir_executor::PipelineExecutor, short: Job) -> Duration {
    let begin = Instant::now();
    let ticket = executor.submit(short).unwrap();
    assert_eq!(ticket.wait_timeout(PATIENCE), Some(JobOutcome::Completed));
    begin.elapsed()
}

#[test]
fn a_short_job_submitted_while_a_long_one_runs_finishes_in_about_its_own_time() {
    const THREADS: usize = 4;
    const SHORT_UNITS: usize = 100; // 10 to 100 ms alone
    let executor = executor(THREADS);
    let mut alone: Vec<Duration> = (0..5)
        .map(|_| latency(&executor, short_job(1, SHORT_UNITS)))
        .collect();
    alone.sort();
    let alone = alone[alone.len() / 2];

    // The long job holds every worker until the short one is done; without
    // yielding the short job would wait `PATIENCE` and the long one fail.
    let started = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let long = executor.submit(long_job(THREADS, &started, &done)).unwrap();
    assert!(spin_until(|| started.load(Ordering::SeqCst) == THREADS));
    let behind = latency(&executor, short_job(1, SHORT_UNITS));
    done.store(true, Ordering::SeqCst);
    assert_eq!(long.wait_timeout(PATIENCE), Some(JobOutcome::Completed));
    eprintln!("short job: {alone:?} alone, {behind:?} behind a long job on {THREADS} threads");
    // Generous: the machine may be shared, and the four busy lanes compete
    // with the short job for cores.
    let bound = alone * 10 + Duration::from_millis(200);
    assert!(
        behind <= bound,
        "short job took {behind:?} behind a long one, {alone:?} alone (bound {bound:?})"
    );
}

#[test]
fn a_step_waiting_for_a_job_of_its_own_executor_fails_its_job() {
    let executor = executor(4);
    let (gate, gate_job) = Gate::job();
    let held = executor.submit(gate_job).unwrap();
    gate.wait_started();
    let waits = {
        let held = held.clone();
        Job::new("waits").with_step(step_fn("waits", move |_ctx| {
            // Polling never blocks, so it is allowed.
            assert_eq!(held.wait_timeout(Duration::ZERO), None);
            held.wait();
            Ok(())
        }))
    };
    let outcome = executor.submit(waits).unwrap().wait_timeout(PATIENCE);
    let Some(JobOutcome::Failed(failure)) = outcome else {
        panic!("expected a failure, got {outcome:?}");
    };
    assert_eq!(failure.step_name, "waits");
    assert!(
        failure.message.starts_with(&format!(
            "a step must not wait for {} of its own executor",
            held.id()
        )),
        "{}",
        failure.message
    );
    gate.open();
    assert_eq!(held.wait_timeout(PATIENCE), Some(JobOutcome::Completed));
}

#[test]
fn a_step_may_wait_for_a_job_of_another_executor() {
    let outer = executor(2);
    let inner = Arc::new(executor(1));
    let counts = zeroed(2);
    let ticket = inner.submit(counting_job("inner", &counts)).unwrap();
    let job =
        Job::new("waits elsewhere").with_step(step_fn("waits", move |_ctx| match ticket.wait() {
            JobOutcome::Completed => Ok(()),
            other => Err(format!("{other:?}").into()),
        }));
    let outcome = outer.submit(job).unwrap().wait_timeout(PATIENCE);
    assert_eq!(outcome, Some(JobOutcome::Completed));
    assert_eq!(loads(&counts), vec![1; 2]);
}
