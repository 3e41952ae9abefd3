//! The interactive shell through a pseudo-terminal: line editing, prompts,
//! multi-line statements, Ctrl-C and the progress bar.

use std::process::Command;

use rexpect::session::spawn_command;

fn shell() -> rexpect::session::PtySession {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("weir"));
    cmd.env("HOME", std::env::temp_dir())
        .args(["--threads", "2"]);
    spawn_command(cmd, Some(60_000)).expect("weir starts on a pty")
}

#[test]
fn interactive_statements_span_lines_and_errors_do_not_end_the_shell() {
    // Like a person, wait for each prompt before typing: the line editor
    // may discard type-ahead when it takes the terminal.
    let mut p = shell();
    p.exp_string("weir> ").unwrap();
    p.send_line("SELECT 40 +").unwrap();
    p.exp_string("...> ").unwrap();
    p.send_line("2 AS answer;").unwrap();
    p.exp_string("| 42     |").unwrap();
    p.exp_string("weir> ").unwrap();
    p.send_line("SELECT nope;").unwrap();
    p.exp_string("Error: Binder Error").unwrap();
    p.exp_string("weir> ").unwrap();
    p.send_line(".mode csv").unwrap();
    p.exp_string("weir> ").unwrap();
    p.send_line("SELECT 'still here' AS s;").unwrap();
    p.exp_string("s\r\nstill here").unwrap();
    p.exp_string("weir> ").unwrap();
    p.send_line(".quit").unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn ctrl_c_cancels_the_running_statement_after_the_progress_bar_shows() {
    let mut p = shell();
    p.exp_string("weir> ").unwrap();
    p.send_line("SELECT count(*) FROM range(4000000000) WHERE range % 7 = 1;")
        .unwrap();
    // the bar appears once the statement has run for 2 s
    p.exp_regex(r"\[=* *\] +\d+%").unwrap();
    p.send_control('c').unwrap();
    p.exp_string("Error: Interrupted").unwrap();
    p.exp_string("weir> ").unwrap();
    p.send_line("SELECT 'alive' AS s;").unwrap();
    p.exp_string("alive").unwrap();
    p.exp_string("weir> ").unwrap();
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn history_recalls_earlier_statements_and_is_saved() {
    let home = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("weir"));
    cmd.env("HOME", home.path()).args(["--threads", "1"]);
    let mut p = spawn_command(cmd, Some(60_000)).expect("weir starts on a pty");
    p.exp_string("weir> ").unwrap();
    p.send_line("SELECT 6 * 7 AS answer;").unwrap();
    p.exp_string("| 42     |").unwrap();
    p.exp_string("weir> ").unwrap();
    // Up arrow brings the statement back; Enter runs it again
    p.send("\x1b[A").unwrap();
    p.flush().unwrap();
    p.exp_string("SELECT 6 * 7 AS answer;").unwrap();
    p.send("\r").unwrap();
    p.flush().unwrap();
    p.exp_string("| 42     |").unwrap();
    p.exp_string("weir> ").unwrap();
    p.send_line(".quit").unwrap();
    p.exp_eof().unwrap();
    let history = std::fs::read_to_string(home.path().join(".weir_history")).unwrap();
    assert!(history.contains("SELECT 6 * 7 AS answer;"), "{history}");
}

#[test]
fn ctrl_c_stops_a_script_even_with_on_error_continue() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("s.sql");
    std::fs::write(
        &script,
        "SELECT count(*) AS n FROM range(4000000000) WHERE range % 7 = 1;\nSELECT 'after' || ' the interrupt' AS s;\n",
    )
    .unwrap();
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("weir"));
    cmd.env("HOME", std::env::temp_dir()).args([
        "--threads",
        "2",
        "--on-error",
        "continue",
        "-f",
        script.to_str().unwrap(),
    ]);
    let mut p = spawn_command(cmd, Some(60_000)).expect("weir starts on a pty");
    // the bar shows the statement is running
    p.exp_regex(r"\[=* *\] +\d+%").unwrap();
    p.send_control('c').unwrap();
    p.exp_string("s.sql:1:1: Interrupted: the query was cancelled")
        .unwrap();
    let rest = p.exp_eof().unwrap();
    assert!(!rest.contains("after the interrupt"), "{rest}");
    match p.process().wait().unwrap() {
        rexpect::process::WaitStatus::Exited(_, code) => assert_eq!(code, 130),
        other => panic!("{other:?}"),
    }
}
