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

impl Binder<'_> {
    /// Binds a parsed COPY: the rows, the format (the `FORMAT` option, else
    /// `.parquet` gives Parquet and anything else CSV, as in DuckDB) and
    /// the options, each checked against the format.
    pub(crate) fn copy(&mut self, copy: &CopyTo) -> Result<Statement> {
        let plan = match &copy.source {
            Source::Query(q) => self.query(q)?,
            Source::Table(name) => {
                let sql = format!("SELECT * FROM {name}");
                let query = Parser::new(&sqlparser::dialect::DuckDbDialect {})
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
                (_, "partition_by" | "per_thread_output" | "file_size_bytes") => {
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
        Ok(Statement::Copy {
            plan,
            path: copy.path.clone(),
            format,
            options,
        })
    }
}
