//! Implicit coercion, casts of constants, and constant folding.

use std::cmp::Ordering;

use arrow_schema::{DataType, TimeUnit};

use crate::expr::{BinaryOp, Expr};
use crate::scalar::{
    ScalarValue, format_date, format_decimal, format_timestamp, parse_date, parse_timestamp,
};
use crate::types::{arithmetic_result_type, sql_type_name, timestamp_type};

/// The canonical type the planner computes in for a (possibly exotic) file
/// type: small integers widen to INTEGER, FLOAT to DOUBLE, string views to
/// VARCHAR, other timestamp units to microseconds.
pub(crate) fn canonical(t: &DataType) -> DataType {
    match t {
        DataType::Int8 | DataType::Int16 | DataType::UInt8 | DataType::UInt16 => DataType::Int32,
        DataType::UInt32 => DataType::Int64,
        DataType::UInt64 => DataType::Decimal128(20, 0),
        DataType::Float16 | DataType::Float32 => DataType::Float64,
        DataType::LargeUtf8 | DataType::Utf8View => DataType::Utf8,
        DataType::Date64 => DataType::Date32,
        DataType::Timestamp(_, _) => timestamp_type(),
        DataType::Decimal32(p, s) | DataType::Decimal64(p, s) => DataType::Decimal128(*p, *s),
        other => other.clone(),
    }
}

/// The DECIMAL an integer type converts to without loss.
fn integer_as_decimal(t: &DataType) -> Option<DataType> {
    match t {
        DataType::Int32 => Some(DataType::Decimal128(10, 0)),
        DataType::Int64 => Some(DataType::Decimal128(19, 0)),
        DataType::Decimal128(..) => Some(t.clone()),
        _ => None,
    }
}

/// The type both operands of a comparison (or branches of a CASE, items
/// of an IN list) are converted to, on canonical types. `None` when the
/// types do not mix.
pub(crate) fn comparison_type(l: &DataType, r: &DataType) -> Option<DataType> {
    use DataType::*;
    let (l, r) = (canonical(l), canonical(r));
    if l == r {
        return Some(l);
    }
    match (&l, &r) {
        (Null, t) | (t, Null) => Some(t.clone()),
        (Float64, t) | (t, Float64) if is_num(t) => Some(Float64),
        (Int32, Int64) | (Int64, Int32) => Some(Int64),
        (a, b) if is_num(a) && is_num(b) => {
            let (Some(Decimal128(p1, s1)), Some(Decimal128(p2, s2))) =
                (integer_as_decimal(a), integer_as_decimal(b))
            else {
                return None;
            };
            let s = s1.max(s2);
            let int_digits = (p1 as i16 - s1 as i16).max(p2 as i16 - s2 as i16);
            let p = (int_digits + s as i16).clamp(1, 38) as u8;
            Some(Decimal128(p, s.min(p as i8)))
        }
        (Date32, Timestamp(..)) | (Timestamp(..), Date32) => Some(timestamp_type()),
        _ => None,
    }
}

/// The operand type of arithmetic `op` on these (canonical) types: both
/// operands are cast to it, except that DECIMAL operands keep their own
/// precision and scale. Returns `(left_target, right_target)`.
pub(crate) fn arithmetic_operand_types(
    op: BinaryOp,
    l: &DataType,
    r: &DataType,
) -> Option<(DataType, DataType)> {
    use DataType::*;
    let (l, r) = (canonical(l), canonical(r));
    match (&l, &r) {
        (Date32, Int32 | Int64) if matches!(op, BinaryOp::Plus | BinaryOp::Minus) => {
            Some((l.clone(), r.clone()))
        }
        (Date32, Date32) if op == BinaryOp::Minus => Some((l.clone(), r.clone())),
        (Decimal128(..), _) | (_, Decimal128(..)) if is_num(&l) && is_num(&r) => {
            if l == Float64 || r == Float64 {
                return Some((Float64, Float64));
            }
            Some((integer_as_decimal(&l)?, integer_as_decimal(&r)?))
        }
        (Null, Null) => Some((Int32, Int32)),
        (Null, t) | (t, Null) if is_num(t) => Some((t.clone(), t.clone())),
        (a, b) if is_num(a) && is_num(b) => {
            let t = comparison_type(a, b)?;
            Some((t.clone(), t))
        }
        _ => None,
    }
}

fn is_num(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Int32 | DataType::Int64 | DataType::Float64 | DataType::Decimal128(..)
    )
}

/// True if a CAST from `from` to `to` is defined.
pub(crate) fn can_cast(from: &DataType, to: &DataType) -> bool {
    use DataType::*;
    let (from, to) = (canonical(from), canonical(to));
    if from == to || from == Null || to == Utf8 {
        return true;
    }
    match (&from, &to) {
        (a, b) if is_num(a) && is_num(b) => true,
        (Boolean, b) | (b, Boolean) if is_num(b) && !matches!(b, Float64) => true,
        (Utf8, Boolean | Date32 | Timestamp(..)) => true,
        (Utf8, b) if is_num(b) => true,
        (Date32, Timestamp(..)) | (Timestamp(..), Date32) => true,
        _ => false,
    }
}

/// Wraps `e` in a CAST unless it already has type `to`; constants are
/// converted now. `t` is the current type of `e`.
pub(crate) fn cast_to(e: Expr, t: &DataType, to: &DataType) -> Result<Expr, String> {
    if t == to {
        return Ok(e);
    }
    match e {
        Expr::Literal(v) => Ok(Expr::Literal(cast_scalar(&v, to)?)),
        e => Ok(Expr::Cast {
            expr: Box::new(e),
            to: to.clone(),
        }),
    }
}

const MAX_PRECISION: u8 = 38;

fn pow10(n: u32) -> Option<i128> {
    10_i128.checked_pow(n)
}

/// Rescales an unscaled decimal, rounding half away from zero when the
/// scale shrinks.
fn rescale(v: i128, from: i8, to: i8) -> Option<i128> {
    match to.cmp(&from) {
        Ordering::Equal => Some(v),
        Ordering::Greater => v.checked_mul(pow10((to - from) as u32)?),
        Ordering::Less => {
            let f = pow10((from - to) as u32)?;
            let q = v / f;
            let rem = (v % f).abs();
            if rem * 2 >= f {
                Some(if v < 0 { q - 1 } else { q + 1 })
            } else {
                Some(q)
            }
        }
    }
}

fn fits_precision(v: i128, p: u8) -> bool {
    match pow10(p as u32) {
        Some(limit) => v.abs() < limit,
        None => true,
    }
}

fn decimal_to_f64(v: i128, s: i8) -> f64 {
    v as f64 / 10f64.powi(s as i32)
}

/// Parses `[-+]digits[.digits]` into an unscaled value at `scale`.
fn parse_decimal(s: &str, scale: i8) -> Option<i128> {
    let s = s.trim();
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    if int.is_empty() && frac.is_empty()
        || !int.chars().all(|c| c.is_ascii_digit())
        || !frac.chars().all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let digits = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    if digits.len() > 38 {
        return None;
    }
    let raw: i128 = if digits.is_empty() {
        0
    } else {
        digits.parse().ok()?
    };
    let v = rescale(raw, i8::try_from(frac.len()).ok()?, scale)?;
    Some(if neg { -v } else { v })
}

fn describe_value(v: &ScalarValue) -> String {
    match v {
        ScalarValue::Utf8(s) => format!("string '{s}'"),
        other => format!("{} {other}", sql_type_name(&other.data_type())),
    }
}

/// Converts a constant to type `to`, as `CAST` would at run time.
pub(crate) fn cast_scalar(v: &ScalarValue, to: &DataType) -> Result<ScalarValue, String> {
    use ScalarValue as S;
    let to = &canonical(to);
    if &v.data_type() == to {
        return Ok(v.clone());
    }
    if v.is_null() {
        return Ok(S::Null(to.clone()));
    }
    let fail = || {
        format!(
            "Could not convert {} to {}",
            describe_value(v),
            sql_type_name(to)
        )
    };
    if !can_cast(&v.data_type(), to) {
        return Err(format!(
            "Unimplemented type for cast ({} -> {})",
            sql_type_name(&v.data_type()),
            sql_type_name(to)
        ));
    }
    // Strings first: they parse into every other type.
    if let S::Utf8(s) = v {
        let t = s.trim();
        return match to {
            DataType::Boolean => match t.to_ascii_lowercase().as_str() {
                "true" | "t" | "1" => Ok(S::Boolean(true)),
                "false" | "f" | "0" => Ok(S::Boolean(false)),
                _ => Err(fail()),
            },
            DataType::Int32 => t.parse().map(S::Int32).map_err(|_| fail()),
            DataType::Int64 => t.parse().map(S::Int64).map_err(|_| fail()),
            DataType::Float64 => t.parse().map(S::Float64).map_err(|_| fail()),
            DataType::Decimal128(p, s) => match parse_decimal(t, *s) {
                Some(x) if fits_precision(x, *p) => Ok(S::Decimal128(x, *p, *s)),
                _ => Err(fail()),
            },
            DataType::Date32 => parse_date(t).map(S::Date32).ok_or_else(fail),
            DataType::Timestamp(..) => parse_timestamp(t).map(S::TimestampMicros).ok_or_else(fail),
            _ => Err(fail()),
        };
    }
    if *to == DataType::Utf8 {
        return Ok(S::Utf8(match v {
            S::Boolean(b) => b.to_string(),
            S::Int32(x) => x.to_string(),
            S::Int64(x) => x.to_string(),
            S::Float64(x) => x.to_string(),
            S::Decimal128(x, _, s) => format_decimal(*x, *s),
            S::Date32(d) => format_date(*d),
            S::TimestampMicros(t) => format_timestamp(*t),
            S::Null(_) | S::Utf8(_) => return Err(fail()),
        }));
    }
    // Numbers (and booleans) through i128 at a scale, or f64.
    let exact: Option<(i128, i8)> = match v {
        S::Boolean(b) => Some((*b as i128, 0)),
        S::Int32(x) => Some((*x as i128, 0)),
        S::Int64(x) => Some((*x as i128, 0)),
        S::Decimal128(x, _, s) => Some((*x, *s)),
        _ => None,
    };
    match (v, to) {
        (S::Date32(d), DataType::Timestamp(TimeUnit::Microsecond, None)) => {
            Ok(S::TimestampMicros(*d as i64 * 86_400_000_000))
        }
        (S::TimestampMicros(t), DataType::Date32) => i32::try_from(t.div_euclid(86_400_000_000))
            .map(S::Date32)
            .map_err(|_| fail()),
        (_, DataType::Boolean) => match (exact, v) {
            (Some((x, _)), _) => Ok(S::Boolean(x != 0)),
            _ => Err(fail()),
        },
        (_, DataType::Float64) => match (exact, v) {
            (Some((x, s)), _) => Ok(S::Float64(decimal_to_f64(x, s))),
            _ => Err(fail()),
        },
        (_, DataType::Int32 | DataType::Int64 | DataType::Decimal128(..)) => {
            let (p, s) = match to {
                DataType::Int32 | DataType::Int64 => (MAX_PRECISION, 0),
                DataType::Decimal128(p, s) => (*p, *s),
                _ => return Err(fail()),
            };
            let x = match (exact, v) {
                (Some((x, from)), _) => rescale(x, from, s).ok_or_else(fail)?,
                (None, S::Float64(f)) => {
                    let scaled = (f * 10f64.powi(s as i32)).round();
                    if !scaled.is_finite() || scaled.abs() >= 1e38 {
                        return Err(fail());
                    }
                    scaled as i128
                }
                _ => return Err(fail()),
            };
            match to {
                DataType::Int32 => i32::try_from(x).map(S::Int32).map_err(|_| fail()),
                DataType::Int64 => i64::try_from(x).map(S::Int64).map_err(|_| fail()),
                _ if fits_precision(x, p) => Ok(S::Decimal128(x, p, s)),
                _ => Err(fail()),
            }
        }
        _ => Err(fail()),
    }
}

/// Orders two constants of the same type (NULLs excluded by the caller).
pub(crate) fn compare_scalars(a: &ScalarValue, b: &ScalarValue) -> Option<Ordering> {
    use ScalarValue as S;
    match (a, b) {
        (S::Boolean(x), S::Boolean(y)) => Some(x.cmp(y)),
        (S::Int32(x), S::Int32(y)) => Some(x.cmp(y)),
        (S::Int64(x), S::Int64(y)) => Some(x.cmp(y)),
        (S::Float64(x), S::Float64(y)) => Some(x.total_cmp(y)),
        (S::Decimal128(x, _, s1), S::Decimal128(y, _, s2)) => {
            let s = (*s1).max(*s2);
            Some(rescale(*x, *s1, s)?.cmp(&rescale(*y, *s2, s)?))
        }
        (S::Utf8(x), S::Utf8(y)) => Some(x.cmp(y)),
        (S::Date32(x), S::Date32(y)) => Some(x.cmp(y)),
        (S::TimestampMicros(x), S::TimestampMicros(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

/// True if evaluating `e` can never raise an error, so that folding it
/// away (`e AND FALSE`, `e + NULL`) cannot hide one.
pub(crate) fn cannot_fail(e: &Expr) -> bool {
    match e {
        Expr::Column(_) | Expr::Literal(_) => true,
        Expr::Binary { op, left, right } => {
            (op.is_comparison() || matches!(op, BinaryOp::And | BinaryOp::Or | BinaryOp::Concat))
                && cannot_fail(left)
                && cannot_fail(right)
        }
        Expr::Not(e)
        | Expr::IsNull(e)
        | Expr::IsNotNull(e)
        | Expr::InList { expr: e, .. }
        | Expr::Like { expr: e, .. } => cannot_fail(e),
        _ => false,
    }
}

/// Folds a binary expression whose operands are already coerced; returns
/// the expression unchanged when it cannot be folded.
pub(crate) fn fold_binary(op: BinaryOp, left: Expr, right: Expr) -> Result<Expr, String> {
    use ScalarValue as S;
    if matches!(op, BinaryOp::And | BinaryOp::Or) {
        return Ok(fold_logic(op, left, right));
    }
    let (l, r) = match (&left, &right) {
        (Expr::Literal(l), Expr::Literal(r)) => (l, r),
        (Expr::Literal(n), other) | (other, Expr::Literal(n))
            if n.is_null() && cannot_fail(other) =>
        {
            // NULL propagates through comparisons, arithmetic and ||.
            let t = result_type(op, &left, &right);
            return Ok(Expr::Literal(S::Null(t)));
        }
        _ => return Ok(Expr::binary(left, op, right)),
    };
    if l.is_null() || r.is_null() {
        if matches!(op, BinaryOp::Divide | BinaryOp::Modulo)
            && matches!(r, S::Int32(0) | S::Int64(0))
        {
            return Err("Division by zero".into());
        }
        return Ok(Expr::Literal(S::Null(result_type(op, &left, &right))));
    }
    if op.is_comparison() {
        let Some(ord) = compare_scalars(l, r) else {
            return Ok(Expr::binary(left, op, right));
        };
        let b = match op {
            BinaryOp::Eq => ord.is_eq(),
            BinaryOp::NotEq => ord.is_ne(),
            BinaryOp::Lt => ord.is_lt(),
            BinaryOp::LtEq => ord.is_le(),
            BinaryOp::Gt => ord.is_gt(),
            _ => ord.is_ge(),
        };
        return Ok(Expr::Literal(S::Boolean(b)));
    }
    let shown = format!("{l} {} {r}", op.as_str());
    let overflow = || format!("Overflow in {shown}");
    let v = match (l, r) {
        (S::Utf8(a), S::Utf8(b)) if op == BinaryOp::Concat => S::Utf8(format!("{a}{b}")),
        (S::Int32(a), S::Int32(b)) => S::Int32(
            int_op(op, *a as i64, *b as i64, &shown)?
                .try_into()
                .map_err(|_| overflow())?,
        ),
        (S::Int64(a), S::Int64(b)) => S::Int64(int_op(op, *a, *b, &shown)?),
        (S::Float64(a), S::Float64(b)) => {
            // DOUBLE division is IEEE (1.0 / 0 is inf, as in DuckDB);
            // modulo by zero is an error
            if op == BinaryOp::Modulo && *b == 0.0 {
                return Err(format!("Division by zero in {shown}"));
            }
            S::Float64(match op {
                BinaryOp::Plus => a + b,
                BinaryOp::Minus => a - b,
                BinaryOp::Multiply => a * b,
                BinaryOp::Divide => a / b,
                _ => a % b,
            })
        }
        (S::Decimal128(a, p1, s1), S::Decimal128(b, p2, s2)) => {
            let Some(t) = arithmetic_result_type(
                op,
                &DataType::Decimal128(*p1, *s1),
                &DataType::Decimal128(*p2, *s2),
            ) else {
                return Ok(Expr::binary(left, op, right));
            };
            match (op, t) {
                (BinaryOp::Plus | BinaryOp::Minus, DataType::Decimal128(p, s)) => {
                    let a = rescale(*a, *s1, s).ok_or_else(overflow)?;
                    let b = rescale(*b, *s2, s).ok_or_else(overflow)?;
                    let v = if op == BinaryOp::Plus {
                        a.checked_add(b)
                    } else {
                        a.checked_sub(b)
                    };
                    match v {
                        Some(v) if fits_precision(v, p) => S::Decimal128(v, p, s),
                        _ => return Err(overflow()),
                    }
                }
                (BinaryOp::Multiply, DataType::Decimal128(p, s)) if s == s1 + s2 => {
                    match a.checked_mul(*b) {
                        Some(v) if fits_precision(v, p) => S::Decimal128(v, p, s),
                        _ => return Err(overflow()),
                    }
                }
                (BinaryOp::Divide | BinaryOp::Modulo, DataType::Float64) => {
                    if *b == 0 {
                        return Err(format!("Division by zero in {shown}"));
                    }
                    let (a, b) = (decimal_to_f64(*a, *s1), decimal_to_f64(*b, *s2));
                    S::Float64(if op == BinaryOp::Divide { a / b } else { a % b })
                }
                _ => return Ok(Expr::binary(left, op, right)),
            }
        }
        (S::Date32(d), S::Int32(_) | S::Int64(_)) => {
            let n = match r {
                S::Int32(n) => *n as i64,
                S::Int64(n) => *n,
                _ => 0,
            };
            let v = if op == BinaryOp::Plus {
                (*d as i64).checked_add(n)
            } else {
                (*d as i64).checked_sub(n)
            };
            S::Date32(v.and_then(|v| i32::try_from(v).ok()).ok_or_else(overflow)?)
        }
        (S::Date32(a), S::Date32(b)) if op == BinaryOp::Minus => {
            S::Int32(a.checked_sub(*b).ok_or_else(overflow)?)
        }
        _ => return Ok(Expr::binary(left, op, right)),
    };
    Ok(Expr::Literal(v))
}

fn int_op(op: BinaryOp, a: i64, b: i64, shown: &str) -> Result<i64, String> {
    let v = match op {
        BinaryOp::Plus => a.checked_add(b),
        BinaryOp::Minus => a.checked_sub(b),
        BinaryOp::Multiply => a.checked_mul(b),
        BinaryOp::Divide | BinaryOp::Modulo if b == 0 => {
            return Err(format!("Division by zero in {shown}"));
        }
        BinaryOp::Divide => a.checked_div(b),
        BinaryOp::Modulo => a.checked_rem(b),
        _ => None,
    };
    v.ok_or_else(|| format!("Overflow in {shown}"))
}

/// The type of `left op right` without an input schema (both operands are
/// literals or one is a literal NULL).
fn result_type(op: BinaryOp, left: &Expr, right: &Expr) -> DataType {
    if op.is_comparison() {
        return DataType::Boolean;
    }
    if op == BinaryOp::Concat {
        return DataType::Utf8;
    }
    let ty = |e: &Expr| match e {
        Expr::Literal(v) => v.data_type(),
        _ => DataType::Null,
    };
    let (l, r) = (ty(left), ty(right));
    let known = if l == DataType::Null {
        r.clone()
    } else {
        l.clone()
    };
    arithmetic_result_type(op, &l, &r).unwrap_or(known)
}

fn as_bool(e: &Expr) -> Option<Option<bool>> {
    match e {
        Expr::Literal(ScalarValue::Boolean(b)) => Some(Some(*b)),
        Expr::Literal(ScalarValue::Null(_)) => Some(None),
        _ => None,
    }
}

/// Folds AND / OR with three-valued logic.
fn fold_logic(op: BinaryOp, left: Expr, right: Expr) -> Expr {
    let and = op == BinaryOp::And;
    // The value that decides the result on its own: FALSE for AND, TRUE for OR.
    let dominant = !and;
    match (as_bool(&left), as_bool(&right)) {
        (Some(a), Some(b)) => {
            let v = if and {
                match (a, b) {
                    (Some(false), _) | (_, Some(false)) => Some(false),
                    (Some(true), Some(true)) => Some(true),
                    _ => None,
                }
            } else {
                match (a, b) {
                    (Some(true), _) | (_, Some(true)) => Some(true),
                    (Some(false), Some(false)) => Some(false),
                    _ => None,
                }
            };
            Expr::Literal(v.map_or(ScalarValue::Null(DataType::Boolean), ScalarValue::Boolean))
        }
        (Some(Some(b)), None) | (None, Some(Some(b))) => {
            let other = if as_bool(&left).is_some() {
                right
            } else {
                left
            };
            if b == dominant {
                if cannot_fail(&other) {
                    Expr::Literal(ScalarValue::Boolean(b))
                } else {
                    let lit = Expr::Literal(ScalarValue::Boolean(b));
                    Expr::binary(other, op, lit)
                }
            } else {
                // TRUE AND x = x; FALSE OR x = x.
                other
            }
        }
        _ => Expr::binary(left, op, right),
    }
}

/// Folds `NOT e`.
pub(crate) fn fold_not(e: Expr) -> Expr {
    match e {
        Expr::Literal(ScalarValue::Boolean(b)) => Expr::Literal(ScalarValue::Boolean(!b)),
        Expr::Literal(ScalarValue::Null(_)) => Expr::Literal(ScalarValue::Null(DataType::Boolean)),
        Expr::Not(inner) => *inner,
        e => Expr::Not(Box::new(e)),
    }
}

/// Folds `-e`.
pub(crate) fn fold_negative(e: Expr) -> Result<Expr, String> {
    use ScalarValue as S;
    let Expr::Literal(v) = &e else {
        return Ok(Expr::Negative(Box::new(e)));
    };
    let overflow = || format!("Overflow in -{v}");
    Ok(Expr::Literal(match v {
        S::Null(t) => S::Null(t.clone()),
        S::Int32(x) => S::Int32(x.checked_neg().ok_or_else(overflow)?),
        S::Int64(x) => S::Int64(x.checked_neg().ok_or_else(overflow)?),
        S::Float64(x) => S::Float64(-x),
        S::Decimal128(x, p, s) => S::Decimal128(-x, *p, *s),
        _ => return Ok(Expr::Negative(Box::new(e))),
    }))
}

/// The type of a numeric literal as DuckDB types it: INTEGER if it fits,
/// then BIGINT, then DECIMAL(38,0); `0.05` is DECIMAL(3,2); exponents are
/// DOUBLE.
pub(crate) fn number_literal(s: &str) -> Option<ScalarValue> {
    if s.contains(['e', 'E']) {
        return s.parse().ok().map(ScalarValue::Float64);
    }
    if let Some((int, frac)) = s.split_once('.') {
        let int_digits = int.trim_start_matches('0').len().max(1);
        let scale = frac.len();
        let p = int_digits + scale;
        if p > 38 {
            return s.parse().ok().map(ScalarValue::Float64);
        }
        let v = parse_decimal(s, scale as i8)?;
        return Some(ScalarValue::Decimal128(v, p as u8, scale as i8));
    }
    if let Ok(v) = s.parse::<i32>() {
        return Some(ScalarValue::Int32(v));
    }
    if let Ok(v) = s.parse::<i64>() {
        return Some(ScalarValue::Int64(v));
    }
    match parse_decimal(s, 0) {
        Some(v) if fits_precision(v, 38) => Some(ScalarValue::Decimal128(v, 38, 0)),
        _ => s.parse().ok().map(ScalarValue::Float64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_typed_like_duckdb() {
        let t = |s: &str| number_literal(s).map(|v| v.data_type());
        assert_eq!(t("1"), Some(DataType::Int32));
        assert_eq!(t("3000000000"), Some(DataType::Int64));
        assert_eq!(t("0.05"), Some(DataType::Decimal128(3, 2)));
        assert_eq!(t("123.456"), Some(DataType::Decimal128(6, 3)));
        assert_eq!(t("1e3"), Some(DataType::Float64));
        assert_eq!(t("99999999999999999999"), Some(DataType::Decimal128(38, 0)));
        assert_eq!(t(&"9".repeat(50)), Some(DataType::Float64));
    }

    #[test]
    fn comparison_types_widen() {
        use DataType::*;
        assert_eq!(
            comparison_type(&Decimal128(15, 2), &Int32),
            Some(Decimal128(15, 2))
        );
        assert_eq!(
            comparison_type(&Decimal128(15, 2), &Decimal128(3, 2)),
            Some(Decimal128(15, 2))
        );
        assert_eq!(
            comparison_type(&Decimal128(4, 1), &Decimal128(5, 3)),
            Some(Decimal128(6, 3))
        );
        assert_eq!(
            comparison_type(&Int64, &Decimal128(5, 3)),
            Some(Decimal128(22, 3))
        );
        assert_eq!(comparison_type(&Int32, &Float64), Some(Float64));
        assert_eq!(comparison_type(&Utf8, &Int32), None);
    }

    #[test]
    fn casts_of_constants() {
        use ScalarValue as S;
        assert_eq!(
            cast_scalar(&S::Utf8("5".into()), &DataType::Int32),
            Ok(S::Int32(5))
        );
        assert_eq!(
            cast_scalar(&S::Int32(24), &DataType::Decimal128(15, 2)),
            Ok(S::Decimal128(2400, 15, 2))
        );
        assert_eq!(
            cast_scalar(&S::Decimal128(125, 5, 2), &DataType::Int32),
            Ok(S::Int32(1))
        );
        assert_eq!(
            cast_scalar(&S::Decimal128(-150, 5, 2), &DataType::Int64),
            Ok(S::Int64(-2))
        );
        assert_eq!(
            cast_scalar(&S::Float64(2.5), &DataType::Decimal128(5, 1)),
            Ok(S::Decimal128(25, 5, 1))
        );
        assert!(cast_scalar(&S::Int64(1 << 40), &DataType::Int32).is_err());
        assert!(
            cast_scalar(&S::Utf8("abc".into()), &DataType::Int32)
                .unwrap_err()
                .contains("'abc'")
        );
        assert_eq!(
            cast_scalar(&S::Date32(1), &DataType::Utf8),
            Ok(S::Utf8("1970-01-02".into()))
        );
    }
}
