//! Table data and how scans find it.

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, RecordBatch, RecordBatchOptions};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use weir_planner::{ScalarValue, TableSource};

use crate::error::{Error, Result};
use crate::eval::scalar_to_array;
use crate::zones::ZoneCache;

/// Rows a [`series_table`] puts in one batch.
const SERIES_BATCH_ROWS: usize = 1 << 20;

/// An in-memory table: a schema and record batches of that schema.
///
/// Columns have the canonical types only (BOOLEAN `Boolean`, INTEGER
/// `Int32`, BIGINT `Int64`, DOUBLE `Float64`, DECIMAL `Decimal128`, VARCHAR
/// `Utf8`, DATE `Date32`, TIMESTAMP `Timestamp(Microsecond, None)`). Batches
/// may have any length, zero included; scans cut them into morsels without
/// copying.
#[derive(Clone, Debug)]
pub struct TableData {
    /// The schema of every batch.
    pub schema: SchemaRef,
    /// The rows.
    pub batches: Vec<RecordBatch>,
    /// Zone maps of the columns, computed as scans ask for them (a clone
    /// starts without).
    pub(crate) zones: ZoneCache,
}

impl TableData {
    /// A table of `batches`, all of `schema`.
    pub fn new(schema: SchemaRef, batches: Vec<RecordBatch>) -> Self {
        TableData {
            schema,
            batches,
            zones: ZoneCache::default(),
        }
    }

    /// Total rows over all batches.
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }
}

/// Finds the data a [`TableSource`] stands for.
///
/// The engine implements it over its catalog (tables), its file readers
/// (`read_csv`, `read_parquet`) and [`series_table`] (`range()`); the
/// pipeline itself does no I/O.
pub trait SourceResolver: Send + Sync {
    /// The data of `source`.
    fn resolve(&self, source: &TableSource) -> Result<Arc<TableData>>;

    /// `source` as parts the lanes read as they pull them (a file's row
    /// groups or byte ranges), or `None` to have it [`resolve`]d whole.
    ///
    /// [`resolve`]: SourceResolver::resolve
    fn resolve_parts(&self, _source: &TableSource) -> Result<Option<Arc<dyn PartSource>>> {
        Ok(None)
    }
}

/// A source read part by part: each lane reads and decodes the part it
/// pulls, so memory holds only the parts in flight, and a LIMIT that has
/// its rows leaves the other parts unread.
pub trait PartSource: Send + Sync {
    /// The schema of every batch.
    fn schema(&self) -> &SchemaRef;
    /// Number of parts.
    fn num_parts(&self) -> usize;
    /// Rows of all parts as far as known before reading them (EXPLAIN and
    /// job costs only).
    fn estimated_rows(&self) -> usize;
    /// The rows of part `part`, in order.
    fn read(&self, part: usize) -> Result<Vec<RecordBatch>>;
}

/// `range(start, stop, step)` generated morsel by morsel, so a scan of a
/// huge series holds only the morsels in flight.
#[derive(Clone, Debug)]
pub(crate) struct LazySeries {
    start: i128,
    step: i128,
    rows: usize,
    schema: SchemaRef,
}

impl LazySeries {
    /// The series of `start, start + step, ...` before `stop`, with the
    /// scan's schema (one BIGINT column, named `range` or
    /// `generate_series`).
    pub(crate) fn new(start: i64, stop: i64, step: i64, schema: SchemaRef) -> Result<Self> {
        Ok(LazySeries {
            start: i128::from(start),
            step: i128::from(step),
            rows: series_len(start, stop, step)?,
            schema,
        })
    }

    /// Number of rows.
    pub(crate) fn num_rows(&self) -> usize {
        self.rows
    }

    /// The schema.
    pub(crate) fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Rows `offset .. offset + len` as a batch.
    pub(crate) fn rows(&self, offset: usize, len: usize) -> Result<RecordBatch> {
        let first = self.start + self.step * offset as i128;
        let step = self.step;
        // every value lies between start and stop, so it fits in i64
        let column: ArrayRef = Arc::new(Int64Array::from_iter_values(
            (0..len).map(|i| (first + step * i as i128) as i64),
        ));
        RecordBatch::try_new(Arc::clone(&self.schema), vec![column]).map_err(Error::arrow)
    }
}

/// Rows of `range(start, stop, step)`.
fn series_len(start: i64, stop: i64, step: i64) -> Result<usize> {
    if step == 0 {
        return Err(Error::Execution("range() step must not be zero".to_owned()));
    }
    let (start_w, stop_w, step_w) = (i128::from(start), i128::from(stop), i128::from(step));
    let count = if (step > 0 && start_w < stop_w) || (step < 0 && start_w > stop_w) {
        ((stop_w - start_w).abs() - 1) / step_w.abs() + 1
    } else {
        0
    };
    usize::try_from(count)
        .map_err(|_| Error::Execution(format!("range({start}, {stop}, {step}) has too many rows")))
}

/// The table of `range(start, stop, step)`: one non-null BIGINT column named
/// `name` holding `start, start + step, ...` up to but excluding `stop`.
///
/// `step` must not be zero; a step pointing away from `stop` gives no rows.
///
/// ```
/// let t = weir_pipeline::series_table(0, 10, 3, "range").unwrap();
/// assert_eq!(t.num_rows(), 4); // 0, 3, 6, 9
/// ```
pub fn series_table(start: i64, stop: i64, step: i64, name: &str) -> Result<TableData> {
    let count = series_len(start, stop, step)?;
    let (start_w, step_w) = (i128::from(start), i128::from(step));
    let schema = Arc::new(Schema::new(vec![Field::new(name, DataType::Int64, false)]));
    let mut batches = Vec::with_capacity(count.div_ceil(SERIES_BATCH_ROWS));
    let mut done = 0usize;
    while done < count {
        let len = SERIES_BATCH_ROWS.min(count - done);
        let first = start_w + step_w * done as i128;
        // every value lies between start and stop, so it fits in i64
        let values: Vec<i64> = (0..len)
            .map(|i| (first + step_w * i as i128) as i64)
            .collect();
        let column: ArrayRef = Arc::new(Int64Array::from(values));
        batches
            .push(RecordBatch::try_new(Arc::clone(&schema), vec![column]).map_err(Error::arrow)?);
        done += len;
    }
    Ok(TableData::new(schema, batches))
}

/// The table of a `Values` plan: one batch holding `rows`.
pub(crate) fn values_table(rows: &[Vec<ScalarValue>], schema: &SchemaRef) -> Result<TableData> {
    if rows.is_empty() {
        return Ok(TableData::new(Arc::clone(schema), Vec::new()));
    }
    let mut columns = Vec::with_capacity(schema.fields().len());
    for (c, field) in schema.fields().iter().enumerate() {
        let mut parts = Vec::with_capacity(rows.len());
        for (r, row) in rows.iter().enumerate() {
            let value = row.get(c).ok_or_else(|| {
                Error::Internal(format!(
                    "VALUES row {r} has {} values, the schema {} columns",
                    row.len(),
                    schema.fields().len()
                ))
            })?;
            let mut array = scalar_to_array(value, 1)?;
            if array.data_type() != field.data_type() {
                array = arrow::compute::cast(&array, field.data_type()).map_err(Error::arrow)?;
            }
            parts.push(array);
        }
        let refs: Vec<&dyn arrow::array::Array> = parts.iter().map(|a| a.as_ref()).collect();
        columns.push(arrow::compute::concat(&refs).map_err(Error::arrow)?);
    }
    let options = RecordBatchOptions::new().with_row_count(Some(rows.len()));
    let batch = RecordBatch::try_new_with_options(Arc::clone(schema), columns, &options)
        .map_err(Error::arrow)?;
    Ok(TableData::new(Arc::clone(schema), vec![batch]))
}
