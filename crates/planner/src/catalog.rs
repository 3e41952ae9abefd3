//! What the planner needs to know about tables and files.

use arrow_schema::SchemaRef;

use crate::plan::FileFormat;

/// Name and schema lookups for the planner.
///
/// The planner does no I/O: the schema of a file read in place comes from
/// [`Catalog::file_schema`], implemented by the engine. Planning runs on a
/// thread of its own (with a stack for deep expressions), hence `Sync`.
pub trait Catalog: Sync {
    /// The schema of table `name` (case-insensitive), if it exists.
    fn table_schema(&self, name: &str) -> Option<SchemaRef>;
    /// Names of all tables, for "did you mean" hints and `SHOW TABLES`.
    fn table_names(&self) -> Vec<String>;
    /// The schema of the file at `path` read as `format`, or an error
    /// message naming the problem (missing file, unreadable header).
    fn file_schema(&self, path: &str, format: FileFormat) -> Result<SchemaRef, String>;
}
