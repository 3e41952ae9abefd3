//! Runs the sqllogictest files in `tests/slt/` against weir-engine.
//!
//! Each file runs on a fresh database in three configurations: one thread,
//! four threads, and four threads with three-row morsels, so that tiny
//! test tables still take the parallel, multi-morsel paths.
//!
//! `connection NAME` records run on connections ([`Database::connect`]) of
//! the file's one database: they share its tables and global settings, and
//! each has its own per-connection settings.
//!
//! `cargo test -p weir-engine --test sqllogic [-- FILTER]`

use std::path::PathBuf;

use arrow::util::display::{ArrayFormatter, FormatOptions};
use sqllogictest::{DBOutput, DefaultColumnType};
use weir_engine::arrow::datatypes::DataType;
use weir_engine::{Config, Connection, Database};

struct Weir {
    conn: Connection,
}

#[derive(Debug)]
struct SltError(weir_engine::Error);

impl std::fmt::Display for SltError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl std::error::Error for SltError {}

impl sqllogictest::DB for Weir {
    type Error = SltError;
    type ColumnType = DefaultColumnType;

    fn run(&mut self, sql: &str) -> Result<DBOutput<DefaultColumnType>, SltError> {
        let result = self.conn.execute(sql).map_err(SltError)?;
        if !result.returns_rows() {
            return Ok(DBOutput::StatementComplete(
                result.rows_affected().unwrap_or(0),
            ));
        }
        let types = result
            .schema()
            .fields()
            .iter()
            .map(|f| match f.data_type() {
                t if t.is_integer() => DefaultColumnType::Integer,
                DataType::Float64 | DataType::Decimal128(..) => DefaultColumnType::FloatingPoint,
                DataType::Utf8 | DataType::Binary => DefaultColumnType::Text,
                _ => DefaultColumnType::Any,
            })
            .collect();
        let options = FormatOptions::default()
            .with_null("NULL")
            .with_timestamp_format(Some("%Y-%m-%d %H:%M:%S%.f"));
        let mut rows = Vec::new();
        for batch in result.batches() {
            // BLOBs as DuckDB prints them (`\xAA`)
            let columns: Vec<weir_engine::arrow::array::ArrayRef> = batch
                .columns()
                .iter()
                .map(|c| match c.data_type() {
                    DataType::Binary => {
                        use weir_engine::arrow::array::{AsArray, StringArray};
                        std::sync::Arc::new(
                            c.as_binary::<i32>()
                                .iter()
                                .map(|v| v.map(weir_engine::format_blob))
                                .collect::<StringArray>(),
                        ) as _
                    }
                    _ => c.clone(),
                })
                .collect();
            let formatters = columns
                .iter()
                .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
                .collect::<Result<Vec<_>, _>>()
                .expect("every stored type has a formatter");
            for row in 0..batch.num_rows() {
                rows.push(
                    formatters
                        .iter()
                        .map(|f| {
                            let s = f.value(row).to_string();
                            if s.is_empty() {
                                "(empty)".to_string()
                            } else {
                                s
                            }
                        })
                        .collect(),
                );
            }
        }
        Ok(DBOutput::Rows { types, rows })
    }

    fn engine_name(&self) -> &str {
        "weir"
    }
}

fn main() {
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/slt");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/slt exists")
        .map(|e| e.expect("readable dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "slt"))
        .filter(|p| filter.is_empty() || filter.iter().any(|f| p.to_string_lossy().contains(f)))
        .collect();
    files.sort();
    let configs = [
        (
            "1 thread",
            Config {
                threads: 1,
                ..Config::default()
            },
        ),
        (
            "4 threads",
            Config {
                threads: 4,
                ..Config::default()
            },
        ),
        (
            "4 threads, 3-row morsels",
            Config {
                threads: 4,
                morsel_rows: 3,
                ..Config::default()
            },
        ),
    ];
    let (mut passed, mut failed) = (0, 0);
    for file in &files {
        for (label, config) in &configs {
            let db = match Database::with_config(config.clone()) {
                Ok(db) => db,
                Err(e) => panic!("cannot make a database ({label}): {e}"),
            };
            let mut runner = sqllogictest::Runner::new(move || {
                let conn = db.connect();
                async move { Ok::<_, SltError>(Weir { conn }) }
            });
            // Files are resolved relative to the slt directory.
            runner.set_var("__SLT_DIR__".into(), dir.display().to_string());
            match runner.run_file(file) {
                Ok(()) => passed += 1,
                Err(e) => {
                    failed += 1;
                    eprintln!("FAILED {} ({label}):\n{e}\n", file.display());
                }
            }
        }
    }
    println!("sqllogictest: {passed} passed, {failed} failed");
    if failed > 0 || files.is_empty() {
        std::process::exit(1);
    }
}
