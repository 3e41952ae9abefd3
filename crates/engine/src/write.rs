//! Writing results to files: `COPY ... TO` (and `weir run`'s outputs and
//! cache, which go through the same statement).
//!
//! A file is written whole or not at all: the rows go to a temporary file
//! beside the target, which is flushed to disk (`fsync`) and then renamed
//! over the target, so a reader (or a crash) sees the old file or the new
//! one, never half of one. A failed write removes its temporary file.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arrow::array::{Array, RecordBatch, StringArray};
use arrow::compute::interleave_record_batch;
use arrow::datatypes::{DataType, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression as ParquetCompression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use weir_planner::{Compression, CopyOptions, Expr, FileFormat};

use crate::error::{Error, Result};

/// How timestamps are written to CSV, as DuckDB writes them
/// (`2024-01-02 03:04:05`, a fraction only when there is one).
const TIMESTAMP_FORMAT: &str = "%Y-%m-%d %H:%M:%S%.f";

/// Writes `batches` (of `schema`) to `path` as `format`, atomically (see
/// the module docs), and returns the number of rows written. The
/// directory of `path` must exist, as in DuckDB.
///
/// # Errors
/// [`Error::Write`] naming the file if it cannot be created, written or
/// renamed; the target is then left as it was.
pub fn write_batches(
    path: &Path,
    format: FileFormat,
    options: &CopyOptions,
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> Result<u64> {
    let io = |e: Box<dyn std::error::Error + Send + Sync>| Error::Write {
        path: path.to_path_buf(),
        source: e,
    };
    let temp = temp_path(path);
    let file = File::create_new(&temp).map_err(|e| io(e.into()))?;
    let guard = TempGuard(Some(temp.clone()));
    let rows = match format {
        FileFormat::Csv => write_csv(file, options, schema, batches),
        FileFormat::Parquet => write_parquet(file, options, schema, batches),
    }
    .map_err(io)?;
    std::fs::rename(&temp, path).map_err(|e| io(e.into()))?;
    guard.keep();
    // the rename itself reaches the disk with the directory
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && let Ok(d) = File::open(dir)
    {
        let _ = d.sync_all();
    }
    Ok(rows)
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The folder name of a NULL partition value, as DuckDB (and Hive) write it.
pub(crate) const NULL_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";

/// Writes `batches` under the directory `dir` as one file per distinct
/// value of the `PARTITION_BY` columns, at `dir/a=1/b=x/data_0.parquet`
/// (DuckDB's layout: values as their VARCHAR text, percent-encoded, NULL as
/// `__HIVE_DEFAULT_PARTITION__`; the partition columns only in the folder
/// names unless `WRITE_PARTITION_COLUMNS`). Each file is written
/// atomically by [`write_batches`]. Returns the rows written.
///
/// # Errors
/// [`Error::Write`] when `dir` holds files and neither `OVERWRITE` nor
/// `OVERWRITE_OR_IGNORE` is set (DuckDB's "Directory ... is not empty"),
/// or when a folder or file cannot be made.
pub(crate) fn write_partitioned(
    dir: &Path,
    format: FileFormat,
    options: &CopyOptions,
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> Result<u64> {
    let io = |e: BoxError| Error::Write {
        path: dir.to_path_buf(),
        source: e,
    };
    prepare_directory(dir, options).map_err(io)?;
    let keys = &options.partition_by;
    let kept: Vec<usize> = (0..schema.fields().len())
        .filter(|i| options.write_partition_columns || !keys.contains(i))
        .collect();
    let file_schema = Arc::new(schema.project(&kept).map_err(Error::Arrow)?);
    let extension = match format {
        FileFormat::Csv => "csv",
        FileFormat::Parquet => "parquet",
    };
    // each partition's folder and its rows as (batch, row), in order of
    // first appearance
    let mut partitions: Vec<(PathBuf, Vec<(usize, usize)>)> = Vec::new();
    let mut index: HashMap<Vec<Option<String>>, usize> = HashMap::new();
    let projected: Vec<RecordBatch> = batches
        .iter()
        .map(|b| b.project(&kept).map_err(Error::Arrow))
        .collect::<Result<_>>()?;
    for (bi, batch) in batches.iter().enumerate() {
        let texts: Vec<StringArray> = keys
            .iter()
            .map(|&k| partition_text(batch, k, schema))
            .collect::<Result<_>>()?;
        for row in 0..batch.num_rows() {
            let key: Vec<Option<String>> = texts
                .iter()
                .map(|t| t.is_valid(row).then(|| t.value(row).to_string()))
                .collect();
            let p = match index.get(&key) {
                Some(&p) => p,
                None => {
                    let mut folder = dir.to_path_buf();
                    for (&k, value) in keys.iter().zip(&key) {
                        let value = value.as_deref().map_or(NULL_PARTITION.into(), encode);
                        folder.push(format!("{}={value}", schema.field(k).name()));
                    }
                    partitions.push((folder, Vec::new()));
                    index.insert(key, partitions.len() - 1);
                    partitions.len() - 1
                }
            };
            partitions[p].1.push((bi, row));
        }
    }
    let sources: Vec<&RecordBatch> = projected.iter().collect();
    let mut rows = 0;
    for (folder, picks) in partitions {
        std::fs::create_dir_all(&folder).map_err(|e| Error::Write {
            path: folder.clone(),
            source: e.into(),
        })?;
        let part = interleave_record_batch(&sources, &picks).map_err(Error::Arrow)?;
        let part = part
            .with_schema(Arc::clone(&file_schema))
            .map_err(Error::Arrow)?;
        let name = options
            .filename_pattern
            .replace("{i}", "0")
            .replace("{uuid}", &uuid_v4());
        let path = folder.join(format!("{name}.{extension}"));
        rows += write_batches(&path, format, options, &file_schema, &[part])?;
    }
    Ok(rows)
}

/// Makes `dir` ready for a partitioned write: created if missing; if it
/// holds anything, emptied (`OVERWRITE`), kept (`OVERWRITE_OR_IGNORE`) or
/// refused.
fn prepare_directory(dir: &Path, options: &CopyOptions) -> Result<(), BoxError> {
    if dir.is_file() {
        return Err(format!("\"{}\" is a file, not a directory", dir.display()).into());
    }
    let occupied = dir.is_dir() && std::fs::read_dir(dir)?.next().is_some();
    if occupied {
        if options.overwrite {
            std::fs::remove_dir_all(dir)?;
        } else if !options.overwrite_or_ignore {
            return Err(format!(
                "Directory \"{}\" is not empty! Enable OVERWRITE option to overwrite files",
                dir.display()
            )
            .into());
        }
    }
    std::fs::create_dir_all(dir)?;
    Ok(())
}

/// Column `k` of `batch` as text, as `CAST(k AS VARCHAR)` gives it (the
/// evaluator's cast, so a folder name reads back as the value).
fn partition_text(batch: &RecordBatch, k: usize, schema: &Schema) -> Result<StringArray> {
    let cast = Expr::Cast {
        expr: Box::new(Expr::column(k, schema.field(k).name().clone())),
        to: DataType::Utf8,
        try_cast: false,
    };
    let text = weir_pipeline::eval::evaluate(&cast, batch)
        .map_err(|e| Error::InvalidInput(format!("PARTITION_BY: {e}")))?;
    text.as_any()
        .downcast_ref::<StringArray>()
        .cloned()
        .ok_or_else(|| Error::InvalidInput("PARTITION_BY: a value without text".into()))
}

/// A partition value as a folder name: bytes other than ASCII letters,
/// digits and `-_.~` become `%XX`, as DuckDB writes them.
pub(crate) fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for &b in value.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A folder name's value: `%XX` escapes decoded (malformed ones kept as
/// they are), the inverse of [`encode`].
pub(crate) fn decode(name: &str) -> String {
    let bytes = name.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| name.to_string())
}

/// A random (version 4) UUID for `{uuid}` in `FILENAME_PATTERN`.
fn uuid_v4() -> String {
    use std::hash::{BuildHasher, RandomState};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let word = |salt: u64| RandomState::new().hash_one((salt, n, std::process::id()));
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&word(1).to_le_bytes());
    b[8..].copy_from_slice(&word(2).to_le_bytes());
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

fn write_csv(
    file: File,
    options: &CopyOptions,
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> Result<u64, BoxError> {
    let mut out = BufWriter::new(file);
    let mut writer = arrow::csv::WriterBuilder::new()
        .with_header(options.header)
        .with_delimiter(options.delimiter)
        .with_quote(options.quote)
        .with_null(options.null.clone())
        .with_timestamp_format(TIMESTAMP_FORMAT.to_string())
        .build(&mut out);
    let mut rows = 0;
    if batches.is_empty() {
        // the header alone
        writer.write(&RecordBatch::new_empty(schema.clone()))?;
    }
    for b in batches {
        writer.write(b)?;
        rows += b.num_rows() as u64;
    }
    drop(writer);
    let file = out.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()?;
    Ok(rows)
}

fn write_parquet(
    file: File,
    options: &CopyOptions,
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> Result<u64, BoxError> {
    let compression = match options.compression {
        Compression::Uncompressed => ParquetCompression::UNCOMPRESSED,
        Compression::Snappy => ParquetCompression::SNAPPY,
        Compression::Zstd => ParquetCompression::ZSTD(ZstdLevel::default()),
    };
    let properties = WriterProperties::builder()
        .set_compression(compression)
        .set_max_row_group_row_count(Some(options.row_group_size))
        .set_created_by(format!("weir version {}", env!("CARGO_PKG_VERSION")))
        .build();
    let mut writer = ArrowWriter::try_new(BufWriter::new(file), schema.clone(), Some(properties))?;
    let mut rows = 0;
    for b in batches {
        writer.write(b)?;
        rows += b.num_rows() as u64;
    }
    let mut out = writer.into_inner()?;
    out.flush()?;
    let file = out.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()?;
    Ok(rows)
}

/// A fresh name beside `path`, unique within the machine (process id and
/// a per-process counter), so concurrent writers never share one.
fn temp_path(path: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let name = path
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.weir-tmp-{}-{n}", std::process::id()))
}

/// Removes the temporary file unless the write completed.
struct TempGuard(Option<PathBuf>);

impl TempGuard {
    fn keep(mut self) {
        self.0 = None;
    }
}

impl Drop for TempGuard {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}
