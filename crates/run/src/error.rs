//! The crate's error type.

use std::path::PathBuf;

/// Everything `weir-run` can fail with before or around a run (a stage's
/// own failure is a [`crate::StageStatus::Failed`] in the summary).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or folder of the project could not be read or written.
    #[error("{what} {}: {source}", path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The project is not valid: two stages with one name, a stage reading
    /// a table that is no stage, a cycle, a bad header, an unknown stage
    /// selected. The message names them.
    #[error("{0}")]
    Project(String),
    /// A stage's SQL does not parse.
    #[error("stage {stage} ({}): {source}", path.display())]
    Sql {
        /// The stage.
        stage: String,
        /// Its file.
        path: PathBuf,
        /// The planner's error.
        #[source]
        source: weir_planner::Error,
    },
    /// The stage executor could not start.
    #[error(transparent)]
    Executor(#[from] weir_executor::Error),
    /// The database could not start.
    #[error(transparent)]
    Engine(#[from] weir_engine::Error),
}

impl Error {
    pub(crate) fn io(
        what: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io { what, path, source }
    }
}

/// Result with the crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
