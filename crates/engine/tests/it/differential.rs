//! Differential testing: random filter and aggregate queries on random
//! tables, checked against a naive row-at-a-time interpreter written here,
//! independently of the engine.

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
