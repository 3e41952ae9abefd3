//! Fairness: the latency of a short job (one step, about 1 ms of work)
//! submitted while a long job holds every worker, against the same job
//! alone. The long job's lanes run 1 ms units; `yielding` lanes call
//! `StepContext::yield_now` between units (and stop once the short job is
//! done), `not_yielding` lanes run 40 units (about 40 ms) without yielding,
//! so the short job waits for a lane to end.

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use weir_executor::{ExecutorConfig, Job, JobOutcome, PipelineExecutor, StepContext};

const THREADS: usize = 4;
/// Units a not-yielding lane runs.
const LONG_UNITS: usize = 40;

/// About a millisecond of arithmetic.
fn unit() {
    let mut x = 1u64;
    for _ in 0..400_000 {
        x = black_box(
            x.wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407),
        );
    }
}

fn short_job() -> Job {
    Job::new("short").with_step(|_: &StepContext<'_>| {
        unit();
        Ok(())
    })
}

fn long_job(yielding: bool, started: &Arc<AtomicUsize>, done: &Arc<AtomicBool>) -> Job {
    let mut job = Job::new("long");
    for _ in 0..THREADS {
        let started = Arc::clone(started);
        let done = Arc::clone(done);
        job.push_step(Box::new(move |ctx: &StepContext<'_>| {
            started.fetch_add(1, Ordering::SeqCst);
            for _ in 0..LONG_UNITS {
                if yielding {
                    if done.load(Ordering::SeqCst) {
                        break;
                    }
                    ctx.yield_now();
                }
                unit();
            }
            Ok(())
        }));
    }
    job
}

/// Submit-to-complete time of one short job behind a fresh long job.
fn behind_long(executor: &PipelineExecutor, yielding: bool) -> Duration {
    let started = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let long = executor
        .submit(long_job(yielding, &started, &done))
        .unwrap();
    while started.load(Ordering::SeqCst) < THREADS {
        std::hint::spin_loop();
    }
    let begin = Instant::now();
    let ticket = executor.submit(short_job()).unwrap();
    assert_eq!(ticket.wait(), JobOutcome::Completed);
    let took = begin.elapsed();
    done.store(true, Ordering::SeqCst);
    assert_eq!(long.wait(), JobOutcome::Completed);
    took
}

fn fairness(c: &mut Criterion) {
    let executor = PipelineExecutor::new(ExecutorConfig {
        thread_name: "bench".to_owned(),
        ..ExecutorConfig::with_threads(THREADS)
    })
    .unwrap();
    let mut group = c.benchmark_group("fairness_short_job");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(5));
    group.bench_function(BenchmarkId::new("alone", THREADS), |b| {
        b.iter(|| {
            let ticket = executor.submit(short_job()).unwrap();
            assert_eq!(ticket.wait(), JobOutcome::Completed);
        })
    });
    for (label, yielding) in [
        ("behind_long_yielding", true),
        ("behind_long_not_yielding", false),
    ] {
        group.bench_function(BenchmarkId::new(label, THREADS), |b| {
            b.iter_custom(|iters| (0..iters).map(|_| behind_long(&executor, yielding)).sum())
        });
    }
    group.finish();
}

criterion_group!(benches, fairness);
criterion_main!(benches);
