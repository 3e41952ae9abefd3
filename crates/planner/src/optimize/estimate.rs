//! Cardinality estimates for the join order: the fraction of rows a
//! filter keeps and the rows an equi-join gives, from the catalog's row
//! counts and estimated distinct values per column.

use crate::catalog::Catalog;
use crate::expr::{BinaryOp, Expr};
use crate::plan::{LogicalPlan, TableSource};

/// Selectivity of a term with no better guess.
pub(crate) const DEFAULT_SELECTIVITY: f64 = 0.3;
/// Selectivity of one side of a range (`x < c`).
const RANGE_SELECTIVITY: f64 = 1.0 / 3.0;
/// Selectivity of `x = c` when `x`'s distinct values are unknown.
const EQ_SELECTIVITY: f64 = 0.1;
/// Selectivity of a LIKE pattern.
const LIKE_SELECTIVITY: f64 = 0.1;
/// Selectivity of `x IS NULL`.
const NULL_SELECTIVITY: f64 = 0.05;

/// The plain column a term compares, looking through casts.
fn column_of(e: &Expr) -> Option<usize> {
    match e {
        Expr::Column(c) => Some(c.index),
        Expr::Cast { expr, .. } => column_of(expr),
        _ => None,
    }
}

fn is_constant(e: &Expr) -> bool {
    e.columns().is_empty() && !e.is_volatile()
}

/// The fraction of rows `term` keeps (0..=1), `distinct(c)` giving the
/// estimated number of distinct values of input column `c` where known.
pub(crate) fn selectivity(term: &Expr, distinct: &dyn Fn(usize) -> Option<f64>) -> f64 {
    let eq = |e: &Expr| {
        column_of(e)
            .and_then(distinct)
            .map_or(EQ_SELECTIVITY, |n| 1.0 / n.max(1.0))
    };
    let s = match term {
        Expr::Binary { op, left, right } => match op {
            BinaryOp::And => selectivity(left, distinct) * selectivity(right, distinct),
            BinaryOp::Or => {
                let (a, b) = (selectivity(left, distinct), selectivity(right, distinct));
                a + b - a * b
            }
            BinaryOp::Eq if is_constant(right) => eq(left),
            BinaryOp::Eq if is_constant(left) => eq(right),
            BinaryOp::NotEq if is_constant(right) => 1.0 - eq(left),
            BinaryOp::NotEq if is_constant(left) => 1.0 - eq(right),
            BinaryOp::Lt | BinaryOp::LtEq | BinaryOp::Gt | BinaryOp::GtEq
                if is_constant(left) || is_constant(right) =>
            {
                RANGE_SELECTIVITY
            }
            _ => DEFAULT_SELECTIVITY,
        },
        Expr::InList {
            expr,
            list,
            negated,
        } => {
            let s = (list.len() as f64 * eq(expr)).min(1.0);
            if *negated { 1.0 - s } else { s }
        }
        Expr::Like { negated, .. } => {
            if *negated {
                1.0 - LIKE_SELECTIVITY
            } else {
                LIKE_SELECTIVITY
            }
        }
        Expr::IsNull(_) => NULL_SELECTIVITY,
        Expr::IsNotNull(_) => 1.0 - NULL_SELECTIVITY,
        Expr::Not(e) => 1.0 - selectivity(e, distinct),
        _ => DEFAULT_SELECTIVITY,
    };
    s.clamp(0.0, 1.0)
}

/// Rows of an equi-join of `left_rows` and `right_rows` rows on `keys`:
/// per key, the distinct values of its left and right side (`None`:
/// unknown). The textbook estimate: the product of the sides over the
/// larger number of distinct key values, a side's key having at most as
/// many distinct values as it has rows. `None` when no key's distinct
/// values are known on either side.
pub(crate) fn join_rows(
    left_rows: f64,
    right_rows: f64,
    keys: &[(Option<f64>, Option<f64>)],
) -> Option<f64> {
    if keys.iter().all(|(l, r)| l.is_none() && r.is_none()) {
        return None;
    }
    let side = |n: Option<f64>, rows: f64| n.unwrap_or(rows).min(rows).max(1.0);
    // several keys: the distinct combinations, at most the side's rows
    let l: f64 = keys.iter().map(|(l, _)| side(*l, left_rows)).product();
    let r: f64 = keys.iter().map(|(_, r)| side(*r, right_rows)).product();
    let denominator = l.min(left_rows.max(1.0)).max(r.min(right_rows.max(1.0)));
    Some((left_rows * right_rows / denominator).max(1.0))
}

/// Estimated distinct values of output column `c` of `plan`, where it is
/// a table's column (the catalog's estimate). The binder's join order and
/// the semi-join reduction both ask it.
pub(crate) fn column_distinct(plan: &LogicalPlan, c: usize, catalog: &dyn Catalog) -> Option<f64> {
    match plan {
        LogicalPlan::Scan {
            source: TableSource::Table(name),
            schema,
        } => catalog.column_distinct(name, schema.fields().get(c)?.name()),
        LogicalPlan::Filter { input, .. }
        | LogicalPlan::Sort { input, .. }
        | LogicalPlan::Limit { input, .. }
        | LogicalPlan::Distinct { input } => column_distinct(input, c, catalog),
        LogicalPlan::Projection { input, exprs, .. } => match exprs.get(c)? {
            Expr::Column(i) => column_distinct(input, i.index, catalog),
            _ => None,
        },
        LogicalPlan::Aggregate {
            input, group_by, ..
        } => match group_by.get(c)? {
            Expr::Column(i) => column_distinct(input, i.index, catalog),
            _ => None,
        },
        LogicalPlan::Join { left, right, .. } => {
            let ln = left.schema().fields().len();
            if c < ln {
                column_distinct(left, c, catalog)
            } else {
                column_distinct(right, c - ln, catalog)
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scalar::ScalarValue;

    fn col(i: usize) -> Expr {
        Expr::column(i, format!("c{i}"))
    }

    fn lit(s: &str) -> Expr {
        Expr::Literal(ScalarValue::Utf8(s.into()))
    }

    #[test]
    fn equality_uses_distinct_values() {
        let distinct = |c: usize| (c == 0).then_some(25.0);
        let t = Expr::binary(col(0), BinaryOp::Eq, lit("FRANCE"));
        assert!((selectivity(&t, &distinct) - 0.04).abs() < 1e-9);
        // unknown column: the default
        let u = Expr::binary(col(1), BinaryOp::Eq, lit("x"));
        assert!((selectivity(&u, &distinct) - EQ_SELECTIVITY).abs() < 1e-9);
        // an OR of two equalities keeps about twice as many
        let or = Expr::binary(t.clone(), BinaryOp::Or, t.clone());
        let s = selectivity(&or, &distinct);
        assert!(s > 0.04 && s < 0.08, "{s}");
        // AND multiplies, NOT complements
        let and = Expr::binary(t.clone(), BinaryOp::And, u);
        assert!((selectivity(&and, &distinct) - 0.004).abs() < 1e-9);
        assert!((selectivity(&Expr::Not(Box::new(t)), &distinct) - 0.96).abs() < 1e-9);
    }

    #[test]
    fn in_lists_and_ranges() {
        let distinct = |_: usize| Some(25.0);
        let t = Expr::InList {
            expr: Box::new(col(0)),
            list: vec![ScalarValue::Utf8("a".into()), ScalarValue::Utf8("b".into())].into(),
            negated: false,
        };
        assert!((selectivity(&t, &distinct) - 0.08).abs() < 1e-9);
        let r = Expr::binary(col(0), BinaryOp::Lt, lit("m"));
        assert!((selectivity(&r, &distinct) - RANGE_SELECTIVITY).abs() < 1e-9);
    }

    #[test]
    fn key_join_of_a_foreign_key_gives_the_referencing_rows() {
        // 6M rows referencing 1.5M keys, all present once on the other side
        let rows = join_rows(6e6, 1.5e6, &[(Some(1.5e6), Some(1.5e6))]).unwrap();
        assert!((rows - 6e6).abs() < 1.0, "{rows}");
        // the other side filtered to a tenth: a tenth of the rows
        let rows = join_rows(6e6, 1.5e5, &[(Some(1.5e6), Some(1.5e6))]).unwrap();
        assert!((rows - 6e5).abs() < 1.0, "{rows}");
        assert_eq!(join_rows(10.0, 10.0, &[(None, None)]), None);
    }
}
