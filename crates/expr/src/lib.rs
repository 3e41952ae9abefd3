//! Vectorised evaluation of the planner's bound [`Expr`]s over Arrow
//! [`RecordBatch`]es.
//!
//! The entry points are [`evaluate`] (one value per row) and
//! [`evaluate_predicate`] (WHERE semantics: NULL is false). Semantics follow
//! DuckDB: three-valued logic, NULL propagation, checked integer arithmetic,
//! DuckDB's casts, `LIKE` with `%`, `_` and `ESCAPE`.
//!
//! Internally every sub-expression evaluates to a `Value`: either a full
//! array or a one-row "scalar" array (from literals and constant
//! sub-expressions), so that `column <op> literal` runs against an Arrow
//! [`Scalar`](arrow::array::Scalar) datum without materialising the literal.
//!
//! Conditional evaluation: the right operand of `AND` / `OR`, the branches of
//! `CASE` and the later arguments of `coalesce` are evaluated only on the rows
//! that need them whenever they could raise an error (division, overflow,
//! casts), so `CASE WHEN x = 0 THEN NULL ELSE 1 / x END` never divides by
//! zero. An empty batch never raises an evaluation error.

mod arith;
mod cast;
mod datetime;
mod format;
mod functions;
mod in_set;
mod like;
mod math;
mod regex;
mod scalar;
#[cfg(test)]
mod tests;
mod text;

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Datum, RecordBatch, RecordBatchOptions, UInt32Array,
    new_empty_array, new_null_array,
};
use arrow::buffer::{BooleanBuffer, NullBuffer};
use arrow::compute::kernels::boolean::{and_kleene, not, or_kleene};
use arrow::compute::kernels::zip::zip;
use arrow::compute::{filter, interleave, take};
use arrow::datatypes::{DataType, Schema};
use weir_planner::{BinaryOp, Expr, ScalarValue};

pub use scalar::{scalar_from_array, scalar_to_array};

/// An error raised while evaluating an expression.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// A value could not be converted to the requested type.
    #[error("Conversion Error: {0}")]
    Cast(String),
    /// The input is invalid for the operation: division by zero, a bad
    /// `LIKE` escape, ...
    #[error("Invalid Input Error: {0}")]
    InvalidInput(String),
    /// A result does not fit its type: integer overflow, a date out of
    /// range, a string too long.
    #[error("Out of Range Error: {0}")]
    OutOfRange(String),
    /// The expression uses something the evaluator does not implement.
    #[error("Not implemented Error: {0}")]
    Unsupported(String),
    /// An error from an Arrow kernel.
    #[error(transparent)]
    Arrow(#[from] arrow::error::ArrowError),
}

/// Result alias for this module.
type Result<T, E = EvalError> = std::result::Result<T, E>;

/// Evaluates `expr` over `batch`: one value per row of `batch`.
///
/// Column expressions index into `batch.columns()`. The result's type is
/// `expr.data_type(batch.schema())`, except that an untyped NULL keeps the
/// `Null` type.
pub fn evaluate(expr: &Expr, batch: &RecordBatch) -> Result<ArrayRef, EvalError> {
    match deep_stack(expr) {
        Some(stack) => on_stack(stack, || evaluate_here(expr, batch)),
        None => evaluate_here(expr, batch),
    }
}

fn evaluate_here(expr: &Expr, batch: &RecordBatch) -> Result<ArrayRef, EvalError> {
    let input = Input::from_batch(batch);
    if input.len == 0 {
        return Ok(new_empty_array(&expr.data_type(input.schema)));
    }
    eval(expr, &input)?.into_array(input.len)
}

/// Evaluates the predicate `expr` over `batch` with WHERE semantics: NULL
/// results become `false`. The output has no null buffer.
pub fn evaluate_predicate(expr: &Expr, batch: &RecordBatch) -> Result<BooleanArray, EvalError> {
    match deep_stack(expr) {
        Some(stack) => on_stack(stack, || predicate_here(expr, batch)),
        None => predicate_here(expr, batch),
    }
}

fn predicate_here(expr: &Expr, batch: &RecordBatch) -> Result<BooleanArray, EvalError> {
    let input = Input::from_batch(batch);
    if input.len == 0 {
        return Ok(BooleanArray::new(BooleanBuffer::new_unset(0), None));
    }
    let v = eval(expr, &input)?;
    Ok(BooleanArray::new(predicate_mask(&v, input.len)?, None))
}

/// Expressions nested deeper than this are evaluated on a thread of their
/// own whose stack fits them: evaluation recurses, the planner allows
/// DuckDB's nesting depth (1000), and the caller's thread (a worker, the
/// query thread) may have a small stack.
const DEEP_EXPR: usize = 48;

/// The stack to evaluate `expr` on, if it is too deep for any thread's.
fn deep_stack(expr: &Expr) -> Option<usize> {
    fn depth(e: &Expr) -> usize {
        let mut deepest = 0;
        e.for_each_child(|child| deepest = deepest.max(depth(child)));
        1 + deepest
    }
    let d = depth(expr);
    // evaluation takes tens of KiB a level in a debug build, less in release
    (d > DEEP_EXPR).then(|| (16 << 20) + d * (64 << 10))
}

/// Runs `f` on a scoped thread with a `stack`-byte stack.
fn on_stack<T: Send>(stack: usize, f: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("weir-deep-eval".into())
            .stack_size(stack)
            .spawn_scoped(scope, f)
            .map_err(|e| {
                EvalError::InvalidInput(format!(
                    "cannot start a thread to evaluate a deep expression: {e}"
                ))
            })?
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// The planner's constant-folding hook, answered by this evaluator: a
/// constant folds to exactly what it would compute at run time.
///
/// ```
/// use weir_expr::ConstantFolder;
/// use weir_planner::{ConstantEvaluator, Expr, ScalarValue};
/// use weir_planner::arrow_schema::DataType;
/// let cast = |s: &str, try_cast| Expr::Cast {
///     expr: Box::new(Expr::Literal(ScalarValue::Utf8(s.into()))),
///     to: DataType::Int32,
///     try_cast,
/// };
/// assert_eq!(ConstantFolder.evaluate(&cast("1.5", false)).unwrap(), ScalarValue::Int32(2));
/// assert!(ConstantFolder.evaluate(&cast("x", false)).is_err());
/// assert_eq!(
///     ConstantFolder.evaluate(&cast("x", true)).unwrap(),
///     ScalarValue::Null(DataType::Int32)
/// );
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct ConstantFolder;

impl weir_planner::ConstantEvaluator for ConstantFolder {
    fn evaluate(&self, expr: &Expr) -> Result<ScalarValue, weir_planner::fold::EvalError> {
        let schema = Arc::new(Schema::empty());
        let one_row = RecordBatchOptions::new().with_row_count(Some(1));
        let batch = RecordBatch::try_new_with_options(schema.clone(), vec![], &one_row)?;
        let mut a = evaluate(expr, &batch)?;
        let t = expr.data_type(&schema);
        if *a.data_type() != t && t != DataType::Null {
            a = cast::cast_array(&a, &t)?;
        }
        Ok(scalar_from_array(a.as_ref(), 0)?)
    }

    fn cast_values(
        &self,
        values: Vec<ScalarValue>,
        to: &DataType,
    ) -> Result<Vec<ScalarValue>, weir_planner::fold::EvalError> {
        // one array per source type, cast in one call
        let mut out = vec![ScalarValue::Null(to.clone()); values.len()];
        let mut by_type: Vec<(DataType, Vec<usize>)> = Vec::new();
        for (i, v) in values.iter().enumerate() {
            if v.is_null() {
                continue;
            }
            let t = v.data_type();
            match by_type.iter_mut().find(|(u, _)| *u == t) {
                Some((_, rows)) => rows.push(i),
                None => by_type.push((t, vec![i])),
            }
        }
        for (_, rows) in by_type {
            let arrays = rows
                .iter()
                .map(|&i| scalar_to_array(&values[i], 1))
                .collect::<Result<Vec<_>>>()?;
            let refs: Vec<&dyn Array> = arrays.iter().map(|a| a.as_ref()).collect();
            let all = arrow::compute::concat(&refs)?;
            let cast = cast::cast_array(&all, to)?;
            for (j, &i) in rows.iter().enumerate() {
                out[i] = scalar_from_array(cast.as_ref(), j)?;
            }
        }
        Ok(out)
    }
}

/// The input of an evaluation: the batch's columns (some absent when only a
/// subset of the rows is evaluated) and the row count.
#[derive(Clone)]
pub(crate) struct Input<'a> {
    schema: &'a Schema,
    columns: Vec<Option<ArrayRef>>,
    len: usize,
}

impl<'a> Input<'a> {
    fn from_batch(batch: &'a RecordBatch) -> Self {
        Self {
            schema: batch.schema_ref().as_ref(),
            columns: batch.columns().iter().cloned().map(Some).collect(),
            len: batch.num_rows(),
        }
    }

    fn column(&self, index: usize) -> Result<ArrayRef> {
        self.columns
            .get(index)
            .and_then(|c| c.clone())
            .ok_or_else(|| EvalError::InvalidInput(format!("column index {index} out of range")))
    }

    /// The rows at `indices`, with only the columns `exprs` read.
    fn subset(&self, exprs: &[&Expr], indices: &UInt32Array) -> Result<Input<'a>> {
        if indices.len() == self.len {
            // indices are always ascending and distinct: all rows, in order
            return Ok(self.clone());
        }
        let mut columns = vec![None; self.columns.len()];
        for e in exprs {
            for c in e.columns() {
                if let (Some(slot @ None), Some(Some(col))) =
                    (columns.get_mut(c), self.columns.get(c))
                {
                    *slot = Some(take(col.as_ref(), indices, None)?);
                }
            }
        }
        Ok(Input {
            schema: self.schema,
            columns,
            len: indices.len(),
        })
    }
}

/// An evaluated sub-expression: a full array (one value per input row) or a
/// one-row array standing for a constant.
#[derive(Clone, Debug)]
pub(crate) enum Value {
    /// One value per row.
    Array(ArrayRef),
    /// A constant: a one-row array.
    Scalar(ArrayRef),
}

impl Value {
    fn array(&self) -> &ArrayRef {
        match self {
            Value::Array(a) | Value::Scalar(a) => a,
        }
    }

    fn is_scalar(&self) -> bool {
        matches!(self, Value::Scalar(_))
    }

    fn data_type(&self) -> &DataType {
        self.array().data_type()
    }

    /// Wraps an array computed from operands that were all scalars (or not).
    fn wrap(array: ArrayRef, scalar: bool) -> Value {
        if scalar {
            Value::Scalar(array)
        } else {
            Value::Array(array)
        }
    }

    /// Applies `f` to the underlying array, keeping scalar-ness.
    fn map(&self, f: impl FnOnce(&ArrayRef) -> Result<ArrayRef>) -> Result<Value> {
        Ok(Value::wrap(f(self.array())?, self.is_scalar()))
    }

    /// The value as an array of `len` rows.
    fn into_array(self, len: usize) -> Result<ArrayRef> {
        match self {
            Value::Array(a) => Ok(a),
            Value::Scalar(a) => broadcast(&a, len),
        }
    }
}

impl Datum for Value {
    fn get(&self) -> (&dyn Array, bool) {
        (self.array().as_ref(), self.is_scalar())
    }
}

/// Repeats the single row of `array` `len` times.
fn broadcast(array: &ArrayRef, len: usize) -> Result<ArrayRef> {
    if array.len() == len {
        return Ok(array.clone());
    }
    if array.is_empty() || array.is_null(0) {
        return Ok(new_null_array(array.data_type(), len));
    }
    let indices = UInt32Array::from(vec![0u32; len]);
    Ok(take(array.as_ref(), &indices, None)?)
}

/// Replaces the rows `indices` of `base` with `values` (same type).
fn scatter(base: &ArrayRef, indices: &UInt32Array, values: &ArrayRef) -> Result<ArrayRef> {
    let mut pos: Vec<(usize, usize)> = (0..base.len()).map(|i| (0, i)).collect();
    for (j, &row) in indices.values().iter().enumerate() {
        pos[row as usize] = (1, j);
    }
    Ok(interleave(&[base.as_ref(), values.as_ref()], &pos)?)
}

/// The positions of the set bits of `mask`.
fn indices_of(mask: &BooleanBuffer) -> UInt32Array {
    UInt32Array::from_iter_values(mask.set_indices_u32())
}

/// A boolean value as a mask of `len` rows: true where the value is TRUE
/// (NULL counts as false).
fn predicate_mask(v: &Value, len: usize) -> Result<BooleanBuffer> {
    let v = to_boolean(v.clone())?;
    let b = v.array().as_boolean();
    if v.is_scalar() {
        let t = b.is_valid(0) && b.value(0);
        return Ok(if t {
            BooleanBuffer::new_set(len)
        } else {
            BooleanBuffer::new_unset(len)
        });
    }
    Ok(match b.nulls() {
        Some(n) => b.values() & n.inner(),
        None => b.values().clone(),
    })
}

/// Casts an untyped NULL to BOOLEAN; errors on other non-boolean values.
fn to_boolean(v: Value) -> Result<Value> {
    match v.data_type() {
        DataType::Boolean => Ok(v),
        DataType::Null => v.map(|a| Ok(new_null_array(&DataType::Boolean, a.len()))),
        other => Err(EvalError::InvalidInput(format!(
            "expected a BOOLEAN value, got {}",
            weir_planner::types::sql_type_name(other)
        ))),
    }
}

/// True if evaluating `expr` could raise an error on some row, so that it
/// must only be evaluated on the rows that need it.
fn may_error(expr: &Expr, input: &Input<'_>) -> bool {
    expr.can_fail(input.schema)
}

/// Evaluates `expr` over `input`.
pub(crate) fn eval(expr: &Expr, input: &Input<'_>) -> Result<Value> {
    match expr {
        Expr::Column(c) => Ok(Value::Array(input.column(c.index)?)),
        Expr::Literal(v) => Ok(Value::Scalar(scalar_to_array(v, 1)?)),
        Expr::Binary { op, left, right } => match op {
            BinaryOp::And | BinaryOp::Or => eval_and_or(*op, left, right, input),
            op if op.is_comparison() => {
                let l = eval(left, input)?;
                let r = eval(right, input)?;
                arith::compare(*op, &l, &r)
            }
            BinaryOp::Concat => {
                let l = eval(left, input)?;
                let r = eval(right, input)?;
                arith::concat(&l, &r)
            }
            op => {
                let l = eval(left, input)?;
                let r = eval(right, input)?;
                arith::arithmetic(*op, &l, &r, &expr.data_type(input.schema))
            }
        },
        Expr::Not(e) => {
            let v = to_boolean(eval(e, input)?)?;
            v.map(|a| Ok(Arc::new(not(a.as_boolean())?)))
        }
        Expr::Negative(e) => arith::negative(&eval(e, input)?),
        Expr::IsNull(e) | Expr::IsNotNull(e) => {
            let want_null = matches!(expr, Expr::IsNull(_));
            eval(e, input)?.map(|a| {
                let valid = match a.logical_nulls() {
                    Some(n) => n.inner().clone(),
                    None => BooleanBuffer::new_set(a.len()),
                };
                let values = if want_null { !&valid } else { valid };
                Ok(Arc::new(BooleanArray::new(values, None)))
            })
        }
        Expr::InList {
            expr: e,
            list,
            negated,
        } => eval_in_list(&eval(e, input)?, list, *negated),
        Expr::Like {
            expr: e,
            pattern,
            negated,
            case_insensitive,
            escape,
        } => {
            let v = eval(e, input)?;
            let m = like::Like::new(pattern, *case_insensitive, *escape)?;
            v.map(|a| Ok(Arc::new(m.evaluate(a, *negated)?)))
        }
        Expr::Cast {
            expr: e,
            to,
            try_cast: false,
        } => eval(e, input)?.map(|a| cast::cast_array(a, to)),
        Expr::Cast {
            expr: e,
            to,
            try_cast: true,
        } => eval(e, input)?.map(|a| cast::try_cast_array(a, to)),
        Expr::Case {
            when_then,
            else_expr,
        } => eval_case(expr, when_then, else_expr.as_deref(), input),
        Expr::Function { func, args } => functions::eval_function(*func, args, expr, input),
    }
}

/// `AND` / `OR` with Kleene logic. The right side is evaluated only on the
/// rows the left side does not decide when it could raise an error.
fn eval_and_or(op: BinaryOp, left: &Expr, right: &Expr, input: &Input<'_>) -> Result<Value> {
    let is_and = op == BinaryOp::And;
    let l = to_boolean(eval(left, input)?)?;
    let lb = l.array().as_boolean();
    // rows the left side decides: FALSE for AND, TRUE for OR
    let decided = {
        let values = if is_and {
            !lb.values()
        } else {
            lb.values().clone()
        };
        match lb.nulls() {
            Some(n) => &values & n.inner(),
            None => values,
        }
    };
    let n_decided = decided.count_set_bits();
    if n_decided == lb.len() {
        return Ok(l);
    }
    if n_decided == 0 || !may_error(right, input) || l.is_scalar() {
        let r = to_boolean(eval(right, input)?)?;
        return kleene(is_and, &l, &r, input.len);
    }
    let idx = indices_of(&!&decided);
    let sub = input.subset(&[right], &idx)?;
    let r = to_boolean(eval(right, &sub)?)?;
    let l_sub = Value::Array(take(l.array().as_ref(), &idx, None)?);
    let combined = kleene(is_and, &l_sub, &r, idx.len())?.into_array(idx.len())?;
    Ok(Value::Array(scatter(l.array(), &idx, &combined)?))
}

fn kleene(is_and: bool, l: &Value, r: &Value, len: usize) -> Result<Value> {
    let scalar = l.is_scalar() && r.is_scalar();
    let n = if scalar { 1 } else { len };
    let la = l.clone().into_array(n)?;
    let ra = r.clone().into_array(n)?;
    let out = if is_and {
        and_kleene(la.as_boolean(), ra.as_boolean())?
    } else {
        or_kleene(la.as_boolean(), ra.as_boolean())?
    };
    Ok(Value::wrap(Arc::new(out), scalar))
}

/// Lists longer than this are probed in a hash set.
const IN_SET_MIN: usize = 8;

/// `x [NOT] IN (list)`, three-valued.
fn eval_in_list(v: &Value, list: &weir_planner::InItems, negated: bool) -> Result<Value> {
    let a = v.array();
    let n = a.len();
    let has_null = list.iter().any(|i| i.is_null()) || *a.data_type() == DataType::Null;
    let matched = if *a.data_type() == DataType::Null {
        BooleanBuffer::new_unset(n)
    } else if list.len() > IN_SET_MIN
        && let Some(set) = list
            .compiled(|items| Arc::new(in_set::InSet::build(items)))
            .downcast_ref::<in_set::InSet>()
        && let Some(m) = set.probe(a)
    {
        m
    } else {
        let mut matched = BooleanBuffer::new_unset(n);
        for item in list.iter().filter(|i| !i.is_null()) {
            let item = Value::Scalar(scalar_to_array(item, 1)?);
            let eq = arith::compare(BinaryOp::Eq, &Value::Array(a.clone()), &item)?;
            let eq = eq.array().as_boolean();
            matched = &matched | eq.values();
        }
        matched
    };
    let valid_in = match a.logical_nulls() {
        Some(nb) => nb.inner().clone(),
        None => BooleanBuffer::new_set(n),
    };
    let matched = &matched & &valid_in;
    // NULL unless matched, when x is NULL or the list holds a NULL
    let valid = if has_null { matched.clone() } else { valid_in };
    let values = if negated { !&matched } else { matched };
    let nulls = NullBuffer::new(valid);
    let nulls = (nulls.null_count() > 0).then_some(nulls);
    Ok(Value::wrap(
        Arc::new(BooleanArray::new(values, nulls)),
        v.is_scalar(),
    ))
}

/// The type a CASE / coalesce produces: the declared type, else the first
/// typed branch.
fn result_type_of(declared: DataType, candidates: impl Iterator<Item = DataType>) -> DataType {
    if declared != DataType::Null {
        return declared;
    }
    candidates
        .into_iter()
        .find(|t| *t != DataType::Null)
        .unwrap_or(DataType::Null)
}

fn cast_to(a: ArrayRef, to: &DataType) -> Result<ArrayRef> {
    if a.data_type() == to || *to == DataType::Null {
        Ok(a)
    } else {
        cast::cast_array(&a, to)
    }
}

/// `CASE WHEN ... THEN ... [ELSE ...] END`: each branch value is evaluated
/// only on the rows that take it.
fn eval_case(
    expr: &Expr,
    when_then: &[(Expr, Expr)],
    else_expr: Option<&Expr>,
    input: &Input<'_>,
) -> Result<Value> {
    let n = input.len;
    let result_type = result_type_of(
        expr.data_type(input.schema),
        when_then
            .iter()
            .map(|(_, t)| t)
            .chain(else_expr)
            .map(|e| e.data_type(input.schema)),
    );
    let mut remaining = UInt32Array::from_iter_values(0..n as u32);
    let mut pieces: Vec<(UInt32Array, ArrayRef)> = Vec::new();
    for (w, t) in when_then {
        if remaining.is_empty() {
            break;
        }
        let sub = input.subset(&[w], &remaining)?;
        let cond = predicate_mask(&eval(w, &sub)?, remaining.len())?;
        let count = cond.count_set_bits();
        if count == 0 {
            continue;
        }
        let cond = BooleanArray::new(cond, None);
        let taken = filter(&remaining, &cond)?.as_primitive().clone();
        let sub = input.subset(&[t], &taken)?;
        let values = cast_to(eval(t, &sub)?.into_array(count)?, &result_type)?;
        pieces.push((taken, values));
        remaining = filter(&remaining, &not(&cond)?)?.as_primitive().clone();
    }
    if !remaining.is_empty() {
        let values = match else_expr {
            Some(e) => {
                let sub = input.subset(&[e], &remaining)?;
                cast_to(eval(e, &sub)?.into_array(remaining.len())?, &result_type)?
            }
            None => new_null_array(&result_type, remaining.len()),
        };
        pieces.push((remaining, values));
    }
    if pieces.len() == 1 {
        // one piece covering every row, in order
        return Ok(Value::Array(
            pieces
                .pop()
                .map(|p| p.1)
                .unwrap_or_else(|| new_null_array(&result_type, n)),
        ));
    }
    let mut pos = vec![(0usize, 0usize); n];
    for (p, (idx, _)) in pieces.iter().enumerate() {
        for (j, &row) in idx.values().iter().enumerate() {
            pos[row as usize] = (p, j);
        }
    }
    let arrays: Vec<&dyn Array> = pieces.iter().map(|(_, a)| a.as_ref()).collect();
    if arrays.is_empty() {
        return Ok(Value::Array(new_null_array(&result_type, n)));
    }
    Ok(Value::Array(interleave(&arrays, &pos)?))
}

/// `coalesce(a, b, ...)`: later arguments are evaluated only on the rows
/// still NULL when they could raise an error.
fn eval_coalesce(expr: &Expr, args: &[Expr], input: &Input<'_>) -> Result<Value> {
    let result_type = result_type_of(
        expr.data_type(input.schema),
        args.iter().map(|a| a.data_type(input.schema)),
    );
    let Some(first) = args.first() else {
        return Ok(Value::Scalar(new_null_array(&result_type, 1)));
    };
    let mut result = eval(first, input)?.map(|a| cast_to(a.clone(), &result_type))?;
    for arg in &args[1..] {
        if result.array().null_count() == 0 {
            break;
        }
        if result.is_scalar() && !may_error(arg, input) {
            // a NULL constant so far: the next argument decides
            result = eval(arg, input)?.map(|a| cast_to(a.clone(), &result_type))?;
            continue;
        }
        let base = result.into_array(input.len)?;
        let nulls = match base.logical_nulls() {
            Some(n) => !n.inner(),
            None => BooleanBuffer::new_unset(base.len()),
        };
        if !may_error(arg, input) {
            let v = eval(arg, input)?.map(|a| cast_to(a.clone(), &result_type))?;
            let mask = BooleanArray::new(nulls, None);
            result = Value::Array(zip(&mask, &v, &base)?);
        } else {
            let idx = indices_of(&nulls);
            let sub = input.subset(&[arg], &idx)?;
            let v = cast_to(eval(arg, &sub)?.into_array(idx.len())?, &result_type)?;
            result = Value::Array(scatter(&base, &idx, &v)?);
        }
    }
    Ok(result)
}
