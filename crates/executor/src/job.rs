//! Jobs, their lifecycle, tickets and the step-claim protocol.

use std::cmp::Ordering as CmpOrdering;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use crate::stats::Counters;
use crate::step::{Lender, Step, StepContext, WorkerKind};
use crate::sync::{Arc, AtomicU8, AtomicUsize, Condvar, Mutex, Ordering, UnsafeCell};

/// A job: named, ordered steps plus a cost that sets its priority on the
/// board. See [`Step`] for the contract its steps follow.
pub struct Job {
    name: String,
    steps: Vec<Box<dyn Step>>,
    cost: Option<u64>,
    on_done: Option<DoneHook>,
    on_announce: Option<AnnounceHook>,
}

/// Called once a job has ended and none of its steps runs or will run.
pub(crate) type DoneHook = Box<dyn FnOnce(&JobOutcome) + Send>;

/// Called with a received job's handle once it is on the board with
/// steps to spare (see [`Job::on_announce`]).
pub(crate) type AnnounceHook = Box<dyn FnOnce(&JobHandle) + Send>;

impl Job {
    /// An empty job (it completes as soon as it is received).
    pub fn new(name: impl Into<String>) -> Self {
        Job {
            name: name.into(),
            steps: Vec::new(),
            cost: None,
            on_done: None,
            on_announce: None,
        }
    }

    /// Calls `hook` with the job's outcome exactly once, when the job has
    /// ended **and** none of its steps is running or will run (a failed or
    /// cancelled job's outcome is signalled to tickets at once, while steps
    /// already running may still be finishing; the hook waits for them).
    /// It runs on whichever thread got there last: a worker retiring the
    /// last step, or the thread that cancelled a queued job. It must not
    /// block; it may submit further jobs. A panic in it is caught and
    /// counted in `step_panics`. A job dropped unsubmitted never calls it.
    pub fn on_done(mut self, hook: impl FnOnce(&JobOutcome) + Send + 'static) -> Self {
        self.on_done = Some(Box::new(hook));
        self
    }

    /// Takes the hook set by [`Job::on_done`].
    pub(crate) fn take_on_done(&mut self) -> Option<DoneHook> {
        self.on_done.take()
    }

    /// Puts back a hook taken by [`Job::take_on_done`].
    pub(crate) fn restore_on_done(&mut self, hook: Option<DoneHook>) {
        self.on_done = hook;
    }

    /// Calls `hook` with the job's handle when a main worker has received
    /// the job and put it on the board, before it wakes helpers; never for
    /// a job of one step (nobody can help it) nor for one cancelled while
    /// queued. The DAG scheduler hands the handle to the thread waiting for
    /// the DAG, which then claims steps too. It runs on the receiving
    /// worker and must be short and must not panic.
    pub(crate) fn on_announce(mut self, hook: impl FnOnce(&JobHandle) + Send + 'static) -> Self {
        self.on_announce = Some(Box::new(hook));
        self
    }

    /// Takes the hook set by [`Job::on_announce`].
    pub(crate) fn take_on_announce(&mut self) -> Option<AnnounceHook> {
        self.on_announce.take()
    }

    /// Appends a step.
    pub fn with_step(mut self, step: impl Step + 'static) -> Self {
        self.steps.push(Box::new(step));
        self
    }

    /// Appends a boxed step.
    pub fn push_step(&mut self, step: Box<dyn Step>) {
        self.steps.push(step);
    }

    /// Sets the cost: heavier jobs are helped first. Defaults to the number
    /// of steps.
    pub fn with_cost(mut self, cost: u64) -> Self {
        self.cost = Some(cost);
        self
    }

    /// The job's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The cost: the one set by [`Job::with_cost`], else the number of steps.
    pub fn cost(&self) -> u64 {
        self.cost.unwrap_or(self.steps.len() as u64)
    }

    /// Number of steps.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// The steps, in order (to rebuild or merge jobs); an
    /// [`on_done`](Job::on_done) hook is dropped.
    pub fn into_steps(self) -> Vec<Box<dyn Step>> {
        self.steps
    }

    /// True if the job has no steps.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }
}

impl fmt::Debug for Job {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Job")
            .field("name", &self.name)
            .field("steps", &self.steps.len())
            .field("cost", &self.cost())
            .finish()
    }
}

/// Identifies a submitted job: its submission sequence number, unique per
/// executor and increasing in submission order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JobId(u64);

impl JobId {
    pub(crate) fn from_seq(seq: u64) -> Self {
        JobId(seq)
    }

    /// The submission sequence number.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "job-{}", self.0)
    }
}

/// Where a job is in its lifecycle.
///
/// `Queued -> Running -> Completed | Failed`, and `Queued | Running ->
/// Cancelled`; every change is a compare-and-swap from the expected state,
/// so exactly one terminal state is ever reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JobState {
    /// Submitted, not yet received by a worker.
    Queued,
    /// Received; steps are being claimed and run.
    Running,
    /// Every step returned `Ok`.
    Completed,
    /// A step returned `Err` or panicked.
    Failed,
    /// Cancelled through a ticket.
    Cancelled,
}

impl JobState {
    /// True for `Completed`, `Failed` and `Cancelled`.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            JobState::Completed | JobState::Failed | JobState::Cancelled
        )
    }
}

const QUEUED: u8 = 0;
const RUNNING: u8 = 1;
const COMPLETED: u8 = 2;
const FAILED: u8 = 3;
const CANCELLED: u8 = 4;

fn decode(state: u8) -> JobState {
    match state {
        QUEUED => JobState::Queued,
        RUNNING => JobState::Running,
        COMPLETED => JobState::Completed,
        FAILED => JobState::Failed,
        CANCELLED => JobState::Cancelled,
        other => unreachable!("invalid job state {other}"),
    }
}

/// How a job ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobOutcome {
    /// Every step returned `Ok`.
    Completed,
    /// A step failed the job.
    Failed(JobFailure),
    /// The job was cancelled.
    Cancelled,
}

/// Which step failed a job, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobFailure {
    /// Index of the failing step.
    pub step: usize,
    /// [`Step::name`] of the failing step.
    pub step_name: String,
    /// The step's error text, or its panic message.
    pub message: String,
}

impl fmt::Display for JobFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "step {} ({}) failed: {}",
            self.step, self.step_name, self.message
        )
    }
}

/// A job's outcome once published, and how many threads sleep waiting
/// for it (only they need a notify, which is a system call even when
/// nobody waits).
#[derive(Default)]
struct OutcomeSlot {
    outcome: Option<JobOutcome>,
    sleepers: usize,
}

/// The lifecycle and outcome of one job, shared by its tickets and its
/// running steps (but not owning the steps, so a ticket never keeps them
/// alive).
pub(crate) struct JobShared {
    pub(crate) id: JobId,
    steps_total: usize,
    state: AtomicU8,
    steps_ok: AtomicUsize,
    outcome: Mutex<OutcomeSlot>,
    done: Condvar,
    counters: Arc<Counters>,
    /// Parties arrived for the done hook: the outcome's publication and the
    /// steps' quiescence arrive once each; the second to arrive calls it.
    done_parties: AtomicU8,
    on_done: Mutex<Option<DoneHook>>,
    /// The executor running the job ([`worker_of`]), or 0 for a
    /// stand-alone [`JobHandle`].
    executor: usize,
}

impl JobShared {
    pub(crate) fn new(
        id: JobId,
        steps_total: usize,
        counters: Arc<Counters>,
        executor: usize,
        on_done: Option<DoneHook>,
    ) -> Self {
        JobShared {
            done_parties: AtomicU8::new(0),
            on_done: Mutex::new(on_done),
            executor,
            id,
            steps_total,
            state: AtomicU8::new(QUEUED),
            steps_ok: AtomicUsize::new(0),
            outcome: Mutex::new(OutcomeSlot::default()),
            done: Condvar::new(),
            counters,
        }
    }

    fn state(&self) -> JobState {
        decode(self.state.load(Ordering::Acquire))
    }

    pub(crate) fn is_stopped(&self) -> bool {
        matches!(self.state.load(Ordering::Acquire), FAILED | CANCELLED)
    }

    fn transition(&self, from: u8, to: u8) -> bool {
        self.state
            .compare_exchange(from, to, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// `Queued -> Running`; false if the job was cancelled first.
    fn start(&self) -> bool {
        self.transition(QUEUED, RUNNING)
    }

    /// `Running -> Completed`, signalled by the CAS winner only.
    fn complete(&self) {
        #[cfg(not(weir_loom_bug = "complete"))]
        if self.transition(RUNNING, COMPLETED) {
            self.publish(JobOutcome::Completed);
        }
        #[cfg(weir_loom_bug = "complete")]
        {
            // Planted bug: a plain store, so a racing cancel also signals.
            self.state.store(COMPLETED, Ordering::Release);
            self.publish(JobOutcome::Completed);
        }
    }

    /// `Running -> Failed`; a job already failed or cancelled keeps its
    /// first outcome.
    fn fail(&self, failure: JobFailure) {
        if self.transition(RUNNING, FAILED) {
            self.publish(JobOutcome::Failed(failure));
        }
    }

    /// `Queued | Running -> Cancelled`; true iff this call made the change.
    fn cancel(&self) -> bool {
        let mut current = self.state.load(Ordering::Acquire);
        while current == QUEUED || current == RUNNING {
            match self.state.compare_exchange(
                current,
                CANCELLED,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    self.publish(JobOutcome::Cancelled);
                    if current == QUEUED {
                        // No step ever runs: the worker that receives the
                        // job fails to start it and drops its steps.
                        self.arrive_quiet();
                    }
                    return true;
                }
                Err(actual) => current = actual,
            }
        }
        false
    }

    /// Records the outcome and wakes every waiter. Called only by the winner
    /// of the CAS into a terminal state, so exactly once per job.
    fn publish(&self, outcome: JobOutcome) {
        let counter = match outcome {
            JobOutcome::Completed => &self.counters.jobs_completed,
            JobOutcome::Failed(_) => &self.counters.jobs_failed,
            JobOutcome::Cancelled => &self.counters.jobs_cancelled,
        };
        Counters::bump(counter);
        let mut slot = self.outcome.lock().unwrap();
        assert!(
            slot.outcome.is_none(),
            "{} outcome signalled twice (likely caused by a bug)",
            self.id
        );
        slot.outcome = Some(outcome);
        let sleepers = slot.sleepers > 0;
        drop(slot);
        if sleepers {
            self.done.notify_all();
        }
        self.arrive(1);
    }

    /// Takes the done hook back (from a job that was never queued).
    pub(crate) fn take_on_done(&self) -> Option<DoneHook> {
        self.on_done.lock().unwrap().take()
    }

    /// No step of the job runs or will run any more.
    pub(crate) fn arrive_quiet(&self) {
        self.arrive(1);
    }

    /// One party of the done hook arrives; the second calls the hook. The
    /// read-modify-write decides who is second, so the hook runs once.
    fn arrive(&self, parties: u8) {
        if self.done_parties.fetch_add(parties, Ordering::AcqRel) + parties != 2 {
            return;
        }
        let Some(hook) = self.on_done.lock().unwrap().take() else {
            return;
        };
        let outcome = self
            .outcome
            .lock()
            .unwrap()
            .outcome
            .clone()
            .expect("the outcome is published before the done hook runs");
        if catch_unwind(AssertUnwindSafe(move || hook(&outcome))).is_err() {
            Counters::bump(&self.counters.step_panics);
        }
    }

    /// Panics on a worker thread of the job's own executor: a step that
    /// waits for another job of its executor can deadlock it (every worker
    /// may end up in such a wait, with nobody left to run the jobs waited
    /// for).
    fn check_waiter(&self) {
        if self.executor != 0 && worker_of() == self.executor {
            panic!(
                "a step must not wait for {} of its own executor: it can deadlock \
                 (submit the work as further steps, or wait outside the executor)",
                self.id
            );
        }
    }

    fn wait(&self) -> JobOutcome {
        self.check_waiter();
        let mut slot = self.outcome.lock().unwrap();
        loop {
            if let Some(outcome) = &slot.outcome {
                return outcome.clone();
            }
            slot.sleepers += 1;
            slot = self.done.wait(slot).unwrap();
            slot.sleepers -= 1;
        }
    }

    fn wait_timeout(&self, timeout: Duration) -> Option<JobOutcome> {
        if !timeout.is_zero() {
            self.check_waiter();
        }
        let deadline = Instant::now().checked_add(timeout);
        let mut slot = self.outcome.lock().unwrap();
        loop {
            if let Some(outcome) = &slot.outcome {
                return Some(outcome.clone());
            }
            let left = match deadline {
                Some(deadline) => deadline.checked_duration_since(Instant::now())?,
                // Too far away to represent: wait as long as it takes.
                None => Duration::MAX,
            };
            slot.sleepers += 1;
            slot = self.done.wait_timeout(slot, left).unwrap().0;
            slot.sleepers -= 1;
        }
    }
}

#[cfg(not(weir_loom))]
std::thread_local! {
    static WORKER_OF: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Marks this thread as a worker of executor `executor` (non-zero) for the
/// rest of its life.
pub(crate) fn enter_worker(executor: usize) {
    #[cfg(not(weir_loom))]
    WORKER_OF.with(|cell| cell.set(executor));
    // Loom threads share the OS thread's locals, so the check is off there.
    #[cfg(weir_loom)]
    let _ = executor;
}

/// The executor this thread is a worker of, or 0.
fn worker_of() -> usize {
    #[cfg(not(weir_loom))]
    return WORKER_OF.with(std::cell::Cell::get);
    #[cfg(weir_loom)]
    0
}

/// A handle to a submitted job: wait for it, cancel it, read its state.
/// Cheap to clone; dropping it does not cancel the job.
#[derive(Clone)]
pub struct JobTicket {
    shared: Arc<JobShared>,
}

impl JobTicket {
    pub(crate) fn from_shared(shared: Arc<JobShared>) -> Self {
        JobTicket { shared }
    }

    /// The job's id.
    pub fn id(&self) -> JobId {
        self.shared.id
    }

    /// The job's current state.
    pub fn state(&self) -> JobState {
        self.shared.state()
    }

    /// Blocks until the job ends and returns how.
    ///
    /// # Panics
    ///
    /// On a worker thread of the executor running this job, that is from a
    /// step of that executor: such a wait can deadlock the executor (see
    /// [`Step`]). Inside a step the panic fails the step's job.
    pub fn wait(&self) -> JobOutcome {
        self.shared.wait()
    }

    /// Like [`JobTicket::wait`], but gives up after `timeout` and returns
    /// `None` if the job has not ended by then. Panics like
    /// [`JobTicket::wait`] unless `timeout` is zero (a poll never blocks).
    pub fn wait_timeout(&self, timeout: Duration) -> Option<JobOutcome> {
        self.shared.wait_timeout(timeout)
    }

    /// Cancels the job if it has not ended; true iff this call moved it to
    /// `Cancelled`. Waiters wake at once; steps not yet started never run,
    /// steps running see [`StepContext::is_cancelled`].
    pub fn cancel(&self) -> bool {
        self.shared.cancel()
    }

    /// Steps that have run and returned `Ok` so far.
    pub fn steps_finished(&self) -> usize {
        self.shared.steps_ok.load(Ordering::Acquire)
    }

    /// Number of steps of the job.
    pub fn steps_total(&self) -> usize {
        self.shared.steps_total
    }
}

impl fmt::Debug for JobTicket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JobTicket")
            .field("id", &self.id())
            .field("state", &self.state())
            .finish()
    }
}

/// What [`JobHandle::run_next_step`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepClaim {
    /// Claimed step `n` and ran it.
    Ran(usize),
    /// Claimed step `n` of a cancelled or failed job and dropped it unrun.
    Discarded(usize),
    /// Every step had already been claimed.
    Exhausted,
}

/// A step until its claimer takes it out to run (or discard) it.
type StepSlot = UnsafeCell<Option<Box<dyn Step>>>;

/// A running job: its steps, the `next_free_slot` claim cursor and its
/// lifecycle.
struct JobCore {
    shared: Arc<JobShared>,
    name: String,
    seq: u64,
    /// When a worker received the job: the executor's receive order
    /// (`seq` for a stand-alone handle). A yielding step only lends its
    /// worker to jobs with a higher stamp; see [`StepContext::yield_now`].
    stamp: u64,
    cost: u64,
    /// Slot `i` is taken (and its step dropped) only by the unique claimer
    /// of index `i`.
    slots: Box<[StepSlot]>,
    next_free_slot: AtomicUsize,
    /// Slots retired (run or discarded); the one retiring the last slot
    /// completes the job.
    finished: AtomicUsize,
}

// SAFETY: the only non-`Sync` field is `slots`. Slot `i` is accessed through
// `&self` only by the single worker whose claim of index `i` succeeded
// (`claim_slot` hands out every index at most once), and otherwise only
// through `&mut self` when the core is dropped. `Box<dyn Step>` is `Send`.
unsafe impl Sync for JobCore {}

impl JobCore {
    /// Claims the next unclaimed step index; `None` once all are claimed.
    fn claim_slot(&self) -> Option<usize> {
        let total = self.slots.len();
        #[cfg(not(weir_loom_bug = "claim"))]
        {
            let mut slot = self.next_free_slot.load(Ordering::Relaxed);
            loop {
                if slot >= total {
                    return None;
                }
                match self.next_free_slot.compare_exchange_weak(
                    slot,
                    slot + 1,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => return Some(slot),
                    Err(current) => slot = current,
                }
            }
        }
        #[cfg(weir_loom_bug = "claim")]
        {
            // Planted bug: load then store, so two workers can claim a slot.
            let slot = self.next_free_slot.load(Ordering::Acquire);
            if slot >= total {
                return None;
            }
            self.next_free_slot.store(slot + 1, Ordering::Release);
            Some(slot)
        }
    }

    fn run_next_step(
        &self,
        worker: WorkerKind,
        lender: Option<&dyn Lender>,
        before_last_retire: impl FnOnce(),
    ) -> StepClaim {
        let Some(index) = self.claim_slot() else {
            return StepClaim::Exhausted;
        };
        // SAFETY: `claim_slot` returned `index` to this caller only, so no
        // other access to slot `index` can overlap this one.
        let step = self.slots[index]
            .with_mut(|slot| unsafe { (*slot).take() })
            .expect("a step slot is claimed exactly once (likely caused by a bug)");
        // From here on the guard owns the step: however the step's code
        // panics (run, name or drop), the guard fails the job, drops the
        // step and retires the slot exactly once.
        let mut claimed = Claimed {
            core: self,
            index,
            step: Some(step),
            before_last_retire: Some(before_last_retire),
        };
        if self.shared.is_stopped() {
            drop(claimed);
            StepClaim::Discarded(index)
        } else {
            claimed.run(worker, lender);
            drop(claimed);
            StepClaim::Ran(index)
        }
    }

    /// Fails the job because step `index` panicked or returned an error.
    fn fail_step(&self, index: usize, step_name: String, message: String) {
        self.shared.fail(JobFailure {
            step: index,
            step_name,
            message,
        });
    }
}

impl Drop for JobCore {
    /// Drops the steps nobody claimed (a job cancelled while queued, or a
    /// stand-alone handle dropped early). A panic in a step's `Drop` is
    /// counted in `step_panics` and goes no further.
    fn drop(&mut self) {
        for slot in self.slots.iter() {
            // SAFETY: `&mut self`: no other access to any slot exists.
            let step = slot.with_mut(|slot| unsafe { (*slot).take() });
            if let Some(step) = step
                && catch_unwind(AssertUnwindSafe(move || drop(step))).is_err()
            {
                Counters::bump(&self.shared.counters.step_panics);
            }
        }
    }
}

/// A claimed step and the duty to retire its slot.
///
/// Whoever claims an index builds one; its `Drop` drops the step (catching
/// a panic there, which fails the job), then bumps `finished` (exactly once
/// per index, since each index is claimed once) and, for the job's last
/// slot, calls `before_last_retire` and completes the job. Nothing a step
/// does can unwind past it, so the worker loop always lives on.
struct Claimed<'a, F: FnOnce()> {
    core: &'a JobCore,
    index: usize,
    /// `None` once dropped.
    step: Option<Box<dyn Step>>,
    /// `None` once called.
    before_last_retire: Option<F>,
}

impl<F: FnOnce()> Claimed<'_, F> {
    /// Runs the step, catching a panic; an error or panic fails the job.
    fn run(&mut self, worker: WorkerKind, lender: Option<&dyn Lender>) {
        let core = self.core;
        let index = self.index;
        let step = self.step.as_deref().expect("a claimed step runs once");
        let counters = &core.shared.counters;
        Counters::bump(match worker {
            WorkerKind::Main => &counters.steps_run_main,
            WorkerKind::Reserve => &counters.steps_run_reserve,
            WorkerKind::Waiter => &counters.steps_run_waiting,
        });
        let ctx = StepContext {
            job: &core.shared,
            worker,
            step_index: index,
            stamp: core.stamp,
            lender,
        };
        let message = match catch_unwind(AssertUnwindSafe(|| step.run(&ctx))) {
            Ok(Ok(())) => {
                core.shared.steps_ok.fetch_add(1, Ordering::Release);
                return;
            }
            Ok(Err(error)) => error.to_string(),
            Err(payload) => {
                Counters::bump(&counters.step_panics);
                panic_message(payload)
            }
        };
        match catch_unwind(AssertUnwindSafe(|| step.name().to_owned())) {
            Ok(name) => core.fail_step(index, name, message),
            Err(payload) => {
                Counters::bump(&counters.step_panics);
                let name_panic = panic_message(payload);
                core.fail_step(
                    index,
                    format!("step {index}"),
                    format!("{message} (and its name() panicked: {name_panic})"),
                );
            }
        }
    }
}

impl<F: FnOnce()> Drop for Claimed<'_, F> {
    fn drop(&mut self) {
        let core = self.core;
        if let Some(step) = self.step.take()
            && let Err(payload) = catch_unwind(AssertUnwindSafe(move || drop(step)))
        {
            Counters::bump(&core.shared.counters.step_panics);
            // The step is gone, so its name is too.
            core.fail_step(
                self.index,
                format!("step {}", self.index),
                panic_message(payload),
            );
        }
        #[cfg(not(weir_loom_bug = "finished"))]
        let finished = core.finished.fetch_add(1, Ordering::AcqRel);
        // Planted bug: a relaxed count does not carry the other workers'
        // step effects to the one completing the job.
        #[cfg(weir_loom_bug = "finished")]
        let finished = core.finished.fetch_add(1, Ordering::Relaxed);
        if finished + 1 == core.slots.len() {
            if let Some(before_last_retire) = self.before_last_retire.take() {
                before_last_retire();
            }
            core.shared.complete();
            core.shared.arrive_quiet();
        }
    }
}

pub(crate) fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "step panicked".to_owned()
    }
}

/// A job as it sits on the [`JobBoard`](crate::JobBoard): shared, with the
/// step-claim protocol. Cloning is cheap (an `Arc`).
///
/// Handles order so that the highest priority comes first: higher cost
/// first, and for equal cost the lower `seq` (the older job) first. Two
/// handles are equal iff cost and `seq` are, so `seq` must be unique among
/// handles on one board (the executor uses the submission number).
///
/// The executor makes handles itself; [`JobHandle::new`] exists so the
/// protocols can be exercised (for example by loom models) without one.
#[derive(Clone)]
pub struct JobHandle {
    core: Arc<JobCore>,
}

impl JobHandle {
    /// A stand-alone handle for `job` with sequence number (and id) `seq`,
    /// in state `Queued`. Call [`JobHandle::start`] before running steps.
    pub fn new(mut job: Job, seq: u64) -> Self {
        let on_done = job.take_on_done();
        let shared = JobShared::new(JobId(seq), job.len(), Arc::new(Counters::new()), 0, on_done);
        JobHandle::from_parts(job, seq, seq, Arc::new(shared))
    }

    pub(crate) fn from_parts(job: Job, seq: u64, stamp: u64, shared: Arc<JobShared>) -> Self {
        let cost = job.cost();
        let slots = job
            .steps
            .into_iter()
            .map(|step| UnsafeCell::new(Some(step)))
            .collect();
        JobHandle {
            core: Arc::new(JobCore {
                shared,
                name: job.name,
                seq,
                stamp,
                cost,
                slots,
                next_free_slot: AtomicUsize::new(0),
                finished: AtomicUsize::new(0),
            }),
        }
    }

    /// A ticket for this job.
    pub fn ticket(&self) -> JobTicket {
        JobTicket {
            shared: Arc::clone(&self.core.shared),
        }
    }

    /// `Queued -> Running`: the job has been received. False if it was
    /// cancelled first (its steps must then not run). A job without steps
    /// completes here.
    pub fn start(&self) -> bool {
        if !self.core.shared.start() {
            return false;
        }
        if self.core.slots.is_empty() {
            self.core.shared.complete();
            self.core.shared.arrive_quiet();
        }
        true
    }

    /// Claims the next unclaimed step by compare-and-swap on
    /// `next_free_slot` and runs it on this thread (or drops it unrun if the
    /// job is cancelled or failed). Every index is claimed exactly once
    /// across all callers; the caller that retires the last step completes
    /// the job. A step's panic is caught and fails the job.
    pub fn run_next_step(&self, worker: WorkerKind) -> StepClaim {
        self.core.run_next_step(worker, None, || {})
    }

    /// [`JobHandle::run_next_step`], calling `before_last_retire` when this
    /// call retires the job's last step, before the job completes.
    pub(crate) fn run_next_step_with(
        &self,
        worker: WorkerKind,
        lender: Option<&dyn Lender>,
        before_last_retire: impl FnOnce(),
    ) -> StepClaim {
        self.core.run_next_step(worker, lender, before_last_retire)
    }

    /// Steps not yet claimed.
    pub fn steps_unclaimed(&self) -> usize {
        let claimed = self.core.next_free_slot.load(Ordering::Relaxed);
        self.core.slots.len().saturating_sub(claimed)
    }

    /// True once every step has been claimed (some may still be running).
    pub fn is_exhausted(&self) -> bool {
        self.core.next_free_slot.load(Ordering::Acquire) >= self.core.slots.len()
    }

    /// The job's id.
    pub fn id(&self) -> JobId {
        self.core.shared.id
    }

    /// The job's name.
    pub fn name(&self) -> &str {
        &self.core.name
    }

    /// The submission sequence number.
    pub fn seq(&self) -> u64 {
        self.core.seq
    }

    /// The receive order stamp (see [`StepContext::yield_now`]).
    pub(crate) fn stamp(&self) -> u64 {
        self.core.stamp
    }

    /// The job's cost (its priority on the board).
    pub fn cost(&self) -> u64 {
        self.core.cost
    }

    /// Number of steps.
    pub fn steps_total(&self) -> usize {
        self.core.slots.len()
    }
}

impl PartialEq for JobHandle {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == CmpOrdering::Equal
    }
}

impl Eq for JobHandle {}

impl PartialOrd for JobHandle {
    fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(other))
    }
}

impl Ord for JobHandle {
    /// Highest priority first: higher cost, then lower `seq`.
    fn cmp(&self, other: &Self) -> CmpOrdering {
        other
            .cost()
            .cmp(&self.cost())
            .then_with(|| self.seq().cmp(&other.seq()))
    }
}

impl fmt::Debug for JobHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JobHandle")
            .field("id", &self.id())
            .field("name", &self.name())
            .field("cost", &self.cost())
            .field("seq", &self.seq())
            .finish()
    }
}
