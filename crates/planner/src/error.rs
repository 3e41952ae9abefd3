//! The planner's error type.

/// A planning error. Every message names the offending token, column or
/// construct.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The SQL text does not parse.
    #[error("Parser Error: {0}")]
    Parse(#[from] sqlparser::parser::ParserError),
    /// A name or type problem: unknown table or column, type mismatch,
    /// wrong argument count.
    #[error("Binder Error: {0}")]
    Bind(String),
    /// Valid SQL that Weir does not support, named as such.
    #[error("Not implemented Error: {0}")]
    Unsupported(String),
    /// `SET`, `RESET`, `PRAGMA` or `current_setting()` named no setting.
    #[error("Catalog Error: {0}")]
    UnknownSetting(String),
    /// Evaluating a constant the plan needs (a VALUES item, an IN list
    /// item, a LIMIT) failed: the evaluator's own error.
    #[error(transparent)]
    Evaluate(crate::fold::EvalError),
    /// A view or table is missing, or is of the other kind than the
    /// statement names (`DROP TABLE v` of a view).
    #[error("Catalog Error: {0}")]
    Object(String),
    /// The catalog could not read a file's schema.
    #[error("IO Error: {0}")]
    Catalog(String),
}

/// Result with the planner's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
