//! The statistics of numeric pairs: `covar_pop(y, x)`, `covar_samp`,
//! `corr` and the `regr_*` family, over the pairs where neither value is
//! NULL (both DOUBLE, cast by the binder). One state per group keeps the
//! count, the means and the co-moments, updated one pair at a time as
//! Welford's algorithm does (no large sums cancelling) and merged across
//! lanes by the pairwise formula of Chan et al.; each function reads it
//! at the end as DuckDB's does (its NULLs and NaNs included).

use std::any::Any;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Float64Array, UInt32Array};
use arrow::datatypes::{DataType, Float64Type};
use weir_planner::AggregateFunction;

use super::{Accumulator, conform, downcast, pairs};
use crate::error::{Error, Result};

/// The moments of one group's pairs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Moments {
    count: u64,
    mean_x: f64,
    mean_y: f64,
    /// Sum of `(x - mean_x)^2`.
    m2_x: f64,
    /// Sum of `(y - mean_y)^2`.
    m2_y: f64,
    /// Sum of `(x - mean_x) * (y - mean_y)`.
    co: f64,
    sum_x: f64,
    sum_y: f64,
}

impl Moments {
    fn add(&mut self, y: f64, x: f64) {
        self.count += 1;
        let n = self.count as f64;
        let dx = x - self.mean_x;
        let dy = y - self.mean_y;
        self.mean_x += dx / n;
        self.mean_y += dy / n;
        self.m2_x += dx * (x - self.mean_x);
        self.m2_y += dy * (y - self.mean_y);
        self.co += dx * (y - self.mean_y);
        self.sum_x += x;
        self.sum_y += y;
    }

    fn merge(&mut self, other: &Moments) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = *other;
            return;
        }
        let (a, b) = (self.count as f64, other.count as f64);
        let n = a + b;
        let dx = other.mean_x - self.mean_x;
        let dy = other.mean_y - self.mean_y;
        self.m2_x += other.m2_x + dx * dx * a * b / n;
        self.m2_y += other.m2_y + dy * dy * a * b / n;
        self.co += other.co + dx * dy * a * b / n;
        self.mean_x = (a * self.mean_x + b * other.mean_x) / n;
        self.mean_y = (a * self.mean_y + b * other.mean_y) / n;
        self.sum_x += other.sum_x;
        self.sum_y += other.sum_y;
        self.count += other.count;
    }

    /// Population variance of `x` (0 under two pairs, as DuckDB's).
    fn var_x(&self) -> f64 {
        if self.count > 1 {
            self.m2_x / self.count as f64
        } else {
            0.0
        }
    }

    fn var_y(&self) -> f64 {
        if self.count > 1 {
            self.m2_y / self.count as f64
        } else {
            0.0
        }
    }

    fn covar_pop(&self) -> f64 {
        self.co / self.count as f64
    }

    fn corr(&self) -> f64 {
        let sd = self.var_x().sqrt() * self.var_y().sqrt();
        if sd == 0.0 {
            f64::NAN
        } else {
            self.covar_pop() / sd
        }
    }

    fn slope(&self) -> f64 {
        self.covar_pop() / self.var_x()
    }

    /// `func`'s value, `None` for NULL.
    fn value(&self, func: AggregateFunction) -> Option<f64> {
        use AggregateFunction::*;
        if self.count == 0 {
            return None;
        }
        let n = self.count as f64;
        Some(match func {
            CovarPop => self.covar_pop(),
            CovarSamp if self.count < 2 => return None,
            CovarSamp => self.co / (n - 1.0),
            Corr => self.corr(),
            RegrSlope => self.slope(),
            RegrIntercept => {
                let slope = self.slope();
                if !slope.is_finite() {
                    return None;
                }
                self.sum_y / n - slope * (self.sum_x / n)
            }
            RegrR2 if self.var_x() == 0.0 => return None,
            RegrR2 if self.var_y() == 0.0 => 1.0,
            RegrR2 => self.corr().powi(2),
            RegrAvgx => self.sum_x / n,
            RegrAvgy => self.sum_y / n,
            RegrSxx => self.var_x() * n,
            RegrSyy => self.var_y() * n,
            RegrSxy => self.covar_pop() * n,
            _ => return None,
        })
    }
}

/// The accumulator of one of the statistics of pairs.
pub(super) struct PairsAcc {
    func: AggregateFunction,
    moments: Vec<Moments>,
}

impl PairsAcc {
    pub(super) fn new(func: AggregateFunction) -> Self {
        PairsAcc {
            func,
            moments: Vec::new(),
        }
    }
}

impl Accumulator for PairsAcc {
    fn resize(&mut self, groups: usize) {
        self.moments.resize(groups, Moments::default());
    }

    fn update(&mut self, _values: &ArrayRef, _groups: Option<&[u32]>) -> Result<()> {
        Err(Error::Internal(format!(
            "{}() given one argument",
            self.func.name()
        )))
    }

    fn update_keyed(
        &mut self,
        values: &ArrayRef,
        keys: &ArrayRef,
        groups: Option<&[u32]>,
    ) -> Result<()> {
        let y = conform(Arc::clone(values), &DataType::Float64)?;
        let x = conform(Arc::clone(keys), &DataType::Float64)?;
        let (y, x) = (
            y.as_primitive::<Float64Type>(),
            x.as_primitive::<Float64Type>(),
        );
        for i in 0..y.len() {
            if y.is_valid(i) && x.is_valid(i) {
                let g = groups.map_or(0, |ids| ids[i] as usize);
                self.moments[g].add(y.value(i), x.value(i));
            }
        }
        Ok(())
    }

    fn merge_from(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32]) -> Result<()> {
        let other = downcast::<Self>(other)?;
        for (s, g) in pairs(src, dst) {
            self.moments[g].merge(&other.moments[s]);
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<ArrayRef> {
        if self.func == AggregateFunction::RegrCount {
            let counts = self
                .moments
                .iter()
                .map(|m| u32::try_from(m.count).unwrap_or(u32::MAX));
            return Ok(Arc::new(UInt32Array::from_iter_values(counts)));
        }
        let values: Float64Array = self.moments.iter().map(|m| m.value(self.func)).collect();
        Ok(Arc::new(values))
    }

    fn size(&self) -> usize {
        self.moments.capacity() * std::mem::size_of::<Moments>()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(pairs: &[(f64, f64)]) -> Moments {
        let mut m = Moments::default();
        for &(y, x) in pairs {
            m.add(y, x);
        }
        m
    }

    #[test]
    fn merged_moments_equal_the_moments_of_all_pairs() {
        let all: Vec<(f64, f64)> = (0..40)
            .map(|i| (f64::from(i * i % 17), f64::from(i) * 0.5 - 3.0))
            .collect();
        for cut in [0, 1, 7, 20, 39, 40] {
            let mut left = of(&all[..cut]);
            left.merge(&of(&all[cut..]));
            let whole = of(&all);
            assert_eq!(left.count, whole.count);
            for (a, b) in [
                (left.co, whole.co),
                (left.m2_x, whole.m2_x),
                (left.m2_y, whole.m2_y),
                (left.mean_x, whole.mean_x),
                (left.mean_y, whole.mean_y),
            ] {
                assert!(
                    (a - b).abs() <= 1e-9 * b.abs().max(1.0),
                    "cut {cut}: {a} != {b}"
                );
            }
        }
    }

    #[test]
    fn values_follow_duckdbs_rules_for_few_pairs_and_no_spread() {
        use AggregateFunction::*;
        // one pair: no spread in x
        let one = of(&[(5.0, 5.0)]);
        assert_eq!(one.value(CovarPop), Some(0.0));
        assert_eq!(one.value(CovarSamp), None);
        assert!(one.value(Corr).is_some_and(f64::is_nan));
        assert!(one.value(RegrSlope).is_some_and(f64::is_nan));
        assert_eq!(one.value(RegrIntercept), None);
        assert_eq!(one.value(RegrR2), None);
        // y constant, x spread: slope 0, r2 1
        let flat = of(&[(1.0, 1.0), (1.0, 2.0)]);
        assert_eq!(flat.value(RegrSlope), Some(0.0));
        assert_eq!(flat.value(RegrIntercept), Some(1.0));
        assert_eq!(flat.value(RegrR2), Some(1.0));
        assert!(flat.value(Corr).is_some_and(f64::is_nan));
        // no pairs: NULL
        assert_eq!(Moments::default().value(CovarPop), None);
        // a line: y = 2x + 1
        let line = of(&[(1.0, 0.0), (3.0, 1.0), (5.0, 2.0), (7.0, 3.0)]);
        assert_eq!(line.value(RegrSlope), Some(2.0));
        assert_eq!(line.value(RegrIntercept), Some(1.0));
        assert!(line.value(Corr).is_some_and(|c| (c - 1.0).abs() < 1e-12));
        assert_eq!(line.value(RegrSxx), Some(5.0));
    }
}
