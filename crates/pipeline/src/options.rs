//! Per-query options and progress.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// Rows per morsel unless [`ExecOptions::morsel_rows`] says otherwise.
///
/// 64 Ki rows: a morsel's columns stay in L2, a morsel is ~10-50 µs of
/// work for a cheap filter, and an SF1 `lineitem` (6 M rows) gives ~90
/// morsels, plenty to balance two to eight lanes.
pub const DEFAULT_MORSEL_ROWS: usize = 65_536;

/// How to run one query.
#[derive(Clone, Debug)]
pub struct ExecOptions {
    /// Rows per morsel, the unit of parallel work (at least 1; 0 is read
    /// as 1).
    pub morsel_rows: usize,
    /// Collect a [`QueryProfile`](crate::QueryProfile) (EXPLAIN ANALYZE).
    pub analyze: bool,
    /// Give up with [`Error::Timeout`](crate::Error::Timeout) at this instant.
    pub deadline: Option<Instant>,
    /// Give up with [`Error::Cancelled`](crate::Error::Cancelled) once this
    /// flag is set (by another thread).
    pub cancel: Option<Arc<AtomicBool>>,
    /// Morsel counters for a progress display.
    pub progress: Option<Arc<Progress>>,
}

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions {
            morsel_rows: DEFAULT_MORSEL_ROWS,
            analyze: false,
            deadline: None,
            cancel: None,
            progress: None,
        }
    }
}

impl ExecOptions {
    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
    }

    pub(crate) fn is_past_deadline(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}

/// How far a running query is: morsels scheduled and finished.
///
/// [`execute`](crate::execute()) sets the total when it submits the query's
/// job and bumps the done count as each morsel finishes, so another thread
/// may poll it. A morsel that a `LIMIT` made unnecessary is never done.
#[derive(Debug, Default)]
pub struct Progress {
    morsels_total: AtomicU64,
    morsels_done: AtomicU64,
}

impl Progress {
    /// Fresh counters at zero.
    pub fn new() -> Self {
        Progress::default()
    }

    /// Morsels the running query's scan is cut into.
    pub fn morsels_total(&self) -> u64 {
        self.morsels_total.load(Ordering::Relaxed)
    }

    /// Morsels processed so far.
    pub fn morsels_done(&self) -> u64 {
        self.morsels_done.load(Ordering::Relaxed)
    }

    pub(crate) fn start(&self, total: u64) {
        self.morsels_done.store(0, Ordering::Relaxed);
        self.morsels_total.store(total, Ordering::Relaxed);
    }

    pub(crate) fn morsel_done(&self) {
        self.morsels_done.fetch_add(1, Ordering::Relaxed);
    }
}
