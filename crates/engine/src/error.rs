//! The engine's error type.

use std::path::PathBuf;

/// Everything `weir-engine` can fail with. The message of each variant is
/// what a shell prints after `Error: `.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The SQL did not parse, named something unknown, or mixed types.
    #[error(transparent)]
    Plan(#[from] weir_planner::Error),
    /// The query failed while running (bad cast, division by zero, ...).
    #[error(transparent)]
    Execution(weir_pipeline::Error),
    /// The query ran past the database's timeout and was cancelled.
    #[error("Timeout Error: the query ran longer than {0:?} and was cancelled")]
    Timeout(std::time::Duration),
    /// A CSV column widened while loading, past the sample its type was
    /// sniffed from: the statement is planned again (never returned by
    /// [`crate::Database::execute`]).
    #[error("Internal Error: a CSV file's schema changed while loading")]
    SchemaChanged,
    /// The query was interrupted (see [`crate::InterruptHandle`]).
    #[error("Interrupted: the query was cancelled")]
    Cancelled,
    /// A table name is taken, or missing.
    #[error("Catalog Error: {0}")]
    Catalog(String),
    /// A constraint of the table (NOT NULL) rejected the rows; nothing was
    /// inserted.
    #[error("Constraint Error: {0}")]
    Constraint(String),
    /// A file could not be read.
    #[error("IO Error: could not read \"{path}\": {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A file could not be written (`COPY ... TO`); the target was left
    /// as it was.
    #[error("IO Error: could not write \"{path}\": {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Data of a type Weir does not support, or bad settings.
    #[error("Invalid Input Error: {0}")]
    InvalidInput(String),
    /// The executor could not start or has shut down.
    #[error(transparent)]
    Executor(#[from] weir_executor::Error),
    /// An Arrow error outside of query execution.
    #[error(transparent)]
    Arrow(#[from] arrow::error::ArrowError),
}

impl From<weir_pipeline::Error> for Error {
    fn from(e: weir_pipeline::Error) -> Self {
        match e {
            weir_pipeline::Error::Timeout(d) => Error::Timeout(d),
            weir_pipeline::Error::Cancelled => Error::Cancelled,
            other => Error::Execution(other),
        }
    }
}

/// Result with the engine's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
