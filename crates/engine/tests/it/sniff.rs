//! CSV files read as DuckDB reads them: the sniffer (delimiter, header,
//! types from the start, middle and end of a file), `read_csv`'s options,
//! gzip files, and many files (globs, lists, `filename`) read as one
//! table. Every expected answer is DuckDB's on the same file.

use std::io::Write;
use std::path::Path;

use arrow::util::display::{ArrayFormatter, FormatOptions};
use weir_engine::Database;

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// The rows of `sql`'s result, values joined by `|`, NULL as `NULL`.
fn rows(db: &Database, sql: &str) -> Vec<String> {
    let result = db.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let options = FormatOptions::default().with_null("NULL");
    let mut out = Vec::new();
    for batch in result.batches() {
        let formatters: Vec<_> = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options).unwrap())
            .collect();
        for row in 0..batch.num_rows() {
            let values: Vec<String> = formatters
                .iter()
                .map(|f| f.value(row).to_string())
                .collect();
            out.push(values.join("|"));
        }
    }
    out
}

/// `name TYPE` of each column of `FROM {from}`.
fn columns(db: &Database, from: &str) -> Vec<String> {
    rows(db, &format!("DESCRIBE SELECT * FROM {from}"))
        .into_iter()
        .map(|r| {
            let parts: Vec<&str> = r.split('|').collect();
            format!("{} {}", parts[0], parts[1])
        })
        .collect()
}

fn error(db: &Database, sql: &str) -> String {
    match db.execute(sql) {
        Ok(r) => panic!("{sql} succeeded: {r}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_delimiter_is_sniffed() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::new().unwrap();
    let semi = write(dir.path(), "semi.csv", "a;b;c\n1;x;2.5\n2;y;3.5\n");
    assert_eq!(
        columns(&db, &format!("'{semi}'")),
        ["a BIGINT", "b VARCHAR", "c DOUBLE"]
    );
    assert_eq!(
        rows(&db, &format!("SELECT * FROM '{semi}'")),
        ["1|x|2.5", "2|y|3.5"]
    );
    let tab = write(dir.path(), "tab.tsv", "id\tname\n1\tann\n");
    assert_eq!(
        rows(&db, &format!("SELECT name, id + 1 FROM read_csv('{tab}')")),
        ["ann|2"]
    );
    let pipe = write(dir.path(), "pipe.csv", "a|b\n1|2\n");
    assert_eq!(rows(&db, &format!("SELECT a + b FROM '{pipe}'")), ["3"]);
    // a quoted delimiter does not count
    let quoted = write(dir.path(), "q.csv", "a;b\n\"x;y\";1\n\"z\";2\n");
    assert_eq!(
        rows(&db, &format!("SELECT * FROM '{quoted}'")),
        ["x;y|1", "z|2"]
    );
    // the delimiter given wins, as in DuckDB: one column
    assert_eq!(
        rows(&db, &format!("SELECT * FROM read_csv('{semi}', delim=',')")),
        ["1;x;2.5", "2;y;3.5"]
    );
    assert_eq!(
        columns(&db, &format!("read_csv('{semi}', sep=',')")),
        ["a;b;c VARCHAR"]
    );
}

#[test]
fn a_header_is_detected_or_names_are_generated() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::new().unwrap();
    // no header: the first row is data, the columns are column0, column1
    let no_header = write(dir.path(), "n.csv", "1,x\n2,y\n3,z\n");
    assert_eq!(
        columns(&db, &format!("'{no_header}'")),
        ["column0 BIGINT", "column1 VARCHAR"]
    );
    assert_eq!(
        rows(
            &db,
            &format!("SELECT count(*), sum(column0) FROM '{no_header}'")
        ),
        ["3|6"]
    );
    // a first value that fits its typed column is data
    let fits = write(dir.path(), "h1.csv", "a,1\nb,2\n");
    assert_eq!(
        columns(&db, &format!("'{fits}'")),
        ["column0 VARCHAR", "column1 BIGINT"]
    );
    // all VARCHAR: the first row is the header, an empty name generated
    let strings = write(dir.path(), "s.csv", "a,\nb,c\n");
    assert_eq!(
        columns(&db, &format!("'{strings}'")),
        ["a VARCHAR", "column1 VARCHAR"]
    );
    assert_eq!(rows(&db, &format!("SELECT * FROM '{strings}'")), ["b|c"]);
    // eleven columns: column00 .. column10
    let wide = write(
        dir.path(),
        "w.csv",
        "0,1,2,3,4,5,6,7,8,9,10\n0,1,2,3,4,5,6,7,8,9,10\n",
    );
    let names = columns(&db, &format!("'{wide}'"));
    assert_eq!(names[0], "column00 BIGINT");
    assert_eq!(names[10], "column10 BIGINT");
    // DuckDB's answers for an empty file, a header alone, one row of
    // numbers, and CRLF line ends
    let empty = write(dir.path(), "empty.csv", "");
    assert_eq!(columns(&db, &format!("'{empty}'")), ["column0 VARCHAR"]);
    assert_eq!(rows(&db, &format!("SELECT count(*) FROM '{empty}'")), ["0"]);
    let header_only = write(dir.path(), "hdr.csv", "a,b\n");
    assert_eq!(
        columns(&db, &format!("'{header_only}'")),
        ["a VARCHAR", "b VARCHAR"]
    );
    assert_eq!(
        rows(&db, &format!("SELECT count(*) FROM '{header_only}'")),
        ["0"]
    );
    let one = write(dir.path(), "one.csv", "1,2\n");
    assert_eq!(
        columns(&db, &format!("'{one}'")),
        ["column0 BIGINT", "column1 BIGINT"]
    );
    assert_eq!(rows(&db, &format!("SELECT * FROM '{one}'")), ["1|2"]);
    let crlf = write(dir.path(), "crlf.csv", "a,b\r\n1,x\r\n2,y\r\n");
    assert_eq!(
        rows(&db, &format!("SELECT a + 1, b FROM '{crlf}'")),
        ["2|x", "3|y"]
    );
    // header=true / header=false override the sniffer
    assert_eq!(
        columns(&db, &format!("read_csv('{no_header}', header=true)")),
        ["1 BIGINT", "x VARCHAR"]
    );
    assert_eq!(
        rows(
            &db,
            &format!("SELECT * FROM read_csv('{strings}', header=false)")
        ),
        ["a|NULL", "b|c"]
    );
}

#[test]
fn types_are_sniffed_from_the_middle_and_the_end_of_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::new().unwrap();
    // 200,000 rows (about 3.5 MB): integers, but text values from the
    // middle on and decimals in the last rows, far past the first rows
    let mut text = String::from("id,v,w\n");
    for i in 0..200_000 {
        let v = if (100_000..130_000).contains(&i) {
            "text".to_string()
        } else {
            i.to_string()
        };
        let w = if i >= 199_990 {
            "0.5".to_string()
        } else {
            i.to_string()
        };
        text.push_str(&format!("{i},{v},{w}\n"));
    }
    let path = write(dir.path(), "big.csv", &text);
    // planning already knows: no widening needed when the rows are read
    assert_eq!(
        columns(&db, &format!("'{path}'")),
        ["id BIGINT", "v VARCHAR", "w DOUBLE"]
    );
    assert_eq!(
        rows(
            &db,
            &format!(
                "SELECT count(*) FILTER (WHERE v = 'text'), sum(w) FILTER (WHERE w < 1) FROM '{path}'"
            )
        ),
        ["30000|5.0"]
    );
}

#[test]
fn read_csv_options_as_duckdb() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::new().unwrap();
    let skip = write(dir.path(), "skip.csv", "# junk\na,b\n1,NA\nx,3\n");
    assert_eq!(
        rows(
            &db,
            &format!("SELECT * FROM read_csv('{skip}', skip=1, nullstr='NA')")
        ),
        ["1|NULL", "x|3"]
    );
    assert_eq!(
        columns(&db, &format!("read_csv('{skip}', skip=1, nullstr='NA')")),
        ["a VARCHAR", "b BIGINT"]
    );
    // columns: names and types, the header still sniffed
    let semi = write(dir.path(), "semi.csv", "a;b;c\n1;x;2.5\n2;y;3.5\n");
    assert_eq!(
        columns(
            &db,
            &format!("read_csv('{semi}', columns={{'p': 'INT', 'q': 'VARCHAR', 'r': 'DOUBLE'}})")
        ),
        ["p INTEGER", "q VARCHAR", "r DOUBLE"]
    );
    assert_eq!(
        rows(
            &db,
            &format!(
                "SELECT p, r FROM read_csv('{semi}', columns={{'p': 'INT', 'q': 'VARCHAR', 'r': 'DOUBLE'}})"
            )
        ),
        ["1|2.5", "2|3.5"]
    );
    // auto_detect=false: ',' and no header unless told
    let plain = write(dir.path(), "plain.csv", "1,x\n2,y\n");
    assert_eq!(
        rows(
            &db,
            &format!(
                "SELECT * FROM read_csv('{plain}', auto_detect=false, columns={{'n': 'BIGINT', 's': 'VARCHAR'}})"
            )
        ),
        ["1|x", "2|y"]
    );
    let e = error(
        &db,
        &format!("SELECT * FROM read_csv('{plain}', auto_detect=false)"),
    );
    assert!(
        e.contains("read_csv requires columns to be specified through the 'columns' option"),
        "{e}"
    );
    // quote and escape
    let escaped = write(dir.path(), "e.csv", "a,b\n'it''s',1\n'x,y',2\n");
    assert_eq!(
        rows(
            &db,
            &format!("SELECT * FROM read_csv('{escaped}', quote='''')")
        ),
        ["it's|1", "x,y|2"]
    );
    let backslash = write(dir.path(), "b.csv", "a,b\n\"say \\\"hi\\\"\",1\n");
    assert_eq!(
        rows(
            &db,
            &format!("SELECT a FROM read_csv('{backslash}', escape='\\')")
        ),
        ["say \"hi\""]
    );
    // unknown and unsupported options are named
    let e = error(&db, &format!("SELECT * FROM read_csv('{plain}', foo=1)"));
    assert!(
        e.contains("Invalid named parameter \"foo\" for function read_csv"),
        "{e}"
    );
    let e = error(
        &db,
        &format!("SELECT * FROM read_csv('{plain}', all_varchar=true)"),
    );
    assert!(e.contains("\"all_varchar\" is not supported"), "{e}");
    let e = error(
        &db,
        &format!("SELECT * FROM read_csv('{plain}', delim=';;')"),
    );
    assert!(e.contains("cannot exceed a size of 1 byte"), "{e}");
}

#[test]
fn a_bad_value_names_the_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::new().unwrap();
    let bad = write(dir.path(), "bad.csv", "a,b\n1,2\nx,3\n4,5\n");
    let e = error(
        &db,
        &format!("SELECT * FROM read_csv('{bad}', types={{'a': 'INT'}})"),
    );
    assert!(e.contains("bad.csv"), "{e}");
    assert!(e.contains("line 3"), "{e}");
    assert!(e.contains("column \"a\""), "{e}");
    // after two skipped lines and the header, the same row is line 5
    let skipped = write(dir.path(), "skip.csv", "#\n#\na,b\n1,2\nx,3\n");
    let e = error(
        &db,
        &format!("SELECT * FROM read_csv('{skipped}', skip=2, types={{'a': 'INT'}})"),
    );
    assert!(e.contains("line 5"), "{e}");
}

#[test]
fn gzip_and_zstd_files_are_read_by_extension() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::new().unwrap();
    let mut text = String::from("k;v\n");
    for i in 0..50_000 {
        text.push_str(&format!("{i};{}\n", i % 7));
    }
    // past the sample: a decimal, which widens the column
    text.push_str("50000;0.5\n");
    let path = dir.path().join("data.csv.gz");
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&path).unwrap(),
        flate2::Compression::fast(),
    );
    gz.write_all(text.as_bytes()).unwrap();
    gz.finish().unwrap();
    let path = path.to_str().unwrap();
    assert_eq!(
        rows(
            &db,
            &format!("SELECT count(*), sum(k), sum(v) FROM '{path}'")
        ),
        ["50001|1250025000|149997.5"]
    );
    assert_eq!(
        rows(
            &db,
            &format!("SELECT count(*) FROM read_csv('{path}', header=false)")
        ),
        ["50002"]
    );
    // zstd, two frames one after the other (as `zstd -T` writes them)
    let half = text.len() / 2;
    let cut = half + text[half..].find('\n').unwrap() + 1;
    let mut zst = Vec::new();
    for part in [&text[..cut], &text[cut..]] {
        zst.extend(ruzstd::encoding::compress_to_vec(
            part.as_bytes(),
            ruzstd::encoding::CompressionLevel::Fastest,
        ));
    }
    let zst_path = dir.path().join("data.csv.zst");
    std::fs::write(&zst_path, zst).unwrap();
    let zst_path = zst_path.to_str().unwrap();
    assert_eq!(
        rows(
            &db,
            &format!("SELECT count(*), sum(k), sum(v) FROM '{zst_path}'")
        ),
        ["50001|1250025000|149997.5"]
    );
    // a file that is not what its extension says is an error naming it
    let fake = write(dir.path(), "fake.csv.gz", "a,b\n1,2\n");
    let e = error(&db, &format!("SELECT * FROM '{fake}'"));
    assert!(e.contains("fake.csv.gz"), "{e}");
}

#[test]
fn globs_and_lists_read_many_files_as_one_table() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::new().unwrap();
    let d = dir.path();
    write(d, "a.csv", "id,name\n1,ann\n2,bob\n");
    write(d, "b.csv", "id,name\n3,cy\n");
    write(d, "sub/c.csv", "id,name\n4,dee\n");
    write(d, "other.txt", "not csv");
    let root = d.to_str().unwrap();
    assert_eq!(
        rows(
            &db,
            &format!("SELECT id, name FROM '{root}/*.csv' ORDER BY id")
        ),
        ["1|ann", "2|bob", "3|cy"]
    );
    assert_eq!(
        rows(&db, &format!("SELECT count(*) FROM '{root}/**/*.csv'")),
        ["4"]
    );
    assert_eq!(
        rows(
            &db,
            &format!(
                "SELECT id, replace(filename, '{root}/', '') FROM read_csv(['{root}/b.csv', '{root}/sub/*.csv'], filename=true)"
            )
        ),
        ["3|b.csv", "4|sub/c.csv"]
    );
    assert_eq!(
        columns(&db, &format!("read_csv('{root}/*.csv', filename=true)")),
        ["id BIGINT", "name VARCHAR", "filename VARCHAR"]
    );
    // EXPLAIN ANALYZE counts the files read
    let plan = rows(
        &db,
        &format!("EXPLAIN ANALYZE SELECT count(*) FROM '{root}/*.csv'"),
    )
    .join("\n");
    assert!(plan.contains("*.csv' (2 files)"), "{plan}");
    // nothing matches: DuckDB's message
    let e = error(&db, &format!("SELECT * FROM '{root}/*.nope.csv'"));
    assert!(e.contains("No files found that match the pattern"), "{e}");
    // different columns are an error naming both files
    write(d, "x/one.csv", "id,name\n1,a\n");
    write(d, "x/two.csv", "id,other\n2,b\n");
    let e = error(&db, &format!("SELECT * FROM '{root}/x/*.csv'"));
    assert!(
        e.contains("same columns in the same order") && e.contains("two.csv"),
        "{e}"
    );
}

#[test]
fn parquet_lists_and_globs() {
    use std::sync::Arc;

    use arrow::array::{Int64Array, RecordBatch, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};

    let dir = tempfile::tempdir().unwrap();
    let db = Database::new().unwrap();
    let schema = Arc::new(Schema::new(vec![
        Field::new("n", DataType::Int64, false),
        Field::new("s", DataType::Utf8, true),
    ]));
    for (name, from) in [("p1.parquet", 0), ("p2.parquet", 10)] {
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from_iter_values(from..from + 3)),
                Arc::new(StringArray::from_iter_values(
                    (from..from + 3).map(|i| format!("v{i}")),
                )),
            ],
        )
        .unwrap();
        let file = std::fs::File::create(dir.path().join(name)).unwrap();
        let mut w = parquet::arrow::ArrowWriter::try_new(file, schema.clone(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
    }
    let root = dir.path().to_str().unwrap();
    assert_eq!(
        rows(
            &db,
            &format!("SELECT count(*), sum(n) FROM '{root}/*.parquet'")
        ),
        ["6|36"]
    );
    assert_eq!(
        rows(
            &db,
            &format!(
                "SELECT max(s), count(DISTINCT filename) FROM read_parquet(['{root}/p1.parquet', '{root}/p2.parquet'], filename=true)"
            )
        ),
        ["v2|2"]
    );
    let e = error(
        &db,
        &format!("SELECT * FROM read_parquet('{root}/p1.parquet', union_by_name=true)"),
    );
    assert!(e.contains("\"union_by_name\" is not supported"), "{e}");
}

#[test]
fn ignore_errors_leaves_out_rows_that_do_not_convert() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::new().unwrap();
    let bad = write(dir.path(), "bad.csv", "a,b\n1,2\nx,3\n4,5\n");
    assert_eq!(
        rows(
            &db,
            &format!("SELECT * FROM read_csv('{bad}', types={{'a': 'INT'}}, ignore_errors=true)")
        ),
        ["1|2", "4|5"]
    );
    // a fixed type holds: the row is left out
    let mut text = String::from("n,s\n");
    for i in 0..100 {
        text.push_str(&format!("{i},v{i}\n"));
    }
    text.push_str("oops,w\n");
    let late = write(dir.path(), "late.csv", &text);
    assert_eq!(
        rows(
            &db,
            &format!(
                "SELECT count(*), sum(n) FROM read_csv('{late}', types={{'n': 'BIGINT'}}, ignore_errors=true)"
            )
        ),
        ["100|4950"]
    );
}

#[test]
fn a_parquet_column_of_an_unsupported_type_blocks_only_queries_that_read_it() {
    use std::sync::Arc;

    use arrow::array::{Int64Array, ListArray, RecordBatch};
    use arrow::datatypes::{DataType, Field, Int64Type, Schema};
    use weir_engine::Config;

    let dir = tempfile::tempdir().unwrap();
    let schema = Arc::new(Schema::new(vec![
        Field::new("n", DataType::Int64, false),
        Field::new(
            "l",
            DataType::List(Arc::new(Field::new_list_field(DataType::Int64, true))),
            true,
        ),
        Field::new("m", DataType::Int64, false),
    ]));
    let count = 10_000i64;
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from_iter_values(0..count)),
            Arc::new(ListArray::from_iter_primitive::<Int64Type, _, _>(
                (0..count).map(|i| Some(vec![Some(i), None])),
            )),
            Arc::new(Int64Array::from_iter_values((0..count).map(|i| i % 3))),
        ],
    )
    .unwrap();
    let path = dir.path().join("lists.parquet");
    // several row groups: the parallel reader projects too
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(1000))
        .build();
    let mut w = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(&path).unwrap(),
        schema,
        Some(props),
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let path = path.to_str().unwrap();
    for threads in [1, 4] {
        let db = Database::with_config(Config {
            threads,
            ..Config::default()
        })
        .unwrap();
        assert_eq!(
            rows(
                &db,
                &format!("SELECT count(*), sum(n), sum(m) FROM '{path}' WHERE n >= 5000")
            ),
            ["5000|37497500|5000"]
        );
        assert_eq!(
            rows(
                &db,
                &format!("SELECT * EXCLUDE (l) FROM '{path}' WHERE n = 7")
            ),
            ["7|1"]
        );
        // DESCRIBE names the file's type
        let described = rows(&db, &format!("DESCRIBE '{path}'"));
        assert!(described[1].starts_with("l|List("), "{described:?}");
        for sql in [
            format!("SELECT * FROM '{path}'"),
            format!("SELECT n, l FROM read_parquet('{path}')"),
        ] {
            let e = error(&db, &sql);
            assert!(
                e.contains("column \"l\" has type List(")
                    && e.contains("which Weir does not support"),
                "{sql}: {e}"
            );
        }
    }
}

#[test]
fn hive_partitions_give_columns_and_a_filter_on_them_skips_files() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::new().unwrap();
    let d = dir.path();
    write(d, "year=2023/month=01/d.csv", "a,b\n1,x\n");
    write(d, "year=2024/month=02/d.csv", "a,b\n2,y\n");
    write(d, "year=2024/month=03/d.csv", "a,b\n3,z\n");
    let root = d.to_str().unwrap();
    let all = format!("'{root}/**/*.csv'");
    // DuckDB: keys sorted, "01" stays VARCHAR, 2023 is a BIGINT
    assert_eq!(
        columns(&db, &all),
        ["a BIGINT", "b VARCHAR", "month VARCHAR", "year BIGINT"]
    );
    assert_eq!(
        rows(&db, &format!("SELECT * FROM {all} ORDER BY a")),
        ["1|x|01|2023", "2|y|02|2024", "3|z|03|2024"]
    );
    assert_eq!(
        columns(&db, &format!("read_csv({all}, filename=true)")),
        [
            "a BIGINT",
            "b VARCHAR",
            "filename VARCHAR",
            "month VARCHAR",
            "year BIGINT"
        ]
    );
    assert_eq!(
        columns(&db, &format!("read_csv({all}, hive_partitioning=false)")),
        ["a BIGINT", "b VARCHAR"]
    );
    // a filter on the partitions reads only the files that can match
    let analyze = |sql: &str| rows(&db, &format!("EXPLAIN ANALYZE {sql}")).join("\n");
    let sql = format!("SELECT a, b FROM {all} WHERE year = 2024 AND month = '02' AND a > 0");
    assert_eq!(rows(&db, &sql), ["2|y"]);
    let plan = analyze(&sql);
    assert!(plan.contains("(1 of 3 files)"), "{plan}");
    let sql = format!("SELECT count(*) FROM {all} WHERE year >= 2024");
    assert_eq!(rows(&db, &sql), ["2"]);
    assert!(analyze(&sql).contains("(2 of 3 files)"));
    // none left: no file read, no rows
    let sql = format!("SELECT count(*) FROM {all} WHERE year = 1999");
    assert_eq!(rows(&db, &sql), ["0"]);
    assert!(analyze(&sql).contains("(0 of 3 files)"));
    // a filter on a file column reads every file
    let sql = format!("SELECT count(*) FROM {all} WHERE a = 3");
    assert_eq!(rows(&db, &sql), ["1"]);
    assert!(analyze(&sql).contains("(3 files)"));
}

#[test]
fn a_timestamp_column_widens_past_the_sample_or_names_its_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::new().unwrap();
    let mut text = String::from("t,n\n");
    for i in 0..50 {
        text.push_str(&format!("2024-01-02 03:04:{:02},{i}\n", i % 60));
    }
    text.push_str("soon,50\n");
    let path = write(dir.path(), "t.csv", &text);
    // sniffed TIMESTAMP from 10 rows; "soon" widens it to VARCHAR
    assert_eq!(
        rows(
            &db,
            &format!("SELECT count(*), max(t) FROM read_csv('{path}', sample_size=10)")
        ),
        ["51|soon"]
    );
    // a fixed type is an error naming the line (the header is line 1)
    let e = error(
        &db,
        &format!("SELECT * FROM read_csv('{path}', types={{'t': 'TIMESTAMP'}})"),
    );
    assert!(e.contains("t.csv") && e.contains("line 52"), "{e}");
    assert!(e.contains("column \"t\""), "{e}");
}

#[test]
fn a_parquet_scan_reads_only_the_columns_the_query_uses() {
    use std::sync::Arc;

    use arrow::array::{Int64Array, RecordBatch, TimestampSecondArray};
    use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
    use weir_engine::Config;

    // `far` holds seconds too large to store as microseconds: reading it
    // fails, so a query that succeeds did not read it
    let dir = tempfile::tempdir().unwrap();
    let schema = Arc::new(Schema::new(vec![
        Field::new("n", DataType::Int64, false),
        Field::new("far", DataType::Timestamp(TimeUnit::Second, None), true),
        Field::new("m", DataType::Int64, false),
    ]));
    let count = 5_000i64;
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from_iter_values(0..count)),
            Arc::new(TimestampSecondArray::from_iter_values(
                (0..count).map(|_| i64::MAX / 4),
            )),
            Arc::new(Int64Array::from_iter_values((0..count).map(|i| i % 2))),
        ],
    )
    .unwrap();
    let path = dir.path().join("far.parquet");
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(1000))
        .build();
    let mut w = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(&path).unwrap(),
        schema,
        Some(props),
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let path = path.to_str().unwrap();
    for threads in [1, 4] {
        let db = Database::with_config(Config {
            threads,
            ..Config::default()
        })
        .unwrap();
        assert_eq!(
            rows(&db, &format!("SELECT count(*) FROM '{path}'")),
            ["5000"]
        );
        assert_eq!(
            rows(&db, &format!("SELECT sum(n) FROM '{path}' WHERE m = 1")),
            ["6250000"]
        );
        assert_eq!(
            rows(
                &db,
                &format!("SELECT m, count(*) FROM '{path}' GROUP BY m ORDER BY m")
            ),
            ["0|2500", "1|2500"]
        );
        let e = error(&db, &format!("SELECT max(far) FROM '{path}'"));
        assert!(e.contains("far"), "{e}");
    }
}

#[test]
fn a_limit_without_order_reads_only_the_first_row_groups() {
    use std::sync::Arc;

    use arrow::array::{Int64Array, RecordBatch};
    use arrow::datatypes::{DataType, Field, Schema};
    use weir_engine::Config;

    let dir = tempfile::tempdir().unwrap();
    let schema = Arc::new(Schema::new(vec![Field::new("n", DataType::Int64, false)]));
    // two files of ten row groups of 1,000 rows
    for (name, from) in [("a.parquet", 0i64), ("b.parquet", 10_000)] {
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(Int64Array::from_iter_values(from..from + 10_000))],
        )
        .unwrap();
        let props = parquet::file::properties::WriterProperties::builder()
            .set_max_row_group_row_count(Some(1000))
            .build();
        let mut w = parquet::arrow::ArrowWriter::try_new(
            std::fs::File::create(dir.path().join(name)).unwrap(),
            schema.clone(),
            Some(props),
        )
        .unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
    }
    let root = dir.path().to_str().unwrap();
    let a = format!("'{root}/a.parquet'");
    let both = format!("'{root}/*.parquet'");
    for threads in [1, 4] {
        let db = Database::with_config(Config {
            threads,
            ..Config::default()
        })
        .unwrap();
        // the rows the load line says were read
        let read = |sql: &str| -> String {
            let plan = rows(&db, &format!("EXPLAIN ANALYZE {sql}")).join("\n");
            let line = plan
                .lines()
                .find(|l| l.contains("read '"))
                .unwrap_or_else(|| panic!("no read line: {plan}"))
                .to_string();
            let fields: Vec<&str> = line.split_whitespace().collect();
            fields[fields.len() - 4].to_string()
        };
        let sql = format!("SELECT n FROM {a} LIMIT 3");
        assert_eq!(rows(&db, &sql), ["0", "1", "2"]);
        assert_eq!(read(&sql), "1000");
        let sql = format!("SELECT n * 2 FROM {a} LIMIT 2 OFFSET 2500");
        assert_eq!(rows(&db, &sql), ["5000", "5002"]);
        assert_eq!(read(&sql), "3000");
        // the second file is not opened when the first has the rows
        let sql = format!("SELECT n FROM {both} LIMIT 2 OFFSET 9999");
        assert_eq!(rows(&db, &sql), ["9999", "10000"]);
        let plan = rows(
            &db,
            &format!("EXPLAIN ANALYZE SELECT n FROM {both} LIMIT 5"),
        )
        .join("\n");
        assert!(plan.contains("(1 of 2 files, "), "{plan}");
        // under a filter the lanes stop pulling row groups once the LIMIT
        // has its rows: at most one row group per lane is read
        let sql = format!("SELECT n FROM {a} WHERE n > 5 LIMIT 3");
        assert_eq!(rows(&db, &sql), ["6", "7", "8"]);
        let read_rows: usize = read(&sql).parse().unwrap();
        assert!(read_rows <= threads * 1000, "{sql}: {read_rows} rows read");
        // a sort or an aggregate reads every row
        for sql in [
            format!("SELECT n FROM {a} ORDER BY n DESC LIMIT 3"),
            format!("SELECT count(*) FROM {a} LIMIT 3"),
        ] {
            assert_eq!(read(&sql), "10000", "{sql}");
        }
    }
}
