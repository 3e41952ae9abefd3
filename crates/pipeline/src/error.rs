//! The crate's error type.

use std::time::Duration;

use arrow::error::ArrowError;

use crate::eval::EvalError;

/// An error from building or running a query pipeline.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Evaluating an expression failed (division by zero, a bad cast, ...);
    /// the message is the evaluator's, unchanged.
    #[error(transparent)]
    Eval(#[from] EvalError),
    /// The query could not run to the end: an aggregate overflowed, a
    /// source could not be resolved, a batch did not fit its schema.
    #[error("Execution Error: {0}")]
    Execution(String),
    /// The query was cancelled through [`ExecOptions::cancel`](crate::ExecOptions::cancel).
    #[error("Interrupt Error: the query was cancelled")]
    Cancelled,
    /// The query ran past [`ExecOptions::deadline`](crate::ExecOptions::deadline);
    /// the duration is the time it was given.
    #[error("Timeout Error: the query did not finish within {:.3}s", .0.as_secs_f64())]
    Timeout(Duration),
    /// The executor refused the job (it has shut down).
    #[error("Executor Error: {0}")]
    Executor(#[from] weir_executor::Error),
    /// A broken invariant inside the pipeline.
    #[error("Internal Error: {0}. This is likely caused by a bug")]
    Internal(String),
}

impl Error {
    /// An [`Error::Execution`] from an Arrow kernel's error.
    pub(crate) fn arrow(error: ArrowError) -> Self {
        Error::Execution(error.to_string())
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
