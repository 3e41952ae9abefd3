//! The loom models of `weir-executor` (under `--cfg weir_loom`, run by
//! `cargo xtask loom`) and randomized histories of the real `SkipSet` job
//! board (without it, run by `cargo test`). See the crate docs.

#[cfg(weir_loom)]
mod board;
#[cfg(not(weir_loom))]
mod board_history;
#[cfg(weir_loom)]
mod claim;
#[cfg(weir_loom)]
mod completion;
#[cfg(weir_loom)]
mod dag;
#[cfg(weir_loom)]
mod planted;
#[cfg(weir_loom)]
mod shutdown;
#[cfg(weir_loom)]
mod visibility;
#[cfg(weir_loom)]
mod wake;

#[cfg(weir_loom)]
use weir_executor::{Job, step_fn};

#[cfg(weir_loom)]
use loom::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

/// The preemption bound when `LOOM_MAX_PREEMPTIONS` is unset (crossbeam and
/// tokio CI use 2 as well); `cargo xtask loom` sets it to 2.
#[cfg(weir_loom)]
const DEFAULT_MAX_PREEMPTIONS: usize = 2;

/// Explores every interleaving of `model` with a bounded number of
/// preemptions (`LOOM_MAX_PREEMPTIONS`, else [`DEFAULT_MAX_PREEMPTIONS`])
/// and reports how many interleavings that was.
#[cfg(weir_loom)]
fn check(name: &str, model: impl Fn() + Sync + Send + 'static) {
    use std::sync::atomic::{AtomicUsize, Ordering};

    let mut builder = loom::model::Builder::new();
    let bound = *builder
        .preemption_bound
        .get_or_insert(DEFAULT_MAX_PREEMPTIONS);
    let iterations = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&iterations);
    let started = std::time::Instant::now();
    builder.check(move || {
        counter.fetch_add(1, Ordering::Relaxed);
        model();
    });
    eprintln!(
        "{name}: {} interleavings, preemption bound {bound}, {:.1?}",
        iterations.load(Ordering::Relaxed),
        started.elapsed()
    );
}

/// A job of `steps` steps whose step `i` bumps `runs[i]`, with `runs`.
#[cfg(weir_loom)]
fn counting_job(name: &str, steps: usize) -> (Job, Arc<Vec<AtomicUsize>>) {
    let runs: Arc<Vec<AtomicUsize>> = Arc::new((0..steps).map(|_| AtomicUsize::new(0)).collect());
    let mut job = Job::new(name);
    for i in 0..steps {
        let runs = Arc::clone(&runs);
        job.push_step(Box::new(step_fn(format!("count {i}"), move |_ctx| {
            runs[i].fetch_add(1, Ordering::Relaxed);
            Ok(())
        })));
    }
    (job, runs)
}

/// How often each step ran.
#[cfg(weir_loom)]
fn run_counts(runs: &[AtomicUsize]) -> Vec<usize> {
    runs.iter().map(|r| r.load(Ordering::Relaxed)).collect()
}
