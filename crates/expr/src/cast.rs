//! `CAST` between the canonical types, as DuckDB does it.
//!
//! Every canonical pair is implemented here rather than with Arrow's cast
//! kernel, because Arrow differs from DuckDB in several places: DOUBLE and
//! DECIMAL to integer truncate in Arrow but round half away from zero in
//! DuckDB; Arrow's string parsing accepts and rejects different inputs and
//! its errors do not name the value as DuckDB's do; DOUBLE to VARCHAR
//! formats differently. Non-canonical types are brought to a canonical type
//! with Arrow's cast first, and pairs outside the canonical set fall back to
//! `cast_with_options(safe: false)`.

use std::fmt::Write;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, ArrowPrimitiveType, AsArray, BooleanArray, PrimitiveArray, StringArray,
    StringBuilder, new_null_array,
};
use arrow::buffer::BooleanBuffer;
use arrow::compute::{CastOptions, can_cast_types, cast_with_options};
use arrow::datatypes::{
    DataType, Date32Type, Decimal128Type, Float64Type, Int32Type, Int64Type,
    TimestampMicrosecondType,
};
use weir_planner::scalar::{
    format_date, format_decimal, format_timestamp, parse_date, parse_decimal, parse_timestamp,
};

use super::arith::{fits_precision, rescale};
use super::{EvalError, Result};

const MICROS_PER_DAY: i64 = 86_400_000_000;

/// DuckDB's name of a type in conversion errors.
fn type_name(t: &DataType) -> String {
    match t {
        DataType::Boolean => "BOOL".into(),
        DataType::Int32 => "INT32".into(),
        DataType::Int64 => "INT64".into(),
        DataType::Float64 => "DOUBLE".into(),
        DataType::Decimal128(p, s) => format!("DECIMAL({p},{s})"),
        DataType::Utf8 => "VARCHAR".into(),
        DataType::Date32 => "DATE".into(),
        DataType::Timestamp(..) => "TIMESTAMP".into(),
        other => weir_planner::types::sql_type_name(other),
    }
}

/// The canonical type a non-canonical one is computed in (the planner's
/// one map), `None` for canonical types.
fn canonical(t: &DataType) -> Option<DataType> {
    let c = weir_planner::types::canonical(t);
    (c != *t).then_some(c)
}

fn arrow_cast(a: &ArrayRef, to: &DataType) -> Result<ArrayRef> {
    if !can_cast_types(a.data_type(), to) {
        return Err(unsupported(a.data_type(), to));
    }
    let opts = CastOptions {
        safe: false,
        ..Default::default()
    };
    cast_with_options(a.as_ref(), to, &opts).map_err(|e| EvalError::Cast(e.to_string()))
}

fn unsupported(from: &DataType, to: &DataType) -> EvalError {
    EvalError::Unsupported(format!(
        "Unimplemented type for cast ({} -> {})",
        weir_planner::types::sql_type_name(from),
        weir_planner::types::sql_type_name(to)
    ))
}

fn out_of_range(from: &DataType, value: impl std::fmt::Display, to: &DataType) -> EvalError {
    EvalError::Cast(format!(
        "Type {} with value {value} can't be cast because the value is out of range for the destination type {}",
        type_name(from),
        type_name(to)
    ))
}

fn bad_string(s: &str, to: &DataType) -> EvalError {
    EvalError::Cast(format!(
        "Could not convert string '{s}' to {}",
        type_name(to)
    ))
}

/// Casts `a` to `to`.
pub(crate) fn cast_array(a: &ArrayRef, to: &DataType) -> Result<ArrayRef> {
    let from = a.data_type();
    if from == to {
        return Ok(a.clone());
    }
    if *from == DataType::Null {
        return Ok(new_null_array(to, a.len()));
    }
    if let Some(c) = canonical(from) {
        let a = arrow_cast(a, &c)?;
        return cast_array(&a, to);
    }
    if let (DataType::Interval(arrow::datatypes::IntervalUnit::MonthDayNano), DataType::Utf8) =
        (from, to)
    {
        let iv = a.as_primitive::<arrow::datatypes::IntervalMonthDayNanoType>();
        let out: StringArray = iv
            .iter()
            .map(|v| {
                v.map(|v| {
                    weir_planner::scalar::format_interval(v.months, v.days, v.nanoseconds / 1000)
                })
            })
            .collect();
        return Ok(Arc::new(out));
    }
    if !weir_planner::types::is_canonical(from) || !weir_planner::types::is_canonical(to) {
        return arrow_cast(a, to);
    }
    use DataType::*;
    let out: ArrayRef = match (from, to) {
        (Utf8, _) => from_string(a.as_string::<i32>(), to)?,
        (_, Utf8) => Arc::new(to_string(a)?),
        (Boolean, _) => {
            let b = a.as_boolean();
            let ints = PrimitiveArray::<Int32Type>::from_iter(b.iter().map(|v| v.map(i32::from)));
            cast_array(&(Arc::new(ints) as ArrayRef), to)?
        }
        (Int32 | Int64 | Float64 | Decimal128(..), Boolean) => {
            let zero = cast_array(
                &super::scalar::scalar_to_array(&weir_planner::ScalarValue::Int32(0), 1)?,
                from,
            )?;
            let ne = arrow::compute::kernels::cmp::neq(a, &arrow::array::Scalar::new(zero))?;
            Arc::new(ne)
        }
        (Int32, Int64) => Arc::new(map::<Int32Type, Int64Type>(a, |v| Ok(v as i64))?),
        (Int64, Int32) => Arc::new(map::<Int64Type, Int32Type>(a, |v| {
            i32::try_from(v).map_err(|_| out_of_range(from, v, to))
        })?),
        (Int32, Float64) => Arc::new(map::<Int32Type, Float64Type>(a, |v| Ok(v as f64))?),
        (Int64, Float64) => Arc::new(map::<Int64Type, Float64Type>(a, |v| Ok(v as f64))?),
        (Int32, Decimal128(p, s)) => int_to_decimal::<Int32Type>(a, *p, *s, to)?,
        (Int64, Decimal128(p, s)) => int_to_decimal::<Int64Type>(a, *p, *s, to)?,
        // DOUBLE to integer rounds half to even, as DuckDB (nearbyint)
        (Float64, Int32) => Arc::new(map::<Float64Type, Int32Type>(a, |v| {
            let r = v.round_ties_even();
            if r.is_finite() && r >= i32::MIN as f64 && r <= i32::MAX as f64 {
                Ok(r as i32)
            } else {
                Err(out_of_range(from, format_double(v), to))
            }
        })?),
        (Float64, Int64) => Arc::new(map::<Float64Type, Int64Type>(a, |v| {
            let r = v.round_ties_even();
            // i64::MAX as f64 rounds up to 2^63, which does not fit
            if r.is_finite() && r >= i64::MIN as f64 && r < i64::MAX as f64 {
                Ok(r as i64)
            } else {
                Err(out_of_range(from, format_double(v), to))
            }
        })?),
        (Float64, Decimal128(p, s)) => {
            let (p, s) = (*p, *s);
            let m = 10f64.powi(s as i32);
            let out = map::<Float64Type, Decimal128Type>(a, |v| {
                let r = (v * m).round();
                let limit = 10f64.powi(p as i32);
                if r.is_finite() && r.abs() < limit {
                    Ok(r as i128)
                } else {
                    Err(EvalError::Cast(format!(
                        "Could not cast value {} to DECIMAL({p},{s})",
                        format_double(v)
                    )))
                }
            })?;
            Arc::new(out.with_precision_and_scale(p, s)?)
        }
        (Decimal128(_, s), Int32 | Int64) => {
            let s = *s;
            let fail = |v: i128| out_of_range(from, format_decimal(v, s), to);
            if *to == Int32 {
                Arc::new(map::<Decimal128Type, Int32Type>(a, |v| {
                    rescale(v, s, 0)
                        .and_then(|r| i32::try_from(r).ok())
                        .ok_or_else(|| fail(v))
                })?)
            } else {
                Arc::new(map::<Decimal128Type, Int64Type>(a, |v| {
                    rescale(v, s, 0)
                        .and_then(|r| i64::try_from(r).ok())
                        .ok_or_else(|| fail(v))
                })?)
            }
        }
        (Decimal128(_, s), Float64) => {
            let d = 10f64.powi(*s as i32);
            Arc::new(map::<Decimal128Type, Float64Type>(a, |v| Ok(v as f64 / d))?)
        }
        (Decimal128(_, s1), Decimal128(p, s)) => {
            let (s1, p, s) = (*s1, *p, *s);
            let out = map::<Decimal128Type, Decimal128Type>(a, |v| {
                rescale(v, s1, s)
                    .filter(|r| fits_precision(*r, p))
                    .ok_or_else(|| {
                        EvalError::Cast(format!(
                            "Could not cast value {} to DECIMAL({p},{s})",
                            format_decimal(v, s1)
                        ))
                    })
            })?;
            Arc::new(out.with_precision_and_scale(p, s)?)
        }
        (Date32, Timestamp(..)) => Arc::new(map::<Date32Type, TimestampMicrosecondType>(a, |d| {
            (d as i64)
                .checked_mul(MICROS_PER_DAY)
                .ok_or_else(|| out_of_range(from, format_date(d), to))
        })?),
        (Timestamp(..), Date32) => Arc::new(map::<TimestampMicrosecondType, Date32Type>(a, |t| {
            i32::try_from(t.div_euclid(MICROS_PER_DAY)).map_err(|_| out_of_range(from, t, to))
        })?),
        _ => return Err(unsupported(from, to)),
    };
    Ok(out)
}

fn map<I: ArrowPrimitiveType, O: ArrowPrimitiveType>(
    a: &ArrayRef,
    f: impl Fn(I::Native) -> Result<O::Native>,
) -> Result<PrimitiveArray<O>> {
    a.as_primitive::<I>().try_unary(f)
}

fn int_to_decimal<I>(a: &ArrayRef, p: u8, s: i8, to: &DataType) -> Result<ArrayRef>
where
    I: ArrowPrimitiveType,
    I::Native: Into<i128> + std::fmt::Display,
{
    let from = a.data_type();
    let out = map::<I, Decimal128Type>(a, |v| {
        let wide: i128 = v.into();
        rescale(wide, 0, s)
            .filter(|r| fits_precision(*r, p))
            .ok_or_else(|| out_of_range(from, v, to))
    })?;
    Ok(Arc::new(out.with_precision_and_scale(p, s)?))
}

/// Formats a double as DuckDB does: shortest round-trip digits, exponent
/// notation outside `[1e-4, 1e16)` written `1e+16` / `1e-05`.
pub(crate) fn format_double(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let s = format!("{v:?}");
    match s.split_once('e') {
        Some((mant, exp)) => {
            let (sign, digits) = match exp.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', exp),
            };
            format!("{mant}e{sign}{digits:0>2}")
        }
        None => s,
    }
}

fn to_string(a: &ArrayRef) -> Result<StringArray> {
    let mut b = StringBuilder::with_capacity(a.len(), a.len() * 8);
    let mut buf = String::new();
    for i in 0..a.len() {
        if a.is_null(i) {
            b.append_null();
            continue;
        }
        buf.clear();
        match a.data_type() {
            DataType::Boolean => buf.push_str(if a.as_boolean().value(i) {
                "true"
            } else {
                "false"
            }),
            DataType::Int32 => {
                let _ = write!(buf, "{}", a.as_primitive::<Int32Type>().value(i));
            }
            DataType::Int64 => {
                let _ = write!(buf, "{}", a.as_primitive::<Int64Type>().value(i));
            }
            DataType::Float64 => {
                buf.push_str(&format_double(a.as_primitive::<Float64Type>().value(i)))
            }
            DataType::Decimal128(_, s) => buf.push_str(&format_decimal(
                a.as_primitive::<Decimal128Type>().value(i),
                *s,
            )),
            DataType::Date32 => buf.push_str(&format_date(a.as_primitive::<Date32Type>().value(i))),
            DataType::Timestamp(..) => buf.push_str(&format_timestamp(
                a.as_primitive::<TimestampMicrosecondType>().value(i),
            )),
            other => return Err(unsupported(other, &DataType::Utf8)),
        }
        b.append_value(&buf);
    }
    Ok(b.finish())
}

fn parse_map<O: ArrowPrimitiveType>(
    a: &StringArray,
    f: impl Fn(&str) -> Option<O::Native>,
    to: &DataType,
) -> Result<PrimitiveArray<O>> {
    let mut out = Vec::with_capacity(a.len());
    for i in 0..a.len() {
        if a.is_null(i) {
            out.push(O::Native::default());
        } else {
            let s = a.value(i);
            out.push(f(s).ok_or_else(|| bad_string(s, to))?);
        }
    }
    Ok(PrimitiveArray::new(out.into(), a.nulls().cloned()))
}

fn from_string(a: &StringArray, to: &DataType) -> Result<ArrayRef> {
    Ok(match to {
        DataType::Boolean => {
            let mut values = Vec::with_capacity(a.len());
            for i in 0..a.len() {
                if a.is_null(i) {
                    values.push(false);
                } else {
                    let s = a.value(i);
                    values.push(parse_bool(s).ok_or_else(|| bad_string(s, to))?);
                }
            }
            Arc::new(BooleanArray::new(
                BooleanBuffer::from(values),
                a.nulls().cloned(),
            ))
        }
        DataType::Int32 => Arc::new(parse_map::<Int32Type>(
            a,
            |s| parse_int(s).and_then(|v| i32::try_from(v).ok()),
            to,
        )?),
        DataType::Int64 => Arc::new(parse_map::<Int64Type>(
            a,
            |s| parse_int(s).and_then(|v| i64::try_from(v).ok()),
            to,
        )?),
        DataType::Float64 => Arc::new(parse_map::<Float64Type>(a, parse_double, to)?),
        DataType::Decimal128(p, s) => {
            let (p, s) = (*p, *s);
            let out = parse_map::<Decimal128Type>(
                a,
                |x| parse_decimal(x, s).filter(|v| fits_precision(*v, p)),
                to,
            )?;
            Arc::new(out.with_precision_and_scale(p, s)?)
        }
        DataType::Date32 => Arc::new(parse_map::<Date32Type>(a, parse_date, to)?),
        DataType::Timestamp(..) => Arc::new(parse_map::<TimestampMicrosecondType>(
            a,
            parse_timestamp,
            to,
        )?),
        other => return Err(unsupported(&DataType::Utf8, other)),
    })
}

fn parse_bool(s: &str) -> Option<bool> {
    let s = s.trim();
    if s.eq_ignore_ascii_case("true") || s.eq_ignore_ascii_case("t") || s == "1" {
        Some(true)
    } else if s.eq_ignore_ascii_case("false") || s.eq_ignore_ascii_case("f") || s == "0" {
        Some(false)
    } else {
        None
    }
}

fn parse_double(s: &str) -> Option<f64> {
    let t = s.trim();
    // Rust accepts "infinity" and "nan" spelled any case, as DuckDB does
    t.parse::<f64>().ok()
}

/// An integer string, or a decimal one (with an optional exponent) rounded
/// half away from zero: `'1.5'::INTEGER` is 2 and `'1e3'::INTEGER` 1000 in
/// DuckDB.
fn parse_int(s: &str) -> Option<i128> {
    let t = s.trim();
    if let Ok(v) = t.parse::<i64>() {
        return Some(v as i128);
    }
    parse_decimal(t, 0)
}
