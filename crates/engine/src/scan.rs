//! File scans the pipeline's lanes read as they pull them: a Parquet file
//! part by row group, a CSV file by byte range, each decoded by the lane
//! that pulls it, so a query holds only the parts in flight and a LIMIT
//! that has its rows leaves the rest of the file unread.
//!
//! A Parquet row group whose min/max statistics rule out a filter conjunct
//! right above the scan (a column compared with a constant, `IN`, `IS
//! [NOT] NULL`) is never read; a query that reads no column of the file
//! (`count(*)`) takes its row counts from the metadata.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arrow::array::{
    Array, ArrayRef, BooleanArray, RecordBatch, RecordBatchOptions, RecordBatchReader,
};
use arrow::compute::kernels::cmp;
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ParquetRecordBatchReaderBuilder};
use weir_pipeline::{PartSource, TableData};
use weir_planner::{BinaryOp, Expr, FileOptions, ScalarValue};

use crate::csv_sniff::{self, Dialect};
use crate::error::{Error, Result};
use crate::files::{self, Extra, Hive};
use crate::load::{self, READ_BATCH_ROWS};

/// Bytes of a CSV part read by one lane.
const CSV_PART_BYTES: u64 = 8 << 20;

/// Bytes of a large CSV file's first part: the parts double from it up to
/// [`CSV_PART_BYTES`], so a LIMIT that the first rows satisfy decodes
/// little of the file.
const CSV_FIRST_PART_BYTES: u64 = 256 << 10;

/// CSV files up to this size are cut by a first pass that follows quotes
/// (exact line numbers in errors, an unterminated quote reported); larger
/// ones are cut at line starts found from fixed offsets, unless their
/// start holds a quoted line break.
const CSV_FIRST_PASS_BYTES: u64 = 16 << 20;

/// Bytes at a CSV file's start looked at for a quoted line break.
const CSV_QUOTE_SAMPLE: usize = 1 << 20;

/// What a scan read, for EXPLAIN ANALYZE.
#[derive(Debug, Default)]
pub(crate) struct ScanStats {
    /// Row groups of the files read (Parquet).
    pub(crate) row_groups: u64,
    /// Row groups left out by their statistics.
    pub(crate) skipped: u64,
    /// Parts read.
    pub(crate) parts_read: AtomicU64,
    /// Rows read.
    pub(crate) rows: AtomicU64,
    /// Nanoseconds spent reading, summed over the lanes.
    pub(crate) nanos: AtomicU64,
}

/// One file of a scan.
struct ScanFile {
    path: String,
    /// Its index among the partitions' files.
    hive_row: usize,
    format: FileFormat,
}

enum FileFormat {
    Parquet {
        metadata: ArrowReaderMetadata,
        /// Which columns are read (the others are NULLs no query reads).
        read: Vec<bool>,
        /// The file's columns, canonical.
        full: SchemaRef,
    },
    Csv {
        dialect: Dialect,
    },
}

/// One part of a scan.
#[derive(Clone, Copy, Debug)]
enum Part {
    /// Row group `group` of a Parquet file, of `rows` rows.
    RowGroup {
        file: usize,
        group: usize,
        rows: usize,
    },
    /// The CSV rows in bytes `start..end`, their first on line `line`.
    CsvExact {
        file: usize,
        start: u64,
        end: u64,
        line: usize,
    },
    /// The CSV rows starting in bytes `from..to` (the lane finds the line
    /// starts).
    CsvRange { file: usize, from: u64, to: u64 },
    /// A compressed CSV file, one stream.
    CsvStream { file: usize },
}

/// A CSV scan's schema as decoded (Arrow, before canonical types).
struct CsvPlan {
    /// The schema every file of the scan is decoded with.
    raw: Schema,
    /// Columns whose type the user fixed (never widened).
    fixed: Vec<(String, DataType)>,
}

/// A file scan (one file, a glob or a list) read part by part.
pub(crate) struct FileScan {
    schema: SchemaRef,
    /// The files' own columns (canonical; unread ones nullable).
    base: SchemaRef,
    files: Vec<ScanFile>,
    parts: Vec<Part>,
    filename: bool,
    hive: Option<Hive>,
    /// Columns read (of `base`; `None`: all).
    needed: Option<Vec<usize>>,
    csv: Option<CsvPlan>,
    estimated_rows: usize,
    pub(crate) stats: ScanStats,
    /// A CSV value did not fit its column: the schema to plan again with.
    pub(crate) widened: Mutex<Option<Schema>>,
}

/// What the resolver knows of a scan's use in the plan.
pub(crate) struct ScanUse<'a> {
    /// Conjuncts of the filter right above the scan.
    pub(crate) filters: &'a [Expr],
    /// Columns the plan reads (`None`: all).
    pub(crate) columns: Option<&'a [usize]>,
    /// The rows the plan reads, from the start (a LIMIT with no filter).
    pub(crate) rows: Option<usize>,
}

impl FileScan {
    /// A Parquet scan of `paths` (`read` of `all` files after partition
    /// pruning), with the scan's schema `schema`.
    pub(crate) fn parquet(
        paths: &[String],
        read_files: &[usize],
        options: &FileOptions,
        hive: Option<Hive>,
        usage: &ScanUse<'_>,
    ) -> Result<Self> {
        let mut files = Vec::new();
        let mut parts = Vec::new();
        let mut stats = ScanStats::default();
        let mut rows_planned = 0usize;
        let mut base: Option<SchemaRef> = None;
        for &i in read_files {
            if usage.rows.is_some_and(|n| rows_planned >= n) {
                // a LIMIT has its rows: the other files stay unopened
                break;
            }
            let path = &paths[i];
            let file = load::open(Path::new(path))?;
            let metadata = ArrowReaderMetadata::load(&file, Default::default())
                .map_err(|e| load::io_error(Path::new(path), e))?;
            let full = load::canonical_file_schema(metadata.schema());
            let read = load::read_columns(metadata.schema(), usage.columns);
            let this = unread_nullable(&full, &read);
            match &base {
                None => base = Some(this.clone()),
                Some(b) => files::same_columns(&paths[read_files[0]], b, path, &this)?,
            }
            let keep = prune_row_groups(&metadata, &full, usage.filters);
            let n = files.len();
            for (g, group) in metadata.metadata().row_groups().iter().enumerate() {
                stats.row_groups += 1;
                if !keep[g] {
                    stats.skipped += 1;
                    continue;
                }
                if usage.rows.is_some_and(|n| rows_planned >= n) {
                    break;
                }
                let rows = usize::try_from(group.num_rows()).unwrap_or(0);
                rows_planned = rows_planned.saturating_add(rows);
                parts.push(Part::RowGroup {
                    file: n,
                    group: g,
                    rows,
                });
            }
            files.push(ScanFile {
                path: path.clone(),
                hive_row: i,
                format: FileFormat::Parquet {
                    metadata,
                    read,
                    full,
                },
            });
        }
        let base = base.ok_or_else(|| Error::InvalidInput("no files to read".into()))?;
        let schema = files::with_extra_columns(&base, options.filename, hive.as_ref());
        Ok(FileScan {
            schema,
            base,
            files,
            parts,
            filename: options.filename,
            hive,
            needed: None,
            csv: None,
            estimated_rows: rows_planned,
            stats,
            widened: Mutex::new(None),
        })
    }

    /// A CSV scan of `paths` (`read_files` of them), decoded with `raw`
    /// (the first file's sniffed or widened schema) and each file's
    /// dialect.
    pub(crate) fn csv(
        paths: &[String],
        read_files: &[usize],
        options: &FileOptions,
        hive: Option<Hive>,
        raw: Schema,
        usage: &ScanUse<'_>,
    ) -> Result<Self> {
        let mut files = Vec::new();
        let mut parts = Vec::new();
        let mut bytes = 0u64;
        for (n, &i) in read_files.iter().enumerate() {
            let path = &paths[i];
            let dialect = load::sniff_csv(Path::new(path), options)?.dialect;
            let len = std::fs::metadata(path)
                .map_err(|e| load::io_error(Path::new(path), e))?
                .len();
            bytes += len;
            csv_parts(path, n, &dialect, len, &mut parts)?;
            files.push(ScanFile {
                path: path.clone(),
                hive_row: i,
                format: FileFormat::Csv { dialect },
            });
        }
        let full = load::canonical_schema(&raw)?;
        let read: Vec<bool> = (0..full.fields().len())
            .map(|i| usage.columns.is_none_or(|c| c.contains(&i)))
            .collect();
        let base = unread_nullable(&full, &read);
        let schema = files::with_extra_columns(&base, options.filename, hive.as_ref());
        let fixed = options
            .columns
            .as_deref()
            .unwrap_or(&options.types)
            .to_vec();
        Ok(FileScan {
            schema,
            base,
            files,
            parts,
            filename: options.filename,
            hive,
            // the file's own columns (not `filename` or partitions)
            needed: usage.columns.map(|c| {
                c.iter()
                    .copied()
                    .filter(|&i| i < raw.fields().len())
                    .collect()
            }),
            csv: Some(CsvPlan { raw, fixed }),
            // about 64 bytes a row: for costs only
            estimated_rows: usize::try_from(bytes / 64).unwrap_or(usize::MAX),
            stats: ScanStats::default(),
            widened: Mutex::new(None),
        })
    }

    /// The EXPLAIN ANALYZE line's name: the files read of all, and for
    /// Parquet the row groups read of all and those the statistics ruled
    /// out (a LIMIT may leave others unread).
    pub(crate) fn describe(&self, path: &str, files_total: usize) -> String {
        let mut notes = Vec::new();
        if files_total > 1 {
            notes.push(if self.files.len() == files_total {
                format!("{files_total} files")
            } else {
                format!("{} of {files_total} files", self.files.len())
            });
        }
        if self.csv.is_none() {
            let read = self.stats.parts_read.load(Ordering::Relaxed);
            notes.push(format!(
                "{read} of {} row groups, {} skipped",
                self.stats.row_groups, self.stats.skipped
            ));
        }
        if notes.is_empty() {
            format!("read '{path}'")
        } else {
            format!("read '{path}' ({})", notes.join(", "))
        }
    }

    /// Parts read.
    pub(crate) fn parts_read(&self) -> u64 {
        self.stats.parts_read.load(Ordering::Relaxed)
    }

    /// Time spent reading, summed over the lanes.
    pub(crate) fn time(&self) -> Duration {
        Duration::from_nanos(self.stats.nanos.load(Ordering::Relaxed))
    }

    fn read_part(&self, part: Part) -> Result<Vec<RecordBatch>> {
        let (file, batches) = match part {
            Part::RowGroup { file, group, rows } => (file, self.read_row_group(file, group, rows)?),
            Part::CsvExact {
                file,
                start,
                end,
                line,
            } => (file, self.read_csv(file, start, end, Some(line))?),
            Part::CsvRange { file, from, to } => {
                let path = Path::new(&self.files[file].path);
                let mut f = load::open(path)?;
                let start = line_start(&mut f, from).map_err(|e| load::io_error(path, e))?;
                let end = line_start(&mut f, to).map_err(|e| load::io_error(path, e))?;
                if start >= end {
                    return Ok(Vec::new());
                }
                (file, self.read_csv(file, start, end, None)?)
            }
            Part::CsvStream { file } => (file, self.read_csv_stream(file)?),
        };
        let f = &self.files[file];
        let extra = Extra {
            first: &self.files[0].path,
            file: &f.path,
            filename: self.filename,
            hive: self.hive.as_ref().map(|h| (h, f.hive_row)),
        };
        batches
            .iter()
            .filter(|b| b.num_rows() > 0)
            .map(|b| files::conform(&self.schema, &self.base, b, &extra))
            .collect()
    }

    /// Row group `group` of Parquet file `file`: its columns the query
    /// reads, the others NULLs; none read, only its row count.
    fn read_row_group(&self, file: usize, group: usize, rows: usize) -> Result<Vec<RecordBatch>> {
        let f = &self.files[file];
        let FileFormat::Parquet {
            metadata,
            read,
            full,
        } = &f.format
        else {
            return Err(Error::InvalidInput("a row group of a CSV file".into()));
        };
        let path = Path::new(&f.path);
        let table = if read.iter().any(|r| *r) {
            let mut builder = ParquetRecordBatchReaderBuilder::new_with_metadata(
                load::open(path)?,
                metadata.clone(),
            )
            .with_row_groups(vec![group])
            .with_batch_size(READ_BATCH_ROWS);
            if let Some(mask) =
                load::projection(read, metadata.metadata().file_metadata().schema_descr())
            {
                builder = builder.with_projection(mask);
            }
            let reader = builder.build().map_err(|e| load::io_error(path, e))?;
            let schema = reader.schema();
            let batches = reader
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| load::io_error(path, e))?;
            load::normalize(schema, batches)?
        } else {
            // the metadata's row count is all the query needs
            let empty = Arc::new(Schema::empty());
            let mut batches = Vec::new();
            let mut left = rows;
            while left > 0 {
                let n = left.min(READ_BATCH_ROWS);
                let options = RecordBatchOptions::new().with_row_count(Some(n));
                batches.push(RecordBatch::try_new_with_options(
                    empty.clone(),
                    vec![],
                    &options,
                )?);
                left -= n;
            }
            TableData::new(empty, batches)
        };
        Ok(load::fill_unread(full, read, table)?.batches)
    }

    /// The CSV rows of file `file` in bytes `start..end`; `line`: the file
    /// line of the first, when known (else counted on an error).
    fn read_csv(
        &self,
        file: usize,
        start: u64,
        end: u64,
        line: Option<usize>,
    ) -> Result<Vec<RecordBatch>> {
        let path = Path::new(&self.files[file].path);
        let open = || -> Result<Box<dyn Read>> {
            let mut reader = load::open(path)?;
            reader
                .seek(SeekFrom::Start(start))
                .map_err(|e| load::io_error(path, e))?;
            Ok(Box::new(BufReader::new(reader.take(end - start))))
        };
        self.decode_csv(file, &open, &|| match line {
            Some(l) => Ok(l),
            None => lines_before(path, start).map(|n| n + 1),
        })
    }

    /// A compressed CSV file, decoded as one stream.
    fn read_csv_stream(&self, file: usize) -> Result<Vec<RecordBatch>> {
        let f = &self.files[file];
        let FileFormat::Csv { dialect } = &f.format else {
            return Err(Error::InvalidInput("a CSV part of a Parquet file".into()));
        };
        let path = Path::new(&f.path);
        let open = || -> Result<Box<dyn Read>> {
            let mut text = BufReader::new(csv_sniff::open_text(path)?);
            csv_sniff::skip_lines(&mut text, dialect.lines_before_data())
                .map_err(|e| load::io_error(path, e))?;
            Ok(Box::new(text))
        };
        let first = dialect.lines_before_data() + 1;
        self.decode_csv(file, &open, &|| Ok(first))
    }

    /// Decodes the CSV rows of file `file` that `open` gives. A value that
    /// does not fit its column widens it and the part is decoded again, to
    /// find every widening it needs; then the scan notes the wider schema
    /// (the statement is planned again with it) and fails.
    fn decode_csv(
        &self,
        file: usize,
        open: &dyn Fn() -> Result<Box<dyn Read>>,
        first_line: &dyn Fn() -> Result<usize>,
    ) -> Result<Vec<RecordBatch>> {
        let f = &self.files[file];
        let (FileFormat::Csv { dialect }, Some(plan)) = (&f.format, &self.csv) else {
            return Err(Error::InvalidInput("a CSV part of a Parquet file".into()));
        };
        let path = Path::new(&f.path);
        let read: Vec<usize> = match &self.needed {
            Some(n) => n.clone(),
            None => (0..plan.raw.fields().len()).collect(),
        };
        let mut raw = plan.raw.clone();
        let mut widened = false;
        // each column widens at most twice
        for _ in 0..=2 * raw.fields().len() {
            let schema = Arc::new(raw.clone());
            let target: SchemaRef = Arc::new(raw.project(&read)?);
            let mut builder =
                dialect.reader(load::decode_schema(&schema, dialect), READ_BATCH_ROWS);
            if read.len() < raw.fields().len() {
                builder = builder.with_projection(read.clone());
            }
            let reader = builder
                .build(open()?)
                .map_err(|e| load::io_error(path, e))?;
            let mut batches = Vec::new();
            let mut wider = None;
            for batch in reader {
                match batch.and_then(|b| load::finish_batch(b, &target, dialect)) {
                    Ok(b) => batches.push(b),
                    Err(e) => match load::widening(&e, &raw, &plan.fixed) {
                        Some(w) => {
                            wider = Some(w);
                            break;
                        }
                        None => return Err(load::csv_error(path, &e, first_line()?, &raw)),
                    },
                }
            }
            if let Some((i, t)) = wider {
                let mut fields: Vec<Field> =
                    raw.fields().iter().map(|f| f.as_ref().clone()).collect();
                fields[i] = Field::new(fields[i].name(), t, true);
                raw = Schema::new(fields);
                widened = true;
                continue;
            }
            if widened {
                let mut slot = self.widened.lock().expect("widened poisoned");
                let merged = match slot.take() {
                    Some(other) => wider_schema(&other, &raw),
                    None => raw,
                };
                *slot = Some(merged);
                return Err(Error::SchemaChanged);
            }
            // the columns read, canonical, the others NULLs
            let table = load::normalize(target, batches)?;
            let full = load::canonical_schema(&plan.raw)?;
            let mask: Vec<bool> = (0..full.fields().len())
                .map(|i| read.contains(&i))
                .collect();
            return Ok(load::fill_unread(&full, &mask, table)?.batches);
        }
        Err(Error::InvalidInput(format!(
            "\"{}\": column types kept changing while reading",
            path.display()
        )))
    }
}

/// Per column the wider of `a`'s and `b`'s types (both widened from one
/// schema: equal, or one BIGINT/DOUBLE/VARCHAR step apart).
fn wider_schema(a: &Schema, b: &Schema) -> Schema {
    let rank = |t: &DataType| match t {
        DataType::Utf8 => 2,
        DataType::Float64 => 1,
        _ => 0,
    };
    Schema::new(
        a.fields()
            .iter()
            .zip(b.fields())
            .map(|(x, y)| {
                if rank(y.data_type()) > rank(x.data_type()) {
                    y.as_ref().clone()
                } else {
                    x.as_ref().clone()
                }
            })
            .collect::<Vec<_>>(),
    )
}

impl PartSource for FileScan {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn num_parts(&self) -> usize {
        self.parts.len()
    }

    fn estimated_rows(&self) -> usize {
        self.estimated_rows
    }

    fn read(&self, part: usize) -> weir_pipeline::Result<Vec<RecordBatch>> {
        let started = Instant::now();
        let part = *self
            .parts
            .get(part)
            .ok_or_else(|| weir_pipeline::Error::Internal(format!("no part {part}")))?;
        let batches = self
            .read_part(part)
            .map_err(|e| weir_pipeline::Error::Execution(e.to_string()))?;
        let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
        self.stats.parts_read.fetch_add(1, Ordering::Relaxed);
        self.stats.rows.fetch_add(rows as u64, Ordering::Relaxed);
        self.stats
            .nanos
            .fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
        Ok(batches)
    }
}

/// `full` with the columns not `read` nullable (they hold NULLs).
fn unread_nullable(full: &SchemaRef, read: &[bool]) -> SchemaRef {
    Arc::new(Schema::new(
        full.fields()
            .iter()
            .zip(read)
            .map(|(f, r)| f.as_ref().clone().with_nullable(f.is_nullable() || !r))
            .collect::<Vec<_>>(),
    ))
}

/// Cuts CSV file `path` (the scan's file `n`) into parts.
fn csv_parts(
    path: &str,
    n: usize,
    dialect: &Dialect,
    len: u64,
    parts: &mut Vec<Part>,
) -> Result<()> {
    let p = Path::new(path);
    if dialect.compressed {
        parts.push(Part::CsvStream { file: n });
        return Ok(());
    }
    let mut text = BufReader::new(load::open(p)?);
    let start = csv_sniff::skip_lines(&mut text, dialect.lines_before_data())
        .map_err(|e| load::io_error(p, e))?;
    let mut sample = Vec::new();
    text.take(CSV_QUOTE_SAMPLE as u64)
        .read_to_end(&mut sample)
        .map_err(|e| load::io_error(p, e))?;
    if len <= CSV_FIRST_PASS_BYTES || quoted_line_break(&sample, dialect) {
        let ranges = load::csv_ranges(p, dialect, len.div_ceil(CSV_PART_BYTES).max(1))?;
        parts.extend(ranges.into_iter().map(|(start, end, line)| Part::CsvExact {
            file: n,
            start,
            end,
            line,
        }));
        return Ok(());
    }
    let mut from = start;
    let mut size = CSV_FIRST_PART_BYTES;
    while from < len {
        let to = (from + size).min(len);
        parts.push(Part::CsvRange { file: n, from, to });
        from = to;
        size = (size * 2).min(CSV_PART_BYTES);
    }
    Ok(())
}

/// Whether `bytes` (from a line start) hold a line break inside quotes.
fn quoted_line_break(bytes: &[u8], dialect: &Dialect) -> bool {
    let Some(quote) = dialect.quote else {
        return false;
    };
    let mut quoted = false;
    let mut escaped = false;
    for &b in bytes {
        if escaped {
            escaped = false;
        } else if quoted && Some(b) == dialect.escape && dialect.escape != Some(quote) {
            escaped = true;
        } else if b == quote {
            quoted = !quoted;
        } else if quoted && (b == b'\n' || b == b'\r') {
            return true;
        }
    }
    false
}

/// The first line start at or after byte `at` of `file` (its length if
/// none): `at` itself when the byte before it ends a line.
fn line_start(file: &mut File, at: u64) -> std::io::Result<u64> {
    let len = file.metadata()?.len();
    if at == 0 || at >= len {
        return Ok(at.min(len));
    }
    file.seek(SeekFrom::Start(at - 1))?;
    let mut reader = BufReader::with_capacity(64 << 10, &mut *file);
    let mut pos = at - 1;
    loop {
        let buf = std::io::BufRead::fill_buf(&mut reader)?;
        if buf.is_empty() {
            return Ok(len);
        }
        if let Some(i) = buf.iter().position(|&b| b == b'\n') {
            return Ok(pos + i as u64 + 1);
        }
        let n = buf.len();
        pos += n as u64;
        std::io::BufRead::consume(&mut reader, n);
    }
}

/// Line breaks in the first `bytes` bytes of `path`.
fn lines_before(path: &Path, bytes: u64) -> Result<usize> {
    let mut reader = BufReader::new(load::open(path)?).take(bytes);
    let mut buf = vec![0; 1 << 20];
    let mut lines = 0;
    loop {
        let n = reader.read(&mut buf).map_err(|e| load::io_error(path, e))?;
        if n == 0 {
            return Ok(lines);
        }
        lines += buf[..n].iter().filter(|&&b| b == b'\n').count();
    }
}

/// Which row groups of a Parquet file may hold rows passing every
/// conjunct of `filters` (over the scan's columns; `full` the file's,
/// canonical), by the row groups' min/max and null count statistics.
fn prune_row_groups(
    metadata: &ArrowReaderMetadata,
    full: &SchemaRef,
    filters: &[Expr],
) -> Vec<bool> {
    let groups = metadata.metadata().row_groups();
    let mut keep = vec![true; groups.len()];
    for conjunct in filters {
        if let Some(skip) = rules_out(metadata, full, conjunct) {
            for (k, s) in keep.iter_mut().zip(skip.iter()) {
                if s == Some(true) {
                    *k = false;
                }
            }
        }
    }
    keep
}

/// A column's statistics per row group, as the column's canonical type;
/// a bound that is not exact is NULL (unknown).
struct ColumnStats {
    mins: ArrayRef,
    maxes: ArrayRef,
    nulls: arrow::array::UInt64Array,
    rows: Option<arrow::array::UInt64Array>,
    float: bool,
}

fn column_stats(
    metadata: &ArrowReaderMetadata,
    full: &SchemaRef,
    column: usize,
) -> Option<ColumnStats> {
    let field = full.fields().get(column)?;
    let converter = StatisticsConverter::try_new(
        field.name(),
        metadata.schema(),
        metadata.metadata().file_metadata().schema_descr(),
    )
    .ok()?;
    let groups = metadata.metadata().row_groups();
    let exact = |values: ArrayRef, exact: BooleanArray| -> Option<ArrayRef> {
        let values = arrow::compute::cast(&values, field.data_type()).ok()?;
        // a bound not known exact is left unknown
        let unknown = arrow::compute::not(&exact).ok()?;
        arrow::compute::nullif(&values, &unknown).ok()
    };
    let mins = exact(
        converter.row_group_mins(groups.iter()).ok()?,
        converter.row_group_is_min_value_exact(groups.iter()).ok()?,
    )?;
    let maxes = exact(
        converter.row_group_maxes(groups.iter()).ok()?,
        converter.row_group_is_max_value_exact(groups.iter()).ok()?,
    )?;
    Some(ColumnStats {
        mins,
        maxes,
        nulls: converter.row_group_null_counts(groups.iter()).ok()?,
        rows: converter.row_group_row_counts(groups.iter()).ok()?,
        float: matches!(field.data_type(), DataType::Float32 | DataType::Float64),
    })
}

/// Per row group, whether `conjunct` is false or NULL for every row, by
/// the statistics (NULL: not known); `None` when it cannot tell at all.
fn rules_out(
    metadata: &ArrowReaderMetadata,
    full: &SchemaRef,
    conjunct: &Expr,
) -> Option<BooleanArray> {
    let column = |e: &Expr| match e {
        Expr::Column(c) if c.index < full.fields().len() => Some(c.index),
        _ => None,
    };
    match conjunct {
        Expr::IsNull(e) => {
            let s = column_stats(metadata, full, column(e)?)?;
            // no NULLs in the group
            cmp::eq(&s.nulls, &arrow::array::UInt64Array::new_scalar(0)).ok()
        }
        Expr::IsNotNull(e) => {
            let s = column_stats(metadata, full, column(e)?)?;
            cmp::eq(&s.nulls, s.rows.as_ref()?).ok()
        }
        Expr::Binary { op, left, right } => {
            let (c, value, op) = match (column(left), column(right)) {
                (Some(c), None) => (c, literal(right)?, *op),
                (None, Some(c)) => (c, literal(left)?, flip(*op)?),
                _ => return None,
            };
            let s = column_stats(metadata, full, c)?;
            let v = constant(&value, full.field(c).data_type())?;
            compare_rules_out(&s, op, &v)
        }
        Expr::InList {
            expr,
            list,
            negated: false,
        } => {
            let c = column(expr)?;
            let s = column_stats(metadata, full, c)?;
            let mut out: Option<BooleanArray> = None;
            for item in list.iter() {
                let v = constant(item, full.field(c).data_type())?;
                let this = compare_rules_out(&s, BinaryOp::Eq, &v)?;
                out = Some(match out {
                    // ruled out only if every item is
                    Some(o) => arrow::compute::and(&o, &this).ok()?,
                    None => this,
                });
            }
            out
        }
        _ => None,
    }
}

/// The literal `e`, unless NULL.
fn literal(e: &Expr) -> Option<ScalarValue> {
    match e {
        Expr::Literal(v) if !v.is_null() => Some(v.clone()),
        _ => None,
    }
}

/// `a op b` as `b op' a`.
fn flip(op: BinaryOp) -> Option<BinaryOp> {
    Some(match op {
        BinaryOp::Eq => BinaryOp::Eq,
        BinaryOp::Lt => BinaryOp::Gt,
        BinaryOp::LtEq => BinaryOp::GtEq,
        BinaryOp::Gt => BinaryOp::Lt,
        BinaryOp::GtEq => BinaryOp::LtEq,
        _ => return None,
    })
}

/// `value` as a one-row array of type `t`, if it converts exactly.
fn constant(value: &ScalarValue, t: &DataType) -> Option<ArrayRef> {
    let array = weir_pipeline::eval::scalar_to_array(value, 1).ok()?;
    if array.data_type() == t {
        return Some(array);
    }
    // only a lossless conversion (the value read back equal)
    let cast = arrow::compute::cast_with_options(
        &array,
        t,
        &arrow::compute::CastOptions {
            safe: false,
            ..Default::default()
        },
    )
    .ok()?;
    let back = arrow::compute::cast(&cast, array.data_type()).ok()?;
    (back.as_ref() == array.as_ref() && cast.null_count() == 0).then_some(cast)
}

/// Per row group, whether `column op v` holds for no row.
fn compare_rules_out(s: &ColumnStats, op: BinaryOp, v: &ArrayRef) -> Option<BooleanArray> {
    let v = arrow::array::Scalar::new(v.clone());
    // a float column's NaNs are left out of its statistics and are greater
    // than any number: its maximum is not a bound
    let by_max = |f: fn(
        &dyn arrow::array::Datum,
        &dyn arrow::array::Datum,
    ) -> std::result::Result<BooleanArray, arrow::error::ArrowError>| {
        if s.float { None } else { f(&s.maxes, &v).ok() }
    };
    match op {
        // every value is at least min
        BinaryOp::Lt => cmp::gt_eq(&s.mins, &v).ok(),
        BinaryOp::LtEq => cmp::gt(&s.mins, &v).ok(),
        BinaryOp::Gt => by_max(cmp::lt_eq),
        BinaryOp::GtEq => by_max(cmp::lt),
        BinaryOp::Eq => {
            let above = cmp::gt(&s.mins, &v).ok()?;
            match by_max(cmp::lt) {
                Some(below) => arrow::compute::or_kleene(&above, &below).ok(),
                None => Some(above),
            }
        }
        _ => None,
    }
}
