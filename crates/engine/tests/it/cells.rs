//! Query results as text cells, for comparing with DuckDB's answers.

use arrow::util::display::{ArrayFormatter, FormatOptions};
use weir_engine::Database;

/// The rows `sql` returns, each cell as Arrow displays it (NULL as `NULL`),
/// or the error's message.
pub(crate) fn try_rows(db: &Database, sql: &str) -> Result<Vec<Vec<String>>, String> {
    let result = db.execute(sql).map_err(|e| e.to_string())?;
    let options = FormatOptions::default().with_null("NULL");
    let mut out = Vec::new();
    for batch in result.batches() {
        let formatters: Vec<_> = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options).expect("formatter"))
            .collect();
        for row in 0..batch.num_rows() {
            out.push(
                formatters
                    .iter()
                    .map(|f| f.value(row).to_string())
                    .collect(),
            );
        }
    }
    Ok(out)
}

/// [`try_rows`], panicking with the query on an error.
pub(crate) fn rows(db: &Database, sql: &str) -> Vec<Vec<String>> {
    try_rows(db, sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// The rows in and out of the first operator of EXPLAIN ANALYZE of `sql`
/// whose line contains `operator`.
pub(crate) fn analyzed_rows(db: &Database, sql: &str, operator: &str) -> (usize, usize) {
    let analyzed = db
        .execute(&format!("EXPLAIN ANALYZE {sql}"))
        .unwrap()
        .to_string();
    let line = analyzed
        .lines()
        .find(|l| l.contains(operator))
        .unwrap_or_else(|| panic!("no {operator} line in {analyzed}"));
    let numbers: Vec<usize> = line
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    match numbers[..] {
        [rows_in, rows_out, ..] => (rows_in, rows_out),
        _ => panic!("no row counts in {line}"),
    }
}
