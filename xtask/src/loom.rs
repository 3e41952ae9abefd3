//! `cargo xtask loom [FILTER]`: model-check the executor's protocols.
//!
//! Runs `tests/loom` with `--cfg weir_loom` in its own target directory (so
//! it does not evict the normal build): `target/loom`, or `$CARGO_TARGET_DIR`
//! with `-loom` appended when that is set. Then it rebuilds once per planted
//! bug (`--cfg weir_loom_bug="..."`) and runs the `planted` tests, which
//! assert that loom reports the bug. `LOOM_MAX_PREEMPTIONS` defaults to 2,
//! which keeps the whole run to a few minutes.
//!
//! A change of `RUSTFLAGS` rebuilds every crate under new file names, so
//! seven planted builds in one directory would keep seven copies of every
//! dependency (1.6 GB). The planted builds share a directory of their own
//! (`loom-planted` beside the models' one), emptied before each build.

use std::path::Path;

use anyhow::{Context, Result};

use crate::{cargo, exec, root};

/// The planted bugs, as declared in the workspace's `check-cfg`.
const PLANTED: &[&str] = &[
    "claim", "pop", "complete", "wake", "finished", "fences", "dag", "waiter",
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
    let planted = target.with_file_name(format!(
        "{}-planted",
        target
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("loom")
    ));
    let filter: Vec<String> = args.to_vec();
    let loom_test = |rustflags: String, target: &Path, filter: &[String]| -> Result<()> {
        let mut cmd = cargo();
        cmd.args(["test", "-p", "weir-loom", "--release", "--"])
            .args(filter)
            .env("RUSTFLAGS", rustflags)
            .env("CARGO_TARGET_DIR", target)
            .env(
                "LOOM_MAX_PREEMPTIONS",
                std::env::var("LOOM_MAX_PREEMPTIONS").unwrap_or_else(|_| "2".into()),
            );
        exec(&mut cmd)
    };
    loom_test("--cfg weir_loom".into(), &target, &filter)?;
    if !filter.is_empty() {
        return Ok(());
    }
    for bug in PLANTED {
        eprintln!("== planted bug `{bug}`: the models must catch it");
        remove_dir(&planted)?;
        loom_test(
            format!("--cfg weir_loom --cfg weir_loom_bug=\"{bug}\""),
            &planted,
            &["planted".to_string()],
        )?;
    }
    remove_dir(&planted)
}

/// Removes `dir` and all it holds; a directory that is not there is fine.
fn remove_dir(dir: &Path) -> Result<()> {
    match std::fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("could not remove {}", dir.display())),
    }
}
