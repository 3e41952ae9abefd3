//! Many files read as one table, as DuckDB reads them: globs
//! (`'data/*.parquet'`, `'**/*.csv'`) and lists of paths, their columns
//! matched by position and name (DuckDB's `union_by_name=false`), the
//! optional `filename` column, and hive partitions (`key=value/` folders
//! give columns; a filter on them skips whole files).

use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch, StringArray, new_null_array};
use arrow::compute::{CastOptions, cast_with_options};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use weir_pipeline::TableData;
use weir_planner::{Expr, FileOptions};

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
    hive: Option<&Hive>,
) -> Result<SchemaRef> {
    for file in files.iter().skip(1) {
        same_columns(&files[0], &first, file, other(file)?.as_ref())?;
    }
    Ok(with_extra_columns(&first, filename, hive))
}

/// `schema` with the `filename` column, then the partition columns.
pub(crate) fn with_extra_columns(
    schema: &SchemaRef,
    filename: bool,
    hive: Option<&Hive>,
) -> SchemaRef {
    if !filename && hive.is_none() {
        return schema.clone();
    }
    let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    if filename {
        fields.push(Field::new(FILENAME, DataType::Utf8, true));
    }
    if let Some(hive) = hive {
        for (name, t) in hive.names.iter().zip(&hive.types) {
            fields.push(Field::new(name, t.clone(), true));
        }
    }
    Arc::new(Schema::new(fields))
}

/// The hive partitions of a list of files: each file's `key=value`
/// folders.
pub(crate) struct Hive {
    /// The keys, sorted (DuckDB's column order).
    names: Vec<String>,
    /// Each key's type: BIGINT or DATE when every value reads as one and
    /// back unchanged, else VARCHAR (DuckDB's inference).
    types: Vec<DataType>,
    /// Per file, the value of each key.
    values: Vec<Vec<String>>,
}

/// The `key=value` folders of `path` (its last part is the file).
fn hive_pairs(path: &str) -> Vec<(String, String)> {
    let mut parts: Vec<&str> = path.split(['/', '\\']).collect();
    parts.pop();
    let mut pairs: Vec<(String, String)> = Vec::new();
    for part in parts {
        if let Some((k, v)) = part.split_once('=')
            && !k.is_empty()
        {
            pairs.retain(|(key, _)| key != k);
            pairs.push((k.to_string(), crate::write::decode(v)));
        }
    }
    pairs
}

/// The partitions of `files`: with `hive_partitioning` unset, only when
/// every file has the same keys, as DuckDB detects them.
pub(crate) fn hive(files: &[String], option: Option<bool>) -> Result<Option<Hive>> {
    if option == Some(false) {
        return Ok(None);
    }
    let mut all: Vec<Vec<(String, String)>> = files.iter().map(|f| hive_pairs(f)).collect();
    for pairs in &mut all {
        pairs.sort();
    }
    let keys = |pairs: &Vec<(String, String)>| -> Vec<String> {
        pairs.iter().map(|(k, _)| k.clone()).collect()
    };
    let names = all.first().map(keys).unwrap_or_default();
    if let Some((i, _)) = all.iter().enumerate().find(|(_, p)| keys(p) != names) {
        if option == Some(true) {
            return Err(Error::InvalidInput(format!(
                "hive_partitioning: \"{}\" has partition keys ({}) but \"{}\" has ({})",
                files[i],
                keys(&all[i]).join(", "),
                files[0],
                names.join(", ")
            )));
        }
        return Ok(None);
    }
    if names.is_empty() {
        return Ok(None);
    }
    let values: Vec<Vec<String>> = all
        .into_iter()
        .map(|p| p.into_iter().map(|(_, v)| v).collect())
        .collect();
    let types = (0..names.len())
        .map(|k| partition_type(values.iter().map(|v| v[k].as_str())))
        .collect();
    Ok(Some(Hive {
        names,
        types,
        values,
    }))
}

fn partition_type<'a>(values: impl Iterator<Item = &'a str> + Clone) -> DataType {
    // a NULL partition (`__HIVE_DEFAULT_PARTITION__`) fits any type
    let values = values.filter(|v| *v != crate::write::NULL_PARTITION);
    if values
        .clone()
        .all(|v| v.parse::<i64>().is_ok_and(|n| n.to_string() == v))
    {
        return DataType::Int64;
    }
    let date = |v: &str| {
        let b = v.as_bytes();
        b.len() == 10
            && b[4] == b'-'
            && b[7] == b'-'
            && b.iter()
                .enumerate()
                .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
            && partition_value(v, &DataType::Date32, 1).is_some_and(|a| a.null_count() == 0)
    };
    if values.clone().all(date) {
        return DataType::Date32;
    }
    DataType::Utf8
}

/// `rows` copies of partition value `value` as `t`.
fn partition_value(value: &str, t: &DataType, rows: usize) -> Option<ArrayRef> {
    if value == crate::write::NULL_PARTITION {
        return Some(arrow::array::new_null_array(t, rows));
    }
    let strings = StringArray::from_iter_values(std::iter::repeat_n(value, rows));
    arrow::compute::cast(&strings, t).ok()
}

/// The indices of the files to read: those whose partition values can
/// pass `filters` (conjuncts over `schema`, the scan's columns, of which
/// the partition columns are the last). A filter that reads other columns,
/// or fails, skips nothing.
pub(crate) fn prune(hive: &Hive, schema: &SchemaRef, filters: &[Expr]) -> Vec<usize> {
    let first = schema.fields().len() - hive.names.len();
    let usable: Vec<&Expr> = filters
        .iter()
        .filter(|f| {
            let columns = f.columns();
            !columns.is_empty() && columns.iter().all(|&c| c >= first)
        })
        .collect();
    (0..hive.values.len())
        .filter(|&i| {
            if usable.is_empty() {
                return true;
            }
            let columns: Option<Vec<ArrayRef>> = schema
                .fields()
                .iter()
                .enumerate()
                .map(|(c, f)| {
                    if c < first {
                        Some(new_null_array(f.data_type(), 1))
                    } else {
                        partition_value(&hive.values[i][c - first], f.data_type(), 1)
                    }
                })
                .collect();
            let Some(batch) = columns.and_then(|c| RecordBatch::try_new(schema.clone(), c).ok())
            else {
                return true;
            };
            usable.iter().all(|f| {
                weir_pipeline::eval::evaluate_predicate(f, &batch)
                    .map_or(true, |keep| keep.value(0))
            })
        })
        .collect()
}

pub(crate) fn same_columns(first: &str, a: &Schema, file: &str, b: &Schema) -> Result<()> {
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
    hive: Option<(&Hive, &[usize])>,
) -> Result<TableData> {
    let Some(first) = tables.first() else {
        return Err(Error::InvalidInput("no files to read".into()));
    };
    let base = first.schema.clone();
    let schema = with_extra_columns(&base, filename, hive.map(|(h, _)| h));
    let mut batches = Vec::new();
    for (n, (file, table)) in files.iter().zip(tables).enumerate() {
        same_columns(&files[0], &base, file, &table.schema)?;
        for batch in table.batches {
            let extra = Extra {
                first: &files[0],
                file,
                filename,
                hive: hive.map(|(h, read)| (h, read[n])),
            };
            batches.push(conform(&schema, &base, &batch, &extra)?);
        }
    }
    Ok(TableData::new(schema, batches))
}

/// What a file adds to its rows when read as part of several.
pub(crate) struct Extra<'a> {
    /// The first file, whose types the others take.
    pub(crate) first: &'a str,
    /// This file.
    pub(crate) file: &'a str,
    /// Add the `filename` column.
    pub(crate) filename: bool,
    /// The partitions, and this file's index among them.
    pub(crate) hive: Option<(&'a Hive, usize)>,
}

/// `batch` (a file's columns) as a batch of `schema`: its columns cast to
/// `base`'s types, then the `filename` and partition columns.
pub(crate) fn conform(
    schema: &SchemaRef,
    base: &SchemaRef,
    batch: &RecordBatch,
    extra: &Extra<'_>,
) -> Result<RecordBatch> {
    let options = CastOptions {
        safe: false,
        ..Default::default()
    };
    let file = extra.file;
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
                    extra.first
                ))
            })?);
        }
    }
    if extra.filename {
        let names: ArrayRef = Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
            file,
            batch.num_rows(),
        )));
        columns.push(names);
    }
    if let Some((hive, n)) = extra.hive {
        for (k, t) in hive.types.iter().enumerate() {
            let value = &hive.values[n][k];
            columns.push(partition_value(value, t, batch.num_rows()).ok_or_else(|| {
                Error::InvalidInput(format!(
                    "\"{file}\": partition value \"{value}\" is not a {}",
                    weir_planner::types::sql_type_name(t)
                ))
            })?);
        }
    }
    let options = arrow::array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    Ok(RecordBatch::try_new_with_options(
        schema.clone(),
        columns,
        &options,
    )?)
}

/// The EXPLAIN ANALYZE name of a file scan's load.
pub(crate) fn load_name(path: &str, read: usize, files: usize) -> String {
    if files == 1 {
        format!("read '{path}'")
    } else if read == files {
        format!("read '{path}' ({files} files)")
    } else {
        format!("read '{path}' ({read} of {files} files)")
    }
}
