//! Morsel splitting: many morsels, an uneven last one, empty tables and
//! zero-row batches, VALUES, range().

use std::sync::Arc;

use arrow::array::{Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use weir_pipeline::{ExecOptions, Progress, TableData, execute, series_table};
use weir_planner::{AggregateFunction, BinaryOp, Expr, LogicalPlan, ScalarValue, TableSource};

use crate::common::*;

fn range_scan(start: i64, stop: i64, step: i64) -> LogicalPlan {
    LogicalPlan::Scan {
        source: TableSource::Series { start, stop, step },
        schema: Arc::new(Schema::new(vec![Field::new(
            "range",
            DataType::Int64,
            false,
        )])),
    }
}

fn range_col() -> Expr {
    Expr::column(0, "range")
}

#[test]
fn series_tables() {
    let t = series_table(0, 10, 3, "range").unwrap();
    assert_eq!(t.num_rows(), 4);
    let t = series_table(10, 0, -4, "range").unwrap();
    let values: Vec<i64> = t.batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap()
        .values()
        .to_vec();
    assert_eq!(values, vec![10, 6, 2]);
    assert_eq!(series_table(0, 10, -1, "range").unwrap().num_rows(), 0);
    assert!(series_table(0, 10, 0, "range").is_err());
}

#[test]
fn many_morsels_with_uneven_last_one() {
    // 100_003 rows in morsels of 1000: 101 morsels, the last of 3 rows
    let plan = aggregate(
        filter(
            range_scan(0, 100_003, 1),
            bin(
                bin(range_col(), BinaryOp::Modulo, lit_i64(7)),
                BinaryOp::Eq,
                lit_i64(0),
            ),
        ),
        vec![],
        vec![
            agg(AggregateFunction::CountStar, None, false),
            agg(AggregateFunction::Sum, Some(range_col()), false),
            agg(AggregateFunction::Max, Some(range_col()), false),
        ],
    );
    let expect_count = 100_003 / 7 + 1;
    let expect_sum: i64 = (0..100_003).filter(|v| v % 7 == 0).sum();
    for threads in [1, 2, 4] {
        let progress = Arc::new(Progress::new());
        let opts = ExecOptions {
            morsel_rows: 1000,
            progress: Some(Arc::clone(&progress)),
            ..ExecOptions::default()
        };
        let out = execute(&plan, &tables(), &executor(threads), &opts).unwrap();
        assert_eq!(
            rows(&out),
            vec![format!("{expect_count}|{expect_sum}|100002")]
        );
        assert_eq!(progress.morsels_total(), 101);
        assert_eq!(progress.morsels_done(), 101);
    }
}

#[test]
fn projection_keeps_table_order() {
    let plan = project(
        filter(
            range_scan(0, 50, 1),
            bin(range_col(), BinaryOp::Gt, lit_i64(40)),
        ),
        vec![bin(range_col(), BinaryOp::Multiply, lit_i64(2))],
    );
    let expect: Vec<String> = (41..50).map(|v| (v * 2).to_string()).collect();
    let expect: Vec<&str> = expect.iter().map(String::as_str).collect();
    check(&tables(), &plan, &expect);
}

#[test]
fn empty_tables_and_zero_row_batches() {
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, true)]));
    let empty_batch = RecordBatch::new_empty(Arc::clone(&schema));
    let sources = tables()
        .with("none", TableData::new(Arc::clone(&schema), vec![]))
        .with(
            "zeros",
            TableData::new(Arc::clone(&schema), vec![empty_batch.clone(), empty_batch]),
        );
    let x = Expr::column(0, "x");
    for name in ["none", "zeros"] {
        let s = scan(name, Arc::clone(&schema));
        // no GROUP BY: one row even over nothing, count 0 and sum NULL
        let plan = aggregate(
            filter(s.clone(), bin(x.clone(), BinaryOp::Gt, lit_i64(0))),
            vec![],
            vec![
                agg(AggregateFunction::CountStar, None, false),
                agg(AggregateFunction::Count, Some(x.clone()), false),
                agg(AggregateFunction::Sum, Some(x.clone()), false),
                agg(AggregateFunction::Avg, Some(x.clone()), false),
                agg(AggregateFunction::Min, Some(x.clone()), false),
                agg(AggregateFunction::Count, Some(x.clone()), true),
            ],
        );
        check(&sources, &plan, &["0|0|NULL|NULL|NULL|0"]);
        // GROUP BY over nothing: no rows
        let plan = aggregate(
            s.clone(),
            vec![x.clone()],
            vec![agg(AggregateFunction::CountStar, None, false)],
        );
        check(&sources, &plan, &[]);
        check(&sources, &project(s, vec![x.clone()]), &[]);
    }
    // range() with no rows
    check(&tables(), &count_star(range_scan(5, 5, 1)), &["0"]);
}

#[test]
fn values_plans() {
    let schema = Arc::new(Schema::new(vec![
        Field::new("n", DataType::Int64, true),
        Field::new("s", DataType::Utf8, true),
    ]));
    let values = LogicalPlan::Values {
        rows: vec![
            vec![ScalarValue::Int64(3), ScalarValue::Utf8("c".into())],
            vec![
                ScalarValue::Null(DataType::Int64),
                ScalarValue::Utf8("a".into()),
            ],
            vec![ScalarValue::Int64(1), ScalarValue::Null(DataType::Utf8)],
        ],
        schema,
    };
    let n = Expr::column(0, "n");
    let plan = project(
        filter(values.clone(), Expr::IsNotNull(Box::new(n.clone()))),
        vec![
            bin(n.clone(), BinaryOp::Plus, lit_i64(1)),
            Expr::column(1, "s"),
        ],
    );
    check(&tables(), &plan, &["4|'c'", "2|NULL"]);
    check(&tables(), &count_star(values), &["3"]);
    // SELECT 42: a one-row VALUES without columns
    let one = LogicalPlan::Values {
        rows: vec![vec![]],
        schema: Arc::new(Schema::empty()),
    };
    check(&tables(), &project(one, vec![lit_i64(42)]), &["42"]);
}
