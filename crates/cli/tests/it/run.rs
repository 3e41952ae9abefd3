//! `weir run`: real projects in temporary folders, real processes.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use crate::weir;

/// A project folder holding `files` (name, text).
fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        write(dir.path(), name, text);
    }
    dir
}

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, text).unwrap();
}

/// `weir run DIR args...`: (status, stdout, stderr).
fn run(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = weir()
        .arg("run")
        .arg(dir)
        .args(["--threads", "2"])
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A stage's line: how it ended and its span in seconds.
#[derive(Debug, Clone, PartialEq)]
struct Line {
    status: String,
    span: Option<(f64, f64)>,
}

/// The stage lines of a run's output, by stage.
fn lines(stdout: &str) -> HashMap<String, Line> {
    let mut out = HashMap::new();
    for line in stdout.lines() {
        let (status, rest) = if let Some(r) = line.strip_prefix("not run  ") {
            ("not run", r)
        } else if let Some((word, r)) = line.split_once(' ') {
            (word, r.trim_start())
        } else {
            continue;
        };
        if !["ran", "skipped", "FAILED", "not run"].contains(&status) {
            continue;
        }
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let span = line.rfind('[').and_then(|i| {
            let inner = line[i + 1..].trim_end_matches(']');
            let (a, b) = inner.split_once("..")?;
            Some((
                a.trim_end_matches('s').parse().ok()?,
                b.trim_end_matches('s').parse().ok()?,
            ))
        });
        out.insert(
            name,
            Line {
                status: status.to_string(),
                span,
            },
        );
    }
    out
}

fn statuses(stdout: &str) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = lines(stdout)
        .into_iter()
        .map(|(k, l)| (k, l.status))
        .collect();
    v.sort();
    v
}

fn expect(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = pairs
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    v.sort();
    v
}

#[test]
fn a_diamond_runs_its_middle_stages_at_once_and_outputs_files() {
    let dir = project(&[
        ("a.sql", "SELECT range AS x FROM range(200000)"),
        (
            "b.sql",
            "SELECT x % 10 AS k, count(*) AS n FROM a GROUP BY k ORDER BY k",
        ),
        (
            "c.sql",
            "-- output: out/c.csv\nSELECT x % 7 AS k, sum(x) AS s FROM a GROUP BY k ORDER BY k",
        ),
        (
            "d.sql",
            "-- depends: c\n-- output: out/d.parquet\nSELECT sum(n) AS total FROM b",
        ),
    ]);
    // out/ does not exist: -- output: makes it
    let (code, out, err) = run(dir.path(), &[]);
    assert_eq!(code, 0, "{out}{err}");
    let l = lines(&out);
    let span = |s: &str| l[s].span.unwrap_or_else(|| panic!("{s} has a span: {out}"));
    let (a, b, c, d) = (span("a"), span("b"), span("c"), span("d"));
    // the middle stages started after a and before either ended
    assert!(b.0 >= a.1 && c.0 >= a.1, "{out}");
    assert!(b.0 < c.1 && c.0 < b.1, "b and c overlap: {out}");
    assert!(d.0 >= b.1 && d.0 >= c.1, "{out}");
    assert!(
        out.contains("4 ran, 0 skipped, 0 failed, 0 not run"),
        "{out}"
    );
    // -- output: files, written by COPY
    let csv = std::fs::read_to_string(dir.path().join("out/c.csv")).unwrap();
    assert_eq!(csv.lines().next(), Some("k,s"));
    assert_eq!(csv.lines().count(), 8);
    let check = weir()
        .current_dir(dir.path())
        .args(["--format", "csv", "-c", "SELECT total FROM 'out/d.parquet'"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&check.stdout), "total\n200000\n");
}

const CHAIN: &[(&str, &str)] = &[
    ("data/src.csv", "id,v\n1,10\n2,20\n3,30\n"),
    ("a.sql", "SELECT id, v FROM 'data/src.csv'"),
    ("b.sql", "SELECT sum(v) AS s FROM a"),
    ("c.sql", "SELECT count(*) AS n FROM a"),
    ("d.sql", "-- output: d.csv\nSELECT s * 2 AS s2 FROM b"),
];

#[test]
fn editing_a_stage_reruns_it_and_its_dependants_only() {
    let dir = project(CHAIN);
    let (code, out, err) = run(dir.path(), &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        statuses(&out),
        expect(&[("a", "ran"), ("b", "ran"), ("c", "ran"), ("d", "ran")])
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("d.csv")).unwrap(),
        "s2\n120\n"
    );
    // layout and comments are not changes
    write(
        dir.path(),
        "c.sql",
        "-- how many\nSELECT   count(*) AS n\n  FROM a;\n",
    );
    let (code, out, _) = run(dir.path(), &[]);
    assert_eq!(code, 0);
    assert!(out.contains("0 ran, 4 skipped"), "{out}");
    // a real edit: b and what reads it
    write(dir.path(), "b.sql", "SELECT sum(v) + 1 AS s FROM a");
    let (code, out, _) = run(dir.path(), &["--explain"]);
    assert_eq!(code, 0);
    assert!(out.contains("b: SQL changed"), "{out}");
    assert!(out.contains("d: input changed: stage b runs"), "{out}");
    assert!(out.contains("c: up to date"), "{out}");
    assert_eq!(
        statuses(&out),
        expect(&[
            ("a", "skipped"),
            ("b", "ran"),
            ("c", "skipped"),
            ("d", "ran")
        ])
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("d.csv")).unwrap(),
        "s2\n122\n"
    );
    // selecting a stage runs what it needs only
    write(dir.path(), "c.sql", "SELECT count(*) + 1 AS n FROM a");
    write(dir.path(), "b.sql", "SELECT sum(v) + 2 AS s FROM a");
    let (code, out, _) = run(dir.path(), &["c"]);
    assert_eq!(code, 0);
    assert_eq!(statuses(&out), expect(&[("a", "skipped"), ("c", "ran")]));
}

#[test]
fn touching_a_source_without_changing_it_reruns_nothing() {
    let dir = project(CHAIN);
    assert_eq!(run(dir.path(), &[]).0, 0);
    // the same bytes again: a new modification time, same content
    let src = dir.path().join("data/src.csv");
    let text = std::fs::read(&src).unwrap();
    std::fs::remove_file(&src).unwrap();
    std::fs::write(&src, &text).unwrap();
    let (code, out, _) = run(dir.path(), &["--dry-run"]);
    assert_eq!(code, 0);
    assert!(out.contains("0 of 4 stages would run"), "{out}");
    let (code, out, _) = run(dir.path(), &[]);
    assert_eq!(code, 0);
    assert!(out.contains("0 ran, 4 skipped"), "{out}");
    // a real change reruns everything downstream of it
    std::fs::write(&src, "id,v\n1,10\n2,20\n3,31\n").unwrap();
    let (code, out, _) = run(dir.path(), &["--dry-run"]);
    assert_eq!(code, 0);
    assert!(out.contains("a: input changed: file data/src.csv"), "{out}");
    assert!(out.contains("4 of 4 stages would run"), "{out}");
    // the dry run changed nothing
    let (code, out, _) = run(dir.path(), &[]);
    assert_eq!(code, 0);
    assert!(out.contains("4 ran, 0 skipped"), "{out}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("d.csv")).unwrap(),
        "s2\n122\n"
    );
}

const FAILING: &[(&str, &str)] = &[
    (
        "bad.sql",
        "SELECT CAST('x' || range AS INTEGER) AS v FROM range(3)",
    ),
    ("after_bad.sql", "SELECT count(*) AS n FROM bad"),
    ("good.sql", "SELECT 1 AS one"),
    ("after_good.sql", "SELECT one + 1 AS two FROM good"),
];

#[test]
fn keep_going_runs_what_does_not_depend_on_a_failure() {
    let dir = project(FAILING);
    let (code, out, _) = run(dir.path(), &["--on-error", "keep-going"]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        statuses(&out),
        expect(&[
            ("bad", "FAILED"),
            ("after_bad", "not run"),
            ("good", "ran"),
            ("after_good", "ran")
        ])
    );
    assert!(
        out.contains("Conversion Error") || out.contains("x0"),
        "{out}"
    );
    assert!(
        out.contains("2 ran, 0 skipped, 1 failed, 1 not run"),
        "{out}"
    );
}

#[test]
fn ignore_runs_everything_and_still_fails_the_run() {
    let dir = project(FAILING);
    let (code, out, _) = run(dir.path(), &["--on-error", "ignore"]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        statuses(&out),
        expect(&[
            ("bad", "FAILED"),
            ("after_bad", "FAILED"),
            ("good", "ran"),
            ("after_good", "ran")
        ])
    );
    assert!(
        out.contains("after_bad after") && out.contains("stage bad, which it reads, failed"),
        "{out}"
    );
}

#[test]
fn a_stage_past_its_timeout_fails_and_stops() {
    let dir = project(&[(
        "slow.sql",
        "-- timeout: 300ms\nSELECT count(*) AS n, sum(range % 7) AS s FROM range(2000000000)",
    )]);
    let start = Instant::now();
    let (code, out, _) = run(dir.path(), &[]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(statuses(&out), expect(&[("slow", "FAILED")]));
    assert!(out.contains("Timeout"), "{out}");
    // 2e9 rows take minutes in a debug build
    assert!(start.elapsed() < Duration::from_secs(60), "{out}");
    assert!(!dir.path().join(".weir/state/slow").exists());
}

#[test]
fn two_concurrent_runs_run_each_stage_once_and_both_finish() {
    let dir = project(&[
        ("a.sql", "SELECT range AS x FROM range(100000)"),
        (
            "b.sql",
            "SELECT x % 10 AS k, count(*) AS n FROM a GROUP BY k",
        ),
        ("c.sql", "SELECT sum(x) AS s FROM a"),
        ("d.sql", "SELECT sum(n) AS n FROM b"),
    ]);
    let spawn = || {
        StdCommand::new(env!("CARGO_BIN_EXE_weir"))
            .arg("run")
            .arg(dir.path())
            .args(["--threads", "2"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (one, two) = (spawn(), spawn());
    let one = one.wait_with_output().unwrap();
    let two = two.wait_with_output().unwrap();
    let (out1, out2) = (
        String::from_utf8_lossy(&one.stdout).into_owned(),
        String::from_utf8_lossy(&two.stdout).into_owned(),
    );
    assert!(
        one.status.success() && two.status.success(),
        "{out1}\n{out2}"
    );
    let (l1, l2) = (lines(&out1), lines(&out2));
    for stage in ["a", "b", "c", "d"] {
        let ran = [&l1, &l2]
            .iter()
            .filter(|l| l[stage].status == "ran")
            .count();
        assert_eq!(ran, 1, "{stage} ran once: {out1}\n{out2}");
    }
    // the state both left is whole: a third run has nothing to do
    let (code, out, _) = run(dir.path(), &[]);
    assert_eq!(code, 0);
    assert!(out.contains("0 ran, 4 skipped"), "{out}");
    assert_eq!(
        std::fs::read_dir(dir.path().join(".weir/locks"))
            .unwrap()
            .count(),
        0
    );
}

#[test]
fn a_run_killed_mid_stage_leaves_a_stale_lock_the_next_run_breaks() {
    let dir = project(&[
        ("a.sql", "SELECT 1 AS one"),
        (
            "slow.sql",
            "-- param: n = 1000\n-- depends: a\nSELECT count(*) AS n, sum(range % 7) AS s FROM range(${n})",
        ),
    ]);
    let mut child = StdCommand::new(env!("CARGO_BIN_EXE_weir"))
        .arg("run")
        .arg(dir.path())
        .args(["--threads", "2", "--param", "n=5000000000"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // wait until the slow stage holds its lock (a condition on the file
    // system, polled), then kill the run
    let lock = dir.path().join(".weir/locks/slow.lock");
    let deadline = Instant::now() + Duration::from_secs(120);
    while !(lock.exists() && std::fs::read_to_string(&lock).is_ok_and(|t| !t.is_empty())) {
        assert!(Instant::now() < deadline, "the slow stage never started");
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let token = std::fs::read_to_string(&lock).unwrap();
    assert!(token.starts_with(&format!("{} ", child.id())), "{token}");
    // nothing of the killed stage is taken as done or cached
    assert!(!dir.path().join(".weir/state/slow").exists());
    let cached = std::fs::read_dir(dir.path().join(".weir/cache"))
        .unwrap()
        .count();
    assert_eq!(cached, 1, "only a's output is cached");
    let (code, out, err) = run(dir.path(), &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(statuses(&out), expect(&[("a", "skipped"), ("slow", "ran")]));
    assert!(!lock.exists());
    assert!(dir.path().join(".weir/state/slow").exists());
}

#[test]
fn cycles_missing_tables_and_duplicate_stages_are_errors_naming_them() {
    let dir = project(&[
        ("a.sql", "SELECT * FROM b"),
        ("b.sql", "SELECT * FROM c"),
        ("c.sql", "SELECT * FROM a"),
    ]);
    let (code, out, err) = run(dir.path(), &[]);
    assert_eq!(code, 1);
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("cycle"), "{err}");
    assert!(
        ["a -> b -> c -> a", "b -> c -> a -> b", "c -> a -> b -> c"]
            .iter()
            .any(|c| err.contains(c))
            || ["a -> c -> b -> a", "b -> a -> c -> b", "c -> b -> a -> c"]
                .iter()
                .any(|c| err.contains(c)),
        "{err}"
    );

    let dir = project(&[("a.sql", "SELECT 1 AS x"), ("b.sql", "SELECT * FROM nope")]);
    let (code, _, err) = run(dir.path(), &[]);
    assert_eq!(code, 1);
    assert!(
        err.contains("stage b") && err.contains("reads table nope, which is no stage"),
        "{err}"
    );

    let dir = project(&[("a.sql", "SELECT 1 AS x"), ("A.sql", "SELECT 2 AS x")]);
    let (code, _, err) = run(dir.path(), &[]);
    assert_eq!(code, 1);
    assert!(err.contains("two stages are named"), "{err}");

    // a missing input file fails its stage, naming the file
    let dir = project(&[("a.sql", "SELECT * FROM 'missing.csv'")]);
    let (code, out, _) = run(dir.path(), &[]);
    assert_eq!(code, 1);
    assert!(
        out.contains("FAILED   a") && out.contains("missing.csv"),
        "{out}"
    );

    // an unknown stage selected
    let dir = project(&[("a.sql", "SELECT 1 AS x")]);
    let (code, _, err) = run(dir.path(), &["zzz"]);
    assert_eq!(code, 1);
    assert!(err.contains("no stage is named zzz"), "{err}");
}

#[test]
fn stages_of_one_mutex_group_never_overlap() {
    let heavy = "SELECT range % 10 AS k, count(*) AS n FROM range(300000) GROUP BY k";
    let dir = project(&[
        ("a.sql", &format!("-- mutex: g\n{heavy}")),
        ("b.sql", &format!("-- mutex: g\n{heavy}")),
        ("c.sql", &format!("-- mutex: g\n{heavy}")),
    ]);
    let (code, out, err) = run(dir.path(), &[]);
    assert_eq!(code, 0, "{out}{err}");
    let l = lines(&out);
    let mut spans: Vec<(f64, f64)> = ["a", "b", "c"]
        .iter()
        .map(|s| l[*s].span.expect("a span"))
        .collect();
    spans.sort_by(|x, y| x.0.total_cmp(&y.0));
    for w in spans.windows(2) {
        assert!(w[1].0 >= w[0].1, "one at a time: {out}");
    }
}
