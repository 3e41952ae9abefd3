//! Query results.

use std::fmt;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;

/// The result of one statement: a schema and Arrow record batches.
///
/// Statements that return no rows (CREATE, INSERT, DROP) have an empty
/// schema; [`QueryResult::returns_rows`] tells them apart from a query that
/// matched nothing.
#[derive(Clone, Debug)]
pub struct QueryResult {
    pub(crate) schema: SchemaRef,
    pub(crate) batches: Vec<RecordBatch>,
    pub(crate) returns_rows: bool,
    pub(crate) rows_affected: Option<u64>,
}

impl QueryResult {
    pub(crate) fn rows(schema: SchemaRef, batches: Vec<RecordBatch>) -> Self {
        let batches = batches.into_iter().filter(|b| b.num_rows() > 0).collect();
        Self {
            schema,
            batches,
            returns_rows: true,
            rows_affected: None,
        }
    }

    pub(crate) fn no_rows(rows_affected: Option<u64>) -> Self {
        Self {
            schema: std::sync::Arc::new(arrow::datatypes::Schema::empty()),
            batches: Vec::new(),
            returns_rows: false,
            rows_affected,
        }
    }

    /// The columns of the result.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The rows, as record batches (none of them empty).
    pub fn batches(&self) -> &[RecordBatch] {
        &self.batches
    }

    /// Takes the batches.
    pub fn into_batches(self) -> Vec<RecordBatch> {
        self.batches
    }

    /// Number of rows.
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(|b| b.num_rows()).sum()
    }

    /// False for statements that return no result set (CREATE, INSERT,
    /// DROP).
    pub fn returns_rows(&self) -> bool {
        self.returns_rows
    }

    /// Rows inserted by INSERT or CREATE TABLE AS.
    pub fn rows_affected(&self) -> Option<u64> {
        self.rows_affected
    }
}

impl fmt::Display for QueryResult {
    /// Renders the result as a table (empty for statements without rows).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.returns_rows {
            return Ok(());
        }
        if self.batches.is_empty() {
            let empty = RecordBatch::new_empty(self.schema.clone());
            let table =
                arrow::util::pretty::pretty_format_batches(&[empty]).map_err(|_| fmt::Error)?;
            return write!(f, "{table}");
        }
        let table =
            arrow::util::pretty::pretty_format_batches(&self.batches).map_err(|_| fmt::Error)?;
        write!(f, "{table}")
    }
}
