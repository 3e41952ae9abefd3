//! Project automation for Weir: `cargo xtask <command>`.
//!
//! - `cargo xtask ci`: what CI runs: fmt check, clippy with `-D warnings`,
//!   the tests, the docs with `-D warnings`, then the loom models.
//! - `cargo xtask loom`: the loom models in `tests/loom`, then each planted
//!   bug, which the models must catch.
//! - `cargo xtask bench [executor|queries|tpch|lineitem|all] [-- ARGS]`: criterion
//!   benchmarks of the executor, and the TPC-H benchmark queries.

mod bench;
mod ci;
mod layering;
mod loom;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let cmd = args.next().unwrap_or_default();
    let rest: Vec<String> = args.collect();
    match cmd.as_str() {
        "ci" => ci::run(),
        "loom" => loom::run(&rest),
        "bench" => bench::run(&rest),
        "" | "help" | "--help" | "-h" => {
            println!(
                "usage: cargo xtask <ci | loom [FILTER] | bench [executor|queries|tpch|lineitem|all] [-- ARGS]>"
            );
            Ok(())
        }
        other => bail!("unknown xtask command `{other}` (try `cargo xtask help`)"),
    }
}

/// The workspace root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}

/// A `cargo` command run from the workspace root, through `$CARGO`.
fn cargo() -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root());
    cmd
}

/// Runs `cmd`, failing with its command line if it exits non-zero.
fn exec(cmd: &mut Command) -> Result<()> {
    eprintln!("$ {cmd:?}");
    let status = cmd
        .status()
        .with_context(|| format!("could not start {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} failed with {status}");
    }
    Ok(())
}
