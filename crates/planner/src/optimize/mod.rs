//! The optimiser: rewrites run on every bound query plan.
//!
//! The binder already orders joins and places the conditions of a FROM
//! list; what it leaves is each query block's shape. These passes work on
//! the whole tree, across blocks (derived tables, CTEs, set operations,
//! subqueries), and never change a query's answer, its output columns or
//! their names and order:
//!
//! 1. [`pushdown`]: filters move below projections, sorts, DISTINCT,
//!    grouping (on group keys), windows (on partition keys), into every
//!    input of a UNION ALL and into the join side they read (both sides of
//!    an inner join; only the side an outer join does not pad); a term
//!    over both sides of an inner join joins its condition. From an OR
//!    whose every branch names one side, that side's part of each branch
//!    is derived as a filter of its own ([`pushdown::derive_or`]), the OR
//!    itself kept. A filter never moves below a LIMIT, and a term calling a
//!    volatile function (`random()`) never moves.
//! 2. [`prune`]: every node produces only the columns some ancestor reads;
//!    each join side is narrowed to its keys and the columns used above,
//!    a projection of columns no one reads disappears.
//!
//! Between the two, in this order: [`sides`] swaps a SEMI or ANTI join
//! with a condition beyond its keys whose outer side is much smaller than
//! the subquery's rows into a RIGHT SEMI or RIGHT ANTI join, so that its
//! hash table holds the outer rows; then [`reduce`] restricts a join side
//! that is much larger than the key values it can match (a decorrelated
//! subquery's rows, grouped or built into a hash table) to those values by
//! a SEMI join with the other side's keys. Both use the catalog's row
//! counts.
//!
//! [`estimate`] holds the cardinality estimates of the binder's join
//! order, [`order`] its dynamic programming over join trees.

pub(crate) mod estimate;
pub(crate) mod order;
pub(crate) mod prune;
pub(crate) mod pushdown;
pub(crate) mod reduce;
pub(crate) mod sides;

use crate::catalog::Catalog;
use crate::expr::{BinaryOp, Expr};
use crate::plan::{LogicalPlan, Statement};

/// Optimises the query plans of `statement` (queries, EXPLAIN, CREATE
/// TABLE AS, INSERT, COPY). UPDATE and DELETE plans keep their shape:
/// the engine reads them in the table's row order.
pub(crate) fn statement(statement: Statement, catalog: &dyn Catalog) -> Statement {
    let optimize = |plan| optimize(plan, catalog);
    match statement {
        Statement::Query(plan) => Statement::Query(optimize(plan)),
        Statement::Explain { analyze, plan } => Statement::Explain {
            analyze,
            plan: optimize(plan),
        },
        Statement::CreateTableAs {
            name,
            plan,
            if_not_exists,
            or_replace,
        } => Statement::CreateTableAs {
            name,
            plan: optimize(plan),
            if_not_exists,
            or_replace,
        },
        Statement::Insert { table, plan } => Statement::Insert {
            table,
            plan: optimize(plan),
        },
        Statement::Copy {
            plan,
            path,
            format,
            options,
        } => Statement::Copy {
            plan: optimize(plan),
            path,
            format,
            options,
        },
        other => other,
    }
}

/// Runs every pass over `plan`; the result has the same output schema.
pub(crate) fn optimize(plan: LogicalPlan, catalog: &dyn Catalog) -> LogicalPlan {
    let schema = plan.schema();
    let plan = pushdown::pushdown(plan);
    let plan = sides::swap_sides(plan, catalog);
    let plan = reduce::reduce(plan, catalog);
    let plan = prune::prune_root(plan);
    debug_assert_eq!(
        plan.schema().fields().len(),
        schema.fields().len(),
        "the optimiser kept the output columns"
    );
    plan
}

/// `e` with every column index `c` replaced by `f(c)`.
pub(crate) fn map_columns(e: &Expr, f: &impl Fn(usize) -> usize) -> Expr {
    match e {
        Expr::Column(c) => Expr::column(f(c.index), c.name.clone()),
        other => match other
            .clone()
            .try_map_children(&mut |x| Ok::<_, std::convert::Infallible>(map_columns(&x, f)))
        {
            Ok(x) => x,
            Err(never) => match never {},
        },
    }
}

/// `e` with every column `c` replaced by `with[c]` (an expression over
/// the input of the node `e` sat above).
pub(crate) fn substitute(e: &Expr, with: &[Expr]) -> Expr {
    match e {
        Expr::Column(c) => with[c.index].clone(),
        other => match other
            .clone()
            .try_map_children(&mut |x| Ok::<_, std::convert::Infallible>(substitute(&x, with)))
        {
            Ok(x) => x,
            Err(never) => match never {},
        },
    }
}

/// The AND of `terms`, `None` when there is none; left-deep when short,
/// balanced when long (as the binder builds them), so a long list is a
/// shallow tree.
pub(crate) fn conjunction(terms: Vec<Expr>) -> Option<Expr> {
    balanced(terms, BinaryOp::And)
}

/// Terms joined by an operator are left-deep up to this many.
const BALANCE_PAST: usize = 64;

/// `terms` joined by `op` in order: left-deep up to [`BALANCE_PAST`]
/// terms, a balanced tree past it.
pub(crate) fn balanced(terms: Vec<Expr>, op: BinaryOp) -> Option<Expr> {
    if terms.len() <= BALANCE_PAST {
        return terms.into_iter().reduce(|a, b| Expr::binary(a, op, b));
    }
    fn halves(mut terms: Vec<Expr>, op: BinaryOp) -> Option<Expr> {
        if terms.len() <= 1 {
            return terms.pop();
        }
        let right = terms.split_off(terms.len() / 2);
        Some(Expr::binary(halves(terms, op)?, op, halves(right, op)?))
    }
    halves(terms, op)
}

/// The top-level OR branches of `e`.
pub(crate) fn disjuncts(e: &Expr) -> Vec<&Expr> {
    let mut out = Vec::new();
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        match e {
            Expr::Binary {
                op: BinaryOp::Or,
                left,
                right,
            } => {
                stack.push(right);
                stack.push(left);
            }
            other => out.push(other),
        }
    }
    out
}

/// `plan` under a Filter of `terms` (merged into a Filter already on top,
/// a term it already has left out).
pub(crate) fn filtered(plan: LogicalPlan, terms: Vec<Expr>) -> LogicalPlan {
    if terms.is_empty() {
        return plan;
    }
    let (input, mut all) = match plan {
        LogicalPlan::Filter { input, predicate } => {
            let below: Vec<Expr> = predicate.conjuncts().into_iter().cloned().collect();
            (*input, below)
        }
        plan => (plan, Vec::new()),
    };
    let had = all.len();
    for t in terms {
        if !all[..had].contains(&t) {
            all.push(t);
        }
    }
    match conjunction(all) {
        Some(predicate) => LogicalPlan::Filter {
            input: Box::new(input),
            predicate,
        },
        None => input,
    }
}
