//! `weir --demo`: the benchmark queries on generated TPC-H data.

use std::io::Write;
use std::time::Instant;

use anyhow::Result;

use crate::shell::{Shell, report};

/// The benchmark queries of `benches/queries.sql`, labelled by their
/// preceding `-- NAME` comment.
const QUERIES: &str = include_str!("../../../benches/queries.sql");

/// Pairs of (label, SQL) from [`QUERIES`].
pub(crate) fn queries() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut label = String::new();
    for line in QUERIES.lines() {
        if let Some(l) = line.strip_prefix("-- ") {
            label = l.trim().to_string();
        } else if !line.trim().is_empty() {
            out.push((label.clone(), line.trim().trim_end_matches(';').to_string()));
        }
    }
    out
}

/// Generates `lineitem` at scale factor `scale`, runs every benchmark query
/// with its time, then EXPLAIN ANALYZE of F2. False if a query failed.
pub(crate) fn run(shell: &mut Shell, scale: f64) -> Result<bool> {
    eprintln!("Generating TPC-H lineitem at scale factor {scale} in memory...");
    let start = Instant::now();
    let batches = weir_engine::tpch::lineitem(scale)?;
    let schema = batches
        .first()
        .map(|b| b.schema())
        .ok_or_else(|| anyhow::anyhow!("the generator produced no rows"))?;
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    shell.db.register_batches("lineitem", schema, batches)?;
    eprintln!("{rows} rows in {:.2} s\n", start.elapsed().as_secs_f64());
    let mut ok = true;
    // a closed stdout (`weir --demo | head`) ends the demo quietly: the
    // errors go to main, which exits on a broken pipe without a word
    let say = |text: String| -> Result<()> {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{text}")?;
        Ok(out.flush()?)
    };
    for (label, sql) in queries() {
        say(format!("-- {label}: {sql}"))?;
        let start = Instant::now();
        ok &= shell.run_statement(&sql);
        say(format!(
            "({label} took {:.1} ms)\n",
            start.elapsed().as_secs_f64() * 1e3
        ))?;
    }
    if let Some((label, sql)) = queries().into_iter().find(|(l, _)| l == "F2") {
        say(format!("-- EXPLAIN ANALYZE of {label}"))?;
        match shell.execute_with_progress(&format!("EXPLAIN ANALYZE {sql}")) {
            Ok(result) => {
                for batch in result.batches() {
                    let lines = batch
                        .column(0)
                        .as_any()
                        .downcast_ref::<arrow::array::StringArray>();
                    for line in lines.into_iter().flatten().flatten() {
                        say(line.to_string())?;
                    }
                }
            }
            Err(e) => {
                report(&e.to_string());
                ok = false;
            }
        }
    }
    Ok(ok)
}
