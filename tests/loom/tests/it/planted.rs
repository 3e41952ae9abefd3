//! Each bug planted in the executor by `--cfg weir_loom_bug="..."` must make
//! the model written for it fail. `cargo xtask loom` builds once per bug and
//! runs only these tests (their names contain `planted`).
//!
//! A failing assertion or a causality violation unwinds normally, so
//! [`expect_failure`] catches it with `catch_unwind`. A deadlock cannot be
//! caught that way: loom panics with no thread scheduled, and the first
//! destructor on the unwinding stack that touches a loom object (every
//! blocked thread holds a `MutexGuard` inside a `Condvar::wait`) panics
//! again, which aborts the process. So [`expect_deadlock`] runs its model
//! in a child process of this test binary and expects it to die reporting
//! the deadlock.

#![allow(dead_code)] // each planted build compiles one planted test

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::process::Command;

/// Runs `model` and returns loom's failure message; panics if the model
/// passed, that is if loom missed the planted bug.
fn expect_failure(bug: &str, model: impl FnOnce()) -> String {
    let Err(payload) = catch_unwind(AssertUnwindSafe(model)) else {
        panic!("loom did not catch the planted `{bug}` bug: the model passed");
    };
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "(a panic without a message)".to_owned());
    eprintln!("planted `{bug}` bug caught; loom reported: {message}");
    message
}

/// Runs the test named `test` (a model) alone in a child process of this
/// test binary and returns loom's deadlock report; panics if the child
/// passed or failed for another reason.
fn expect_deadlock(bug: &str, test: &str) -> String {
    let exe = std::env::current_exe().expect("the test binary's path");
    let output = Command::new(exe)
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("run the test binary");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success(),
        "loom did not catch the planted `{bug}` bug: `{test}` passed"
    );
    let Some(report) = stderr.lines().find(|line| line.starts_with("deadlock;")) else {
        panic!(
            "`{test}` failed ({}), but not by a deadlock:\n{stderr}",
            output.status
        );
    };
    eprintln!(
        "planted `{bug}` bug caught; `{test}` ended with {} and loom reported: {report}",
        output.status
    );
    report.to_owned()
}

#[cfg(weir_loom_bug = "claim")]
#[test]
fn planted_claim_bug_is_caught() {
    let message = expect_failure("claim", || {
        crate::check("step_claim", crate::claim::step_claim_model);
    });
    // Two claimers of one index race on its slot (loom sees the unsynchronised
    // access) or the second finds it empty.
    assert!(
        message.contains("UnsafeCell") || message.contains("claimed exactly once"),
        "{message}"
    );
}

#[cfg(weir_loom_bug = "pop")]
#[test]
fn planted_pop_bug_is_caught() {
    let message = expect_failure("pop", || {
        crate::check("board_removal", crate::board::board_removal_model);
    });
    assert!(message.contains("removed exactly once"), "{message}");
}

#[cfg(weir_loom_bug = "complete")]
#[test]
fn planted_complete_bug_is_caught() {
    let message = expect_failure("complete", || {
        crate::check(
            "finish_races_cancel",
            crate::completion::finish_races_cancel_model,
        );
    });
    assert!(
        message.contains("signalled twice") || message.contains("agrees with the outcome"),
        "{message}"
    );
}

#[cfg(weir_loom_bug = "wake")]
#[test]
fn planted_wake_bug_is_caught() {
    expect_deadlock("wake", "wake::wake_no_lost_wakeup");
}

#[cfg(weir_loom_bug = "finished")]
#[test]
fn planted_finished_bug_is_caught() {
    let message = expect_failure("finished", || {
        crate::check(
            "visibility",
            crate::visibility::step_writes_seen_by_the_waiter_model,
        );
    });
    // The waiter reads a cell whose write it is not ordered after.
    assert!(message.contains("Causality violation"), "{message}");
}

#[cfg(weir_loom_bug = "fences")]
#[test]
fn planted_fences_bug_is_caught() {
    // A reserve worker sleeps through a job announced while an old token
    // was pending, and an idle main worker through one announced as it
    // went idle.
    expect_deadlock("fences", "wake::wake_pending_token_no_lost_wakeup");
    expect_deadlock("fences", "wake::wake_idle_main_no_lost_wakeup");
}

#[cfg(weir_loom_bug = "dag")]
#[test]
fn planted_dag_bug_is_caught() {
    // Both finishers read the join's count as 2 and write 1: it never
    // starts, and the waiter waits for ever.
    expect_deadlock("dag", "dag::dag_join_starts_once");
}

#[cfg(weir_loom_bug = "waiter")]
#[test]
fn planted_waiter_bug_is_caught() {
    // The waiter sleeps without being counted: the offer of the job whose
    // other step the worker holds wakes nobody.
    expect_deadlock("waiter", "dag::dag_waiter_sleeps_through_no_offer");
}
