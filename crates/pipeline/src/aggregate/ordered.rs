//! Aggregates that take their values in an order: `string_agg(x, ','
//! ORDER BY y)`, `first(x ORDER BY y)`, `last`, `any_value`, and
//! `string_agg(DISTINCT x)`, whose values each count once per group.
//!
//! [`Ordered`] wraps the plain accumulator of the function and feeds it
//! at the end. Rows arrive in any lane, in any order; the ORDER BY terms
//! are row-encoded, so comparing their bytes orders them as ORDER BY
//! does, whatever the types and directions.
//!
//! - `first`, `last`, `any_value` keep one row per group, the best so
//!   far (the least key; `last` the greatest, the later of equal keys;
//!   `any_value` skips NULL values), as an argmin would.
//! - `string_agg` keeps every row: the arrays, and per group a list of
//!   its rows. Merging lanes and partitions moves rows between groups'
//!   lists and shares the arrays. At the end each group's rows are
//!   sorted (by a 64-bit prefix of the key, then the whole key; ties keep
//!   the order the rows were kept in) and fed in that order.
//! - With DISTINCT, a lane keeps a value once per group (ORDER BY may
//!   only name the arguments, so equal values sort together), and the
//!   end drops the copies other lanes kept.

use std::any::Any;
use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, UInt32Array};
use arrow::compute::{interleave, take};
use arrow::row::{RowConverter, Rows, SortField};
use weir_planner::AggregateFunction;

use super::{Accumulator, downcast, pairs};
use crate::error::{Error, Result};
use crate::hash::FxHashSet;

/// No row: the end of a group's list, a group without a best row.
const NONE: u32 = u32::MAX;

/// Rows an [`Ordered`] keeps from one `update_ordered`.
struct Kept {
    values: ArrayRef,
    /// The second argument (`string_agg`'s separator).
    key: Option<ArrayRef>,
    /// The ORDER BY terms (empty where the keys are kept encoded).
    order: Vec<ArrayRef>,
}

impl Kept {
    fn bytes(&self) -> usize {
        let arrays = std::iter::once(&self.values)
            .chain(&self.key)
            .chain(&self.order);
        arrays.map(|a| a.get_array_memory_size()).sum()
    }
}

/// Which rows a group keeps.
#[derive(Clone, Copy, PartialEq)]
enum Keep {
    /// Every row (`string_agg`).
    All,
    /// Every value once (`string_agg(DISTINCT x)`).
    Distinct,
    /// The best row: the least key, or with `last` the greatest (the
    /// later of equal ones); with `skip_nulls` only rows of a value.
    Best { last: bool, skip_nulls: bool },
}

/// See the module documentation.
pub(super) struct Ordered {
    /// The function's own accumulator, fed at the end.
    inner: Box<dyn Accumulator>,
    keep: Keep,
    /// Encodes the ORDER BY terms.
    order: RowConverter,
    /// There are ORDER BY terms (DISTINCT alone has none).
    ordered: bool,
    /// Encodes the values, for DISTINCT.
    values: Option<RowConverter>,
    kept: Vec<Arc<Kept>>,
    /// Where each kept array set is in `kept`, by its address (merges
    /// share them; the `Arc`s in `kept` keep the addresses unique).
    index: HashMap<usize, u32>,
    /// Per row: its kept set and its row there.
    rows: Vec<(u32, u32)>,
    /// Per row: the row kept before it in its group, or [`NONE`].
    previous: Vec<u32>,
    /// Per group: its last row (its best, for [`Keep::Best`]), or [`NONE`].
    last: Vec<u32>,
    /// [`Keep::Best`]: per group, the encoded key of its best row.
    best: Vec<Vec<u8>>,
    /// [`Keep::Distinct`]: per group, the encoded values this lane kept.
    seen: Vec<FxHashSet<Box<[u8]>>>,
    bytes: usize,
}

impl Ordered {
    pub(super) fn new(
        inner: Box<dyn Accumulator>,
        func: AggregateFunction,
        fields: Vec<SortField>,
        distinct: Option<SortField>,
    ) -> Result<Self> {
        let keep = match func {
            AggregateFunction::First | AggregateFunction::Last => Keep::Best {
                last: func == AggregateFunction::Last,
                skip_nulls: false,
            },
            AggregateFunction::AnyValue => Keep::Best {
                last: false,
                skip_nulls: true,
            },
            _ if distinct.is_some() => Keep::Distinct,
            _ => Keep::All,
        };
        Ok(Ordered {
            inner,
            keep,
            ordered: !fields.is_empty(),
            order: RowConverter::new(fields).map_err(Error::arrow)?,
            values: distinct
                .map(|f| RowConverter::new(vec![f]).map_err(Error::arrow))
                .transpose()?,
            kept: Vec::new(),
            index: HashMap::new(),
            rows: Vec::new(),
            previous: Vec::new(),
            last: Vec::new(),
            best: Vec::new(),
            seen: Vec::new(),
            bytes: 0,
        })
    }

    /// The place of `kept` in this accumulator's sets, added if new.
    fn share(&mut self, kept: &Arc<Kept>) -> u32 {
        let at = self.kept.len() as u32;
        *self
            .index
            .entry(Arc::as_ptr(kept) as usize)
            .or_insert_with(|| {
                self.bytes += kept.bytes();
                self.kept.push(Arc::clone(kept));
                at
            })
    }

    /// Appends `row` to `group`'s list.
    fn push(&mut self, group: usize, row: (u32, u32)) -> Result<()> {
        let r = u32::try_from(self.rows.len())
            .ok()
            .filter(|&r| r != NONE)
            .ok_or_else(|| Error::Execution("too many rows for an ordered aggregate".into()))?;
        self.rows.push(row);
        self.previous.push(self.last[group]);
        self.last[group] = r;
        Ok(())
    }

    /// Whether a row of encoded key `key` beats `group`'s best.
    fn beats(&self, group: usize, key: &[u8]) -> bool {
        let last = matches!(self.keep, Keep::Best { last: true, .. });
        self.last[group] == NONE
            || match last {
                true => key >= self.best[group].as_slice(),
                false => key < self.best[group].as_slice(),
            }
    }

    /// Makes `row`, of encoded key `key`, `group`'s best.
    fn set_best(&mut self, group: usize, key: &[u8], row: (u32, u32)) -> Result<()> {
        let best = &mut self.best[group];
        best.clear();
        best.extend_from_slice(key);
        match self.last[group] {
            NONE => self.push(group, row),
            r => {
                self.rows[r as usize] = row;
                Ok(())
            }
        }
    }

    /// The rows of `group`, in the order they were kept.
    fn group_rows(&self, group: usize, out: &mut Vec<(u32, u32)>) {
        out.clear();
        let mut r = self.last[group];
        while r != NONE {
            out.push(self.rows[r as usize]);
            r = self.previous[r as usize];
        }
        out.reverse();
    }
}

impl Accumulator for Ordered {
    fn resize(&mut self, groups: usize) {
        self.last.resize(groups, NONE);
        match self.keep {
            Keep::Best { .. } => self.best.resize(groups, Vec::new()),
            Keep::Distinct => self.seen.resize_with(groups, FxHashSet::default),
            Keep::All => {}
        }
    }

    fn update(&mut self, _values: &ArrayRef, _groups: Option<&[u32]>) -> Result<()> {
        Err(Error::Internal(
            "an ordered aggregate updated without its ORDER BY terms".into(),
        ))
    }

    fn update_ordered(
        &mut self,
        values: &ArrayRef,
        key: Option<&ArrayRef>,
        order: &[ArrayRef],
        groups: Option<&[u32]>,
    ) -> Result<()> {
        if values.is_empty() {
            return Ok(());
        }
        let group = |i: usize| groups.map_or(0, |ids| ids[i] as usize);
        match self.keep {
            Keep::All => {
                let kept = Arc::new(Kept {
                    values: Arc::clone(values),
                    key: key.cloned(),
                    order: order.to_vec(),
                });
                let at = self.share(&kept);
                for i in 0..values.len() {
                    self.push(group(i), (at, i as u32))?;
                }
            }
            Keep::Distinct => {
                let converter = self.values.as_ref().ok_or_else(|| {
                    Error::Internal("a DISTINCT ordered aggregate without its encoder".into())
                })?;
                let encoded = converter
                    .convert_columns(std::slice::from_ref(values))
                    .map_err(Error::arrow)?;
                // the rows of values not kept before, in their groups
                let mut fresh: Vec<u32> = Vec::new();
                for i in 0..values.len() {
                    let value = encoded.row(i);
                    let seen = &mut self.seen[group(i)];
                    if values.is_valid(i) && !seen.contains(value.data()) {
                        seen.insert(value.data().into());
                        fresh.push(i as u32);
                    }
                }
                let indices = UInt32Array::from(fresh);
                let pick = |a: &ArrayRef| take(a.as_ref(), &indices, None).map_err(Error::arrow);
                let kept = Arc::new(Kept {
                    values: pick(values)?,
                    key: key.map(pick).transpose()?,
                    order: order.iter().map(pick).collect::<Result<_>>()?,
                });
                let at = self.share(&kept);
                for (k, &i) in indices.values().iter().enumerate() {
                    self.push(group(i as usize), (at, k as u32))?;
                }
            }
            Keep::Best { skip_nulls, .. } => {
                let keys = self.order.convert_columns(order).map_err(Error::arrow)?;
                // the arrays are kept once a row of them is some group's best
                let mut at = None;
                for i in 0..values.len() {
                    let (g, k) = (group(i), keys.row(i).data());
                    if (skip_nulls && values.is_null(i)) || !self.beats(g, k) {
                        continue;
                    }
                    let at = match at {
                        Some(at) => at,
                        None => *at.insert(self.share(&Arc::new(Kept {
                            values: Arc::clone(values),
                            key: key.cloned(),
                            order: Vec::new(),
                        }))),
                    };
                    self.set_best(g, k, (at, i as u32))?;
                }
            }
        }
        Ok(())
    }

    fn merge_from(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32]) -> Result<()> {
        let other = downcast::<Self>(other)?;
        let mut places = vec![NONE; other.kept.len()];
        let mut rows = Vec::new();
        let best = matches!(self.keep, Keep::Best { .. });
        for (s, d) in pairs(src, dst) {
            other.group_rows(s, &mut rows);
            for &(k, r) in &rows {
                if best && !self.beats(d, &other.best[s]) {
                    continue;
                }
                let place = &mut places[k as usize];
                if *place == NONE {
                    let kept = Arc::clone(&other.kept[k as usize]);
                    *place = self.share(&kept);
                }
                let at = *place;
                match best {
                    true => self.set_best(d, &other.best[s], (at, r))?,
                    false => self.push(d, (at, r))?,
                }
            }
        }
        Ok(())
    }

    fn size(&self) -> usize {
        self.bytes
            + self.rows.len() * 12
            + self.last.len() * 4
            + self.best.iter().map(Vec::capacity).sum::<usize>()
            + self.inner.size()
    }

    fn finish(self: Box<Self>) -> Result<ArrayRef> {
        let mut this = *self;
        let groups = this.last.len();
        this.inner.resize(groups);
        // the ORDER BY terms (and the values, for DISTINCT) of each kept
        // set, row-encoded
        let encode = |converter: &RowConverter, arrays: &dyn Fn(&Kept) -> Vec<ArrayRef>| {
            this.kept
                .iter()
                .map(|k| converter.convert_columns(&arrays(k)).map_err(Error::arrow))
                .collect::<Result<Vec<Rows>>>()
        };
        let sorted = match this.keep {
            Keep::All | Keep::Distinct if this.ordered => {
                Some(encode(&this.order, &|k| k.order.clone())?)
            }
            _ => None,
        };
        let values = match &this.values {
            Some(converter) => Some(encode(converter, &|k| vec![Arc::clone(&k.values)])?),
            None => None,
        };
        let mut picks: Vec<(usize, usize)> = Vec::with_capacity(this.rows.len());
        let mut ids: Vec<u32> = Vec::with_capacity(this.rows.len());
        let mut rows = Vec::new();
        let mut keyed: Vec<(u64, u32, u32)> = Vec::new();
        let mut seen: FxHashSet<&[u8]> = FxHashSet::default();
        for g in 0..groups {
            this.group_rows(g, &mut rows);
            if let Some(order) = &sorted {
                // by a prefix of the key, then the whole key; stable
                keyed.clear();
                keyed.extend(
                    rows.iter()
                        .map(|&(k, r)| (prefix(order[k as usize].row(r as usize).data()), k, r)),
                );
                keyed.sort_by(|&(pa, a, i), &(pb, b, j)| {
                    pa.cmp(&pb).then_with(|| {
                        order[a as usize]
                            .row(i as usize)
                            .cmp(&order[b as usize].row(j as usize))
                    })
                });
                rows.clear();
                rows.extend(keyed.iter().map(|&(_, k, r)| (k, r)));
            }
            seen.clear();
            for &(k, r) in &rows {
                if let Some(values) = &values
                    && !seen.insert(values[k as usize].row(r as usize).data())
                {
                    continue;
                }
                picks.push((k as usize, r as usize));
                ids.push(g as u32);
            }
        }
        if !picks.is_empty() {
            let gather =
                |arrays: Vec<&dyn Array>| interleave(&arrays, &picks).map_err(Error::arrow);
            let values = gather(this.kept.iter().map(|k| k.values.as_ref()).collect())?;
            let keys = this
                .kept
                .iter()
                .map(|k| k.key.as_deref())
                .collect::<Option<Vec<&dyn Array>>>();
            match keys {
                Some(keys) => this
                    .inner
                    .update_keyed(&values, &gather(keys)?, Some(&ids))?,
                None => this.inner.update(&values, Some(&ids))?,
            }
        }
        this.inner.finish()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The first 8 bytes of an encoded key, zero-padded, as a big-endian
/// number: where two prefixes differ they order the keys as their bytes
/// do (the row format is prefix-free).
fn prefix(bytes: &[u8]) -> u64 {
    let mut buf = [0u8; 8];
    let n = bytes.len().min(8);
    buf[..n].copy_from_slice(&bytes[..n]);
    u64::from_be_bytes(buf)
}

#[cfg(test)]
mod tests {
    use arrow::array::{AsArray, Int64Array, StringArray};
    use arrow::compute::SortOptions;
    use arrow::datatypes::DataType;

    use super::*;

    /// The plain accumulator of `func` over VARCHARs.
    fn plain(func: AggregateFunction) -> Box<dyn Accumulator> {
        use super::super::{AggInput, AggSpec, new_accumulator};
        let spec = AggSpec {
            func,
            distinct: false,
            input: AggInput::Star,
            input_type: DataType::Utf8,
            key_type: (func == AggregateFunction::StringAgg).then_some(DataType::Utf8),
            output_type: DataType::Utf8,
            order: Vec::new(),
        };
        new_accumulator(&spec).unwrap()
    }

    fn strings(v: &[Option<&str>]) -> ArrayRef {
        Arc::new(StringArray::from(v.to_vec()))
    }

    fn ints(v: &[i64]) -> ArrayRef {
        Arc::new(Int64Array::from(v.to_vec()))
    }

    /// `string_agg(x, ',' ORDER BY k DESC)`, DISTINCT with `distinct`.
    fn string_agg(distinct: bool) -> Ordered {
        let desc = SortOptions {
            descending: true,
            nulls_first: false,
        };
        let fields = vec![SortField::new_with_options(DataType::Int64, desc)];
        let values = distinct.then(|| SortField::new(DataType::Utf8));
        Ordered::new(
            plain(AggregateFunction::StringAgg),
            AggregateFunction::StringAgg,
            fields,
            values,
        )
        .unwrap()
    }

    fn finish(acc: Ordered) -> Vec<Option<String>> {
        let out = Box::new(acc).finish().unwrap();
        out.as_string::<i32>()
            .iter()
            .map(|v| v.map(str::to_owned))
            .collect()
    }

    fn update(acc: &mut Ordered, values: &[Option<&str>], keys: &[i64], groups: &[u32]) {
        let sep = strings(&vec![Some(","); values.len()]);
        acc.update_ordered(&strings(values), Some(&sep), &[ints(keys)], Some(groups))
            .unwrap();
    }

    #[test]
    fn rows_of_lanes_merged_group_by_group_come_out_in_order() {
        let mut a = string_agg(false);
        a.resize(3);
        update(
            &mut a,
            &[Some("a1"), Some("b5"), None, Some("a3")],
            &[1, 5, 9, 3],
            &[0, 1, 0, 0],
        );
        let mut b = string_agg(false);
        b.resize(2);
        update(
            &mut b,
            &[Some("x2"), Some("y4"), Some("x7")],
            &[2, 4, 7],
            &[0, 1, 0],
        );
        // b's group 1 into a's group 2, then b's group 0 into a's group 0:
        // two merges of the same lane, each of some of its groups
        a.merge_from(&b, &[1], &[2]).unwrap();
        a.merge_from(&b, &[0], &[0]).unwrap();
        assert_eq!(
            a.kept.len(),
            2,
            "the second merge shares the arrays of the first"
        );
        assert_eq!(
            finish(a),
            [
                Some("x7,a3,x2,a1".into()),
                Some("b5".into()),
                Some("y4".into())
            ]
        );
    }

    #[test]
    fn distinct_values_count_once_across_lanes() {
        let mut a = string_agg(true);
        a.resize(1);
        update(
            &mut a,
            &[Some("p"), Some("q"), Some("p"), None],
            &[0, 0, 0, 0],
            &[0, 0, 0, 0],
        );
        assert_eq!(a.rows.len(), 2, "a lane keeps a value once");
        let mut b = string_agg(true);
        b.resize(1);
        update(&mut b, &[Some("q"), Some("r")], &[0, 0], &[0, 0]);
        a.merge_from(&b, &[0], &[0]).unwrap();
        let mut parts: Vec<String> = finish(a)[0]
            .as_deref()
            .unwrap()
            .split(',')
            .map(str::to_owned)
            .collect();
        parts.sort();
        assert_eq!(parts, ["p", "q", "r"]);
    }

    #[test]
    fn first_and_last_keep_the_best_row_and_last_takes_the_later_tie() {
        let asc = vec![SortField::new(DataType::Int64)];
        for (func, want) in [
            (AggregateFunction::First, ["k1", "n3"]),
            (AggregateFunction::Last, ["k9b", "n3"]),
        ] {
            let mut a = Ordered::new(plain(func), func, asc.clone(), None).unwrap();
            a.resize(2);
            let values = strings(&[Some("k5"), Some("k9a"), Some("k1"), Some("n3")]);
            a.update_ordered(&values, None, &[ints(&[5, 9, 1, 3])], Some(&[0, 0, 0, 1]))
                .unwrap();
            let mut b = Ordered::new(plain(func), func, asc.clone(), None).unwrap();
            b.resize(1);
            b.update_ordered(&strings(&[Some("k9b")]), None, &[ints(&[9])], Some(&[0]))
                .unwrap();
            a.merge_from(&b, &[0], &[0]).unwrap();
            assert_eq!(a.rows.len(), 2, "one row per group");
            let want: Vec<Option<String>> = want.iter().map(|w| Some(w.to_string())).collect();
            assert_eq!(finish(a), want, "{func:?}");
        }
    }
}
