//! Sharing workers between queries: a lane or merge task lends its worker
//! to younger queries between units of work (morsels, partitions).
//!
//! The executor's [`StepContext::yield_now`] runs work of jobs received
//! after the caller's, so yielding on every morsel would make an old short
//! query wait behind a young long one. A step therefore yields only once
//! it has run for [`YIELD_AFTER`]: a query shorter than that never lends
//! its workers, and a long one lends them to whatever arrives meanwhile,
//! so a short query submitted while a long one runs finishes in about its
//! own time.

use std::time::{Duration, Instant};

use weir_executor::StepContext;

/// How long a step runs before it lends its worker to younger jobs.
pub(crate) const YIELD_AFTER: Duration = Duration::from_millis(10);

/// A step's yield point; see the module docs.
pub(crate) struct YieldPoint {
    started: Instant,
}

impl YieldPoint {
    /// A yield point for a step starting now.
    pub(crate) fn new() -> Self {
        Self {
            started: Instant::now(),
        }
    }

    /// Between two units of work: runs waiting younger work here if this
    /// step has run long enough. Call it holding no lock and no morsel.
    pub(crate) fn between_units(&self, ctx: &StepContext<'_>) {
        if ctx.should_yield() && self.started.elapsed() >= YIELD_AFTER {
            ctx.yield_now();
        }
    }
}
