//! Window functions over many morsels and lanes: however the lanes cut
//! their rows into buckets and whichever task sorts a bucket, every thread
//! count numbers a partition's rows alike, ties in input order.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{AsArray, Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Int64Type, Schema};
use weir_engine::Database;

const ROWS: i64 = 300_000;

/// `(p, o, v)` of row `id`: 2,003 partitions, five order values (many
/// ties), values 0-99.
fn row(id: i64) -> (i64, i64, i64) {
    ((id * 7919) % 2003, id % 5, id % 100)
}

fn table(db: &Database) {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("p", DataType::Int64, false),
        Field::new("o", DataType::Int64, false),
        Field::new("v", DataType::Int64, false),
    ]));
    let batches = (0..ROWS)
        .collect::<Vec<_>>()
        .chunks(25_000)
        .map(|ids| {
            let column = |f: fn(i64) -> i64| {
                Arc::new(Int64Array::from_iter_values(ids.iter().map(|&i| f(i))))
            };
            RecordBatch::try_new(
                schema.clone(),
                vec![
                    column(|i| i),
                    column(|i| row(i).0),
                    column(|i| row(i).1),
                    column(|i| row(i).2),
                ],
            )
            .unwrap()
        })
        .collect();
    db.register_batches("t", schema, batches).unwrap();
}

/// Per id, `(row_number, sum of v over the rows up to its peers)` with
/// rows numbered by `(o, id)` within partitions of `partition(id)`.
fn expected(partition: fn(i64) -> i64) -> HashMap<i64, (i64, i64)> {
    let mut parts: HashMap<i64, Vec<i64>> = HashMap::new();
    for id in 0..ROWS {
        parts.entry(partition(id)).or_default().push(id);
    }
    let mut want = HashMap::new();
    for ids in parts.values_mut() {
        ids.sort_by_key(|&id| (row(id).1, id));
        // the running sum counts every peer (same o) of a row
        let mut through: HashMap<i64, i64> = HashMap::new();
        let mut sum = 0;
        for &id in ids.iter() {
            sum += row(id).2;
            through.insert(row(id).1, sum);
        }
        for (n, &id) in ids.iter().enumerate() {
            want.insert(id, (n as i64 + 1, through[&row(id).1]));
        }
    }
    want
}

fn got(db: &Database, over: &str) -> HashMap<i64, (i64, i64)> {
    let sql = format!("SELECT id, row_number() OVER ({over}), sum(v) OVER ({over})::BIGINT FROM t");
    let result = db.execute(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let mut got = HashMap::new();
    for b in result.batches() {
        let (id, rn, s) = (
            b.column(0).as_primitive::<Int64Type>(),
            b.column(1).as_primitive::<Int64Type>(),
            b.column(2).as_primitive::<Int64Type>(),
        );
        for i in 0..b.num_rows() {
            assert!(got.insert(id.value(i), (rn.value(i), s.value(i))).is_none());
        }
    }
    got
}

#[test]
fn partitions_number_their_rows_alike_on_every_thread_count() {
    let db = Database::new().unwrap();
    table(&db);
    let want = expected(|id| row(id).0);
    for threads in [1, 2, 4] {
        db.set_threads(threads).unwrap();
        let got = got(&db, "PARTITION BY p ORDER BY o");
        assert_eq!(got.len(), want.len(), "{threads} threads");
        assert!(got == want, "{threads} threads");
    }
}

#[test]
fn one_partition_numbers_its_rows_alike_on_every_thread_count() {
    let db = Database::new().unwrap();
    table(&db);
    let want = expected(|_| 0);
    for threads in [1, 2, 4] {
        db.set_threads(threads).unwrap();
        assert!(got(&db, "ORDER BY o") == want, "{threads} threads");
    }
}

#[test]
fn a_row_number_bound_above_keeps_the_first_rows_of_each_partition_in_the_window() {
    let db = Database::new().unwrap();
    table(&db);
    let want = expected(|id| row(id).0);
    let explain = |sql: &str| db.execute(&format!("EXPLAIN {sql}")).unwrap().to_string();
    let window = "SELECT id, row_number() OVER (PARTITION BY p ORDER BY o) AS rn FROM t";
    // bounds above, however written, reach the window
    for (filter, k) in [
        ("rn <= 2", 2),
        ("rn < 3", 2),
        ("rn = 1", 1),
        ("3 >= rn AND id > 5", 3),
    ] {
        let sql = format!("SELECT * FROM ({window}) WHERE {filter}");
        let plan = explain(&sql);
        assert!(
            plan.contains(&format!("keeping the first {k} row(s) of each partition")),
            "{filter}: {plan}"
        );
        // ties (five values of o) numbered in input order, on any thread
        // count, as the whole window numbers them
        for threads in [1, 2, 4] {
            db.set_threads(threads).unwrap();
            let result = db.execute(&sql).unwrap();
            let mut kept = 0;
            for b in result.batches() {
                let (id, rn) = (
                    b.column(0).as_primitive::<Int64Type>(),
                    b.column(1).as_primitive::<Int64Type>(),
                );
                for i in 0..b.num_rows() {
                    assert_eq!(want[&id.value(i)].0, rn.value(i), "{filter}");
                    kept += 1;
                }
            }
            let expected = want
                .iter()
                .filter(|&(&id, &(rn, _))| rn <= k && (filter != "3 >= rn AND id > 5" || id > 5))
                .count();
            assert_eq!(kept, expected, "{filter}, {threads} threads");
        }
    }
    // ranks (ties), other functions, lower bounds and disjunctions do not
    for sql in [
        "SELECT * FROM (SELECT id, rank() OVER (PARTITION BY p ORDER BY o) AS r FROM t) WHERE r <= 2".to_owned(),
        format!("SELECT * FROM ({window}) WHERE rn > 2"),
        format!("SELECT * FROM ({window}) WHERE rn <= 2 OR id = 7"),
        "SELECT * FROM (SELECT id, row_number() OVER (PARTITION BY p ORDER BY o) AS rn, sum(v) OVER (PARTITION BY p ORDER BY o) AS s FROM t) WHERE rn <= 2".to_owned(),
    ] {
        assert!(!explain(&sql).contains("keeping the first"), "{sql}");
    }
}

#[test]
fn lanes_drop_rows_of_partitions_that_have_enough_better_ones_and_give_up_on_tiny_partitions() {
    let db = Database::new().unwrap();
    table(&db);
    // 2,003 partitions of about 150 rows (a lane drops most rows), and
    // 100,000 partitions of 3 rows far apart in input order (a lane keeps
    // most and gives up dropping after its first runs of rows); with ties
    // (five values of o) broken by input order either way; ranked by one
    // number or by row-encoded keys
    type Partition = fn(i64) -> i64;
    let cases: [(&str, Partition); 2] = [("p", |id| row(id).0), ("id % 100000", |id| id % 100_000)];
    for (partition, of) in cases {
        let want = expected(of);
        // ranked by one number (a BIGINT), or by row-encoded keys (a
        // VARCHAR of one digit orders as the digit)
        let orders = ["o DESC NULLS FIRST", "CAST(o AS VARCHAR) DESC NULLS FIRST"];
        for (k, order) in [1, 2].into_iter().flat_map(|k| orders.map(|o| (k, o))) {
            let sql = format!(
                "SELECT id, row_number() OVER (PARTITION BY {partition} ORDER BY {order}) AS rn FROM t QUALIFY rn <= {k}"
            );
            let plan = db.execute(&format!("EXPLAIN {sql}")).unwrap().to_string();
            assert!(plan.contains("each lane first drops rows"), "{sql}: {plan}");
            // the numbering by o DESC: reverse each partition's peer groups
            let mut reversed: HashMap<i64, i64> = HashMap::new();
            let mut parts: HashMap<i64, Vec<i64>> = HashMap::new();
            for id in 0..ROWS {
                parts.entry(of(id)).or_default().push(id);
            }
            for ids in parts.values_mut() {
                ids.sort_by_key(|&id| (std::cmp::Reverse(row(id).1), id));
                for (n, &id) in ids.iter().enumerate() {
                    reversed.insert(id, n as i64 + 1);
                }
            }
            assert_eq!(reversed.len(), want.len());
            let expected: HashMap<i64, i64> =
                reversed.into_iter().filter(|&(_, rn)| rn <= k).collect();
            for threads in [1, 2, 4] {
                db.set_threads(threads).unwrap();
                let mut got = HashMap::new();
                for b in db.execute(&sql).unwrap().batches() {
                    let (id, rn) = (
                        b.column(0).as_primitive::<Int64Type>(),
                        b.column(1).as_primitive::<Int64Type>(),
                    );
                    for i in 0..b.num_rows() {
                        assert!(got.insert(id.value(i), rn.value(i)).is_none());
                    }
                }
                assert!(
                    got == expected,
                    "{sql}, {threads} threads: {} rows, {} expected",
                    got.len(),
                    expected.len()
                );
            }
        }
    }
}
