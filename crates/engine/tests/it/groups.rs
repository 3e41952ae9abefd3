//! GROUP BY over many morsels and lanes: whichever way the lanes find
//! their groups (a map by value, hash tables) and merge them (by value
//! ranges, by radix buckets), every thread count gives the same groups.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Array, AsArray, Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Int64Type, Schema};
use rand::{Rng, SeedableRng, rngs::StdRng};
use weir_engine::Database;

/// `(count(*), sum(v))` per key.
type Groups = HashMap<Option<i64>, (i64, i64)>;

fn table(db: &Database, keys: &[Option<i64>]) -> Groups {
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, true),
        Field::new("v", DataType::Int64, false),
    ]));
    let batches = keys
        .chunks(10_000)
        .enumerate()
        .map(|(c, chunk)| {
            let v = (0..chunk.len()).map(|i| (c * 10_000 + i) as i64 % 1000);
            RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(Int64Array::from(chunk.to_vec())),
                    Arc::new(Int64Array::from_iter_values(v)),
                ],
            )
            .unwrap()
        })
        .collect();
    db.register_batches("t", schema, batches).unwrap();
    let mut want = Groups::new();
    for (i, k) in keys.iter().enumerate() {
        let e = want.entry(*k).or_default();
        e.0 += 1;
        e.1 += i as i64 % 1000;
    }
    want
}

fn groups(db: &Database) -> Groups {
    let result = db
        .execute("SELECT k, count(*), sum(v)::BIGINT FROM t GROUP BY k")
        .unwrap();
    let mut got = Groups::new();
    for b in result.batches() {
        let (k, n, s) = (
            b.column(0).as_primitive::<Int64Type>(),
            b.column(1).as_primitive::<Int64Type>(),
            b.column(2).as_primitive::<Int64Type>(),
        );
        for i in 0..b.num_rows() {
            let key = k.is_valid(i).then(|| k.value(i));
            let old = got.insert(key, (n.value(i), s.value(i)));
            assert!(old.is_none(), "group {key:?} twice");
        }
    }
    got
}

#[test]
fn integer_keys_group_alike_on_any_number_of_lanes() {
    let mut rng = StdRng::seed_from_u64(17);
    let rows = 600_000;
    let close: Vec<Option<i64>> = (0..rows)
        .map(|_| (rng.random_range(0..50) > 0).then(|| 1000 + rng.random_range(0..150_000)))
        .collect();
    // the same, then one value far off near the end: one lane gives its
    // map up, so every lane merges by hash
    let mut far = close.clone();
    far[rows - 5] = Some(1 << 40);
    // either side of zero (words far apart), and sorted runs that only
    // grow (the map's window grows with them)
    let signed: Vec<Option<i64>> = (0..rows)
        .map(|_| Some(rng.random_range(-500..500)))
        .collect();
    let rising: Vec<Option<i64>> = (0..rows as i64).map(|i| Some(i / 3)).collect();
    for (name, keys) in [
        ("close", close),
        ("far", far),
        ("signed", signed),
        ("rising", rising),
    ] {
        let db = Database::new().unwrap();
        let want = table(&db, &keys);
        for threads in [1, 2, 4] {
            db.set_threads(threads).unwrap();
            assert!(groups(&db) == want, "{name} on {threads} threads");
            let distinct = db.execute("SELECT count(DISTINCT k) FROM t").unwrap();
            let n = distinct.batches()[0]
                .column(0)
                .as_primitive::<Int64Type>()
                .value(0);
            let non_null = want.keys().filter(|k| k.is_some()).count();
            assert_eq!(n as usize, non_null, "{name} on {threads} threads");
        }
    }
}

#[test]
fn keys_of_two_small_columns_group_alike_on_any_number_of_lanes() {
    // a one-letter VARCHAR and a small integer (as TPC-H Q1's flags): a
    // map over both words; then the same with NULLs from some row on,
    // which give the map up mid-way (a key of two words with a NULL)
    let rows = 400_000;
    let flags = ["A", "N", "R", "F", "O"];
    let mut rng = StdRng::seed_from_u64(29);
    let letters: Vec<&str> = (0..rows).map(|_| flags[rng.random_range(0..5)]).collect();
    let small: Vec<Option<i64>> = (0..rows).map(|_| Some(rng.random_range(0..40))).collect();
    let mut late_nulls = small.clone();
    for (i, v) in late_nulls.iter_mut().enumerate().skip(300_000) {
        if i % 7 == 0 {
            *v = None;
        }
    }
    for (name, numbers) in [("plain", small), ("late NULLs", late_nulls)] {
        let schema = Arc::new(Schema::new(vec![
            Field::new("f", DataType::Utf8, false),
            Field::new("n", DataType::Int64, true),
        ]));
        let batches = (0..rows)
            .step_by(10_000)
            .map(|at| {
                let end = (at + 10_000).min(rows);
                RecordBatch::try_new(
                    schema.clone(),
                    vec![
                        Arc::new(arrow::array::StringArray::from(letters[at..end].to_vec())),
                        Arc::new(Int64Array::from(numbers[at..end].to_vec())),
                    ],
                )
                .unwrap()
            })
            .collect();
        let db = Database::new().unwrap();
        db.register_batches("t", schema, batches).unwrap();
        let mut want: HashMap<(String, Option<i64>), i64> = HashMap::new();
        for (f, n) in letters.iter().zip(&numbers) {
            *want.entry((f.to_string(), *n)).or_default() += 1;
        }
        for threads in [1, 2, 4] {
            db.set_threads(threads).unwrap();
            let result = db
                .execute("SELECT f, n, count(*) FROM t GROUP BY f, n")
                .unwrap();
            let mut got: HashMap<(String, Option<i64>), i64> = HashMap::new();
            for b in result.batches() {
                let f = arrow::compute::cast(b.column(0), &DataType::Utf8).unwrap();
                let f = f.as_string::<i32>();
                let (n, c) = (
                    b.column(1).as_primitive::<Int64Type>(),
                    b.column(2).as_primitive::<Int64Type>(),
                );
                for i in 0..b.num_rows() {
                    let key = (f.value(i).to_owned(), n.is_valid(i).then(|| n.value(i)));
                    assert!(
                        got.insert(key, c.value(i)).is_none(),
                        "{name}: a group twice"
                    );
                }
            }
            assert!(got == want, "{name} on {threads} threads");
        }
    }
}

#[test]
fn keys_of_many_values_in_no_order_group_alike_on_any_number_of_lanes() {
    // 400K groups of two integers over 800K rows in random order: lanes
    // beside others pass the groups from which they put rows aside for
    // the merge partitions (with NULLs, and both signs)
    let mut rng = StdRng::seed_from_u64(43);
    let rows = 800_000;
    let (a, b): (Vec<Option<i64>>, Vec<i64>) = (0..rows)
        .map(|_| {
            let g = rng.random_range(0..400_000i64);
            ((g % 101 != 0).then_some(g / 400 - 500), g % 400)
        })
        .unzip();
    let schema = Arc::new(Schema::new(vec![
        Field::new("a", DataType::Int64, true),
        Field::new("b", DataType::Int64, false),
    ]));
    let batches = (0..rows)
        .step_by(50_000)
        .map(|at| {
            RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(Int64Array::from(a[at..at + 50_000].to_vec())),
                    Arc::new(Int64Array::from(b[at..at + 50_000].to_vec())),
                ],
            )
            .unwrap()
        })
        .collect();
    let db = Database::new().unwrap();
    db.register_batches("t", schema, batches).unwrap();
    let mut want: HashMap<(Option<i64>, i64), (i64, i64)> = HashMap::new();
    for (&a, &b) in a.iter().zip(&b) {
        let e = want.entry((a, b)).or_default();
        e.0 += 1;
        e.1 += b;
    }
    for threads in [1, 2, 4] {
        db.set_threads(threads).unwrap();
        let result = db
            .execute("SELECT a, b, count(*), sum(b)::BIGINT FROM t GROUP BY a, b")
            .unwrap();
        let mut got = HashMap::new();
        for batch in result.batches() {
            let col = |i: usize| batch.column(i).as_primitive::<Int64Type>();
            let (ka, kb, n, s) = (col(0), col(1), col(2), col(3));
            for i in 0..batch.num_rows() {
                let key = (ka.is_valid(i).then(|| ka.value(i)), kb.value(i));
                let old = got.insert(key, (n.value(i), s.value(i)));
                assert!(old.is_none(), "group {key:?} twice on {threads} threads");
            }
        }
        assert_eq!(got.len(), want.len(), "{threads} threads");
        assert!(got == want, "groups differ on {threads} threads");
        let distinct = db
            .execute("SELECT count(*) FROM (SELECT DISTINCT a, b FROM t)")
            .unwrap();
        let n = distinct.batches()[0]
            .column(0)
            .as_primitive::<Int64Type>()
            .value(0);
        assert_eq!(n as usize, want.len(), "DISTINCT on {threads} threads");
    }
}

#[test]
fn more_than_a_million_groups_group_alike_on_one_lane_and_several() {
    // 1.2M groups of two integers, each of two rows far apart: a lone lane
    // puts rows aside once its table takes 32 MiB, lanes beside others
    // from 64K groups; every count must come out 2
    let db = Database::new().unwrap();
    let sql = "SELECT count(*), sum(c), min(c), max(c) FROM \
               (SELECT range % 1200000 AS a, range % 3 AS b, count(*) AS c \
                FROM range(2400000) GROUP BY a, b)";
    for threads in [1, 2] {
        db.set_threads(threads).unwrap();
        let result = db.execute(sql).unwrap();
        let batch = &result.batches()[0];
        let values: Vec<i64> = (0..4)
            .map(|c| {
                let column = arrow::compute::cast(batch.column(c), &DataType::Int64).unwrap();
                column.as_primitive::<Int64Type>().value(0)
            })
            .collect();
        assert_eq!(values, [1_200_000, 2_400_000, 2, 2], "{threads} threads");
        // the partial aggregate's rows out are its groups and the rows it
        // put aside: more than the 1.2M groups once rows were put aside
        let (rows_in, rows_out) = crate::cells::analyzed_rows(&db, sql, "partial Aggregate");
        assert_eq!(rows_in, 2_400_000, "{threads} threads");
        assert!(
            rows_out > 1_200_000,
            "{threads} threads: {rows_out} rows out"
        );
    }
}
