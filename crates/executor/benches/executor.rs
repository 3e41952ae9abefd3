//! Executor benches: submit-to-complete latency, tiny-job throughput
//! against rayon, and a heavy 16-step job on one and two threads.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use weir_executor::{ExecutorConfig, Job, JobOutcome, PipelineExecutor, StepContext, step_fn};

/// Tiny jobs per iteration: one million, about a second per iteration here,
/// so that group takes ten samples over a longer measurement time.
const TINY_JOBS: u64 = 1_000_000;

fn executor(threads: usize, split: Option<(usize, usize)>) -> PipelineExecutor {
    PipelineExecutor::new(ExecutorConfig {
        split,
        thread_name: "bench".to_owned(),
        ..ExecutorConfig::with_threads(threads)
    })
    .unwrap()
}

fn tiny_work(seed: u64) -> u64 {
    let mut x = seed;
    for _ in 0..16 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
    }
    x
}

/// About a millisecond of arithmetic.
fn heavy_work(seed: u64) -> u64 {
    let mut x = seed;
    for _ in 0..400_000 {
        x = black_box(
            x.wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407),
        );
    }
    x
}

fn latency(c: &mut Criterion) {
    let executor = executor(2, None);
    c.bench_function("latency/one_step_submit_to_complete", |b| {
        b.iter(|| {
            let job = Job::new("tiny").with_step(|_: &StepContext<'_>| {
                black_box(tiny_work(1));
                Ok(())
            });
            let ticket = executor.submit(job).unwrap();
            assert_eq!(ticket.wait(), JobOutcome::Completed);
        })
    });
}

fn throughput(c: &mut Criterion) {
    let mut group = c.benchmark_group("tiny_jobs");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(22));
    group.throughput(Throughput::Elements(TINY_JOBS));
    for (label, split) in [("weir_split_1_1", None), ("weir_split_2_0", Some((2, 0)))] {
        let executor = executor(2, split);
        group.bench_function(BenchmarkId::new(label, TINY_JOBS), |b| {
            b.iter(|| {
                let tickets: Vec<_> = (0..TINY_JOBS)
                    .map(|i| {
                        let job = Job::new("tiny").with_step(step_fn("tiny", move |_ctx| {
                            black_box(tiny_work(i));
                            Ok(())
                        }));
                        executor.submit(job).unwrap()
                    })
                    .collect();
                for ticket in tickets {
                    assert_eq!(ticket.wait(), JobOutcome::Completed);
                }
            })
        });
    }
    let rayon = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    group.bench_function(BenchmarkId::new("rayon_spawn", TINY_JOBS), |b| {
        b.iter(|| {
            rayon.scope(|scope| {
                for i in 0..TINY_JOBS {
                    scope.spawn(move |_| {
                        black_box(tiny_work(i));
                    });
                }
            })
        })
    });
    group.finish();
}

fn heavy(c: &mut Criterion) {
    let mut group = c.benchmark_group("heavy_16_steps");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    for threads in [1, 2] {
        let executor = executor(threads, None);
        group.bench_function(BenchmarkId::new("threads", threads), |b| {
            b.iter(|| {
                let mut job = Job::new("heavy");
                for i in 0..16 {
                    job.push_step(Box::new(step_fn("cpu", move |_ctx| {
                        black_box(heavy_work(i));
                        Ok(())
                    })));
                }
                let ticket = executor.submit(job).unwrap();
                assert_eq!(ticket.wait(), JobOutcome::Completed);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, latency, throughput, heavy);
criterion_main!(benches);
