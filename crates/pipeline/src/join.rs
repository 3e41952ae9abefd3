//! Joins: a hash table built from the right (build) side in parallel,
//! probed by morsels of the left (probe) side.
//!
//! The build is two parallel jobs: each task turns one batch of the build
//! side into its key rows (Arrow's row format) and their hashes (the
//! aggregation's [`hash_bytes`]); then each task fills the hash table of
//! one partition (hash bits 48..56, as the aggregation's radix buckets)
//! with the rows of that partition. A probe task takes one morsel of the
//! probe side, looks its keys up in their partition, gathers the matching
//! pairs, applies the residual filter and emits the joined rows (and, for
//! LEFT and FULL joins, the probe rows without a match padded with NULLs).
//! RIGHT and FULL joins mark the build rows that matched; once every probe
//! task ran, one task per build batch emits the unmarked rows padded with
//! NULLs. A join without keys (cross join, non-equality condition) is a
//! nested loop over the materialised build side. A NULL key never matches.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use arrow::array::{Array, ArrayRef, RecordBatch, RecordBatchOptions, UInt32Array};
use arrow::compute::{filter_record_batch, interleave, take};
use arrow::datatypes::{Schema, SchemaRef};
use arrow::row::{RowConverter, Rows, SortField};
use hashbrown::HashTable;
use weir_planner::{Expr, JoinKind, LogicalPlan};

use crate::error::{Error, Result};
use crate::eval::{evaluate, evaluate_predicate};
use crate::hash::hash_bytes;

/// Rows of the pairs one probe step gathers at most (nested loops).
const PAIRS_PER_BATCH: usize = 1 << 16;

/// A join, ready to build and probe.
pub(crate) struct JoinSpec {
    pub(crate) kind: JoinKind,
    left_keys: Vec<Expr>,
    right_keys: Vec<Expr>,
    filter: Option<Expr>,
    left_schema: SchemaRef,
    right_schema: SchemaRef,
    /// Left columns, then right ones, as the residual filter reads them.
    pairs_schema: SchemaRef,
    pub(crate) schema: SchemaRef,
    converter: Option<RowConverter>,
}

/// One batch of the build side with its keys.
pub(crate) struct BuildChunk {
    batch: RecordBatch,
    rows: Option<Rows>,
    hashes: Vec<u64>,
    /// False where a key is NULL (such a row never matches).
    valid: Vec<bool>,
}

impl BuildChunk {
    /// Bytes held (for the memory accountant).
    pub(crate) fn size(&self) -> usize {
        crate::pipeline::batch_bytes(&self.batch)
            + self.rows.as_ref().map_or(0, Rows::size)
            + self.hashes.len() * 9
    }
}

/// The built side: its batches and one hash table per partition, holding
/// `(hash, batch, row)` of every row with non-NULL keys.
pub(crate) struct Built {
    chunks: Arc<Vec<BuildChunk>>,
    partitions: Vec<HashTable<(u64, u32, u32)>>,
    /// Per batch and row: matched by some probe row (RIGHT, FULL).
    matched: Vec<Vec<AtomicBool>>,
    rows: usize,
    has_null_key: bool,
}

impl Built {
    pub(crate) fn num_chunks(&self) -> usize {
        self.chunks.len()
    }

    /// Bytes held (for the memory accountant).
    pub(crate) fn size(&self) -> usize {
        self.chunks.iter().map(BuildChunk::size).sum()
    }
}

/// Partitions of a build side of `rows` rows (a power of two).
pub(crate) fn build_partitions(rows: usize) -> usize {
    if rows < 1 << 14 {
        1
    } else {
        ((rows >> 13).next_power_of_two()).min(256)
    }
}

fn partition_of(hash: u64, partitions: usize) -> usize {
    ((hash >> 48) as usize) & (partitions - 1)
}

impl JoinSpec {
    /// The spec of a Join node.
    pub(crate) fn new(node: &LogicalPlan) -> Result<Self> {
        let LogicalPlan::Join {
            left,
            right,
            kind,
            on,
            filter,
            schema,
        } = node
        else {
            return Err(Error::Internal(
                "a join spec of a node that is no join".into(),
            ));
        };
        let left_schema = left.schema();
        let right_schema = right.schema();
        let mut fields: Vec<_> = left_schema.fields().iter().cloned().collect();
        fields.extend(right_schema.fields().iter().cloned());
        let pairs_schema = Arc::new(Schema::new(fields));
        let converter = if on.is_empty() {
            None
        } else {
            let fields = on
                .iter()
                .map(|(l, _)| SortField::new(l.data_type(&left_schema)))
                .collect();
            Some(RowConverter::new(fields).map_err(Error::arrow)?)
        };
        Ok(JoinSpec {
            kind: *kind,
            left_keys: on.iter().map(|(l, _)| l.clone()).collect(),
            right_keys: on.iter().map(|(_, r)| r.clone()).collect(),
            filter: filter.clone(),
            left_schema,
            right_schema,
            pairs_schema,
            schema: Arc::clone(schema),
            converter,
        })
    }

    /// One line for EXPLAIN.
    pub(crate) fn describe(&self) -> String {
        let keys: Vec<String> = self
            .left_keys
            .iter()
            .zip(&self.right_keys)
            .map(|(l, r)| format!("{l} = {r}"))
            .collect();
        let how = if keys.is_empty() {
            "nested loop".to_owned()
        } else {
            format!("hash on {}", keys.join(", "))
        };
        match &self.filter {
            Some(f) => format!("{} join, {how}, filter {f}", self.kind.name()),
            None => format!("{} join, {how}", self.kind.name()),
        }
    }

    /// Key rows, hashes and NULL flags of `batch` over `keys`.
    fn keys(
        &self,
        keys: &[Expr],
        batch: &RecordBatch,
    ) -> Result<(Option<Rows>, Vec<u64>, Vec<bool>)> {
        let Some(converter) = &self.converter else {
            return Ok((None, Vec::new(), vec![true; batch.num_rows()]));
        };
        let columns = keys
            .iter()
            .map(|k| evaluate(k, batch).map_err(Error::from))
            .collect::<Result<Vec<ArrayRef>>>()?;
        let mut valid = vec![true; batch.num_rows()];
        // INTERSECT and EXCEPT compare NULLs as equal (the row format
        // encodes them alike)
        let nulls_equal = matches!(self.kind, JoinKind::Intersect | JoinKind::Except);
        for c in columns.iter().filter(|_| !nulls_equal) {
            if let Some(nulls) = c.logical_nulls() {
                for (v, ok) in valid.iter_mut().zip(nulls.iter()) {
                    *v &= ok;
                }
            }
        }
        let rows = converter.convert_columns(&columns).map_err(Error::arrow)?;
        let hashes = (0..rows.num_rows())
            .map(|i| hash_bytes(rows.row(i).as_ref()))
            .collect();
        Ok((Some(rows), hashes, valid))
    }

    /// The build side's batch `batch` with its keys (a task of the build).
    pub(crate) fn build_chunk(&self, batch: RecordBatch) -> Result<BuildChunk> {
        let (rows, hashes, valid) = self.keys(&self.right_keys, &batch)?;
        Ok(BuildChunk {
            batch,
            rows,
            hashes,
            valid,
        })
    }

    /// The hash table of partition `p` of `partitions` (a task of the
    /// build's second job).
    pub(crate) fn build_partition(
        &self,
        chunks: &[BuildChunk],
        p: usize,
        partitions: usize,
    ) -> HashTable<(u64, u32, u32)> {
        let mut table = HashTable::new();
        if self.converter.is_none() {
            return table;
        }
        for (c, chunk) in chunks.iter().enumerate() {
            for (r, &h) in chunk.hashes.iter().enumerate() {
                if chunk.valid[r] && partition_of(h, partitions) == p {
                    table.insert_unique(h, (h, c as u32, r as u32), |e| e.0);
                }
            }
        }
        table
    }

    /// Puts the build together; fails for a SINGLE join (a scalar
    /// subquery) with more than one row.
    pub(crate) fn finish_build(
        &self,
        chunks: Arc<Vec<BuildChunk>>,
        partitions: Vec<HashTable<(u64, u32, u32)>>,
    ) -> Result<Built> {
        let rows: usize = chunks.iter().map(|c| c.batch.num_rows()).sum();
        if self.kind == JoinKind::Single && rows > 1 {
            return Err(Error::Execution(
                "More than one row returned by a subquery used as an expression - scalar subqueries can only return a single row."
                    .into(),
            ));
        }
        let has_null_key =
            self.converter.is_some() && chunks.iter().any(|c| c.valid.contains(&false));
        let marks = matches!(self.kind, JoinKind::Right | JoinKind::Full);
        let matched = chunks
            .iter()
            .map(|c| {
                if marks {
                    (0..c.batch.num_rows())
                        .map(|_| AtomicBool::new(false))
                        .collect()
                } else {
                    Vec::new()
                }
            })
            .collect();
        Ok(Built {
            chunks,
            partitions,
            matched,
            rows,
            has_null_key,
        })
    }

    /// Joins one morsel of the probe side (a probe task).
    pub(crate) fn probe(&self, built: &Built, batch: &RecordBatch) -> Result<Vec<RecordBatch>> {
        let n = batch.num_rows();
        if self.kind == JoinKind::NullAwareAnti && built.rows > 0 && built.has_null_key {
            // x NOT IN (..., NULL, ...) is never TRUE
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        // per probe row: some pair survived the filter
        let mut hit = vec![false; n];
        let (rows, hashes, valid) = self.keys(&self.left_keys, batch)?;
        let mut probe_idx: Vec<u32> = Vec::new();
        let mut build_idx: Vec<(usize, usize)> = Vec::new();
        let flush = |probe_idx: &mut Vec<u32>,
                     build_idx: &mut Vec<(usize, usize)>,
                     hit: &mut Vec<bool>,
                     out: &mut Vec<RecordBatch>|
         -> Result<()> {
            if probe_idx.is_empty() {
                return Ok(());
            }
            let pairs = self.pairs(built, batch, probe_idx, build_idx)?;
            let keep = match &self.filter {
                Some(f) => Some(evaluate_predicate(f, &pairs)?),
                None => None,
            };
            for (i, &p) in probe_idx.iter().enumerate() {
                let ok = keep.as_ref().is_none_or(|k| k.is_valid(i) && k.value(i));
                if ok {
                    hit[p as usize] = true;
                    if let Some(marks) = built.matched.get(build_idx[i].0)
                        && !marks.is_empty()
                    {
                        marks[build_idx[i].1].store(true, Ordering::Relaxed);
                    }
                }
            }
            if self.kind.keeps_right() {
                let pairs = match keep {
                    Some(k) => filter_record_batch(&pairs, &k).map_err(Error::arrow)?,
                    None => pairs,
                };
                if pairs.num_rows() > 0 {
                    out.push(self.conform(pairs)?);
                }
            }
            probe_idx.clear();
            build_idx.clear();
            Ok(())
        };
        match &rows {
            Some(rows) => {
                let parts = built.partitions.len();
                for i in 0..n {
                    if !valid[i] {
                        continue;
                    }
                    let h = hashes[i];
                    let table = &built.partitions[partition_of(h, parts)];
                    let key = rows.row(i);
                    for &(eh, c, r) in table.iter_hash(h) {
                        if eh != h {
                            continue;
                        }
                        let chunk = &built.chunks[c as usize];
                        let other = chunk.rows.as_ref().expect("keyed build").row(r as usize);
                        if other == key {
                            probe_idx.push(i as u32);
                            build_idx.push((c as usize, r as usize));
                        }
                    }
                    if probe_idx.len() >= PAIRS_PER_BATCH {
                        flush(&mut probe_idx, &mut build_idx, &mut hit, &mut out)?;
                    }
                }
            }
            None => {
                for i in 0..n {
                    for (c, chunk) in built.chunks.iter().enumerate() {
                        for r in 0..chunk.batch.num_rows() {
                            probe_idx.push(i as u32);
                            build_idx.push((c, r));
                        }
                    }
                    if probe_idx.len() >= PAIRS_PER_BATCH {
                        flush(&mut probe_idx, &mut build_idx, &mut hit, &mut out)?;
                    }
                }
            }
        }
        flush(&mut probe_idx, &mut build_idx, &mut hit, &mut out)?;
        // probe rows by whether they matched
        let unmatched_kept = match self.kind {
            JoinKind::Left | JoinKind::Full | JoinKind::Single => Some(false),
            JoinKind::Semi | JoinKind::Intersect => Some(true),
            JoinKind::Anti | JoinKind::Except => Some(false),
            JoinKind::NullAwareAnti => Some(false),
            JoinKind::Inner | JoinKind::Right => None,
        };
        if let Some(want) = unmatched_kept {
            let keep: Vec<u32> = (0..n)
                .filter(|&i| {
                    hit[i] == want
                        && !(self.kind == JoinKind::NullAwareAnti && !valid[i] && built.rows > 0)
                })
                .map(|i| i as u32)
                .collect();
            if !keep.is_empty() {
                let idx = UInt32Array::from(keep);
                let mut columns = batch
                    .columns()
                    .iter()
                    .map(|c| take(c.as_ref(), &idx, None).map_err(Error::arrow))
                    .collect::<Result<Vec<_>>>()?;
                if self.kind.keeps_right() {
                    for f in self.right_schema.fields() {
                        columns.push(arrow::array::new_null_array(f.data_type(), idx.len()));
                    }
                }
                out.push(self.batch(columns, idx.len())?);
            }
        }
        Ok(out)
    }

    /// The build rows of batch `c` no probe row matched, padded with NULLs
    /// on the left (RIGHT and FULL joins, once every probe task ran).
    pub(crate) fn unmatched(&self, built: &Built, c: usize) -> Result<Vec<RecordBatch>> {
        let chunk = &built.chunks[c];
        let marks = &built.matched[c];
        let keep: Vec<u32> = (0..chunk.batch.num_rows())
            .filter(|&r| !marks.get(r).is_some_and(|m| m.load(Ordering::Relaxed)))
            .map(|r| r as u32)
            .collect();
        if keep.is_empty() {
            return Ok(Vec::new());
        }
        let idx = UInt32Array::from(keep);
        let mut columns: Vec<ArrayRef> = self
            .left_schema
            .fields()
            .iter()
            .map(|f| arrow::array::new_null_array(f.data_type(), idx.len()))
            .collect();
        for col in chunk.batch.columns() {
            columns.push(take(col.as_ref(), &idx, None).map_err(Error::arrow)?);
        }
        Ok(vec![self.batch(columns, idx.len())?])
    }

    /// The pairs `(probe row, build row)` side by side.
    fn pairs(
        &self,
        built: &Built,
        batch: &RecordBatch,
        probe_idx: &[u32],
        build_idx: &[(usize, usize)],
    ) -> Result<RecordBatch> {
        let idx = UInt32Array::from(probe_idx.to_vec());
        let mut columns = batch
            .columns()
            .iter()
            .map(|c| take(c.as_ref(), &idx, None).map_err(Error::arrow))
            .collect::<Result<Vec<_>>>()?;
        for col in 0..self.right_schema.fields().len() {
            let arrays: Vec<&dyn Array> = built
                .chunks
                .iter()
                .map(|c| c.batch.column(col).as_ref())
                .collect();
            columns.push(interleave(&arrays, build_idx).map_err(Error::arrow)?);
        }
        let options = RecordBatchOptions::new().with_row_count(Some(probe_idx.len()));
        RecordBatch::try_new_with_options(Arc::clone(&self.pairs_schema), columns, &options)
            .map_err(Error::arrow)
    }

    /// `pairs` (left and right columns) in the output schema.
    fn conform(&self, pairs: RecordBatch) -> Result<RecordBatch> {
        let n = pairs.num_rows();
        self.batch(pairs.columns().to_vec(), n)
    }

    fn batch(&self, columns: Vec<ArrayRef>, rows: usize) -> Result<RecordBatch> {
        let options = RecordBatchOptions::new().with_row_count(Some(rows));
        RecordBatch::try_new_with_options(Arc::clone(&self.schema), columns, &options)
            .map_err(Error::arrow)
    }
}
