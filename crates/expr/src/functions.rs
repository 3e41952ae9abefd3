//! Scalar functions: abs, round, lower, upper, length, substr, coalesce,
//! date_part.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, Int64Array, PrimitiveArray, StringArray, StringBuilder,
    new_null_array,
};
use arrow::datatypes::{
    DataType, Date32Type, Decimal128Type, Float64Type, Int32Type, Int64Type,
    TimestampMicrosecondType,
};
use weir_planner::scalar::{civil_from_days, days_from_civil};
use weir_planner::types::sql_type_name;
use weir_planner::{Expr, ScalarFunction};

use super::arith::{binary_kernel, fits_precision, pow10};
use super::cast::cast_array;
use super::{EvalError, Input, Result, Value, eval, eval_coalesce};

fn arity(
    func: ScalarFunction,
    args: &[Expr],
    range: std::ops::RangeInclusive<usize>,
) -> Result<()> {
    if range.contains(&args.len()) {
        Ok(())
    } else {
        Err(EvalError::InvalidInput(format!(
            "{} takes {} to {} arguments, got {}",
            func.name(),
            range.start(),
            range.end(),
            args.len()
        )))
    }
}

fn eval_all(args: &[Expr], input: &Input<'_>) -> Result<Vec<Value>> {
    args.iter().map(|a| eval(a, input)).collect()
}

fn cast_value(v: Value, to: &DataType) -> Result<Value> {
    if v.data_type() == to {
        return Ok(v);
    }
    v.map(|a| cast_array(a, to))
}

fn as_string(v: Value) -> Result<Value> {
    cast_value(v, &DataType::Utf8)
}

/// Evaluates a function call; `expr` is the call itself (for its type).
pub(crate) fn eval_function(
    func: ScalarFunction,
    args: &[Expr],
    expr: &Expr,
    input: &Input<'_>,
) -> Result<Value> {
    match func {
        ScalarFunction::Concat
        | ScalarFunction::ConcatWs
        | ScalarFunction::Strpos
        | ScalarFunction::Replace
        | ScalarFunction::Trim
        | ScalarFunction::Ltrim
        | ScalarFunction::Rtrim
        | ScalarFunction::Left
        | ScalarFunction::Right
        | ScalarFunction::Lpad
        | ScalarFunction::Rpad
        | ScalarFunction::Reverse
        | ScalarFunction::Repeat
        | ScalarFunction::StartsWith
        | ScalarFunction::EndsWith
        | ScalarFunction::Contains => {
            arity(func, args, 1..=usize::MAX)?;
            let values = args
                .iter()
                .map(|a| eval(a, input))
                .collect::<Result<Vec<_>>>()?;
            super::text::eval_text(func, &values)
        }
        ScalarFunction::Greatest
        | ScalarFunction::Least
        | ScalarFunction::Floor
        | ScalarFunction::Ceil
        | ScalarFunction::Trunc
        | ScalarFunction::Sign
        | ScalarFunction::Sqrt
        | ScalarFunction::Power
        | ScalarFunction::Exp
        | ScalarFunction::Ln
        | ScalarFunction::Log10
        | ScalarFunction::Log
        | ScalarFunction::Log2 => {
            arity(func, args, 1..=usize::MAX)?;
            let values = args
                .iter()
                .map(|a| eval(a, input))
                .collect::<Result<Vec<_>>>()?;
            super::math::eval_math(func, &values)
        }
        ScalarFunction::Md5
        | ScalarFunction::Levenshtein
        | ScalarFunction::SplitPart
        | ScalarFunction::Ascii
        | ScalarFunction::Chr
        | ScalarFunction::Translate => {
            arity(func, args, 1..=3)?;
            let values = eval_all(args, input)?;
            super::text::eval_text(func, &values)
        }
        ScalarFunction::RegexpMatches
        | ScalarFunction::RegexpFullMatch
        | ScalarFunction::RegexpExtract
        | ScalarFunction::RegexpReplace => {
            arity(func, args, 2..=4)?;
            let values = eval_all(args, input)?;
            super::regex::eval_regex(func, &values)
        }
        ScalarFunction::Glob => {
            arity(func, args, 2..=2)?;
            let values = eval_all(args, input)?;
            super::regex::eval_glob(&values)
        }
        ScalarFunction::LikeEscape | ScalarFunction::IlikeEscape => {
            arity(func, args, 3..=3)?;
            let values = eval_all(args, input)?;
            super::like::eval_escape(func == ScalarFunction::IlikeEscape, &values)
        }
        ScalarFunction::Printf | ScalarFunction::Format => {
            arity(func, args, 1..=usize::MAX)?;
            let values = eval_all(args, input)?;
            super::format::eval_format(func, &values)
        }
        ScalarFunction::Sin
        | ScalarFunction::Cos
        | ScalarFunction::Tan
        | ScalarFunction::Cot
        | ScalarFunction::Asin
        | ScalarFunction::Acos
        | ScalarFunction::Atan
        | ScalarFunction::Atan2
        | ScalarFunction::Degrees
        | ScalarFunction::Radians
        | ScalarFunction::Cbrt
        | ScalarFunction::IsNan
        | ScalarFunction::IsInf
        | ScalarFunction::IsFinite
        | ScalarFunction::Gcd
        | ScalarFunction::Lcm
        | ScalarFunction::SetSeed => {
            arity(func, args, 1..=2)?;
            let values = eval_all(args, input)?;
            super::math::eval_math(func, &values)
        }
        ScalarFunction::Pi => Ok(Value::Scalar(Arc::new(arrow::array::Float64Array::from(
            vec![std::f64::consts::PI],
        )))),
        ScalarFunction::Random => Ok(Value::Array(super::math::random(input.len))),
        ScalarFunction::Error => {
            arity(func, args, 1..=1)?;
            let message = as_string(eval(&args[0], input)?)?;
            let a = message.array();
            let text = a.as_string::<i32>();
            match (0..text.len()).find(|&i| text.is_valid(i)) {
                Some(i) if input.len > 0 => Err(EvalError::InvalidInput(text.value(i).to_string())),
                None if input.len > 0 => Err(EvalError::InvalidInput("error()".into())),
                _ => Ok(Value::Scalar(new_null_array(&DataType::Null, 1))),
            }
        }
        ScalarFunction::DateDiff
        | ScalarFunction::Strftime
        | ScalarFunction::Strptime
        | ScalarFunction::MakeDate
        | ScalarFunction::MakeTimestamp
        | ScalarFunction::Now
        | ScalarFunction::Today
        | ScalarFunction::EpochMs
        | ScalarFunction::LastDay
        | ScalarFunction::DayName
        | ScalarFunction::MonthName => {
            let values = eval_all(args, input)?;
            super::datetime::eval_datetime(func, &values, input.len)
        }
        ScalarFunction::DateTrunc => {
            arity(func, args, 2..=2)?;
            let part = match &args[0] {
                Expr::Literal(weir_planner::ScalarValue::Utf8(p)) => p.clone(),
                _ => {
                    return Err(EvalError::Unsupported(
                        "date_trunc needs a constant part".into(),
                    ));
                }
            };
            let x = cast_value(
                eval(&args[1], input)?,
                &weir_planner::types::timestamp_type(),
            )?;
            x.map(|a| date_trunc(&part, a))
        }
        ScalarFunction::Coalesce => {
            arity(func, args, 1..=usize::MAX)?;
            eval_coalesce(expr, args, input)
        }
        ScalarFunction::Abs => {
            arity(func, args, 1..=1)?;
            super::arith::abs(&eval(&args[0], input)?)
        }
        ScalarFunction::Round => {
            arity(func, args, 1..=2)?;
            let x = eval(&args[0], input)?;
            let digits = match args.get(1) {
                Some(d) => cast_value(eval(d, input)?, &DataType::Int64)?,
                None => Value::Scalar(Arc::new(Int64Array::from(vec![0i64]))),
            };
            let out = round(&x, &digits)?;
            // DECIMAL results take the scale the planner declared for them
            // (`min(k, s)` digits); the rounded value converts exactly
            match expr.data_type(input.schema) {
                t @ DataType::Decimal128(..) if *out.data_type() != t => cast_value(out, &t),
                _ => Ok(out),
            }
        }
        ScalarFunction::Lower | ScalarFunction::Upper => {
            arity(func, args, 1..=1)?;
            let upper = func == ScalarFunction::Upper;
            as_string(eval(&args[0], input)?)?.map(|a| {
                let s = a.as_string::<i32>();
                let out: StringArray = s
                    .iter()
                    .map(|v| {
                        v.map(|v| {
                            if upper {
                                v.to_uppercase()
                            } else {
                                v.to_lowercase()
                            }
                        })
                    })
                    .collect();
                Ok(Arc::new(out))
            })
        }
        ScalarFunction::OctetLength => {
            arity(func, args, 1..=1)?;
            eval(&args[0], input)?.map(|a| {
                if *a.data_type() == DataType::Null {
                    return Ok(new_null_array(&DataType::Int64, a.len()));
                }
                let out: Int64Array = a
                    .as_binary::<i32>()
                    .iter()
                    .map(|v| v.map(|v| v.len() as i64))
                    .collect();
                Ok(Arc::new(out) as ArrayRef)
            })
        }
        ScalarFunction::Length => {
            arity(func, args, 1..=1)?;
            as_string(eval(&args[0], input)?)?.map(|a| {
                let s = a.as_string::<i32>();
                let offsets = s.value_offsets();
                let bytes = |w: &[i32]| &s.value_data()[w[0] as usize..w[1] as usize];
                let first = offsets.first().map_or(0, |&o| o as usize);
                let last = offsets.last().map_or(0, |&o| o as usize);
                // characters: every byte of ASCII text (one pass over all
                // of it), else the bytes that start one (UTF-8's others
                // are 0b10xxxxxx)
                let lengths: Vec<i64> = if s.value_data()[first..last].is_ascii() {
                    offsets.windows(2).map(|w| i64::from(w[1] - w[0])).collect()
                } else {
                    offsets
                        .windows(2)
                        .map(|w| bytes(w).iter().filter(|&&b| b & 0xC0 != 0x80).count() as i64)
                        .collect()
                };
                Ok(Arc::new(Int64Array::new(lengths.into(), s.nulls().cloned())) as ArrayRef)
            })
        }
        ScalarFunction::Substr => {
            arity(func, args, 2..=3)?;
            let s = as_string(eval(&args[0], input)?)?;
            let start = cast_value(eval(&args[1], input)?, &DataType::Int64)?;
            let len = match args.get(2) {
                Some(l) => Some(cast_value(eval(l, input)?, &DataType::Int64)?),
                None => None,
            };
            substr(&s, &start, len.as_ref())
        }
        ScalarFunction::DatePart => {
            arity(func, args, 2..=2)?;
            let field = eval(&args[0], input)?;
            let field = match (&field, field.data_type()) {
                (Value::Scalar(a), DataType::Utf8) if a.is_valid(0) => {
                    a.as_string::<i32>().value(0).to_ascii_lowercase()
                }
                (Value::Scalar(_), DataType::Utf8 | DataType::Null) => {
                    let t = expr.data_type(input.schema);
                    return Ok(Value::Scalar(new_null_array(&t, 1)));
                }
                _ => {
                    return Err(EvalError::Unsupported(
                        "date_part needs a constant field name".into(),
                    ));
                }
            };
            let field = DateField::parse(&field)?;
            eval(&args[1], input)?.map(|a| date_part(field, a))
        }
    }
}

/// `round(x, digits)`, half away from zero; integers and decimals keep
/// their type.
fn round(x: &Value, digits: &Value) -> Result<Value> {
    match x.data_type().clone() {
        DataType::Float64 => {
            binary_kernel::<Float64Type, Int64Type, Float64Type>(x, digits, |v, d| {
                Ok(round_f64(v, d))
            })
        }
        DataType::Int32 => binary_kernel::<Int32Type, Int64Type, Int32Type>(x, digits, |v, d| {
            round_int(v as i128, d)
                .and_then(|r| i32::try_from(r).ok())
                .ok_or_else(|| round_overflow(v, d))
        }),
        DataType::Int64 => binary_kernel::<Int64Type, Int64Type, Int64Type>(x, digits, |v, d| {
            round_int(v as i128, d)
                .and_then(|r| i64::try_from(r).ok())
                .ok_or_else(|| round_overflow(v, d))
        }),
        // FLOAT in DOUBLE; the other integers as DECIMAL(20,0), which holds them all
        DataType::Float32 => {
            let r = round(&cast_value(x.clone(), &DataType::Float64)?, digits)?;
            cast_value(r, &DataType::Float32)
        }
        t if weir_planner::types::is_integer(&t) => {
            let r = round(
                &cast_value(x.clone(), &DataType::Decimal128(20, 0))?,
                digits,
            )?;
            cast_value(r, &t)
        }
        DataType::Decimal128(p, s) => {
            let out =
                binary_kernel::<Decimal128Type, Int64Type, Decimal128Type>(x, digits, |v, d| {
                    // digits past `d` become zero: round the unscaled value at 10^(s-d)
                    let drop = s as i64 - d;
                    let r = if drop <= 0 {
                        Some(v)
                    } else {
                        round_int(v, -drop)
                    };
                    r.filter(|r| fits_precision(*r, p)).ok_or_else(|| {
                        round_overflow(weir_planner::scalar::format_decimal(v, s), d)
                    })
                })?;
            out.map(|a| {
                Ok(Arc::new(
                    a.as_primitive::<Decimal128Type>()
                        .clone()
                        .with_precision_and_scale(p, s)?,
                ))
            })
        }
        DataType::Null => Ok(x.clone()),
        other => Err(EvalError::Unsupported(format!(
            "round is not defined for {}",
            sql_type_name(&other)
        ))),
    }
}

fn round_overflow(v: impl std::fmt::Display, d: i64) -> EvalError {
    EvalError::OutOfRange(format!("Overflow in round({v}, {d})"))
}

/// DuckDB's double rounding: `round(v * 10^d) / 10^d`, the input when that
/// is not finite; for `d < 0`, `round(v / 10^-d) * 10^-d`, 0 when that is
/// not finite (`round(1.5, -1000)` is 0).
fn round_f64(v: f64, d: i64) -> f64 {
    let d = d.clamp(-400, 400) as i32;
    if d >= 0 {
        let m = 10f64.powi(d);
        let r = (v * m).round() / m;
        if r.is_finite() { r } else { v }
    } else {
        let m = 10f64.powi(-d);
        let r = (v / m).round() * m;
        if r.is_finite() { r } else { 0.0 }
    }
}

/// Rounds an integer to `d` decimal digits (only negative `d` changes it),
/// half away from zero.
fn round_int(v: i128, d: i64) -> Option<i128> {
    if d >= 0 {
        return Some(v);
    }
    let Some(m) = i32::try_from(-d).ok().and_then(pow10) else {
        return Some(0);
    };
    let q = v / m;
    let r = v % m;
    let q = if r.unsigned_abs() >= (m as u128).div_ceil(2) {
        q + v.signum()
    } else {
        q
    };
    q.checked_mul(m)
}

/// DuckDB's `substring(s, offset, length)` on characters.
fn substr_range(size: i64, offset: i64, length: i64) -> Option<(i64, i64)> {
    let mut length = length;
    if length == 0 {
        return None;
    }
    let start = if offset > 0 {
        (offset - 1).min(size)
    } else if offset < 0 {
        (size.saturating_add(offset)).max(0)
    } else {
        length = length.saturating_sub(1);
        if length <= 0 {
            return None;
        }
        0
    };
    let (start, end) = if length > 0 {
        (start, start.saturating_add(length).min(size))
    } else {
        (start.saturating_add(length).max(0), start)
    };
    (start < end).then_some((start, end))
}

fn substr(s: &Value, start: &Value, len: Option<&Value>) -> Result<Value> {
    let scalar = s.is_scalar() && start.is_scalar() && len.is_none_or(|l| l.is_scalar());
    let n = [Some(s), Some(start), len]
        .into_iter()
        .flatten()
        .map(|v| v.array().len())
        .max()
        .unwrap_or(0);
    let sa = s.array().as_string::<i32>();
    let st = start.array().as_primitive::<Int64Type>();
    let ln = len.map(|l| l.array().as_primitive::<Int64Type>());
    let idx = |v: &Value, i: usize| if v.is_scalar() { 0 } else { i };
    let mut b = StringBuilder::with_capacity(n, sa.value_data().len().min(n * 16));
    for i in 0..n {
        let (si, ti) = (idx(s, i), idx(start, i));
        if sa.is_null(si) || st.is_null(ti) {
            b.append_null();
            continue;
        }
        let length = match (len, ln) {
            (Some(l), Some(la)) => {
                let li = idx(l, i);
                if la.is_null(li) {
                    b.append_null();
                    continue;
                }
                la.value(li)
            }
            _ => u32::MAX as i64,
        };
        let text = sa.value(si);
        let offset = st.value(ti);
        if text.is_ascii() {
            match substr_range(text.len() as i64, offset, length) {
                Some((a, e)) => b.append_value(&text[a as usize..e as usize]),
                None => b.append_value(""),
            }
        } else {
            let size = text.chars().count() as i64;
            match substr_range(size, offset, length) {
                Some((a, e)) => {
                    let sub: String = text
                        .chars()
                        .skip(a as usize)
                        .take((e - a) as usize)
                        .collect();
                    b.append_value(&sub);
                }
                None => b.append_value(""),
            }
        }
    }
    Ok(Value::wrap(Arc::new(b.finish()), scalar))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DateField {
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
    Millisecond,
    Microsecond,
    Dow,
    IsoDow,
    Doy,
    Quarter,
    Week,
    Epoch,
}

impl DateField {
    fn parse(s: &str) -> Result<Self> {
        Ok(match s.trim() {
            "year" | "years" | "y" | "yr" | "yrs" => Self::Year,
            "month" | "months" | "mon" | "mons" => Self::Month,
            "day" | "days" | "d" | "dayofmonth" => Self::Day,
            "hour" | "hours" | "h" | "hr" | "hrs" => Self::Hour,
            "minute" | "minutes" | "min" | "mins" | "m" => Self::Minute,
            "second" | "seconds" | "sec" | "secs" | "s" => Self::Second,
            "millisecond" | "milliseconds" | "ms" | "msec" => Self::Millisecond,
            "microsecond" | "microseconds" | "us" | "usec" => Self::Microsecond,
            "dow" | "dayofweek" | "weekday" => Self::Dow,
            "isodow" => Self::IsoDow,
            "doy" | "dayofyear" => Self::Doy,
            "quarter" | "quarters" => Self::Quarter,
            "week" | "weeks" | "w" | "weekofyear" => Self::Week,
            "epoch" => Self::Epoch,
            other => {
                return Err(EvalError::InvalidInput(format!(
                    "extract specifier \"{other}\" not recognized"
                )));
            }
        })
    }

    /// The field of the timestamp `days` + `micros_of_day`.
    fn extract(self, days: i32, tod: i64) -> i64 {
        let dow = (days as i64 + 4).rem_euclid(7); // 1970-01-01 was a Thursday
        match self {
            Self::Year => civil_from_days(days).0 as i64,
            Self::Month => civil_from_days(days).1 as i64,
            Self::Day => civil_from_days(days).2 as i64,
            Self::Quarter => (civil_from_days(days).1 as i64 - 1) / 3 + 1,
            Self::Hour => tod / 3_600_000_000,
            Self::Minute => tod / 60_000_000 % 60,
            Self::Second => tod / 1_000_000 % 60,
            Self::Millisecond => tod / 1_000 % 60_000,
            Self::Microsecond => tod % 60_000_000,
            Self::Dow => dow,
            Self::IsoDow => {
                if dow == 0 {
                    7
                } else {
                    dow
                }
            }
            Self::Doy => {
                let y = civil_from_days(days).0;
                days_from_civil(y, 1, 1).map_or(0, |jan1| days as i64 - jan1 as i64 + 1)
            }
            Self::Week => {
                // the ISO week is the week of its Thursday
                let iso = if dow == 0 { 7 } else { dow };
                let thursday = days as i64 - (iso - 1) + 3;
                let thursday = thursday.clamp(i32::MIN as i64, i32::MAX as i64) as i32;
                let y = civil_from_days(thursday).0;
                days_from_civil(y, 1, 1).map_or(0, |jan1| (thursday as i64 - jan1 as i64) / 7 + 1)
            }
            Self::Epoch => days as i64 * 86_400 + tod / 1_000_000,
        }
    }
}

/// `epoch`: seconds since 1970-01-01 as DOUBLE, with the fraction of a
/// second, as DuckDB.
fn epoch_seconds(a: &ArrayRef) -> Result<ArrayRef> {
    let out: PrimitiveArray<Float64Type> = match a.data_type() {
        DataType::Date32 => a
            .as_primitive::<Date32Type>()
            .unary(|d| d as f64 * 86_400.0),
        DataType::Timestamp(..) => {
            let a = cast_array(a, &weir_planner::types::timestamp_type())?;
            a.as_primitive::<TimestampMicrosecondType>()
                .unary(|t| t as f64 / 1e6)
        }
        DataType::Null => return Ok(new_null_array(&DataType::Float64, a.len())),
        other => {
            return Err(EvalError::Unsupported(format!(
                "date_part is not defined for {}",
                sql_type_name(other)
            )));
        }
    };
    Ok(Arc::new(out))
}

/// `date_trunc(part, t)` on TIMESTAMPs.
fn date_trunc(part: &str, a: &ArrayRef) -> Result<ArrayRef> {
    use weir_planner::scalar::MICROS_PER_DAY;
    let ts = a.as_primitive::<TimestampMicrosecondType>();
    let day_of = |t: i64| t.div_euclid(MICROS_PER_DAY);
    let floor_to = |t: i64, unit: i64| t - t.rem_euclid(unit);
    let at_day = |d: i64| d * MICROS_PER_DAY;
    let f: Box<dyn Fn(i64) -> i64> = match part {
        "microsecond" => Box::new(|t| t),
        "millisecond" => Box::new(move |t| floor_to(t, 1_000)),
        "second" => Box::new(move |t| floor_to(t, 1_000_000)),
        "minute" => Box::new(move |t| floor_to(t, 60_000_000)),
        "hour" => Box::new(move |t| floor_to(t, 3_600_000_000)),
        "day" => Box::new(move |t| floor_to(t, MICROS_PER_DAY)),
        // ISO weeks start on Monday; 1970-01-01 was a Thursday
        "week" => Box::new(move |t| {
            let d = day_of(t);
            at_day(d - (d + 3).rem_euclid(7))
        }),
        "month" | "quarter" | "year" => {
            let part = part.to_string();
            Box::new(move |t| {
                let (y, m, _) = civil_from_days(day_of(t) as i32);
                let m = match part.as_str() {
                    "month" => m,
                    "quarter" => (m - 1) / 3 * 3 + 1,
                    _ => 1,
                };
                days_from_civil(y, m, 1).map_or(t, |d| at_day(d as i64))
            })
        }
        other => {
            return Err(EvalError::InvalidInput(format!(
                "date_trunc specifier \"{other}\" not recognized"
            )));
        }
    };
    let out: PrimitiveArray<TimestampMicrosecondType> = ts.unary(f);
    Ok(Arc::new(out))
}

fn date_part(field: DateField, a: &ArrayRef) -> Result<ArrayRef> {
    if field == DateField::Epoch {
        return epoch_seconds(a);
    }
    let out: PrimitiveArray<Int64Type> = match a.data_type() {
        DataType::Date32 => {
            let a = a.as_primitive::<Date32Type>();
            let range = arrow::compute::min(a).zip(arrow::compute::max(a));
            match range {
                // the field of each day of the batch's range, computed once
                // per day when the days are fewer than the rows (dates of a
                // few years): a row is then one load, not a calendar's sums
                Some((lo, hi)) if i64::from(hi) - i64::from(lo) < a.len() as i64 => {
                    let table: Vec<i64> = (lo..=hi).map(|d| field.extract(d, 0)).collect();
                    // (a NULL's slot may hold any day: clamped, its value unused)
                    a.unary(|d| table[(d.clamp(lo, hi) - lo) as usize])
                }
                _ => a.unary(|d| field.extract(d, 0)),
            }
        }
        DataType::Timestamp(..) => {
            let a = cast_array(a, &weir_planner::types::timestamp_type())?;
            a.as_primitive::<TimestampMicrosecondType>().unary(|t| {
                let days = t.div_euclid(86_400_000_000);
                let tod = t.rem_euclid(86_400_000_000);
                field.extract(days.clamp(i32::MIN as i64, i32::MAX as i64) as i32, tod)
            })
        }
        DataType::Null => return Ok(new_null_array(&DataType::Int64, a.len())),
        other => {
            return Err(EvalError::Unsupported(format!(
                "date_part is not defined for {}",
                sql_type_name(other)
            )));
        }
    };
    Ok(Arc::new(out))
}

#[cfg(test)]
mod tests {
    use arrow::array::{Array, Date32Array, Int64Array};

    use super::*;

    #[test]
    fn a_field_of_dates_in_a_short_range_reads_each_days_field_from_a_table() {
        // 4,000 rows over 400 days around two new years and a leap day
        // (1991-12-01 on), one in ten NULL with a far day in its slot
        let start = days_from_civil(1991, 12, 1).unwrap();
        let days: Vec<i32> = (0..4000).map(|i| start + (i * 7919) % 400).collect();
        let valid = (0..4000).map(|i| i % 10 != 3);
        let nulls = arrow::buffer::NullBuffer::from_iter(valid);
        let mut far = days.clone();
        far[3] = -100_000;
        let a: ArrayRef = Arc::new(Date32Array::new(far.into(), Some(nulls)));
        for field in [
            DateField::Year,
            DateField::Month,
            DateField::Day,
            DateField::Quarter,
            DateField::Dow,
            DateField::Doy,
            DateField::Week,
        ] {
            let got = date_part(field, &a).unwrap();
            let got = got.as_any().downcast_ref::<Int64Array>().unwrap();
            for (i, &d) in days.iter().enumerate() {
                if i % 10 == 3 {
                    assert!(got.is_null(i));
                } else {
                    assert_eq!(got.value(i), field.extract(d, 0), "{field:?} of day {d}");
                }
            }
        }
    }
}
