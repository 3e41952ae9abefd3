//! Group tables: each row's group key to a dense group id, partitioned by
//! hash as groups are inserted.
//!
//! A table is [`RADIX_BUCKETS`] small hash tables, one per radix bucket of
//! the key's hash, over one lane-wide list of group ids (the accumulators
//! are indexed by those ids). Each bucket remembers its groups in
//! insertion order, so a merge partition adopts the biggest lane's bucket
//! as it is (a copy of its hash table, no key hashed or compared again)
//! and inserts only the other lanes' groups of that bucket.
//!
//! Two key layouts:
//! - **Fixed**: keys of fixed-width columns (integers, dates, timestamps,
//!   booleans, doubles: one 64-bit word each; decimals: two) and of short
//!   strings (VARCHAR of at most [`TINY_STRING`] bytes in one word, then,
//!   once a longer one comes, of at most [`SHORT_STRING`] bytes in two:
//!   the bytes and the length) packed into `K <= 4` words and a NULL
//!   mask, stored in the hash table's slots and compared as integers. No
//!   per-row encoding beyond a copy of the values. A table whose string
//!   keys meet a longer value widens, keeping its group ids
//!   ([`GroupTable::group_ids`]): to two words per string, or to a row
//!   table; lanes that disagree are brought to the widest layout before
//!   they merge ([`GroupTable::widen_to`]).
//! - **Rows**: any other key (strings, several wide columns), encoded in
//!   Arrow's row format (`arrow::row`), hashed word by word; each slot
//!   keeps the key's first 16 bytes, so most probes never read the key
//!   store.
//!
//! Both treat NULL as one group and compare doubles by their bits, as the
//! row format does.

use std::sync::Arc;

use arrow::array::{Array, ArrayData, ArrayRef, AsArray, BooleanArray, StringArray, make_array};
use arrow::buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow::datatypes::{ArrowNativeType, DataType};
use arrow::row::{RowConverter, Rows, SortField};
use hashbrown::HashTable;
use hashbrown::hash_table::Entry;

use crate::error::{Error, Result};
use crate::hash::{fold_word, hash_bytes, mix};
use crate::strings::one_length;

/// Groups are cut into this many radix buckets by bits of their hash; a
/// merge partition is a run of consecutive buckets.
pub(crate) const RADIX_BUCKETS: usize = 256;
// a row's bucket is kept in a byte ([`GroupTable::radixes`])
const _: () = assert!(RADIX_BUCKETS <= 1 << u8::BITS);

/// The radix bucket of a hash: bits 48..56. Not the top 7 bits: hashbrown
/// keeps those as each slot's tag, and a bucket whose keys all share their
/// tag compares keys on every probe. Not the low bits either: they pick
/// the slot.
#[inline]
pub(crate) fn radix(hash: u64) -> usize {
    ((hash >> 48) as usize) & (RADIX_BUCKETS - 1)
}

/// Which groups each radix bucket holds.
#[derive(Clone, Debug)]
struct Buckets {
    /// Per bucket, its group ids in insertion (so ascending) order.
    ids: Vec<Vec<u32>>,
    /// Per group id, its position in its bucket's `ids`.
    local: Vec<u32>,
}

impl Buckets {
    fn new() -> Self {
        Buckets {
            ids: vec![Vec::new(); RADIX_BUCKETS],
            local: Vec::new(),
        }
    }

    #[inline]
    fn push(&mut self, bucket: usize, id: u32) {
        let ids = &mut self.ids[bucket];
        self.local.push(ids.len() as u32);
        ids.push(id);
    }

    fn size(&self) -> usize {
        self.ids.iter().map(|b| b.capacity() * 4).sum::<usize>() + self.local.capacity() * 4
    }
}

/// What [`GroupTable::radixes`] found besides the buckets.
pub(crate) struct Bucketed {
    /// The table widened to hold the keys: buckets given before no longer
    /// hold.
    pub(crate) widened: bool,
    /// Rows looked up, and of those the rows whose group the table holds.
    pub(crate) probed: usize,
    pub(crate) held: usize,
}

/// The groups of a partial aggregation.
pub(crate) enum GroupTable {
    Fixed1(FixedGroups<1>),
    Fixed2(FixedGroups<2>),
    Fixed3(FixedGroups<3>),
    Fixed4(FixedGroups<4>),
    Rows(RowGroups),
}

/// Runs `$body` with `$t` bound to the table of whatever layout.
macro_rules! each {
    ($self:expr, $t:ident => $body:expr) => {
        match $self {
            GroupTable::Fixed1($t) => $body,
            GroupTable::Fixed2($t) => $body,
            GroupTable::Fixed3($t) => $body,
            GroupTable::Fixed4($t) => $body,
            GroupTable::Rows($t) => $body,
        }
    };
}

/// The longest VARCHAR key (in bytes) a fixed-width table holds: two
/// words, the last byte the length.
pub(crate) const SHORT_STRING: usize = 15;

/// The longest VARCHAR key a table keeps in one word (the last byte the
/// length), as it does until a longer one comes: flags, codes and names
/// of a few letters hash and compare as one integer.
pub(crate) const TINY_STRING: usize = 7;

/// Runs `$body` with `$a` and `$b` bound to two tables of the same layout.
macro_rules! both {
    ($x:expr, $y:expr, $a:ident, $b:ident => $body:expr) => {
        match ($x, $y) {
            (GroupTable::Fixed1($a), GroupTable::Fixed1($b)) => $body,
            (GroupTable::Fixed2($a), GroupTable::Fixed2($b)) => $body,
            (GroupTable::Fixed3($a), GroupTable::Fixed3($b)) => $body,
            (GroupTable::Fixed4($a), GroupTable::Fixed4($b)) => $body,
            (GroupTable::Rows($a), GroupTable::Rows($b)) => $body,
            _ => Err(Error::Internal(
                "merging group tables of different layouts".into(),
            )),
        }
    };
}

impl GroupTable {
    /// An empty table for keys of `types`: fixed-width words when every
    /// key has a fixed width (or is a VARCHAR, taken to be short until a
    /// longer one comes) and they fit in four words, else rows.
    pub(crate) fn new(types: &[DataType]) -> Result<Self> {
        Self::with_strings(types, TINY_STRING)
    }

    /// An empty table whose fixed-width layout gives each VARCHAR key one
    /// word (`strings` = [`TINY_STRING`]) or two ([`SHORT_STRING`]).
    fn with_strings(types: &[DataType], strings: usize) -> Result<Self> {
        let fixed = types.len() <= 32 && types.iter().all(|t| key_words(t, strings).is_some());
        // the narrowest layout gives small integers half a word each, when
        // that takes fewer words than whole ones
        let halves =
            strings == TINY_STRING && types.iter().filter(|t| may_take_half(t)).count() > 1;
        let (columns, word) = Self::place(types, strings, halves);
        if fixed {
            match word {
                1 => return Ok(GroupTable::Fixed1(FixedGroups::new(columns))),
                2 => return Ok(GroupTable::Fixed2(FixedGroups::new(columns))),
                3 => return Ok(GroupTable::Fixed3(FixedGroups::new(columns))),
                4 => return Ok(GroupTable::Fixed4(FixedGroups::new(columns))),
                _ => {}
            }
        }
        Ok(GroupTable::Rows(RowGroups::new(types)?))
    }

    /// Places the keys of `types` in words: each whole, or with `halves`
    /// two small integers to a word. Returns the columns and the words.
    fn place(types: &[DataType], strings: usize, halves: bool) -> (Vec<KeyColumn>, usize) {
        let mut columns = Vec::with_capacity(types.len());
        let mut word = 0;
        // the word whose upper half is free
        let mut open_half = None;
        for t in types {
            let Some(words) = key_words(t, strings) else {
                continue;
            };
            let half = if halves && may_take_half(t) {
                match open_half.take() {
                    Some(w) => Some((w, 32)),
                    None => {
                        open_half = Some(word);
                        word += 1;
                        Some((word - 1, 0))
                    }
                }
            } else {
                None
            };
            match half {
                Some((w, shift)) => columns.push(KeyColumn {
                    data_type: t.clone(),
                    word: w,
                    words: 1,
                    half: Some(shift),
                }),
                None => {
                    columns.push(KeyColumn {
                        data_type: t.clone(),
                        word,
                        words,
                        half: None,
                    });
                    word += words;
                }
            }
        }
        (columns, word)
    }

    /// Number of groups.
    pub(crate) fn len(&self) -> usize {
        match self {
            GroupTable::Rows(t) => t.buckets.local.len(),
            GroupTable::Fixed1(t) => t.keys.len(),
            GroupTable::Fixed2(t) => t.keys.len(),
            GroupTable::Fixed3(t) => t.keys.len(),
            GroupTable::Fixed4(t) => t.keys.len(),
        }
    }

    /// Sets `ids` to the group of each row of `columns` (the key columns,
    /// all of one length), adding new groups. A fixed-width table given a
    /// string longer than its words hold widens first: to two words per
    /// string, or to rows past [`SHORT_STRING`] bytes.
    pub(crate) fn group_ids(&mut self, columns: &[ArrayRef], ids: &mut Vec<u32>) -> Result<()> {
        self.make_room_for(columns)?;
        each!(self, t => t.group_ids(columns, ids))
    }

    /// Widens a fixed-width table whose words cannot hold a key of
    /// `columns`: to two words per string, or to rows past
    /// [`SHORT_STRING`] bytes. True if it widened.
    fn make_room_for(&mut self, columns: &[ArrayRef]) -> Result<bool> {
        if each!(&*self, t => t.holds(columns)) {
            return Ok(false);
        }
        let mut wide = self.empty_at(Layout::Wide)?;
        if !wide.is_rows() && each!(&wide, t => t.holds(columns)) {
            self.relayout(&mut wide)?;
            *self = wide;
        } else {
            self.become_rows()?;
        }
        Ok(true)
    }

    /// Sets `out` to the radix bucket each row of `columns` (key columns,
    /// as [`Self::group_ids`] takes) would have in this table, adding no
    /// group; the table widens first if its words cannot hold a key, as
    /// `group_ids` would (buckets given before then no longer hold). Every
    /// `stride`-th row (none for 0) is also looked up: how many of those
    /// the table holds tells how well rows would fold into its groups.
    pub(crate) fn radixes(
        &mut self,
        columns: &[ArrayRef],
        out: &mut Vec<u8>,
        stride: usize,
    ) -> Result<Bucketed> {
        let widened = self.make_room_for(columns)?;
        out.clear();
        // (a direct map's groups are in no bucket's table yet: nothing to
        // look up)
        let stride = if self.finds_by_value() { 0 } else { stride };
        let (probed, held) = each!(self, t => t.radixes(columns, out, stride)?);
        Ok(Bucketed {
            widened,
            probed,
            held,
        })
    }

    /// Whether the table finds its groups by a [`Direct`] map (by the
    /// keys' values, not their hashes).
    pub(crate) fn finds_by_value(&self) -> bool {
        match self {
            GroupTable::Rows(_) => false,
            GroupTable::Fixed1(t) => !matches!(t.direct, Direct::Off),
            GroupTable::Fixed2(t) => !matches!(t.direct, Direct::Off),
            GroupTable::Fixed3(t) => !matches!(t.direct, Direct::Off),
            GroupTable::Fixed4(t) => !matches!(t.direct, Direct::Off),
        }
    }

    /// Whether the groups should be numbered by slot ([`Slots`]) from now
    /// on.
    pub(crate) fn wants_slots(&self) -> bool {
        matches!(self, GroupTable::Fixed1(t) if t.wants_slots())
    }

    /// The window of groups numbered by slot ([`Slots`]): its first value
    /// and number of slots (NULL's group, if any, is slot `span`); per
    /// slot whether a row reached it (and one more byte for NULL's).
    pub(crate) fn slot_window(&self) -> Option<SlotWindow<'_>> {
        match self {
            GroupTable::Fixed1(t) => t.slots.as_deref().map(|s| SlotWindow {
                base: s.base,
                span: s.span,
                seen: &s.seen,
                null: t.null_group != EMPTY,
            }),
            _ => None,
        }
    }

    /// Whether the groups are numbered by slot ([`Slots`]).
    pub(crate) fn in_slots(&self) -> bool {
        matches!(self, GroupTable::Fixed1(t) if t.slots.is_some())
    }

    /// Numbers the groups by slot ([`Slots`]): the new id of each group,
    /// in id order, and the number of groups from now on.
    pub(crate) fn enter_slots(&mut self) -> Result<(Vec<u32>, usize)> {
        match self {
            GroupTable::Fixed1(t) => t.enter_slots(),
            _ => Err(Error::Internal("slots of a key of several words".into())),
        }
    }

    /// After a value outside the window ended the slots: no slots again
    /// before the groups double.
    pub(crate) fn bar_slots(&mut self) {
        if let GroupTable::Fixed1(t) = self {
            t.slots_from = t.slots_from.max(2 * t.keys.len());
        }
    }

    /// Times the groups were numbered by slot.
    #[cfg(test)]
    pub(crate) fn slot_entries(&self) -> usize {
        match self {
            GroupTable::Fixed1(t) => t.slot_entries,
            _ => 0,
        }
    }

    /// Numbers the groups by slot no more: the seen slots become groups
    /// `0..` in value order; per new group, its id until now.
    pub(crate) fn leave_slots(&mut self) -> Result<Vec<u32>> {
        match self {
            GroupTable::Fixed1(t) => t.leave_slots(),
            _ => Err(Error::Internal("slots of a key of several words".into())),
        }
    }

    /// [`Self::group_ids`] by slot, if the groups are numbered by slot
    /// and every value of `columns` falls in the window; false (nothing
    /// changed, `ids` to be ignored) otherwise.
    pub(crate) fn slot_ids(&mut self, columns: &[ArrayRef], ids: &mut Vec<u32>) -> Result<bool> {
        let GroupTable::Fixed1(t) = self else {
            return Ok(false);
        };
        if t.slots.is_none() {
            return Ok(false);
        }
        t.encode(columns)?;
        Ok(t.slot_ids(ids))
    }

    /// Gives up the [`Direct`] map for good: every group goes in its
    /// bucket and the hash tables find them from now on (a merge
    /// partition that goes on to insert rows after adopting buckets).
    pub(crate) fn by_hash(&mut self) {
        match self {
            GroupTable::Rows(_) => {}
            GroupTable::Fixed1(t) => t.by_hash(),
            GroupTable::Fixed2(t) => t.by_hash(),
            GroupTable::Fixed3(t) => t.by_hash(),
            GroupTable::Fixed4(t) => t.by_hash(),
        }
    }

    /// How wide the table keeps its keys.
    pub(crate) fn layout(&self) -> Layout {
        fn tiny(columns: &[KeyColumn]) -> bool {
            columns
                .iter()
                .any(|c| c.half.is_some() || (c.data_type == DataType::Utf8 && c.words == 1))
        }
        let tiny = match self {
            GroupTable::Rows(_) => return Layout::Rows,
            GroupTable::Fixed1(t) => tiny(&t.columns),
            GroupTable::Fixed2(t) => tiny(&t.columns),
            GroupTable::Fixed3(t) => tiny(&t.columns),
            GroupTable::Fixed4(t) => tiny(&t.columns),
        };
        if tiny { Layout::Tiny } else { Layout::Wide }
    }

    /// Brings the table to `layout` (at least as wide as its own), with
    /// the same group ids.
    pub(crate) fn widen_to(&mut self, layout: Layout) -> Result<()> {
        if self.layout() >= layout {
            return Ok(());
        }
        if layout == Layout::Rows {
            return self.become_rows();
        }
        let mut wide = self.empty_at(layout)?;
        self.relayout(&mut wide)?;
        *self = wide;
        Ok(())
    }

    /// An empty table of the same keys at `layout`.
    fn empty_at(&self, layout: Layout) -> Result<Self> {
        let types = match self {
            GroupTable::Rows(r) => r.types.clone(),
            other => each!(other, t => t.types()),
        };
        match layout {
            Layout::Rows => Ok(GroupTable::Rows(RowGroups::new(&types)?)),
            Layout::Wide => Self::with_strings(&types, SHORT_STRING),
            Layout::Tiny => Self::with_strings(&types, TINY_STRING),
        }
    }

    /// Inserts this table's groups, in id order, into the empty `target`,
    /// which then gives them the same ids.
    fn relayout(&self, target: &mut GroupTable) -> Result<()> {
        let keys = each!(self, t => t.key_arrays()?);
        let mut ids = Vec::new();
        target.group_ids(&keys, &mut ids)?;
        if ids.iter().enumerate().any(|(i, &id)| id as usize != i) {
            return Err(Error::Internal(
                "a group table's keys were not distinct".into(),
            ));
        }
        Ok(())
    }

    /// Whether the table keeps its keys in the row format.
    pub(crate) fn is_rows(&self) -> bool {
        matches!(self, GroupTable::Rows(_))
    }

    /// Turns a fixed-width table into a row table of the same groups: the
    /// same ids, so the accumulators indexed by them stay as they are, and
    /// buckets by the row keys' hashes.
    pub(crate) fn become_rows(&mut self) -> Result<()> {
        if self.is_rows() {
            return Ok(());
        }
        let mut rows = self.empty_at(Layout::Rows)?;
        self.relayout(&mut rows)?;
        *self = rows;
        Ok(())
    }

    /// An empty table of the same keys and layout.
    pub(crate) fn empty_like(&self) -> Result<Self> {
        self.empty_at(self.layout())
    }

    /// The [`Direct`] map of a one-word key, if the table finds its groups
    /// by one.
    pub(crate) fn direct_map(&self) -> Option<DirectMap<'_>> {
        match self {
            GroupTable::Fixed1(FixedGroups {
                direct: Direct::Window { base, pages, .. },
                null_group,
                ..
            }) => Some(DirectMap {
                base: base[0],
                pages,
                null: *null_group,
            }),
            _ => None,
        }
    }

    /// Adds a group for each one-word key of `words`, which the table
    /// does not hold, to a table that merges by value
    /// ([`Self::direct_map`]) and is finished next: they go in no bucket.
    pub(crate) fn extend_by_value(&mut self, words: &[u64]) -> Result<()> {
        let t = self.by_value()?;
        t.keys.extend(words.iter().map(|&w| [w]));
        t.nulls.resize(t.keys.len(), 0);
        Ok(())
    }

    /// The group of `value` (`None`: NULL) in a table that finds its
    /// groups by a one-word key's value ([`Self::direct_map`]) and made the
    /// page of `value`; a new group if it has none (numbered, in no bucket:
    /// the table is finished next, not merged by bucket).
    pub(crate) fn group_by_value(&mut self, value: Option<u64>) -> Result<u32> {
        let t = self.by_value()?;
        let group = match (value, &mut t.direct) {
            (None, _) => &mut t.null_group,
            (
                Some(v),
                Direct::Window {
                    base, radix, pages, ..
                },
            ) if v >= base[0] && v - base[0] < radix[0] => {
                let slot = Direct::slot(base, radix, &[v]);
                match pages[slot >> DIRECT_PAGE_BITS].as_deref_mut() {
                    Some(page) => &mut page[slot & (DIRECT_PAGE - 1)],
                    None => {
                        return Err(Error::Internal(format!(
                            "a group by value {v} of a page the table did not make"
                        )));
                    }
                }
            }
            (Some(v), _) => {
                return Err(Error::Internal(format!(
                    "a group by value {v} outside the table's window"
                )));
            }
        };
        if *group == EMPTY {
            *group = t.keys.len() as u32;
            t.keys.push([value.unwrap_or(0)]);
            t.nulls.push(u32::from(value.is_none()));
        }
        Ok(*group)
    }

    /// Adds the group of the NULL key to a table that merges by value, as
    /// [`Self::extend_by_value`].
    pub(crate) fn push_null_by_value(&mut self) -> Result<()> {
        let t = self.by_value()?;
        t.keys.push([0]);
        t.nulls.push(1);
        Ok(())
    }

    fn by_value(&mut self) -> Result<&mut FixedGroups<1>> {
        match self {
            GroupTable::Fixed1(t) => Ok(t),
            _ => Err(Error::Internal(
                "a merge by value into a table of more than one word".into(),
            )),
        }
    }

    /// Puts every group in its radix bucket's table: a lane's table
    /// before it merges by bucket ([`FixedGroups::place_new`]).
    pub(crate) fn seal(&mut self) {
        match self {
            GroupTable::Rows(_) => {}
            GroupTable::Fixed1(t) => t.place_new(),
            GroupTable::Fixed2(t) => t.place_new(),
            GroupTable::Fixed3(t) => t.place_new(),
            GroupTable::Fixed4(t) => t.place_new(),
        }
    }

    /// Makes room in radix bucket `b` for `more` groups beyond those it
    /// holds, growing its table at most once.
    pub(crate) fn reserve_bucket(&mut self, b: usize, more: usize) {
        match self {
            GroupTable::Rows(t) => t.tables[b].reserve(more, |s| s.hash),
            GroupTable::Fixed1(t) => t.tables[b].fit(more),
            GroupTable::Fixed2(t) => t.tables[b].fit(more),
            GroupTable::Fixed3(t) => t.tables[b].fit(more),
            GroupTable::Fixed4(t) => t.tables[b].fit(more),
        }
    }

    /// Number of groups in radix bucket `b` (of a sealed table).
    pub(crate) fn bucket_len(&self, b: usize) -> usize {
        match self {
            GroupTable::Rows(t) => t.buckets.ids[b].len(),
            GroupTable::Fixed1(t) => t.tables[b].len,
            GroupTable::Fixed2(t) => t.tables[b].len,
            GroupTable::Fixed3(t) => t.tables[b].len,
            GroupTable::Fixed4(t) => t.tables[b].len,
        }
    }

    /// Adds bucket `b` of `base` (a table of the same keys) whose groups
    /// this table does not hold: they become ids `len()..len() + n`, in the
    /// order `src` gives. The bucket's hash table is copied or re-placed,
    /// not rebuilt from keys.
    /// `src` is set to the adopted groups' ids in `base`, in the order
    /// they get their new ids; the bucket's table is made room for
    /// `expected` groups at once.
    pub(crate) fn adopt(
        &mut self,
        base: &GroupTable,
        b: usize,
        expected: usize,
        src: &mut Vec<u32>,
    ) -> Result<()> {
        both!(self, base, mine, theirs => {
            mine.adopt(theirs, b, expected, src);
            Ok(())
        })
    }

    /// For each group of `other`'s bucket `b` (a table of the same keys),
    /// in the order the bucket's table holds them, pushes its id in
    /// `other` to `src` and this table's group of it to `map`, adding new
    /// groups.
    pub(crate) fn merge_bucket(
        &mut self,
        other: &GroupTable,
        b: usize,
        src: &mut Vec<u32>,
        map: &mut Vec<u32>,
    ) -> Result<()> {
        both!(self, other, mine, theirs => mine.merge_bucket(theirs, b, src, map))
    }

    /// The key columns, one value per group in id order.
    pub(crate) fn finish(self) -> Result<Vec<ArrayRef>> {
        each!(self, t => t.finish())
    }

    /// Bytes held.
    pub(crate) fn size(&self) -> usize {
        each!(self, t => t.size())
    }

    /// Words of a fixed-width key, `None` for row-encoded keys.
    #[cfg(test)]
    fn fixed_words(&self) -> Option<usize> {
        match self {
            GroupTable::Fixed1(_) => Some(1),
            GroupTable::Fixed2(_) => Some(2),
            GroupTable::Fixed3(_) => Some(3),
            GroupTable::Fixed4(_) => Some(4),
            GroupTable::Rows(_) => None,
        }
    }
}

// ---------------------------------------------------------------- fixed-width keys

/// How a table keeps its keys, narrowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Layout {
    /// Fixed-width words, a VARCHAR in one word (up to [`TINY_STRING`]
    /// bytes).
    Tiny,
    /// Fixed-width words, a VARCHAR in two (up to [`SHORT_STRING`] bytes);
    /// also every fixed-width table without VARCHAR keys.
    Wide,
    /// Arrow's row format.
    Rows,
}

/// Added to an integer key's bits (but a UBIGINT's in a whole word) so
/// that words order as the values do, negative ones below the others: a
/// key column of values around zero is one window of words
/// ([`Direct`], slots), not two at the ends of the word's range.
const WORD_BIAS: u64 = 1 << 63;

/// The same for an integer in half a word.
const HALF_BIAS: u32 = 1 << 31;

/// Words a key of type `t` takes in a fixed-width key, if it has a fixed
/// width; a VARCHAR takes one word when `strings` is [`TINY_STRING`].
fn key_words(t: &DataType, strings: usize) -> Option<usize> {
    if *t == DataType::Utf8 {
        return Some(if strings == TINY_STRING { 1 } else { 2 });
    }
    use DataType::*;
    match t {
        Boolean
        | Int8
        | Int16
        | Int32
        | Int64
        | UInt8
        | UInt16
        | UInt32
        | UInt64
        | Float64
        | Date32
        | Date64
        | Timestamp(_, _) => Some(1),
        Decimal128(_, _) => Some(2),
        _ => None,
    }
}

/// Whether a key of type `t` may take half a word (32 bits) in the
/// narrowest layout: always for the narrow integers, dates and booleans;
/// for BIGINT, UINTEGER and UBIGINT while a batch's values fit INTEGER
/// ([`fits_half`]).
fn may_take_half(t: &DataType) -> bool {
    use DataType::*;
    matches!(
        t,
        Boolean | Int8 | Int16 | Int32 | UInt8 | UInt16 | Date32 | Int64 | UInt32 | UInt64
    )
}

/// Whether every value of `array` (an integer column; values behind NULLs
/// included, which only errs towards a wider layout) lies within
/// INTEGER's range, so that half a word holds it.
fn fits_half(array: &dyn Array) -> bool {
    // folds in the values' own type, which vectorise
    match array.data_type() {
        DataType::Int64 => {
            // v fits in 32 bits iff v + 2^31 has none of its upper 32 bits
            // set: an OR of adds and shifts, which vectorise without the
            // 64-bit min and max baseline x86-64 lacks
            let out = natives::<i64>(array).iter().fold(0u64, |acc, &v| {
                acc | ((v as u64).wrapping_add(1 << 31) >> 32)
            });
            out == 0
        }
        DataType::UInt32 => {
            natives::<u32>(array).iter().fold(0, |hi, &v| hi.max(v)) <= i32::MAX as u32
        }
        DataType::UInt64 => {
            natives::<u64>(array).iter().fold(0, |hi, &v| hi.max(v)) <= i32::MAX as u64
        }
        _ => true,
    }
}

/// One key column of a fixed-width key: its type and first word.
#[derive(Clone, Debug)]
struct KeyColumn {
    data_type: DataType,
    word: usize,
    words: usize,
    /// An integer in half of its word, at this shift (0 or 32): the value
    /// as an i32's bits.
    half: Option<u32>,
}

/// A slot of a fixed-width table: the whole key, so a probe reads one
/// cache line and nothing else.
#[derive(Clone, Copy, Debug)]
struct FixedSlot<const K: usize> {
    key: [u64; K],
    /// Bit `c` set: key column `c` is NULL (its words are zero).
    nulls: u32,
    /// The group, or [`EMPTY`].
    id: u32,
}

/// The id of an empty slot.
pub(crate) const EMPTY: u32 = u32::MAX;

/// How many rows ahead of the one probed its home slot is fetched.
const PROBE_AHEAD: usize = 16;

/// Asks the processor to bring `value`'s cache line in, without waiting
/// for it.
#[inline]
fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint to the cache: it reads no memory into
    // the program and cannot fault, whatever the address (here a valid
    // reference)
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// Groups from which on the home slots are prefetched (below, every
/// table sits in the cache).
const PROBE_AHEAD_FROM: usize = 1 << 15;

/// An open-addressing hash table of fixed-width keys with linear probing:
/// slots hold the keys themselves (no separate tag bytes, so a lookup
/// touches one cache line where hashbrown touches two), at most three quarters full.
#[derive(Clone, Debug)]
struct FixedTable<const K: usize> {
    slots: Vec<FixedSlot<K>>,
    len: usize,
}

impl<const K: usize> FixedTable<K> {
    fn new() -> Self {
        FixedTable {
            slots: Vec::new(),
            len: 0,
        }
    }

    /// The group of (`key`, `nulls`), of hash `hash`; if absent, inserts
    /// it as group `new_id()`.
    #[inline]
    fn find_or_insert(
        &mut self,
        key: [u64; K],
        nulls: u32,
        hash: u64,
        new_id: impl FnOnce() -> u32,
    ) -> (u32, bool) {
        if 4 * (self.len + 1) > 3 * self.slots.len() {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = hash as usize & mask;
        loop {
            let slot = &mut self.slots[i];
            if slot.id == EMPTY {
                let id = new_id();
                *slot = FixedSlot { key, nulls, id };
                self.len += 1;
                return (id, true);
            }
            if slot.key == key && slot.nulls == nulls {
                return (slot.id, false);
            }
            i = (i + 1) & mask;
        }
    }

    /// Whether the table holds (`key`, `nulls`), of hash `hash`.
    #[inline]
    fn holds(&self, key: &[u64; K], nulls: u32, hash: u64) -> bool {
        if self.slots.is_empty() {
            return false;
        }
        let mask = self.slots.len() - 1;
        let mut i = hash as usize & mask;
        loop {
            let slot = &self.slots[i];
            if slot.id == EMPTY {
                return false;
            }
            if slot.key == *key && slot.nulls == nulls {
                return true;
            }
            i = (i + 1) & mask;
        }
    }

    /// Makes room for `more` groups beyond those held, rehashing at most
    /// once.
    fn fit(&mut self, more: usize) {
        if 4 * (self.len + more) > 3 * self.slots.len() {
            self.rehash(((self.len + more) * 4 / 3 + 1).next_power_of_two().max(16));
        }
    }

    /// `capacity` empty slots.
    fn empty_slots(capacity: usize) -> Vec<FixedSlot<K>> {
        vec![
            FixedSlot {
                key: [0; K],
                nulls: 0,
                id: EMPTY,
            };
            capacity
        ]
    }

    /// Puts every key back into `capacity` slots.
    fn rehash(&mut self, capacity: usize) {
        let old = std::mem::replace(&mut self.slots, Self::empty_slots(capacity));
        self.len = 0;
        for slot in old.into_iter().filter(|s| s.id != EMPTY) {
            self.place(slot, hash_fixed(&slot.key, slot.nulls));
        }
    }

    /// Puts `slot`, whose key the table does not hold, in its place; the
    /// table has room ([`Self::fit`]).
    #[inline]
    fn place(&mut self, slot: FixedSlot<K>, hash: u64) {
        let mask = self.slots.len() - 1;
        let mut i = hash as usize & mask;
        while self.slots[i].id != EMPTY {
            i = (i + 1) & mask;
        }
        self.slots[i] = slot;
        self.len += 1;
    }

    /// Makes room for `groups` groups in all (an empty table only).
    fn reserve(&mut self, groups: usize) {
        debug_assert_eq!(self.len, 0);
        let capacity = (groups * 4 / 3 + 1).next_power_of_two().max(16);
        self.slots = Self::empty_slots(capacity);
    }

    /// Doubles the slots (at least 16) and puts every key back.
    fn grow(&mut self) {
        self.rehash((self.slots.len() * 2).max(16));
    }

    fn size(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<FixedSlot<K>>()
    }
}

/// Groups keyed by `K` 64-bit words and a NULL mask.
pub(crate) struct FixedGroups<const K: usize> {
    columns: Vec<KeyColumn>,
    /// Per radix bucket its table, whose slots hold the bucket's keys and
    /// ids (the merge reads a bucket's groups from there).
    tables: Vec<FixedTable<K>>,
    /// Per group id, its key and NULL mask.
    keys: Vec<[u64; K]>,
    nulls: Vec<u32>,
    /// Per row of the batch being inserted (reused).
    scratch_keys: Vec<[u64; K]>,
    scratch_nulls: Vec<u32>,
    scratch_hashes: Vec<u64>,
    /// The groups by the key's words, while their values fall in windows
    /// small enough (see [`Direct`]).
    direct: Direct<K>,
    /// Groups from this id on are in no bucket's table yet: while the
    /// [`Direct`] map finds the groups, new ones are only numbered, and
    /// [`Self::place_new`] puts them in their buckets at once (sized
    /// tables, no key compared) when the map is given up or the lane ends.
    placed: usize,
    /// With the map on, the group of the NULL key, if any.
    null_group: u32,
    /// While the groups of a one-integer key fill most of the map's
    /// window, each is numbered by its slot ([`Slots`]).
    slots: Option<Box<Slots>>,
    /// Groups the table must reach before it numbers them by slot again,
    /// after a value outside the window ended its slots (twice the groups
    /// then: values that keep leaving a window renumber the groups
    /// a logarithmic number of times, not once a batch).
    slots_from: usize,
    /// Times the groups were numbered by slot.
    #[cfg(test)]
    slot_entries: usize,
}

/// A lane's groups of a one-integer key numbered by their slot in the
/// [`Direct`] map's window (a perfect hash): a row's group is its value
/// less the window's first, with no id to load and no new group to
/// number. Taken once the lane's groups fill a quarter of the window
/// ([`FixedGroups::wants_slots`]); every slot is then a group to the
/// accumulators, those no row reached (unseen) included, until the lane
/// ends or a value falls outside the window: the seen slots are then
/// numbered in value order and the map made again
/// ([`FixedGroups::leave_slots`]). Lanes that end in slots of one
/// window merge slot by slot (`aggregate::merge_slots`); any other lane in
/// slots leaves them before it merges or finishes.
#[derive(Debug)]
struct Slots {
    base: u64,
    span: u64,
    /// A byte per slot (and one for NULL's group, `span`): whether a row
    /// reached it. (A byte is stored; a bit would be read and written.)
    seen: Vec<u8>,
}

/// A lane's groups numbered by slot, as a merge reads them
/// ([`GroupTable::slot_window`]).
pub(crate) struct SlotWindow<'a> {
    pub(crate) base: u64,
    pub(crate) span: u64,
    /// Per slot (and for NULL's group, at `span`), whether a row reached it.
    pub(crate) seen: &'a [u8],
    /// Whether the lane has NULL's group (slot `span`).
    pub(crate) null: bool,
}

/// The fewest groups a lane numbers by slot ([`Slots`]).
const SLOTS_FROM: usize = 4096;

/// The most slots a window numbered by slot may have (each one a group to
/// the accumulators: 64 MiB of 16-byte sums at most).
const SLOTS_MAX: u64 = 1 << 22;

/// A fixed-width key's group ids indexed by each word's value less its
/// window's first value: a probe is one load from a dense array instead of
/// a hash and a search.
/// While it runs, new groups are only numbered: they reach their buckets'
/// hash tables when it is given up or before a merge by buckets
/// ([`FixedGroups::place_new`]); lanes that all kept their maps merge by
/// value instead. It follows the window of values seen, and is given up
/// for good once the window would pass [`DIRECT_MAX`] slots, or its
/// pages more than [`DIRECT_SMALL`] slots and more than
/// [`DIRECT_SPARSE`] per group.
///
/// The ids lie in pages of [`DIRECT_PAGE`] slots, made when a batch's
/// values first reach them: values no row of the lane took cost no
/// memory, so lanes that split a key's values between them (morsels of a
/// sorted key) each pay for their own share, and a one-word window grows
/// by adding pages, never by copying ids.
#[derive(Debug)]
enum Direct<const K: usize> {
    /// Per key word the window's first value and its number of values;
    /// the slot of a key counts in mixed radix, the last word lowest.
    /// A one-word window starts and ends on a page's edge, so a page
    /// holds the same values in every lane ([`DirectMap`]).
    Window {
        base: [u64; K],
        radix: [u64; K],
        pages: Vec<Option<Box<DirectPage>>>,
        /// Pages made.
        made: usize,
    },
    Off,
}

/// Slots of a page of a [`Direct`] map (16 KiB of ids).
pub(crate) const DIRECT_PAGE: usize = 1 << DIRECT_PAGE_BITS;
const DIRECT_PAGE_BITS: u32 = 12;

type DirectPage = [u32; DIRECT_PAGE];

/// The most slots of a [`Direct`] map's window: 32 MiB of ids if every
/// page is made.
const DIRECT_MAX: u64 = 1 << 23;

/// A [`Direct`] map whose pages hold more slots than this many per group
/// (the groups so far plus the batch's rows) is given up, unless they
/// are few: 64 bytes per group, one to three times a hash table's.
const DIRECT_SPARSE: u64 = 16;

/// Slots a [`Direct`] map's pages may have whatever the groups (1 MiB of
/// ids: a lane's first batch may be its last, short morsel).
const DIRECT_SMALL: u64 = 1 << 18;

/// A lane's one-word [`Direct`] map, as a merge by value reads it.
#[derive(Clone, Copy)]
pub(crate) struct DirectMap<'a> {
    /// The first value of the window (a multiple of [`DIRECT_PAGE`]).
    pub(crate) base: u64,
    pages: &'a [Option<Box<DirectPage>>],
    /// The group of NULL ([`EMPTY`] for none).
    pub(crate) null: u32,
}

impl<'a> DirectMap<'a> {
    /// One past the window's last value.
    pub(crate) fn end(&self) -> u64 {
        self.base + (self.pages.len() * DIRECT_PAGE) as u64
    }

    /// The pages the lane made: each page's first value and its ids.
    pub(crate) fn made(&self) -> impl Iterator<Item = (u64, &'a DirectPage)> + use<'a> {
        let base = self.base;
        let pages = self.pages;
        (base..)
            .step_by(DIRECT_PAGE)
            .zip(pages)
            .filter_map(|(start, page)| Some((start, page.as_deref()?)))
    }

    /// The ids of the page that starts at value `start` (a multiple of
    /// [`DIRECT_PAGE`]), if the lane made it: the group of each value
    /// from `start` on, [`EMPTY`] for none.
    pub(crate) fn page(&self, start: u64) -> Option<&'a DirectPage> {
        let p = start.checked_sub(self.base)? >> DIRECT_PAGE_BITS;
        self.pages.get(usize::try_from(p).ok()?)?.as_deref()
    }
}

impl<const K: usize> Direct<K> {
    fn new() -> Self {
        Direct::Window {
            base: [0; K],
            radix: [0; K],
            pages: Vec::new(),
            made: 0,
        }
    }

    /// The slot of `key` in a window (every word inside it).
    #[inline]
    fn slot(base: &[u64; K], radix: &[u64; K], key: &[u64; K]) -> usize {
        let mut slot = 0;
        for c in 0..K {
            slot = slot * radix[c] + (key[c] - base[c]);
        }
        slot as usize
    }

    /// The id of slot `slot`, whose page is made.
    #[inline]
    fn id(pages: &mut [Option<Box<DirectPage>>], slot: usize) -> &mut u32 {
        let page = pages[slot >> DIRECT_PAGE_BITS]
            .as_deref_mut()
            .expect("Direct::cover makes the pages of a batch's slots");
        &mut page[slot & (DIRECT_PAGE - 1)]
    }

    fn empty_page() -> Box<DirectPage> {
        vec![EMPTY; DIRECT_PAGE]
            .into_boxed_slice()
            .try_into()
            .expect("a page's length")
    }

    /// Makes the window hold every word `c` in `lo[c]..=hi[c]`, the
    /// non-NULL keys of a batch of `rows` rows into a table whose groups
    /// are `keys` (NULL masks `nulls`), and makes the pages of the slots
    /// between; false (and `Off`) if it may not. A grown window of one
    /// word keeps its pages; one of several is filled again from the
    /// groups' keys.
    fn cover(
        &mut self,
        lo: [u64; K],
        hi: [u64; K],
        keys: &[[u64; K]],
        nulls: &[u32],
        rows: usize,
    ) -> bool {
        let Direct::Window {
            base,
            radix,
            pages,
            made,
        } = self
        else {
            return false;
        };
        let fresh = pages.is_empty();
        let inside = |c: usize| lo[c] >= base[c] && hi[c] - base[c] < radix[c];
        if fresh || !(0..K).all(inside) {
            // per word the values seen, and (for a window of several
            // words, which is filled again when it grows) with room on the
            // side that grew (both, at first): half the span again
            let mut window = [(0u64, 0u64); K];
            let mut roomy = [(0u64, 0u64); K];
            for c in 0..K {
                let (l, h) = if fresh {
                    (lo[c], hi[c])
                } else {
                    (lo[c].min(base[c]), hi[c].max(base[c] + radix[c] - 1))
                };
                window[c] = (l, h);
                let room = (h - l).saturating_add(1) / 2;
                let (down, up) = match (fresh || l < base[c], fresh || h >= base[c] + radix[c]) {
                    (true, true) => (room / 2, room - room / 2),
                    (true, false) => (room, 0),
                    (false, true) => (0, room),
                    (false, false) => (0, 0),
                };
                roomy[c] = (l.saturating_sub(down), h.saturating_add(up));
            }
            if K == 1 {
                // whole pages, no room: growing adds pages, copies nothing
                let mask = DIRECT_PAGE as u64 - 1;
                let (l, h) = (window[0].0 & !mask, window[0].1 | mask);
                // (a window's end must fit a word)
                if h == u64::MAX || h - l >= DIRECT_MAX {
                    *self = Direct::Off;
                    return false;
                }
                let before = if fresh {
                    0
                } else {
                    ((base[0] - l) >> DIRECT_PAGE_BITS) as usize
                };
                pages.splice(0..0, std::iter::repeat_with(|| None).take(before));
                pages.resize_with(((h - l + 1) >> DIRECT_PAGE_BITS) as usize, || None);
                base[0] = l;
                radix[0] = h - l + 1;
            } else {
                // (a window's end must fit a word, as above)
                let slots = |w: &[(u64, u64); K]| {
                    w.iter()
                        .try_fold(1u64, |n, (l, h)| {
                            n.checked_mul(h.checked_sub(*l)?.checked_add(1)?)
                        })
                        .filter(|&n| n <= DIRECT_MAX && w.iter().all(|(_, h)| *h < u64::MAX))
                };
                let (chosen, total) = match (slots(&roomy), slots(&window)) {
                    (Some(n), _) => (roomy, n),
                    (_, Some(n)) => (window, n),
                    _ => {
                        *self = Direct::Off;
                        return false;
                    }
                };
                for c in 0..K {
                    base[c] = chosen[c].0;
                    radix[c] = chosen[c].1 - chosen[c].0 + 1;
                }
                pages.clear();
                pages.resize_with((total as usize).div_ceil(DIRECT_PAGE), || None);
                *made = 0;
                for (g, (key, &mask)) in keys.iter().zip(nulls).enumerate() {
                    if mask == 0 {
                        let slot = Self::slot(base, radix, key);
                        let page = &mut pages[slot >> DIRECT_PAGE_BITS];
                        if page.is_none() {
                            *page = Some(Self::empty_page());
                            *made += 1;
                        }
                        *Self::id(pages, slot) = g as u32;
                    }
                }
            }
        }
        // the batch's pages: every slot from its least key to its greatest
        let first = Self::slot(base, radix, &lo) >> DIRECT_PAGE_BITS;
        let last = Self::slot(base, radix, &hi) >> DIRECT_PAGE_BITS;
        let new = pages[first..=last].iter().filter(|p| p.is_none()).count();
        let slots = ((*made + new) * DIRECT_PAGE) as u64;
        let dense = (keys.len() + rows) as u64 * DIRECT_SPARSE;
        if slots > DIRECT_SMALL && slots > dense {
            *self = Direct::Off;
            return false;
        }
        for page in &mut pages[first..=last] {
            if page.is_none() {
                *page = Some(Self::empty_page());
            }
        }
        *made += new;
        true
    }

    fn size(&self) -> usize {
        match self {
            Direct::Window { pages, made, .. } => {
                made * DIRECT_PAGE * 4 + pages.capacity() * std::mem::size_of::<usize>()
            }
            Direct::Off => 0,
        }
    }
}

#[inline]
fn hash_fixed<const K: usize>(key: &[u64; K], nulls: u32) -> u64 {
    let mut h = u64::from(nulls);
    for &w in key {
        h = fold_word(h, w);
    }
    mix(h)
}

/// The values of a primitive array as its native type.
fn natives<T: ArrowNativeType>(array: &dyn Array) -> ScalarBuffer<T> {
    let data = array.to_data();
    ScalarBuffer::new(data.buffers()[0].clone(), data.offset(), data.len())
}

/// A string of at most [`SHORT_STRING`] bytes as two words: the bytes,
/// zero-padded, and the length in the last byte (so `"a"` and `"a\0"`
/// differ).
#[inline]
fn pack_short(value: &[u8]) -> [u64; 2] {
    let mut buf = [0u8; 16];
    let n = value.len().min(SHORT_STRING);
    buf[..n].copy_from_slice(&value[..n]);
    buf[15] = n as u8;
    let [a, b] =
        [&buf[..8], &buf[8..]].map(|h| u64::from_le_bytes(h.try_into().expect("eight bytes")));
    [a, b]
}

/// [`pack_short`] of `bytes[start..end]`, reading the sixteen bytes at
/// `start` as one word and masking them where the buffer holds that many:
/// no copy through a stack buffer, whose byte stores stall the wide load
/// that follows them.
#[inline]
fn pack_short_at(bytes: &[u8], start: usize, end: usize) -> [u64; 2] {
    let n = end.saturating_sub(start).min(SHORT_STRING);
    match bytes.get(start..start + 16) {
        Some(window) => {
            let word = u128::from_le_bytes(window.try_into().expect("sixteen bytes"));
            // the low n bytes; no mask at all for the empty string
            let kept = word & u128::MAX.checked_shr(128 - 8 * n as u32).unwrap_or(0);
            let packed = kept | ((n as u128) << 120);
            [packed as u64, (packed >> 64) as u64]
        }
        None => pack_short(&bytes[start..end]),
    }
}

/// `bytes[start..end]` (at most [`TINY_STRING`] bytes) as one word: the
/// bytes, zero-padded, and the length in the last byte.
#[inline]
fn pack_tiny_at(bytes: &[u8], start: usize, end: usize) -> u64 {
    let n = end.saturating_sub(start).min(TINY_STRING);
    let word = match bytes.get(start..start + 8) {
        Some(window) => u64::from_le_bytes(window.try_into().expect("eight bytes")),
        None => {
            let mut buf = [0u8; 8];
            buf[..n].copy_from_slice(&bytes[start..start + n]);
            u64::from_le_bytes(buf)
        }
    };
    // the low n bytes; no mask at all for the empty string
    (word & u64::MAX.checked_shr(64 - 8 * n as u32).unwrap_or(0)) | ((n as u64) << 56)
}

/// [`pack_tiny_at`] into word `w` of `keys` of consecutive strings of
/// `len` bytes each (at most [`TINY_STRING`]), the first at `start`: the
/// same words, without reading the offsets.
#[inline]
fn pack_tiny_of_length<const K: usize>(
    bytes: &[u8],
    start: usize,
    len: usize,
    keys: &mut [[u64; K]],
    w: usize,
) {
    let tag = (len as u64) << 56;
    if len == 1 {
        for (k, &b) in keys.iter_mut().zip(&bytes[start..]) {
            k[w] = u64::from(b) | tag;
        }
        return;
    }
    let mask = u64::MAX.checked_shr(64 - 8 * len as u32).unwrap_or(0);
    for (i, k) in keys.iter_mut().enumerate() {
        let at = start + i * len;
        k[w] = match bytes.get(at..at + 8) {
            Some(window) => {
                (u64::from_le_bytes(window.try_into().expect("eight bytes")) & mask) | tag
            }
            None => pack_tiny_at(bytes, at, at + len),
        };
    }
}

/// The bytes of a string packed by [`pack_short`].
#[derive(Clone, Copy)]
struct Short {
    buf: [u8; 16],
}

impl Short {
    fn as_slice(&self) -> &[u8] {
        &self.buf[..usize::from(self.buf[15]).min(SHORT_STRING)]
    }
}

#[inline]
fn unpack_short(words: &[u64; 2]) -> Short {
    let mut buf = [0u8; 16];
    buf[..8].copy_from_slice(&words[0].to_le_bytes());
    buf[8..].copy_from_slice(&words[1].to_le_bytes());
    Short { buf }
}

impl FixedGroups<1> {
    /// Whether the groups should be numbered by slot from now on: one
    /// integer column, found by a map whose window they fill a quarter of
    /// ([`Slots`]).
    fn wants_slots(&self) -> bool {
        let Direct::Window { radix, .. } = &self.direct else {
            return false;
        };
        self.slots.is_none()
            && self.placed == 0
            && self.keys.len() >= self.slots_from
            && radix[0] <= SLOTS_MAX
            && self.keys.len() as u64 * 4 >= radix[0]
            && matches!(self.columns[..], [KeyColumn { half: None, ref data_type, .. }]
                if data_type.is_integer() || matches!(data_type, DataType::Date32 | DataType::Date64))
    }

    /// Numbers the groups by slot: the slot of each group, in id order
    /// (NULL's after every slot), and the number of groups from now on.
    fn enter_slots(&mut self) -> Result<(Vec<u32>, usize)> {
        let Direct::Window {
            base,
            radix,
            pages,
            made,
        } = &mut self.direct
        else {
            return Err(Error::Internal("slots of a table without a map".into()));
        };
        let (base, span) = (base[0], radix[0]);
        let mut seen = vec![0u8; span as usize + 1];
        let mut dst = Vec::with_capacity(self.keys.len());
        for (key, &mask) in self.keys.iter().zip(&self.nulls) {
            let slot = if mask == 0 { key[0] - base } else { span };
            seen[slot as usize] = 1;
            dst.push(slot as u32);
        }
        // the map's pages are made again when the slots are left
        pages.iter_mut().for_each(|p| *p = None);
        *made = 0;
        self.keys.clear();
        self.keys.extend((0..span).map(|s| [base + s]));
        self.nulls.clear();
        self.nulls.resize(span as usize, 0);
        if self.null_group != EMPTY {
            self.null_group = span as u32;
            self.keys.push([0]);
            self.nulls.push(1);
        }
        self.slots = Some(Box::new(Slots { base, span, seen }));
        #[cfg(test)]
        {
            self.slot_entries += 1;
        }
        Ok((dst, self.keys.len()))
    }

    /// The group of each row of the encoded batch by its slot; false (and
    /// `ids` to be ignored) if a value falls outside the window, or the
    /// groups are not numbered by slot.
    fn slot_ids(&mut self, ids: &mut Vec<u32>) -> bool {
        let Some(slots) = &mut self.slots else {
            return false;
        };
        let (base, span) = (slots.base, slots.span);
        // every value inside the window first: nothing changes otherwise
        let (mut outside, mut nulls) = (false, false);
        for (key, &mask) in self.scratch_keys.iter().zip(&self.scratch_nulls) {
            outside |= mask == 0 && key[0].wrapping_sub(base) >= span;
            nulls |= mask != 0;
        }
        if outside {
            return false;
        }
        ids.clear();
        ids.extend(
            self.scratch_keys
                .iter()
                .map(|key| key[0].wrapping_sub(base) as u32),
        );
        if nulls {
            if self.null_group == EMPTY {
                self.null_group = self.keys.len() as u32;
                self.keys.push([0]);
                self.nulls.push(1);
            }
            for (id, &mask) in ids.iter_mut().zip(&self.scratch_nulls) {
                if mask != 0 {
                    *id = self.null_group;
                }
            }
        }
        for &id in ids.iter() {
            slots.seen[id as usize] = 1;
        }
        true
    }

    /// Numbers the groups by slot no more: the seen slots become groups
    /// `0..` in value order (NULL's last), found by the map again; per new
    /// group its slot (its id until now).
    fn leave_slots(&mut self) -> Result<Vec<u32>> {
        let Some(slots) = self.slots.take() else {
            return Err(Error::Internal("leaving slots a table is not in".into()));
        };
        let Direct::Window { pages, made, .. } = &mut self.direct else {
            return Err(Error::Internal("slots of a table without a map".into()));
        };
        let span = slots.span as usize;
        let mut src: Vec<u32> = (0..span as u32)
            .filter(|&s| slots.seen[s as usize] != 0)
            .collect();
        self.keys.clear();
        self.nulls.clear();
        for (id, &slot) in src.iter().enumerate() {
            let page = &mut pages[slot as usize >> DIRECT_PAGE_BITS];
            if page.is_none() {
                *page = Some(Direct::<1>::empty_page());
                *made += 1;
            }
            *Direct::<1>::id(pages, slot as usize) = id as u32;
            self.keys.push([slots.base + u64::from(slot)]);
            self.nulls.push(0);
        }
        if self.null_group != EMPTY {
            src.push(self.null_group);
            self.null_group = self.keys.len() as u32;
            self.keys.push([0]);
            self.nulls.push(1);
        }
        Ok(src)
    }
}

impl<const K: usize> FixedGroups<K> {
    fn new(columns: Vec<KeyColumn>) -> Self {
        FixedGroups {
            columns,
            tables: (0..RADIX_BUCKETS).map(|_| FixedTable::new()).collect(),
            keys: Vec::new(),
            nulls: Vec::new(),
            scratch_keys: Vec::new(),
            scratch_nulls: Vec::new(),
            scratch_hashes: Vec::new(),
            direct: Direct::new(),
            placed: 0,
            null_group: EMPTY,
            slots: None,
            slots_from: SLOTS_FROM,
            #[cfg(test)]
            slot_entries: 0,
        }
    }

    /// Whether every string of `columns` is short enough for the words,
    /// and every integer kept in half a word fits there.
    fn holds(&self, columns: &[ArrayRef]) -> bool {
        self.columns.iter().zip(columns).all(|(column, array)| {
            if column.half.is_some() {
                return fits_half(array.as_ref());
            }
            let limit = if column.words == 1 {
                TINY_STRING
            } else {
                SHORT_STRING
            };
            column.data_type != DataType::Utf8
                || array.as_string_opt::<i32>().is_none_or(|s| {
                    s.value_offsets()
                        .windows(2)
                        .all(|o| (o[1] - o[0]) as usize <= limit)
                })
        })
    }

    /// The key columns' types.
    fn types(&self) -> Vec<DataType> {
        self.columns.iter().map(|c| c.data_type.clone()).collect()
    }

    /// Packs the key of each row of `columns` into the scratch vectors.
    #[inline(always)]
    fn encode(&mut self, columns: &[ArrayRef]) -> Result<()> {
        let rows = columns.first().map_or(0, |c| c.len());
        self.scratch_keys.clear();
        self.scratch_keys.resize(rows, [0; K]);
        self.scratch_nulls.clear();
        self.scratch_nulls.resize(rows, 0);
        let keys = &mut self.scratch_keys;
        for (c, (array, column)) in columns.iter().zip(&self.columns).enumerate() {
            let w = column.word;
            if array.data_type() != &column.data_type {
                return Err(Error::Internal(format!(
                    "a group key of type {} where {} was planned",
                    array.data_type(),
                    column.data_type
                )));
            }
            macro_rules! put {
                ($native:ty) => {{
                    let values = natives::<$native>(array.as_ref());
                    match column.half {
                        // the value's i32 bits (`holds` checked it fits),
                        // biased
                        Some(shift) => {
                            for (k, v) in keys.iter_mut().zip(values.iter()) {
                                k[w] |= u64::from(*v as i64 as u32 ^ HALF_BIAS) << shift;
                            }
                        }
                        None => {
                            for (k, v) in keys.iter_mut().zip(values.iter()) {
                                k[w] = *v as i64 as u64 ^ WORD_BIAS;
                            }
                        }
                    }
                }};
            }
            match &column.data_type {
                DataType::Boolean => {
                    let values = array.as_boolean().values();
                    let shift = column.half.unwrap_or(0);
                    for (k, v) in keys.iter_mut().zip(values.iter()) {
                        k[w] |= u64::from(v) << shift;
                    }
                }
                DataType::Int8 => put!(i8),
                DataType::Int16 => put!(i16),
                DataType::Int32 | DataType::Date32 => put!(i32),
                DataType::Int64 | DataType::Date64 | DataType::Timestamp(_, _) => put!(i64),
                DataType::UInt8 => put!(u8),
                DataType::UInt16 => put!(u16),
                DataType::UInt32 => put!(u32),
                DataType::UInt64 if column.half.is_some() => put!(u64),
                DataType::UInt64 => {
                    for (k, v) in keys.iter_mut().zip(natives::<u64>(array.as_ref()).iter()) {
                        k[w] = *v;
                    }
                }
                DataType::Float64 => {
                    for (k, v) in keys.iter_mut().zip(natives::<f64>(array.as_ref()).iter()) {
                        k[w] = v.to_bits();
                    }
                }
                DataType::Decimal128(_, _) => {
                    for (k, v) in keys.iter_mut().zip(natives::<i128>(array.as_ref()).iter()) {
                        k[w] = *v as u64;
                        k[w + 1] = (*v >> 64) as u64;
                    }
                }
                DataType::Utf8 => {
                    let strings = array.as_string::<i32>();
                    let (offsets, bytes) = (strings.value_offsets(), strings.value_data());
                    if column.words == 1 {
                        match one_length(offsets) {
                            // codes and flags: every string of one length
                            Some(len) if len <= TINY_STRING => {
                                pack_tiny_of_length(bytes, offsets[0] as usize, len, keys, w)
                            }
                            _ => {
                                for (k, o) in keys.iter_mut().zip(offsets.windows(2)) {
                                    k[w] = pack_tiny_at(bytes, o[0] as usize, o[1] as usize);
                                }
                            }
                        }
                    } else {
                        for (k, o) in keys.iter_mut().zip(offsets.windows(2)) {
                            [k[w], k[w + 1]] = pack_short_at(bytes, o[0] as usize, o[1] as usize);
                        }
                    }
                }
                other => {
                    return Err(Error::Internal(format!(
                        "{other} is not a fixed-width group key"
                    )));
                }
            }
            if let Some(nulls) = array.logical_nulls().filter(|n| n.null_count() > 0) {
                for i in (0..rows).filter(|&i| nulls.is_null(i)) {
                    match column.half {
                        Some(shift) => keys[i][w] &= !(u64::from(u32::MAX) << shift),
                        None => keys[i][w..w + column.words].fill(0),
                    }
                    self.scratch_nulls[i] |= 1 << c;
                }
            }
        }
        Ok(())
    }

    /// The id of the group (`key`, `nulls`) of hash `hash`, adding it if new.
    #[inline]
    fn find_or_insert(&mut self, key: [u64; K], nulls: u32, hash: u64) -> u32 {
        let next = self.keys.len() as u32;
        debug_assert_eq!(self.placed, self.keys.len(), "groups left unplaced");
        let (id, new) = self.tables[radix(hash)].find_or_insert(key, nulls, hash, || next);
        if new {
            self.keys.push(key);
            self.nulls.push(nulls);
            self.placed += 1;
        }
        id
    }

    fn group_ids(&mut self, columns: &[ArrayRef], ids: &mut Vec<u32>) -> Result<()> {
        self.encode(columns)?;
        if self.direct_ids(ids) {
            return Ok(());
        }
        let keys = std::mem::take(&mut self.scratch_keys);
        let nulls = std::mem::take(&mut self.scratch_nulls);
        let mut hashes = std::mem::take(&mut self.scratch_hashes);
        ids.clear();
        ids.reserve(keys.len());
        // reading home slots ahead pays only once the tables outgrow the
        // cache
        let ahead = self.keys.len() >= PROBE_AHEAD_FROM;
        // neighbouring rows often share their group (data arrives in
        // runs): compare with the previous row before probing
        let mut last: Option<([u64; K], u32, u32)> = None;
        if !ahead {
            // a small table: hash only the rows that differ from the one
            // before
            for (&key, &mask) in keys.iter().zip(&nulls) {
                let id = match last {
                    Some((k, m, id)) if k == key && m == mask => id,
                    _ => self.find_or_insert(key, mask, hash_fixed(&key, mask)),
                };
                last = Some((key, mask, id));
                ids.push(id);
            }
            self.scratch_keys = keys;
            self.scratch_nulls = nulls;
            self.scratch_hashes = hashes;
            return Ok(());
        }
        hashes.clear();
        hashes.extend(keys.iter().zip(&nulls).map(|(k, &m)| hash_fixed(k, m)));
        for (i, &h) in hashes.iter().enumerate() {
            // ask for the home slot of the row `PROBE_AHEAD` on: by the
            // time it is probed its line is in the cache, and the misses
            // of the rows in between overlap instead of each probe
            // waiting for its own
            if let Some(&ahead) = hashes.get(i + PROBE_AHEAD) {
                let slots = &self.tables[radix(ahead)].slots;
                if !slots.is_empty() {
                    prefetch(&slots[ahead as usize & (slots.len() - 1)]);
                }
            }
            let (key, mask) = (keys[i], nulls[i]);
            let id = match last {
                Some((k, m, id)) if k == key && m == mask => id,
                _ => self.find_or_insert(key, mask, h),
            };
            last = Some((key, mask, id));
            ids.push(id);
        }
        self.scratch_keys = keys;
        self.scratch_nulls = nulls;
        self.scratch_hashes = hashes;
        Ok(())
    }

    /// [`Self::group_ids`] of the encoded batch through the [`Direct`]
    /// map, if its window may cover the batch. (Kept out of line: the
    /// hash path's loop in `group_ids` compiles as it did without it.)
    #[inline(never)]
    fn direct_ids(&mut self, ids: &mut Vec<u32>) -> bool {
        if matches!(self.direct, Direct::Off) {
            return false;
        }
        let keys = std::mem::take(&mut self.scratch_keys);
        let nulls = std::mem::take(&mut self.scratch_nulls);
        let mut direct = std::mem::replace(&mut self.direct, Direct::Off);
        // per word the least and greatest value of the non-NULL keys; a
        // key of several columns with a NULL gives the map up
        let mut lo = [u64::MAX; K];
        let mut hi = [0; K];
        let mut null_rows = false;
        for (key, &mask) in keys.iter().zip(&nulls) {
            if mask != 0 {
                null_rows = true;
                continue;
            }
            for c in 0..K {
                lo[c] = lo[c].min(key[c]);
                hi[c] = hi[c].max(key[c]);
            }
        }
        // (one group for NULL holds for a key of one column only: in
        // several, each column is NULL or not on its own)
        let covered = if null_rows && (K > 1 || self.columns.len() > 1) {
            direct = Direct::Off;
            false
        } else {
            lo[0] > hi[0] || direct.cover(lo, hi, &self.keys, &self.nulls, keys.len())
        };
        if let (
            true,
            Direct::Window {
                base, radix, pages, ..
            },
        ) = (covered, &mut direct)
        {
            // a row the map lacks is a new group (or NULL's): numbered, and
            // in no hash table yet
            ids.clear();
            ids.reserve(keys.len());
            for (key, &mask) in keys.iter().zip(&nulls) {
                let group = if mask == 0 {
                    Direct::<K>::id(pages, Direct::slot(base, radix, key))
                } else {
                    &mut self.null_group
                };
                if *group == EMPTY {
                    *group = self.keys.len() as u32;
                    self.keys.push(*key);
                    self.nulls.push(mask);
                }
                ids.push(*group);
            }
        }
        self.direct = direct;
        self.scratch_keys = keys;
        self.scratch_nulls = nulls;
        if matches!(self.direct, Direct::Off) {
            // from here on the hash tables find the groups
            self.place_new();
            return false;
        }
        true
    }

    /// Sets `out` to the radix bucket of each row of `columns`; looks up
    /// every `stride`-th row (none for 0): (rows looked up, rows held).
    fn radixes(
        &mut self,
        columns: &[ArrayRef],
        out: &mut Vec<u8>,
        stride: usize,
    ) -> Result<(usize, usize)> {
        self.encode(columns)?;
        let (keys, nulls) = (&self.scratch_keys, &self.scratch_nulls);
        out.extend(
            keys.iter()
                .zip(nulls)
                .map(|(k, &m)| radix(hash_fixed(k, m)) as u8),
        );
        let (mut probed, mut held) = (0, 0);
        if stride > 0 {
            for i in (0..keys.len()).step_by(stride) {
                let (k, m) = (&keys[i], nulls[i]);
                let h = hash_fixed(k, m);
                probed += 1;
                held += usize::from(self.tables[radix(h)].holds(k, m, h));
            }
        }
        Ok((probed, held))
    }

    /// See [`GroupTable::by_hash`].
    fn by_hash(&mut self) {
        self.direct = Direct::Off;
        self.place_new();
    }

    /// Puts the groups the [`Direct`] map numbered in their buckets'
    /// tables: each bucket made room for its new groups once, each key
    /// placed without a compare (they are distinct).
    fn place_new(&mut self) {
        let (from, to) = (self.placed, self.keys.len());
        if from == to {
            return;
        }
        let hashes: Vec<u64> = (from..to)
            .map(|g| hash_fixed(&self.keys[g], self.nulls[g]))
            .collect();
        let mut counts = vec![0usize; RADIX_BUCKETS];
        for &h in &hashes {
            counts[radix(h)] += 1;
        }
        for (table, &more) in self.tables.iter_mut().zip(&counts) {
            table.fit(more);
        }
        for (n, (g, &h)) in (from..to).zip(&hashes).enumerate() {
            if let Some(&ahead) = hashes.get(n + PROBE_AHEAD) {
                let slots = &self.tables[radix(ahead)].slots;
                prefetch(&slots[ahead as usize & (slots.len() - 1)]);
            }
            let slot = FixedSlot {
                key: self.keys[g],
                nulls: self.nulls[g],
                id: g as u32,
            };
            self.tables[radix(h)].place(slot, h);
        }
        self.placed = to;
    }

    /// The groups are taken in the order of the bucket's slots, which
    /// hold their keys: the base's key list (in id order, so scattered
    /// for one bucket) is never read.
    fn adopt(&mut self, base: &Self, b: usize, expected: usize, src: &mut Vec<u32>) {
        src.clear();
        let offset = self.keys.len() as u32;
        let mut table = if 4 * expected > 3 * base.tables[b].slots.len() {
            // re-place the keys in a table sized for every lane's groups
            // of the bucket, instead of copying it and growing it later
            let mut table = FixedTable::new();
            table.reserve(expected);
            // (the keys are distinct: each goes in without a compare)
            for slot in base.tables[b].slots.iter().filter(|s| s.id != EMPTY) {
                table.place(*slot, hash_fixed(&slot.key, slot.nulls));
            }
            table
        } else {
            base.tables[b].clone()
        };
        for slot in table.slots.iter_mut().filter(|s| s.id != EMPTY) {
            src.push(slot.id);
            let id = self.keys.len() as u32;
            slot.id = id;
            self.keys.push(slot.key);
            self.nulls.push(slot.nulls);
        }
        debug_assert_eq!(self.keys.len() as u32 - offset, src.len() as u32);
        self.tables[b] = table;
        self.placed = self.keys.len();
    }

    fn merge_bucket(
        &mut self,
        other: &Self,
        b: usize,
        src: &mut Vec<u32>,
        map: &mut Vec<u32>,
    ) -> Result<()> {
        src.clear();
        map.clear();
        for slot in other.tables[b].slots.iter().filter(|s| s.id != EMPTY) {
            src.push(slot.id);
            map.push(self.find_or_insert(slot.key, slot.nulls, hash_fixed(&slot.key, slot.nulls)));
        }
        Ok(())
    }

    fn finish(self) -> Result<Vec<ArrayRef>> {
        self.key_arrays()
    }

    /// The key columns, one value per group in id order.
    fn key_arrays(&self) -> Result<Vec<ArrayRef>> {
        let rows = self.keys.len();
        let mut out = Vec::with_capacity(self.columns.len());
        for (c, column) in self.columns.iter().enumerate() {
            let w = column.word;
            let any_null = self.nulls.iter().any(|m| m & (1 << c) != 0);
            let nulls = any_null.then(|| {
                NullBuffer::new(BooleanBuffer::from_iter(
                    self.nulls.iter().map(|m| m & (1 << c) == 0),
                ))
            });
            // an integer as the i64 it was: its word or half word less
            // the bias [`FixedGroups::encode`] added
            let half = column.half;
            let value = |k: &[u64; K]| match half {
                Some(shift) => i64::from(((k[w] >> shift) as u32 ^ HALF_BIAS) as i32),
                None => (k[w] ^ WORD_BIAS) as i64,
            };
            macro_rules! column {
                ($native:ty) => {{
                    let values: Vec<$native> =
                        self.keys.iter().map(|k| value(k) as $native).collect();
                    let data = ArrayData::builder(column.data_type.clone())
                        .len(rows)
                        .add_buffer(Buffer::from_vec(values))
                        .nulls(nulls)
                        .build()
                        .map_err(Error::arrow)?;
                    make_array(data)
                }};
            }
            let array: ArrayRef = match &column.data_type {
                DataType::Boolean => {
                    let shift = half.unwrap_or(0);
                    let values = BooleanBuffer::from_iter(
                        self.keys.iter().map(|k| (k[w] >> shift) & 1 != 0),
                    );
                    Arc::new(BooleanArray::new(values, nulls))
                }
                DataType::Int8 => column!(i8),
                DataType::Int16 => column!(i16),
                DataType::Int32 | DataType::Date32 => column!(i32),
                DataType::Int64 | DataType::Date64 | DataType::Timestamp(_, _) => column!(i64),
                DataType::UInt8 => column!(u8),
                DataType::UInt16 => column!(u16),
                DataType::UInt32 => column!(u32),
                DataType::UInt64 => {
                    // a whole word holds the value as it is
                    let values: Vec<u64> = match half {
                        Some(_) => self.keys.iter().map(|k| value(k) as u64).collect(),
                        None => self.keys.iter().map(|k| k[w]).collect(),
                    };
                    let data = ArrayData::builder(column.data_type.clone())
                        .len(rows)
                        .add_buffer(Buffer::from_vec(values))
                        .nulls(nulls)
                        .build()
                        .map_err(Error::arrow)?;
                    make_array(data)
                }
                DataType::Float64 => {
                    let values: Vec<f64> = self.keys.iter().map(|k| f64::from_bits(k[w])).collect();
                    let data = ArrayData::builder(column.data_type.clone())
                        .len(rows)
                        .add_buffer(Buffer::from_vec(values))
                        .nulls(nulls)
                        .build()
                        .map_err(Error::arrow)?;
                    make_array(data)
                }
                DataType::Decimal128(_, _) => {
                    let values: Vec<i128> = self
                        .keys
                        .iter()
                        .map(|k| (i128::from(k[w + 1] as i64) << 64) | i128::from(k[w]))
                        .collect();
                    let data = ArrayData::builder(column.data_type.clone())
                        .len(rows)
                        .add_buffer(Buffer::from_vec(values))
                        .nulls(nulls)
                        .build()
                        .map_err(Error::arrow)?;
                    make_array(data)
                }
                DataType::Utf8 => {
                    let mut offsets = Vec::with_capacity(rows + 1);
                    let mut bytes = Vec::new();
                    offsets.push(0i32);
                    for k in &self.keys {
                        if column.words == 1 {
                            let word = k[w].to_le_bytes();
                            let n = usize::from(word[7]).min(TINY_STRING);
                            bytes.extend_from_slice(&word[..n]);
                        } else {
                            bytes.extend_from_slice(unpack_short(&[k[w], k[w + 1]]).as_slice());
                        }
                        offsets.push(bytes.len() as i32);
                    }
                    let offsets = arrow::buffer::OffsetBuffer::new(offsets.into());
                    Arc::new(
                        arrow::array::StringArray::try_new(offsets, bytes.into(), nulls)
                            .map_err(Error::arrow)?,
                    )
                }
                other => {
                    return Err(Error::Internal(format!(
                        "{other} is not a fixed-width group key"
                    )));
                }
            };
            out.push(array);
        }
        Ok(out)
    }

    fn size(&self) -> usize {
        self.tables.iter().map(FixedTable::size).sum::<usize>()
            + self.keys.capacity() * 8 * K
            + self.nulls.capacity() * 4
            + self.scratch_keys.capacity() * 8 * K
            + self.scratch_nulls.capacity() * 4
            + self.scratch_hashes.capacity() * 8
            + self.direct.size()
            + self.slots.as_ref().map_or(0, |s| s.seen.capacity())
    }
}

// ---------------------------------------------------------------- row-encoded keys

/// A slot of a row-encoded table: the group's hash and its key's first 16
/// bytes (all of a short key), so probes rarely leave the table.
#[derive(Clone, Copy, Debug)]
struct RowSlot {
    hash: u64,
    head: u128,
    id: u32,
    len: u32,
}

/// The first 16 bytes of a key, zero-padded.
#[inline]
fn key_head(bytes: &[u8]) -> u128 {
    if let Some(head) = bytes.first_chunk::<16>() {
        return u128::from_le_bytes(*head);
    }
    let mut buf = [0u8; 16];
    copy_short(&mut buf[..bytes.len()], bytes);
    u128::from_le_bytes(buf)
}

/// `dst.copy_from_slice(src)` for the few bytes of a key: up to 32 bytes
/// by two overlapping fixed-size moves instead of a call to `memcpy`.
#[inline]
fn copy_short(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    match n {
        0 => {}
        1..4 => {
            for (d, s) in dst.iter_mut().zip(src) {
                *d = *s;
            }
        }
        4..8 => {
            dst[..4].copy_from_slice(&src[..4]);
            dst[n - 4..n].copy_from_slice(&src[n - 4..]);
        }
        8..16 => {
            dst[..8].copy_from_slice(&src[..8]);
            dst[n - 8..n].copy_from_slice(&src[n - 8..]);
        }
        16..=32 => {
            dst[..16].copy_from_slice(&src[..16]);
            dst[n - 16..n].copy_from_slice(&src[n - 16..]);
        }
        _ => dst.copy_from_slice(src),
    }
}

/// Groups keyed by their key bytes: row-encoded, or a single VARCHAR's
/// own bytes ([`RowKeys`]).
pub(crate) struct RowGroups {
    types: Vec<DataType>,
    tables: Vec<HashTable<RowSlot>>,
    buckets: Buckets,
    /// Per group id, its key and hash.
    keys: RowKeys,
    hashes: Vec<u64>,
}

/// The keys of a row table, by group id.
enum RowKeys {
    /// Arrow's row format: keys of any types and number.
    Encoded { converter: RowConverter, rows: Rows },
    /// A single VARCHAR key: each group's bytes as they are, one after
    /// the other, so that a batch's strings are hashed, compared and
    /// kept without being encoded first, and the result's column is the
    /// bytes and their offsets, not decoded. NULL is a group of its own
    /// with no bytes, its slot's length [`NULL_LEN`].
    Strings {
        bytes: Vec<u8>,
        /// Per group, where its bytes end.
        ends: Vec<usize>,
        /// The group of NULL, if any.
        null: Option<u32>,
    },
    /// Keys of VARCHARs and fixed-width values ([`packable`]), each
    /// group's one after the other, column by column: a VARCHAR as its
    /// length in four bytes ([`NULL_LEN`] for NULL) and its bytes, a
    /// value of width `w` as a byte (1 valid, 0 NULL) and its `w` bytes
    /// (zeros for NULL). Equal keys have equal bytes, which is all a
    /// group table asks (the row format's order costs an encoding of
    /// every string in 32-byte blocks); the result's columns are cut
    /// back out of them.
    Packed {
        types: Vec<DataType>,
        bytes: Vec<u8>,
        /// Per group, where its bytes end.
        ends: Vec<usize>,
    },
}

/// Whether a key column of type `t` can be packed ([`RowKeys::Packed`]):
/// a VARCHAR, or a type of a fixed width in bytes.
fn packable(t: &DataType) -> bool {
    *t == DataType::Utf8 || (*t != DataType::Boolean && t.primitive_width().is_some())
}

/// The packed keys ([`RowKeys::Packed`]) of the rows of `columns`, of
/// `types`: their bytes, row `i`'s at `offsets[i]..offsets[i + 1]`.
fn pack_keys(columns: &[ArrayRef], types: &[DataType]) -> Result<(Vec<u8>, Vec<usize>)> {
    let n = columns.first().map_or(0, |c| c.len());
    let valids: Vec<Option<NullBuffer>> = columns
        .iter()
        .map(|c| c.logical_nulls().filter(|v| v.null_count() > 0))
        .collect();
    let mut lens = vec![0usize; n];
    for ((c, t), valid) in columns.iter().zip(types).zip(&valids) {
        if c.data_type() != t {
            return Err(Error::Internal(format!(
                "a group key of type {} where {t} was planned",
                c.data_type()
            )));
        }
        match c.as_string_opt::<i32>() {
            Some(strings) => {
                let offsets = strings.value_offsets().windows(2);
                for (i, (l, o)) in lens.iter_mut().zip(offsets).enumerate() {
                    let len = if valid.as_ref().is_none_or(|v| v.is_valid(i)) {
                        (o[1] - o[0]) as usize
                    } else {
                        0
                    };
                    *l += 4 + len;
                }
            }
            None => {
                let w = t.primitive_width().unwrap_or(0);
                lens.iter_mut().for_each(|l| *l += 1 + w);
            }
        }
    }
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0usize);
    let mut total = 0;
    for l in &lens {
        total += l;
        offsets.push(total);
    }
    let mut bytes = vec![0u8; total];
    let mut at: Vec<usize> = offsets[..n].to_vec();
    for ((c, t), valid) in columns.iter().zip(types).zip(&valids) {
        let is_valid = |i: usize| valid.as_ref().is_none_or(|v| v.is_valid(i));
        match c.as_string_opt::<i32>() {
            Some(strings) => {
                let (o, data) = (strings.value_offsets(), strings.value_data());
                for (i, at) in at.iter_mut().enumerate() {
                    if is_valid(i) {
                        let value = &data[o[i] as usize..o[i + 1] as usize];
                        let len = (value.len() as u32).to_le_bytes();
                        bytes[*at..*at + 4].copy_from_slice(&len);
                        copy_short(&mut bytes[*at + 4..*at + 4 + value.len()], value);
                        *at += 4 + value.len();
                    } else {
                        bytes[*at..*at + 4].copy_from_slice(&NULL_LEN.to_le_bytes());
                        *at += 4;
                    }
                }
            }
            None => {
                let w = t.primitive_width().unwrap_or(0);
                let data = c.to_data();
                let values = data
                    .buffers()
                    .first()
                    .map(|b| &b.as_slice()[data.offset() * w..(data.offset() + n) * w])
                    .ok_or_else(|| Error::Internal(format!("a {t} key without values")))?;
                for (i, at) in at.iter_mut().enumerate() {
                    if is_valid(i) {
                        bytes[*at] = 1;
                        copy_short(
                            &mut bytes[*at + 1..*at + 1 + w],
                            &values[i * w..(i + 1) * w],
                        );
                    }
                    *at += 1 + w;
                }
            }
        }
    }
    Ok((bytes, offsets))
}

/// The key columns of packed keys ([`RowKeys::Packed`]) of `types`: group
/// `g`'s key is `bytes[ends[g - 1]..ends[g]]`.
fn unpack_keys(types: &[DataType], bytes: &[u8], ends: &[usize]) -> Result<Vec<ArrayRef>> {
    let n = ends.len();
    let mut values: Vec<Vec<u8>> = vec![Vec::new(); types.len()];
    let mut offsets: Vec<Vec<i32>> = types
        .iter()
        .map(|t| {
            if *t == DataType::Utf8 {
                vec![0]
            } else {
                Vec::new()
            }
        })
        .collect();
    let mut valid: Vec<Vec<bool>> = vec![Vec::with_capacity(n); types.len()];
    let too_long = || Error::Internal("the group keys' strings pass 2 GiB in all".into());
    let mut start = 0;
    for &end in ends {
        let mut key = &bytes[start..end];
        for (c, t) in types.iter().enumerate() {
            if *t == DataType::Utf8 {
                let len = u32::from_le_bytes(key[..4].try_into().expect("4 bytes"));
                key = &key[4..];
                if len == NULL_LEN {
                    valid[c].push(false);
                } else {
                    values[c].extend_from_slice(&key[..len as usize]);
                    key = &key[len as usize..];
                    valid[c].push(true);
                }
                offsets[c].push(i32::try_from(values[c].len()).map_err(|_| too_long())?);
            } else {
                let w = t.primitive_width().unwrap_or(0);
                valid[c].push(key[0] == 1);
                values[c].extend_from_slice(&key[1..1 + w]);
                key = &key[1 + w..];
            }
        }
        start = end;
    }
    let mut out = Vec::with_capacity(types.len());
    for (((t, values), offsets), valid) in types.iter().zip(values).zip(offsets).zip(valid) {
        let nulls = valid.contains(&false).then(|| NullBuffer::from(valid));
        if *t == DataType::Utf8 {
            out.push(kept_strings(offsets, Buffer::from_vec(values), nulls));
        } else {
            let data = ArrayData::builder(t.clone())
                .len(n)
                .add_buffer(Buffer::from_vec(values))
                .nulls(nulls)
                .build()
                .map_err(Error::arrow)?;
            out.push(make_array(data));
        }
    }
    Ok(out)
}

/// The length a slot of a string table keeps for NULL (no string is that
/// long: VARCHAR offsets are 32-bit).
const NULL_LEN: u32 = u32::MAX;

/// The hash of a NULL string key.
const NULL_HASH: u64 = 0x51af_d7ed_558c_cd3d;

/// A key offered to a row table.
#[derive(Clone, Copy)]
enum RowKey<'a> {
    /// A row-encoded key.
    Row(&'a [u8]),
    /// A string of a single VARCHAR key; `None` for NULL.
    Str(Option<&'a [u8]>),
}

impl<'a> RowKey<'a> {
    #[inline]
    fn bytes(self) -> &'a [u8] {
        match self {
            RowKey::Row(bytes) => bytes,
            RowKey::Str(s) => s.unwrap_or(&[]),
        }
    }

    /// The length its slot keeps.
    #[inline]
    fn len(self) -> u32 {
        match self {
            RowKey::Str(None) => NULL_LEN,
            _ => self.bytes().len().min(NULL_LEN as usize - 1) as u32,
        }
    }

    #[inline]
    fn hash(self) -> u64 {
        match self {
            RowKey::Str(None) => NULL_HASH,
            _ => hash_bytes(self.bytes()),
        }
    }
}

/// A batch's keys, as a row table reads them.
enum BatchKeys<'a> {
    Encoded(Rows),
    Strings(&'a StringArray, Option<NullBuffer>),
    /// Packed keys ([`pack_keys`]).
    Packed(Vec<u8>, Vec<usize>),
}

impl BatchKeys<'_> {
    fn len(&self) -> usize {
        match self {
            BatchKeys::Encoded(rows) => rows.num_rows(),
            BatchKeys::Strings(strings, _) => strings.len(),
            BatchKeys::Packed(_, offsets) => offsets.len() - 1,
        }
    }

    #[inline]
    fn key(&self, i: usize) -> RowKey<'_> {
        match self {
            BatchKeys::Encoded(rows) => RowKey::Row(rows.row(i).data()),
            BatchKeys::Packed(bytes, offsets) => RowKey::Row(&bytes[offsets[i]..offsets[i + 1]]),
            BatchKeys::Strings(strings, nulls) => RowKey::Str(
                nulls
                    .as_ref()
                    .is_none_or(|n| n.is_valid(i))
                    .then(|| strings.value(i).as_bytes()),
            ),
        }
    }
}

/// The VARCHAR column of a string table's keys: `bytes`, each group's
/// ending at `ends`, NULL for group `null`.
fn strings_of(bytes: Buffer, ends: &[usize], null: Option<u32>) -> Result<ArrayRef> {
    let too_long = || Error::Internal("the group keys' strings pass 2 GiB in all".into());
    let mut offsets = Vec::with_capacity(ends.len() + 1);
    offsets.push(0i32);
    for &end in ends {
        offsets.push(i32::try_from(end).map_err(|_| too_long())?);
    }
    let nulls = null.map(|g| {
        let mut valid = vec![true; ends.len()];
        valid[g as usize] = false;
        NullBuffer::from(valid)
    });
    Ok(kept_strings(offsets, bytes, nulls))
}

/// A VARCHAR column of strings a group table kept: `bytes`, whole strings
/// of valid VARCHAR arrays one after the other, ending at `offsets` (from
/// 0, ascending).
fn kept_strings(offsets: Vec<i32>, bytes: Buffer, nulls: Option<NullBuffer>) -> ArrayRef {
    // SAFETY: as the caller promises, the offsets ascend from 0 within the
    // bytes and cut them at the ends of valid UTF-8 strings
    let strings = unsafe {
        StringArray::new_unchecked(
            OffsetBuffer::new_unchecked(ScalarBuffer::from(offsets)),
            bytes,
            nulls,
        )
    };
    Arc::new(strings)
}

impl RowKeys {
    /// The bytes of group `id`'s key.
    #[inline]
    fn bytes(&self, id: usize) -> &[u8] {
        match self {
            RowKeys::Encoded { rows, .. } => rows.row(id).data(),
            RowKeys::Strings { bytes, ends, .. } | RowKeys::Packed { bytes, ends, .. } => {
                let start = if id == 0 { 0 } else { ends[id - 1] };
                &bytes[start..ends[id]]
            }
        }
    }

    /// Group `id`'s key, as a batch offers it.
    fn key(&self, id: usize) -> RowKey<'_> {
        match self {
            RowKeys::Encoded { rows, .. } => RowKey::Row(rows.row(id).data()),
            RowKeys::Packed { .. } => RowKey::Row(self.bytes(id)),
            RowKeys::Strings { null, .. } if *null == Some(id as u32) => RowKey::Str(None),
            RowKeys::Strings { .. } => RowKey::Str(Some(self.bytes(id))),
        }
    }

    /// Adds `key` as the next group, `id`.
    fn push(&mut self, key: RowKey<'_>, id: u32) {
        match self {
            RowKeys::Encoded { rows, converter } => {
                // `Rows` only take rows of their own converter: parse the
                // bytes (the same encoding) with ours
                rows.push(converter.parser().parse(key.bytes()));
            }
            RowKeys::Strings { bytes, ends, null } => {
                match key {
                    RowKey::Str(None) => *null = Some(id),
                    key => bytes.extend_from_slice(key.bytes()),
                }
                ends.push(bytes.len());
            }
            RowKeys::Packed { bytes, ends, .. } => {
                bytes.extend_from_slice(key.bytes());
                ends.push(bytes.len());
            }
        }
    }

    fn size(&self) -> usize {
        match self {
            RowKeys::Encoded { rows, .. } => rows.size(),
            RowKeys::Strings { bytes, ends, .. } | RowKeys::Packed { bytes, ends, .. } => {
                bytes.capacity() + ends.capacity() * 8
            }
        }
    }
}

impl RowGroups {
    fn new(types: &[DataType]) -> Result<Self> {
        let keys = if types == [DataType::Utf8] {
            RowKeys::Strings {
                bytes: Vec::new(),
                ends: Vec::new(),
                null: None,
            }
        } else if types.iter().all(packable) {
            RowKeys::Packed {
                types: types.to_vec(),
                bytes: Vec::new(),
                ends: Vec::new(),
            }
        } else {
            let fields = types.iter().map(|t| SortField::new(t.clone())).collect();
            let converter = RowConverter::new(fields).map_err(Error::arrow)?;
            let rows = converter.empty_rows(0, 0);
            RowKeys::Encoded { converter, rows }
        };
        Ok(RowGroups {
            types: types.to_vec(),
            tables: (0..RADIX_BUCKETS).map(|_| HashTable::new()).collect(),
            buckets: Buckets::new(),
            keys,
            hashes: Vec::new(),
        })
    }

    /// The keys of the rows of `columns`.
    fn batch_keys<'a>(&self, columns: &'a [ArrayRef]) -> Result<BatchKeys<'a>> {
        match &self.keys {
            RowKeys::Encoded { converter, .. } => converter
                .convert_columns(columns)
                .map(BatchKeys::Encoded)
                .map_err(Error::arrow),
            RowKeys::Strings { .. } => {
                let strings = columns
                    .first()
                    .and_then(|c| c.as_string_opt::<i32>())
                    .ok_or_else(|| Error::Internal("a string group key of another type".into()))?;
                let nulls = strings.logical_nulls().filter(|n| n.null_count() > 0);
                Ok(BatchKeys::Strings(strings, nulls))
            }
            RowKeys::Packed { types, .. } => {
                let (bytes, offsets) = pack_keys(columns, types)?;
                Ok(BatchKeys::Packed(bytes, offsets))
            }
        }
    }

    /// Whether slot `s` holds `key` (of head `head`): keys of up to 16
    /// bytes are compared in the slot, without reading the key store (one
    /// cache miss per probe instead of three).
    #[inline]
    fn same(keys: &RowKeys, s: &RowSlot, key: RowKey<'_>, head: u128) -> bool {
        let len = key.len();
        s.head == head
            && s.len == len
            && (len <= 16 || len == NULL_LEN || keys.bytes(s.id as usize) == key.bytes())
    }

    /// As [`FixedGroups::radixes`].
    fn radixes(
        &mut self,
        columns: &[ArrayRef],
        out: &mut Vec<u8>,
        stride: usize,
    ) -> Result<(usize, usize)> {
        let batch = self.batch_keys(columns)?;
        let (mut probed, mut held) = (0, 0);
        for i in 0..batch.len() {
            let key = batch.key(i);
            let h = key.hash();
            out.push(radix(h) as u8);
            if stride > 0 && i % stride == 0 {
                let head = key_head(key.bytes());
                let keys = &self.keys;
                probed += 1;
                held += usize::from(
                    self.tables[radix(h)]
                        .find(h, |s| Self::same(keys, s, key, head))
                        .is_some(),
                );
            }
        }
        Ok((probed, held))
    }

    fn group_ids(&mut self, columns: &[ArrayRef], ids: &mut Vec<u32>) -> Result<()> {
        let batch = self.batch_keys(columns)?;
        ids.clear();
        ids.reserve(batch.len());
        let mut last: Option<(RowKey<'_>, u32)> = None;
        for i in 0..batch.len() {
            let key = batch.key(i);
            let id = match last {
                Some((prev, id)) if prev.len() == key.len() && prev.bytes() == key.bytes() => id,
                _ => self.find_or_insert(key, key.hash()),
            };
            last = Some((key, id));
            ids.push(id);
        }
        Ok(())
    }

    /// The id of the group `key` (of hash `hash`), adding it if new.
    fn find_or_insert(&mut self, key: RowKey<'_>, hash: u64) -> u32 {
        let head = key_head(key.bytes());
        let keys = &self.keys;
        let bucket = radix(hash);
        match self.tables[bucket].entry(hash, |s| Self::same(keys, s, key, head), |s| s.hash) {
            Entry::Occupied(slot) => slot.get().id,
            Entry::Vacant(vacant) => {
                let id = self.hashes.len() as u32;
                vacant.insert(RowSlot {
                    hash,
                    head,
                    id,
                    len: key.len(),
                });
                self.keys.push(key, id);
                self.hashes.push(hash);
                self.buckets.push(bucket, id);
                id
            }
        }
    }

    fn adopt(&mut self, base: &Self, b: usize, expected: usize, src: &mut Vec<u32>) {
        src.clear();
        let offset = self.hashes.len() as u32;
        let mut table = base.tables[b].clone();
        table.reserve(expected.saturating_sub(table.len()), |s| s.hash);
        for slot in table.iter_mut() {
            slot.id = offset + base.buckets.local[slot.id as usize];
        }
        self.tables[b] = table;
        for &g in &base.buckets.ids[b] {
            let id = self.hashes.len() as u32;
            src.push(g);
            self.keys.push(base.keys.key(g as usize), id);
            self.hashes.push(base.hashes[g as usize]);
            self.buckets.push(b, id);
        }
    }

    fn merge_bucket(
        &mut self,
        other: &Self,
        b: usize,
        src: &mut Vec<u32>,
        map: &mut Vec<u32>,
    ) -> Result<()> {
        src.clear();
        map.clear();
        for &g in &other.buckets.ids[b] {
            src.push(g);
            let key = other.keys.key(g as usize);
            map.push(self.find_or_insert(key, other.hashes[g as usize]));
        }
        Ok(())
    }

    fn finish(self) -> Result<Vec<ArrayRef>> {
        match self.keys {
            RowKeys::Strings { bytes, ends, null } => {
                Ok(vec![strings_of(Buffer::from_vec(bytes), &ends, null)?])
            }
            RowKeys::Encoded { .. } | RowKeys::Packed { .. } => self.key_arrays(),
        }
    }

    /// Row keys hold any value.
    fn holds(&self, _columns: &[ArrayRef]) -> bool {
        true
    }

    fn types(&self) -> Vec<DataType> {
        self.types.clone()
    }

    fn key_arrays(&self) -> Result<Vec<ArrayRef>> {
        match &self.keys {
            RowKeys::Encoded { converter, rows } => {
                converter.convert_rows(rows.iter()).map_err(Error::arrow)
            }
            RowKeys::Strings { bytes, ends, null } => Ok(vec![strings_of(
                Buffer::from_slice_ref(bytes),
                ends,
                *null,
            )?]),
            RowKeys::Packed { types, bytes, ends } => unpack_keys(types, bytes, ends),
        }
    }

    fn size(&self) -> usize {
        self.keys.size()
            + self.hashes.capacity() * 8
            + self
                .tables
                .iter()
                .map(|t| t.capacity() * (std::mem::size_of::<RowSlot>() + 1))
                .sum::<usize>()
            + self.buckets.size()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use arrow::array::{
        BooleanArray, Date32Array, Decimal128Array, Float64Array, Int32Array, Int64Array,
        StringArray, TimestampMicrosecondArray,
    };
    use arrow::datatypes::TimeUnit;
    use arrow::util::display::array_value_to_string;
    use rand::{Rng, SeedableRng, rngs::StdRng};

    use super::*;

    fn table(types: &[DataType]) -> GroupTable {
        GroupTable::new(types).unwrap()
    }

    #[test]
    fn short_copies_and_key_heads_match_plain_copies() {
        let src: Vec<u8> = (1..=48u8).collect();
        for n in 0..=src.len() {
            let mut dst = vec![0u8; n];
            copy_short(&mut dst, &src[..n]);
            assert_eq!(dst, &src[..n], "{n} bytes");
            let mut head = [0u8; 16];
            head[..n.min(16)].copy_from_slice(&src[..n.min(16)]);
            assert_eq!(key_head(&src[..n]), u128::from_le_bytes(head), "{n} bytes");
        }
    }

    #[test]
    fn packing_in_place_matches_packing_a_copy() {
        let bytes: Vec<u8> = (1..=40u8).collect();
        for start in 0..bytes.len() {
            for end in start..=bytes.len().min(start + SHORT_STRING) {
                assert_eq!(
                    pack_short_at(&bytes, start, end),
                    pack_short(&bytes[start..end]),
                    "bytes {start}..{end}"
                );
            }
        }
    }

    #[test]
    fn strings_of_one_length_pack_as_each_string_alone_would() {
        for len in 0..=TINY_STRING {
            // 40 strings of `len` bytes, cut from a longer array, so the
            // first offset is not 0 and the last strings end the buffer
            let values: Vec<String> = (0..48u8)
                .map(|i| {
                    (0..len as u8)
                        .map(|j| char::from(b'a' + (i + j) % 26))
                        .collect()
                })
                .collect();
            let array = StringArray::from(values);
            let array = array.slice(8, 40);
            let offsets = array.value_offsets();
            assert_eq!(one_length(offsets), Some(len), "length {len}");
            let mut keys = vec![[7u64; 2]; 40];
            pack_tiny_of_length(array.value_data(), offsets[0] as usize, len, &mut keys, 1);
            for (i, k) in keys.iter().enumerate() {
                let (start, end) = (offsets[i] as usize, offsets[i + 1] as usize);
                assert_eq!(
                    k[1],
                    pack_tiny_at(array.value_data(), start, end),
                    "row {i}"
                );
                assert_eq!(k[0], 7, "the other word stays");
            }
        }
        let mixed = StringArray::from(vec!["ab", "cd", "e", "fg"]);
        assert_eq!(one_length(mixed.value_offsets()), None);
        assert_eq!(
            one_length(StringArray::from(Vec::<&str>::new()).value_offsets()),
            None
        );
    }

    /// Each row of `columns` rendered as text (NULL as "NULL").
    fn rendered(columns: &[ArrayRef]) -> Vec<String> {
        (0..columns.first().map_or(0, |c| c.len()))
            .map(|i| {
                columns
                    .iter()
                    .map(|c| {
                        if c.is_null(i) {
                            "NULL".to_owned()
                        } else {
                            array_value_to_string(c, i).unwrap()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("|")
            })
            .collect()
    }

    /// The ids a table numbering groups first seen, first numbered gives
    /// `keys`, after the groups of `want`; adds the new ones to `want`.
    fn first_seen<K: Copy + Eq + std::hash::Hash>(
        want: &mut HashMap<K, u32>,
        keys: &[K],
    ) -> Vec<u32> {
        keys.iter()
            .map(|k| {
                let next = want.len() as u32;
                *want.entry(*k).or_insert(next)
            })
            .collect()
    }

    #[test]
    fn a_one_word_key_finds_its_groups_by_value_while_the_values_stay_close() {
        // batches of BIGINT keys: a window that grows below and above,
        // NULLs, a batch of one value, then one far off that ends the map
        // (or values either side of zero, whose biased words are near:
        // the map stays on); the ids must be the hash table's, first come
        // first numbered
        let mut rng = StdRng::seed_from_u64(21);
        let mut near = |lo: i64, hi: i64, n: usize| -> Vec<Option<i64>> {
            (0..n)
                .map(|_| (rng.random_range(0..8) > 0).then(|| rng.random_range(lo..hi)))
                .collect()
        };
        let first = [
            near(1000, 3000, 500),
            near(0, 1500, 500),
            near(2500, 60_000, 2000),
            vec![Some(7); 40],
            vec![None; 10],
        ];
        // a first batch of the last word alone (-1): no window ends past it
        let mut t = table(&[DataType::Int64]);
        let mut ids = Vec::new();
        let column: ArrayRef = Arc::new(Int64Array::from(vec![Some(-1), None, Some(-1)]));
        t.group_ids(&[column], &mut ids).unwrap();
        assert_eq!(ids, [0, 1, 0]);
        // (too wide, too sparse for its groups; or near, across zero too,
        // and the map stays on to the end)
        let lasts = [
            (vec![Some(1 << 40), Some(5)], false),
            (vec![Some(-3), Some(3)], true),
            (near(0, 1_000_000, 100), false),
            (near(100, 200, 50), true),
        ];
        for (last, stays) in lasts {
            let mut t = table(&[DataType::Int64]);
            let mut want: HashMap<Option<i64>, u32> = HashMap::new();
            let mut ids = Vec::new();
            for (b, keys) in first.iter().chain([&last]).enumerate() {
                let column: ArrayRef = Arc::new(Int64Array::from(keys.clone()));
                t.group_ids(&[column], &mut ids).unwrap();
                assert_eq!(ids, first_seen(&mut want, keys), "batch {b}");
                let GroupTable::Fixed1(f) = &t else {
                    panic!("a BIGINT key is one word")
                };
                let on = matches!(f.direct, Direct::Window { .. });
                assert_eq!(on, b < first.len() || stays, "batch {b}: the map is on");
                // groups the map numbered wait for their buckets until it
                // is given up
                let placed = (0..RADIX_BUCKETS).map(|b| t.bucket_len(b)).sum::<usize>();
                assert_eq!(placed, if on { 0 } else { want.len() }, "batch {b}");
            }
            // sealed: each group once, in id order, in the buckets the
            // merge reads
            t.seal();
            let mut by_id: Vec<(u32, Option<i64>)> =
                want.into_iter().map(|(k, i)| (i, k)).collect();
            by_id.sort_unstable();
            let buckets: usize = (0..RADIX_BUCKETS).map(|b| t.bucket_len(b)).sum();
            assert_eq!(buckets, by_id.len());
            let mut seen = HashSet::new();
            if let GroupTable::Fixed1(f) = &t {
                for table in &f.tables {
                    for slot in table.slots.iter().filter(|s| s.id != EMPTY) {
                        assert_eq!(f.keys[slot.id as usize], slot.key);
                        assert!(seen.insert(slot.id), "group {} placed twice", slot.id);
                    }
                }
            }
            assert_eq!(seen.len(), by_id.len());
            let keys = t.finish().unwrap();
            let got = keys[0].as_primitive::<arrow::datatypes::Int64Type>();
            let got: Vec<Option<i64>> = got.iter().collect();
            assert_eq!(got, by_id.into_iter().map(|(_, k)| k).collect::<Vec<_>>());
        }
    }

    #[test]
    fn keys_at_either_end_of_a_word_find_their_groups() {
        // UBIGINT keys below its greatest value, BIGINT keys either side of
        // zero and near both its ends, DECIMAL(38,0) keys whose low word
        // ends at the word's greatest and grows down (a window of two
        // words, made again as it grows): batch after
        // batch, the ids are the hash table's, and the keys come back as
        // they went in
        let batches =
            |f: &dyn Fn(u64) -> ArrayRef| -> Vec<ArrayRef> { (0..40u64).map(f).collect() };
        let cases: Vec<(DataType, Vec<ArrayRef>)> = vec![
            (
                DataType::UInt64,
                batches(&|b| {
                    Arc::new(arrow::array::UInt64Array::from_iter_values(
                        (0..300u64).map(move |i| u64::MAX - (b * 300 + i) * 3 % 1000),
                    ))
                }),
            ),
            (
                DataType::Int64,
                batches(&|b| {
                    Arc::new(Int64Array::from_iter_values(
                        (0..300i64).map(move |i| (b as i64 * 300 + i) * 7 % 2001 - 1000),
                    ))
                }),
            ),
            (
                DataType::Int64,
                batches(&|b| {
                    Arc::new(Int64Array::from_iter_values((0..300i64).map(move |i| {
                        let v = (b as i64 * 300 + i) % 997;
                        if i % 2 == 0 {
                            i64::MAX - v
                        } else {
                            i64::MIN + v
                        }
                    })))
                }),
            ),
            (
                DataType::Int64,
                batches(&|b| {
                    Arc::new(Int64Array::from_iter_values(
                        (0..300i64).map(move |i| i64::MAX - (b as i64 * 300 + i) % 997),
                    ))
                }),
            ),
            (
                DataType::Decimal128(38, 0),
                batches(&|b| {
                    let values =
                        (0..300i128).map(move |i| i128::from(u64::MAX) - (i128::from(b) * 300 + i));
                    Arc::new(
                        arrow::array::Decimal128Array::from_iter_values(values)
                            .with_precision_and_scale(38, 0)
                            .unwrap(),
                    )
                }),
            ),
        ];
        for (t, columns) in cases {
            let mut table = table(std::slice::from_ref(&t));
            let mut want: HashMap<u64, u32> = HashMap::new();
            let mut ids = Vec::new();
            let mut firsts: Vec<ArrayRef> = Vec::new();
            for (b, column) in columns.iter().enumerate() {
                table.group_ids(&[Arc::clone(column)], &mut ids).unwrap();
                let keys: Vec<u64> = match column.as_primitive_opt::<arrow::datatypes::UInt64Type>()
                {
                    Some(u) => u.values().to_vec(),
                    // (these decimals differ in their low 64 bits)
                    None if t == DataType::Decimal128(38, 0) => column
                        .as_primitive::<arrow::datatypes::Decimal128Type>()
                        .values()
                        .iter()
                        .map(|&v| v as u64)
                        .collect(),
                    None => column
                        .as_primitive::<arrow::datatypes::Int64Type>()
                        .values()
                        .iter()
                        .map(|&v| v as u64)
                        .collect(),
                };
                let before = want.len();
                assert_eq!(ids, first_seen(&mut want, &keys), "{t}, batch {b}");
                for (i, id) in ids.iter().enumerate() {
                    if *id as usize >= before && firsts.len() == *id as usize {
                        firsts.push(column.slice(i, 1));
                    }
                }
            }
            let got = table.finish().unwrap();
            let refs: Vec<&dyn Array> = firsts.iter().map(|a| a.as_ref()).collect();
            let expected = arrow::compute::concat(&refs).unwrap();
            assert_eq!(got[0].as_ref(), expected.as_ref(), "{t}");
        }
    }

    #[test]
    fn a_direct_map_makes_only_the_pages_its_values_reach() {
        // runs of values far apart (within the window's limit): the map
        // stays on, holds a page per run, none between, and numbers the
        // groups as a hash table would
        let runs = [
            (3_000_000i64, 3000),
            (50, 500),
            (6_000_000, 2000),
            (40_000, 100),
        ];
        let mut t = table(&[DataType::Int64]);
        let mut want: HashMap<i64, u32> = HashMap::new();
        let mut ids = Vec::new();
        for &(start, n) in &runs {
            let keys: Vec<i64> = (0..n).map(|i| start + (i * 7919) % n).collect();
            let column: ArrayRef = Arc::new(Int64Array::from(keys.clone()));
            t.group_ids(&[column], &mut ids).unwrap();
            assert_eq!(ids, first_seen(&mut want, &keys), "run at {start}");
        }
        let map = t.direct_map().expect("the map stays on");
        // a value's word is biased
        let word = |v: i64| v as u64 ^ WORD_BIAS;
        let page_of = |v: i64| word(v) - word(v) % DIRECT_PAGE as u64;
        let mut made = HashSet::new();
        for &(start, n) in &runs {
            for v in [start, start + n - 1] {
                let page = map.page(page_of(v)).expect("a page the values reached");
                assert_eq!(page[(word(v) % DIRECT_PAGE as u64) as usize], want[&v]);
                made.insert(page_of(v));
            }
        }
        for v in [1_000_000, 4_500_000, 5_900_000] {
            assert!(
                map.page(page_of(v)).is_none(),
                "a page no value reached: {v}"
            );
        }
        let GroupTable::Fixed1(f) = &t else {
            panic!("a BIGINT key is one word")
        };
        let Direct::Window { made: n, .. } = &f.direct else {
            panic!("the map stays on")
        };
        assert_eq!(*n, made.len());
    }

    #[test]
    fn fixed_width_keys_pack_into_words_and_others_use_rows() {
        use DataType::*;
        let ts = Timestamp(TimeUnit::Microsecond, Some("+01:00".into()));
        assert_eq!(table(&[Int64]).fixed_words(), Some(1));
        // two or more integers take half a word each until one does not
        // fit INTEGER
        assert_eq!(table(&[Int32, Date32, ts.clone()]).fixed_words(), Some(2));
        assert_eq!(
            table(&[Decimal128(38, 2), Int64, Boolean]).fixed_words(),
            Some(3)
        );
        assert_eq!(table(&vec![Decimal128(15, 2); 3]).fixed_words(), None);
        assert_eq!(table(&vec![Int64; 5]).fixed_words(), Some(3));
        assert_eq!(table(&vec![Int64; 9]).fixed_words(), None);
        let whole = |types: &[DataType]| table(types).empty_at(Layout::Wide).unwrap();
        assert_eq!(whole(&[Int32, Date32, ts.clone()]).fixed_words(), Some(3));
        assert_eq!(whole(&vec![Int64; 5]).fixed_words(), None);
        // a VARCHAR takes one word until a string of 8 bytes or more comes
        assert_eq!(table(&[Utf8]).fixed_words(), Some(1));
        assert_eq!(table(&[Int64, Utf8]).fixed_words(), Some(2));
        assert_eq!(table(&[Utf8, Utf8, Utf8]).fixed_words(), Some(3));
        assert_eq!(table(&vec![Utf8; 5]).fixed_words(), None);
        let wide = |types: &[DataType]| {
            GroupTable::with_strings(types, SHORT_STRING)
                .unwrap()
                .fixed_words()
        };
        assert_eq!(wide(&[Utf8]), Some(2));
        assert_eq!(wide(&[Int64, Utf8]), Some(3));
        assert_eq!(wide(&[Utf8, Utf8, Utf8]), None);
        assert_eq!(table(&[LargeUtf8]).fixed_words(), None);
        assert_eq!(table(&[Null]).fixed_words(), None);
    }

    #[test]
    fn fixed_width_keys_round_trip_with_nulls_and_types() {
        // every fixed-width type, NULLs in each column, -0.0 and 0.0 apart
        // (as the row format keeps them)
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int32Array::from(vec![
                Some(1),
                None,
                Some(1),
                Some(-7),
                None,
                Some(1),
            ])),
            Arc::new(Date32Array::from(vec![
                Some(10),
                Some(10),
                Some(10),
                None,
                Some(3),
                Some(10),
            ])),
            Arc::new(
                Decimal128Array::from(vec![
                    Some(i128::MAX / 3),
                    Some(-5),
                    Some(i128::MAX / 3),
                    None,
                    Some(0),
                    Some(i128::MAX / 3),
                ])
                .with_precision_and_scale(38, 2)
                .unwrap(),
            ),
        ];
        let more: Vec<ArrayRef> = vec![
            Arc::new(BooleanArray::from(vec![
                Some(true),
                None,
                Some(true),
                Some(false),
                Some(false),
                Some(true),
            ])),
            Arc::new(Float64Array::from(vec![
                Some(-0.0),
                Some(0.0),
                Some(-0.0),
                None,
                Some(2.5),
                Some(0.0),
            ])),
            Arc::new(
                TimestampMicrosecondArray::from(vec![
                    Some(1),
                    Some(2),
                    Some(1),
                    Some(3),
                    None,
                    Some(1),
                ])
                .with_timezone("+01:00"),
            ),
        ];
        for columns in [columns, more] {
            let ids = round_trip(&columns, |t| assert!(t.fixed_words().is_some()));
            assert_eq!(ids[0], ids[2]);
        }
    }

    /// Groups the rows of `columns` in a new table, checks its layout
    /// with `layout`, that the same rows find the same groups again and
    /// that the finished keys render as the rows did; the rows' groups.
    fn round_trip(columns: &[ArrayRef], layout: impl Fn(&GroupTable)) -> Vec<u32> {
        let types: Vec<DataType> = columns.iter().map(|c| c.data_type().clone()).collect();
        let mut t = table(&types);
        let mut ids = Vec::new();
        t.group_ids(columns, &mut ids).unwrap();
        layout(&t);
        let text = rendered(columns);
        let distinct: HashSet<&String> = text.iter().collect();
        assert_eq!(t.len(), distinct.len(), "{text:?}");
        let mut again = Vec::new();
        t.group_ids(columns, &mut again).unwrap();
        assert_eq!(ids, again);
        let keys = t.finish().unwrap();
        for (k, c) in keys.iter().zip(columns) {
            assert_eq!(k.data_type(), c.data_type());
        }
        let out = rendered(&keys);
        for (i, id) in ids.iter().enumerate() {
            assert_eq!(out[*id as usize], text[i]);
        }
        ids
    }

    #[test]
    fn packed_keys_of_strings_and_fixed_widths_round_trip_with_nulls() {
        // a long string makes a row table; its other keys are packed
        // beside it (a BOOLEAN, which has no byte width, is row-encoded)
        let long: ArrayRef = Arc::new(StringArray::from(vec![
            Some("skipped by the slice"),
            Some("a key past sixteen bytes"),
            None,
            Some("a key past sixteen bytes"),
            Some(""),
            Some("a key past sixteen bytes"),
            Some("a key past sixteen bytes"),
        ]));
        let others: Vec<ArrayRef> = vec![
            Arc::new(Int32Array::from(vec![
                Some(9),
                Some(1),
                None,
                Some(1),
                Some(-7),
                None,
                Some(1),
            ])),
            Arc::new(
                Decimal128Array::from(vec![
                    Some(4),
                    Some(i128::MAX / 3),
                    Some(-5),
                    Some(i128::MAX / 3),
                    None,
                    Some(0),
                    Some(i128::MAX / 3),
                ])
                .with_precision_and_scale(38, 2)
                .unwrap(),
            ),
            Arc::new(Float64Array::from(vec![
                Some(1.0),
                Some(-0.0),
                Some(0.0),
                Some(-0.0),
                None,
                Some(2.5),
                Some(-0.0),
            ])),
            Arc::new(
                TimestampMicrosecondArray::from(vec![
                    Some(0),
                    Some(1),
                    Some(2),
                    Some(1),
                    Some(3),
                    None,
                    Some(1),
                ])
                .with_timezone("+01:00"),
            ),
            Arc::new(StringArray::from(vec![
                Some("x"),
                Some("R"),
                Some("R"),
                Some("R"),
                None,
                Some(""),
                Some("R"),
            ])),
            Arc::new(BooleanArray::from(vec![
                Some(true),
                Some(true),
                None,
                Some(true),
                Some(false),
                Some(true),
                Some(true),
            ])),
        ];
        for with_boolean in [false, true] {
            let mut columns = vec![Arc::clone(&long)];
            columns.extend(
                others
                    .iter()
                    .take(if with_boolean { 6 } else { 5 })
                    .cloned(),
            );
            // a slice: every column's offset is 1
            let columns: Vec<ArrayRef> = columns.iter().map(|c| c.slice(1, 6)).collect();
            let ids = round_trip(&columns, |t| assert_eq!(t.fixed_words(), None));
            assert_eq!(ids[0], ids[2]);
            assert_eq!(ids[2], ids[5]);
        }
    }

    #[test]
    fn small_integers_share_a_word_until_one_does_not_fit() {
        let ints = |a: Vec<Option<i64>>, b: Vec<Option<u32>>| -> Vec<ArrayRef> {
            vec![
                Arc::new(Int64Array::from(a)),
                Arc::new(arrow::array::UInt32Array::from(b)),
            ]
        };
        let (lo, hi) = (i64::from(i32::MIN), i64::from(i32::MAX));
        let first = ints(
            vec![Some(lo), Some(hi), None, Some(-1), Some(0), Some(lo), None],
            vec![Some(0), Some(7), Some(7), None, Some(0), Some(0), None],
        );
        let mut t = table(&[DataType::Int64, DataType::UInt32]);
        assert_eq!((t.fixed_words(), t.layout()), (Some(1), Layout::Tiny));
        let mut ids = Vec::new();
        t.group_ids(&first, &mut ids).unwrap();
        assert_eq!(t.fixed_words(), Some(1), "every value fits half a word");
        // (-1, NULL) and (NULL, 7) are not (0, 0) or (NULL, NULL); the
        // equal rows share their group
        assert_eq!((t.len(), ids[0] == ids[5]), (6, true));
        // one value past INTEGER's range widens the table, keeping ids
        let second = ints(
            vec![Some(hi + 1), Some(-1), Some(lo - 1)],
            vec![Some(7), None, Some(u32::MAX)],
        );
        let mut more = Vec::new();
        t.group_ids(&second, &mut more).unwrap();
        assert_eq!((t.fixed_words(), t.layout()), (Some(2), Layout::Wide));
        assert_eq!(more[1], ids[3]);
        assert_eq!(t.len(), 8);
        let mut again = Vec::new();
        t.group_ids(&first, &mut again).unwrap();
        assert_eq!(again, ids);
        let text: Vec<String> = rendered(&first)
            .into_iter()
            .chain(rendered(&second))
            .collect();
        let out = rendered(&t.finish().unwrap());
        for (i, id) in ids.iter().chain(&more).enumerate() {
            assert_eq!(out[*id as usize], text[i]);
        }
    }

    /// Merges `parts` (tables of the same keys) bucket by bucket as the
    /// merge partitions do; returns the merged table and, per part, each
    /// of its groups' merged id.
    fn merged(parts: &[GroupTable]) -> (GroupTable, Vec<HashMap<u32, u32>>) {
        let mut out = parts[0].empty_like().unwrap();
        let mut maps = vec![HashMap::new(); parts.len()];
        let (mut src, mut map) = (Vec::new(), Vec::new());
        for b in 0..RADIX_BUCKETS {
            let base = (0..parts.len())
                .max_by_key(|&p| parts[p].bucket_len(b))
                .unwrap();
            // sized for every part's groups of the bucket (by turns
            // exactly, too few and none: the tables must grow as needed)
            let expected = match b % 3 {
                0 => parts.iter().map(|p| p.bucket_len(b)).sum(),
                1 => parts[base].bucket_len(b),
                _ => 0,
            };
            let offset = out.len() as u32;
            out.adopt(&parts[base], b, expected, &mut src).unwrap();
            assert_eq!(src.len(), parts[base].bucket_len(b));
            for (i, &g) in src.iter().enumerate() {
                maps[base].insert(g, offset + i as u32);
            }
            for (p, part) in parts.iter().enumerate() {
                if p != base {
                    out.merge_bucket(part, b, &mut src, &mut map).unwrap();
                    assert_eq!(src.len(), part.bucket_len(b));
                    for (&g, &m) in src.iter().zip(&map) {
                        maps[p].insert(g, m);
                    }
                }
            }
        }
        (out, maps)
    }

    #[test]
    fn merged_buckets_hold_each_key_once_for_both_layouts() {
        let mut rng = StdRng::seed_from_u64(7);
        let n = 20_000;
        let a: ArrayRef =
            Arc::new(Int64Array::from_iter((0..n).map(|_| {
                (rng.random_range(0..20) > 0).then(|| rng.random_range(0..3000i64))
            })));
        let b: ArrayRef = Arc::new(Int32Array::from_iter_values(
            (0..n).map(|_| rng.random_range(0..3)),
        ));
        let s: ArrayRef = Arc::new(StringArray::from_iter((0..n).map(|_| {
            (rng.random_range(0..20) > 0).then(|| format!("key-{}", rng.random_range(0..2000)))
        })));
        // past 15 bytes: row keys
        let long: ArrayRef = Arc::new(StringArray::from_iter((0..n).map(|_| {
            (rng.random_range(0..20) > 0)
                .then(|| format!("a key past sixteen bytes {}", rng.random_range(0..2000)))
        })));
        for columns in [
            vec![a.clone(), b.clone()],
            vec![s.clone()],
            vec![s, a.clone()],
            vec![long.clone()],
            vec![long, a],
        ] {
            let types: Vec<DataType> = columns.iter().map(|c| c.data_type().clone()).collect();
            // three lanes, each given a third of the rows
            let mut parts: Vec<GroupTable> = (0..3).map(|_| table(&types)).collect();
            let mut lane_ids = Vec::new();
            for (p, part) in parts.iter_mut().enumerate() {
                let slice: Vec<ArrayRef> = columns
                    .iter()
                    .map(|c| c.slice(p * n / 3, (p + 1) * n / 3 - p * n / 3))
                    .collect();
                let mut ids = Vec::new();
                part.group_ids(&slice, &mut ids).unwrap();
                lane_ids.push((slice, ids));
            }
            // as before a merge: one layout for all
            if parts.iter().any(GroupTable::is_rows) {
                parts.iter_mut().for_each(|p| p.become_rows().unwrap());
            }
            parts.iter_mut().for_each(GroupTable::seal);
            let (out, maps) = merged(&parts);
            let keys = out.finish().unwrap();
            let out_text = rendered(&keys);
            let unique: HashSet<&String> = out_text.iter().collect();
            assert_eq!(unique.len(), out_text.len(), "a key twice in {types:?}");
            let expected: HashSet<String> = rendered(&columns).into_iter().collect();
            assert_eq!(unique.len(), expected.len());
            // every row's lane group maps to the merged group of its key
            for (p, (slice, ids)) in lane_ids.iter().enumerate() {
                for (i, row) in rendered(slice).iter().enumerate() {
                    assert_eq!(&out_text[maps[p][&ids[i]] as usize], row);
                }
            }
        }
    }

    #[test]
    fn short_strings_pack_into_words_and_a_long_one_turns_the_table_into_rows() {
        // empty, NUL-ended, 15-byte and NULL strings are all distinct keys
        let first: Vec<Option<&str>> = vec![
            Some("R"),
            Some(""),
            None,
            Some("a\0"),
            Some("a"),
            Some("fifteen bytes!!"),
            Some("R"),
            Some(""),
        ];
        let flags: ArrayRef = Arc::new(StringArray::from(first.clone()));
        let n: ArrayRef = Arc::new(Int32Array::from(vec![1, 1, 1, 1, 1, 1, 1, 2]));
        let types = vec![DataType::Utf8, DataType::Int32];
        let mut t = table(&types);
        let mut ids = Vec::new();
        t.group_ids(&[flags.clone(), n.clone()], &mut ids).unwrap();
        assert_eq!(t.fixed_words(), Some(3));
        assert_eq!(ids[0], ids[6]);
        assert_eq!(t.len(), 7);
        // a sliced batch with a 16-byte string: the table becomes rows,
        // the groups keep their ids
        let second: ArrayRef = Arc::new(
            StringArray::from(vec![Some("x"), Some("sixteen bytes!!!"), Some("R"), None])
                .slice(1, 3),
        );
        let n2: ArrayRef = Arc::new(Int32Array::from(vec![1, 1, 1]));
        let mut more = Vec::new();
        t.group_ids(&[second.clone(), n2.clone()], &mut more)
            .unwrap();
        assert_eq!(t.fixed_words(), None);
        assert_eq!(more[1], ids[0], "R keeps its group");
        assert_eq!(more[2], ids[2], "NULL keeps its group");
        assert_eq!(more[0], 7);
        let keys = t.finish().unwrap();
        let text = rendered(&keys);
        let expected = rendered(&[flags, n]);
        for (i, id) in ids.iter().enumerate() {
            assert_eq!(text[*id as usize], expected[i]);
        }
        assert_eq!(text[7], "sixteen bytes!!!|1");
    }

    #[test]
    fn a_table_widens_from_one_word_strings_to_two_then_to_rows_keeping_its_ids() {
        let types = vec![DataType::Utf8, DataType::Int32];
        let mut t = table(&types);
        let mut ids = Vec::new();
        // up to 7 bytes: one word each; "seven!!" and "seven!" differ by
        // their length byte, "" and NULL by the NULL mask
        let first: ArrayRef = Arc::new(StringArray::from(vec![
            Some("seven!!"),
            Some("seven!"),
            Some(""),
            None,
            Some("N"),
            Some("seven!!"),
        ]));
        let n: ArrayRef = Arc::new(Int32Array::from(vec![1; 6]));
        t.group_ids(&[first.clone(), n.clone()], &mut ids).unwrap();
        assert_eq!(t.fixed_words(), Some(2));
        assert_eq!(t.layout(), Layout::Tiny);
        assert_eq!(ids, [0, 1, 2, 3, 4, 0]);
        // eight bytes: two words per string, the same ids
        let second: ArrayRef = Arc::new(StringArray::from(vec![
            Some("N"),
            Some("8 bytes!"),
            None,
            Some("seven!"),
        ]));
        let n2: ArrayRef = Arc::new(Int32Array::from(vec![1; 4]));
        let mut more = Vec::new();
        t.group_ids(&[second, n2.clone()], &mut more).unwrap();
        assert_eq!(t.fixed_words(), Some(3));
        assert_eq!(t.layout(), Layout::Wide);
        assert_eq!(more, [4, 5, 3, 1]);
        // sixteen bytes: rows, the same ids
        let third: ArrayRef = Arc::new(StringArray::from(vec![
            Some("sixteen bytes!!!"),
            Some("8 bytes!"),
            Some("seven!!"),
            Some(""),
        ]));
        t.group_ids(&[third, n2], &mut more).unwrap();
        assert_eq!(t.layout(), Layout::Rows);
        assert_eq!(more, [6, 5, 0, 2]);
        let text = rendered(&t.finish().unwrap());
        assert_eq!(
            text,
            [
                "seven!!|1",
                "seven!|1",
                "|1",
                "NULL|1",
                "N|1",
                "8 bytes!|1",
                "sixteen bytes!!!|1"
            ]
        );
    }

    #[test]
    fn one_varchar_key_keeps_its_strings_as_they_are_and_null_apart_from_empty() {
        let mut t = table(&[DataType::Utf8]);
        let first: ArrayRef = Arc::new(StringArray::from(vec![
            Some("a"),
            Some(""),
            None,
            Some("a\0"),
        ]));
        let mut ids = Vec::new();
        t.group_ids(&[first], &mut ids).unwrap();
        assert_eq!(ids, [0, 1, 2, 3]);
        // long strings (a slice: its first offset is not 0) that share
        // their first sixteen bytes turn the table into rows
        let second: ArrayRef = Arc::new(
            StringArray::from(vec![
                Some("skipped"),
                Some("a key past sixteen bytes, one"),
                Some("a key past sixteen bytes, two"),
                None,
                Some(""),
                Some("a key past sixteen bytes, one"),
                Some("a\0"),
            ])
            .slice(1, 6),
        );
        let mut more = Vec::new();
        t.group_ids(&[second], &mut more).unwrap();
        assert_eq!(t.layout(), Layout::Rows);
        assert_eq!(more, [4, 5, 2, 1, 4, 3]);
        let keys = t.finish().unwrap();
        assert_eq!(keys[0].null_count(), 1);
        assert_eq!(
            rendered(&keys),
            [
                "a",
                "",
                "NULL",
                "a\0",
                "a key past sixteen bytes, one",
                "a key past sixteen bytes, two"
            ]
        );
    }

    #[test]
    fn packing_a_tiny_string_reads_past_it_only_inside_the_buffer() {
        let bytes: Vec<u8> = (1..=20u8).collect();
        for start in 0..bytes.len() {
            for end in start..=bytes.len().min(start + TINY_STRING) {
                let word = pack_tiny_at(&bytes, start, end).to_le_bytes();
                assert_eq!(usize::from(word[7]), end - start);
                assert_eq!(&word[..end - start], &bytes[start..end]);
                assert!(
                    word[end - start..7].iter().all(|&b| b == 0),
                    "{start}..{end}"
                );
            }
        }
    }

    #[test]
    fn lanes_of_different_layouts_merge_at_the_widest() {
        let types = vec![DataType::Utf8];
        let tiny: ArrayRef = Arc::new(StringArray::from(vec!["a", "b", "a", "c"]));
        for (other, layout) in [
            ("12 bytes key", Layout::Wide),
            ("a much longer key than that", Layout::Rows),
        ] {
            let other_keys: ArrayRef = Arc::new(StringArray::from(vec!["b", other]));
            let mut parts = vec![table(&types), table(&types)];
            let mut ids = Vec::new();
            parts[0]
                .group_ids(std::slice::from_ref(&tiny), &mut ids)
                .unwrap();
            parts[1]
                .group_ids(std::slice::from_ref(&other_keys), &mut ids)
                .unwrap();
            assert_eq!(parts[0].layout(), Layout::Tiny);
            assert_eq!(parts[1].layout(), layout);
            for p in &mut parts {
                p.widen_to(layout).unwrap();
                assert_eq!(p.layout(), layout);
                p.seal();
            }
            let (out, _) = merged(&parts);
            let mut text = rendered(&out.finish().unwrap());
            text.sort();
            let mut want = ["a", "b", "c", other].map(String::from).to_vec();
            want.sort();
            assert_eq!(text, want);
        }
    }
}
