//! Comparisons, arithmetic, negation and string concatenation.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, ArrowPrimitiveType, AsArray, BooleanArray, PrimitiveArray, StringBuilder,
    new_null_array,
};
use arrow::buffer::{BooleanBuffer, NullBuffer};
use arrow::compute::kernels::cmp;
use arrow::datatypes::{
    DataType, Date32Type, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type,
    Int64Type, TimeUnit, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use weir_planner::BinaryOp;
use weir_planner::scalar::format_decimal;
pub(crate) use weir_planner::scalar::{fits_precision, pow10, rescale};
use weir_planner::types::{arithmetic_result_type, sql_type_name};

use super::cast::{cast_array, format_double, type_name};
use super::{EvalError, Result, Value};

fn out_of_range(msg: String) -> EvalError {
    EvalError::OutOfRange(msg)
}

/// DuckDB's error for `a // 0` and `a % 0`, naming the operation.
fn division_by_zero(a: impl std::fmt::Display, op: &str, b: impl std::fmt::Display) -> EvalError {
    EvalError::InvalidInput(format!("Division by zero in expression ({a} {op} {b})"))
}

/// Applies `f` row by row to two primitive values (arrays or scalars),
/// skipping rows where either side is NULL.
pub(crate) fn binary_kernel<L, R, O>(
    l: &Value,
    r: &Value,
    f: impl Fn(L::Native, R::Native) -> Result<O::Native>,
) -> Result<Value>
where
    L: ArrowPrimitiveType,
    R: ArrowPrimitiveType,
    O: ArrowPrimitiveType,
{
    let la = l.array().as_primitive::<L>();
    let ra = r.array().as_primitive::<R>();
    let scalar = l.is_scalar() && r.is_scalar();
    let len = if l.is_scalar() { ra.len() } else { la.len() };
    let len = if scalar { 1 } else { len };
    if (l.is_scalar() && la.is_null(0)) || (r.is_scalar() && ra.is_null(0)) {
        return Ok(Value::wrap(
            Arc::new(PrimitiveArray::<O>::new_null(len)),
            scalar,
        ));
    }
    let ln = if l.is_scalar() { None } else { la.nulls() };
    let rn = if r.is_scalar() { None } else { ra.nulls() };
    let nulls = NullBuffer::union(ln, rn);
    let lv = la.values();
    let rv = ra.values();
    let (ls, rs) = (l.is_scalar(), r.is_scalar());
    let mut out: Vec<O::Native> = Vec::with_capacity(len);
    let get = |i: usize| -> (L::Native, R::Native) {
        (lv[if ls { 0 } else { i }], rv[if rs { 0 } else { i }])
    };
    match &nulls {
        None => {
            for i in 0..len {
                let (a, b) = get(i);
                out.push(f(a, b)?);
            }
        }
        Some(n) => {
            for i in 0..len {
                if n.is_valid(i) {
                    let (a, b) = get(i);
                    out.push(f(a, b)?);
                } else {
                    out.push(O::Native::default());
                }
            }
        }
    }
    Ok(Value::wrap(
        Arc::new(PrimitiveArray::<O>::new(out.into(), nulls)),
        scalar,
    ))
}

/// [`binary_kernel`] for an operation that cannot fail, computed for every
/// row (NULL rows too: their result is masked by the NULL buffer), so the
/// loop has no branch.
fn infallible_kernel<T: ArrowPrimitiveType>(
    l: &Value,
    r: &Value,
    f: impl Fn(T::Native, T::Native) -> T::Native,
) -> Result<Value> {
    let la = l.array().as_primitive::<T>();
    let ra = r.array().as_primitive::<T>();
    let (ls, rs) = (l.is_scalar(), r.is_scalar());
    if (ls && la.is_null(0)) || (rs && ra.is_null(0)) {
        return binary_kernel::<T, T, T>(l, r, |a, b| Ok(f(a, b)));
    }
    let scalar = ls && rs;
    let nulls = NullBuffer::union(
        if ls { None } else { la.nulls() },
        if rs { None } else { ra.nulls() },
    );
    let (lv, rv) = (la.values(), ra.values());
    let out: Vec<T::Native> = match (ls && !scalar, rs && !scalar) {
        (true, _) => rv.iter().map(|b| f(lv[0], *b)).collect(),
        (_, true) => lv.iter().map(|a| f(*a, rv[0])).collect(),
        _ => lv.iter().zip(rv.iter()).map(|(a, b)| f(*a, *b)).collect(),
    };
    Ok(Value::wrap(
        Arc::new(PrimitiveArray::<T>::new(out.into(), nulls)),
        scalar,
    ))
}

fn cast_value(v: &Value, to: &DataType) -> Result<Value> {
    if v.data_type() == to {
        return Ok(v.clone());
    }
    v.map(|a| cast_array(a, to))
}

/// The type both operands of a comparison are brought to when they differ
/// (the planner normally makes them equal already): the planner's rule.
fn common_type(l: &DataType, r: &DataType) -> Option<DataType> {
    use DataType::*;
    Some(match (l, r) {
        (a, b) if a == b => a.clone(),
        (Null, t) | (t, Null) => t.clone(),
        (Date32, Timestamp(..)) | (Timestamp(..), Date32) => Timestamp(TimeUnit::Microsecond, None),
        (a, b) => weir_planner::types::numeric_common_type(a, b)?,
    })
}

fn coerce_pair(l: &Value, r: &Value) -> Result<(Value, Value)> {
    if l.data_type() == r.data_type() {
        return Ok((l.clone(), r.clone()));
    }
    let t = common_type(l.data_type(), r.data_type()).ok_or_else(|| {
        EvalError::Unsupported(format!(
            "cannot compare values of type {} and {}",
            sql_type_name(l.data_type()),
            sql_type_name(r.data_type())
        ))
    })?;
    Ok((cast_value(l, &t)?, cast_value(r, &t)?))
}

/// Makes -0.0 equal to 0.0 and every NaN the same (positive) NaN, as DuckDB
/// compares doubles; Arrow orders by `total_cmp`.
fn normalize_float(v: Value) -> Value {
    let a = v.array().as_primitive::<Float64Type>();
    let odd = a
        .values()
        .iter()
        .any(|x| (*x == 0.0 || x.is_nan()) && x.is_sign_negative());
    if !odd {
        return v;
    }
    let out: PrimitiveArray<Float64Type> = a.unary(|x| if x.is_nan() { f64::NAN } else { x + 0.0 });
    Value::wrap(Arc::new(out), v.is_scalar())
}

/// [`normalize_float`] for FLOAT.
fn normalize_float32(v: Value) -> Value {
    let a = v.array().as_primitive::<Float32Type>();
    let odd = a
        .values()
        .iter()
        .any(|x| (*x == 0.0 || x.is_nan()) && x.is_sign_negative());
    if !odd {
        return v;
    }
    let out: PrimitiveArray<Float32Type> = a.unary(|x| if x.is_nan() { f32::NAN } else { x + 0.0 });
    Value::wrap(Arc::new(out), v.is_scalar())
}

/// A comparison `l op r`, NULL if either side is NULL.
pub(crate) fn compare(op: BinaryOp, l: &Value, r: &Value) -> Result<Value> {
    let (mut l, mut r) = coerce_pair(l, r)?;
    let scalar = l.is_scalar() && r.is_scalar();
    if *l.data_type() == DataType::Null {
        let len = l.array().len().max(r.array().len());
        return Ok(Value::wrap(new_null_array(&DataType::Boolean, len), scalar));
    }
    if *l.data_type() == DataType::Float64 {
        l = normalize_float(l);
        r = normalize_float(r);
    } else if *l.data_type() == DataType::Float32 {
        l = normalize_float32(l);
        r = normalize_float32(r);
    }
    if let Some(out) = utf8_equals_literal(op, &l, &r) {
        return Ok(Value::Array(Arc::new(out)));
    }
    let out = match op {
        BinaryOp::Eq => cmp::eq(&l, &r)?,
        BinaryOp::NotEq => cmp::neq(&l, &r)?,
        BinaryOp::Lt => cmp::lt(&l, &r)?,
        BinaryOp::LtEq => cmp::lt_eq(&l, &r)?,
        BinaryOp::Gt => cmp::gt(&l, &r)?,
        BinaryOp::GtEq => cmp::gt_eq(&l, &r)?,
        other => {
            return Err(EvalError::Unsupported(format!(
                "{} is not a comparison",
                other.as_str()
            )));
        }
    };
    Ok(Value::wrap(Arc::new(out), scalar))
}

/// `column = 'literal'` (or `<>`) on VARCHAR, the commonest string filter,
/// without a per-row string comparison call: a length check, then the
/// bytes. `None` when the operands are not a column and a non-NULL literal.
fn utf8_equals_literal(op: BinaryOp, l: &Value, r: &Value) -> Option<BooleanArray> {
    let negate = match op {
        BinaryOp::Eq => false,
        BinaryOp::NotEq => true,
        _ => return None,
    };
    let (column, literal) = match (l, r) {
        (Value::Array(c), Value::Scalar(s)) | (Value::Scalar(s), Value::Array(c)) => (c, s),
        _ => return None,
    };
    if *column.data_type() != DataType::Utf8 || literal.is_null(0) {
        return None;
    }
    let needle = literal.as_string::<i32>().value(0).as_bytes();
    let strings = column.as_string::<i32>();
    let offsets = strings.value_offsets();
    let data = strings.value_data();
    let n = needle.len();
    // One pass over the offsets, 64 rows to a word. A call to memcmp per row
    // costs more than short strings take to compare, so those compare inline.
    let equal = |s: usize, e: usize| -> bool {
        e - s == n
            && match n {
                0 => true,
                1 => data[s] == needle[0],
                2..=16 => data[s..e].iter().zip(needle).all(|(a, b)| a == b),
                _ => &data[s..e] == needle,
            }
    };
    let rows = strings.len();
    let mut words: Vec<u64> = Vec::with_capacity(rows.div_ceil(64));
    let (mut word, mut bit) = (0u64, 0);
    for w in offsets.windows(2) {
        word |= u64::from(equal(w[0] as usize, w[1] as usize) != negate) << bit;
        bit += 1;
        if bit == 64 {
            words.push(word);
            (word, bit) = (0, 0);
        }
    }
    if bit > 0 {
        words.push(word);
    }
    let bits = BooleanBuffer::new(arrow::buffer::Buffer::from_vec(words), 0, rows);
    Some(BooleanArray::new(bits, strings.nulls().cloned()))
}

/// `l || r`: NULL if either side is NULL.
pub(crate) fn concat(l: &Value, r: &Value) -> Result<Value> {
    let l = cast_value(l, &DataType::Utf8)?;
    let r = cast_value(r, &DataType::Utf8)?;
    let la = l.array().as_string::<i32>();
    let ra = r.array().as_string::<i32>();
    let scalar = l.is_scalar() && r.is_scalar();
    let len = if scalar {
        1
    } else if l.is_scalar() {
        ra.len()
    } else {
        la.len()
    };
    let (ls, rs) = (l.is_scalar(), r.is_scalar());
    let mut b = StringBuilder::with_capacity(len, la.value_data().len() + ra.value_data().len());
    let mut buf = String::new();
    for i in 0..len {
        let (li, ri) = (if ls { 0 } else { i }, if rs { 0 } else { i });
        if la.is_null(li) || ra.is_null(ri) {
            b.append_null();
        } else {
            buf.clear();
            buf.push_str(la.value(li));
            buf.push_str(ra.value(ri));
            b.append_value(&buf);
        }
    }
    Ok(Value::wrap(Arc::new(b.finish()), scalar))
}

fn op_word(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Plus => "addition",
        BinaryOp::Minus => "subtraction",
        BinaryOp::Multiply => "multiplication",
        BinaryOp::Divide => "division",
        _ => "modulo",
    }
}

/// Integer operations, checked.
trait CheckedInt: Copy + std::fmt::Display + Default + PartialEq {
    const ZERO: Self;
    fn c_add(self, o: Self) -> Option<Self>;
    fn c_sub(self, o: Self) -> Option<Self>;
    fn c_mul(self, o: Self) -> Option<Self>;
    fn c_div(self, o: Self) -> Option<Self>;
    fn w_rem(self, o: Self) -> Self;
    fn c_neg(self) -> Option<Self>;
    fn c_abs(self) -> Option<Self>;
}

macro_rules! checked_int {
    ($t:ty, unsigned) => {
        impl CheckedInt for $t {
            const ZERO: Self = 0;
            fn c_add(self, o: Self) -> Option<Self> {
                self.checked_add(o)
            }
            fn c_sub(self, o: Self) -> Option<Self> {
                self.checked_sub(o)
            }
            fn c_mul(self, o: Self) -> Option<Self> {
                self.checked_mul(o)
            }
            fn c_div(self, o: Self) -> Option<Self> {
                self.checked_div(o)
            }
            fn w_rem(self, o: Self) -> Self {
                self.wrapping_rem(o)
            }
            fn c_neg(self) -> Option<Self> {
                self.checked_neg()
            }
            fn c_abs(self) -> Option<Self> {
                Some(self)
            }
        }
    };
    ($t:ty) => {
        impl CheckedInt for $t {
            const ZERO: Self = 0;
            fn c_add(self, o: Self) -> Option<Self> {
                self.checked_add(o)
            }
            fn c_sub(self, o: Self) -> Option<Self> {
                self.checked_sub(o)
            }
            fn c_mul(self, o: Self) -> Option<Self> {
                self.checked_mul(o)
            }
            fn c_div(self, o: Self) -> Option<Self> {
                self.checked_div(o)
            }
            fn w_rem(self, o: Self) -> Self {
                self.wrapping_rem(o)
            }
            fn c_neg(self) -> Option<Self> {
                self.checked_neg()
            }
            fn c_abs(self) -> Option<Self> {
                self.checked_abs()
            }
        }
    };
}
checked_int!(i8);
checked_int!(i16);
checked_int!(i32);
checked_int!(i64);
checked_int!(u8, unsigned);
checked_int!(u16, unsigned);
checked_int!(u32, unsigned);
checked_int!(u64, unsigned);

fn int_arith<T>(op: BinaryOp, l: &Value, r: &Value) -> Result<Value>
where
    T: ArrowPrimitiveType,
    T::Native: CheckedInt,
{
    let tn = type_name(&T::DATA_TYPE);
    let overflow = |a: T::Native, b: T::Native| {
        out_of_range(format!(
            "Overflow in {} of {tn} ({a} {} {b})!",
            op_word(op),
            op.as_str()
        ))
    };
    match op {
        BinaryOp::Plus => {
            binary_kernel::<T, T, T>(l, r, |a, b| a.c_add(b).ok_or_else(|| overflow(a, b)))
        }
        BinaryOp::Minus => {
            binary_kernel::<T, T, T>(l, r, |a, b| a.c_sub(b).ok_or_else(|| overflow(a, b)))
        }
        BinaryOp::Multiply => {
            binary_kernel::<T, T, T>(l, r, |a, b| a.c_mul(b).ok_or_else(|| overflow(a, b)))
        }
        // `/` on integers was planned as DOUBLE division: this is `//`
        BinaryOp::Divide => binary_kernel::<T, T, T>(l, r, |a, b| {
            if b == T::Native::ZERO {
                return Err(division_by_zero(a, "//", b));
            }
            a.c_div(b).ok_or_else(|| overflow(a, b))
        }),
        _ => binary_kernel::<T, T, T>(l, r, |a, b| {
            if b == T::Native::ZERO {
                return Err(division_by_zero(a, "%", b));
            }
            Ok(a.w_rem(b))
        }),
    }
}

fn float_arith(op: BinaryOp, l: &Value, r: &Value) -> Result<Value> {
    type F = Float64Type;
    if *l.data_type() == DataType::Float32 {
        return float32_arith(op, l, r);
    }
    match op {
        BinaryOp::Plus => binary_kernel::<F, F, F>(l, r, |a, b| Ok(a + b)),
        BinaryOp::Minus => binary_kernel::<F, F, F>(l, r, |a, b| Ok(a - b)),
        BinaryOp::Multiply => binary_kernel::<F, F, F>(l, r, |a, b| Ok(a * b)),
        // IEEE division, as in DuckDB: 1.0 / 0 is inf, 0.0 / 0 is NaN
        BinaryOp::Divide => binary_kernel::<F, F, F>(l, r, |a, b| Ok(a / b)),
        _ => binary_kernel::<F, F, F>(l, r, |a, b| {
            if b == 0.0 {
                Err(division_by_zero(format_double(a), "%", format_double(b)))
            } else {
                Ok(a % b)
            }
        }),
    }
}

fn float32_arith(op: BinaryOp, l: &Value, r: &Value) -> Result<Value> {
    type F = Float32Type;
    match op {
        BinaryOp::Plus => binary_kernel::<F, F, F>(l, r, |a, b| Ok(a + b)),
        BinaryOp::Minus => binary_kernel::<F, F, F>(l, r, |a, b| Ok(a - b)),
        BinaryOp::Multiply => binary_kernel::<F, F, F>(l, r, |a, b| Ok(a * b)),
        BinaryOp::Divide => binary_kernel::<F, F, F>(l, r, |a, b| Ok(a / b)),
        // FLOAT % 0 is NaN, as in DuckDB
        _ => binary_kernel::<F, F, F>(l, r, |a, b| Ok(a % b)),
    }
}

/// `l * fa + r * fb` (`-` for `MINUS`) of decimals brought to one scale,
/// wrapping: only the sides whose `SCALE_*` is set are multiplied, so a
/// side already at the result's scale costs no 128-bit multiplication
/// per row (`1 - l_discount`).
fn scaled_sum<const SCALE_L: bool, const SCALE_R: bool, const MINUS: bool>(
    l: &Value,
    r: &Value,
    fa: i128,
    fb: i128,
) -> Result<Value> {
    infallible_kernel::<Decimal128Type>(l, r, move |a, b| {
        let a = if SCALE_L { a.wrapping_mul(fa) } else { a };
        let b = if SCALE_R { b.wrapping_mul(fb) } else { b };
        if MINUS {
            a.wrapping_sub(b)
        } else {
            a.wrapping_add(b)
        }
    })
}

fn decimal_arith(op: BinaryOp, l: &Value, r: &Value, result: &DataType) -> Result<Value> {
    let (DataType::Decimal128(p1, s1), DataType::Decimal128(p2, s2)) =
        (l.data_type().clone(), r.data_type().clone())
    else {
        return Err(EvalError::Unsupported("decimal arithmetic".into()));
    };
    let (p, s) = match result {
        DataType::Decimal128(p, s) => (*p, *s),
        _ => match arithmetic_result_type(op, l.data_type(), r.data_type()) {
            Some(DataType::Decimal128(p, s)) => (p, s),
            _ => return Err(EvalError::Unsupported("decimal arithmetic".into())),
        },
    };
    let fmt = |v: i128, s: i8| format_decimal(v, s);
    let overflow = move |a: i128, b: i128| {
        out_of_range(format!(
            "Overflow in {} of DECIMAL({p},{s}) ({} {} {})!",
            op_word(op),
            fmt(a, s1),
            op.as_str(),
            fmt(b, s2)
        ))
    };
    let check = move |v: Option<i128>, a: i128, b: i128| match v {
        Some(v) if fits_precision(v, p) => Ok(v),
        _ => Err(overflow(a, b)),
    };
    type D = Decimal128Type;
    // When the declared result type holds every possible result (the
    // precision was not capped at 38), nothing can overflow: skip the
    // checks and let the loop run branch-free. Values behind NULLs may be
    // anything, hence the wrapping operations.
    let int_digits = (p1 as i16 - s1 as i16).max(p2 as i16 - s2 as i16);
    let by_type = match op {
        BinaryOp::Plus | BinaryOp::Minus => {
            s == s1.max(s2) && s1 >= 0 && s2 >= 0 && int_digits + i16::from(s) < i16::from(p)
        }
        BinaryOp::Multiply => s == s1 + s2 && p1 as u16 + p2 as u16 <= p as u16,
        _ => false,
    };
    // When the type was capped (DECIMAL(15,2) * DECIMAL(18,2) * DECIMAL(18,2)
    // is capped at 38 digits), the values at hand may still be small enough
    // that no result can overflow: bound the result by the largest
    // magnitudes on each side (values behind NULLs included, which only
    // makes the bound larger).
    // Operands of at most 18 digits fit an i64 each, and their product is
    // one widening multiply, exact in an i128 (DECIMAL(15,2) * DECIMAL(16,2)
    // is DECIMAL(18,4), DuckDB's type: not wide enough by type, so the
    // products are checked as they are made, in the same pass).
    let narrow = op == BinaryOp::Multiply && s == s1 + s2 && p1 <= 18 && p2 <= 18;
    if narrow && !by_type {
        let limit = pow10(i32::from(p)).map_or(u128::MAX, |m| m as u128);
        if let Some(out) = narrow_product(l, r, limit)? {
            return out.map(|a| {
                Ok(Arc::new(
                    a.as_primitive::<D>()
                        .clone()
                        .with_precision_and_scale(p, s)?,
                ))
            });
        }
    }
    let fast = by_type || cannot_overflow(op, l, r, (s1, s2), (p, s));
    if fast {
        let out = match op {
            BinaryOp::Multiply if narrow => infallible_kernel::<D>(l, r, narrow_mul),
            BinaryOp::Multiply => infallible_kernel::<D>(l, r, |a, b| a.wrapping_mul(b)),
            _ => {
                let (fa, fb) = (pow10((s - s1) as i32), pow10((s - s2) as i32));
                let (fa, fb) = (fa.unwrap_or(1), fb.unwrap_or(1));
                let minus = op == BinaryOp::Minus;
                match (fa != 1, fb != 1, minus) {
                    (false, false, false) => scaled_sum::<false, false, false>(l, r, fa, fb),
                    (false, false, true) => scaled_sum::<false, false, true>(l, r, fa, fb),
                    (false, true, false) => scaled_sum::<false, true, false>(l, r, fa, fb),
                    (false, true, true) => scaled_sum::<false, true, true>(l, r, fa, fb),
                    (true, false, false) => scaled_sum::<true, false, false>(l, r, fa, fb),
                    (true, false, true) => scaled_sum::<true, false, true>(l, r, fa, fb),
                    (true, true, false) => scaled_sum::<true, true, false>(l, r, fa, fb),
                    (true, true, true) => scaled_sum::<true, true, true>(l, r, fa, fb),
                }
            }
        }?;
        return out.map(|a| {
            Ok(Arc::new(
                a.as_primitive::<D>()
                    .clone()
                    .with_precision_and_scale(p, s)?,
            ))
        });
    }
    let out = match op {
        BinaryOp::Plus | BinaryOp::Minus => {
            let minus = op == BinaryOp::Minus;
            binary_kernel::<D, D, D>(l, r, |a, b| {
                let v = rescale(a, s1, s).zip(rescale(b, s2, s)).and_then(|(x, y)| {
                    if minus {
                        x.checked_sub(y)
                    } else {
                        x.checked_add(y)
                    }
                });
                check(v, a, b)
            })?
        }
        _ => binary_kernel::<D, D, D>(l, r, |a, b| {
            let v = a
                .checked_mul(b)
                .and_then(|m| rescale(m, s1.saturating_add(s2), s));
            check(v, a, b)
        })?,
    };
    let _ = (p1, p2);
    out.map(|a| {
        Ok(Arc::new(
            a.as_primitive::<D>()
                .clone()
                .with_precision_and_scale(p, s)?,
        ))
    })
}

/// The product of two decimals of at most 18 digits: one 64 x 64 -> 128
/// bit multiply. (A value behind a NULL may be anything; its product is
/// then anything too, and never read.)
#[inline]
fn narrow_mul(a: i128, b: i128) -> i128 {
    i128::from(a as i64) * i128::from(b as i64)
}

/// `l * r` for decimals of at most 18 digits each, in one pass, or `None`
/// when some product reaches `limit` in magnitude (an overflow of the
/// result's precision, or a value behind a NULL): the caller then takes
/// the checked path, which tells the two apart and names the values. The
/// products' magnitudes are OR-ed, an upper bound of the largest, without
/// a branch.
fn narrow_product(l: &Value, r: &Value, limit: u128) -> Result<Option<Value>> {
    let bits = std::cell::Cell::new(0u128);
    let out = infallible_kernel::<Decimal128Type>(l, r, |a, b| {
        let m = narrow_mul(a, b);
        bits.set(bits.get() | m.unsigned_abs());
        m
    })?;
    Ok((bits.get() < limit).then_some(out))
}

/// True when `l op r` cannot leave precision `p` at scale `s` for any of
/// the values of `l` and `r` (DECIMAL128 at scales `s1`, `s2`), so the
/// unchecked loop gives the exact results. Only `+`, `-` (at the larger
/// scale) and `*` (at scale `s1 + s2`) qualify.
fn cannot_overflow(
    op: BinaryOp,
    l: &Value,
    r: &Value,
    (s1, s2): (i8, i8),
    (p, s): (u8, i8),
) -> bool {
    let max_abs = |v: &Value| -> u128 {
        let values = v.array().as_primitive::<Decimal128Type>().values();
        values.iter().fold(0u128, |m, x| m.max(x.unsigned_abs()))
    };
    let Some(limit) = pow10(i32::from(p)).map(|m| m as u128) else {
        return false;
    };
    let bound = match op {
        BinaryOp::Multiply if s == s1 + s2 => max_abs(l).checked_mul(max_abs(r)),
        BinaryOp::Plus | BinaryOp::Minus if s == s1.max(s2) && s1 >= 0 && s2 >= 0 => {
            let (Some(fa), Some(fb)) = (pow10((s - s1) as i32), pow10((s - s2) as i32)) else {
                return false;
            };
            max_abs(l)
                .checked_mul(fa as u128)
                .zip(max_abs(r).checked_mul(fb as u128))
                .and_then(|(a, b)| a.checked_add(b))
        }
        _ => None,
    };
    bound.is_some_and(|b| b < limit)
}

fn date_arith(op: BinaryOp, l: &Value, r: &Value) -> Result<Value> {
    let out_of_range_date = |d: i32, n: i64| {
        out_of_range(format!(
            "Date out of range in {} (DATE '{}' {} {n})",
            op_word(op),
            weir_planner::scalar::format_date(d),
            op.as_str()
        ))
    };
    match (l.data_type(), r.data_type(), op) {
        (DataType::Date32, DataType::Date32, BinaryOp::Minus) => {
            binary_kernel::<Date32Type, Date32Type, Int32Type>(l, r, |a, b| {
                i32::try_from(a as i64 - b as i64)
                    .map_err(|_| out_of_range(format!("Overflow in date subtraction ({a} - {b})")))
            })
        }
        (DataType::Date32, t, BinaryOp::Plus | BinaryOp::Minus) if t.is_integer() => {
            let r = cast_value(r, &DataType::Int64)?;
            let minus = op == BinaryOp::Minus;
            binary_kernel::<Date32Type, Int64Type, Date32Type>(l, &r, |d, n| {
                let v = if minus {
                    (d as i64).checked_sub(n)
                } else {
                    (d as i64).checked_add(n)
                };
                v.and_then(weir_planner::scalar::checked_date)
                    .ok_or_else(|| out_of_range_date(d, n))
            })
        }
        (t, DataType::Date32, BinaryOp::Plus) if t.is_integer() => date_arith(op, r, l),
        _ => Err(unsupported_arith(op, l, r)),
    }
}

/// TIMESTAMP `+`/`-` INTERVAL: months, then days, then microseconds, in
/// range.
fn timestamp_interval(op: BinaryOp, ts: &Value, iv: &Value) -> Result<Value> {
    use arrow::datatypes::{IntervalMonthDayNanoType, TimestampMicrosecondType};
    let minus = op == BinaryOp::Minus;
    let ts = cast_value(ts, &DataType::Timestamp(TimeUnit::Microsecond, None))?;
    binary_kernel::<TimestampMicrosecondType, IntervalMonthDayNanoType, TimestampMicrosecondType>(
        &ts,
        iv,
        |t, v| {
            let (m, d, us) = (v.months, v.days, v.nanoseconds / 1000);
            let r = if minus {
                m.checked_neg().zip(d.checked_neg()).and_then(|(m, d)| {
                    weir_planner::scalar::add_interval(t, m, d, us.checked_neg()?)
                })
            } else {
                weir_planner::scalar::add_interval(t, m, d, us)
            };
            r.ok_or_else(|| EvalError::Cast("Date and time not in timestamp range".into()))
        },
    )
}

fn unsupported_arith(op: BinaryOp, l: &Value, r: &Value) -> EvalError {
    EvalError::Unsupported(format!(
        "no operator {} for {} and {}",
        op.as_str(),
        sql_type_name(l.data_type()),
        sql_type_name(r.data_type())
    ))
}

/// Arithmetic `l op r` (`+ - * / %`), NULL if either side is NULL.
/// `result` is the type the planner declared for the expression.
pub(crate) fn arithmetic(op: BinaryOp, l: &Value, r: &Value, result: &DataType) -> Result<Value> {
    use DataType::*;
    let scalar = l.is_scalar() && r.is_scalar();
    if *l.data_type() == Null || *r.data_type() == Null {
        let len = l.array().len().max(r.array().len());
        return Ok(Value::wrap(new_null_array(result, len), scalar));
    }
    let out = match (l.data_type(), r.data_type()) {
        (Int8, Int8) => int_arith::<Int8Type>(op, l, r)?,
        (Int16, Int16) => int_arith::<Int16Type>(op, l, r)?,
        (Int32, Int32) => int_arith::<Int32Type>(op, l, r)?,
        (Int64, Int64) => int_arith::<Int64Type>(op, l, r)?,
        (UInt8, UInt8) => int_arith::<UInt8Type>(op, l, r)?,
        (UInt16, UInt16) => int_arith::<UInt16Type>(op, l, r)?,
        (UInt32, UInt32) => int_arith::<UInt32Type>(op, l, r)?,
        (UInt64, UInt64) => int_arith::<UInt64Type>(op, l, r)?,
        (Float32, Float32) => float32_arith(op, l, r)?,
        (Timestamp(..), Interval(_)) => timestamp_interval(op, l, r)?,
        (Interval(_), Timestamp(..)) if op == BinaryOp::Plus => timestamp_interval(op, r, l)?,
        (Date32, _) | (_, Date32) => date_arith(op, l, r)?,
        (Decimal128(..), Decimal128(..))
            if matches!(op, BinaryOp::Plus | BinaryOp::Minus | BinaryOp::Multiply) =>
        {
            decimal_arith(op, l, r, result)?
        }
        (Decimal128(..), Decimal128(..)) | (Float64, _) | (_, Float64) => {
            let l = cast_value(l, &Float64)?;
            let r = cast_value(r, &Float64)?;
            float_arith(op, &l, &r)?
        }
        (a, b) if a.is_integer() && b.is_integer() => {
            let l = cast_value(l, &Int64)?;
            let r = cast_value(r, &Int64)?;
            int_arith::<Int64Type>(op, &l, &r)?
        }
        (Decimal128(..), t) | (t, Decimal128(..)) if t.is_integer() => {
            let (l, r) = coerce_pair(l, r)?;
            return arithmetic(op, &l, &r, result);
        }
        _ => return Err(unsupported_arith(op, l, r)),
    };
    if out.data_type() != result && *result != Null {
        return cast_value(&out, result);
    }
    Ok(out)
}

/// Arithmetic negation; overflow (of the smallest integer) is an error.
pub(crate) fn negative(v: &Value) -> Result<Value> {
    fn neg_int<T>(a: &ArrayRef) -> Result<ArrayRef>
    where
        T: ArrowPrimitiveType,
        T::Native: CheckedInt,
    {
        let out: PrimitiveArray<T> = a.as_primitive::<T>().try_unary(|x: T::Native| {
            x.c_neg().ok_or_else(|| {
                out_of_range(format!(
                    "Overflow in negation of {} ({x})!",
                    sql_type_name(&T::DATA_TYPE)
                ))
            })
        })?;
        Ok(Arc::new(out))
    }
    v.map(|a| match a.data_type() {
        DataType::Int8 => neg_int::<Int8Type>(a),
        DataType::Int16 => neg_int::<Int16Type>(a),
        DataType::Int32 => neg_int::<Int32Type>(a),
        DataType::Int64 => neg_int::<Int64Type>(a),
        DataType::UInt8 => neg_int::<UInt8Type>(a),
        DataType::UInt16 => neg_int::<UInt16Type>(a),
        DataType::UInt32 => neg_int::<UInt32Type>(a),
        DataType::UInt64 => neg_int::<UInt64Type>(a),
        DataType::Float32 => Ok(Arc::new(
            a.as_primitive::<Float32Type>()
                .unary::<_, Float32Type>(|x| -x),
        )),
        DataType::Float64 => Ok(Arc::new(
            a.as_primitive::<Float64Type>()
                .unary::<_, Float64Type>(|x| -x),
        )),
        DataType::Decimal128(p, s) => Ok(Arc::new(
            a.as_primitive::<Decimal128Type>()
                .unary::<_, Decimal128Type>(|x| x.wrapping_neg())
                .with_precision_and_scale(*p, *s)?,
        )),
        DataType::Null => Ok(a.clone()),
        other => Err(EvalError::Unsupported(format!(
            "no operator - for {}",
            sql_type_name(other)
        ))),
    })
}

/// `abs(x)`: overflow (of the smallest integer) is an error.
pub(crate) fn abs(v: &Value) -> Result<Value> {
    fn abs_int<T>(a: &ArrayRef) -> Result<ArrayRef>
    where
        T: ArrowPrimitiveType,
        T::Native: CheckedInt,
    {
        let out: PrimitiveArray<T> = a.as_primitive::<T>().try_unary(|x: T::Native| {
            x.c_abs().ok_or_else(|| {
                out_of_range(format!(
                    "Overflow on abs({x}) of {}",
                    sql_type_name(&T::DATA_TYPE)
                ))
            })
        })?;
        Ok(Arc::new(out))
    }
    v.map(|a| match a.data_type() {
        DataType::Int8 => abs_int::<Int8Type>(a),
        DataType::Int16 => abs_int::<Int16Type>(a),
        DataType::Int32 => abs_int::<Int32Type>(a),
        DataType::Int64 => abs_int::<Int64Type>(a),
        DataType::UInt8 => abs_int::<UInt8Type>(a),
        DataType::UInt16 => abs_int::<UInt16Type>(a),
        DataType::UInt32 => abs_int::<UInt32Type>(a),
        DataType::UInt64 => abs_int::<UInt64Type>(a),
        DataType::Float32 => Ok(Arc::new(
            a.as_primitive::<Float32Type>()
                .unary::<_, Float32Type>(|x| x.abs()),
        )),
        DataType::Float64 => Ok(Arc::new(
            a.as_primitive::<Float64Type>()
                .unary::<_, Float64Type>(|x| x.abs()),
        )),
        DataType::Decimal128(p, s) => Ok(Arc::new(
            a.as_primitive::<Decimal128Type>()
                .unary::<_, Decimal128Type>(|x| x.wrapping_abs())
                .with_precision_and_scale(*p, *s)?,
        )),
        DataType::Null => Ok(a.clone()),
        other => Err(EvalError::Unsupported(format!(
            "abs is not defined for {}",
            sql_type_name(other)
        ))),
    })
}
