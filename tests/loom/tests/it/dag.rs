//! The DAG scheduler.
//!
//! - `dag_join`: two nodes finishing at once on different threads race to
//!   advance their common dependant; it must start exactly once (and the
//!   run must end). Each node's job runs on its own loom thread (a
//!   [`Launcher`] for models), so the two finishing hooks, which decrement
//!   the dependant's count and start it, really race.
//! - `dag_waiter`: the real executor with one main worker, and the thread
//!   waiting for the DAG working on it. The node's job is the rendezvous
//!   probe of the wake models (step 0 waits for step 1), so the run ends
//!   only if the waiter claims a step while the worker holds the other:
//!   an offer the waiter sleeps through becomes a deadlock loom reports.

use loom::sync::atomic::{AtomicU64, Ordering};
use loom::thread;
use weir_executor::{
    DagBuilder, DagOutcome, ExecutorConfig, Job, JobHandle, JobTicket, Launcher, Node, NodeState,
    PipelineExecutor, StepClaim, WorkerKind,
};

use crate::{check, counting_job, run_counts};

/// Runs each job on a new loom thread.
struct ThreadLauncher {
    next_seq: AtomicU64,
}

impl Launcher for ThreadLauncher {
    fn launch(&self, job: Job) -> weir_executor::Result<JobTicket> {
        let seq = self.next_seq.fetch_add(1, Ordering::Relaxed);
        let handle = JobHandle::new(job, seq);
        let ticket = handle.ticket();
        thread::spawn(move || {
            if handle.start() {
                while handle.run_next_step(WorkerKind::Main) != StepClaim::Exhausted {}
            }
        });
        Ok(ticket)
    }
}

/// `left` and `right` have no dependencies; `join` depends on both.
pub(crate) fn dag_join_model() {
    let (left, left_runs) = counting_job("left", 1);
    let (right, right_runs) = counting_job("right", 1);
    let (join, join_runs) = counting_job("join", 1);
    let dag = DagBuilder::new()
        .node(Node::job("left", left))
        .node(Node::job("right", right))
        .node(Node::job("join", join).after("left").after("right"))
        .build()
        .unwrap();
    let handle = dag.run_with(ThreadLauncher {
        next_seq: AtomicU64::new(0),
    });
    assert_eq!(handle.wait(), DagOutcome::Completed);
    assert_eq!(run_counts(&left_runs), [1]);
    assert_eq!(run_counts(&right_runs), [1]);
    assert_eq!(run_counts(&join_runs), [1], "the join node ran once");
    assert_eq!(handle.state("join"), Some(NodeState::Succeeded));
}

#[test]
fn dag_join_starts_once() {
    check("dag_join", dag_join_model);
}

/// One main worker and a working waiter run the rendezvous job as a node.
pub(crate) fn dag_waiter_model() {
    let executor = PipelineExecutor::new(ExecutorConfig {
        threads: 1,
        split: Some((1, 0)),
        queue_capacity: None,
        thread_name: "loom".to_owned(),
        waiters_work: true,
    })
    .unwrap();
    let dag = DagBuilder::new()
        .node(Node::job("meet", crate::wake::rendezvous_job()))
        .build()
        .unwrap();
    assert_eq!(dag.run(&executor).wait(), DagOutcome::Completed);
    assert_eq!(executor.board_len(), 0, "a finished job leaves the board");
    drop(executor);
}

#[test]
fn dag_waiter_sleeps_through_no_offer() {
    check("dag_waiter", dag_waiter_model);
}
