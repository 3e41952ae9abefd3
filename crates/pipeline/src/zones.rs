//! Zone maps: the least and the greatest value of each block of
//! [`ZONE_ROWS`] rows of an in-memory table's column.
//!
//! A block's zone is computed the first time a scan asks for it and is
//! kept with the table ([`ZoneCache`] in [`TableData`]), so a later query
//! over the same table reads 2 values instead of 2,048. Top-N uses them:
//! once a lane's k-th best key is known, a block whose zone cannot beat
//! it is never read (the dynamic filter DuckDB pushes into its scans).
//!
//! Values are compared as `i128` keys in the order Arrow's comparison
//! kernels and row format use: integers, dates, times, timestamps and
//! decimals as their numbers, floats in IEEE total order (`-0.0 < 0.0`,
//! NaN greatest), so a zone never disagrees with the filter it stands in
//! for. A VARCHAR's key is its first 16 bytes (zeros past its end), in
//! byte order: a block's zone then bounds its strings' heads, which is
//! enough to leave out a block whose every string is worse than a bound
//! (a string worse than `t` has a head no better than `t`'s), though not
//! to name a row holding the zone's end ([`ZoneCache::bound`] has none).
//! Other types have no zones.
//!
//! [`TableData`]: crate::source::TableData

use std::ops::Range;
use std::sync::{Arc, Mutex, OnceLock};

use arrow::array::{Array, ArrayRef, ArrowNativeTypeOp, AsArray, PrimitiveArray, RecordBatch};
use arrow::datatypes::Schema;
use arrow::datatypes::{
    ArrowPrimitiveType, DataType, Date32Type, Date64Type, Decimal128Type, Float32Type, Float64Type,
    Int8Type, Int16Type, Int32Type, Int64Type, Time32MillisecondType, Time32SecondType,
    Time64MicrosecondType, Time64NanosecondType, TimeUnit, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType, UInt8Type, UInt16Type,
    UInt32Type, UInt64Type,
};
use weir_planner::{BinaryOp, Expr};

/// A WHERE term `column op constant` that a block's zone can rule out:
/// no row of a block whose zone fails the test passes the term (a NULL
/// passes no comparison). Only integers, dates, timestamps and decimals
/// compared with a constant of the column's own type: their zone keys
/// are their values (a DOUBLE's -0.0 and 0.0 have two keys but compare
/// equal; a string's key is its head).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ZoneFilter {
    pub(crate) column: usize,
    op: ZoneOp,
    value: i128,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ZoneOp {
    Lt,
    LtEq,
    Gt,
    GtEq,
    Eq,
}

impl ZoneFilter {
    /// The test of `term` (a conjunct of a filter over rows of `input`),
    /// if it has one.
    pub(crate) fn of(term: &Expr, input: &Schema) -> Option<Self> {
        let Expr::Binary { op, left, right } = term else {
            return None;
        };
        let (column, constant, op) = match (&**left, &**right) {
            (Expr::Column(c), Expr::Literal(v)) => (c.index, v, *op),
            // `constant op column` is `column op' constant`
            (Expr::Literal(v), Expr::Column(c)) => (
                c.index,
                v,
                match op {
                    BinaryOp::Lt => BinaryOp::Gt,
                    BinaryOp::LtEq => BinaryOp::GtEq,
                    BinaryOp::Gt => BinaryOp::Lt,
                    BinaryOp::GtEq => BinaryOp::LtEq,
                    other => *other,
                },
            ),
            _ => return None,
        };
        let op = match op {
            BinaryOp::Lt => ZoneOp::Lt,
            BinaryOp::LtEq => ZoneOp::LtEq,
            BinaryOp::Gt => ZoneOp::Gt,
            BinaryOp::GtEq => ZoneOp::GtEq,
            BinaryOp::Eq => ZoneOp::Eq,
            _ => return None,
        };
        let data_type = input.fields().get(column)?.data_type();
        let exact = data_type.is_integer()
            || matches!(
                data_type,
                DataType::Date32
                    | DataType::Date64
                    | DataType::Timestamp(_, _)
                    | DataType::Decimal128(_, _)
            );
        if !exact {
            return None;
        }
        let array = weir_expr::scalar_to_array(constant, 1).ok()?;
        if array.data_type() != data_type {
            return None;
        }
        // (a NULL constant has no key: the term passes no row, and the
        // filter itself says so)
        let value = key_of(&array, 0)?;
        Some(ZoneFilter { column, op, value })
    }

    /// Whether a row of a block of zone `zone` may pass the term.
    pub(crate) fn keeps(&self, zone: &Zone) -> bool {
        let v = self.value;
        zone.min <= zone.max
            && match self.op {
                ZoneOp::Lt => zone.min < v,
                ZoneOp::LtEq => zone.min <= v,
                ZoneOp::Gt => zone.max > v,
                ZoneOp::GtEq => zone.max >= v,
                ZoneOp::Eq => zone.min <= v && v <= zone.max,
            }
    }
}

/// The rows both `a` and `b` hold (each sorted, disjoint ranges).
pub(crate) fn both(a: &[Range<usize>], b: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let (from, to) = (a[i].start.max(b[j].start), a[i].end.min(b[j].end));
        if from < to {
            out.push(from..to);
        }
        if a[i].end < b[j].end {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// Rows per zone.
pub(crate) const ZONE_ROWS: usize = 2048;

/// One block's values: `min > max` when it holds no non-NULL value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Zone {
    pub(crate) min: i128,
    pub(crate) max: i128,
    pub(crate) nulls: bool,
}

/// The zones of a table's columns, filled in as scans ask for them.
#[derive(Default)]
pub(crate) struct ZoneCache {
    /// Per column (allocated on first use): each block's zone, blocks
    /// numbered over the batches in order.
    columns: OnceLock<Box<[OnceLock<Option<ColumnZones>>]>>,
}

impl Clone for ZoneCache {
    /// An empty cache: a copy of a table may be changed, so its zones are
    /// computed again.
    fn clone(&self) -> Self {
        ZoneCache::default()
    }
}

impl std::fmt::Debug for ZoneCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ZoneCache")
    }
}

/// One column's zones.
struct ColumnZones {
    /// The number of the first block of each batch.
    first_block: Vec<usize>,
    blocks: Box<[OnceLock<Zone>]>,
    /// Top-N bounds ([`ZoneCache::bound`]) found once every block had its
    /// zone, by `(k, desc)`: they hold until the table changes (a changed
    /// table has a new cache), so a repeated top-N asks no zone again.
    bounds: Mutex<Vec<(usize, bool, ArrayRef)>>,
}

/// Blocks [`ZoneCache::clustered`] looks at.
const CLUSTER_BLOCKS: usize = 16;

impl ZoneCache {
    /// Whether `column`'s values look clustered (in order, or in runs)
    /// over the first blocks of the first batch: a block's values span on
    /// average at most a quarter of what those blocks span together.
    /// Scattered values put nearly all of that in every block, and zones
    /// would rule none out: computing them for a filter would cost a pass
    /// over the column and save nothing. A table of one block, or none
    /// with a value, counts as clustered (its zones cost nothing);
    /// `None` when the column's type has no zones.
    pub(crate) fn clustered(&self, batches: &[RecordBatch], column: usize) -> Option<bool> {
        let rows = batches.first().map_or(0, RecordBatch::num_rows);
        let seen = std::cell::RefCell::new(Vec::new());
        self.surviving(
            batches,
            column,
            0,
            0..rows.min(CLUSTER_BLOCKS * ZONE_ROWS),
            |z| {
                seen.borrow_mut().push(*z);
                true
            },
        )?;
        let zones: Vec<Zone> = seen
            .into_inner()
            .into_iter()
            .filter(|z| z.min <= z.max)
            .collect();
        if zones.len() < 2 {
            return Some(true);
        }
        let span = |lo: i128, hi: i128| hi as f64 - lo as f64;
        let least = zones.iter().map(|z| z.min).min()?;
        let greatest = zones.iter().map(|z| z.max).max()?;
        let each: f64 = zones.iter().map(|z| span(z.min, z.max)).sum::<f64>() / zones.len() as f64;
        Some(each * 4.0 <= span(least, greatest))
    }

    /// The blocks of rows `rows` of batch `batch` (of `batches`) in column
    /// `column` that may hold a value `keep` accepts, as row ranges
    /// relative to `rows.start`, in order; `None` when the column's type
    /// has no zones. `keep` sees each overlapping block's zone once.
    pub(crate) fn surviving(
        &self,
        batches: &[RecordBatch],
        column: usize,
        batch: usize,
        rows: Range<usize>,
        keep: impl Fn(&Zone) -> bool,
    ) -> Option<Vec<Range<usize>>> {
        let columns = self.columns.get_or_init(|| {
            let width = batches.first().map_or(0, RecordBatch::num_columns);
            (0..width).map(|_| OnceLock::new()).collect()
        });
        let zones = columns
            .get(column)?
            .get_or_init(|| ColumnZones::new(batches, column))
            .as_ref()?;
        let values = batches.get(batch)?.column(column);
        let mut out: Vec<Range<usize>> = Vec::new();
        if rows.is_empty() {
            return Some(out);
        }
        for block in rows.start / ZONE_ROWS..rows.end.div_ceil(ZONE_ROWS) {
            let span = block * ZONE_ROWS..((block + 1) * ZONE_ROWS).min(values.len());
            let zone = zones.blocks[zones.first_block[batch] + block]
                .get_or_init(|| zone_of(values, span.clone()).expect("a type with zones"));
            if !keep(zone) {
                continue;
            }
            let part = span.start.max(rows.start) - rows.start..span.end.min(rows.end) - rows.start;
            match out.last_mut() {
                Some(last) if last.end == part.start => last.end = part.end,
                _ => out.push(part),
            }
        }
        Some(out)
    }

    /// A first-key bound for a top-N of `k` rows over every row of the
    /// table, from the zones of `column` computed so far (none is
    /// computed here): the `k`-th best of their greatest values (`desc`)
    /// or least (ascending), as a one-row slice of the column. Each
    /// zone's greatest and least value is a row of its block, so `k`
    /// rows at least are that good, and no row worse can make the cut.
    /// A string zone holds heads, which name no row: for a VARCHAR (`k`
    /// up to [`STRING_BOUND_BLOCKS`]) the bound is the worst of the best
    /// strings of the `k` blocks of the best heads, each read whole.
    /// `None` with fewer than `k` zones of values.
    pub(crate) fn bound(
        &self,
        batches: &[RecordBatch],
        column: usize,
        k: usize,
        desc: bool,
    ) -> Option<ArrayRef> {
        let zones = self.columns.get()?.get(column)?.get()?.as_ref()?;
        let cached = |bounds: &Vec<(usize, bool, ArrayRef)>| {
            bounds
                .iter()
                .find(|(bk, bd, _)| *bk == k && *bd == desc)
                .map(|(_, _, b)| Arc::clone(b))
        };
        let mut bounds = zones.bounds.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(b) = cached(&bounds) {
            return Some(b);
        }
        let complete = zones.blocks.iter().all(|z| z.get().is_some());
        let bound = Self::find_bound(zones, batches, column, k, desc)?;
        if complete {
            bounds.push((k, desc, Arc::clone(&bound)));
        }
        Some(bound)
    }

    /// [`Self::bound`] from `zones`, found again.
    fn find_bound(
        zones: &ColumnZones,
        batches: &[RecordBatch],
        column: usize,
        k: usize,
        desc: bool,
    ) -> Option<ArrayRef> {
        let strings = batches.first()?.column(column).data_type() == &DataType::Utf8;
        if strings && k > STRING_BOUND_BLOCKS {
            return None;
        }
        // the better end of each zone with values, and its block
        let mut ends: Vec<(i128, usize)> = zones
            .blocks
            .iter()
            .enumerate()
            .filter_map(|(b, z)| {
                let z = z.get().filter(|z| z.min <= z.max)?;
                Some((if desc { z.max } else { z.min }, b))
            })
            .collect();
        if k == 0 || ends.len() < k {
            return None;
        }
        let (best, &mut (value, block), _) = if desc {
            ends.select_nth_unstable_by(k - 1, |a, b| b.0.cmp(&a.0))
        } else {
            ends.select_nth_unstable_by(k - 1, |a, b| a.0.cmp(&b.0))
        };
        // the batch of a block, and its rows
        let rows_of = |block: usize| -> Option<(&ArrayRef, Range<usize>)> {
            let batch = zones.first_block.partition_point(|&f| f <= block) - 1;
            let values = batches.get(batch)?.column(column);
            let first = (block - zones.first_block[batch]) * ZONE_ROWS;
            Some((values, first..(first + ZONE_ROWS).min(values.len())))
        };
        if strings {
            // a string zone holds heads, not strings: the best string of
            // each of the k blocks of the best heads (a row each), and the
            // worst of those
            let mut bound: Option<(&ArrayRef, usize)> = None;
            for &(_, b) in best.iter().chain(std::iter::once(&(value, block))) {
                let (values, rows) = rows_of(b)?;
                let values_s = values.as_string_opt::<i32>()?;
                let better = |i: usize, j: usize| {
                    let (x, y) = (values_s.value(i), values_s.value(j));
                    if desc { x > y } else { x < y }
                };
                let mut top: Option<usize> = None;
                for i in rows.filter(|&i| values.is_valid(i)) {
                    if top.is_none_or(|t| better(i, t)) {
                        top = Some(i);
                    }
                }
                let top = top?;
                let worse = |(v, r): (&ArrayRef, usize)| {
                    let (x, y) = (v.as_string::<i32>().value(r), values_s.value(top));
                    if desc { y < x } else { y > x }
                };
                if bound.is_none_or(worse) {
                    bound = Some((values, top));
                }
            }
            let (values, row) = bound?;
            return Some(values.slice(row, 1));
        }
        // the row of the block holding the value
        let (values, rows) = rows_of(block)?;
        let row = rows.clone().find(|&i| key_of(values, i) == Some(value))?;
        Some(values.slice(row, 1))
    }
}

/// The most rows a top-N by a string may ask [`ZoneCache::bound`] for: it
/// reads the strings of that many blocks.
const STRING_BOUND_BLOCKS: usize = 64;

impl ColumnZones {
    fn new(batches: &[RecordBatch], column: usize) -> Option<Self> {
        let data_type = batches.first()?.column(column).data_type();
        if !has_zones(data_type) {
            return None;
        }
        let mut first_block = Vec::with_capacity(batches.len());
        let mut total = 0;
        for b in batches {
            first_block.push(total);
            total += b.num_rows().div_ceil(ZONE_ROWS);
        }
        Some(ColumnZones {
            first_block,
            blocks: (0..total).map(|_| OnceLock::new()).collect(),
            bounds: Mutex::new(Vec::new()),
        })
    }
}

/// A float's bits as an integer in IEEE total order.
fn total_order_64(v: f64) -> i128 {
    let bits = v.to_bits() as i64;
    i128::from(bits ^ (((bits >> 63) as u64) >> 1) as i64)
}

fn total_order_32(v: f32) -> i128 {
    let bits = v.to_bits() as i32;
    i128::from(bits ^ (((bits >> 31) as u32) >> 1) as i32)
}

/// Calls `$body` with `$a` bound to `$array` as the primitive array of its
/// type and `$key` a function from its native values to `i128` keys;
/// `$none` for a type without zones.
macro_rules! with_keys {
    ($array:expr, $a:ident, $key:ident => $body:expr, $none:expr) => {{
        macro_rules! go {
            ($t:ty, $f:expr) => {{
                let $a: &PrimitiveArray<$t> = $array.as_primitive::<$t>();
                let $key = $f;
                $body
            }};
        }
        match $array.data_type() {
            DataType::Int8 => go!(Int8Type, |v: i8| i128::from(v)),
            DataType::Int16 => go!(Int16Type, |v: i16| i128::from(v)),
            DataType::Int32 => go!(Int32Type, |v: i32| i128::from(v)),
            DataType::Int64 => go!(Int64Type, |v: i64| i128::from(v)),
            DataType::UInt8 => go!(UInt8Type, |v: u8| i128::from(v)),
            DataType::UInt16 => go!(UInt16Type, |v: u16| i128::from(v)),
            DataType::UInt32 => go!(UInt32Type, |v: u32| i128::from(v)),
            DataType::UInt64 => go!(UInt64Type, |v: u64| i128::from(v)),
            DataType::Float32 => go!(Float32Type, total_order_32),
            DataType::Float64 => go!(Float64Type, total_order_64),
            DataType::Date32 => go!(Date32Type, |v: i32| i128::from(v)),
            DataType::Date64 => go!(Date64Type, |v: i64| i128::from(v)),
            DataType::Time32(TimeUnit::Second) => go!(Time32SecondType, |v: i32| i128::from(v)),
            DataType::Time32(_) => go!(Time32MillisecondType, |v: i32| i128::from(v)),
            DataType::Time64(TimeUnit::Microsecond) => {
                go!(Time64MicrosecondType, |v: i64| i128::from(v))
            }
            DataType::Time64(_) => go!(Time64NanosecondType, |v: i64| i128::from(v)),
            DataType::Timestamp(TimeUnit::Second, _) => {
                go!(TimestampSecondType, |v: i64| i128::from(v))
            }
            DataType::Timestamp(TimeUnit::Millisecond, _) => {
                go!(TimestampMillisecondType, |v: i64| i128::from(v))
            }
            DataType::Timestamp(TimeUnit::Microsecond, _) => {
                go!(TimestampMicrosecondType, |v: i64| i128::from(v))
            }
            DataType::Timestamp(TimeUnit::Nanosecond, _) => {
                go!(TimestampNanosecondType, |v: i64| i128::from(v))
            }
            DataType::Decimal128(_, _) => go!(Decimal128Type, |v: i128| v),
            _ => $none,
        }
    }};
}

/// Whether values of `data_type` have `i128` keys (the types
/// [`with_keys!`] knows, and VARCHAR), without making an array of it (a
/// test checks this list against the macro's).
pub(crate) fn has_zones(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Utf8
            | DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64
            | DataType::Float32
            | DataType::Float64
            | DataType::Date32
            | DataType::Date64
            | DataType::Time32(_)
            | DataType::Time64(_)
            | DataType::Timestamp(_, _)
            | DataType::Decimal128(_, _)
    )
}

/// A string's key: its first 16 bytes, zeros past its end, as a
/// big-endian number moved into `i128`'s range (byte order kept).
#[inline]
fn string_key(bytes: &[u8]) -> i128 {
    let mut head = [0u8; 16];
    let n = bytes.len().min(16);
    head[..n].copy_from_slice(&bytes[..n]);
    (u128::from_be_bytes(head) ^ (1 << 127)) as i128
}

/// Value `i` of `array` as a key; `None` when it is NULL or the type has
/// no keys.
pub(crate) fn key_of(array: &ArrayRef, i: usize) -> Option<i128> {
    if i >= array.len() || array.is_null(i) {
        return None;
    }
    if let Some(strings) = array.as_string_opt::<i32>() {
        return Some(string_key(strings.value(i).as_bytes()));
    }
    with_keys!(array, a, key => Some(key(a.value(i))), None)
}

/// Every value of `array` as a key (a NULL's is whatever its slot
/// holds); `None` for VARCHAR (whose keys are heads only) and types
/// without keys.
pub(crate) fn keys_of(array: &ArrayRef) -> Option<Vec<i128>> {
    with_keys!(array, a, key => Some(a.values().iter().map(|&v| key(v)).collect()), None)
}

/// The zone of rows `span` of `array`; `None` for a type without keys.
fn zone_of(array: &ArrayRef, span: Range<usize>) -> Option<Zone> {
    if let Some(strings) = array.as_string_opt::<i32>() {
        let (mut min, mut max) = (i128::MAX, i128::MIN);
        let mut nulls = false;
        let valid = strings.nulls().filter(|n| n.null_count() > 0);
        for i in span {
            if valid.is_some_and(|v| v.is_null(i)) {
                nulls = true;
            } else {
                let k = string_key(strings.value(i).as_bytes());
                min = min.min(k);
                max = max.max(k);
            }
        }
        return Some(Zone { min, max, nulls });
    }
    /// The least and greatest values compared in the native type (its
    /// `is_lt`, IEEE total order for floats, is the keys' order), then
    /// keyed: a loop of selects that vectorises.
    fn fold<T: ArrowPrimitiveType>(
        a: &PrimitiveArray<T>,
        span: Range<usize>,
        key: impl Fn(T::Native) -> i128,
    ) -> Zone {
        let values = &a.values()[span.clone()];
        let least_greatest = |(lo, hi): (T::Native, T::Native), v: T::Native| {
            (
                if v.is_lt(lo) { v } else { lo },
                if hi.is_lt(v) { v } else { hi },
            )
        };
        let (range, nulls) = match a.nulls().filter(|n| n.null_count() > 0) {
            None => (
                values.first().map(|&first| {
                    values
                        .iter()
                        .fold((first, first), |r, &v| least_greatest(r, v))
                }),
                false,
            ),
            Some(valid) => {
                let mut range = None;
                let mut nulls = false;
                for (i, &v) in span.zip(values) {
                    if valid.is_valid(i) {
                        range = Some(range.map_or((v, v), |r| least_greatest(r, v)));
                    } else {
                        nulls = true;
                    }
                }
                (range, nulls)
            }
        };
        match range {
            Some((lo, hi)) => Zone {
                min: key(lo),
                max: key(hi),
                nulls,
            },
            None => Zone {
                min: i128::MAX,
                max: i128::MIN,
                nulls,
            },
        }
    }
    with_keys!(array, a, key => Some(fold(a, span, key)), None)
}

#[cfg(test)]
// the ranges are the answer: a list that happens to hold one
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{Decimal128Array, Float64Array, Int32Array, Int64Array, StringArray};
    use arrow::datatypes::{Field, Schema};

    use super::*;

    #[test]
    fn has_zones_names_the_types_with_keys() {
        use arrow::datatypes::TimeUnit;
        let types = [
            DataType::Null,
            DataType::Boolean,
            DataType::Int8,
            DataType::Int16,
            DataType::Int32,
            DataType::Int64,
            DataType::UInt8,
            DataType::UInt16,
            DataType::UInt32,
            DataType::UInt64,
            DataType::Float16,
            DataType::Float32,
            DataType::Float64,
            DataType::Date32,
            DataType::Date64,
            DataType::Time32(TimeUnit::Second),
            DataType::Time32(TimeUnit::Millisecond),
            DataType::Time64(TimeUnit::Microsecond),
            DataType::Time64(TimeUnit::Nanosecond),
            DataType::Timestamp(TimeUnit::Second, None),
            DataType::Timestamp(TimeUnit::Millisecond, None),
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            DataType::Timestamp(TimeUnit::Nanosecond, None),
            DataType::Decimal128(15, 2),
            DataType::Decimal256(40, 2),
            DataType::Utf8,
            DataType::LargeUtf8,
            DataType::Utf8View,
            DataType::Binary,
            DataType::Interval(arrow::datatypes::IntervalUnit::MonthDayNano),
        ];
        for t in types {
            let empty = arrow::array::new_empty_array(&t);
            let keyed = t == DataType::Utf8 || with_keys!(empty, _a, _key => true, false);
            assert_eq!(has_zones(&t), keyed, "{t}");
        }
    }

    #[test]
    fn a_column_in_order_or_in_runs_looks_clustered_and_a_scattered_one_does_not() {
        let of = |values: Vec<i64>| {
            let b = batch(Arc::new(arrow::array::Int64Array::from(values)));
            ZoneCache::default().clustered(&[b], 0)
        };
        let n = 40_000i64;
        assert_eq!(of((0..n).collect()), Some(true), "in order");
        assert_eq!(of((0..n).rev().collect()), Some(true), "descending");
        assert_eq!(
            of((0..n).map(|i| i / 3000 * 1000 + i % 7).collect()),
            Some(true),
            "runs"
        );
        assert_eq!(
            of((0..n).map(|i| i * 7919 % n).collect()),
            Some(false),
            "scattered"
        );
        assert_eq!(of((0..n).map(|i| i % 997).collect()), Some(false), "cycles");
        assert_eq!(of((0..100).collect()), Some(true), "one block");
        let strings = batch(Arc::new(StringArray::from(vec!["a"; 10])));
        assert_eq!(ZoneCache::default().clustered(&[strings], 0), Some(true));
        let bools = batch(Arc::new(arrow::array::BooleanArray::from(vec![true; 10])));
        assert_eq!(ZoneCache::default().clustered(&[bools], 0), None);
    }

    fn batch(values: ArrayRef) -> RecordBatch {
        let schema = Schema::new(vec![Field::new("v", values.data_type().clone(), true)]);
        RecordBatch::try_new(Arc::new(schema), vec![values]).unwrap()
    }

    #[test]
    fn blocks_that_cannot_hold_a_wanted_value_are_left_out() {
        // block 0 holds 0..2048, block 1 holds 10_000.., block 2 NULLs and 5
        let mut values: Vec<Option<i32>> = (0..2048).map(Some).collect();
        values.extend((0..2048).map(|i| Some(10_000 + i)));
        values.extend((0..100).map(|i| if i == 7 { Some(5) } else { None }));
        let batches = vec![batch(Arc::new(Int32Array::from(values)))];
        let cache = ZoneCache::default();
        let all = 0..batches[0].num_rows();
        let over = |t: i128| move |z: &Zone| z.max >= t;
        assert_eq!(
            cache.surviving(&batches, 0, 0, all.clone(), over(10_000)),
            Some(vec![2048..4096])
        );
        assert_eq!(
            cache.surviving(&batches, 0, 0, all.clone(), over(5)),
            Some(vec![0..4196])
        );
        assert_eq!(
            cache.surviving(&batches, 0, 0, all.clone(), |z: &Zone| z.nulls),
            Some(vec![4096..4196])
        );
        // a range that starts and ends inside blocks: parts relative to it
        assert_eq!(
            cache.surviving(&batches, 0, 0, 2000..2100, over(10_000)),
            Some(vec![48..100])
        );
        assert_eq!(
            cache.surviving(&batches, 0, 0, 10..20, over(1 << 40)),
            Some(vec![])
        );
    }

    #[test]
    fn zones_are_numbered_over_batches() {
        let first = batch(Arc::new(Int32Array::from_iter_values(0..3000)));
        let second = batch(Arc::new(Int32Array::from_iter_values(5000..9000)));
        let batches = vec![first, second];
        let cache = ZoneCache::default();
        let over = |z: &Zone| z.max >= 7000;
        assert_eq!(cache.surviving(&batches, 0, 0, 0..3000, over), Some(vec![]));
        assert_eq!(
            cache.surviving(&batches, 0, 1, 0..4000, over),
            Some(vec![0..4000])
        );
        // the second batch's second block holds 7048..9000
        assert_eq!(
            cache.surviving(&batches, 0, 1, 2048..4000, |z: &Zone| z.min >= 7048),
            Some(vec![0..1952])
        );
        assert_eq!(
            cache.surviving(&batches, 0, 1, 2048..4000, |z: &Zone| z.min > 7048),
            Some(vec![])
        );
    }

    #[test]
    fn keys_keep_the_order_of_the_comparison_kernels() {
        let floats: ArrayRef = Arc::new(Float64Array::from(vec![
            f64::NEG_INFINITY,
            -1.5,
            -0.0,
            0.0,
            2.0,
            f64::INFINITY,
            f64::NAN,
        ]));
        let keys: Vec<i128> = (0..floats.len())
            .map(|i| key_of(&floats, i).unwrap())
            .collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "{keys:?}");
        let decimals: ArrayRef = Arc::new(
            Decimal128Array::from(vec![Some(-5), None, Some(1234)])
                .with_precision_and_scale(15, 2)
                .unwrap(),
        );
        assert_eq!(key_of(&decimals, 0), Some(-5));
        assert_eq!(key_of(&decimals, 1), None);
        assert_eq!(key_of(&decimals, 2), Some(1234));
        use arrow::datatypes::TimeUnit;
        for t in [
            DataType::Int8,
            DataType::UInt64,
            DataType::Float32,
            DataType::Date32,
            DataType::Time32(TimeUnit::Millisecond),
            DataType::Time64(TimeUnit::Nanosecond),
            DataType::Timestamp(TimeUnit::Microsecond, None),
            DataType::Decimal128(15, 2),
        ] {
            assert!(has_zones(&t), "{t}");
        }
        for t in [DataType::Boolean, DataType::Null, DataType::LargeUtf8] {
            assert!(!has_zones(&t), "{t}");
        }
        let booleans: ArrayRef = Arc::new(arrow::array::BooleanArray::from(vec![true]));
        assert_eq!(key_of(&booleans, 0), None);
        let batches = vec![batch(booleans)];
        assert_eq!(
            ZoneCache::default().surviving(&batches, 0, 0, 0..1, |_| true),
            None
        );
    }

    #[test]
    fn string_zones_never_leave_out_a_block_holding_a_wanted_string() {
        // strings that share their first 16 bytes or more, differ past
        // them, are prefixes of each other, end in zero bytes, or are
        // empty or NULL, in blocks of mixed order
        let words = [
            "",
            "a",
            "a\0",
            "ab",
            "Tiresias ",
            "Tiresias",
            " Tiresias about the",
            " Tiresias ",
            " Tiresias about th",
            "sixteen bytes!!!",
            "sixteen bytes!!!a",
            "sixteen bytes!!",
            "zz",
            "\u{e9}t\u{e9}",
        ];
        // each block holds a few of the words (and NULLs), so a block
        // wrongly left out is missed
        let n = 4 * ZONE_ROWS + 100;
        let values: Vec<Option<&str>> = (0..n)
            .map(|i| {
                let of_block = &words[(i / ZONE_ROWS * 3) % words.len()..];
                let w = (i * 7919) % (of_block.len().min(4) + 1);
                of_block.get(w).copied().filter(|_| w < 4)
            })
            .collect();
        let array: ArrayRef = Arc::new(StringArray::from(values.clone()));
        let batches = vec![batch(Arc::clone(&array))];
        let cache = ZoneCache::default();
        for t in words {
            let bound: ArrayRef = Arc::new(StringArray::from(vec![t]));
            let key = key_of(&bound, 0).unwrap();
            for (at_most, test) in [
                (
                    true,
                    Box::new(move |z: &Zone| z.min <= key) as Box<dyn Fn(&Zone) -> bool>,
                ),
                (false, Box::new(move |z: &Zone| z.max >= key)),
            ] {
                let kept = cache.surviving(&batches, 0, 0, 0..n, test).unwrap();
                for (i, v) in values.iter().enumerate() {
                    let wanted = v.is_some_and(|v| if at_most { v <= t } else { v >= t });
                    if wanted {
                        assert!(
                            kept.iter().any(|r| r.contains(&i)),
                            "row {i} ({v:?}) left out against {t:?}, at most {at_most}"
                        );
                    }
                }
            }
        }
        // a block of strings all worse than the bound is left out
        let far: ArrayRef = Arc::new(StringArray::from_iter_values(
            (0..ZONE_ROWS).map(|i| format!("zebra {i}")),
        ));
        let batches = vec![batch(far)];
        let key = string_key(b"yak");
        assert_eq!(
            ZoneCache::default().surviving(&batches, 0, 0, 0..ZONE_ROWS, |z| z.min <= key),
            Some(vec![])
        );
        assert_eq!(ZoneCache::default().bound(&batches, 0, 1, false), None);
    }

    #[test]
    fn a_bound_is_kept_once_every_zone_is_known() {
        let n = 4 * ZONE_ROWS;
        let array: ArrayRef = Arc::new(Int64Array::from_iter_values(0..n as i64));
        let batches = vec![batch(array)];
        let cache = ZoneCache::default();
        let kept = |cache: &ZoneCache| {
            let zones = cache.columns.get().unwrap()[0]
                .get()
                .unwrap()
                .as_ref()
                .unwrap();
            zones.bounds.lock().unwrap().len()
        };
        let first = |b: ArrayRef| b.as_primitive::<Int64Type>().value(0);
        // two blocks' zones known: their bound, not kept
        cache
            .surviving(&batches, 0, 0, 0..2 * ZONE_ROWS, |_| true)
            .unwrap();
        let partial = cache.bound(&batches, 0, 1, true).unwrap();
        assert_eq!(first(partial), 2 * ZONE_ROWS as i64 - 1);
        assert_eq!(kept(&cache), 0);
        // every zone known: the table's greatest, kept and given again
        cache.surviving(&batches, 0, 0, 0..n, |_| true).unwrap();
        for _ in 0..2 {
            let full = cache.bound(&batches, 0, 1, true).unwrap();
            assert_eq!(first(full), n as i64 - 1);
        }
        assert_eq!(kept(&cache), 1);
        let least = cache.bound(&batches, 0, 2, false).unwrap();
        assert_eq!(first(least), ZONE_ROWS as i64);
        assert_eq!(kept(&cache), 2);
    }

    #[test]
    fn a_string_bound_has_k_rows_at_least_as_good() {
        // blocks of mixed strings, some sharing their first 16 bytes
        let n = 6 * ZONE_ROWS + 7;
        let values: Vec<Option<String>> = (0..n)
            .map(|i| {
                (i % 11 != 0).then(|| {
                    let w = (i * 7919 + i / ZONE_ROWS * 104_729) % 100_003;
                    format!(
                        "shared sixteen b{}{w}",
                        (b'a' + (i / ZONE_ROWS) as u8) as char
                    )
                })
            })
            .collect();
        let array: ArrayRef = Arc::new(StringArray::from(values.clone()));
        let batches = vec![batch(array)];
        let cache = ZoneCache::default();
        // compute every zone
        cache.surviving(&batches, 0, 0, 0..n, |_| true).unwrap();
        for desc in [false, true] {
            for k in [1, 3, 6] {
                let bound = cache.bound(&batches, 0, k, desc).unwrap();
                let b = bound.as_string::<i32>().value(0).to_owned();
                let good = values
                    .iter()
                    .flatten()
                    .filter(|v| if desc { **v >= b } else { **v <= b })
                    .count();
                assert!(
                    good >= k,
                    "{good} rows as good as {b:?}, k {k}, desc {desc}"
                );
            }
            // more blocks than there are: no bound
            assert_eq!(cache.bound(&batches, 0, 8, desc), None);
        }
    }
}
