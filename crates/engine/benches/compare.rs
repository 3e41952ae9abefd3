//! Weir's side of `cargo xtask bench tpch|lineitem`: times SQL files over
//! TPC-H tables kept as Parquet, beside `benches/compare_peer.py` (DuckDB's
//! side, same arguments, same output), so the xtask prints both in one run.
//!
//! ```text
//! cargo bench -p weir-engine --bench compare -- --data DIR --sf SF
//!     [--tables lineitem,orders] --queries PATH [--queries PATH]
//!     [--threads N] [--reps 5] [--only Q01,Q03] [--memory] --out FILE
//! ```
//!
//! - `--data DIR`: one `<table>.parquet` per TPC-H table, generated at
//!   scale factor `--sf` when missing (written to a temporary name, then
//!   renamed). `--tables` loads only those (default: all eight).
//! - `--queries PATH`: a folder (each `*.sql` file is one query, labelled
//!   by its upper-cased stem: `q01.sql` is `Q01`) or a file of labelled
//!   queries (`-- LABEL` lines, then one query per line).
//! - Each query runs once to warm up (an error is recorded, not fatal),
//!   then `--reps` times; the median is reported.
//! - `--memory`: each query also runs once in a fresh process, which
//!   reports the growth of its peak resident set over the set right after
//!   loading (`/proc/self/clear_refs` resets the peak first), so the
//!   number includes everything the query allocates, as for DuckDB.
//! - `{data}` in a query is replaced by the data folder, so a query may
//!   read the Parquet files themselves (`benches/load.sql`).
//! - `--out FILE`: one line per query, tab-separated: label, median ms,
//!   rows out, peak bytes (0 unless `--memory`), error (empty if none).

use std::fmt::Write as _;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use weir_engine::{Config, Database, tpch};

// the `weir` binary's allocator, so the numbers are the binary's
#[path = "../../cli/src/alloc.rs"]
mod alloc;

struct Args {
    data: PathBuf,
    sf: f64,
    tables: Vec<String>,
    queries: Vec<PathBuf>,
    threads: usize,
    reps: usize,
    only: Option<Vec<String>>,
    memory: bool,
    out: Option<PathBuf>,
    /// Internal: measure the peak memory of one query and print it.
    child: Option<String>,
}

fn parse_args() -> Args {
    let mut a = Args {
        data: PathBuf::new(),
        sf: 1.0,
        tables: tpch::TABLES.iter().map(|t| t.to_string()).collect(),
        queries: Vec::new(),
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        reps: 5,
        only: None,
        memory: false,
        out: None,
        child: None,
    };
    let mut args = std::env::args().skip(1);
    let usage = "--data DIR --sf SF [--tables T,..] --queries PATH.. [--threads N] [--reps N] [--only L,..] [--memory] [--out FILE]";
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .unwrap_or_else(|| panic!("{arg} needs a value: {usage}"))
        };
        match arg.as_str() {
            "--data" => a.data = value().into(),
            "--sf" => a.sf = value().parse().expect("--sf NUMBER"),
            "--tables" => a.tables = value().split(',').map(str::to_string).collect(),
            "--queries" => a.queries.push(value().into()),
            "--threads" => a.threads = value().parse().expect("--threads N"),
            "--reps" => a.reps = value().parse().expect("--reps N"),
            "--only" => a.only = Some(value().split(',').map(str::to_string).collect()),
            "--out" => a.out = Some(value().into()),
            "--child" => a.child = Some(value()),
            "--memory" => a.memory = true,
            "--bench" => {} // passed by `cargo bench`
            other => panic!("unknown argument {other}: {usage}"),
        }
    }
    assert!(
        !a.data.as_os_str().is_empty() && !a.queries.is_empty(),
        "{usage}"
    );
    a
}

/// The labelled queries of `path` (a folder of `.sql` files or a file of
/// `-- LABEL` lines each followed by one query per line).
fn queries(path: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if path.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .map(|e| e.expect("folder entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "sql"))
            .collect();
        files.sort();
        for f in files {
            let text =
                std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            let label = f
                .file_stem()
                .expect("a file name")
                .to_string_lossy()
                .to_uppercase();
            out.push((label, text.trim().trim_end_matches(';').to_string()));
        }
        return out;
    }
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut label = String::new();
    for line in text.lines() {
        if let Some(l) = line.strip_prefix("-- ") {
            // the label is the first word; the rest says what it shows
            label = l.split_whitespace().next().unwrap_or_default().to_string();
            continue;
        }
        let sql = line.trim().trim_end_matches(';');
        if !sql.is_empty() {
            out.push((label.clone(), sql.to_string()));
        }
    }
    out
}

/// Writes every missing table of `tables` under `dir` as Parquet.
fn generate(dir: &Path, sf: f64, tables: &[String]) {
    std::fs::create_dir_all(dir).expect("create the data folder");
    for t in tables {
        let path = dir.join(format!("{t}.parquet"));
        if path.exists() {
            continue;
        }
        eprintln!("generating {t} sf={sf} into {}", path.display());
        let batches = tpch::table(t, sf).unwrap_or_else(|e| panic!("generate {t}: {e}"));
        let tmp = dir.join(format!("{t}.parquet.tmp"));
        let schema = batches
            .first()
            .map(|b| b.schema())
            .expect("a TPC-H table has rows");
        let mut writer = parquet::arrow::ArrowWriter::try_new(
            File::create(&tmp).expect("create parquet"),
            schema,
            None,
        )
        .expect("parquet writer");
        for b in &batches {
            writer.write(b).expect("write batch");
        }
        writer.close().expect("close parquet");
        std::fs::rename(&tmp, &path).expect("rename parquet");
    }
}

fn load(a: &Args) -> Database {
    let db = Database::with_config(Config {
        threads: a.threads,
        ..Config::default()
    })
    .expect("database");
    for t in &a.tables {
        db.register_parquet(t, a.data.join(format!("{t}.parquet")))
            .unwrap_or_else(|e| panic!("load {t}: {e}"));
    }
    db
}

/// `VmRSS` or `VmHWM` of this process, in bytes.
fn status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .map_or(0, |kb| kb * 1024)
}

fn main() {
    alloc::keep_freed_pages();
    let a = parse_args();
    // `{data}` in a query is the data folder, so a query may read the files
    let folder = std::path::absolute(&a.data).unwrap_or_else(|_| a.data.clone());
    let all: Vec<(String, String)> = a
        .queries
        .iter()
        .flat_map(|p| queries(p))
        .map(|(label, sql)| (label, sql.replace("{data}", &folder.display().to_string())))
        .collect();
    if let Some(label) = &a.child {
        let (_, sql) = all
            .iter()
            .find(|(l, _)| l == label)
            .unwrap_or_else(|| panic!("no query {label}"));
        let db = load(&a);
        let before = status_bytes("VmRSS:");
        // reset the peak resident set to the current one
        let _ = std::fs::write("/proc/self/clear_refs", "5");
        let result = db.execute(sql);
        let peak = status_bytes("VmHWM:");
        drop(result);
        println!("peak_delta_bytes {}", peak.saturating_sub(before));
        return;
    }
    generate(&a.data, a.sf, &a.tables);
    let load_start = Instant::now();
    let db = load(&a);
    eprintln!(
        "weir: loaded {} in {:.2} s; {} threads, {} reps",
        a.tables.join(","),
        load_start.elapsed().as_secs_f64(),
        a.threads,
        a.reps
    );
    let mut out = String::new();
    for (label, sql) in &all {
        if a.only.as_ref().is_some_and(|o| !o.contains(label)) {
            continue;
        }
        let (median, rows, error) = match db.execute(sql) {
            Err(e) => (Duration::ZERO, 0, e.to_string().replace(['\t', '\n'], " ")),
            Ok(first) => {
                let rows = first.num_rows();
                drop(first);
                let mut times = Vec::with_capacity(a.reps);
                let mut error = String::new();
                for _ in 0..a.reps {
                    let start = Instant::now();
                    match db.execute(sql) {
                        Ok(r) => {
                            times.push(start.elapsed());
                            drop(r);
                        }
                        Err(e) => error = e.to_string().replace(['\t', '\n'], " "),
                    }
                }
                times.sort();
                let median = times.get(times.len() / 2).copied().unwrap_or_default();
                (median, rows, error)
            }
        };
        let peak = if a.memory && error.is_empty() {
            child_peak(label)
        } else {
            0
        };
        eprintln!(
            "{label:<4} median {:>9.2} ms  rows {rows:<8} peak {:>8.1} MiB {error}",
            median.as_secs_f64() * 1e3,
            peak as f64 / (1 << 20) as f64
        );
        let _ = writeln!(
            out,
            "{label}\t{:.3}\t{rows}\t{peak}\t{error}",
            median.as_secs_f64() * 1e3
        );
    }
    match &a.out {
        Some(path) => std::fs::write(path, out).expect("write --out"),
        None => print!("{out}"),
    }
}

/// Runs this program again for `label` alone and returns the peak memory
/// it reports.
fn child_peak(label: &str) -> u64 {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    // drop --out/--memory/--only and their values, then ask for the child
    let mut kept = Vec::new();
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--out" | "--only" => i += 2,
            "--memory" | "--bench" => i += 1,
            _ => {
                kept.push(args[i].clone());
                i += 1;
            }
        }
    }
    args = kept;
    args.extend(["--child".to_string(), label.to_string()]);
    let exe = std::env::current_exe().expect("this program's path");
    let output = Command::new(exe)
        .args(&args)
        .output()
        .expect("run the child");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("peak_delta_bytes "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}
