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
