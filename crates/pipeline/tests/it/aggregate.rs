//! Aggregates with and without GROUP BY, DISTINCT, HAVING, overflow.

use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Schema};
use weir_pipeline::{Error, execute};
use weir_planner::scalar::format_date;
use weir_planner::{AggregateFunction as F, BinaryOp, Expr, LogicalPlan, ScalarValue};

use crate::common::*;

#[test]
fn without_groups() {
    let plan = aggregate(
        scan_t(),
        vec![],
        vec![
            agg(F::CountStar, None, false),
            agg(F::Count, Some(col(0)), false),
            agg(F::Sum, Some(col(0)), false),
            agg(F::Avg, Some(col(0)), false),
            agg(F::Min, Some(col(0)), false),
            agg(F::Max, Some(col(0)), false),
            agg(F::Sum, Some(col(3)), false),
            agg(F::Avg, Some(col(3)), false),
            agg(F::Sum, Some(col(4)), false),
            agg(F::Avg, Some(col(4)), false),
        ],
    );
    check(
        &tables(),
        &plan,
        &["10|8|28|3.5|1|10|35.66|3.566|21.75|2.71875"],
    );
}

#[test]
fn min_max_of_every_type() {
    let mut aggs = Vec::new();
    for c in [2, 3, 4, 5, 6] {
        aggs.push(agg(F::Min, Some(col(c)), false));
        aggs.push(agg(F::Max, Some(col(c)), false));
    }
    let plan = aggregate(scan_t(), vec![], aggs);
    let expect = format!(
        "'apple'|'special offer'|0.01|10.00|-2.0|10.0|DATE '{}'|DATE '{}'|FALSE|TRUE",
        format_date(8500),
        format_date(9200)
    );
    check(&tables(), &plan, &[expect.as_str()]);
}

#[test]
fn distinct_aggregates() {
    let plan = aggregate(
        scan_t(),
        vec![],
        vec![
            agg(F::Count, Some(col(0)), true),
            agg(F::Count, Some(col(2)), true),
            agg(F::Sum, Some(col(0)), true),
            agg(F::Avg, Some(col(0)), true),
            agg(F::Max, Some(col(2)), true),
        ],
    );
    let avg = 25.0f64 / 6.0;
    let expect = format!("6|6|25|{avg:?}|'special offer'");
    check(&tables(), &plan, &[expect.as_str()]);
}

#[test]
fn group_by_with_null_group_then_sort() {
    let grouped = aggregate(
        scan_t(),
        vec![col(2)],
        vec![
            agg(F::CountStar, None, false),
            agg(F::Sum, Some(col(1)), false),
        ],
    );
    let s = Expr::column(0, "s");
    check(
        &tables(),
        &sort(grouped.clone(), vec![(s.clone(), true, false)]),
        &[
            "'apple'|2|60",
            "'banana'|2|100",
            "'cherry'|1|30",
            "'date'|1|100",
            "'kiwi'|1|70",
            "'special offer'|1|60",
            "NULL|2|130",
        ],
    );
    // NULLS FIRST, descending
    check(
        &tables(),
        &limit(sort(grouped, vec![(s, false, true)]), 0, Some(3)),
        &["NULL|2|130", "'special offer'|1|60", "'kiwi'|1|70"],
    );
}

#[test]
fn group_by_boolean_with_distinct_and_min() {
    let plan = aggregate(
        scan_t(),
        vec![col(6)],
        vec![
            agg(F::Count, Some(col(0)), true),
            agg(F::Min, Some(col(2)), false),
            agg(F::Max, Some(col(3)), false),
            agg(F::Avg, Some(col(4)), false),
        ],
    );
    check_unordered(
        &tables(),
        &plan,
        &[
            "TRUE|5|'apple'|9.95|3.0625",
            "FALSE|3|'banana'|3.20|0.75",
            "NULL|0|'cherry'|10.00|4.0",
        ],
    );
}

#[test]
fn group_by_two_keys_and_expression() {
    // GROUP BY a % 2, flag over rows with a non-NULL a
    let parity = bin(col(0), BinaryOp::Modulo, lit_i32(2));
    let plan = aggregate(
        filter(scan_t(), Expr::IsNotNull(Box::new(col(0)))),
        vec![parity, col(6)],
        vec![
            agg(F::CountStar, None, false),
            agg(F::Sum, Some(col(1)), false),
        ],
    );
    check_unordered(
        &tables(),
        &plan,
        &[
            "1|TRUE|2|60",
            "0|FALSE|1|20",
            "1|FALSE|2|140",
            "0|TRUE|3|230",
        ],
    );
}

#[test]
fn having_and_final_projection() {
    // SELECT s, count(*) * 10 FROM t GROUP BY s HAVING count(*) > 1 ORDER BY s
    let grouped = aggregate(scan_t(), vec![col(2)], vec![agg(F::CountStar, None, false)]);
    let count = Expr::column(1, "count(*)");
    let having = filter(grouped, bin(count.clone(), BinaryOp::Gt, lit_i64(1)));
    let s = Expr::column(0, "s");
    let projected = project(
        having,
        vec![s.clone(), bin(count, BinaryOp::Multiply, lit_i64(10))],
    );
    let plan = sort(projected, vec![(s, true, true)]);
    check(&tables(), &plan, &["NULL|20", "'apple'|20", "'banana'|20"]);
}

#[test]
fn decimal_product_sum() {
    // sum(d * d) and avg(d * d): the in-place fast path
    let dd = bin(col(3), BinaryOp::Multiply, col(3));
    assert_eq!(dd.data_type(&t_schema()), DataType::Decimal128(18, 4));
    let all = aggregate(scan_t(), vec![], vec![agg(F::Sum, Some(dd.clone()), false)]);
    check(&tables(), &all, &["267.9476"]);
    let filtered = aggregate(
        filter(scan_t(), bin(col(0), BinaryOp::Gt, lit_i32(1))),
        vec![],
        vec![
            agg(F::Sum, Some(dd.clone()), false),
            agg(F::Avg, Some(dd.clone()), false),
        ],
    );
    let avg = 115.6976f64 / 6.0;
    let expect = format!("115.6976|{avg:?}");
    let out = execute(&filtered, &tables(), &executor(2), &options(3)).unwrap();
    let got = rows(&out);
    let (sum, avg_got) = got[0].split_once('|').unwrap();
    assert_eq!(sum, "115.6976");
    assert!(
        (avg_got.parse::<f64>().unwrap() - avg).abs() < 1e-9,
        "{got:?} vs {expect}"
    );
    // the same through the general path (with a group key)
    let grouped = aggregate(
        filter(scan_t(), bin(col(0), BinaryOp::Gt, lit_i32(1))),
        vec![Expr::Literal(ScalarValue::Int64(1))],
        vec![agg(F::Sum, Some(dd), false)],
    );
    check(&tables(), &grouped, &["1|115.6976"]);
}

#[test]
fn sum_overflow_is_an_error() {
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, true)]));
    let values = |vs: &[i64]| LogicalPlan::Values {
        rows: vs.iter().map(|v| vec![ScalarValue::Int64(*v)]).collect(),
        schema: Arc::clone(&schema),
    };
    let sum = |input| {
        aggregate(
            input,
            vec![],
            vec![agg(F::Sum, Some(Expr::column(0, "x")), false)],
        )
    };
    // intermediate overflow does not matter, the total fits
    check(
        &tables(),
        &sum(values(&[i64::MAX, 1, -1])),
        &[i64::MAX.to_string().as_str()],
    );
    let err = execute(
        &sum(values(&[i64::MAX, 1])),
        &tables(),
        &executor(2),
        &options(1),
    )
    .unwrap_err();
    assert!(matches!(err, Error::Execution(_)), "{err:?}");
    assert!(err.to_string().contains("Overflow"), "{err}");
}
