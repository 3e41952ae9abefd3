//! What a statement reads, found from its syntax alone: no catalog, so it
//! works before the tables it names exist (`weir run` orders its stages
//! by it).

use std::collections::HashSet;
use std::ops::ControlFlow;

use sqlparser::ast::{
    self, FunctionArg, FunctionArgExpr, TableFactor, Value, ValueWithSpan, Visit, Visitor,
};
use sqlparser::parser::Parser;

use crate::error::Result;

/// A table or file a statement reads.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TableReference {
    /// A table by name, as written (names compare case-insensitively).
    Table(String),
    /// A file read in place (`FROM 'p.csv'`, `read_csv('p')`,
    /// `read_parquet('p')`), the path as written.
    File(String),
}

/// The tables and files `sql` (one or more statements) reads, each once,
/// in order of first appearance. Names defined by the statement's own
/// `WITH` clauses are not tables and are left out; table functions that
/// read no file (`range`, `generate_series`) are left out too.
///
/// ```
/// use weir_planner::{TableReference, table_references};
/// let refs = table_references(
///     "WITH t AS (SELECT * FROM orders) SELECT * FROM t WHERE id IN (SELECT id FROM 'ids.csv')",
/// )?;
/// assert_eq!(
///     refs,
///     [TableReference::Table("orders".into()), TableReference::File("ids.csv".into())]
/// );
/// # Ok::<(), weir_planner::Error>(())
/// ```
///
/// # Errors
/// [`crate::Error::Parse`] if the text does not parse.
pub fn table_references(sql: &str) -> Result<Vec<TableReference>> {
    let statements = Parser::new(&crate::dialect::WEIR)
        .with_recursion_limit(crate::binder::PARSER_RECURSION_LIMIT)
        .try_with_sql(sql)?
        .parse_statements()?;
    let mut collector = Collector::default();
    for s in &statements {
        let _ = s.visit(&mut collector);
    }
    let mut seen = HashSet::new();
    Ok(collector
        .found
        .into_iter()
        .filter(|r| match r {
            TableReference::Table(name) => !collector.ctes.contains(&name.to_lowercase()),
            TableReference::File(_) => true,
        })
        .filter(|r| seen.insert(r.clone()))
        .collect())
}

/// `sql` without its comments and with each run of whitespace made one
/// space (string literals and quoted names kept as written): two texts
/// that differ only in layout and comments normalise equal.
///
/// ```
/// use weir_planner::normalize_sql;
/// assert_eq!(
///     normalize_sql("-- totals\nSELECT a,\n   sum(b)  FROM t /* all */ GROUP BY a")?,
///     normalize_sql("SELECT a, sum(b) FROM t GROUP BY a")?
/// );
/// assert_ne!(normalize_sql("SELECT 'a  b'")?, normalize_sql("SELECT 'a b'")?);
/// # Ok::<(), weir_planner::Error>(())
/// ```
///
/// # Errors
/// [`crate::Error::Parse`] if the text does not tokenize (an open quote).
pub fn normalize_sql(sql: &str) -> Result<String> {
    use sqlparser::tokenizer::{Token, Tokenizer};
    let tokens = Tokenizer::new(&crate::dialect::WEIR, sql)
        .tokenize()
        .map_err(|e| crate::Error::Parse(e.into()))?;
    let mut out = String::with_capacity(sql.len());
    let mut space = false;
    for t in tokens {
        if let Token::Whitespace(_) = t {
            space = true;
            continue;
        }
        if space && !out.is_empty() {
            out.push(' ');
        }
        space = false;
        out.push_str(&t.to_string());
    }
    Ok(out)
}

/// True when `sql` is exactly one query (`SELECT`, `WITH`, `VALUES`, a
/// set operation), the shape of a `weir run` stage.
///
/// # Errors
/// [`crate::Error::Parse`] if the text does not parse.
pub fn is_single_query(sql: &str) -> Result<bool> {
    let statements = Parser::new(&crate::dialect::WEIR)
        .with_recursion_limit(crate::binder::PARSER_RECURSION_LIMIT)
        .try_with_sql(sql)?
        .parse_statements()?;
    Ok(matches!(statements.as_slice(), [ast::Statement::Query(_)]))
}

#[derive(Default)]
struct Collector {
    found: Vec<TableReference>,
    /// Lower-cased names of every CTE of the statement.
    ctes: HashSet<String>,
}

/// Table functions whose first argument is a file read in place.
const FILE_FUNCTIONS: &[&str] = &["read_csv", "read_csv_auto", "read_parquet", "parquet_scan"];

impl Visitor for Collector {
    type Break = ();

    fn pre_visit_query(&mut self, query: &ast::Query) -> ControlFlow<()> {
        if let Some(with) = &query.with {
            for cte in &with.cte_tables {
                self.ctes.insert(cte.alias.name.value.to_lowercase());
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<()> {
        let TableFactor::Table { name, args, .. } = factor else {
            return ControlFlow::Continue(());
        };
        let parts: Vec<&ast::Ident> = name.0.iter().filter_map(|p| p.as_ident()).collect();
        let Some(last) = parts.last() else {
            return ControlFlow::Continue(());
        };
        match args {
            Some(args) => {
                if FILE_FUNCTIONS.contains(&last.value.to_ascii_lowercase().as_str())
                    && let Some(FunctionArg::Unnamed(FunctionArgExpr::Expr(ast::Expr::Value(
                        ValueWithSpan {
                            value: Value::SingleQuotedString(path),
                            ..
                        },
                    )))) = args.args.first()
                {
                    self.found.push(TableReference::File(path.clone()));
                }
            }
            None if parts.len() == 1 && last.quote_style == Some('\'') => {
                self.found.push(TableReference::File(last.value.clone()));
            }
            None => {
                let full: Vec<&str> = parts.iter().map(|p| p.value.as_str()).collect();
                self.found.push(TableReference::Table(full.join(".")));
            }
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(sql: &str) -> Vec<TableReference> {
        table_references(sql).unwrap()
    }

    #[test]
    fn tables_files_and_ctes() {
        use TableReference::{File, Table};
        assert_eq!(refs("SELECT 1"), []);
        assert_eq!(refs("SELECT * FROM range(10)"), []);
        assert_eq!(
            refs("SELECT * FROM a WHERE x IN (SELECT x FROM B) AND EXISTS (SELECT 1 FROM a)"),
            [Table("a".into()), Table("B".into())]
        );
        assert_eq!(
            refs("SELECT * FROM read_parquet('x/y.parquet') UNION ALL SELECT * FROM 'z.csv'"),
            [File("x/y.parquet".into()), File("z.csv".into())]
        );
        assert_eq!(
            refs("WITH c AS (SELECT * FROM src) SELECT * FROM c JOIN d USING (k)"),
            [Table("src".into()), Table("d".into())]
        );
        assert!(table_references("SELEC 1").is_err());
        assert!(is_single_query("WITH x AS (SELECT 1) SELECT * FROM x;").unwrap());
        assert!(!is_single_query("SELECT 1; SELECT 2").unwrap());
        assert!(!is_single_query("CREATE TABLE t (a INT)").unwrap());
    }
}
