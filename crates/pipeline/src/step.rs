//! Pipeline steps: the terms of a WHERE clause, grouped by the columns they
//! read and ordered by estimated selectivity and cost.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::fmt;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BooleanArray, RecordBatch, RecordBatchOptions, UInt32Array};
use arrow::compute::{FilterBuilder, and, filter, take};
use arrow::datatypes::{DataType, Schema};
use weir_planner::{BinaryOp, Expr, ScalarValue};

use crate::error::{Error, Result};
use crate::eval::evaluate_predicate;
use crate::strings::filter_one_length;

/// A step whose estimated cost per row is at most this may evaluate over
/// all rows of a morsel (and AND its mask in) instead of gathering the
/// selected rows first.
const DENSE_MAX_COST: f64 = 4.0;
/// ... when at least this fraction of the morsel is still selected.
const DENSE_MIN_FRACTION: f64 = 0.2;

/// Which rows of a morsel are still selected.
#[derive(Clone, Debug)]
pub enum Selection {
    /// Every row.
    All,
    /// The rows whose bit is set (the mask has the morsel's length and no
    /// nulls).
    Mask(BooleanArray),
    /// These row indices, ascending.
    Indices(UInt32Array),
}

impl Selection {
    /// Selected rows, of a morsel of `num_rows` rows.
    pub fn count(&self, num_rows: usize) -> usize {
        match self {
            Selection::All => num_rows,
            Selection::Mask(m) => m.true_count(),
            Selection::Indices(i) => i.len(),
        }
    }
}

/// A morsel (a zero-copy slice of a table batch) and the rows of it that
/// survived the steps so far.
///
/// Steps only read the columns they need at the selected rows; the output
/// columns are gathered once, at the end, for the survivors (late
/// materialisation).
#[derive(Clone, Debug)]
pub struct PipelineBatch {
    /// The morsel, all columns of the scanned table.
    pub batch: RecordBatch,
    /// The surviving rows.
    pub selection: Selection,
}

impl PipelineBatch {
    /// A morsel with every row selected.
    pub fn new(batch: RecordBatch) -> Self {
        PipelineBatch {
            batch,
            selection: Selection::All,
        }
    }

    /// Number of selected rows.
    pub fn num_rows(&self) -> usize {
        self.selection.count(self.batch.num_rows())
    }

    /// True when no row is selected.
    pub fn is_empty(&self) -> bool {
        self.num_rows() == 0
    }

    /// Rows `offset..offset + len` of the morsel, with their selection.
    pub fn slice(&self, offset: usize, len: usize) -> PipelineBatch {
        let selection = match &self.selection {
            Selection::All => Selection::All,
            Selection::Mask(m) => Selection::Mask(m.slice(offset, len)),
            Selection::Indices(i) => {
                let values = i.values();
                let lo = values.partition_point(|&r| (r as usize) < offset);
                let hi = values.partition_point(|&r| (r as usize) < offset + len);
                Selection::Indices(UInt32Array::from_iter_values(
                    values[lo..hi].iter().map(|&r| r - offset as u32),
                ))
            }
        };
        PipelineBatch {
            batch: self.batch.slice(offset, len),
            selection,
        }
    }

    /// The selected rows as ascending indices (`None` for all rows).
    pub fn indices(&self) -> Option<UInt32Array> {
        match &self.selection {
            Selection::All => None,
            Selection::Mask(m) => Some(mask_to_indices(m)),
            Selection::Indices(i) => Some(i.clone()),
        }
    }

    /// The selected rows of the morsel's columns `columns`, as a batch whose
    /// column `i` is the morsel's column `columns[i]`.
    pub fn materialize(&self, columns: &[usize]) -> Result<RecordBatch> {
        let projected = self.batch.project(columns).map_err(Error::arrow)?;
        let rows = self.num_rows();
        let arrays: Vec<ArrayRef> = match &self.selection {
            Selection::All => return Ok(projected),
            Selection::Mask(m) => {
                let predicate = FilterBuilder::new(m).optimize().build();
                projected
                    .columns()
                    .iter()
                    .map(|c| match filter_one_length(c.as_ref(), &predicate) {
                        Some(kept) => Ok(kept),
                        None => predicate.filter(c.as_ref()),
                    })
                    .collect::<Result<_, _>>()
                    .map_err(Error::arrow)?
            }
            Selection::Indices(idx) => projected
                .columns()
                .iter()
                .map(|c| take(c.as_ref(), idx, None))
                .collect::<Result<_, _>>()
                .map_err(Error::arrow)?,
        };
        let options = RecordBatchOptions::new().with_row_count(Some(rows));
        RecordBatch::try_new_with_options(projected.schema(), arrays, &options)
            .map_err(Error::arrow)
    }

    /// All columns at the selected rows.
    pub fn into_record_batch(self) -> Result<RecordBatch> {
        if matches!(self.selection, Selection::All) {
            return Ok(self.batch);
        }
        let all: Vec<usize> = (0..self.batch.num_columns()).collect();
        self.materialize(&all)
    }
}

/// Ascending indices of the set bits of a null-free mask.
fn mask_to_indices(mask: &BooleanArray) -> UInt32Array {
    let values: Vec<u32> = mask.values().set_indices().map(|i| i as u32).collect();
    UInt32Array::from(values)
}

/// One step of a pipeline: the WHERE terms that read the same set of
/// columns, evaluated together on the rows still selected.
///
/// Terms are never split below the top-level `AND`: an `OR`, `NOT` or
/// `CASE` term stays whole, in its step over all the columns it reads.
#[derive(Clone, Debug)]
pub struct PipelineStep {
    terms: Vec<Expr>,
    predicate: Expr,
    local: Expr,
    columns: Vec<usize>,
    column_names: Vec<String>,
    selectivity: f64,
    cost: f64,
    fallible: bool,
}

impl PipelineStep {
    /// A step of `terms` (top-level conjuncts, over `schema`).
    pub fn new(terms: Vec<Expr>, schema: &Schema) -> Self {
        let predicate = conjunction(&terms);
        let columns = predicate.columns();
        let column_names = columns
            .iter()
            .map(|&c| schema.field(c).name().clone())
            .collect();
        let local = remap_columns(&predicate, &columns);
        let selectivity = terms_selectivity(&terms);
        let cost = terms
            .iter()
            .map(|t| row_cost(t, schema))
            .sum::<f64>()
            .max(0.05);
        let fallible = terms.iter().any(|t| may_fail(t, schema));
        PipelineStep {
            terms,
            predicate,
            local,
            columns,
            column_names,
            selectivity,
            cost,
            fallible,
        }
    }

    /// The step's predicate: its terms joined by `AND`, over the scan's
    /// schema.
    pub fn predicate(&self) -> &Expr {
        &self.predicate
    }

    /// The WHERE terms this step evaluates.
    pub fn terms(&self) -> &[Expr] {
        &self.terms
    }

    /// The columns (indices into the scan's schema) the step reads, sorted.
    pub fn columns(&self) -> &[usize] {
        &self.columns
    }

    /// Names of [`columns`](Self::columns).
    pub fn column_names(&self) -> &[String] {
        &self.column_names
    }

    /// Estimated fraction of input rows that pass.
    pub fn selectivity(&self) -> f64 {
        self.selectivity
    }

    /// Estimated cost per input row (a comparison of two integers is 1).
    pub fn cost(&self) -> f64 {
        self.cost
    }

    /// The ordering rank: rows removed per unit of cost,
    /// `(1 - selectivity) / cost`. Higher runs earlier.
    pub fn rank(&self) -> f64 {
        (1.0 - self.selectivity) / self.cost
    }

    /// True if evaluating the step can raise an error (division, overflow,
    /// casts): such a step only sees rows every earlier term accepted.
    pub fn is_fallible(&self) -> bool {
        self.fallible
    }

    /// Evaluates the step on the selected rows of `input` and narrows its
    /// selection to the rows where the predicate is TRUE.
    pub fn apply(&self, input: PipelineBatch) -> Result<PipelineBatch> {
        let rows = input.batch.num_rows();
        let selected = input.num_rows();
        if selected == 0 {
            return Ok(input);
        }
        let dense = !self.fallible
            && self.cost <= DENSE_MAX_COST
            && selected as f64 >= DENSE_MIN_FRACTION * rows as f64;
        let PipelineBatch { batch, selection } = input;
        let selection = match selection {
            Selection::All => from_mask(self.evaluate_all(&batch)?),
            Selection::Mask(mask) if dense => {
                let here = self.evaluate_all(&batch)?;
                from_mask(and(&mask, &here).map_err(Error::arrow)?)
            }
            Selection::Mask(mask) => self.apply_indices(&batch, mask_to_indices(&mask))?,
            Selection::Indices(idx) => self.apply_indices(&batch, idx)?,
        };
        Ok(PipelineBatch { batch, selection })
    }

    fn evaluate_all(&self, batch: &RecordBatch) -> Result<BooleanArray> {
        let local = local_batch(batch, &self.columns)?;
        Ok(evaluate_predicate(&self.local, &local)?)
    }

    fn apply_indices(&self, batch: &RecordBatch, idx: UInt32Array) -> Result<Selection> {
        let gathered = PipelineBatch {
            batch: batch.clone(),
            selection: Selection::Indices(idx.clone()),
        }
        .materialize(&self.columns)?;
        let mask = evaluate_predicate(&self.local, &gathered)?;
        if mask.true_count() == mask.len() {
            return Ok(Selection::Indices(idx));
        }
        let kept = filter(&idx, &mask).map_err(Error::arrow)?;
        let kept = kept
            .as_any()
            .downcast_ref::<UInt32Array>()
            .ok_or_else(|| Error::Internal("filtering indices gave no UInt32Array".into()))?
            .clone();
        Ok(Selection::Indices(kept))
    }
}

impl fmt::Display for PipelineStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "filter {} on [{}] (selectivity ~{:.2}, cost {:.1}/row{})",
            self.predicate,
            self.column_names.join(", "),
            self.selectivity,
            self.cost,
            if self.fallible { ", may fail" } else { "" }
        )
    }
}

/// The morsel's `columns` (possibly none) as a batch of their own.
fn local_batch(batch: &RecordBatch, columns: &[usize]) -> Result<RecordBatch> {
    if columns.is_empty() {
        let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        return RecordBatch::try_new_with_options(Arc::new(Schema::empty()), vec![], &options)
            .map_err(Error::arrow);
    }
    batch.project(columns).map_err(Error::arrow)
}

/// A null-free mask as the tightest selection.
fn from_mask(mask: BooleanArray) -> Selection {
    let mask = if mask.null_count() > 0 {
        // NULL is not TRUE
        let values = mask.values() & mask.nulls().expect("nulls").inner();
        BooleanArray::new(values, None)
    } else {
        mask
    };
    let count = mask.true_count();
    if count == mask.len() {
        Selection::All
    } else if count == 0 {
        Selection::Indices(UInt32Array::from(Vec::<u32>::new()))
    } else {
        Selection::Mask(mask)
    }
}

/// Splits `predicate` into its top-level `AND` terms and groups them into
/// steps, in the order they should run.
///
/// - Terms that cannot fail and read the same set of columns form one step
///   (`a < 5 AND a > 1` is one step over `{a}`; `a = b` a step over
///   `{a, b}`); an `OR`, `NOT` or `CASE` term is never split.
/// - Those steps run first, by [`PipelineStep::rank`] (ties keep the
///   query's order).
/// - Terms that may fail (division, overflow, casts) then follow, one step
///   each, in the query's order, so each sees only rows that every term
///   before it in the query accepted.
pub fn build_steps(predicate: &Expr, schema: &Schema) -> Vec<PipelineStep> {
    let mut groups: BTreeMap<Vec<usize>, (usize, Vec<Expr>)> = BTreeMap::new();
    let mut fallible = Vec::new();
    for (position, term) in predicate.conjuncts().into_iter().enumerate() {
        if matches!(term, Expr::Literal(ScalarValue::Boolean(true))) {
            continue;
        }
        if may_fail(term, schema) {
            fallible.push(PipelineStep::new(vec![term.clone()], schema));
        } else {
            groups
                .entry(term.columns())
                .or_insert_with(|| (position, Vec::new()))
                .1
                .push(term.clone());
        }
    }
    let mut infallible: Vec<(usize, PipelineStep)> = groups
        .into_values()
        .map(|(position, terms)| (position, PipelineStep::new(terms, schema)))
        .collect();
    infallible.sort_by_key(|(position, _)| *position);
    infallible.sort_by(|(_, a), (_, b)| b.rank().total_cmp(&a.rank()));
    infallible
        .into_iter()
        .map(|(_, s)| s)
        .chain(fallible)
        .collect()
}

/// The terms joined by `AND` (TRUE for none).
pub(crate) fn conjunction(terms: &[Expr]) -> Expr {
    let mut iter = terms.iter().cloned();
    match iter.next() {
        None => Expr::Literal(ScalarValue::Boolean(true)),
        Some(first) => iter.fold(first, |acc, t| Expr::binary(acc, BinaryOp::And, t)),
    }
}

/// `expr` with every column index `c` replaced by its position in
/// `columns` (which must contain it).
pub(crate) fn remap_columns(expr: &Expr, columns: &[usize]) -> Expr {
    match expr {
        Expr::Column(c) => {
            let index = columns.binary_search(&c.index).unwrap_or_else(|_| {
                columns
                    .iter()
                    .position(|&x| x == c.index)
                    .expect("column is in the remap list")
            });
            Expr::column(index, c.name.clone())
        }
        other => {
            let remapped = other
                .clone()
                .try_map_children(&mut |e| Ok::<_, Infallible>(remap_columns(&e, columns)));
            match remapped {
                Ok(e) => e,
                Err(never) => match never {},
            }
        }
    }
}

/// True if evaluating `expr` can raise an error (the planner's one rule,
/// [`Expr::can_fail`]).
pub(crate) fn may_fail(expr: &Expr, schema: &Schema) -> bool {
    expr.can_fail(schema)
}

/// Estimated fraction of rows passing all `terms` (independence assumed,
/// except a lower and an upper bound in the same step, a BETWEEN, count
/// 0.25 together).
fn terms_selectivity(terms: &[Expr]) -> f64 {
    let (mut lower, mut upper) = (0usize, 0usize);
    let mut others = 1.0;
    for term in terms {
        match range_bound(term) {
            Some(true) => lower += 1,
            Some(false) => upper += 1,
            None => others *= selectivity(term),
        }
    }
    let pairs = lower.min(upper);
    let singles = lower + upper - 2 * pairs;
    0.25f64.powi(pairs as i32) * 0.33f64.powi(singles as i32) * others
}

/// For `column-expr <op> literal` (or mirrored), whether it is a lower
/// bound (`Some(true)`) or an upper bound (`Some(false)`).
fn range_bound(term: &Expr) -> Option<bool> {
    let Expr::Binary { op, left, right } = term else {
        return None;
    };
    let lower = match op {
        BinaryOp::Gt | BinaryOp::GtEq => true,
        BinaryOp::Lt | BinaryOp::LtEq => false,
        _ => return None,
    };
    match (is_constant(left), is_constant(right)) {
        (false, true) => Some(lower),
        (true, false) => Some(!lower),
        _ => None,
    }
}

fn is_constant(e: &Expr) -> bool {
    e.columns().is_empty()
}

/// Estimated fraction of rows for which `expr` is TRUE.
pub fn selectivity(expr: &Expr) -> f64 {
    match expr {
        Expr::Literal(ScalarValue::Boolean(true)) => 1.0,
        Expr::Literal(_) => 0.0,
        Expr::Binary { op, left, right } => match op {
            BinaryOp::And => {
                terms_selectivity(&expr.conjuncts().into_iter().cloned().collect::<Vec<_>>())
            }
            BinaryOp::Or => {
                let (a, b) = (selectivity(left), selectivity(right));
                1.0 - (1.0 - a) * (1.0 - b)
            }
            BinaryOp::Eq => 0.1,
            BinaryOp::NotEq => 0.9,
            BinaryOp::Lt | BinaryOp::LtEq | BinaryOp::Gt | BinaryOp::GtEq => 0.33,
            _ => 0.5,
        },
        Expr::Not(e) => 1.0 - selectivity(e),
        Expr::IsNull(_) => 0.05,
        Expr::IsNotNull(_) => 0.95,
        Expr::InList { list, negated, .. } => {
            let s = (0.1 * list.len() as f64).min(0.9);
            if *negated { 1.0 - s } else { s }
        }
        Expr::Like {
            pattern, negated, ..
        } => {
            let s = if pattern.chars().all(|c| c == '%') {
                1.0
            } else {
                0.1
            };
            if *negated { 1.0 - s } else { s }
        }
        _ => 0.5,
    }
}

/// Estimated cost per row of evaluating `expr` (a comparison of two
/// integers is 1; strings and LIKE cost more).
pub fn row_cost(expr: &Expr, schema: &Schema) -> f64 {
    let type_factor = |e: &Expr| match e.data_type(schema) {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => 4.0,
        DataType::Decimal128(..) => 1.5,
        _ => 1.0,
    };
    match expr {
        Expr::Column(_) | Expr::Literal(_) => 0.0,
        Expr::Binary { op, left, right } => {
            let own = match op {
                BinaryOp::And | BinaryOp::Or => 0.1,
                BinaryOp::Concat => 8.0,
                op if op.is_arithmetic() => {
                    let f = type_factor(left);
                    if matches!(op, BinaryOp::Divide | BinaryOp::Modulo) {
                        4.0 * f
                    } else {
                        f
                    }
                }
                _ => type_factor(left),
            };
            own + row_cost(left, schema) + row_cost(right, schema)
        }
        Expr::Not(e) | Expr::Negative(e) => 0.1 + row_cost(e, schema),
        Expr::IsNull(e) | Expr::IsNotNull(e) => 0.1 + row_cost(e, schema),
        Expr::InList { expr, list, .. } => {
            // a long list is probed in a hash set: its cost stops growing
            type_factor(expr) * (1.0 + 0.5 * list.len().min(8) as f64) + row_cost(expr, schema)
        }
        Expr::Like { expr, pattern, .. } => {
            let body = pattern.trim_matches('%');
            let wild_inside = body.contains(['%', '_']);
            let own = if wild_inside {
                24.0
            } else if pattern.starts_with('%') && pattern.ends_with('%') && pattern.len() > 1 {
                12.0
            } else {
                5.0
            };
            own + row_cost(expr, schema)
        }
        Expr::Cast { expr, .. } => {
            let from = if matches!(expr.data_type(schema), DataType::Utf8) {
                10.0
            } else {
                1.0
            };
            from + row_cost(expr, schema)
        }
        Expr::Case {
            when_then,
            else_expr,
        } => {
            1.0 + when_then
                .iter()
                .map(|(w, t)| row_cost(w, schema) + row_cost(t, schema))
                .sum::<f64>()
                + else_expr.as_ref().map_or(0.0, |e| row_cost(e, schema))
        }
        Expr::Function { args, .. } => 6.0 + args.iter().map(|a| row_cost(a, schema)).sum::<f64>(),
    }
}

#[cfg(test)]
mod tests {
    use arrow::array::{Int64Array, RecordBatch};
    use arrow::datatypes::{Field, Schema};

    use super::*;

    fn schema() -> Schema {
        Schema::new(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("s", DataType::Utf8, true),
        ])
    }

    fn a() -> Expr {
        Expr::column(0, "a")
    }

    fn lit(v: i64) -> Expr {
        Expr::Literal(ScalarValue::Int64(v))
    }

    #[test]
    fn a_slice_keeps_the_selected_rows_of_its_range() {
        let values: Vec<i64> = (0..50).collect();
        let batch = RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new("a", DataType::Int64, false)])),
            vec![Arc::new(Int64Array::from(values))],
        )
        .unwrap();
        let keep = |i: usize| i.is_multiple_of(3) || i == 17;
        let selections = [
            Selection::All,
            Selection::Mask(BooleanArray::from_iter((0..50).map(|i| Some(keep(i))))),
            Selection::Indices(UInt32Array::from_iter_values(
                (0..50u32).filter(|&i| keep(i as usize)),
            )),
        ];
        for selection in selections {
            let all = matches!(selection, Selection::All);
            let morsel = PipelineBatch {
                batch: batch.clone(),
                selection,
            };
            for (offset, len) in [(0, 50), (0, 7), (15, 10), (49, 1), (20, 0)] {
                let rows = morsel.slice(offset, len).materialize(&[0]).unwrap();
                let got = arrow::array::AsArray::as_primitive::<arrow::datatypes::Int64Type>(
                    rows.column(0),
                );
                let want: Vec<i64> = (offset..offset + len)
                    .filter(|&i| all || keep(i))
                    .map(|i| i as i64)
                    .collect();
                assert_eq!(got.values().to_vec(), want, "rows {offset}+{len}");
            }
        }
    }

    #[test]
    fn selectivity_by_shape() {
        let eq = Expr::binary(a(), BinaryOp::Eq, lit(1));
        let lt = Expr::binary(a(), BinaryOp::Lt, lit(1));
        assert_eq!(selectivity(&eq), 0.1);
        assert_eq!(selectivity(&lt), 0.33);
        assert!((selectivity(&Expr::Not(Box::new(eq.clone()))) - 0.9).abs() < 1e-12);
        let or = Expr::binary(eq.clone(), BinaryOp::Or, lt.clone());
        assert!((selectivity(&or) - (1.0 - 0.9 * 0.67)).abs() < 1e-12);
        let between = Expr::binary(
            Expr::binary(a(), BinaryOp::GtEq, lit(1)),
            BinaryOp::And,
            Expr::binary(a(), BinaryOp::LtEq, lit(5)),
        );
        assert!((selectivity(&between) - 0.25).abs() < 1e-12);
        let in_list = Expr::InList {
            expr: Box::new(a()),
            list: vec![ScalarValue::Int64(1); 3].into(),
            negated: false,
        };
        assert!((selectivity(&in_list) - 0.3).abs() < 1e-12);
        assert_eq!(selectivity(&Expr::IsNull(Box::new(a()))), 0.05);
    }

    #[test]
    fn like_costs_more_than_integer_compare() {
        let s = schema();
        let like = Expr::Like {
            expr: Box::new(Expr::column(1, "s")),
            pattern: "%x%".into(),
            negated: false,
            case_insensitive: false,
            escape: None,
        };
        let lt = Expr::binary(a(), BinaryOp::Lt, lit(1));
        assert!(row_cost(&like, &s) > 4.0 * row_cost(&lt, &s));
    }

    #[test]
    fn division_is_fallible_comparison_is_not() {
        let s = schema();
        let div = Expr::binary(
            Expr::binary(lit(1), BinaryOp::Divide, a()),
            BinaryOp::Gt,
            lit(0),
        );
        assert!(may_fail(&div, &s));
        assert!(!may_fail(&Expr::binary(a(), BinaryOp::Gt, lit(0)), &s));
    }

    #[test]
    fn remap_to_local_columns() {
        let e = Expr::binary(Expr::column(3, "x"), BinaryOp::Eq, Expr::column(7, "y"));
        let local = remap_columns(&e, &[3, 7]);
        assert_eq!(local.columns(), vec![0, 1]);
    }

    #[test]
    fn steps_narrow_the_selection() {
        let s = Arc::new(schema());
        let batch = RecordBatch::try_new(
            Arc::clone(&s),
            vec![
                Arc::new(Int64Array::from(vec![
                    Some(1),
                    None,
                    Some(3),
                    Some(4),
                    Some(5),
                ])),
                Arc::new(arrow::array::StringArray::from(vec![
                    "a", "b", "c", "d", "e",
                ])),
            ],
        )
        .unwrap();
        let predicate = Expr::binary(
            Expr::binary(a(), BinaryOp::Gt, lit(1)),
            BinaryOp::And,
            Expr::binary(
                Expr::column(1, "s"),
                BinaryOp::NotEq,
                Expr::Literal(ScalarValue::Utf8("d".into())),
            ),
        );
        let steps = build_steps(&predicate, &s);
        assert_eq!(steps.len(), 2);
        let mut pb = PipelineBatch::new(batch);
        for step in &steps {
            pb = step.apply(pb).unwrap();
        }
        assert_eq!(pb.num_rows(), 2);
        assert_eq!(pb.indices().unwrap().values().to_vec(), vec![2, 4]);
        let out = pb.materialize(&[1]).unwrap();
        assert_eq!(out.num_rows(), 2);
    }
}
