//! Subplans computed once and read by several parts of a query.
//!
//! A CTE named twice (`WITH r AS (...) SELECT ... FROM r ... (SELECT max(x)
//! FROM r)`) is bound into the plan once per reference, as two equal
//! subtrees. The DAG builder computes such a subtree once: the first
//! reference builds its pipelines, every later one reads the same result.
//! Only subtrees whose result is materialised anyway (a breaker's: an
//! aggregation, a sort, a join's build side, a union) are shared, so
//! sharing never turns a streamed input into a materialised one, and none
//! that calls a volatile function (`random()`), whose two computations may
//! differ.

use weir_planner::LogicalPlan;

/// The subtrees of `plan` that occur more than once and are worth
/// computing once, each listed once (outermost first).
pub(crate) fn repeated_subplans(plan: &LogicalPlan) -> Vec<LogicalPlan> {
    let mut nodes = Vec::new();
    let mut stack = vec![plan];
    while let Some(n) = stack.pop() {
        nodes.push(n);
        stack.extend(n.children());
    }
    let mut repeated: Vec<LogicalPlan> = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        if !worth_sharing(n) || repeated.iter().any(|r| r == *n) {
            continue;
        }
        if nodes[i + 1..].iter().any(|m| m == n) && !n.calls_volatile() {
            repeated.push((*n).clone());
        }
    }
    repeated
}

/// True for a subtree with real work in it (a join, an aggregation, a
/// window, a sort, a DISTINCT or a union); a scan with filters is cheaper
/// to run again than to hold.
fn worth_sharing(plan: &LogicalPlan) -> bool {
    match plan {
        LogicalPlan::Join { .. }
        | LogicalPlan::Union { .. }
        | LogicalPlan::Aggregate { .. }
        | LogicalPlan::Window { .. }
        | LogicalPlan::Distinct { .. }
        | LogicalPlan::Sort { .. } => true,
        LogicalPlan::Scan { .. } | LogicalPlan::Values { .. } => false,
        other => other.children().into_iter().any(worth_sharing),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use weir_planner::arrow_schema::{DataType, Field, Schema};
    use weir_planner::{Expr, ScalarValue};

    use super::*;

    fn values() -> LogicalPlan {
        LogicalPlan::Values {
            rows: vec![vec![ScalarValue::Int64(1)]],
            schema: Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)])),
        }
    }

    fn distinct(input: LogicalPlan) -> LogicalPlan {
        LogicalPlan::Distinct {
            input: Box::new(input),
        }
    }

    fn union(a: LogicalPlan, b: LogicalPlan) -> LogicalPlan {
        let schema = a.schema();
        LogicalPlan::Union {
            inputs: vec![a, b],
            schema,
        }
    }

    #[test]
    fn a_subtree_named_twice_is_listed_once_and_a_lone_one_never() {
        let cte = distinct(values());
        let plan = union(cte.clone(), cte.clone());
        assert_eq!(repeated_subplans(&plan), vec![cte]);
        let other = distinct(LogicalPlan::Filter {
            input: Box::new(values()),
            predicate: Expr::Literal(ScalarValue::Boolean(true)),
        });
        assert!(repeated_subplans(&union(distinct(values()), other)).is_empty());
    }

    #[test]
    fn scans_and_volatile_subtrees_are_not_shared() {
        // two equal VALUES: nothing to save
        assert!(repeated_subplans(&union(values(), values())).is_empty());
        // random() computed twice must stay two computations
        let random = distinct(LogicalPlan::Filter {
            input: Box::new(values()),
            predicate: Expr::Binary {
                left: Box::new(Expr::Function {
                    func: weir_planner::ScalarFunction::Random,
                    args: vec![],
                }),
                op: weir_planner::BinaryOp::Gt,
                right: Box::new(Expr::Literal(ScalarValue::Float64(0.5))),
            },
        });
        assert!(repeated_subplans(&union(random.clone(), random)).is_empty());
    }
}
