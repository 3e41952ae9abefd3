//! `cargo xtask bench [executor|queries|tpch|lineitem|all] [-- ARGS]`.
//!
//! - `executor`: the criterion benches of `weir-executor`.
//! - `queries`: generates TPC-H `lineitem` (scale factor `--sf`, default 1,
//!   cached under `target/tpch/`), loads it and times `benches/queries.sql`
//!   and `benches/breakers.sql` (high-cardinality GROUP BY, top-N, full sort,
//!   DISTINCT), printing per query the median, rows/s, peak breaker memory
//!   and result, and writing `target/bench/queries.json`. ARGS go to the
//!   query bench (`--sf 0.1 --threads 2 --reps 5 --only G1,T10`, or
//!   `--sql QUERY` for ad-hoc queries).
//! - `tpch`: the 22 TPC-H queries of `benches/tpch/` over all eight tables,
//!   Weir and DuckDB in one run, side by side.
//! - `lineitem`: `benches/queries.sql` and `benches/breakers.sql` over
//!   `lineitem`, Weir and DuckDB in one run, side by side, and
//!   `benches/load.sql`: reading all of `lineitem.parquet` into memory.
//!
//! `tpch` and `lineitem` take `--sf SF` (default 1), `--threads N`
//! (default: every core), `--reps N`, `--only A,B`, `--memory` (also
//! measure each query's peak resident memory in a fresh process) and
//! `--rounds N` (default 1: run Weir then DuckDB N times in turn and
//! report each query's median over the rounds, so that a slow spell of a
//! shared machine falls on both engines; peak memory is measured in the
//! first round only). They
//! generate the tables once as Parquet under `target/tpch-data/sf<SF>/`,
//! run Weir (`crates/engine/benches/compare.rs`), then DuckDB
//! (`benches/compare_peer.py`, installing `duckdb` with pip if it is
//! missing) with the same arguments, and print one table: each median,
//! the ratio Weir / DuckDB, the geometric mean of the ratios, the peak
//! memory and the row counts (a differing count is flagged). The table is
//! also written to `target/bench/<suite>.md`.

use std::fmt::Write as _;
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::{cargo, exec, root};

pub(crate) fn run(args: &[String]) -> Result<()> {
    let (what, rest) = match args.first().map(String::as_str) {
        Some("executor" | "queries" | "tpch" | "lineitem" | "all") => {
            (args[0].as_str(), &args[1..])
        }
        Some("--") | None => ("all", args.get(1..).unwrap_or(&[])),
        Some(other) => {
            bail!("unknown bench `{other}`: executor | queries | tpch | lineitem | all")
        }
    };
    let rest: Vec<&str> = rest
        .iter()
        .map(String::as_str)
        .filter(|a| *a != "--")
        .collect();
    if matches!(what, "executor" | "all") {
        exec(cargo().args(["bench", "-p", "weir-executor", "--bench", "executor"]))?;
    }
    if matches!(what, "queries" | "all") {
        exec(
            cargo()
                .args(["bench", "-p", "weir-engine", "--bench", "queries", "--"])
                .args(&rest),
        )?;
    }
    match what {
        "tpch" => compare("tpch", &["benches/tpch"], None, &rest),
        "lineitem" => compare(
            "lineitem",
            &[
                "benches/queries.sql",
                "benches/breakers.sql",
                "benches/load.sql",
            ],
            Some("lineitem"),
            &rest,
        ),
        _ => Ok(()),
    }
}

/// One query's numbers from one engine.
struct Row {
    label: String,
    median_ms: f64,
    rows: u64,
    peak: u64,
    error: String,
}

fn parse_rows(text: &str) -> Vec<Row> {
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let mut f = l.splitn(5, '\t');
            let mut next = || f.next().unwrap_or_default().to_string();
            Row {
                label: next(),
                median_ms: next().parse().unwrap_or(0.0),
                rows: next().parse().unwrap_or(0),
                peak: next().parse().unwrap_or(0),
                error: next(),
            }
        })
        .collect()
}

/// Runs `queries` on Weir, then on DuckDB, over the TPC-H data, and
/// prints both side by side.
fn compare(suite: &str, queries: &[&str], tables: Option<&str>, args: &[&str]) -> Result<()> {
    let mut sf = "1".to_string();
    let mut threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .to_string();
    let mut pass: Vec<String> = Vec::new();
    let mut rounds = 1usize;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match *a {
            "--sf" => sf = it.next().context("--sf SF")?.to_string(),
            "--rounds" => {
                let n = it.next().context("--rounds N")?;
                rounds = n
                    .parse()
                    .ok()
                    .filter(|&r| r > 0)
                    .with_context(|| format!("--rounds takes a positive number, not `{n}`"))?;
            }
            "--threads" => threads = it.next().context("--threads N")?.to_string(),
            "--reps" | "--only" => {
                pass.push(a.to_string());
                pass.push(it.next().with_context(|| format!("{a} VALUE"))?.to_string());
            }
            "--memory" => pass.push(a.to_string()),
            other => bail!(
                "unknown argument `{other}`: --sf SF --threads N --reps N --only A,B --memory --rounds N"
            ),
        }
    }
    let root = root();
    let data = root.join(format!("target/tpch-data/sf{sf}"));
    let out_dir = root.join("target/bench");
    std::fs::create_dir_all(&out_dir)?;
    let weir_out = out_dir.join(format!("{suite}-weir.tsv"));
    let duck_out = out_dir.join(format!("{suite}-duckdb.tsv"));
    let mut common: Vec<String> = vec![
        "--data".into(),
        data.display().to_string(),
        "--sf".into(),
        sf.clone(),
        "--threads".into(),
        threads.clone(),
    ];
    if let Some(t) = tables {
        common.extend(["--tables".into(), t.into()]);
    }
    for q in queries {
        common.extend(["--queries".into(), root.join(q).display().to_string()]);
    }
    ensure_duckdb()?;
    let (mut weir_rounds, mut duck_rounds) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let args: Vec<&String> = common
            .iter()
            .chain(pass.iter().filter(|a| round == 0 || *a != "--memory"))
            .collect();
        exec(
            cargo()
                .args(["bench", "-p", "weir-engine", "--bench", "compare", "--"])
                .args(&args)
                .arg("--out")
                .arg(&weir_out),
        )?;
        exec(
            Command::new("python3")
                .current_dir(&root)
                .arg("benches/compare_peer.py")
                .args(&args)
                .arg("--out")
                .arg(&duck_out),
        )?;
        weir_rounds.push(parse_rows(&std::fs::read_to_string(&weir_out)?));
        duck_rounds.push(parse_rows(&std::fs::read_to_string(&duck_out)?));
    }
    let (weir, duck) = (over_rounds(weir_rounds), over_rounds(duck_rounds));
    let threads = if rounds > 1 {
        format!("{threads} threads, median of {rounds} rounds;")
    } else {
        format!("{threads} threads,")
    };
    let table = render(suite, &sf, &threads, &weir, &duck);
    print!("{table}");
    let md = out_dir.join(format!("{suite}.md"));
    std::fs::write(&md, &table)?;
    eprintln!("wrote {}", md.display());
    Ok(())
}

fn render(suite: &str, sf: &str, threads: &str, weir: &[Row], duck: &[Row]) -> String {
    let mib = |b: u64| {
        if b == 0 {
            "-".to_string()
        } else {
            format!("{:.0}", b as f64 / f64::from(1 << 20))
        }
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n{suite}: SF {sf}, {threads} medians in ms (Weir / DuckDB: below 1 is Weir faster)\n"
    );
    out.push_str("| query | Weir ms | DuckDB ms | Weir / DuckDB | Weir peak MiB | DuckDB peak MiB | rows | note |\n");
    out.push_str("|---|---:|---:|---:|---:|---:|---:|---|\n");
    let mut log_sum = 0.0;
    let mut n = 0;
    for w in weir {
        let d = duck.iter().find(|d| d.label == w.label);
        let (d_ms, ratio, d_peak, note) = match d {
            None => (
                "-".to_string(),
                "-".to_string(),
                "-".to_string(),
                "DuckDB did not run it".to_string(),
            ),
            Some(d) => {
                let mut note = String::new();
                if !w.error.is_empty() {
                    note = format!("Weir: {}", w.error);
                } else if !d.error.is_empty() {
                    note = format!("DuckDB: {}", d.error);
                } else if w.rows != d.rows {
                    note = format!("ROW COUNTS DIFFER: DuckDB {}", d.rows);
                }
                let ratio = if w.error.is_empty() && d.error.is_empty() && d.median_ms > 0.0 {
                    let r = w.median_ms / d.median_ms;
                    log_sum += r.ln();
                    n += 1;
                    format!("{r:.2}")
                } else {
                    "-".to_string()
                };
                (format!("{:.1}", d.median_ms), ratio, mib(d.peak), note)
            }
        };
        let w_ms = if w.error.is_empty() {
            format!("{:.1}", w.median_ms)
        } else {
            "error".to_string()
        };
        let note: String = note.chars().take(120).collect();
        let _ = writeln!(
            out,
            "| {} | {w_ms} | {d_ms} | {ratio} | {} | {d_peak} | {} | {note} |",
            w.label,
            mib(w.peak),
            w.rows
        );
    }
    if n > 0 {
        let _ = writeln!(
            out,
            "\ngeometric mean of Weir / DuckDB over the {n} queries both ran: {:.2}",
            (log_sum / f64::from(n)).exp()
        );
    }
    out
}

/// Each query's row of the first round, its time the median over the
/// rounds (of those without an error).
fn over_rounds(mut rounds: Vec<Vec<Row>>) -> Vec<Row> {
    let mut first = if rounds.is_empty() {
        Vec::new()
    } else {
        rounds.remove(0)
    };
    for row in &mut first {
        let mut times: Vec<f64> = std::iter::once(row.median_ms)
            .chain(
                rounds
                    .iter()
                    .filter_map(|r| r.iter().find(|x| x.label == row.label))
                    .filter(|x| x.error.is_empty())
                    .map(|x| x.median_ms),
            )
            .collect();
        times.sort_by(f64::total_cmp);
        row.median_ms = times[times.len() / 2];
    }
    first
}

/// Installs the `duckdb` Python package if `import duckdb` fails.
fn ensure_duckdb() -> Result<()> {
    let ok = Command::new("python3")
        .args(["-c", "import duckdb"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        exec(Command::new("python3").args(["-m", "pip", "install", "--quiet", "duckdb"]))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_query_takes_its_median_over_the_rounds() {
        let rounds = vec![
            parse_rows("Q1\t10.0\t4\t100\t\nQ2\t5.0\t1\t0\t\n"),
            parse_rows("Q1\t30.0\t4\t0\t\nQ2\t1.0\t1\t0\tboom\n"),
            parse_rows("Q1\t20.0\t4\t0\t\nQ2\t7.0\t1\t0\t\n"),
        ];
        let rows = over_rounds(rounds);
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].median_ms, rows[0].peak), (20.0, 100));
        // a round whose run failed is left out
        assert_eq!(rows[1].median_ms, 7.0);
    }
}
