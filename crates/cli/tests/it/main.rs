//! Tests of the real `weir` binary: flags, modes, dot commands, exit
//! statuses and errors, through pipes and a pseudo-terminal.

#[cfg(target_os = "linux")]
mod files;
mod flags;
mod printing;
mod run;
mod scripts;
#[cfg(unix)]
mod terminal;

use assert_cmd::Command;

/// The `weir` binary with a clean environment for the shell's history.
pub(crate) fn weir() -> Command {
    let mut cmd = Command::cargo_bin("weir").expect("the weir binary is built");
    cmd.env("HOME", std::env::temp_dir());
    cmd
}

/// Runs `weir args`, returning (status code, stdout, stderr).
pub(crate) fn run(args: &[&str], stdin: &str) -> (i32, String, String) {
    let out = weir()
        .args(args)
        .write_stdin(stdin)
        .output()
        .expect("weir runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
