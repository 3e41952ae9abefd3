//! The CSV sniffer, as DuckDB's: the dialect (delimiter, quote, escape),
//! whether the first row is a header, and the column types, from a sample
//! taken at the start, the middle and the end of the file.

use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use arrow::csv::reader::Format;
use arrow::datatypes::{DataType, Field, Schema};

use crate::error::{Error, Result};
use crate::load::{CsvOptions, io_error, open};

/// Rows sampled to infer a CSV file's column types, by default.
pub(crate) const SAMPLE_ROWS: usize = 20_480;
/// Bytes read at each place a large file is sampled.
const SAMPLE_CHUNK: u64 = 512 << 10;
/// Lines looked at to choose the delimiter.
const DIALECT_LINES: usize = 100;
/// The delimiters tried, in DuckDB's order of preference.
const DELIMITERS: [u8; 4] = [b',', b';', b'\t', b'|'];

/// How a CSV file is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Dialect {
    pub(crate) delimiter: u8,
    /// `None`: no quoting.
    pub(crate) quote: Option<u8>,
    /// Escape character inside quotes; `None`: the quote doubled.
    pub(crate) escape: Option<u8>,
    /// The first row (after `skip`) names the columns.
    pub(crate) header: bool,
    /// Lines skipped before the header.
    pub(crate) skip: usize,
    /// Text read as NULL instead of the empty field (then a value, as in
    /// DuckDB).
    pub(crate) null: Option<String>,
    /// Compressed (`.gz`, `.zst`): read as one stream.
    pub(crate) compressed: bool,
    /// Rows that do not parse are left out.
    pub(crate) ignore_errors: bool,
}

impl Dialect {
    /// Lines before the first data row.
    pub(crate) fn lines_before_data(&self) -> usize {
        self.skip + usize::from(self.header)
    }

    /// Arrow's CSV format for the data rows (the header skipped already).
    pub(crate) fn format(&self) -> Format {
        let mut f = Format::default()
            .with_header(false)
            .with_delimiter(self.delimiter)
            // no quoting: a byte text files do not hold
            .with_quote(self.quote.unwrap_or(0));
        if let Some(e) = self.escape {
            f = f.with_escape(e);
        }
        if let Some(r) = self.null_regex() {
            f = f.with_null_regex(r);
        }
        f
    }

    /// Arrow's CSV reader over the data rows, with `schema`.
    pub(crate) fn reader(
        &self,
        schema: arrow::datatypes::SchemaRef,
        batch_rows: usize,
    ) -> arrow::csv::ReaderBuilder {
        let mut b = arrow::csv::ReaderBuilder::new(schema)
            .with_header(false)
            .with_batch_size(batch_rows)
            .with_delimiter(self.delimiter)
            .with_quote(self.quote.unwrap_or(0));
        if let Some(e) = self.escape {
            b = b.with_escape(e);
        }
        if let Some(r) = self.null_regex() {
            b = b.with_null_regex(r);
        }
        b
    }

    fn null_regex(&self) -> Option<regex::Regex> {
        let null = self.null.as_ref()?;
        Some(
            regex::Regex::new(&format!("^{}$", regex::escape(null)))
                .expect("an escaped string is a valid regex"),
        )
    }
}

/// How a file is compressed, by its extension (as DuckDB tells it).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Compression {
    None,
    Gzip,
    Zstd,
}

fn compression(path: &Path) -> Compression {
    let e = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    if e.eq_ignore_ascii_case("gz") || e.eq_ignore_ascii_case("gzip") {
        Compression::Gzip
    } else if e.eq_ignore_ascii_case("zst") || e.eq_ignore_ascii_case("zstd") {
        Compression::Zstd
    } else {
        Compression::None
    }
}

/// Whether `path` is compressed (by its extension).
pub(crate) fn is_compressed(path: &Path) -> bool {
    compression(path) != Compression::None
}

/// The bytes of a CSV file, decompressed.
pub(crate) fn open_text(path: &Path) -> Result<Box<dyn Read + Send>> {
    let file = BufReader::new(open(path)?);
    Ok(match compression(path) {
        Compression::None => Box::new(file),
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(file)),
        Compression::Zstd => Box::new(ZstdFrames {
            source: Some(file),
            frame: None,
        }),
    })
}

/// The frames of a zstd stream, one after another.
struct ZstdFrames<R: Read> {
    /// The stream between frames.
    source: Option<R>,
    frame: Option<ruzstd::decoding::StreamingDecoder<R, ruzstd::decoding::FrameDecoder>>,
}

impl<R: BufRead> Read for ZstdFrames<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            if let Some(frame) = &mut self.frame {
                let n = frame.read(buf)?;
                if n > 0 || buf.is_empty() {
                    return Ok(n);
                }
                let frame = self.frame.take().expect("a frame");
                self.source = Some(frame.into_inner());
            }
            let Some(mut source) = self.source.take() else {
                return Ok(0);
            };
            if source.fill_buf()?.is_empty() {
                return Ok(0);
            }
            let frame = ruzstd::decoding::StreamingDecoder::new(source).map_err(|e| {
                std::io::Error::new(std::io::ErrorKind::InvalidData, format!("zstd: {e}"))
            })?;
            self.frame = Some(frame);
        }
    }
}

/// Skips `n` lines of `r`, returning the bytes skipped.
pub(crate) fn skip_lines(r: &mut impl BufRead, n: usize) -> std::io::Result<u64> {
    let mut skipped = 0;
    let mut line = Vec::new();
    for _ in 0..n {
        line.clear();
        let read = r.read_until(b'\n', &mut line)?;
        if read == 0 {
            break;
        }
        skipped += read as u64;
    }
    Ok(skipped)
}

/// What the sniffer found: the dialect and the Arrow schema (not yet
/// canonical) the file is read with.
pub(crate) struct Sniffed {
    pub(crate) dialect: Dialect,
    pub(crate) schema: Schema,
}

/// A sample of a file's lines, after `skip`: its start, then (for a large
/// plain file) whole lines from its middle and its end.
struct Sample {
    bytes: Vec<u8>,
    /// Records to infer types from (`None`: all of `bytes`).
    rows: Option<usize>,
    /// The length of the file's start in `bytes`.
    head_len: usize,
}

fn sample(path: &Path, skip: usize, rows: usize) -> Result<Sample> {
    let err = |e| io_error(path, e);
    let mut text = BufReader::new(open_text(path)?);
    let start = skip_lines(&mut text, skip).map_err(err)?;
    let len = std::fs::metadata(path).map_err(err)?.len();
    let plain = !is_compressed(path);
    if rows == usize::MAX || (plain && len.saturating_sub(start) <= 3 * SAMPLE_CHUNK) {
        // all of a small file (the sample's first `rows` rows are read)
        let mut bytes = Vec::new();
        let limit = if plain || rows == usize::MAX {
            u64::MAX
        } else {
            3 * SAMPLE_CHUNK
        };
        text.take(limit).read_to_end(&mut bytes).map_err(err)?;
        if limit != u64::MAX {
            cut_at_last_line(&mut bytes);
        }
        return Ok(Sample {
            head_len: bytes.len(),
            bytes,
            rows: (rows != usize::MAX).then_some(rows),
        });
    }
    let mut bytes = Vec::new();
    (&mut text)
        .take(SAMPLE_CHUNK)
        .read_to_end(&mut bytes)
        .map_err(err)?;
    cut_at_last_line(&mut bytes);
    keep_lines(&mut bytes, rows.div_ceil(3) + 1);
    let head_len = bytes.len();
    if plain {
        // whole lines from the middle and the end
        let mut file = open(path)?;
        for (at, end) in [
            (start + (len - start) / 2, false),
            (len - SAMPLE_CHUNK, true),
        ] {
            file.seek(SeekFrom::Start(at)).map_err(err)?;
            let mut chunk = Vec::new();
            (&mut file)
                .take(SAMPLE_CHUNK)
                .read_to_end(&mut chunk)
                .map_err(err)?;
            let Some(first) = chunk.iter().position(|&b| b == b'\n') else {
                continue;
            };
            let mut lines = chunk.split_off(first + 1);
            cut_at_last_line(&mut lines);
            if end {
                keep_last_lines(&mut lines, rows / 3);
            } else {
                keep_lines(&mut lines, rows / 3);
            }
            bytes.extend_from_slice(&lines);
        }
    }
    Ok(Sample {
        bytes,
        rows: None,
        head_len,
    })
}

fn cut_at_last_line(bytes: &mut Vec<u8>) {
    match bytes.iter().rposition(|&b| b == b'\n') {
        Some(last) => bytes.truncate(last + 1),
        None => bytes.clear(),
    }
}

/// Keeps the last `lines` lines of `bytes` (which ends with a line end).
fn keep_last_lines(bytes: &mut Vec<u8>, lines: usize) {
    if let Some((at, _)) = bytes
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, b)| **b == b'\n')
        .nth(lines)
    {
        bytes.drain(..=at);
    }
}

/// Keeps the first `lines` lines of `bytes`.
fn keep_lines(bytes: &mut Vec<u8>, lines: usize) {
    if let Some((end, _)) = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(lines.saturating_sub(1))
    {
        bytes.truncate(end + 1);
    }
}

/// The fields of the first `max` records of `bytes` split by `delimiter`
/// and `quote` (quotes removed, `""` kept as one).
fn records(bytes: &[u8], delimiter: u8, quote: Option<u8>, max: usize) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut record = Vec::new();
    let mut field = Vec::new();
    let mut quoted = false;
    let mut i = 0;
    while i < bytes.len() && out.len() < max {
        let b = bytes[i];
        if quoted {
            if Some(b) == quote {
                if bytes.get(i + 1) == Some(&b) {
                    field.push(b);
                    i += 1;
                } else {
                    quoted = false;
                }
            } else {
                field.push(b);
            }
        } else if Some(b) == quote && field.is_empty() {
            quoted = true;
        } else if b == delimiter {
            record.push(String::from_utf8_lossy(&field).into_owned());
            field.clear();
        } else if b == b'\n' {
            if field.last() == Some(&b'\r') {
                field.pop();
            }
            record.push(String::from_utf8_lossy(&field).into_owned());
            field.clear();
            out.push(std::mem::take(&mut record));
        } else {
            field.push(b);
        }
        i += 1;
    }
    if out.len() < max && (!field.is_empty() || !record.is_empty()) {
        record.push(String::from_utf8_lossy(&field).into_owned());
        out.push(record);
    }
    out
}

/// The delimiter whose first lines split most consistently, then into
/// the most columns (DuckDB's rule); `,` when none splits a line.
fn sniff_delimiter(bytes: &[u8], quote: Option<u8>) -> u8 {
    let mut best: Option<((bool, usize, usize), u8)> = None;
    for d in DELIMITERS {
        let recs = records(bytes, d, quote, DIALECT_LINES);
        let Some(first) = recs.first() else { continue };
        let columns = first.len();
        if columns < 2 {
            continue;
        }
        let consistent = recs.iter().filter(|r| r.len() == columns).count();
        let score = (consistent == recs.len(), consistent, columns);
        if best.as_ref().is_none_or(|(s, _)| score > *s) {
            best = Some((score, d));
        }
    }
    best.map_or(b',', |(_, d)| d)
}

/// DuckDB's generated column names: `column0`, ... (`column00`, ... when
/// there are more than ten).
fn generated_name(i: usize, count: usize) -> String {
    let width = count.saturating_sub(1).to_string().len();
    format!("column{i:0width$}")
}

/// Sniffs `path`: the options given win, the rest is detected.
pub(crate) fn sniff(path: &Path, options: &CsvOptions) -> Result<Sniffed> {
    let mut dialect = Dialect {
        delimiter: options.delimiter.unwrap_or(b','),
        quote: options.quote.unwrap_or(Some(b'"')),
        escape: options.escape.unwrap_or(None),
        header: options.header.unwrap_or(false),
        skip: options.skip,
        null: options.null_string.clone(),
        compressed: is_compressed(path),
        ignore_errors: options.ignore_errors,
    };
    if options.no_auto_detect {
        let columns = options.columns.as_ref().ok_or_else(|| {
            Error::InvalidInput("read_csv without auto_detect needs \"columns\"".into())
        })?;
        return Ok(Sniffed {
            dialect,
            schema: columns_schema(columns),
        });
    }
    let rows = options.sample_rows.unwrap_or(SAMPLE_ROWS);
    let sample = sample(path, options.skip, rows)?;
    if options.delimiter.is_none() {
        dialect.delimiter = sniff_delimiter(&sample.bytes, dialect.quote);
    }
    let first = records(&sample.bytes, dialect.delimiter, dialect.quote, 1)
        .pop()
        .unwrap_or_default();
    // the first record's length, to drop it from the sample
    let rest = after_first_record(&sample.bytes, dialect.quote);
    let format = dialect.format();
    let infer = |bytes: &[u8], rows: Option<usize>| -> Result<Schema> {
        let (schema, _) = format
            .infer_schema(bytes, rows)
            .map_err(|e| io_error(path, e))?;
        Ok(schema)
    };
    let typed: Vec<DataType> = match &options.columns {
        Some(columns) => columns.iter().map(|(_, t)| t.clone()).collect(),
        None => {
            let rows = sample.rows.map(|r| r.saturating_sub(1));
            let inferred = if rest.is_empty() {
                // one row: it is the header unless a value in it is typed
                infer(&sample.bytes, Some(1))?
            } else {
                infer(rest, rows).or_else(|_| {
                    // a sampled piece cut inside quotes: the start alone
                    let head = &sample.bytes[..sample.head_len];
                    infer(after_first_record(head, dialect.quote), rows)
                })?
            };
            inferred
                .fields()
                .iter()
                .map(|f| match f.data_type() {
                    DataType::Null => DataType::Utf8,
                    t => t.clone(),
                })
                .collect()
        }
    };
    if options.header.is_none() {
        dialect.header = if rest.is_empty() && options.columns.is_none() {
            // a single row: data if any value in it is typed
            typed.iter().all(|t| *t == DataType::Utf8)
        } else {
            looks_like_header(&first, &typed, &dialect)
        };
    }
    // the first row is data: its values count for the types too
    let typed = if !dialect.header && options.columns.is_none() && !rest.is_empty() {
        let whole = infer(&sample.bytes, sample.rows).or_else(|_| {
            let head = &sample.bytes[..sample.head_len];
            infer(head, sample.rows)
        })?;
        whole
            .fields()
            .iter()
            .map(|f| match f.data_type() {
                DataType::Null => DataType::Utf8,
                t => t.clone(),
            })
            .collect()
    } else {
        typed
    };
    let schema = match &options.columns {
        Some(columns) => columns_schema(columns),
        None => {
            // an empty file has one VARCHAR column, as in DuckDB
            let count = typed.len().max(first.len()).max(1);
            let mut types = typed;
            types.resize(count, DataType::Utf8);
            let names: Vec<String> = (0..count)
                .map(|i| {
                    let name = first.get(i).map_or("", |s| s.as_str());
                    if dialect.header && !name.is_empty() {
                        name.to_string()
                    } else {
                        generated_name(i, count)
                    }
                })
                .collect();
            Schema::new(
                names
                    .into_iter()
                    .zip(types)
                    .map(|(n, t)| Field::new(n, t, true))
                    .collect::<Vec<_>>(),
            )
        }
    };
    let schema = apply_types(path, schema, &options.types)?;
    Ok(Sniffed { dialect, schema })
}

/// `bytes` after the first record (quotes respected).
fn after_first_record(bytes: &[u8], quote: Option<u8>) -> &[u8] {
    let mut quoted = false;
    for (i, &b) in bytes.iter().enumerate() {
        if Some(b) == quote {
            quoted = !quoted;
        } else if b == b'\n' && !quoted {
            return &bytes[i + 1..];
        }
    }
    &[]
}

/// DuckDB's rule: the first row is a header when the sample's columns are
/// all VARCHAR, or when no typed column's first value has that column's
/// kind of value.
fn looks_like_header(first: &[String], typed: &[DataType], dialect: &Dialect) -> bool {
    if typed.iter().all(|t| *t == DataType::Utf8) {
        return true;
    }
    typed.iter().enumerate().all(|(i, t)| {
        if *t == DataType::Utf8 {
            return true;
        }
        let Some(value) = first.get(i) else {
            return false;
        };
        if value.is_empty() || dialect.null.as_deref() == Some(value) {
            return false;
        }
        let (schema, _) = match Format::default()
            .with_header(false)
            .infer_schema(format!("{value}\n").as_bytes(), Some(1))
        {
            Ok(s) => s,
            Err(_) => return true,
        };
        matches!(schema.field(0).data_type(), DataType::Utf8 | DataType::Null)
    })
}

fn columns_schema(columns: &[(String, DataType)]) -> Schema {
    Schema::new(
        columns
            .iter()
            .map(|(n, t)| Field::new(n, t.clone(), true))
            .collect::<Vec<_>>(),
    )
}

/// `schema` with the user's `types` (by column name) applied.
fn apply_types(path: &Path, schema: Schema, types: &[(String, DataType)]) -> Result<Schema> {
    let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    for (name, t) in types {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_split_on_the_delimiter_outside_quotes() {
        let r = records(b"a;\"b;c\";\"d\"\"e\"\r\n1;2;3\n", b';', Some(b'"'), 10);
        assert_eq!(r, [vec!["a", "b;c", "d\"e"], vec!["1", "2", "3"]]);
    }

    #[test]
    fn the_delimiter_is_the_most_consistent_then_the_widest() {
        assert_eq!(
            sniff_delimiter(b"a;b;c\n1;2,5;3\n4;5;6\n", Some(b'"')),
            b';'
        );
        assert_eq!(sniff_delimiter(b"a\tb\n1\t2\n", Some(b'"')), b'\t');
        assert_eq!(sniff_delimiter(b"a|b,c\n1|2,3\n", Some(b'"')), b',');
        assert_eq!(sniff_delimiter(b"one\ntwo\n", Some(b'"')), b',');
    }

    #[test]
    fn generated_names_are_padded_as_duckdb() {
        assert_eq!(generated_name(0, 2), "column0");
        assert_eq!(generated_name(3, 11), "column03");
    }
}
