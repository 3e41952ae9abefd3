//! Scripts: `.read` nesting, error locations, broken pipes, Ctrl-C.

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use crate::weir;

#[test]
fn a_script_that_reads_itself_is_a_cycle_error_not_a_stack_overflow() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("loop.sql"), ".read loop.sql\n").unwrap();
    let out = weir()
        .current_dir(dir.path())
        .args(["-f", "loop.sql"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with("Error: loop.sql:1:1: .read cycle: "),
        "{err}"
    );
    assert!(err.contains("loop.sql -> "), "{err}");
    assert!(!err.contains("overflow"), "{err}");

    // a.sql reads b.sql reads a.sql: the cycle names both
    std::fs::write(dir.path().join("a.sql"), ".read b.sql\n").unwrap();
    std::fs::write(dir.path().join("b.sql"), "SELECT 1 AS one;\n.read a.sql\n").unwrap();
    let out = weir()
        .current_dir(dir.path())
        .args(["--format", "csv", "-f", "a.sql"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "one\n1\n");
    let cycle = err.lines().next().unwrap();
    assert!(
        cycle.starts_with("Error: b.sql:2:1: .read cycle: "),
        "{err}"
    );
    assert!(
        cycle.contains("a.sql -> ") && cycle.contains("b.sql -> ") && cycle.ends_with("a.sql"),
        "{err}"
    );
}

#[test]
fn read_nesting_has_a_depth_limit() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..100 {
        std::fs::write(
            dir.path().join(format!("s{i}.sql")),
            format!(".read s{}.sql\n", i + 1),
        )
        .unwrap();
    }
    let out = weir()
        .current_dir(dir.path())
        .args(["-f", "s0.sql"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with("Error: s63.sql:1:1: .read of \"s64.sql\" nests more than 64 scripts deep"),
        "{err}"
    );
}

#[test]
fn script_errors_name_the_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("s1.sql"),
        "SELECT 1 AS a;\nSELECT 2 AS b;\nSELECT 3 AS c, nope FROM range(1);\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("s2.sql"),
        "SELECT 1 AS a; SELECT\n  nope\nFROM range(1);\n  SELECT 1 // 0;\n",
    )
    .unwrap();
    let out = weir()
        .current_dir(dir.path())
        .args(["--format", "csv", "-f", "s1.sql"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "a\n1\nb\n2\n");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Error: s1.sql:3:16: Binder Error: Referenced column \"nope\" not found in FROM clause!\n"
    );
    // a statement that starts mid-line and spans lines; then one whose
    // error has no position but its statement's start
    let out = weir()
        .current_dir(dir.path())
        .args(["--on-error", "continue", "--format", "csv", "-f", "s2.sql"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].starts_with("Error: s2.sql:2:3: Binder Error: Referenced column \"nope\""),
        "{err}"
    );
    assert!(lines[1].starts_with("Error: s2.sql:4:"), "{err}");
    assert!(lines[1].contains("Division by zero"), "{err}");
}

#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    for args in [
        vec!["--format", "csv", "-c", "SELECT * FROM range(1000000)"],
        vec!["--format", "json", "-c", "SELECT * FROM range(1000000)"],
        vec!["--demo", "--scale", "0.001", "--threads", "2"],
    ] {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("weir"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // read two lines, as `head -2` does, then close the pipe
        let mut reader = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        for _ in 0..2 {
            line.clear();
            reader.read_line(&mut line).unwrap();
            assert!(!line.is_empty(), "{args:?}");
        }
        drop(reader);
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(
            !err.contains("Error") && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn output_and_once_send_results_to_files() {
    let dir = tempfile::tempdir().unwrap();
    let script = "\
.mode csv
.once once.csv
SELECT 1 AS a;
SELECT 2 AS b;
.output all.csv
SELECT 3 AS c;
SELECT 4 AS d;
.output
SELECT 5 AS e;
";
    let out = weir()
        .current_dir(dir.path())
        .write_stdin(script)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "b\n2\ne\n5\n");
    let read = |f: &str| std::fs::read_to_string(dir.path().join(f)).unwrap();
    assert_eq!(read("once.csv"), "a\n1\n");
    assert_eq!(read("all.csv"), "c\n3\nd\n4\n");
    let out = weir()
        .current_dir(dir.path())
        .write_stdin(".once no-such-dir/x.csv\n")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot open \"no-such-dir/x.csv\""),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
