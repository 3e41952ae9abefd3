//! Reading CSV and Parquet files, and normalising Arrow data to the types
//! the engine stores.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;
use std::sync::{Arc, Mutex};

use arrow::array::{ArrayRef, RecordBatch, RecordBatchReader};
use arrow::compute::{CastOptions, cast_with_options};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use weir_pipeline::TableData;
use weir_planner::FileFormat;

use crate::csv_sniff::{self, Dialect, Sniffed};
use crate::error::{Error, Result};

/// Rows per batch when reading files.
pub(crate) const READ_BATCH_ROWS: usize = 65_536;

pub(crate) fn io_error(
    path: &Path,
    e: impl Into<Box<dyn std::error::Error + Send + Sync>>,
) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source: e.into(),
    }
}

pub(crate) fn open(path: &Path) -> Result<File> {
    File::open(path).map_err(|e| io_error(path, e))
}

/// How to read a CSV file: the user's options of `read_csv`.
pub(crate) type CsvOptions = weir_planner::FileOptions;

/// The dialect and Arrow schema a CSV file is read with (see
/// [`csv_sniff::sniff`]). Not yet canonical.
pub(crate) fn sniff_csv(path: &Path, options: &CsvOptions) -> Result<Sniffed> {
    csv_sniff::sniff(path, options)
}

/// The schema a file will have once loaded (canonical types). `known`: a
/// CSV schema an earlier load settled on (see [`read_csv`]).
pub(crate) fn file_schema(
    path: &Path,
    format: FileFormat,
    csv: &CsvOptions,
    known: Option<&Schema>,
) -> Result<SchemaRef> {
    let raw = match (format, known) {
        (FileFormat::Csv, Some(k)) => Arc::new(k.clone()),
        (FileFormat::Csv, None) => Arc::new(sniff_csv(path, csv)?.schema),
        (FileFormat::Parquet, _) => {
            let raw = ParquetRecordBatchReaderBuilder::try_new(open(path)?)
                .map_err(|e| io_error(path, e))?
                .schema()
                .clone();
            return Ok(canonical_file_schema(&raw));
        }
    };
    canonical_schema(&raw)
}

/// A Parquet file's schema with canonical types, a column of a type Weir
/// cannot store standing as a VARCHAR marked
/// [`weir_planner::catalog::UNSUPPORTED_TYPE`] (see
/// [`read_parquet_parallel`]).
pub(crate) fn canonical_file_schema(schema: &Schema) -> SchemaRef {
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| match canonical_type(f.data_type()) {
            Some(t) => Field::new(f.name(), t, f.is_nullable()),
            None => Field::new(f.name(), DataType::Utf8, true).with_metadata(
                [(
                    weir_planner::catalog::UNSUPPORTED_TYPE.to_string(),
                    f.data_type().to_string(),
                )]
                .into_iter()
                .collect::<std::collections::HashMap<String, String>>(),
            ),
        })
        .collect();
    Arc::new(Schema::new(fields))
}

/// What a query reads of a Parquet file.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ParquetReads<'a> {
    /// The columns it uses (`None`: all).
    pub(crate) columns: Option<&'a [usize]>,
    /// The first rows it needs (`None`: all): the row groups past them
    /// are not read.
    pub(crate) rows: Option<usize>,
}

/// The row groups that hold the first `rows` rows (all for `None`).
fn row_groups(
    metadata: &parquet::file::metadata::ParquetMetaData,
    rows: Option<usize>,
) -> Vec<usize> {
    let mut groups = Vec::new();
    let mut seen = 0usize;
    for (g, group) in metadata.row_groups().iter().enumerate() {
        if rows.is_some_and(|n| seen >= n) {
            break;
        }
        seen = seen.saturating_add(usize::try_from(group.num_rows()).unwrap_or(usize::MAX));
        groups.push(g);
    }
    groups
}

/// Which columns of a Parquet file are read: those of a type Weir can
/// store, of `needed` (the columns the query reads; `None`: all).
pub(crate) fn read_columns(schema: &Schema, needed: Option<&[usize]>) -> Vec<bool> {
    (0..schema.fields().len())
        .map(|i| {
            canonical_type(schema.field(i).data_type()).is_some()
                && needed.is_none_or(|n| n.contains(&i))
        })
        .collect()
}

/// The projection reading the columns `read` marks, or `None` for all.
pub(crate) fn projection(
    read: &[bool],
    parquet: &parquet::schema::types::SchemaDescriptor,
) -> Option<parquet::arrow::ProjectionMask> {
    let roots: Vec<usize> = (0..read.len()).filter(|&i| read[i]).collect();
    (roots.len() < read.len()).then(|| parquet::arrow::ProjectionMask::roots(parquet, roots))
}

/// `table` (the columns `read` marks) as `full` (every column of the
/// file), the others filled with NULLs, which no query reads (one shared
/// array per column, sliced for each batch).
/// An all-NULL column of `rows` rows: a slice of one kept per type for
/// the rows of a read batch, so a scan that reads no column of a file
/// (`count(*)`) allocates nothing per row group.
fn null_column(data_type: &DataType, rows: usize) -> ArrayRef {
    static SHARED: Mutex<Vec<(DataType, ArrayRef)>> = Mutex::new(Vec::new());
    if rows > READ_BATCH_ROWS {
        return arrow::array::new_null_array(data_type, rows);
    }
    let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
    let whole = match shared.iter().find(|(t, _)| t == data_type) {
        Some((_, a)) => Arc::clone(a),
        None => {
            let a = arrow::array::new_null_array(data_type, READ_BATCH_ROWS);
            shared.push((data_type.clone(), Arc::clone(&a)));
            a
        }
    };
    whole.slice(0, rows)
}

pub(crate) fn fill_unread(full: &SchemaRef, read: &[bool], table: TableData) -> Result<TableData> {
    if read.iter().all(|r| *r) {
        return Ok(table);
    }
    // the unread columns hold NULLs, whatever the file says
    let full: SchemaRef = Arc::new(Schema::new(
        full.fields()
            .iter()
            .zip(read)
            .map(|(f, r)| f.as_ref().clone().with_nullable(f.is_nullable() || !r))
            .collect::<Vec<_>>(),
    ));
    let full = &full;
    let rows = table
        .batches
        .iter()
        .map(|b| b.num_rows())
        .max()
        .unwrap_or(0);
    let nulls: Vec<Option<ArrayRef>> = full
        .fields()
        .iter()
        .zip(read)
        .map(|(f, r)| (!r).then(|| null_column(f.data_type(), rows)))
        .collect();
    let mut batches = Vec::with_capacity(table.batches.len());
    for batch in table.batches {
        let mut columns_read = batch.columns().iter();
        let columns = nulls
            .iter()
            .map(|null| match null {
                Some(n) => n.slice(0, batch.num_rows()),
                None => columns_read
                    .next()
                    .expect("a read column per field")
                    .clone(),
            })
            .collect();
        let options =
            arrow::array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        batches.push(RecordBatch::try_new_with_options(
            full.clone(),
            columns,
            &options,
        )?);
    }
    Ok(TableData::new(full.clone(), batches))
}

/// A loaded CSV file: its rows, and the schema they were read with, wider
/// than the sniffed one when a value past the sample did not fit.
pub(crate) struct CsvData {
    pub(crate) schema: Schema,
    pub(crate) batches: Vec<RecordBatch>,
}

/// Reads a CSV file with `schema`, calling `check` between batches (it
/// stops the load with its error: Ctrl-C, a timeout). A value that does not
/// fit its column's type widens the column (BIGINT to DOUBLE to VARCHAR,
/// others to VARCHAR) and the file is read again; a column whose type the
/// user fixed (`fixed`) is an error instead.
pub(crate) fn read_csv(
    path: &Path,
    mut schema: Schema,
    dialect: &Dialect,
    fixed: &[(String, DataType)],
    check: &dyn Fn() -> Result<()>,
) -> Result<CsvData> {
    let first_line = dialect.lines_before_data() + 1;
    // each column widens at most twice
    for _ in 0..=2 * schema.fields().len() {
        let mut text = BufReader::new(csv_sniff::open_text(path)?);
        csv_sniff::skip_lines(&mut text, dialect.lines_before_data())
            .map_err(|e| io_error(path, e))?;
        let target = Arc::new(schema.clone());
        let reader = dialect
            .reader(decode_schema(&target, dialect), READ_BATCH_ROWS)
            .build(BufReader::new(QuoteCheck::new(text, dialect, first_line)))
            .map_err(|e| io_error(path, e))?;
        let mut batches = Vec::new();
        let mut widened = None;
        for batch in reader {
            check()?;
            match batch.and_then(|b| finish_batch(b, &target, dialect)) {
                Ok(b) => batches.push(b),
                Err(e) => {
                    let wider = widening(&e, &schema, fixed);
                    match wider {
                        Some(w) => {
                            widened = Some(w);
                            break;
                        }
                        None => {
                            return Err(csv_error(path, &e, first_line, &schema));
                        }
                    }
                }
            }
        }
        let Some((i, t)) = widened else {
            return Ok(CsvData { schema, batches });
        };
        let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
        fields[i] = Field::new(fields[i].name(), t, true);
        schema = Schema::new(fields);
    }
    Err(Error::InvalidInput(format!(
        "\"{}\": column types kept changing while reading",
        path.display()
    )))
}

/// The column of a CSV value that did not parse as its column's type.
fn failed_column(e: &arrow::error::ArrowError) -> Option<usize> {
    let arrow::error::ArrowError::ParseError(message) = e else {
        return None;
    };
    // "... for column N at line L" (a value) or "Error parsing column N
    // at line L" (a date or timestamp)
    let at = [" for column ", "Error parsing column "]
        .iter()
        .find_map(|p| message.find(p).map(|i| i + p.len()))?;
    let rest = &message[at..];
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    rest[..digits].parse().ok()
}

/// The column that `e` says failed to parse and the type to widen it to,
/// unless the user fixed its type or it is already VARCHAR.
pub(crate) fn widening(
    e: &arrow::error::ArrowError,
    schema: &Schema,
    fixed: &[(String, DataType)],
) -> Option<(usize, DataType)> {
    let i = failed_column(e)?;
    let f = schema.fields().get(i)?;
    if fixed.iter().any(|(n, _)| f.name().eq_ignore_ascii_case(n)) {
        return None;
    }
    Some((i, widen(f.data_type())?))
}

/// The next wider type a CSV column can take.
fn widen(t: &DataType) -> Option<DataType> {
    match t {
        DataType::Utf8 => None,
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => {
            Some(DataType::Float64)
        }
        _ => Some(DataType::Utf8),
    }
}

/// Files smaller than this are read by one worker.
const MIN_PART_BYTES: u64 = 4 << 20;

/// One part of a file load, run by a worker: decodes its rows, polling
/// its argument (true: stop) between batches.
pub(crate) type Part =
    Box<dyn Fn(&dyn Fn() -> bool) -> Result<Vec<RecordBatch>, PartError> + Send + Sync>;

/// Why a part failed.
pub(crate) enum PartError {
    /// Arrow's error, with the file line its part starts at (1 for the
    /// first data row).
    Arrow(arrow::error::ArrowError, usize),
    /// Stopped by its poll.
    Stopped,
    /// Something else.
    Other(Error),
}

/// Runs the parts of a load, on as many workers as it likes, and returns
/// their results in part order; an error of its own (Ctrl-C, a timeout)
/// stops the load.
pub(crate) trait RunParts {
    /// How many workers may run parts at once.
    fn workers(&self) -> usize;
    /// Runs `parts`.
    fn run(&self, parts: Vec<Part>) -> Result<Vec<Result<Vec<RecordBatch>, PartError>>>;
}

/// Byte ranges of a CSV file's rows, cut at line ends outside quotes,
/// about `parts` of them, each with the line its first row is on. Also
/// checks the quotes (see [`QuoteCheck`]).
fn csv_parts(
    path: &Path,
    dialect: &Dialect,
    parts: u64,
    min_part_bytes: u64,
    check: &dyn Fn() -> Result<()>,
) -> Result<Vec<(u64, u64, usize)>> {
    use std::io::{Seek, SeekFrom};
    let mut file = BufReader::new(open(path)?);
    let len = file
        .get_ref()
        .metadata()
        .map_err(|e| io_error(path, e))?
        .len();
    let skip = dialect.lines_before_data();
    let start = csv_sniff::skip_lines(&mut file, skip).map_err(|e| io_error(path, e))?;
    let mut file = file.into_inner();
    file.seek(SeekFrom::Start(start))
        .map_err(|e| io_error(path, e))?;
    let stop = check;
    let mut check = QuoteCheck::new(file, dialect, skip + 1);
    check.offset = start;
    check.line_start = start;
    check.part_bytes = (len / parts.max(1)).max(min_part_bytes).max(1);
    check.splits.push((start, skip + 1));
    check.next_split = Some(start + check.part_bytes);
    let mut buf = vec![0; 1 << 20];
    loop {
        stop()?;
        match check.read(&mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => return Err(io_error(path, e)),
        }
    }
    let mut ranges = Vec::new();
    for (i, &(start, line)) in check.splits.iter().enumerate() {
        let end = check.splits.get(i + 1).map_or(len, |s| s.0);
        if end > start {
            ranges.push((start, end, line));
        }
    }
    Ok(ranges)
}

/// [`csv_parts`] for a scan: about `parts` ranges, each with its first
/// line.
pub(crate) fn csv_ranges(
    path: &Path,
    dialect: &Dialect,
    parts: u64,
) -> Result<Vec<(u64, u64, usize)>> {
    csv_parts(path, dialect, parts, 1, &|| Ok(()))
}

/// Arrow's error reading rows that start on line `first_line` of the
/// file, naming the file's line and the column by name.
pub(crate) fn csv_error(
    path: &Path,
    e: &arrow::error::ArrowError,
    first_line: usize,
    schema: &Schema,
) -> Error {
    let message = e.to_string();
    // a value's line is counted from 0, a record's from 1
    let from_zero =
        message.contains("Error while parsing value") || message.contains("Error parsing column");
    let mut message = shift_lines(&message, first_line + usize::from(from_zero));
    if let Some(i) = failed_column(e)
        && let Some(f) = schema.fields().get(i)
    {
        for p in ["for column", "parsing column"] {
            message = message.replacen(&format!("{p} {i} "), &format!("{p} \"{}\" ", f.name()), 1);
        }
    }
    io_error(path, message)
}

/// `line N` in an Arrow CSV message counted from `first_line` of the file.
fn shift_lines(message: &str, first_line: usize) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find("line ") {
        let (head, tail) = rest.split_at(at + "line ".len());
        out.push_str(head);
        let digits = tail.len() - tail.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        match tail[..digits].parse::<usize>() {
            Ok(n) => out.push_str(&(n + first_line - 1).to_string()),
            Err(_) => out.push_str(&tail[..digits]),
        }
        rest = &tail[digits..];
    }
    out.push_str(rest);
    out
}

/// [`read_csv`] with the rows cut into byte ranges that `runner`'s workers
/// decode at once; the batches keep file order. One range (a small file)
/// reads on the calling thread.
pub(crate) fn read_csv_parallel(
    path: &Path,
    schema: Schema,
    dialect: &Dialect,
    fixed: &[(String, DataType)],
    runner: &dyn RunParts,
    check: &dyn Fn() -> Result<()>,
) -> Result<CsvData> {
    read_csv_in_parts(path, schema, dialect, fixed, runner, check, MIN_PART_BYTES)
}

fn read_csv_in_parts(
    path: &Path,
    mut schema: Schema,
    dialect: &Dialect,
    fixed: &[(String, DataType)],
    runner: &dyn RunParts,
    check: &dyn Fn() -> Result<()>,
    min_part_bytes: u64,
) -> Result<CsvData> {
    let workers = runner.workers() as u64;
    // a compressed file is one stream
    if workers < 2 || dialect.compressed {
        return read_csv(path, schema, dialect, fixed, check);
    }
    let ranges = csv_parts(path, dialect, workers * 2, min_part_bytes, check)?;
    if ranges.len() < 2 {
        return read_csv(path, schema, dialect, fixed, check);
    }
    check()?;
    for _ in 0..=2 * schema.fields().len() {
        let shared = Arc::new(schema.clone());
        let parts: Vec<Part> = ranges
            .iter()
            .map(|&(start, end, line)| {
                let path = path.to_path_buf();
                let schema = shared.clone();
                let dialect = dialect.clone();
                Box::new(move |stop: &dyn Fn() -> bool| {
                    read_csv_range(&path, schema.clone(), &dialect, start, end, stop).map_err(|e| {
                        match e {
                            RangeError::Arrow(e) => PartError::Arrow(e, line),
                            RangeError::Stopped => PartError::Stopped,
                            RangeError::Io(e) => PartError::Other(io_error(&path, e)),
                        }
                    })
                }) as Part
            })
            .collect();
        let mut batches = Vec::new();
        let mut widened = None;
        for result in runner.run(parts)? {
            match result {
                Ok(b) => batches.extend(b),
                Err(PartError::Stopped) => {
                    check()?;
                    return Err(Error::Cancelled);
                }
                Err(PartError::Other(e)) => return Err(e),
                Err(PartError::Arrow(e, line)) => {
                    let wider = widening(&e, &schema, fixed);
                    match wider {
                        Some(w) => {
                            widened = Some(w);
                            break;
                        }
                        None => return Err(csv_error(path, &e, line, &schema)),
                    }
                }
            }
        }
        let Some((i, t)) = widened else {
            return Ok(CsvData { schema, batches });
        };
        let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
        fields[i] = Field::new(fields[i].name(), t, true);
        schema = Schema::new(fields);
    }
    Err(Error::InvalidInput(format!(
        "\"{}\": column types kept changing while reading",
        path.display()
    )))
}

enum RangeError {
    Arrow(arrow::error::ArrowError),
    Io(std::io::Error),
    Stopped,
}

/// The rows in bytes `start..end` of a CSV file (no header).
fn read_csv_range(
    path: &Path,
    schema: SchemaRef,
    dialect: &Dialect,
    start: u64,
    end: u64,
    stop: &dyn Fn() -> bool,
) -> Result<Vec<RecordBatch>, RangeError> {
    use std::io::{Seek, SeekFrom};
    let mut file = File::open(path).map_err(RangeError::Io)?;
    file.seek(SeekFrom::Start(start)).map_err(RangeError::Io)?;
    let reader = dialect
        .reader(decode_schema(&schema, dialect), READ_BATCH_ROWS)
        .build(BufReader::new(file.take(end - start)))
        .map_err(RangeError::Arrow)?;
    let mut batches = Vec::new();
    for b in reader {
        if stop() {
            return Err(RangeError::Stopped);
        }
        let b = b.and_then(|b| finish_batch(b, &schema, dialect));
        batches.push(b.map_err(RangeError::Arrow)?);
    }
    Ok(batches)
}

/// The schema CSV rows are decoded with: `target`, or all VARCHAR when
/// rows that do not convert are left out (`ignore_errors`).
pub(crate) fn decode_schema(target: &SchemaRef, dialect: &Dialect) -> SchemaRef {
    if !dialect.ignore_errors {
        return target.clone();
    }
    let fields: Vec<Field> = target
        .fields()
        .iter()
        .map(|f| Field::new(f.name(), DataType::Utf8, true))
        .collect();
    Arc::new(Schema::new(fields))
}

/// A decoded batch as `target`: with `ignore_errors`, its VARCHAR values
/// converted and the rows with a value that does not convert left out.
pub(crate) fn finish_batch(
    batch: RecordBatch,
    target: &SchemaRef,
    dialect: &Dialect,
) -> Result<RecordBatch, arrow::error::ArrowError> {
    use arrow::compute::kernels::boolean::{and, not, or};
    use arrow::compute::{filter_record_batch, is_not_null, is_null};
    if !dialect.ignore_errors {
        return Ok(batch);
    }
    let mut columns = Vec::with_capacity(batch.num_columns());
    let mut bad: Option<arrow::array::BooleanArray> = None;
    for (c, f) in batch.columns().iter().zip(target.fields()) {
        if f.data_type() == c.data_type() {
            columns.push(c.clone());
            continue;
        }
        let converted = arrow::compute::cast(c, f.data_type())?;
        let failed = and(&is_not_null(c)?, &is_null(&converted)?)?;
        bad = Some(match bad {
            Some(b) => or(&b, &failed)?,
            None => failed,
        });
        columns.push(converted);
    }
    let converted = RecordBatch::try_new(target.clone(), columns)?;
    match bad {
        Some(bad) => filter_record_batch(&converted, &not(&bad)?),
        None => Ok(converted),
    }
}

/// [`read_parquet`] with the row groups decoded by `runner`'s workers at
/// once; the batches keep file order.
pub(crate) fn read_parquet_parallel(
    path: &Path,
    reads: ParquetReads<'_>,
    runner: &dyn RunParts,
    check: &dyn Fn() -> Result<()>,
) -> Result<TableData> {
    use parquet::arrow::arrow_reader::ArrowReaderMetadata;
    let file = open(path)?;
    let metadata =
        ArrowReaderMetadata::load(&file, Default::default()).map_err(|e| io_error(path, e))?;
    let groups = row_groups(metadata.metadata(), reads.rows);
    if runner.workers() < 2 || groups.len() < 2 {
        return read_parquet(path, reads, check);
    }
    check()?;
    let full = canonical_file_schema(metadata.schema());
    let read = read_columns(metadata.schema(), reads.columns);
    let mask = projection(&read, metadata.metadata().file_metadata().schema_descr());
    let parts: Vec<Part> = groups
        .into_iter()
        .map(|g| {
            let path = path.to_path_buf();
            let metadata = metadata.clone();
            let mask = mask.clone();
            Box::new(move |stop: &dyn Fn() -> bool| {
                let file = File::open(&path).map_err(|e| PartError::Other(io_error(&path, e)))?;
                let mut builder =
                    ParquetRecordBatchReaderBuilder::new_with_metadata(file, metadata.clone())
                        .with_row_groups(vec![g])
                        .with_batch_size(READ_BATCH_ROWS);
                if let Some(mask) = &mask {
                    builder = builder.with_projection(mask.clone());
                }
                let reader = builder
                    .build()
                    .map_err(|e| PartError::Other(io_error(&path, e)))?;
                let schema = reader.schema();
                let mut batches = Vec::new();
                for b in reader {
                    if stop() {
                        return Err(PartError::Stopped);
                    }
                    batches.push(b.map_err(|e| PartError::Arrow(e, 1))?);
                }
                // the workers convert to the stored types too
                normalize(schema, batches)
                    .map(|t| t.batches)
                    .map_err(PartError::Other)
            }) as Part
        })
        .collect();
    let mut batches = Vec::new();
    for result in runner.run(parts)? {
        match result {
            Ok(b) => batches.extend(b),
            Err(PartError::Stopped) => {
                check()?;
                return Err(Error::Cancelled);
            }
            Err(PartError::Other(e)) => return Err(e),
            Err(PartError::Arrow(e, _)) => return Err(io_error(path, e)),
        }
    }
    let schema = Arc::new(Schema::new(
        full.fields()
            .iter()
            .zip(&read)
            .filter(|(_, r)| **r)
            .map(|(f, _)| f.clone())
            .collect::<Vec<_>>(),
    ));
    fill_unread(&full, &read, TableData::new(schema, batches))
}

/// Reads a Parquet file, calling `check` between batches.
pub(crate) fn read_parquet(
    path: &Path,
    reads: ParquetReads<'_>,
    check: &dyn Fn() -> Result<()>,
) -> Result<TableData> {
    let mut builder = ParquetRecordBatchReaderBuilder::try_new(open(path)?)
        .map_err(|e| io_error(path, e))?
        .with_batch_size(READ_BATCH_ROWS);
    let full = canonical_file_schema(builder.schema());
    let read = read_columns(builder.schema(), reads.columns);
    if let Some(mask) = projection(&read, builder.parquet_schema()) {
        builder = builder.with_projection(mask);
    }
    if reads.rows.is_some() {
        let groups = row_groups(builder.metadata(), reads.rows);
        builder = builder.with_row_groups(groups);
    }
    let reader = builder.build().map_err(|e| io_error(path, e))?;
    let schema = reader.schema();
    let mut batches = Vec::new();
    for b in reader {
        check()?;
        batches.push(b.map_err(|e| io_error(path, e))?);
    }
    fill_unread(&full, &read, normalize(schema, batches)?)
}

/// Passes a CSV file's bytes through, watching its quotes: a quoted field
/// still open at the end of the file is an error naming the line and
/// column of its opening quote (Arrow's reader would take the rest of the
/// file as that field).
///
/// As the CSV reader, a quote opens a quoted field only at the start of a
/// field; inside one, a doubled quote is a quote, and the dialect's escape
/// character (if any) escapes the byte after it.
struct QuoteCheck<R> {
    inner: R,
    delimiter: u8,
    /// `None`: no quoting, nothing to check.
    quote: Option<u8>,
    escape: Option<u8>,
    state: QuoteState,
    /// The previous byte opens a field (start of file, `,`, line end).
    at_field_start: bool,
    /// 1-based line of the next byte, and the byte offset of its start.
    line: usize,
    line_start: u64,
    offset: u64,
    /// Where the open quote is (line, column).
    opened: (usize, u64),
    /// Part boundaries wanted: the first line end outside quotes at or
    /// after `next_split` ends a part; the next is wanted `part_bytes`
    /// later.
    next_split: Option<u64>,
    part_bytes: u64,
    /// The parts' starts: byte offset and 1-based line.
    splits: Vec<(u64, usize)>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum QuoteState {
    Outside,
    Inside,
    /// Inside, just after a `"`: it ends the field unless another `"`
    /// follows.
    QuoteSeen,
    /// Inside, just after the escape character.
    Escaped,
}

impl<R: Read> QuoteCheck<R> {
    /// Checks `inner`, whose first byte is on line `line`.
    fn new(inner: R, dialect: &Dialect, line: usize) -> Self {
        Self {
            inner,
            delimiter: dialect.delimiter,
            quote: dialect.quote,
            escape: dialect.escape.filter(|e| Some(*e) != dialect.quote),
            state: QuoteState::Outside,
            at_field_start: true,
            line,
            line_start: 0,
            offset: 0,
            opened: (0, 0),
            next_split: None,
            part_bytes: 0,
            splits: Vec::new(),
        }
    }

    /// Notes the part boundaries in `bytes` (outside quotes, starting at
    /// `buf[at]`); call before counting their lines.
    fn note_splits(&mut self, bytes: &[u8], at: usize) {
        let start = self.offset + at as u64;
        let end = start + bytes.len() as u64;
        while let Some(next) = self.next_split.filter(|n| *n < end) {
            let from = next.saturating_sub(start) as usize;
            let Some(p) = bytes[from..].iter().position(|&b| b == b'\n') else {
                // the line end comes in later bytes
                self.next_split = Some(end);
                return;
            };
            let cut = from + p + 1;
            let line = self.line + bytes[..cut].iter().filter(|&&b| b == b'\n').count();
            let split = start + cut as u64;
            self.splits.push((split, line));
            self.next_split = Some(split + self.part_bytes);
        }
    }

    fn scan(&mut self, buf: &[u8]) {
        // no quoting: a byte text never holds
        let quote = self.quote.unwrap_or(0);
        let mut i = 0;
        while i < buf.len() {
            match self.state {
                QuoteState::Escaped => {
                    if buf[i] == b'\n' {
                        self.count_lines(&buf[i..=i], i);
                    }
                    self.state = QuoteState::Inside;
                    i += 1;
                }
                QuoteState::Outside | QuoteState::QuoteSeen => {
                    if self.state == QuoteState::QuoteSeen {
                        if buf[i] == quote {
                            self.state = QuoteState::Inside;
                            i += 1;
                            continue;
                        }
                        self.state = QuoteState::Outside;
                    }
                    // fast path: up to the next quote
                    let rest = &buf[i..];
                    let end = rest.iter().position(|&b| b == quote).unwrap_or(rest.len());
                    if self.next_split.is_some() {
                        self.note_splits(&rest[..end], i);
                    }
                    self.count_lines(&rest[..end], i);
                    if end > 0 {
                        let last = rest[end - 1];
                        self.at_field_start =
                            last == self.delimiter || last == b'\n' || last == b'\r';
                    }
                    i += end;
                    if i < buf.len() {
                        // a quote
                        if self.at_field_start {
                            self.state = QuoteState::Inside;
                            let at = self.offset + i as u64;
                            self.opened = (self.line, at - self.line_start + 1);
                        }
                        self.at_field_start = false;
                        i += 1;
                    }
                }
                QuoteState::Inside => {
                    let rest = &buf[i..];
                    let end = rest
                        .iter()
                        .position(|&b| b == quote || Some(b) == self.escape)
                        .unwrap_or(rest.len());
                    self.count_lines(&rest[..end], i);
                    i += end;
                    if i < buf.len() {
                        self.state = if buf[i] == quote {
                            QuoteState::QuoteSeen
                        } else {
                            QuoteState::Escaped
                        };
                        i += 1;
                    }
                }
            }
        }
        self.offset += buf.len() as u64;
    }

    /// Counts the line ends of `bytes`, which start at `buf[at]`.
    fn count_lines(&mut self, bytes: &[u8], at: usize) {
        let lines = bytes.iter().filter(|&&b| b == b'\n').count();
        if lines > 0 {
            self.line += lines;
            let last = bytes.iter().rposition(|&b| b == b'\n').expect("a line end");
            self.line_start = self.offset + (at + last + 1) as u64;
        }
    }
}

impl<R: Read> Read for QuoteCheck<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 && matches!(self.state, QuoteState::Inside | QuoteState::Escaped) {
            let (line, column) = self.opened;
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "unterminated quote: the quoted value opened at line {line}, column {column} never ends"
                ),
            ));
        }
        self.scan(&buf[..n]);
        Ok(n)
    }
}

/// The canonical type a column of type `t` is stored as, or an error naming
/// the type when Weir cannot store it.
pub(crate) fn canonical_type(t: &DataType) -> Option<DataType> {
    // the planner's one Arrow-to-SQL type map
    match t {
        DataType::Dictionary(_, value) => canonical_type(value),
        t => Some(weir_planner::types::canonical(t)).filter(weir_planner::types::is_canonical),
    }
}

/// `schema` with canonical types.
pub(crate) fn canonical_schema(schema: &Schema) -> Result<SchemaRef> {
    let fields: Result<Vec<Field>> = schema
        .fields()
        .iter()
        .map(|f| {
            let t = canonical_type(f.data_type()).ok_or_else(|| {
                Error::InvalidInput(format!(
                    "column \"{}\" has type {} which Weir does not support",
                    f.name(),
                    weir_planner::types::sql_type_name(f.data_type())
                ))
            })?;
            Ok(Field::new(f.name(), t, f.is_nullable()))
        })
        .collect();
    Ok(Arc::new(Schema::new(fields?)))
}

/// Casts every column of `batches` to its canonical type.
pub(crate) fn normalize(schema: SchemaRef, batches: Vec<RecordBatch>) -> Result<TableData> {
    let target = canonical_schema(&schema)?;
    if target
        .fields()
        .iter()
        .zip(schema.fields())
        .all(|(a, b)| a.data_type() == b.data_type())
    {
        // only nullability or metadata may differ: rebuild the batches on the target schema
        let batches = batches
            .into_iter()
            .filter(|b| b.num_rows() > 0)
            .map(|b| {
                // a projection may read no column: keep the row count
                let options =
                    arrow::array::RecordBatchOptions::new().with_row_count(Some(b.num_rows()));
                RecordBatch::try_new_with_options(target.clone(), b.columns().to_vec(), &options)
            })
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(TableData::new(target, batches));
    }
    let options = CastOptions {
        safe: false,
        ..Default::default()
    };
    let mut out = Vec::with_capacity(batches.len());
    for batch in batches.into_iter().filter(|b| b.num_rows() > 0) {
        let columns = batch
            .columns()
            .iter()
            .zip(target.fields())
            .map(|(c, f)| {
                if c.data_type() == f.data_type() {
                    Ok(c.clone())
                } else {
                    cast_with_options(c, f.data_type(), &options).map_err(|e| {
                        Error::InvalidInput(format!(
                            "column \"{}\": cannot store {} as {}: {e}",
                            f.name(),
                            c.data_type(),
                            weir_planner::types::sql_type_name(f.data_type())
                        ))
                    })
                }
            })
            .collect::<Result<Vec<ArrayRef>>>()?;
        out.push(RecordBatch::try_new(target.clone(), columns)?);
    }
    Ok(TableData::new(target, out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::io::Write as _;

    /// `,`-separated, `"`-quoted, with a header.
    fn comma() -> Dialect {
        Dialect {
            delimiter: b',',
            quote: Some(b'"'),
            escape: None,
            header: true,
            skip: 0,
            null: None,
            compressed: false,
            ignore_errors: false,
        }
    }

    fn write_csv(rows: usize, tail: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        writeln!(f, "a,b").unwrap();
        for i in 0..rows {
            writeln!(f, "{i},x{i}").unwrap();
        }
        f.write_all(tail.as_bytes()).unwrap();
        f.flush().unwrap();
        f
    }

    #[test]
    fn a_load_checks_for_interrupts_between_batches() {
        // four batches of rows; the check fails at the second
        let f = write_csv(READ_BATCH_ROWS * 3 + 5, "");
        let calls = Cell::new(0);
        let check = || {
            calls.set(calls.get() + 1);
            if calls.get() == 2 {
                Err(Error::Cancelled)
            } else {
                Ok(())
            }
        };
        let schema = sniff_csv(f.path(), &CsvOptions::default()).unwrap().schema;
        let err = read_csv(f.path(), schema, &comma(), &[], &check)
            .err()
            .unwrap();
        assert!(matches!(err, Error::Cancelled), "{err}");
        assert_eq!(calls.get(), 2, "the load went on after the check failed");
    }

    /// Runs parts one after another, in reverse, as if on four workers.
    struct Backwards;

    impl RunParts for Backwards {
        fn workers(&self) -> usize {
            4
        }

        fn run(&self, parts: Vec<Part>) -> Result<Vec<Result<Vec<RecordBatch>, PartError>>> {
            let mut out: Vec<_> = parts.iter().rev().map(|p| p(&|| false)).collect();
            out.reverse();
            Ok(out)
        }
    }

    fn render(batches: &[RecordBatch]) -> String {
        arrow::util::pretty::pretty_format_batches(batches)
            .unwrap()
            .to_string()
    }

    #[test]
    fn parts_cut_at_line_ends_outside_quotes_and_keep_file_order() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        writeln!(f, "a,b").unwrap();
        for i in 0..500 {
            // quoted values with line ends and commas inside
            writeln!(f, "{i},\"x\n{i},\"\"y\"\"\"").unwrap();
        }
        f.flush().unwrap();
        let check = || Ok(());
        let schema = sniff_csv(f.path(), &CsvOptions::default()).unwrap().schema;
        let whole = read_csv(f.path(), schema.clone(), &comma(), &[], &check).unwrap();
        let ranges = csv_parts(f.path(), &comma(), 8, 64, &check).unwrap();
        assert!(ranges.len() >= 4, "{ranges:?}");
        let parts =
            read_csv_in_parts(f.path(), schema, &comma(), &[], &Backwards, &check, 64).unwrap();
        assert_eq!(render(&parts.batches), render(&whole.batches));
        assert_eq!(
            parts.batches.iter().map(|b| b.num_rows()).sum::<usize>(),
            500
        );
    }

    #[test]
    fn parts_widen_and_name_absolute_lines() {
        let f = write_csv(3000, "3.5,x\n");
        let check = || Ok(());
        let schema = sniff_csv(
            f.path(),
            &CsvOptions {
                sample_rows: Some(10),
                ..CsvOptions::default()
            },
        )
        .unwrap()
        .schema;
        let data =
            read_csv_in_parts(f.path(), schema, &comma(), &[], &Backwards, &check, 256).unwrap();
        let types: Vec<&DataType> = data.schema.fields().iter().map(|f| f.data_type()).collect();
        assert_eq!(types, [&DataType::Float64, &DataType::Utf8]);
        assert_eq!(
            data.batches.iter().map(|b| b.num_rows()).sum::<usize>(),
            3001
        );
        // a row with a field too many, on line 2,502
        let f = write_csv(2500, "1,2,3\n4,5\n");
        let sample = CsvOptions {
            sample_rows: Some(100),
            ..CsvOptions::default()
        };
        let schema = sniff_csv(f.path(), &sample).unwrap().schema;
        let err = read_csv_in_parts(f.path(), schema, &comma(), &[], &Backwards, &check, 256)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("for line 2502,"), "{err}");
    }

    #[test]
    fn parts_start_after_skipped_lines_without_a_header() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        writeln!(f, "# junk\n# more junk").unwrap();
        for i in 0..500 {
            writeln!(f, "{i};\"x;{i}\"").unwrap();
        }
        // a row with a field too many, on line 503
        writeln!(f, "1;2;3").unwrap();
        f.flush().unwrap();
        let dialect = Dialect {
            delimiter: b';',
            header: false,
            skip: 2,
            ..comma()
        };
        let schema = Schema::new(vec![
            Field::new("column0", DataType::Int64, true),
            Field::new("column1", DataType::Utf8, true),
        ]);
        let check = || Ok(());
        let ranges = csv_parts(f.path(), &dialect, 8, 64, &check).unwrap();
        assert!(ranges.len() >= 4, "{ranges:?}");
        assert_eq!(ranges[0].2, 3, "the first part starts on line 3");
        for parts in [false, true] {
            let err = if parts {
                read_csv_in_parts(
                    f.path(),
                    schema.clone(),
                    &dialect,
                    &[],
                    &Backwards,
                    &check,
                    64,
                )
            } else {
                read_csv(f.path(), schema.clone(), &dialect, &[], &check)
            }
            .err()
            .unwrap()
            .to_string();
            assert!(err.contains("for line 503,"), "{parts}: {err}");
        }
        // without the bad row: the same rows, in order, either way
        let text = std::fs::read_to_string(f.path()).unwrap();
        let mut g = tempfile::NamedTempFile::new().unwrap();
        g.write_all(text.trim_end_matches("1;2;3\n").as_bytes())
            .unwrap();
        g.flush().unwrap();
        let whole = read_csv(g.path(), schema.clone(), &dialect, &[], &check).unwrap();
        let parts =
            read_csv_in_parts(g.path(), schema, &dialect, &[], &Backwards, &check, 64).unwrap();
        assert_eq!(render(&parts.batches), render(&whole.batches));
        assert_eq!(
            whole.batches.iter().map(|b| b.num_rows()).sum::<usize>(),
            500
        );
        assert!(render(&whole.batches).contains("| 0       | x;0     |"));
    }

    #[test]
    fn quote_check_tracks_lines_and_columns_across_reads() {
        let text = "a,b\n1,\"x\ny\"\n2,\"\"\"\"\n3, \"z\n4,\"open\n5,6\n";
        // one byte per read: every state crosses a buffer boundary
        struct OneByte<'a>(&'a [u8]);
        impl Read for OneByte<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                if self.0.is_empty() || buf.is_empty() {
                    return Ok(0);
                }
                buf[0] = self.0[0];
                self.0 = &self.0[1..];
                Ok(1)
            }
        }
        for whole in [true, false] {
            let mut out = Vec::new();
            let err = if whole {
                QuoteCheck::new(text.as_bytes(), &comma(), 1).read_to_end(&mut out)
            } else {
                QuoteCheck::new(OneByte(text.as_bytes()), &comma(), 1).read_to_end(&mut out)
            }
            .unwrap_err();
            assert!(
                err.to_string().contains("opened at line 6, column 3"),
                "{whole}: {err}"
            );
        }
        let mut out = Vec::new();
        QuoteCheck::new("a\n\"x\"\"\"\n".as_bytes(), &comma(), 1)
            .read_to_end(&mut out)
            .unwrap();
    }
}
