//! The sort breakers.
//!
//! - **Top-N** (`ORDER BY ... LIMIT k`): each lane keeps a bounded set of
//!   candidates and the k-th best key seen so far; a morsel's rows are
//!   compared with that threshold and only better rows are kept, so after
//!   the first morsel almost nothing is copied. The lanes' k rows each are
//!   merged at the end.
//! - **Full sort** of fixed-width keys and of strings that repeat: one
//!   radix sort of every lane's rows in two parallel jobs, with no merge
//!   ([`radix`]). A string key's value is its string's rank among the
//!   distinct strings of every lane, which the lanes collect in
//!   dictionaries as the rows arrive.
//! - **Full sort** of other keys (or of codes too wide for a word, or of
//!   strings too varied to rank): each lane sorts what it collected into
//!   runs; the runs are cut into ranges by splitter keys sampled from
//!   them, and each range is merged by its own task, in parallel.
//!
//! Keys are compared in Arrow's row format (mixed directions and NULLS
//! FIRST/LAST become plain byte order). A last, hidden key is each row's
//! position in the input (morsel index, row in the morsel), so keys are
//! unique, ties keep the input order (the sort is stable) and the result
//! is the same on any number of threads.

use std::borrow::Borrow;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use arrow::array::{
    Array, ArrayRef, ArrowPrimitiveType, AsArray, BooleanArray, BooleanBufferBuilder,
    PrimitiveArray, RecordBatch, RecordBatchOptions, Scalar, UInt32Array, UInt64Array,
    downcast_primitive, make_comparator,
};
use arrow::buffer::NullBuffer;
use arrow::compute::kernels::cmp::{gt_eq, lt_eq};
use arrow::compute::{
    SortOptions, concat, concat_batches, filter_record_batch, interleave, is_null, or,
    prep_null_mask_filter, take,
};
use arrow::datatypes::{DataType, Decimal128Type, SchemaRef};
use arrow::row::{OwnedRow, RowConverter, Rows, SortField};
use weir_planner::{Expr, SortKey};

use crate::aggregate::conform;
use crate::error::{Error, Result};
use crate::eval::evaluate;
use crate::zones::{Zone, key_of};

mod radix;

use radix::KeyRange;
pub(crate) use radix::{FullSort, KeyedRows, RadixSort, RowLimit, Scattered, sort_parts};

/// The largest `offset + fetch` run as a top-N; above it, a full sort
/// that gathers only the rows kept.
const TOP_N_MAX: usize = 1 << 16;

/// The same for keys of a fixed width, whose full sort is one radix sort:
/// its cost hardly grows with the rows kept, a top-N's grows with them
/// (SF 1 `lineitem`, 2 threads: from 16K rows on, the radix sort is the
/// faster on every shape timed).
const RADIX_TOP_N_MAX: usize = 1 << 14;

/// The largest `offset + fetch` a top-N runs for `sort` (a Sort node):
/// above it, a full sort gathers only the rows kept.
pub(crate) fn top_n_max(sort: &weir_planner::LogicalPlan) -> Result<usize> {
    let weir_planner::LogicalPlan::Sort { keys, input } = sort else {
        return Err(Error::Internal("a top-N without a Sort node".into()));
    };
    let schema = input.schema();
    let fixed = keys
        .iter()
        .all(|k| FixedKind::of(&k.expr.data_type(&schema)).is_some());
    Ok(if fixed { RADIX_TOP_N_MAX } else { TOP_N_MAX })
}

/// The keys of a sort over batches of `schema`.
pub(crate) struct SortSpec {
    keys: Vec<SortKey>,
    /// The keys' types, as the row converter expects them.
    types: Vec<DataType>,
    fields: Vec<SortField>,
    /// The keys as one unsigned number (a NULL flag bit and an ordered
    /// value per key) when every key has a fixed width and they fit in 128
    /// bits; else full sorts compare row-encoded keys.
    fixed: Option<Vec<FixedKey>>,
    /// Every key of a fixed width, however many bits they take in all:
    /// a full sort is then one radix sort of the codes of the values the
    /// rows hold ([`FullSort`]).
    radix: Option<Vec<FixedKey>>,
    pub(crate) schema: SchemaRef,
}

impl SortSpec {
    /// The input column the first key is, with its type, when it is a
    /// plain column.
    pub(crate) fn first_column(&self) -> Option<(usize, &DataType)> {
        match &self.keys.first()?.expr {
            Expr::Column(c) => Some((c.index, &self.types[0])),
            _ => None,
        }
    }

    /// Whether a full sort by these keys is one radix sort of every
    /// lane's rows ([`FullSort`]): every key has a fixed width.
    pub(crate) fn by_radix(&self) -> bool {
        self.radix.is_some()
    }

    /// [`Self::by_radix`] with keys of fixed widths only (no string
    /// ranked by a dictionary): the sort of a window's bucket, which
    /// numbers partitions of other keys instead.
    pub(crate) fn by_radix_fixed(&self) -> bool {
        self.radix
            .as_ref()
            .is_some_and(|r| r.iter().all(|k| !matches!(k.kind, FixedKind::Str)))
    }

    /// Whether the first key sorts descending.
    pub(crate) fn first_descending(&self) -> bool {
        self.keys.first().is_some_and(|key| !key.asc)
    }

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
        let keyed = |of: fn(&DataType) -> Option<FixedKind>| -> Option<Vec<FixedKey>> {
            keys.iter()
                .zip(&types)
                .map(|(k, t)| {
                    of(t).map(|kind| FixedKey {
                        kind,
                        descending: !k.asc,
                        nulls_first: k.nulls_first,
                    })
                })
                .collect()
        };
        let radix = keyed(FixedKind::of_radix);
        let fixed = keyed(FixedKind::of)
            .filter(|f| f.iter().map(|k| k.kind.bits() + 1).sum::<u32>() <= 128);
        Ok(SortSpec {
            keys: keys.to_vec(),
            types,
            fields,
            fixed,
            radix,
            schema,
        })
    }

    /// The key columns of `batch`, of the planned types.
    fn key_columns(&self, batch: &RecordBatch) -> Result<Vec<ArrayRef>> {
        self.keys
            .iter()
            .zip(&self.types)
            .map(|(k, t)| conform(evaluate(&k.expr, batch)?, t))
            .collect()
    }

    /// The ordered values of `batch`'s keys, of the fixed widths `fixed`.
    fn key_values(&self, fixed: &[FixedKey], batch: &RecordBatch) -> Result<Vec<KeyValues>> {
        let columns = self.key_columns(batch)?;
        fixed
            .iter()
            .zip(&columns)
            .map(|(k, c)| KeyValues::new(*k, c))
            .collect()
    }

    /// Whether the keys have fixed widths that fit in 128 bits in all
    /// ([`Self::ordered_keys`]).
    pub(crate) fn fixed_width(&self) -> bool {
        self.fixed.is_some()
    }

    /// Per row of `batch`, its keys as one number that orders rows as
    /// the keys do ([`global_keys`]), when they fit in 128 bits.
    pub(crate) fn ordered_keys(&self, batch: &RecordBatch) -> Result<Option<Vec<u128>>> {
        let Some(fixed) = &self.fixed else {
            return Ok(None);
        };
        let keys = self.key_values(fixed, batch)?;
        Ok(Some(global_keys(&keys, batch.num_rows())))
    }

    pub(crate) fn converter(&self) -> Result<RowConverter> {
        RowConverter::new(self.fields.clone()).map_err(Error::arrow)
    }

    /// The row-encoded keys of `batch`, `seq` (input positions) last.
    pub(crate) fn rows(
        &self,
        converter: &RowConverter,
        batch: &RecordBatch,
        seq: &UInt64Array,
    ) -> Result<Rows> {
        let mut columns = self.key_columns(batch)?;
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
#[cfg(test)]
pub(crate) fn positions(morsel: usize, rows: usize) -> UInt64Array {
    positions_at(morsel, 0, rows)
}

/// The input positions of `rows` rows of morsel `morsel` from its row
/// `first_row` on (a morsel that a join turned into several batches).
pub(crate) fn positions_at(morsel: usize, first_row: usize, rows: usize) -> UInt64Array {
    let base = position_base(morsel, first_row);
    UInt64Array::from_iter_values((0..rows as u64).map(|i| base + i))
}

/// The input position of row `first_row` of morsel `morsel`; the rows
/// after it follow on.
pub(crate) fn position_base(morsel: usize, first_row: usize) -> u64 {
    ((morsel as u64) << 32) + first_row as u64
}

/// The input positions of each of `parts` (`(morsel, batch)` in morsel
/// order; the batches of one morsel follow each other).
pub(crate) fn part_positions(parts: &[(usize, RecordBatch)]) -> Vec<UInt64Array> {
    let mut out = Vec::with_capacity(parts.len());
    let mut previous = None;
    let mut first_row = 0;
    for (m, b) in parts {
        if previous != Some(*m) {
            previous = Some(*m);
            first_row = 0;
        }
        out.push(positions_at(*m, first_row, b.num_rows()));
        first_row += b.num_rows();
    }
    out
}

/// The best first-key threshold the lanes of one top-N have found. A
/// lane's threshold bounds every lane's rows (that lane holds `k` rows not
/// worse than it), so each lane publishes its own and takes a better one:
/// a lane skips the zones and rows another lane's candidates already beat.
#[derive(Default)]
pub(crate) struct SharedBound(Mutex<Option<ArrayRef>>);

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
    /// Whether the candidates are one batch of at most `k` rows in order
    /// (compacted, nothing offered since).
    sorted: bool,
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
            sorted: true,
        })
    }

    /// The best `k` rows of lanes' [`TopN::finish`]es, sorted: one lane's
    /// rows are that already.
    pub(crate) fn merge(spec: &SortSpec, k: usize, lanes: Vec<TopRows>) -> Result<RecordBatch> {
        let mut lanes: Vec<_> = lanes
            .into_iter()
            .filter(|l| l.batch.num_rows() > 0)
            .collect();
        if lanes.len() == 1 {
            let batch = lanes.pop().expect("one lane").batch;
            return Ok(batch.slice(0, batch.num_rows().min(k)));
        }
        let Some(schema) = lanes.first().map(|l| l.batch.schema()) else {
            return Ok(TopN::new(spec, k)?.finish(spec, false)?.batch);
        };
        // each lane's rows are sorted by (keys, position): the first k of
        // a merge of their row-encoded keys (encoded by the lanes), the
        // lanes' heads compared
        let mut converter = None;
        let mut rows = Vec::with_capacity(lanes.len());
        for lane in &mut lanes {
            rows.push(match lane.keys.take() {
                Some(keys) => keys,
                None => {
                    let converter = match &mut converter {
                        Some(c) => c,
                        None => converter.insert(spec.converter()?),
                    };
                    spec.rows(converter, &lane.batch, &lane.seq)?
                }
            });
        }
        let mut at = vec![0usize; rows.len()];
        let total: usize = rows.iter().map(Rows::num_rows).sum();
        let mut picks: Vec<(usize, usize)> = Vec::with_capacity(k.min(total));
        while picks.len() < k {
            let mut best: Option<usize> = None;
            for (l, r) in rows.iter().enumerate() {
                if at[l] < r.num_rows() && best.is_none_or(|b| r.row(at[l]) < rows[b].row(at[b])) {
                    best = Some(l);
                }
            }
            let Some(l) = best else { break };
            picks.push((l, at[l]));
            at[l] += 1;
        }
        let columns = (0..schema.fields().len())
            .map(|c| {
                let arrays: Vec<&dyn Array> =
                    lanes.iter().map(|l| l.batch.column(c).as_ref()).collect();
                interleave(&arrays, &picks).map_err(Error::arrow)
            })
            .collect::<Result<Vec<_>>>()?;
        let options = RecordBatchOptions::new().with_row_count(Some(picks.len()));
        RecordBatch::try_new_with_options(schema, columns, &options).map_err(Error::arrow)
    }

    /// Trades first-key thresholds with the other lanes: publishes this
    /// lane's if it beats the shared one, takes the shared one if it beats
    /// this lane's. (A NULL threshold bounds nothing and is not shared.)
    pub(crate) fn share_bound(&mut self, spec: &SortSpec, shared: &SharedBound) -> Result<()> {
        let mine = self.threshold_first.as_ref().filter(|t| !t.is_null(0));
        let mut best = shared.0.lock().unwrap_or_else(|e| e.into_inner());
        match (mine, best.as_ref()) {
            (None, None) => {}
            (Some(mine), None) => *best = Some(Arc::clone(mine)),
            (None, Some(theirs)) => self.threshold_first = Some(Arc::clone(theirs)),
            (Some(mine), Some(theirs)) => {
                let key = &spec.keys[0];
                let options = SortOptions {
                    descending: !key.asc,
                    nulls_first: key.nulls_first,
                };
                let order = make_comparator(mine.as_ref(), theirs.as_ref(), options)
                    .map_err(Error::arrow)?(0, 0);
                match order {
                    std::cmp::Ordering::Less => *best = Some(Arc::clone(mine)),
                    std::cmp::Ordering::Greater => {
                        self.threshold_first = Some(Arc::clone(theirs));
                    }
                    std::cmp::Ordering::Equal => {}
                }
            }
        }
        Ok(())
    }

    /// Offers the rows of `batch`, at input positions `seq` (the lanes
    /// offer whole morsels, [`TopN::push_morsel`]).
    #[cfg(test)]
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
        self.first_bound(spec, &batch)?;
        let (batch, seq) = match self.prefilter(spec, &batch)? {
            None => (batch, seq),
            Some(mask) => {
                let batch = filter_record_batch(&batch, &mask).map_err(Error::arrow)?;
                if batch.num_rows() == 0 {
                    return Ok(());
                }
                let seq =
                    downcast_seq(&arrow::compute::filter(&seq, &mask).map_err(Error::arrow)?)?;
                (batch, seq)
            }
        };
        self.push_candidates(spec, batch, seq)
    }

    /// Offers the rows of `batch`, a morsel's rows from input position
    /// `base` on: the positions are made only for the rows the threshold's
    /// first key lets through.
    pub(crate) fn push_morsel(
        &mut self,
        spec: &SortSpec,
        batch: RecordBatch,
        base: u64,
    ) -> Result<()> {
        let n = batch.num_rows();
        if self.k == 0 || n == 0 {
            return Ok(());
        }
        self.first_bound(spec, &batch)?;
        let (batch, seq) = match self.prefilter(spec, &batch)? {
            None => (
                batch,
                UInt64Array::from_iter_values((0..n as u64).map(|i| base + i)),
            ),
            Some(mask) => {
                let kept = mask.true_count();
                if kept == 0 {
                    return Ok(());
                }
                if self.threshold.is_some() && kept > (2 * self.k).max(n / 32) {
                    // many rows tie the threshold's first key (a key of
                    // few values): their keys alone are compared with the
                    // threshold before any row is copied
                    return self.push_beating(spec, &batch, &mask, base);
                }
                let seq = UInt64Array::from_iter_values(
                    mask.values().set_indices().map(|i| base + i as u64),
                );
                let batch = if kept == n {
                    batch
                } else {
                    filter_record_batch(&batch, &mask).map_err(Error::arrow)?
                };
                (batch, seq)
            }
        };
        self.push_candidates(spec, batch, seq)
    }

    /// Keeps the rows of `batch` (rows from input position `base` on)
    /// that `mask` lets through and whose keys beat the threshold: the
    /// key columns of the rows let through are row-encoded and compared,
    /// and only the rows that beat it are copied.
    fn push_beating(
        &mut self,
        spec: &SortSpec,
        batch: &RecordBatch,
        mask: &BooleanArray,
        base: u64,
    ) -> Result<()> {
        let Some(threshold) = &self.threshold else {
            return Err(Error::Internal(
                "a top-N narrowed without a threshold".into(),
            ));
        };
        let mut columns = spec
            .key_columns(batch)?
            .iter()
            .map(|c| arrow::compute::filter(c, mask).map_err(Error::arrow))
            .collect::<Result<Vec<_>>>()?;
        let through: Vec<u32> = mask.values().set_indices().map(|i| i as u32).collect();
        let seq = UInt64Array::from_iter_values(through.iter().map(|&i| base + u64::from(i)));
        columns.push(Arc::new(seq));
        let rows = self
            .converter
            .convert_columns(&columns)
            .map_err(Error::arrow)?;
        let t = threshold.row();
        let beating: Vec<u32> = through
            .iter()
            .enumerate()
            .filter(|&(j, _)| rows.row(j) < t)
            .map(|(_, &i)| i)
            .collect();
        if beating.is_empty() {
            return Ok(());
        }
        let seq = UInt64Array::from_iter_values(beating.iter().map(|&i| base + u64::from(i)));
        let taken = UInt32Array::from(beating);
        let batch = arrow::compute::take_record_batch(batch, &taken).map_err(Error::arrow)?;
        self.keep(spec, batch, seq)
    }

    /// Keeps the rows of `batch` (at positions `seq`) that may beat the
    /// threshold as candidates, compacting when they pile up.
    fn push_candidates(
        &mut self,
        spec: &SortSpec,
        batch: RecordBatch,
        seq: UInt64Array,
    ) -> Result<()> {
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
        self.keep(spec, batch, seq)
    }

    /// Keeps the rows of `batch` (at positions `seq`), known to beat the
    /// threshold, as candidates, compacting when they pile up.
    fn keep(&mut self, spec: &SortSpec, batch: RecordBatch, seq: UInt64Array) -> Result<()> {
        self.buffered += batch.num_rows();
        self.candidates.push((batch, seq));
        self.sorted = false;
        // compacting tightens the threshold, and a tight threshold is what
        // lets the prefilter and the zones skip rows: compact once the
        // candidates number twice k (and a few more, so that small k
        // still compacts in batches)
        let limit = if self.threshold.is_none() {
            self.k
        } else {
            2 * self.k + 64
        };
        if self.buffered > limit {
            self.compact(spec)?;
        }
        Ok(())
    }

    /// Takes `first`, a value of the first key, as the threshold's first
    /// key while the lane has none: at least `k` rows of the input are
    /// known not to be worse ([`crate::zones::ZoneCache::bound`]).
    pub(crate) fn seed(&mut self, first: ArrayRef) {
        if self.threshold_first.is_none() {
            self.threshold_first = Some(first);
        }
    }

    /// Whether a block of the first key's column whose values span a zone
    /// may hold a row that beats the threshold (the prefilter's test on a
    /// zone); `None` while there is no usable threshold.
    pub(crate) fn zone_test(&self, spec: &SortSpec) -> Option<impl Fn(&Zone) -> bool + use<>> {
        let t = key_of(self.threshold_first.as_ref()?, 0)?;
        let key = &spec.keys[0];
        let (asc, nulls_first) = (key.asc, key.nulls_first);
        Some(move |z: &Zone| {
            (if asc { z.min <= t } else { z.max >= t }) || (nulls_first && z.nulls)
        })
    }

    /// Before the first compaction, a batch of more than `k` rows gives
    /// the first key's threshold: its `k`-th best value of that key (a
    /// selection over the key's ordered values; a partial sort for keys
    /// without a fixed width). At least `k` rows seen are not worse
    /// than it, so a row whose first key is worse cannot make the cut, and
    /// the prefilter drops it before any row is encoded.
    fn first_bound(&mut self, spec: &SortSpec, batch: &RecordBatch) -> Result<()> {
        if self.threshold_first.is_some() || batch.num_rows() <= self.k {
            return Ok(());
        }
        let key = &spec.keys[0];
        let column = conform(evaluate(&key.expr, batch)?, &spec.types[0])?;
        if let Some(decimals) = column.as_primitive_opt::<Decimal128Type>() {
            // a wide decimal (a sum's): selected as i128, smaller better
            let nulls = decimals.nulls().filter(|n| n.null_count() > 0);
            let Some(k) = self.k_of_values(nulls, key.nulls_first) else {
                return Ok(());
            };
            let better = |v: i128| if key.asc { v } else { !v };
            let values = decimals.values();
            let mut keyed: Vec<(i128, u32)> = match nulls {
                None => (0..values.len())
                    .map(|i| (better(values[i]), i as u32))
                    .collect(),
                Some(n) => n
                    .valid_indices()
                    .map(|i| (better(values[i]), i as u32))
                    .collect(),
            };
            if keyed.len() >= k {
                let (_, kth, _) = keyed.select_nth_unstable(k - 1);
                self.threshold_first = Some(column.slice(kth.1 as usize, 1));
            }
            return Ok(());
        }
        let Some(kind) = FixedKind::of(column.data_type()) else {
            let options = SortOptions {
                descending: !key.asc,
                nulls_first: key.nulls_first,
            };
            let order = arrow::compute::sort_to_indices(&column, Some(options), Some(self.k))
                .map_err(Error::arrow)?;
            let kth = column.slice(order.value(self.k - 1) as usize, 1);
            // a NULL k-th value bounds nothing the prefilter can test
            if !kth.is_null(0) {
                self.threshold_first = Some(kth);
            }
            return Ok(());
        };
        let nulls = column.logical_nulls().filter(|n| n.null_count() > 0);
        let Some(k) = self.k_of_values(nulls.as_ref(), key.nulls_first) else {
            return Ok(());
        };
        let mut ordered = Vec::with_capacity(column.len());
        ordered_values(kind, column.as_ref(), &mut ordered)?;
        // smaller is better
        let better = |v: u64| if key.asc { v } else { !v };
        let mut values: Vec<u64> = match &nulls {
            None => ordered.iter().map(|&v| better(v)).collect(),
            Some(n) => n.valid_indices().map(|i| better(ordered[i])).collect(),
        };
        if values.len() < k {
            return Ok(());
        }
        let (_, &mut kth, _) = values.select_nth_unstable(k - 1);
        let row = (0..column.len())
            .find(|&i| better(ordered[i]) == kth && nulls.as_ref().is_none_or(|n| n.is_valid(i)))
            .ok_or_else(|| Error::Internal("the k-th best first key is in no row".into()))?;
        self.threshold_first = Some(column.slice(row, 1));
        Ok(())
    }

    /// Of the best `k` rows of a batch whose first key has NULLs `nulls`,
    /// how many are values: with NULLS FIRST the NULLs are the best rows
    /// and the rest of the `k` come from the values; `None` when the NULLs
    /// alone fill the `k`.
    fn k_of_values(&self, nulls: Option<&NullBuffer>, nulls_first: bool) -> Option<usize> {
        match (nulls, nulls_first) {
            (Some(n), true) => self.k.checked_sub(n.null_count()).filter(|&k| k > 0),
            _ => Some(self.k),
        }
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
        self.sorted = true;
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

    /// The best `k` rows, sorted, with their input positions; with
    /// `keyed` (lanes to merge), their row-encoded keys too, encoded here
    /// in the lane rather than in the serial merge.
    pub(crate) fn finish(mut self, spec: &SortSpec, keyed: bool) -> Result<TopRows> {
        if !self.sorted {
            self.compact(spec)?;
        }
        let (batch, seq) = self.concat(spec)?;
        let keys = if keyed && batch.num_rows() > 0 {
            Some(spec.rows(&self.converter, &batch, &seq)?)
        } else {
            None
        };
        Ok(TopRows { batch, seq, keys })
    }
}

/// A lane's best rows ([`TopN::finish`]), sorted by their keys and input
/// positions.
pub(crate) struct TopRows {
    pub(crate) batch: RecordBatch,
    pub(crate) seq: UInt64Array,
    /// The keys and positions row-encoded, where the lane encoded them.
    keys: Option<Rows>,
}

impl TopRows {
    /// Bytes held (for the memory accountant).
    pub(crate) fn size(&self) -> usize {
        crate::pipeline::batch_bytes(&self.batch)
            + self.seq.len() * 8
            + self.keys.as_ref().map_or(0, Rows::size)
    }
}

fn downcast_seq(array: &ArrayRef) -> Result<UInt64Array> {
    array
        .as_any()
        .downcast_ref::<UInt64Array>()
        .cloned()
        .ok_or_else(|| Error::Internal("sort positions are not UInt64".into()))
}

/// Bytes `at..at + 16` of a row-encoded key, zero-padded, as a
/// big-endian number: where two such chunks differ (the bytes before
/// being equal) they order the keys as their bytes do. (Zero padding
/// never ties two different keys: the row format is prefix-free, each
/// field ending itself, so two keys differ at a byte both have.)
#[inline]
fn chunk(bytes: &[u8], at: usize) -> u128 {
    let mut buf = [0u8; 16];
    if let Some(rest) = bytes.get(at..) {
        let n = rest.len().min(16);
        buf[..n].copy_from_slice(&rest[..n]);
    }
    u128::from_be_bytes(buf)
}

/// The permutation that sorts `rows` (unique keys): by their first 16
/// bytes as one number, then each run of rows equal in those by the next
/// 16, and so on until every row stands alone (a most-significant-first
/// radix sort of 16-byte digits). A comparison is one integer compare,
/// never a walk of two rows' bytes: a key led by a few short strings or
/// a small integer (`ORDER BY l_shipmode, l_orderkey`: seven 16-byte
/// heads for 6M rows) sorts as fast as one of a fixed width.
fn sort_order(rows: &Rows) -> Vec<u32> {
    let mut keyed: Vec<(u128, u32)> = (0..rows.num_rows())
        .map(|i| (chunk(rows.row(i).as_ref(), 0), i as u32))
        .collect();
    // (by the chunk alone: rows of equal chunks are sorted again, and a
    // sort that finds many equal keys runs over them in one pass)
    keyed.sort_unstable_by_key(|k| k.0);
    // ranges sorted by the chunk at `at`, whose runs of equal chunks are
    // still to be sorted by the chunks after
    let mut ranges: Vec<(usize, usize, usize)> = vec![(0, keyed.len(), 0)];
    while let Some((start, end, at)) = ranges.pop() {
        let mut s = start;
        while s < end {
            let head = keyed[s].0;
            let e = s + keyed[s..end].iter().take_while(|k| k.0 == head).count();
            if e - s > 1 {
                let next = at + 16;
                let mut longest = 0;
                for k in &mut keyed[s..e] {
                    let row = rows.row(k.1 as usize);
                    longest = longest.max(row.as_ref().len());
                    k.0 = chunk(row.as_ref(), next);
                }
                keyed[s..e].sort_unstable_by_key(|k| k.0);
                // (keys are unique, so some chunk of a run's rows differs
                // before the longest ends)
                if next + 16 < longest {
                    ranges.push((s, e, next));
                }
            }
            s = e;
        }
    }
    keyed.into_iter().map(|(_, i)| i).collect()
}

/// A sort key column that has a fixed width: how its values become an
/// unsigned number that orders as the key does.
#[derive(Clone, Copy, Debug)]
enum FixedKind {
    Boolean,
    /// Signed integers of up to 32 bits (and dates).
    I32,
    /// Unsigned integers of up to 32 bits.
    U32,
    /// Signed 64-bit integers (and timestamps).
    I64,
    U64,
    /// Doubles, in total order (as the row format orders them).
    F64,
    /// Decimals of at most 18 digits: their unscaled values fit in i64.
    Decimal64,
    /// Strings (`VARCHAR`), in the full sort only: a value is its rank
    /// among the distinct strings of every lane (`radix::StrDict`),
    /// known once every lane finished. A sort whose strings are too many
    /// and too varied for that merges runs of encoded rows instead.
    Str,
}

impl FixedKind {
    fn of(t: &DataType) -> Option<Self> {
        use DataType::*;
        Some(match t {
            Boolean => FixedKind::Boolean,
            Int8 | Int16 | Int32 | Date32 => FixedKind::I32,
            UInt8 | UInt16 | UInt32 => FixedKind::U32,
            Int64 | Date64 | Timestamp(_, _) => FixedKind::I64,
            UInt64 => FixedKind::U64,
            Float64 => FixedKind::F64,
            Decimal128(p, _) if *p <= 18 => FixedKind::Decimal64,
            _ => return None,
        })
    }

    /// [`Self::of`], and strings: the keys of a full sort by radix.
    fn of_radix(t: &DataType) -> Option<Self> {
        match t {
            DataType::Utf8 => Some(FixedKind::Str),
            t => Self::of(t),
        }
    }

    /// Bits of the ordered value.
    fn bits(self) -> u32 {
        match self {
            FixedKind::Boolean => 1,
            FixedKind::I32 | FixedKind::U32 | FixedKind::Str => 32,
            FixedKind::I64 | FixedKind::U64 | FixedKind::F64 | FixedKind::Decimal64 => 64,
        }
    }
}

/// One key of a fixed-width sort.
#[derive(Clone, Copy, Debug)]
struct FixedKey {
    kind: FixedKind,
    descending: bool,
    nulls_first: bool,
}

/// Fills `out` with the ordered values of `array` (ascending): unsigned
/// numbers whose order is the values' order.
fn ordered_values(kind: FixedKind, array: &dyn Array, out: &mut Vec<u64>) -> Result<()> {
    out.clear();
    let data = array.to_data();
    macro_rules! natives {
        ($t:ty) => {
            arrow::buffer::ScalarBuffer::<$t>::new(
                data.buffers()[0].clone(),
                data.offset(),
                data.len(),
            )
        };
    }
    match (kind, array.data_type()) {
        (FixedKind::Boolean, _) => {
            let values = array
                .as_any()
                .downcast_ref::<BooleanArray>()
                .ok_or_else(|| Error::Internal("a BOOLEAN sort key of another type".into()))?
                .values();
            out.extend(values.iter().map(u64::from));
        }
        (FixedKind::I32, DataType::Int8) => out.extend(
            natives!(i8)
                .iter()
                .map(|&v| u64::from(i32::from(v) as u32 ^ 1 << 31)),
        ),
        (FixedKind::I32, DataType::Int16) => out.extend(
            natives!(i16)
                .iter()
                .map(|&v| u64::from(i32::from(v) as u32 ^ 1 << 31)),
        ),
        (FixedKind::I32, _) => {
            out.extend(natives!(i32).iter().map(|&v| u64::from(v as u32 ^ 1 << 31)))
        }
        (FixedKind::U32, DataType::UInt8) => out.extend(natives!(u8).iter().map(|&v| u64::from(v))),
        (FixedKind::U32, DataType::UInt16) => {
            out.extend(natives!(u16).iter().map(|&v| u64::from(v)))
        }
        (FixedKind::U32, _) => out.extend(natives!(u32).iter().map(|&v| u64::from(v))),
        (FixedKind::I64, _) => out.extend(natives!(i64).iter().map(|&v| v as u64 ^ 1 << 63)),
        (FixedKind::U64, _) => out.extend(natives!(u64).iter().copied()),
        (FixedKind::F64, _) => out.extend(natives!(f64).iter().map(|&v| {
            // as f64::total_cmp and the row format
            let s = v.to_bits() as i64;
            (s ^ (((s >> 63) as u64) >> 1) as i64) as u64 ^ 1 << 63
        })),
        (FixedKind::Str, _) => {
            return Err(Error::Internal(
                "a VARCHAR sort key's ranks come from its dictionary".into(),
            ));
        }
        (FixedKind::Decimal64, _) => {
            for (i, &v) in natives!(i128).iter().enumerate() {
                let v = match i64::try_from(v) {
                    Ok(v) => v,
                    // a NULL's value is whatever the buffer holds
                    Err(_) if array.is_null(i) => 0,
                    Err(_) => {
                        return Err(Error::Internal(format!(
                            "DECIMAL sort key {v} exceeds its type {}",
                            array.data_type()
                        )));
                    }
                };
                out.push(v as u64 ^ 1 << 63);
            }
        }
    }
    Ok(())
}

/// One fixed-width key column of a run: each row's ordered value
/// (descending keys inverted) and which rows are NULL.
struct KeyValues {
    key: FixedKey,
    values: Vec<u64>,
    nulls: Option<arrow::buffer::NullBuffer>,
    /// A string key's values are ids in its lane's dictionary; once every
    /// lane finished, the rank of each id (`radix::StrDict`), which
    /// [`Self::resolve`] puts in their place.
    ranks: Option<Arc<[u64]>>,
}

impl KeyValues {
    fn new(key: FixedKey, column: &ArrayRef) -> Result<Self> {
        let mut values = Vec::new();
        ordered_values(key.kind, column.as_ref(), &mut values)?;
        if key.descending {
            let mask = value_mask(key.kind.bits());
            values.iter_mut().for_each(|v| *v = !*v & mask);
        }
        let nulls = column.logical_nulls().filter(|n| n.null_count() > 0);
        Ok(KeyValues {
            key,
            values,
            nulls,
            ranks: None,
        })
    }

    /// Row `i`'s ordered value, ranked if its ranks are not yet in place.
    #[inline]
    fn value(&self, i: usize) -> u64 {
        let v = self.values[i];
        match &self.ranks {
            // (a NULL's id is 0, which a lane without strings never gave)
            Some(ranks) => ranks.get(v as usize).copied().unwrap_or(0),
            None => v,
        }
    }

    /// Puts the ranks of a string key's ids in their place.
    fn resolve(&mut self) {
        if let Some(ranks) = self.ranks.take() {
            for v in &mut self.values {
                *v = ranks.get(*v as usize).copied().unwrap_or(0);
            }
        }
    }

    #[inline]
    fn is_null(&self, i: usize) -> bool {
        self.nulls.as_ref().is_some_and(|n| n.is_null(i))
    }

    /// This key's part of the global key of row `i`: the NULL flag
    /// (set for the rows that sort after the others), then the value.
    #[inline]
    fn global(&self, i: usize) -> u128 {
        global_part(self.key, self.is_null(i), self.values[i])
    }
}

fn value_mask(bits: u32) -> u64 {
    if bits == 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

/// A key's part of the global key: `bits + 1` bits, the NULL flag (set
/// for the rows that sort after the others) above the ordered value.
#[inline]
fn global_part(key: FixedKey, null: bool, value: u64) -> u128 {
    let bits = key.kind.bits();
    if null {
        u128::from(!key.nulls_first) << bits
    } else {
        (u128::from(key.nulls_first) << bits) | u128::from(value)
    }
}

/// The global key of every row: per key its [`global_part`], the first
/// key most significant. Compared as numbers they order rows as the keys
/// do (mixed directions, NULLS FIRST/LAST) in every run.
fn global_keys(keys: &[KeyValues], rows: usize) -> Vec<u128> {
    let mut out = vec![0u128; rows];
    for k in keys {
        let bits = k.key.kind.bits() + 1;
        for (i, g) in out.iter_mut().enumerate() {
            *g = (*g << bits) | k.global(i);
        }
    }
    out
}

/// How one key column is packed into a run's words: its values as codes
/// `0..codes` relative to the run's smallest, NULL as the first or last
/// code.
#[derive(Clone, Copy, Debug)]
struct PackedColumn {
    key: FixedKey,
    /// Bits of the code, and where it sits in the word.
    bits: u32,
    at: u32,
    /// Codes count from here: the run's smallest ordered value.
    min: u64,
    /// The run's smallest and largest ordered values, if any is not NULL.
    range: Option<(u64, u64)>,
    /// The code of NULL, if the run has NULLs in this column.
    null_code: Option<u64>,
    /// Added to `value - min` (1 when NULL is code 0).
    offset: u64,
}

impl PackedColumn {
    /// Codes for `k`'s values in a run, if they fit in 63 bits.
    fn new(k: &KeyValues) -> Option<Self> {
        Self::of_range(k.key, KeyRange::of(k))
    }

    /// Codes for the values of `range`, if they fit in 63 bits.
    fn of_range(key: FixedKey, range: KeyRange) -> Option<Self> {
        let KeyRange {
            lo: min,
            hi: max,
            nulls: has_null,
        } = range;
        let non_null = min <= max;
        let span = if non_null {
            u128::from(max - min) + 1
        } else {
            0
        };
        let codes = span + u128::from(has_null);
        let bits = u128::BITS - codes.saturating_sub(1).leading_zeros();
        if bits > 63 {
            return None;
        }
        let (null_code, offset) = match (has_null, key.nulls_first) {
            (false, _) => (None, 0),
            (true, true) => (Some(0), 1),
            (true, false) => (Some(span as u64), 0),
        };
        Some(PackedColumn {
            key,
            bits,
            at: 0,
            min: if non_null { min } else { 0 },
            range: non_null.then_some((min, max)),
            null_code,
            offset,
        })
    }

    #[inline]
    fn code(&self, k: &KeyValues, i: usize) -> u64 {
        if k.is_null(i) {
            self.null_code.unwrap_or(0)
        } else {
            k.values[i] - self.min + self.offset
        }
    }

    /// [`Self::code`] of a value whose rank may not be in place yet.
    fn code_ranked(&self, k: &KeyValues, i: usize) -> u64 {
        if k.is_null(i) {
            self.null_code.unwrap_or(0)
        } else {
            k.value(i) - self.min + self.offset
        }
    }

    /// This column's [`global_part`] from its code in `word`.
    #[inline]
    fn global(&self, word: u64) -> u128 {
        // (codes of no bits may start at bit 64)
        let code = word.checked_shr(self.at).unwrap_or(0) & value_mask(self.bits);
        if self.null_code == Some(code) {
            global_part(self.key, true, 0)
        } else {
            global_part(self.key, false, code - self.offset + self.min)
        }
    }
}

/// One packed column of one run, recoded into the code that every run of
/// a merge shares for it, at its place in the merge key.
#[derive(Clone, Copy, Debug)]
struct Recode {
    /// Where the run's code sits in its words, and its mask.
    at: u32,
    mask: u64,
    /// The run's code of NULL, if it has NULLs, and the shared one.
    null_code: Option<u64>,
    shared_null: u64,
    /// Added (wrapping) to a value's code in the run: its shared code.
    delta: u64,
    /// Where the shared code sits in the merge key.
    to: u32,
}

impl Recode {
    #[inline]
    fn code(&self, word: u64) -> u64 {
        // (codes of no bits may start, and be moved to, bit 64)
        let code = word.checked_shr(self.at).unwrap_or(0) & self.mask;
        let shared = if self.null_code == Some(code) {
            self.shared_null
        } else {
            code.wrapping_add(self.delta)
        };
        shared.checked_shl(self.to).unwrap_or(0)
    }
}

/// How each run's words become one 64-bit merge key, the same for every
/// run: per key column a code counted from the smallest value of all
/// runs, NULL first or last, the first column most significant. Two rows'
/// merge keys compare as their sort keys do, so a merge compares words,
/// not keys decoded to 128 bits. `None` unless every run is packed and
/// the shared codes fit in 64 bits.
fn shared_codes(runs: &[&SortedRun]) -> Option<MergeCodes> {
    let columns: Vec<&[PackedColumn]> = runs
        .iter()
        .map(|r| match &r.keys {
            RunKeys::Packed { columns, .. } => Some(columns.as_slice()),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let width = columns.first()?.len();
    // per column: the smallest value, the shared code of NULL, what a
    // value's code adds to its distance from the smallest, and the bits
    let mut shared = Vec::with_capacity(width);
    let mut total = 0;
    for c in 0..width {
        let ranges = columns.iter().filter_map(|cols| cols[c].range);
        let lo = ranges.clone().map(|r| r.0).min();
        let hi = ranges.map(|r| r.1).max();
        let nulls = columns.iter().any(|cols| cols[c].null_code.is_some());
        let span = match (lo, hi) {
            (Some(lo), Some(hi)) => u128::from(hi - lo) + 1,
            _ => 0,
        };
        let codes = span + u128::from(nulls);
        let bits = u128::BITS - codes.saturating_sub(1).leading_zeros();
        let (null, offset) = if columns[0][c].key.nulls_first {
            (0, u64::from(nulls))
        } else {
            (span as u64, 0)
        };
        total += bits;
        shared.push((lo.unwrap_or(0), null, offset, bits));
    }
    if total > 64 {
        return None;
    }
    let per_run = columns
        .iter()
        .map(|cols| {
            let mut to = total;
            cols.iter()
                .zip(&shared)
                // a column of one value in every run orders nothing
                .filter(|(_, s)| s.3 > 0)
                .map(|(col, &(lo, null, offset, bits))| {
                    to -= bits;
                    Recode {
                        at: col.at,
                        mask: value_mask(col.bits),
                        null_code: col.null_code,
                        shared_null: null,
                        delta: col
                            .min
                            .wrapping_sub(col.offset)
                            .wrapping_sub(lo)
                            .wrapping_add(offset),
                        to,
                    }
                })
                .collect()
        })
        .collect();
    Some(MergeCodes {
        position: PositionBits::new(runs, total),
        runs: per_run,
    })
}

/// The merge keys of packed runs ([`shared_codes`]).
struct MergeCodes {
    /// Per run, how its words become merge keys.
    runs: Vec<Vec<Recode>>,
    /// Where the codes leave room for it, each row's input position sits
    /// below its code: every merge key is then unique, in the order of the
    /// stable sort, and a merge compares one word per row.
    position: Option<PositionBits>,
}

/// How a row's input position (its morsel's index, then the row in the
/// morsel) is packed below its shared code.
#[derive(Clone, Copy, Debug)]
struct PositionBits {
    /// Bits of the row in its morsel.
    row: u32,
    /// Bits of the whole position: the shift of the code.
    total: u32,
}

impl PositionBits {
    /// The layout for `runs` whose shared codes take `code_bits`, if the
    /// merge key leaves its top bit clear (`u64::MAX` ends a run's keys).
    fn new(runs: &[&SortedRun], code_bits: u32) -> Option<Self> {
        let bits = |n: u64| u64::BITS - n.leading_zeros();
        let last_morsel = runs.iter().flat_map(|r| r.morsels.iter()).max();
        let longest = runs
            .iter()
            .flat_map(|r| {
                let ends = r.starts.iter().skip(1).copied().chain([r.num_rows()]);
                r.starts.iter().zip(ends).map(|(s, e)| e - s)
            })
            .max();
        let row = bits(longest.unwrap_or(1).saturating_sub(1) as u64);
        let total = bits(last_morsel.copied().unwrap_or(0) as u64) + row;
        (code_bits + total < 64).then_some(PositionBits { row, total })
    }
}

#[inline]
fn merge_key(codes: &[Recode], word: u64) -> u64 {
    codes.iter().fold(0, |k, c| k | c.code(word))
}

/// Sorts `v` by a radix sort of its bytes, stable. The bytes wholly below
/// bit `ordered` are not sorted on: callers pass words already in
/// ascending order of those bits (a row number in input order), which a
/// stable sort of the bytes above keeps among equal ones; the bits from
/// `used` up are zero in every word. One pass counts the digits of the
/// bytes between; only those that vary are sorted on.
///
/// A long array is first split by its most significant byte to sort on
/// (one scatter over the whole array), then each part is sorted on the
/// other bytes least significant first while it sits in the cache; a
/// short one takes every pass over the whole array.
fn radix_sort(v: &mut Vec<u64>, ordered: u32, used: u32) {
    if v.len() < 1 << 10 {
        v.sort_unstable();
        return;
    }
    let counted: Vec<usize> = (0..8)
        .filter(|&b| b * 8 + 8 > ordered as usize && b * 8 < used as usize)
        .collect();
    let (counts, varying) = digit_counts(v, &counted);
    // the bytes to sort on, as indices into `counted`
    let passes: Vec<usize> = (0..counted.len())
        .filter(|&k| varying.byte(counted[k]) != 0)
        .collect();
    let mut buf = vec![0u64; v.len()];
    match passes.split_last() {
        None => {}
        Some((&top, rest)) if !rest.is_empty() && v.len() >= MSD_FROM => {
            let mut at = starts(&counts[top]);
            scatter(v, &mut buf, counted[top], &mut at);
            let rest: Vec<usize> = rest.iter().map(|&k| counted[k]).collect();
            let mut lo = 0;
            for &n in &counts[top] {
                let range = lo..lo + n;
                sort_bucket(&mut buf[range.clone()], &mut v[range], &rest);
                lo += n;
            }
        }
        Some(_) => {
            for &k in &passes {
                let mut at = starts(&counts[k]);
                scatter(v, &mut buf, counted[k], &mut at);
                std::mem::swap(v, &mut buf);
            }
        }
    }
}

/// Arrays at least this long are split by their top byte first
/// ([`radix_sort`]): a part of a 3M-row run is then ~100 kB.
const MSD_FROM: usize = 1 << 16;

/// A word a radix sort sorts by its bytes: a `u64`, or a `u128` whose
/// high half is a key too wide to share a `u64` with its row's position.
pub(crate) trait RadixWord:
    Copy
    + Ord
    + Default
    + Send
    + Sync
    + std::ops::BitOr<Output = Self>
    + std::ops::BitAnd<Output = Self>
    + std::ops::BitXor<Output = Self>
    + 'static
{
    const ONES: Self;
    /// Byte `b` (0 the least significant).
    fn byte(self, b: usize) -> usize;
}

impl RadixWord for u64 {
    const ONES: Self = u64::MAX;
    #[inline]
    fn byte(self, b: usize) -> usize {
        ((self >> (b * 8)) & 0xff) as usize
    }
}

impl RadixWord for u128 {
    const ONES: Self = u128::MAX;
    #[inline]
    fn byte(self, b: usize) -> usize {
        ((self >> (b * 8)) & 0xff) as usize
    }
}

/// Per byte of `bytes` (in that order), how many words of `v` hold each
/// digit; and the bits that differ between words.
fn digit_counts<W: RadixWord>(v: &[W], bytes: &[usize]) -> (Vec<[usize; 256]>, W) {
    let mut counts = vec![[0usize; 256]; bytes.len()];
    let (mut or, mut and) = (W::default(), W::ONES);
    for &x in v {
        or = or | x;
        and = and & x;
        for (c, &b) in counts.iter_mut().zip(bytes) {
            c[x.byte(b)] += 1;
        }
    }
    (counts, or ^ and)
}

/// Where each digit's words start, from the digits' counts.
fn starts(counts: &[usize; 256]) -> [usize; 256] {
    let mut at = [0; 256];
    let mut sum = 0;
    for (a, &n) in at.iter_mut().zip(counts) {
        *a = sum;
        sum += n;
    }
    at
}

/// Moves `src` into `dst` by byte `b`, in order within each digit; `at`
/// holds each digit's next place.
fn scatter<W: RadixWord>(src: &[W], dst: &mut [W], b: usize, at: &mut [usize; 256]) {
    for &x in src {
        let d = x.byte(b);
        dst[at[d]] = x;
        at[d] += 1;
    }
}

/// Sorts one part of a split array on `bytes` (least significant first):
/// from `src` into `dst`, using `src` as scratch.
fn sort_bucket<W: RadixWord>(src: &mut [W], dst: &mut [W], bytes: &[usize]) {
    if src.len() < 1 << 8 {
        // whole words: equal ones are alike, so stable or not is the same
        src.sort_unstable();
        dst.copy_from_slice(src);
        return;
    }
    // the digits of the bytes to sort on only (the part is in the cache)
    let (counts, varying) = digit_counts(src, bytes);
    let passes: Vec<usize> = (0..bytes.len())
        .filter(|&k| varying.byte(bytes[k]) != 0)
        .collect();
    // passes alternate between the two slices; an odd number ends in dst
    let (mut from, mut to) = (src, dst);
    for &k in &passes {
        let mut at = starts(&counts[k]);
        scatter(from, to, bytes[k], &mut at);
        std::mem::swap(&mut from, &mut to);
    }
    // after the last pass the sorted words are in `from`
    if passes.len().is_multiple_of(2) {
        to.copy_from_slice(from);
    }
}

/// A run's sorted keys.
enum RunKeys {
    /// Fixed-width keys whose codes in the run fit in a word beside the
    /// row number: per key its code (most significant first), then the
    /// row, one word per row, sorted.
    Packed {
        columns: Vec<PackedColumn>,
        shift: u32,
        words: Vec<u64>,
    },
    /// Fixed-width keys with their rows, sorted.
    Wide(Vec<(u128, u32)>),
    /// Row-encoded keys (input position last) in sorted order, and the
    /// input row of each.
    Rows { rows: Rows, order: Vec<u32> },
}

/// One lane's input, sorted: its rows in key order, and their keys with
/// the permutation that sorted them.
///
/// The lane gathers its rows into key order itself (a random read of its
/// own rows, on every lane at once), so that a merge reads each run in
/// order: gathering the merge's output straight from the runs' rows in
/// input order would save a copy but read every row at random on the
/// merge's tasks (S1 on 2 threads: the merge took 180-250 ms of 340-430;
/// gathered by the lanes, 75 ms of 260-285).
pub(crate) struct SortedRun {
    /// The rows, in key order (row `i` at sorted position `i`).
    batch: RecordBatch,
    /// The sorted keys, with the row of the lane's input (its morsels in
    /// order) each came from.
    keys: RunKeys,
    /// The first row of each morsel in `batch`, and the morsel's index:
    /// a row's input position breaks ties of fixed-width keys.
    starts: Vec<usize>,
    morsels: Vec<usize>,
    /// Per block of [`BLOCK_ROWS`] rows, the morsel its first row is of:
    /// a tie between runs finds a row's morsel from there instead of
    /// searching `starts` (ties are most of the merge's comparisons when
    /// keys repeat).
    block_part: Vec<u32>,
}

/// Rows per entry of [`SortedRun::block_part`] (a 3M-row run needs 12 kB).
const BLOCK_ROWS: usize = 1 << 10;

/// The key of a row of a run, as the merge compares them.
#[derive(Clone, Copy)]
enum KeyRef<'a> {
    /// A fixed-width key, then the row's input position.
    Fixed {
        key: u128,
        run: &'a SortedRun,
        row: u32,
    },
    Row(arrow::row::Row<'a>),
}

impl KeyRef<'_> {
    /// An owned copy, for splitters.
    fn owned(&self) -> OwnedKey {
        match *self {
            KeyRef::Fixed { key, run, row } => OwnedKey::Fixed(key, run.position(row)),
            KeyRef::Row(r) => OwnedKey::Row(r.owned()),
        }
    }

    fn cmp_owned(&self, other: &OwnedKey) -> std::cmp::Ordering {
        match (self, other) {
            (KeyRef::Fixed { key, run, row }, OwnedKey::Fixed(k, p)) => {
                key.cmp(k).then_with(|| run.position(*row).cmp(p))
            }
            (KeyRef::Row(r), OwnedKey::Row(o)) => r.cmp(&o.row()),
            _ => std::cmp::Ordering::Equal,
        }
    }
}

impl PartialEq for KeyRef<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}

impl Eq for KeyRef<'_> {}

impl PartialOrd for KeyRef<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for KeyRef<'_> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        match (self, other) {
            (
                KeyRef::Fixed { key, run, row },
                KeyRef::Fixed {
                    key: k2,
                    run: r2,
                    row: w2,
                },
            ) => key
                .cmp(k2)
                .then_with(|| run.position(*row).cmp(&r2.position(*w2))),
            (KeyRef::Row(a), KeyRef::Row(b)) => a.cmp(b),
            // the runs of one sort share their layout
            _ => std::cmp::Ordering::Equal,
        }
    }
}

/// A splitter key.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
enum OwnedKey {
    Fixed(u128, u64),
    Row(OwnedRow),
}

impl SortedRun {
    /// Sorts the morsels a lane collected (`(morsel index, batch)`) and
    /// puts their rows in key order; with `first`, only the first `first`
    /// rows of that order are kept (no row past them can be among a
    /// merge's first `first`).
    pub(crate) fn new(
        spec: &SortSpec,
        mut parts: Vec<(usize, RecordBatch)>,
        first: Option<usize>,
    ) -> Result<Self> {
        parts.sort_by_key(|(i, _)| *i);
        let mut starts = Vec::with_capacity(parts.len());
        let mut morsels = Vec::with_capacity(parts.len());
        let mut at = 0;
        for (m, b) in &parts {
            starts.push(at);
            morsels.push(*m);
            at += b.num_rows();
        }
        let rows = at;
        let kept = first.map_or(rows, |f| f.min(rows));
        let batches: Vec<RecordBatch> = parts.iter().map(|(_, b)| b.clone()).collect();
        let batch = concat_batches(&spec.schema, &batches).map_err(Error::arrow)?;
        drop(batches);
        // rows already in key order (input sorted or clustered by the
        // keys: a table in key order, a window's partitions in input
        // order) are neither sorted nor gathered again
        let mut in_order = false;
        let keys = match &spec.fixed {
            Some(fixed) => {
                let keys = spec.key_values(fixed, &batch)?;
                let row_bits = usize::BITS - rows.leading_zeros();
                let packed: Option<Vec<PackedColumn>> =
                    keys.iter().map(PackedColumn::new).collect();
                let key_bits = packed
                    .as_ref()
                    .map(|p| p.iter().map(|c| c.bits).sum::<u32>());
                let packed = packed.filter(|_| key_bits.is_some_and(|b| b + row_bits <= 64));
                match packed {
                    Some(mut packed) => {
                        // the row number fills whole bytes where the keys
                        // leave room, so that the sort never passes over it
                        let whole = row_bits.next_multiple_of(8);
                        let shift = if key_bits.is_some_and(|b| b + whole <= 64) {
                            whole
                        } else {
                            row_bits
                        };
                        let mut at = shift;
                        for c in packed.iter_mut().rev() {
                            c.at = at;
                            at += c.bits;
                        }
                        // rows are numbered in input order: sorting the
                        // words sorts by key, then input position
                        let mut words: Vec<u64> = (0..rows as u64).collect();
                        // (a key of one value has codes of no bits, all 0,
                        // and may start at bit 64)
                        for (c, k) in packed.iter().zip(&keys).filter(|(c, _)| c.bits > 0) {
                            for (i, w) in words.iter_mut().enumerate() {
                                *w |= c.code(k, i) << c.at;
                            }
                        }
                        drop(keys);
                        in_order = words.is_sorted();
                        if !in_order {
                            radix_sort(&mut words, shift, at);
                        }
                        words.truncate(kept);
                        RunKeys::Packed {
                            columns: packed,
                            shift,
                            words,
                        }
                    }
                    None => {
                        let mut pairs: Vec<(u128, u32)> = global_keys(&keys, rows)
                            .into_iter()
                            .enumerate()
                            .map(|(i, k)| (k, i as u32))
                            .collect();
                        drop(keys);
                        in_order = pairs.is_sorted();
                        if !in_order {
                            if kept < rows {
                                pairs.select_nth_unstable(kept);
                                pairs.truncate(kept);
                            }
                            pairs.sort_unstable();
                        }
                        pairs.truncate(kept);
                        RunKeys::Wide(pairs)
                    }
                }
            }
            None => {
                let converter = spec.converter()?;
                let seqs: Vec<UInt64Array> = part_positions(&parts);
                let seq_refs: Vec<&dyn Array> = seqs.iter().map(|s| s as &dyn Array).collect();
                let seq = if seq_refs.is_empty() {
                    UInt64Array::from(Vec::<u64>::new())
                } else {
                    downcast_seq(&concat(&seq_refs).map_err(Error::arrow)?)?
                };
                let rows = spec.rows(&converter, &batch, &seq)?;
                // keys are unique (the position is the last key)
                let mut order = sort_order(&rows);
                order.truncate(kept);
                // the keys copied into their order, so that the merge reads
                // each run's keys one after the other
                let mut sorted = converter.empty_rows(order.len(), rows.size());
                for &i in &order {
                    sorted.push(rows.row(i as usize));
                }
                drop(rows);
                RunKeys::Rows {
                    rows: sorted,
                    order,
                }
            }
        };
        let mut block_part = Vec::with_capacity(rows.div_ceil(BLOCK_ROWS));
        let mut part = 0;
        for first in (0..rows).step_by(BLOCK_ROWS) {
            while starts.get(part + 1).is_some_and(|&s| s <= first) {
                part += 1;
            }
            block_part.push(part as u32);
        }
        let mut run = SortedRun {
            batch,
            keys,
            starts,
            morsels,
            block_part,
        };
        if in_order {
            run.batch = run.batch.slice(0, kept);
        } else {
            let order = UInt32Array::from_iter_values((0..kept).map(|i| run.input_row(i)));
            run.batch =
                arrow::compute::take_record_batch(&run.batch, &order).map_err(Error::arrow)?;
        }
        Ok(run)
    }

    pub(crate) fn num_rows(&self) -> usize {
        self.batch.num_rows()
    }

    /// The rows, in key order.
    pub(crate) fn into_batch(self) -> RecordBatch {
        self.batch
    }

    /// Bytes held.
    pub(crate) fn size(&self) -> usize {
        let keys = match &self.keys {
            RunKeys::Packed { words, .. } => words.capacity() * 8,
            RunKeys::Wide(pairs) => pairs.capacity() * std::mem::size_of::<(u128, u32)>(),
            RunKeys::Rows { rows, order } => rows.size() + order.capacity() * 4,
        };
        self.batch.get_array_memory_size() + keys + self.starts.capacity() * 16
    }

    /// The input row (of the lane's morsels, in order) at sorted position
    /// `i`.
    #[inline]
    fn input_row(&self, i: usize) -> u32 {
        match &self.keys {
            RunKeys::Packed { shift, words, .. } => (words[i] & ((1 << shift) - 1)) as u32,
            RunKeys::Wide(pairs) => pairs[i].1,
            RunKeys::Rows { order, .. } => order[i],
        }
    }

    /// The rows at sorted positions `range`, in that order.
    fn rows_in_order(&self, range: std::ops::Range<usize>) -> RecordBatch {
        self.batch.slice(range.start, range.len())
    }

    /// The input position of row `row` of `batch`.
    #[inline]
    fn position(&self, row: u32) -> u64 {
        self.packed_position(row, 32)
    }

    /// The input position of row `row` of `batch`: its morsel's index,
    /// then the row in the morsel in the low `row_bits`.
    #[inline]
    fn packed_position(&self, row: u32, row_bits: u32) -> u64 {
        let row = row as usize;
        let mut part = self.block_part[row / BLOCK_ROWS] as usize;
        while self.starts.get(part + 1).is_some_and(|&s| s <= row) {
            part += 1;
        }
        ((self.morsels[part] as u64) << row_bits) | (row - self.starts[part]) as u64
    }

    /// Where the merge finds the row at sorted position `i` of run `r`:
    /// `r` in the high half, the row of `batch` in the low.
    #[inline]
    fn pick(r: usize, i: usize) -> u64 {
        ((r as u64) << 32) | i as u64
    }

    /// The key at sorted position `i`.
    #[inline]
    fn key(&self, i: usize) -> KeyRef<'_> {
        match &self.keys {
            RunKeys::Packed {
                columns,
                shift,
                words,
            } => KeyRef::Fixed {
                key: columns.iter().fold(0, |g, c| {
                    (g << (c.key.kind.bits() + 1)) | c.global(words[i])
                }),
                run: self,
                row: (words[i] & ((1 << shift) - 1)) as u32,
            },
            RunKeys::Wide(pairs) => KeyRef::Fixed {
                key: pairs[i].0,
                run: self,
                row: pairs[i].1,
            },
            RunKeys::Rows { rows, .. } => KeyRef::Row(rows.row(i)),
        }
    }

    /// The sorted words of a packed run, and the mask of their row
    /// numbers.
    fn words(&self) -> (&[u64], u64) {
        match &self.keys {
            RunKeys::Packed { shift, words, .. } => (words, (1 << shift) - 1),
            _ => (&[], 0),
        }
    }

    /// The first position whose key is not below `key`.
    fn lower_bound(&self, key: &OwnedKey) -> usize {
        let (mut lo, mut hi) = (0, self.num_rows());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.key(mid).cmp_owned(key) == std::cmp::Ordering::Less {
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
    /// How the runs' words become merge keys ([`shared_codes`]).
    codes: Option<MergeCodes>,
}

impl MergePlan {
    /// Cuts `runs` into about `partitions` ranges of similar size, by
    /// splitter keys sampled evenly from every run.
    pub(crate) fn new<R: Borrow<SortedRun>>(runs: &[R], partitions: usize) -> Self {
        let partitions = partitions.max(1);
        let mut samples: Vec<OwnedKey> = Vec::new();
        if partitions > 1 {
            let per_run = 16 * partitions;
            for run in runs.iter().map(Borrow::borrow) {
                let n = run.num_rows();
                if n == 0 {
                    continue;
                }
                let step = n.div_ceil(per_run).max(1);
                samples.extend((0..n).step_by(step).map(|i| run.key(i).owned()));
            }
            samples.sort_unstable();
        }
        let splitters: Vec<&OwnedKey> = if samples.is_empty() {
            Vec::new()
        } else {
            (1..partitions)
                .map(|j| &samples[j * samples.len() / partitions])
                .collect()
        };
        let bounds = runs
            .iter()
            .map(|run| {
                let run = run.borrow();
                let mut b = Vec::with_capacity(splitters.len() + 2);
                b.push(0);
                b.extend(splitters.iter().map(|s| run.lower_bound(s)));
                b.push(run.num_rows());
                b
            })
            .collect();
        let runs: Vec<&SortedRun> = runs.iter().map(Borrow::borrow).collect();
        MergePlan {
            partitions: splitters.len() + 1,
            bounds,
            codes: shared_codes(&runs),
        }
    }

    /// Rows of range `p` over every run.
    pub(crate) fn partition_rows(&self, p: usize) -> usize {
        self.bounds.iter().map(|b| b[p + 1] - b[p]).sum()
    }

    /// Merges range `p` of every run: rows in key order; with `keep`,
    /// only the merged rows at those positions of the range are gathered
    /// ([`kept_rows`]).
    pub(crate) fn merge<R: Borrow<SortedRun>>(
        &self,
        runs: &[R],
        p: usize,
        keep: Option<Range<usize>>,
    ) -> Result<Option<RecordBatch>> {
        let runs: Vec<&SortedRun> = runs.iter().map(Borrow::borrow).collect();
        let ranges: Vec<(usize, usize)> = self.bounds.iter().map(|b| (b[p], b[p + 1])).collect();
        let total: usize = ranges.iter().map(|(lo, hi)| hi - lo).sum();
        let keep = keep.unwrap_or(0..total);
        if total == 0 || keep.is_empty() {
            return Ok(None);
        }
        let live: Vec<usize> = (0..runs.len())
            .filter(|&r| ranges[r].0 < ranges[r].1)
            .collect();
        if let [r] = live[..] {
            let (lo, hi) = ranges[r];
            let kept = (lo + keep.start).min(hi)..(lo + keep.end).min(hi);
            return Ok(Some(runs[r].rows_in_order(kept)));
        }
        let mut picks = match &self.codes {
            Some(codes) => merge_words(&runs, codes, &ranges, &live),
            None => merge_keys(&runs, &ranges, &live),
        };
        picks.truncate(keep.end);
        let picks = &picks[keep.start.min(picks.len())..];
        let batches: Vec<&RecordBatch> = runs.iter().map(|r| &r.batch).collect();
        gather(&batches, picks).map(Some)
    }
}

/// The rows each of a sort's last tasks keeps of `rows`, sorted
/// positions of the whole output: the tasks' rows follow one another in
/// the output (`counts` of them each, in order), and each keeps a range
/// of its own rows, empty when it lies wholly outside `rows`.
pub(crate) fn kept_rows(counts: &[usize], rows: &Range<usize>) -> Vec<Range<usize>> {
    let mut first = 0;
    counts
        .iter()
        .map(|&n| {
            let from = rows.start.clamp(first, first + n) - first;
            let to = rows.end.clamp(first, first + n) - first;
            first += n;
            from..to.max(from)
        })
        .collect()
}

/// Merges the ranges of the `live` runs by their keys, comparing
/// [`KeyRef`]s: [`SortedRun::pick`]s in key order, ties in input order.
fn merge_keys(runs: &[&SortedRun], ranges: &[(usize, usize)], live: &[usize]) -> Vec<u64> {
    let total = live.iter().map(|&r| ranges[r].1 - ranges[r].0).sum();
    let mut picks = Vec::with_capacity(total);
    if let [a, b] = live[..] {
        let (ra, rb) = (runs[a], runs[b]);
        let ((mut i, i_end), (mut j, j_end)) = (ranges[a], ranges[b]);
        let (mut ka, mut kb) = (ra.key(i), rb.key(j));
        loop {
            if ka <= kb {
                picks.push(SortedRun::pick(a, i));
                i += 1;
                if i == i_end {
                    break;
                }
                ka = ra.key(i);
            } else {
                picks.push(SortedRun::pick(b, j));
                j += 1;
                if j == j_end {
                    break;
                }
                kb = rb.key(j);
            }
        }
        picks.extend((i..i_end).map(|i| SortedRun::pick(a, i)));
        picks.extend((j..j_end).map(|j| SortedRun::pick(b, j)));
        return picks;
    }
    let mut heap = BinaryHeap::with_capacity(live.len());
    for &r in live {
        heap.push(Reverse((runs[r].key(ranges[r].0), r, ranges[r].0)));
    }
    while let Some(Reverse((_, r, i))) = heap.pop() {
        picks.push(SortedRun::pick(r, i));
        if i + 1 < ranges[r].1 {
            heap.push(Reverse((runs[r].key(i + 1), r, i + 1)));
        }
    }
    picks
}

/// Merges the ranges of the `live` packed runs by their merge keys
/// ([`shared_codes`]): [`SortedRun::pick`]s in key order, equal keys in
/// input order.
fn merge_words(
    runs: &[&SortedRun],
    codes: &MergeCodes,
    ranges: &[(usize, usize)],
    live: &[usize],
) -> Vec<u64> {
    let total = live.iter().map(|&r| ranges[r].1 - ranges[r].0).sum();
    let mut picks = Vec::with_capacity(total);
    let Some(position) = codes.position else {
        return merge_tied_words(runs, &codes.runs, ranges, live, picks);
    };
    // per live run: its unique merge keys, ended by a sentinel that sorts
    // after every key
    let heads: Vec<Vec<u64>> = live
        .iter()
        .map(|&r| {
            let (run, recode) = (runs[r], &codes.runs[r]);
            let (words, row) = run.words();
            let (lo, hi) = ranges[r];
            words[lo..hi]
                .iter()
                .map(|&w| {
                    merge_key(recode, w) << position.total
                        | run.packed_position((w & row) as u32, position.row)
                })
                .chain([u64::MAX])
                .collect()
        })
        .collect();
    if let ([ka, kb], [a, b]) = (&heads[..], live) {
        // which run goes first is a coin toss for random keys: the loop
        // selects and advances without branching on it (over slices and a
        // sized output, so no length is reloaded per row); a pick is its
        // run's and its sorted position
        let (ka, kb) = (&ka[..], &kb[..]);
        let (pa, pb) = (
            SortedRun::pick(*a, ranges[*a].0),
            SortedRun::pick(*b, ranges[*b].0),
        );
        let (mut i, mut j) = (0, 0);
        picks.resize(total, 0);
        for pick in picks.iter_mut() {
            let a_first = ka[i] < kb[j];
            *pick = if a_first {
                pa + i as u64
            } else {
                pb + j as u64
            };
            i += usize::from(a_first);
            j += usize::from(!a_first);
        }
        return picks;
    }
    let mut at = vec![0; heads.len()];
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> = heads
        .iter()
        .enumerate()
        .map(|(h, keys)| Reverse((keys[0], h)))
        .collect();
    while let Some(Reverse((key, h))) = heap.pop() {
        if key == u64::MAX {
            break;
        }
        let r = live[h];
        picks.push(SortedRun::pick(r, ranges[r].0 + at[h]));
        at[h] += 1;
        heap.push(Reverse((heads[h][at[h]], h)));
    }
    picks
}

/// [`merge_words`] where the merge keys leave no room for the input
/// position: equal keys look their rows' positions up.
fn merge_tied_words(
    runs: &[&SortedRun],
    codes: &[Vec<Recode>],
    ranges: &[(usize, usize)],
    live: &[usize],
    mut picks: Vec<u64>,
) -> Vec<u64> {
    if let [a, b] = live[..] {
        let ((ra, ca), (rb, cb)) = ((runs[a], &codes[a]), (runs[b], &codes[b]));
        let ((wa, row_a), (wb, row_b)) = (ra.words(), rb.words());
        let ((mut i, i_end), (mut j, j_end)) = (ranges[a], ranges[b]);
        while i < i_end && j < j_end {
            let (ka, kb) = (merge_key(ca, wa[i]), merge_key(cb, wb[j]));
            let a_first = ka < kb
                || (ka == kb
                    && ra.position((wa[i] & row_a) as u32) < rb.position((wb[j] & row_b) as u32));
            picks.push(if a_first {
                SortedRun::pick(a, i)
            } else {
                SortedRun::pick(b, j)
            });
            i += usize::from(a_first);
            j += usize::from(!a_first);
        }
        picks.extend((i..i_end).map(|i| SortedRun::pick(a, i)));
        picks.extend((j..j_end).map(|j| SortedRun::pick(b, j)));
        return picks;
    }
    // more runs: a heap of each run's next row, by merge key, then input
    // position
    let head = |r: usize, i: usize| {
        let (words, row) = runs[r].words();
        let w = words[i];
        Reverse((
            merge_key(&codes[r], w),
            runs[r].position((w & row) as u32),
            r,
            i,
        ))
    };
    let mut heap: BinaryHeap<_> = live.iter().map(|&r| head(r, ranges[r].0)).collect();
    while let Some(Reverse((_, _, r, i))) = heap.pop() {
        picks.push(SortedRun::pick(r, i));
        if i + 1 < ranges[r].1 {
            heap.push(head(r, i + 1));
        }
    }
    picks
}

/// The rows `picks` ([`SortedRun::pick`]) of `batches`, in that order: the
/// one copy the merge makes of the payload. Fixed-width columns are read
/// straight from their runs' buffers; others go through Arrow's
/// `interleave`.
fn gather(batches: &[&RecordBatch], picks: &[u64]) -> Result<RecordBatch> {
    let schema = batches[0].schema();
    let mut pairs: Option<Vec<(usize, usize)>> = None;
    let columns = (0..schema.fields().len())
        .map(|c| {
            let arrays: Vec<&ArrayRef> = batches.iter().map(|b| b.column(c)).collect();
            if let Some(array) = gather_fixed(&arrays, picks) {
                return Ok(array);
            }
            let pairs = pairs.get_or_insert_with(|| {
                picks
                    .iter()
                    .map(|&p| ((p >> 32) as usize, (p & u64::from(u32::MAX)) as usize))
                    .collect()
            });
            let arrays: Vec<&dyn Array> = arrays.iter().map(|a| a.as_ref()).collect();
            interleave(&arrays, pairs).map_err(Error::arrow)
        })
        .collect::<Result<Vec<_>>>()?;
    let options = RecordBatchOptions::new().with_row_count(Some(picks.len()));
    RecordBatch::try_new_with_options(schema, columns, &options).map_err(Error::arrow)
}

macro_rules! gather_primitive_helper {
    ($t:ty, $arrays:expr, $picks:expr) => {
        gather_primitive::<$t>($arrays, $picks)
    };
}

/// [`gather`] for a fixed-width column; `None` for other types.
fn gather_fixed(arrays: &[&ArrayRef], picks: &[u64]) -> Option<ArrayRef> {
    downcast_primitive! {
        arrays[0].data_type() => (gather_primitive_helper, arrays, picks),
        _ => None,
    }
}

fn gather_primitive<T: ArrowPrimitiveType>(
    arrays: &[&ArrayRef],
    picks: &[u64],
) -> Option<ArrayRef> {
    let typed: Vec<&PrimitiveArray<T>> = arrays
        .iter()
        .map(|a| a.as_primitive_opt::<T>())
        .collect::<Option<_>>()?;
    let values: Vec<&[T::Native]> = typed.iter().map(|a| a.values().as_ref()).collect();
    let row = |p: u64| (p & u64::from(u32::MAX)) as usize;
    let out: Vec<T::Native> = picks
        .iter()
        .map(|&p| values[(p >> 32) as usize][row(p)])
        .collect();
    let nulls = typed.iter().any(|a| a.null_count() > 0).then(|| {
        let mut valid = BooleanBufferBuilder::new(picks.len());
        for &p in picks {
            valid.append(typed[(p >> 32) as usize].is_valid(row(p)));
        }
        NullBuffer::new(valid.finish())
    });
    let array =
        PrimitiveArray::<T>::new(out.into(), nulls).with_data_type(arrays[0].data_type().clone());
    Some(Arc::new(array))
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
        morsels_of(rows, per, seed, 50)
    }

    /// Morsels of keys from `0..span`, one in ten NULL.
    fn morsels_of(rows: usize, per: usize, seed: u64, span: i64) -> Vec<(usize, RecordBatch)> {
        let mut rng = StdRng::seed_from_u64(seed);
        let keys: Vec<Option<i64>> = (0..rows)
            .map(|_| (rng.random_range(0..10) > 0).then(|| rng.random_range(0..span)))
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

    #[test]
    fn a_key_of_one_value_above_keys_that_fill_the_word_sorts() {
        // 255 rows (8 bits of row number) and a second key spanning 56
        // bits: the first key's codes (no bits, one value) start at bit 64
        let schema = Arc::new(Schema::new(vec![
            Field::new("a", DataType::Int32, false),
            Field::new("b", DataType::Int64, false),
        ]));
        let b: Vec<i64> = (0..255)
            .map(|i: i64| match i {
                0 => 0,
                1 => (1 << 56) - 1,
                _ => (i * 7919) % 1000,
            })
            .collect();
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(arrow::array::Int32Array::from(vec![5; 255])),
                Arc::new(Int64Array::from(b.clone())),
            ],
        )
        .unwrap();
        let keys = vec![
            SortKey {
                expr: Expr::column(0, "a"),
                asc: true,
                nulls_first: false,
            },
            SortKey {
                expr: Expr::column(1, "b"),
                asc: false,
                nulls_first: false,
            },
        ];
        let spec = SortSpec::new(&keys, schema).unwrap();
        let run = SortedRun::new(&spec, vec![(0, batch)], None).unwrap();
        let got: Vec<i64> = run
            .into_batch()
            .column(1)
            .as_primitive::<arrow::datatypes::Int64Type>()
            .values()
            .to_vec();
        let mut want = b;
        want.sort_by(|x, y| y.cmp(x));
        assert_eq!(got, want);
    }

    #[test]
    fn runs_already_in_key_order_or_nearly_come_out_sorted_and_cut() {
        // two keys packed in one word, then wide (a BIGINT and an INTEGER
        // whose spans take past 64 bits); rows in key order, then with one
        // pair swapped
        for wide in [false, true] {
            let schema = Arc::new(Schema::new(vec![
                Field::new("a", DataType::Int64, false),
                Field::new("b", DataType::Int32, false),
            ]));
            let n = 3000i64;
            let (sa, sb) = if wide {
                (1i64 << 40, 1i32 << 28)
            } else {
                (1, 1)
            };
            let a: Vec<i64> = (0..n).map(|i| i / 7 * sa).collect();
            let b: Vec<i32> = (0..n as i32).map(|i| (i % 7) * sb).collect();
            let keys = vec![
                SortKey {
                    expr: Expr::column(0, "a"),
                    asc: true,
                    nulls_first: false,
                },
                SortKey {
                    expr: Expr::column(1, "b"),
                    asc: true,
                    nulls_first: false,
                },
            ];
            let spec = SortSpec::new(&keys, Arc::clone(&schema)).unwrap();
            for swapped in [false, true] {
                let mut b = b.clone();
                if swapped {
                    b.swap(10, 11);
                }
                // two morsels, given in reverse
                let part = |r: std::ops::Range<usize>| {
                    RecordBatch::try_new(
                        Arc::clone(&schema),
                        vec![
                            Arc::new(Int64Array::from(a[r.clone()].to_vec())),
                            Arc::new(arrow::array::Int32Array::from(b[r].to_vec())),
                        ],
                    )
                    .unwrap()
                };
                let parts = vec![(1, part(1500..3000)), (0, part(0..1500))];
                for first in [None, Some(100)] {
                    let run = SortedRun::new(&spec, parts.clone(), first).unwrap();
                    let out = run.into_batch();
                    let got_a = out.column(0).as_primitive::<arrow::datatypes::Int64Type>();
                    let got_b = out.column(1).as_primitive::<arrow::datatypes::Int32Type>();
                    let mut want: Vec<(i64, i32)> =
                        a.iter().copied().zip(b.iter().copied()).collect();
                    want.sort();
                    want.truncate(first.unwrap_or(want.len()));
                    let got: Vec<(i64, i32)> = got_a
                        .values()
                        .iter()
                        .copied()
                        .zip(got_b.values().iter().copied())
                        .collect();
                    assert_eq!(got, want, "wide {wide}, swapped {swapped}, first {first:?}");
                }
            }
        }
    }

    #[test]
    fn rows_sort_by_chunks_of_sixteen_bytes_as_by_all_their_bytes() {
        // strings sharing heads of 0 to 40 bytes (runs of equal chunks
        // sorted again and again), '' and NULL, a few integers (many equal
        // rows but for the position), both directions
        let mut rng = StdRng::seed_from_u64(7);
        let n = 5000;
        let strings: Vec<Option<String>> = (0..n)
            .map(|_| {
                (rng.random_range(0..20) > 0).then(|| {
                    let head = "x".repeat(rng.random_range(0..41));
                    let tail: String = (0..rng.random_range(0..3))
                        .map(|_| char::from(b'a' + rng.random_range(0..3u8)))
                        .collect();
                    head + &tail
                })
            })
            .collect();
        let ints: Vec<i64> = (0..n).map(|_| rng.random_range(0..4)).collect();
        for descending in [false, true] {
            let fields = vec![
                SortField::new_with_options(
                    DataType::Utf8,
                    SortOptions {
                        descending,
                        nulls_first: false,
                    },
                ),
                SortField::new(DataType::Int64),
                SortField::new(DataType::UInt64),
            ];
            let converter = RowConverter::new(fields).unwrap();
            let columns: Vec<ArrayRef> = vec![
                Arc::new(arrow::array::StringArray::from(strings.clone())),
                Arc::new(Int64Array::from(ints.clone())),
                // unique, and against input order: no tie may fall back
                // on the rows' order
                Arc::new(UInt64Array::from_iter_values((0..n as u64).rev())),
            ];
            let rows = converter.convert_columns(&columns).unwrap();
            let mut want: Vec<u32> = (0..n as u32).collect();
            want.sort_by(|&a, &b| rows.row(a as usize).cmp(&rows.row(b as usize)));
            assert_eq!(sort_order(&rows), want, "descending {descending}");
        }
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
        ids_at(batches, 1)
    }

    /// The values of BIGINT column `c` of `batches`, in order.
    fn ids_at(batches: &[RecordBatch], c: usize) -> Vec<i64> {
        batches
            .iter()
            .flat_map(|b| {
                let id = b.column(c).as_any().downcast_ref::<Int64Array>().unwrap();
                id.values().to_vec()
            })
            .collect()
    }

    /// A block's zone passes the top-N's test exactly when the prefilter
    /// keeps one of its rows: checked on one-row blocks, every direction
    /// and NULL order, thresholds with ties and NULLs.
    #[test]
    fn the_zone_test_is_the_prefilter_on_one_row() {
        for (asc, nulls_first) in [(true, false), (true, true), (false, false), (false, true)] {
            let spec = SortSpec::new(&key(asc, nulls_first), schema()).unwrap();
            let parts = morsels(400, 50, 7);
            // past the NULLs when they come first, so the threshold is a value
            let mut top = TopN::new(&spec, if nulls_first { 60 } else { 3 }).unwrap();
            let mut tested = 0;
            for (m, batch) in parts {
                if let (Some(test), Some(mask)) =
                    (top.zone_test(&spec), top.prefilter(&spec, &batch).unwrap())
                {
                    let k = batch.column(0);
                    for i in 0..batch.num_rows() {
                        let zone = match key_of(k, i) {
                            Some(v) => Zone {
                                min: v,
                                max: v,
                                nulls: false,
                            },
                            None => Zone {
                                min: i128::MAX,
                                max: i128::MIN,
                                nulls: true,
                            },
                        };
                        assert_eq!(test(&zone), mask.value(i), "row {i} of morsel {m}");
                        tested += 1;
                    }
                }
                top.push(
                    &spec,
                    batch,
                    UInt64Array::from_iter_values((0..50).map(|i| (m as u64) << 32 | i)),
                )
                .unwrap();
            }
            assert!(tested >= 200, "only {tested} rows met a threshold");
        }
    }

    fn mixed_schema() -> SchemaRef {
        Arc::new(Schema::new(vec![
            Field::new("a", DataType::Int32, true),
            Field::new("f", DataType::Float64, true),
            Field::new("s", DataType::Utf8, true),
            Field::new("w", DataType::Int64, true),
            Field::new("d", DataType::Decimal128(15, 2), true),
            Field::new("id", DataType::Int64, false),
        ]))
    }

    /// Morsels over [`mixed_schema`]: few distinct values (many ties),
    /// NULLs in every key, -0.0, 0.0 and NaN among the doubles, `w`
    /// spanning all of i64; `id` is the input position.
    /// A batch of [`mixed_schema`], its ids counting from `first_id`.
    fn mixed_batch(
        a: Vec<Option<i32>>,
        f: Vec<Option<f64>>,
        st: Vec<Option<String>>,
        w: Vec<Option<i64>>,
        d: Vec<Option<i128>>,
        first_id: usize,
    ) -> RecordBatch {
        let ids = (0..a.len()).map(|i| (first_id + i) as i64);
        let columns: Vec<ArrayRef> = vec![
            Arc::new(arrow::array::Int32Array::from(a)),
            Arc::new(arrow::array::Float64Array::from(f)),
            Arc::new(arrow::array::StringArray::from(st)),
            Arc::new(Int64Array::from(w)),
            Arc::new(
                arrow::array::Decimal128Array::from(d)
                    .with_precision_and_scale(15, 2)
                    .unwrap(),
            ),
            Arc::new(Int64Array::from_iter_values(ids)),
        ];
        RecordBatch::try_new(mixed_schema(), columns).unwrap()
    }

    /// A sort key on column `index` of [`mixed_schema`].
    fn mixed_key(name: &str, index: usize, asc: bool, nulls_first: bool) -> SortKey {
        SortKey {
            expr: Expr::column(index, name),
            asc,
            nulls_first,
        }
    }

    /// The ids of merged [`mixed_schema`] batches, in order.
    fn mixed_ids(merged: &[RecordBatch]) -> Vec<i64> {
        ids_at(merged, 5)
    }

    fn mixed_morsels(rows: usize, per: usize, seed: u64) -> Vec<(usize, RecordBatch)> {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut some = move |p: u32| rng.random_range(0..10) >= p;
        let mut rng = StdRng::seed_from_u64(seed + 1);
        let doubles = [-0.0, 0.0, f64::NAN, -1.5, 2.5, f64::INFINITY];
        (0..rows.div_ceil(per))
            .map(|m| {
                let n = per.min(rows - m * per);
                let mut a = Vec::new();
                let mut f = Vec::new();
                let mut st = Vec::new();
                let mut w = Vec::new();
                let mut d = Vec::new();
                for _ in 0..n {
                    a.push(some(1).then(|| rng.random_range(-3..4)));
                    f.push(some(1).then(|| doubles[rng.random_range(0..doubles.len())]));
                    st.push(some(1).then(|| format!("s{}", rng.random_range(0..5))));
                    w.push(some(1).then(|| [i64::MIN, -1, 0, 7, i64::MAX][rng.random_range(0..5)]));
                    d.push(some(1).then(|| i128::from(rng.random_range(-500..500i64))));
                }
                (m, mixed_batch(a, f, st, w, d, m * per))
            })
            .collect()
    }

    /// The ids in the order the row format gives `keys` with the input
    /// position last (the definition of the sort's order).
    fn expected_by_rows(parts: &[(usize, RecordBatch)], keys: &[SortKey]) -> Vec<i64> {
        let spec = SortSpec::new(keys, mixed_schema()).unwrap();
        let batches: Vec<RecordBatch> = parts.iter().map(|(_, b)| b.clone()).collect();
        let batch = concat_batches(&mixed_schema(), &batches).unwrap();
        let id = batch
            .column(5)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        let seq = UInt64Array::from_iter_values(id.values().iter().map(|&i| i as u64));
        let converter = spec.converter().unwrap();
        let rows = spec.rows(&converter, &batch, &seq).unwrap();
        let mut order: Vec<usize> = (0..batch.num_rows()).collect();
        order.sort_by(|&x, &y| rows.row(x).cmp(&rows.row(y)));
        order.into_iter().map(|i| id.value(i)).collect()
    }

    #[test]
    fn every_key_layout_sorts_as_the_row_format() {
        // morsels of 100 rows: positions are (morsel << 32 | row), ids
        // count rows, so give each morsel its own id range
        let parts = mixed_morsels(3000, 100, 3);
        let k = mixed_key;
        let cases: Vec<(Vec<SortKey>, &str)> = vec![
            (vec![k("a", 0, true, false)], "packed"),
            (vec![k("d", 4, false, true)], "packed"),
            (
                vec![k("a", 0, false, true), k("d", 4, true, false)],
                "packed",
            ),
            (vec![k("f", 1, true, true)], "wide"),
            (vec![k("f", 1, false, false), k("a", 0, true, true)], "wide"),
            (vec![k("w", 3, false, true)], "wide"),
            (vec![k("w", 3, true, false), k("d", 4, false, true)], "rows"),
            (
                vec![k("s", 2, true, false), k("a", 0, false, false)],
                "rows",
            ),
        ];
        for (keys, layout) in cases {
            let spec = SortSpec::new(&keys, mixed_schema()).unwrap();
            let want = expected_by_rows(&parts, &keys);
            for lanes in [1, 2, 3] {
                let runs: Vec<SortedRun> = (0..lanes)
                    .map(|lane| {
                        let mine = parts
                            .iter()
                            .filter(|(m, _)| m % lanes == lane)
                            .cloned()
                            .collect();
                        SortedRun::new(&spec, mine, None).unwrap()
                    })
                    .collect();
                let got_layout = match &runs[0].keys {
                    RunKeys::Packed { .. } => "packed",
                    RunKeys::Wide(_) => "wide",
                    RunKeys::Rows { .. } => "rows",
                };
                assert_eq!(got_layout, layout, "{keys:?}");
                for partitions in [1, 3, 16] {
                    let plan = MergePlan::new(&runs, partitions);
                    let merged: Vec<RecordBatch> = (0..plan.partitions)
                        .filter_map(|p| plan.merge(&runs, p, None).unwrap())
                        .collect();
                    let got = mixed_ids(&merged);
                    assert_eq!(got, want, "{keys:?} lanes={lanes} partitions={partitions}");
                }
            }
        }
    }

    /// Morsels `0..40` of 50 rows, each of lane `m % 6`'s kind: the
    /// lanes' runs pack their keys from different smallest values and with
    /// or without NULLs.
    fn lane_morsels() -> Vec<(usize, RecordBatch)> {
        let mut rng = StdRng::seed_from_u64(9);
        let big = 999_999_999_999_999;
        (0..40)
            .map(|m| {
                let n = 50;
                let (a, d): (Vec<Option<i32>>, Vec<Option<i128>>) = (0..n)
                    .map(|i| match m % 6 {
                        // small values and NULLs
                        0 => (
                            rng.random_bool(0.8).then(|| rng.random_range(-3..4)),
                            rng.random_bool(0.8).then(|| rng.random_range(-500..500)),
                        ),
                        // larger ones, no NULL
                        1 => (
                            Some(rng.random_range(1000..1010)),
                            Some(rng.random_range(10_000..10_100)),
                        ),
                        // one value
                        2 => (Some(2), Some(7)),
                        // only NULLs
                        3 => (None, None),
                        // the two ends of each type: each run alone packs,
                        // together their codes need more than 64 bits
                        4 => (
                            Some(i32::MIN + (i & 1) as i32),
                            Some(-big + (i & 1) as i128),
                        ),
                        _ => (Some(i32::MAX - (i & 1) as i32), Some(big - (i & 1) as i128)),
                    })
                    .unzip();
                let (f, st, w) = (vec![None; n], vec![None; n], vec![None; n]);
                (m, mixed_batch(a, f, st, w, d, m * n))
            })
            .collect()
    }

    #[test]
    fn runs_packed_from_different_values_merge_on_shared_codes() {
        let parts = lane_morsels();
        let k = mixed_key;
        let keys = [
            vec![k("a", 0, true, false)],
            vec![k("d", 4, false, true)],
            vec![k("a", 0, false, true), k("d", 4, true, false)],
            vec![k("a", 0, true, true), k("d", 4, false, false)],
        ];
        // (the lanes merged, whether their codes share 64 bits)
        let merges: [(&[usize], bool); 9] = [
            (&[0, 1], true),
            (&[1, 3], true),
            (&[2, 3], true),
            (&[0, 2], true),
            (&[1, 2, 3], true),
            (&[0, 1, 2, 3], true),
            (&[4, 5], false),
            (&[0, 4, 5], false),
            (&[2, 4], false),
        ];
        for keys in &keys {
            let spec = SortSpec::new(keys, mixed_schema()).unwrap();
            for (lanes, shared) in merges {
                let mine: Vec<(usize, RecordBatch)> = parts
                    .iter()
                    .filter(|(m, _)| lanes.contains(&(m % 6)))
                    .cloned()
                    .collect();
                let runs: Vec<SortedRun> = lanes
                    .iter()
                    .map(|lane| {
                        let of_lane = mine.iter().filter(|(m, _)| m % 6 == *lane).cloned();
                        SortedRun::new(&spec, of_lane.collect(), None).unwrap()
                    })
                    .collect();
                assert!(
                    runs.iter()
                        .all(|r| matches!(r.keys, RunKeys::Packed { .. })),
                    "{keys:?} {lanes:?}"
                );
                let want = expected_by_rows(&mine, keys);
                for partitions in [1, 4] {
                    let plan = MergePlan::new(&runs, partitions);
                    // a single-column key of one lane pair fits whatever
                    // the values
                    let fits = shared || keys.len() == 1;
                    assert_eq!(plan.codes.is_some(), fits, "{keys:?} {lanes:?}");
                    // and every such merge key has room for the position
                    assert_eq!(
                        plan.codes.as_ref().map(|c| c.position.is_some()),
                        fits.then_some(true),
                        "{keys:?} {lanes:?}"
                    );
                    let merged: Vec<RecordBatch> = (0..plan.partitions)
                        .filter_map(|p| plan.merge(&runs, p, None).unwrap())
                        .collect();
                    let got = mixed_ids(&merged);
                    assert_eq!(
                        got, want,
                        "{keys:?} lanes={lanes:?} partitions={partitions}"
                    );
                }
            }
        }
    }

    /// Rows, sort keys, and how [`FullSort`] sorts them.
    type Case<'a> = (&'a [(usize, RecordBatch)], Vec<SortKey>, &'static str);

    /// The ids of every lane's rows sorted as [`FullSort`] sorts them:
    /// one radix sort cut into `wanted` ranges, or runs merged.
    fn full_sort_ids(
        spec: &SortSpec,
        parts: &[(usize, RecordBatch)],
        lanes: usize,
        wanted: usize,
    ) -> (Vec<i64>, &'static str) {
        let keyed: Vec<KeyedRows> = (0..lanes)
            .map(|lane| {
                let mut k = KeyedRows::new(spec);
                for (m, b) in parts.iter().filter(|(m, _)| m % lanes == lane) {
                    k.push(spec, *m, b.clone()).unwrap();
                }
                k
            })
            .collect();
        match FullSort::new(keyed) {
            FullSort::Radix(radix) => {
                let scattered: Vec<Scattered> = (0..radix.chunks())
                    .map(|i| radix.scatter(i).unwrap())
                    .collect();
                let ranges = radix.ranges(&scattered, wanted);
                assert!(ranges.len() <= wanted.max(1) + 1, "{ranges:?}");
                let sorted: Vec<RecordBatch> = ranges
                    .into_iter()
                    .filter_map(|r| radix.sort_range(&scattered, r, None, None).unwrap())
                    .collect();
                (
                    mixed_ids(&sorted),
                    if radix.wide() { "wide" } else { "radix" },
                )
            }
            FullSort::Runs(lanes) => {
                let runs: Vec<SortedRun> = lanes
                    .into_iter()
                    .map(|l| SortedRun::new(spec, l.into_inner().unwrap().unwrap(), None).unwrap())
                    .collect();
                let plan = MergePlan::new(&runs, wanted);
                let merged: Vec<RecordBatch> = (0..plan.partitions)
                    .filter_map(|p| plan.merge(&runs, p, None).unwrap())
                    .collect();
                (mixed_ids(&merged), "runs")
            }
        }
    }

    #[test]
    fn one_radix_sort_of_every_lane_sorts_as_the_row_format() {
        let k = mixed_key;
        // 3000 rows in morsels of 100, of 1 (a position of many morsels
        // and few rows), and 200000 in morsels of 4000 (digits of several
        // hundred rows, sorted on their lower bytes)
        let small = mixed_morsels(3000, 100, 5);
        let single = mixed_morsels(300, 1, 6);
        let large = mixed_morsels(200_000, 4000, 7);
        // every row's `a` the same: codes of no bits, one digit
        let constant: Vec<(usize, RecordBatch)> = small
            .iter()
            .map(|(m, b)| {
                let n = b.num_rows();
                let f = b.column(1).as_primitive::<arrow::datatypes::Float64Type>();
                let d = b
                    .column(4)
                    .as_primitive::<arrow::datatypes::Decimal128Type>();
                let w = b.column(3).as_primitive::<arrow::datatypes::Int64Type>();
                let batch = mixed_batch(
                    vec![Some(2); n],
                    f.iter().collect(),
                    vec![None; n],
                    w.iter().collect(),
                    d.iter().collect(),
                    m * 100,
                );
                (*m, batch)
            })
            .collect();
        // decimals of -5.00 to 5.00 but a few of +-10^10: the digits'
        // slices cover the sample's middle, the first and last digits
        // hold the rest
        let outliers: Vec<(usize, RecordBatch)> = large
            .iter()
            .map(|(m, b)| {
                let ids = b.column(5).as_primitive::<arrow::datatypes::Int64Type>();
                let d = b
                    .column(4)
                    .as_primitive::<arrow::datatypes::Decimal128Type>();
                let d: arrow::array::Decimal128Array = d
                    .iter()
                    .zip(ids.values())
                    .map(|(v, id)| match id % 150 {
                        0 => Some(1_000_000_000_000),
                        1 => Some(-1_000_000_000_000 - i128::from(*id)),
                        _ => v,
                    })
                    .collect();
                let mut columns = b.columns().to_vec();
                columns[4] = Arc::new(d.with_precision_and_scale(15, 2).unwrap());
                (*m, RecordBatch::try_new(mixed_schema(), columns).unwrap())
            })
            .collect();
        // decimals spanning nearly all 15 digits: codes of 51 bits, too
        // many beside a position of 18 for a u64
        let far: Vec<(usize, RecordBatch)> = outliers
            .iter()
            .map(|(m, b)| {
                let d = b
                    .column(4)
                    .as_primitive::<arrow::datatypes::Decimal128Type>();
                let d: arrow::array::Decimal128Array = d
                    .iter()
                    .map(|v| v.map(|v| v.clamp(-1, 1) * 999_999_999_999_990 + v % 7))
                    .collect();
                let mut columns = b.columns().to_vec();
                columns[4] = Arc::new(d.with_precision_and_scale(15, 2).unwrap());
                (*m, RecordBatch::try_new(mixed_schema(), columns).unwrap())
            })
            .collect();
        let cases: Vec<Case> = vec![
            (&far, vec![k("d", 4, false, true)], "wide"),
            (
                &far,
                vec![k("a", 0, true, false), k("d", 4, true, true)],
                "wide",
            ),
            (&outliers, vec![k("d", 4, true, true)], "radix"),
            (
                &outliers,
                vec![k("a", 0, false, false), k("d", 4, false, true)],
                "radix",
            ),
            (&small, vec![k("a", 0, true, false)], "radix"),
            (&small, vec![k("d", 4, false, true)], "radix"),
            // 130 bits by their types, 11 + 12 by their values
            (
                &small,
                vec![k("d", 4, true, false), k("id", 5, false, true)],
                "radix",
            ),
            (
                &small,
                vec![k("w", 3, false, true), k("id", 5, true, true)],
                "runs",
            ),
            (
                &small,
                vec![k("a", 0, false, true), k("d", 4, true, false)],
                "radix",
            ),
            (
                &single,
                vec![k("d", 4, true, true), k("a", 0, false, false)],
                "radix",
            ),
            (
                &large,
                vec![k("a", 0, true, true), k("d", 4, false, false)],
                "radix",
            ),
            (&large, vec![k("id", 5, false, false)], "radix"),
            (&constant, vec![k("a", 0, true, false)], "radix"),
            (
                &constant,
                vec![k("a", 0, false, true), k("d", 4, true, true)],
                "radix",
            ),
            // doubles and `w` span all 64 bits: no word holds them
            (&small, vec![k("f", 1, true, true)], "runs"),
            (
                &small,
                vec![k("w", 3, false, true), k("a", 0, true, false)],
                "runs",
            ),
        ];
        assert_full_sorts(&cases);
    }

    /// Each case's rows sorted by [`FullSort`] on 1 to 3 lanes, cut in 1
    /// to 16 ranges, take the way it names and come out as the row
    /// format orders them.
    fn assert_full_sorts(cases: &[Case]) {
        for (parts, keys, how) in cases {
            let spec = SortSpec::new(keys, mixed_schema()).unwrap();
            assert!(spec.by_radix());
            let want = expected_by_rows(parts, keys);
            for lanes in [1, 2, 3] {
                for wanted in [1, 3, 16] {
                    let (got, took) = full_sort_ids(&spec, parts, lanes, wanted);
                    assert_eq!(took, *how, "{keys:?}");
                    assert_eq!(got, want, "{keys:?} lanes={lanes} wanted={wanted}");
                }
            }
        }
    }

    /// `parts` with the string column `s` of the row of each id.
    fn with_strings(
        parts: &[(usize, RecordBatch)],
        s: impl Fn(i64) -> Option<String>,
    ) -> Vec<(usize, RecordBatch)> {
        parts
            .iter()
            .map(|(m, b)| {
                let ids = b.column(5).as_primitive::<arrow::datatypes::Int64Type>();
                let strings: arrow::array::StringArray =
                    ids.values().iter().map(|&id| s(id)).collect();
                let mut columns = b.columns().to_vec();
                columns[2] = Arc::new(strings);
                (*m, RecordBatch::try_new(mixed_schema(), columns).unwrap())
            })
            .collect()
    }

    #[test]
    fn string_keys_ranked_by_dictionaries_sort_as_the_row_format() {
        let k = mixed_key;
        // few strings (`s0`..`s4`, NULLs) in every lane
        let small = mixed_morsels(3000, 100, 11);
        // strings that share prefixes, the empty one, longer than a word,
        // not ASCII, upper before lower case; lanes meet different ones
        let texts = [
            "",
            "a",
            "ab",
            "abc",
            "B",
            "zé",
            "é",
            "a much longer string than sixteen 1",
            "a much longer string than sixteen 2",
            "a!",
        ];
        let varied = with_strings(&mixed_morsels(20_000, 500, 12), |id| {
            (id % 13 != 0).then(|| texts[((id * 7) % 10) as usize].to_owned())
        });
        // too many strings that hardly repeat: the lanes give up ranking
        let unique = with_strings(&mixed_morsels(30_000, 1000, 13), |id| {
            (id % 11 != 0).then(|| format!("v{}", id * 7919 % 20_011))
        });
        let cases: Vec<Case> = vec![
            (&small, vec![k("s", 2, true, false)], "radix"),
            (
                &small,
                vec![k("s", 2, false, true), k("a", 0, true, false)],
                "radix",
            ),
            (
                &varied,
                vec![k("s", 2, true, true), k("d", 4, false, false)],
                "radix",
            ),
            (&varied, vec![k("s", 2, false, false)], "radix"),
            (
                &varied,
                vec![k("a", 0, true, true), k("s", 2, false, true)],
                "radix",
            ),
            (&unique, vec![k("s", 2, true, false)], "runs"),
            (
                &unique,
                vec![k("s", 2, false, true), k("a", 0, true, true)],
                "runs",
            ),
        ];
        for (_, keys, _) in &cases {
            assert!(
                !SortSpec::new(keys, mixed_schema())
                    .unwrap()
                    .by_radix_fixed()
            );
        }
        assert_full_sorts(&cases);
    }

    #[test]
    fn radix_sort_sorts_words_of_any_spread() {
        let mut rng = StdRng::seed_from_u64(5);
        // past MSD_FROM the array is split by its top byte first: parts of
        // every size, under and over the bucket's own threshold
        let cases = [
            (10, 64),
            (5000, 64),
            (5000, 17),
            (70_000, 40),
            (3000, 0),
            (MSD_FROM, 12),
            (200_000, 64),
            (200_000, 24),
            (300_000, 16),
        ];
        for (n, bits) in cases {
            let mask = if bits == 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            let mut v: Vec<u64> = (0..n)
                .map(|_| rng.random::<u64>() & mask | 1 << 60)
                .collect();
            let mut want = v.clone();
            want.sort_unstable();
            radix_sort(&mut v, 0, 64);
            assert_eq!(v, want, "n={n} bits={bits}");
        }
    }

    #[test]
    fn radix_sort_leaves_the_ordered_low_bits_alone_and_still_sorts() {
        // row numbers in the low bits, ascending as they come; keys above
        // them from bit `at` (a whole byte, or sharing one with the rows)
        let mut rng = StdRng::seed_from_u64(9);
        for (at, n) in [
            (16u32, 1u64 << 12),
            (12, 1 << 12),
            (13, 1 << 12),
            (24, 1 << 17),
            (17, 1 << 17),
        ] {
            let mut v: Vec<u64> = (0..n)
                .map(|row| (rng.random::<u64>() % 300) << at | row)
                .collect();
            let mut want = v.clone();
            want.sort_unstable();
            radix_sort(&mut v, at, at + 9);
            assert_eq!(v, want, "keys from bit {at}");
        }
    }

    #[test]
    fn parallel_merge_of_runs_is_a_stable_sort() {
        let parts = morsels(5000, 37, 7);
        for ((asc, nulls_first), lanes) in
            [(true, false), (false, false), (true, true), (false, true)]
                .into_iter()
                .flat_map(|d| [(d, 2), (d, 3), (d, 6)])
        {
            let spec = SortSpec::new(&key(asc, nulls_first), schema()).unwrap();
            // the lanes took morsels round robin (two runs merge pairwise,
            // more by a heap)
            let runs: Vec<SortedRun> = (0..lanes)
                .map(|lane| {
                    let mine = parts
                        .iter()
                        .filter(|(m, _)| m % lanes == lane)
                        .cloned()
                        .collect();
                    SortedRun::new(&spec, mine, None).unwrap()
                })
                .collect();
            for partitions in [1, 2, 7, 64] {
                let plan = MergePlan::new(&runs, partitions);
                assert_eq!(
                    merged_ids(&plan, &runs),
                    expected(&parts, asc, nulls_first),
                    "asc={asc} nulls_first={nulls_first} lanes={lanes} partitions={partitions}"
                );
            }
        }
    }

    /// The ids of every partition of `plan` merged, in order.
    fn merged_ids(plan: &MergePlan, runs: &[SortedRun]) -> Vec<i64> {
        let merged: Vec<RecordBatch> = (0..plan.partitions)
            .filter_map(|p| plan.merge(runs, p, None).unwrap())
            .collect();
        ids(&merged)
    }

    #[test]
    fn merge_keys_without_room_for_the_position_still_keep_ties_in_input_order() {
        // five keys spread over 2^50: their shared codes fit 64 bits, but
        // not beside a position (136 morsels of 37 rows), so equal keys
        // compare their positions one by one
        let parts: Vec<(usize, RecordBatch)> = morsels(5000, 37, 3)
            .into_iter()
            .map(|(m, b)| {
                let k = b.column(0).as_primitive::<arrow::datatypes::Int64Type>();
                let spread: Int64Array = k.unary(|v| (v % 5) << 48);
                let batch =
                    RecordBatch::try_new(schema(), vec![Arc::new(spread), b.column(1).clone()])
                        .unwrap();
                (m, batch)
            })
            .collect();
        for ((asc, nulls_first), lanes) in [(true, false), (false, true)]
            .into_iter()
            .flat_map(|d| [(d, 2), (d, 3)])
        {
            let spec = SortSpec::new(&key(asc, nulls_first), schema()).unwrap();
            let runs: Vec<SortedRun> = (0..lanes)
                .map(|lane| {
                    let mine = parts.iter().filter(|(m, _)| m % lanes == lane).cloned();
                    SortedRun::new(&spec, mine.collect(), None).unwrap()
                })
                .collect();
            for partitions in [1, 3] {
                let plan = MergePlan::new(&runs, partitions);
                let codes = plan.codes.as_ref().expect("the codes fit 64 bits");
                assert!(codes.position.is_none(), "no room for the position");
                assert_eq!(
                    merged_ids(&plan, &runs),
                    expected(&parts, asc, nulls_first),
                    "asc={asc} nulls_first={nulls_first} lanes={lanes} partitions={partitions}"
                );
            }
        }
    }

    #[test]
    fn lanes_share_the_best_first_key_bound() {
        let one = |v: Option<i64>| -> ArrayRef { Arc::new(Int64Array::from(vec![v])) };
        // (ascending, the two lanes' bounds, the better one)
        for (asc, a, b, best) in [
            (false, 100, 50, 100),
            (false, 50, 100, 100),
            (true, 100, 50, 50),
        ] {
            let spec = SortSpec::new(&key(asc, false), schema()).unwrap();
            let shared = SharedBound::default();
            let mut lanes = [TopN::new(&spec, 3).unwrap(), TopN::new(&spec, 3).unwrap()];
            lanes[0].threshold_first = Some(one(Some(a)));
            lanes[1].threshold_first = Some(one(Some(b)));
            for i in [0, 1, 0] {
                lanes[i].share_bound(&spec, &shared).unwrap();
            }
            for lane in &lanes {
                assert_eq!(
                    lane.threshold_first.as_ref().unwrap().to_data(),
                    one(Some(best)).to_data(),
                    "asc={asc} {a} {b}"
                );
            }
            // a NULL bound is neither published nor taken
            let mut third = TopN::new(&spec, 3).unwrap();
            third.threshold_first = Some(one(None));
            third.share_bound(&spec, &shared).unwrap();
            assert_eq!(
                third.threshold_first.unwrap().to_data(),
                one(Some(best)).to_data()
            );
            let nulls = SharedBound::default();
            let mut fourth = TopN::new(&spec, 3).unwrap();
            fourth.threshold_first = Some(one(None));
            fourth.share_bound(&spec, &nulls).unwrap();
            assert!(nulls.0.lock().unwrap().is_none());
        }
    }

    #[test]
    fn a_wide_decimal_first_bound_is_the_k_th_best_value() {
        use arrow::array::Decimal128Array;
        let schema = Arc::new(Schema::new(vec![Field::new(
            "k",
            DataType::Decimal128(38, 2),
            true,
        )]));
        let mut rng = StdRng::seed_from_u64(3);
        // ties, NULLs, values past 64 bits of both signs
        let values: Vec<Option<i128>> = (0..500)
            .map(|_| {
                (rng.random_range(0..8) > 0).then(|| {
                    i128::from(rng.random_range(-60i64..60)) << (rng.random_range(0..2) * 70)
                })
            })
            .collect();
        let nulls = values.iter().filter(|v| v.is_none()).count();
        let column = Decimal128Array::from(values.clone())
            .with_precision_and_scale(38, 2)
            .unwrap();
        let batch = RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(column)]).unwrap();
        for (asc, nulls_first) in [(true, false), (true, true), (false, false), (false, true)] {
            let spec = SortSpec::new(&key(asc, nulls_first), Arc::clone(&schema)).unwrap();
            let mut sorted: Vec<i128> = values.iter().flatten().copied().collect();
            sorted.sort_unstable_by(|a, b| if asc { a.cmp(b) } else { b.cmp(a) });
            for k in [1, 7, 60, nulls, nulls + 1, 300, 500] {
                let mut top = TopN::new(&spec, k).unwrap();
                top.first_bound(&spec, &batch).unwrap();
                // with NULLS FIRST the NULLs are the best; none bounds
                // when they fill the k (or the k are every row)
                let of_values = if nulls_first {
                    k.checked_sub(nulls)
                } else {
                    Some(k)
                };
                let want = of_values
                    .filter(|&v| v > 0 && k < batch.num_rows())
                    .and_then(|v| sorted.get(v - 1).copied());
                let got = top
                    .threshold_first
                    .map(|t| t.as_primitive::<Decimal128Type>().value(0));
                assert_eq!(got, want, "asc={asc} nulls_first={nulls_first} k={k}");
            }
        }
    }

    #[test]
    fn a_top_n_narrowed_by_its_keys_before_copying_is_the_head_of_the_sort() {
        // keys of few values (most rows of a morsel tie the threshold's
        // first key, so their keys are compared before the rows are
        // copied), NULLs first and last, NaN and -0.0, strings, a key
        // without NULLs; one lane or three sharing their first-key bounds
        let parts = mixed_morsels(6000, 600, 17);
        let k = mixed_key;
        let cases: Vec<Vec<SortKey>> = vec![
            vec![k("a", 0, true, false), k("d", 4, false, true)],
            vec![k("a", 0, false, true), k("f", 1, true, false)],
            vec![k("s", 2, true, true), k("w", 3, false, false)],
            vec![
                k("f", 1, false, false),
                k("s", 2, false, true),
                k("a", 0, true, true),
            ],
            vec![
                k("w", 3, true, true),
                k("a", 0, false, false),
                k("d", 4, true, false),
            ],
            vec![k("s", 2, false, false), k("id", 5, false, false)],
        ];
        for keys in cases {
            let spec = SortSpec::new(&keys, mixed_schema()).unwrap();
            let want = expected_by_rows(&parts, &keys);
            for top in [1, 7, 20] {
                for n in [1, 3] {
                    let mut lanes: Vec<TopN> =
                        (0..n).map(|_| TopN::new(&spec, top).unwrap()).collect();
                    let shared = SharedBound::default();
                    for (m, b) in &parts {
                        let lane = &mut lanes[m % n];
                        lane.share_bound(&spec, &shared).unwrap();
                        lane.push_morsel(&spec, b.clone(), position_base(*m, 0))
                            .unwrap();
                        lane.share_bound(&spec, &shared).unwrap();
                    }
                    // lanes that encoded their keys beside one that did not
                    let finished = lanes
                        .into_iter()
                        .enumerate()
                        .map(|(i, lane)| lane.finish(&spec, i % 2 == 0).unwrap())
                        .collect();
                    let out = TopN::merge(&spec, top, finished).unwrap();
                    assert_eq!(mixed_ids(&[out]), want[..top], "{keys:?} k={top} lanes={n}");
                }
            }
        }
    }

    #[test]
    fn top_n_is_the_head_of_the_stable_sort() {
        // keys with many ties, keys nearly all distinct, and one morsel
        // (whose own k-th key decides)
        for (k, parts) in [0, 1, 10, 333, 5000].into_iter().flat_map(|k| {
            [
                (k, morsels(3000, 50, 11)),
                (k, morsels_of(3000, 50, 11, 1 << 20)),
                (k, morsels_of(60, 60, 5, 1 << 20)),
            ]
        }) {
            for ((asc, nulls_first), n) in
                [(false, false), (true, true), (true, false), (false, true)]
                    .into_iter()
                    .flat_map(|d| [(d, 1), (d, 2), (d, 3)])
            {
                let spec = SortSpec::new(&key(asc, nulls_first), schema()).unwrap();
                let mut lanes: Vec<TopN> = (0..n).map(|_| TopN::new(&spec, k).unwrap()).collect();
                // the lanes trade thresholds around each morsel, as the
                // pipeline's lanes do
                let shared = SharedBound::default();
                for (m, b) in &parts {
                    let lane = &mut lanes[m % n];
                    lane.share_bound(&spec, &shared).unwrap();
                    lane.push(&spec, b.clone(), positions(*m, b.num_rows()))
                        .unwrap();
                    lane.share_bound(&spec, &shared).unwrap();
                }
                for lane in &mut lanes {
                    lane.share_bound(&spec, &shared).unwrap();
                }
                // every lane ends with the shared threshold
                if let Some(best) = shared.0.lock().unwrap().clone() {
                    for lane in &lanes {
                        let mine = lane.threshold_first.as_ref().map(|t| t.to_data());
                        assert_eq!(mine, Some(best.to_data()), "k={k} asc={asc} lanes={n}");
                    }
                }
                let finished = lanes
                    .into_iter()
                    .map(|lane| lane.finish(&spec, n > 1).unwrap())
                    .collect();
                let out = TopN::merge(&spec, k, finished).unwrap();
                let mut want = expected(&parts, asc, nulls_first);
                want.truncate(k);
                assert_eq!(ids(&[out]), want, "k={k} asc={asc} lanes={n}");
            }
        }
    }
}
