//! Column pruning: every node produces only the columns some ancestor
//! reads.
//!
//! [`prune`] takes the columns a node's parent needs and returns the node
//! rewritten with, for each of its new output columns, the old column it
//! holds (a sorted superset of the needs: a scan keeps all its columns,
//! a join the keys it joins on). Expressions refer to columns by index,
//! so each parent maps its expressions through that list. A join side
//! over a scan gets a projection of just the columns used, so the join
//! never gathers the others; a projection over a projection of plain
//! columns (the binder's reordering after a join) is folded into it.

use std::sync::Arc;

use arrow_schema::{Field, FieldRef, Schema, SchemaRef};

use super::{map_columns, substitute};
use crate::expr::Expr;
use crate::plan::{AggregateExpr, LogicalPlan};

/// `plan` with every node narrowed to what its ancestors read; its own
/// output is unchanged.
pub(crate) fn prune_root(plan: LogicalPlan) -> LogicalPlan {
    let schema = plan.schema();
    let all: Vec<usize> = (0..schema.fields().len()).collect();
    let (plan, out) = prune(plan, &all);
    debug_assert_eq!(out, all);
    if plan.schema().fields() == schema.fields() {
        return plan;
    }
    // the query's column names, where a projection that only renamed
    // columns was left out
    let mut plan = plan;
    if rename(&mut plan, &schema) {
        return plan;
    }
    let exprs = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| Expr::column(i, f.name().clone()))
        .collect();
    LogicalPlan::Projection {
        input: Box::new(plan),
        exprs,
        schema,
    }
}

/// Gives `plan`'s columns the fields of `schema` (same types) on the
/// first node below the ones that pass their input's columns on (a sort,
/// a limit) that has a schema of its own; false when there is none.
fn rename(plan: &mut LogicalPlan, schema: &SchemaRef) -> bool {
    match plan {
        LogicalPlan::Projection { schema: s, .. } | LogicalPlan::Aggregate { schema: s, .. } => {
            *s = schema.clone();
            true
        }
        LogicalPlan::Sort { input, .. } | LogicalPlan::Limit { input, .. } => rename(input, schema),
        _ => false,
    }
}

/// Where old column `c` is in `out` (the columns a pruned node kept).
fn pos(out: &[usize], c: usize) -> usize {
    out.binary_search(&c)
        .expect("a pruned node keeps every column read above it")
}

fn remap(e: &Expr, out: &[usize]) -> Expr {
    map_columns(e, &|c| pos(out, c))
}

/// The sorted, distinct union of `a` and the columns of `exprs`.
fn with_columns<'e>(mut a: Vec<usize>, exprs: impl IntoIterator<Item = &'e Expr>) -> Vec<usize> {
    for e in exprs {
        a.extend(e.columns());
    }
    a.sort_unstable();
    a.dedup();
    a
}

fn subset(schema: &Schema, cols: &[usize]) -> SchemaRef {
    // the fields shared, not copied (a copy clones each name)
    let fields: Vec<FieldRef> = cols
        .iter()
        .map(|&c| Arc::clone(&schema.fields()[c]))
        .collect();
    SchemaRef::new(Schema::new(fields))
}

/// `plan` rewritten to produce at least the columns `need` (sorted,
/// distinct) of its output, and which old column each new one is.
/// `need` may be empty (only the row count matters): the node then keeps
/// one column, as a batch without columns has no rows.
pub(crate) fn prune(plan: LogicalPlan, need: &[usize]) -> (LogicalPlan, Vec<usize>) {
    let width = plan.schema().fields().len();
    let need: Vec<usize> = if need.is_empty() && width > 0 {
        vec![0]
    } else {
        need.to_vec()
    };
    match plan {
        LogicalPlan::Scan { .. } => (plan, (0..width).collect()),
        LogicalPlan::Values { rows, schema } => {
            let rows = rows
                .into_iter()
                .map(|r| need.iter().map(|&c| r[c].clone()).collect())
                .collect();
            let schema = subset(&schema, &need);
            (LogicalPlan::Values { rows, schema }, need)
        }
        LogicalPlan::Filter { input, predicate } => {
            let below = with_columns(need, [&predicate]);
            let (input, out) = prune(*input, &below);
            let predicate = remap(&predicate, &out);
            (
                LogicalPlan::Filter {
                    input: Box::new(input),
                    predicate,
                },
                out,
            )
        }
        LogicalPlan::Projection {
            input,
            exprs,
            schema,
        } => {
            let exprs: Vec<Expr> = need.iter().map(|&c| exprs[c].clone()).collect();
            let below = with_columns(Vec::new(), &exprs);
            let (input, out) = prune(*input, &below);
            let exprs: Vec<Expr> = exprs.iter().map(|e| remap(e, &out)).collect();
            let schema = subset(&schema, &need);
            (project(input, exprs, schema), need)
        }
        LogicalPlan::Aggregate {
            input,
            group_by,
            aggregates,
            schema,
        } => {
            let g = group_by.len();
            let mut keep: Vec<usize> = need.iter().copied().filter(|&c| c >= g).collect();
            if g == 0 && keep.is_empty() {
                keep.push(0);
            }
            let aggregates: Vec<_> = keep.iter().map(|&c| aggregates[c - g].clone()).collect();
            let used = group_by
                .iter()
                .chain(aggregates.iter().flat_map(AggregateExpr::exprs));
            let below = with_columns(Vec::new(), used);
            let (input, out) = prune(*input, &below);
            let group_by = group_by.iter().map(|e| remap(e, &out)).collect();
            let aggregates = aggregates
                .into_iter()
                .map(|a| a.map_exprs(|e| remap(e, &out)))
                .collect();
            let kept: Vec<usize> = (0..g).chain(keep).collect();
            let schema = subset(&schema, &kept);
            let plan = LogicalPlan::Aggregate {
                input: Box::new(input),
                group_by,
                aggregates,
                schema,
            };
            (fold_projection(plan), kept)
        }
        LogicalPlan::Window {
            input,
            partition_by,
            order_by,
            functions,
            schema,
        } => {
            let n = width - functions.len();
            let keep: Vec<usize> = need.iter().copied().filter(|&c| c >= n).collect();
            let from_input: Vec<usize> = need.iter().copied().filter(|&c| c < n).collect();
            if keep.is_empty() {
                // no function is read: the window adds nothing
                return prune(*input, &from_input);
            }
            let functions: Vec<_> = keep.iter().map(|&c| functions[c - n].clone()).collect();
            let used = partition_by
                .iter()
                .chain(order_by.iter().map(|k| &k.expr))
                .chain(functions.iter().flat_map(|f| f.args.iter()));
            let below = with_columns(from_input, used);
            let (input, out) = narrow(*input, &below);
            let partition_by = partition_by.iter().map(|e| remap(e, &out)).collect();
            let order_by = order_by
                .into_iter()
                .map(|mut k| {
                    k.expr = remap(&k.expr, &out);
                    k
                })
                .collect();
            let functions = functions
                .into_iter()
                .map(|mut f| {
                    f.args = f.args.iter().map(|e| remap(e, &out)).collect();
                    f
                })
                .collect();
            let kept: Vec<usize> = out.iter().copied().chain(keep).collect();
            let schema = subset(&schema, &kept);
            (
                LogicalPlan::Window {
                    input: Box::new(input),
                    partition_by,
                    order_by,
                    functions,
                    schema,
                },
                kept,
            )
        }
        LogicalPlan::Distinct { input } => {
            // every column is part of what is distinct
            let all: Vec<usize> = (0..width).collect();
            let (input, out) = narrow(*input, &all);
            (
                LogicalPlan::Distinct {
                    input: Box::new(input),
                },
                out,
            )
        }
        LogicalPlan::Sort { input, keys } => {
            let below = with_columns(need, keys.iter().map(|k| &k.expr));
            let (input, out) = narrow(*input, &below);
            let keys = keys
                .into_iter()
                .map(|mut k| {
                    k.expr = remap(&k.expr, &out);
                    k
                })
                .collect();
            (
                LogicalPlan::Sort {
                    input: Box::new(input),
                    keys,
                },
                out,
            )
        }
        LogicalPlan::Limit {
            input,
            offset,
            fetch,
        } => {
            let (input, out) = prune(*input, &need);
            (
                LogicalPlan::Limit {
                    input: Box::new(input),
                    offset,
                    fetch,
                },
                out,
            )
        }
        LogicalPlan::Union { inputs, schema } => {
            // every input gives exactly the same columns
            let inputs = inputs.into_iter().map(|i| exact(i, &need)).collect();
            let schema = subset(&schema, &need);
            (LogicalPlan::Union { inputs, schema }, need)
        }
        LogicalPlan::Join {
            left,
            right,
            kind,
            on,
            filter,
            schema,
        } => {
            let ln = left.schema().fields().len();
            // the output's columns: the left's then the right's, or the
            // right's alone (a right semi or anti join)
            let right_at = if kind.keeps_left() { ln } else { 0 };
            let mut need_left: Vec<usize> = need
                .iter()
                .copied()
                .filter(|&c| kind.keeps_left() && c < ln)
                .collect();
            let mut need_right: Vec<usize> = need
                .iter()
                .copied()
                .filter(|&c| c >= right_at)
                .map(|c| c - right_at)
                .collect();
            need_left = with_columns(need_left, on.iter().map(|(l, _)| l));
            need_right = with_columns(need_right, on.iter().map(|(_, r)| r));
            if let Some(f) = &filter {
                for c in f.columns() {
                    if c < ln {
                        need_left.push(c);
                    } else {
                        need_right.push(c - ln);
                    }
                }
                need_left = with_columns(need_left, []);
                need_right = with_columns(need_right, []);
            }
            let (left, lout) = narrow(*left, &need_left);
            let (right, rout) = narrow(*right, &need_right);
            let new_ln = lout.len();
            let on = on
                .iter()
                .map(|(l, r)| (remap(l, &lout), remap(r, &rout)))
                .collect();
            let filter = filter.map(|f| {
                map_columns(&f, &|c| {
                    if c < ln {
                        pos(&lout, c)
                    } else {
                        new_ln + pos(&rout, c - ln)
                    }
                })
            });
            let mut kept = if kind.keeps_left() {
                lout.clone()
            } else {
                Vec::new()
            };
            if kind.keeps_right() {
                kept.extend(rout.iter().map(|&c| c + right_at));
            }
            let schema = subset(&schema, &kept);
            (
                LogicalPlan::Join {
                    left: Box::new(left),
                    right: Box::new(right),
                    kind,
                    on,
                    filter,
                    schema,
                },
                kept,
            )
        }
    }
}

/// [`prune`], then, where the result still carries columns no one reads
/// and its rows are gathered from a scan, a projection of just `need`
/// (the scan's filters stay below it, in one pipeline).
fn narrow(plan: LogicalPlan, need: &[usize]) -> (LogicalPlan, Vec<usize>) {
    let (plan, out) = prune(plan, need);
    let mut leaf = &plan;
    while let LogicalPlan::Filter { input, .. } = leaf {
        leaf = input;
    }
    let wanted: Vec<usize> = if need.is_empty() {
        out.iter().copied().take(1).collect()
    } else {
        need.to_vec()
    };
    if out == wanted || !matches!(leaf, LogicalPlan::Scan { .. }) {
        return (plan, out);
    }
    let (plan, _) = select(plan, &out, &wanted);
    (plan, wanted)
}

/// [`prune`] to exactly the columns `need` (a projection added when it
/// keeps more).
fn exact(plan: LogicalPlan, need: &[usize]) -> LogicalPlan {
    let (plan, out) = prune(plan, need);
    if out == need {
        return plan;
    }
    select(plan, &out, need).0
}

/// A projection of the old columns `wanted` over `plan`, whose columns
/// are the old columns `out`.
fn select(plan: LogicalPlan, out: &[usize], wanted: &[usize]) -> (LogicalPlan, Vec<usize>) {
    let schema = plan.schema();
    let exprs: Vec<Expr> = wanted
        .iter()
        .map(|&c| {
            let i = pos(out, c);
            Expr::column(i, schema.field(i).name().clone())
        })
        .collect();
    let fields: Vec<Field> = wanted
        .iter()
        .map(|&c| schema.field(pos(out, c)).clone())
        .collect();
    let plan = project(plan, exprs, SchemaRef::new(Schema::new(fields)));
    (plan, wanted.to_vec())
}

/// True if `exprs` are the columns of `input`, in order, of its types.
fn is_identity(exprs: &[Expr], input: &Schema, schema: &Schema) -> bool {
    exprs.len() == input.fields().len()
        && exprs
            .iter()
            .enumerate()
            .all(|(i, e)| matches!(e, Expr::Column(c) if c.index == i))
        && input
            .fields()
            .iter()
            .zip(schema.fields())
            .all(|(a, b)| a.data_type() == b.data_type() && a.is_nullable() == b.is_nullable())
}

/// A Projection of `exprs` over `input`, folded into a projection of
/// plain columns below it, or left out when it only repeats its input.
fn project(input: LogicalPlan, exprs: Vec<Expr>, schema: SchemaRef) -> LogicalPlan {
    let input = match input {
        LogicalPlan::Projection {
            input: below,
            exprs: inner,
            schema: inner_schema,
        } => {
            if inner.iter().all(|e| matches!(e, Expr::Column(_))) {
                let exprs: Vec<Expr> = exprs.iter().map(|e| substitute(e, &inner)).collect();
                return project(*below, exprs, schema);
            }
            LogicalPlan::Projection {
                input: below,
                exprs: inner,
                schema: inner_schema,
            }
        }
        other => other,
    };
    // (over a scan's filters a projection stays: that is the shape the
    // engine reads a file's columns and first rows from)
    let mut leaf = &input;
    while let LogicalPlan::Filter { input, .. } = leaf {
        leaf = input;
    }
    let over_leaf = matches!(leaf, LogicalPlan::Scan { .. } | LogicalPlan::Values { .. });
    if !over_leaf && is_identity(&exprs, &input.schema(), &schema) {
        return input;
    }
    LogicalPlan::Projection {
        input: Box::new(input),
        exprs,
        schema,
    }
}

/// An Aggregate over a projection computes the projected expressions
/// itself (one pipeline instead of two: the projection's rows are never
/// materialised). Not over a volatile expression, which must be computed
/// once per row.
fn fold_projection(plan: LogicalPlan) -> LogicalPlan {
    let LogicalPlan::Aggregate {
        input,
        group_by,
        aggregates,
        schema,
    } = plan
    else {
        return plan;
    };
    match *input {
        LogicalPlan::Projection {
            input: below,
            exprs,
            ..
        } if !exprs.iter().any(Expr::is_volatile) => LogicalPlan::Aggregate {
            input: below,
            group_by: group_by.iter().map(|e| substitute(e, &exprs)).collect(),
            aggregates: aggregates
                .into_iter()
                .map(|a| a.map_exprs(|e| substitute(e, &exprs)))
                .collect(),
            schema,
        },
        input => LogicalPlan::Aggregate {
            input: Box::new(input),
            group_by,
            aggregates,
            schema,
        },
    }
}
