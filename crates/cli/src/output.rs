//! Printing results as a table, CSV or JSON lines.

use std::io::Write;
use std::str::FromStr;

use anyhow::{Result, bail};
use arrow::array::RecordBatch;
use arrow::util::display::FormatOptions;
use weir_engine::QueryResult;

/// Timestamps print as `2024-01-02 03:04:05[.ffffff]`, as in DuckDB.
const TIMESTAMP_FORMAT: &str = "%Y-%m-%d %H:%M:%S%.f";

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// A boxed table with a header.
    Table,
    /// CSV with a header row.
    Csv,
    /// One JSON object per row.
    Json,
}

impl FromStr for Format {
    type Err = anyhow::Error;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "table" | "box" => Ok(Self::Table),
            "csv" => Ok(Self::Csv),
            "json" | "jsonlines" => Ok(Self::Json),
            other => bail!("unknown format \"{other}\": use table, csv or json"),
        }
    }
}

/// Writes `result` to `out` in `format`. Statements without a result set
/// print nothing in every format.
pub(crate) fn write(out: &mut dyn Write, result: &QueryResult, format: Format) -> Result<()> {
    if !result.returns_rows() {
        return Ok(());
    }
    let batches: Vec<RecordBatch> = if result.batches().is_empty() {
        vec![RecordBatch::new_empty(result.schema().clone())]
    } else {
        result.batches().to_vec()
    };
    match format {
        Format::Table => {
            let options = FormatOptions::default()
                .with_null("NULL")
                .with_timestamp_format(Some(TIMESTAMP_FORMAT))
                .with_display_error(true);
            let table =
                arrow::util::pretty::pretty_format_batches_with_options(&batches, &options)?;
            writeln!(out, "{table}")?;
        }
        Format::Csv => {
            let mut writer = arrow::csv::WriterBuilder::new()
                .with_header(true)
                .with_timestamp_format(TIMESTAMP_FORMAT.to_string())
                .build(&mut *out);
            for b in &batches {
                writer.write(b)?;
            }
        }
        Format::Json => {
            let mut writer = arrow::json::WriterBuilder::new()
                .with_explicit_nulls(true)
                .build::<_, arrow::json::writer::LineDelimited>(&mut *out);
            for b in &batches {
                writer.write(b)?;
            }
            writer.finish()?;
        }
    }
    Ok(())
}
