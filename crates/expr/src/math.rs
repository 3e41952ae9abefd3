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
        F::Log if args.len() == 2 => {
            binary_kernel::<Float64Type, Float64Type, Float64Type>(x, &args[1], |b, v| {
                Ok(v.log10() / b.log10())
            })
        }
        F::Sqrt | F::Exp | F::Ln | F::Log10 | F::Log | F::Log2 => {
            let f: fn(f64) -> f64 = match func {
                F::Sqrt => f64::sqrt,
                F::Exp => f64::exp,
                F::Ln => f64::ln,
                F::Log10 | F::Log => f64::log10,
                _ => f64::log2,
            };
            unary_f64(x, f)
        }
        F::Sin
        | F::Cos
        | F::Tan
        | F::Cot
        | F::Asin
        | F::Acos
        | F::Atan
        | F::Degrees
        | F::Radians
        | F::Cbrt => {
            let f: fn(f64) -> f64 = match func {
                F::Sin => f64::sin,
                F::Cos => f64::cos,
                F::Tan => f64::tan,
                F::Cot => |v| 1.0 / v.tan(),
                F::Asin => f64::asin,
                F::Acos => f64::acos,
                F::Atan => f64::atan,
                F::Degrees => f64::to_degrees,
                F::Radians => f64::to_radians,
                _ => f64::cbrt,
            };
            unary_f64(x, f)
        }
        F::Atan2 => binary_kernel::<Float64Type, Float64Type, Float64Type>(x, &args[1], |y, x| {
            Ok(y.atan2(x))
        }),
        F::IsNan | F::IsInf | F::IsFinite => x.map(|a| {
            if *a.data_type() == DataType::Null {
                return Ok(arrow::array::new_null_array(&DataType::Boolean, a.len()));
            }
            let f: fn(f64) -> bool = match func {
                F::IsNan => f64::is_nan,
                F::IsInf => f64::is_infinite,
                _ => f64::is_finite,
            };
            let out: BooleanArray = a
                .as_primitive::<Float64Type>()
                .iter()
                .map(|v| v.map(f))
                .collect();
            Ok(Arc::new(out) as ArrayRef)
        }),
        F::Gcd | F::Lcm => binary_kernel::<Int64Type, Int64Type, Int64Type>(x, &args[1], |a, b| {
            let abs = |v: i64| {
                v.checked_abs()
                    .ok_or_else(|| EvalError::OutOfRange(format!("Overflow on abs({v})")))
            };
            let (a, b) = (abs(a)?, abs(b)?);
            let g = gcd(a, b);
            if func == F::Gcd {
                return Ok(g);
            }
            if g == 0 {
                return Ok(0);
            }
            (a / g)
                .checked_mul(b)
                .ok_or_else(|| EvalError::OutOfRange("lcm value is out of range".into()))
        }),
        F::SetSeed => x.map(|a| {
            if *a.data_type() == DataType::Float64 {
                for v in a.as_primitive::<Float64Type>().iter().flatten() {
                    set_seed(v)?;
                }
            }
            Ok(arrow::array::new_null_array(&DataType::Null, a.len()))
        }),
        F::Floor | F::Ceil | F::Trunc => match x.data_type().clone() {
            DataType::Float64 => unary_f64(
                x,
                match func {
                    F::Floor => f64::floor,
                    F::Ceil => f64::ceil,
                    _ => f64::trunc,
                },
            ),
            t if weir_planner::types::is_integer(&t) || t == DataType::Null => Ok(x.clone()),
            // FLOAT in DOUBLE, back to FLOAT (floor and the like are exact)
            DataType::Float32 => {
                let wide = x.map(|a| super::cast::cast_array(a, &DataType::Float64))?;
                let out = eval_math(func, &[wide])?;
                out.map(|a| super::cast::cast_array(a, &DataType::Float32))
            }
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
                other if weir_planner::types::is_numeric(other) => {
                    let wide = super::cast::cast_array(a, &DataType::Float64)?;
                    return Ok(eval_math(func, &[Value::Array(wide)])?.array().clone());
                }
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

fn gcd(mut a: i64, mut b: i64) -> i64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The state random() draws from; 0 until the first draw or setseed.
static RANDOM_STATE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The splitmix64 increment.
const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

fn splitmix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `setseed(x)`: the next draws of random() follow from `x` (in [-1, 1]).
fn set_seed(x: f64) -> Result<()> {
    if !(-1.0..=1.0).contains(&x) {
        return Err(EvalError::InvalidInput(
            "SETSEED accepts seed values between -1.0 and 1.0, inclusive".into(),
        ));
    }
    let seed = splitmix(x.to_bits()) | 1;
    RANDOM_STATE.store(seed, std::sync::atomic::Ordering::Relaxed);
    Ok(())
}

/// `random()` for `n` rows: numbers in [0, 1), each row its own draw
/// (splitmix64 over a shared counter, so lanes never draw the same ones).
pub(crate) fn random(n: usize) -> ArrayRef {
    use std::sync::atomic::Ordering;
    let mut base = RANDOM_STATE.fetch_add(GOLDEN.wrapping_mul(n as u64), Ordering::Relaxed);
    if base == 0 {
        // first draw of the process: start from the clock
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
            | 1;
        let _ = RANDOM_STATE.compare_exchange(
            GOLDEN.wrapping_mul(n as u64),
            now,
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
        base = RANDOM_STATE.fetch_add(GOLDEN.wrapping_mul(n as u64), Ordering::Relaxed);
    }
    let out: PrimitiveArray<Float64Type> = (0..n as u64)
        .map(|k| {
            let r = splitmix(base.wrapping_add(GOLDEN.wrapping_mul(k)));
            // 53 random bits as a fraction of 2^53
            Some((r >> 11) as f64 / (1u64 << 53) as f64)
        })
        .collect();
    Arc::new(out)
}
