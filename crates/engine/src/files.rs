//! Many files read as one table, as DuckDB reads them: globs
//! (`'data/*.parquet'`, `'**/*.csv'`) and lists of paths, their columns
//! matched by position and name (DuckDB's `union_by_name=false`), and the
//! optional `filename` column.

use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch, StringArray};
use arrow::compute::{CastOptions, cast_with_options};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use weir_pipeline::TableData;
use weir_planner::FileOptions;

use crate::error::{Error, Result};
use crate::load;

/// The name of the column `filename=true` adds.
const FILENAME: &str = "filename";

/// Whether `pattern` holds glob characters.
fn is_glob(pattern: &str) -> bool {
    pattern.contains(['*', '?', '['])
}

/// The files a scan reads, in order: each pattern of the list (or the one
/// `path`), a glob expanded to its matches in path order.
pub(crate) fn expand(path: &str, options: &FileOptions) -> Result<Vec<String>> {
    let patterns = if options.paths.is_empty() {
        std::slice::from_ref(&path.to_string()).to_vec()
    } else {
        options.paths.clone()
    };
    let mut files = Vec::new();
    for pattern in patterns {
        if !is_glob(&pattern) {
            files.push(pattern);
            continue;
        }
        let invalid = |e: &dyn std::fmt::Display| {
            Error::InvalidInput(format!("\"{pattern}\" is not a valid glob pattern: {e}"))
        };
        let mut matched = Vec::new();
        for entry in glob::glob(&pattern).map_err(|e| invalid(&e))? {
            let p = entry.map_err(|e| load::io_error(e.path(), e.to_string()))?;
            if p.is_file() {
                let p = p.to_str().ok_or_else(|| {
                    Error::InvalidInput(format!("the path {} is not UTF-8", p.display()))
                })?;
                matched.push(p.to_string());
            }
        }
        if matched.is_empty() {
            return Err(Error::Io {
                path: pattern.clone().into(),
                source: format!("No files found that match the pattern \"{pattern}\"").into(),
            });
        }
        matched.sort();
        files.extend(matched);
    }
    Ok(files)
}

/// The schema of `files` read as one table: the first file's (`first`,
/// canonical), each other file having the same column names in the same
/// order; with a `filename` column if asked.
pub(crate) fn schema(
    files: &[String],
    first: SchemaRef,
    other: &dyn Fn(&str) -> Result<SchemaRef>,
    filename: bool,
) -> Result<SchemaRef> {
    for file in files.iter().skip(1) {
        same_columns(&files[0], &first, file, other(file)?.as_ref())?;
    }
    Ok(with_filename(&first, filename))
}

fn with_filename(schema: &SchemaRef, filename: bool) -> SchemaRef {
    if !filename {
        return schema.clone();
    }
    let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    fields.push(Field::new(FILENAME, DataType::Utf8, true));
    Arc::new(Schema::new(fields))
}

fn same_columns(first: &str, a: &Schema, file: &str, b: &Schema) -> Result<()> {
    let names =
        |s: &Schema| -> Vec<String> { s.fields().iter().map(|f| f.name().clone()).collect() };
    if names(a) != names(b) {
        return Err(Error::InvalidInput(format!(
            "files read as one table need the same columns in the same order: \"{file}\" has ({}) but \"{first}\" has ({})",
            names(b).join(", "),
            names(a).join(", ")
        )));
    }
    Ok(())
}

/// The tables loaded from `files`, one each, as one table of the first's
/// schema (other types cast to it), with a `filename` column if asked.
pub(crate) fn combine(
    files: &[String],
    tables: Vec<TableData>,
    filename: bool,
) -> Result<TableData> {
    let Some(first) = tables.first() else {
        return Err(Error::InvalidInput("no files to read".into()));
    };
    let base = first.schema.clone();
    let schema = with_filename(&base, filename);
    let options = CastOptions {
        safe: false,
        ..Default::default()
    };
    let mut batches = Vec::new();
    for (file, table) in files.iter().zip(tables) {
        same_columns(&files[0], &base, file, &table.schema)?;
        for batch in table.batches {
            let mut columns = Vec::with_capacity(schema.fields().len());
            for (c, f) in batch.columns().iter().zip(base.fields()) {
                if c.data_type() == f.data_type() {
                    columns.push(c.clone());
                } else {
                    columns.push(cast_with_options(c, f.data_type(), &options).map_err(|e| {
                        Error::InvalidInput(format!(
                            "\"{file}\": column \"{}\" cannot be read as {} as in \"{}\": {e}",
                            f.name(),
                            weir_planner::types::sql_type_name(f.data_type()),
                            files[0]
                        ))
                    })?);
                }
            }
            if filename {
                let names: ArrayRef = Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
                    file.as_str(),
                    batch.num_rows(),
                )));
                columns.push(names);
            }
            batches.push(RecordBatch::try_new(schema.clone(), columns)?);
        }
    }
    Ok(TableData::new(schema, batches))
}

/// The EXPLAIN ANALYZE name of a file scan's load.
pub(crate) fn load_name(path: &str, files: usize) -> String {
    if files == 1 {
        format!("read '{path}'")
    } else {
        format!("read '{path}' ({files} files)")
    }
}
