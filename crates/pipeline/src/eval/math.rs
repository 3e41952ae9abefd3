//! Numeric functions of the registry: floor, ceil, trunc, sign, sqrt,
//! pow, exp, ln, log10, log2; and greatest / least.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, PrimitiveArray};
use arrow::compute::kernels::zip::zip;
use arrow::datatypes::{DataType, Decimal128Type, Float64Type, Int32Type, Int64Type};
use weir_planner::scalar::pow10;
use weir_planner::{BinaryOp, ScalarFunction as F};

use super::arith::{binary_kernel, compare};
use super::{EvalError, Result, Value};

/// Evaluates numeric function `func` over its evaluated arguments.
pub(crate) fn eval_math(func: F, args: &[Value]) -> Result<Value> {
    let x = &args[0];
    match func {
        F::Power => {
            binary_kernel::<Float64Type, Float64Type, Float64Type>(
                x,
                &args[1],
                |a, b| Ok(a.powf(b)),
            )
        }
        F::Sqrt | F::Exp | F::Ln | F::Log10 | F::Log2 => {
            let f: fn(f64) -> f64 = match func {
                F::Sqrt => f64::sqrt,
                F::Exp => f64::exp,
                F::Ln => f64::ln,
                F::Log10 => f64::log10,
                _ => f64::log2,
            };
            unary_f64(x, f)
        }
        F::Floor | F::Ceil | F::Trunc => match x.data_type().clone() {
            DataType::Float64 => unary_f64(
                x,
                match func {
                    F::Floor => f64::floor,
                    F::Ceil => f64::ceil,
                    _ => f64::trunc,
                },
            ),
            DataType::Int32 | DataType::Int64 | DataType::Null => Ok(x.clone()),
            DataType::Decimal128(p, s) => {
                let m = pow10(s as i32).unwrap_or(1);
                x.map(|a| {
                    let out: PrimitiveArray<Decimal128Type> =
                        a.as_primitive::<Decimal128Type>().unary(|v| {
                            let q = v / m;
                            let r = v % m;
                            match func {
                                F::Floor if r < 0 => q - 1,
                                F::Ceil if r > 0 => q + 1,
                                _ => q,
                            }
                        });
                    Ok(Arc::new(out.with_precision_and_scale(p, 0)?))
                })
            }
            other => Err(not_numeric(func, &other)),
        },
        F::Sign => x.map(|a| {
            let out: PrimitiveArray<Int32Type> = match a.data_type() {
                DataType::Float64 => a.as_primitive::<Float64Type>().unary(|v| {
                    if v > 0.0 {
                        1
                    } else if v < 0.0 {
                        -1
                    } else {
                        0
                    }
                }),
                DataType::Int32 => a.as_primitive::<Int32Type>().unary(|v| v.signum()),
                DataType::Int64 => a.as_primitive::<Int64Type>().unary(|v| v.signum() as i32),
                DataType::Decimal128(..) => a
                    .as_primitive::<Decimal128Type>()
                    .unary(|v| v.signum() as i32),
                DataType::Null => PrimitiveArray::new_null(a.len()),
                other => return Err(not_numeric(func, other)),
            };
            Ok(Arc::new(out) as ArrayRef)
        }),
        F::Greatest | F::Least => {
            let op = if func == F::Greatest {
                BinaryOp::Gt
            } else {
                BinaryOp::Lt
            };
            let mut best = args[0].clone();
            for next in &args[1..] {
                // take `next` where it wins or `best` is NULL
                let wins = compare(op, next, &best)?;
                let scalar = best.is_scalar() && next.is_scalar();
                let n = if scalar {
                    1
                } else {
                    best.array().len().max(next.array().len())
                };
                let wins = wins.into_array(n)?;
                let b = best.clone().into_array(n)?;
                let c = next.clone().into_array(n)?;
                let wins = wins.as_boolean();
                let take: BooleanArray = (0..n)
                    .map(|i| Some(b.is_null(i) || (wins.is_valid(i) && wins.value(i))))
                    .collect();
                best = Value::wrap(zip(&take, &c, &b)?, scalar);
            }
            Ok(best)
        }
        other => Err(EvalError::Unsupported(format!(
            "{} is not a numeric function",
            other.name()
        ))),
    }
}

fn unary_f64(x: &Value, f: fn(f64) -> f64) -> Result<Value> {
    x.map(|a| {
        if *a.data_type() == DataType::Null {
            return Ok(arrow::array::new_null_array(&DataType::Float64, a.len()));
        }
        let out: PrimitiveArray<Float64Type> = a.as_primitive::<Float64Type>().unary(f);
        Ok(Arc::new(out) as ArrayRef)
    })
}

fn not_numeric(func: F, t: &DataType) -> EvalError {
    EvalError::Unsupported(format!(
        "{} is not defined for {}",
        func.name(),
        weir_planner::types::sql_type_name(t)
    ))
}
