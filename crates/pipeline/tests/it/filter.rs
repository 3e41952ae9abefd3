//! WHERE: AND / OR / NOT, NULLs, two-column terms, step grouping and order.

use arrow::datatypes::DataType;
use weir_pipeline::{Error, build_steps, execute};
use weir_planner::{BinaryOp, Expr, ScalarValue};

use crate::common::*;

/// `SELECT b FROM t WHERE predicate`, expecting these `b`s in table order.
fn check_where(predicate: Expr, expect_b: &[i64]) {
    let plan = project(filter(scan_t(), predicate), vec![col(1)]);
    let expect: Vec<String> = expect_b.iter().map(|b| b.to_string()).collect();
    let expect: Vec<&str> = expect.iter().map(String::as_str).collect();
    check(&tables(), &plan, &expect);
}

#[test]
fn comparison_and_conjunction() {
    check_where(
        bin(col(0), BinaryOp::Gt, lit_i32(1)),
        &[20, 40, 50, 80, 90, 100],
    );
    check_where(
        and(
            bin(col(0), BinaryOp::Gt, lit_i32(1)),
            bin(col(1), BinaryOp::Lt, lit_i64(60)),
        ),
        &[20, 40, 50],
    );
}

#[test]
fn not_excludes_null() {
    // 3VL: NOT (NULL > 1) is NULL, so rows with a NULL `a` stay out
    check_where(
        Expr::Not(Box::new(bin(col(0), BinaryOp::Gt, lit_i32(1)))),
        &[10, 60],
    );
    check_where(Expr::Not(Box::new(col(6))), &[20, 60, 80]);
    check_where(col(6), &[10, 40, 50, 90, 100]);
}

#[test]
fn or_is_not_split() {
    // a > 3 OR s = 'kiwi': row 6 has a NULL `a` and passes through the OR
    let or_term = or(
        bin(col(0), BinaryOp::Gt, lit_i32(3)),
        bin(col(2), BinaryOp::Eq, lit_str("kiwi")),
    );
    check_where(or_term.clone(), &[40, 50, 70, 100]);
    check_where(
        or(
            bin(col(0), BinaryOp::Gt, lit_i32(3)),
            Expr::IsNull(Box::new(col(0))),
        ),
        &[30, 40, 50, 70, 100],
    );
    // with another conjunct over a, the OR still stays one step of its own
    let predicate = and(or_term, bin(col(1), BinaryOp::GtEq, lit_i64(50)));
    check_where(predicate.clone(), &[50, 70, 100]);
    let steps = build_steps(&predicate, &t_schema());
    assert_eq!(steps.len(), 2);
    let or_step = steps
        .iter()
        .find(|s| s.columns() == [0, 2])
        .expect("an OR step over a, s");
    assert!(matches!(
        or_step.predicate(),
        Expr::Binary {
            op: BinaryOp::Or,
            ..
        }
    ));
}

#[test]
fn two_column_terms() {
    // CAST(a AS BIGINT) = b / 10
    let a = Expr::Cast {
        expr: Box::new(col(0)),
        to: DataType::Int64,
        try_cast: false,
    };
    check_where(
        bin(a, BinaryOp::Eq, bin(col(1), BinaryOp::Divide, lit_i64(10))),
        &[10, 20, 40, 50, 100],
    );
    check_where(
        bin(
            Expr::Cast {
                expr: Box::new(col(0)),
                to: DataType::Int64,
                try_cast: false,
            },
            BinaryOp::Lt,
            bin(col(1), BinaryOp::Divide, lit_i64(20)),
        ),
        &[60, 80, 90],
    );
}

#[test]
fn in_like_between_nulls() {
    let in_list = |negated| Expr::InList {
        expr: Box::new(col(0)),
        list: vec![ScalarValue::Int32(1), ScalarValue::Int32(2)].into(),
        negated,
    };
    check_where(in_list(false), &[10, 20, 60, 90]);
    check_where(in_list(true), &[40, 50, 80, 100]);
    let like = Expr::Like {
        expr: Box::new(col(2)),
        pattern: "%an%".into(),
        negated: false,
        case_insensitive: false,
        escape: None,
    };
    check_where(like, &[20, 80]);
    let dec = |v| Expr::Literal(ScalarValue::Decimal128(v, 15, 2));
    check_where(
        and(
            bin(col(3), BinaryOp::GtEq, dec(100)),
            bin(col(3), BinaryOp::LtEq, dec(500)),
        ),
        &[10, 20, 60, 80],
    );
    check_where(Expr::IsNull(Box::new(col(2))), &[40, 90]);
    check_where(Expr::Literal(ScalarValue::Null(DataType::Boolean)), &[]);
    check_where(
        Expr::Literal(ScalarValue::Boolean(true)),
        &[10, 20, 30, 40, 50, 60, 70, 80, 90, 100],
    );
    check_where(Expr::Literal(ScalarValue::Boolean(false)), &[]);
}

#[test]
fn many_terms() {
    let predicate = [
        bin(col(0), BinaryOp::Gt, lit_i32(1)),
        bin(col(2), BinaryOp::NotEq, lit_str("apple")),
        bin(col(1), BinaryOp::GtEq, lit_i64(20)),
        Expr::IsNotNull(Box::new(col(4))),
        bin(
            col(5),
            BinaryOp::Lt,
            Expr::Literal(ScalarValue::Date32(9150)),
        ),
    ]
    .into_iter()
    .reduce(and)
    .unwrap();
    check_where(predicate, &[20, 100]);
}

#[test]
fn fallible_terms_see_only_survivors() {
    // 100 / (b - 100) divides by zero on b = 100, which `b <> 100` removes,
    // whichever order the query writes them in
    let division = bin(
        bin(
            lit_i64(100),
            BinaryOp::Divide,
            bin(col(1), BinaryOp::Minus, lit_i64(100)),
        ),
        BinaryOp::Lt,
        lit_i64(-2),
    );
    let guard = bin(col(1), BinaryOp::NotEq, lit_i64(100));
    check_where(and(guard.clone(), division.clone()), &[70, 80, 90]);
    let steps = build_steps(&and(division.clone(), guard), &t_schema());
    assert!(steps.last().unwrap().is_fallible());
    assert!(!steps[0].is_fallible());

    // unguarded, the first error comes back intact
    let plan = project(filter(scan_t(), division), vec![col(1)]);
    for threads in [1, 2] {
        let err = execute(&plan, &tables(), &executor(threads), &options(3)).unwrap_err();
        assert!(matches!(err, Error::Eval(_)), "{err:?}");
        assert!(
            err.to_string().to_lowercase().contains("division by zero"),
            "{err}"
        );
    }
}

#[test]
fn steps_are_grouped_by_columns_and_ordered() {
    let like = Expr::Like {
        expr: Box::new(col(2)),
        pattern: "%special%".into(),
        negated: false,
        case_insensitive: false,
        escape: None,
    };
    let cast_a = Expr::Cast {
        expr: Box::new(col(0)),
        to: DataType::Int64,
        try_cast: false,
    };
    let predicate = [
        like,
        bin(col(0), BinaryOp::Gt, lit_i32(1)),
        or(
            bin(col(2), BinaryOp::Eq, lit_str("x")),
            bin(col(0), BinaryOp::Eq, lit_i32(1)),
        ),
        bin(col(1), BinaryOp::Divide, lit_i64(0)),
        bin(col(0), BinaryOp::Lt, lit_i32(5)),
        bin(cast_a, BinaryOp::Eq, col(1)),
    ]
    .into_iter()
    .map(|e| {
        if matches!(
            &e,
            Expr::Binary {
                op: BinaryOp::Divide,
                ..
            }
        ) {
            bin(e, BinaryOp::Gt, lit_i64(1))
        } else {
            e
        }
    })
    .reduce(and)
    .unwrap();
    let steps = build_steps(&predicate, &t_schema());
    let columns: Vec<&[usize]> = steps.iter().map(|s| s.columns()).collect();
    // a = b (cheap, selective), the BETWEEN pair on a, the OR, the LIKE,
    // then the division
    assert_eq!(columns, vec![&[0, 1][..], &[0], &[0, 2], &[2], &[1]]);
    assert_eq!(steps[1].terms().len(), 2, "a > 1 and a < 5 are one step");
    assert!(
        (steps[1].selectivity() - 0.25).abs() < 1e-9,
        "a BETWEEN pair"
    );
    assert!(
        steps[3].cost() > steps[1].cost(),
        "LIKE costs more than integer compares"
    );
    assert!(steps[4].is_fallible());
    for w in steps[..4].windows(2) {
        assert!(w[0].rank() >= w[1].rank());
    }
}

/// `range`: a table of the numbers below a million, in order, in
/// batches of 300,000 rows (its zones are tight).
fn million() -> (Tables, weir_planner::LogicalPlan) {
    let schema = std::sync::Arc::new(arrow::datatypes::Schema::new(vec![
        arrow::datatypes::Field::new("range", DataType::Int64, false),
    ]));
    let batches = (0..1_000_000i64)
        .step_by(300_000)
        .map(|from| {
            let values =
                arrow::array::Int64Array::from_iter_values(from..(from + 300_000).min(1_000_000));
            arrow::array::RecordBatch::try_new(schema.clone(), vec![std::sync::Arc::new(values)])
                .unwrap()
        })
        .collect();
    let table = weir_pipeline::TableData::new(schema.clone(), batches);
    (tables().with("range", table), scan("range", schema))
}

#[test]
fn blocks_whose_zones_fail_a_term_are_not_read() {
    let r = || Expr::column(0, "range");
    // (predicate, rows counted, scan rows out at most)
    let cases = [
        (
            and(
                bin(r(), BinaryOp::GtEq, lit_i64(500_000)),
                bin(r(), BinaryOp::Lt, lit_i64(500_100)),
            ),
            "100",
            4096,
        ),
        // the constant on the left
        (bin(lit_i64(999_990), BinaryOp::Lt, r()), "9", 2048),
        (bin(r(), BinaryOp::Eq, lit_i64(123_456)), "1", 2048),
        (bin(r(), BinaryOp::Lt, lit_i64(0)), "0", 0),
        // no zone test: every row read
        (
            bin(
                bin(r(), BinaryOp::Modulo, lit_i64(3)),
                BinaryOp::Eq,
                lit_i64(0),
            ),
            "333334",
            1_000_000,
        ),
    ];
    let (sources, range) = million();
    for (predicate, count, most) in cases {
        let plan = count_star(filter(range.clone(), predicate.clone()));
        for threads in [1, 2] {
            let opts = weir_pipeline::ExecOptions {
                morsel_rows: 10_000,
                analyze: true,
                ..weir_pipeline::ExecOptions::default()
            };
            let out = execute(&plan, &sources, &executor(threads), &opts).unwrap();
            assert_eq!(rows(&out), vec![count], "{predicate}");
            let profile = out.profile.expect("a profile");
            let scan = &profile.operators[0];
            assert_eq!(scan.rows_in, 1_000_000, "{profile}");
            assert!(scan.rows_out <= most, "{predicate}: {profile}");
        }
    }
}
