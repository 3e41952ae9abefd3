//! EXPLAIN (dry run) and EXPLAIN ANALYZE profiles.

use std::sync::Arc;

use weir_pipeline::{ExecOptions, Progress, execute, explain};
use weir_planner::{AggregateFunction as F, BinaryOp, Expr};

use crate::common::*;

fn query() -> weir_planner::LogicalPlan {
    // SELECT s, count(*) FROM t WHERE (a > 3 OR s = 'kiwi') AND b >= 20
    //   GROUP BY s ORDER BY s LIMIT 10
    let predicate = and(
        or(
            bin(col(0), BinaryOp::Gt, lit_i32(3)),
            bin(col(2), BinaryOp::Eq, lit_str("kiwi")),
        ),
        bin(col(1), BinaryOp::GtEq, lit_i64(20)),
    );
    let grouped = aggregate(
        filter(scan_t(), predicate),
        vec![col(2)],
        vec![agg(F::CountStar, None, false)],
    );
    limit(
        sort(grouped, vec![(Expr::column(0, "s"), true, false)]),
        0,
        Some(10),
    )
}

#[test]
fn explain_lists_the_job_and_its_steps_without_running() {
    let progress = Arc::new(Progress::new());
    let opts = ExecOptions {
        morsel_rows: 3,
        progress: Some(Arc::clone(&progress)),
        ..ExecOptions::default()
    };
    let text = explain(&query(), &tables(), &executor(2), &opts).unwrap();
    for needle in [
        "Logical plan:",
        "Scan: t",
        "Pipeline 1: Filter",
        "job \"t\"",
        "2 lanes on 1 main + 1 reserve workers",
        "4 morsels of up to 3 rows (10 rows)",
        "step 1: filter (b >= 20) on [b]",
        "step 2: filter ((a > 3) OR (s = 'kiwi')) on [a, s]",
        "sink: partial Aggregate: groupBy=[s], aggr=[count(*)]",
        "breaker: merge partial groups: radix partitions merged and finished in parallel",
        "Pipeline 2 (after pipeline 1): Sort: s ASC NULLS LAST",
        "top-N: per-lane bounded candidates",
        "Pipeline 3 (after pipeline 2): Limit: 10 offset 0",
        "limit (slices, no job)",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    assert_eq!(
        progress.morsels_total(),
        0,
        "explain does not run the query"
    );
}

#[test]
fn analyze_profile_rows_add_up() {
    for threads in [1, 2, 4] {
        let opts = ExecOptions {
            morsel_rows: 2,
            analyze: true,
            ..ExecOptions::default()
        };
        let out = execute(&query(), &tables(), &executor(threads), &opts).unwrap();
        assert_eq!(
            rows(&out),
            vec!["'apple'|1", "'date'|1", "'kiwi'|1", "NULL|1"]
        );
        let profile = out.profile.expect("a profile");
        let ops = &profile.operators;
        let names: Vec<&str> = ops.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "scan t (7 columns)",
                "filter (b >= 20)",
                "filter ((a > 3) OR (s = 'kiwi'))",
                "partial Aggregate: groupBy=[s], aggr=[count(*)]",
                "merge aggregate partitions",
                "top-n (lanes)",
                "merge top-10",
                "Limit: 10 offset 0",
            ],
            "{profile}"
        );
        assert_eq!(ops[0].rows_in, 10);
        for w in ops.windows(2) {
            assert_eq!(w[0].rows_out, w[1].rows_in, "{profile}");
        }
        assert_eq!(ops.last().unwrap().rows_out, 4);
        // every morsel ran on some worker
        let morsels = ops[0].morsels_main + ops[0].morsels_reserve;
        assert_eq!(morsels, 5);
        assert_eq!(profile.morsels_total, 5);
        // the partial groups and the top-N candidates were counted
        assert!(profile.peak_memory > 0, "{profile}");
        let text = profile.to_string();
        assert!(
            text.contains("rows in") && text.contains("peak memory") && text.contains("total"),
            "{text}"
        );
    }
    let plain = execute(&query(), &tables(), &executor(2), &ExecOptions::default()).unwrap();
    assert!(plain.profile.is_none());
}
