//! Accumulators of the aggregates that keep more than a fixed-size state
//! per group (median, quantile_cont, quantile_disc, mode, entropy) or that
//! other accumulators do not cover (any_value, bit_and/bit_or/bit_xor,
//! product, skewness, kurtosis). They implement the
//! parent module's `Accumulator`; `new_plain_accumulator` dispatches here.

use std::any::Any;
use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Decimal128Array, Float64Array, Int64Array};
use arrow::datatypes::{DataType, Decimal128Type, Float64Type, Int64Type};
use arrow::row::{RowConverter, SortField};
use weir_planner::AggregateFunction;

use super::{Accumulator, conform, downcast, pairs};
use crate::error::{Error, Result};

/// The accumulator of `func` over `input`, giving `output`, if `func` is
/// one of this module's.
pub(super) fn new_accumulator(
    func: AggregateFunction,
    input: &DataType,
    output: &DataType,
) -> Result<Box<dyn Accumulator>> {
    use AggregateFunction::*;
    Ok(match func {
        Median => Box::new(MedianAcc::new(input)),
        Product => Box::new(ProductAcc::default()),
        BitAnd | BitOr | BitXor => Box::new(BitAcc {
            func,
            output: output.clone(),
            values: Vec::new(),
        }),
        Mode | AnyValue => Box::new(RowAcc::new(func == Mode, input)?),
        Entropy => Box::new(RowAcc {
            entropy: true,
            ..RowAcc::new(true, input)?
        }),
        Skewness | Kurtosis | KurtosisPop => Box::new(PowerSums {
            func,
            sums: Vec::new(),
        }),
        First | Last => Box::new(FirstLastAcc {
            last: func == Last,
            rows: RowAcc::new(false, input)?,
            seen: Vec::new(),
        }),
        other => {
            return Err(Error::Internal(format!(
                "{}() is not a holistic aggregate",
                other.name()
            )));
        }
    })
}

/// The accumulator of `quantile_cont|quantile_disc(x, q)` over `input`.
pub(super) fn quantile(func: AggregateFunction, input: &DataType) -> Result<Box<dyn Accumulator>> {
    Ok(if func == AggregateFunction::QuantileCont {
        Box::new(MedianAcc::new(input))
    } else {
        Box::new(QuantileDiscAcc {
            fraction: None,
            rows: RowAcc::new(false, input)?,
            values: Vec::new(),
        })
    })
}

/// The constant fraction of a quantile, from its key column.
fn fraction(keys: &ArrayRef) -> Result<Option<f64>> {
    if keys.is_empty() {
        return Ok(None);
    }
    let keys = conform(Arc::clone(keys), &DataType::Float64)?;
    let keys = keys.as_primitive::<Float64Type>();
    Ok(keys.is_valid(0).then(|| keys.value(0)))
}

/// `quantile_disc(x, q)`: values kept in Arrow's row format, whose bytes
/// sort as the values do; the answer is the value at `ceil(n * q) - 1`.
struct QuantileDiscAcc {
    fraction: Option<f64>,
    rows: RowAcc,
    values: Vec<Vec<Vec<u8>>>,
}

impl Accumulator for QuantileDiscAcc {
    fn resize(&mut self, groups: usize) {
        self.values.resize_with(groups, Vec::new);
    }

    fn update(&mut self, _values: &ArrayRef, _groups: Option<&[u32]>) -> Result<()> {
        Err(Error::Internal("quantile_disc without its fraction".into()))
    }

    fn update_keyed(
        &mut self,
        values: &ArrayRef,
        keys: &ArrayRef,
        groups: Option<&[u32]>,
    ) -> Result<()> {
        if self.fraction.is_none() {
            self.fraction = fraction(keys)?;
        }
        let rows = self
            .rows
            .converter
            .convert_columns(&[Arc::clone(values)])
            .map_err(Error::arrow)?;
        for i in 0..values.len() {
            if values.is_valid(i) {
                self.values[group(groups, i)].push(rows.row(i).as_ref().to_vec());
            }
        }
        Ok(())
    }

    fn merge_from(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32]) -> Result<()> {
        let other = downcast::<Self>(other)?;
        if self.fraction.is_none() {
            self.fraction = other.fraction;
        }
        for (s, d) in pairs(src, dst) {
            self.values[d].extend(other.values[s].iter().cloned());
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<ArrayRef> {
        let q = self.fraction.unwrap_or(0.5);
        let mut rows = self.rows;
        rows.first = self
            .values
            .into_iter()
            .map(|mut v| {
                if v.is_empty() {
                    return None;
                }
                v.sort_unstable();
                let at = ((v.len() as f64 * q).ceil() as usize).saturating_sub(1);
                Some(v.swap_remove(at.min(v.len() - 1)))
            })
            .collect();
        Box::new(rows).finish()
    }

    fn size(&self) -> usize {
        self.values
            .iter()
            .map(|v| v.iter().map(|r| r.len() + 24).sum::<usize>() + 24)
            .sum()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn group(groups: Option<&[u32]>, i: usize) -> usize {
    groups.map_or(0, |g| g[i] as usize)
}

/// `median(x)` and `quantile_cont(x, q)`: the value at `(n - 1) * q`
/// interpolated between its neighbours (the mean of the two middle values
/// for the median of an even count), as DuckDB computes them. Numbers are
/// DOUBLEs; decimals keep their type (`median` of 1.50 and 2.25 is 1.87:
/// [`interpolate`]).
struct MedianAcc {
    values: Quantiled,
    /// `quantile_cont`'s fraction (`None`: the median, 0.5).
    fraction: Option<f64>,
}

/// The values of a [`MedianAcc`], per group.
enum Quantiled {
    Doubles(Vec<Vec<f64>>),
    /// Unscaled values, and the decimal type.
    Decimals(Vec<Vec<i128>>, DataType),
}

impl MedianAcc {
    fn new(input: &DataType) -> Self {
        let values = match input {
            DataType::Decimal128(..) => Quantiled::Decimals(Vec::new(), input.clone()),
            _ => Quantiled::Doubles(Vec::new()),
        };
        MedianAcc {
            values,
            fraction: None,
        }
    }
}

/// Pushes the valid values of `values` to their groups' lists.
fn push_valid<T: arrow::datatypes::ArrowPrimitiveType>(
    lists: &mut [Vec<T::Native>],
    values: &ArrayRef,
    groups: Option<&[u32]>,
) {
    let values = values.as_primitive::<T>();
    for i in 0..values.len() {
        if values.is_valid(i) {
            lists[group(groups, i)].push(values.value(i));
        }
    }
}

/// Per group, the value at `(n - 1) * q` of its values sorted by `sort`,
/// `at` interpolating between two of them (NULL for a group of none).
fn quantiles<T: Copy, O>(
    lists: Vec<Vec<T>>,
    q: f64,
    sort: fn(&mut [T]),
    at: impl Fn(T, T, f64) -> O,
) -> Vec<Option<O>> {
    lists
        .into_iter()
        .map(|mut v| {
            sort(&mut v);
            quantile_at(&v, q, &at)
        })
        .collect()
}

/// The value at `(n - 1) * q` of `sorted`, `at` interpolating between its
/// two neighbours; `None` for no value.
fn quantile_at<T: Copy, O>(sorted: &[T], q: f64, at: impl Fn(T, T, f64) -> O) -> Option<O> {
    if sorted.is_empty() {
        return None;
    }
    let rn = (sorted.len() - 1) as f64 * q;
    let (lo, hi) = (rn.floor() as usize, rn.ceil() as usize);
    Some(at(sorted[lo], sorted[hi], rn - lo as f64))
}

/// The most values [`sliding_quantile`] may move in all (its sorted window
/// moves up to a frame's length of them for a row entering or leaving):
/// about a second of copying. Frames of a few thousand rows over a
/// million, or a frame growing over a partition of 40,000, pass.
const SLIDING_MOVES: usize = 1 << 30;

/// How many values the sorted window may move per row the aggregation
/// would be handed instead (a hash insert and a share of a sort, tens of
/// nanoseconds, against a fraction of one to move a value): frames that
/// many rows share (a whole partition, RANGE frames over many peers) are
/// handed over once each and sorted, not slid through.
const MOVES_PER_HANDED: usize = 64;

/// `median(x)` or `quantile_cont(x, q)` (`fraction`: `q`'s column) as a
/// window function over the frames `[fs[i], fe[i])` of `values`' rows,
/// where the frames slide (neither end ever moves back), their lengths add
/// up to at most [`SLIDING_MOVES`] and to at most [`MOVES_PER_HANDED`]
/// times what the distinct frames hold: one sorted window of the frame's
/// non-NULL values, which each row enters and leaves once as the frame moves, read
/// as [`MedianAcc`] reads a group's sorted values. A moving median of `w`
/// rows then costs a binary search and a move of at most `w` values per
/// row, not a sort of `w` values. `None` for another aggregate, or frames
/// that do not slide or hold too much: the caller aggregates each frame
/// then.
/// The array is of [`MedianAcc`]'s type (DOUBLE, or the decimal input's).
pub(crate) fn sliding_quantile(
    func: AggregateFunction,
    values: &ArrayRef,
    fraction_of: Option<&ArrayRef>,
    fs: &[usize],
    fe: &[usize],
) -> Result<Option<ArrayRef>> {
    let q = match (func, fraction_of) {
        (AggregateFunction::Median, None) => 0.5,
        (AggregateFunction::QuantileCont, Some(keys)) => match fraction(keys)? {
            Some(q) => q,
            None => return Ok(None),
        },
        _ => return Ok(None),
    };
    // an empty frame (end <= start) as `[start, start)`
    let ends: Vec<usize> = fs.iter().zip(fe).map(|(&s, &e)| e.max(s)).collect();
    let slides = (1..fs.len()).all(|i| fs[i] >= fs[i - 1] && ends[i] >= ends[i - 1]);
    let moves: usize = fs.iter().zip(&ends).map(|(s, e)| e - s).sum();
    // what the aggregation would be handed: each distinct frame's rows
    let handed: usize = (0..fs.len())
        .filter(|&i| i == 0 || (fs[i], ends[i]) != (fs[i - 1], ends[i - 1]))
        .map(|i| ends[i] - fs[i])
        .sum();
    if !slides || moves > SLIDING_MOVES || moves > MOVES_PER_HANDED.saturating_mul(handed) {
        return Ok(None);
    }
    Ok(Some(match values.data_type() {
        DataType::Decimal128(..) => {
            let t = values.data_type().clone();
            let v = values.as_primitive::<Decimal128Type>();
            let value = |i: usize| v.is_valid(i).then(|| v.value(i));
            let out = slide(value, fs, &ends, q, i128::cmp, interpolate);
            Arc::new(Decimal128Array::from(out).with_data_type(t))
        }
        _ => {
            let values = conform(Arc::clone(values), &DataType::Float64)?;
            let v = values.as_primitive::<Float64Type>();
            let value = |i: usize| v.is_valid(i).then(|| v.value(i));
            let out = slide(value, fs, &ends, q, f64::total_cmp, |lo, hi, f| {
                lo + f * (hi - lo)
            });
            Arc::new(Float64Array::from(out))
        }
    }))
}

/// Each frame's value at `q` ([`quantile_at`]), the frames `[fs[i],
/// ends[i])` sliding: a sorted window of the values of row `value` that
/// are not NULL, in `cmp`'s order.
fn slide<T: Copy, O>(
    value: impl Fn(usize) -> Option<T>,
    fs: &[usize],
    ends: &[usize],
    q: f64,
    cmp: fn(&T, &T) -> std::cmp::Ordering,
    at: impl Fn(T, T, f64) -> O,
) -> Vec<Option<O>> {
    let mut window: Vec<T> = Vec::new();
    // the rows in the window
    let (mut start, mut end) = (0, 0);
    let mut out = Vec::with_capacity(fs.len());
    for (&s, &e) in fs.iter().zip(ends) {
        if s >= end {
            window.clear();
            (start, end) = (s, s);
        }
        for row in start..s {
            if let Some(v) = value(row) {
                // the same value was inserted: it is there
                if let Ok(at) = window.binary_search_by(|x| cmp(x, &v)) {
                    window.remove(at);
                }
            }
        }
        for row in end..e {
            if let Some(v) = value(row) {
                let at = window.partition_point(|x| cmp(x, &v).is_le());
                window.insert(at, v);
            }
        }
        (start, end) = (s, e);
        out.push(quantile_at(&window, q, &at));
    }
    out
}

/// Appends the lists of groups `src` of `from` to groups `dst` of `to`.
fn merge_lists<T: Clone>(to: &mut [Vec<T>], from: &[Vec<T>], src: &[u32], dst: &[u32]) {
    for (s, d) in pairs(src, dst) {
        to[d].extend_from_slice(&from[s]);
    }
}

impl Accumulator for MedianAcc {
    fn resize(&mut self, groups: usize) {
        match &mut self.values {
            Quantiled::Doubles(v) => v.resize_with(groups, Vec::new),
            Quantiled::Decimals(v, _) => v.resize_with(groups, Vec::new),
        }
    }

    fn update(&mut self, values: &ArrayRef, groups: Option<&[u32]>) -> Result<()> {
        match &mut self.values {
            Quantiled::Doubles(v) => {
                let values = conform(Arc::clone(values), &DataType::Float64)?;
                push_valid::<Float64Type>(v, &values, groups);
            }
            Quantiled::Decimals(v, t) => {
                let values = conform(Arc::clone(values), t)?;
                push_valid::<Decimal128Type>(v, &values, groups);
            }
        }
        Ok(())
    }

    fn update_keyed(
        &mut self,
        values: &ArrayRef,
        keys: &ArrayRef,
        groups: Option<&[u32]>,
    ) -> Result<()> {
        if self.fraction.is_none() {
            self.fraction = fraction(keys)?;
        }
        self.update(values, groups)
    }

    fn merge_from(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32]) -> Result<()> {
        let other = downcast::<Self>(other)?;
        if self.fraction.is_none() {
            self.fraction = other.fraction;
        }
        match (&mut self.values, &other.values) {
            (Quantiled::Doubles(to), Quantiled::Doubles(from)) => merge_lists(to, from, src, dst),
            (Quantiled::Decimals(to, _), Quantiled::Decimals(from, _)) => {
                merge_lists(to, from, src, dst);
            }
            _ => {
                return Err(Error::Internal(
                    "a median merged from one of another type".into(),
                ));
            }
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<ArrayRef> {
        let q = self.fraction.unwrap_or(0.5);
        Ok(match self.values {
            Quantiled::Doubles(v) => {
                let sort: fn(&mut [f64]) = |v| v.sort_unstable_by(f64::total_cmp);
                let out = quantiles(v, q, sort, |lo, hi, f| lo + f * (hi - lo));
                Arc::new(Float64Array::from(out))
            }
            Quantiled::Decimals(v, t) => {
                let out = quantiles(v, q, <[i128]>::sort_unstable, interpolate);
                Arc::new(Decimal128Array::from(out).with_data_type(t))
            }
        })
    }

    fn size(&self) -> usize {
        match &self.values {
            Quantiled::Doubles(v) => v.iter().map(|v| v.capacity() * 8 + 24).sum(),
            Quantiled::Decimals(v, _) => v.iter().map(|v| v.capacity() * 16 + 24).sum(),
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `lo + (hi - lo) * fraction` of unscaled values, in DOUBLE and cut
/// toward zero, as DuckDB computes it (so its answers match to the last
/// digit: `-8000 + 45 * 0.8000000000000043` is -7964 in DOUBLE, not
/// -7963).
fn interpolate(lo: i128, hi: i128, fraction: f64) -> i128 {
    (lo as f64 + (hi - lo) as f64 * fraction).trunc() as i128
}

/// `product(x)` as DOUBLE, NULL over no non-NULL value.
#[derive(Default)]
struct ProductAcc {
    values: Vec<Option<f64>>,
}

impl Accumulator for ProductAcc {
    fn resize(&mut self, groups: usize) {
        self.values.resize(groups, None);
    }

    fn update(&mut self, values: &ArrayRef, groups: Option<&[u32]>) -> Result<()> {
        let values = conform(Arc::clone(values), &DataType::Float64)?;
        let values = values.as_primitive::<Float64Type>();
        for i in 0..values.len() {
            if values.is_valid(i) {
                let p = &mut self.values[group(groups, i)];
                *p = Some(p.unwrap_or(1.0) * values.value(i));
            }
        }
        Ok(())
    }

    fn merge_from(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32]) -> Result<()> {
        let other = downcast::<Self>(other)?;
        for (s, d) in pairs(src, dst) {
            if let Some(v) = other.values[s] {
                let p = &mut self.values[d];
                *p = Some(p.unwrap_or(1.0) * v);
            }
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<ArrayRef> {
        Ok(Arc::new(Float64Array::from(self.values)))
    }

    fn size(&self) -> usize {
        self.values.capacity() * 16
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `bit_and`, `bit_or`, `bit_xor` of integers, in the input's type.
struct BitAcc {
    func: AggregateFunction,
    output: DataType,
    values: Vec<Option<i64>>,
}

impl BitAcc {
    fn fold(&self, a: Option<i64>, b: i64) -> i64 {
        match (a, self.func) {
            (None, _) => b,
            (Some(a), AggregateFunction::BitAnd) => a & b,
            (Some(a), AggregateFunction::BitOr) => a | b,
            (Some(a), _) => a ^ b,
        }
    }
}

impl Accumulator for BitAcc {
    fn resize(&mut self, groups: usize) {
        self.values.resize(groups, None);
    }

    fn update(&mut self, values: &ArrayRef, groups: Option<&[u32]>) -> Result<()> {
        let values = conform(Arc::clone(values), &DataType::Int64)?;
        let values = values.as_primitive::<Int64Type>();
        for i in 0..values.len() {
            if values.is_valid(i) {
                let g = group(groups, i);
                self.values[g] = Some(self.fold(self.values[g], values.value(i)));
            }
        }
        Ok(())
    }

    fn merge_from(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32]) -> Result<()> {
        let other = downcast::<Self>(other)?;
        for (s, d) in pairs(src, dst) {
            if let Some(v) = other.values[s] {
                self.values[d] = Some(self.fold(self.values[d], v));
            }
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<ArrayRef> {
        let out: ArrayRef = Arc::new(Int64Array::from(self.values));
        // the values came from the output's type, so they fit it
        conform(out, &self.output)
    }

    fn size(&self) -> usize {
        self.values.capacity() * 16
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `first(x)` and `last(x)` of any type, NULLs kept: per group, whether
/// a row was met and its value in Arrow's row format (`None` for NULL).
/// A lane meets its rows in their order; merged lanes are taken in the
/// order the merge meets them.
struct FirstLastAcc {
    last: bool,
    rows: RowAcc,
    seen: Vec<bool>,
}

impl Accumulator for FirstLastAcc {
    fn resize(&mut self, groups: usize) {
        self.seen.resize(groups, false);
        self.rows.first.resize(groups, None);
    }

    fn update(&mut self, values: &ArrayRef, groups: Option<&[u32]>) -> Result<()> {
        let rows = self
            .rows
            .converter
            .convert_columns(&[Arc::clone(values)])
            .map_err(Error::arrow)?;
        for i in 0..values.len() {
            let g = group(groups, i);
            if self.seen[g] && !self.last {
                continue;
            }
            self.seen[g] = true;
            self.rows.first[g] = values.is_valid(i).then(|| rows.row(i).as_ref().to_vec());
        }
        Ok(())
    }

    fn merge_from(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32]) -> Result<()> {
        let other = downcast::<Self>(other)?;
        for (s, d) in pairs(src, dst) {
            if other.seen[s] && (self.last || !self.seen[d]) {
                self.seen[d] = true;
                self.rows.first[d].clone_from(&other.rows.first[s]);
            }
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<ArrayRef> {
        Box::new(self.rows).finish()
    }

    fn size(&self) -> usize {
        self.rows.size() + self.seen.capacity()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The Shannon entropy (log base 2) of a group's value counts, as DuckDB
/// computes it: 0 without any value.
fn entropy(counts: &HashMap<Vec<u8>, u64>) -> f64 {
    let total = counts.values().sum::<u64>() as f64;
    let mut e = 0.0;
    for &n in counts.values() {
        let p = n as f64 / total;
        e -= p * p.log2();
    }
    e
}

/// `skewness(x)`, `kurtosis(x)` and `kurtosis_pop(x)`: per group the count
/// and the sums of the first four powers, read at the end by DuckDB's
/// formulas (the same power sums, so the same answers, NULLs and
/// errors).
struct PowerSums {
    func: AggregateFunction,
    /// Per group: n, sum x, sum x^2, sum x^3, sum x^4.
    sums: Vec<(u64, [f64; 4])>,
}

impl PowerSums {
    /// The value of one group; `None` for NULL.
    fn value(&self, n: u64, [s1, s2, s3, s4]: [f64; 4]) -> Result<Option<f64>> {
        let count = n as f64;
        let t = 1.0 / count;
        let (value, what) = match self.func {
            AggregateFunction::Skewness => {
                if n <= 2 {
                    return Ok(None);
                }
                let p = (t * (s2 - s1 * s1 * t)).powi(3);
                if p <= 0.0 {
                    return Ok(None);
                }
                let a = (count * (count - 1.0)).sqrt() / (count - 2.0);
                let v = a * t * (s3 - 3.0 * s2 * s1 * t + 2.0 * s1.powi(3) * t * t) / p.sqrt();
                (v, "SKEW")
            }
            _ => {
                let corrected = self.func == AggregateFunction::Kurtosis;
                if n <= 1 || (corrected && n <= 3) || s2 - s1 * s1 * t == 0.0 {
                    return Ok(None);
                }
                let m4 = t
                    * (s4 - 4.0 * s3 * s1 * t + 6.0 * s2 * s1 * s1 * t * t
                        - 3.0 * s1.powi(4) * t.powi(3));
                let m2 = t * (s2 - s1 * s1 * t);
                if m2 <= 0.0 {
                    return Ok(None);
                }
                let v = if corrected {
                    (count - 1.0) * ((count + 1.0) * m4 / (m2 * m2) - 3.0 * (count - 1.0))
                        / ((count - 2.0) * (count - 3.0))
                } else {
                    m4 / (m2 * m2) - 3.0
                };
                (v, "Kurtosis")
            }
        };
        if !value.is_finite() {
            return Err(Error::Execution(format!("{what} is out of range!")));
        }
        Ok(Some(value))
    }
}

impl Accumulator for PowerSums {
    fn resize(&mut self, groups: usize) {
        self.sums.resize(groups, (0, [0.0; 4]));
    }

    fn update(&mut self, values: &ArrayRef, groups: Option<&[u32]>) -> Result<()> {
        let values = conform(Arc::clone(values), &DataType::Float64)?;
        let values = values.as_primitive::<Float64Type>();
        for i in 0..values.len() {
            if values.is_valid(i) {
                let x = values.value(i);
                let (n, s) = &mut self.sums[group(groups, i)];
                *n += 1;
                s[0] += x;
                s[1] += x * x;
                s[2] += x * x * x;
                s[3] += x * x * x * x;
            }
        }
        Ok(())
    }

    fn merge_from(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32]) -> Result<()> {
        let other = downcast::<Self>(other)?;
        for (s, d) in pairs(src, dst) {
            let (n, o) = other.sums[s];
            let (m, t) = &mut self.sums[d];
            *m += n;
            for (a, b) in t.iter_mut().zip(o) {
                *a += b;
            }
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<ArrayRef> {
        let values = self
            .sums
            .iter()
            .map(|&(n, s)| self.value(n, s))
            .collect::<Result<Float64Array>>()?;
        Ok(Arc::new(values))
    }

    fn size(&self) -> usize {
        self.sums.capacity() * std::mem::size_of::<(u64, [f64; 4])>()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `mode(x)`, `entropy(x)` and `any_value(x)` of any type, values kept in
/// Arrow's row format: mode and entropy count each distinct value per
/// group (mode's tie goes to the smallest value, so the answer does not
/// depend on the threads); any_value keeps the first non-NULL value a
/// lane meets.
struct RowAcc {
    /// Count the distinct values (mode, entropy).
    mode: bool,
    /// Give the entropy of the counts, not the most frequent value.
    entropy: bool,
    input: DataType,
    converter: RowConverter,
    counts: Vec<HashMap<Vec<u8>, u64>>,
    first: Vec<Option<Vec<u8>>>,
}

impl RowAcc {
    fn new(mode: bool, input: &DataType) -> Result<Self> {
        let converter =
            RowConverter::new(vec![SortField::new(input.clone())]).map_err(Error::arrow)?;
        Ok(Self {
            mode,
            entropy: false,
            input: input.clone(),
            converter,
            counts: Vec::new(),
            first: Vec::new(),
        })
    }
}

impl Accumulator for RowAcc {
    fn resize(&mut self, groups: usize) {
        if self.mode {
            self.counts.resize_with(groups, HashMap::new);
        } else {
            self.first.resize(groups, None);
        }
    }

    fn update(&mut self, values: &ArrayRef, groups: Option<&[u32]>) -> Result<()> {
        let rows = self
            .converter
            .convert_columns(&[Arc::clone(values)])
            .map_err(Error::arrow)?;
        for i in 0..values.len() {
            if values.is_null(i) {
                continue;
            }
            let g = group(groups, i);
            if self.mode {
                *self.counts[g]
                    .entry(rows.row(i).as_ref().to_vec())
                    .or_insert(0) += 1;
            } else if self.first[g].is_none() {
                self.first[g] = Some(rows.row(i).as_ref().to_vec());
            }
        }
        Ok(())
    }

    fn merge_from(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32]) -> Result<()> {
        let other = downcast::<Self>(other)?;
        for (s, d) in pairs(src, dst) {
            if self.mode {
                for (k, n) in &other.counts[s] {
                    *self.counts[d].entry(k.clone()).or_insert(0) += n;
                }
            } else if self.first[d].is_none() {
                self.first[d].clone_from(&other.first[s]);
            }
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<ArrayRef> {
        if self.entropy {
            return Ok(Arc::new(
                self.counts.iter().map(entropy).collect::<Float64Array>(),
            ));
        }
        let chosen: Vec<Option<Vec<u8>>> = if self.mode {
            self.counts
                .into_iter()
                .map(|c| {
                    c.into_iter()
                        .max_by(|(ka, na), (kb, nb)| na.cmp(nb).then_with(|| kb.cmp(ka)))
                        .map(|(k, _)| k)
                })
                .collect()
        } else {
            self.first
        };
        // a group without a value takes the row of a NULL
        let null = arrow::array::new_null_array(&self.input, 1);
        let null_rows = self
            .converter
            .convert_columns(&[null])
            .map_err(Error::arrow)?;
        let null_row = null_rows.row(0).as_ref().to_vec();
        let parser = self.converter.parser();
        let rows = chosen
            .iter()
            .map(|c| parser.parse(c.as_deref().unwrap_or(&null_row)));
        let mut out = self.converter.convert_rows(rows).map_err(Error::arrow)?;
        Ok(out.remove(0))
    }

    fn size(&self) -> usize {
        let counted: usize = self
            .counts
            .iter()
            .map(|c| c.keys().map(|k| k.len() + 40).sum::<usize>() + 48)
            .sum();
        let first: usize = self.first.iter().flatten().map(|k| k.len() + 24).sum();
        counted + first + self.first.capacity() * 24
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng, rngs::StdRng};

    use super::*;

    /// Frames that slide (both ends non-decreasing, some empty), over
    /// values with NULLs and repeats: the sorted window gives what sorting
    /// each frame's values gives.
    #[test]
    fn a_sliding_window_matches_each_frame_sorted() {
        let mut rng = StdRng::seed_from_u64(7);
        for round in 0..200 {
            let n = rng.random_range(1..60);
            let values: Vec<Option<f64>> = (0..n)
                .map(|_| (rng.random_range(0..5) > 0).then(|| f64::from(rng.random_range(-4..6))))
                .collect();
            // frames whose start and end (an empty frame's read as its
            // start) never move back
            let (mut s, mut e) = (0usize, 0usize);
            let (mut fs, mut fe) = (Vec::new(), Vec::new());
            for _ in 0..n {
                s = (s + rng.random_range(0..3)).min(n);
                e = (e + rng.random_range(0..4)).min(n);
                fs.push(s);
                if s > 0 && s >= e && rng.random_range(0..3) == 0 {
                    fe.push(s - 1); // empty
                    e = s;
                } else {
                    e = e.max(s);
                    fe.push(e);
                }
            }
            let q = [0.5, 0.25, 0.9][round % 3];
            let lerp = |lo: f64, hi: f64, f: f64| lo + f * (hi - lo);
            let got = slide(
                |i| values[i],
                &fs,
                &fe.iter()
                    .zip(&fs)
                    .map(|(&e, &s)| e.max(s))
                    .collect::<Vec<_>>(),
                q,
                f64::total_cmp,
                lerp,
            );
            for i in 0..n {
                let mut frame: Vec<f64> = (fs[i]..fe[i].max(fs[i]))
                    .filter_map(|r| values[r])
                    .collect();
                frame.sort_unstable_by(f64::total_cmp);
                assert_eq!(
                    got[i],
                    quantile_at(&frame, q, lerp),
                    "round {round}, row {i}"
                );
            }
        }
    }

    #[test]
    fn frames_that_move_back_are_left_to_the_aggregation() {
        let values: ArrayRef = Arc::new(Float64Array::from(vec![1.0, 2.0, 3.0]));
        let median = |fs: &[usize], fe: &[usize]| {
            sliding_quantile(AggregateFunction::Median, &values, None, fs, fe).unwrap()
        };
        assert!(median(&[0, 1, 0], &[1, 2, 3]).is_none());
        assert!(median(&[0, 0, 0], &[3, 2, 3]).is_none());
        assert!(
            sliding_quantile(AggregateFunction::Mode, &values, None, &[0], &[1])
                .unwrap()
                .is_none()
        );
        let got = median(&[0, 0, 1], &[1, 2, 3]).unwrap();
        assert_eq!(
            got.as_primitive::<Float64Type>().values().to_vec(),
            vec![1.0, 1.5, 2.5]
        );
        // one frame shared by 200 rows: handed over once and sorted, rather
        // than its 200 rows moved for each of them; a frame of 10 slides
        let values: ArrayRef = Arc::new(Float64Array::from_iter_values((0..200).map(f64::from)));
        let whole = |n: usize| {
            sliding_quantile(
                AggregateFunction::Median,
                &values,
                None,
                &vec![0; n],
                &vec![n; n],
            )
            .unwrap()
        };
        assert!(whole(200).is_none());
        assert!(whole(10).is_some());
    }
}
