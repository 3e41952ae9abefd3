//! The public API: registration, files, settings, errors, interrupts.

use std::sync::Arc;
use std::time::Duration;

use arrow::array::{Array, ArrayRef, Float32Array, Int64Array, RecordBatch, StringViewArray};
use arrow::datatypes::{DataType, Field, Schema};
use weir_engine::{Config, Database, Error};

fn single_i64(db: &Database, sql: &str) -> i64 {
    let result = db.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let column = result.batches()[0].column(0).clone();
    column
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap_or_else(|| panic!("{sql}: expected BIGINT, got {}", column.data_type()))
        .value(0)
}

#[test]
fn registered_batches_are_stored_with_canonical_types() {
    let db = Database::new().unwrap();
    let schema = Arc::new(Schema::new(vec![
        Field::new("s", DataType::Utf8View, false),
        Field::new("f", DataType::Float32, true),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringViewArray::from(vec!["x", "y", "x"])),
        Arc::new(Float32Array::from(vec![Some(1.5), None, Some(2.5)])),
    ];
    let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
    db.register_batches("v", schema, vec![batch]).unwrap();
    let stored = db.table_schema("V").expect("names are case-insensitive");
    assert_eq!(stored.field(0).data_type(), &DataType::Utf8);
    // FLOAT is a type of its own, as in DuckDB
    assert_eq!(stored.field(1).data_type(), &DataType::Float32);
    assert_eq!(
        single_i64(&db, "SELECT count(*) FROM v WHERE s = 'x' AND f > 2"),
        1
    );
}

#[test]
fn csv_and_parquet_files_register_and_read_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("t.csv");
    std::fs::write(&csv, "k,v\n1,a\n2,b\n3,\n").unwrap();
    let db = Database::new().unwrap();
    db.register_csv("t", &csv).unwrap();
    assert_eq!(single_i64(&db, "SELECT count(v) FROM t"), 2);

    // write a Parquet file of the table and read it back both ways
    let result = db.execute("SELECT k, v FROM t ORDER BY k").unwrap();
    let parquet = dir.path().join("t.parquet");
    let mut writer = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(&parquet).unwrap(),
        result.schema().clone(),
        None,
    )
    .unwrap();
    for b in result.batches() {
        writer.write(b).unwrap();
    }
    writer.close().unwrap();
    db.register_parquet("p", &parquet).unwrap();
    assert_eq!(
        single_i64(&db, "SELECT sum(k) FROM p WHERE v IS NOT NULL"),
        3
    );
    let path = parquet.display();
    assert_eq!(
        single_i64(&db, &format!("SELECT count(*) FROM '{path}'")),
        3
    );
    assert_eq!(
        single_i64(&db, &format!("SELECT max(k) FROM read_parquet('{path}')")),
        3
    );
}

#[test]
fn a_missing_file_is_an_io_error_naming_the_path() {
    let db = Database::new().unwrap();
    let err = db.register_csv("t", "/no/such/file.csv").unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err:?}");
    assert!(err.to_string().contains("/no/such/file.csv"), "{err}");
    let err = db
        .execute("SELECT * FROM '/no/such/file.parquet'")
        .unwrap_err();
    assert!(err.to_string().contains("/no/such/file.parquet"), "{err}");
}

#[test]
fn a_query_past_its_timeout_is_cancelled() {
    let db = Database::with_config(Config {
        threads: 2,
        timeout: Some(Duration::from_millis(50)),
        morsel_rows: 4096,
    })
    .unwrap();
    // about 10^8 rows: far more than 50 ms of work on this machine
    let err = db
        .execute("SELECT count(*) FROM range(100000000) WHERE range % 7 = 3")
        .unwrap_err();
    assert!(matches!(err, Error::Timeout(_)), "{err:?}");
    assert!(err.to_string().contains("Timeout"), "{err}");
    // the database still works afterwards
    db.set_timeout(None);
    assert_eq!(single_i64(&db, "SELECT count(*) FROM range(10)"), 10);
}

#[test]
fn a_recursion_that_never_ends_stops_at_the_timeout() {
    let db = Database::with_config(Config {
        threads: 2,
        timeout: Some(Duration::from_millis(200)),
        ..Config::default()
    })
    .unwrap();
    // every round adds one row: no round ever adds none
    let err = db
        .execute("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r")
        .unwrap_err();
    assert!(matches!(err, Error::Timeout(_)), "{err:?}");
    // with UNION, a cycle ends once it comes back to a row
    db.set_timeout(None);
    let cycle =
        "WITH RECURSIVE r(n) AS (SELECT 0 UNION SELECT (n + 1) % 5 FROM r) SELECT count(*) FROM r";
    assert_eq!(single_i64(&db, cycle), 5);
}

#[test]
fn interrupt_cancels_a_running_query() {
    let db = Database::with_config(Config {
        threads: 2,
        morsel_rows: 4096,
        ..Config::default()
    })
    .unwrap();
    let progress = Arc::new(weir_engine::Progress::default());
    let handle = db.interrupt_handle();
    let runner = {
        let db = db.clone();
        let progress = progress.clone();
        std::thread::spawn(move || {
            db.execute_with(
                "SELECT count(*) FROM range(10000000000) WHERE range % 7 = 3",
                &weir_engine::ExecuteOptions {
                    progress: Some(progress),
                },
            )
        })
    };
    // interrupt once the query has demonstrably started
    while progress.morsels_done() == 0 {
        std::thread::yield_now();
    }
    handle.interrupt();
    let err = runner.join().unwrap().unwrap_err();
    assert!(matches!(err, Error::Cancelled), "{err:?}");
}

#[test]
fn settings_change_threads() {
    let db = Database::new().unwrap();
    db.set_threads(3).unwrap();
    assert_eq!(db.config().threads, 3);
    assert_eq!(
        single_i64(&db, "SELECT count(*) FROM range(1000) WHERE range % 2 = 0"),
        500
    );
    assert!(matches!(db.set_threads(0), Err(Error::InvalidInput(_))));
}

#[test]
fn the_statement_timeout_is_per_connection_and_threads_global() {
    let db = Database::with_config(Config {
        threads: 2,
        timeout: Some(Duration::from_secs(600)),
        morsel_rows: 4096,
    })
    .unwrap();
    let a = db.connect();
    let b = db.connect();
    // every connection starts with the database's start-up values
    assert_eq!(a.config().timeout, Some(Duration::from_secs(600)));
    a.execute("SET statement_timeout = '50ms'").unwrap();
    assert_eq!(a.config().timeout, Some(Duration::from_millis(50)));
    assert_eq!(b.config().timeout, Some(Duration::from_secs(600)));
    assert_eq!(db.config().timeout, Some(Duration::from_secs(600)));
    // the timeout applies to `a`'s statements only
    let err = a
        .execute("SELECT count(*) FROM range(100000000) WHERE range % 7 = 3")
        .unwrap_err();
    assert!(matches!(err, Error::Timeout(_)), "{err:?}");
    b.set_timeout(None);
    assert_eq!(b.config().timeout, None);
    assert_eq!(a.config().timeout, Some(Duration::from_millis(50)));
    // RESET restores the connection's start-up value
    a.execute("RESET statement_timeout").unwrap();
    assert_eq!(a.config().timeout, Some(Duration::from_secs(600)));
    assert_eq!(b.config().timeout, None);
    // threads is global: set through one connection, seen by all
    b.execute("SET threads = 3").unwrap();
    assert_eq!(a.config().threads, 3);
    assert_eq!(db.config().threads, 3);
    assert_eq!(
        single_i64(&db, "SELECT current_setting('threads')::BIGINT"),
        3
    );
    a.execute("RESET threads").unwrap();
    assert_eq!(b.config().threads, 2);
    // connections share the tables, and run from other threads
    a.execute("CREATE TABLE t AS SELECT range AS x FROM range(5)")
        .unwrap();
    let rows = std::thread::scope(|s| {
        s.spawn(|| b.execute("SELECT * FROM t").map(|r| r.num_rows()))
            .join()
            .unwrap()
    });
    assert_eq!(rows.unwrap(), 5);
    assert_eq!(single_i64(&db, "SELECT count(*) FROM t"), 5);
}

#[test]
fn an_interrupt_cancels_only_its_own_connections_statements() {
    let db = Database::with_config(Config {
        threads: 2,
        morsel_rows: 4096,
        ..Config::default()
    })
    .unwrap();
    let (a, b) = (db.connect(), db.connect());
    let progress = Arc::new(weir_engine::Progress::default());
    std::thread::scope(|s| {
        let runner = s.spawn(|| {
            a.execute_with(
                "SELECT count(*) FROM range(10000000000) WHERE range % 7 = 3",
                &weir_engine::ExecuteOptions {
                    progress: Some(progress.clone()),
                },
            )
        });
        while progress.morsels_done() == 0 {
            std::thread::yield_now();
        }
        // other connections' handles leave `a`'s statement running: it
        // goes on to finish many more morsels
        b.interrupt_handle().interrupt();
        db.interrupt_handle().interrupt();
        let seen = progress.morsels_done();
        while progress.morsels_done() < seen + 100 {
            assert!(
                !runner.is_finished(),
                "another connection's interrupt stopped it"
            );
            std::thread::yield_now();
        }
        a.interrupt_handle().interrupt();
        let err = runner.join().unwrap().unwrap_err();
        assert!(matches!(err, Error::Cancelled), "{err:?}");
    });
}

#[test]
fn clones_of_a_database_share_its_default_connection() {
    let db = Database::new().unwrap();
    let clone = db.clone();
    clone.set_timeout(Some(Duration::from_secs(9)));
    assert_eq!(db.config().timeout, Some(Duration::from_secs(9)));
    // a new connection is not the default one
    assert_eq!(db.connect().config().timeout, None);
}

#[test]
fn execute_returns_the_last_statement_and_stops_at_the_first_error() {
    let db = Database::new().unwrap();
    let r = db
        .execute(
            "CREATE TABLE a (x INTEGER); INSERT INTO a VALUES (1), (2); SELECT count(*) FROM a",
        )
        .unwrap();
    assert_eq!(r.num_rows(), 1);
    let err = db
        .execute("INSERT INTO a VALUES (3); SELECT nope FROM a; INSERT INTO a VALUES (4)")
        .unwrap_err();
    assert!(err.to_string().contains("nope"), "{err}");
    assert_eq!(single_i64(&db, "SELECT count(*) FROM a"), 3);
}

#[test]
fn explain_shows_steps_without_running_and_analyze_shows_rows() {
    let db = Database::new().unwrap();
    db.execute("CREATE TABLE t AS SELECT * FROM range(1000)")
        .unwrap();
    let plan = db
        .execute("EXPLAIN SELECT count(*) FROM t WHERE range > 10 AND range % 3 = 0")
        .unwrap();
    let text = plan.to_string();
    assert!(text.contains("Filter"), "{text}");
    let analyzed = db
        .execute("EXPLAIN ANALYZE SELECT count(*) FROM t WHERE range > 10 AND range % 3 = 0")
        .unwrap()
        .to_string();
    assert!(
        analyzed.contains("1000"),
        "rows in should be reported: {analyzed}"
    );
    let col = db.execute("EXPLAIN SELECT 1").unwrap();
    assert_eq!(col.schema().field(0).name(), "explain");
    assert!(!col.batches()[0].column(0).is_empty());
}

/// A window over rows sorted for it, of frames a few rows long: computed
/// range by range in parallel, and its state counted by the rows it
/// holds (each morsel's part is a slice of the sort's result; counted as
/// the whole result, the peak was a thousand times too high).
#[test]
fn a_window_over_sorted_rows_runs_by_ranges_and_counts_its_rows_once() {
    let db = Database::with_config(Config {
        threads: 2,
        morsel_rows: 100,
        ..Config::default()
    })
    .unwrap();
    db.execute("CREATE TABLE t AS SELECT range AS i, (range * 7) % 1000 AS v FROM range(100000)")
        .unwrap();
    let sql = "SELECT sum(m)::BIGINT FROM (SELECT max(v) OVER (ORDER BY i DESC ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING) AS m FROM t)";
    let plan = db.execute(&format!("EXPLAIN {sql}")).unwrap().to_string();
    assert!(
        plan.contains(
            "computed by ranges of rows in parallel (frames reach 2 row(s) back, 1 ahead)"
        ),
        "{plan}"
    );
    let keyed = db
        .execute("EXPLAIN SELECT count(*) OVER (ORDER BY v RANGE BETWEEN 3 PRECEDING AND CURRENT ROW) FROM t")
        .unwrap()
        .to_string();
    assert!(
        keyed.contains("frames reach as far as their RANGE offsets (searched by key)"),
        "{keyed}"
    );
    // the four values around each row: v of i and its neighbours, by i
    let v = |i: i64| (i * 7) % 1000;
    let want: i64 = (0..100_000i64)
        .map(|i| {
            (i - 1..=i + 2)
                .filter(|j| (0..100_000).contains(j))
                .map(v)
                .max()
                .unwrap()
        })
        .sum();
    assert_eq!(single_i64(&db, sql), want);
    let analyzed = db
        .execute(&format!("EXPLAIN ANALYZE {sql}"))
        .unwrap()
        .to_string();
    let peak: usize = analyzed
        .split("peak memory ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no peak in {analyzed}"));
    // 100,000 rows of two BIGINTs and a position are 2.4 MB; the sort's
    // copy, the window's and the frames' values are a few times that
    assert!(peak < 40_000_000, "peak {peak} in {analyzed}");
}

#[test]
fn threads_count_the_statements_own_thread() {
    let explain = |threads: usize| {
        let db = Database::with_config(Config {
            threads,
            morsel_rows: 100,
            ..Config::default()
        })
        .unwrap();
        db.execute("CREATE TABLE t AS SELECT * FROM range(1000)")
            .unwrap();
        assert_eq!(db.config().threads, threads);
        db.execute("EXPLAIN SELECT count(*) FROM t WHERE range % 3 = 0")
            .unwrap()
            .to_string()
    };
    // one thread is one worker; from two on, the statement's thread works
    // on its query beside threads - 1 workers
    let one = explain(1);
    assert!(
        one.contains("1 lane on 1 main + 0 reserve workers,"),
        "{one}"
    );
    let two = explain(2);
    assert!(
        two.contains("2 lanes on 1 main + 0 reserve workers and the query's thread"),
        "{two}"
    );
    let four = explain(4);
    assert!(
        four.contains("4 lanes on 2 main + 1 reserve workers and the query's thread"),
        "{four}"
    );
}

#[test]
fn clones_run_queries_from_many_threads_on_one_executor() {
    let db = Database::with_config(Config {
        threads: 2,
        morsel_rows: 1000,
        ..Config::default()
    })
    .unwrap();
    db.execute("CREATE TABLE t AS SELECT range AS v FROM range(100000)")
        .unwrap();
    let threads: Vec<_> = (0..4_i64)
        .map(|k| {
            let db = db.clone();
            std::thread::spawn(move || {
                (0..20_i64)
                    .map(|i| {
                        let m = 2 + (k * 20 + i) % 9;
                        let got =
                            single_i64(&db, &format!("SELECT count(*) FROM t WHERE v % {m} = 0"));
                        (got, (100_000 + m - 1) / m)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for t in threads {
        for (got, want) in t.join().unwrap() {
            assert_eq!(got, want);
        }
    }
}

#[test]
fn explain_shows_the_join_dag_and_analyze_its_build_and_probe() {
    let db = Database::new().unwrap();
    db.execute("CREATE TABLE big AS SELECT range AS k, range % 7 AS v FROM range(1000)")
        .unwrap();
    db.execute("CREATE TABLE small AS SELECT range AS k FROM range(10)")
        .unwrap();
    let sql = "SELECT count(*) FROM big, small WHERE big.k = small.k AND big.v > 0";
    let plan = db.execute(&format!("EXPLAIN {sql}")).unwrap().to_string();
    // the build side is a pipeline of its own, then the join's build;
    // the probe runs inside the probe side's pipeline, between its filter
    // and the count, once the build is done
    assert!(plan.contains("INNER Join: k = k"), "{plan}");
    assert!(plan.contains("Pipeline 1: Scan: small"), "{plan}");
    assert!(
        plan.contains("Join 1 build (after pipeline 1): INNER join, hash on k = k"),
        "{plan}"
    );
    assert!(
        plan.contains("Pipeline 2 (after join 1): Aggregate"),
        "{plan}"
    );
    let filter = plan
        .find("step 1: filter (v > 0)")
        .expect("the filter step");
    let probe = plan
        .find(": probe join 1: INNER join, hash on k = k")
        .expect("the probe step");
    let sink = plan.find("sink: partial Aggregate").expect("the sink");
    assert!(filter < probe && probe < sink, "{plan}");
    // count(*) reads no column: the probe gathers none of the pairs'
    assert!(plan.contains("(gathers 0 of 2 columns)"), "{plan}");
    let plan = db
        .execute("EXPLAIN SELECT sum(small.k) FROM big, small WHERE big.k = small.k")
        .unwrap()
        .to_string();
    assert!(plan.contains("(gathers 1 of 2 columns)"), "{plan}");
    let analyzed = db
        .execute(&format!("EXPLAIN ANALYZE {sql}"))
        .unwrap()
        .to_string();
    assert!(analyzed.contains("join 1 build hash table"), "{analyzed}");
    // its own line: the 857 rows with v > 0 in, the 8 matches out
    let line = analyzed
        .lines()
        .find(|l| l.contains("probe join 1"))
        .unwrap_or_else(|| panic!("no probe line in {analyzed}"));
    let numbers: Vec<&str> = line.split_whitespace().collect();
    assert!(
        numbers.windows(2).any(|w| w == ["857", "8"]),
        "{line}\n{analyzed}"
    );
}

/// The time on an EXPLAIN ANALYZE line, in milliseconds.
fn line_ms(line: &str) -> f64 {
    line.split_whitespace()
        .find_map(|w| w.strip_suffix("ms")?.parse().ok())
        .unwrap_or_else(|| panic!("no time in {line}"))
}

#[test]
fn a_join_build_reports_its_work_not_its_wait_for_the_probe() {
    let db = Database::with_config(Config {
        threads: 1,
        ..Config::default()
    })
    .unwrap();
    db.execute("CREATE TABLE big AS SELECT range AS k, range % 7 AS v FROM range(2000000)")
        .unwrap();
    db.execute("CREATE TABLE small AS SELECT range * 3 AS k FROM range(10)")
        .unwrap();
    // every build holds ten rows (`small`, or the ten rows of `big` that
    // join it); the grouping of `big` takes far longer, and a build whose
    // probe side waits for it must not count the wait
    let analyzed = db
        .execute(
            "EXPLAIN ANALYZE SELECT count(*) FROM big b JOIN small s ON b.k = s.k \
             JOIN (SELECT v, count(*) AS c FROM big GROUP BY v) g ON b.v = g.v",
        )
        .unwrap()
        .to_string();
    let grouping = analyzed
        .lines()
        .find(|l| l.contains("partial Aggregate: groupBy=[v]"))
        .unwrap_or_else(|| panic!("no grouping in {analyzed}"));
    let builds: Vec<&str> = analyzed
        .lines()
        .filter(|l| l.contains("build hash table"))
        .collect();
    assert!(builds.len() >= 2, "{analyzed}");
    for build in builds {
        assert!(
            build.split_whitespace().any(|w| w == "10")
                && line_ms(build) * 10.0 < line_ms(grouping),
            "{build}\n{grouping}\n{analyzed}"
        );
    }
}

#[test]
fn a_cte_named_twice_is_computed_once() {
    let db = Database::new().unwrap();
    db.execute("CREATE TABLE t AS SELECT range % 10 AS k, range AS v FROM range(1000)")
        .unwrap();
    let sql = "WITH r AS (SELECT k, sum(v) AS s FROM t GROUP BY k) \
               SELECT a.k, b.s FROM r a JOIN r b ON a.k = b.k \
               WHERE a.s = (SELECT max(s) FROM r)";
    let plan = db.execute(&format!("EXPLAIN {sql}")).unwrap().to_string();
    // the grouping over t is one pipeline; the other two readers wait for it
    let pipelines = plan
        .lines()
        .filter(|l| l.contains("Pipeline") && l.contains("Aggregate: groupBy=[k]"))
        .count();
    assert_eq!(pipelines, 1, "{plan}");
    let analyzed = db
        .execute(&format!("EXPLAIN ANALYZE {sql}"))
        .unwrap()
        .to_string();
    let partials = analyzed
        .lines()
        .filter(|l| l.contains("partial Aggregate: groupBy=[k]"))
        .count();
    assert_eq!(partials, 1, "{analyzed}");
    assert_eq!(
        crate::cells::rows(&db, sql),
        vec![vec!["9".to_string(), "50400".to_string()]]
    );
}

#[test]
fn a_top_n_over_a_whole_table_takes_its_first_bound_from_zones_already_computed() {
    let db = Database::with_config(Config {
        threads: 2,
        morsel_rows: 4096,
        ..Config::default()
    })
    .unwrap();
    // scattered keys with NULLs and ties; `id` orders the ties
    let n = 100_000i64;
    let keys: Vec<Option<i64>> = (0..n)
        .map(|i| (i % 13 != 0).then_some((i * 7919) % 50_021))
        .collect();
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, true),
        Field::new("id", DataType::Int64, false),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from(keys.clone())),
            Arc::new(Int64Array::from_iter_values(0..n)),
        ],
    )
    .unwrap();
    db.register_batches("t", schema, vec![batch]).unwrap();
    let cell = |k: Option<i64>| k.map_or("NULL".to_string(), |k| k.to_string());
    for (order, desc, nulls_first) in [
        ("DESC", true, false),
        ("DESC NULLS FIRST", true, true),
        ("ASC", false, false),
        ("ASC NULLS FIRST", false, true),
    ] {
        for limit in [1usize, 10, 100, 3000] {
            let mut want: Vec<(Option<i64>, i64)> = keys.iter().copied().zip(0..n).collect();
            want.sort_by(|a, b| {
                let by_key = match (a.0, b.0) {
                    (None, None) => std::cmp::Ordering::Equal,
                    (None, Some(_)) if nulls_first => std::cmp::Ordering::Less,
                    (None, Some(_)) => std::cmp::Ordering::Greater,
                    (Some(_), None) if nulls_first => std::cmp::Ordering::Greater,
                    (Some(_), None) => std::cmp::Ordering::Less,
                    (Some(x), Some(y)) if desc => y.cmp(&x),
                    (Some(x), Some(y)) => x.cmp(&y),
                };
                by_key.then(a.1.cmp(&b.1))
            });
            let want: Vec<Vec<String>> = want[..limit]
                .iter()
                .map(|(k, id)| vec![cell(*k), id.to_string()])
                .collect();
            let sql = format!("SELECT k, id FROM t ORDER BY k {order}, id LIMIT {limit}");
            // the first run computes the zones it reads, the second starts
            // from them; a filter keeps the zones from giving a bound
            for run in 0..2 {
                assert_eq!(crate::cells::rows(&db, &sql), want, "{sql}, run {run}");
            }
            let filtered = format!(
                "SELECT k, id FROM t WHERE id % 2 = 0 ORDER BY k {order}, id LIMIT {limit}"
            );
            let want_even: Vec<Vec<String>> = {
                let all = crate::cells::rows(
                    &db,
                    &format!("SELECT k, id FROM t WHERE id % 2 = 0 ORDER BY k {order}, id"),
                );
                all[..limit].to_vec()
            };
            assert_eq!(crate::cells::rows(&db, &filtered), want_even, "{filtered}");
        }
    }
    // with the zones known, the ten best of 49 blocks' greatest values
    // bound the top 10 before a row is read: about ten blocks are read
    let (offered, read) = scan_rows(&db, "SELECT k, id FROM t ORDER BY k DESC LIMIT 10");
    assert_eq!(offered, 100_000);
    assert!(read <= 16 * 2048, "{read} rows read");
}

/// The rows the scan of `t` was offered and the rows it read, from
/// EXPLAIN ANALYZE of `sql`.
fn scan_rows(db: &Database, sql: &str) -> (usize, usize) {
    crate::cells::analyzed_rows(db, sql, "scan t")
}

#[test]
fn top_n_reads_only_the_zones_that_can_beat_its_threshold() {
    let db = Database::with_config(Config {
        threads: 1,
        morsel_rows: 4096,
        ..Config::default()
    })
    .unwrap();
    // a rising key: once the first morsel sets the threshold, no later
    // block's least value can beat it
    db.execute("CREATE TABLE t AS SELECT range AS k, range % 7 AS v FROM range(100000)")
        .unwrap();
    let sql = "SELECT k, v FROM t WHERE v <> 3 ORDER BY k LIMIT 5";
    let result = db.execute(sql).unwrap();
    let keys: Vec<i64> = result.batches()[0]
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap()
        .values()
        .to_vec();
    assert_eq!(keys, [0, 1, 2, 4, 5]);
    // all 100,000 rows offered, only the first morsel's read
    assert_eq!(scan_rows(&db, sql), (100_000, 4096));
}

#[test]
fn nested_subqueries_run_from_a_thread_with_a_small_stack() {
    // planning and building the pipelines recurse once per level; both
    // move to a stack of their own where the caller's runs short
    let depth = 150;
    let sql = format!("SELECT {}1{}", "(SELECT ".repeat(depth), ")".repeat(depth));
    let value = std::thread::Builder::new()
        .stack_size(512 << 10)
        .spawn(move || {
            let db = Database::new().unwrap();
            single_i64(&db, &format!("SELECT CAST(({sql}) AS BIGINT)"))
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(value, 1);
}
