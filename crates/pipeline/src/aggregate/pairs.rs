//! The statistics of numeric pairs: `covar_pop(y, x)`, `covar_samp`,
//! `corr` and the `regr_*` family, over the pairs where neither value is
//! NULL (both DOUBLE, cast by the binder). One state per group keeps each
//! value's moments (the variances' `Moments`: Welford's update, Chan's
//! merge) and their co-moment, updated and merged the same way; each
//! function reads it at the end as DuckDB's does (its NULLs and NaNs
//! included).

use std::any::Any;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Float64Array, UInt32Array};
use arrow::datatypes::{DataType, Float64Type};
use weir_planner::AggregateFunction;

use super::{Accumulator, Moments, conform, downcast, pairs};
use crate::error::{Error, Result};

/// The moments of one group's pairs: each value's own (the variances'
/// [`super::Moments`]), their co-moment, and their sums (the means DuckDB
/// reads for `regr_avgx`, `regr_avgy` and `regr_intercept`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct PairMoments {
    x: Moments,
    y: Moments,
    /// Sum of `(x - mean_x) * (y - mean_y)`.
    co: f64,
    sum_x: f64,
    sum_y: f64,
}

impl PairMoments {
    fn add(&mut self, y: f64, x: f64) {
        let dx = x - self.x.mean;
        self.x.add(x);
        self.y.add(y);
        self.co += dx * (y - self.y.mean);
        self.sum_x += x;
        self.sum_y += y;
    }

    fn merge(&mut self, other: &PairMoments) {
        let (a, b) = (self.x.count as f64, other.x.count as f64);
        if a > 0.0 && b > 0.0 {
            let dx = other.x.mean - self.x.mean;
            let dy = other.y.mean - self.y.mean;
            self.co += other.co + dx * dy * a * b / (a + b);
        } else {
            self.co += other.co;
        }
        self.x.merge(&other.x);
        self.y.merge(&other.y);
        self.sum_x += other.sum_x;
        self.sum_y += other.sum_y;
    }

    fn count(&self) -> u64 {
        self.x.count as u64
    }

    /// Population variance of `x` (0 under two pairs, as DuckDB's).
    fn var_x(&self) -> f64 {
        population_variance(&self.x)
    }

    fn var_y(&self) -> f64 {
        population_variance(&self.y)
    }

    fn covar_pop(&self) -> f64 {
        self.co / self.count() as f64
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
        if self.count() == 0 {
            return None;
        }
        let n = self.count() as f64;
        Some(match func {
            CovarPop => self.covar_pop(),
            CovarSamp if self.count() < 2 => return None,
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

/// The population variance DuckDB's pair statistics read: 0 under two
/// values.
fn population_variance(m: &Moments) -> f64 {
    if m.count > 1 {
        m.m2 / m.count as f64
    } else {
        0.0
    }
}

/// The accumulator of one of the statistics of pairs.
pub(super) struct PairsAcc {
    func: AggregateFunction,
    moments: Vec<PairMoments>,
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
        self.moments.resize(groups, PairMoments::default());
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
                .map(|m| u32::try_from(m.count()).unwrap_or(u32::MAX));
            return Ok(Arc::new(UInt32Array::from_iter_values(counts)));
        }
        let values: Float64Array = self.moments.iter().map(|m| m.value(self.func)).collect();
        Ok(Arc::new(values))
    }

    fn size(&self) -> usize {
        self.moments.capacity() * std::mem::size_of::<PairMoments>()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(pairs: &[(f64, f64)]) -> PairMoments {
        let mut m = PairMoments::default();
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
            assert_eq!(left.count(), whole.count());
            for (a, b) in [
                (left.co, whole.co),
                (left.x.m2, whole.x.m2),
                (left.y.m2, whole.y.m2),
                (left.x.mean, whole.x.mean),
                (left.y.mean, whole.y.mean),
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
        assert_eq!(PairMoments::default().value(CovarPop), None);
        // a line: y = 2x + 1
        let line = of(&[(1.0, 0.0), (3.0, 1.0), (5.0, 2.0), (7.0, 3.0)]);
        assert_eq!(line.value(RegrSlope), Some(2.0));
        assert_eq!(line.value(RegrIntercept), Some(1.0));
        assert!(line.value(Corr).is_some_and(|c| (c - 1.0).abs() < 1e-12));
        assert_eq!(line.value(RegrSxx), Some(5.0));
    }
}
