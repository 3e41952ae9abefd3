//! Filter pushdown: each conjunct of a filter moves as far down the plan
//! as SQL allows, and ORs over a join lend each side the part of every
//! branch it can check alone.

use std::collections::HashSet;

use arrow_schema::Schema;

use super::{conjunction, disjuncts, filtered, map_columns, substitute};
use crate::expr::{BinaryOp, Expr};
use crate::plan::{JoinKind, LogicalPlan};

/// `plan` with its filters pushed down.
pub(crate) fn pushdown(plan: LogicalPlan) -> LogicalPlan {
    push(plan, Vec::new())
}

/// True if `term` may move to other rows than the ones it was written
/// over (it calls no volatile function).
fn movable(term: &Expr) -> bool {
    !term.is_volatile()
}

/// `plan` with the conjuncts `terms` (over its output) applied as low
/// as they can go.
fn push(plan: LogicalPlan, terms: Vec<Expr>) -> LogicalPlan {
    match plan {
        LogicalPlan::Filter { input, predicate }
            if terms.is_empty()
                && matches!(
                    *input,
                    LogicalPlan::Scan { .. } | LogicalPlan::Values { .. }
                ) =>
        {
            // already as low as it goes: kept as written
            LogicalPlan::Filter { input, predicate }
        }
        LogicalPlan::Filter { input, predicate } => {
            // a volatile term stays where it is written; the others join
            // the terms from above
            let mut down = Vec::new();
            let mut stay = Vec::new();
            for t in predicate.conjuncts() {
                if movable(t) {
                    down.push(t.clone());
                } else {
                    stay.push(t.clone());
                }
            }
            let own = down.len();
            for t in terms {
                if !down[..own].contains(&t) {
                    down.push(t);
                }
            }
            if stay.is_empty() {
                return push(*input, down);
            }
            // (terms from above are movable: they moved here)
            filtered(push(*input, down), stay)
        }
        LogicalPlan::Projection {
            input,
            exprs,
            schema,
        } => {
            let (down, stay): (Vec<Expr>, Vec<Expr>) = terms
                .into_iter()
                .partition(|t| movable(t) && t.columns().iter().all(|&c| !exprs[c].is_volatile()));
            let down = down.iter().map(|t| substitute(t, &exprs)).collect();
            let plan = LogicalPlan::Projection {
                input: Box::new(push(*input, down)),
                exprs,
                schema,
            };
            filtered(plan, stay)
        }
        LogicalPlan::Sort { input, keys } => LogicalPlan::Sort {
            input: Box::new(push(*input, terms)),
            keys,
        },
        LogicalPlan::Distinct { input } => LogicalPlan::Distinct {
            input: Box::new(push(*input, terms)),
        },
        LogicalPlan::Limit {
            input,
            offset,
            fetch,
        } => {
            let plan = LogicalPlan::Limit {
                input: Box::new(push(*input, Vec::new())),
                offset,
                fetch,
            };
            filtered(plan, terms)
        }
        LogicalPlan::Aggregate {
            input,
            group_by,
            aggregates,
            schema,
        } => {
            // a term over the group keys alone filters groups as it
            // filters rows; with no keys the one row exists even over no
            // input, so nothing moves
            let g = group_by.len();
            let (down, stay): (Vec<Expr>, Vec<Expr>) = terms.into_iter().partition(|t| {
                g > 0
                    && movable(t)
                    && t.columns()
                        .iter()
                        .all(|&c| c < g && !group_by[c].is_volatile())
            });
            let down = down.iter().map(|t| substitute(t, &group_by)).collect();
            let plan = LogicalPlan::Aggregate {
                input: Box::new(push(*input, down)),
                group_by,
                aggregates,
                schema,
            };
            filtered(plan, stay)
        }
        LogicalPlan::Window {
            input,
            partition_by,
            order_by,
            functions,
            schema,
        } => {
            // a term over partition keys keeps or drops whole partitions
            let keys: HashSet<usize> = partition_by
                .iter()
                .filter_map(|e| match e {
                    Expr::Column(c) => Some(c.index),
                    _ => None,
                })
                .collect();
            let (down, stay): (Vec<Expr>, Vec<Expr>) = terms
                .into_iter()
                .partition(|t| movable(t) && t.columns().iter().all(|c| keys.contains(c)));
            let plan = LogicalPlan::Window {
                input: Box::new(push(*input, down)),
                partition_by,
                order_by,
                functions,
                schema,
            };
            filtered(plan, stay)
        }
        LogicalPlan::Union { inputs, schema } => {
            let inputs = inputs.into_iter().map(|i| push(i, terms.clone())).collect();
            LogicalPlan::Union { inputs, schema }
        }
        LogicalPlan::Join {
            left,
            right,
            kind,
            on,
            filter,
            schema,
        } => push_join(*left, *right, kind, on, filter, schema, terms),
        leaf @ (LogicalPlan::Scan { .. } | LogicalPlan::Values { .. }) => filtered(leaf, terms),
    }
}

/// Which side of a join a term reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Left,
    Right,
    Both,
}

fn side(t: &Expr, left_len: usize) -> Side {
    let cols = t.columns();
    if cols.iter().all(|&c| c < left_len) {
        Side::Left
    } else if cols.iter().all(|&c| c >= left_len) {
        Side::Right
    } else {
        Side::Both
    }
}

#[allow(clippy::too_many_arguments)]
fn push_join(
    left: LogicalPlan,
    right: LogicalPlan,
    kind: JoinKind,
    mut on: Vec<(Expr, Expr)>,
    filter: Option<Expr>,
    schema: arrow_schema::SchemaRef,
    terms: Vec<Expr>,
) -> LogicalPlan {
    let ln = left.schema().fields().len();
    let mut to_left = Vec::new();
    let mut to_right = Vec::new();
    let mut stay = Vec::new();
    let mut condition = Vec::new();
    // the terms from above: over the join's output
    let (pad_left, pad_right) = match kind {
        JoinKind::Inner => (false, false),
        JoinKind::Left | JoinKind::Single => (false, true),
        JoinKind::Right => (true, false),
        JoinKind::Full => (true, true),
        // the output is left rows only
        JoinKind::Semi
        | JoinKind::Anti
        | JoinKind::NullAwareAnti
        | JoinKind::Intersect
        | JoinKind::Except => (false, true),
        // the output is right rows only, their columns first: no term
        // moves (the optimiser makes these joins after this pass)
        JoinKind::RightSemi | JoinKind::RightAnti => (true, true),
    };
    for t in terms {
        if !movable(&t) {
            stay.push(t);
            continue;
        }
        match side(&t, ln) {
            Side::Left if !pad_left => to_left.push(t),
            Side::Right if !pad_right => to_right.push(map_columns(&t, &|c| c - ln)),
            Side::Both if kind == JoinKind::Inner => condition.push(t),
            _ => stay.push(t),
        }
    }
    // the join's own condition: a term on one side filters that side
    // where the kind allows it (an inner join's either side; the side
    // whose rows a non-matching condition only drops from matching)
    let own = filter.map(|f| f.conjuncts().into_iter().cloned().collect::<Vec<_>>());
    for t in own.into_iter().flatten() {
        if !movable(&t) {
            condition.push(t);
            continue;
        }
        let s = side(&t, ln);
        let right_ok = matches!(
            kind,
            JoinKind::Inner | JoinKind::Left | JoinKind::Semi | JoinKind::Anti
        );
        let left_ok = matches!(kind, JoinKind::Inner | JoinKind::Right | JoinKind::Semi);
        match s {
            Side::Left if left_ok && !t.columns().is_empty() => to_left.push(t),
            Side::Right if right_ok && !t.columns().is_empty() => {
                to_right.push(map_columns(&t, &|c| c - ln))
            }
            _ => condition.push(t),
        }
    }
    // ORs over both sides of an inner join lend each side its part
    if kind == JoinKind::Inner {
        for t in &condition {
            for (s, derived) in derive_or(t, &|x| match side(x, ln) {
                Side::Left if !x.columns().is_empty() => Some(0),
                Side::Right if !x.columns().is_empty() => Some(1),
                _ => None,
            }) {
                if s == 0 {
                    to_left.push(derived);
                } else {
                    to_right.push(map_columns(&derived, &|c| c - ln));
                }
            }
        }
    }
    // equalities across an inner join's sides become keys
    let mut rest = Vec::new();
    let both = {
        let mut fields: Vec<arrow_schema::Field> = Vec::new();
        for s in [left.schema(), right.schema()] {
            fields.extend(s.fields().iter().map(|f| f.as_ref().clone()));
        }
        Schema::new(fields)
    };
    for t in condition {
        match key_pair(&t, ln, &both) {
            Some(pair) if kind == JoinKind::Inner => {
                if !on.contains(&pair) {
                    on.push(pair);
                }
            }
            _ => rest.push(t),
        }
    }
    let plan = LogicalPlan::Join {
        left: Box::new(push(left, to_left)),
        right: Box::new(push(right, to_right)),
        kind,
        on,
        filter: conjunction(rest),
        schema,
    };
    filtered(sink_semi(plan), stay)
}

/// A SEMI or ANTI join keeps or drops each of its left rows by that row's
/// columns alone, as a filter does: it moves below a projection of plain
/// columns, and into the build side of an inner join below it when it
/// reads only that side (the smaller side: fewer rows probe it, and the
/// join above sees only the rows kept; TPC-H Q18's `o_orderkey IN (...)`
/// filters orders before they join lineitem).
fn sink_semi(plan: LogicalPlan) -> LogicalPlan {
    let LogicalPlan::Join {
        left,
        right,
        kind,
        on,
        filter,
        schema,
    } = plan
    else {
        return plan;
    };
    let filtering = matches!(
        kind,
        JoinKind::Semi | JoinKind::Anti | JoinKind::NullAwareAnti
    );
    let lw = left.schema().fields().len();
    let mut cols: Vec<usize> = on.iter().flat_map(|(l, _)| l.columns()).collect();
    if let Some(f) = &filter {
        cols.extend(f.columns().into_iter().filter(|&c| c < lw));
    }
    let volatile = filter.as_ref().is_some_and(Expr::is_volatile)
        || on.iter().any(|(l, r)| l.is_volatile() || r.is_volatile());
    if !filtering || volatile || cols.is_empty() {
        return LogicalPlan::Join {
            left,
            right,
            kind,
            on,
            filter,
            schema,
        };
    }
    match *left {
        LogicalPlan::Projection {
            input,
            exprs,
            schema: ps,
        } if exprs.iter().all(|e| matches!(e, Expr::Column(_))) => {
            let iw = input.schema().fields().len();
            let index = |c: usize| match &exprs[c] {
                Expr::Column(i) => i.index,
                _ => unreachable!("a projection of columns"),
            };
            let on = on
                .into_iter()
                .map(|(l, r)| (map_columns(&l, &index), r))
                .collect();
            let filter =
                filter.map(|f| map_columns(&f, &|c| if c < lw { index(c) } else { c - lw + iw }));
            let schema = input.schema();
            let inner = sink_semi(LogicalPlan::Join {
                left: input,
                right,
                kind,
                on,
                filter,
                schema,
            });
            LogicalPlan::Projection {
                input: Box::new(inner),
                exprs,
                schema: ps,
            }
        }
        LogicalPlan::Join {
            left: a,
            right: b,
            kind: JoinKind::Inner,
            on: join_on,
            filter: join_filter,
            schema: join_schema,
        } if cols.iter().all(|&c| c >= a.schema().fields().len()) => {
            let aw = a.schema().fields().len();
            let bw = b.schema().fields().len();
            let on = on
                .into_iter()
                .map(|(l, r)| (map_columns(&l, &|c| c - aw), r))
                .collect();
            let filter =
                filter.map(|f| map_columns(&f, &|c| if c < lw { c - aw } else { c - lw + bw }));
            let schema = b.schema();
            let b = sink_semi(LogicalPlan::Join {
                left: b,
                right,
                kind,
                on,
                filter,
                schema,
            });
            LogicalPlan::Join {
                left: a,
                right: Box::new(b),
                kind: JoinKind::Inner,
                on: join_on,
                filter: join_filter,
                schema: join_schema,
            }
        }
        left => LogicalPlan::Join {
            left: Box::new(left),
            right,
            kind,
            on,
            filter,
            schema,
        },
    }
}

/// `a = b` with `a` over the left side and `b` over the right (or the
/// reverse), of one type: a key pair, the right one over the right side.
fn key_pair(t: &Expr, ln: usize, both: &Schema) -> Option<(Expr, Expr)> {
    let Expr::Binary {
        op: BinaryOp::Eq,
        left,
        right,
    } = t
    else {
        return None;
    };
    if left.data_type(both) != right.data_type(both) {
        return None;
    }
    let (lc, rc) = (left.columns(), right.columns());
    let on_left = |c: &[usize]| !c.is_empty() && c.iter().all(|&i| i < ln);
    let on_right = |c: &[usize]| !c.is_empty() && c.iter().all(|&i| i >= ln);
    let back = |e: &Expr| map_columns(e, &|c| c - ln);
    if on_left(&lc) && on_right(&rc) {
        Some(((**left).clone(), back(right)))
    } else if on_right(&lc) && on_left(&rc) {
        Some(((**right).clone(), back(left)))
    } else {
        None
    }
}

/// From an OR of ANDs, the filters it implies on single groups of
/// columns: for each group (`group_of` a conjunct, `None` when it spans
/// several or calls a volatile function) that every branch has terms
/// on, the OR over the branches of those terms. `(a1 AND b1) OR (a2 AND
/// b2)` implies `a1 OR a2` and `b1 OR b2`. Nothing when `term` is no OR.
pub(crate) fn derive_or(
    term: &Expr,
    group_of: &dyn Fn(&Expr) -> Option<usize>,
) -> Vec<(usize, Expr)> {
    let branches = disjuncts(term);
    if branches.len() < 2 || term.is_volatile() {
        return Vec::new();
    }
    // per branch: group -> its conjuncts
    let mut per_branch: Vec<Vec<(usize, Vec<Expr>)>> = Vec::new();
    for b in &branches {
        let mut groups: Vec<(usize, Vec<Expr>)> = Vec::new();
        for c in b.conjuncts() {
            if let Some(g) = group_of(c) {
                match groups.iter_mut().find(|(h, _)| *h == g) {
                    Some((_, v)) => v.push(c.clone()),
                    None => groups.push((g, vec![c.clone()])),
                }
            }
        }
        per_branch.push(groups);
    }
    let mut out = Vec::new();
    for (g, _) in &per_branch[0] {
        let parts: Option<Vec<Expr>> = per_branch
            .iter()
            .map(|groups| {
                groups
                    .iter()
                    .find(|(h, _)| h == g)
                    .and_then(|(_, v)| conjunction(v.clone()))
            })
            .collect();
        if let Some(parts) = parts {
            let mut unique: Vec<Expr> = Vec::new();
            for p in parts {
                if !unique.contains(&p) {
                    unique.push(p);
                }
            }
            if let Some(d) = super::balanced(unique, BinaryOp::Or) {
                out.push((*g, d));
            }
        }
    }
    out
}
