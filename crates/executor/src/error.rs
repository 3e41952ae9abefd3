//! The crate's error types.

use crate::job::Job;

/// Errors from creating an executor or submitting to it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The executor no longer accepts jobs: its workers are gone. While a
    /// [`PipelineExecutor`](crate::PipelineExecutor) is alive this only
    /// happens if a worker loop died of a broken invariant (likely caused
    /// by a bug).
    #[error("the executor has shut down")]
    ShutDown,
    /// The [`ExecutorConfig`](crate::ExecutorConfig) cannot make an executor.
    #[error("invalid executor configuration: {0}")]
    InvalidConfig(String),
    /// A [`DagBuilder`](crate::DagBuilder) does not describe a DAG: a
    /// duplicate node name, a dependency on a missing node, or a cycle.
    #[error("invalid DAG: {0}")]
    InvalidDag(String),
    /// A worker thread could not be started.
    #[error("could not start the executor's worker threads")]
    Spawn(#[source] weir_pool::Error),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why [`PipelineExecutor::try_submit`](crate::PipelineExecutor::try_submit)
/// did not take a job; the job is handed back.
#[derive(Debug, thiserror::Error)]
pub enum TrySubmitError {
    /// The bounded job queue is full; retry later or use `submit`, which
    /// blocks.
    #[error("the executor's job queue is full")]
    Full(Job),
    /// The executor no longer accepts jobs (see [`Error::ShutDown`]).
    #[error("the executor has shut down")]
    ShutDown(Job),
}

impl TrySubmitError {
    /// The job that was not submitted.
    pub fn into_job(self) -> Job {
        match self {
            TrySubmitError::Full(job) | TrySubmitError::ShutDown(job) => job,
        }
    }
}
