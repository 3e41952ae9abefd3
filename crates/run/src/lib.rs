//! `weir run`: a folder of SQL files run as an incremental, parallel,
//! cached pipeline.
//!
//! Each `.sql` file of a project folder is a *stage*: one query whose
//! result becomes the table named after the file. Header comments set
//! options:
//!
//! ```sql
//! -- output: out/daily.parquet
//! -- mutex: warehouse
//! -- timeout: 30s
//! -- depends: load_rates
//! -- param: min_amount = 10
//! SELECT day, sum(amount) AS total FROM orders WHERE amount >= ${min_amount} GROUP BY day
//! ```
//!
//! Stages read files in place and other stages' tables; the dependencies
//! come from the planner's [`weir_planner::table_references`], plus the
//! stages a `-- depends:` header names. [`run`]
//! runs them on the executor's DAG scheduler: greedily in parallel, mutex
//! groups and timeouts respected, failures handled by [`OnError`].
//!
//! **Incremental.** A stage's fingerprint covers its normalised SQL, the
//! parameters it uses, [`FORMAT_VERSION`] and its inputs: the content
//! hashes of the files it reads and the output hashes of the stages it
//! reads. Outputs are cached as Parquet under `.weir/cache/`, named by
//! their content hash; a stage whose fingerprint matches its last run is
//! restored from there, not computed. State files (`.weir/state/`) are
//! written atomically (temporary file, fsync, rename).
//!
//! **Safe concurrency.** A stage runs under an execution lock
//! (`.weir/locks/<stage>.lock`, created with `O_CREAT|O_EXCL`, holding the
//! owner's PID and start time); a lock whose owner died is broken. The
//! decision to run or restore is taken inside the lock, on the state the
//! last holder left (check, lock, re-check), so two `weir run` processes
//! on one project never run a stage twice and both finish. Within a run,
//! each stage's state changes only by compare-and-swap from the state it
//! was read in.

mod error;
mod lock;
mod project;
mod runner;
mod state;

pub use error::{Error, Result};
pub use project::{Project, Stage};
pub use runner::{
    OnError, Reason, RunOptions, StageReport, StageStatus, Summary, explain, run, state_dir,
};
pub use state::FORMAT_VERSION;
