//! Printing results as a table, a box, CSV or JSON lines, batch by batch.
//!
//! No format holds the whole rendered result: CSV and JSON write each
//! batch and move on; the table formats keep the first rows, formatted, and
//! zero-copy slices of the last rows, so a long result prints its head and
//! tail with a row count, as DuckDB's shell does (`.maxrows`).

use std::collections::VecDeque;
use std::io::Write;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result, bail};
use arrow::array::{Array, Float64Array, RecordBatch};
use arrow::datatypes::{DataType, Schema};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use weir_engine::QueryResult;

/// Timestamps print as `2024-01-02 03:04:05[.ffffff]`, as in DuckDB.
const TIMESTAMP_FORMAT: &str = "%Y-%m-%d %H:%M:%S%.f";

/// Rows a table shows by default before it elides the middle (DuckDB's
/// `.maxrows` default).
pub(crate) const DEFAULT_MAX_ROWS: usize = 40;

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// A table drawn with ASCII `+-|`, with a header.
    Table,
    /// A table drawn with Unicode box-drawing characters, as DuckDB's
    /// `.mode box`.
    Box,
    /// CSV with a header row.
    Csv,
    /// One JSON object per row.
    Json,
}

impl FromStr for Format {
    type Err = anyhow::Error;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "table" => Ok(Self::Table),
            "box" | "duckbox" => Ok(Self::Box),
            "csv" => Ok(Self::Csv),
            "json" | "jsonlines" => Ok(Self::Json),
            other => bail!("unknown format \"{other}\": use table, box, csv or json"),
        }
    }
}

/// How to print.
pub(crate) struct PrintOptions<'a> {
    /// The format.
    pub(crate) format: Format,
    /// Table formats show at most this many rows, the first and the last
    /// ones (0: all).
    pub(crate) max_rows: usize,
    /// Set by Ctrl-C: printing stops with an error.
    pub(crate) stop: &'a AtomicBool,
}

/// Writes `result` to `out`. Statements without a result set print nothing
/// in every format. A value that cannot be formatted (a date out of range,
/// say) is an error, never text in the output.
pub(crate) fn write(
    out: &mut dyn Write,
    result: QueryResult,
    options: &PrintOptions,
) -> Result<()> {
    if !result.returns_rows() {
        return Ok(());
    }
    let (schema, batches) = blobs_as_text(result.schema().clone(), result.into_batches())?;
    let mut watched = PipeWatch {
        inner: out,
        broken: None,
    };
    let out = &mut watched;
    let written = match options.format {
        Format::Table | Format::Box => write_table(out, &schema, batches, options),
        Format::Csv => write_csv(out, batches, &schema, options.stop),
        Format::Json => write_json(out, batches, options.stop),
    };
    match (written, watched.broken) {
        // Arrow's writers turn I/O errors into text: give the shell the
        // broken pipe back
        (Err(_), Some(e)) => Err(e.into()),
        (result, _) => result,
    }
}

/// Remembers a write to a closed pipe.
struct PipeWatch<'a> {
    inner: &'a mut dyn Write,
    broken: Option<std::io::Error>,
}

impl PipeWatch<'_> {
    fn watch<T>(&mut self, result: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &result
            && e.kind() == std::io::ErrorKind::BrokenPipe
        {
            self.broken = Some(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        }
        result
    }
}

impl Write for PipeWatch<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = self.inner.write(buf);
        self.watch(r)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.inner.flush();
        self.watch(r)
    }
}

/// BLOB columns as the text DuckDB prints for them (`\xAA`), in every
/// format.
fn blobs_as_text(
    schema: arrow::datatypes::SchemaRef,
    batches: Vec<RecordBatch>,
) -> Result<(arrow::datatypes::SchemaRef, Vec<RecordBatch>)> {
    use arrow::array::{ArrayRef, AsArray, StringArray};
    use arrow::datatypes::{Field, Schema};
    use std::sync::Arc;
    if !schema
        .fields()
        .iter()
        .any(|f| f.data_type() == &DataType::Binary)
    {
        return Ok((schema, batches));
    }
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| match f.data_type() {
            DataType::Binary => f.as_ref().clone().with_data_type(DataType::Utf8),
            _ => f.as_ref().clone(),
        })
        .collect();
    let text_schema = Arc::new(Schema::new(fields));
    let batches = batches
        .into_iter()
        .map(|b| {
            let columns: Vec<ArrayRef> = b
                .columns()
                .iter()
                .map(|c| match c.data_type() {
                    DataType::Binary => Arc::new(
                        c.as_binary::<i32>()
                            .iter()
                            .map(|v| v.map(weir_engine::format_blob))
                            .collect::<StringArray>(),
                    ) as ArrayRef,
                    _ => Arc::clone(c),
                })
                .collect();
            RecordBatch::try_new(Arc::clone(&text_schema), columns)
        })
        .collect::<std::result::Result<Vec<_>, _>>()?;
    Ok((text_schema, batches))
}

fn check_stop(stop: &AtomicBool) -> Result<()> {
    if stop.load(Ordering::Acquire) {
        bail!("Interrupted: printing was cancelled");
    }
    Ok(())
}

fn format_options() -> FormatOptions<'static> {
    FormatOptions::default()
        .with_null("NULL")
        .with_timestamp_format(Some(TIMESTAMP_FORMAT))
        .with_display_error(false)
}

/// Formats row `row` of `batch`, one string per column.
fn format_row(formatters: &[ArrayFormatter<'_>], row: usize) -> Result<Vec<String>> {
    formatters
        .iter()
        .map(|f| {
            f.value(row)
                .try_to_string()
                .context("could not format a value of the result")
        })
        .collect()
}

fn formatters<'a>(
    batch: &'a RecordBatch,
    options: &'a FormatOptions<'a>,
) -> Result<Vec<ArrayFormatter<'a>>> {
    batch
        .columns()
        .iter()
        .map(|c| Ok(ArrayFormatter::try_new(c.as_ref(), options)?))
        .collect()
}

fn write_table(
    out: &mut dyn Write,
    schema: &Schema,
    batches: Vec<RecordBatch>,
    options: &PrintOptions,
) -> Result<()> {
    let fmt = format_options();
    let limit = if options.max_rows == 0 {
        usize::MAX
    } else {
        options.max_rows
    };
    let head_rows = limit - limit / 2;
    let tail_rows = limit / 2;
    let mut head: Vec<Vec<String>> = Vec::new();
    // the last rows seen past the head, as slices of their batches
    let mut tail: VecDeque<RecordBatch> = VecDeque::new();
    let mut tail_len = 0;
    let mut total = 0usize;
    for batch in batches {
        check_stop(options.stop)?;
        let rows = batch.num_rows();
        total += rows;
        let taken = (head_rows - head.len()).min(rows);
        if taken > 0 {
            let f = formatters(&batch, &fmt)?;
            for row in 0..taken {
                head.push(format_row(&f, row)?);
            }
        }
        if tail_rows > 0 && rows > taken {
            let keep = (rows - taken).min(tail_rows);
            tail.push_back(batch.slice(rows - keep, keep));
            tail_len += keep;
            while tail_len - tail.front().map_or(0, RecordBatch::num_rows) >= tail_rows {
                let front = tail.pop_front().expect("non-empty");
                tail_len -= front.num_rows();
            }
        }
    }
    let mut tail_strings = Vec::new();
    for batch in &tail {
        let f = formatters(batch, &fmt)?;
        for row in 0..batch.num_rows() {
            tail_strings.push(format_row(&f, row)?);
        }
    }
    // all rows fit: the tail follows the head; else only its last rows
    let elided = total > limit;
    let skip = if elided {
        tail_strings.len().saturating_sub(tail_rows)
    } else {
        0
    };
    let tail_strings = &tail_strings[skip..];
    let header: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    let style = if options.format == Format::Box {
        &BOX
    } else {
        &ASCII
    };
    let mut widths: Vec<usize> = header.iter().map(|h| width(h)).collect();
    for row in head.iter().chain(tail_strings) {
        for (w, v) in widths.iter_mut().zip(row) {
            *w = (*w).max(width(v));
        }
    }
    let footer =
        elided.then(|| format!("{total} rows ({} shown)", head.len() + tail_strings.len()));
    if let (Some(text), Some(last)) = (&footer, widths.len().checked_sub(1)) {
        // the footer spans the table; widen the last column if it is longer
        let inner: usize = widths.iter().sum::<usize>() + 3 * last;
        if width(text) > inner {
            widths[last] += width(text) - inner;
        }
    }
    let rule = |left: &str, mid: &str, right: &str, w: &[usize]| -> String {
        let parts: Vec<String> = w.iter().map(|w| style.horizontal.repeat(w + 2)).collect();
        format!("{left}{}{right}\n", parts.join(mid))
    };
    let line = |cells: &[String]| -> String {
        let parts: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!(" {c}{} ", " ".repeat(w - width(c))))
            .collect();
        let v = style.vertical;
        format!("{v}{}{v}\n", parts.join(v))
    };
    let mut text = String::new();
    text.push_str(&rule(style.top.0, style.top.1, style.top.2, &widths));
    text.push_str(&line(&header));
    text.push_str(&rule(style.mid.0, style.mid.1, style.mid.2, &widths));
    out.write_all(text.as_bytes())?;
    for row in &head {
        out.write_all(line(row).as_bytes())?;
    }
    if elided {
        let dots: Vec<String> = widths.iter().map(|_| style.elision.to_string()).collect();
        for _ in 0..style.elision_rows {
            out.write_all(line(&dots).as_bytes())?;
        }
    }
    for row in tail_strings {
        out.write_all(line(row).as_bytes())?;
    }
    if let Some(text) = footer {
        let inner = widths.iter().sum::<usize>() + 3 * widths.len().saturating_sub(1);
        let bottom_of_rows = rule(style.mid.0, style.bottom.1, style.mid.2, &widths);
        out.write_all(bottom_of_rows.as_bytes())?;
        let v = style.vertical;
        writeln!(out, "{v} {text}{} {v}", " ".repeat(inner - width(&text)))?;
        let h = style.horizontal.repeat(inner + 2);
        writeln!(out, "{}{h}{}", style.bottom.0, style.bottom.2)?;
    } else {
        out.write_all(rule(style.bottom.0, style.bottom.1, style.bottom.2, &widths).as_bytes())?;
    }
    Ok(())
}

/// Display width of a cell: characters, not bytes.
fn width(s: &str) -> usize {
    s.chars().count()
}

struct Style {
    horizontal: &'static str,
    vertical: &'static str,
    top: (&'static str, &'static str, &'static str),
    mid: (&'static str, &'static str, &'static str),
    bottom: (&'static str, &'static str, &'static str),
    elision: &'static str,
    elision_rows: usize,
}

const ASCII: Style = Style {
    horizontal: "-",
    vertical: "|",
    top: ("+", "+", "+"),
    mid: ("+", "+", "+"),
    bottom: ("+", "+", "+"),
    elision: "…",
    elision_rows: 1,
};

const BOX: Style = Style {
    horizontal: "─",
    vertical: "│",
    top: ("┌", "┬", "┐"),
    mid: ("├", "┼", "┤"),
    bottom: ("└", "┴", "┘"),
    elision: "·",
    elision_rows: 3,
};

fn write_csv(
    out: &mut dyn Write,
    batches: Vec<RecordBatch>,
    schema: &std::sync::Arc<Schema>,
    stop: &AtomicBool,
) -> Result<()> {
    let mut writer = arrow::csv::WriterBuilder::new()
        .with_header(true)
        .with_timestamp_format(TIMESTAMP_FORMAT.to_string())
        .build(&mut *out);
    if batches.is_empty() {
        writer.write(&RecordBatch::new_empty(schema.clone()))?;
    }
    for b in batches {
        check_stop(stop)?;
        check_printable(&b)?;
        writer.write(&b)?;
    }
    Ok(())
}

/// JSON lines. Non-finite doubles print as DuckDB's `to_json` writes them:
/// `Infinity`, `-Infinity` and `NaN` (read back by JavaScript's and Python's
/// JSON readers); every other value as Arrow's JSON writer renders it.
fn write_json(out: &mut dyn Write, batches: Vec<RecordBatch>, stop: &AtomicBool) -> Result<()> {
    for batch in batches {
        check_stop(stop)?;
        check_printable(&batch)?;
        let non_finite: Vec<usize> = batch
            .columns()
            .iter()
            .enumerate()
            .filter(|(_, c)| {
                c.data_type() == &DataType::Float64
                    && c.as_any()
                        .downcast_ref::<Float64Array>()
                        .is_some_and(|a| a.iter().flatten().any(|v| !v.is_finite()))
            })
            .map(|(i, _)| i)
            .collect();
        if non_finite.is_empty() {
            let mut writer = arrow::json::WriterBuilder::new()
                .with_explicit_nulls(true)
                .build::<_, arrow::json::writer::LineDelimited>(&mut *out);
            writer.write(&batch)?;
            writer.finish()?;
            continue;
        }
        // rows one at a time, with the non-finite values written by hand
        let mut buf = Vec::new();
        for row in 0..batch.num_rows() {
            buf.clear();
            {
                let mut writer = arrow::json::WriterBuilder::new()
                    .with_explicit_nulls(true)
                    .build::<_, arrow::json::writer::LineDelimited>(&mut buf);
                writer.write(&batch.slice(row, 1))?;
                writer.finish()?;
            }
            let line = String::from_utf8(std::mem::take(&mut buf))?;
            let fixed = patch_non_finite(&line, &batch, row, &non_finite);
            out.write_all(fixed.as_bytes())?;
            buf = line.into_bytes();
        }
    }
    Ok(())
}

/// An error if a date or timestamp of `batch` cannot be rendered (Arrow's
/// JSON writer would print the error text as the value). Only the smallest
/// and largest value of each such column are tried.
fn check_printable(batch: &RecordBatch) -> Result<()> {
    use arrow::array::{AsArray, Date32Array, TimestampMicrosecondArray};
    use arrow::compute::{max, min};
    use arrow::datatypes::{Date32Type, TimeUnit, TimestampMicrosecondType};
    let fmt = format_options();
    for column in batch.columns() {
        let extremes: arrow::array::ArrayRef = match column.data_type() {
            DataType::Date32 => {
                let a = column.as_primitive::<Date32Type>();
                std::sync::Arc::new(Date32Array::from(vec![min(a), max(a)]))
            }
            DataType::Timestamp(TimeUnit::Microsecond, None) => {
                let a = column.as_primitive::<TimestampMicrosecondType>();
                std::sync::Arc::new(TimestampMicrosecondArray::from(vec![min(a), max(a)]))
            }
            _ => continue,
        };
        let f = ArrayFormatter::try_new(extremes.as_ref(), &fmt)?;
        format_row(&[f], 0)?;
        let f = ArrayFormatter::try_new(extremes.as_ref(), &fmt)?;
        format_row(&[f], 1)?;
    }
    Ok(())
}

/// Arrow writes a non-finite double as `null`: write it as DuckDB does.
fn patch_non_finite(line: &str, batch: &RecordBatch, row: usize, columns: &[usize]) -> String {
    let mut line = line.to_string();
    for &c in columns {
        let array = batch
            .column(c)
            .as_any()
            .downcast_ref::<Float64Array>()
            .expect("a Float64 column");
        if array.is_null(row) || array.value(row).is_finite() {
            continue;
        }
        let v = array.value(row);
        let text = if v.is_nan() {
            "NaN"
        } else if v > 0.0 {
            "Infinity"
        } else {
            "-Infinity"
        };
        let key = serde_json_key(batch.schema().field(c).name());
        let pattern = format!("{key}:null");
        if let Some(at) = line.find(&pattern) {
            line.replace_range(at + key.len() + 1..at + pattern.len(), text);
        }
    }
    line
}

/// A column name as a JSON string.
fn serde_json_key(name: &str) -> String {
    let mut out = String::from("\"");
    for ch in name.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use weir_engine::{Config, Database};

    fn result(sql: &str) -> QueryResult {
        // 7-row morsels: the rows come in many batches
        let db = Database::with_config(Config {
            threads: 2,
            morsel_rows: 7,
            ..Config::default()
        })
        .unwrap();
        db.execute(sql).unwrap()
    }

    #[test]
    fn ctrl_c_stops_printing_in_every_format() {
        let stop = AtomicBool::new(true);
        for format in [Format::Table, Format::Box, Format::Csv, Format::Json] {
            let mut out = Vec::new();
            let options = PrintOptions {
                format,
                max_rows: DEFAULT_MAX_ROWS,
                stop: &stop,
            };
            let err = write(&mut out, result("SELECT * FROM range(100)"), &options).unwrap_err();
            assert!(
                err.to_string().starts_with("Interrupted"),
                "{format:?}: {err}"
            );
        }
    }

    #[test]
    fn the_tail_keeps_the_last_rows_across_batches() {
        let stop = AtomicBool::new(false);
        for (rows, max_rows) in [(100, 5), (100, 2), (100, 1), (9, 9), (10, 9), (15, 14)] {
            let options = PrintOptions {
                format: Format::Table,
                max_rows,
                stop: &stop,
            };
            let sql = format!("SELECT * FROM range({rows})");
            let mut table = Vec::new();
            write(&mut table, result(&sql), &options).unwrap();
            let table = String::from_utf8(table).unwrap();
            let shown: Vec<String> = table
                .lines()
                .skip(3)
                .filter_map(|l| l.strip_prefix("| "))
                .map(|l| l.trim_end_matches('|').trim().to_string())
                .filter(|l| !l.contains("rows"))
                .collect();
            let mut expected: Vec<String> = Vec::new();
            if rows <= max_rows {
                expected.extend((0..rows).map(|i| i.to_string()));
            } else {
                let head = max_rows - max_rows / 2;
                expected.extend((0..head).map(|i| i.to_string()));
                expected.push("…".into());
                expected.extend((rows - max_rows / 2..rows).map(|i| i.to_string()));
            }
            assert_eq!(shown, expected, "{rows} rows, max {max_rows}: {table}");
        }
    }
}
