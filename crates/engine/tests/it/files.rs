//! Reading files: type widening past the sniffed sample, unterminated
//! quotes, EXPLAIN as a dry run, load time in EXPLAIN ANALYZE, timeouts.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use weir_engine::{Config, Database, Error};

/// A CSV of `rows` rows `i,i`, then `tail` verbatim.
fn csv(dir: &Path, name: &str, rows: usize, tail: &str) -> String {
    let path = dir.join(name);
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    writeln!(f, "a,b").unwrap();
    for i in 0..rows {
        writeln!(f, "{i},{i}").unwrap();
    }
    f.write_all(tail.as_bytes()).unwrap();
    f.flush().unwrap();
    path.to_str().unwrap().to_string()
}

fn text(db: &Database, sql: &str) -> String {
    db.execute(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .to_string()
}

#[test]
fn a_column_that_changes_type_past_the_sample_widens() {
    let dir = tempfile::tempdir().unwrap();
    // BIGINT for 30,000 rows (past the 20,480 sampled), then a DOUBLE and
    // a VARCHAR
    let path = csv(dir.path(), "w.csv", 30_000, "3.5,x\n");
    let db = Database::new().unwrap();
    let sql = format!("SELECT count(*) AS n, sum(a) AS s, max(b) AS m FROM '{path}'");
    assert_eq!(
        text(&db, &sql),
        "\
+-------+-------------+---+
| n     | s           | m |
+-------+-------------+---+
| 30001 | 449985003.5 | x |
+-------+-------------+---+"
    );
    // the next plan knows the wider types
    assert_eq!(
        text(&db, &format!("DESCRIBE SELECT * FROM '{path}'")),
        "\
+-------------+-------------+------+
| column_name | column_type | null |
+-------------+-------------+------+
| a           | DOUBLE      | YES  |
| b           | VARCHAR     | YES  |
+-------------+-------------+------+"
    );
    // register_csv widens the same way
    db.register_csv("w", &path).unwrap();
    assert_eq!(
        text(&db, "SELECT max(b) AS m FROM w"),
        "+---+\n| m |\n+---+\n| x |\n+---+"
    );
}

#[test]
fn an_unterminated_quote_names_the_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    // far past the sample: the load finds it
    let big = csv(dir.path(), "big.csv", 100_000, "7,\"open\n8,x\n9,y\n");
    // within the sample: planning finds it
    let small = csv(
        dir.path(),
        "small.csv",
        2,
        "2,\"fine\"\"quote\"\n3,\"open\n",
    );
    let db = Database::new().unwrap();
    for (path, line) in [(&big, 100_002), (&small, 5)] {
        let err = db
            .execute(&format!("SELECT count(*) FROM '{path}'"))
            .unwrap_err()
            .to_string();
        assert!(err.contains(path.as_str()), "{err}");
        assert!(
            err.contains(&format!(
                "unterminated quote: the quoted value opened at line {line}, column 3"
            )),
            "{err}"
        );
    }
    // a quote inside an unquoted field is just a character
    let inner = csv(dir.path(), "inner.csv", 1, "2,ab\"c\n");
    assert_eq!(
        text(&db, &format!("SELECT b FROM '{inner}' WHERE a = 2")),
        "+------+\n| b    |\n+------+\n| ab\"c |\n+------+"
    );
}

#[test]
fn plain_explain_reads_schemas_only() {
    let dir = tempfile::tempdir().unwrap();
    // row 30,001 has a field too many: reading the data fails
    let path = csv(dir.path(), "bad.csv", 30_000, "1,2,3\n");
    let db = Database::new().unwrap();
    let sql = format!("SELECT count(*) FROM '{path}'");
    let err = db.execute(&sql).unwrap_err().to_string();
    assert!(err.contains("incorrect number of fields"), "{err}");
    let plan = text(&db, &format!("EXPLAIN {sql}"));
    assert!(plan.contains("Scan: '"), "{plan}");
}

#[test]
fn explain_analyze_shows_the_time_spent_loading() {
    let dir = tempfile::tempdir().unwrap();
    let path = csv(dir.path(), "l.csv", 1_000, "");
    let db = Database::new().unwrap();
    let out = text(
        &db,
        &format!("EXPLAIN ANALYZE SELECT count(*) FROM '{path}'"),
    );
    let read = out
        .lines()
        .find(|l| l.contains(&format!("read '{path}'")))
        .unwrap_or_else(|| panic!("no read line: {out}"));
    let fields: Vec<&str> = read.trim_matches('|').split_whitespace().collect();
    // ... rows in, rows out, time, parts read by the lanes
    let n = fields.len();
    assert_eq!(&fields[n - 4..n - 2], ["1000", "1000"], "{read}");
    let ms: f64 = fields[n - 2].trim_end_matches("ms").parse().unwrap();
    assert!(ms > 0.0, "{read}");
    // the scan follows the read
    let lines: Vec<&str> = out.lines().collect();
    let at = lines.iter().position(|l| *l == read).unwrap();
    assert!(lines[at + 1].contains("scan '"), "{out}");
}

#[test]
fn a_timeout_stops_a_load() {
    let dir = tempfile::tempdir().unwrap();
    let path = csv(dir.path(), "t.csv", 400_000, "");
    let db = Database::with_config(Config {
        timeout: Some(Duration::from_millis(1)),
        ..Config::default()
    })
    .unwrap();
    let err = db
        .execute(&format!("SELECT count(*) FROM '{path}'"))
        .unwrap_err();
    assert!(matches!(err, Error::Timeout(_)), "{err}");
}

#[test]
fn read_csv_takes_types_and_sample_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = csv(dir.path(), "o.csv", 30_000, "3.5,x\n");
    let db = Database::new().unwrap();
    let describe = |options: &str| {
        text(
            &db,
            &format!("DESCRIBE SELECT * FROM read_csv('{path}'{options})"),
        )
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (cells.len() > 3 && cells[1] != "column_name").then(|| cells[2].to_string())
        })
        .collect::<Vec<_>>()
    };
    // every row sampled: the types fit the whole file up front
    assert_eq!(describe(", sample_size=-1"), ["DOUBLE", "VARCHAR"]);
    assert_eq!(describe(", sample_size = 10"), ["BIGINT", "BIGINT"]);
    assert_eq!(
        describe(", types={'b': 'VARCHAR', 'A': 'DOUBLE'}"),
        ["DOUBLE", "VARCHAR"]
    );
    let sql = format!(
        "SELECT count(*) AS n FROM read_csv('{path}', types={{'b': 'VARCHAR'}}, sample_size=-1) WHERE b = 'x'"
    );
    assert_eq!(text(&db, &sql), "+---+\n| n |\n+---+\n| 1 |\n+---+");
    // a type the user fixed does not widen: the value is named
    let err = db
        .execute(&format!(
            "SELECT * FROM read_csv('{path}', types={{'a': 'BIGINT'}})"
        ))
        .unwrap_err()
        .to_string();
    assert!(err.contains("'3.5' as type 'Int64'"), "{err}");
    for (options, needle) in [
        (
            "types={'zz': 'DOUBLE'}",
            "has no column \"zz\" (columns: a, b)",
        ),
        (
            "types={'a': 'BLOB'}",
            "\"'BLOB'\" is not a type Weir reads from CSV",
        ),
        (
            "types='a'",
            "must be a struct of column names to type names",
        ),
        (
            "sample_size=0",
            "sample_size must be a positive integer or -1",
        ),
    ] {
        let err = db
            .execute(&format!("SELECT * FROM read_csv('{path}', {options})"))
            .unwrap_err()
            .to_string();
        assert!(err.contains(needle), "{options}: {err}");
    }
}

#[test]
fn workers_load_parts_of_a_file_and_keep_its_order() {
    use std::sync::Arc;

    use arrow::array::{Int64Array, RecordBatch};
    use arrow::datatypes::{DataType, Field, Schema};

    let dir = tempfile::tempdir().unwrap();
    // about 12 MB: several byte ranges on two workers
    let path = csv(dir.path(), "p.csv", 1_000_000, "");
    // and a Parquet file of many row groups
    let parquet = dir.path().join("p.parquet");
    let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int64, false)]));
    let file = std::fs::File::create(&parquet).unwrap();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(10_000))
        .build();
    let mut writer =
        parquet::arrow::ArrowWriter::try_new(file, schema.clone(), Some(props)).unwrap();
    for chunk in 0..10 {
        let values = Int64Array::from_iter_values(chunk * 10_000..(chunk + 1) * 10_000);
        writer
            .write(&RecordBatch::try_new(schema.clone(), vec![Arc::new(values)]).unwrap())
            .unwrap();
    }
    writer.close().unwrap();
    let parquet = parquet.to_str().unwrap();
    let mut answers = Vec::new();
    for threads in [1, 2] {
        let db = Database::with_config(Config {
            threads,
            ..Config::default()
        })
        .unwrap();
        db.execute(&format!("CREATE TABLE t AS SELECT * FROM '{path}'"))
            .unwrap();
        db.execute(&format!("CREATE TABLE q AS SELECT * FROM '{parquet}'"))
            .unwrap();
        // the table's order is the file's: no ORDER BY
        let t = db.execute("SELECT a FROM t").unwrap();
        let mut next = 0;
        for b in t.batches() {
            let a = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            for v in a.values() {
                assert_eq!(*v, next, "{threads} threads");
                next += 1;
            }
        }
        assert_eq!(next, 1_000_000);
        let q = db.execute("SELECT a FROM q").unwrap();
        let values: Vec<i64> = q
            .batches()
            .iter()
            .flat_map(|b| {
                let a = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
                a.values().to_vec()
            })
            .collect();
        assert_eq!(
            values,
            (0..100_000).collect::<Vec<i64>>(),
            "{threads} threads"
        );
        answers.push(text(&db, "SELECT count(*), sum(b), min(a), max(a) FROM t"));
    }
    assert_eq!(answers[0], answers[1]);
}

/// The EXPLAIN ANALYZE read line of `sql`'s file scan.
fn read_line(db: &Database, sql: &str) -> String {
    let out = text(db, &format!("EXPLAIN ANALYZE {sql}"));
    out.lines()
        .find(|l| l.contains("read '"))
        .unwrap_or_else(|| panic!("no read line: {out}"))
        .to_string()
}

/// The single value of `sql`'s one-row, one-column result, as text.
fn value(db: &Database, sql: &str) -> String {
    let result = db.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let batch = &result.batches()[0];
    arrow::util::display::array_value_to_string(batch.column(0), 0).unwrap()
}

#[test]
fn parquet_row_groups_that_statistics_rule_out_are_not_read() {
    use std::sync::Arc;

    use arrow::array::{Float64Array, Int64Array, RecordBatch, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stats.parquet");
    // ten row groups of 1,000 rows: n = 0..10,000 in order, v = n as a
    // DOUBLE but NaN for the last row, s = 's' and n in 5 digits, m NULL in
    // the first five row groups and n in the others
    let schema = Arc::new(Schema::new(vec![
        Field::new("n", DataType::Int64, false),
        Field::new("v", DataType::Float64, false),
        Field::new("s", DataType::Utf8, false),
        Field::new("m", DataType::Int64, true),
    ]));
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(1000))
        .build();
    let mut writer = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(&path).unwrap(),
        schema.clone(),
        Some(props),
    )
    .unwrap();
    let n: Vec<i64> = (0..10_000).collect();
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from(n.clone())),
            Arc::new(Float64Array::from_iter_values(
                n.iter()
                    .map(|&i| if i == 9_999 { f64::NAN } else { i as f64 }),
            )),
            Arc::new(StringArray::from_iter_values(
                n.iter().map(|i| format!("s{i:05}")),
            )),
            Arc::new(Int64Array::from_iter(
                n.iter().map(|&i| (i >= 5_000).then_some(i)),
            )),
        ],
    )
    .unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    let file = path.to_str().unwrap();
    for threads in [1, 4] {
        let db = Database::with_config(Config {
            threads,
            ..Config::default()
        })
        .unwrap();
        // (filter, count(*) as DuckDB answers it, row groups read)
        for (filter, count, read) in [
            ("n BETWEEN 2500 AND 3400", 901, 2),
            ("n IN (5, 9999)", 2, 2),
            ("4000 > n", 4000, 4),
            ("n >= 9000 AND n < 9500", 500, 1),
            ("s = 's07001'", 1, 1),
            ("m IS NULL", 5000, 5),
            ("m IS NOT NULL", 5000, 5),
            ("n > 100000", 0, 0),
            // a float's maximum leaves out its NaNs (which pass `>`): no
            // row group is skipped by it, only by its minimum
            ("v > 9500", 499, 10),
            ("v < 1500", 1500, 2),
            // a conjunct the statistics cannot judge skips nothing
            ("n % 2 = 0", 5000, 10),
        ] {
            let sql = format!("SELECT count(*) FROM '{file}' WHERE {filter}");
            assert_eq!(value(&db, &sql), count.to_string(), "{sql}");
            let line = read_line(&db, &sql);
            assert!(
                line.contains(&format!("({read} of 10 row groups, {} skipped)", 10 - read)),
                "{sql}: {line}"
            );
        }
        // the rows themselves, not just their count (the lanes may meet
        // them in either order)
        let sql = format!("SELECT min(s) || ',' || max(s) FROM '{file}' WHERE n IN (5, 9999)");
        assert_eq!(value(&db, &sql), "s00005,s09999");
        // count(*) of the whole file: every row group, from the metadata
        let sql = format!("SELECT count(*) FROM '{file}'");
        assert_eq!(value(&db, &sql), "10000");
        assert!(
            read_line(&db, &sql).contains("(10 of 10 row groups, 0 skipped)"),
            "{sql}"
        );
    }
}

/// A CSV of `rows` rows `id,"name, id",id % 7` (a quoted delimiter in
/// every row) after a header; with `quoted_break`, the first row's name
/// holds a line break.
fn wide_csv(dir: &Path, name: &str, rows: usize, quoted_break: bool, tail: &str) -> String {
    let path = dir.join(name);
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    writeln!(f, "id,name,k").unwrap();
    for i in 0..rows {
        if i == 0 && quoted_break {
            writeln!(f, "{i},\"first\nline\",{}", i % 7).unwrap();
        } else {
            writeln!(f, "{i},\"name, {i:08}\",{}", i % 7).unwrap();
        }
    }
    f.write_all(tail.as_bytes()).unwrap();
    f.flush().unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn a_large_csv_is_read_by_the_lanes_in_byte_ranges_and_keeps_its_order() {
    let dir = tempfile::tempdir().unwrap();
    // about 30 MB: cut at line starts found from fixed offsets
    let rows = 900_000usize;
    let path = wide_csv(dir.path(), "big.csv", rows, false, "");
    let db = Database::with_config(Config {
        threads: 2,
        ..Config::default()
    })
    .unwrap();
    db.execute(&format!("CREATE TABLE t AS SELECT * FROM '{path}'"))
        .unwrap();
    assert_eq!(
        value(
            &db,
            "SELECT count(*) || ' ' || sum(id) || ' ' || sum(k) FROM t"
        ),
        format!(
            "{rows} {} {}",
            rows * (rows - 1) / 2,
            (0..rows).map(|i| i % 7).sum::<usize>()
        )
    );
    // the file's order, across the byte ranges
    assert_eq!(
        value(
            &db,
            "SELECT count(*) FROM (SELECT id, row_number() OVER () - 1 AS r FROM t) WHERE id <> r"
        ),
        "0"
    );
    assert_eq!(
        value(&db, "SELECT name FROM t LIMIT 1 OFFSET 654321"),
        "name, 00654321"
    );
    // several parts, read by the lanes
    let sql = format!("SELECT sum(k) FROM '{path}'");
    let line = read_line(&db, &sql);
    let fields: Vec<&str> = line.trim_matches('|').split_whitespace().collect();
    let parts: u64 = fields[fields.len() - 1]
        .split('/')
        .map(|p| p.parse::<u64>().unwrap())
        .sum();
    assert!(parts >= 3, "{line}");
    assert_eq!(fields[fields.len() - 4], rows.to_string(), "{line}");
    // a LIMIT leaves the file's other parts unread: a part per lane at most
    let sql = format!("SELECT name FROM '{path}' LIMIT 1");
    assert_eq!(value(&db, &sql), "name, 00000000");
    let line = read_line(&db, &sql);
    let fields: Vec<&str> = line.trim_matches('|').split_whitespace().collect();
    let read: u64 = fields[fields.len() - 1]
        .split('/')
        .map(|p| p.parse::<u64>().unwrap())
        .sum();
    assert!(read <= 2 && read < parts, "{line}");
}

#[test]
fn a_bad_value_deep_in_a_large_csv_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let rows = 700_000usize;
    let path = wide_csv(dir.path(), "bad.csv", rows, false, "oops,\"x\",1\n");
    let db = Database::new().unwrap();
    let err = db
        .execute(&format!(
            "SELECT sum(id) FROM read_csv('{path}', types={{'id': 'BIGINT'}})"
        ))
        .unwrap_err()
        .to_string();
    // the header, the rows, then the bad one
    assert!(err.contains(&format!("line {}", rows + 2)), "{err}");
    assert!(err.contains("column \"id\""), "{err}");
}

#[test]
fn a_large_csv_with_a_quoted_line_break_is_cut_following_its_quotes() {
    let dir = tempfile::tempdir().unwrap();
    let rows = 700_000usize;
    let path = wide_csv(dir.path(), "q.csv", rows, true, "");
    let db = Database::with_config(Config {
        threads: 2,
        ..Config::default()
    })
    .unwrap();
    let sql = format!("SELECT count(*) || ' ' || sum(id) FROM '{path}'");
    assert_eq!(
        value(&db, &sql),
        format!("{rows} {}", rows * (rows - 1) / 2)
    );
    assert_eq!(
        value(&db, &format!("SELECT name FROM '{path}' WHERE id = 0")),
        "first\nline"
    );
}
