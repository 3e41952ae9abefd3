//! `weir-executor`: a dual-pool, work-stealing job executor with lock-free
//! step claims.
//!
//! It sits on `weir-pool` and below `weir-pipeline`; it knows nothing of SQL
//! or Arrow. A [`Job`] is a list of [`Step`]s with a cost. A
//! [`PipelineExecutor`] runs jobs on main workers (which receive them from an
//! MPMC queue) and reserve workers (which help the heaviest jobs on the
//! [`JobBoard`]); [`split_threads`] divides the threads between the two.
//! Every step of every job runs exactly once (unless the job is cancelled
//! or fails), claimed by compare-and-swap; each job ends in exactly one
//! [`JobOutcome`], signalled once to its [`JobTicket`]s. Read the [`Step`]
//! contract before writing steps that wait for each other.
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicU64, Ordering};
//! use weir_executor::{ExecutorConfig, Job, JobOutcome, PipelineExecutor, step_fn};
//!
//! # fn main() -> weir_executor::Result<()> {
//! let executor = PipelineExecutor::new(ExecutorConfig::with_threads(2))?;
//! let sum = Arc::new(AtomicU64::new(0));
//! let mut job = Job::new("sum");
//! for i in 1..=4 {
//!     let sum = Arc::clone(&sum);
//!     job.push_step(Box::new(step_fn(format!("add {i}"), move |_ctx| {
//!         sum.fetch_add(i, Ordering::Relaxed);
//!         Ok(())
//!     })));
//! }
//! let ticket = executor.submit(job)?;
//! assert_eq!(ticket.wait(), JobOutcome::Completed);
//! assert_eq!(sum.load(Ordering::Relaxed), 10);
//!
//! let failing = Job::new("fails").with_step(step_fn("bad", |_ctx| Err("no such column".into())));
//! match executor.submit(failing)?.wait() {
//!     JobOutcome::Failed(failure) => assert_eq!(failure.message, "no such column"),
//!     other => panic!("unexpected {other:?}"),
//! }
//! # Ok(())
//! # }
//! ```
//!
//! Under `cfg(weir_loom)` every atomic, lock, channel and thread comes from
//! `loom` (see `src/sync.rs`) and the board is a `Mutex<BTreeSet>`, so the
//! whole executor runs inside loom models. `cfg(weir_loom_bug = "claim" |
//! "pop" | "complete" | "wake" | "finished" | "fences" | "dag" | "waiter")` plants
//! one known bug each, for checking that the models catch it.
//!
//! # DAGs
//!
//! [`DagBuilder`] describes nodes (each a [`Job`], or a closure making one)
//! with dependencies, timeouts and mutex groups; [`Dag::run`] starts every
//! node as soon as its dependencies allow and returns a [`DagHandle`]; the
//! protocol is described on [`Dag`]. With
//! [`ExecutorConfig::waiters_work`], the thread waiting for a DAG runs
//! steps of its jobs meanwhile (DuckDB's model of `threads`, which counts
//! the caller).
//!
//! # Fairness
//!
//! A step that runs long (a query lane draining a morsel cursor) should call
//! [`StepContext::yield_now`] between units of work: when a job waits in
//! the queue, or a job received later has unclaimed steps, the worker runs
//! that work right there and then resumes the step, so a short job
//! submitted behind a long one finishes in about its own time.
//!
//! # Waiting
//!
//! A step must not block waiting for another job of its own executor
//! ([`JobTicket::wait`] panics there, which fails the step's job): if every
//! worker did, nobody would be left to run the jobs waited for. Submit
//! further work as steps of the same job (a step may wait on lower-index
//! steps), or wait outside the executor.

mod board;
mod dag;
mod error;
mod executor;
mod job;
mod split;
mod stats;
mod step;
mod sync;

pub use crate::board::JobBoard;
pub use crate::dag::{
    Dag, DagBuilder, DagHandle, DagOutcome, ErrorMode, Launcher, Node, NodeError, NodeFailure,
    NodeState,
};
pub use crate::error::{Error, Result, TrySubmitError};
pub use crate::executor::{ExecutorConfig, PipelineExecutor, Submitter};
pub use crate::job::{
    Job, JobFailure, JobHandle, JobId, JobOutcome, JobState, JobTicket, StepClaim,
};
pub use crate::split::split_threads;
pub use crate::stats::ExecutorStats;
pub use crate::step::{FnStep, Step, StepContext, StepError, StepResult, WorkerKind, step_fn};
