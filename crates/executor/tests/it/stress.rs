//! Many jobs, random panics and random cancels, on 2 to 8 threads.

use std::panic;
use std::sync::Arc;
use std::sync::Once;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use rand::{Rng, SeedableRng, rngs::StdRng};
use weir_executor::{Job, JobOutcome, JobTicket, Step, StepContext, StepResult};

use crate::executor;

const PLANNED_PANIC: &str = "planned stress panic";

/// Jobs per run, as the issue asks.
const JOBS: usize = 100_000;

struct StressStep {
    hits: Arc<Vec<AtomicU8>>,
    slot: usize,
    panics: bool,
    drops: Arc<AtomicUsize>,
}

impl Step for StressStep {
    fn run(&self, _ctx: &StepContext<'_>) -> StepResult {
        self.hits[self.slot].fetch_add(1, Ordering::Relaxed);
        if self.panics {
            panic::panic_any(PLANNED_PANIC);
        }
        Ok(())
    }
}

impl Drop for StressStep {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::Relaxed);
    }
}

struct Planned {
    first_slot: usize,
    steps: usize,
    panic_at: Option<usize>,
    cancelled: bool,
    ticket: JobTicket,
}

fn silence_planned_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<&str>() != Some(&PLANNED_PANIC) {
                default(info);
            }
        }));
    });
}

#[test]
fn stress_every_step_once_right_outcomes_nothing_leaks() {
    silence_planned_panics();
    let mut rng = StdRng::seed_from_u64(0x5eed);
    let thread_counts: Vec<usize> = (2..=8).collect();
    let per_executor = JOBS / thread_counts.len();
    for threads in thread_counts {
        let executor = executor(threads);
        let sizes: Vec<usize> = (0..per_executor)
            .map(|_| rng.random_range(1..=16))
            .collect();
        let total_steps: usize = sizes.iter().sum();
        let hits: Arc<Vec<AtomicU8>> =
            Arc::new((0..total_steps).map(|_| AtomicU8::new(0)).collect());
        let drops = Arc::new(AtomicUsize::new(0));
        let mut planned = Vec::with_capacity(per_executor);
        let mut first_slot = 0;
        for (i, &steps) in sizes.iter().enumerate() {
            let panic_at = rng.random_bool(0.02).then(|| rng.random_range(0..steps));
            let mut job = Job::new(format!("stress {i}"));
            for step in 0..steps {
                job.push_step(Box::new(StressStep {
                    hits: Arc::clone(&hits),
                    slot: first_slot + step,
                    panics: panic_at == Some(step),
                    drops: Arc::clone(&drops),
                }));
            }
            let ticket = executor.submit(job).unwrap();
            let cancelled = rng.random_bool(0.05) && ticket.cancel();
            planned.push(Planned {
                first_slot,
                steps,
                panic_at,
                cancelled,
                ticket,
            });
            first_slot += steps;
        }
        // Cancel a few more late, racing the workers.
        for job in planned.iter_mut().step_by(97) {
            job.cancelled |= job.ticket.cancel();
        }
        for job in &planned {
            let outcome = job.ticket.wait();
            let ran: Vec<u8> = (0..job.steps)
                .map(|s| hits[job.first_slot + s].load(Ordering::Relaxed))
                .collect();
            assert!(ran.iter().all(|&n| n <= 1), "a step ran twice: {ran:?}");
            match (&outcome, job.cancelled, job.panic_at) {
                (JobOutcome::Cancelled, true, _) => {}
                (JobOutcome::Completed, false, None) => {
                    assert_eq!(ran, vec![1; job.steps], "threads {threads}");
                    assert_eq!(job.ticket.steps_finished(), job.steps);
                }
                (JobOutcome::Failed(failure), false, Some(step)) => {
                    assert_eq!(failure.step, step);
                    assert_eq!(failure.message, PLANNED_PANIC);
                    assert_eq!(ran[step], 1);
                }
                other => panic!("wrong outcome on {threads} threads: {other:?}"),
            }
        }
        let stats = executor.stats();
        assert_eq!(stats.jobs_submitted, per_executor as u64);
        assert_eq!(
            stats.jobs_completed + stats.jobs_failed + stats.jobs_cancelled,
            per_executor as u64
        );
        let panics = planned
            .iter()
            .filter(|job| matches!(job.ticket.wait(), JobOutcome::Failed(_)))
            .count() as u64;
        assert_eq!(stats.jobs_failed, panics);
        drop(executor);
        // Every step object was dropped: nothing holds a job any more.
        assert_eq!(drops.load(Ordering::Relaxed), total_steps);
        assert_eq!(Arc::strong_count(&hits), 1);
        assert_eq!(Arc::strong_count(&drops), 1);
    }
}
