//! Build sides of SEMI and ANTI joins: the smaller side holds the hash
//! table.
//!
//! A SEMI or ANTI join keeps or drops its left rows (the outer query's)
//! and builds its hash table over the right side (the subquery's rows).
//! When the outer side is much smaller and the join has a condition
//! beyond its keys (`EXISTS (SELECT * FROM lineitem l2 WHERE
//! l2.l_orderkey = l1.l_orderkey AND l2.l_suppkey <> l1.l_suppkey)`,
//! TPC-H Q21), that table holds every subquery row, each key's rows
//! chained, and each outer row walks its chain. This pass swaps the sides:
//! a RIGHT SEMI (RIGHT ANTI) join builds over the outer rows, the
//! subquery's rows probe it and mark the outer rows they match (the
//! condition holding), and once every probe ran the marked (unmarked)
//! outer rows are the result, as DuckDB does. The answer and the output
//! columns are the same: the outer rows, each once.
//!
//! A join without a condition beyond its keys keeps its sides: its build
//! is a set of key values (a bitmap over integer keys), cheap whatever
//! the subquery's size, and its outer rows stream through it; the
//! semi-join reduction ([`reduce`](super::reduce)) restricts that build.
//! A NULL-aware ANTI join (`NOT IN`) keeps them too: a NULL on its right
//! side decides every row.

use super::map_columns;
use super::reduce::rows;
use crate::catalog::Catalog;
use crate::plan::{JoinKind, LogicalPlan};

/// The subquery's side must have at least this many times the estimated
/// rows of the outer side.
const RATIO: f64 = 4.0;

/// `plan` with each SEMI and ANTI join that builds better over its outer
/// side swapped into a RIGHT SEMI or RIGHT ANTI join.
pub(crate) fn swap_sides(plan: LogicalPlan, catalog: &dyn Catalog) -> LogicalPlan {
    match plan.map_inputs(&mut |p| swap_sides(p, catalog)) {
        LogicalPlan::Join {
            left,
            right,
            kind: kind @ (JoinKind::Semi | JoinKind::Anti),
            on,
            filter: Some(filter),
            schema,
        } if !on.is_empty() && smaller(&left, &right, catalog) => {
            // the condition reads pairs, the left side's columns first
            let (ln, rn) = (left.schema().fields().len(), right.schema().fields().len());
            let filter = map_columns(&filter, &|c| if c < ln { c + rn } else { c - ln });
            LogicalPlan::Join {
                left: right,
                right: left,
                kind: if kind == JoinKind::Semi {
                    JoinKind::RightSemi
                } else {
                    JoinKind::RightAnti
                },
                on: on.into_iter().map(|(l, r)| (r, l)).collect(),
                filter: Some(filter),
                schema,
            }
        }
        other => other,
    }
}

/// Whether `left` has at most a [`RATIO`]th of `right`'s estimated rows.
fn smaller(left: &LogicalPlan, right: &LogicalPlan, catalog: &dyn Catalog) -> bool {
    match (rows(left, catalog), rows(right, catalog)) {
        (Some(l), Some(r)) => l * RATIO <= r,
        _ => false,
    }
}
