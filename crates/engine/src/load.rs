//! Reading CSV and Parquet files, and normalising Arrow data to the types
//! the engine stores.

use std::fs::File;
use std::io::{BufReader, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch};
use arrow::compute::{CastOptions, cast_with_options};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
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

/// The schema a file will have once loaded (canonical types).
pub(crate) fn file_schema(path: &Path, format: FileFormat) -> Result<SchemaRef> {
    let raw = match format {
        FileFormat::Csv => {
            let (schema, _) = csv_format()
                .infer_schema(BufReader::new(open(path)?), Some(CSV_INFER_ROWS))
                .map_err(|e| io_error(path, e))?;
            Arc::new(schema)
        }
        FileFormat::Parquet => ParquetRecordBatchReaderBuilder::try_new(open(path)?)
            .map_err(|e| io_error(path, e))?
            .schema()
            .clone(),
    };
    canonical_schema(&raw)
}

/// Reads a whole file into memory, with canonical types.
pub(crate) fn read_file(path: &Path, format: FileFormat) -> Result<TableData> {
    let batches = match format {
        FileFormat::Csv => {
            let mut file = open(path)?;
            let (schema, _) = csv_format()
                .infer_schema(BufReader::new(&mut file), Some(CSV_INFER_ROWS))
                .map_err(|e| io_error(path, e))?;
            file.seek(SeekFrom::Start(0))
                .map_err(|e| io_error(path, e))?;
            let reader = arrow::csv::ReaderBuilder::new(Arc::new(schema))
                .with_header(true)
                .with_batch_size(READ_BATCH_ROWS)
                .build(BufReader::new(file))
                .map_err(|e| io_error(path, e))?;
            reader
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| io_error(path, e))?
        }
        FileFormat::Parquet => ParquetRecordBatchReaderBuilder::try_new(open(path)?)
            .map_err(|e| io_error(path, e))?
            .with_batch_size(READ_BATCH_ROWS)
            .build()
            .map_err(|e| io_error(path, e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| io_error(path, e))?,
    };
    let Some(schema) = batches.first().map(|b| b.schema()) else {
        // an empty file still has the columns its header names
        return Ok(TableData {
            schema: file_schema(path, format)?,
            batches: Vec::new(),
        });
    };
    normalize(schema, batches)
}

/// The canonical type a column of type `t` is stored as, or an error naming
/// the type when Weir cannot store it.
pub(crate) fn canonical_type(t: &DataType) -> Option<DataType> {
    // the planner's one Arrow-to-SQL type map (UBIGINT becomes DECIMAL(20,0))
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
