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
