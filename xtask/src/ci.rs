//! `cargo xtask ci`: every check CI makes, in order, stopping at the first
//! failure.

use anyhow::Result;

use crate::{cargo, exec};

pub(crate) fn run() -> Result<()> {
    exec(cargo().args(["fmt", "--all", "--", "--check"]))?;
    exec(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    exec(cargo().args(["test", "--workspace"]))?;
    exec(
        cargo()
            .args(["doc", "--workspace", "--no-deps"])
            .env("RUSTDOCFLAGS", "-D warnings"),
    )?;
    crate::loom::run(&[])
}
