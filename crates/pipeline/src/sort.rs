//! The sort breakers.
//!
//! - **Top-N** (`ORDER BY ... LIMIT k`): each lane keeps a bounded set of
//!   candidates and the k-th best key seen so far; a morsel's rows are
//!   compared with that threshold and only better rows are kept, so after
//!   the first morsel almost nothing is copied. The lanes' k rows each are
//!   merged at the end.
//! - **Full sort**: each lane sorts what it collected into one run; the
//!   runs are cut into ranges by splitter keys sampled from them, and each
//!   range is merged by its own task, in parallel.
//!
//! Keys are compared in Arrow's row format (mixed directions and NULLS
//! FIRST/LAST become plain byte order). A last, hidden key is each row's
//! position in the input (morsel index, row in the morsel), so keys are
//! unique, ties keep the input order (the sort is stable) and the result
//! is the same on any number of threads.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BooleanArray, RecordBatch, Scalar, UInt32Array, UInt64Array};
use arrow::compute::kernels::cmp::{gt_eq, lt_eq};
use arrow::compute::{
    SortOptions, concat, concat_batches, filter, filter_record_batch, interleave_record_batch,
    is_null, or, prep_null_mask_filter, take,
};
use arrow::datatypes::{DataType, SchemaRef};
use arrow::row::{OwnedRow, RowConverter, Rows, SortField};
use weir_planner::SortKey;

use crate::aggregate::conform;
use crate::error::{Error, Result};
use crate::eval::evaluate;

/// The largest `offset + fetch` run as a top-N; above it, a full sort.
pub(crate) const TOP_N_MAX: usize = 1 << 16;

/// The keys of a sort over batches of `schema`.
pub(crate) struct SortSpec {
    keys: Vec<SortKey>,
    /// The keys' types, as the row converter expects them.
    types: Vec<DataType>,
    fields: Vec<SortField>,
    pub(crate) schema: SchemaRef,
}

impl SortSpec {
    pub(crate) fn new(keys: &[SortKey], schema: SchemaRef) -> Result<Self> {
        let types: Vec<DataType> = keys.iter().map(|k| k.expr.data_type(&schema)).collect();
        let mut fields: Vec<SortField> = keys
            .iter()
            .zip(&types)
            .map(|(k, t)| {
                SortField::new_with_options(
                    t.clone(),
                    SortOptions {
                        descending: !k.asc,
                        nulls_first: k.nulls_first,
                    },
                )
            })
            .collect();
        fields.push(SortField::new(DataType::UInt64));
        Ok(SortSpec {
            keys: keys.to_vec(),
            types,
            fields,
            schema,
        })
    }

    pub(crate) fn converter(&self) -> Result<RowConverter> {
        RowConverter::new(self.fields.clone()).map_err(Error::arrow)
    }

    /// The row-encoded keys of `batch`, `seq` (input positions) last.
    fn rows(
        &self,
        converter: &RowConverter,
        batch: &RecordBatch,
        seq: &UInt64Array,
    ) -> Result<Rows> {
        let mut columns = self
            .keys
            .iter()
            .zip(&self.types)
            .map(|(k, t)| conform(evaluate(&k.expr, batch)?, t))
            .collect::<Result<Vec<ArrayRef>>>()?;
        columns.push(Arc::new(seq.clone()));
        converter.convert_columns(&columns).map_err(Error::arrow)
    }

    /// A one-line description for EXPLAIN.
    pub(crate) fn describe(&self) -> String {
        self.keys
            .iter()
            .map(SortKey::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The input positions of the `rows` rows of morsel `morsel`.
pub(crate) fn positions(morsel: usize, rows: usize) -> UInt64Array {
    let base = (morsel as u64) << 32;
    UInt64Array::from_iter_values((0..rows as u64).map(|i| base | i))
}

/// A lane's top-N: at most `k` best rows once compacted.
pub(crate) struct TopN {
    k: usize,
    converter: RowConverter,
    candidates: Vec<(RecordBatch, UInt64Array)>,
    buffered: usize,
    /// The k-th best key so far: rows not below it cannot make the cut.
    threshold: Option<OwnedRow>,
    /// The threshold's first key as a one-value array: a morsel is first
    /// narrowed by comparing its first key column with it (a vectorised
    /// kernel), and only rows that may beat the threshold are row-encoded.
    threshold_first: Option<ArrayRef>,
}

impl TopN {
    pub(crate) fn new(spec: &SortSpec, k: usize) -> Result<Self> {
        Ok(TopN {
            k,
            converter: spec.converter()?,
            candidates: Vec::new(),
            buffered: 0,
            threshold: None,
            threshold_first: None,
        })
    }

    /// Offers the rows of `batch`, at input positions `seq`.
    pub(crate) fn push(
        &mut self,
        spec: &SortSpec,
        batch: RecordBatch,
        seq: UInt64Array,
    ) -> Result<()> {
        let n = batch.num_rows();
        if self.k == 0 || n == 0 {
            return Ok(());
        }
        let (batch, seq) = match self.prefilter(spec, &batch)? {
            None => (batch, seq),
            Some(mask) => {
                let batch = filter_record_batch(&batch, &mask).map_err(Error::arrow)?;
                if batch.num_rows() == 0 {
                    return Ok(());
                }
                let seq = downcast_seq(&filter(&seq, &mask).map_err(Error::arrow)?)?;
                (batch, seq)
            }
        };
        let n = batch.num_rows();
        let (batch, seq) = match &self.threshold {
            None => (batch, seq),
            Some(t) => {
                let rows = spec.rows(&self.converter, &batch, &seq)?;
                let t = t.row();
                let keep: Vec<u32> = (0..n)
                    .filter(|&i| rows.row(i) < t)
                    .map(|i| i as u32)
                    .collect();
                if keep.is_empty() {
                    return Ok(());
                }
                if keep.len() == n {
                    (batch, seq)
                } else {
                    let keep = UInt32Array::from(keep);
                    let batch =
                        arrow::compute::take_record_batch(&batch, &keep).map_err(Error::arrow)?;
                    let seq = take(&seq, &keep, None).map_err(Error::arrow)?;
                    (batch, downcast_seq(&seq)?)
                }
            }
        };
        self.buffered += batch.num_rows();
        self.candidates.push((batch, seq));
        let limit = if self.threshold.is_none() {
            self.k
        } else {
            2 * self.k + 1024
        };
        if self.buffered > limit {
            self.compact(spec)?;
        }
        Ok(())
    }

    /// The rows of `batch` whose first key is not worse than the
    /// threshold's (ties are decided by the full keys later); `None` when
    /// there is no usable threshold.
    fn prefilter(&self, spec: &SortSpec, batch: &RecordBatch) -> Result<Option<BooleanArray>> {
        let Some(first) = &self.threshold_first else {
            return Ok(None);
        };
        if first.is_null(0) {
            return Ok(None);
        }
        let key = &spec.keys[0];
        let column = conform(evaluate(&key.expr, batch)?, &spec.types[0])?;
        let threshold = Scalar::new(Arc::clone(first));
        let mask = if key.asc {
            lt_eq(&column, &threshold)
        } else {
            gt_eq(&column, &threshold)
        }
        .map_err(Error::arrow)?;
        // a NULL key is better than the (non-NULL) threshold iff NULLS FIRST
        let mask = if mask.null_count() > 0 {
            prep_null_mask_filter(&mask)
        } else {
            mask
        };
        if key.nulls_first && column.null_count() > 0 {
            let nulls = is_null(&column).map_err(Error::arrow)?;
            return or(&mask, &nulls).map(Some).map_err(Error::arrow);
        }
        Ok(Some(mask))
    }

    /// Keeps only the best `k` candidates, sorted, and tightens the
    /// threshold.
    fn compact(&mut self, spec: &SortSpec) -> Result<()> {
        let (batch, seq) = self.concat(spec)?;
        let rows = spec.rows(&self.converter, &batch, &seq)?;
        let mut order: Vec<u32> = (0..batch.num_rows() as u32).collect();
        let cmp = |a: &u32, b: &u32| rows.row(*a as usize).cmp(&rows.row(*b as usize));
        if self.k == 0 {
            order.clear();
        } else if order.len() > self.k {
            order.select_nth_unstable_by(self.k - 1, cmp);
            order.truncate(self.k);
        }
        order.sort_unstable_by(cmp);
        if self.k > 0 && order.len() == self.k {
            let last = rows.row(order[self.k - 1] as usize);
            self.threshold_first = self
                .converter
                .convert_rows(std::iter::once(last))
                .map_err(Error::arrow)?
                .into_iter()
                .next();
            self.threshold = Some(last.owned());
        }
        let order = UInt32Array::from(order);
        let batch = arrow::compute::take_record_batch(&batch, &order).map_err(Error::arrow)?;
        let seq = downcast_seq(&take(&seq, &order, None).map_err(Error::arrow)?)?;
        self.buffered = batch.num_rows();
        self.candidates = vec![(batch, seq)];
        Ok(())
    }

    fn concat(&mut self, spec: &SortSpec) -> Result<(RecordBatch, UInt64Array)> {
        let parts = std::mem::take(&mut self.candidates);
        if parts.len() == 1 {
            return Ok(parts.into_iter().next().expect("one part"));
        }
        let batches: Vec<RecordBatch> = parts.iter().map(|(b, _)| b.clone()).collect();
        let batch = concat_batches(&spec.schema, &batches).map_err(Error::arrow)?;
        let seqs: Vec<&dyn arrow::array::Array> = parts
            .iter()
            .map(|(_, s)| s as &dyn arrow::array::Array)
            .collect();
        let seq = if seqs.is_empty() {
            UInt64Array::from(Vec::<u64>::new())
        } else {
            downcast_seq(&concat(&seqs).map_err(Error::arrow)?)?
        };
        Ok((batch, seq))
    }

    /// The best `k` rows, sorted, with their input positions.
    pub(crate) fn finish(mut self, spec: &SortSpec) -> Result<(RecordBatch, UInt64Array)> {
        self.compact(spec)?;
        self.concat(spec)
    }
}

fn downcast_seq(array: &ArrayRef) -> Result<UInt64Array> {
    array
        .as_any()
        .downcast_ref::<UInt64Array>()
        .cloned()
        .ok_or_else(|| Error::Internal("sort positions are not UInt64".into()))
}

/// One lane's input, sorted: the rows in key order, and their keys (in
/// input order) with the permutation that sorts them.
pub(crate) struct SortedRun {
    batch: RecordBatch,
    rows: Rows,
    order: Vec<u32>,
}

/// The first 16 bytes of a row-encoded key, zero-padded, as a big-endian
/// number: where two prefixes differ they order the keys as their bytes
/// do, so most comparisons of a sort are one integer compare.
#[inline]
fn prefix(bytes: &[u8]) -> u128 {
    let mut buf = [0u8; 16];
    let n = bytes.len().min(16);
    buf[..n].copy_from_slice(&bytes[..n]);
    u128::from_be_bytes(buf)
}

/// The permutation that sorts `rows` (unique keys).
fn sort_order(rows: &Rows) -> Vec<u32> {
    let mut keyed: Vec<(u128, u32)> = (0..rows.num_rows())
        .map(|i| (prefix(rows.row(i).as_ref()), i as u32))
        .collect();
    keyed.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| rows.row(a.1 as usize).cmp(&rows.row(b.1 as usize)))
    });
    keyed.into_iter().map(|(_, i)| i).collect()
}

impl SortedRun {
    /// Sorts the morsels a lane collected (`(morsel index, batch)`).
    pub(crate) fn new(spec: &SortSpec, mut parts: Vec<(usize, RecordBatch)>) -> Result<Self> {
        parts.sort_by_key(|(i, _)| *i);
        let converter = spec.converter()?;
        let seqs: Vec<UInt64Array> = parts
            .iter()
            .map(|(i, b)| positions(*i, b.num_rows()))
            .collect();
        let batches: Vec<RecordBatch> = parts.into_iter().map(|(_, b)| b).collect();
        let batch = concat_batches(&spec.schema, &batches).map_err(Error::arrow)?;
        drop(batches);
        let seq_refs: Vec<&dyn arrow::array::Array> =
            seqs.iter().map(|s| s as &dyn arrow::array::Array).collect();
        let seq = if seq_refs.is_empty() {
            UInt64Array::from(Vec::<u64>::new())
        } else {
            downcast_seq(&concat(&seq_refs).map_err(Error::arrow)?)?
        };
        let rows = spec.rows(&converter, &batch, &seq)?;
        drop(seq);
        // keys are unique (the position is the last key)
        let order = sort_order(&rows);
        let batch = arrow::compute::take_record_batch(&batch, &UInt32Array::from(order.clone()))
            .map_err(Error::arrow)?;
        Ok(SortedRun { batch, rows, order })
    }

    pub(crate) fn num_rows(&self) -> usize {
        self.batch.num_rows()
    }

    /// Bytes held.
    pub(crate) fn size(&self) -> usize {
        self.batch.get_array_memory_size() + self.rows.size() + self.order.capacity() * 4
    }

    /// The key of the row at sorted position `i`.
    #[inline]
    fn key(&self, i: usize) -> arrow::row::Row<'_> {
        self.rows.row(self.order[i] as usize)
    }

    /// The first position whose key is not below `key`.
    fn lower_bound(&self, key: &OwnedRow) -> usize {
        let key = key.row();
        let (mut lo, mut hi) = (0, self.num_rows());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.key(mid) < key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

/// How sorted runs are cut for a parallel merge: per run, the start of
/// each of `partitions` ranges (and its end).
pub(crate) struct MergePlan {
    pub(crate) partitions: usize,
    bounds: Vec<Vec<usize>>,
}

impl MergePlan {
    /// Cuts `runs` into about `partitions` ranges of similar size, by
    /// splitter keys sampled evenly from every run.
    pub(crate) fn new(runs: &[SortedRun], partitions: usize) -> Self {
        let partitions = partitions.max(1);
        let mut samples: Vec<OwnedRow> = Vec::new();
        if partitions > 1 {
            let per_run = 16 * partitions;
            for run in runs {
                let n = run.num_rows();
                if n == 0 {
                    continue;
                }
                let step = n.div_ceil(per_run).max(1);
                samples.extend((0..n).step_by(step).map(|i| run.key(i).owned()));
            }
            samples.sort_unstable();
        }
        let splitters: Vec<&OwnedRow> = if samples.is_empty() {
            Vec::new()
        } else {
            (1..partitions)
                .map(|j| &samples[j * samples.len() / partitions])
                .collect()
        };
        let bounds = runs
            .iter()
            .map(|run| {
                let mut b = Vec::with_capacity(splitters.len() + 2);
                b.push(0);
                b.extend(splitters.iter().map(|s| run.lower_bound(s)));
                b.push(run.num_rows());
                b
            })
            .collect();
        MergePlan {
            partitions: splitters.len() + 1,
            bounds,
        }
    }

    /// Merges range `p` of every run: rows in key order.
    pub(crate) fn merge(&self, runs: &[SortedRun], p: usize) -> Result<Option<RecordBatch>> {
        let ranges: Vec<(usize, usize)> = self.bounds.iter().map(|b| (b[p], b[p + 1])).collect();
        let total: usize = ranges.iter().map(|(lo, hi)| hi - lo).sum();
        if total == 0 {
            return Ok(None);
        }
        let mut indices: Vec<(usize, usize)> = Vec::with_capacity(total);
        let live: Vec<usize> = (0..runs.len())
            .filter(|&r| ranges[r].0 < ranges[r].1)
            .collect();
        if live.len() == 1 {
            let r = live[0];
            let (lo, hi) = ranges[r];
            return Ok(Some(runs[r].batch.slice(lo, hi - lo)));
        }
        let mut heap = BinaryHeap::with_capacity(live.len());
        for &r in &live {
            heap.push(Reverse((runs[r].key(ranges[r].0), r, ranges[r].0)));
        }
        while let Some(Reverse((_, r, i))) = heap.pop() {
            indices.push((r, i));
            if i + 1 < ranges[r].1 {
                heap.push(Reverse((runs[r].key(i + 1), r, i + 1)));
            }
        }
        let batches: Vec<&RecordBatch> = runs.iter().map(|r| &r.batch).collect();
        interleave_record_batch(&batches, &indices)
            .map(Some)
            .map_err(Error::arrow)
    }
}

#[cfg(test)]
mod tests {
    use arrow::array::{Array, Int64Array};
    use arrow::datatypes::{Field, Schema};
    use rand::{Rng, SeedableRng, rngs::StdRng};
    use weir_planner::Expr;

    use super::*;

    fn schema() -> SchemaRef {
        Arc::new(Schema::new(vec![
            Field::new("k", DataType::Int64, true),
            Field::new("id", DataType::Int64, false),
        ]))
    }

    /// Morsels of `(k, id)` with `id` the row's input position; `k` has
    /// many ties and some NULLs.
    fn morsels(rows: usize, per: usize, seed: u64) -> Vec<(usize, RecordBatch)> {
        let mut rng = StdRng::seed_from_u64(seed);
        let keys: Vec<Option<i64>> = (0..rows)
            .map(|_| (rng.random_range(0..10) > 0).then(|| rng.random_range(0..50)))
            .collect();
        keys.chunks(per)
            .enumerate()
            .map(|(m, chunk)| {
                let ids = (0..chunk.len()).map(|i| (m * per + i) as i64);
                let batch = RecordBatch::try_new(
                    schema(),
                    vec![
                        Arc::new(Int64Array::from(chunk.to_vec())),
                        Arc::new(Int64Array::from_iter_values(ids)),
                    ],
                )
                .unwrap();
                (m, batch)
            })
            .collect()
    }

    fn key(asc: bool, nulls_first: bool) -> Vec<SortKey> {
        vec![SortKey {
            expr: Expr::column(0, "k"),
            asc,
            nulls_first,
        }]
    }

    /// The ids in the order a stable sort by `k` gives.
    fn expected(parts: &[(usize, RecordBatch)], asc: bool, nulls_first: bool) -> Vec<i64> {
        let mut rows: Vec<(Option<i64>, i64)> = Vec::new();
        for (_, b) in parts {
            let k = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            let id = b.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
            for i in 0..b.num_rows() {
                rows.push((k.is_valid(i).then(|| k.value(i)), id.value(i)));
            }
        }
        rows.sort_by(|a, b| match (a.0, b.0) {
            (None, None) => std::cmp::Ordering::Equal,
            (None, Some(_)) if nulls_first => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (Some(_), None) if nulls_first => std::cmp::Ordering::Greater,
            (Some(_), None) => std::cmp::Ordering::Less,
            (Some(x), Some(y)) if asc => x.cmp(&y),
            (Some(x), Some(y)) => y.cmp(&x),
        });
        rows.into_iter().map(|(_, id)| id).collect()
    }

    fn ids(batches: &[RecordBatch]) -> Vec<i64> {
        batches
            .iter()
            .flat_map(|b| {
                let id = b.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
                id.values().to_vec()
            })
            .collect()
    }

    #[test]
    fn parallel_merge_of_runs_is_a_stable_sort() {
        let parts = morsels(5000, 37, 7);
        for (asc, nulls_first) in [(true, false), (false, false), (true, true), (false, true)] {
            let spec = SortSpec::new(&key(asc, nulls_first), schema()).unwrap();
            // three lanes took morsels round robin
            let runs: Vec<SortedRun> = (0..3)
                .map(|lane| {
                    let mine = parts
                        .iter()
                        .filter(|(m, _)| m % 3 == lane)
                        .cloned()
                        .collect();
                    SortedRun::new(&spec, mine).unwrap()
                })
                .collect();
            for partitions in [1, 2, 7, 64] {
                let plan = MergePlan::new(&runs, partitions);
                let merged: Vec<RecordBatch> = (0..plan.partitions)
                    .filter_map(|p| plan.merge(&runs, p).unwrap())
                    .collect();
                assert_eq!(
                    ids(&merged),
                    expected(&parts, asc, nulls_first),
                    "asc={asc} nulls_first={nulls_first} partitions={partitions}"
                );
            }
        }
    }

    #[test]
    fn top_n_is_the_head_of_the_stable_sort() {
        let parts = morsels(3000, 50, 11);
        for k in [0, 1, 10, 333, 5000] {
            for (asc, nulls_first) in [(false, false), (true, true), (true, false), (false, true)] {
                let spec = SortSpec::new(&key(asc, nulls_first), schema()).unwrap();
                let mut lanes: Vec<TopN> = (0..2).map(|_| TopN::new(&spec, k).unwrap()).collect();
                for (m, b) in &parts {
                    lanes[m % 2]
                        .push(&spec, b.clone(), positions(*m, b.num_rows()))
                        .unwrap();
                }
                let mut merged = TopN::new(&spec, k).unwrap();
                for lane in lanes {
                    let (b, seq) = lane.finish(&spec).unwrap();
                    merged.push(&spec, b, seq).unwrap();
                }
                let (out, _) = merged.finish(&spec).unwrap();
                let mut want = expected(&parts, asc, nulls_first);
                want.truncate(k);
                assert_eq!(ids(&[out]), want, "k={k} asc={asc}");
            }
        }
    }
}
