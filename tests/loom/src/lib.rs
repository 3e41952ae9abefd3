//! `weir-loom`: loom models of `weir-executor`'s lock-free protocols.
//!
//! This crate has no library code; everything lives in its test binary
//! (`tests/it`), a module per protocol:
//!
//! | model                | checks                                                          | planted bug |
//! |----------------------|-----------------------------------------------------------------|-------------|
//! | `claim`              | racing claimers run every step of a job exactly once            | `claim`     |
//! | `board`              | racing finishers take a job off the board exactly once           | `pop`       |
//! | `visibility`         | the waiter sees every step's plain writes once the job completed | `finished`  |
//! | `wake`               | no lost wake-up: a reserve worker never sleeps through work      | `wake`      |
//! | `wake_pending_token` | no lost wake-up when an old wake token is still pending          | `fences`    |
//! | `wake_idle_main`     | two main workers: the idle one helps (`idle_mains`, `Help`)      | `fences`    |
//! | `completion`         | finish or failure racing cancel: one outcome, signalled once     | `complete`  |
//! | `dag`                | two DAG nodes ending at once start their dependant exactly once  | `dag`       |
//! | `shutdown`           | dropping the executor with work in flight drains and joins       | —           |
//! | `board_history`      | the real `SkipSet` board against the board's contract           | —           |
//!
//! The loom stand-ins for the board and the channel order no more than the
//! real lock-free structures where the executor's fences matter (a scan
//! that misses an insert, a `try_send` that finds the channel full: both
//! synchronise with nobody), so deleting the fences is visible to loom.
//!
//! The models are compiled only under `--cfg weir_loom`, where
//! `weir-executor` and `weir-pool` take every atomic, lock, channel and
//! thread from `loom` (and the board is a loom `Mutex<BTreeSet>`), so a
//! plain `cargo test --workspace` builds them as nothing and runs only
//! `board_history`, which drives the real lock-free `SkipSet` board from
//! real threads. Run the models with
//!
//! ```text
//! cargo xtask loom            # every model, then every planted bug
//! cargo xtask loom claim      # only the models whose name contains `claim`
//! ```
//!
//! which is `cargo test -p weir-loom --release` with
//! `RUSTFLAGS="--cfg weir_loom"`, `LOOM_MAX_PREEMPTIONS=2` and
//! `CARGO_TARGET_DIR=target/loom` (or `$CARGO_TARGET_DIR-loom`). Then, for
//! each bug planted in the executor by `--cfg weir_loom_bug="claim" | "pop" |
//! "complete" | "wake" | "finished" | "fences" | "dag"`,
//! it rebuilds and runs only the tests named `planted_*`: each runs the
//! model that should catch its bug and passes only if loom reports a
//! failure.
