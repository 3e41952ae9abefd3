//! The arguments of `read_csv` / `read_csv_auto` / `read_parquet`: the
//! path (a string, a glob, or a list of them) and the named options, as
//! DuckDB takes them. The one place file reader options are parsed.

use arrow_schema::DataType;
use sqlparser::ast::{self, FunctionArg, FunctionArgExpr, Spanned, Value};

use super::coerce::Folder;
use super::expr::{ExprBinder, Scope};
use super::{at, bind_err, unsupported};
use crate::error::Result;
use crate::plan::{FileFormat, FileOptions};
use crate::scalar::ScalarValue;
use crate::types::sql_type_name;

/// The options `function` (lower case) takes that Weir reads.
fn known_options(format: FileFormat) -> &'static [&'static str] {
    match format {
        FileFormat::Csv => &[
            "auto_detect",
            "column_types",
            "columns",
            "delim",
            "delimiter",
            "dtypes",
            "escape",
            "filename",
            "header",
            "hive_partitioning",
            "ignore_errors",
            "nullstr",
            "quote",
            "sample_size",
            "sep",
            "skip",
            "types",
        ],
        FileFormat::Parquet => &["filename", "hive_partitioning"],
    }
}

/// DuckDB options Weir does not read (yet): refused by name rather than
/// called unknown.
const REFUSED_OPTIONS: &[&str] = &[
    "all_varchar",
    "allow_quoted_nulls",
    "binary_as_string",
    "comment",
    "compression",
    "dateformat",
    "decimal_separator",
    "encoding",
    "force_not_null",
    "hive_types",
    "max_line_size",
    "names",
    "new_line",
    "normalize_names",
    "null_padding",
    "parallel",
    "rejects_table",
    "strict_mode",
    "timestampformat",
    "union_by_name",
];

/// A file function's path pattern(s) and options.
pub(crate) struct FileArgs {
    /// The path as written (a list shows as `['a', 'b']`).
    pub(crate) path: String,
    pub(crate) options: FileOptions,
}

/// Binds the arguments of file function `name` (lower case) reading
/// `format`.
pub(crate) fn file_args(
    name: &str,
    format: FileFormat,
    id: &ast::Ident,
    args: &[FunctionArg],
    fold: Folder<'_>,
) -> Result<FileArgs> {
    let mut options = FileOptions::default();
    let mut path = None;
    for a in args {
        let named = match a {
            FunctionArg::Named {
                name: option,
                arg: FunctionArgExpr::Expr(e),
                ..
            } => Some((option, e)),
            FunctionArg::ExprNamed {
                name: ast::Expr::Identifier(option),
                arg: FunctionArgExpr::Expr(e),
                ..
            } => Some((option, e)),
            _ => None,
        };
        if let Some((option, e)) = named {
            let key = option.value.to_ascii_lowercase();
            if known_options(format).contains(&key.as_str()) {
                file_option(&mut options, name, &key, e, fold)?;
            } else if REFUSED_OPTIONS.contains(&key.as_str()) {
                return Err(unsupported(format!(
                    "{name} option \"{}\" is not supported{}",
                    option.value,
                    at(option.span)
                )));
            } else {
                return Err(bind_err(format!(
                    "Invalid named parameter \"{}\" for function {name}{}",
                    option.value,
                    at(option.span)
                )));
            }
            continue;
        }
        let FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) = a else {
            return Err(unsupported(format!(
                "{name} argument {a} is not supported{}",
                at(id.span)
            )));
        };
        if path.is_some() {
            return Err(bind_err(format!(
                "{name} takes one argument, a file path string or a list of them{}",
                at(e.span())
            )));
        }
        if let ast::Expr::Array(list) = e {
            let mut paths = Vec::with_capacity(list.elem.len());
            for p in &list.elem {
                paths.push(string(name, "path", p, fold)?);
            }
            if paths.is_empty() {
                return Err(bind_err(format!(
                    "{name} needs at least one file path{}",
                    at(e.span())
                )));
            }
            let shown: Vec<String> = paths.iter().map(|p| format!("'{p}'")).collect();
            path = Some(format!("[{}]", shown.join(", ")));
            options.paths = paths;
        } else {
            path = Some(string(name, "path", e, fold)?);
        }
    }
    let Some(path) = path else {
        return Err(bind_err(format!(
            "{name} takes one argument, a file path string or a list of them{}",
            at(id.span)
        )));
    };
    if options.no_auto_detect && options.columns.is_none() {
        return Err(bind_err(format!(
            "{name} requires columns to be specified through the 'columns' option. Use read_csv_auto or set read_csv(..., AUTO_DETECT=TRUE) to automatically guess columns.{}",
            at(id.span)
        )));
    }
    if options.columns.is_some() && !options.types.is_empty() {
        return Err(bind_err(format!(
            "{name}: give column types either in \"columns\" or in \"types\", not both{}",
            at(id.span)
        )));
    }
    Ok(FileArgs { path, options })
}

/// The constant value of option `option`'s expression `e`.
fn constant(name: &str, option: &str, e: &ast::Expr, fold: Folder<'_>) -> Result<ScalarValue> {
    let scope = Scope::empty();
    let mut eb = ExprBinder::new(
        &scope,
        fold,
        false,
        "aggregate functions are not allowed here",
    );
    let bound = eb.bind(e)?;
    fold.value(&bound)?.ok_or_else(|| {
        bind_err(format!(
            "{name} {option} must be a constant, found \"{e}\"{}",
            at(e.span())
        ))
    })
}

fn string(name: &str, option: &str, e: &ast::Expr, fold: Folder<'_>) -> Result<String> {
    match constant(name, option, e, fold)? {
        ScalarValue::Utf8(s) => Ok(s),
        v => Err(bind_err(format!(
            "{name} {option} must be a string, found {} \"{e}\"{}",
            sql_type_name(&v.data_type()),
            at(e.span())
        ))),
    }
}

fn boolean(name: &str, option: &str, e: &ast::Expr, fold: Folder<'_>) -> Result<bool> {
    match constant(name, option, e, fold)? {
        ScalarValue::Boolean(b) => Ok(b),
        ScalarValue::Int32(n) if n == 0 || n == 1 => Ok(n == 1),
        ScalarValue::Int64(n) if n == 0 || n == 1 => Ok(n == 1),
        v => Err(bind_err(format!(
            "{name} {option} must be a boolean, found {} \"{e}\"{}",
            sql_type_name(&v.data_type()),
            at(e.span())
        ))),
    }
}

fn integer(name: &str, option: &str, e: &ast::Expr, fold: Folder<'_>) -> Result<i64> {
    match constant(name, option, e, fold)? {
        ScalarValue::Int32(n) => Ok(i64::from(n)),
        ScalarValue::Int64(n) => Ok(n),
        v => Err(bind_err(format!(
            "{name} {option} must be an integer, found {} \"{e}\"{}",
            sql_type_name(&v.data_type()),
            at(e.span())
        ))),
    }
}

/// One byte, or none for `''`: a delimiter, quote or escape character.
fn character(name: &str, option: &str, e: &ast::Expr, fold: Folder<'_>) -> Result<Option<u8>> {
    let s = string(name, option, e, fold)?;
    let s = if s == "\\t" { "\t".to_string() } else { s };
    match s.as_bytes() {
        [] => Ok(None),
        [b] => Ok(Some(*b)),
        _ => Err(bind_err(format!(
            "{name}: The {option} option cannot exceed a size of 1 byte, found \"{s}\"{}",
            at(e.span())
        ))),
    }
}

/// Sets option `option` (lower case, one of [`known_options`]).
fn file_option(
    options: &mut FileOptions,
    name: &str,
    option: &str,
    e: &ast::Expr,
    fold: Folder<'_>,
) -> Result<()> {
    match option {
        "sample_size" => {
            options.sample_rows = match integer(name, option, e, fold)? {
                -1 => Some(usize::MAX),
                n if n > 0 => Some(n as usize),
                _ => {
                    return Err(bind_err(format!(
                        "{name} sample_size must be a positive integer or -1 (all rows), found \"{e}\"{}",
                        at(e.span())
                    )));
                }
            }
        }
        "delim" | "delimiter" | "sep" => {
            options.delimiter = Some(character(name, option, e, fold)?.ok_or_else(|| {
                bind_err(format!(
                    "{name} {option} must be one character, found \"{e}\"{}",
                    at(e.span())
                ))
            })?);
        }
        "quote" => options.quote = Some(character(name, option, e, fold)?),
        "escape" => options.escape = Some(character(name, option, e, fold)?),
        "header" => options.header = Some(boolean(name, option, e, fold)?),
        "nullstr" => options.null_string = Some(string(name, option, e, fold)?),
        "skip" => {
            let n = integer(name, option, e, fold)?;
            options.skip = usize::try_from(n).map_err(|_| {
                bind_err(format!(
                    "{name} skip must be zero or more lines, found {n}{}",
                    at(e.span())
                ))
            })?;
        }
        "ignore_errors" => options.ignore_errors = boolean(name, option, e, fold)?,
        "auto_detect" => options.no_auto_detect = !boolean(name, option, e, fold)?,
        "filename" => options.filename = boolean(name, option, e, fold)?,
        "hive_partitioning" => options.hive_partitioning = Some(boolean(name, option, e, fold)?),
        "columns" => options.columns = Some(column_types(name, option, e)?),
        _ => options.types.extend(column_types(name, option, e)?),
    }
    Ok(())
}

/// `{'col': 'TYPE', ...}`.
fn column_types(name: &str, option: &str, e: &ast::Expr) -> Result<Vec<(String, DataType)>> {
    let ast::Expr::Dictionary(fields) = e else {
        return Err(bind_err(format!(
            "{name} {option} must be a struct of column names to type names, such as {{'a': 'DOUBLE'}}, found \"{e}\"{}",
            at(e.span())
        )));
    };
    let mut out = Vec::with_capacity(fields.len());
    for field in fields {
        let type_name = match field.value.as_ref() {
            ast::Expr::Value(v) => match &v.value {
                Value::SingleQuotedString(t) => t.clone(),
                _ => String::new(),
            },
            _ => String::new(),
        };
        let data_type = parse_type_name(&type_name).ok_or_else(|| {
            bind_err(format!(
                "{name} {option}: \"{}\" is not a type Weir reads from CSV (BOOLEAN, INTEGER, BIGINT, DOUBLE, VARCHAR, DATE, TIMESTAMP){}",
                field.value,
                at(field.value.span())
            ))
        })?;
        out.push((field.key.value.clone(), data_type));
    }
    Ok(out)
}

/// A type named in a string (`'DOUBLE'`), as CSV columns can have it.
fn parse_type_name(name: &str) -> Option<DataType> {
    let mut parser = sqlparser::parser::Parser::new(&crate::dialect::WEIR)
        .try_with_sql(name)
        .ok()?;
    let t = super::data_type_from_sql(&parser.parse_data_type().ok()?).ok()?;
    matches!(
        t,
        DataType::Boolean
            | DataType::Int32
            | DataType::Int64
            | DataType::Float64
            | DataType::Utf8
            | DataType::Date32
            | DataType::Timestamp(..)
    )
    .then_some(t)
}
