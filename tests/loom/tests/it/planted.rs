//! Each bug planted in the executor by `--cfg weir_loom_bug="..."` must make
//! the model written for it fail. `cargo xtask loom` builds once per bug and
//! runs only these tests.

use std::panic::{AssertUnwindSafe, catch_unwind};

/// Runs `model` and returns loom's failure message; panics if the model
/// passed, that is if loom missed the planted bug.
#[allow(dead_code)] // used by whichever planted test this build compiles
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

#[cfg(weir_loom_bug = "claim")]
#[test]
fn planted_claim_bug_is_caught() {
    expect_failure("claim", || {
        crate::check("step_claim", 2, crate::claim::step_claim_model)
    });
}

#[cfg(weir_loom_bug = "pop")]
#[test]
fn planted_pop_bug_is_caught() {
    expect_failure("pop", || {
        crate::check("board_removal", 2, crate::board::board_removal_model)
    });
}

#[cfg(weir_loom_bug = "complete")]
#[test]
fn planted_complete_bug_is_caught() {
    expect_failure("complete", || {
        crate::check(
            "finish_races_cancel",
            2,
            crate::completion::finish_races_cancel_model,
        )
    });
}

#[cfg(weir_loom_bug = "wake")]
#[test]
fn planted_wake_bug_is_caught() {
    expect_failure("wake", || {
        crate::check("wake", 2, crate::wake::wake_model)
    });
}
