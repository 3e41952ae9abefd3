//! The full sort of fixed-width keys: one radix sort of every lane's rows,
//! in two parallel jobs, with no merge.
//!
//! The lanes only compute each morsel's ordered key values
//! ([`KeyedRows`]) as the morsels arrive; a string key's value is the id
//! of its string in the lane's dictionary ([`StrDict`]). Once every lane
//! finished, the strings of every lane are sorted once and each id
//! becomes its string's rank; a lane whose strings hardly repeat gives up
//! ranking and sorts its rows into runs, and the sort merges runs. Each
//! key's range over all the rows gives every value one code for the whole
//! input, and a row's word is its codes above its input position (its
//! morsel's place in input order, then its row in the morsel):
//!
//! 1. per run of morsels of at least 64Ki rows, their words, scattered by
//!    a digit of their codes (the first pass of the radix sort, each run
//!    on its own): 256 slices of the codes between percentiles of a
//!    sample;
//! 2. per range of consecutive digits holding about as many rows as the
//!    others: each digit's words from every run in input order, sorted
//!    on their lower bytes (least significant first, in the cache), and
//!    the rows gathered in that order.
//!
//! The result is the ranges one after the other. Every worker is busy in
//! both jobs however unequal the lanes were, and the rows are copied once,
//! as on one thread. Where codes and position need more than 64 bits (a
//! DOUBLE key's codes take about 56), a word is a `u128`, the codes in
//! its high half; keys whose codes alone need more are sorted per lane
//! and merged ([`FullSort::Runs`]).

use std::ops::Range;
use std::sync::{Arc, Mutex};

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use hashbrown::HashTable;

use super::{
    FixedKey, FixedKind, KeyValues, PackedColumn, RadixWord, SortSpec, SortedRun, gather,
    sort_bucket,
};
use crate::error::{Error, Result};
use crate::hash::hash_bytes;

/// One morsel of a lane with its keys' ordered values.
struct KeyedPart {
    morsel: usize,
    batch: RecordBatch,
    keys: Vec<KeyValues>,
}

/// A key's smallest and largest ordered value over non-NULL rows (none
/// when `lo > hi`), and whether a row is NULL.
#[derive(Clone, Copy, Debug)]
pub(super) struct KeyRange {
    pub(super) lo: u64,
    pub(super) hi: u64,
    pub(super) nulls: bool,
}

impl KeyRange {
    const EMPTY: KeyRange = KeyRange {
        lo: u64::MAX,
        hi: 0,
        nulls: false,
    };

    pub(super) fn of(k: &KeyValues) -> Self {
        let (lo, hi) = match &k.nulls {
            None => k
                .values
                .iter()
                .fold((u64::MAX, 0), |(lo, hi), &v| (lo.min(v), hi.max(v))),
            Some(n) => k
                .values
                .iter()
                .zip(n.iter())
                .filter(|(_, valid)| *valid)
                .fold((u64::MAX, 0), |(lo, hi), (&v, _)| (lo.min(v), hi.max(v))),
        };
        KeyRange {
            lo,
            hi,
            nulls: k.nulls.is_some(),
        }
    }

    fn union(self, other: KeyRange) -> Self {
        KeyRange {
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
            nulls: self.nulls || other.nulls,
        }
    }
}

/// A lane's [`StrDict`] gives up past this many strings in any case: the
/// sort then merges runs of encoded rows instead.
const DICT_MAX: usize = 1 << 20;

/// A lane's dictionary gives up once it holds more than this many
/// strings and fewer than [`ROWS_PER_STRING`] rows per string: ranking
/// strings that hardly repeat costs a sort of them, as much as sorting
/// the rows.
const DICT_FREE: usize = 4096;
const ROWS_PER_STRING: usize = 4;

/// The distinct strings of a VARCHAR sort key in one lane, each with the
/// id its rows carry. Once every lane finished, the strings of all lanes
/// are sorted once and each id gets its string's rank
/// ([`FullSort::new`]), so that a string key packs into the words as a
/// number does. Strings that repeat (`ORDER BY l_shipmode, ...`) then
/// sort as fast as a small integer.
#[derive(Default)]
struct StrDict {
    table: HashTable<(u64, u32)>,
    /// The strings, one after the other: id `i`'s bytes end at `ends[i]`.
    bytes: Vec<u8>,
    ends: Vec<usize>,
    descending: bool,
}

/// String `id` of a dictionary's `bytes` and `ends`.
fn string_of<'a>(bytes: &'a [u8], ends: &[usize], id: u32) -> &'a [u8] {
    let id = id as usize;
    let start = if id == 0 { 0 } else { ends[id - 1] };
    &bytes[start..ends[id]]
}

impl StrDict {
    fn len(&self) -> usize {
        self.ends.len()
    }

    /// Too many strings, or too few rows for each (of the lane's `rows`).
    fn gives_up(&self, rows: usize) -> bool {
        self.len() > DICT_MAX || (self.len() > DICT_FREE && self.len() * ROWS_PER_STRING > rows)
    }

    /// The ids of `column`'s strings (0 for NULLs), as a key's values.
    fn key_values(&mut self, key: FixedKey, column: &ArrayRef) -> Result<KeyValues> {
        let strings = column
            .as_string_opt::<i32>()
            .ok_or_else(|| Error::Internal("a VARCHAR sort key of another type".into()))?;
        let nulls = column.logical_nulls().filter(|n| n.null_count() > 0);
        let mut values = Vec::with_capacity(strings.len());
        // (runs of one string, as in sorted or clustered input, look up once)
        let mut last: Option<(&[u8], u64)> = None;
        for i in 0..strings.len() {
            if nulls.as_ref().is_some_and(|n| n.is_null(i)) {
                values.push(0);
                continue;
            }
            let s = strings.value(i).as_bytes();
            if let Some((l, id)) = last
                && l == s
            {
                values.push(id);
                continue;
            }
            let id = u64::from(self.id(s));
            last = Some((s, id));
            values.push(id);
        }
        Ok(KeyValues {
            key,
            values,
            nulls,
            ranks: None,
        })
    }

    /// The id of string `s`, given it if new.
    fn id(&mut self, s: &[u8]) -> u32 {
        let h = hash_bytes(s);
        let (bytes, ends) = (&mut self.bytes, &mut self.ends);
        let entry = self.table.entry(
            h,
            |&(g, id)| g == h && string_of(bytes, ends, id) == s,
            |&(g, _)| g,
        );
        match entry {
            hashbrown::hash_table::Entry::Occupied(o) => o.get().1,
            hashbrown::hash_table::Entry::Vacant(v) => {
                let id = ends.len() as u32;
                bytes.extend_from_slice(s);
                ends.push(bytes.len());
                v.insert((h, id));
                id
            }
        }
    }

    fn size(&self) -> usize {
        self.table.capacity() * 16 + self.bytes.capacity() + self.ends.capacity() * 8
    }
}

/// Ranks the strings of one key's dictionaries, one per lane: per lane,
/// the rank of each id among the distinct strings of all (counted from
/// the last for a descending key), and how many there are.
fn rank(dicts: &[&StrDict]) -> (Vec<Arc<[u64]>>, usize) {
    let mut all: Vec<(&[u8], u32, u32)> = Vec::with_capacity(dicts.iter().map(|d| d.len()).sum());
    for (l, d) in dicts.iter().enumerate() {
        all.extend((0..d.len() as u32).map(|id| (string_of(&d.bytes, &d.ends, id), l as u32, id)));
    }
    all.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let mut ranks: Vec<Vec<u64>> = dicts.iter().map(|d| vec![0; d.len()]).collect();
    let mut n = 0u64;
    let mut previous: Option<&[u8]> = None;
    for (s, l, id) in all {
        if previous != Some(s) {
            n += 1;
            previous = Some(s);
        }
        ranks[l as usize][id as usize] = n - 1;
    }
    if dicts.first().is_some_and(|d| d.descending) {
        ranks.iter_mut().flatten().for_each(|r| *r = n - 1 - *r);
    }
    (ranks.into_iter().map(Arc::from).collect(), n as usize)
}

/// A sort lane's rows: its morsels with their keys' ordered values, and
/// each key's range over them.
pub(crate) struct KeyedRows {
    parts: Vec<KeyedPart>,
    ranges: Vec<KeyRange>,
    /// Per key, the lane's dictionary if it is a string.
    dicts: Vec<Option<StrDict>>,
    rows: usize,
    /// A dictionary gave up ([`StrDict::gives_up`]): the parts keep no
    /// keys, and the sort merges runs (the lane cuts them, as for keys
    /// of no fixed width).
    unranked: bool,
}

impl KeyedRows {
    pub(crate) fn new(spec: &SortSpec) -> Self {
        let keys = spec.radix.as_deref().unwrap_or_default();
        KeyedRows {
            parts: Vec::new(),
            ranges: vec![KeyRange::EMPTY; keys.len()],
            dicts: keys
                .iter()
                .map(|k| {
                    matches!(k.kind, FixedKind::Str).then(|| StrDict {
                        descending: k.descending,
                        ..StrDict::default()
                    })
                })
                .collect(),
            rows: 0,
            unranked: false,
        }
    }

    /// Adds the rows of morsel `morsel` (a morsel may come in several
    /// batches, in order).
    pub(crate) fn push(
        &mut self,
        spec: &SortSpec,
        morsel: usize,
        batch: RecordBatch,
    ) -> Result<()> {
        let fixed = spec
            .radix
            .as_ref()
            .ok_or_else(|| Error::Internal("a radix sort of keys of no fixed width".into()))?;
        self.rows += batch.num_rows();
        if self.unranked {
            self.parts.push(KeyedPart {
                morsel,
                batch,
                keys: Vec::new(),
            });
            return Ok(());
        }
        let columns = spec.key_columns(&batch)?;
        let keys = fixed
            .iter()
            .zip(&columns)
            .zip(&mut self.dicts)
            .map(|((k, c), dict)| match dict {
                Some(dict) => dict.key_values(*k, c),
                None => KeyValues::new(*k, c),
            })
            .collect::<Result<Vec<_>>>()?;
        // (a string key's range is its ranks', set once they are known;
        // only its NULLs count here)
        for (r, k) in self.ranges.iter_mut().zip(&keys) {
            *r = r.union(KeyRange::of(k));
        }
        self.parts.push(KeyedPart {
            morsel,
            batch,
            keys,
        });
        if self.dicts.iter().flatten().any(|d| d.gives_up(self.rows)) {
            self.unranked = true;
            for p in &mut self.parts {
                p.keys = Vec::new();
            }
            for d in self.dicts.iter_mut().flatten() {
                *d = StrDict::default();
            }
        }
        Ok(())
    }

    pub(crate) fn num_rows(&self) -> usize {
        self.parts.iter().map(|p| p.batch.num_rows()).sum()
    }

    /// A dictionary gave up: the lane sorts its rows into runs instead
    /// ([`Self::into_parts`]).
    pub(crate) fn unranked(&self) -> bool {
        self.unranked
    }

    /// The lane's morsels, without their keys.
    pub(crate) fn into_parts(self) -> LaneParts {
        self.parts
            .into_iter()
            .map(|p| (p.morsel, p.batch))
            .collect()
    }

    /// Bytes held: the rows, their keys' values and the dictionaries.
    pub(crate) fn size(&self) -> usize {
        self.parts
            .iter()
            .map(|p| {
                crate::pipeline::batch_bytes(&p.batch)
                    + p.keys
                        .iter()
                        .map(|k| k.values.capacity() * 8)
                        .sum::<usize>()
            })
            .sum::<usize>()
            + self
                .dicts
                .iter()
                .flatten()
                .map(StrDict::size)
                .sum::<usize>()
    }
}

/// How the rows of every sort lane are sorted.
pub(crate) enum FullSort {
    /// One radix sort of all of them.
    Radix(Arc<RadixSort>),
    /// A sorted run per lane (its morsels), merged: keys whose codes
    /// need more than 64 bits.
    Runs(Vec<Mutex<Option<LaneParts>>>),
}

/// A lane's morsels: each one's index, with its rows.
pub(crate) type LaneParts = Vec<(usize, RecordBatch)>;

impl FullSort {
    pub(crate) fn new(mut lanes: Vec<KeyedRows>) -> Self {
        let ranges = lanes.iter().fold(None, |acc: Option<Vec<KeyRange>>, l| {
            Some(match acc {
                None => l.ranges.clone(),
                Some(a) => a.iter().zip(&l.ranges).map(|(a, b)| a.union(*b)).collect(),
            })
        });
        let mut ranges = ranges.unwrap_or_default();
        let unranked = lanes.iter().any(|l| l.unranked);
        if !unranked {
            // a string key's values become the ranks of its strings, put
            // in place by each task of the first job ([`KeyValues::resolve`])
            for (k, range) in ranges.iter_mut().enumerate() {
                let dicts: Option<Vec<&StrDict>> =
                    lanes.iter().map(|l| l.dicts.get(k)?.as_ref()).collect();
                let Some(dicts) = dicts.filter(|d| !d.is_empty()) else {
                    continue;
                };
                let (ranks, n) = rank(&dicts);
                (range.lo, range.hi) = if n == 0 {
                    (u64::MAX, 0)
                } else {
                    (0, n as u64 - 1)
                };
                for (lane, ranks) in lanes.iter_mut().zip(ranks) {
                    for p in &mut lane.parts {
                        p.keys[k].ranks = Some(Arc::clone(&ranks));
                    }
                    lane.dicts[k] = None;
                }
            }
        }
        let mut parts: Vec<KeyedPart> = Vec::new();
        let mut lane_parts = Vec::with_capacity(lanes.len());
        for lane in lanes {
            lane_parts.push(lane.parts.len());
            parts.extend(lane.parts);
        }
        let radix = if unranked {
            None
        } else {
            RadixSort::new(ranges, &parts)
        };
        match radix {
            Some(mut radix) => {
                // a morsel's rows are in one lane, in order: a stable sort
                // by morsel puts every row in input order
                parts.sort_by_key(|p| p.morsel);
                let (batches, keys) = parts
                    .into_iter()
                    .map(|p| (p.batch, Mutex::new(Some(p.keys))))
                    .unzip();
                radix.batches = batches;
                radix.keys = keys;
                radix.cut_chunks();
                FullSort::Radix(Arc::new(radix))
            }
            None => {
                let mut parts = parts.into_iter();
                FullSort::Runs(
                    lane_parts
                        .into_iter()
                        .map(|n| {
                            let lane = parts.by_ref().take(n).map(|p| (p.morsel, p.batch));
                            Mutex::new(Some(lane.collect()))
                        })
                        .collect(),
                )
            }
        }
    }
}

/// Sorts `parts` (morsels with their index; the index orders ties) on
/// the calling thread, as one bucket of a window is: a sorted run
/// ([`SortedRun`]), whose fixed-width keys pack into words when their
/// types take at most 128 bits; keys of a fixed width past that (two
/// BIGINTs, a BIGINT and a DECIMAL), which a run would sort as encoded
/// rows, take the radix sort of the full sort, in both its steps, when
/// the codes of the values the rows hold fit 64 bits.
///
/// With `limit`, the radix sort gathers only the first rows of each run
/// of equal leading keys ([`RowLimit`]); the sorted run gathers them all
/// (its caller keeps the first).
pub(crate) fn sort_parts(
    spec: &SortSpec,
    parts: LaneParts,
    limit: Option<RowLimit>,
) -> Result<RecordBatch> {
    // a limit gathers few rows: worth the radix sort whatever the keys'
    // types
    let parts = if spec.by_radix_fixed() && (spec.fixed.is_none() || limit.is_some()) {
        let mut keyed = KeyedRows::new(spec);
        for (morsel, batch) in parts {
            keyed.push(spec, morsel, batch)?;
        }
        match FullSort::new(vec![keyed]) {
            FullSort::Radix(radix) => {
                let scattered = (0..radix.chunks())
                    .map(|i| radix.scatter(i))
                    .collect::<Result<Vec<_>>>()?;
                let sorted = radix.sort_range(&scattered, 0..DIGITS, limit, None)?;
                return Ok(
                    sorted.unwrap_or_else(|| RecordBatch::new_empty(Arc::clone(&spec.schema)))
                );
            }
            FullSort::Runs(mut lanes) => lanes
                .pop()
                .and_then(|l| l.into_inner().unwrap_or_else(|e| e.into_inner()))
                .unwrap_or_default(),
        }
    } else {
        parts
    };
    Ok(SortedRun::new(spec, parts, None)?.into_batch())
}

/// The first `rows` rows of each run of rows equal in the first `keys`
/// sort keys (a window's partition keys: `ROW_NUMBER() ... <= rows`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RowLimit {
    pub(crate) keys: usize,
    pub(crate) rows: usize,
}

/// A radix sort of every lane's rows: their morsels in input order, how
/// a row's keys and position make its word, and the digit the words are
/// first scattered by.
pub(crate) struct RadixSort {
    batches: Vec<RecordBatch>,
    /// Each morsel's keys, taken by the job that makes its words.
    keys: Vec<Mutex<Option<Vec<KeyValues>>>>,
    /// The morsels of each task of the first job.
    chunks: Vec<Range<usize>>,
    /// Each key's codes over all the rows, and where they sit in the
    /// words (the codes' bit `at - shift`).
    columns: Vec<PackedColumn>,
    /// Bits of a row's place in its morsel, and of the whole position
    /// (the morsel's index in `batches` above the row).
    row_bits: u32,
    position_bits: u32,
    /// Where the codes start: the bytes wholly below are positions, in
    /// input order already, and never sorted on. 64 when the words are
    /// `u128`s (`wide`): codes and position need more than 64 bits.
    shift: u32,
    wide: bool,
    /// Bits of the codes of all keys.
    key_bits: u32,
    /// The digit of the first pass: a row's codes (its word above
    /// `shift`) less `low`, shifted right by `step`, at most
    /// [`DIGITS`]` - 1` (see [`RadixSort::choose_digits`]).
    low: u64,
    step: u32,
}

/// Digits of the first pass.
const DIGITS: usize = 256;

/// Rows sampled to choose the digits.
const SAMPLES: usize = 4096;

/// Rows of a task of the first job, at least (but for the last).
const CHUNK_ROWS: usize = 1 << 16;

/// A word of the sort: a row's codes above its position.
trait Word: RadixWord {
    const BYTES: usize;
    fn pack(codes: u64, position: u64, shift: u32) -> Self;
    fn codes(self, shift: u32) -> u64;
    /// The low 64 bits.
    fn low(self) -> u64;
    fn words(s: &Scattered) -> &[Self];
    fn scattered(words: Vec<Self>, starts: Vec<usize>) -> Scattered;
}

impl Word for u64 {
    const BYTES: usize = 8;
    #[inline]
    fn pack(codes: u64, position: u64, shift: u32) -> Self {
        codes.checked_shl(shift).unwrap_or(0) | position
    }
    #[inline]
    fn codes(self, shift: u32) -> u64 {
        self.checked_shr(shift).unwrap_or(0)
    }
    #[inline]
    fn low(self) -> u64 {
        self
    }
    fn words(s: &Scattered) -> &[Self] {
        match &s.words {
            Words::Narrow(w) => w,
            Words::Wide(_) => &[],
        }
    }
    fn scattered(words: Vec<Self>, starts: Vec<usize>) -> Scattered {
        Scattered {
            words: Words::Narrow(words),
            starts,
        }
    }
}

impl Word for u128 {
    const BYTES: usize = 16;
    #[inline]
    fn pack(codes: u64, position: u64, _: u32) -> Self {
        u128::from(codes) << 64 | u128::from(position)
    }
    #[inline]
    fn codes(self, _: u32) -> u64 {
        (self >> 64) as u64
    }
    #[inline]
    fn low(self) -> u64 {
        self as u64
    }
    fn words(s: &Scattered) -> &[Self] {
        match &s.words {
            Words::Wide(w) => w,
            Words::Narrow(_) => &[],
        }
    }
    fn scattered(words: Vec<Self>, starts: Vec<usize>) -> Scattered {
        Scattered {
            words: Words::Wide(words),
            starts,
        }
    }
}

enum Words {
    Narrow(Vec<u64>),
    Wide(Vec<u128>),
}

/// One chunk's words, grouped by their digit: digit `d`'s are
/// `words[starts[d]..starts[d + 1]]`, in input order.
pub(crate) struct Scattered {
    words: Words,
    starts: Vec<usize>,
}

impl Scattered {
    pub(crate) fn size(&self) -> usize {
        let words = match &self.words {
            Words::Narrow(w) => w.capacity() * 8,
            Words::Wide(w) => w.capacity() * 16,
        };
        words + self.starts.capacity() * 8
    }

    fn digit<W: Word>(&self, d: usize) -> &[W] {
        &W::words(self)[self.starts[d]..self.starts[d + 1]]
    }

    fn len(&self, d: usize) -> usize {
        self.starts[d + 1] - self.starts[d]
    }
}

fn bits_of(n: u64) -> u32 {
    u64::BITS - n.leading_zeros()
}

impl RadixSort {
    /// The layout for `parts` whose keys span `ranges`, if a row's codes
    /// fit 64 bits (its position is below them, in the same word or in
    /// the low half of a `u128`).
    fn new(ranges: Vec<KeyRange>, parts: &[KeyedPart]) -> Option<Self> {
        let mut columns: Vec<PackedColumn> = parts
            .first()?
            .keys
            .iter()
            .zip(&ranges)
            .map(|(k, r)| PackedColumn::of_range(k.key, *r))
            .collect::<Option<_>>()?;
        let key_bits: u32 = columns.iter().map(|c| c.bits).sum();
        let longest = parts.iter().map(|p| p.batch.num_rows()).max()?;
        let row_bits = bits_of(longest.saturating_sub(1) as u64);
        let position_bits = bits_of(parts.len().saturating_sub(1) as u64) + row_bits;
        if key_bits > 64 || row_bits > 32 || position_bits - row_bits > 32 {
            return None;
        }
        // the codes start at a whole byte where they leave room; past 64
        // bits, in the high half of a u128
        let whole = position_bits.next_multiple_of(8);
        let (shift, wide) = if key_bits + whole <= 64 {
            (whole, false)
        } else if key_bits + position_bits <= 64 {
            (position_bits, false)
        } else {
            (64, true)
        };
        let mut at = shift;
        for c in columns.iter_mut().rev() {
            c.at = at;
            at += c.bits;
        }
        let mut radix = RadixSort {
            batches: Vec::new(),
            keys: Vec::new(),
            chunks: Vec::new(),
            columns,
            row_bits,
            position_bits,
            shift,
            wide,
            key_bits,
            low: 0,
            step: 0,
        };
        radix.choose_digits(parts);
        Some(radix)
    }

    /// A row's codes, its word above its position.
    #[inline]
    fn codes(&self, keys: &[KeyValues], r: usize) -> u64 {
        // (a key of one value has codes of no bits, all 0, and may start
        // at bit 64)
        self.columns
            .iter()
            .zip(keys)
            .filter(|(c, _)| c.bits > 0)
            .fold(0, |w, (c, k)| {
                w | c.code_ranked(k, r) << (c.at - self.shift)
            })
    }

    /// Chooses the digits from a sample of the rows' codes: [`DIGITS`]
    /// equal slices of the codes between the sample's 1st and 99th
    /// percentiles, the codes below and above going to the first and the
    /// last digit. Slices of the whole range would put nearly every row
    /// in one digit, and so in one task, when a few codes lie far from
    /// the rest.
    fn choose_digits(&mut self, parts: &[KeyedPart]) {
        let rows: usize = parts.iter().map(|p| p.batch.num_rows()).sum();
        let every = rows.div_ceil(SAMPLES).max(1);
        let mut sample = Vec::with_capacity(rows.min(SAMPLES) + parts.len());
        let mut skip = 0;
        for p in parts {
            let n = p.batch.num_rows();
            let mut r = skip;
            while r < n {
                sample.push(self.codes(&p.keys, r));
                r += every;
            }
            skip = r - n;
        }
        if sample.is_empty() {
            return;
        }
        sample.sort_unstable();
        let cut = sample.len() / 100;
        let (low, high) = (sample[cut], sample[sample.len() - 1 - cut]);
        self.low = low;
        self.step = bits_of((high - low) / DIGITS as u64);
    }

    /// Cuts the morsels into the tasks of the first job: runs of
    /// consecutive ones of at least [`CHUNK_ROWS`] rows (or the rest), so
    /// that many small morsels do not each keep a table of digits.
    fn cut_chunks(&mut self) {
        let (mut from, mut rows) = (0, 0);
        for (i, b) in self.batches.iter().enumerate() {
            rows += b.num_rows();
            if rows >= CHUNK_ROWS {
                self.chunks.push(from..i + 1);
                (from, rows) = (i + 1, 0);
            }
        }
        if from < self.batches.len() {
            self.chunks.push(from..self.batches.len());
        }
    }

    /// Whether the words are `u128`s.
    #[cfg(test)]
    pub(crate) fn wide(&self) -> bool {
        self.wide
    }

    /// The tasks of the first job.
    pub(crate) fn chunks(&self) -> usize {
        self.chunks.len()
    }

    pub(crate) fn num_rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }

    #[inline]
    fn digit<W: Word>(&self, word: W) -> usize {
        (word.codes(self.shift).saturating_sub(self.low) >> self.step).min(DIGITS as u64 - 1)
            as usize
    }

    /// The first job's task `i`: the words of chunk `i`'s morsels, in
    /// input order, scattered by digit.
    pub(crate) fn scatter(&self, i: usize) -> Result<Scattered> {
        if self.wide {
            self.scatter_as::<u128>(i)
        } else {
            self.scatter_as::<u64>(i)
        }
    }

    fn scatter_as<W: Word>(&self, i: usize) -> Result<Scattered> {
        let parts = self.chunks[i].clone();
        let rows: usize = self.batches[parts.clone()]
            .iter()
            .map(RecordBatch::num_rows)
            .sum();
        let mut words: Vec<W> = Vec::with_capacity(rows);
        let mut codes: Vec<u64> = Vec::new();
        for j in parts {
            let mut keys = self.keys[j]
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take()
                .ok_or_else(|| Error::Internal("a morsel's sort keys taken twice".into()))?;
            keys.iter_mut().for_each(KeyValues::resolve);
            let n = self.batches[j].num_rows();
            // the codes column by column (each loop over one key's values)
            codes.clear();
            codes.resize(n, 0);
            for (c, k) in self.columns.iter().zip(&keys) {
                if c.bits > 0 {
                    let at = c.at - self.shift;
                    for (r, w) in codes.iter_mut().enumerate() {
                        *w |= c.code(k, r) << at;
                    }
                }
            }
            let base = (j as u64) << self.row_bits;
            words.extend(
                codes
                    .iter()
                    .enumerate()
                    .map(|(r, &c)| W::pack(c, base | r as u64, self.shift)),
            );
        }
        let mut starts = vec![0usize; DIGITS + 1];
        for &w in &words {
            starts[self.digit(w) + 1] += 1;
        }
        for d in 1..starts.len() {
            starts[d] += starts[d - 1];
        }
        let mut at = starts.clone();
        let mut out = vec![W::default(); rows];
        for &w in &words {
            let d = self.digit(w);
            out[at[d]] = w;
            at[d] += 1;
        }
        Ok(W::scattered(out, starts))
    }

    /// The digits of each task of the second job: ranges of consecutive
    /// digits of about `total / wanted` rows each (a digit is never cut).
    pub(crate) fn ranges(&self, scattered: &[Scattered], wanted: usize) -> Vec<Range<usize>> {
        let counts: Vec<usize> = (0..DIGITS)
            .map(|d| scattered.iter().map(|s| s.len(d)).sum())
            .collect();
        let total: usize = counts.iter().sum();
        let target = total.div_ceil(wanted.max(1)).max(1);
        let mut out = Vec::new();
        let (mut from, mut held) = (0, 0);
        for (d, &n) in counts.iter().enumerate() {
            held += n;
            if held >= target {
                out.push(from..d + 1);
                (from, held) = (d + 1, 0);
            }
        }
        if from < DIGITS {
            out.push(from..DIGITS);
        }
        out
    }

    /// Rows of the digits `digits`.
    pub(crate) fn range_rows(&self, scattered: &[Scattered], digits: Range<usize>) -> usize {
        digits
            .map(|d| scattered.iter().map(|s| s.len(d)).sum::<usize>())
            .sum()
    }

    /// The second job's task: the rows of the digits `digits`, sorted;
    /// with `limit`, only the rows it keeps (the digits must then hold
    /// every row of each run it counts); with `keep`, only the sorted
    /// rows at those positions of the task's ([`super::kept_rows`]): the
    /// digits past them are not sorted.
    pub(crate) fn sort_range(
        &self,
        scattered: &[Scattered],
        digits: Range<usize>,
        limit: Option<RowLimit>,
        keep: Option<Range<usize>>,
    ) -> Result<Option<RecordBatch>> {
        if self.wide {
            self.sort_range_as::<u128>(scattered, digits, limit, keep)
        } else {
            self.sort_range_as::<u64>(scattered, digits, limit, keep)
        }
    }

    /// [`Self::sort_range`] of words `W`.
    fn sort_range_as<W: Word>(
        &self,
        scattered: &[Scattered],
        digits: Range<usize>,
        limit: Option<RowLimit>,
        keep: Option<Range<usize>>,
    ) -> Result<Option<RecordBatch>> {
        let rows = self.range_rows(scattered, digits.clone());
        if rows == 0 || keep.as_ref().is_some_and(Range::is_empty) {
            return Ok(None);
        }
        // the digits are in order: once the words sorted reach past
        // `keep`, the rest cannot be kept (a per-run limit counts runs
        // to the end)
        let enough = match (&keep, limit) {
            (Some(k), None) => k.end,
            _ => usize::MAX,
        };
        // the bytes of the codes: a digit's words may differ in any (its
        // slice of codes need not start at a power of two, and the first
        // and last digits hold the codes below and above the slices), and
        // those that do not vary are not sorted on
        let bytes: Vec<usize> = (0..W::BYTES)
            .filter(|&b| {
                b * 8 + 8 > self.shift as usize && b * 8 < (self.shift + self.key_bits) as usize
            })
            .collect();
        let mut words: Vec<W> = Vec::with_capacity(rows.min(enough));
        let mut scratch: Vec<W> = Vec::new();
        for d in digits {
            if words.len() >= enough {
                break;
            }
            // the digit's words in input order: morsel by morsel
            scratch.clear();
            for s in scattered {
                scratch.extend_from_slice(s.digit::<W>(d));
            }
            if bytes.is_empty() || scratch.len() < 2 {
                words.extend_from_slice(&scratch);
                continue;
            }
            let from = words.len();
            words.resize(from + scratch.len(), W::default());
            sort_bucket(&mut scratch, &mut words[from..], &bytes);
        }
        if let Some(RowLimit { keys, rows }) = limit {
            // the leading keys' codes are the codes' high bits: rows equal
            // in them are neighbours, counted run by run
            let cut = match keys.checked_sub(1).and_then(|k| self.columns.get(k)) {
                Some(last) => last.at - self.shift,
                None => u64::BITS,
            };
            let mut run: Option<(u64, usize)> = None;
            words.retain(|&w| {
                let lead = w.codes(self.shift).checked_shr(cut).unwrap_or(0);
                let n = match run {
                    Some((l, n)) if l == lead => n + 1,
                    _ => 0,
                };
                run = Some((lead, n));
                n < rows
            });
            if words.is_empty() {
                return Ok(None);
            }
        }
        if let Some(k) = keep {
            words.truncate(k.end);
            words.drain(..k.start.min(words.len()));
            if words.is_empty() {
                return Ok(None);
            }
        }
        let row_mask = (1u64 << self.row_bits) - 1;
        let position_mask = if self.position_bits == 64 {
            u64::MAX
        } else {
            (1u64 << self.position_bits) - 1
        };
        let picks: Vec<u64> = words
            .iter()
            .map(|&w| {
                let position = w.low() & position_mask;
                ((position >> self.row_bits) << 32) | (position & row_mask)
            })
            .collect();
        drop(words);
        let batches: Vec<&RecordBatch> = self.batches.iter().collect();
        gather(&batches, &picks).map(Some)
    }
}
