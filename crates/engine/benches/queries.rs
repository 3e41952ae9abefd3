//! The TPC-H benchmark queries of `benches/queries.sql` and
//! `benches/breakers.sql` on `lineitem`.
//!
//! `cargo xtask bench queries -- [--sf 1] [--threads N] [--reps 5] [--only F1,G1]`
//! times the labelled queries; `--sql QUERY` (repeatable) times ad-hoc
//! queries on an empty database instead (e.g. over `range()`).
//!
//! Generates `lineitem` at the scale factor (cached as Parquet under
//! `target/tpch/`), loads it into memory, runs each query once to warm up
//! and then `--reps` times, and prints per query the median time, rows/s
//! over the table and the first result row. Writes
//! `target/bench/queries.json`.

use std::fs::File;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use arrow::util::display::{ArrayFormatter, FormatOptions};
use weir_engine::{Config, Database};

// the `weir` binary's allocator, so the numbers are the binary's
#[path = "../../cli/src/alloc.rs"]
mod alloc;

fn main() {
    alloc::keep_freed_pages();
    let mut sf = 1.0_f64;
    let mut threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut reps = 5_usize;
    let mut only: Option<String> = None;
    let mut sqls: Vec<String> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--sf" => {
                sf = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--sf NUMBER")
            }
            "--threads" => {
                threads = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--threads N")
            }
            "--reps" => reps = args.next().and_then(|v| v.parse().ok()).expect("--reps N"),
            "--only" => only = args.next(),
            "--sql" => sqls.push(args.next().expect("--sql QUERY")),
            "--bench" => {} // passed by `cargo bench`
            other => panic!(
                "unknown argument {other}: --sf SF --threads N --reps N --only NAME[,NAME] --sql QUERY"
            ),
        }
    }
    if !sqls.is_empty() {
        // ad-hoc queries (e.g. over range()), no lineitem
        let db = Database::with_config(Config {
            threads,
            ..Config::default()
        })
        .expect("database");
        for sql in &sqls {
            let mut times = Vec::with_capacity(reps);
            for rep in 0..=reps {
                let start = Instant::now();
                db.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
                if rep > 0 {
                    times.push(start.elapsed());
                }
            }
            times.sort();
            let median = times
                .get(times.len() / 2)
                .copied()
                .unwrap_or(Duration::ZERO);
            println!(
                "median {:>9.2} ms  {threads} threads  {sql}",
                median.as_secs_f64() * 1e3
            );
        }
        return;
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let cache = root.join(format!("target/tpch/sf{sf}"));
    let parquet = cache.join("lineitem.parquet");
    if !parquet.exists() {
        eprintln!("generating lineitem sf={sf} into {}", parquet.display());
        std::fs::create_dir_all(&cache).expect("create cache dir");
        let batches = weir_engine::tpch::lineitem(sf).expect("generate lineitem");
        let tmp = cache.join("lineitem.parquet.tmp");
        let mut writer = parquet::arrow::ArrowWriter::try_new(
            File::create(&tmp).expect("create parquet"),
            batches[0].schema(),
            None,
        )
        .expect("parquet writer");
        for b in &batches {
            writer.write(b).expect("write batch");
        }
        writer.close().expect("close parquet");
        std::fs::rename(&tmp, &parquet).expect("rename parquet");
    }
    let db = Database::with_config(Config {
        threads,
        ..Config::default()
    })
    .expect("database");
    let load = Instant::now();
    db.register_parquet("lineitem", &parquet)
        .expect("load lineitem");
    let rows = db
        .execute("SELECT count(*) FROM lineitem")
        .expect("count")
        .batches()[0]
        .column(0)
        .as_any()
        .downcast_ref::<arrow::array::Int64Array>()
        .expect("count is BIGINT")
        .value(0);
    eprintln!(
        "loaded {rows} rows in {:.2} s; {threads} threads, {reps} reps",
        load.elapsed().as_secs_f64()
    );

    let mut text =
        std::fs::read_to_string(root.join("benches/queries.sql")).expect("benches/queries.sql");
    // the breaker shapes (high-cardinality GROUP BY, top-N, sort, DISTINCT)
    if let Ok(more) = std::fs::read_to_string(root.join("benches/breakers.sql")) {
        text.push_str(&more);
    }
    let mut label = String::new();
    let mut json = Vec::new();
    for line in text.lines() {
        if let Some(l) = line.strip_prefix("-- ") {
            // the label is the first word; the rest says what it shows
            label = l.split_whitespace().next().unwrap_or_default().to_string();
            continue;
        }
        let sql = line.trim().trim_end_matches(';');
        if sql.is_empty()
            || only
                .as_ref()
                .is_some_and(|o| !o.split(',').any(|l| l == label))
        {
            continue;
        }
        let mut first = String::new();
        let mut out_rows = 0;
        let mut times = Vec::with_capacity(reps);
        for rep in 0..=reps {
            let start = Instant::now();
            let result = db.execute(sql).unwrap_or_else(|e| panic!("{label}: {e}"));
            let elapsed = start.elapsed();
            if rep == 0 {
                out_rows = result.num_rows();
                first = first_row(&result);
            } else {
                times.push(elapsed);
            }
        }
        times.sort();
        let median = times
            .get(times.len() / 2)
            .copied()
            .unwrap_or(Duration::ZERO);
        let rate = rows as f64 / median.as_secs_f64().max(1e-9);
        let peak = peak_memory(&db, sql);
        println!(
            "{label:<3} median {:>9.2} ms  {:>8.0} Mrows/s  peak {:>8.1} MiB  rows_out={out_rows} first={first}",
            median.as_secs_f64() * 1e3,
            rate / 1e6,
            peak as f64 / (1 << 20) as f64
        );
        json.push(format!(
            "{{\"query\":\"{label}\",\"median_ms\":{:.3},\"rows_per_s\":{rate:.0},\"peak_bytes\":{peak},\"rows_out\":{out_rows},\"first\":\"{}\"}}",
            median.as_secs_f64() * 1e3,
            first.replace('"', "'")
        ));
    }
    let out_dir = root.join("target/bench");
    std::fs::create_dir_all(&out_dir).expect("create target/bench");
    let out = out_dir.join("queries.json");
    std::fs::write(
        &out,
        format!("{{\"sf\":{sf},\"threads\":{threads},\"reps\":{reps},\"rows\":{rows},\"queries\":[{}]}}\n", json.join(",")),
    )
    .expect("write json");
    eprintln!("wrote {}", out.display());
}

/// The peak breaker memory EXPLAIN ANALYZE reports for `sql` (0 if it
/// reports none).
fn peak_memory(db: &Database, sql: &str) -> u64 {
    let Ok(result) = db.execute(&format!("EXPLAIN ANALYZE {sql}")) else {
        return 0;
    };
    let options = FormatOptions::default();
    for batch in result.batches() {
        for column in batch.columns() {
            let Ok(formatter) = ArrayFormatter::try_new(column.as_ref(), &options) else {
                continue;
            };
            for i in 0..batch.num_rows() {
                let line = formatter.value(i).to_string();
                if let Some(n) = line
                    .split("peak memory ")
                    .nth(1)
                    .and_then(|rest| rest.split(' ').next())
                    .and_then(|n| n.parse().ok())
                {
                    return n;
                }
            }
        }
    }
    0
}

fn first_row(result: &weir_engine::QueryResult) -> String {
    let Some(batch) = result.batches().first() else {
        return "None".into();
    };
    let options = FormatOptions::default().with_null("NULL");
    let cells: Vec<String> = batch
        .columns()
        .iter()
        .map(|c| {
            ArrayFormatter::try_new(c.as_ref(), &options)
                .map(|f| f.value(0).to_string())
                .unwrap_or_default()
        })
        .collect();
    format!("({})", cells.join(", "))
}
