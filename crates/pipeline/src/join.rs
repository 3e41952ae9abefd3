//! Joins: a hash table built from the right (build) side in parallel,
//! probed by morsels of the left (probe) side.
//!
//! The build is two parallel jobs. Each task of the first takes one batch
//! of the build side: its key rows (Arrow's row format), their hashes (the
//! aggregation's [`hash_bytes`]) and its row numbers grouped by partition
//! (hash bits 48..56, as the aggregation's radix buckets; a row with a
//! NULL key is left out: it never matches). Each task of the second
//! either fills the hash table of one partition from only that
//! partition's rows (a scatter: no task reads another partition's rows)
//! or concatenates one column of the build side, so the build side is one
//! batch and gathering build rows is a `take` by row number. That task
//! takes its column out of every batch, so the input batches are released
//! column by column while the build runs (the peak is not every input
//! batch plus their concatenation). A partition
//! keeps its keys' bytes side by side; its table holds one entry per
//! distinct key (hash, first and last row of its chain) and a row's
//! duplicates follow a `next` chain, in build order.
//!
//! A probe takes the rows a pipeline selected in one morsel, looks their
//! keys up in their partition, gathers the matching pairs, applies the
//! residual filter and emits the joined rows (and, for LEFT and FULL
//! joins, the probe rows without a match padded with NULLs; SEMI and
//! ANTI joins emit the morsel itself with the kept rows selected, no
//! copy). RIGHT and FULL joins mark the build rows that matched; once
//! every probe ran, ranges of build rows emit the unmarked ones padded
//! with NULLs. A join without keys (cross join, non-equality condition)
//! is a nested loop over the build side.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use arrow::array::AsArray;
use arrow::array::BooleanArray;
use arrow::array::{Array, ArrayRef, RecordBatch, RecordBatchOptions, UInt32Array};
use arrow::compute::{FilterBuilder, cast, concat, prep_null_mask_filter, take};
use arrow::datatypes::{DataType, Int64Type};
use arrow::datatypes::{Schema, SchemaRef};
use arrow::row::{RowConverter, Rows, SortField};
use hashbrown::HashTable;
use weir_planner::{Expr, JoinKind, LogicalPlan};

use crate::error::{Error, Result};
use crate::eval::{evaluate, evaluate_predicate};
use crate::hash::{fold_word, hash_bytes, mix};
use crate::step::{PipelineBatch, Selection, remap_columns};

/// Rows of the pairs one probe gathers at most before emitting them.
const PAIRS_PER_BATCH: usize = 1 << 16;

/// Rows of the shared all-NULL column that stands for a column nobody
/// reads (sliced, so no batch up to this size allocates one).
const NULL_ROWS: usize = 1 << 17;

/// Which columns a probe gathers: of its output (the operators above it
/// read them) and of the pairs (the output's, and the residual filter's).
/// The others are NULL slices of a shared column, never copied.
#[derive(Clone, Debug)]
pub(crate) struct Gather {
    out: Vec<bool>,
    pairs: Vec<bool>,
    /// The output's and the pairs' schemas with the columns not gathered
    /// nullable (they hold the shared NULLs).
    out_schema: SchemaRef,
    pairs_schema: SchemaRef,
}

/// `schema` with the fields not in `kept` nullable.
fn nullable_unless(schema: &SchemaRef, kept: &[bool]) -> SchemaRef {
    if kept.iter().all(|k| *k) {
        return Arc::clone(schema);
    }
    let fields: Vec<_> = schema
        .fields()
        .iter()
        .zip(kept)
        .map(|(f, k)| {
            if *k {
                Arc::clone(f)
            } else {
                Arc::new(f.as_ref().clone().with_nullable(true))
            }
        })
        .collect();
    Arc::new(Schema::new(fields))
}

/// No next row in a chain of duplicates.
const END: u32 = u32::MAX;

/// A join, ready to build and probe.
pub(crate) struct JoinSpec {
    pub(crate) kind: JoinKind,
    left_keys: Vec<Expr>,
    right_keys: Vec<Expr>,
    /// The probe side's columns the keys read, and the keys over them.
    left_key_columns: Vec<usize>,
    left_keys_local: Vec<Expr>,
    filter: Option<Expr>,
    left_schema: SchemaRef,
    right_schema: SchemaRef,
    /// Left columns, then right ones, as the residual filter reads them.
    pairs_schema: SchemaRef,
    pub(crate) schema: SchemaRef,
    converter: Option<RowConverter>,
    /// The keys are one or two integers (or dates): compared as numbers.
    fixed: bool,
    /// Per column of the pairs: a shared all-NULL column.
    nulls: Vec<OnceLock<ArrayRef>>,
}

/// The join keys of a batch's rows.
enum KeyValues {
    /// No keys (a nested loop).
    None,
    /// Arrow's row format.
    Rows(Rows),
    /// One or two integer (or date) keys as one number per row: the
    /// first key's 64 bits above the second's.
    Fixed(Vec<u128>),
}

/// A key to look up.
#[derive(Clone, Copy)]
enum KeyRef<'a> {
    Bytes(&'a [u8]),
    Fixed(u128),
}

impl KeyValues {
    fn size(&self) -> usize {
        match self {
            KeyValues::None => 0,
            KeyValues::Rows(r) => r.size(),
            KeyValues::Fixed(v) => v.len() * 16,
        }
    }

    fn get(&self, i: usize) -> KeyRef<'_> {
        match self {
            KeyValues::Fixed(v) => KeyRef::Fixed(v[i]),
            KeyValues::Rows(r) => KeyRef::Bytes(r.row(i).data()),
            KeyValues::None => KeyRef::Fixed(0),
        }
    }
}

/// The hash of a fixed-width key: of one word (one integer column),
/// `mix` of it, a bijection, so that keys of one word with equal hashes
/// are equal and a lookup compares no key.
fn hash_fixed(v: u128, words: usize) -> u64 {
    if words == 1 {
        mix(v as u64)
    } else {
        mix(fold_word(fold_word(0, v as u64), (v >> 64) as u64))
    }
}

/// One batch of the build side with its keys, its rows grouped by
/// partition. Its columns are taken by the tasks that concatenate them
/// (each column's task its own), so the build side's batches are
/// released column by column as the build goes, not all at its end.
pub(crate) struct BuildChunk {
    columns: Vec<Mutex<Option<ArrayRef>>>,
    num_rows: usize,
    /// Bytes held when made (the memory accountant's figure, released
    /// when the build is finished).
    size: usize,
    /// The keys: one-word ones per entry of `order` (partition after
    /// partition, as a partition's task reads them), row-format ones per
    /// row.
    rows: KeyValues,
    /// Per entry of `order`, its row's key hash.
    hashes: Vec<u64>,
    /// Row numbers with non-NULL keys, partition after partition.
    order: Vec<u32>,
    /// Partition `p`'s rows are `order[starts[p]..starts[p + 1]]`.
    starts: Vec<u32>,
    has_null_key: bool,
}

impl BuildChunk {
    /// Bytes held (for the memory accountant).
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    pub(crate) fn num_rows(&self) -> usize {
        self.num_rows
    }

    /// Takes column `c` (once; its task of the build's second job).
    fn take_column(&self, c: usize) -> Result<ArrayRef> {
        self.columns[c]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
            .ok_or_else(|| Error::Internal("a build column taken twice".into()))
    }
}

/// One distinct key of a partition: its hash and the first and last
/// slot of its chain of rows.
#[derive(Clone, Copy)]
struct Entry {
    hash: u64,
    head: u32,
    tail: u32,
}

/// The hash table of one partition of the build side.
pub(crate) struct Partition {
    table: HashTable<Entry>,
    /// Per slot: the build row (in the whole build side).
    rows: Vec<u32>,
    /// Per slot: the next slot with the same key, or [`END`].
    next: Vec<u32>,
    keys: SlotKeys,
    /// The least and greatest key as one integer (keys of one integer or
    /// date column; `(i64::MAX, i64::MIN)` for none), found as the
    /// partition was built, in parallel with the others.
    range: (i64, i64),
    /// Whether equal hashes are equal keys (a key of one integer column:
    /// [`hash_fixed`]).
    hash_is_key: bool,
}

/// The keys of a partition's slots, side by side.
enum SlotKeys {
    /// Slot `s`'s key bytes are `bytes[offsets[s]..offsets[s + 1]]`.
    Rows {
        bytes: Vec<u8>,
        offsets: Vec<usize>,
    },
    Fixed(Vec<u128>),
}

impl SlotKeys {
    #[inline]
    fn equals(&self, slot: u32, key: KeyRef<'_>) -> bool {
        let s = slot as usize;
        match (self, key) {
            (SlotKeys::Fixed(v), KeyRef::Fixed(k)) => v[s] == k,
            (SlotKeys::Rows { bytes, offsets }, KeyRef::Bytes(k)) => {
                &bytes[offsets[s]..offsets[s + 1]] == k
            }
            _ => false,
        }
    }

    fn push(&mut self, key: KeyRef<'_>) {
        match (self, key) {
            (SlotKeys::Fixed(v), KeyRef::Fixed(k)) => v.push(k),
            (SlotKeys::Rows { bytes, offsets }, KeyRef::Bytes(k)) => {
                bytes.extend_from_slice(k);
                offsets.push(bytes.len());
            }
            _ => {}
        }
    }

    fn size(&self) -> usize {
        match self {
            SlotKeys::Rows { bytes, offsets } => bytes.capacity() + offsets.capacity() * 8,
            SlotKeys::Fixed(v) => v.capacity() * 16,
        }
    }
}

impl Partition {
    fn size(&self) -> usize {
        self.table.capacity() * std::mem::size_of::<Entry>()
            + self.rows.capacity() * 8
            + self.keys.size()
    }

    /// The build rows whose key is `key` (of hash `hash`), in build
    /// order.
    #[inline]
    fn matches(&self, hash: u64, key: KeyRef<'_>) -> impl Iterator<Item = u32> + '_ {
        let head = self
            .table
            .find(hash, |e| {
                e.hash == hash && (self.hash_is_key || self.keys.equals(e.head, key))
            })
            .map_or(END, |e| e.head);
        std::iter::successors((head != END).then_some(head), |&s| {
            let n = self.next[s as usize];
            (n != END).then_some(n)
        })
        .map(|s| self.rows[s as usize])
    }
}

/// What one task of the build's second job makes.
pub(crate) enum BuildPart {
    Table(Partition),
    Column(ArrayRef),
}

/// A bit per build key's hash (a Bloom filter with one hash function): a
/// probe key whose bit is clear has no match, told without the hash
/// table. Most probe rows of a selective join (a big side probing a small
/// or filtered one, a semi-join reduction) miss; with 16 bits per key
/// about 6% of misses still reach the table.
struct KeyFilter {
    bits: Vec<u64>,
    mask: u64,
}

/// Past this many distinct build keys the filter (16 bits a key, 1 MiB
/// here) would no longer sit in the cache next to the probe.
const FILTER_MAX_KEYS: usize = 1 << 19;

impl KeyFilter {
    fn new(partitions: &[Partition]) -> Option<Self> {
        let keys: usize = partitions.iter().map(|p| p.table.len()).sum();
        let hashes = partitions
            .iter()
            .flat_map(|p| p.table.iter().map(|e| e.hash));
        Self::with_hashes(keys, hashes)
    }

    /// The filter of `keys` distinct keys of hashes `hashes`.
    fn with_hashes(keys: usize, hashes: impl Iterator<Item = u64>) -> Option<Self> {
        if keys == 0 || keys > FILTER_MAX_KEYS {
            return None;
        }
        let width = (keys * 16).next_power_of_two().max(512);
        let mut filter = KeyFilter {
            bits: vec![0; width / 64],
            mask: width as u64 - 1,
        };
        for hash in hashes {
            let b = filter.bit(hash);
            filter.bits[b >> 6] |= 1 << (b & 63);
        }
        Some(filter)
    }

    /// The bit of a hash: bits the partition (48..) and the hash table's
    /// slot (low) and tag (top 7) do not pick alone.
    #[inline]
    fn bit(&self, hash: u64) -> usize {
        (hash.rotate_right(29) & self.mask) as usize
    }

    #[inline]
    fn may_contain(&self, hash: u64) -> bool {
        let b = self.bit(hash);
        self.bits[b >> 6] & (1 << (b & 63)) != 0
    }
}

/// The values a build on one integer (or date) key holds: the least, how
/// many values from it to the greatest, its distinct keys and its slots
/// (rows with a key). `None` for other keys or no key at all.
struct KeyRange {
    lo: i64,
    span: u64,
    keys: u64,
    slots: u64,
}

impl KeyRange {
    fn of(partitions: &[Partition]) -> Option<Self> {
        let (mut keys, mut slots) = (0u64, 0u64);
        let (mut lo, mut hi) = (i64::MAX, i64::MIN);
        for p in partitions {
            if !matches!(p.keys, SlotKeys::Fixed(_)) {
                return None;
            }
            lo = lo.min(p.range.0);
            hi = hi.max(p.range.1);
            keys += p.table.len() as u64;
            slots += p.rows.len() as u64;
        }
        if keys == 0 {
            return None;
        }
        let span = u64::try_from(i128::from(hi) - i128::from(lo) + 1).ok()?;
        Some(KeyRange {
            lo,
            span,
            keys,
            slots,
        })
    }

    /// Whether a structure of one entry per value of the range may be
    /// made: at most `per_key` entries per key, however many that is up
    /// to `small`, and at most `max` in all.
    fn fits(&self, per_key: u64, small: u64, max: u64) -> bool {
        self.span <= max.min(self.keys.saturating_mul(per_key).max(small))
    }

    /// The entry of key `value` (a slot key of one integer: its low 64
    /// bits) in such a structure.
    fn offset(&self, value: u128) -> u64 {
        (value as u64 as i64).wrapping_sub(self.lo) as u64
    }
}

/// The build keys of a join on one integer (or date) column, as one bit
/// per value of their range: a semi or anti join without a filter asks it
/// whether a probe key is there, one load, no hash and no table (TPC-H's
/// keys are dense ranges; a semi-join reduction by `l_orderkey` sets a
/// bit for 1 value in 40 of 6M).
struct DenseKeys {
    lo: i64,
    bits: Vec<u64>,
}

/// Bits a [`DenseKeys`] may take per distinct key (16 bytes, less than a
/// key's hash table entry; past them the range is too sparse to beat the
/// hash table and its Bloom filter; TPC-H Q4's semi-join reduction, 57K
/// order keys over 6M values, takes 105), however many that is up to bits
/// that stay in a core's cache (128 KiB), and at most in all (16 MiB).
const DENSE_BITS_PER_KEY: u64 = 128;
const DENSE_SMALL_BITS: u64 = 1 << 20;
const DENSE_MAX_BITS: u64 = 1 << 27;

impl DenseKeys {
    fn new(partitions: &[Partition]) -> Option<Self> {
        let range = KeyRange::of(partitions)?;
        if !range.fits(DENSE_BITS_PER_KEY, DENSE_SMALL_BITS, DENSE_MAX_BITS) {
            return None;
        }
        let mut bits = vec![0u64; range.span.div_ceil(64) as usize];
        for p in partitions {
            if let SlotKeys::Fixed(values) = &p.keys {
                for &v in values {
                    let at = range.offset(v);
                    bits[(at >> 6) as usize] |= 1 << (at & 63);
                }
            }
        }
        Some(DenseKeys { lo: range.lo, bits })
    }

    #[inline]
    fn contains(&self, value: i64) -> bool {
        let at = value.wrapping_sub(self.lo) as u64;
        self.bits
            .get((at >> 6) as usize)
            .is_some_and(|w| w & (1 << (at & 63)) != 0)
    }
}

/// The build rows of a join on one integer (or date) key whose build
/// keys are distinct and dense enough: per value of their range, its one
/// build row ([`END`] for none). A probe finds its row in one load, no
/// hash and no table (a join to a table by its primary key: TPC-H's
/// suppliers are keys 1 to 10,000, its orders one key in four of 1 to
/// 6M). The hash tables it was made from are dropped.
struct DirectRows {
    lo: i64,
    rows: Vec<u32>,
}

/// Slots a [`DirectRows`] may take per build key, however many that
/// is up to a table that stays in a core's cache (256 KiB), and at most in
/// all (64 MiB: the table is filled by one task, as the build finishes;
/// SF 1's orders take 24 MiB, SF 10's would take 240 and keep their hash
/// tables, built in parallel).
const DIRECT_SLOTS_PER_KEY: u64 = 4;
const DIRECT_SMALL_SLOTS: u64 = 1 << 16;
const DIRECT_MAX_SLOTS: u64 = 1 << 24;

impl DirectRows {
    fn new(partitions: &[Partition]) -> Option<Self> {
        let range = KeyRange::of(partitions)?;
        // (a key with several rows has a chain of slots)
        if range.keys != range.slots
            || !range.fits(DIRECT_SLOTS_PER_KEY, DIRECT_SMALL_SLOTS, DIRECT_MAX_SLOTS)
        {
            return None;
        }
        let mut rows = vec![END; range.span as usize];
        for p in partitions {
            if let SlotKeys::Fixed(values) = &p.keys {
                for (&v, &row) in values.iter().zip(&p.rows) {
                    rows[range.offset(v) as usize] = row;
                }
            }
        }
        Some(DirectRows { lo: range.lo, rows })
    }

    /// The build row of key `value`, if any.
    #[inline]
    fn get(&self, value: i64) -> Option<u32> {
        let at = value.wrapping_sub(self.lo) as u64;
        usize::try_from(at)
            .ok()
            .and_then(|at| self.rows.get(at))
            .copied()
            .filter(|&r| r != END)
    }
}

/// The built side: all its rows in one batch and one hash table per
/// partition.
pub(crate) struct Built {
    batch: RecordBatch,
    partitions: Vec<Partition>,
    /// Set when the build has few enough keys (see [`KeyFilter`]).
    filter: Option<KeyFilter>,
    /// Set for a semi or anti join without a filter on one integer key of
    /// a dense enough range (see [`DenseKeys`]).
    dense: Option<DenseKeys>,
    /// Set for other joins on one integer key whose build keys are
    /// distinct and dense enough (see [`DirectRows`]): `partitions` are
    /// then dropped.
    direct: Option<DirectRows>,
    /// Per build row: matched by some probe row (RIGHT, FULL).
    matched: Vec<AtomicBool>,
    rows: usize,
    has_null_key: bool,
    size: usize,
}

impl Built {
    /// Rows of the build side.
    pub(crate) fn num_rows(&self) -> usize {
        self.rows
    }

    /// Bytes held (for the memory accountant).
    pub(crate) fn size(&self) -> usize {
        self.size
    }
}

/// A join's probe as an operator of the pipeline whose rows it probes:
/// the join and, once the pipeline's lanes start, its built side.
pub(crate) struct ProbeOp {
    /// The join's number (EXPLAIN's `join k`).
    pub(crate) join: usize,
    pub(crate) spec: Arc<JoinSpec>,
    built: OnceLock<Arc<Built>>,
    /// The columns it gathers, once the pipeline knows what is read
    /// above it; every column until then.
    gather: OnceLock<Gather>,
    all: Gather,
}

impl ProbeOp {
    pub(crate) fn new(join: usize, spec: Arc<JoinSpec>) -> Self {
        let all = spec.gather(None);
        ProbeOp {
            join,
            spec,
            built: OnceLock::new(),
            gather: OnceLock::new(),
            all,
        }
    }

    /// Gathers only the output columns `keep` (the operators above read
    /// no other); returns the probe side's columns the probe reads.
    pub(crate) fn set_keep(&self, keep: &[bool]) -> Vec<bool> {
        let gather = self.spec.gather(Some(keep));
        let needs = self.spec.probe_side_needs(&gather);
        let _ = self.gather.set(gather);
        needs
    }

    /// EXPLAIN's note of the output columns it gathers.
    pub(crate) fn describe_gather(&self) -> String {
        let out = &self.gather().out;
        format!(
            "gathers {} of {} columns",
            out.iter().filter(|k| **k).count(),
            out.len()
        )
    }

    /// The columns it gathers.
    pub(crate) fn gather(&self) -> &Gather {
        self.gather.get().unwrap_or(&self.all)
    }

    /// The EXPLAIN (ANALYZE) name.
    pub(crate) fn name(&self) -> String {
        format!("probe join {}: {}", self.join, self.spec.describe())
    }

    /// Hands over the built side (before the pipeline's lanes start).
    pub(crate) fn set_built(&self, built: Arc<Built>) -> Result<()> {
        self.built
            .set(built)
            .map_err(|_| Error::Internal("a join's build handed over twice".into()))
    }

    /// The built side.
    pub(crate) fn built(&self) -> Result<&Built> {
        self.built
            .get()
            .map(AsRef::as_ref)
            .ok_or_else(|| Error::Internal("a probe ran before its build".into()))
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
        let pairs_width = pairs_schema.fields().len();
        let converter = if on.is_empty() {
            None
        } else {
            let fields = on
                .iter()
                .map(|(l, _)| SortField::new(l.data_type(&left_schema)))
                .collect();
            Some(RowConverter::new(fields).map_err(Error::arrow)?)
        };
        let left_keys: Vec<Expr> = on.iter().map(|(l, _)| l.clone()).collect();
        // NULL keys that match each other (INTERSECT, EXCEPT) need the
        // row format's NULL encoding
        let fixed = !on.is_empty()
            && on.len() <= 2
            && !matches!(kind, JoinKind::Intersect | JoinKind::Except)
            && on.iter().all(|(l, r)| {
                let (lt, rt) = (l.data_type(&left_schema), r.data_type(&right_schema));
                lt == rt
                    && matches!(
                        lt,
                        DataType::Int8
                            | DataType::Int16
                            | DataType::Int32
                            | DataType::Int64
                            | DataType::Date32
                    )
            });
        let mut left_key_columns: Vec<usize> = left_keys.iter().flat_map(Expr::columns).collect();
        left_key_columns.sort_unstable();
        left_key_columns.dedup();
        let left_keys_local = left_keys
            .iter()
            .map(|k| remap_columns(k, &left_key_columns))
            .collect();
        Ok(JoinSpec {
            kind: *kind,
            left_keys,
            right_keys: on.iter().map(|(_, r)| r.clone()).collect(),
            left_key_columns,
            left_keys_local,
            filter: filter.clone(),
            left_schema,
            right_schema,
            pairs_schema,
            schema: Arc::clone(schema),
            converter,
            fixed,
            nulls: (0..pairs_width).map(|_| OnceLock::new()).collect(),
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

    /// What a probe gathers when the operators above it read the output
    /// columns `keep` (`None`: all of them).
    pub(crate) fn gather(&self, keep: Option<&[bool]>) -> Gather {
        let width = self.pairs_schema.fields().len();
        let out: Vec<bool> = match keep {
            Some(k) => (0..self.schema.fields().len())
                .map(|c| k.get(c).copied().unwrap_or(true))
                .collect(),
            None => vec![true; self.schema.fields().len()],
        };
        let mut pairs = vec![false; width];
        if self.emits_pairs() {
            pairs[..out.len().min(width)].copy_from_slice(&out[..out.len().min(width)]);
        }
        if let Some(f) = &self.filter {
            for c in f.columns() {
                if let Some(p) = pairs.get_mut(c) {
                    *p = true;
                }
            }
        }
        Gather {
            out_schema: nullable_unless(&self.schema, &out),
            pairs_schema: nullable_unless(&self.pairs_schema, &pairs),
            out,
            pairs,
        }
    }

    /// The probe side's columns a probe reads for `gather`: the kept
    /// output columns of the probe side, its keys, the filter's.
    pub(crate) fn probe_side_needs(&self, gather: &Gather) -> Vec<bool> {
        let left = self.left_schema.fields().len();
        let out = |c: usize| self.kind.keeps_left() && gather.out.get(c).copied().unwrap_or(false);
        let mut needs: Vec<bool> = (0..left).map(|c| gather.pairs[c] || out(c)).collect();
        for &c in &self.left_key_columns {
            needs[c] = true;
        }
        needs
    }

    /// `rows` rows of NULLs of pairs column `c` (a slice of a shared
    /// column where it is long enough).
    fn null_column(&self, c: usize, rows: usize) -> ArrayRef {
        let dt = self.pairs_schema.field(c).data_type();
        if rows > NULL_ROWS {
            return arrow::array::new_null_array(dt, rows);
        }
        self.nulls[c]
            .get_or_init(|| arrow::array::new_null_array(dt, NULL_ROWS))
            .slice(0, rows)
    }

    /// True when build rows are emitted after every probe: those no
    /// probe row matched (RIGHT, FULL and RIGHT ANTI joins), or those some
    /// probe row matched (RIGHT SEMI).
    pub(crate) fn emits_unmatched(&self) -> bool {
        matches!(
            self.kind,
            JoinKind::Right | JoinKind::Full | JoinKind::RightSemi | JoinKind::RightAnti
        )
    }

    /// What [`Self::unmatched`] emits, for EXPLAIN.
    pub(crate) fn emitted_after_probes(&self) -> &'static str {
        match self.kind {
            JoinKind::RightSemi => "the build rows some probe row matched",
            JoinKind::RightAnti => "the build rows no probe row matched",
            _ => "the build rows without a match, padded with NULLs",
        }
    }

    /// True when the probe emits its matching pairs (the joins whose
    /// output has both sides' columns).
    fn emits_pairs(&self) -> bool {
        self.kind.keeps_left() && self.kind.keeps_right()
    }

    /// Key rows, hashes and NULL flags of `batch` over `keys`.
    fn keys(&self, keys: &[Expr], batch: &RecordBatch) -> Result<(KeyValues, Vec<u64>, Vec<bool>)> {
        let Some(converter) = &self.converter else {
            return Ok((KeyValues::None, Vec::new(), vec![true; batch.num_rows()]));
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
        if self.fixed {
            let mut values = vec![0u128; batch.num_rows()];
            for c in &columns {
                let c = cast(c, &DataType::Int64).map_err(Error::arrow)?;
                let c = c.as_primitive::<Int64Type>();
                for (v, x) in values.iter_mut().zip(c.values().iter()) {
                    *v = (*v << 64) | u128::from(*x as u64);
                }
            }
            let hashes = values
                .iter()
                .map(|&v| hash_fixed(v, columns.len()))
                .collect();
            return Ok((KeyValues::Fixed(values), hashes, valid));
        }
        let rows = converter.convert_columns(&columns).map_err(Error::arrow)?;
        let hashes = (0..rows.num_rows())
            .map(|i| hash_bytes(rows.row(i).as_ref()))
            .collect();
        Ok((KeyValues::Rows(rows), hashes, valid))
    }

    /// The build side's batch `batch` with its keys, its rows grouped by
    /// their partition of `partitions` (a task of the build).
    pub(crate) fn build_chunk(&self, batch: RecordBatch, partitions: usize) -> Result<BuildChunk> {
        let (mut rows, mut hashes, valid) = self.keys(&self.right_keys, &batch)?;
        let keyed = !matches!(rows, KeyValues::None);
        let has_null_key = keyed && valid.contains(&false);
        let mut starts = vec![0u32; partitions + 1];
        let mut order = Vec::new();
        if keyed {
            // a counting sort of the row numbers by partition
            for (h, _) in hashes.iter().zip(&valid).filter(|(_, v)| **v) {
                starts[partition_of(*h, partitions) + 1] += 1;
            }
            for p in 0..partitions {
                starts[p + 1] += starts[p];
            }
            let mut fill = starts.clone();
            order = vec![0u32; starts[partitions] as usize];
            let mut by_partition = vec![0u64; order.len()];
            for (r, (h, _)) in hashes
                .iter()
                .zip(&valid)
                .enumerate()
                .filter(|(_, (_, v))| **v)
            {
                let p = partition_of(*h, partitions);
                order[fill[p] as usize] = r as u32;
                by_partition[fill[p] as usize] = *h;
                fill[p] += 1;
            }
            // a partition's task reads its hashes (and one-word keys) in
            // a run, not one cache line a row across every chunk: they
            // are gathered here, while the chunk is in this lane's cache
            hashes = by_partition;
            if let KeyValues::Fixed(values) = &rows {
                rows = KeyValues::Fixed(order.iter().map(|&r| values[r as usize]).collect());
            }
        }
        let size =
            crate::pipeline::batch_bytes(&batch) + rows.size() + hashes.len() * 8 + order.len() * 4;
        Ok(BuildChunk {
            num_rows: batch.num_rows(),
            columns: batch
                .columns()
                .iter()
                .map(|c| Mutex::new(Some(Arc::clone(c))))
                .collect(),
            size,
            rows,
            hashes,
            order,
            starts,
            has_null_key,
        })
    }

    /// The tasks of the build's second job for `chunks`: one per
    /// partition, then one per column of the build side.
    pub(crate) fn build_tasks(&self, partitions: usize) -> usize {
        partitions + self.right_schema.fields().len()
    }

    /// Task `task` of the build's second job (see [`Self::build_tasks`]).
    pub(crate) fn build_part(
        &self,
        chunks: &[BuildChunk],
        task: usize,
        partitions: usize,
    ) -> Result<BuildPart> {
        if task >= partitions {
            let c = task - partitions;
            let mut taken = chunks
                .iter()
                .map(|b| b.take_column(c))
                .collect::<Result<Vec<ArrayRef>>>()?;
            let column = match taken.len() {
                0 => arrow::array::new_empty_array(self.right_schema.field(c).data_type()),
                // one batch: its column as it is, no copy
                1 => taken.pop().expect("one column"),
                _ => {
                    let arrays: Vec<&dyn Array> = taken.iter().map(AsRef::as_ref).collect();
                    concat(&arrays).map_err(Error::arrow)?
                }
            };
            // the batches' columns are released here (the chunks keep
            // only their keys)
            drop(taken);
            return Ok(BuildPart::Column(column));
        }
        let p = task;
        let slots: usize = chunks
            .iter()
            .map(|c| (c.starts[p + 1] - c.starts[p]) as usize)
            .sum();
        let mut part = Partition {
            table: HashTable::with_capacity(slots),
            rows: Vec::with_capacity(slots),
            next: Vec::with_capacity(slots),
            keys: if self.fixed {
                SlotKeys::Fixed(Vec::with_capacity(slots))
            } else {
                let mut offsets = Vec::with_capacity(slots + 1);
                offsets.push(0);
                SlotKeys::Rows {
                    bytes: Vec::new(),
                    offsets,
                }
            },
            range: (i64::MAX, i64::MIN),
            hash_is_key: self.fixed && self.right_keys.len() == 1,
        };
        let one_word = part.hash_is_key;
        let mut first_row = 0u32;
        for chunk in chunks {
            if matches!(chunk.rows, KeyValues::None) {
                break;
            }
            let mine = chunk.starts[p] as usize..chunk.starts[p + 1] as usize;
            for (i, &r) in mine.clone().zip(&chunk.order[mine]) {
                let h = chunk.hashes[i];
                let key = match &chunk.rows {
                    KeyValues::Fixed(values) => KeyRef::Fixed(values[i]),
                    keys => keys.get(r as usize),
                };
                let slot = part.rows.len() as u32;
                part.rows.push(first_row + r);
                part.next.push(END);
                part.keys.push(key);
                let Partition {
                    table, next, keys, ..
                } = &mut part;
                let same = |e: &Entry| e.hash == h && (one_word || keys.equals(e.head, key));
                match table.find_mut(h, same) {
                    Some(e) => {
                        next[e.tail as usize] = slot;
                        e.tail = slot;
                    }
                    None => {
                        table.insert_unique(
                            h,
                            Entry {
                                hash: h,
                                head: slot,
                                tail: slot,
                            },
                            |e| e.hash,
                        );
                    }
                }
            }
            first_row += chunk.num_rows() as u32;
        }
        if let SlotKeys::Fixed(values) = &part.keys {
            part.range = values
                .iter()
                .map(|&v| v as u64 as i64)
                .fold(part.range, |(lo, hi), v| (lo.min(v), hi.max(v)));
        }
        Ok(BuildPart::Table(part))
    }

    /// Puts the build together from its chunks and the second job's
    /// parts; fails for a SINGLE join (a scalar subquery) with more than
    /// one row.
    pub(crate) fn finish_build(
        &self,
        chunks: &[BuildChunk],
        parts: Vec<BuildPart>,
    ) -> Result<Built> {
        let rows: usize = chunks.iter().map(BuildChunk::num_rows).sum();
        if self.kind == JoinKind::Single && rows > 1 {
            return Err(Error::Execution(
                "More than one row returned by a subquery used as an expression - scalar subqueries can only return a single row."
                    .into(),
            ));
        }
        if u32::try_from(rows).is_err() {
            return Err(Error::Execution(format!(
                "the build side of a join has {rows} rows, more than a join can hold"
            )));
        }
        let mut partitions = Vec::new();
        let mut columns = Vec::new();
        for part in parts {
            match part {
                BuildPart::Table(t) => partitions.push(t),
                BuildPart::Column(c) => columns.push(c),
            }
        }
        let options = RecordBatchOptions::new().with_row_count(Some(rows));
        let batch =
            RecordBatch::try_new_with_options(Arc::clone(&self.right_schema), columns, &options)
                .map_err(Error::arrow)?;
        let has_null_key = chunks.iter().any(|c| c.has_null_key);
        let matched = if self.emits_unmatched() {
            (0..rows).map(|_| AtomicBool::new(false)).collect()
        } else {
            Vec::new()
        };
        let dense = if self.by_dense_keys() {
            DenseKeys::new(&partitions)
        } else {
            None
        };
        let direct = if dense.is_none() && self.fixed && self.right_keys.len() == 1 {
            DirectRows::new(&partitions)
        } else {
            None
        };
        if direct.is_some() {
            partitions = Vec::new();
        }
        // (a probe of dense keys or direct rows asks them alone, never the
        // hash filter)
        let filter = match (&dense, &direct) {
            (None, None) => KeyFilter::new(&partitions),
            _ => None,
        };
        let size = crate::pipeline::batch_bytes(&batch)
            + partitions.iter().map(Partition::size).sum::<usize>()
            + filter.as_ref().map_or(0, |f| f.bits.len() * 8)
            + dense.as_ref().map_or(0, |d| d.bits.len() * 8)
            + direct.as_ref().map_or(0, |d| d.rows.len() * 4)
            + matched.len();
        Ok(Built {
            batch,
            partitions,
            filter,
            dense,
            direct,
            matched,
            rows,
            has_null_key,
            size,
        })
    }

    /// Joins the selected rows of one morsel of the probe side, handing
    /// the joined rows to `emit`.
    pub(crate) fn probe(
        &self,
        built: &Built,
        gather: &Gather,
        input: &PipelineBatch,
        emit: &mut dyn FnMut(PipelineBatch) -> Result<()>,
    ) -> Result<()> {
        let n = input.num_rows();
        if n == 0 {
            return Ok(());
        }
        if self.kind == JoinKind::NullAwareAnti && built.rows > 0 && built.has_null_key {
            // x NOT IN (..., NULL, ...) is never TRUE
            return Ok(());
        }
        // the morsel's row of each selected row
        let selected = input.indices();
        let at = |i: usize| -> u32 {
            match &selected {
                Some(s) => s.value(i),
                None => i as u32,
            }
        };
        // per selected row: some pair survived the filter
        let mut hit = vec![false; n];
        // the one integer key of a probe by dense keys or direct rows
        let int_key = if built.dense.is_some() || built.direct.is_some() {
            let keys = input.materialize(&self.left_key_columns)?;
            let key = evaluate(&self.left_keys_local[0], &keys)?;
            Some(cast(&key, &DataType::Int64).map_err(Error::arrow)?)
        } else {
            None
        };
        let int_key = int_key.as_ref().map(|k| k.as_primitive::<Int64Type>());
        if let (Some(dense), Some(key)) = (&built.dense, int_key) {
            // a semi or anti join without a filter, on one integer key
            let valid: Vec<bool> = (0..n).map(|i| key.is_valid(i)).collect();
            for (i, h) in hit.iter_mut().enumerate() {
                *h = valid[i] && dense.contains(key.value(i));
            }
            return self.emit_by_match(&hit, &valid, built, gather, input, &at, emit);
        }
        let (rows, hashes, valid) = if let Some(key) = int_key {
            let valid = (0..n).map(|i| key.is_valid(i)).collect();
            (KeyValues::None, Vec::new(), valid)
        } else if self.converter.is_some() {
            let keys = input.materialize(&self.left_key_columns)?;
            self.keys(&self.left_keys_local, &keys)?
        } else {
            (KeyValues::None, Vec::new(), vec![true; n])
        };
        let mut probe_idx: Vec<u32> = Vec::new();
        let mut build_idx: Vec<u32> = Vec::new();
        let mut flush = |probe_idx: &mut Vec<u32>,
                         build_idx: &mut Vec<u32>,
                         hit: &mut Vec<bool>|
         -> Result<()> {
            if probe_idx.is_empty() {
                return Ok(());
            }
            let gathers = self.emits_pairs() || self.filter.is_some();
            let pairs = if gathers {
                let rows_at =
                    UInt32Array::from_iter_values(probe_idx.iter().map(|&i| at(i as usize)));
                Some(self.pairs(built, gather, &input.batch, &rows_at, build_idx)?)
            } else {
                None
            };
            let keep = match (&self.filter, &pairs) {
                (Some(f), Some(pairs)) => Some(evaluate_predicate(f, pairs)?),
                _ => None,
            };
            for (i, &p) in probe_idx.iter().enumerate() {
                let ok = keep.as_ref().is_none_or(|k| k.is_valid(i) && k.value(i));
                if ok {
                    hit[p as usize] = true;
                    if let Some(mark) = built.matched.get(build_idx[i] as usize) {
                        mark.store(true, Ordering::Relaxed);
                    }
                }
            }
            if self.emits_pairs()
                && let Some(pairs) = pairs
            {
                let out = self.conform(pairs, gather, keep.as_ref())?;
                if out.num_rows() > 0 {
                    emit(PipelineBatch::new(out))?;
                }
            }
            probe_idx.clear();
            build_idx.clear();
            Ok(())
        };
        match (&rows, &built.direct, int_key) {
            (_, Some(direct), Some(key)) => {
                for (i, _) in valid.iter().enumerate().filter(|(_, v)| **v) {
                    if let Some(r) = direct.get(key.value(i)) {
                        probe_idx.push(i as u32);
                        build_idx.push(r);
                        if probe_idx.len() >= PAIRS_PER_BATCH {
                            flush(&mut probe_idx, &mut build_idx, &mut hit)?;
                        }
                    }
                }
            }
            (KeyValues::Rows(_) | KeyValues::Fixed(_), ..) => {
                let parts = built.partitions.len();
                if parts > 0 {
                    for i in 0..n {
                        if !valid[i] {
                            continue;
                        }
                        let h = hashes[i];
                        if built.filter.as_ref().is_some_and(|f| !f.may_contain(h)) {
                            continue;
                        }
                        let part = &built.partitions[partition_of(h, parts)];
                        for r in part.matches(h, rows.get(i)) {
                            probe_idx.push(i as u32);
                            build_idx.push(r);
                        }
                        if probe_idx.len() >= PAIRS_PER_BATCH {
                            flush(&mut probe_idx, &mut build_idx, &mut hit)?;
                        }
                    }
                }
            }
            (KeyValues::None, ..) => {
                for i in 0..n {
                    for r in 0..built.rows as u32 {
                        probe_idx.push(i as u32);
                        build_idx.push(r);
                    }
                    if probe_idx.len() >= PAIRS_PER_BATCH {
                        flush(&mut probe_idx, &mut build_idx, &mut hit)?;
                    }
                }
            }
        }
        flush(&mut probe_idx, &mut build_idx, &mut hit)?;
        self.emit_by_match(&hit, &valid, built, gather, input, &at, emit)
    }

    /// Whether a build keeps [`DenseKeys`]: a semi or anti join without
    /// a filter, on one integer key.
    fn by_dense_keys(&self) -> bool {
        self.fixed
            && self.filter.is_none()
            && self.right_keys.len() == 1
            && matches!(self.kind, JoinKind::Semi | JoinKind::Anti)
    }

    /// Emits the probe rows of `input` a join keeps by whether each
    /// matched (`hit`, per selected row, NULL keys not `valid`): the
    /// matched of a semi join, the unmatched of an anti or outer join.
    #[allow(clippy::too_many_arguments)]
    fn emit_by_match(
        &self,
        hit: &[bool],
        valid: &[bool],
        built: &Built,
        gather: &Gather,
        input: &PipelineBatch,
        at: &dyn Fn(usize) -> u32,
        emit: &mut dyn FnMut(PipelineBatch) -> Result<()>,
    ) -> Result<()> {
        let n = hit.len();
        // probe rows by whether they matched
        let unmatched_kept = match self.kind {
            JoinKind::Left | JoinKind::Full | JoinKind::Single => Some(false),
            JoinKind::Semi | JoinKind::Intersect => Some(true),
            JoinKind::Anti | JoinKind::Except => Some(false),
            JoinKind::NullAwareAnti => Some(false),
            // (a right semi or anti join emits build rows, once every
            // probe marked the ones it matched)
            JoinKind::Inner | JoinKind::Right | JoinKind::RightSemi | JoinKind::RightAnti => None,
        };
        if let Some(want) = unmatched_kept {
            let keep: Vec<u32> = (0..n)
                .filter(|&i| {
                    hit[i] == want
                        && !(self.kind == JoinKind::NullAwareAnti && !valid[i] && built.rows > 0)
                })
                .map(at)
                .collect();
            if !keep.is_empty() {
                let idx = UInt32Array::from(keep);
                if self.kind.keeps_right() {
                    let left = self.left_schema.fields().len();
                    let mut columns = Vec::with_capacity(self.pairs_schema.fields().len());
                    for (c, col) in input.batch.columns().iter().enumerate() {
                        columns.push(if gather.out[c] {
                            take(col.as_ref(), &idx, None).map_err(Error::arrow)?
                        } else {
                            self.null_column(c, idx.len())
                        });
                    }
                    for j in 0..self.right_schema.fields().len() {
                        columns.push(self.null_column(left + j, idx.len()));
                    }
                    emit(PipelineBatch::new(batch_of(
                        &gather.out_schema,
                        columns,
                        idx.len(),
                    )?))?;
                } else {
                    // the probe rows themselves: the morsel, these rows
                    // selected
                    emit(PipelineBatch {
                        batch: input.batch.clone(),
                        selection: Selection::Indices(idx),
                    })?;
                }
            }
        }
        Ok(())
    }

    /// The build rows in `start..end` a join emits once every probe ran:
    /// those no probe row matched, padded with NULLs on the left (RIGHT
    /// and FULL joins) or alone (RIGHT ANTI), or those some probe row
    /// matched, alone (RIGHT SEMI).
    pub(crate) fn unmatched(
        &self,
        built: &Built,
        gather: &Gather,
        start: usize,
        end: usize,
    ) -> Result<Option<RecordBatch>> {
        let wanted = self.kind == JoinKind::RightSemi;
        let keep: Vec<u32> = (start..end.min(built.rows))
            .filter(|&r| {
                built
                    .matched
                    .get(r)
                    .is_some_and(|m| m.load(Ordering::Relaxed))
                    == wanted
            })
            .map(|r| r as u32)
            .collect();
        if keep.is_empty() {
            return Ok(None);
        }
        let idx = UInt32Array::from(keep);
        let left = self.left_schema.fields().len();
        // the output's columns: the left's (all NULL) then the build's,
        // or the build's alone
        let at = if self.kind.keeps_left() { left } else { 0 };
        let mut columns: Vec<ArrayRef> = (0..at).map(|c| self.null_column(c, idx.len())).collect();
        for (j, col) in built.batch.columns().iter().enumerate() {
            columns.push(if gather.out[at + j] {
                take(col.as_ref(), &idx, None).map_err(Error::arrow)?
            } else {
                self.null_column(left + j, idx.len())
            });
        }
        Ok(Some(batch_of(&gather.out_schema, columns, idx.len())?))
    }

    /// The pairs `(probe row, build row)` side by side.
    fn pairs(
        &self,
        built: &Built,
        gather: &Gather,
        batch: &RecordBatch,
        probe_idx: &UInt32Array,
        build_idx: &[u32],
    ) -> Result<RecordBatch> {
        let n = probe_idx.len();
        let left = batch.num_columns();
        let mut columns = Vec::with_capacity(self.pairs_schema.fields().len());
        for (c, col) in batch.columns().iter().enumerate() {
            columns.push(if gather.pairs[c] {
                take(col.as_ref(), probe_idx, None).map_err(Error::arrow)?
            } else {
                self.null_column(c, n)
            });
        }
        let build_idx = UInt32Array::from(build_idx.to_vec());
        for (j, col) in built.batch.columns().iter().enumerate() {
            columns.push(if gather.pairs[left + j] {
                take(col.as_ref(), &build_idx, None).map_err(Error::arrow)?
            } else {
                self.null_column(left + j, n)
            });
        }
        let options = RecordBatchOptions::new().with_row_count(Some(probe_idx.len()));
        RecordBatch::try_new_with_options(Arc::clone(&gather.pairs_schema), columns, &options)
            .map_err(Error::arrow)
    }

    /// The `pairs` (left and right columns) the filter kept, in the
    /// output schema: only the columns read above are filtered, the others
    /// are shared NULLs.
    fn conform(
        &self,
        pairs: RecordBatch,
        gather: &Gather,
        keep: Option<&BooleanArray>,
    ) -> Result<RecordBatch> {
        let Some(keep) = keep else {
            let n = pairs.num_rows();
            let columns = pairs
                .columns()
                .iter()
                .enumerate()
                .map(|(c, col)| {
                    if gather.out[c] {
                        Arc::clone(col)
                    } else {
                        self.null_column(c, n)
                    }
                })
                .collect();
            return batch_of(&gather.out_schema, columns, n);
        };
        let predicate = if keep.null_count() > 0 {
            FilterBuilder::new(&prep_null_mask_filter(keep))
        } else {
            FilterBuilder::new(keep)
        }
        .optimize()
        .build();
        let n = predicate.count();
        let mut columns = Vec::with_capacity(pairs.num_columns());
        for (c, col) in pairs.columns().iter().enumerate() {
            columns.push(if gather.out[c] {
                predicate.filter(col.as_ref()).map_err(Error::arrow)?
            } else {
                self.null_column(c, n)
            });
        }
        batch_of(&gather.out_schema, columns, n)
    }
}

fn batch_of(schema: &SchemaRef, columns: Vec<ArrayRef>, rows: usize) -> Result<RecordBatch> {
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    RecordBatch::try_new_with_options(Arc::clone(schema), columns, &options).map_err(Error::arrow)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::Int64Array;
    use arrow::datatypes::Field;

    fn values(name: &str) -> LogicalPlan {
        LogicalPlan::Values {
            rows: Vec::new(),
            schema: Arc::new(Schema::new(vec![Field::new(name, DataType::Int64, true)])),
        }
    }

    fn batch(spec: &JoinSpec, keys: &[Option<i64>]) -> RecordBatch {
        let column: ArrayRef = Arc::new(Int64Array::from(keys.to_vec()));
        RecordBatch::try_new(Arc::clone(&spec.right_schema), vec![column]).unwrap()
    }

    #[test]
    fn the_key_filter_passes_every_build_key_and_few_others() {
        use crate::hash::mix;
        for keys in [1usize, 204, 5000, FILTER_MAX_KEYS] {
            let built: Vec<u64> = (0..keys as u64)
                .map(|k| hash_fixed(u128::from(k * 7), 1))
                .collect();
            let filter = KeyFilter::with_hashes(keys, built.iter().copied()).expect("a filter");
            assert!(built.iter().all(|&h| filter.may_contain(h)), "{keys} keys");
            let others = 100_000u64;
            let passed = (0..others)
                .filter(|&k| filter.may_contain(mix(k ^ 0x9e37_79b9_7f4a_7c15)))
                .count();
            assert!(
                passed < others as usize / 10,
                "{passed} of {others} for {keys} keys"
            );
        }
        assert!(KeyFilter::with_hashes(0, std::iter::empty()).is_none());
        assert!(KeyFilter::with_hashes(FILTER_MAX_KEYS + 1, std::iter::empty()).is_none());
    }

    #[test]
    fn every_row_of_a_key_is_found_in_build_order_across_chunks_and_partitions() {
        use rand::{Rng, SeedableRng, rngs::StdRng};
        let mut rng = StdRng::seed_from_u64(11);
        for words in [1usize, 2] {
            let field = |n: String| Field::new(n, DataType::Int64, true);
            let side = |p: &str| LogicalPlan::Values {
                rows: Vec::new(),
                schema: Arc::new(Schema::new(
                    (0..words)
                        .map(|w| field(format!("{p}{w}")))
                        .collect::<Vec<_>>(),
                )),
            };
            let schema = Arc::new(Schema::new(
                ["a", "b"]
                    .iter()
                    .flat_map(|p| (0..words).map(move |w| field(format!("{p}{w}"))))
                    .collect::<Vec<_>>(),
            ));
            let node = LogicalPlan::Join {
                left: Box::new(side("a")),
                right: Box::new(side("b")),
                kind: JoinKind::Inner,
                on: (0..words)
                    .map(|w| (Expr::column(w, "a"), Expr::column(w, "b")))
                    .collect(),
                filter: None,
                schema,
            };
            let spec = JoinSpec::new(&node).unwrap();
            let partitions = 8;
            // 5 chunks of keys with repeats (2,000 values) and NULLs
            let mut want: std::collections::HashMap<u128, Vec<u32>> = Default::default();
            let mut chunks = Vec::new();
            let mut row = 0u32;
            for _ in 0..5 {
                let keys: Vec<Vec<Option<i64>>> = (0..3000)
                    .map(|_| {
                        (0..words)
                            .map(|_| {
                                (rng.random_range(0..20) > 0).then(|| rng.random_range(-1000..1000))
                            })
                            .collect()
                    })
                    .collect();
                for key in &keys {
                    if key.iter().all(Option::is_some) {
                        let v = key
                            .iter()
                            .fold(0u128, |v, k| (v << 64) | u128::from(k.unwrap() as u64));
                        want.entry(v).or_default().push(row);
                    }
                    row += 1;
                }
                let columns: Vec<ArrayRef> = (0..words)
                    .map(|w| Arc::new(Int64Array::from_iter(keys.iter().map(|k| k[w]))) as ArrayRef)
                    .collect();
                let batch = RecordBatch::try_new(Arc::clone(&spec.right_schema), columns).unwrap();
                chunks.push(spec.build_chunk(batch, partitions).unwrap());
            }
            let parts = (0..spec.build_tasks(partitions))
                .map(|t| spec.build_part(&chunks, t, partitions).unwrap())
                .collect();
            let built = spec.finish_build(&chunks, parts).unwrap();
            assert_eq!(built.partitions.len(), partitions);
            for (&v, rows) in &want {
                let h = hash_fixed(v, words);
                let part = &built.partitions[partition_of(h, partitions)];
                let got: Vec<u32> = part.matches(h, KeyRef::Fixed(v)).collect();
                assert_eq!(&got, rows, "key {v:x} of {words} words");
            }
            let absent = 5000u128;
            let h = hash_fixed(absent, words);
            let part = &built.partitions[partition_of(h, partitions)];
            assert_eq!(part.matches(h, KeyRef::Fixed(absent)).count(), 0);
        }
    }

    #[test]
    fn one_word_keys_hash_apart() {
        // `hash_fixed` of one word is a bijection: a lookup compares no key
        let keys = (-100_000i64..100_000).chain([i64::MIN, i64::MAX, i64::MIN + 1, i64::MAX - 1]);
        let mut seen = std::collections::HashSet::new();
        for k in keys {
            assert!(seen.insert(hash_fixed(u128::from(k as u64), 1)), "key {k}");
        }
    }

    #[test]
    fn the_build_takes_each_input_column_once_and_keeps_its_rows() {
        let (left, right) = (values("a"), values("b"));
        let schema = Arc::new(Schema::new(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("b", DataType::Int64, true),
        ]));
        let node = LogicalPlan::Join {
            left: Box::new(left),
            right: Box::new(right),
            kind: JoinKind::Inner,
            on: vec![(Expr::column(0, "a"), Expr::column(0, "b"))],
            filter: None,
            schema,
        };
        let spec = JoinSpec::new(&node).unwrap();
        let partitions = 2;
        let chunks = vec![
            spec.build_chunk(batch(&spec, &[Some(1), None, Some(3)]), partitions)
                .unwrap(),
            spec.build_chunk(batch(&spec, &[Some(3), Some(4)]), partitions)
                .unwrap(),
        ];
        let held: usize = chunks.iter().map(BuildChunk::size).sum();
        let mut parts = Vec::new();
        for t in 0..spec.build_tasks(partitions) {
            parts.push(spec.build_part(&chunks, t, partitions).unwrap());
        }
        // the column's task took the batches' column: they hold none now
        assert!(
            chunks
                .iter()
                .all(|c| c.columns[0].lock().unwrap().is_none())
        );
        assert!(spec.build_part(&chunks, partitions, partitions).is_err());
        // the accountant's figure is the one taken when the chunk was made
        assert_eq!(chunks.iter().map(BuildChunk::size).sum::<usize>(), held);
        let built = spec.finish_build(&chunks, parts).unwrap();
        assert_eq!(built.num_rows(), 5);
        let column = built.batch.column(0).as_primitive::<Int64Type>();
        assert_eq!(
            column.iter().collect::<Vec<_>>(),
            vec![Some(1), None, Some(3), Some(3), Some(4)]
        );
        // key 3 has two rows (one of each batch), the NULL key none
        let slots: usize = built.partitions.iter().map(|p| p.rows.len()).sum();
        assert_eq!(slots, 4);
    }
}
