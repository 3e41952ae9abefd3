//! Differential testing: random filter and aggregate queries on random
//! tables, and random joins of two tables (inner, left, right, full, on
//! keys with NULLs and duplicates) and IN/EXISTS subqueries (in WHERE,
//! under OR and NOT, and as values), checked against a naive row-at-a-time
//! interpreter and nested loops written here, independently of the engine.

use std::sync::Arc;

use arrow::array::{ArrayRef, BooleanArray, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use weir_engine::{Config, Database};

/// A value of the test table.
#[derive(Clone, Debug, PartialEq)]
enum V {
    Int(i64),
    Str(String),
    Bool(bool),
}

type Row = Vec<Option<V>>;

/// Columns: a INTEGER, b BIGINT, c VARCHAR, d BOOLEAN, all nullable.
const COLUMNS: [&str; 4] = ["a", "b", "c", "d"];
const WORDS: [&str; 6] = ["apple", "banana", "cherry", "date", "elder", "fig"];

fn random_rows(rng: &mut StdRng, n: usize) -> Vec<Row> {
    (0..n)
        .map(|_| {
            let null = |rng: &mut StdRng| rng.random_bool(0.15);
            vec![
                (!null(rng)).then(|| V::Int(rng.random_range(-5..=5))),
                (!null(rng)).then(|| V::Int(rng.random_range(-1000..=1000))),
                (!null(rng)).then(|| V::Str(WORDS[rng.random_range(0..WORDS.len())].to_string())),
                (!null(rng)).then(|| V::Bool(rng.random_bool(0.5))),
            ]
        })
        .collect()
}

fn to_batches(rows: &[Row], chunk: usize) -> (Arc<Schema>, Vec<RecordBatch>) {
    let schema = Arc::new(Schema::new(vec![
        Field::new("a", DataType::Int32, true),
        Field::new("b", DataType::Int64, true),
        Field::new("c", DataType::Utf8, true),
        Field::new("d", DataType::Boolean, true),
    ]));
    let batches = rows
        .chunks(chunk.max(1))
        .map(|rows| {
            let int = |i: usize| {
                rows.iter().map(move |r| match &r[i] {
                    Some(V::Int(v)) => Some(*v),
                    _ => None,
                })
            };
            let a: Int32Array = int(0).map(|v| v.map(|v| v as i32)).collect();
            let b: Int64Array = int(1).collect();
            let c: StringArray = rows
                .iter()
                .map(|r| match &r[2] {
                    Some(V::Str(s)) => Some(s.clone()),
                    _ => None,
                })
                .collect();
            let d: BooleanArray = rows
                .iter()
                .map(|r| match &r[3] {
                    Some(V::Bool(b)) => Some(*b),
                    _ => None,
                })
                .collect();
            let columns: Vec<ArrayRef> = vec![Arc::new(a), Arc::new(b), Arc::new(c), Arc::new(d)];
            RecordBatch::try_new(schema.clone(), columns).expect("valid batch")
        })
        .collect();
    (schema, batches)
}

/// A random predicate: its SQL text and its naive evaluation.
#[derive(Clone, Debug)]
enum Pred {
    Cmp(usize, &'static str, V),
    CmpCols(&'static str),
    IsNull(usize, bool),
    Between(usize, i64, i64, bool),
    In(usize, Vec<Option<V>>, bool),
    Like(String, bool),
    Bool(usize),
    And(Box<Pred>, Box<Pred>),
    Or(Box<Pred>, Box<Pred>),
    Not(Box<Pred>),
}

fn lit(v: &V) -> String {
    match v {
        V::Int(i) => i.to_string(),
        V::Str(s) => format!("'{s}'"),
        V::Bool(b) => b.to_string(),
    }
}

impl Pred {
    fn sql(&self) -> String {
        match self {
            Pred::Cmp(c, op, v) => format!("{} {op} {}", COLUMNS[*c], lit(v)),
            Pred::CmpCols(op) => format!("a {op} b"),
            Pred::IsNull(c, neg) => {
                format!("{} IS {}NULL", COLUMNS[*c], if *neg { "NOT " } else { "" })
            }
            Pred::Between(c, lo, hi, neg) => {
                format!(
                    "{} {}BETWEEN {lo} AND {hi}",
                    COLUMNS[*c],
                    if *neg { "NOT " } else { "" }
                )
            }
            Pred::In(c, list, neg) => {
                let items: Vec<String> = list
                    .iter()
                    .map(|v| v.as_ref().map_or("NULL".into(), lit))
                    .collect();
                format!(
                    "{} {}IN ({})",
                    COLUMNS[*c],
                    if *neg { "NOT " } else { "" },
                    items.join(", ")
                )
            }
            Pred::Like(p, neg) => format!("c {}LIKE '{p}'", if *neg { "NOT " } else { "" }),
            Pred::Bool(c) => COLUMNS[*c].to_string(),
            Pred::And(l, r) => format!("({} AND {})", l.sql(), r.sql()),
            Pred::Or(l, r) => format!("({} OR {})", l.sql(), r.sql()),
            Pred::Not(p) => format!("NOT ({})", p.sql()),
        }
    }

    /// SQL three-valued evaluation: `None` is NULL.
    fn eval(&self, row: &Row) -> Option<bool> {
        fn cmp(l: &V, op: &str, r: &V) -> bool {
            let ord = match (l, r) {
                (V::Int(a), V::Int(b)) => a.cmp(b),
                (V::Str(a), V::Str(b)) => a.cmp(b),
                (V::Bool(a), V::Bool(b)) => a.cmp(b),
                _ => unreachable!("generated comparisons are well typed"),
            };
            match op {
                "=" => ord.is_eq(),
                "<>" => ord.is_ne(),
                "<" => ord.is_lt(),
                "<=" => ord.is_le(),
                ">" => ord.is_gt(),
                ">=" => ord.is_ge(),
                _ => unreachable!("generated operators are known"),
            }
        }
        match self {
            Pred::Cmp(c, op, v) => row[*c].as_ref().map(|x| cmp(x, op, v)),
            Pred::CmpCols(op) => match (&row[0], &row[1]) {
                (Some(a), Some(b)) => Some(cmp(a, op, b)),
                _ => None,
            },
            Pred::IsNull(c, neg) => Some(row[*c].is_none() != *neg),
            Pred::Between(c, lo, hi, neg) => row[*c].as_ref().map(|x| {
                let inside = cmp(x, ">=", &V::Int(*lo)) && cmp(x, "<=", &V::Int(*hi));
                inside != *neg
            }),
            Pred::In(c, list, neg) => {
                let x = row[*c].as_ref()?;
                let r = if list
                    .iter()
                    .any(|v| v.as_ref().is_some_and(|v| cmp(x, "=", v)))
                {
                    Some(true)
                } else if list.iter().any(Option::is_none) {
                    None
                } else {
                    Some(false)
                };
                r.map(|b| b != *neg)
            }
            Pred::Like(p, neg) => match &row[2] {
                Some(V::Str(s)) => Some(like(s, p) != *neg),
                _ => None,
            },
            Pred::Bool(c) => match &row[*c] {
                Some(V::Bool(b)) => Some(*b),
                _ => None,
            },
            Pred::And(l, r) => match (l.eval(row), r.eval(row)) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            },
            Pred::Or(l, r) => match (l.eval(row), r.eval(row)) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            },
            Pred::Not(p) => p.eval(row).map(|b| !b),
        }
    }
}

/// LIKE with `%` and `_`, by recursion (fine for these short strings).
fn like(s: &str, p: &str) -> bool {
    let (s, p): (Vec<char>, Vec<char>) = (s.chars().collect(), p.chars().collect());
    fn go(s: &[char], p: &[char]) -> bool {
        match p.first() {
            None => s.is_empty(),
            Some('%') => (0..=s.len()).any(|i| go(&s[i..], &p[1..])),
            Some('_') => !s.is_empty() && go(&s[1..], &p[1..]),
            Some(c) => s.first() == Some(c) && go(&s[1..], &p[1..]),
        }
    }
    go(&s, &p)
}

fn random_pred(rng: &mut StdRng, depth: u32) -> Pred {
    const OPS: [&str; 6] = ["=", "<>", "<", "<=", ">", ">="];
    if depth > 0 && rng.random_bool(0.5) {
        return match rng.random_range(0..3) {
            0 => Pred::And(
                Box::new(random_pred(rng, depth - 1)),
                Box::new(random_pred(rng, depth - 1)),
            ),
            1 => Pred::Or(
                Box::new(random_pred(rng, depth - 1)),
                Box::new(random_pred(rng, depth - 1)),
            ),
            _ => Pred::Not(Box::new(random_pred(rng, depth - 1))),
        };
    }
    let op = OPS[rng.random_range(0..OPS.len())];
    match rng.random_range(0..9) {
        0 => Pred::Cmp(0, op, V::Int(rng.random_range(-6..=6))),
        1 => Pred::Cmp(1, op, V::Int(rng.random_range(-1100..=1100))),
        2 => Pred::Cmp(
            2,
            op,
            V::Str(WORDS[rng.random_range(0..WORDS.len())].to_string()),
        ),
        3 => Pred::CmpCols(op),
        4 => Pred::IsNull(rng.random_range(0..4), rng.random_bool(0.5)),
        5 => {
            let lo = rng.random_range(-6..=4);
            Pred::Between(0, lo, lo + rng.random_range(0..5), rng.random_bool(0.3))
        }
        6 => {
            let n = rng.random_range(1..4);
            let list = (0..n)
                .map(|_| (!rng.random_bool(0.15)).then(|| V::Int(rng.random_range(-5..=5))))
                .collect();
            Pred::In(0, list, rng.random_bool(0.4))
        }
        7 => {
            let w = WORDS[rng.random_range(0..WORDS.len())];
            let p = match rng.random_range(0..4) {
                0 => format!("{}%", &w[..2]),
                1 => format!("%{}", &w[w.len() - 2..]),
                2 => format!("%{}%", &w[1..3]),
                _ => format!("_{}", &w[1..]),
            };
            Pred::Like(p, rng.random_bool(0.3))
        }
        _ => Pred::Bool(3),
    }
}

/// The expected answer of
/// `SELECT count(*), count(c), sum(b), min(a), max(c) FROM t WHERE pred`.
fn expected_aggregates(rows: &[Row], pred: &Pred) -> String {
    let kept: Vec<&Row> = rows.iter().filter(|r| pred.eval(r) == Some(true)).collect();
    let ints = |i: usize| {
        kept.iter().filter_map(move |r| match &r[i] {
            Some(V::Int(v)) => Some(*v),
            _ => None,
        })
    };
    let strs = kept.iter().filter_map(|r| match &r[2] {
        Some(V::Str(s)) => Some(s.clone()),
        _ => None,
    });
    let count_c = strs.clone().count();
    let sum_b = (ints(1).count() > 0).then(|| ints(1).sum::<i64>());
    let min_a = ints(0).min();
    let max_c = strs.max();
    let show = |v: Option<String>| v.unwrap_or_else(|| "NULL".into());
    format!(
        "{} {} {} {} {}",
        kept.len(),
        count_c,
        show(sum_b.map(|v| v.to_string())),
        show(min_a.map(|v| v.to_string())),
        show(max_c)
    )
}

/// The expected answer of
/// `SELECT c, count(*), sum(a) FROM t WHERE pred GROUP BY c ORDER BY c NULLS LAST`.
fn expected_groups(rows: &[Row], pred: &Pred) -> Vec<String> {
    let mut groups: std::collections::BTreeMap<Option<String>, (i64, Option<i64>)> =
        Default::default();
    for r in rows.iter().filter(|r| pred.eval(r) == Some(true)) {
        let key = match &r[2] {
            Some(V::Str(s)) => Some(s.clone()),
            _ => None,
        };
        let e = groups.entry(key).or_insert((0, None));
        e.0 += 1;
        if let Some(V::Int(a)) = &r[0] {
            e.1 = Some(e.1.unwrap_or(0) + a);
        }
    }
    // BTreeMap orders None first; SQL ASC puts NULLs last
    let mut out: Vec<_> = groups.into_iter().collect();
    let null_first = usize::from(out.first().is_some_and(|(k, _)| k.is_none()));
    out.rotate_left(null_first);
    out.into_iter()
        .map(|(k, (n, s))| {
            format!(
                "{} {n} {}",
                k.unwrap_or_else(|| "NULL".into()),
                s.map_or("NULL".into(), |v| v.to_string())
            )
        })
        .collect()
}

fn rows_as_strings(result: &weir_engine::QueryResult) -> Vec<String> {
    let options = arrow::util::display::FormatOptions::default().with_null("NULL");
    let mut out = Vec::new();
    for batch in result.batches() {
        let formatters: Vec<_> = batch
            .columns()
            .iter()
            .map(|c| {
                arrow::util::display::ArrayFormatter::try_new(c.as_ref(), &options)
                    .expect("formatter")
            })
            .collect();
        for row in 0..batch.num_rows() {
            let cells: Vec<String> = formatters
                .iter()
                .map(|f| f.value(row).to_string())
                .collect();
            out.push(cells.join(" "));
        }
    }
    out
}

#[test]
fn random_filters_and_aggregates_match_a_naive_interpreter() {
    let mut rng = StdRng::seed_from_u64(0x5eed_0f0e_1e00);
    let mut checked = 0;
    for round in 0..12 {
        let n = [0, 1, 7, 100, 1000, 5000][round % 6];
        let rows = random_rows(&mut rng, n);
        let (schema, batches) = to_batches(&rows, rng.random_range(1..700));
        let config = Config {
            threads: 1 + round % 4,
            morsel_rows: [1, 3, 64, 1024][round % 4],
            ..Config::default()
        };
        let db = Database::with_config(config).expect("database");
        db.register_batches("t", schema, batches).expect("register");
        for _ in 0..25 {
            let pred = random_pred(&mut rng, 3);
            let where_ = pred.sql();

            let sql =
                format!("SELECT count(*), count(c), sum(b), min(a), max(c) FROM t WHERE {where_}");
            let got = db.execute(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
            assert_eq!(
                rows_as_strings(&got),
                vec![expected_aggregates(&rows, &pred)],
                "{sql} over {n} rows"
            );

            let sql =
                format!("SELECT c, count(*), sum(a) FROM t WHERE {where_} GROUP BY c ORDER BY c");
            let got = db.execute(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
            assert_eq!(
                rows_as_strings(&got),
                expected_groups(&rows, &pred),
                "{sql} over {n} rows"
            );
            checked += 2;
        }
    }
    assert_eq!(checked, 600);
}

/// A value as the engine prints it.
fn show(v: &Option<V>) -> String {
    match v {
        None => "NULL".into(),
        Some(V::Int(i)) => i.to_string(),
        Some(V::Str(s)) => s.clone(),
        Some(V::Bool(b)) => b.to_string(),
    }
}

/// `l = r` in SQL: NULL when either is NULL.
fn sql_eq(l: &Option<V>, r: &Option<V>) -> Option<bool> {
    Some(l.as_ref()? == r.as_ref()?)
}

fn and3(l: Option<bool>, r: Option<bool>) -> Option<bool> {
    match (l, r) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

fn or3(l: Option<bool>, r: Option<bool>) -> Option<bool> {
    match (l, r) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), Some(false)) => Some(false),
        _ => None,
    }
}

/// A random join of `t` and `s` on `a` (NULLs and duplicates in both):
/// its SQL and, by a nested loop here, its rows.
struct JoinCase {
    kind: &'static str,
    /// Also `t.c = s.c`.
    on_c: bool,
    /// Also `t.b < s.b` (not a key).
    residual: bool,
    /// Also `s.d` (right side only) or `t.d` (left side only).
    side: Option<bool>,
}

impl JoinCase {
    fn random(rng: &mut StdRng) -> Self {
        Self {
            kind: ["INNER", "LEFT", "RIGHT", "FULL"][rng.random_range(0..4)],
            on_c: rng.random_bool(0.3),
            residual: rng.random_bool(0.3),
            side: rng.random_bool(0.3).then(|| rng.random_bool(0.5)),
        }
    }

    fn sql(&self) -> String {
        let mut on = vec!["t.a = s.a".to_string()];
        if self.on_c {
            on.push("t.c = s.c".into());
        }
        if self.residual {
            on.push("t.b < s.b".into());
        }
        match self.side {
            Some(true) => on.push("s.d".into()),
            Some(false) => on.push("t.d".into()),
            None => {}
        }
        format!(
            "SELECT t.a, t.b, t.c, s.a, s.b, s.d FROM t {} JOIN s ON {}",
            self.kind,
            on.join(" AND ")
        )
    }

    fn matches(&self, l: &Row, r: &Row) -> bool {
        let mut ok = sql_eq(&l[0], &r[0]);
        if self.on_c {
            ok = and3(ok, sql_eq(&l[2], &r[2]));
        }
        if self.residual {
            let lt = match (&l[1], &r[1]) {
                (Some(V::Int(x)), Some(V::Int(y))) => Some(x < y),
                _ => None,
            };
            ok = and3(ok, lt);
        }
        if let Some(right) = self.side {
            let d = if right { &r[3] } else { &l[3] };
            ok = and3(
                ok,
                match d {
                    Some(V::Bool(b)) => Some(*b),
                    _ => None,
                },
            );
        }
        ok == Some(true)
    }

    fn expected(&self, t: &[Row], s: &[Row]) -> Vec<String> {
        let line = |l: Option<&Row>, r: Option<&Row>| {
            let cell = |row: Option<&Row>, i: usize| row.map_or("NULL".into(), |x| show(&x[i]));
            format!(
                "{} {} {} {} {} {}",
                cell(l, 0),
                cell(l, 1),
                cell(l, 2),
                cell(r, 0),
                cell(r, 1),
                cell(r, 3)
            )
        };
        let mut out = Vec::new();
        let mut right_matched = vec![false; s.len()];
        for l in t {
            let mut matched = false;
            for (j, r) in s.iter().enumerate() {
                if self.matches(l, r) {
                    matched = true;
                    right_matched[j] = true;
                    out.push(line(Some(l), Some(r)));
                }
            }
            if !matched && matches!(self.kind, "LEFT" | "FULL") {
                out.push(line(Some(l), None));
            }
        }
        if matches!(self.kind, "RIGHT" | "FULL") {
            for (j, r) in s.iter().enumerate() {
                if !right_matched[j] {
                    out.push(line(None, Some(r)));
                }
            }
        }
        out.sort();
        out
    }
}

/// A random subquery over `s` tested for each row of `t`: `t.a [NOT] IN
/// (SELECT a FROM s WHERE inner [AND s.c = t.c])` or `[NOT] EXISTS
/// (SELECT 1 FROM s WHERE s.a = t.a AND inner)`; `inner` names `s`'s
/// columns (the subquery's own shadow the outer query's).
struct SubCase {
    exists: bool,
    negated: bool,
    /// Correlated by `s.c = t.c` (IN only; EXISTS always is, on `a`).
    correlated: bool,
    /// Also correlated by a comparison, `s.b < t.b`.
    compared: bool,
    inner: Pred,
}

impl SubCase {
    fn random(rng: &mut StdRng) -> Self {
        Self {
            exists: rng.random_bool(0.4),
            negated: rng.random_bool(0.4),
            correlated: rng.random_bool(0.4),
            compared: rng.random_bool(0.3),
            inner: random_pred(rng, 1),
        }
    }

    fn sql(&self) -> String {
        let not = if self.negated { "NOT " } else { "" };
        let cmp = if self.compared { " AND s.b < t.b" } else { "" };
        if self.exists {
            format!(
                "{not}EXISTS (SELECT 1 FROM s WHERE s.a = t.a AND {}{cmp})",
                self.inner.sql()
            )
        } else {
            let corr = if self.correlated {
                " AND s.c = t.c"
            } else {
                ""
            };
            format!(
                "t.a {not}IN (SELECT a FROM s WHERE {}{corr}{cmp})",
                self.inner.sql()
            )
        }
    }

    /// The subquery's rows for outer row `l`.
    fn rows<'s>(&self, l: &Row, s: &'s [Row]) -> Vec<&'s Row> {
        s.iter()
            .filter(|r| {
                let mut ok = self.inner.eval(r);
                if self.exists {
                    ok = and3(sql_eq(&r[0], &l[0]), ok);
                } else if self.correlated {
                    ok = and3(ok, sql_eq(&r[2], &l[2]));
                }
                if self.compared {
                    let lt = match (&r[1], &l[1]) {
                        (Some(V::Int(x)), Some(V::Int(y))) => Some(x < y),
                        _ => None,
                    };
                    ok = and3(ok, lt);
                }
                ok == Some(true)
            })
            .collect()
    }

    fn eval(&self, l: &Row, s: &[Row]) -> Option<bool> {
        let rows = self.rows(l, s);
        let r = if self.exists {
            Some(!rows.is_empty())
        } else if rows.is_empty() {
            Some(false)
        } else if l[0].is_none() {
            None
        } else if rows.iter().any(|r| sql_eq(&l[0], &r[0]) == Some(true)) {
            Some(true)
        } else if rows.iter().any(|r| r[0].is_none()) {
            None
        } else {
            Some(false)
        };
        r.map(|b| b != self.negated)
    }
}

#[test]
fn random_joins_and_subqueries_match_a_nested_loop() {
    let mut rng = StdRng::seed_from_u64(0x5eed_0f30_1a00);
    let mut checked = 0;
    for round in 0..10 {
        let (nt, ns) = [(0, 5), (5, 0), (1, 1), (7, 30), (60, 60), (200, 150)][round % 6];
        let t = random_rows(&mut rng, nt);
        let s = random_rows(&mut rng, ns);
        let config = Config {
            threads: 1 + round % 4,
            morsel_rows: [1, 3, 64, 1024][round % 4],
            ..Config::default()
        };
        let db = Database::with_config(config).expect("database");
        for (name, rows) in [("t", &t), ("s", &s)] {
            let (schema, batches) = to_batches(rows, rng.random_range(1..100));
            db.register_batches(name, schema, batches)
                .expect("register");
        }
        for _ in 0..12 {
            let j = JoinCase::random(&mut rng);
            let sql = j.sql();
            let got = db.execute(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
            let mut got = rows_as_strings(&got);
            got.sort();
            assert_eq!(got, j.expected(&t, &s), "{sql} over {nt} x {ns} rows");

            // a subquery in WHERE: alone, under OR, under NOT
            let sub = SubCase::random(&mut rng);
            let outer = random_pred(&mut rng, 1);
            let form = rng.random_range(0..3);
            let where_ = match form {
                0 => sub.sql(),
                1 => format!("{} OR {}", outer.sql(), sub.sql()),
                _ => format!("NOT ({}) AND {}", sub.sql(), outer.sql()),
            };
            let sql = format!("SELECT a, b, c FROM t WHERE {where_}");
            let got = db.execute(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
            let mut got = rows_as_strings(&got);
            got.sort();
            let mut want: Vec<String> = t
                .iter()
                .filter(|l| {
                    let v = sub.eval(l, &s);
                    let keep = match form {
                        0 => v,
                        1 => or3(outer.eval(l), v),
                        _ => and3(v.map(|b| !b), outer.eval(l)),
                    };
                    keep == Some(true)
                })
                .map(|l| format!("{} {} {}", show(&l[0]), show(&l[1]), show(&l[2])))
                .collect();
            want.sort();
            assert_eq!(got, want, "{sql} over {nt} x {ns} rows");

            // as values: the test, a correlated count and max
            let sql = format!(
                "SELECT a, b, {}, (SELECT count(*) FROM s WHERE s.a = t.a AND {inner}), \
                 (SELECT max(b) FROM s WHERE s.a = t.a AND {inner}) FROM t",
                sub.sql(),
                inner = sub.inner.sql()
            );
            let got = db.execute(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
            let mut got = rows_as_strings(&got);
            got.sort();
            let mut want: Vec<String> = t
                .iter()
                .map(|l| {
                    let group: Vec<&Row> = s
                        .iter()
                        .filter(|r| and3(sql_eq(&r[0], &l[0]), sub.inner.eval(r)) == Some(true))
                        .collect();
                    let max = group
                        .iter()
                        .filter_map(|r| match &r[1] {
                            Some(V::Int(b)) => Some(*b),
                            _ => None,
                        })
                        .max();
                    format!(
                        "{} {} {} {} {}",
                        show(&l[0]),
                        show(&l[1]),
                        show(&sub.eval(l, &s).map(V::Bool)),
                        group.len(),
                        max.map_or("NULL".into(), |m| m.to_string())
                    )
                })
                .collect();
            want.sort();
            assert_eq!(got, want, "{sql} over {nt} x {ns} rows");
            checked += 3;
        }
    }
    assert_eq!(checked, 360);
}
