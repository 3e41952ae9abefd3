//! ORDER BY (stable, NULLS FIRST/LAST), DISTINCT, LIMIT/OFFSET and the
//! early stop of a LIMIT without ORDER BY.

use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Schema};
use weir_pipeline::{ExecOptions, Progress, execute};
use weir_planner::{BinaryOp, Expr, LogicalPlan, TableSource};

use crate::common::*;

fn a_b() -> LogicalPlan {
    project(scan_t(), vec![col(0), col(1)])
}

#[test]
fn sort_nulls_last_then_desc() {
    let a = Expr::column(0, "a");
    let b = Expr::column(1, "b");
    check(
        &tables(),
        &sort(a_b(), vec![(a, true, false), (b, false, true)]),
        &[
            "1|60", "1|10", "2|90", "2|20", "3|80", "4|40", "5|50", "10|100", "NULL|70", "NULL|30",
        ],
    );
}

#[test]
fn sort_is_stable_with_nulls_first() {
    check(
        &tables(),
        &sort(a_b(), vec![(Expr::column(0, "a"), true, true)]),
        &[
            "NULL|30", "NULL|70", "1|10", "1|60", "2|20", "2|90", "3|80", "4|40", "5|50", "10|100",
        ],
    );
    check(
        &tables(),
        &sort(a_b(), vec![(Expr::column(0, "a"), false, false)]),
        &[
            "10|100", "5|50", "4|40", "3|80", "2|20", "2|90", "1|10", "1|60", "NULL|30", "NULL|70",
        ],
    );
}

#[test]
fn limit_and_offset() {
    let b = || project(scan_t(), vec![col(1)]);
    check(&tables(), &limit(b(), 2, Some(3)), &["30", "40", "50"]);
    check(&tables(), &limit(b(), 8, None), &["90", "100"]);
    check(&tables(), &limit(b(), 20, Some(3)), &[]);
    check(&tables(), &limit(b(), 0, Some(0)), &[]);
    // ORDER BY b DESC LIMIT 2 OFFSET 1
    let sorted = sort(b(), vec![(Expr::column(0, "b"), false, true)]);
    check(&tables(), &limit(sorted, 1, Some(2)), &["90", "80"]);
}

#[test]
fn distinct_keeps_one_of_each_value_nulls_equal() {
    // like DuckDB, DISTINCT promises no order (it runs as a partitioned
    // hash aggregation)
    let plan = LogicalPlan::Distinct {
        input: Box::new(project(scan_t(), vec![col(2)])),
    };
    check_unordered(
        &tables(),
        &plan,
        &[
            "'apple'",
            "'banana'",
            "'cherry'",
            "NULL",
            "'special offer'",
            "'kiwi'",
            "'date'",
        ],
    );
}

fn big_range() -> LogicalPlan {
    LogicalPlan::Scan {
        source: TableSource::Series {
            start: 0,
            stop: 1_000_000,
            step: 1,
        },
        schema: Arc::new(Schema::new(vec![Field::new(
            "range",
            DataType::Int64,
            false,
        )])),
    }
}

#[test]
fn limit_without_order_stops_early() {
    let r = Expr::column(0, "range");
    let plan = limit(
        project(
            filter(
                big_range(),
                bin(
                    bin(r.clone(), BinaryOp::Modulo, lit_i64(3)),
                    BinaryOp::Eq,
                    lit_i64(0),
                ),
            ),
            vec![r.clone()],
        ),
        2,
        Some(5),
    );
    for threads in [1, 2, 4] {
        let progress = Arc::new(Progress::new());
        let opts = ExecOptions {
            morsel_rows: 1000,
            progress: Some(Arc::clone(&progress)),
            ..ExecOptions::default()
        };
        let out = execute(&plan, &tables(), &executor(threads), &opts).unwrap();
        assert_eq!(rows(&out), vec!["6", "9", "12", "15", "18"]);
        assert_eq!(progress.morsels_total(), 1000);
        // each lane finishes at most the morsel it holds once enough rows exist
        assert!(
            progress.morsels_done() <= 2 * threads as u64,
            "{} morsels ran",
            progress.morsels_done()
        );
    }
}

#[test]
fn order_by_with_limit_reads_everything() {
    let r = Expr::column(0, "range");
    let plan = limit(
        sort(
            project(big_range(), vec![r]),
            vec![(Expr::column(0, "range"), false, false)],
        ),
        0,
        Some(3),
    );
    for threads in [1, 2, 4] {
        let progress = Arc::new(Progress::new());
        let opts = ExecOptions {
            morsel_rows: 10_000,
            progress: Some(Arc::clone(&progress)),
            ..ExecOptions::default()
        };
        let out = execute(&plan, &tables(), &executor(threads), &opts).unwrap();
        assert_eq!(rows(&out), vec!["999999", "999998", "999997"]);
        assert_eq!(progress.morsels_done(), 100);
    }
}

#[test]
fn a_limit_too_large_for_a_top_n_gathers_only_its_rows() {
    let r = Expr::column(0, "range");
    let text = Expr::Cast {
        expr: Box::new(r.clone()),
        to: DataType::Utf8,
        try_cast: false,
    };
    // the radix sort of a BIGINT key: 999999 down, from the 400,000th
    let numbers: Vec<String> = (596_996..=599_999)
        .rev()
        .take(4)
        .map(|v| format!("{v}|{v}"))
        .collect();
    // the sorted runs of a VARCHAR one
    let mut strings: Vec<String> = (0..1_000_000).map(|v: i64| v.to_string()).collect();
    strings.sort_unstable_by(|a, b| b.cmp(a));
    let strings: Vec<String> = strings[400_000..400_004]
        .iter()
        .map(|s| format!("'{s}'|{s}"))
        .collect();
    for (key, merge, expected) in [
        (r.clone(), "radix sort", numbers),
        (text, "merge sorted runs", strings),
    ] {
        let plan = limit(
            sort(
                project(big_range(), vec![key.clone(), r.clone()]),
                vec![(Expr::column(0, "k"), false, false)],
            ),
            400_000,
            Some(4),
        );
        for threads in [1, 2, 4] {
            let opts = ExecOptions {
                morsel_rows: 10_000,
                analyze: true,
                ..ExecOptions::default()
            };
            let out = execute(&plan, &tables(), &executor(threads), &opts).unwrap();
            assert_eq!(rows(&out), expected, "{merge}, {threads} threads");
            let profile = out.profile.expect("a profile");
            let sorted = profile
                .operators
                .iter()
                .find(|o| o.name == merge)
                .unwrap_or_else(|| panic!("no {merge} in {profile}"));
            // the sort gathered only the four rows kept (the runs kept
            // at most their first 400,004 rows each)
            assert_eq!(sorted.rows_out, 4, "{profile}");
            assert!(sorted.rows_in >= 400_004, "{profile}");
            if merge == "merge sorted runs" && threads == 1 {
                assert_eq!(sorted.rows_in, 400_004, "{profile}");
            }
        }
    }
}
