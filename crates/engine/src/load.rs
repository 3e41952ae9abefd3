//! Reading CSV and Parquet files, and normalising Arrow data to the types
//! the engine stores.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;
use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch, RecordBatchReader};
use arrow::compute::{CastOptions, cast_with_options};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use weir_pipeline::TableData;
use weir_planner::FileFormat;

use crate::error::{Error, Result};

/// Rows sampled to infer a CSV file's column types.
const CSV_INFER_ROWS: usize = 20_480;
/// Rows per batch when reading files.
const READ_BATCH_ROWS: usize = 65_536;

fn io_error(path: &Path, e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source: e.into(),
    }
}

fn open(path: &Path) -> Result<File> {
    File::open(path).map_err(|e| io_error(path, e))
}

fn csv_format() -> arrow::csv::reader::Format {
    arrow::csv::reader::Format::default().with_header(true)
}

/// How to read a CSV file: the rows sampled for types (`None`: the
/// default, `Some(usize::MAX)`: all), and column types the user fixed.
pub(crate) type CsvOptions = weir_planner::FileOptions;

/// The Arrow schema a CSV file is read with: types sniffed from a sample
/// of rows, then the user's `types`. Not yet canonical.
pub(crate) fn sniff_csv(path: &Path, options: &CsvOptions) -> Result<Schema> {
    let sample = options.sample_rows.unwrap_or(CSV_INFER_ROWS);
    let (schema, _) = csv_format()
        .infer_schema(QuoteCheck::new(open(path)?), Some(sample))
        .map_err(|e| io_error(path, e))?;
    let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    for (name, t) in &options.types {
        let field = fields
            .iter_mut()
            .find(|f| f.name().eq_ignore_ascii_case(name))
            .ok_or_else(|| {
                let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
                Error::InvalidInput(format!(
                    "read_csv types: \"{}\" has no column \"{name}\" (columns: {})",
                    path.display(),
                    names.join(", ")
                ))
            })?;
        *field = Field::new(field.name(), t.clone(), true);
    }
    Ok(Schema::new(fields))
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
        (FileFormat::Csv, None) => Arc::new(sniff_csv(path, csv)?),
        (FileFormat::Parquet, _) => ParquetRecordBatchReaderBuilder::try_new(open(path)?)
            .map_err(|e| io_error(path, e))?
            .schema()
            .clone(),
    };
    canonical_schema(&raw)
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
    fixed: &[(String, DataType)],
    check: &dyn Fn() -> Result<()>,
) -> Result<CsvData> {
    // each column widens at most twice
    for _ in 0..=2 * schema.fields().len() {
        let reader = arrow::csv::ReaderBuilder::new(Arc::new(schema.clone()))
            .with_header(true)
            .with_batch_size(READ_BATCH_ROWS)
            .build(BufReader::new(QuoteCheck::new(open(path)?)))
            .map_err(|e| io_error(path, e))?;
        let mut batches = Vec::new();
        let mut widened = None;
        for batch in reader {
            check()?;
            match batch {
                Ok(b) => batches.push(b),
                Err(e) => {
                    let wider = failed_column(&e).and_then(|i| {
                        let f = schema.fields().get(i)?;
                        if fixed.iter().any(|(n, _)| f.name().eq_ignore_ascii_case(n)) {
                            return None;
                        }
                        Some((i, widen(f.data_type())?))
                    });
                    match wider {
                        Some(w) => {
                            widened = Some(w);
                            break;
                        }
                        None => return Err(io_error(path, e)),
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
    let rest = &message[message.find(" for column ")? + " for column ".len()..];
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    rest[..digits].parse().ok()
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

/// Reads a Parquet file, calling `check` between batches.
pub(crate) fn read_parquet(path: &Path, check: &dyn Fn() -> Result<()>) -> Result<TableData> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(open(path)?)
        .map_err(|e| io_error(path, e))?
        .with_batch_size(READ_BATCH_ROWS)
        .build()
        .map_err(|e| io_error(path, e))?;
    let schema = reader.schema();
    let mut batches = Vec::new();
    for b in reader {
        check()?;
        batches.push(b.map_err(|e| io_error(path, e))?);
    }
    normalize(schema, batches)
}

/// Reads a whole file into memory, with canonical types (the
/// `register_csv` / `register_parquet` path: no widening report).
pub(crate) fn read_file(path: &Path, format: FileFormat) -> Result<TableData> {
    let check = || Ok(());
    match format {
        FileFormat::Csv => {
            let options = CsvOptions::default();
            let data = read_csv(path, sniff_csv(path, &options)?, &[], &check)?;
            normalize(Arc::new(data.schema), data.batches)
        }
        FileFormat::Parquet => read_parquet(path, &check),
    }
}

/// Passes a CSV file's bytes through, watching its quotes: a quoted field
/// still open at the end of the file is an error naming the line and
/// column of its opening quote (Arrow's reader would take the rest of the
/// file as that field).
///
/// As the CSV reader, a `"` opens a quoted field only at the start of a
/// field; inside one, `""` is a quote.
struct QuoteCheck<R> {
    inner: R,
    state: QuoteState,
    /// The previous byte opens a field (start of file, `,`, line end).
    at_field_start: bool,
    /// 1-based line of the next byte, and the byte offset of its start.
    line: usize,
    line_start: u64,
    offset: u64,
    /// Where the open quote is (line, column).
    opened: (usize, u64),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum QuoteState {
    Outside,
    Inside,
    /// Inside, just after a `"`: it ends the field unless another `"`
    /// follows.
    QuoteSeen,
}

impl<R: Read> QuoteCheck<R> {
    fn new(inner: R) -> Self {
        Self {
            inner,
            state: QuoteState::Outside,
            at_field_start: true,
            line: 1,
            line_start: 0,
            offset: 0,
            opened: (0, 0),
        }
    }

    fn scan(&mut self, buf: &[u8]) {
        let mut i = 0;
        while i < buf.len() {
            match self.state {
                QuoteState::Outside | QuoteState::QuoteSeen => {
                    if self.state == QuoteState::QuoteSeen {
                        if buf[i] == b'"' {
                            self.state = QuoteState::Inside;
                            i += 1;
                            continue;
                        }
                        self.state = QuoteState::Outside;
                    }
                    // fast path: up to the next quote
                    let rest = &buf[i..];
                    let end = rest.iter().position(|&b| b == b'"').unwrap_or(rest.len());
                    self.count_lines(&rest[..end], i);
                    if end > 0 {
                        self.at_field_start = matches!(rest[end - 1], b',' | b'\n' | b'\r');
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
                    let end = rest.iter().position(|&b| b == b'"').unwrap_or(rest.len());
                    self.count_lines(&rest[..end], i);
                    i += end;
                    if i < buf.len() {
                        self.state = QuoteState::QuoteSeen;
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
        if n == 0 && self.state == QuoteState::Inside {
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
    use DataType::*;
    Some(match t {
        Null => Null,
        Boolean => Boolean,
        Int8 | Int16 | Int32 | UInt8 | UInt16 => Int32,
        Int64 | UInt32 | UInt64 => Int64,
        Float16 | Float32 | Float64 => Float64,
        Decimal32(p, s) | Decimal64(p, s) | Decimal128(p, s) => Decimal128(*p, *s),
        Utf8 | LargeUtf8 | Utf8View => Utf8,
        Date32 | Date64 => Date32,
        Timestamp(_, _) => Timestamp(TimeUnit::Microsecond, None),
        Dictionary(_, value) => return canonical_type(value),
        _ => return None,
    })
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
                    f.data_type()
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
            .map(|b| RecordBatch::try_new(target.clone(), b.columns().to_vec()))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(TableData {
            schema: target,
            batches,
        });
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
    Ok(TableData {
        schema: target,
        batches: out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::io::Write as _;

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
        let schema = sniff_csv(f.path(), &CsvOptions::default()).unwrap();
        let err = read_csv(f.path(), schema, &[], &check).err().unwrap();
        assert!(matches!(err, Error::Cancelled), "{err}");
        assert_eq!(calls.get(), 2, "the load went on after the check failed");
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
                QuoteCheck::new(text.as_bytes()).read_to_end(&mut out)
            } else {
                QuoteCheck::new(OneByte(text.as_bytes())).read_to_end(&mut out)
            }
            .unwrap_err();
            assert!(
                err.to_string().contains("opened at line 6, column 3"),
                "{whole}: {err}"
            );
        }
        let mut out = Vec::new();
        QuoteCheck::new("a\n\"x\"\"\"\n".as_bytes())
            .read_to_end(&mut out)
            .unwrap();
    }
}
