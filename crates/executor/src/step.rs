//! Steps: the units of work a [`Job`](crate::Job) is made of.

use std::fmt;

use crate::job::{JobId, JobShared};

/// What a step returns: `Ok(())`, or the error that fails its job.
pub type StepResult = Result<(), StepError>;

/// The error a failing step returns; its text becomes the
/// [`JobFailure::message`](crate::JobFailure::message).
pub struct StepError(Box<dyn std::error::Error + Send + Sync>);

impl StepError {
    /// Wraps any error (or anything that converts into a boxed error).
    pub fn new(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        StepError(error.into())
    }

    /// The wrapped error.
    pub fn into_inner(self) -> Box<dyn std::error::Error + Send + Sync> {
        self.0
    }
}

impl From<String> for StepError {
    fn from(message: String) -> Self {
        StepError(message.into())
    }
}

impl From<&str> for StepError {
    fn from(message: &str) -> Self {
        StepError(message.into())
    }
}

impl fmt::Display for StepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl fmt::Debug for StepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("StepError").field(&self.0).finish()
    }
}

impl std::error::Error for StepError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.0)
    }
}

/// Which pool the worker running a step belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WorkerKind {
    /// A main worker: receives jobs from the queue and helps the board when
    /// it has none.
    Main,
    /// A reserve worker: helps the heaviest jobs on the board.
    Reserve,
    /// A thread waiting for its DAG, running steps of the DAG's jobs
    /// meanwhile (see [`ExecutorConfig::waiters_work`](crate::ExecutorConfig::waiters_work)).
    /// It never yields to other jobs.
    Waiter,
}

/// One unit of work of a [`Job`](crate::Job).
///
/// # Contract
///
/// - Each step of a submitted job runs at most once, and exactly once if the
///   job is neither cancelled nor failed.
/// - Steps are claimed in index order. When step `i` starts, every step
///   `j < i` of its job has been claimed by a worker that is running it (or
///   has run it), so a step **may block waiting for the output of
///   lower-index steps** of its job (for example on a channel they feed).
///   It must **never** wait for a higher-index step: that step may not be
///   claimed until this one returns.
/// - A step must not block waiting for another job of its own executor:
///   [`JobTicket::wait`](crate::JobTicket::wait) (and `wait_timeout` with a
///   non-zero timeout) panics on the executor's worker threads, failing the
///   step's job. A long step should instead call
///   [`StepContext::yield_now`] between units of work.
/// - Apart from that, steps are independent and may run in parallel on
///   different workers, main or reserve.
/// - A step that returns `Err` or panics fails its job: no further steps of
///   the job start, and steps already running see
///   [`StepContext::is_cancelled`] become true. They (and long steps of a
///   cancelled job) should poll it and return early.
/// - A step is dropped by the worker that claimed it, right after it runs
///   (or instead of running, once its job is cancelled or failed). A job
///   cancelled while queued drops its steps unrun.
/// - A panic anywhere in a step's life is contained: in `run` it fails the
///   job with the panic message; in `name` (called only to report a
///   failure) the failure says so; in `Drop` it fails the job with the
///   panic message unless the job has already ended. Each panic counts in
///   [`ExecutorStats::step_panics`](crate::ExecutorStats::step_panics), the
///   step's slot is retired exactly once, and the worker lives on.
pub trait Step: Send + Sync {
    /// Does the work.
    fn run(&self, ctx: &StepContext<'_>) -> StepResult;

    /// A short name for diagnostics and [`JobFailure`](crate::JobFailure).
    fn name(&self) -> &str {
        "step"
    }
}

impl<F> Step for F
where
    F: Fn(&StepContext<'_>) -> StepResult + Send + Sync,
{
    fn run(&self, ctx: &StepContext<'_>) -> StepResult {
        self(ctx)
    }
}

/// A named step made from a closure; see [`step_fn`].
pub struct FnStep<F> {
    name: String,
    f: F,
}

/// Makes a named [`Step`] from a closure (and lets the closure's argument
/// type be inferred).
///
/// ```
/// use weir_executor::{Job, step_fn};
/// let job = Job::new("demo").with_step(step_fn("noop", |_ctx| Ok(())));
/// assert_eq!(job.len(), 1);
/// ```
pub fn step_fn<F>(name: impl Into<String>, f: F) -> FnStep<F>
where
    F: Fn(&StepContext<'_>) -> StepResult + Send + Sync,
{
    FnStep {
        name: name.into(),
        f,
    }
}

impl<F> Step for FnStep<F>
where
    F: Fn(&StepContext<'_>) -> StepResult + Send + Sync,
{
    fn run(&self, ctx: &StepContext<'_>) -> StepResult {
        (self.f)(ctx)
    }

    fn name(&self) -> &str {
        &self.name
    }
}

impl<F> fmt::Debug for FnStep<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnStep").field("name", &self.name).finish()
    }
}

/// What a worker lends the steps it runs, so they can yield to waiting
/// work (see [`StepContext::yield_now`]).
pub(crate) trait Lender {
    /// Whether work younger than `stamp` waits that this worker could run.
    fn should_yield(&self, stamp: u64) -> bool;
    /// Runs some waiting work younger than `stamp`; true if it ran any.
    fn yield_now(&self, stamp: u64) -> bool;
    /// Whether whoever runs the step gives up on it (a waiter whose
    /// query was interrupted; it has cancelled the job by then).
    fn interrupted(&self) -> bool {
        false
    }
}

/// What a running step can see of its job and worker.
pub struct StepContext<'a> {
    pub(crate) job: &'a JobShared,
    pub(crate) worker: WorkerKind,
    pub(crate) step_index: usize,
    /// The job's receive stamp.
    pub(crate) stamp: u64,
    /// `None` outside an executor (a stand-alone [`JobHandle`](crate::JobHandle)).
    pub(crate) lender: Option<&'a dyn Lender>,
}

impl StepContext<'_> {
    /// True once the job is cancelled or failed; a step should then return
    /// early (its result is ignored). Run by a thread waiting for its DAG,
    /// it is also where that thread checks whether its caller gave up (see
    /// [`DagHandle::wait_interruptible`](crate::DagHandle::wait_interruptible)),
    /// which cancels the job.
    pub fn is_cancelled(&self) -> bool {
        self.job.is_stopped() || self.lender.is_some_and(|lender| lender.interrupted())
    }

    /// The kind of worker running this step.
    pub fn worker(&self) -> WorkerKind {
        self.worker
    }

    /// This step's index in its job.
    pub fn step_index(&self) -> usize {
        self.step_index
    }

    /// The id of the job this step belongs to.
    pub fn job_id(&self) -> JobId {
        self.job.id
    }

    /// True when other work waits that [`StepContext::yield_now`] would
    /// run here: a job still in the executor's queue (on a main worker,
    /// while no main worker is idle to take it), or a job received after
    /// this one that has unclaimed steps. A few relaxed loads (plus a walk
    /// of the board, about one entry per main worker, when some job is
    /// younger than this one); cheap enough to ask between morsels.
    pub fn should_yield(&self) -> bool {
        self.lender
            .is_some_and(|lender| lender.should_yield(self.stamp))
    }

    /// Gives this worker to waiting work for a while, then returns: the
    /// cooperative yield that keeps a long job from holding every worker
    /// while short jobs wait behind it.
    ///
    /// If [`StepContext::should_yield`] holds, the worker runs, here on this
    /// thread, either the next queued job (a main worker; every step of it
    /// this worker can claim) or one step of the highest-priority job on the
    /// board that was received after this step's job; then this step
    /// resumes. Returns true if it ran anything. A step calls it between
    /// units of work (for example between morsels), keeping its own
    /// progress in its locals.
    ///
    /// Rules:
    /// - Call it holding no lock and no resource another step may wait for:
    ///   the borrowed work runs before this step resumes.
    /// - Steps waiting on this one (higher-index steps of its job) wait
    ///   longer; nothing else changes for this job.
    /// - It never deadlocks through the step contract: a yielding step only
    ///   runs work of jobs received after its own, so the chain "paused
    ///   under" always leads to younger jobs and ends.
    /// - Nesting is bounded (a borrowed step may yield again, up to a fixed
    ///   depth); beyond it, and outside an executor, it returns false.
    pub fn yield_now(&self) -> bool {
        self.lender
            .is_some_and(|lender| lender.yield_now(self.stamp))
    }
}

impl fmt::Debug for StepContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StepContext")
            .field("job_id", &self.job.id)
            .field("worker", &self.worker)
            .field("step_index", &self.step_index)
            .field("stamp", &self.stamp)
            .finish()
    }
}
