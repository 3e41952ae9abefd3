//! Files far larger than the memory a query may use: a scan reads them
//! part by part, so the process's peak memory stays far below the data.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

/// Runs the `weir` binary with `args` to its end, its address space
/// capped at `cap` bytes if given (`RLIMIT_AS`: every mapping counts,
/// the binary's own included); returns its status, its output and its
/// peak resident memory in bytes (`wait4`'s `ru_maxrss`).
// the child is reaped by `wait4`, which `Child` does not see
#[allow(clippy::zombie_processes)]
fn run_measured(args: &[&str], cap: Option<u64>) -> (i32, String, u64) {
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("weir"));
    command
        .args(args)
        .env("HOME", std::env::temp_dir())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if let Some(cap) = cap {
        let limit = libc::rlimit {
            rlim_cur: cap as libc::rlim_t,
            rlim_max: cap as libc::rlim_t,
        };
        // SAFETY: between fork and exec the closure only calls
        // `setrlimit`, which is async-signal-safe, on a value it owns
        unsafe {
            command.pre_exec(move || {
                if libc::setrlimit(libc::RLIMIT_AS, &limit) == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            });
        }
    }
    let mut child = command.spawn().expect("weir starts");
    let mut out = String::new();
    child
        .stdout
        .take()
        .expect("piped stdout")
        .read_to_string(&mut out)
        .expect("weir's output");
    let pid = libc::pid_t::try_from(child.id()).expect("a pid");
    let mut status = 0;
    // SAFETY: `rusage` is plain data that `wait4` fills in; `pid` is our
    // own child, not yet waited for (`Child` never waits on its own)
    let (waited, usage) = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        (libc::wait4(pid, &mut status, 0, &mut usage), usage)
    };
    assert_eq!(waited, pid, "wait4 failed");
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    // Linux reports kibibytes
    let peak = u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024;
    (code, out, peak)
}

#[test]
fn aggregating_a_parquet_file_far_larger_than_the_memory_cap() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.parquet");
    let path = path.to_str().unwrap();
    // 1,000,000 rows of a 1000-byte string (dictionary-encoded on disk: a
    // few MB; 1 GB once decoded) in row groups of 5,000 rows (5 MB decoded
    // each)
    let rows = 1_000_000u64;
    let (code, _, _) = run_measured(
        &[
            "-c",
            &format!(
                "COPY (SELECT i AS id, repeat(chr(65 + (i % 20)::INTEGER), 1000) AS s \
             FROM range({rows}) t(i)) TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 5000)"
            ),
        ],
        None,
    );
    assert_eq!(code, 0, "COPY failed");
    let decoded = rows * 1000;
    // the process may map half of what the file decodes to (its own
    // binary, a debug build of about 380 MB, included)
    let cap = decoded / 2;
    let (code, out, peak) = run_measured(
        &[
            "--threads",
            "2",
            "--format",
            "csv",
            "-c",
            &format!(
                "SELECT count(*) AS n, sum(length(s)) AS bytes, max(s) = repeat('T', 1000) AS top FROM '{path}'"
            ),
        ],
        Some(cap),
    );
    assert_eq!(code, 0, "the aggregation failed");
    assert_eq!(out, format!("n,bytes,top\n{rows},{decoded},true\n"));
    // the whole file read at once would take more than the decoded bytes;
    // two lanes hold a row group or two each (about 120 MB at peak in a
    // debug build, whatever the file's size)
    assert!(
        peak < decoded / 3,
        "peak resident memory {peak} bytes for {decoded} bytes of strings"
    );
}
