//! LIMIT / OFFSET over a finished result, in order: zero-copy slices.

use arrow::array::RecordBatch;

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
        out.push(if skip == 0 && len == n {
            b
        } else {
            b.slice(skip, len)
        });
        left -= len;
        skip = 0;
    }
    out
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

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
    fn limit_across_batches() {
        let b = batch(vec![Some(1), Some(2), Some(3)], vec!["a", "b", "c"]);
        let out = limit(vec![b.clone(), b.slice(0, 0), b], 2, Some(3));
        let all: Vec<String> = out.iter().flat_map(names).collect();
        assert_eq!(all, ["c", "a", "b"]);
    }

    #[test]
    fn offset_past_the_end_and_limit_zero() {
        let b = batch(vec![Some(1), Some(2)], vec!["a", "b"]);
        assert!(limit(vec![b.clone()], 5, None).is_empty());
        assert!(limit(vec![b], 0, Some(0)).is_empty());
    }
}
