//! Data-driven tests of the evaluator.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int32Array,
    Int64Array, NullArray, RecordBatch, StringArray, TimestampMicrosecondArray,
};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use weir_planner::{BinaryOp, Expr, ScalarFunction, ScalarValue as S};

use super::*;

const TS: DataType = DataType::Timestamp(TimeUnit::Microsecond, None);

/// The test table: 4 rows, a column of every canonical type, NULLs in row 2.
fn table() -> RecordBatch {
    let cols: Vec<(&str, ArrayRef)> = vec![
        (
            "b",
            Arc::new(BooleanArray::from(vec![
                Some(true),
                Some(false),
                None,
                Some(true),
            ])),
        ),
        (
            "i",
            Arc::new(Int32Array::from(vec![
                Some(1),
                Some(-2),
                None,
                Some(i32::MAX),
            ])),
        ),
        (
            "l",
            Arc::new(Int64Array::from(vec![Some(10), Some(0), None, Some(-5)])),
        ),
        (
            "f",
            Arc::new(Float64Array::from(vec![
                Some(1.5),
                Some(-0.0),
                None,
                Some(2.5),
            ])),
        ),
        (
            "d",
            Arc::new(
                Decimal128Array::from(vec![Some(12345), Some(-5), None, Some(100)])
                    .with_precision_and_scale(10, 2)
                    .unwrap(),
            ),
        ),
        (
            "s",
            Arc::new(StringArray::from(vec![
                Some("hello"),
                Some("special requests"),
                None,
                Some("Ünïcode_%"),
            ])),
        ),
        (
            "dt",
            Arc::new(Date32Array::from(vec![Some(8766), Some(0), None, Some(-1)])),
        ),
        (
            "ts",
            Arc::new(TimestampMicrosecondArray::from(vec![
                Some(757_419_845_123_456), // 1994-01-01 10:24:05.123456
                Some(0),
                None,
                Some(-1),
            ])),
        ),
        ("n", Arc::new(NullArray::new(4))),
        (
            "z",
            Arc::new(Int32Array::from(vec![Some(0), Some(0), None, Some(1)])),
        ),
    ];
    let fields: Vec<Field> = cols
        .iter()
        .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
        .collect();
    RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        cols.into_iter().map(|(_, a)| a).collect(),
    )
    .unwrap()
}

fn col(name: &str) -> Expr {
    let t = table();
    let idx = t.schema().index_of(name).unwrap();
    Expr::column(idx, name)
}

fn lit(v: S) -> Expr {
    Expr::Literal(v)
}

fn bin(l: Expr, op: BinaryOp, r: Expr) -> Expr {
    Expr::binary(l, op, r)
}

fn func(f: ScalarFunction, args: Vec<Expr>) -> Expr {
    Expr::Function { func: f, args }
}

fn cast(e: Expr, to: DataType) -> Expr {
    Expr::Cast {
        expr: Box::new(e),
        to,
        try_cast: false,
    }
}

fn null() -> S {
    S::Null(DataType::Null)
}

fn norm(v: S) -> S {
    if v.is_null() { null() } else { v }
}

fn values(a: &dyn Array) -> Vec<S> {
    (0..a.len())
        .map(|i| norm(scalar_from_array(a, i).unwrap()))
        .collect()
}

/// Evaluates `e` over `batch` and compares with `expected` (NULLs of any
/// type compare equal).
fn check_on(batch: &RecordBatch, e: &Expr, expected: Vec<S>) {
    let out = evaluate(e, batch).unwrap_or_else(|err| panic!("{e}: {err}"));
    assert_eq!(out.len(), batch.num_rows(), "{e}");
    let expected: Vec<S> = expected.into_iter().map(norm).collect();
    assert_eq!(values(out.as_ref()), expected, "{e}");
    let declared = e.data_type(batch.schema_ref());
    if declared != DataType::Null {
        assert_eq!(out.data_type(), &declared, "{e}: type");
    }
}

fn check(e: Expr, expected: Vec<S>) {
    check_on(&table(), &e, expected)
}

fn check_err(e: Expr, needle: &str) {
    match evaluate(&e, &table()) {
        Ok(a) => panic!("{e}: expected an error containing {needle:?}, got {a:?}"),
        Err(err) => assert!(
            err.to_string().contains(needle),
            "{e}: error {err} does not contain {needle:?}"
        ),
    }
}

fn b(v: bool) -> S {
    S::Boolean(v)
}
fn i(v: i32) -> S {
    S::Int32(v)
}
fn l(v: i64) -> S {
    S::Int64(v)
}
fn f(v: f64) -> S {
    S::Float64(v)
}
fn st(v: &str) -> S {
    S::Utf8(v.into())
}
fn dec(v: i128, p: u8, s: i8) -> S {
    S::Decimal128(v, p, s)
}

// ---------------------------------------------------------------- comparisons

#[test]
fn comparisons_on_every_type() {
    use BinaryOp::*;
    let n = null();
    check(
        bin(col("i"), Gt, lit(i(0))),
        vec![b(true), b(false), n.clone(), b(true)],
    );
    check(
        bin(lit(i(0)), Lt, col("i")),
        vec![b(true), b(false), n.clone(), b(true)],
    );
    check(
        bin(col("i"), Eq, col("i")),
        vec![b(true), b(true), n.clone(), b(true)],
    );
    check(
        bin(col("l"), NotEq, lit(l(0))),
        vec![b(true), b(false), n.clone(), b(true)],
    );
    check(
        bin(col("l"), LtEq, lit(l(0))),
        vec![b(false), b(true), n.clone(), b(true)],
    );
    check(
        bin(col("l"), GtEq, lit(l(10))),
        vec![b(true), b(false), n.clone(), b(false)],
    );
    // -0.0 = 0.0, as in DuckDB
    check(
        bin(col("f"), Eq, lit(f(0.0))),
        vec![b(false), b(true), n.clone(), b(false)],
    );
    check(
        bin(col("d"), Gt, lit(dec(0, 10, 2))),
        vec![b(true), b(false), n.clone(), b(true)],
    );
    check(
        bin(col("d"), Eq, lit(dec(100, 10, 2))),
        vec![b(false), b(false), n.clone(), b(true)],
    );
    check(
        bin(col("s"), Lt, lit(st("i"))),
        vec![b(true), b(false), n.clone(), b(false)],
    );
    check(
        bin(col("s"), Eq, lit(st("hello"))),
        vec![b(true), b(false), n.clone(), b(false)],
    );
    check(
        bin(col("dt"), GtEq, lit(S::Date32(0))),
        vec![b(true), b(true), n.clone(), b(false)],
    );
    check(
        bin(col("ts"), Lt, lit(S::TimestampMicros(0))),
        vec![b(false), b(false), n.clone(), b(true)],
    );
    check(
        bin(col("b"), Eq, lit(b(true))),
        vec![b(true), b(false), n.clone(), b(true)],
    );
    check(
        bin(col("b"), Gt, col("b")),
        vec![b(false), b(false), n.clone(), b(false)],
    );
    // NULL operands
    check(
        bin(col("i"), Eq, lit(S::Null(DataType::Int32))),
        vec![n.clone(); 4],
    );
    check(bin(col("n"), Eq, lit(i(1))), vec![n.clone(); 4]);
    check(bin(lit(null()), Eq, lit(null())), vec![n.clone(); 4]);
    // constant comparison broadcasts
    check(bin(lit(i(1)), Lt, lit(i(2))), vec![b(true); 4]);
}

#[test]
fn mixed_decimal_scales_compare() {
    // robustness: the planner makes types equal, but differing decimals work
    check(
        bin(col("d"), BinaryOp::Eq, lit(dec(1, 5, 0))),
        vec![b(false), b(false), null(), b(true)],
    );
}

// ---------------------------------------------------------------- logic

fn three_valued() -> RecordBatch {
    let vals = [Some(true), Some(false), None];
    let mut a = Vec::new();
    let mut c = Vec::new();
    for x in vals {
        for y in vals {
            a.push(x);
            c.push(y);
        }
    }
    RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("a", DataType::Boolean, true),
            Field::new("c", DataType::Boolean, true),
        ])),
        vec![
            Arc::new(BooleanArray::from(a)),
            Arc::new(BooleanArray::from(c)),
        ],
    )
    .unwrap()
}

fn ob(v: Option<bool>) -> S {
    v.map_or(null(), S::Boolean)
}

#[test]
fn and_or_not_truth_tables() {
    let t = three_valued();
    let (a, c) = (Expr::column(0, "a"), Expr::column(1, "c"));
    let (tr, fa, nu) = (Some(true), Some(false), None);
    // rows: (T,T) (T,F) (T,N) (F,T) (F,F) (F,N) (N,T) (N,F) (N,N)
    let and = [tr, fa, nu, fa, fa, fa, nu, fa, nu];
    let or = [tr, tr, tr, tr, fa, nu, tr, nu, nu];
    check_on(
        &t,
        &bin(a.clone(), BinaryOp::And, c.clone()),
        and.map(ob).to_vec(),
    );
    check_on(
        &t,
        &bin(a.clone(), BinaryOp::Or, c.clone()),
        or.map(ob).to_vec(),
    );
    let not_a = [fa, fa, fa, tr, tr, tr, nu, nu, nu];
    check_on(&t, &Expr::Not(Box::new(a.clone())), not_a.map(ob).to_vec());
    // with constants on the left and right
    for (k, kv) in [
        (lit(b(true)), tr),
        (lit(b(false)), fa),
        (lit(S::Null(DataType::Boolean)), nu),
        (lit(null()), nu),
    ] {
        let cv = [tr, fa, nu, tr, fa, nu, tr, fa, nu];
        let and_expected: Vec<S> = cv.iter().map(|y| ob(kleene_and(kv, *y))).collect();
        let or_expected: Vec<S> = cv.iter().map(|y| ob(kleene_or(kv, *y))).collect();
        check_on(
            &t,
            &bin(k.clone(), BinaryOp::And, c.clone()),
            and_expected.clone(),
        );
        check_on(&t, &bin(c.clone(), BinaryOp::And, k.clone()), and_expected);
        check_on(
            &t,
            &bin(k.clone(), BinaryOp::Or, c.clone()),
            or_expected.clone(),
        );
        check_on(&t, &bin(c.clone(), BinaryOp::Or, k.clone()), or_expected);
    }
    // predicates: NULL is false, no null buffer
    let p = evaluate_predicate(&bin(a, BinaryOp::Or, c), &t).unwrap();
    assert_eq!(p.null_count(), 0);
    assert!(p.nulls().is_none());
    let got: Vec<bool> = p.iter().map(|v| v.unwrap()).collect();
    assert_eq!(got, or.map(|v| v == Some(true)).to_vec());
}

fn kleene_and(x: Option<bool>, y: Option<bool>) -> Option<bool> {
    match (x, y) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

fn kleene_or(x: Option<bool>, y: Option<bool>) -> Option<bool> {
    match (x, y) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), Some(false)) => Some(false),
        _ => None,
    }
}

#[test]
fn is_null_and_is_not_null() {
    let isn = |e| Expr::IsNull(Box::new(e));
    let isnn = |e| Expr::IsNotNull(Box::new(e));
    for c in ["b", "i", "l", "f", "d", "s", "dt", "ts"] {
        check(isn(col(c)), vec![b(false), b(false), b(true), b(false)]);
        check(isnn(col(c)), vec![b(true), b(true), b(false), b(true)]);
    }
    check(isn(col("n")), vec![b(true); 4]);
    check(isnn(lit(i(1))), vec![b(true); 4]);
    check(isn(lit(null())), vec![b(true); 4]);
    // over a NULL comparison result
    check(
        isn(bin(col("i"), BinaryOp::Gt, lit(i(0)))),
        vec![b(false), b(false), b(true), b(false)],
    );
}

#[test]
fn in_list_three_valued() {
    let inl = |e: Expr, list: Vec<S>, negated| Expr::InList {
        expr: Box::new(e),
        list: list.into(),
        negated,
    };
    let n = null();
    check(
        inl(col("i"), vec![i(1), i(5)], false),
        vec![b(true), b(false), n.clone(), b(false)],
    );
    check(
        inl(col("i"), vec![i(1), i(5)], true),
        vec![b(false), b(true), n.clone(), b(true)],
    );
    // a NULL item: no match gives NULL
    let with_null = vec![i(1), S::Null(DataType::Int32)];
    check(
        inl(col("i"), with_null.clone(), false),
        vec![b(true), n.clone(), n.clone(), n.clone()],
    );
    check(
        inl(col("i"), with_null, true),
        vec![b(false), n.clone(), n.clone(), n.clone()],
    );
    check(
        inl(col("s"), vec![st("hello"), st("x")], false),
        vec![b(true), b(false), n.clone(), b(false)],
    );
    check(
        inl(col("d"), vec![dec(100, 10, 2)], false),
        vec![b(false), b(false), n.clone(), b(true)],
    );
    check(inl(lit(i(3)), vec![i(3)], false), vec![b(true); 4]);
    check(
        inl(lit(S::Null(DataType::Int32)), vec![i(3)], true),
        vec![n.clone(); 4],
    );
    check(inl(col("n"), vec![i(3)], false), vec![n.clone(); 4]);
    // the predicate form
    let p = evaluate_predicate(
        &inl(col("i"), vec![i(-2), S::Null(DataType::Int32)], true),
        &table(),
    )
    .unwrap();
    assert_eq!(p, BooleanArray::from(vec![false, false, false, false]));
}

// ---------------------------------------------------------------- arithmetic

#[test]
fn integer_arithmetic() {
    use BinaryOp::*;
    let n = null();
    check(
        bin(col("l"), Plus, lit(l(1))),
        vec![l(11), l(1), n.clone(), l(-4)],
    );
    check(
        bin(col("l"), Minus, lit(l(1))),
        vec![l(9), l(-1), n.clone(), l(-6)],
    );
    check(
        bin(lit(l(3)), Multiply, col("l")),
        vec![l(30), l(0), n.clone(), l(-15)],
    );
    // integer division truncates; modulo takes the dividend's sign
    check(
        bin(col("l"), Divide, lit(l(3))),
        vec![l(3), l(0), n.clone(), l(-1)],
    );
    check(
        bin(col("l"), Modulo, lit(l(3))),
        vec![l(1), l(0), n.clone(), l(-2)],
    );
    check(
        bin(col("i"), Minus, col("i")),
        vec![i(0), i(0), n.clone(), i(0)],
    );
    check(
        bin(col("i"), Plus, lit(S::Null(DataType::Int32))),
        vec![n.clone(); 4],
    );
    check(bin(col("i"), Plus, col("n")), vec![n.clone(); 4]);
    check(bin(lit(i(2)), Multiply, lit(i(3))), vec![i(6); 4]);
}

#[test]
fn integer_overflow_is_an_error_naming_the_values() {
    use BinaryOp::*;
    check_err(
        bin(col("i"), Plus, lit(i(1))),
        "Overflow in addition of INT32 (2147483647 + 1)",
    );
    check_err(bin(col("i"), Multiply, lit(i(2))), "2147483647 * 2");
    check_err(bin(lit(l(i64::MIN)), Minus, col("l")), "Out of Range");
    check_err(bin(lit(i(i32::MIN)), Divide, lit(i(-1))), "Out of Range");
    // MIN % -1 is 0, not an overflow
    check(bin(lit(i(i32::MIN)), Modulo, lit(i(-1))), vec![i(0); 4]);
    check_err(Expr::Negative(Box::new(lit(l(i64::MIN)))), "Out of Range");
}

#[test]
fn division_by_zero_is_an_error() {
    use BinaryOp::*;
    check_err(
        bin(col("l"), Divide, col("z").clone_cast(DataType::Int64)),
        "Division by zero",
    );
    check_err(bin(col("i"), Modulo, lit(i(0))), "Division by zero");
    // DOUBLE (and DECIMAL, which divides as DOUBLE) is IEEE, as in DuckDB
    for e in [
        bin(col("f"), Divide, lit(f(0.0))),
        bin(col("d"), Divide, lit(dec(0, 10, 2))),
    ] {
        let a = evaluate(&e, &table()).expect("IEEE division does not fail");
        let a = a
            .as_any()
            .downcast_ref::<arrow::array::Float64Array>()
            .expect("DOUBLE result");
        assert!(
            a.iter().flatten().all(|v| v.is_infinite() || v.is_nan()),
            "{e}: {a:?}"
        );
        assert!(
            a.iter().flatten().count() > 0,
            "{e}: some rows are not NULL"
        );
    }
    // NULL / 0 is NULL: the zero is never used
    check(
        bin(lit(S::Null(DataType::Int32)), Divide, lit(i(0))),
        vec![null(); 4],
    );
    let rows_null_only = bin(
        bin(col("z"), Plus, col("n").clone_cast(DataType::Int32)),
        Divide,
        lit(i(0)),
    );
    check(rows_null_only, vec![null(); 4]);
}

trait CastExt {
    fn clone_cast(&self, to: DataType) -> Expr;
}
impl CastExt for Expr {
    fn clone_cast(&self, to: DataType) -> Expr {
        cast(self.clone(), to)
    }
}

#[test]
fn float_arithmetic() {
    use BinaryOp::*;
    let n = null();
    check(
        bin(col("f"), Plus, lit(f(1.0))),
        vec![f(2.5), f(1.0), n.clone(), f(3.5)],
    );
    check(
        bin(col("f"), Multiply, col("f")),
        vec![f(2.25), f(0.0), n.clone(), f(6.25)],
    );
    check(
        bin(col("f"), Divide, lit(f(2.0))),
        vec![f(0.75), f(-0.0), n.clone(), f(1.25)],
    );
    check(
        bin(col("f"), Modulo, lit(f(1.0))),
        vec![f(0.5), f(-0.0), n.clone(), f(0.5)],
    );
    check(
        bin(lit(f(1e308)), Multiply, lit(f(10.0))),
        vec![f(f64::INFINITY); 4],
    );
    check(
        Expr::Negative(Box::new(col("f"))),
        vec![f(-1.5), f(0.0), n, f(-2.5)],
    );
}

#[test]
fn decimal_arithmetic_has_the_planned_type() {
    use BinaryOp::*;
    let n = null();
    // DECIMAL(10,2) + DECIMAL(5,1) -> DECIMAL(11,2)
    check(
        bin(col("d"), Plus, lit(dec(15, 5, 1))),
        vec![
            dec(12495, 11, 2),
            dec(145, 11, 2),
            n.clone(),
            dec(250, 11, 2),
        ],
    );
    check(
        bin(col("d"), Minus, col("d")),
        vec![dec(0, 11, 2), dec(0, 11, 2), n.clone(), dec(0, 11, 2)],
    );
    // DECIMAL(10,2) * DECIMAL(5,1) -> DECIMAL(15,3), as DuckDB
    check(
        bin(col("d"), Multiply, lit(dec(15, 5, 1))),
        vec![
            dec(185175, 15, 3),
            dec(-75, 15, 3),
            n.clone(),
            dec(1500, 15, 3),
        ],
    );
    // / and % give DOUBLE
    check(
        bin(col("d"), Divide, lit(dec(200, 10, 2))),
        vec![f(61.725), f(-0.025), n.clone(), f(0.5)],
    );
    check(
        bin(col("d"), Modulo, lit(dec(100, 10, 2))),
        vec![f(123.45 % 1.0), f(-0.05 % 1.0), n.clone(), f(0.0)],
    );
    check(
        Expr::Negative(Box::new(col("d"))),
        vec![dec(-12345, 10, 2), dec(5, 10, 2), n, dec(-100, 10, 2)],
    );
    // overflow of the declared precision
    check_err(
        bin(
            lit(dec(10i128.pow(37), 38, 0)),
            Multiply,
            lit(dec(100, 3, 0)),
        ),
        "Out of Range",
    );
}

#[test]
fn date_arithmetic() {
    use BinaryOp::*;
    let n = null();
    check(
        bin(col("dt"), Plus, lit(i(1))),
        vec![S::Date32(8767), S::Date32(1), n.clone(), S::Date32(0)],
    );
    check(
        bin(col("dt"), Minus, lit(l(366))),
        vec![S::Date32(8400), S::Date32(-366), n.clone(), S::Date32(-367)],
    );
    check(
        bin(col("dt"), Minus, col("dt")),
        vec![i(0), i(0), n.clone(), i(0)],
    );
    check(
        bin(col("dt"), Minus, lit(S::Date32(0))),
        vec![i(8766), i(0), n.clone(), i(-1)],
    );
    check_err(bin(col("dt"), Plus, lit(l(i64::MAX))), "Out of Range");
}

#[test]
fn string_concatenation() {
    let n = null();
    check(
        bin(col("s"), BinaryOp::Concat, lit(st("!"))),
        vec![
            st("hello!"),
            st("special requests!"),
            n.clone(),
            st("Ünïcode_%!"),
        ],
    );
    check(
        bin(lit(st(">")), BinaryOp::Concat, col("s")),
        vec![
            st(">hello"),
            st(">special requests"),
            n.clone(),
            st(">Ünïcode_%"),
        ],
    );
    check(
        bin(col("s"), BinaryOp::Concat, lit(S::Null(DataType::Utf8))),
        vec![n.clone(); 4],
    );
    check(
        bin(lit(st("a")), BinaryOp::Concat, lit(st("b"))),
        vec![st("ab"); 4],
    );
}

// ---------------------------------------------------------------- LIKE

fn like_on(
    values: &[Option<&str>],
    pattern: &str,
    ci: bool,
    escape: Option<char>,
) -> Vec<Option<bool>> {
    let arr: ArrayRef = Arc::new(StringArray::from(values.to_vec()));
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true)])),
        vec![arr],
    )
    .unwrap();
    let e = |negated| Expr::Like {
        expr: Box::new(Expr::column(0, "s")),
        pattern: pattern.into(),
        negated,
        case_insensitive: ci,
        escape,
    };
    let pos = evaluate(&e(false), &batch).unwrap();
    let neg = evaluate(&e(true), &batch).unwrap();
    let pos: Vec<Option<bool>> = pos.as_boolean().iter().collect();
    let neg: Vec<Option<bool>> = neg.as_boolean().iter().collect();
    assert_eq!(
        neg,
        pos.iter().map(|v| v.map(|x| !x)).collect::<Vec<_>>(),
        "NOT {pattern}"
    );
    pos
}

/// A reference matcher: recursive, on characters.
fn reference_like(s: &[char], p: &[char]) -> bool {
    match p.split_first() {
        None => s.is_empty(),
        Some(('%', rest)) => (0..=s.len()).any(|k| reference_like(&s[k..], rest)),
        Some(('_', rest)) => !s.is_empty() && reference_like(&s[1..], rest),
        Some((c, rest)) => s.first() == Some(c) && reference_like(&s[1..], rest),
    }
}

#[test]
fn like_patterns() {
    let data = [
        Some("hello"),
        Some("special requests"),
        None,
        Some(""),
        Some("Ünïcode_%"),
        Some("sp"),
        Some("requests special"),
        Some("xspecialx"),
        Some("abcabc"),
        Some("aé"),
    ];
    let patterns = [
        "%special%",
        "%special%requests%",
        "special%",
        "%special",
        "hello",
        "h_llo",
        "h%o",
        "%",
        "%%",
        "_",
        "__",
        "",
        "%e_u%",
        "a_",
        "a__",
        "%abc",
        "abc%abc",
        "%b%c%",
        "_%_",
        "%sts",
        "sp%",
        "%Ü%",
        "Ü_ï%",
        "s%l%s",
        "%c_",
    ];
    for p in patterns {
        let got = like_on(&data, p, false, None);
        let pc: Vec<char> = p.chars().collect();
        let expected: Vec<Option<bool>> = data
            .iter()
            .map(|v| v.map(|s| reference_like(&s.chars().collect::<Vec<_>>(), &pc)))
            .collect();
        assert_eq!(got, expected, "pattern {p:?}");
    }
}

#[test]
fn like_escapes_and_case() {
    let data = [
        Some("100%"),
        Some("100x"),
        Some("a_b"),
        Some("axb"),
        Some("Hello"),
        None,
    ];
    let t = |v: &[Option<bool>]| v.to_vec();
    let (y, n, u) = (Some(true), Some(false), None);
    assert_eq!(
        like_on(&data, "100\\%", false, Some('\\')),
        t(&[y, n, n, n, n, u])
    );
    assert_eq!(
        like_on(&data, "%\\%", false, Some('\\')),
        t(&[y, n, n, n, n, u])
    );
    assert_eq!(
        like_on(&data, "a\\_b", false, Some('\\')),
        t(&[n, n, y, n, n, u])
    );
    assert_eq!(like_on(&data, "a_b", false, None), t(&[n, n, y, y, n, u]));
    assert_eq!(
        like_on(&data, "a#_%", false, Some('#')),
        t(&[n, n, y, n, n, u])
    );
    // without ESCAPE a backslash is an ordinary character
    assert_eq!(like_on(&[Some("a\\b")], "a\\b", false, None), vec![y]);
    // ILIKE
    assert_eq!(like_on(&data, "hello", true, None), t(&[n, n, n, n, y, u]));
    assert_eq!(like_on(&data, "%ELL%", true, None), t(&[n, n, n, n, y, u]));
    assert_eq!(like_on(&data, "hello", false, None), t(&[n, n, n, n, n, u]));
    assert_eq!(like_on(&[Some("ÜBER")], "über", true, None), vec![y]);
    // a trailing escape is an error
    let e = Expr::Like {
        expr: Box::new(col("s")),
        pattern: "abc\\".into(),
        negated: false,
        case_insensitive: false,
        escape: Some('\\'),
    };
    check_err(e, "must not end with escape character");
}

#[test]
fn contains_over_sliced_arrays_and_row_boundaries() {
    // matches that straddle two rows must not count
    let arr = StringArray::from(vec![
        Some("xxsp"),
        Some("ecial"),
        Some("special"),
        None,
        Some("aspecial"),
        Some(""),
    ]);
    let sliced = arr.slice(1, 4);
    let m = like::Like::new("%special%", false, None).unwrap();
    let full = m.evaluate(&(Arc::new(arr) as ArrayRef), false).unwrap();
    assert_eq!(
        full.iter().collect::<Vec<_>>(),
        vec![
            Some(false),
            Some(false),
            Some(true),
            None,
            Some(true),
            Some(false)
        ]
    );
    let part = m.evaluate(&(Arc::new(sliced) as ArrayRef), false).unwrap();
    assert_eq!(
        part.iter().collect::<Vec<_>>(),
        vec![Some(false), Some(true), None, Some(true)]
    );
}

// ---------------------------------------------------------------- CAST

#[test]
fn casts_from_strings() {
    let strs = |v: Vec<Option<&str>>| -> RecordBatch {
        RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true)])),
            vec![Arc::new(StringArray::from(v))],
        )
        .unwrap()
    };
    let s0 = Expr::column(0, "s");
    let t = strs(vec![Some(" 42 "), Some("-7"), None, Some("+3")]);
    check_on(
        &t,
        &cast(s0.clone(), DataType::Int32),
        vec![i(42), i(-7), null(), i(3)],
    );
    check_on(
        &t,
        &cast(s0.clone(), DataType::Int64),
        vec![l(42), l(-7), null(), l(3)],
    );
    check_on(
        &t,
        &cast(s0.clone(), DataType::Float64),
        vec![f(42.0), f(-7.0), null(), f(3.0)],
    );
    check_on(
        &t,
        &cast(s0.clone(), DataType::Decimal128(5, 1)),
        vec![dec(420, 5, 1), dec(-70, 5, 1), null(), dec(30, 5, 1)],
    );
    let t = strs(vec![Some("1.25"), Some("-1.25"), Some("1.5"), Some("1e2")]);
    check_on(
        &t,
        &cast(s0.clone(), DataType::Decimal128(5, 1)),
        vec![
            dec(13, 5, 1),
            dec(-13, 5, 1),
            dec(15, 5, 1),
            dec(1000, 5, 1),
        ],
    );
    check_on(
        &t,
        &cast(s0.clone(), DataType::Float64),
        vec![f(1.25), f(-1.25), f(1.5), f(100.0)],
    );
    let t = strs(vec![
        Some("1994-01-01"),
        Some("1970-01-01 00:00:01.5"),
        None,
        Some("true"),
    ]);
    check_on(
        &strs(vec![Some("1994-01-01")]),
        &cast(s0.clone(), DataType::Date32),
        vec![S::Date32(8766)],
    );
    check_on(
        &strs(vec![Some("1970-01-01 00:00:01.5")]),
        &cast(s0.clone(), TS),
        vec![S::TimestampMicros(1_500_000)],
    );
    check_on(
        &strs(vec![Some("true"), Some("F"), Some("1"), Some("0")]),
        &cast(s0.clone(), DataType::Boolean),
        vec![b(true), b(false), b(true), b(false)],
    );
    // errors name the value
    let err = |batch: &RecordBatch, to: DataType, needle: &str| {
        let e = cast(s0.clone(), to);
        let msg = evaluate(&e, batch).unwrap_err().to_string();
        assert!(msg.contains(needle), "{msg}");
        assert!(msg.starts_with("Conversion Error"), "{msg}");
    };
    err(
        &strs(vec![Some("abc")]),
        DataType::Int32,
        "Could not convert string 'abc' to INT32",
    );
    err(
        &strs(vec![Some("3000000000")]),
        DataType::Int32,
        "'3000000000' to INT32",
    );
    err(&strs(vec![Some("x1")]), DataType::Float64, "'x1' to DOUBLE");
    err(
        &strs(vec![Some("12.3.4")]),
        DataType::Decimal128(5, 1),
        "DECIMAL(5,1)",
    );
    err(
        &strs(vec![Some("123456")]),
        DataType::Decimal128(5, 1),
        "'123456' to DECIMAL(5,1)",
    );
    err(
        &strs(vec![Some("1994-02-30")]),
        DataType::Date32,
        "'1994-02-30' to DATE",
    );
    err(&strs(vec![Some("yesterday")]), TS, "TIMESTAMP");
    err(
        &strs(vec![Some("maybe")]),
        DataType::Boolean,
        "'maybe' to BOOL",
    );
    // a bad string in a NULL row: no error (nulls are skipped)
    let _ = t;
}

#[test]
fn casts_between_numbers() {
    let n = null();
    // DOUBLE -> INTEGER rounds half to even, as DuckDB
    let t = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("f", DataType::Float64, true)])),
        vec![Arc::new(Float64Array::from(vec![
            Some(2.5),
            Some(-2.5),
            None,
            Some(0.49),
        ]))],
    )
    .unwrap();
    let f0 = Expr::column(0, "f");
    check_on(
        &t,
        &cast(f0.clone(), DataType::Int32),
        vec![i(2), i(-2), n.clone(), i(0)],
    );
    check_on(
        &t,
        &cast(f0.clone(), DataType::Int64),
        vec![l(2), l(-2), n.clone(), l(0)],
    );
    check_on(
        &t,
        &cast(f0.clone(), DataType::Decimal128(4, 1)),
        vec![dec(25, 4, 1), dec(-25, 4, 1), n.clone(), dec(5, 4, 1)],
    );
    check_err(
        cast(lit(f(1e20)), DataType::Int32),
        "out of range for the destination type INT32",
    );
    check_err(cast(lit(f(f64::NAN)), DataType::Int64), "out of range");
    check_err(cast(col("l"), DataType::Decimal128(2, 1)), "out of range");
    // decimal rescale rounds half away from zero
    check(
        cast(col("d"), DataType::Decimal128(10, 1)),
        vec![dec(1235, 10, 1), dec(-1, 10, 1), n.clone(), dec(10, 10, 1)],
    );
    check(
        cast(col("d"), DataType::Int32),
        vec![i(123), i(0), n.clone(), i(1)],
    );
    check(
        cast(col("d"), DataType::Decimal128(12, 4)),
        vec![
            dec(1234500, 12, 4),
            dec(-500, 12, 4),
            n.clone(),
            dec(10000, 12, 4),
        ],
    );
    check(
        cast(col("d"), DataType::Float64),
        vec![f(123.45), f(-0.05), n.clone(), f(1.0)],
    );
    check_err(
        cast(col("d"), DataType::Decimal128(3, 2)),
        "Could not cast value 123.45 to DECIMAL(3,2)",
    );
    check(
        cast(col("i"), DataType::Decimal128(12, 2)),
        vec![
            dec(100, 12, 2),
            dec(-200, 12, 2),
            n.clone(),
            dec(214748364700, 12, 2),
        ],
    );
    check(
        cast(col("i"), DataType::Int64),
        vec![l(1), l(-2), n.clone(), l(i32::MAX as i64)],
    );
    check(
        cast(col("l"), DataType::Int32),
        vec![i(10), i(0), n.clone(), i(-5)],
    );
    check_err(
        cast(lit(l(1 << 40)), DataType::Int32),
        "INT64 with value 1099511627776",
    );
    check(
        cast(col("l"), DataType::Float64),
        vec![f(10.0), f(0.0), n.clone(), f(-5.0)],
    );
    // booleans
    check(
        cast(col("b"), DataType::Int32),
        vec![i(1), i(0), n.clone(), i(1)],
    );
    check(
        cast(col("l"), DataType::Boolean),
        vec![b(true), b(false), n.clone(), b(true)],
    );
    check(
        cast(col("b"), DataType::Float64),
        vec![f(1.0), f(0.0), n.clone(), f(1.0)],
    );
    // untyped NULL to anything
    check(cast(col("n"), DataType::Int32), vec![n.clone(); 4]);
    check(cast(lit(null()), DataType::Utf8), vec![n; 4]);
}

#[test]
fn casts_to_strings_and_dates() {
    let n = null();
    check(
        cast(col("i"), DataType::Utf8),
        vec![st("1"), st("-2"), n.clone(), st("2147483647")],
    );
    check(
        cast(col("f"), DataType::Utf8),
        vec![st("1.5"), st("-0.0"), n.clone(), st("2.5")],
    );
    check(
        cast(col("d"), DataType::Utf8),
        vec![st("123.45"), st("-0.05"), n.clone(), st("1.00")],
    );
    check(
        cast(col("b"), DataType::Utf8),
        vec![st("true"), st("false"), n.clone(), st("true")],
    );
    check(
        cast(col("dt"), DataType::Utf8),
        vec![
            st("1994-01-01"),
            st("1970-01-01"),
            n.clone(),
            st("1969-12-31"),
        ],
    );
    check(
        cast(col("ts"), DataType::Utf8),
        vec![
            st("1994-01-01 10:24:05.123456"),
            st("1970-01-01 00:00:00"),
            n.clone(),
            st("1969-12-31 23:59:59.999999"),
        ],
    );
    for (v, s) in [
        (1e16, "1e+16"),
        (1e-5, "1e-05"),
        (123.0, "123.0"),
        (0.1, "0.1"),
        (f64::NAN, "nan"),
        (f64::NEG_INFINITY, "-inf"),
        (1.5e300, "1.5e+300"),
    ] {
        assert_eq!(cast::format_double(v), s);
    }
    check(
        cast(col("dt"), TS),
        vec![
            S::TimestampMicros(8766 * 86_400_000_000),
            S::TimestampMicros(0),
            n.clone(),
            S::TimestampMicros(-86_400_000_000),
        ],
    );
    check(
        cast(col("ts"), DataType::Date32),
        vec![S::Date32(8766), S::Date32(0), n.clone(), S::Date32(-1)],
    );
    check_err(
        cast(col("dt"), DataType::Int32),
        "Unimplemented type for cast",
    );
}

// ---------------------------------------------------------------- CASE, coalesce

fn case(when_then: Vec<(Expr, Expr)>, else_expr: Option<Expr>) -> Expr {
    Expr::Case {
        when_then,
        else_expr: else_expr.map(Box::new),
    }
}

#[test]
fn case_takes_the_first_true_branch() {
    use BinaryOp::*;
    let n = null();
    let e = case(
        vec![
            (bin(col("l"), Gt, lit(l(5))), lit(st("big"))),
            (bin(col("l"), GtEq, lit(l(0))), lit(st("small"))),
        ],
        Some(lit(st("negative"))),
    );
    // the NULL row takes no branch: ELSE
    check(
        e,
        vec![st("big"), st("small"), st("negative"), st("negative")],
    );
    let e = case(vec![(col("b"), col("i"))], None);
    check(e, vec![i(1), n.clone(), n.clone(), i(i32::MAX)]);
    let e = case(vec![(lit(b(true)), lit(l(7)))], Some(col("l")));
    check(e, vec![l(7); 4]);
    let e = case(
        vec![(lit(S::Null(DataType::Boolean)), lit(l(7)))],
        Some(col("l")),
    );
    check(e, vec![l(10), l(0), n.clone(), l(-5)]);
    // a NULL branch and a typed one
    let e = case(vec![(col("b"), lit(null()))], Some(col("d")));
    check(e, vec![n.clone(), dec(-5, 10, 2), n.clone(), n.clone()]);
}

#[test]
fn guarded_errors_are_not_raised() {
    use BinaryOp::*;
    let n = null();
    // CASE WHEN z = 0 THEN NULL ELSE 10 / z END
    let e = case(
        vec![(bin(col("z"), Eq, lit(i(0))), lit(S::Null(DataType::Int32)))],
        Some(bin(lit(i(10)), Divide, col("z"))),
    );
    check(e, vec![n.clone(), n.clone(), n.clone(), i(10)]);
    // z <> 0 AND 10 / z > 1
    let guarded = bin(
        bin(col("z"), NotEq, lit(i(0))),
        And,
        bin(bin(lit(i(10)), Divide, col("z")), Gt, lit(i(1))),
    );
    check(
        guarded.clone(),
        vec![b(false), b(false), n.clone(), b(true)],
    );
    let p = evaluate_predicate(&guarded, &table()).unwrap();
    assert_eq!(p, BooleanArray::from(vec![false, false, false, true]));
    // z = 0 OR 10 / z > 1
    let guarded = bin(
        bin(col("z"), Eq, lit(i(0))),
        Or,
        bin(bin(lit(i(10)), Divide, col("z")), Gt, lit(i(1))),
    );
    check(guarded, vec![b(true), b(true), n.clone(), b(true)]);
    // coalesce(NULLIF-like CASE, 1 / z): only the NULL rows divide
    let e = func(
        ScalarFunction::Coalesce,
        vec![
            case(vec![(bin(col("z"), Eq, lit(i(0))), lit(i(5)))], None),
            bin(lit(i(1)), Divide, col("z")),
        ],
    );
    check(e, vec![i(5), i(5), n.clone(), i(1)]);
    // FALSE AND <error> never evaluates the right side
    check(
        bin(
            lit(b(false)),
            And,
            bin(bin(lit(i(1)), Divide, lit(i(0))), Eq, lit(i(1))),
        ),
        vec![b(false); 4],
    );
    // but an unguarded division by zero still fails
    check_err(
        bin(bin(lit(i(10)), Divide, col("z")), Gt, lit(i(1))),
        "Division by zero",
    );
}

#[test]
fn coalesce_picks_the_first_non_null() {
    let n = null();
    let e = func(
        ScalarFunction::Coalesce,
        vec![col("n"), col("i"), lit(i(-1))],
    );
    check(e, vec![i(1), i(-2), i(-1), i(i32::MAX)]);
    let e = func(ScalarFunction::Coalesce, vec![col("s"), lit(st("?"))]);
    check(
        e,
        vec![
            st("hello"),
            st("special requests"),
            st("?"),
            st("Ünïcode_%"),
        ],
    );
    let e = func(ScalarFunction::Coalesce, vec![lit(null()), col("l")]);
    check(e, vec![l(10), l(0), n.clone(), l(-5)]);
    let e = func(ScalarFunction::Coalesce, vec![col("n"), lit(null())]);
    check(e, vec![n.clone(); 4]);
}

// ---------------------------------------------------------------- functions

#[test]
fn abs_and_round() {
    let n = null();
    let abs = |e| func(ScalarFunction::Abs, vec![e]);
    let round = |args| func(ScalarFunction::Round, args);
    check(abs(col("i")), vec![i(1), i(2), n.clone(), i(i32::MAX)]);
    check(abs(col("f")), vec![f(1.5), f(0.0), n.clone(), f(2.5)]);
    check(
        abs(col("d")),
        vec![dec(12345, 10, 2), dec(5, 10, 2), n.clone(), dec(100, 10, 2)],
    );
    check_err(abs(lit(i(i32::MIN))), "Out of Range");
    // half away from zero
    check(
        round(vec![col("f")]),
        vec![f(2.0), f(-0.0), n.clone(), f(3.0)],
    );
    check(round(vec![lit(f(-2.5))]), vec![f(-3.0); 4]);
    check(round(vec![lit(f(1.2345)), lit(i(2))]), vec![f(1.23); 4]);
    check(round(vec![lit(f(1250.0)), lit(i(-2))]), vec![f(1300.0); 4]);
    // DECIMAL(p,s) rounded to k digits has scale min(max(k, 0), s)
    check(
        round(vec![col("d"), lit(i(1))]),
        vec![dec(1235, 10, 1), dec(-1, 10, 1), n.clone(), dec(10, 10, 1)],
    );
    check(
        round(vec![col("d")]),
        vec![dec(123, 10, 0), dec(0, 10, 0), n.clone(), dec(1, 10, 0)],
    );
    check(
        round(vec![col("d"), lit(i(5))]),
        vec![
            dec(12345, 10, 2),
            dec(-5, 10, 2),
            n.clone(),
            dec(100, 10, 2),
        ],
    );
    check(
        round(vec![col("d"), lit(i(-1))]),
        vec![dec(120, 10, 0), dec(0, 10, 0), n.clone(), dec(0, 10, 0)],
    );
    check(
        round(vec![lit(dec(-125, 5, 1)), lit(l(-1))]),
        vec![dec(-10, 5, 0); 4],
    );
    check(
        round(vec![col("l"), lit(i(-1))]),
        vec![l(10), l(0), n.clone(), l(-10)],
    );
    check(
        round(vec![col("i")]),
        vec![i(1), i(-2), n.clone(), i(i32::MAX)],
    );
    check_err(round(vec![col("i"), lit(i(-1))]), "Out of Range");
}

#[test]
fn string_functions() {
    let n = null();
    let f1 = |fun, e| func(fun, vec![e]);
    check(
        f1(ScalarFunction::Lower, col("s")),
        vec![
            st("hello"),
            st("special requests"),
            n.clone(),
            st("ünïcode_%"),
        ],
    );
    check(
        f1(ScalarFunction::Upper, col("s")),
        vec![
            st("HELLO"),
            st("SPECIAL REQUESTS"),
            n.clone(),
            st("ÜNÏCODE_%"),
        ],
    );
    check(
        f1(ScalarFunction::Length, col("s")),
        vec![l(5), l(16), n.clone(), l(9)],
    );
    check(f1(ScalarFunction::Length, lit(st(""))), vec![l(0); 4]);
    let substr = |args: Vec<Expr>| func(ScalarFunction::Substr, args);
    let hello = || lit(st("hello"));
    for (start, len, want) in [
        (1, Some(2), "he"),
        (2, None, "ello"),
        (0, Some(2), "h"),
        (0, Some(1), ""),
        (-3, Some(2), "ll"),
        (-3, None, "llo"),
        (-10, Some(3), "hel"),
        (4, Some(10), "lo"),
        (6, Some(1), ""),
        (3, Some(-2), "he"),
        (1, Some(0), ""),
        (i64::MIN, Some(i64::MAX), "hello"),
        (i64::MAX, None, ""),
    ] {
        let mut args = vec![hello(), lit(l(start))];
        if let Some(len) = len {
            args.push(lit(l(len)));
        }
        check(substr(args), vec![st(want); 4]);
    }
    check(
        substr(vec![col("s"), lit(l(2)), lit(l(3))]),
        vec![st("ell"), st("pec"), n.clone(), st("nïc")],
    );
    check(
        substr(vec![col("s"), col("l")]),
        vec![st(""), st("special requests"), n.clone(), st("ode_%")],
    );
    check(
        substr(vec![col("s"), lit(l(1)), lit(S::Null(DataType::Int64))]),
        vec![n.clone(); 4],
    );
}

#[test]
fn date_part_fields() {
    let n = null();
    let dp = |field: &str, e| func(ScalarFunction::DatePart, vec![lit(st(field)), e]);
    // 1994-01-01 was a Saturday, in ISO week 52 of 1993; 1969-12-31 a Wednesday
    check(
        dp("year", col("dt")),
        vec![l(1994), l(1970), n.clone(), l(1969)],
    );
    check(dp("month", col("dt")), vec![l(1), l(1), n.clone(), l(12)]);
    check(dp("day", col("dt")), vec![l(1), l(1), n.clone(), l(31)]);
    check(dp("dow", col("dt")), vec![l(6), l(4), n.clone(), l(3)]);
    check(dp("isodow", col("dt")), vec![l(6), l(4), n.clone(), l(3)]);
    check(dp("doy", col("dt")), vec![l(1), l(1), n.clone(), l(365)]);
    check(dp("quarter", col("dt")), vec![l(1), l(1), n.clone(), l(4)]);
    check(dp("week", col("dt")), vec![l(52), l(1), n.clone(), l(1)]);
    check(
        dp("epoch", col("dt")),
        vec![
            S::Float64(8766.0 * 86400.0),
            S::Float64(0.0),
            n.clone(),
            S::Float64(-86400.0),
        ],
    );
    check(dp("hour", col("dt")), vec![l(0), l(0), n.clone(), l(0)]);
    check(
        dp("YEAR", col("ts")),
        vec![l(1994), l(1970), n.clone(), l(1969)],
    );
    check(dp("hour", col("ts")), vec![l(10), l(0), n.clone(), l(23)]);
    check(dp("minute", col("ts")), vec![l(24), l(0), n.clone(), l(59)]);
    check(dp("second", col("ts")), vec![l(5), l(0), n.clone(), l(59)]);
    check(
        dp("millisecond", col("ts")),
        vec![l(5123), l(0), n.clone(), l(59999)],
    );
    check(
        // epoch is a DOUBLE with the fraction of a second, as in DuckDB
        dp("epoch", col("ts")),
        vec![
            S::Float64(757_419_845.123456),
            S::Float64(0.0),
            n.clone(),
            S::Float64(-0.000001),
        ],
    );
    check(dp("dow", col("ts")), vec![l(6), l(4), n.clone(), l(3)]);
    // ISO weeks around new year: 2008-12-29 is in week 1 of 2009, 2010-01-03 in week 53 of 2009
    let d = |y, m, dd| {
        lit(S::Date32(
            weir_planner::scalar::days_from_civil(y, m, dd).unwrap(),
        ))
    };
    check(dp("week", d(2008, 12, 29)), vec![l(1); 4]);
    check(dp("week", d(2010, 1, 3)), vec![l(53); 4]);
    check(dp("week", d(2021, 6, 15)), vec![l(24); 4]);
    check(dp("year", col("n")), vec![n; 4]);
    check_err(dp("fortnight", col("dt")), "not recognized");
}

// ---------------------------------------------------------------- API edges

#[test]
fn empty_batches_never_fail() {
    let t = table().slice(0, 0);
    let exprs = vec![
        bin(col("i"), BinaryOp::Plus, lit(i(1))),
        bin(lit(i(1)), BinaryOp::Divide, lit(i(0))),
        cast(lit(st("abc")), DataType::Int32),
        case(vec![(col("b"), col("s"))], None),
        func(ScalarFunction::Coalesce, vec![col("n"), col("l")]),
        Expr::Like {
            expr: Box::new(col("s")),
            pattern: "%a%".into(),
            negated: false,
            case_insensitive: false,
            escape: None,
        },
    ];
    for e in exprs {
        let out = evaluate(&e, &t).unwrap();
        assert_eq!(out.len(), 0);
        assert_eq!(out.data_type(), &e.data_type(t.schema_ref()));
    }
    let p = evaluate_predicate(&bin(col("i"), BinaryOp::Gt, lit(i(0))), &t).unwrap();
    assert_eq!(p.len(), 0);
}

#[test]
fn predicates_turn_null_into_false() {
    let p = evaluate_predicate(&bin(col("i"), BinaryOp::Gt, lit(i(0))), &table()).unwrap();
    assert_eq!(p, BooleanArray::from(vec![true, false, false, true]));
    assert!(p.nulls().is_none());
    let p = evaluate_predicate(&lit(S::Null(DataType::Boolean)), &table()).unwrap();
    assert_eq!(p, BooleanArray::from(vec![false; 4]));
    let p = evaluate_predicate(&lit(b(true)), &table()).unwrap();
    assert_eq!(p, BooleanArray::from(vec![true; 4]));
    let p = evaluate_predicate(&col("b"), &table()).unwrap();
    assert_eq!(p, BooleanArray::from(vec![true, false, false, true]));
    assert!(evaluate_predicate(&col("i"), &table()).is_err());
}

#[test]
fn scalars_round_trip_through_arrays() {
    let values = vec![
        b(true),
        i(-3),
        l(i64::MAX),
        f(0.25),
        dec(-12345, 10, 2),
        st("ü"),
        S::Date32(-5),
        S::TimestampMicros(123),
        S::Null(DataType::Int32),
        S::Null(DataType::Null),
        S::Null(DataType::Decimal128(5, 2)),
    ];
    for v in values {
        let a = scalar_to_array(&v, 3).unwrap();
        assert_eq!(a.len(), 3);
        assert_eq!(a.data_type(), &v.data_type());
        for row in 0..3 {
            assert_eq!(scalar_from_array(a.as_ref(), row).unwrap(), v);
        }
        assert_eq!(scalar_to_array(&v, 0).unwrap().len(), 0);
    }
    assert!(scalar_from_array(&Int32Array::from(vec![1]), 1).is_err());
    // every integer width and FLOAT keeps its type
    let small = arrow::array::Int16Array::from(vec![Some(7), None]);
    assert_eq!(scalar_from_array(&small, 0).unwrap(), S::Int16(7));
    assert_eq!(
        scalar_from_array(&small, 1).unwrap(),
        S::Null(DataType::Int16)
    );
    for v in [
        S::Int8(-128),
        S::UInt8(255),
        S::UInt16(65535),
        S::UInt32(u32::MAX),
        S::UInt64(u64::MAX),
        S::Float32(0.1),
    ] {
        let a = scalar_to_array(&v, 2).unwrap();
        assert_eq!(scalar_from_array(a.as_ref(), 1).unwrap(), v);
    }
    // other types are widened to their canonical type
    let half = arrow::array::LargeStringArray::from(vec!["x"]);
    assert_eq!(scalar_from_array(&half, 0).unwrap(), S::Utf8("x".into()));
}

#[test]
fn literals_broadcast_and_columns_pass_through() {
    check(lit(st("x")), vec![st("x"); 4]);
    check(lit(S::Null(DataType::Int64)), vec![null(); 4]);
    let out = evaluate(&col("s"), &table()).unwrap();
    assert!(Arc::ptr_eq(&out, table().column(5)) || out.as_ref() == table().column(5).as_ref());
    assert!(evaluate(&Expr::column(99, "nope"), &table()).is_err());
}

#[test]
fn all_null_columns_and_extreme_values_do_not_panic() {
    use BinaryOp::*;
    let schema = Arc::new(Schema::new(vec![
        Field::new("i", DataType::Int32, true),
        Field::new("s", DataType::Utf8, true),
        Field::new("d", DataType::Decimal128(38, 0), true),
        Field::new("f", DataType::Float64, true),
    ]));
    let t = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int32Array::from(vec![None, None, None])),
            Arc::new(StringArray::from(vec![None::<&str>, None, None])),
            Arc::new(
                Decimal128Array::from(vec![
                    None,
                    Some(i128::MAX / 10),
                    Some(-(10i128.pow(38) - 1)),
                ])
                .with_precision_and_scale(38, 0)
                .unwrap(),
            ),
            Arc::new(Float64Array::from(vec![
                Some(f64::NAN),
                Some(f64::INFINITY),
                Some(-0.0),
            ])),
        ],
    )
    .unwrap();
    let (ci, cs, cd, cf) = (
        Expr::column(0, "i"),
        Expr::column(1, "s"),
        Expr::column(2, "d"),
        Expr::column(3, "f"),
    );
    let exprs = vec![
        bin(ci.clone(), Divide, lit(i(0))),
        bin(ci.clone(), Multiply, ci.clone()),
        Expr::Negative(Box::new(ci.clone())),
        cast(cs.clone(), DataType::Int32),
        func(ScalarFunction::Substr, vec![cs.clone(), lit(l(2))]),
        func(ScalarFunction::Length, vec![cs.clone()]),
        bin(cs.clone(), Concat, cs.clone()),
        cast(cd.clone(), DataType::Float64),
        cast(cf.clone(), DataType::Utf8),
        bin(cf.clone(), Eq, cf.clone()),
        bin(cf.clone(), Lt, lit(f(0.0))),
        func(ScalarFunction::Round, vec![cf.clone(), lit(i(2))]),
        func(ScalarFunction::Abs, vec![cd.clone()]),
    ];
    for e in exprs {
        let out = evaluate(&e, &t).unwrap_or_else(|err| panic!("{e}: {err}"));
        assert_eq!(out.len(), 3);
    }
    // NaN = NaN and NaN is the greatest double, as in DuckDB
    check_on(
        &t,
        &bin(cf.clone(), Eq, cf.clone()),
        vec![b(true), b(true), b(true)],
    );
    check_on(
        &t,
        &bin(cf, Gt, lit(f(f64::INFINITY))),
        vec![b(true), b(false), b(false)],
    );
    // overflow of DECIMAL(38) is an error, not a panic
    assert!(evaluate(&cast(cd, DataType::Int64), &t).is_err());
}

#[test]
fn string_equality_with_a_literal_matches_a_row_by_row_comparison() {
    // the fast path packs 64 rows to a word and compares short strings
    // inline: check lengths around 64 rows, a sliced array, NULLs, empty
    // strings and a needle longer than 16 bytes
    let words = ["R", "", "RR", "F", "a long value over sixteen bytes", "r"];
    let values: Vec<Option<&str>> = (0..150)
        .map(|i| (i % 7 != 3).then(|| words[i % words.len()]))
        .collect();
    let all = arrow::array::StringArray::from(values.clone());
    let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true)]));
    for (offset, len) in [(0, 150), (5, 64), (13, 65), (1, 0)] {
        let sliced: arrow::array::ArrayRef = Arc::new(all.slice(offset, len));
        let batch = RecordBatch::try_new(schema.clone(), vec![sliced]).unwrap();
        for needle in words {
            for (op, negate) in [(BinaryOp::Eq, false), (BinaryOp::NotEq, true)] {
                let e = bin(Expr::column(0, "s"), op, lit(S::Utf8(needle.to_string())));
                let got = evaluate(&e, &batch).unwrap();
                let got = got.as_any().downcast_ref::<BooleanArray>().unwrap();
                let want: Vec<Option<bool>> = values[offset..offset + len]
                    .iter()
                    .map(|v| v.map(|v| (v == needle) != negate))
                    .collect();
                assert_eq!(
                    got.iter().collect::<Vec<_>>(),
                    want,
                    "{e} at {offset}+{len}"
                );
            }
        }
    }
}

#[test]
fn a_capped_decimal_product_is_exact_when_small_and_an_error_when_it_overflows() {
    // DECIMAL(15,2) * DECIMAL(15,2) is DECIMAL(18,4): capped, so the values
    // decide whether a product can overflow
    let d = DataType::Decimal128(15, 2);
    let schema = Arc::new(Schema::new(vec![
        Field::new("a", d.clone(), true),
        Field::new("b", d.clone(), true),
    ]));
    let column = |v: Vec<Option<i128>>| -> arrow::array::ArrayRef {
        Arc::new(
            arrow::array::Decimal128Array::from(v)
                .with_precision_and_scale(15, 2)
                .unwrap(),
        )
    };
    let product = bin(
        Expr::column(0, "a"),
        BinaryOp::Multiply,
        Expr::column(1, "b"),
    );
    let small = RecordBatch::try_new(
        schema.clone(),
        vec![
            column(vec![Some(12345), Some(-5), None, Some(10_500_000)]),
            column(vec![Some(200), Some(-300), Some(7), Some(96)]),
        ],
    )
    .unwrap();
    let got = evaluate(&product, &small).unwrap();
    assert_eq!(got.data_type(), &DataType::Decimal128(18, 4));
    let got = got.as_primitive::<arrow::datatypes::Decimal128Type>();
    assert_eq!(
        got.iter().collect::<Vec<_>>(),
        vec![Some(2_469_000), Some(1500), None, Some(1_008_000_000)]
    );
    // one row past 18 digits among small ones: the error, not a wrapped value
    let big = RecordBatch::try_new(
        schema,
        vec![
            column(vec![Some(1), Some(999_999_999_999_999), Some(2)]),
            column(vec![Some(1), Some(999_999_999_999_999), Some(3)]),
        ],
    )
    .unwrap();
    let err = evaluate(&product, &big).unwrap_err().to_string();
    assert!(err.contains("Overflow in multiplication"), "{err}");
}

#[test]
fn a_capped_decimal_product_ignores_values_behind_nulls_and_broadcasts_constants() {
    use arrow::buffer::{NullBuffer, ScalarBuffer};
    // DECIMAL(15,2) * DECIMAL(15,2) (DECIMAL(18,4)): a NULL's slot holds a
    // value whose product would overflow; it must neither fail nor show
    let schema = Arc::new(Schema::new(vec![
        Field::new("a", DataType::Decimal128(15, 2), true),
        Field::new("b", DataType::Decimal128(15, 2), true),
    ]));
    let huge = 999_999_999_999_999_i128;
    let column = |v: Vec<i128>, valid: Vec<bool>| -> arrow::array::ArrayRef {
        Arc::new(
            arrow::array::Decimal128Array::new(
                ScalarBuffer::from(v),
                Some(NullBuffer::from(valid)),
            )
            .with_precision_and_scale(15, 2)
            .unwrap(),
        )
    };
    let batch = RecordBatch::try_new(
        schema,
        vec![
            column(vec![-12345, huge, 7, 1], vec![true, false, true, true]),
            column(vec![200, huge, -3, 0], vec![true, true, true, true]),
        ],
    )
    .unwrap();
    let (a, b) = (|| Expr::column(0, "a"), || Expr::column(1, "b"));
    check_on(
        &batch,
        &bin(a(), BinaryOp::Multiply, b()),
        vec![
            dec(-2_469_000, 18, 4),
            null(),
            dec(-21, 18, 4),
            dec(0, 18, 4),
        ],
    );
    // a constant on either side, as DECIMAL(15,2) too
    let c = || lit(dec(-250, 15, 2));
    let times_c = vec![
        dec(3_086_250, 18, 4),
        null(),
        dec(-1750, 18, 4),
        dec(-250, 18, 4),
    ];
    check_on(&batch, &bin(a(), BinaryOp::Multiply, c()), times_c.clone());
    check_on(&batch, &bin(c(), BinaryOp::Multiply, a()), times_c);
    // a constant that overflows with one row: the error names the values
    let big = || lit(dec(huge, 15, 2));
    let err = evaluate(&bin(b(), BinaryOp::Multiply, big()), &batch)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("Overflow in multiplication of DECIMAL(18,4)"),
        "{err}"
    );
}

#[test]
fn decimal_sums_and_differences_rescale_only_the_side_that_needs_it() {
    // a has scale 1, b and c scale 2: a is multiplied by 10 in a + b,
    // b + a, a - b and b - a, nothing is in b + c, b - c and 1.00 - b
    let schema = Arc::new(Schema::new(vec![
        Field::new("a", DataType::Decimal128(10, 1), true),
        Field::new("b", DataType::Decimal128(10, 2), true),
        Field::new("c", DataType::Decimal128(10, 2), true),
    ]));
    let column = |v: Vec<Option<i128>>, s: i8| -> arrow::array::ArrayRef {
        Arc::new(
            arrow::array::Decimal128Array::from(v)
                .with_precision_and_scale(10, s)
                .unwrap(),
        )
    };
    let batch = RecordBatch::try_new(
        schema,
        vec![
            column(vec![Some(15), Some(-7), None, Some(0)], 1),
            column(vec![Some(250), Some(3), Some(1), Some(-99)], 2),
            column(vec![Some(1), Some(-400), Some(5), None], 2),
        ],
    )
    .unwrap();
    let (a, b, c) = (
        || Expr::column(0, "a"),
        || Expr::column(1, "b"),
        || Expr::column(2, "c"),
    );
    let one = || lit(S::Decimal128(100, 3, 2));
    let cases = [
        (
            bin(a(), BinaryOp::Plus, b()),
            [Some(400), Some(-67), None, Some(-99)],
        ),
        (
            bin(b(), BinaryOp::Minus, a()),
            [Some(100), Some(73), None, Some(-99)],
        ),
        (
            bin(b(), BinaryOp::Plus, c()),
            [Some(251), Some(-397), Some(6), None],
        ),
        (
            bin(b(), BinaryOp::Minus, c()),
            [Some(249), Some(403), Some(-4), None],
        ),
        (
            bin(one(), BinaryOp::Minus, b()),
            [Some(-150), Some(97), Some(99), Some(199)],
        ),
    ];
    for (expr, want) in cases {
        let got = evaluate(&expr, &batch).unwrap();
        let DataType::Decimal128(_, 2) = got.data_type() else {
            panic!("{expr}: {}", got.data_type());
        };
        let got = got.as_primitive::<arrow::datatypes::Decimal128Type>();
        assert_eq!(got.iter().collect::<Vec<_>>(), want, "{expr}");
    }
}

#[test]
fn try_cast_is_cast_with_null_where_a_value_does_not_convert() {
    // values that fail scattered among many that do not, and NULLs: each
    // row is what CAST gives it alone, or NULL where CAST fails
    let values: Vec<Option<i64>> = (0..1000i64)
        .map(|i| match i % 7 {
            0 => Some(1000 + i),
            3 => None,
            _ => Some(i % 100 - 50),
        })
        .collect();
    let strings: Vec<Option<String>> = (0..1000i64)
        .map(|i| match i % 5 {
            0 => Some(format!("x{i}")),
            1 => None,
            _ => Some(format!(" {} ", i - 500)),
        })
        .collect();
    let cases: Vec<(ArrayRef, DataType)> = vec![
        (Arc::new(Int64Array::from(values)), DataType::Int8),
        (
            Arc::new(StringArray::from(strings.clone())),
            DataType::Int16,
        ),
        (
            Arc::new(StringArray::from(strings)),
            DataType::Decimal128(5, 1),
        ),
        (
            Arc::new(Float64Array::from(vec![1.5, 1e30, -2.5, f64::NAN, 3.0])),
            DataType::Int32,
        ),
    ];
    for (array, to) in cases {
        let got = cast::try_cast_array(&array, &to).unwrap();
        assert_eq!(got.len(), array.len());
        assert_eq!(got.data_type(), &to);
        for i in 0..array.len() {
            let alone = cast::cast_array(&array.slice(i, 1), &to);
            match alone {
                Ok(v) => assert_eq!(got.slice(i, 1).to_data(), v.to_data(), "row {i} of {to}"),
                Err(_) => assert!(got.is_null(i), "row {i} of {to}: {got:?}"),
            }
        }
        assert!(got.null_count() > 0, "{to}: some values fail");
        assert!(got.null_count() < got.len(), "{to}: some values convert");
    }
}
