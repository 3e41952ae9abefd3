//! SQL types on Arrow types, and the typing rules shared by the planner
//! and the pipeline.
//!
//! | SQL | Arrow |
//! |---|---|
//! | BOOLEAN | `Boolean` |
//! | INTEGER | `Int32` |
//! | BIGINT | `Int64` |
//! | TINYINT, SMALLINT | `Int8`, `Int16` |
//! | UTINYINT, USMALLINT, UINTEGER, UBIGINT | `UInt8`, `UInt16`, `UInt32`, `UInt64` |
//! | FLOAT (REAL) | `Float32` |
//! | DOUBLE | `Float64` |
//! | DECIMAL(p,s) | `Decimal128(p, s)` |
//! | VARCHAR | `Utf8` |
//! | BLOB | `Binary` |
//! | DATE | `Date32` |
//! | TIMESTAMP | `Timestamp(Microsecond, None)` |
//!
//! Other Arrow types met in files (Float16, LargeUtf8, Utf8View, Date64,
//! other timestamp units) are accepted where the planner can coerce them;
//! the engine normalises them on load where it cannot.

use arrow_schema::{DataType, Schema, TimeUnit};

use crate::expr::{BinaryOp, Expr, ScalarFunction};
use crate::plan::{AggregateFunction, WindowFunction};

/// The SQL name of an Arrow type, as shown by DESCRIBE and in errors.
pub fn sql_type_name(t: &DataType) -> String {
    match t {
        DataType::Null => "NULL".into(),
        DataType::Boolean => "BOOLEAN".into(),
        DataType::Int8 => "TINYINT".into(),
        DataType::Int16 => "SMALLINT".into(),
        DataType::Int32 => "INTEGER".into(),
        DataType::Int64 => "BIGINT".into(),
        DataType::UInt8 => "UTINYINT".into(),
        DataType::UInt16 => "USMALLINT".into(),
        DataType::UInt32 => "UINTEGER".into(),
        DataType::UInt64 => "UBIGINT".into(),
        DataType::Float32 => "FLOAT".into(),
        DataType::Float64 => "DOUBLE".into(),
        DataType::Decimal128(p, s) => format!("DECIMAL({p},{s})"),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "VARCHAR".into(),
        DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => "BLOB".into(),
        DataType::Date32 | DataType::Date64 => "DATE".into(),
        DataType::Timestamp(_, _) => "TIMESTAMP".into(),
        DataType::Interval(_) => "INTERVAL".into(),
        other => format!("{other}"),
    }
}

/// The canonical type Weir computes in for a (possibly exotic) file type,
/// the one map from Arrow types to SQL types: HALF floats widen to FLOAT,
/// string views to VARCHAR, other timestamp units to microseconds, 32- and
/// 64-bit decimals to `Decimal128`. Every integer width (signed and
/// unsigned) and FLOAT keep their own type.
pub fn canonical(t: &DataType) -> DataType {
    match t {
        DataType::Float16 => DataType::Float32,
        DataType::LargeUtf8 | DataType::Utf8View => DataType::Utf8,
        DataType::LargeBinary | DataType::BinaryView | DataType::FixedSizeBinary(_) => {
            DataType::Binary
        }
        DataType::Date64 => DataType::Date32,
        DataType::Timestamp(_, _) => timestamp_type(),
        DataType::Decimal32(p, s) | DataType::Decimal64(p, s) => DataType::Decimal128(*p, *s),
        other => other.clone(),
    }
}

/// True for the types tables hold and the evaluator computes in: NULL,
/// BOOLEAN, the integers (TINYINT .. BIGINT, UTINYINT .. UBIGINT), FLOAT,
/// DOUBLE, DECIMAL, VARCHAR, BLOB, DATE, TIMESTAMP.
pub fn is_canonical(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Null
            | DataType::Boolean
            | DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64
            | DataType::Float32
            | DataType::Float64
            | DataType::Decimal128(..)
            | DataType::Utf8
            | DataType::Binary
            | DataType::Date32
            | DataType::Timestamp(TimeUnit::Microsecond, None)
    )
}

/// The type Weir gives a HUGEINT result (an integer literal past BIGINT,
/// UBIGINT mixed with a signed integer): DECIMAL(38,0), the type DuckDB
/// exports HUGEINT to Arrow as. HUGEINT itself is not a column type.
pub const HUGEINT_STAND_IN: DataType = DataType::Decimal128(38, 0);

/// Bytes of an integer type, and whether it is signed.
fn int_width(t: &DataType) -> Option<(u8, bool)> {
    Some(match t {
        DataType::Int8 => (1, true),
        DataType::Int16 => (2, true),
        DataType::Int32 => (4, true),
        DataType::Int64 => (8, true),
        DataType::UInt8 => (1, false),
        DataType::UInt16 => (2, false),
        DataType::UInt32 => (4, false),
        DataType::UInt64 => (8, false),
        _ => return None,
    })
}

/// The signed integer type of `bytes` bytes (HUGEINT's stand-in past 8).
fn signed_int(bytes: u8) -> DataType {
    match bytes {
        1 => DataType::Int8,
        2 => DataType::Int16,
        3 | 4 => DataType::Int32,
        5..=8 => DataType::Int64,
        _ => HUGEINT_STAND_IN,
    }
}

/// True for the integer types, signed and unsigned.
pub fn is_integer(t: &DataType) -> bool {
    int_width(t).is_some()
}

/// True if the integer `v` fits integer type `t`.
pub fn integer_fits(v: i128, t: &DataType) -> bool {
    match t {
        DataType::Int8 => i8::try_from(v).is_ok(),
        DataType::Int16 => i16::try_from(v).is_ok(),
        DataType::Int32 => i32::try_from(v).is_ok(),
        DataType::Int64 => i64::try_from(v).is_ok(),
        DataType::UInt8 => u8::try_from(v).is_ok(),
        DataType::UInt16 => u16::try_from(v).is_ok(),
        DataType::UInt32 => u32::try_from(v).is_ok(),
        DataType::UInt64 => u64::try_from(v).is_ok(),
        _ => false,
    }
}

/// The DECIMAL an integer type converts to without loss, as DuckDB's:
/// TINYINT DECIMAL(3,0), SMALLINT (5,0), INTEGER (10,0), BIGINT (19,0),
/// UBIGINT (20,0); a DECIMAL is itself.
pub fn integer_as_decimal(t: &DataType) -> Option<DataType> {
    let p = match t {
        DataType::Int8 | DataType::UInt8 => 3,
        DataType::Int16 | DataType::UInt16 => 5,
        DataType::Int32 | DataType::UInt32 => 10,
        DataType::Int64 => 19,
        DataType::UInt64 => 20,
        DataType::Decimal128(..) => return Some(t.clone()),
        _ => return None,
    };
    Some(DataType::Decimal128(p, 0))
}

/// The type two numeric types meet in (comparisons, CASE and COALESCE
/// branches, IN lists, UNION columns), as DuckDB's implicit casts: the
/// wider integer of one signedness; a signed and an unsigned integer in the
/// smallest signed integer holding both (UBIGINT with a signed integer in
/// HUGEINT, here [`HUGEINT_STAND_IN`]); an integer and a DECIMAL in a
/// DECIMAL with room for both; FLOAT with any integer or DECIMAL is FLOAT,
/// DOUBLE with any number DOUBLE. `None` unless both are numeric.
pub fn numeric_common_type(l: &DataType, r: &DataType) -> Option<DataType> {
    use DataType::*;
    if !is_numeric(l) || !is_numeric(r) {
        return None;
    }
    if l == r {
        return Some(l.clone());
    }
    Some(match (l, r) {
        (Float64, _) | (_, Float64) => Float64,
        (Float32, _) | (_, Float32) => Float32,
        (Decimal128(..), _) | (_, Decimal128(..)) => {
            let (Some(Decimal128(p1, s1)), Some(Decimal128(p2, s2))) =
                (integer_as_decimal(l), integer_as_decimal(r))
            else {
                return None;
            };
            let s = s1.max(s2);
            let int_digits = (p1 as i16 - s1 as i16).max(p2 as i16 - s2 as i16);
            let p = (int_digits + s as i16).clamp(1, 38) as u8;
            Decimal128(p, s.min(p as i8))
        }
        _ => {
            let ((wl, sl), (wr, sr)) = (int_width(l)?, int_width(r)?);
            match (sl, sr) {
                (true, true) | (false, false) => {
                    if wl >= wr {
                        l.clone()
                    } else {
                        r.clone()
                    }
                }
                _ => {
                    let (ws, wu) = if sl { (wl, wr) } else { (wr, wl) };
                    signed_int(ws.max(wu * 2))
                }
            }
        }
    })
}

/// The type both operands of `+ - * // %` on two different integer types
/// are cast to, as DuckDB's overloads pick: the wider of one signedness;
/// a signed and a narrower unsigned integer in the signed one, otherwise
/// BIGINT (HUGEINT, here [`HUGEINT_STAND_IN`], with UBIGINT). Other
/// numeric pairs meet as [`numeric_common_type`] says.
pub fn arithmetic_common_type(l: &DataType, r: &DataType) -> Option<DataType> {
    let (Some((wl, sl)), Some((wr, sr))) = (int_width(l), int_width(r)) else {
        return numeric_common_type(l, r);
    };
    if sl == sr || l == r {
        return numeric_common_type(l, r);
    }
    let ((ws, s), wu) = if sl { ((wl, l), wr) } else { ((wr, r), wl) };
    Some(if wu == 8 {
        HUGEINT_STAND_IN
    } else if wu < ws {
        s.clone()
    } else {
        DataType::Int64
    })
}

/// The TIMESTAMP type.
pub fn timestamp_type() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, None)
}

/// True for integer, floating point (FLOAT, DOUBLE) and decimal types.
pub fn is_numeric(t: &DataType) -> bool {
    is_integer(t)
        || matches!(
            t,
            DataType::Float32 | DataType::Float64 | DataType::Decimal128(..)
        )
}

/// The result type of arithmetic `op` on operands of these types (after
/// coercion), or `None` if the operation is not defined.
///
/// DECIMAL rules follow DuckDB/SQL Server, capped at precision 38:
/// `+ -`: scale `max(s1, s2)`, precision `max(p1 - s1, p2 - s2) + scale + 1`;
/// `*`: scale `s1 + s2`, precision `p1 + p2`, capped at 38, and at 18
/// when both operands have at most 18 digits and the scale is below 18;
/// `/` and `%` on decimals give DOUBLE.
pub fn arithmetic_result_type(op: BinaryOp, l: &DataType, r: &DataType) -> Option<DataType> {
    use DataType::*;
    match (l, r) {
        (Decimal128(p1, s1), Decimal128(p2, s2)) => match op {
            BinaryOp::Plus | BinaryOp::Minus => {
                let s = (*s1).max(*s2);
                let p = ((*p1 as i16 - *s1 as i16).max(*p2 as i16 - *s2 as i16) + s as i16 + 1)
                    .min(38) as u8;
                Some(Decimal128(p, s))
            }
            BinaryOp::Multiply => {
                let s = (*s1 + *s2).min(38);
                let mut p = (*p1 as u16 + *p2 as u16).min(38) as u8;
                // DuckDB keeps a product of two 18-digit decimals in 18
                // digits (checked for overflow) unless its scale needs more
                if p > 18 && *p1 <= 18 && *p2 <= 18 && s < 18 {
                    p = 18;
                }
                Some(Decimal128(p, s))
            }
            BinaryOp::Divide | BinaryOp::Modulo => Some(Float64),
            _ => None,
        },
        (Date32, t) if is_integer(t) && matches!(op, BinaryOp::Plus | BinaryOp::Minus) => {
            Some(Date32)
        }
        (Date32, Date32) if op == BinaryOp::Minus => Some(Int32),
        // DATE and TIMESTAMP +/- INTERVAL are TIMESTAMPs, as in DuckDB
        (Timestamp(..), Interval(_)) if matches!(op, BinaryOp::Plus | BinaryOp::Minus) => {
            Some(crate::types::timestamp_type())
        }
        (Interval(_), Timestamp(..)) if op == BinaryOp::Plus => {
            Some(crate::types::timestamp_type())
        }
        (a, b) if a == b && (a.is_integer() || a.is_floating()) => Some(a.clone()),
        _ => None,
    }
}

/// The result type of a scalar function call with planned arguments.
pub fn function_result_type(func: ScalarFunction, args: &[Expr], input: &Schema) -> DataType {
    let first = args
        .first()
        .map(|a| a.data_type(input))
        .unwrap_or(DataType::Null);
    match func {
        ScalarFunction::Abs => first,
        ScalarFunction::Round => match first {
            DataType::Decimal128(p, s) => {
                // round(d) has scale 0; round(d, k) with a constant k keeps
                // min(k, s) digits (k < 0 rounds left of the point, scale 0)
                let digits = match args.get(1) {
                    Some(Expr::Literal(crate::ScalarValue::Int32(k))) => {
                        (*k).clamp(0, s as i32) as i8
                    }
                    Some(Expr::Literal(crate::ScalarValue::Int64(k))) => {
                        (*k).clamp(0, s as i64) as i8
                    }
                    Some(_) => s,
                    None => 0,
                };
                DataType::Decimal128(p, digits.min(s))
            }
            t if t.is_integer() || t == DataType::Float32 => t,
            _ => DataType::Float64,
        },
        ScalarFunction::Lower
        | ScalarFunction::Upper
        | ScalarFunction::Substr
        | ScalarFunction::Concat
        | ScalarFunction::ConcatWs
        | ScalarFunction::Replace
        | ScalarFunction::Trim
        | ScalarFunction::Ltrim
        | ScalarFunction::Rtrim
        | ScalarFunction::Left
        | ScalarFunction::Right
        | ScalarFunction::Lpad
        | ScalarFunction::Rpad
        | ScalarFunction::Reverse
        | ScalarFunction::Repeat => DataType::Utf8,
        ScalarFunction::Strpos => DataType::Int64,
        ScalarFunction::StartsWith | ScalarFunction::EndsWith | ScalarFunction::Contains => {
            DataType::Boolean
        }
        ScalarFunction::Sqrt
        | ScalarFunction::Power
        | ScalarFunction::Exp
        | ScalarFunction::Ln
        | ScalarFunction::Log10
        | ScalarFunction::Log
        | ScalarFunction::Log2 => DataType::Float64,
        // integral results: a DECIMAL keeps its precision at scale 0
        ScalarFunction::Floor | ScalarFunction::Ceil | ScalarFunction::Trunc => match first {
            DataType::Decimal128(p, _) => DataType::Decimal128(p, 0),
            t => t,
        },
        ScalarFunction::Sign => DataType::Int32,
        ScalarFunction::DateTrunc => timestamp_type(),
        ScalarFunction::RegexpMatches
        | ScalarFunction::RegexpFullMatch
        | ScalarFunction::LikeEscape
        | ScalarFunction::IlikeEscape
        | ScalarFunction::Glob
        | ScalarFunction::IsNan
        | ScalarFunction::IsInf
        | ScalarFunction::IsFinite => DataType::Boolean,
        ScalarFunction::RegexpExtract
        | ScalarFunction::RegexpReplace
        | ScalarFunction::Printf
        | ScalarFunction::Format
        | ScalarFunction::Md5
        | ScalarFunction::SplitPart
        | ScalarFunction::Chr
        | ScalarFunction::Translate
        | ScalarFunction::Strftime
        | ScalarFunction::DayName
        | ScalarFunction::MonthName => DataType::Utf8,
        ScalarFunction::Levenshtein
        | ScalarFunction::Gcd
        | ScalarFunction::Lcm
        | ScalarFunction::DateDiff => DataType::Int64,
        ScalarFunction::Ascii => DataType::Int32,
        ScalarFunction::Random
        | ScalarFunction::Pi
        | ScalarFunction::Sin
        | ScalarFunction::Cos
        | ScalarFunction::Tan
        | ScalarFunction::Cot
        | ScalarFunction::Asin
        | ScalarFunction::Acos
        | ScalarFunction::Atan
        | ScalarFunction::Atan2
        | ScalarFunction::Degrees
        | ScalarFunction::Radians
        | ScalarFunction::Cbrt => DataType::Float64,
        // setseed returns NULL, typed as DuckDB's (a NULL of type NULL)
        ScalarFunction::SetSeed | ScalarFunction::Error => DataType::Null,
        ScalarFunction::Strptime | ScalarFunction::MakeTimestamp | ScalarFunction::Now => {
            timestamp_type()
        }
        ScalarFunction::MakeDate | ScalarFunction::Today | ScalarFunction::LastDay => {
            DataType::Date32
        }
        // epoch_ms(BIGINT) is a TIMESTAMP, epoch_ms(TIMESTAMP) a BIGINT
        ScalarFunction::EpochMs => match first {
            DataType::Timestamp(..) => DataType::Int64,
            _ => timestamp_type(),
        },
        ScalarFunction::Greatest | ScalarFunction::Least => args
            .iter()
            .map(|a| a.data_type(input))
            .find(|t| *t != DataType::Null)
            .unwrap_or(DataType::Null),
        ScalarFunction::Length | ScalarFunction::OctetLength => DataType::Int64,
        ScalarFunction::Coalesce => args
            .iter()
            .map(|a| a.data_type(input))
            .find(|t| *t != DataType::Null)
            .unwrap_or(DataType::Null),
        // `epoch` has a fraction of a second: DOUBLE, as in DuckDB
        ScalarFunction::DatePart => match args.first() {
            Some(Expr::Literal(crate::ScalarValue::Utf8(f))) if f.eq_ignore_ascii_case("epoch") => {
                DataType::Float64
            }
            _ => DataType::Int64,
        },
    }
}

/// The result type of aggregate `func` over an argument of type `arg`
/// (`None` for `count(*)`), or `None` if the aggregate is not defined on
/// that type (`sum(VARCHAR)`).
///
/// `count` gives BIGINT; `sum` gives BIGINT for integers, DECIMAL(38, s)
/// for decimals and DOUBLE for doubles; `avg`, the variances and the
/// standard deviations give DOUBLE; `min` and
/// `max` keep the input type.
pub fn aggregate_result_type(func: AggregateFunction, arg: Option<&DataType>) -> Option<DataType> {
    match (func, arg) {
        (AggregateFunction::StringAgg, Some(_)) => Some(DataType::Utf8),
        (AggregateFunction::Grouping, Some(_)) => Some(DataType::Int64),
        (AggregateFunction::Median | AggregateFunction::QuantileCont, Some(t))
            if is_integer(t)
                || matches!(t, DataType::Float32 | DataType::Float64 | DataType::Null) =>
        {
            Some(DataType::Float64)
        }
        // (DuckDB's interpolation of decimals keeps their type)
        (AggregateFunction::Median | AggregateFunction::QuantileCont, Some(t))
            if matches!(t, DataType::Decimal128(..)) =>
        {
            Some(t.clone())
        }
        (AggregateFunction::QuantileDisc, Some(t)) => Some(t.clone()),
        (
            AggregateFunction::Product
            | AggregateFunction::Skewness
            | AggregateFunction::Kurtosis
            | AggregateFunction::KurtosisPop,
            Some(t),
        ) if is_numeric(t) || *t == DataType::Null => Some(DataType::Float64),
        (AggregateFunction::Entropy, Some(_)) => Some(DataType::Float64),
        (
            AggregateFunction::BitAnd | AggregateFunction::BitOr | AggregateFunction::BitXor,
            Some(t),
        ) if t.is_integer() => Some(t.clone()),
        (
            AggregateFunction::BitAnd | AggregateFunction::BitOr | AggregateFunction::BitXor,
            Some(DataType::Null),
        ) => Some(DataType::Int32),
        (
            AggregateFunction::Mode
            | AggregateFunction::AnyValue
            | AggregateFunction::First
            | AggregateFunction::Last,
            Some(t),
        ) => Some(t.clone()),
        (AggregateFunction::CountStar, _) | (AggregateFunction::Count, Some(_)) => {
            Some(DataType::Int64)
        }
        (AggregateFunction::Sum, Some(t)) if t.is_integer() => Some(DataType::Int64),
        (AggregateFunction::Sum, Some(DataType::Decimal128(_, s))) => {
            Some(DataType::Decimal128(38, *s))
        }
        (AggregateFunction::Sum, Some(t)) if t.is_floating() => Some(DataType::Float64),
        (AggregateFunction::Sum, Some(DataType::Null)) => Some(DataType::Int64),
        (
            AggregateFunction::Avg
            | AggregateFunction::VarSamp
            | AggregateFunction::VarPop
            | AggregateFunction::StddevSamp
            | AggregateFunction::StddevPop,
            Some(t),
        ) if is_numeric(t) || *t == DataType::Null => Some(DataType::Float64),
        (
            AggregateFunction::Min
            | AggregateFunction::Max
            | AggregateFunction::ArgMin
            | AggregateFunction::ArgMax,
            Some(t),
        ) => Some(t.clone()),
        (AggregateFunction::RegrCount, Some(t)) if is_numeric(t) || *t == DataType::Null => {
            Some(DataType::UInt32)
        }
        (f, Some(t)) if f.of_pairs() && (is_numeric(t) || *t == DataType::Null) => {
            Some(DataType::Float64)
        }
        _ => None,
    }
}

/// The type of window function `func` whose value argument (`x` of
/// `lag(x)`, `sum(x)`) has type `arg`; `None` where it does not apply.
/// The ranks and `ntile` are BIGINT, `percent_rank` and `cume_dist`
/// DOUBLE, the value functions of `x`'s type, the aggregates as
/// [`aggregate_result_type`] says.
pub fn window_result_type(func: WindowFunction, arg: Option<&DataType>) -> Option<DataType> {
    match func {
        WindowFunction::RowNumber
        | WindowFunction::Rank
        | WindowFunction::DenseRank
        | WindowFunction::Ntile => Some(DataType::Int64),
        WindowFunction::PercentRank | WindowFunction::CumeDist => Some(DataType::Float64),
        WindowFunction::Lag
        | WindowFunction::Lead
        | WindowFunction::FirstValue
        | WindowFunction::LastValue
        | WindowFunction::NthValue => arg.cloned(),
        WindowFunction::Aggregate(a) => aggregate_result_type(a, arg),
    }
}
