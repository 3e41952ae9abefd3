//! The dual-pool executor: main workers take jobs from the queue, reserve
//! workers help the heaviest jobs on the board.

use std::cell::Cell;
use std::fmt;

use weir_pool::ThreadPool;

use crate::board::JobBoard;
use crate::error::{Error, Result, TrySubmitError};
use crate::job::{
    AnnounceHook, Job, JobHandle, JobId, JobShared, JobTicket, StepClaim, enter_worker,
};
use crate::split::split_threads;
use crate::stats::{Counters, ExecutorStats};
use crate::step::{Lender, WorkerKind};
use crate::sync::channel::{self, Receiver, Sender, TryRecvError, TrySendError};
#[cfg_attr(weir_loom_bug = "fences", allow(unused_imports))]
use crate::sync::{Arc, AtomicU64, AtomicUsize, Ordering, fence};

/// How to build a [`PipelineExecutor`].
#[derive(Clone, Debug)]
pub struct ExecutorConfig {
    /// Total worker threads, main plus reserve; at least one.
    pub threads: usize,
    /// `(main, reserve)` workers; `None` means [`split_threads`]`(threads)`.
    /// If set, `main >= 1` and `main + reserve == threads`.
    pub split: Option<(usize, usize)>,
    /// Capacity of the job queue: `None` is unbounded; `Some(n)` (n >= 1)
    /// makes `submit` block and `try_submit` fail while `n` jobs wait.
    pub queue_capacity: Option<usize>,
    /// Thread name prefix: workers are `{name}-main-{i}` and
    /// `{name}-reserve-{i}`.
    pub thread_name: String,
    /// A thread waiting for a [`Dag`](crate::Dag) run on this executor
    /// ([`DagHandle::wait`](crate::DagHandle::wait)) runs steps of the
    /// DAG's jobs while it waits, as one more worker of its own query (and
    /// of nothing else): DuckDB's model, where `threads = N` counts the
    /// calling thread beside `N - 1` workers. The waiter starts its share
    /// at once, on a core that is awake, and sees the end without a
    /// wake-up when it ran the last step. False by default.
    pub waiters_work: bool,
}

impl Default for ExecutorConfig {
    /// One thread per available core, the default split, an unbounded
    /// queue, threads named `weir-…`.
    fn default() -> Self {
        ExecutorConfig {
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            split: None,
            queue_capacity: None,
            thread_name: "weir".to_owned(),
            waiters_work: false,
        }
    }
}

impl ExecutorConfig {
    /// The default configuration with `threads` threads.
    pub fn with_threads(threads: usize) -> Self {
        ExecutorConfig {
            threads,
            ..ExecutorConfig::default()
        }
    }

    fn resolve_split(&self) -> Result<(usize, usize)> {
        if self.threads == 0 {
            return Err(Error::InvalidConfig(
                "threads must be at least 1".to_owned(),
            ));
        }
        if self.queue_capacity == Some(0) {
            return Err(Error::InvalidConfig(
                "queue_capacity must be at least 1".to_owned(),
            ));
        }
        match self.split {
            None => Ok(split_threads(self.threads)),
            Some((main, reserve)) if main >= 1 && main + reserve == self.threads => {
                Ok((main, reserve))
            }
            Some((main, reserve)) => Err(Error::InvalidConfig(format!(
                "split ({main}, {reserve}) must have at least one main worker \
                 and add up to threads ({})",
                self.threads
            ))),
        }
    }
}

/// Runs [`Job`]s on a main and a reserve pool of worker threads.
///
/// - `submit` queues a job on an MPMC channel (bounded if configured).
/// - A main worker receives it, puts it on the [`JobBoard`] (if it has more
///   than one step), wakes helpers, then claims and runs its steps in a
///   loop until every step is claimed.
/// - Idle main workers and the reserve workers help the heaviest job on the
///   board (higher cost first, equal cost oldest first), claiming its steps
///   by compare-and-swap on `next_free_slot`.
/// - Whoever finds a job on the board exhausted takes it off; exactly one
///   removal succeeds, so finished jobs leave the board.
///
/// # Shutdown
///
/// Dropping the executor **drains**: every job already submitted still runs
/// to completion (unless a ticket cancels it), then every thread is joined.
pub struct PipelineExecutor {
    submitter: Submitter,
    /// Kept to cancel, on drop, jobs submitted after the workers stopped.
    leftovers: Receiver<Intake>,
    split: (usize, usize),
    /// `None` only while dropping.
    main_pool: Option<ThreadPool>,
    reserve_pool: Option<ThreadPool>,
}

/// What travels on the job queue.
enum Intake {
    /// A submitted job.
    Job(Submission),
    /// A board job has steps to spare: an idle main worker should help.
    Help,
    /// Shutdown: the receiving main worker exits. One per main worker,
    /// queued after every job.
    Stop,
}

struct Submission {
    job: Job,
    shared: Arc<JobShared>,
    seq: u64,
}

impl Submission {
    /// The job as it was given, its done hook back in place.
    fn into_job(self) -> Job {
        let mut job = self.job;
        job.restore_on_done(self.shared.take_on_done());
        job
    }
}

/// How deep borrowed work may nest on one worker (a step yields, the
/// borrowed step yields again, ...); bounds the stack a worker uses.
const MAX_NESTING: usize = 8;

/// How long a worker that ran out of work keeps looking for more (a job
/// queued, a step on the board), yielding its core between looks, before
/// it blocks. A blocked worker takes a wake-up through the kernel (tens
/// of microseconds on a busy host) to start the next job, or the next
/// pipeline of the same query: a short query's lanes then start late, one
/// by one. (Not under loom: the models check the blocking protocol.) A
/// thread waiting for a DAG looks as long (see `DagHandle::wait`).
#[cfg(not(weir_loom))]
pub(crate) const LOOK_FOR_WORK: std::time::Duration = std::time::Duration::from_micros(200);

/// Whether a worker idle since `since` (set on its first idle look)
/// looks again instead of blocking; it yields its core first.
#[inline]
fn keeps_looking(since: &mut Option<std::time::Instant>) -> bool {
    #[cfg(not(weir_loom))]
    {
        let start = *since.get_or_insert_with(std::time::Instant::now);
        if start.elapsed() < LOOK_FOR_WORK {
            std::thread::yield_now();
            return true;
        }
    }
    *since = None;
    false
}

/// State shared by the executor and its workers.
struct Shared {
    board: JobBoard,
    counters: Arc<Counters>,
    /// Main workers about to block on the job queue.
    idle_mains: AtomicUsize,
    reserves: usize,
    /// Jobs sent on the queue and not yet received (a hint for
    /// `should_yield`; exact once quiet).
    queued: AtomicUsize,
    /// The next receive stamp: jobs are stamped in the order main workers
    /// receive them.
    next_stamp: AtomicU64,
    /// The highest stamp ever put on the board (a hint that lets
    /// `should_yield` skip the board walk).
    youngest: AtomicU64,
    /// The next submission sequence number.
    next_seq: AtomicU64,
    /// Fewer workers than the machine has cores: a thread waiting for a
    /// DAG may look for its end on a core no worker needs (see
    /// `DagHandle::wait`).
    spare_core: bool,
    /// See [`ExecutorConfig::waiters_work`].
    waiters_work: bool,
}

impl PipelineExecutor {
    /// Starts the worker threads. Fails with [`Error::InvalidConfig`] for
    /// zero threads, a zero queue capacity or an inconsistent split, and
    /// with [`Error::Spawn`] if a thread cannot start.
    pub fn new(config: ExecutorConfig) -> Result<Self> {
        let (mains, reserves) = config.resolve_split()?;
        let (intake_tx, intake_rx) = match config.queue_capacity {
            Some(capacity) => channel::bounded(capacity),
            None => channel::unbounded(),
        };
        // At most `reserves` wake tokens can be pending; see `Shared::wake`.
        let (wake_tx, wake_rx) = channel::bounded::<()>(reserves.max(1));
        let shared = Arc::new(Shared {
            board: JobBoard::default(),
            counters: Arc::new(Counters::new()),
            idle_mains: AtomicUsize::new(0),
            reserves,
            queued: AtomicUsize::new(0),
            next_stamp: AtomicU64::new(0),
            youngest: AtomicU64::new(0),
            next_seq: AtomicU64::new(0),
            spare_core: std::thread::available_parallelism()
                .is_ok_and(|cores| mains + reserves < cores.get()),
            waiters_work: config.waiters_work,
        });
        let main_pool = ThreadPool::builder()
            .name(format!("{}-main", config.thread_name))
            .threads(mains)
            .build()
            .map_err(Error::Spawn)?;
        for _ in 0..mains {
            let shared = Arc::clone(&shared);
            let intake_rx = intake_rx.clone();
            let intake_tx = intake_tx.clone();
            let wake_tx = wake_tx.clone();
            main_pool.execute(move || shared.main_worker(&intake_rx, &intake_tx, &wake_tx));
        }
        drop(wake_tx);
        let mut executor = PipelineExecutor {
            submitter: Submitter {
                intake: intake_tx,
                shared,
            },
            leftovers: intake_rx,
            split: (mains, reserves),
            main_pool: Some(main_pool),
            reserve_pool: None,
        };
        if reserves > 0 {
            // On error `executor` is dropped, which stops the main workers.
            let reserve_pool = ThreadPool::builder()
                .name(format!("{}-reserve", config.thread_name))
                .threads(reserves)
                .build()
                .map_err(Error::Spawn)?;
            for _ in 0..reserves {
                let shared = Arc::clone(&executor.submitter.shared);
                let wake_rx = wake_rx.clone();
                let helpers = executor.submitter.intake.clone();
                reserve_pool.execute(move || shared.reserve_worker(&wake_rx, &helpers));
            }
            executor.reserve_pool = Some(reserve_pool);
        }
        Ok(executor)
    }

    /// Queues `job`, blocking while a bounded queue is full, and returns its
    /// ticket.
    pub fn submit(&self, job: Job) -> Result<JobTicket> {
        self.submitter.submit(job)
    }

    /// Queues `job` if the queue has room; otherwise hands it back in
    /// [`TrySubmitError::Full`].
    pub fn try_submit(&self, job: Job) -> Result<JobTicket, TrySubmitError> {
        self.submitter.try_submit(job)
    }

    /// A handle that submits to this executor without keeping it alive:
    /// for code that runs on the workers (a job's
    /// [`on_done`](Job::on_done) hook starting the next job, the
    /// [`Dag`](crate::Dag) scheduler), which must never own the executor
    /// (dropping it on one of its own workers would join that worker).
    /// Once the executor is dropped, it fails with [`Error::ShutDown`].
    pub fn submitter(&self) -> Submitter {
        self.submitter.clone()
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> ExecutorStats {
        self.submitter
            .shared
            .counters
            .snapshot(self.submitter.shared.board.len())
    }

    /// Drains the executor as dropping it does (queued jobs still run,
    /// every thread is joined) and returns the counters then. A snapshot
    /// taken while workers run may miss counts a worker makes just after
    /// a job completes (a helper counts its steal once its step returned);
    /// this one misses none.
    pub fn shutdown(self) -> ExecutorStats {
        let shared = Arc::clone(&self.submitter.shared);
        drop(self);
        shared.counters.snapshot(shared.board.len())
    }

    /// Jobs on the board now; zero once every job has finished.
    pub fn board_len(&self) -> usize {
        self.submitter.shared.board.len()
    }

    /// `(main, reserve)` worker counts.
    pub fn split(&self) -> (usize, usize) {
        self.split
    }

    /// Total worker threads.
    pub fn threads(&self) -> usize {
        self.split.0 + self.split.1
    }

    /// Whether a thread waiting for a DAG works on it (see
    /// [`ExecutorConfig::waiters_work`]).
    pub fn waiters_work(&self) -> bool {
        self.submitter.shared.waiters_work
    }

    /// How many threads work on a DAG while its caller waits for it: the
    /// workers, and the caller where waiters work.
    pub fn parallelism(&self) -> usize {
        self.threads() + usize::from(self.waiters_work())
    }
}

impl Drop for PipelineExecutor {
    /// Drains: queued jobs still run; then every thread is joined.
    fn drop(&mut self) {
        // Stops queue up behind every submitted job; each main worker takes
        // exactly one and exits (a worker that has taken one takes no more).
        for _ in 0..self.split.0 {
            if self.submitter.intake.send(Intake::Stop).is_err() {
                break; // no main worker left to stop
            }
        }
        // Joins the main workers. Their exit drops every wake sender, which
        // disconnects the wake channel and lets the reserve workers exit.
        drop(self.main_pool.take());
        drop(self.reserve_pool.take());
        // Jobs submitted behind the stops (by the done hooks of draining
        // jobs, through a `Submitter`) have no worker left: cancel them,
        // which may submit more (cancelled in turn) until none is left.
        while let Ok(message) = self.leftovers.try_recv() {
            if let Intake::Job(submission) = message {
                self.submitter.shared.queued.fetch_sub(1, Ordering::Relaxed);
                JobTicket::from_shared(submission.shared).cancel();
            }
        }
    }
}

/// Submits jobs to a [`PipelineExecutor`] without keeping it alive; see
/// [`PipelineExecutor::submitter`]. Cheap to clone.
#[derive(Clone)]
pub struct Submitter {
    intake: Sender<Intake>,
    shared: Arc<Shared>,
}

impl Submitter {
    /// Queues `job`, blocking while a bounded queue is full, and returns its
    /// ticket.
    pub fn submit(&self, job: Job) -> Result<JobTicket> {
        let (submission, ticket) = self.prepare(job);
        // Counted before it is sent, so the count never goes below zero.
        self.shared.queued.fetch_add(1, Ordering::Relaxed);
        if self.intake.send(Intake::Job(submission)).is_err() {
            self.shared.queued.fetch_sub(1, Ordering::Relaxed);
            return Err(Error::ShutDown);
        }
        Counters::bump(&self.shared.counters.jobs_submitted);
        Ok(ticket)
    }

    /// Queues `job` if the queue has room; otherwise hands it back in
    /// [`TrySubmitError::Full`].
    pub fn try_submit(&self, job: Job) -> Result<JobTicket, TrySubmitError> {
        let (submission, ticket) = self.prepare(job);
        self.shared.queued.fetch_add(1, Ordering::Relaxed);
        let sent = self.intake.try_send(Intake::Job(submission));
        if sent.is_err() {
            self.shared.queued.fetch_sub(1, Ordering::Relaxed);
        }
        match sent {
            Ok(()) => {
                Counters::bump(&self.shared.counters.jobs_submitted);
                Ok(ticket)
            }
            Err(TrySendError::Full(Intake::Job(submission))) => {
                Err(TrySubmitError::Full(submission.into_job()))
            }
            Err(TrySendError::Disconnected(Intake::Job(submission))) => {
                Err(TrySubmitError::ShutDown(submission.into_job()))
            }
            Err(_) => unreachable!("try_send hands back the message it was given"),
        }
    }

    fn prepare(&self, mut job: Job) -> (Submission, JobTicket) {
        // Relaxed: the number only has to be unique and increasing.
        let seq = self.shared.next_seq.fetch_add(1, Ordering::Relaxed);
        let shared = Arc::new(JobShared::new(
            JobId::from_seq(seq),
            job.len(),
            Arc::clone(&self.shared.counters),
            self.shared.id(),
            job.take_on_done(),
        ));
        let ticket = JobTicket::from_shared(Arc::clone(&shared));
        (Submission { job, shared, seq }, ticket)
    }
}

impl Submitter {
    /// Whether the executor leaves a core of the machine to other threads.
    pub(crate) fn has_spare_core(&self) -> bool {
        self.shared.spare_core
    }

    /// See [`ExecutorConfig::waiters_work`].
    pub(crate) fn waiters_work(&self) -> bool {
        self.shared.waiters_work
    }

    /// Runs the next step of `job`, a job of this executor handed to a
    /// thread waiting for its DAG (by its announce hook), on the calling
    /// thread; takes the job off the board once it is exhausted, as its
    /// worker does.
    pub(crate) fn run_waiter_step(&self, job: &JobHandle, lender: &dyn Lender) -> StepClaim {
        let claim = job.run_next_step_with(WorkerKind::Waiter, Some(lender), || {
            self.shared.retire(job);
        });
        if claim == StepClaim::Exhausted {
            self.shared.retire(job);
        }
        claim
    }
}

impl fmt::Debug for Submitter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Submitter").finish_non_exhaustive()
    }
}

impl fmt::Debug for PipelineExecutor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PipelineExecutor")
            .field("split", &self.split)
            .field("board_len", &self.board_len())
            .finish()
    }
}

impl Shared {
    /// This executor's identity for the wait check: the shared state's
    /// address, never 0.
    fn id(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }

    fn main_worker(&self, intake: &Receiver<Intake>, helpers: &Sender<Intake>, wake: &Sender<()>) {
        enter_worker(self.id());
        let stop = Cell::new(false);
        let lender = WorkerLender {
            shared: self,
            kind: WorkerKind::Main,
            main: Some((intake, wake)),
            helpers,
            depth: 0,
            stop: &stop,
        };
        let mut idle = None;
        while !stop.get() {
            // New jobs first.
            match intake.try_recv() {
                Ok(Intake::Job(submission)) => {
                    idle = None;
                    self.run_received(submission, &lender);
                    continue;
                }
                Ok(Intake::Help) | Err(TryRecvError::Empty) => {}
                Ok(Intake::Stop) | Err(TryRecvError::Disconnected) => return,
            }
            // No job waiting: help the heaviest job on the board.
            if self.help_board(&lender) {
                idle = None;
                continue;
            }
            if keeps_looking(&mut idle) {
                continue;
            }
            // About to block. Announce idleness, then look once more: either
            // this look sees a job inserted concurrently, or its announcer
            // sees us idle and sends a `Help` (see `wake`).
            self.idle_mains.fetch_add(1, Ordering::Relaxed);
            #[cfg(not(weir_loom_bug = "fences"))]
            fence(Ordering::SeqCst);
            if self.board.front().is_some() {
                self.idle_mains.fetch_sub(1, Ordering::Relaxed);
                continue;
            }
            let message = intake.recv();
            self.idle_mains.fetch_sub(1, Ordering::Relaxed);
            match message {
                Ok(Intake::Job(submission)) => self.run_received(submission, &lender),
                Ok(Intake::Help) => {}
                Ok(Intake::Stop) | Err(_) => return,
            }
        }
    }

    fn reserve_worker(&self, wake: &Receiver<()>, helpers: &Sender<Intake>) {
        enter_worker(self.id());
        let stop = Cell::new(false);
        let lender = WorkerLender {
            shared: self,
            kind: WorkerKind::Reserve,
            main: None,
            helpers,
            depth: 0,
            stop: &stop,
        };
        let mut idle = None;
        loop {
            while self.help_board(&lender) {
                idle = None;
            }
            if keeps_looking(&mut idle) {
                continue;
            }
            if wake.recv().is_err() {
                return; // every main worker has exited
            }
            // Pairs with the fence in `wake`: see there.
            #[cfg(not(weir_loom_bug = "fences"))]
            fence(Ordering::SeqCst);
        }
    }

    /// Runs a job received from the queue: announce it, then claim and run
    /// its steps until none is left.
    fn run_received(&self, submission: Submission, lender: &WorkerLender<'_>) {
        self.queued.fetch_sub(1, Ordering::Relaxed);
        let Submission {
            mut job,
            shared,
            seq,
        } = submission;
        let on_announce = job.take_on_announce();
        let stamp = self.next_stamp.fetch_add(1, Ordering::Relaxed);
        let handle = JobHandle::from_parts(job, seq, stamp, shared);
        if !handle.start() {
            return; // cancelled while queued; its steps drop with `handle`
        }
        // A single step has nobody to share with.
        let announced = handle.steps_total() > 1;
        if !announced {
            while handle.run_next_step_with(lender.kind, Some(lender), || {})
                != StepClaim::Exhausted
            {}
            return;
        }
        let (_, wake) = lender.main.expect("only main workers receive jobs");
        self.announce(&handle, lender.helpers, wake, on_announce);
        while self.run_board_step(&handle, lender) != StepClaim::Exhausted {}
        self.retire(&handle);
    }

    /// Puts a job on the board, hands it to its announce hook (the thread
    /// waiting for its DAG) and wakes helpers. The insert happens before
    /// the wake-ups, so a woken helper finds the job.
    fn announce(
        &self,
        handle: &JobHandle,
        helpers: &Sender<Intake>,
        wake: &Sender<()>,
        on_announce: Option<AnnounceHook>,
    ) {
        #[cfg(weir_loom_bug = "wake")]
        self.wake(handle, helpers, wake); // planted bug: wake before insert
        self.board.insert(handle.clone());
        self.youngest.fetch_max(handle.stamp(), Ordering::Relaxed);
        if let Some(hook) = on_announce {
            hook(handle);
        }
        #[cfg(not(weir_loom_bug = "wake"))]
        self.wake(handle, helpers, wake);
    }

    /// Sends up to one wake token per spare step to the reserve workers and
    /// `Help` messages to idle main workers.
    ///
    /// No lost wake-up. A reserve worker blocks on the wake channel only
    /// after a full board scan. If `try_send` succeeds, some reserve worker
    /// receives the token after our insert and scans again. If it fails
    /// because the channel is full, a token is pending; the worker that
    /// receives it does so after our `try_send` read the channel, and it
    /// scans after a `SeqCst` fence, which pairs with ours (store-buffering
    /// with fences on both sides): it cannot miss our insert. A
    /// disconnected channel means there are no reserve workers. The same
    /// fence pairing covers idle main workers through `idle_mains`; `Help`
    /// is only best effort, because the job's own main worker claims every
    /// step anyway.
    fn wake(&self, handle: &JobHandle, helpers: &Sender<Intake>, wake: &Sender<()>) {
        #[cfg(not(weir_loom_bug = "fences"))]
        fence(Ordering::SeqCst);
        let spare = handle.steps_total().saturating_sub(1);
        for _ in 0..spare.min(self.reserves) {
            if wake.try_send(()).is_err() {
                break;
            }
        }
        let idle = self.idle_mains.load(Ordering::Relaxed);
        for _ in 0..spare.min(idle) {
            if helpers.try_send(Intake::Help).is_err() {
                break;
            }
        }
    }

    /// Runs the next step of a job on the board. Whoever retires its last
    /// step takes it off the board before completing it, so a job is off
    /// the board by the time its ticket reports `Completed`.
    fn run_board_step(&self, handle: &JobHandle, lender: &WorkerLender<'_>) -> StepClaim {
        handle.run_next_step_with(lender.kind, Some(lender), || self.retire(handle))
    }

    /// Takes an exhausted job off the board; only one caller wins.
    fn retire(&self, handle: &JobHandle) {
        if self.board.remove(handle) {
            Counters::bump(&self.counters.board_removals);
        }
    }

    /// Runs (or discards) one step of the heaviest claimable job on the
    /// board, taking exhausted jobs off on the way. False if the board had
    /// nothing to claim.
    ///
    /// Before running, a helper that leaves steps unclaimed passes a `Help`
    /// on to an idle main worker: `Help` messages are best effort (a busy
    /// worker's `try_recv` can take one meant for a sleeper), and this chain
    /// brings every idle worker in while a job has steps to spare.
    fn help_board(&self, lender: &WorkerLender<'_>) -> bool {
        while let Some(handle) = self.board.front() {
            if handle.steps_unclaimed() > 1 && self.idle_mains.load(Ordering::Relaxed) > 0 {
                let _ = lender.helpers.try_send(Intake::Help);
            }
            match self.run_board_step(&handle, lender) {
                StepClaim::Ran(_) => {
                    Counters::bump(&self.counters.steals);
                    return true;
                }
                StepClaim::Discarded(_) => return true,
                StepClaim::Exhausted => self.retire(&handle),
            }
        }
        false
    }
}

/// A worker's view of the executor, lent to the steps it runs so they can
/// yield (see [`StepContext::yield_now`](crate::StepContext::yield_now)).
#[derive(Clone, Copy)]
struct WorkerLender<'a> {
    shared: &'a Shared,
    kind: WorkerKind,
    /// A main worker's job queue and wake sender; `None` on a reserve
    /// worker, which never receives jobs.
    main: Option<(&'a Receiver<Intake>, &'a Sender<()>)>,
    helpers: &'a Sender<Intake>,
    /// How many borrowed steps this one runs inside.
    depth: usize,
    /// Set when a yield received the worker's `Stop`: the worker exits once
    /// its current work is done.
    stop: &'a Cell<bool>,
}

impl WorkerLender<'_> {
    /// A queued job that this (main) worker could take.
    fn job_queued(&self) -> bool {
        self.main.is_some()
            && self.shared.queued.load(Ordering::Relaxed) > 0
            && self.shared.idle_mains.load(Ordering::Relaxed) == 0
    }

    /// The highest-priority job on the board received after `stamp` that
    /// has unclaimed steps.
    fn younger_job(&self, stamp: u64) -> Option<JobHandle> {
        if self.shared.youngest.load(Ordering::Relaxed) <= stamp {
            return None;
        }
        self.shared
            .board
            .find(|handle| handle.stamp() > stamp && handle.steps_unclaimed() > 0)
    }
}

impl Lender for WorkerLender<'_> {
    fn should_yield(&self, stamp: u64) -> bool {
        self.depth < MAX_NESTING && (self.job_queued() || self.younger_job(stamp).is_some())
    }

    fn yield_now(&self, stamp: u64) -> bool {
        if self.depth >= MAX_NESTING {
            return false;
        }
        let nested = WorkerLender {
            depth: self.depth + 1,
            ..*self
        };
        if self.job_queued()
            && let Some((intake, _)) = self.main
        {
            // Any job received now is stamped after this step's job.
            match intake.try_recv() {
                Ok(Intake::Job(submission)) => {
                    self.shared.run_received(submission, &nested);
                    return true;
                }
                Ok(Intake::Help) | Err(TryRecvError::Empty) => {}
                Ok(Intake::Stop) | Err(TryRecvError::Disconnected) => self.stop.set(true),
            }
        }
        let Some(handle) = self.younger_job(stamp) else {
            return false;
        };
        match self.shared.run_board_step(&handle, &nested) {
            StepClaim::Ran(_) => {
                Counters::bump(&self.shared.counters.steals);
                true
            }
            StepClaim::Discarded(_) => true,
            StepClaim::Exhausted => {
                self.shared.retire(&handle);
                false
            }
        }
    }
}
