//! `cargo xtask loom [FILTER]`: model-check the executor's protocols.
//!
//! Runs `tests/loom` with `--cfg weir_loom` in its own target directory (so
//! it does not evict the normal build): `target/loom`, or `$CARGO_TARGET_DIR`
//! with `-loom` appended when that is set. Then it rebuilds once per planted
//! bug (`--cfg weir_loom_bug="..."`) and runs the `planted` tests, which
//! assert that loom reports the bug. `LOOM_MAX_PREEMPTIONS` defaults to 2,
//! which keeps the whole run to a few minutes.

use anyhow::Result;

use crate::{cargo, exec, root};

/// The planted bugs, as declared in the workspace's `check-cfg`.
const PLANTED: &[&str] = &[
    "claim", "pop", "complete", "wake", "finished", "fences", "dag",
];

pub(crate) fn run(args: &[String]) -> Result<()> {
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => {
            let mut dir = dir;
            dir.push("-loom");
            std::path::PathBuf::from(dir)
        }
        None => root().join("target").join("loom"),
    };
    let filter: Vec<String> = args.to_vec();
    let loom_test = |rustflags: String, filter: &[String]| -> Result<()> {
        let mut cmd = cargo();
        cmd.args(["test", "-p", "weir-loom", "--release", "--"])
            .args(filter)
            .env("RUSTFLAGS", rustflags)
            .env("CARGO_TARGET_DIR", &target)
            .env(
                "LOOM_MAX_PREEMPTIONS",
                std::env::var("LOOM_MAX_PREEMPTIONS").unwrap_or_else(|_| "2".into()),
            );
        exec(&mut cmd)
    };
    loom_test("--cfg weir_loom".into(), &filter)?;
    if !filter.is_empty() {
        return Ok(());
    }
    for bug in PLANTED {
        eprintln!("== planted bug `{bug}`: the models must catch it");
        loom_test(
            format!("--cfg weir_loom --cfg weir_loom_bug=\"{bug}\""),
            &["planted".to_string()],
        )?;
    }
    Ok(())
}
