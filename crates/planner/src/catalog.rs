//! What the planner needs to know about tables and files.

use arrow_schema::{Field, SchemaRef};

use crate::plan::{FileFormat, FileOptions};
use crate::scalar::ScalarValue;

/// Field metadata marking a file's column whose type Weir cannot store
/// (a Parquet LIST, STRUCT, MAP, ...); its value names that type. The
/// column stands in a file's schema as a VARCHAR of NULLs, so a query that
/// does not read it runs; binding a reference to it is an error
/// ([`unsupported_column`]).
pub const UNSUPPORTED_TYPE: &str = "weir.unsupported_type";

/// The error for reading `field`, if it is a column marked
/// [`UNSUPPORTED_TYPE`].
pub fn unsupported_column(field: &Field) -> Option<String> {
    let t = field.metadata().get(UNSUPPORTED_TYPE)?;
    Some(format!(
        "column \"{}\" has type {t} which Weir does not support",
        field.name()
    ))
}

/// One setting of the session (`SET`, `RESET`, `current_setting()`,
/// `weir_settings()`).
#[derive(Clone, Debug, PartialEq)]
pub struct Setting {
    /// The name `SET` takes (lower case).
    pub name: String,
    /// Other names for it (`timeout` for `statement_timeout`).
    pub aliases: Vec<String>,
    /// The current value.
    pub value: ScalarValue,
    /// What it does.
    pub description: String,
    /// Whether it belongs to the database or to each connection.
    pub scope: SettingScope,
}

/// Where a [`Setting`] lives, as the `scope` column of `weir_settings()`
/// shows it (DuckDB's names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SettingScope {
    /// `GLOBAL`: one value for the database; a `SET` through any
    /// connection is seen by all.
    Global,
    /// `LOCAL`: each connection has its own value; a `SET` changes it for
    /// that connection alone.
    Local,
}

impl SettingScope {
    /// `GLOBAL` or `LOCAL`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Global => "GLOBAL",
            Self::Local => "LOCAL",
        }
    }
}

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

    /// [`Catalog::file_schema`] with reader options (`read_csv(...,
    /// types=..., sample_size=...)`). The default knows no options.
    fn file_schema_with(
        &self,
        path: &str,
        format: FileFormat,
        options: &FileOptions,
    ) -> Result<SchemaRef, String> {
        if *options == FileOptions::default() {
            self.file_schema(path, format)
        } else {
            Err(format!("reader options are not supported for \"{path}\""))
        }
    }

    /// Rows of table `name`, if known cheaply (join order estimates). The
    /// default knows none.
    fn table_rows(&self, name: &str) -> Option<usize> {
        let _ = name;
        None
    }

    /// Estimated number of distinct non-NULL values in column `column`
    /// of table `name`, if known cheaply (join order estimates). The
    /// default knows none.
    fn column_distinct(&self, name: &str, column: &str) -> Option<f64> {
        let _ = (name, column);
        None
    }

    /// The session's settings. The default has none.
    fn settings(&self) -> Vec<Setting> {
        Vec::new()
    }

    /// View `name` (case-insensitive), if there is one: its name as
    /// created, and its query and column names as [`crate::Statement::CreateView`]
    /// gave them. The default has none.
    fn view(&self, name: &str) -> Option<ViewDef> {
        let _ = name;
        None
    }

    /// Names of all views. The default has none.
    fn view_names(&self) -> Vec<String> {
        Vec::new()
    }
}

/// A view as the catalog keeps it: bound again wherever it is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViewDef {
    /// The name as created.
    pub name: String,
    /// The query, as SQL text.
    pub query: String,
    /// `CREATE VIEW v(a, b)`: the names of its first columns.
    pub columns: Vec<String>,
}
