//! A generic DAG scheduler: nodes with dependencies, each run as a [`Job`]
//! on an executor, started greedily as soon as their dependencies allow.
//!
//! The protocol is documented on [`Dag`].

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::executor::{PipelineExecutor, Submitter};
use crate::job::{Job, JobFailure, JobHandle, JobOutcome, JobTicket, StepClaim};
use crate::step::{Lender, StepError};
use crate::sync::{Arc, AtomicBool, AtomicU8, AtomicUsize, Condvar, Mutex, Ordering};

/// Runs the jobs of a DAG's nodes. [`Submitter`] (an executor's) is the
/// usual one; a test or loom model may run jobs elsewhere.
pub trait Launcher: Send + Sync {
    /// Starts `job` and returns its ticket, or fails (the node then fails).
    fn launch(&self, job: Job) -> Result<JobTicket>;

    /// Whether the jobs run on fewer threads than the machine has cores,
    /// so that a thread waiting for the DAG may look for its end on a
    /// core none of them needs ([`DagHandle::wait`]). False by default.
    fn has_spare_core(&self) -> bool {
        false
    }
}

impl Launcher for Submitter {
    fn launch(&self, job: Job) -> Result<JobTicket> {
        self.submit(job)
    }

    fn has_spare_core(&self) -> bool {
        Submitter::has_spare_core(self)
    }
}

/// What to do when a node fails (its job fails, it times out, or its job
/// cannot be made).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ErrorMode {
    /// Stop everything: running nodes are cancelled, nodes not yet started
    /// are skipped. The default.
    #[default]
    Fail,
    /// Skip the failed node's dependants (transitively); run everything
    /// that does not depend on it.
    KeepGoing,
    /// Treat the failure as success: dependants run. The node still reads
    /// [`NodeState::Failed`] (or `TimedOut`), but the DAG completes.
    Ignore,
}

/// Where a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NodeState {
    /// Some dependency has not finished.
    Waiting,
    /// Every dependency finished; waiting for its mutex groups.
    Ready,
    /// Its job was submitted and has not ended.
    Running,
    /// Its job completed.
    Succeeded,
    /// Its job failed, or could not be made or submitted.
    Failed,
    /// It ran past its timeout and was cancelled.
    TimedOut,
    /// It was running when the DAG stopped (cancelled, or a failure in
    /// [`ErrorMode::Fail`]).
    Cancelled,
    /// It never started: a dependency failed, or the DAG stopped first.
    Skipped,
}

impl NodeState {
    /// True once the node will not change any more.
    pub fn is_terminal(self) -> bool {
        !matches!(
            self,
            NodeState::Waiting | NodeState::Ready | NodeState::Running
        )
    }
}

const WAITING: u8 = 0;
const READY: u8 = 1;
const RUNNING: u8 = 2;
const SUCCEEDED: u8 = 3;
const FAILED: u8 = 4;
const TIMED_OUT: u8 = 5;
const CANCELLED: u8 = 6;
const SKIPPED: u8 = 7;

fn decode(state: u8) -> NodeState {
    match state {
        WAITING => NodeState::Waiting,
        READY => NodeState::Ready,
        RUNNING => NodeState::Running,
        SUCCEEDED => NodeState::Succeeded,
        FAILED => NodeState::Failed,
        TIMED_OUT => NodeState::TimedOut,
        CANCELLED => NodeState::Cancelled,
        SKIPPED => NodeState::Skipped,
        other => unreachable!("invalid node state {other}"),
    }
}

/// Why a node failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeError {
    /// A step of its job failed.
    Job(JobFailure),
    /// It ran longer than its timeout.
    TimedOut(Duration),
    /// Its job could not be made (the closure failed or panicked) or
    /// submitted.
    Start(String),
}

impl fmt::Display for NodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NodeError::Job(failure) => write!(f, "{failure}"),
            NodeError::TimedOut(limit) => write!(f, "timed out after {limit:?}"),
            NodeError::Start(message) => write!(f, "could not start: {message}"),
        }
    }
}

/// A failed node and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeFailure {
    /// The node's name.
    pub node: String,
    /// Why it failed.
    pub error: NodeError,
}

impl fmt::Display for NodeFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "node {} failed: {}", self.node, self.error)
    }
}

/// How a DAG run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DagOutcome {
    /// Every node succeeded (or, under [`ErrorMode::Ignore`], ended).
    Completed,
    /// These nodes failed (in node order; each once). Under
    /// [`ErrorMode::Fail`] the rest was stopped; under
    /// [`ErrorMode::KeepGoing`] everything independent of them ran.
    Failed(Vec<NodeFailure>),
    /// [`DagHandle::cancel`] stopped the run.
    Cancelled,
}

type MakeJob = Box<dyn FnOnce() -> Result<Option<Job>, StepError> + Send>;

enum Work {
    Job(Job),
    Make(MakeJob),
}

/// A node of a [`DagBuilder`]: a name, a job (or a closure making one when
/// the node starts), the names of the nodes it depends on, and options.
pub struct Node {
    name: String,
    work: Work,
    after: Vec<String>,
    timeout: Option<Duration>,
    groups: Vec<String>,
}

impl Node {
    /// A node that runs `job`.
    pub fn job(name: impl Into<String>, job: Job) -> Self {
        Node::with_work(name.into(), Work::Job(job))
    }

    /// A node whose job `make` builds when the node starts (on the thread
    /// that finished its last dependency: keep it quick). An error or a
    /// panic fails the node with [`NodeError::Start`].
    pub fn lazy(
        name: impl Into<String>,
        make: impl FnOnce() -> Result<Job, StepError> + Send + 'static,
    ) -> Self {
        Node::with_work(name.into(), Work::Make(Box::new(move || make().map(Some))))
    }

    /// A node like [`Node::lazy`] whose `make` may do the node's work
    /// itself, there and then, and return `None`: the node then succeeds
    /// without a job (no submission, no worker hand-off), so keep that
    /// work short. Its timeout does not apply to work done in `make`.
    pub fn lazy_or_done(
        name: impl Into<String>,
        make: impl FnOnce() -> Result<Option<Job>, StepError> + Send + 'static,
    ) -> Self {
        Node::with_work(name.into(), Work::Make(Box::new(make)))
    }

    fn with_work(name: String, work: Work) -> Self {
        Node {
            name,
            work,
            after: Vec::new(),
            timeout: None,
            groups: Vec::new(),
        }
    }

    /// Runs only after the node named `dependency` succeeded.
    pub fn after(mut self, dependency: impl Into<String>) -> Self {
        self.after.push(dependency.into());
        self
    }

    /// Cancels the node's job (failing the node with
    /// [`NodeError::TimedOut`]) if it runs longer than `limit`, counted from
    /// its submission.
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = Some(limit);
        self
    }

    /// Puts the node in mutex group `group`: two nodes of one group never
    /// run at once (from submission until every step of the job stopped).
    pub fn mutex(mut self, group: impl Into<String>) -> Self {
        self.groups.push(group.into());
        self
    }
}

impl fmt::Debug for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Node")
            .field("name", &self.name)
            .field("after", &self.after)
            .field("timeout", &self.timeout)
            .field("groups", &self.groups)
            .finish_non_exhaustive()
    }
}

/// Collects nodes; [`DagBuilder::build`] checks names and cycles.
///
/// ```
/// use weir_executor::{DagBuilder, DagOutcome, ExecutorConfig, Job, Node, PipelineExecutor, step_fn};
/// # fn main() -> weir_executor::Result<()> {
/// let executor = PipelineExecutor::new(ExecutorConfig::with_threads(2))?;
/// let job = |name: &str| Job::new(name).with_step(step_fn("work", |_ctx| Ok(())));
/// let dag = DagBuilder::new()
///     .node(Node::job("scan", job("scan")))
///     .node(Node::job("left", job("left")).after("scan"))
///     .node(Node::job("right", job("right")).after("scan"))
///     .node(Node::job("join", job("join")).after("left").after("right"))
///     .build()?;
/// assert_eq!(dag.run(&executor).wait(), DagOutcome::Completed);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Default)]
pub struct DagBuilder {
    nodes: Vec<Node>,
    mode: ErrorMode,
}

impl DagBuilder {
    /// An empty DAG in [`ErrorMode::Fail`].
    pub fn new() -> Self {
        DagBuilder::default()
    }

    /// Sets what a node failure does.
    pub fn error_mode(mut self, mode: ErrorMode) -> Self {
        self.mode = mode;
        self
    }

    /// Adds a node.
    pub fn node(mut self, node: Node) -> Self {
        self.nodes.push(node);
        self
    }

    /// Adds a node (for loops).
    pub fn push(&mut self, node: Node) {
        self.nodes.push(node);
    }

    /// Resolves the names and checks the graph: fails with
    /// [`Error::InvalidDag`] for a duplicate name, a dependency on a node
    /// that does not exist, or a cycle (naming its nodes in order).
    pub fn build(self) -> Result<Dag> {
        let mut index = HashMap::new();
        for (i, node) in self.nodes.iter().enumerate() {
            if index.insert(node.name.clone(), i).is_some() {
                return Err(Error::InvalidDag(format!(
                    "two nodes are named {}",
                    node.name
                )));
            }
        }
        let mut deps: Vec<Vec<usize>> = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            let mut list = Vec::with_capacity(node.after.len());
            for dep in &node.after {
                let Some(&d) = index.get(dep) else {
                    return Err(Error::InvalidDag(format!(
                        "node {} depends on {dep}, which is not a node",
                        node.name
                    )));
                };
                if !list.contains(&d) {
                    list.push(d);
                }
            }
            deps.push(list);
        }
        if let Some(cycle) = find_cycle(&deps) {
            let names: Vec<&str> = cycle.iter().map(|&i| self.nodes[i].name.as_str()).collect();
            return Err(Error::InvalidDag(format!(
                "the dependencies form a cycle: {}",
                names.join(" -> ")
            )));
        }
        let mut group_ids: HashMap<String, usize> = HashMap::new();
        let mut dependants = vec![Vec::new(); self.nodes.len()];
        for (i, list) in deps.iter().enumerate() {
            for &d in list {
                dependants[d].push(i);
            }
        }
        let mut nodes = Vec::with_capacity(self.nodes.len());
        for ((node, deps), dependants) in self.nodes.into_iter().zip(deps).zip(dependants) {
            let mut groups = Vec::with_capacity(node.groups.len());
            for group in node.groups {
                let next = group_ids.len();
                let id = *group_ids.entry(group).or_insert(next);
                if !groups.contains(&id) {
                    groups.push(id);
                }
            }
            nodes.push(NodeRun {
                name: node.name,
                state: AtomicU8::new(WAITING),
                deps_left: AtomicUsize::new(deps.len()),
                dependants,
                groups,
                timeout: node.timeout,
                work: Mutex::new(Some(node.work)),
                ticket: Mutex::new(None),
                deadline: Mutex::new(None),
                timed_out: AtomicBool::new(false),
                error: Mutex::new(None),
            });
        }
        Ok(Dag {
            nodes,
            groups: group_ids.len(),
            mode: self.mode,
        })
    }
}

/// A node whose dependencies reach back to it, as the path of the cycle
/// closed by its first node repeated; `None` if the graph is acyclic.
fn find_cycle(deps: &[Vec<usize>]) -> Option<Vec<usize>> {
    // 0 unvisited, 1 on the current path, 2 done.
    let mut mark = vec![0u8; deps.len()];
    for root in 0..deps.len() {
        if mark[root] != 0 {
            continue;
        }
        // Iterative depth-first search over `deps`, keeping the path.
        let mut path: Vec<(usize, usize)> = vec![(root, 0)];
        mark[root] = 1;
        while let Some(&mut (node, ref mut next)) = path.last_mut() {
            if let Some(&dep) = deps[node].get(*next) {
                *next += 1;
                match mark[dep] {
                    0 => {
                        mark[dep] = 1;
                        path.push((dep, 0));
                    }
                    1 => {
                        // `dep` is on the path: the cycle runs from there.
                        // The path follows "depends on" edges; report it in
                        // execution order (dependency first).
                        let start = path.iter().position(|&(n, _)| n == dep).unwrap();
                        let mut cycle: Vec<usize> = path[start..].iter().map(|&(n, _)| n).collect();
                        cycle.reverse();
                        // Start at the node added first, for a stable
                        // message.
                        let first = (0..cycle.len()).min_by_key(|&k| cycle[k]).unwrap_or(0);
                        cycle.rotate_left(first);
                        cycle.push(cycle[0]);
                        return Some(cycle);
                    }
                    _ => {}
                }
            } else {
                mark[node] = 2;
                path.pop();
            }
        }
    }
    None
}

/// A checked DAG, ready to run once.
///
/// It knows nothing of what the nodes do (a query's pipelines, `weir run`'s
/// SQL stages). The protocol follows one rule: **derive every action from
/// state, and gate every side effect on winning a compare-and-swap.**
///
/// - Each node has a state (`Waiting -> Ready -> Running -> terminal`, or
///   `Waiting | Ready -> Skipped`) that changes only by compare-and-swap
///   from the expected state. Only the winner acts (starts the node, skips
///   it, counts it finished), so however many threads race, each node
///   starts at most once and ends exactly once.
/// - Each node counts its unfinished dependencies. A dependency that ends
///   well decrements the count of each dependant with `fetch_sub`; the one
///   decrement that takes it to zero (exactly one, by the read-modify-write)
///   moves the dependant `Waiting -> Ready`. So any number of finishing
///   workers may advance the graph at once.
/// - A node's job reports its end through its [`Job::on_done`] hook, which
///   runs once, after every step of the job has stopped; the hook finishes
///   the node on whatever worker ended the job, and that worker submits the
///   newly ready dependants (never waiting for anything).
/// - The DAG counts its unfinished nodes; the node end that takes it to
///   zero publishes the outcome, once.
/// - Where the executor lets waiters work
///   ([`ExecutorConfig::waiters_work`](crate::ExecutorConfig::waiters_work)),
///   each node's job carries an announce hook: once a worker has put the
///   job on the board, the hook offers its handle to the run (under the
///   lock that guards the outcome), and a thread in [`DagHandle::wait`]
///   claims its steps by the same compare-and-swap as every helper. A
///   waiter sleeps only after finding no offered job and no outcome under
///   that lock, counted as a sleeper there, and an offer or the outcome
///   wakes the sleepers it finds: no offer is slept through.
pub struct Dag {
    nodes: Vec<NodeRun>,
    groups: usize,
    mode: ErrorMode,
}

impl fmt::Debug for Dag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dag")
            .field(
                "nodes",
                &self.nodes.iter().map(|n| &n.name).collect::<Vec<_>>(),
            )
            .field("mode", &self.mode)
            .finish()
    }
}

impl Dag {
    /// Runs the DAG on `executor` (through its [`Submitter`], so the run
    /// never keeps the executor alive) and returns at once. A thread
    /// waiting for it works on it where the executor lets waiters work.
    pub fn run(self, executor: &PipelineExecutor) -> DagHandle {
        let submitter = executor.submitter();
        let worker = submitter.waiters_work().then(|| submitter.clone());
        self.start(Box::new(submitter), worker)
    }

    /// Runs the DAG, starting each node's job with `launcher`, and returns
    /// at once: the nodes without dependencies are started here, the rest
    /// by whichever thread finishes their last dependency.
    pub fn run_with(self, launcher: impl Launcher + 'static) -> DagHandle {
        self.start(Box::new(launcher), None)
    }

    /// [`Dag::run_with`]; `worker` is the executor the waiters work on.
    fn start(self, launcher: Box<dyn Launcher>, worker: Option<Submitter>) -> DagHandle {
        let unfinished = self.nodes.len();
        let has_timeouts = self.nodes.iter().any(|n| n.timeout.is_some());
        #[cfg(not(weir_loom))]
        let look = launcher.has_spare_core();
        let run = Arc::new(DagRun {
            groups: Mutex::new(Groups {
                held: vec![false; self.groups],
                waiting: VecDeque::new(),
            }),
            nodes: self.nodes,
            mode: self.mode,
            launcher,
            worker,
            unfinished: AtomicUsize::new(unfinished),
            stopped: AtomicBool::new(false),
            cancelled: AtomicBool::new(false),
            waiting: Mutex::new(Waiting::default()),
            published: AtomicBool::new(false),
            #[cfg(not(weir_loom))]
            offers: AtomicUsize::new(0),
            #[cfg(not(weir_loom))]
            started: Instant::now(),
            #[cfg(not(weir_loom))]
            look,
            done: Condvar::new(),
            watched: has_timeouts,
            watch: Mutex::new(()),
            watch_changed: Condvar::new(),
        });
        if unfinished == 0 {
            run.publish();
        }
        if has_timeouts {
            spawn_watchdog(&run);
        }
        for i in 0..run.nodes.len() {
            if run.nodes[i].deps_left.load(Ordering::Acquire) == 0 {
                DagRun::ready(&run, i);
            }
        }
        DagHandle { run }
    }
}

/// A running node.
struct NodeRun {
    name: String,
    state: AtomicU8,
    /// Dependencies not yet ended well.
    deps_left: AtomicUsize,
    dependants: Vec<usize>,
    groups: Vec<usize>,
    timeout: Option<Duration>,
    /// Taken once, by the thread that starts the node.
    work: Mutex<Option<Work>>,
    /// The job's ticket once submitted (to cancel it).
    ticket: Mutex<Option<JobTicket>>,
    /// When the watchdog cancels it.
    deadline: Mutex<Option<Instant>>,
    /// Set by the watchdog before it cancels the job.
    timed_out: AtomicBool,
    /// Why it failed, once it has.
    error: Mutex<Option<NodeError>>,
}

impl NodeRun {
    fn state(&self) -> u8 {
        self.state.load(Ordering::Acquire)
    }

    fn transition(&self, from: u8, to: u8) -> bool {
        self.state
            .compare_exchange(from, to, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// One dependency ended well; true for the one caller that took the
    /// count to zero (the read-modify-write picks it).
    fn dependency_done(&self) -> bool {
        #[cfg(not(weir_loom_bug = "dag"))]
        return self.deps_left.fetch_sub(1, Ordering::AcqRel) == 1;
        // Planted bug: read, then write; two racing finishers can both
        // read 2 and write 1, and the node never starts.
        #[cfg(weir_loom_bug = "dag")]
        {
            let left = self.deps_left.load(Ordering::Acquire);
            self.deps_left.store(left - 1, Ordering::Release);
            left == 1
        }
    }
}

/// Mutex groups: which are held, and ready nodes waiting for theirs.
struct Groups {
    held: Vec<bool>,
    waiting: VecDeque<usize>,
}

/// What the waiters of a run wait for, under one lock.
#[derive(Default)]
struct Waiting {
    outcome: Option<DagOutcome>,
    /// Jobs offered to the waiters (announced with steps to spare), until
    /// a waiter finds them exhausted or the outcome is published.
    offered: Vec<JobHandle>,
    /// Waiters blocked on `DagRun::done`: only these need a notify (a
    /// notify is a system call even when nobody waits).
    sleepers: usize,
}

/// The shared state of one DAG run.
struct DagRun {
    nodes: Vec<NodeRun>,
    mode: ErrorMode,
    launcher: Box<dyn Launcher>,
    /// The executor waiters run steps on, where they work.
    worker: Option<Submitter>,
    groups: Mutex<Groups>,
    /// Nodes not yet terminal; the node end that takes it to zero
    /// publishes the outcome.
    unfinished: AtomicUsize,
    /// No node may start any more.
    stopped: AtomicBool,
    /// The stop came from [`DagHandle::cancel`].
    cancelled: AtomicBool,
    waiting: Mutex<Waiting>,
    /// Set once the outcome is: waiters look at it without the lock.
    published: AtomicBool,
    /// Jobs offered so far: a looking waiter watches it without the lock.
    #[cfg(not(weir_loom))]
    offers: AtomicUsize,
    /// When the run started: waiters look for the outcome, rather than
    /// block, while the run is young, if `look`.
    #[cfg(not(weir_loom))]
    started: Instant,
    /// The launcher leaves a core spare for a waiter to look on.
    #[cfg(not(weir_loom))]
    look: bool,
    done: Condvar,
    /// A watchdog runs (some node has a timeout).
    watched: bool,
    /// The watchdog sleeps on this until the next deadline or a change.
    watch: Mutex<()>,
    watch_changed: Condvar,
}

impl DagRun {
    /// Every dependency of node `i` ended well: `Waiting -> Ready`, then
    /// start it if its groups are free.
    fn ready(this: &Arc<Self>, i: usize) {
        if !this.nodes[i].transition(WAITING, READY) {
            return; // skipped by a failure or a stop
        }
        if this.stopped.load(Ordering::SeqCst) {
            this.skip(i, READY);
            return;
        }
        if this.nodes[i].groups.is_empty() {
            Self::start(this, i);
            return;
        }
        let mut groups = this.groups.lock().unwrap();
        if this.nodes[i].groups.iter().all(|&g| !groups.held[g]) {
            for &g in &this.nodes[i].groups {
                groups.held[g] = true;
            }
            drop(groups);
            Self::start(this, i);
        } else {
            groups.waiting.push_back(i);
        }
    }

    /// `Ready -> Running` for a node holding its groups: make and submit its
    /// job.
    fn start(this: &Arc<Self>, i: usize) {
        let node = &this.nodes[i];
        if !node.transition(READY, RUNNING) {
            Self::release_groups(this, i); // skipped meanwhile
            return;
        }
        let work = node
            .work
            .lock()
            .unwrap()
            .take()
            .expect("a node starts once (likely caused by a bug)");
        let job = match work {
            Work::Job(job) => Ok(job),
            Work::Make(make) => match catch_unwind(AssertUnwindSafe(make)) {
                Ok(Ok(Some(job))) => Ok(job),
                Ok(Ok(None)) => {
                    // the work is done: the node ended well
                    Self::finish(this, i, SUCCEEDED, None);
                    return;
                }
                Ok(Err(error)) => Err(error.to_string()),
                Err(payload) => Err(format!(
                    "making its job panicked: {}",
                    crate::job::panic_message(payload)
                )),
            },
        };
        let job = match job {
            Ok(job) => job,
            Err(message) => {
                Self::finish(this, i, FAILED, Some(NodeError::Start(message)));
                return;
            }
        };
        if let Some(limit) = node.timeout {
            *node.deadline.lock().unwrap() = Instant::now().checked_add(limit);
        }
        let run = Arc::clone(this);
        let mut job = job.on_done(move |outcome| DagRun::job_done(&run, i, outcome));
        if this.worker.is_some() {
            let run = Arc::clone(this);
            job = job.on_announce(move |handle| run.offer(handle));
        }
        match this.launcher.launch(job) {
            Ok(ticket) => {
                *node.ticket.lock().unwrap() = Some(ticket.clone());
                // A stop or a timeout that came before the ticket was
                // stored could not cancel it; do it now.
                if this.stopped.load(Ordering::SeqCst) || node.timed_out.load(Ordering::SeqCst) {
                    ticket.cancel();
                }
                if node.timeout.is_some() {
                    drop(this.watch.lock().unwrap());
                    this.watch_changed.notify_all();
                }
            }
            // The job (and its hook) was dropped unsubmitted.
            Err(error) => Self::finish(this, i, FAILED, Some(NodeError::Start(error.to_string()))),
        }
    }

    /// The done hook of node `i`'s job: every step has stopped.
    fn job_done(this: &Arc<Self>, i: usize, outcome: &JobOutcome) {
        let node = &this.nodes[i];
        match outcome {
            JobOutcome::Completed => Self::finish(this, i, SUCCEEDED, None),
            JobOutcome::Failed(failure) => {
                Self::finish(this, i, FAILED, Some(NodeError::Job(failure.clone())));
            }
            JobOutcome::Cancelled if node.timed_out.load(Ordering::SeqCst) => {
                let limit = node.timeout.unwrap_or_default();
                Self::finish(this, i, TIMED_OUT, Some(NodeError::TimedOut(limit)));
            }
            JobOutcome::Cancelled => Self::finish(this, i, CANCELLED, None),
        }
    }

    /// `Running -> end` for node `i`: record, release its groups, advance or
    /// stop the graph, count it.
    fn finish(this: &Arc<Self>, i: usize, end: u8, error: Option<NodeError>) {
        let node = &this.nodes[i];
        if !node.transition(RUNNING, end) {
            return; // cannot happen: the job's hook runs once
        }
        let failed = error.is_some();
        if let Some(error) = error {
            *node.error.lock().unwrap() = Some(error);
        }
        Self::release_groups(this, i);
        match (end, this.mode) {
            (SUCCEEDED, _) | (FAILED | TIMED_OUT, ErrorMode::Ignore) => {
                for &d in &node.dependants {
                    if this.nodes[d].dependency_done() {
                        Self::ready(this, d);
                    }
                }
            }
            _ if failed && this.mode == ErrorMode::Fail => this.stop(),
            _ => this.skip_dependants(i),
        }
        this.node_ended();
    }

    /// Skips every node depending on node `i`, transitively.
    fn skip_dependants(&self, i: usize) {
        let mut stack: Vec<usize> = self.nodes[i].dependants.clone();
        while let Some(d) = stack.pop() {
            if self.skip(d, WAITING) {
                stack.extend(self.nodes[d].dependants.iter().copied());
            }
        }
    }

    /// `from -> Skipped` for node `i`; true if this call did it.
    fn skip(&self, i: usize, from: u8) -> bool {
        if !self.nodes[i].transition(from, SKIPPED) {
            return false;
        }
        self.node_ended();
        true
    }

    /// Stops the run: no node starts any more, running jobs are cancelled.
    fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        for i in 0..self.nodes.len() {
            if !self.skip(i, WAITING) {
                self.skip(i, READY);
            }
        }
        // Cancel outside every lock: a cancelled job's hook comes back here.
        let tickets: Vec<JobTicket> = self
            .nodes
            .iter()
            .filter_map(|n| n.ticket.lock().unwrap().clone())
            .collect();
        for ticket in tickets {
            ticket.cancel();
        }
    }

    /// Frees node `i`'s groups and starts the waiting nodes they unblock.
    fn release_groups(this: &Arc<Self>, i: usize) {
        if this.nodes[i].groups.is_empty() {
            return;
        }
        let mut start = Vec::new();
        let mut groups = this.groups.lock().unwrap();
        for &g in &this.nodes[i].groups {
            groups.held[g] = false;
        }
        let mut k = 0;
        while k < groups.waiting.len() {
            let w = groups.waiting[k];
            if this.nodes[w].state() != READY {
                groups.waiting.remove(k); // skipped while waiting
                continue;
            }
            if this.nodes[w].groups.iter().all(|&g| !groups.held[g]) {
                for &g in &this.nodes[w].groups {
                    groups.held[g] = true;
                }
                groups.waiting.remove(k);
                start.push(w);
                continue;
            }
            k += 1;
        }
        drop(groups);
        for w in start {
            Self::start(this, w);
        }
    }

    /// A node reached its end; the last one publishes the outcome.
    fn node_ended(&self) {
        if self.unfinished.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.publish();
        }
    }

    /// Computes and signals the outcome; called once.
    fn publish(&self) {
        let outcome = if self.cancelled.load(Ordering::SeqCst) {
            DagOutcome::Cancelled
        } else {
            let failures: Vec<NodeFailure> = if self.mode == ErrorMode::Ignore {
                Vec::new()
            } else {
                self.nodes
                    .iter()
                    .filter_map(|n| {
                        n.error.lock().unwrap().clone().map(|error| NodeFailure {
                            node: n.name.clone(),
                            error,
                        })
                    })
                    .collect()
            };
            if failures.is_empty() {
                DagOutcome::Completed
            } else {
                DagOutcome::Failed(failures)
            }
        };
        let mut waiting = self.waiting.lock().unwrap();
        assert!(
            waiting.outcome.is_none(),
            "a DAG outcome published twice (likely caused by a bug)"
        );
        waiting.outcome = Some(outcome);
        self.published.store(true, Ordering::Release);
        let offered = std::mem::take(&mut waiting.offered);
        let sleepers = waiting.sleepers > 0;
        drop(waiting);
        drop(offered);
        if sleepers {
            self.done.notify_all();
        }
        if self.watched {
            drop(self.watch.lock().unwrap());
            self.watch_changed.notify_all();
        }
    }

    /// The announce hook of a node's job: offers it to the waiters.
    fn offer(&self, job: &JobHandle) {
        let mut waiting = self.waiting.lock().unwrap();
        if waiting.outcome.is_some() {
            return;
        }
        waiting.offered.push(job.clone());
        #[cfg(not(weir_loom))]
        self.offers.fetch_add(1, Ordering::Release);
        if waiting.sleepers > 0 {
            drop(waiting);
            self.done.notify_all();
        }
    }

    fn is_done(&self) -> bool {
        self.waiting.lock().unwrap().outcome.is_some()
    }

    /// Stops the run as [`DagHandle::cancel`] does; true iff this call
    /// stopped it.
    fn cancel(&self) -> bool {
        if self.is_done() || self.cancelled.swap(true, Ordering::SeqCst) {
            return false;
        }
        self.stop();
        true
    }
}

/// Cancels nodes that run past their timeouts until the run ends. A plain
/// thread (not a worker): it only sleeps and cancels.
fn spawn_watchdog(run: &Arc<DagRun>) {
    let run = Arc::clone(run);
    let spawned = std::thread::Builder::new()
        .name("weir-dag-watchdog".to_owned())
        .spawn(move || {
            let mut guard = run.watch.lock().unwrap();
            loop {
                if run.is_done() {
                    return;
                }
                let now = Instant::now();
                let mut next: Option<Instant> = None;
                for node in &run.nodes {
                    if node.state() != RUNNING || node.timed_out.load(Ordering::SeqCst) {
                        continue;
                    }
                    let Some(deadline) = *node.deadline.lock().unwrap() else {
                        continue;
                    };
                    if deadline <= now {
                        node.timed_out.store(true, Ordering::SeqCst);
                        let ticket = node.ticket.lock().unwrap().clone();
                        if let Some(ticket) = ticket {
                            drop(guard);
                            ticket.cancel();
                            guard = run.watch.lock().unwrap();
                        }
                    } else {
                        next = Some(next.map_or(deadline, |n| n.min(deadline)));
                    }
                }
                guard = match next {
                    Some(next) => {
                        let wait = next.saturating_duration_since(Instant::now());
                        run.watch_changed.wait_timeout(guard, wait).unwrap().0
                    }
                    None => run.watch_changed.wait(guard).unwrap(),
                };
            }
        });
    // Without a watchdog the timeouts cannot fire; fail loudly instead.
    if let Err(error) = spawned {
        panic!("could not start the DAG watchdog thread: {error}");
    }
}

/// A running DAG: wait for it, cancel it, read its nodes' states. Cheap to
/// clone; dropping it does not cancel the run.
#[derive(Clone)]
pub struct DagHandle {
    run: Arc<DagRun>,
}

impl DagHandle {
    /// Blocks until every node has ended and returns the outcome. Like
    /// [`JobTicket::wait`], must not be called from a step.
    ///
    /// Where the executor lets waiters work
    /// ([`ExecutorConfig::waiters_work`](crate::ExecutorConfig::waiters_work)),
    /// the calling thread runs steps of the DAG's jobs while it waits (and
    /// of no other job), as one more worker of this run.
    pub fn wait(&self) -> DagOutcome {
        self.wait_until(None, None)
            .expect("a wait without a deadline ends with the outcome")
    }

    /// Like [`DagHandle::wait`], giving up after `timeout` with `None`. A
    /// step this thread runs meanwhile may end after `timeout`.
    pub fn wait_timeout(&self, timeout: Duration) -> Option<DagOutcome> {
        self.wait_until(Instant::now().checked_add(timeout), None)
    }

    /// Like [`DagHandle::wait`], asking `interrupted` at least every
    /// `poll` while blocked, and wherever the steps this thread runs ask
    /// [`StepContext::is_cancelled`](crate::StepContext::is_cancelled),
    /// whether to give up: once it says so, the run is cancelled and this
    /// returns at once, with [`DagOutcome::Cancelled`] unless the run had
    /// already ended (steps other threads run stop at their next check of
    /// [`StepContext::is_cancelled`](crate::StepContext::is_cancelled)).
    pub fn wait_interruptible(&self, poll: Duration, interrupted: &dyn Fn() -> bool) -> DagOutcome {
        self.wait_until(None, Some((poll, interrupted)))
            .expect("a wait without a deadline ends with the outcome")
    }

    /// The waits: until the outcome or `deadline`, running offered steps
    /// where waiters work, looking before blocking where a core is spare,
    /// asking `watch` between blocks.
    fn wait_until(
        &self,
        deadline: Option<Instant>,
        watch: Option<(Duration, &dyn Fn() -> bool)>,
    ) -> Option<DagOutcome> {
        let run = &*self.run;
        let lender = WaiterLender {
            run,
            interrupted: watch.map(|(_, interrupted)| interrupted),
        };
        let worker = run.worker.as_ref().filter(|_| stack_for_steps());
        // where the waiter looks before it blocks: from the run's start,
        // and a working waiter, like a worker, again after each step
        #[cfg(not(weir_loom))]
        let mut idle_from = run.started;
        let mut waiting = run.waiting.lock().unwrap();
        loop {
            if let Some(outcome) = &waiting.outcome {
                return Some(outcome.clone());
            }
            if let Some(worker) = worker
                && let Some(job) = waiting.offered.last().cloned()
            {
                drop(waiting);
                let claim = worker.run_waiter_step(&job, &lender);
                #[cfg(not(weir_loom))]
                {
                    idle_from = Instant::now();
                }
                waiting = run.waiting.lock().unwrap();
                if claim == StepClaim::Exhausted {
                    waiting.offered.retain(|offered| *offered != job);
                }
                continue;
            }
            if let Some((_, interrupted)) = watch
                && interrupted()
            {
                drop(waiting);
                run.cancel();
                let waiting = run.waiting.lock().unwrap();
                return Some(waiting.outcome.clone().unwrap_or(DagOutcome::Cancelled));
            }
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                return None;
            }
            #[cfg(not(weir_loom))]
            if run.look && now.duration_since(idle_from) < crate::executor::LOOK_FOR_WORK {
                drop(waiting);
                self.look(idle_from + crate::executor::LOOK_FOR_WORK, deadline);
                waiting = run.waiting.lock().unwrap();
                continue;
            }
            let block = match (deadline, watch) {
                (Some(d), Some((poll, _))) => Some(d.saturating_duration_since(now).min(poll)),
                (Some(d), None) => Some(d.saturating_duration_since(now)),
                (None, Some((poll, _))) => Some(poll),
                (None, None) => None,
            };
            #[cfg(not(weir_loom_bug = "waiter"))]
            {
                waiting.sleepers += 1;
            }
            waiting = match block {
                Some(block) => run.done.wait_timeout(waiting, block).unwrap().0,
                None => run.done.wait(waiting).unwrap(),
            };
            #[cfg(not(weir_loom_bug = "waiter"))]
            {
                waiting.sleepers -= 1;
            }
        }
    }

    /// Until `until` (the run's start, or a working waiter's last step,
    /// plus the time a worker looks for work before it blocks), looks for
    /// the outcome or an offered job, yielding the core between looks (and
    /// not past `deadline`): a short query's waiter then sees its end at
    /// once instead of taking a wake-up through the kernel, which costs
    /// tens of microseconds on an idle core, and a working waiter takes
    /// the next pipeline's job at once. Only where the launcher leaves a
    /// core spare: with a worker on every core, a looking waiter keeps a
    /// core busy that the scheduler would otherwise hand to a worker
    /// waiting behind another, and a short query's lanes ran one after the
    /// other (T10 on 2 workers and 2 cores: 0.083 -> 0.114 ms in half the
    /// runs). The lock and condition variable stay the protocol (not under
    /// loom, which checks them).
    #[cfg(not(weir_loom))]
    fn look(&self, until: Instant, deadline: Option<Instant>) {
        let run = &*self.run;
        let offers = run.offers.load(Ordering::Acquire);
        while !run.published.load(Ordering::Acquire) && run.offers.load(Ordering::Acquire) == offers
        {
            let now = Instant::now();
            if now >= until || deadline.is_some_and(|d| now >= d) {
                return;
            }
            std::thread::yield_now();
        }
    }

    /// Stops the run: nodes not started are skipped, running nodes' jobs
    /// are cancelled; the outcome is [`DagOutcome::Cancelled`] unless the
    /// run had already ended. True iff this call stopped it.
    pub fn cancel(&self) -> bool {
        self.run.cancel()
    }

    /// The state of the node named `name`, if there is one.
    pub fn state(&self, name: &str) -> Option<NodeState> {
        self.run
            .nodes
            .iter()
            .find(|n| n.name == name)
            .map(|n| decode(n.state()))
    }

    /// Every node's name and state, in the order they were added.
    pub fn states(&self) -> Vec<(String, NodeState)> {
        self.run
            .nodes
            .iter()
            .map(|n| (n.name.clone(), decode(n.state())))
            .collect()
    }

    /// Why the node named `name` failed, if it has.
    pub fn error(&self, name: &str) -> Option<NodeError> {
        let node = self.run.nodes.iter().find(|n| n.name == name)?;
        node.error.lock().unwrap().clone()
    }
}

/// The stack a waiter must have left to run steps: what a worker (a
/// thread of the platform's default 2 MiB) has left when it starts one,
/// give or take. Steps are written for workers, and a waiting thread may
/// have a small stack (a thread spawned with 512 KiB): it then only waits.
#[cfg(not(weir_loom))]
const WAITER_STACK: usize = 3 << 19;

/// Whether this thread has the stack to run steps (see [`WAITER_STACK`]);
/// not under loom, whose threads are not the platform's.
fn stack_for_steps() -> bool {
    #[cfg(weir_loom)]
    return true;
    #[cfg(not(weir_loom))]
    stacker::remaining_stack().is_some_and(|left| left >= WAITER_STACK)
}

/// What a waiter lends the steps it runs: never other work (a waiter
/// works for its own run only), but the check for an interrupt wherever
/// they ask whether they are cancelled.
struct WaiterLender<'a> {
    run: &'a DagRun,
    interrupted: Option<&'a dyn Fn() -> bool>,
}

impl Lender for WaiterLender<'_> {
    fn should_yield(&self, _stamp: u64) -> bool {
        false
    }

    fn yield_now(&self, _stamp: u64) -> bool {
        false
    }

    fn interrupted(&self) -> bool {
        if self.interrupted.is_some_and(|interrupted| interrupted()) {
            self.run.cancel();
            return true;
        }
        false
    }
}

impl fmt::Debug for DagHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DagHandle")
            .field("states", &self.states())
            .finish()
    }
}
