//! `cargo xtask bench [executor|queries|all] [-- ARGS]`.
//!
//! - `executor`: the criterion benches of `weir-executor`.
//! - `queries`: generates TPC-H `lineitem` (scale factor `--sf`, default 1,
//!   cached under `target/tpch/`), loads it and times `bench/queries.sql`
//!   and `bench/breakers.sql` (high-cardinality GROUP BY, top-N, full sort,
//!   DISTINCT), printing per query the median, rows/s, peak breaker memory
//!   and result, and writing `target/bench/queries.json`. ARGS go to the
//!   query bench (`--sf 0.1 --threads 2 --reps 5 --only G1,T10`, or
//!   `--sql QUERY` for ad-hoc queries). DuckDB's numbers on the same data:
//!   `python3 bench/duckdb_peer.py --threads 2` (see docs/PERFORMANCE.md).

use anyhow::{Result, bail};

use crate::{cargo, exec};

pub(crate) fn run(args: &[String]) -> Result<()> {
    let (what, rest) = match args.first().map(String::as_str) {
        Some("executor" | "queries" | "all") => (args[0].as_str(), &args[1..]),
        Some("--") | None => ("all", args.get(1..).unwrap_or(&[])),
        Some(other) => bail!("unknown bench `{other}`: executor | queries | all"),
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
    Ok(())
}
