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
use arrow::buffer::{BooleanBuffer, NullBuffer};
use arrow::compute::{CastOptions, can_cast_types, cast_with_options};
use arrow::datatypes::{
    DataType, Date32Type, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type,
    Int64Type, TimestampMicrosecondType, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use weir_planner::scalar::{
    divide_rounded, format_date, format_decimal, format_timestamp, parse_date, parse_decimal,
    parse_timestamp,
};
use weir_planner::types::{is_integer, is_numeric};

use super::arith::{fits_precision, rescale};
use super::{EvalError, Result};

const MICROS_PER_DAY: i64 = 86_400_000_000;

/// DuckDB's name of a type in conversion and overflow errors (its
/// physical type names for the integers).
pub(crate) fn type_name(t: &DataType) -> String {
    match t {
        DataType::Boolean => "BOOL".into(),
        DataType::Int8 => "INT8".into(),
        DataType::Int16 => "INT16".into(),
        DataType::Int32 => "INT32".into(),
        DataType::Int64 => "INT64".into(),
        DataType::UInt8 => "UINT8".into(),
        DataType::UInt16 => "UINT16".into(),
        DataType::UInt32 => "UINT32".into(),
        DataType::UInt64 => "UINT64".into(),
        DataType::Float32 => "FLOAT".into(),
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
        (Utf8, _) => from_string(a.as_string::<i32>(), to, false)?,
        (_, Utf8) => Arc::new(to_string(a)?),
        (Boolean, _) => {
            let b = a.as_boolean();
            let ints = PrimitiveArray::<Int32Type>::from_iter(b.iter().map(|v| v.map(i32::from)));
            cast_array(&(Arc::new(ints) as ArrayRef), to)?
        }
        (t, Boolean) if is_numeric(t) => {
            let zero = cast_array(
                &super::scalar::scalar_to_array(&weir_planner::ScalarValue::Int32(0), 1)?,
                from,
            )?;
            let ne = arrow::compute::kernels::cmp::neq(a, &arrow::array::Scalar::new(zero))?;
            Arc::new(ne)
        }
        (Float32, _) => {
            let wide = Arc::new(map::<Float32Type, Float64Type>(a, |v| Ok(v as f64))?) as ArrayRef;
            if *to == Float64 {
                wide
            } else if is_integer(to) {
                float_to_int(&wide, to, a)?
            } else {
                cast_array(&wide, to)?
            }
        }
        (Float64, Float32) => Arc::new(map::<Float64Type, Float32Type>(a, |v| {
            let r = v as f32;
            if r.is_infinite() && v.is_finite() {
                Err(out_of_range(from, format_double(v), to))
            } else {
                Ok(r)
            }
        })?),
        (f, t) if is_integer(f) && is_integer(t) => {
            let wide = int_to_i128(a)?;
            narrow_int(&wide, to, &|i| out_of_range(from, value_text(a, i), to))?
        }
        (f, Float32 | Float64) if is_integer(f) => arrow_cast(a, to)?,
        (f, Decimal128(p, s)) if is_integer(f) => {
            let wide = Arc::new(int_to_i128(a)?) as ArrayRef;
            let (p, s) = (*p, *s);
            let out = map::<Decimal128Type, Decimal128Type>(&wide, |v| {
                rescale(v, 0, s)
                    .filter(|r| fits_precision(*r, p))
                    .ok_or_else(|| out_of_range(from, v, to))
            })?;
            Arc::new(out.with_precision_and_scale(p, s)?)
        }
        // DOUBLE to integer rounds half to even, as DuckDB (nearbyint)
        (Float64, t) if is_integer(t) => float_to_int(a, to, a)?,
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
        (Decimal128(p, s), t) if is_integer(t) && *p <= 18 && (0..=18).contains(s) => {
            // every value fits 64 bits: rounded without a 128-bit division
            // or a result per value; a value out of the target's range is
            // named by the general path
            let m = 10i64.pow(*s as u32);
            let values: Vec<i64> = a
                .as_primitive::<Decimal128Type>()
                .values()
                .iter()
                .map(|&v| divide_rounded(v as i64, m))
                .collect();
            let rounded = PrimitiveArray::<Int64Type>::new(values.into(), a.nulls().cloned());
            match to {
                Int64 => Arc::new(rounded),
                _ => match cast_with_options(&rounded, to, &CastOptions::default()) {
                    Ok(c) if c.null_count() == a.null_count() => c,
                    _ => decimal_to_int(a, *s, to)?,
                },
            }
        }
        (Decimal128(_, s), t) if is_integer(t) => decimal_to_int(a, *s, to)?,
        (Decimal128(_, s), Float32) => {
            let d = 10f64.powi(*s as i32);
            Arc::new(map::<Decimal128Type, Float32Type>(a, |v| {
                Ok((v as f64 / d) as f32)
            })?)
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

/// The text of row `i` of `a` (not NULL), as a cast to VARCHAR writes it.
fn value_text(a: &ArrayRef, i: usize) -> String {
    to_string(&a.slice(i, 1))
        .ok()
        .filter(|s| s.is_valid(0))
        .map(|s| s.value(0).to_string())
        .unwrap_or_default()
}

/// An integer array of any width as 128-bit values (a DECIMAL(38,0) array).
fn int_to_i128(a: &ArrayRef) -> Result<PrimitiveArray<Decimal128Type>> {
    fn wide<I: ArrowPrimitiveType>(a: &ArrayRef) -> PrimitiveArray<Decimal128Type>
    where
        I::Native: Into<i128>,
    {
        a.as_primitive::<I>().unary(|v| v.into())
    }
    Ok(match a.data_type() {
        DataType::Int8 => wide::<Int8Type>(a),
        DataType::Int16 => wide::<Int16Type>(a),
        DataType::Int32 => wide::<Int32Type>(a),
        DataType::Int64 => wide::<Int64Type>(a),
        DataType::UInt8 => wide::<UInt8Type>(a),
        DataType::UInt16 => wide::<UInt16Type>(a),
        DataType::UInt32 => wide::<UInt32Type>(a),
        DataType::UInt64 => wide::<UInt64Type>(a),
        other => return Err(unsupported(other, &DataType::Decimal128(38, 0))),
    })
}

/// DECIMAL values (`a`, at scale `s`) to integer type `to`, rounded half
/// away from zero; DuckDB's error names the rounded value out of range.
fn decimal_to_int(a: &ArrayRef, s: i8, to: &DataType) -> Result<ArrayRef> {
    let fail = |v: i128| {
        EvalError::Cast(format!(
            "Failed to cast decimal value {v} to type {}",
            type_name(to)
        ))
    };
    let rounded = map::<Decimal128Type, Decimal128Type>(a, |v| {
        rescale(v, s, 0).ok_or_else(|| fail(v / 10i128.pow(s.max(0) as u32)))
    })?;
    narrow_int(&rounded, to, &|i| fail(rounded.value(i)))
}

/// 128-bit values as integer type `to`; `fail(row)` is the error for the
/// first value out of its range.
fn narrow_int(
    v: &PrimitiveArray<Decimal128Type>,
    to: &DataType,
    fail: &dyn Fn(usize) -> EvalError,
) -> Result<ArrayRef> {
    fn narrow<O: ArrowPrimitiveType>(
        v: &PrimitiveArray<Decimal128Type>,
        fail: &dyn Fn(usize) -> EvalError,
    ) -> Result<ArrayRef>
    where
        O::Native: TryFrom<i128>,
    {
        let mut out = Vec::with_capacity(v.len());
        for (i, x) in v.values().iter().enumerate() {
            if v.is_null(i) {
                out.push(O::Native::default());
                continue;
            }
            match O::Native::try_from(*x) {
                Ok(x) => out.push(x),
                Err(_) => return Err(fail(i)),
            }
        }
        Ok(Arc::new(PrimitiveArray::<O>::new(
            out.into(),
            v.nulls().cloned(),
        )))
    }
    match to {
        DataType::Int8 => narrow::<Int8Type>(v, fail),
        DataType::Int16 => narrow::<Int16Type>(v, fail),
        DataType::Int32 => narrow::<Int32Type>(v, fail),
        DataType::Int64 => narrow::<Int64Type>(v, fail),
        DataType::UInt8 => narrow::<UInt8Type>(v, fail),
        DataType::UInt16 => narrow::<UInt16Type>(v, fail),
        DataType::UInt32 => narrow::<UInt32Type>(v, fail),
        DataType::UInt64 => narrow::<UInt64Type>(v, fail),
        other => Err(unsupported(&DataType::Decimal128(38, 0), other)),
    }
}

/// DOUBLE values (`a`) to integer type `to`, rounded half to even as
/// DuckDB (nearbyint); an error names the value of `orig` (the FLOAT or
/// DOUBLE cast) out of range.
fn float_to_int(a: &ArrayRef, to: &DataType, orig: &ArrayRef) -> Result<ArrayRef> {
    const LIMIT: f64 = 1.7e38;
    let fail = |i: usize| out_of_range(orig.data_type(), value_text(orig, i), to);
    let f = a.as_primitive::<Float64Type>();
    let mut out = Vec::with_capacity(f.len());
    for (i, v) in f.values().iter().enumerate() {
        if f.is_null(i) {
            out.push(0i128);
            continue;
        }
        let r = v.round_ties_even();
        if !r.is_finite() || r.abs() >= LIMIT {
            return Err(fail(i));
        }
        out.push(r as i128);
    }
    let wide = PrimitiveArray::<Decimal128Type>::new(out.into(), f.nulls().cloned());
    narrow_int(&wide, to, &fail)
}

fn map<I: ArrowPrimitiveType, O: ArrowPrimitiveType>(
    a: &ArrayRef,
    f: impl Fn(I::Native) -> Result<O::Native>,
) -> Result<PrimitiveArray<O>> {
    a.as_primitive::<I>().try_unary(f)
}

/// Formats a FLOAT as DuckDB does: as [`format_double`], with the
/// shortest digits that read back as the same FLOAT.
pub(crate) fn format_float(v: f32) -> String {
    if v.is_finite() {
        exponent_style(format!("{v:?}"))
    } else {
        format_double(v as f64)
    }
}

/// Rust's `1e16` / `1e-5` exponent notation as DuckDB writes it (`1e+16`,
/// `1e-05`).
fn exponent_style(s: String) -> String {
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

/// Formats a double as DuckDB does: shortest round-trip digits, exponent
/// notation outside `[1e-4, 1e16)` written `1e+16` / `1e-05`.
pub(crate) fn format_double(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    exponent_style(format!("{v:?}"))
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
            DataType::Int8 => {
                let _ = write!(buf, "{}", a.as_primitive::<Int8Type>().value(i));
            }
            DataType::Int16 => {
                let _ = write!(buf, "{}", a.as_primitive::<Int16Type>().value(i));
            }
            DataType::Int32 => {
                let _ = write!(buf, "{}", a.as_primitive::<Int32Type>().value(i));
            }
            DataType::Int64 => {
                let _ = write!(buf, "{}", a.as_primitive::<Int64Type>().value(i));
            }
            DataType::UInt8 => {
                let _ = write!(buf, "{}", a.as_primitive::<UInt8Type>().value(i));
            }
            DataType::UInt16 => {
                let _ = write!(buf, "{}", a.as_primitive::<UInt16Type>().value(i));
            }
            DataType::UInt32 => {
                let _ = write!(buf, "{}", a.as_primitive::<UInt32Type>().value(i));
            }
            DataType::UInt64 => {
                let _ = write!(buf, "{}", a.as_primitive::<UInt64Type>().value(i));
            }
            DataType::Float32 => {
                buf.push_str(&format_float(a.as_primitive::<Float32Type>().value(i)))
            }
            DataType::Float64 => {
                buf.push_str(&format_double(a.as_primitive::<Float64Type>().value(i)))
            }
            DataType::Decimal128(_, s) => buf.push_str(&format_decimal(
                a.as_primitive::<Decimal128Type>().value(i),
                *s,
            )),
            DataType::Binary => buf.push_str(&weir_planner::scalar::format_blob(
                a.as_binary::<i32>().value(i),
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

/// Strings parsed by `f`: a string that does not parse fails the cast,
/// or with `lenient` (TRY_CAST) is NULL.
fn parse_map<O: ArrowPrimitiveType>(
    a: &StringArray,
    f: impl Fn(&str) -> Option<O::Native>,
    to: &DataType,
    lenient: bool,
) -> Result<PrimitiveArray<O>> {
    let mut out = Vec::with_capacity(a.len());
    let mut failed: Vec<usize> = Vec::new();
    for i in 0..a.len() {
        if a.is_null(i) {
            out.push(O::Native::default());
        } else {
            let s = a.value(i);
            match f(s) {
                Some(v) => out.push(v),
                None if lenient => {
                    failed.push(i);
                    out.push(O::Native::default());
                }
                None => return Err(bad_string(s, to)),
            }
        }
    }
    Ok(PrimitiveArray::new(
        out.into(),
        nulls_with(a.len(), a.nulls(), &failed),
    ))
}

/// `nulls` (of `len` rows) with the rows `failed` NULL as well.
fn nulls_with(len: usize, nulls: Option<&NullBuffer>, failed: &[usize]) -> Option<NullBuffer> {
    if failed.is_empty() {
        return nulls.cloned();
    }
    let mut valid = arrow::array::BooleanBufferBuilder::new(len);
    match nulls {
        Some(n) => valid.append_buffer(n.inner()),
        None => valid.append_n(len, true),
    }
    for &i in failed {
        valid.set_bit(i, false);
    }
    Some(NullBuffer::new(valid.finish()))
}

fn parse_int_map<O: ArrowPrimitiveType>(
    a: &StringArray,
    to: &DataType,
    lenient: bool,
) -> Result<PrimitiveArray<O>>
where
    O::Native: TryFrom<i128>,
{
    parse_map::<O>(
        a,
        |s| parse_int(s).and_then(|v| O::Native::try_from(v).ok()),
        to,
        lenient,
    )
}

/// Strings cast to `to`; with `lenient` (TRY_CAST) a string that does not
/// parse is NULL instead of an error.
fn from_string(a: &StringArray, to: &DataType, lenient: bool) -> Result<ArrayRef> {
    Ok(match to {
        DataType::Boolean => {
            let mut values = Vec::with_capacity(a.len());
            let mut failed = Vec::new();
            for i in 0..a.len() {
                if a.is_null(i) {
                    values.push(false);
                } else {
                    let s = a.value(i);
                    match parse_bool(s) {
                        Some(v) => values.push(v),
                        None if lenient => {
                            failed.push(i);
                            values.push(false);
                        }
                        None => return Err(bad_string(s, to)),
                    }
                }
            }
            Arc::new(BooleanArray::new(
                BooleanBuffer::from(values),
                nulls_with(a.len(), a.nulls(), &failed),
            ))
        }
        DataType::Int8 => Arc::new(parse_int_map::<Int8Type>(a, to, lenient)?),
        DataType::Int16 => Arc::new(parse_int_map::<Int16Type>(a, to, lenient)?),
        DataType::Int32 => Arc::new(parse_int_map::<Int32Type>(a, to, lenient)?),
        DataType::Int64 => Arc::new(parse_int_map::<Int64Type>(a, to, lenient)?),
        DataType::UInt8 => Arc::new(parse_int_map::<UInt8Type>(a, to, lenient)?),
        DataType::UInt16 => Arc::new(parse_int_map::<UInt16Type>(a, to, lenient)?),
        DataType::UInt32 => Arc::new(parse_int_map::<UInt32Type>(a, to, lenient)?),
        DataType::UInt64 => Arc::new(parse_int_map::<UInt64Type>(a, to, lenient)?),
        // a FLOAT past its range reads as infinity, as in DuckDB
        DataType::Float32 => Arc::new(parse_map::<Float32Type>(
            a,
            |s| s.trim().parse::<f32>().ok(),
            to,
            lenient,
        )?),
        DataType::Float64 => Arc::new(parse_map::<Float64Type>(a, parse_double, to, lenient)?),
        DataType::Decimal128(p, s) => {
            let (p, s) = (*p, *s);
            let out = parse_map::<Decimal128Type>(
                a,
                |x| parse_decimal(x, s).filter(|v| fits_precision(*v, p)),
                to,
                lenient,
            )?;
            Arc::new(out.with_precision_and_scale(p, s)?)
        }
        DataType::Binary => {
            let mut out = arrow::array::BinaryBuilder::with_capacity(a.len(), a.value_data().len());
            for i in 0..a.len() {
                if a.is_null(i) {
                    out.append_null();
                } else {
                    match weir_planner::scalar::parse_blob(a.value(i)) {
                        Ok(b) => out.append_value(b),
                        Err(_) if lenient => out.append_null(),
                        Err(e) => return Err(EvalError::Cast(e)),
                    }
                }
            }
            Arc::new(out.finish())
        }
        DataType::Date32 => Arc::new(parse_map::<Date32Type>(a, parse_date, to, lenient)?),
        DataType::Timestamp(..) => Arc::new(parse_map::<TimestampMicrosecondType>(
            a,
            parse_timestamp,
            to,
            lenient,
        )?),
        other => return Err(unsupported(&DataType::Utf8, other)),
    })
}

/// Casts `a` to `to` as TRY_CAST does: a value that does not convert is
/// NULL. Strings are parsed leniently; any other cast runs on the whole
/// array and, where it fails, on each half again, down to the single
/// values that fail. (A cast the types cannot make at all fails here; the
/// planner makes such a TRY_CAST NULL before it runs.)
pub(crate) fn try_cast_array(a: &ArrayRef, to: &DataType) -> Result<ArrayRef> {
    if a.data_type() == &DataType::Utf8
        && weir_planner::types::is_canonical(to)
        && to != &DataType::Utf8
    {
        return from_string(a.as_string::<i32>(), to, true);
    }
    let mut parts = Vec::new();
    try_cast_parts(a, to, &mut parts)?;
    if parts.len() == 1 {
        return Ok(parts.pop().expect("one part"));
    }
    let refs: Vec<&dyn Array> = parts.iter().map(AsRef::as_ref).collect();
    Ok(arrow::compute::concat(&refs)?)
}

fn try_cast_parts(a: &ArrayRef, to: &DataType, parts: &mut Vec<ArrayRef>) -> Result<()> {
    match cast_array(a, to) {
        Ok(cast) => parts.push(cast),
        Err(e @ EvalError::Unsupported(_)) => return Err(e),
        Err(_) if a.len() <= 1 => parts.push(new_null_array(to, a.len())),
        Err(_) => {
            let half = a.len() / 2;
            try_cast_parts(&a.slice(0, half), to, parts)?;
            try_cast_parts(&a.slice(half, a.len() - half), to, parts)?;
        }
    }
    Ok(())
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
