//! Writing results to files: `COPY ... TO` (and `weir run`'s outputs and
//! cache, which go through the same statement).
//!
//! A file is written whole or not at all: the rows go to a temporary file
//! beside the target, which is flushed to disk (`fsync`) and then renamed
//! over the target, so a reader (or a crash) sees the old file or the new
//! one, never half of one. A failed write removes its temporary file.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression as ParquetCompression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use weir_planner::{Compression, CopyOptions, FileFormat};

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
