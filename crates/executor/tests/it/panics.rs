//! A panic anywhere in a step's life (run, name, drop, or the drop of a
//! cancelled job's steps) fails only that job, retires each step once, and
//! leaves every worker alive.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use weir_executor::{
    ExecutorStats, Job, JobFailure, JobOutcome, JobState, PipelineExecutor, Step, StepContext,
    StepResult,
};

use crate::{Gate, PATIENCE, Rendezvous, counting_job, executor, loads, zeroed};

/// Where a [`Faulty`] step panics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Site {
    /// Nowhere: the step returns `Ok`.
    Nowhere,
    /// In `run`.
    Run,
    /// `run` returns an error, then `name` panics.
    Name,
    /// In `Drop`.
    Drop,
}

/// A step that panics at `site` and counts its runs and drops.
struct Faulty {
    site: Site,
    /// Returns only once its job is cancelled or failed.
    until_stopped: bool,
    runs: Arc<AtomicUsize>,
    drops: Arc<AtomicUsize>,
}

impl Step for Faulty {
    fn run(&self, ctx: &StepContext<'_>) -> StepResult {
        self.runs.fetch_add(1, Ordering::SeqCst);
        let deadline = Instant::now() + PATIENCE;
        while self.until_stopped && !ctx.is_cancelled() {
            if Instant::now() > deadline {
                return Err("never stopped".into());
            }
            std::thread::yield_now();
        }
        match self.site {
            Site::Run => panic!("boom in run"),
            Site::Name => Err("bad input".into()),
            Site::Nowhere | Site::Drop => Ok(()),
        }
    }

    fn name(&self) -> &str {
        if self.site == Site::Name {
            panic!("boom in name");
        }
        "faulty"
    }
}

impl Drop for Faulty {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
        if self.site == Site::Drop {
            panic!("boom in drop");
        }
    }
}

/// Counts runs and drops of the steps of one job.
#[derive(Default)]
struct Tally {
    runs: Arc<AtomicUsize>,
    drops: Arc<AtomicUsize>,
}

impl Tally {
    fn step(&self, site: Site) -> Box<dyn Step> {
        self.make(site, false)
    }

    /// A step that panics at `site` once its job has stopped.
    fn step_until_stopped(&self, site: Site) -> Box<dyn Step> {
        self.make(site, true)
    }

    fn make(&self, site: Site, until_stopped: bool) -> Box<dyn Step> {
        Box::new(Faulty {
            site,
            until_stopped,
            runs: Arc::clone(&self.runs),
            drops: Arc::clone(&self.drops),
        })
    }

    fn runs(&self) -> usize {
        self.runs.load(Ordering::SeqCst)
    }

    fn drops(&self) -> usize {
        self.drops.load(Ordering::SeqCst)
    }
}

/// Every worker is alive and takes part: a job of `threads` steps that
/// meet at a rendezvous completes only if `threads` workers run it at once
/// (waiting on a higher-index step breaks the step contract, on purpose).
/// Then a plain job completes too.
fn assert_every_worker_lives(executor: &PipelineExecutor, threads: usize) {
    let meet = Rendezvous::new(threads);
    let mut job = Job::new("everyone");
    for _ in 0..threads {
        let meet = meet.clone();
        job.push_step(Box::new(move |_: &StepContext<'_>| meet.arrive()));
    }
    let ticket = executor.submit(job).unwrap();
    assert_eq!(ticket.wait_timeout(PATIENCE), Some(JobOutcome::Completed));
    let counts = zeroed(3);
    let ticket = executor.submit(counting_job("next", &counts)).unwrap();
    assert_eq!(ticket.wait_timeout(PATIENCE), Some(JobOutcome::Completed));
    assert_eq!(loads(&counts), vec![1; 3]);
}

/// The job counters once every ticket has been waited for.
fn job_counts(stats: &ExecutorStats) -> (u64, u64, u64, u64) {
    (
        stats.jobs_completed,
        stats.jobs_failed,
        stats.jobs_cancelled,
        stats.step_panics,
    )
}

/// Submits a one-step job panicking at `site` and checks its failure, the
/// counters, and that the executor still runs work on every worker.
fn a_panic_fails_only_its_job(threads: usize, site: Site, expected: JobFailure) {
    let executor = executor(threads);
    let tally = Tally::default();
    let mut job = Job::new("faulty");
    job.push_step(tally.step(site));
    let ticket = executor.submit(job).unwrap();
    assert_eq!(
        ticket.wait_timeout(PATIENCE),
        Some(JobOutcome::Failed(expected)),
        "{site:?} on {threads} threads"
    );
    assert_eq!(ticket.state(), JobState::Failed);
    // `Drop` runs after `Ok`, so only that site counts the step as finished.
    let ok = usize::from(site == Site::Drop);
    assert_eq!(ticket.steps_finished(), ok);
    let stats = executor.stats();
    let panics = u64::from(site != Site::Nowhere);
    assert_eq!(job_counts(&stats), (0, 1, 0, panics));
    assert_eq!(executor.board_len(), 0);
    assert_every_worker_lives(&executor, threads);
    // Failing the job wakes its waiters at once; the step is dropped after.
    // Every worker has since taken part in another job, so it is done.
    assert_eq!(
        (tally.runs(), tally.drops()),
        (1, 1),
        "run once, dropped once"
    );
    let stats = executor.stats();
    assert_eq!(job_counts(&stats), (2, 1, 0, panics));
}

fn failure(step_name: &str, message: &str) -> JobFailure {
    JobFailure {
        step: 0,
        step_name: step_name.to_owned(),
        message: message.to_owned(),
    }
}

#[test]
fn a_panic_in_run_fails_the_job_on_1_and_4_threads() {
    for threads in [1, 4] {
        a_panic_fails_only_its_job(threads, Site::Run, failure("faulty", "boom in run"));
    }
}

#[test]
fn a_panic_in_name_fails_the_job_on_1_and_4_threads() {
    for threads in [1, 4] {
        let expected = failure(
            "step 0",
            "bad input (and its name() panicked: boom in name)",
        );
        a_panic_fails_only_its_job(threads, Site::Name, expected);
    }
}

#[test]
fn a_panic_in_drop_fails_the_job_on_1_and_4_threads() {
    for threads in [1, 4] {
        a_panic_fails_only_its_job(threads, Site::Drop, failure("step 0", "boom in drop"));
    }
}

#[test]
fn a_panic_dropping_the_discarded_steps_of_a_failed_job_keeps_the_first_failure() {
    for threads in [1, 4] {
        let executor = executor(threads);
        // Step 0 fails the job. The faulty steps return only once it has
        // failed, so its failure comes first; then each is dropped (run or
        // discarded unrun) and panics there.
        let tally = Tally::default();
        let mut job = Job::new("fails, then discards").with_step(step_fn_err("fails"));
        for _ in 0..4 {
            job.push_step(tally.step_until_stopped(Site::Drop));
        }
        let ticket = executor.submit(job).unwrap();
        let expected = JobOutcome::Failed(failure("fails", "fails on purpose"));
        assert_eq!(
            ticket.wait_timeout(PATIENCE),
            Some(expected),
            "{threads} threads"
        );
        assert_every_worker_lives(&executor, threads);
        assert_eq!(tally.drops(), 4);
        if threads == 1 {
            assert_eq!(tally.runs(), 0, "one worker discards them unrun");
        }
        let stats = executor.stats();
        assert_eq!(job_counts(&stats), (2, 1, 0, 4));
        assert_eq!(executor.board_len(), 0);
    }
}

/// A step that returns an error.
fn step_fn_err(name: &str) -> impl Step + 'static {
    weir_executor::step_fn(name.to_owned(), |_ctx| Err("fails on purpose".into()))
}

#[test]
fn a_panic_dropping_a_job_cancelled_while_queued_is_contained() {
    for threads in [1, 4] {
        let executor = executor(threads);
        // Hold every main worker so the faulty job stays queued.
        let gates: Vec<_> = (0..executor.split().0)
            .map(|_| {
                let (gate, job) = Gate::job();
                let ticket = executor.submit(job).unwrap();
                gate.wait_started();
                (gate, ticket)
            })
            .collect();
        let tally = Tally::default();
        let mut job = Job::new("cancelled");
        for _ in 0..3 {
            job.push_step(tally.step(Site::Drop));
        }
        let ticket = executor.submit(job).unwrap();
        assert!(ticket.cancel());
        for (gate, gate_ticket) in &gates {
            gate.open();
            assert_eq!(gate_ticket.wait(), JobOutcome::Completed);
        }
        assert_eq!(ticket.wait(), JobOutcome::Cancelled);
        assert_every_worker_lives(&executor, threads);
        assert_eq!((tally.runs(), tally.drops()), (0, 3));
        let stats = executor.stats();
        assert_eq!(stats.jobs_cancelled, 1);
        assert_eq!(stats.step_panics, 3);
        assert_eq!(stats.jobs_failed, 0);
    }
}

#[test]
fn a_panic_dropping_the_steps_of_a_job_cancelled_while_running_is_contained() {
    for threads in [1, 4] {
        let executor = executor(threads);
        let (gate, gate_job) = Gate::job();
        let tally = Tally::default();
        let mut job = Job::new("cancelled while running");
        for step in gate_job.into_steps() {
            job.push_step(step);
        }
        for _ in 0..3 {
            job.push_step(tally.step_until_stopped(Site::Drop));
        }
        let ticket = executor.submit(job).unwrap();
        gate.wait_started();
        assert!(ticket.cancel());
        gate.open();
        assert_eq!(ticket.wait(), JobOutcome::Cancelled);
        assert_every_worker_lives(&executor, threads);
        // On one thread the faulty steps are discarded unrun; on four,
        // helpers may run them until the cancel. Each is dropped once.
        assert_eq!(tally.drops(), 3);
        if threads == 1 {
            assert_eq!(tally.runs(), 0);
        }
        let stats = executor.stats();
        assert_eq!(job_counts(&stats), (2, 0, 1, 3));
        assert_eq!(executor.board_len(), 0);
    }
}
