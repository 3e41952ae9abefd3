//! Physical rewrites of the logical plan, decided once per query before it
//! is cut into pipelines.
//!
//! `f(DISTINCT x)` aggregates over one argument become two aggregations:
//! an inner one grouping by the keys and `x` (no aggregates: it only
//! removes duplicates) and an outer one computing `f(x)` per key over its
//! result. Both run on the partitioned hash aggregation, so the distinct
//! values are built and merged on every worker instead of as one set per
//! group merged on one thread.
//!
//! A window without PARTITION BY but with an ORDER BY gets a full sort by
//! its order keys under it: the sort runs on every worker (one radix sort,
//! or runs merged by key ranges), and the window computes over its input
//! in order instead of merging every lane's rows on one task.

use std::sync::Arc;

use arrow::datatypes::{Field, Schema};
use weir_planner::{AggregateExpr, AggregateFunction, Expr, LogicalPlan};

/// `plan` with its DISTINCT aggregation split in two, or `None` if it has
/// none that qualifies: every `f(DISTINCT x)` of one argument `x` (count,
/// sum, avg, min, max), beside any aggregates without DISTINCT that
/// combine from parts (`count`, `sum`, `min`, `max`; counts only under a
/// GROUP BY, where every group has a part: over no rows at all a sum of
/// counts would be NULL, not 0). The inner aggregation groups by the
/// keys and `x` and computes those parts; the outer one combines them
/// (a count's parts are summed) beside `f(x)` over the distinct values.
pub(crate) fn split_distinct(plan: &LogicalPlan) -> Option<LogicalPlan> {
    match plan {
        LogicalPlan::Aggregate {
            input,
            group_by,
            aggregates,
            schema,
        } => {
            let arg = aggregates.iter().find(|a| a.distinct)?.arg.as_ref()?;
            let qualifies = aggregates.iter().all(|a| {
                use AggregateFunction::*;
                match (a.distinct, a.func) {
                    (true, Count | Sum | Avg | Min | Max) => a.arg.as_ref() == Some(arg),
                    (false, Sum | Min | Max) => a.key.is_none(),
                    (false, Count | CountStar) => a.key.is_none() && !group_by.is_empty(),
                    _ => false,
                }
            });
            if !qualifies {
                return None;
            }
            let input_schema = input.schema();
            let n = group_by.len();
            let mut fields: Vec<Field> = group_by
                .iter()
                .enumerate()
                .map(|(i, g)| Field::new(format!("__key{i}"), g.data_type(&input_schema), true))
                .collect();
            fields.push(Field::new("__distinct", arg.data_type(&input_schema), true));
            // the parts of the aggregates without DISTINCT, of their types
            let mut parts = Vec::new();
            for (j, a) in aggregates.iter().enumerate() {
                if !a.distinct {
                    let t = schema.field(n + j).data_type().clone();
                    fields.push(Field::new(format!("__part{j}"), t, true));
                    parts.push(a.clone());
                }
            }
            let mut keys = group_by.clone();
            keys.push(arg.clone());
            let inner = LogicalPlan::Aggregate {
                input: input.clone(),
                group_by: keys,
                aggregates: parts,
                schema: Arc::new(Schema::new(fields)),
            };
            let value = Expr::column(n, "__distinct");
            let mut part = n;
            let outer = aggregates
                .iter()
                .enumerate()
                .map(|(j, a)| {
                    if a.distinct {
                        return AggregateExpr {
                            func: a.func,
                            arg: Some(value.clone()),
                            key: None,
                            distinct: false,
                            order_by: Vec::new(),
                        };
                    }
                    part += 1;
                    let func = match a.func {
                        AggregateFunction::Count | AggregateFunction::CountStar => {
                            AggregateFunction::Sum
                        }
                        f => f,
                    };
                    AggregateExpr {
                        func,
                        arg: Some(Expr::column(part, format!("__part{j}"))),
                        key: None,
                        distinct: false,
                        order_by: Vec::new(),
                    }
                })
                .collect();
            Some(LogicalPlan::Aggregate {
                input: Box::new(inner),
                group_by: (0..n)
                    .map(|i| Expr::column(i, format!("__key{i}")))
                    .collect(),
                aggregates: outer,
                schema: Arc::clone(schema),
            })
        }
        other => {
            let input = split_distinct(other.input()?)?;
            Some(with_input(other, input))
        }
    }
}

/// The physical rewrites of `plan` ([`split_distinct`], then
/// [`sort_under_window`]), or `None` if none applies.
pub(crate) fn rewrite(plan: &LogicalPlan) -> Option<LogicalPlan> {
    let split = split_distinct(plan);
    let sorted = sort_under_window(split.as_ref().unwrap_or(plan));
    sorted.or(split)
}

/// `plan` with a full sort by the order keys under each window of its
/// chain that has an ORDER BY but no PARTITION BY (unless its input is
/// that sort already), or `None` if it has none.
///
/// A window with a PARTITION BY keeps cutting its rows into buckets by a
/// hash of the partition keys, each sorted by a task of its own: a full
/// sort by partition and order keys (then computed batch by batch, as
/// [`window_order`](crate::window::window_order) allows) was measured slower where partitions are
/// scattered over the table (the sort's gather from every row at random:
/// W2 on 2 threads 239 -> 358 ms, 7 partitions by date 210 -> 359) and
/// faster only where they are clustered (W1 140 -> 97).
pub(crate) fn sort_under_window(plan: &LogicalPlan) -> Option<LogicalPlan> {
    match plan {
        LogicalPlan::Window {
            input,
            partition_by,
            order_by,
            ..
        } if partition_by.is_empty()
            && !order_by.is_empty()
            && !matches!(&**input, LogicalPlan::Sort { keys, .. } if keys == order_by) =>
        {
            let input = sort_under_window(input).unwrap_or_else(|| (**input).clone());
            let sort = LogicalPlan::Sort {
                input: Box::new(input),
                keys: order_by.clone(),
            };
            Some(with_input(plan, sort))
        }
        other => {
            let input = sort_under_window(other.input()?)?;
            Some(with_input(other, input))
        }
    }
}

/// `node` over `input` instead of its own input.
fn with_input(node: &LogicalPlan, input: LogicalPlan) -> LogicalPlan {
    let mut node = node.clone();
    match &mut node {
        LogicalPlan::Filter { input: slot, .. }
        | LogicalPlan::Projection { input: slot, .. }
        | LogicalPlan::Aggregate { input: slot, .. }
        | LogicalPlan::Window { input: slot, .. }
        | LogicalPlan::Distinct { input: slot }
        | LogicalPlan::Sort { input: slot, .. }
        | LogicalPlan::Limit { input: slot, .. } => **slot = input,
        LogicalPlan::Scan { .. }
        | LogicalPlan::Values { .. }
        | LogicalPlan::Join { .. }
        | LogicalPlan::Union { .. } => {}
    }
    node
}

#[cfg(test)]
mod tests {
    use arrow::datatypes::DataType;
    use weir_planner::TableSource;

    use super::*;

    fn scan() -> LogicalPlan {
        LogicalPlan::Scan {
            source: TableSource::Table("t".into()),
            schema: Arc::new(Schema::new(vec![
                Field::new("g", DataType::Utf8, true),
                Field::new("x", DataType::Int64, true),
            ])),
        }
    }

    fn aggregate(aggregates: Vec<AggregateExpr>) -> LogicalPlan {
        let fields: Vec<Field> = std::iter::once(Field::new("g", DataType::Utf8, true))
            .chain(
                aggregates
                    .iter()
                    .map(|a| Field::new(a.to_string(), DataType::Int64, true)),
            )
            .collect();
        LogicalPlan::Aggregate {
            input: Box::new(scan()),
            group_by: vec![Expr::column(0, "g")],
            aggregates,
            schema: Arc::new(Schema::new(fields)),
        }
    }

    fn distinct(func: AggregateFunction, col: usize) -> AggregateExpr {
        AggregateExpr {
            func,
            arg: Some(Expr::column(col, "x")),
            key: None,
            distinct: true,
            order_by: Vec::new(),
        }
    }

    #[test]
    fn distinct_aggregates_over_one_argument_become_two_aggregations() {
        let plan = LogicalPlan::Limit {
            input: Box::new(aggregate(vec![
                distinct(AggregateFunction::Count, 1),
                distinct(AggregateFunction::Sum, 1),
            ])),
            offset: 0,
            fetch: Some(3),
        };
        assert_split(
            &plan,
            &[
                "Aggregate: groupBy=[__key0], aggr=[count(__distinct), sum(__distinct)]",
                "Aggregate: groupBy=[g, x], aggr=[]",
            ],
        );
    }

    /// `plan` split in two, of the plan's schema, showing `lines`.
    fn assert_split(plan: &LogicalPlan, lines: &[&str]) {
        let split = split_distinct(plan).expect("rewritten");
        assert_eq!(split.schema(), plan.schema());
        let text = split.display_indent().to_string();
        for line in lines {
            assert!(text.contains(line), "{line}: {text}");
        }
    }

    fn plain(func: AggregateFunction, arg: Option<usize>) -> AggregateExpr {
        AggregateExpr {
            func,
            arg: arg.map(|c| Expr::column(c, "x")),
            key: None,
            distinct: false,
            order_by: Vec::new(),
        }
    }

    #[test]
    fn aggregates_that_combine_from_parts_split_beside_distinct_ones() {
        let plan = aggregate(vec![
            distinct(AggregateFunction::Count, 1),
            plain(AggregateFunction::CountStar, None),
            plain(AggregateFunction::Sum, Some(1)),
            plain(AggregateFunction::Max, Some(1)),
        ]);
        // the parts by keys and x, then counts summed and the rest combined
        assert_split(
            &plan,
            &[
                "Aggregate: groupBy=[g, x], aggr=[count(*), sum(x), max(x)]",
                "Aggregate: groupBy=[__key0], aggr=[count(__distinct), sum(__part1), sum(__part2), max(__part3)]",
            ],
        );
    }

    #[test]
    fn other_mixes_and_different_arguments_stay() {
        // an average does not combine from its parts' results
        let avg = aggregate(vec![
            distinct(AggregateFunction::Count, 1),
            plain(AggregateFunction::Avg, Some(1)),
        ]);
        assert!(split_distinct(&avg).is_none());
        // without a GROUP BY a sum of counts over no rows would be NULL
        let LogicalPlan::Aggregate {
            input,
            aggregates,
            schema,
            ..
        } = aggregate(vec![
            distinct(AggregateFunction::Count, 1),
            plain(AggregateFunction::CountStar, None),
        ])
        else {
            unreachable!()
        };
        let fields: Vec<Field> = schema.fields()[1..]
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        let global = LogicalPlan::Aggregate {
            input,
            group_by: Vec::new(),
            aggregates,
            schema: Arc::new(Schema::new(fields)),
        };
        assert!(split_distinct(&global).is_none());
        let two_args = aggregate(vec![
            distinct(AggregateFunction::Count, 1),
            distinct(AggregateFunction::Count, 0),
        ]);
        assert!(split_distinct(&two_args).is_none());
    }
}
