//! `COPY ... TO 'file' (options)`, as in DuckDB.
//!
//! sqlparser's COPY knows PostgreSQL's options only (no `COMPRESSION`,
//! `ROW_GROUP_SIZE`, `PARTITION_BY`), so the statement is parsed here:
//! the source with sqlparser's own query and name parsers, the options as
//! DuckDB writes them, `name [value]`, a value any expression.

use sqlparser::ast::{self, ObjectName};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

use super::{Binder, at, bind_err, unsupported};
use crate::error::Result;
use crate::plan::{Compression, CopyOptions, FileFormat, Statement};

/// A parsed `COPY source TO 'path' (options)`.
#[derive(Debug)]
pub(crate) struct CopyTo {
    source: Source,
    path: String,
    options: Vec<(ast::Ident, Option<ast::Expr>)>,
}

#[derive(Debug)]
enum Source {
    Query(Box<ast::Query>),
    Table(ObjectName),
}

/// True when the next statement is a COPY (which [`parse`] then reads).
pub(crate) fn starts_copy(parser: &Parser<'_>) -> bool {
    parser.peek_keyword(Keyword::COPY)
}

/// Parses a COPY statement, the COPY keyword next.
pub(crate) fn parse(parser: &mut Parser<'_>) -> Result<CopyTo, ParserError> {
    parser.expect_keyword_is(Keyword::COPY)?;
    let source = if parser.consume_token(&Token::LParen) {
        let query = parser.parse_query()?;
        parser.expect_token(&Token::RParen)?;
        Source::Query(query)
    } else {
        let name = parser.parse_object_name(false)?;
        if parser.peek_token_ref().token == Token::LParen {
            return Err(ParserError::ParserError(
                "COPY of a column list is not supported: use COPY (SELECT columns FROM table) TO"
                    .into(),
            ));
        }
        Source::Table(name)
    };
    if parser.parse_keyword(Keyword::FROM) {
        return Err(ParserError::ParserError(
            "COPY ... FROM is not supported: read files in place with FROM 'file' or read_csv/read_parquet"
                .into(),
        ));
    }
    parser.expect_keyword_is(Keyword::TO)?;
    let path = parser.parse_literal_string()?;
    let _ = parser.parse_keyword(Keyword::WITH);
    let mut options = Vec::new();
    if parser.consume_token(&Token::LParen) {
        loop {
            let name = parser.parse_identifier()?;
            let value = match parser.peek_token_ref().token {
                Token::Comma | Token::RParen => None,
                _ => Some(parser.parse_expr()?),
            };
            options.push((name, value));
            if !parser.consume_token(&Token::Comma) {
                break;
            }
        }
        parser.expect_token(&Token::RParen)?;
    }
    Ok(CopyTo {
        source,
        path,
        options,
    })
}

/// An option's value as text: a word (`zstd`), a string (`','`) or a
/// number; `None` for an option written without one (`HEADER`).
fn option_text(value: Option<&ast::Expr>) -> Option<String> {
    match value? {
        ast::Expr::Identifier(id) => Some(id.value.clone()),
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => {
                Some(s.clone())
            }
            ast::Value::Number(n, _) => Some(n.clone()),
            ast::Value::Boolean(b) => Some(b.to_string()),
            other => Some(other.to_string()),
        },
        other => Some(other.to_string()),
    }
}

fn boolean(name: &ast::Ident, value: Option<&ast::Expr>) -> Result<bool> {
    match option_text(value)
        .map(|v| v.to_ascii_lowercase())
        .as_deref()
    {
        None | Some("true" | "1" | "on") => Ok(true),
        Some("false" | "0" | "off") => Ok(false),
        Some(other) => Err(bind_err(format!(
            "\"{}\" expects a boolean value, got \"{other}\"{}",
            name.value.to_ascii_lowercase(),
            at(name.span)
        ))),
    }
}

fn single_byte(name: &ast::Ident, value: Option<&ast::Expr>) -> Result<u8> {
    match option_text(value) {
        Some(v) if v.len() == 1 => Ok(v.as_bytes()[0]),
        Some(v) if v == "\\t" => Ok(b'\t'),
        v => Err(bind_err(format!(
            "\"{}\" expects a single one-byte character, got {}{}",
            name.value.to_ascii_lowercase(),
            v.map_or_else(|| "nothing".into(), |v| format!("\"{v}\"")),
            at(name.span)
        ))),
    }
}

/// The columns of `PARTITION_BY (a, b)` (or `PARTITION_BY a`), by name
/// among the rows written, as DuckDB's binder finds them.
fn partition_columns(
    name: &ast::Ident,
    value: Option<&ast::Expr>,
    schema: &arrow_schema::Schema,
) -> Result<Vec<usize>> {
    let names: Vec<&ast::Ident> = match value {
        Some(ast::Expr::Identifier(id)) => vec![id],
        Some(ast::Expr::Nested(inner)) => match inner.as_ref() {
            ast::Expr::Identifier(id) => vec![id],
            other => return Err(partition_expr_err(name, other)),
        },
        Some(ast::Expr::Tuple(items)) => items
            .iter()
            .map(|e| match e {
                ast::Expr::Identifier(id) => Ok(id),
                other => Err(partition_expr_err(name, other)),
            })
            .collect::<Result<_>>()?,
        Some(other) => return Err(partition_expr_err(name, other)),
        None => {
            return Err(bind_err(format!(
                "\"partition_by\" expects a column list{}",
                at(name.span)
            )));
        }
    };
    let mut columns = Vec::with_capacity(names.len());
    for id in names {
        let i = schema
            .fields()
            .iter()
            .position(|f| f.name().eq_ignore_ascii_case(&id.value))
            .ok_or_else(|| {
                bind_err(format!(
                    "\"partition_by\" expected to find {}, but it was not found in the table{}",
                    id.value,
                    at(id.span)
                ))
            })?;
        if !columns.contains(&i) {
            columns.push(i);
        }
    }
    Ok(columns)
}

fn partition_expr_err(name: &ast::Ident, e: &ast::Expr) -> crate::error::Error {
    bind_err(format!(
        "\"partition_by\" expects column names, got {e}{}",
        at(name.span)
    ))
}

impl Binder<'_> {
    /// Binds a parsed COPY: the rows, the format (the `FORMAT` option, else
    /// `.parquet` gives Parquet and anything else CSV, as in DuckDB) and
    /// the options, each checked against the format.
    pub(crate) fn copy(&mut self, copy: &CopyTo) -> Result<Statement> {
        let plan = match &copy.source {
            Source::Query(q) => self.query(q)?,
            Source::Table(name) => {
                let sql = format!("SELECT * FROM {name}");
                let query = Parser::new(&crate::dialect::WEIR)
                    .try_with_sql(&sql)?
                    .parse_query()?;
                self.query(&query)?
            }
        };
        let mut format = None;
        for (name, value) in &copy.options {
            if name.value.eq_ignore_ascii_case("format") {
                format = Some(match option_text(value.as_ref()) {
                    Some(f) if f.eq_ignore_ascii_case("csv") => FileFormat::Csv,
                    Some(f) if f.eq_ignore_ascii_case("parquet") => FileFormat::Parquet,
                    f => {
                        return Err(unsupported(format!(
                            "COPY TO format {} is not supported (use csv or parquet){}",
                            f.map_or_else(|| "(none)".into(), |f| format!("\"{f}\"")),
                            at(name.span)
                        )));
                    }
                });
            }
        }
        let lower = copy.path.to_ascii_lowercase();
        let format = format.unwrap_or(if lower.ends_with(".parquet") {
            FileFormat::Parquet
        } else {
            FileFormat::Csv
        });
        if format == FileFormat::Csv && [".gz", ".zst", ".zstd"].iter().any(|e| lower.ends_with(e))
        {
            return Err(unsupported(format!(
                "COPY TO a compressed CSV file is not supported: '{}'",
                copy.path
            )));
        }
        let mut options = CopyOptions::default();
        for (name, value) in &copy.options {
            let value = value.as_ref();
            let key = name.value.to_ascii_lowercase();
            match (format, key.as_str()) {
                (_, "format") => {}
                (FileFormat::Csv, "header") => options.header = boolean(name, value)?,
                (FileFormat::Csv, "delimiter" | "delim" | "sep") => {
                    options.delimiter = single_byte(name, value)?;
                }
                (FileFormat::Csv, "quote") => options.quote = single_byte(name, value)?,
                (FileFormat::Csv, "nullstr" | "null") => {
                    options.null = option_text(value).unwrap_or_default();
                }
                (FileFormat::Csv, "compression") => {
                    match option_text(value)
                        .map(|v| v.to_ascii_lowercase())
                        .as_deref()
                    {
                        Some("none" | "uncompressed" | "auto") => {}
                        other => {
                            return Err(unsupported(format!(
                                "COPY TO a compressed CSV file is not supported (compression {}){}",
                                other.unwrap_or("(none)"),
                                at(name.span)
                            )));
                        }
                    }
                }
                (FileFormat::Parquet, "compression" | "codec") => {
                    options.compression = match option_text(value)
                        .map(|v| v.to_ascii_lowercase())
                        .as_deref()
                    {
                        Some("uncompressed" | "none") => Compression::Uncompressed,
                        Some("snappy") => Compression::Snappy,
                        Some("zstd") => Compression::Zstd,
                        other => {
                            return Err(unsupported(format!(
                                "Parquet compression {} is not supported \
                                     (use uncompressed, snappy or zstd){}",
                                other.unwrap_or("(none)"),
                                at(name.span)
                            )));
                        }
                    };
                }
                (FileFormat::Parquet, "row_group_size") => {
                    options.row_group_size = option_text(value)
                        .and_then(|v| v.parse::<usize>().ok())
                        .filter(|&n| n > 0)
                        .ok_or_else(|| {
                            bind_err(format!(
                                "\"row_group_size\" expects a positive integer{}",
                                at(name.span)
                            ))
                        })?;
                }
                (_, "partition_by") => {
                    options.partition_by = partition_columns(name, value, &plan.schema())?;
                }
                (_, "overwrite") => options.overwrite = boolean(name, value)?,
                (_, "overwrite_or_ignore") => options.overwrite_or_ignore = boolean(name, value)?,
                (_, "write_partition_columns") => {
                    options.write_partition_columns = boolean(name, value)?;
                }
                (_, "filename_pattern") => {
                    options.filename_pattern = option_text(value).unwrap_or_default();
                }
                (_, "per_thread_output" | "file_size_bytes" | "append") => {
                    return Err(unsupported(format!(
                        "COPY TO option \"{key}\" is not supported{}",
                        at(name.span)
                    )));
                }
                (format, _) => {
                    let format = match format {
                        FileFormat::Csv => "csv",
                        FileFormat::Parquet => "parquet",
                    };
                    return Err(unsupported(format!(
                        "Unrecognized option \"{key}\" for {format}{}",
                        at(name.span)
                    )));
                }
            }
        }
        if !options.partition_by.is_empty() {
            if options.overwrite && options.overwrite_or_ignore {
                return Err(bind_err(
                    "Can only set one of OVERWRITE_OR_IGNORE, OVERWRITE or APPEND",
                ));
            }
            if !options.write_partition_columns
                && options.partition_by.len() == plan.schema().fields().len()
            {
                return Err(unsupported(
                    "No column to write as all columns are specified as partition columns. \
                     WRITE_PARTITION_COLUMNS option can be used to write partition columns.",
                ));
            }
            if !options.filename_pattern.contains("{i}")
                && !options.filename_pattern.contains("{uuid}")
            {
                options.filename_pattern.push_str("{i}");
            }
        }
        Ok(Statement::Copy {
            plan,
            path: copy.path.clone(),
            format,
            options,
        })
    }
}
