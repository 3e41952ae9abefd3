//! A long IN list compiled into a hash set of its non-NULL items, built
//! once per query (see [`weir_planner::InItems`]) and probed once per row.

use std::collections::HashSet;

use arrow::array::{Array, ArrayRef, ArrowPrimitiveType, AsArray};
use arrow::buffer::BooleanBuffer;
use arrow::datatypes::{
    DataType, Date32Type, Decimal128Type, Float64Type, Int32Type, Int64Type,
    TimestampMicrosecondType,
};
use weir_planner::ScalarValue;

/// The non-NULL items of an IN list, by the type they were cast to.
#[derive(Debug)]
pub(crate) enum InSet {
    /// INTEGER and DATE items.
    I32(HashSet<i32>),
    /// BIGINT and TIMESTAMP items.
    I64(HashSet<i64>),
    /// DECIMAL items, unscaled (all at the tested value's scale).
    I128(HashSet<i128>),
    /// DOUBLE items by the bits of their normal form (-0.0 is 0.0, every
    /// NaN the one NaN), so that they match as `=` does.
    F64(HashSet<u64>),
    /// VARCHAR items.
    Str(HashSet<String>),
    /// Items of another type: probed by comparison instead.
    Other,
}

fn f64_key(x: f64) -> u64 {
    if x.is_nan() {
        f64::NAN.to_bits()
    } else {
        (x + 0.0).to_bits()
    }
}

impl InSet {
    /// The set of `items` (all of one type, NULLs skipped).
    pub(crate) fn build(items: &[ScalarValue]) -> Self {
        use ScalarValue as S;
        let items = items.iter().filter(|v| !v.is_null());
        let Some(first) = items.clone().next() else {
            return Self::Other;
        };
        match first {
            S::Int32(_) | S::Date32(_) => Self::I32(
                items
                    .filter_map(|v| match v {
                        S::Int32(x) | S::Date32(x) => Some(*x),
                        _ => None,
                    })
                    .collect(),
            ),
            S::Int64(_) | S::TimestampMicros(_) => Self::I64(
                items
                    .filter_map(|v| match v {
                        S::Int64(x) | S::TimestampMicros(x) => Some(*x),
                        _ => None,
                    })
                    .collect(),
            ),
            S::Decimal128(..) => Self::I128(
                items
                    .filter_map(|v| match v {
                        S::Decimal128(x, ..) => Some(*x),
                        _ => None,
                    })
                    .collect(),
            ),
            S::Float64(_) => Self::F64(
                items
                    .filter_map(|v| match v {
                        S::Float64(x) => Some(f64_key(*x)),
                        _ => None,
                    })
                    .collect(),
            ),
            S::Utf8(_) => Self::Str(
                items
                    .filter_map(|v| match v {
                        S::Utf8(x) => Some(x.clone()),
                        _ => None,
                    })
                    .collect(),
            ),
            _ => Self::Other,
        }
    }

    /// For each row of `a`, whether its value is in the set (NULL rows
    /// give anything: the caller masks them); `None` when the set does not
    /// apply to `a`'s type.
    pub(crate) fn probe(&self, a: &ArrayRef) -> Option<BooleanBuffer> {
        fn prim<T: ArrowPrimitiveType>(
            a: &ArrayRef,
            f: impl Fn(T::Native) -> bool,
        ) -> BooleanBuffer {
            BooleanBuffer::collect_bool(a.len(), |i| f(a.as_primitive::<T>().value(i)))
        }
        Some(match (self, a.data_type()) {
            (Self::I32(s), DataType::Int32) => prim::<Int32Type>(a, |v| s.contains(&v)),
            (Self::I32(s), DataType::Date32) => prim::<Date32Type>(a, |v| s.contains(&v)),
            (Self::I64(s), DataType::Int64) => prim::<Int64Type>(a, |v| s.contains(&v)),
            (Self::I64(s), DataType::Timestamp(..)) => {
                prim::<TimestampMicrosecondType>(a, |v| s.contains(&v))
            }
            (Self::I128(s), DataType::Decimal128(..)) => {
                prim::<Decimal128Type>(a, |v| s.contains(&v))
            }
            (Self::F64(s), DataType::Float64) => {
                prim::<Float64Type>(a, |v| s.contains(&f64_key(v)))
            }
            (Self::Str(s), DataType::Utf8) => {
                let strings = a.as_string::<i32>();
                BooleanBuffer::collect_bool(a.len(), |i| s.contains(strings.value(i)))
            }
            _ => return None,
        })
    }
}
