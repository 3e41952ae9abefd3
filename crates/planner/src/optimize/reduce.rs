//! Semi-join reduction: a join side that is much larger than the key
//! values it can match is first restricted to those values.
//!
//! The binder decorrelates a subquery into a join of the outer query
//! with the subquery over *all* of its rows: `(SELECT avg(l_quantity)
//! FROM lineitem WHERE l_partkey = p_partkey)` becomes lineitem grouped
//! by `l_partkey` (every part) LEFT joined on the outer `p_partkey`;
//! `EXISTS (SELECT * FROM lineitem WHERE l_orderkey = o_orderkey)` a SEMI
//! join building a hash table over all of lineitem. When the outer side
//! holds far fewer key values (TPC-H Q17: the ~200 parts of one brand and
//! container), this pass adds, below the grouping (or at the build side),
//! a SEMI join of the subquery's rows with the key values of the outer
//! side, so only rows that can match are grouped or built (DuckDB's
//! "delim join" does the same).
//!
//! Which side ("the target") may lose rows: the right side of an INNER,
//! LEFT, SEMI or ANTI join, the left side of an INNER join. A target row
//! whose keys are not among the other side's never matches (NULL never
//! equals), so dropping it changes nothing: a LEFT join still pads an
//! outer row without a group (`count` 0), an ANTI join still keeps it. A
//! NULL-aware ANTI join (`NOT IN`) is left alone: a NULL on its right
//! side decides every row. The target is followed down while its keys
//! stay plain expressions of rows that are kept or dropped whole: through
//! projections, filters, sorts, DISTINCT and grouping on the keys, and
//! into the join side that holds them. The reduction is made only where
//! that path passes a grouping or DISTINCT or the target is a build
//! side, and the estimated rows of the key values' source are at most a
//! [`RATIO`]th of the target's.
//!
//! The key values come from the other side or, where smaller, from a part
//! of it that holds a superset of them: the side of an inner or SEMI join
//! that a key column comes from (or the other side of the join key it is
//! equal to), the preserved side of an outer join, the input of a filter.
//! A source keeping only some of the keys reduces on those.

use arrow_schema::{Field, Schema, SchemaRef};

use super::estimate;
use super::substitute;
use crate::catalog::Catalog;
use crate::expr::Expr;
use crate::plan::{JoinKind, LogicalPlan, TableSource};

/// The target must have at least this many times the estimated rows of
/// the key values' source.
const RATIO: f64 = 4.0;

/// The names of the key values' columns.
const REDUCE: &str = "__reduce";

/// A source of key values with more plan nodes than this is not computed
/// a second time (deeply nested subqueries would copy it at every level).
const MAX_SOURCE_NODES: usize = 64;

fn nodes(plan: &LogicalPlan) -> usize {
    1 + plan.children().into_iter().map(nodes).sum::<usize>()
}

/// `plan` with every join side that can be reduced reduced.
///
/// Top down: a join sees the reductions made above it, so key values
/// that restrict its outer side restrict what it groups too (Q20: the
/// suppliers of one nation restrict partsupp, and so lineitem's sums per
/// part and supplier).
pub(crate) fn reduce(plan: LogicalPlan, catalog: &dyn Catalog) -> LogicalPlan {
    let plan = match plan {
        LogicalPlan::Join {
            left,
            right,
            kind,
            on,
            filter,
            schema,
        } if !on.is_empty() && !is_reduction(kind, &right) => {
            let (mut left, mut right) = (*left, *right);
            let from_left: Vec<Expr> = on.iter().map(|(l, _)| l.clone()).collect();
            let from_right: Vec<Expr> = on.iter().map(|(_, r)| r.clone()).collect();
            if matches!(
                kind,
                JoinKind::Inner | JoinKind::Left | JoinKind::Semi | JoinKind::Anti
            ) {
                right = reduce_side(right, &from_right, &left, &from_left, true, catalog);
            }
            if kind == JoinKind::Inner {
                left = reduce_side(left, &from_left, &right, &from_right, false, catalog);
            }
            LogicalPlan::Join {
                left: Box::new(left),
                right: Box::new(right),
                kind,
                on,
                filter,
                schema,
            }
        }
        other => other,
    };
    plan.map_inputs(&mut |p| reduce(p, catalog))
}

/// True for a SEMI join this pass made (its right side is a projection of
/// key values named `__reduce0`, ...).
fn is_reduction(kind: JoinKind, right: &LogicalPlan) -> bool {
    kind == JoinKind::Semi
        && right
            .schema()
            .fields()
            .first()
            .is_some_and(|f| f.name().starts_with(REDUCE))
}

/// `target` (whose `keys` are joined with `other`'s `other_keys`)
/// restricted to the key values `other` can hold, where worth it.
fn reduce_side(
    target: LogicalPlan,
    keys: &[Expr],
    other: &LogicalPlan,
    other_keys: &[Expr],
    build: bool,
    catalog: &dyn Catalog,
) -> LogicalPlan {
    if keys.iter().chain(other_keys).any(Expr::is_volatile) {
        return target;
    }
    let Some(target_rows) = rows(&target, catalog) else {
        return target;
    };
    // the smallest source of a superset of the other side's key values
    let mut sources = Vec::new();
    sources_of(
        other,
        other_keys.iter().cloned().map(Some).collect(),
        &mut sources,
    );
    let best = sources
        .into_iter()
        .filter_map(|(p, k)| Some((rows(&p, catalog)?, p, k)))
        // the fewest rows; of equal estimates the smallest plan
        .min_by(|a, b| a.0.total_cmp(&b.0).then(nodes(&a.1).cmp(&nodes(&b.1))));
    let Some((source_rows, source, source_keys)) = best else {
        return target;
    };
    if nodes(&source) > MAX_SOURCE_NODES {
        return target;
    }
    if source_rows * RATIO > target_rows {
        return target;
    }
    let used: Vec<usize> = (0..keys.len())
        .filter(|&i| source_keys[i].is_some())
        .collect();
    let target_keys: Vec<Expr> = used.iter().map(|&i| keys[i].clone()).collect();
    let values: Vec<Expr> = used
        .iter()
        .filter_map(|&i| source_keys[i].clone())
        .collect();
    let input_schema = source.schema();
    let fields: Vec<Field> = values
        .iter()
        .enumerate()
        .map(|(i, e)| Field::new(format!("{REDUCE}{i}"), e.data_type(&input_schema), true))
        .collect();
    let reducer = LogicalPlan::Projection {
        input: Box::new(source),
        exprs: values,
        schema: SchemaRef::new(Schema::new(fields)),
    };
    restrict(target, target_keys, &reducer, build).0
}

/// `plan` (whose `keys` are compared) with its rows restricted to those
/// whose keys are among `reducer`'s rows, the SEMI join placed as deep as
/// the keys can be followed, and whether it was placed: not when no
/// grouping or DISTINCT is on the path and `worth` is false.
fn restrict(
    plan: LogicalPlan,
    keys: Vec<Expr>,
    reducer: &LogicalPlan,
    worth: bool,
) -> (LogicalPlan, bool) {
    let columns = |keys: &[Expr]| keys.iter().flat_map(Expr::columns).collect::<Vec<_>>();
    // `node` rebuilt over its input restricted (with `below`, the keys
    // over it), else restricted itself
    let over = |input: LogicalPlan,
                below: Vec<Expr>,
                worth_below: bool,
                drops: bool,
                keys: Vec<Expr>,
                node: &dyn Fn(LogicalPlan) -> LogicalPlan| {
        // below a filter or a join (`drops`) the keys meet rows it drops:
        // none may raise an error there (a projection or grouping computes
        // them over all its rows anyway)
        let schema = input.schema();
        if drops && below.iter().any(|k| k.can_fail(&schema)) {
            return semi(node(input), keys, reducer, worth);
        }
        match restrict(input, below, reducer, worth_below) {
            (input, true) => (node(input), true),
            (input, false) => semi(node(input), keys, reducer, worth),
        }
    };
    match plan {
        LogicalPlan::Projection {
            input,
            exprs,
            schema,
        } if !leaf(&input) => {
            let below: Vec<Expr> = keys.iter().map(|k| substitute(k, &exprs)).collect();
            over(*input, below, worth, false, keys, &|input| {
                LogicalPlan::Projection {
                    input: Box::new(input),
                    exprs: exprs.clone(),
                    schema: schema.clone(),
                }
            })
        }
        LogicalPlan::Filter { input, predicate } if !leaf(&input) => {
            over(*input, keys.clone(), worth, true, keys, &|input| {
                LogicalPlan::Filter {
                    input: Box::new(input),
                    predicate: predicate.clone(),
                }
            })
        }
        LogicalPlan::Distinct { input } => {
            over(*input, keys.clone(), true, false, keys, &|input| {
                LogicalPlan::Distinct {
                    input: Box::new(input),
                }
            })
        }
        LogicalPlan::Aggregate {
            input,
            group_by,
            aggregates,
            schema,
        } if !group_by.is_empty() && columns(&keys).iter().all(|&c| c < group_by.len()) => {
            let below: Vec<Expr> = keys.iter().map(|k| substitute(k, &group_by)).collect();
            over(*input, below, true, false, keys, &|input| {
                LogicalPlan::Aggregate {
                    input: Box::new(input),
                    group_by: group_by.clone(),
                    aggregates: aggregates.clone(),
                    schema: schema.clone(),
                }
            })
        }
        LogicalPlan::Join {
            left,
            right,
            kind,
            on,
            filter,
            schema,
        } if kind != JoinKind::Right && kind != JoinKind::Full && kind.keeps_left() => {
            let ln = left.schema().fields().len();
            let cols = columns(&keys);
            let rebuild = |left: LogicalPlan, right: LogicalPlan| LogicalPlan::Join {
                left: Box::new(left),
                right: Box::new(right),
                kind,
                on: on.clone(),
                filter: filter.clone(),
                schema: schema.clone(),
            };
            if cols.iter().all(|&c| c < ln) {
                let right = *right;
                over(*left, keys.clone(), worth, true, keys, &|l| {
                    rebuild(l, right.clone())
                })
            } else if kind == JoinKind::Inner && cols.iter().all(|&c| c >= ln) {
                let below: Vec<Expr> = keys
                    .iter()
                    .map(|k| super::map_columns(k, &|c| c - ln))
                    .collect();
                let left = *left;
                over(*right, below, worth, true, keys, &|r| {
                    rebuild(left.clone(), r)
                })
            } else {
                semi(rebuild(*left, *right), keys, reducer, worth)
            }
        }
        other => semi(other, keys, reducer, worth),
    }
}

/// `plan SEMI JOIN reducer ON keys = reducer's columns` when `worth`,
/// and whether it was made.
fn semi(
    plan: LogicalPlan,
    keys: Vec<Expr>,
    reducer: &LogicalPlan,
    worth: bool,
) -> (LogicalPlan, bool) {
    if !worth {
        return (plan, false);
    }
    let rs = reducer.schema();
    let on = keys
        .into_iter()
        .enumerate()
        .map(|(i, k)| (k, Expr::column(i, rs.field(i).name().clone())))
        .collect();
    let join = LogicalPlan::Join {
        schema: plan.schema(),
        left: Box::new(plan),
        right: Box::new(reducer.clone()),
        kind: JoinKind::Semi,
        on,
        filter: None,
    };
    (join, true)
}

/// A scan under projections and filters: the reduction goes above it, so
/// the scan keeps reading only the columns its projection names.
fn leaf(plan: &LogicalPlan) -> bool {
    match plan {
        LogicalPlan::Scan { .. } => true,
        LogicalPlan::Projection { input, .. } | LogicalPlan::Filter { input, .. } => leaf(input),
        _ => false,
    }
}

/// Every part of `plan` whose rows hold a superset of the values of
/// `keys` (expressions over `plan`) in `plan`'s rows, with the keys over
/// it (`None`: a key it does not hold); `plan` itself first.
fn sources_of(
    plan: &LogicalPlan,
    keys: Vec<Option<Expr>>,
    out: &mut Vec<(LogicalPlan, Vec<Option<Expr>>)>,
) {
    // below a filter, a limit or a join the keys meet rows it drops: one
    // that could raise an error on them is not computed there (a
    // projection or grouping computes them over all its rows anyway)
    let part_of = |part: &LogicalPlan, keys: Vec<Option<Expr>>, out: &mut Vec<_>| {
        let schema = part.schema();
        let keys = keys
            .into_iter()
            .map(|k| k.filter(|k| !k.can_fail(&schema)))
            .collect();
        sources_of(part, keys, out);
    };
    if keys.iter().all(Option::is_none) {
        return;
    }
    out.push((plan.clone(), keys.clone()));
    match plan {
        LogicalPlan::Projection { input, exprs, .. } => {
            let below = keys
                .iter()
                .map(|k| k.as_ref().map(|k| substitute(k, exprs)))
                .collect();
            sources_of(input, below, out);
        }
        LogicalPlan::Filter { input, .. }
        | LogicalPlan::Sort { input, .. }
        | LogicalPlan::Distinct { input }
        | LogicalPlan::Limit { input, .. } => part_of(input, keys, out),
        LogicalPlan::Aggregate {
            input, group_by, ..
        } => {
            let below = keys
                .iter()
                .map(|k| {
                    k.as_ref()
                        .filter(|k| k.columns().iter().all(|&c| c < group_by.len()))
                        .map(|k| substitute(k, group_by))
                })
                .collect();
            sources_of(input, below, out);
        }
        LogicalPlan::Join {
            left,
            right,
            kind,
            on,
            ..
        } => {
            let ln = left.schema().fields().len();
            let inner = matches!(kind, JoinKind::Inner | JoinKind::Semi);
            let preserved_left = matches!(
                kind,
                JoinKind::Inner
                    | JoinKind::Semi
                    | JoinKind::Left
                    | JoinKind::Anti
                    | JoinKind::NullAwareAnti
                    | JoinKind::Single
            );
            // the keys over the left side, and over the right one
            let mut on_left = Vec::with_capacity(keys.len());
            let mut on_right = Vec::with_capacity(keys.len());
            for k in &keys {
                let Some(k) = k else {
                    on_left.push(None);
                    on_right.push(None);
                    continue;
                };
                let cols = k.columns();
                let left_only = cols.iter().all(|&c| c < ln);
                let right_only = cols.iter().all(|&c| c >= ln);
                on_left.push((preserved_left && left_only).then(|| k.clone()));
                let mut r = (*kind == JoinKind::Inner && right_only)
                    .then(|| super::map_columns(k, &|c| c - ln));
                // a left key equal to a right one (an inner or semi join's
                // rows have both)
                if r.is_none() && inner && left_only {
                    r = on.iter().find(|(l, _)| l == k).map(|(_, r)| r.clone());
                }
                let mut l = on_left.pop().flatten();
                if l.is_none() && *kind == JoinKind::Inner && right_only {
                    let shifted = super::map_columns(k, &|c| c - ln);
                    l = on
                        .iter()
                        .find(|(_, r)| *r == shifted)
                        .map(|(l, _)| l.clone());
                }
                on_left.push(l);
                on_right.push(r);
            }
            part_of(left, on_left, out);
            part_of(right, on_right, out);
        }
        _ => {}
    }
}

/// Estimated rows of `plan`, where its tables' sizes are known.
pub(crate) fn rows(plan: &LogicalPlan, catalog: &dyn Catalog) -> Option<f64> {
    Some(match plan {
        LogicalPlan::Scan { source, .. } => match source {
            TableSource::Table(name) => catalog.table_rows(name)? as f64,
            TableSource::Series { start, stop, step } => {
                ((stop - start) / step).unsigned_abs() as f64
            }
            TableSource::File { .. }
            | TableSource::Recursive(_)
            | TableSource::WorkTable { .. } => {
                return None;
            }
        },
        LogicalPlan::Values { rows, .. } => rows.len() as f64,
        LogicalPlan::Filter { input, predicate } => {
            rows(input, catalog)?
                * estimate::selectivity(predicate, &|c| {
                    estimate::column_distinct(input, c, catalog)
                })
        }
        LogicalPlan::Aggregate {
            input, group_by, ..
        } => {
            if group_by.is_empty() {
                1.0
            } else {
                rows(input, catalog)? * 0.5
            }
        }
        LogicalPlan::Distinct { input } => rows(input, catalog)? * 0.5,
        LogicalPlan::Limit { input, fetch, .. } => {
            let n = rows(input, catalog)?;
            fetch.map_or(n, |f| n.min(f as f64))
        }
        LogicalPlan::Union { inputs, .. } => inputs
            .iter()
            .map(|p| rows(p, catalog))
            .sum::<Option<f64>>()?,
        LogicalPlan::Join {
            left,
            right,
            kind,
            on,
            ..
        } => {
            let l = rows(left, catalog)?;
            let r = rows(right, catalog)?;
            match kind {
                JoinKind::Inner | JoinKind::Left | JoinKind::Right | JoinKind::Full => {
                    let keys: Vec<(Option<f64>, Option<f64>)> = on
                        .iter()
                        .map(|(a, b)| {
                            let d = |e: &Expr, p: &LogicalPlan| match e {
                                Expr::Column(c) => estimate::column_distinct(p, c.index, catalog),
                                _ => None,
                            };
                            (d(a, left), d(b, right))
                        })
                        .collect();
                    let inner = if on.is_empty() {
                        l * r
                    } else {
                        estimate::join_rows(l, r, &keys).unwrap_or(l.max(r))
                    };
                    match kind {
                        JoinKind::Left => inner.max(l),
                        JoinKind::Right => inner.max(r),
                        JoinKind::Full => inner.max(l).max(r),
                        _ => inner,
                    }
                }
                JoinKind::RightSemi | JoinKind::RightAnti => r,
                _ => l,
            }
        }
        LogicalPlan::Projection { input, .. }
        | LogicalPlan::Sort { input, .. }
        | LogicalPlan::Window { input, .. } => rows(input, catalog)?,
    })
}
