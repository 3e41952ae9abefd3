//! EXPLAIN ANALYZE: what each step did.

use std::fmt;
use std::time::Duration;

/// Per-step statistics of one query run (EXPLAIN ANALYZE).
///
/// Operators are listed bottom to top: the scan, the filter steps and the
/// sink of the parallel job (summed over its lanes), then the serial
/// steps after them (a merge of one task, a LIMIT over a finished
/// result). Each operator's `rows_in` equals the previous one's
/// `rows_out`.
#[derive(Clone, Debug, Default)]
pub struct QueryProfile {
    /// The operators, in data-flow order.
    pub operators: Vec<OperatorProfile>,
    /// Lanes of the parallel job.
    pub lanes: usize,
    /// Morsels the scan was cut into.
    pub morsels_total: u64,
    /// Wall time of the whole query.
    pub total: Duration,
    /// The most bytes of breaker state (hash tables, sort runs, top-N
    /// candidates, materialised results) held at once.
    pub peak_memory: usize,
}

/// One operator of a [`QueryProfile`].
#[derive(Clone, Debug, Default)]
pub struct OperatorProfile {
    /// What it is (`scan t`, `filter (a > 1)`, `Sort: ...`).
    pub name: String,
    /// Rows it received.
    pub rows_in: u64,
    /// Rows it passed on.
    pub rows_out: u64,
    /// Time spent in it, summed over lanes for parallel operators (so it
    /// may exceed the wall time).
    pub time: Duration,
    /// Morsels it processed on main workers (0 for a serial step).
    pub morsels_main: u64,
    /// Morsels it processed on reserve workers.
    pub morsels_reserve: u64,
    /// True for operators run by the lanes of the parallel job.
    pub parallel: bool,
}

impl fmt::Display for QueryProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = self
            .operators
            .iter()
            .map(|o| o.name.chars().count())
            .max()
            .unwrap_or(0)
            .clamp(8, 100);
        writeln!(
            f,
            "{:<width$}  {:>12}  {:>12}  {:>10}  {:>13}",
            "operator", "rows in", "rows out", "time", "morsels m/r"
        )?;
        for o in &self.operators {
            let mut name: String = o.name.chars().take(width).collect();
            if o.name.chars().count() > width {
                name.pop();
                name.push('…');
            }
            let morsels = if o.parallel {
                format!("{}/{}", o.morsels_main, o.morsels_reserve)
            } else {
                "serial".to_owned()
            };
            writeln!(
                f,
                "{name:<width$}  {:>12}  {:>12}  {:>8.3}ms  {morsels:>13}",
                o.rows_in,
                o.rows_out,
                o.time.as_secs_f64() * 1e3,
            )?;
        }
        write!(
            f,
            "{} lane{}, {} morsel{}, peak memory {} bytes, total {:.3}ms",
            self.lanes,
            if self.lanes == 1 { "" } else { "s" },
            self.morsels_total,
            if self.morsels_total == 1 { "" } else { "s" },
            self.peak_memory,
            self.total.as_secs_f64() * 1e3
        )
    }
}
