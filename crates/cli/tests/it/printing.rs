//! Result printing: long tables elided in the middle, `.maxrows`, box
//! drawing, JSON numbers, values that cannot be printed.

use crate::run;

/// The ASCII table lines of `rows`, one column named `h`.
fn table(h: &str, rows: &[&str]) -> String {
    let w = rows
        .iter()
        .map(|r| r.chars().count())
        .chain([h.len()])
        .max()
        .unwrap();
    let rule = format!("+{}+\n", "-".repeat(w + 2));
    let line = |c: &str| format!("| {c}{} |\n", " ".repeat(w - c.chars().count()));
    let mut out = rule.clone() + &line(h) + &rule;
    for r in rows {
        out.push_str(&line(r));
    }
    out
}

#[test]
fn a_long_table_shows_its_first_and_last_rows_and_a_count() {
    let (code, out, err) = run(&["-c", "SELECT * FROM range(1000000)"], "");
    assert_eq!(code, 0, "{err}");
    let mut rows: Vec<String> = (0..20).map(|i| i.to_string()).collect();
    rows.push("…".into());
    rows.extend((999_980..1_000_000).map(|i| i.to_string()));
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    let width = "1000000 rows (40 shown)".len();
    let mut expected = table(&format!("{:<width$}", "range"), &rows);
    let rule = format!("+{}+\n", "-".repeat(width + 2));
    expected.push_str(&rule);
    expected.push_str("| 1000000 rows (40 shown) |\n");
    expected.push_str(&rule);
    assert_eq!(out, expected);
}

#[test]
fn maxrows_sets_how_many_rows_a_table_shows() {
    let script = ".maxrows 4\nSELECT range AS n FROM range(10);\n.maxrows 0\nSELECT range AS n FROM range(3);\n.maxrows\n";
    let (code, out, err) = run(&["--threads", "1"], script);
    assert_eq!(code, 0, "{err}");
    let expected = "\
+-------------------+
| n                 |
+-------------------+
| 0                 |
| 1                 |
| …                 |
| 8                 |
| 9                 |
+-------------------+
| 10 rows (4 shown) |
+-------------------+
";
    assert!(out.starts_with(expected), "{out}");
    assert!(
        out.ends_with(&(table("n", &["0", "1", "2"]) + "+---+\n0\n")),
        "{out}"
    );
}

#[test]
fn a_result_short_enough_prints_whole_even_across_many_batches() {
    // 3-row morsels: the rows arrive in many small batches
    let (code, out, err) = run(
        &["--threads", "4", "-c", "SELECT range AS n FROM range(40)"],
        "",
    );
    assert_eq!(code, 0, "{err}");
    let rows: Vec<String> = (0..40).map(|i| i.to_string()).collect();
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    assert_eq!(out, table("n ", &rows) + "+----+\n");
}

#[test]
fn box_mode_draws_with_unicode_lines() {
    let (code, out, err) = run(
        &[
            "--format",
            "box",
            "-c",
            "CREATE TABLE t (one INTEGER, s VARCHAR); INSERT INTO t VALUES (1, 'ab'), (22, NULL); SELECT * FROM t",
        ],
        "",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "\
┌─────┬──────┐
│ one │ s    │
├─────┼──────┤
│ 1   │ ab   │
│ 22  │ NULL │
└─────┴──────┘
"
    );
    let (_, out, _) = run(&[], ".mode box\nSELECT 7 AS x;\n");
    assert_eq!(out, "┌───┐\n│ x │\n├───┤\n│ 7 │\n└───┘\n");
}

#[test]
fn json_writes_infinities_and_nan_as_duckdb_to_json_does() {
    let (code, out, err) = run(
        &[
            "--format",
            "json",
            "-c",
            "SELECT 'inf'::DOUBLE AS a, -'inf'::DOUBLE AS b, 'nan'::DOUBLE AS c, 1.5::DOUBLE AS d, NULL::DOUBLE AS e",
        ],
        "",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "{\"a\":Infinity,\"b\":-Infinity,\"c\":NaN,\"d\":1.5,\"e\":null}\n"
    );
}

#[test]
fn a_value_that_cannot_be_printed_is_an_error_with_exit_one() {
    // a DATE past year 262143 cannot be rendered; the sql helper may make
    // the addition itself fail, which is an error with exit 1 as well
    for format in ["table", "box", "csv", "json"] {
        let (code, out, err) = run(
            &[
                "--format",
                format,
                "-c",
                "SELECT DATE '9999-12-31' + 1000000000 AS d",
            ],
            "",
        );
        assert_eq!(code, 1, "{format}: {out}");
        assert!(!out.to_lowercase().contains("error"), "{format}: {out}");
        assert!(err.starts_with("Error: "), "{format}: {err}");
        assert_eq!(err.lines().count(), 1, "{format}: {err}");
    }
}

#[test]
fn blobs_and_floats_print_as_duckdb_prints_them() {
    let sql = "SELECT 'a\\x00\\xFF'::BLOB AS b, 0.1::REAL AS r, 127::TINYINT AS t, 18446744073709551615::UBIGINT AS u";
    let (code, out, err) = run(&["--format", "csv", "-c", sql], "");
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "b,r,t,u\na\\x00\\xFF,0.1,127,18446744073709551615\n");
    let (code, out, err) = run(&["-c", "SELECT '\\xAA'::BLOB AS b"], "");
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, table("b   ", &["\\xAA"]) + "+------+\n");
}
