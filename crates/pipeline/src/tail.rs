//! The nodes above the parallel part, run on the query thread over the
//! (small) merged result: HAVING filters, projections, DISTINCT, ORDER BY
//! and LIMIT.

use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch, UInt32Array};
use arrow::compute::{SortOptions, concat_batches, filter_record_batch, take_record_batch};
use arrow::datatypes::SchemaRef;
use arrow::row::{RowConverter, SortField};
use weir_planner::{LogicalPlan, SortKey};

use crate::aggregate::AggregatePlan;
use crate::error::{Error, Result};
use crate::eval::{evaluate, evaluate_predicate};
use crate::hash::FxHashSet;
use crate::pipeline::project_batch;
use crate::step::PipelineBatch;

/// Runs `node` over `input` (batches of its input's schema).
pub(crate) fn run_node(node: &LogicalPlan, input: Vec<RecordBatch>) -> Result<Vec<RecordBatch>> {
    match node {
        LogicalPlan::Filter { predicate, .. } => input
            .into_iter()
            .map(|b| {
                let mask = evaluate_predicate(predicate, &b)?;
                filter_record_batch(&b, &mask).map_err(Error::arrow)
            })
            .collect(),
        LogicalPlan::Projection { exprs, schema, .. } => input
            .iter()
            .map(|b| project_batch(b, exprs, schema))
            .collect(),
        LogicalPlan::Aggregate {
            input: child,
            group_by,
            aggregates,
            schema,
        } => {
            let plan =
                AggregatePlan::new(group_by, aggregates, &child.schema(), Arc::clone(schema))?;
            let mut state = plan.new_state()?;
            for b in input {
                state.update(&plan, &PipelineBatch::new(b))?;
            }
            Ok(vec![state.finish(&plan)?])
        }
        LogicalPlan::Distinct { .. } => {
            let batch = concat(&node.schema(), &input)?;
            Ok(vec![distinct(&batch)?])
        }
        LogicalPlan::Sort { keys, .. } => {
            let batch = concat(&node.schema(), &input)?;
            Ok(vec![sort(&batch, keys)?])
        }
        LogicalPlan::Limit { offset, fetch, .. } => Ok(limit(input, *offset, *fetch)),
        LogicalPlan::Scan { .. } | LogicalPlan::Values { .. } => Err(Error::Internal(
            "a Scan or Values node above the pipeline".into(),
        )),
    }
}

fn concat(schema: &SchemaRef, input: &[RecordBatch]) -> Result<RecordBatch> {
    if input.len() == 1 {
        return Ok(input[0].clone());
    }
    concat_batches(schema, input).map_err(Error::arrow)
}

/// The rows of `batch` sorted by `keys`, stably (equal keys keep their
/// order).
pub(crate) fn sort(batch: &RecordBatch, keys: &[SortKey]) -> Result<RecordBatch> {
    if batch.num_rows() < 2 || keys.is_empty() {
        return Ok(batch.clone());
    }
    let columns = keys
        .iter()
        .map(|k| evaluate(&k.expr, batch))
        .collect::<Result<Vec<ArrayRef>, _>>()?;
    let fields = keys
        .iter()
        .zip(&columns)
        .map(|(k, c)| {
            SortField::new_with_options(
                c.data_type().clone(),
                SortOptions {
                    descending: !k.asc,
                    nulls_first: k.nulls_first,
                },
            )
        })
        .collect();
    let converter = RowConverter::new(fields).map_err(Error::arrow)?;
    let rows = converter.convert_columns(&columns).map_err(Error::arrow)?;
    let mut indices: Vec<u32> = (0..batch.num_rows() as u32).collect();
    // `sort_by` is stable
    indices.sort_by(|&a, &b| rows.row(a as usize).cmp(&rows.row(b as usize)));
    take_record_batch(batch, &UInt32Array::from(indices)).map_err(Error::arrow)
}

/// The first occurrence of each distinct row of `batch` (NULLs equal), in
/// input order.
pub(crate) fn distinct(batch: &RecordBatch) -> Result<RecordBatch> {
    if batch.num_columns() == 0 {
        return Ok(batch.slice(0, batch.num_rows().min(1)));
    }
    let fields = batch
        .columns()
        .iter()
        .map(|c| SortField::new(c.data_type().clone()))
        .collect();
    let converter = RowConverter::new(fields).map_err(Error::arrow)?;
    let rows = converter
        .convert_columns(batch.columns())
        .map_err(Error::arrow)?;
    let mut seen: FxHashSet<&[u8]> = FxHashSet::default();
    let mut keep = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        if seen.insert(row.data()) {
            keep.push(i as u32);
        }
    }
    if keep.len() == batch.num_rows() {
        return Ok(batch.clone());
    }
    take_record_batch(batch, &UInt32Array::from(keep)).map_err(Error::arrow)
}

/// Skips `offset` rows, then keeps at most `fetch`.
pub(crate) fn limit(
    input: Vec<RecordBatch>,
    offset: usize,
    fetch: Option<usize>,
) -> Vec<RecordBatch> {
    let mut skip = offset;
    let mut left = fetch.unwrap_or(usize::MAX);
    let mut out = Vec::new();
    for b in input {
        if left == 0 {
            break;
        }
        let n = b.num_rows();
        if skip >= n {
            skip -= n;
            continue;
        }
        let len = (n - skip).min(left);
        out.push(b.slice(skip, len));
        left -= len;
        skip = 0;
    }
    out
}

#[cfg(test)]
mod tests {
    use arrow::array::{Int64Array, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};

    use super::*;

    fn batch(values: Vec<Option<i64>>, names: Vec<&str>) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("v", DataType::Int64, true),
            Field::new("n", DataType::Utf8, false),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from(values)),
                Arc::new(StringArray::from(names)),
            ],
        )
        .unwrap()
    }

    fn names(b: &RecordBatch) -> Vec<String> {
        let n = b.column(1).as_any().downcast_ref::<StringArray>().unwrap();
        n.iter().map(|s| s.unwrap().to_owned()).collect()
    }

    #[test]
    fn sort_is_stable() {
        let b = batch(
            vec![Some(2), None, Some(1), Some(2), None],
            vec!["a", "b", "c", "d", "e"],
        );
        let key = |asc, nulls_first| SortKey {
            expr: weir_planner::Expr::column(0, "v"),
            asc,
            nulls_first,
        };
        assert_eq!(
            names(&sort(&b, &[key(true, false)]).unwrap()),
            ["c", "a", "d", "b", "e"]
        );
        assert_eq!(
            names(&sort(&b, &[key(false, true)]).unwrap()),
            ["b", "e", "a", "d", "c"]
        );
    }

    #[test]
    fn distinct_first_occurrence_nulls_equal() {
        let b = batch(vec![Some(1), None, Some(1), None], vec!["x", "y", "x", "y"]);
        assert_eq!(names(&distinct(&b).unwrap()), ["x", "y"]);
    }

    #[test]
    fn limit_across_batches() {
        let b = batch(vec![Some(1), Some(2), Some(3)], vec!["a", "b", "c"]);
        let out = limit(vec![b.clone(), b.slice(0, 0), b], 2, Some(3));
        let all: Vec<String> = out.iter().flat_map(names).collect();
        assert_eq!(all, ["c", "a", "b"]);
    }
}
