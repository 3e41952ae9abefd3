//! Implicit coercion, casts of constants, and constant folding.

use arrow_schema::{DataType, Schema};

use crate::error::{Error, Result};
use crate::expr::{BinaryOp, Expr};
use crate::fold::ConstantEvaluator;
use crate::scalar::{ScalarValue, fits_precision, parse_decimal};
use crate::types::{
    arithmetic_common_type, arithmetic_result_type, canonical, integer_as_decimal, is_integer,
    is_numeric, numeric_common_type, timestamp_type,
};

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
        (a, b) if is_num(a) && is_num(b) => numeric_common_type(a, b),
        (Date32, Timestamp(..)) | (Timestamp(..), Date32) => Some(timestamp_type()),
        _ => None,
    }
}

/// The type of a set operation's column whose inputs have these types:
/// their [`comparison_type`], else VARCHAR when one of them is VARCHAR,
/// as in DuckDB (`SELECT 1 UNION SELECT 'a'` is VARCHAR).
pub(crate) fn union_type(l: &DataType, r: &DataType) -> Option<DataType> {
    comparison_type(l, r).or_else(|| {
        let text = |t: &DataType| canonical(t) == DataType::Utf8;
        let castable = |t: &DataType| !matches!(canonical(t), DataType::Binary);
        ((text(l) && castable(r)) || (text(r) && castable(l))).then_some(DataType::Utf8)
    })
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
        (Date32, t) if is_integer(t) && matches!(op, BinaryOp::Plus | BinaryOp::Minus) => {
            Some((l.clone(), r.clone()))
        }
        (Date32, Date32) if op == BinaryOp::Minus => Some((l.clone(), r.clone())),
        (Date32 | Timestamp(..), Interval(_)) if matches!(op, BinaryOp::Plus | BinaryOp::Minus) => {
            Some((timestamp_type(), r.clone()))
        }
        (Interval(_), Date32 | Timestamp(..)) if op == BinaryOp::Plus => {
            Some((l.clone(), timestamp_type()))
        }
        (Decimal128(..), _) | (_, Decimal128(..)) if is_num(&l) && is_num(&r) => {
            if matches!(l, Float32 | Float64) || matches!(r, Float32 | Float64) {
                let t = numeric_common_type(&l, &r)?;
                return Some((t.clone(), t));
            }
            Some((integer_as_decimal(&l)?, integer_as_decimal(&r)?))
        }
        (Null, Null) => Some((Int32, Int32)),
        (Null, t) | (t, Null) if is_num(t) => Some((t.clone(), t.clone())),
        (a, b) if is_num(a) && is_num(b) => {
            let t = arithmetic_common_type(a, b)?;
            Some((t.clone(), t))
        }
        _ => None,
    }
}

fn is_num(t: &DataType) -> bool {
    is_numeric(t)
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
        (Boolean, b) | (b, Boolean) if is_num(b) => true,
        (Utf8, Boolean | Date32 | Timestamp(..) | Binary) => true,
        (Utf8, b) if is_num(b) => true,
        (Date32, Timestamp(..)) | (Timestamp(..), Date32) => true,
        _ => false,
    }
}

/// Constant folding. The binder builds each expression node and hands it
/// here; a node whose operands are all constants is evaluated by the
/// [`ConstantEvaluator`] the caller gave, the very evaluator that runs
/// queries, so constants and columns follow one rule. A constant whose
/// evaluation fails stays an expression and raises its error when it runs,
/// as the same expression over a column would. Without an evaluator only
/// the structural rules apply (`TRUE AND x` is `x`, a branch `WHEN FALSE`
/// is dropped, `x + NULL` is NULL when `x` cannot fail).
#[derive(Clone, Copy)]
pub(crate) struct Folder<'a> {
    evaluator: Option<&'a dyn ConstantEvaluator>,
}

impl<'a> Folder<'a> {
    pub(crate) fn new(evaluator: Option<&'a dyn ConstantEvaluator>) -> Self {
        Self { evaluator }
    }

    /// `e`, evaluated to a literal when its operands are all literals and
    /// the evaluation succeeds.
    pub(crate) fn fold(self, e: Expr) -> Expr {
        let Some(evaluator) = self.evaluator else {
            return e;
        };
        if matches!(e, Expr::Literal(_) | Expr::Column(_))
            || !operands_are_literals(&e)
            || e.is_volatile()
        {
            return e;
        }
        match evaluator.evaluate(&e) {
            Ok(v) => Expr::Literal(v),
            Err(_) => e,
        }
    }

    /// The value of a constant expression, for the places that need one
    /// (VALUES, IN lists, LIMIT, function options): `Ok(None)` when `e`
    /// is not constant, the evaluator's error when evaluating it fails.
    pub(crate) fn value(self, e: &Expr) -> Result<Option<ScalarValue>> {
        if let Expr::Literal(v) = e {
            return Ok(Some(v.clone()));
        }
        match self.evaluator {
            Some(ev) if e.columns().is_empty() => ev.evaluate(e).map(Some).map_err(Error::Evaluate),
            _ => Ok(None),
        }
    }

    /// Constants cast to `to` in one call: `Ok(None)` without an
    /// evaluator (unless no cast is needed), the evaluator's error if one
    /// fails.
    pub(crate) fn cast_values(
        self,
        values: Vec<ScalarValue>,
        to: &DataType,
    ) -> Result<Option<Vec<ScalarValue>>> {
        if values.iter().all(|v| v.data_type() == *to || v.is_null()) {
            return Ok(Some(
                values
                    .into_iter()
                    .map(|v| {
                        if v.is_null() {
                            ScalarValue::Null(to.clone())
                        } else {
                            v
                        }
                    })
                    .collect(),
            ));
        }
        match self.evaluator {
            Some(ev) => ev
                .cast_values(values, to)
                .map(Some)
                .map_err(Error::Evaluate),
            None => Ok(None),
        }
    }

    /// Wraps `e` (of type `t`) in a CAST to `to` unless it has that type
    /// already, folding a constant.
    pub(crate) fn cast(self, e: Expr, t: &DataType, to: &DataType) -> Expr {
        self.cast_as(e, t, to, false)
    }

    /// [`Folder::cast`], or with `try_cast` a TRY_CAST (NULL where a value
    /// does not convert).
    pub(crate) fn cast_as(self, e: Expr, t: &DataType, to: &DataType, try_cast: bool) -> Expr {
        if t == to {
            return e;
        }
        if let Expr::Literal(ScalarValue::Null(_)) = e {
            return Expr::Literal(ScalarValue::Null(to.clone()));
        }
        self.fold(Expr::Cast {
            expr: Box::new(e),
            to: to.clone(),
            try_cast,
        })
    }

    /// `left op right` with operands already coerced, over `input`.
    pub(crate) fn binary(self, op: BinaryOp, left: Expr, right: Expr, input: &Schema) -> Expr {
        if matches!(op, BinaryOp::And | BinaryOp::Or) {
            return self.fold(fold_logic(op, left, right, input));
        }
        match (&left, &right) {
            (Expr::Literal(n), other) | (other, Expr::Literal(n))
                if n.is_null() && !matches!(other, Expr::Literal(_)) && !other.can_fail(input) =>
            {
                // NULL propagates through comparisons, arithmetic and ||.
                let t = result_type(op, &left, &right);
                Expr::Literal(ScalarValue::Null(t))
            }
            _ => self.fold(Expr::binary(left, op, right)),
        }
    }

    /// `NOT e`.
    pub(crate) fn not(self, e: Expr) -> Expr {
        match e {
            Expr::Not(inner) => *inner,
            e => self.fold(Expr::Not(Box::new(e))),
        }
    }

    /// `-e`.
    pub(crate) fn negative(self, e: Expr) -> Expr {
        self.fold(Expr::Negative(Box::new(e)))
    }
}

/// True if every direct operand of `e` is a literal (an IN list's items
/// and a LIKE pattern always are).
fn operands_are_literals(e: &Expr) -> bool {
    match e {
        Expr::Column(_) => false,
        Expr::Literal(_) => true,
        _ => {
            let mut all = true;
            e.for_each_child(|child| all &= matches!(child, Expr::Literal(_)));
            all
        }
    }
}

/// The type of `left op right` without an input schema (one side is a
/// NULL literal).
fn result_type(op: BinaryOp, left: &Expr, right: &Expr) -> DataType {
    if op.is_comparison() {
        return DataType::Boolean;
    }
    if op == BinaryOp::Concat {
        return DataType::Utf8;
    }
    let ty = |e: &Expr| match e {
        Expr::Literal(v) => v.data_type(),
        Expr::Cast { to, .. } => to.clone(),
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

/// The structural rules of AND / OR with one constant side (three-valued
/// logic): `TRUE AND x` is `x`; `FALSE AND x` is FALSE when `x` cannot
/// fail. Two constant sides are left to the evaluator.
fn fold_logic(op: BinaryOp, left: Expr, right: Expr, input: &Schema) -> Expr {
    let and = op == BinaryOp::And;
    // The value that decides the result on its own: FALSE for AND, TRUE for OR.
    let dominant = !and;
    match (as_bool(&left), as_bool(&right)) {
        (Some(Some(b)), None) | (None, Some(Some(b))) => {
            let other = if as_bool(&left).is_some() {
                right
            } else {
                left
            };
            if b == dominant {
                if !other.can_fail(input) {
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

/// The type of a numeric literal as DuckDB types it: INTEGER if it fits,
/// then BIGINT, then DECIMAL(38,0); `0.05` is DECIMAL(3,2); exponents are
/// DOUBLE.
pub(crate) fn number_literal(s: &str) -> Option<ScalarValue> {
    if s.contains(['e', 'E']) {
        return s.parse().ok().map(ScalarValue::Float64);
    }
    if let Some((int, frac)) = s.split_once('.') {
        let int_digits = int
            .trim_start_matches('-')
            .trim_start_matches('0')
            .len()
            .max(1);
        let scale = frac.len();
        let p = int_digits + scale;
        if p > 38 {
            return s.parse().ok().map(ScalarValue::Float64);
        }
        let v = parse_decimal(s, scale as i8).filter(|v| fits_precision(*v, p as u8))?;
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
        assert_eq!(t("-1.5"), Some(DataType::Decimal128(2, 1)));
        assert_eq!(t("-2147483648"), Some(DataType::Int32));
        assert_eq!(t("-9223372036854775808"), Some(DataType::Int64));
        assert_eq!(t("-9223372036854775809"), Some(DataType::Decimal128(38, 0)));
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
}
