//! Non-interactive use: -c, -f, stdin, formats, errors, dot commands.

use crate::run;

fn ok(args: &[&str], stdin: &str) -> String {
    let (code, out, err) = run(args, stdin);
    assert_eq!(code, 0, "weir {args:?} failed: {err}");
    assert_eq!(err, "", "weir {args:?} wrote to stderr");
    out
}

#[test]
fn commands_run_in_order_and_print_csv() {
    let out = ok(
        &[
            "--format",
            "csv",
            "-c",
            "CREATE TABLE t (x INTEGER, s VARCHAR)",
            "-c",
            "INSERT INTO t VALUES (2, 'b'), (1, NULL)",
            "-c",
            "SELECT * FROM t ORDER BY x",
        ],
        "",
    );
    assert_eq!(out, "x,s\n1,\n2,b\n");
}

#[test]
fn json_prints_one_object_per_row_with_nulls() {
    let out = ok(
        &[
            "--format",
            "json",
            "-c",
            "SELECT range AS n, CASE WHEN range = 1 THEN NULL ELSE 'v' END AS s FROM range(2)",
        ],
        "",
    );
    assert_eq!(out, "{\"n\":0,\"s\":\"v\"}\n{\"n\":1,\"s\":null}\n");
}

#[test]
fn table_format_is_the_default() {
    let out = ok(&["-c", "SELECT 1 AS one, NULL AS nothing"], "");
    assert_eq!(
        out,
        "+-----+---------+\n| one | nothing |\n+-----+---------+\n| 1   | NULL    |\n+-----+---------+\n"
    );
}

#[test]
fn statements_without_rows_print_nothing_in_csv_and_json() {
    for format in ["csv", "json"] {
        let out = ok(
            &[
                "--format",
                format,
                "-c",
                "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1); DROP TABLE t",
            ],
            "",
        );
        assert_eq!(out, "", "{format}");
    }
}

#[test]
fn a_file_and_stdin_run_their_statements() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("s.sql");
    std::fs::write(
        &script,
        "CREATE TABLE t AS\n  SELECT range AS v FROM range(5);\nSELECT sum(v) AS total\nFROM t;\n",
    )
    .unwrap();
    let out = ok(&["--format", "csv", "-f", script.to_str().unwrap()], "");
    assert_eq!(out, "total\n10\n");
    let out = ok(
        &["--format", "csv"],
        "SELECT 6 * 7 AS answer;\nSELECT 'last' AS word",
    );
    assert_eq!(out, "answer\n42\nword\nlast\n");
}

#[test]
fn an_error_is_one_line_and_exit_one() {
    let (code, out, err) = run(
        &[
            "-c",
            "SELECT nope FROM range(1)",
            "-c",
            "SELECT 'not reached'",
        ],
        "",
    );
    assert_eq!(code, 1);
    assert_eq!(out, "");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("Error: ") && err.contains("nope"), "{err}");
}

#[test]
fn on_error_continue_runs_the_rest_but_still_fails() {
    let (code, out, err) = run(
        &[
            "--on-error",
            "continue",
            "--format",
            "csv",
            "-c",
            "SELECT 1 // 0",
            "-c",
            "SELECT 'after' AS w",
        ],
        "",
    );
    assert_eq!(code, 1);
    assert_eq!(out, "w\nafter\n");
    assert!(err.contains("Division by zero"), "{err}");
    let (code, out, _) = run(
        &[
            "--format",
            "csv",
            "-c",
            "SELECT 1 // 0; SELECT 'after' AS w",
        ],
        "",
    );
    assert_eq!((code, out.as_str()), (1, ""), "stop is the default");
}

#[test]
fn timer_prints_run_time_to_stderr() {
    let (code, out, err) = run(
        &[
            "--timer",
            "--format",
            "csv",
            "-c",
            "SELECT 1 AS x; SELECT 2 AS y",
        ],
        "",
    );
    assert_eq!(code, 0);
    assert_eq!(out, "x\n1\ny\n2\n");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    for line in lines {
        let secs = line
            .strip_prefix("Run Time (s): real ")
            .unwrap_or_else(|| panic!("{line}"));
        assert_eq!(secs.split('.').nth(1).map(str::len), Some(6), "{line}");
        assert!(secs.parse::<f64>().is_ok(), "{line}");
    }
}

#[test]
fn timeout_cancels_a_long_statement() {
    let (code, _, err) = run(
        &[
            "--timeout",
            "0.05",
            "--threads",
            "2",
            "-c",
            "SELECT count(*) FROM range(300000000) WHERE range % 7 = 1",
        ],
        "",
    );
    assert_eq!(code, 1);
    assert!(err.starts_with("Error: Timeout"), "{err}");
}

#[test]
fn threads_flag_is_validated_and_used() {
    let out = ok(
        &[
            "--threads",
            "1",
            "--format",
            "csv",
            "-c",
            "SELECT count(*) AS n FROM range(1000) WHERE range % 3 = 0",
        ],
        "",
    );
    assert_eq!(out, "n\n334\n");
    let (code, _, err) = run(&["--threads", "zero"], "");
    assert_eq!(code, 1);
    assert!(err.contains("\"zero\""), "{err}");
}

#[test]
fn version_and_help() {
    let out = ok(&["--version"], "");
    assert_eq!(out, format!("weir {}\n", env!("CARGO_PKG_VERSION")));
    let out = ok(&["--help"], "");
    for flag in [
        "-c",
        "-f",
        "--format",
        "--threads",
        "--timeout",
        "--on-error",
        "--timer",
        "--demo",
    ] {
        assert!(out.contains(flag), "help lacks {flag}");
    }
}

#[test]
fn unknown_flags_and_arguments_are_errors() {
    let (code, _, err) = run(&["--frobnicate"], "");
    assert_eq!(code, 1);
    assert!(
        err.starts_with("Error: unknown option \"--frobnicate\""),
        "{err}"
    );
    let (code, _, err) = run(&["-f", "/no/such/script.sql"], "");
    assert_eq!(code, 1);
    assert!(err.contains("/no/such/script.sql"), "{err}");
}

#[test]
fn dot_commands_work_in_scripts() {
    let script = "CREATE TABLE b (x INTEGER NOT NULL, s VARCHAR);\nCREATE TABLE a (d DATE);\n.tables\n.schema b\n.mode csv\nSELECT 1 AS one;\n.mode json\nSELECT 2 AS two;\n.help\n.quit\nSELECT 'not reached';\n";
    let out = ok(&[], script);
    let expected_start =
        "a\nb\nCREATE TABLE b(x INTEGER NOT NULL, s VARCHAR);\none\n1\n{\"two\":2}\n";
    assert!(out.starts_with(expected_start), "{out}");
    assert!(out.contains(".schema [TABLE]"), "help text: {out}");
    assert!(!out.contains("not reached"), "{out}");
}

#[test]
fn views_are_listed_and_shown_by_dot_commands() {
    let script = "CREATE TABLE b (x INTEGER);\nCREATE VIEW v (y) AS SELECT x * 2 FROM b;\nCREATE VIEW a AS SELECT 1 AS one;\n.tables\n.schema v\n.schema\n";
    let out = ok(&[], script);
    assert_eq!(
        out,
        "a\nb\nv\n\
         CREATE VIEW v (y) AS SELECT x * 2 FROM b;\n\
         CREATE VIEW a AS SELECT 1 AS one;\n\
         CREATE TABLE b(x INTEGER);\n\
         CREATE VIEW v (y) AS SELECT x * 2 FROM b;\n"
    );
}

#[test]
fn dot_read_runs_a_file_and_timer_toggles() {
    let dir = tempfile::tempdir().unwrap();
    let inner = dir.path().join("inner.sql");
    std::fs::write(&inner, "SELECT 'from inner' AS w;\n").unwrap();
    let script = format!(
        ".mode csv\n.read {}\n.timer on\nSELECT 1 AS x;\n.timer off\nSELECT 2 AS y;\n",
        inner.display()
    );
    let (code, out, err) = run(&[], &script);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "w\nfrom inner\nx\n1\ny\n2\n");
    assert_eq!(
        err.lines()
            .filter(|l| l.starts_with("Run Time (s): real "))
            .count(),
        1,
        "{err}"
    );
    let (code, _, err) = run(&[], ".bogus\n");
    assert_eq!(code, 1);
    assert!(err.contains(".bogus"), "{err}");
}

#[test]
fn no_progress_bar_when_stderr_is_not_a_terminal() {
    // long enough (over 2 s in a debug build? not needed: the bar is never
    // drawn off a terminal, whatever the duration)
    let (code, _, err) = run(
        &[
            "-c",
            "SELECT count(*) FROM range(20000000) WHERE range % 7 = 1",
        ],
        "",
    );
    assert_eq!(code, 0);
    assert_eq!(err, "");
}

#[test]
fn demo_runs_the_benchmark_queries_and_explain_analyze() {
    let (code, out, err) = run(&["--demo", "--scale", "0.001", "--threads", "2"], "");
    assert_eq!(code, 0, "{err}");
    for label in ["F1", "F2", "F3", "F4", "F5", "F6", "Q1"] {
        assert!(
            out.contains(&format!("-- {label}: SELECT")),
            "{label} missing: {out}"
        );
        assert!(
            out.contains(&format!("({label} took ")),
            "{label} time missing"
        );
    }
    assert!(out.contains("EXPLAIN ANALYZE of F2"), "{out}");
    assert!(out.contains("revenue"), "{out}");
}
