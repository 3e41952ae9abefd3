//! The SQL binder: sqlparser statements to planned [`Statement`]s.
//!
//! `mod.rs` holds the entry point and the non-query statements;
//! `query.rs` binds SELECT, `expr.rs` expressions, and `coerce.rs` holds
//! the typing rules and constant folding.

mod coerce;
mod copy;
mod dml;
mod expr;
pub(crate) use expr::GLOB;
mod files;
mod information_schema;
mod join;
mod pivot;
mod query;
mod settings;
mod subquery;
mod views;
mod window;

use std::collections::HashSet;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};
use sqlparser::ast::{self, ColumnOption, ExactNumberInfo, ObjectName, ObjectType, Spanned};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Span;

use self::coerce::{Folder, can_cast};
use self::expr::{ExprBinder, MAX_EXPR_DEPTH, Scope};
use crate::catalog::Catalog;
use crate::error::{Error, Result};
use crate::expr::Expr;
use crate::fold::ConstantEvaluator;
use crate::plan::{FileFormat, LogicalPlan, Statement};
use crate::scalar::ScalarValue;
use crate::types::{sql_type_name, timestamp_type};

/// Parses `sql` (one or more statements separated by `;`) in the DuckDB
/// dialect and plans each statement against `catalog`.
///
/// Statements are planned in order, and each sees the tables created and
/// dropped by the ones before it, so a script such as
/// `CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1); SELECT * FROM t`
/// plans as a whole. The catalog itself is never changed: running the
/// statements is the caller's job. Empty input gives no statements.
///
/// # Errors
/// [`Error::Parse`] if the text does not parse, [`Error::Bind`] for an
/// unknown name or a type error, [`Error::Unsupported`] for valid SQL
/// that Weir does not run, and [`Error::Catalog`] if a file's schema
/// cannot be read. The first failing statement stops planning.
///
/// Without an evaluator constants are not evaluated: `1 + 1` stays an
/// expression, and the places that need a constant (VALUES items, IN list
/// items, LIMIT) accept only literals. [`plan_sql_with`] folds them.
pub fn plan_sql(sql: &str, catalog: &dyn Catalog) -> Result<Vec<Statement>> {
    plan_sql_with(sql, catalog, None)
}

/// [`plan_sql`] that folds constant expressions with `evaluator`, the
/// evaluator that runs queries (see [`crate::fold`]).
///
/// # Errors
/// As [`plan_sql`], and [`Error::Evaluate`] when a constant the plan needs
/// cannot be evaluated.
pub fn plan_sql_with(
    sql: &str,
    catalog: &dyn Catalog,
    evaluator: Option<&dyn ConstantEvaluator>,
) -> Result<Vec<Statement>> {
    // Parsing, binding and dropping the syntax tree all recurse over it;
    // a long flat chain (`1+1+...+1`) is as deep as it is long. The binder
    // refuses nesting past MAX_EXPR_DEPTH with an error, and what is left
    // deep (a flat chain) is dropped where it was planned, so planning
    // needs a stack that grows with the text. A short text is planned on
    // this thread when its stack has room for the deepest the text can
    // nest; any other runs on a thread whose stack is sized for it, so no
    // input can overflow a stack. (Starting that thread costs more than
    // planning a short query: 200 us against 40 us for a top-N, release.)
    if stacker::remaining_stack().is_some_and(|left| left >= stack_here(sql.len())) {
        return plan_here(sql, catalog, evaluator);
    }
    let stack = PLAN_STACK_BASE.saturating_add(sql.len().saturating_mul(PLAN_STACK_PER_BYTE));
    std::thread::scope(|scope| {
        // where the system refuses so large a stack, a smaller one still
        // holds every plan but the deepest
        let mut last_error = None;
        for stack in [stack, PLAN_STACK_FALLBACK] {
            let spawned = std::thread::Builder::new()
                .name("weir-plan".into())
                .stack_size(stack)
                .spawn_scoped(scope, || plan_here(sql, catalog, evaluator));
            match spawned {
                Ok(planner) => {
                    return planner
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                }
                Err(e) => last_error = Some(e),
            }
        }
        Err(unsupported(format!(
            "cannot plan {} bytes of SQL: no thread could be started for it ({})",
            sql.len(),
            last_error.map_or_else(String::new, |e| e.to_string())
        )))
    })
}

/// The planning thread's stack is this (enough for [`MAX_EXPR_DEPTH`]
/// levels of parser and binder recursion in a debug build, which measured
/// over 64 KiB a level for nested function calls) ...
const PLAN_STACK_BASE: usize = 256 << 20;
/// ... plus this much per byte of SQL, for dropping (and comparing) a flat
/// chain as deep as the text is long (two bytes, `1+`, per level at most).
const PLAN_STACK_PER_BYTE: usize = 256;
/// The stack tried when the system refuses the first.
const PLAN_STACK_FALLBACK: usize = 16 << 20;

/// The stack that planning `len` bytes of SQL may take at most: every
/// byte a level of nesting (the parser's own recursion limit aside).
/// Measured in a release build, the deepest per byte were nested function
/// calls (`abs(abs(...))`, 14 KiB a level of 5 bytes) and subqueries (15.5
/// KiB a level of 8 bytes); a flat chain dropped takes 64 bytes a level
/// of 2 bytes. A debug build's frames are several times larger (64 KiB a
/// level of nested calls, see [`PLAN_STACK_BASE`]).
fn stack_here(len: usize) -> usize {
    let (base, per_byte) = if cfg!(debug_assertions) {
        (STACK_HERE_BASE * 8, STACK_HERE_PER_BYTE * 8)
    } else {
        (STACK_HERE_BASE, STACK_HERE_PER_BYTE)
    };
    base.saturating_add(len.saturating_mul(per_byte))
}

/// What planning the shortest statement takes in a release build (79 KiB
/// measured), with room to spare.
const STACK_HERE_BASE: usize = 256 << 10;
/// Stack per byte of SQL in a release build: nearly three times the most
/// measured (2.8 KiB a byte, nested function calls).
const STACK_HERE_PER_BYTE: usize = 8 << 10;

/// The recursion limit given to sqlparser: [`MAX_EXPR_DEPTH`] levels of
/// nesting plus the statement and query levels around them.
pub(crate) const PARSER_RECURSION_LIMIT: usize = MAX_EXPR_DEPTH + 16;

fn plan_here(
    sql: &str,
    catalog: &dyn Catalog,
    evaluator: Option<&dyn ConstantEvaluator>,
) -> Result<Vec<Statement>> {
    let _time = expr::start_statement_time();
    let statements = parse_statements(sql).map_err(|e| match e {
        ParserError::RecursionLimitExceeded => Error::Parse(ParserError::ParserError(format!(
            "Max expression depth limit of {MAX_EXPR_DEPTH} exceeded"
        ))),
        e => Error::Parse(e),
    })?;
    let _settings = settings::install(catalog);
    let mut binder = Binder {
        catalog,
        overrides: Vec::new(),
        fold: Folder::new(evaluator),
        ctes: std::cell::RefCell::new(Vec::new()),
        recursive_ctes: std::cell::Cell::new(0),
        views: std::cell::RefCell::new(Vec::new()),
    };
    statements
        .iter()
        .map(|s| match s {
            Parsed::Sql(s) => binder.statement(s.as_ref()),
            Parsed::Copy(c) => binder.copy(c),
        })
        .map(|s| s.map(|s| crate::optimize::statement(s, catalog)))
        .collect()
}

/// A parsed statement: sqlparser's, or a COPY parsed by [`copy::parse`].
enum Parsed {
    Sql(Box<ast::Statement>),
    Copy(copy::CopyTo),
}

/// sqlparser's `parse_statements`, with COPY statements parsed as DuckDB
/// writes them.
fn parse_statements(sql: &str) -> Result<Vec<Parsed>, ParserError> {
    let mut parser = Parser::new(&crate::dialect::WEIR)
        .with_recursion_limit(PARSER_RECURSION_LIMIT)
        .with_tokens_with_locations(crate::lexer::tokenize(sql)?);
    let mut out = Vec::new();
    let mut expecting_delimiter = false;
    loop {
        while parser.consume_token(&sqlparser::tokenizer::Token::SemiColon) {
            expecting_delimiter = false;
        }
        if parser.peek_token_ref().token == sqlparser::tokenizer::Token::EOF {
            return Ok(out);
        }
        if expecting_delimiter {
            return parser.expected("end of statement", parser.peek_token_ref().clone());
        }
        out.push(if copy::starts_copy(&parser) {
            Parsed::Copy(copy::parse(&mut parser)?)
        } else {
            Parsed::Sql(Box::new(parser.parse_statement()?))
        });
        expecting_delimiter = true;
    }
}

/// Plans statements over the catalog plus the effects of earlier
/// statements of the same script.
pub(crate) struct Binder<'a> {
    catalog: &'a dyn Catalog,
    /// Tables created (`Some`) or dropped (`None`) by earlier statements;
    /// the last entry for a name wins.
    overrides: Vec<(String, Option<SchemaRef>)>,
    /// Constant folding.
    pub(crate) fold: Folder<'a>,
    /// The common table expressions in scope (`WITH`), innermost last:
    /// name, plan, and the scope its columns go by.
    pub(crate) ctes: std::cell::RefCell<Vec<(String, LogicalPlan, SchemaRef)>>,
    /// Recursive CTEs bound so far (each one's working table is told
    /// apart by its number).
    pub(crate) recursive_ctes: std::cell::Cell<usize>,
    /// The views being bound, outermost first (a view that reads itself
    /// is an error, not a loop).
    pub(crate) views: std::cell::RefCell<Vec<String>>,
}

impl Binder<'_> {
    fn table_schema(&self, name: &str) -> Option<SchemaRef> {
        match self
            .overrides
            .iter()
            .rev()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
        {
            Some((_, schema)) => schema.clone(),
            None => self.catalog.table_schema(name),
        }
    }

    fn table_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .catalog
            .table_names()
            .into_iter()
            .filter(|n| self.table_schema(n).is_some())
            .collect();
        for (n, _) in &self.overrides {
            if self.table_schema(n).is_some() && !names.iter().any(|m| m.eq_ignore_ascii_case(n)) {
                names.push(n.clone());
            }
        }
        names
    }

    /// The table's schema and its name as the catalog spells it.
    pub(crate) fn lookup_table(&self, name: &ast::Ident) -> Result<(String, SchemaRef)> {
        match self.table_schema(&name.value) {
            Some(schema) => {
                // the name as the table was created (an earlier statement's
                // first, then the catalog's)
                let same = |n: &str| n.eq_ignore_ascii_case(&name.value);
                let canonical = self
                    .overrides
                    .iter()
                    .rev()
                    .find(|(n, _)| same(n))
                    .map(|(n, _)| n.clone())
                    .or_else(|| self.catalog.table_names().into_iter().find(|n| same(n)))
                    .unwrap_or_else(|| name.value.clone());
                Ok((canonical, schema))
            }
            None => Err(self.no_such_table(name)),
        }
    }

    fn no_such_table(&self, name: &ast::Ident) -> Error {
        let names = self.table_names();
        let hint = match did_you_mean(&name.value, names.iter().map(String::as_str)) {
            Some(c) => format!(" Did you mean \"{c}\"?"),
            None => String::new(),
        };
        bind_err(format!(
            "Table with name {} does not exist!{hint}{}",
            name.value,
            at(name.span)
        ))
    }

    /// The schema of a file read in place.
    pub(crate) fn file_schema(&self, path: &str, format: FileFormat) -> Result<SchemaRef> {
        self.catalog
            .file_schema(path, format)
            .map_err(Error::Catalog)
    }

    fn statement(&mut self, s: &ast::Statement) -> Result<Statement> {
        use ast::Statement as S;
        match s {
            S::Query(q) => Ok(Statement::Query(self.query(q)?)),
            S::Explain {
                describe_alias,
                analyze,
                statement,
                ..
            } => {
                let S::Query(q) = statement.as_ref() else {
                    return Err(unsupported(format!(
                        "{describe_alias} of {} is not supported",
                        statement_kind(statement)
                    )));
                };
                let plan = self.query(q)?;
                if *describe_alias == ast::DescribeAlias::Explain {
                    Ok(Statement::Explain {
                        analyze: *analyze,
                        plan,
                    })
                } else {
                    Ok(Statement::Describe {
                        name: q.to_string(),
                        schema: plan.schema(),
                    })
                }
            }
            S::ExplainTable { table_name, .. } => {
                let id = single_name(table_name)?;
                if id.quote_style == Some('\'') {
                    let format = format_from_extension(id)?;
                    let schema = self.file_schema(&id.value, format)?;
                    return Ok(Statement::Describe {
                        name: id.value.clone(),
                        schema,
                    });
                }
                if let Some(view) = self.catalog.view(&id.value) {
                    let (_, scope) = self.view(&view, id, None)?;
                    return Ok(Statement::Describe {
                        name: view.name,
                        schema: scope.schema,
                    });
                }
                let (name, schema) = self.lookup_table(id)?;
                Ok(Statement::Describe { name, schema })
            }
            S::ShowTables { .. } => Ok(Statement::ShowTables),
            S::Call(call) => self.call(call),
            S::Set(set) => self.set(set),
            S::Reset(reset) => self.reset(reset),
            S::Pragma { name, value, .. } => self.pragma(name, value.as_ref()),
            S::CreateTable(ct) => self.create_table(ct),
            S::Insert(ins) => self.insert(ins),
            S::Update(u) => self.update(u),
            S::Delete(d) => self.delete(d),
            S::AlterTable(at) => self.alter_table(at),
            S::CreateView(v) => self.create_view(v),
            S::Drop {
                object_type: ObjectType::View,
                if_exists,
                names,
                ..
            } => {
                let [name] = names.as_slice() else {
                    return Err(unsupported("DROP VIEW of several views is not supported"));
                };
                let id = single_name(name)?;
                let name = match self.catalog.view(&id.value) {
                    Some(v) => v.name,
                    None if *if_exists => id.value.clone(),
                    None if self.table_schema(&id.value).is_some() => {
                        return Err(Error::Object(format!(
                            "Existing object \"{}\" is of type Table, trying to drop type View",
                            id.value
                        )));
                    }
                    None => {
                        return Err(Error::Object(format!(
                            "View with name {} does not exist!{}",
                            id.value,
                            at(id.span)
                        )));
                    }
                };
                Ok(Statement::DropView {
                    name,
                    if_exists: *if_exists,
                })
            }
            S::Drop {
                object_type,
                if_exists,
                names,
                ..
            } => {
                if *object_type != ObjectType::Table {
                    return Err(unsupported(format!("DROP {object_type} is not supported")));
                }
                let [name] = names.as_slice() else {
                    return Err(unsupported("DROP TABLE of several tables is not supported"));
                };
                let id = single_name(name)?;
                if let Some(v) = self.catalog.view(&id.value) {
                    return Err(Error::Object(format!(
                        "Existing object \"{}\" is of type View, trying to drop type Table",
                        v.name
                    )));
                }
                let name = match self.lookup_table(id) {
                    Ok((name, _)) => name,
                    Err(_) if *if_exists => id.value.clone(),
                    Err(e) => return Err(e),
                };
                self.overrides.push((name.clone(), None));
                Ok(Statement::DropTable {
                    name,
                    if_exists: *if_exists,
                })
            }
            other => Err(unsupported(format!(
                "{} statements are not supported",
                statement_kind(other)
            ))),
        }
    }

    /// `CALL dbgen(sf = 0.1)`, the one procedure there is.
    fn call(&mut self, call: &ast::Function) -> Result<Statement> {
        let name = call.name.to_string();
        if !name.eq_ignore_ascii_case("dbgen") {
            return Err(Error::Catalog(format!(
                "Table Function with name {name} does not exist!{}",
                at(call.name.span())
            )));
        }
        let args: &[ast::FunctionArg] = match &call.args {
            ast::FunctionArguments::List(list) => &list.args,
            _ => &[],
        };
        let mut sf = None;
        for arg in args {
            // `sf = 0.1` parses as a comparison, `sf := 0.1` as a named one
            let named = match arg {
                ast::FunctionArg::Named {
                    name,
                    arg: ast::FunctionArgExpr::Expr(e),
                    ..
                }
                | ast::FunctionArg::ExprNamed {
                    name: ast::Expr::Identifier(name),
                    arg: ast::FunctionArgExpr::Expr(e),
                    ..
                } => Some((name.value.clone(), e)),
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(ast::Expr::BinaryOp {
                    left,
                    op: ast::BinaryOperator::Eq,
                    right,
                })) => match left.as_ref() {
                    ast::Expr::Identifier(name) => Some((name.value.clone(), right.as_ref())),
                    _ => None,
                },
                _ => None,
            };
            let (option, value) = match named {
                Some(named) => named,
                None => {
                    let other = arg;
                    return Err(bind_err(format!(
                        "dbgen takes named arguments (sf = 0.1), found \"{other}\"{}",
                        at(call.name.span())
                    )));
                }
            };
            if !option.eq_ignore_ascii_case("sf") {
                return Err(bind_err(format!(
                    "dbgen has no option \"{option}\" (it takes sf){}",
                    at(call.name.span())
                )));
            }
            let scope = Scope::empty();
            let mut eb = ExprBinder::new(
                &scope,
                self.fold,
                false,
                "aggregate functions are not allowed here",
            );
            let bound = eb.bind(value)?;
            let number = match self.fold.value(&bound)? {
                Some(ScalarValue::Int64(v)) => v as f64,
                Some(ScalarValue::Int32(v)) => f64::from(v),
                Some(ScalarValue::Float64(v)) => v,
                Some(ScalarValue::Decimal128(v, _, s)) => v as f64 / 10f64.powi(i32::from(s)),
                _ => f64::NAN,
            };
            if !(0.0..=1000.0).contains(&number) {
                return Err(bind_err(format!(
                    "dbgen's sf must be a number from 0 to 1000, found \"{value}\"{}",
                    at(value.span())
                )));
            }
            sf = Some(number);
        }
        let sf = sf.ok_or_else(|| {
            bind_err(format!(
                "dbgen needs a scale factor: CALL dbgen(sf = 0.1){}",
                at(call.name.span())
            ))
        })?;
        Ok(Statement::Dbgen { sf })
    }

    fn create_table(&mut self, ct: &ast::CreateTable) -> Result<Statement> {
        let id = single_name(&ct.name)?;
        let name = id.value.clone();
        if ct.like.is_some() || ct.clone.is_some() {
            return Err(unsupported("CREATE TABLE ... LIKE/CLONE is not supported"));
        }
        if !ct.constraints.is_empty() {
            return Err(unsupported(format!(
                "table constraints are not supported ({})",
                ct.constraints[0]
            )));
        }
        if ct.or_replace && ct.if_not_exists {
            return Err(bind_err(
                "CREATE TABLE cannot have both OR REPLACE and IF NOT EXISTS",
            ));
        }
        if self.table_schema(&name).is_some() && !ct.or_replace && !ct.if_not_exists {
            return Err(bind_err(format!(
                "Table with name {name} already exists!{}",
                at(id.span)
            )));
        }
        let (statement, schema) = if let Some(q) = &ct.query {
            if !ct.columns.is_empty() {
                return Err(unsupported(
                    "a column list with CREATE TABLE ... AS is not supported",
                ));
            }
            let plan = self.query(q)?;
            let schema = crate::plan::created_table_schema(&plan.schema());
            let statement = Statement::CreateTableAs {
                name: name.clone(),
                plan,
                if_not_exists: ct.if_not_exists,
                or_replace: ct.or_replace,
            };
            (statement, schema)
        } else {
            if ct.columns.is_empty() {
                return Err(bind_err(format!(
                    "CREATE TABLE {name} needs at least one column"
                )));
            }
            let mut seen = HashSet::new();
            let mut fields = Vec::with_capacity(ct.columns.len());
            for c in &ct.columns {
                if !seen.insert(c.name.value.to_ascii_lowercase()) {
                    return Err(bind_err(format!(
                        "Column with name {} already exists!{}",
                        c.name.value,
                        at(c.name.span)
                    )));
                }
                fields.push(column_field(c)?);
            }
            let schema = SchemaRef::new(Schema::new(fields));
            let statement = Statement::CreateTable {
                name: name.clone(),
                schema: schema.clone(),
                if_not_exists: ct.if_not_exists,
                or_replace: ct.or_replace,
            };
            (statement, schema)
        };
        if self.table_schema(&name).is_none() || ct.or_replace {
            self.overrides.push((name, Some(schema)));
        }
        Ok(statement)
    }

    fn alter_table(&mut self, alter: &ast::AlterTable) -> Result<Statement> {
        if alter.only
            || alter.location.is_some()
            || alter.on_cluster.is_some()
            || alter.table_type.is_some()
        {
            return Err(unsupported(format!("{alter} is not supported")));
        }
        let id = single_name(&alter.name)?;
        let (name, schema) = match self.lookup_table(id) {
            Ok(found) => found,
            // IF EXISTS: nothing to do
            Err(_) if alter.if_exists => {
                return Ok(Statement::AlterTable {
                    name: id.value.clone(),
                    new_name: id.value.clone(),
                    schema: SchemaRef::new(Schema::empty()),
                    columns: Vec::new(),
                    if_exists: true,
                });
            }
            Err(e) => return Err(e),
        };
        let [op] = alter.operations.as_slice() else {
            return Err(unsupported(
                "ALTER TABLE with several operations is not supported; use one statement each",
            ));
        };
        let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
        let mut columns: Vec<Option<usize>> = (0..fields.len()).map(Some).collect();
        let mut new_name = name.clone();
        let position = |fields: &[Field], c: &ast::Ident| {
            fields
                .iter()
                .position(|f| f.name().eq_ignore_ascii_case(&c.value))
        };
        let no_column = |c: &ast::Ident| {
            bind_err(format!(
                "Table \"{name}\" does not have a column with name \"{}\"{}",
                c.value,
                at(c.span)
            ))
        };
        let exists = |c: &ast::Ident| {
            bind_err(format!(
                "Column with name \"{}\" already exists!{}",
                c.value,
                at(c.span)
            ))
        };
        use ast::AlterTableOperation as Op;
        match op {
            Op::AddColumn {
                if_not_exists,
                column_def,
                column_position: None,
                ..
            } => {
                if position(&fields, &column_def.name).is_some() {
                    if !*if_not_exists {
                        return Err(exists(&column_def.name));
                    }
                } else {
                    fields.push(column_field(column_def)?);
                    columns.push(None);
                }
            }
            Op::DropColumn {
                column_names,
                if_exists,
                drop_behavior: None,
                ..
            } => {
                for c in column_names {
                    let Some(k) = position(&fields, c) else {
                        if *if_exists {
                            continue;
                        }
                        return Err(no_column(c));
                    };
                    if fields.len() == 1 {
                        return Err(bind_err(
                            "Cannot drop column: table only has one column remaining!",
                        ));
                    }
                    fields.remove(k);
                    columns.remove(k);
                }
            }
            Op::RenameColumn {
                old_column_name,
                new_column_name,
            } => {
                let k =
                    position(&fields, old_column_name).ok_or_else(|| no_column(old_column_name))?;
                if position(&fields, new_column_name).is_some_and(|j| j != k) {
                    return Err(exists(new_column_name));
                }
                fields[k] = fields[k].clone().with_name(new_column_name.value.clone());
            }
            Op::RenameTable { table_name } => {
                let (ast::RenameTableNameKind::To(n) | ast::RenameTableNameKind::As(n)) =
                    table_name;
                let to = single_name(n)?;
                if !to.value.eq_ignore_ascii_case(&name) && self.table_schema(&to.value).is_some() {
                    return Err(bind_err(format!(
                        "Could not rename \"{name}\" to \"{}\": another entry with this name already exists!{}",
                        to.value,
                        at(to.span)
                    )));
                }
                new_name = to.value.clone();
            }
            other => {
                return Err(unsupported(format!(
                    "ALTER TABLE ... {other} is not supported"
                )));
            }
        }
        let schema = SchemaRef::new(Schema::new(fields));
        if !new_name.eq_ignore_ascii_case(&name) {
            self.overrides.push((name.clone(), None));
        }
        self.overrides
            .push((new_name.clone(), Some(schema.clone())));
        Ok(Statement::AlterTable {
            name,
            new_name,
            schema,
            columns,
            if_exists: alter.if_exists,
        })
    }

    fn insert(&mut self, ins: &ast::Insert) -> Result<Statement> {
        let ast::TableObject::TableName(table) = &ins.table else {
            return Err(unsupported("INSERT INTO a table function is not supported"));
        };
        if ins.or.is_some()
            || ins.ignore
            || ins.overwrite
            || ins.partitioned.is_some()
            || !ins.after_columns.is_empty()
            || ins.on.is_some()
            || ins.returning.is_some()
            || ins.replace_into
            || !ins.assignments.is_empty()
        {
            return Err(unsupported(
                "INSERT options (OR REPLACE, ON CONFLICT, RETURNING, SET, ...) are not supported",
            ));
        }
        let id = single_name(table)?;
        let (name, schema) = self.lookup_table(id)?;
        // Target position in the table of each source column.
        let targets: Vec<usize> = if ins.columns.is_empty() {
            (0..schema.fields().len()).collect()
        } else {
            let mut out = Vec::with_capacity(ins.columns.len());
            for c in &ins.columns {
                let Some(ast::ObjectNamePart::Identifier(cid)) = c.0.last() else {
                    return Err(unsupported(format!("column {c} is not supported")));
                };
                let scope = Scope {
                    qualifier: None,
                    schema: schema.clone(),
                    relations: Vec::new(),
                };
                let Some(i) = scope.find(&cid.value) else {
                    let names = schema.fields().iter().map(|f| f.name().as_str());
                    let hint = match did_you_mean(&cid.value, names) {
                        Some(c) => format!(" Did you mean \"{c}\"?"),
                        None => String::new(),
                    };
                    return Err(bind_err(format!(
                        "Table \"{name}\" does not have a column with name \"{}\"!{hint}{}",
                        cid.value,
                        at(cid.span)
                    )));
                };
                if out.contains(&i) {
                    return Err(bind_err(format!(
                        "Duplicate column name \"{}\" in INSERT{}",
                        cid.value,
                        at(cid.span)
                    )));
                }
                out.push(i);
            }
            out
        };
        let Some(source) = &ins.source else {
            return Err(unsupported(
                "INSERT without VALUES or SELECT is not supported",
            ));
        };
        let count_error = |n: usize| {
            bind_err(format!(
                "table {name} has {} columns but {n} values were supplied",
                targets.len()
            ))
        };
        let plain_values = match source.body.as_ref() {
            ast::SetExpr::Values(v)
                if source.order_by.is_none() && source.limit_clause.is_none() =>
            {
                Some(v)
            }
            _ => None,
        };
        let plan = if let Some(values) = plain_values {
            let scope = Scope::empty();
            let mut rows = Vec::with_capacity(values.rows.len());
            for row in &values.rows {
                if row.len() != targets.len() {
                    return Err(count_error(row.len()));
                }
                let mut out: Vec<ScalarValue> = schema
                    .fields()
                    .iter()
                    .map(|f| ScalarValue::Null(f.data_type().clone()))
                    .collect();
                for (e, &t) in row.iter().zip(&targets) {
                    let mut eb = ExprBinder::new(
                        &scope,
                        self.fold,
                        false,
                        "aggregate functions are not allowed in VALUES",
                    );
                    let field = schema.field(t);
                    let bound = eb.bind(e)?;
                    let vt = eb.type_of(&bound);
                    if !can_cast(&vt, field.data_type()) {
                        return Err(bind_err(format!(
                            "cannot insert a value of type {} into column {} of type {}{}",
                            sql_type_name(&vt),
                            field.name(),
                            sql_type_name(field.data_type()),
                            at(e.span())
                        )));
                    }
                    let cast = self.fold.cast(bound, &vt, field.data_type());
                    let Some(v) = self.fold.value(&cast)? else {
                        return Err(unsupported(format!(
                            "VALUES items must be constant expressions, found \"{e}\"{}",
                            at(e.span())
                        )));
                    };
                    out[t] = v;
                }
                for (v, f) in out.iter().zip(schema.fields()) {
                    if v.is_null() && !f.is_nullable() {
                        return Err(bind_err(format!(
                            "NOT NULL constraint failed: {name}.{}",
                            f.name()
                        )));
                    }
                }
                rows.push(out);
            }
            LogicalPlan::Values {
                rows,
                schema: schema.clone(),
            }
        } else {
            let plan = self.query(source)?;
            let input = plan.schema();
            if input.fields().len() != targets.len() {
                return Err(count_error(input.fields().len()));
            }
            let mut exprs = Vec::with_capacity(schema.fields().len());
            for (i, f) in schema.fields().iter().enumerate() {
                let e = match targets.iter().position(|&t| t == i) {
                    Some(j) => {
                        let from = input.field(j).data_type();
                        if !can_cast(from, f.data_type()) {
                            return Err(bind_err(format!(
                                "cannot insert a value of type {} into column {} of type {}",
                                sql_type_name(from),
                                f.name(),
                                sql_type_name(f.data_type())
                            )));
                        }
                        let col = Expr::column(j, input.field(j).name().clone());
                        self.fold.cast(col, from, f.data_type())
                    }
                    None if !f.is_nullable() => {
                        return Err(bind_err(format!(
                            "NOT NULL constraint failed: {name}.{}",
                            f.name()
                        )));
                    }
                    None => Expr::Literal(ScalarValue::Null(f.data_type().clone())),
                };
                exprs.push(e);
            }
            let identity = input.fields().len() == schema.fields().len()
                && exprs
                    .iter()
                    .enumerate()
                    .all(|(i, e)| matches!(e, Expr::Column(c) if c.index == i))
                && input
                    .fields()
                    .iter()
                    .zip(schema.fields())
                    .all(|(a, b)| a.name() == b.name());
            if identity {
                plan
            } else {
                // The rows may hold NULLs whatever the table declares: the
                // engine checks NOT NULL as it appends them.
                let fields: Vec<_> = schema
                    .fields()
                    .iter()
                    .map(|f| f.as_ref().clone().with_nullable(true))
                    .collect();
                LogicalPlan::Projection {
                    input: Box::new(plan),
                    exprs,
                    schema: Arc::new(Schema::new(fields)),
                }
            }
        };
        Ok(Statement::Insert { table: name, plan })
    }
}

/// A binder error.
pub(crate) fn bind_err(msg: impl Into<String>) -> Error {
    Error::Bind(msg.into())
}

/// An unsupported-construct error.
pub(crate) fn unsupported(msg: impl Into<String>) -> Error {
    Error::Unsupported(msg.into())
}

/// ` at line L, column C` for a known span, else nothing.
pub(crate) fn at(span: Span) -> String {
    if span.start.line == 0 {
        String::new()
    } else {
        format!(" at line {}, column {}", span.start.line, span.start.column)
    }
}

/// The candidate closest to `name` by edit distance (case-insensitive), if
/// close enough to be a likely typo.
pub(crate) fn did_you_mean<'c>(
    name: &str,
    candidates: impl Iterator<Item = &'c str>,
) -> Option<&'c str> {
    let name = name.to_ascii_lowercase();
    let limit = 2.max(name.chars().count() / 3);
    candidates
        .map(|c| (edit_distance(&name, &c.to_ascii_lowercase()), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = Vec::with_capacity(b.len() + 1);
        cur.push(i + 1);
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The one identifier of a table name (`main.t` and the like are not
/// supported).
pub(crate) fn single_name(name: &ObjectName) -> Result<&ast::Ident> {
    use ast::ObjectNamePart::Identifier as Part;
    let is = |id: &ast::Ident, what: &str| id.value.eq_ignore_ascii_case(what);
    // the one schema, `main`, of the one database, `memory`, as DuckDB
    // names an in-memory database's
    match name.0.as_slice() {
        [Part(id)] => Ok(id),
        [Part(schema), Part(id)] if is(schema, "main") => Ok(id),
        [Part(db), Part(schema), Part(id)] if is(db, "memory") && is(schema, "main") => Ok(id),
        _ => Err(unsupported(format!(
            "qualified name {name} is not supported (there is one schema, memory.main){}",
            at(name.span())
        ))),
    }
}

/// The format of `'path'` in FROM or DESCRIBE, by its extension.
pub(crate) fn format_from_extension(id: &ast::Ident) -> Result<FileFormat> {
    let lower = id.value.to_ascii_lowercase();
    // compressed CSV is read by its extension too
    let lower = [".gz", ".gzip", ".zst", ".zstd"]
        .iter()
        .find_map(|c| lower.strip_suffix(c))
        .unwrap_or(&lower);
    if lower.ends_with(".csv") || lower.ends_with(".tsv") {
        Ok(FileFormat::Csv)
    } else if lower.ends_with(".parquet") {
        Ok(FileFormat::Parquet)
    } else {
        Err(bind_err(format!(
            "cannot tell the format of file '{}' from its extension (expected .csv, .tsv, .csv.gz, .csv.zst or .parquet); \
             use read_csv('...') or read_parquet('...'){}",
            id.value,
            at(id.span)
        )))
    }
}

/// An Arrow type for a SQL type name.
/// The field a column definition of CREATE TABLE or ALTER TABLE ... ADD
/// COLUMN declares: its type, and NOT NULL if so.
fn column_field(c: &ast::ColumnDef) -> Result<Field> {
    let mut nullable = true;
    for o in &c.options {
        match &o.option {
            ColumnOption::NotNull => nullable = false,
            ColumnOption::Null => nullable = true,
            other => {
                return Err(unsupported(format!(
                    "column constraint {other} is not supported (column {})",
                    c.name.value
                )));
            }
        }
    }
    let t = data_type_from_sql(&c.data_type)?;
    Ok(Field::new(c.name.value.clone(), t, nullable))
}

pub(crate) fn data_type_from_sql(t: &ast::DataType) -> Result<DataType> {
    use ast::DataType as D;
    Ok(match t {
        D::Boolean | D::Bool => DataType::Boolean,
        D::TinyInt(_) => DataType::Int8,
        D::SmallInt(_) | D::Int2(_) | D::Int16 => DataType::Int16,
        D::Int(_) | D::Integer(_) | D::Int4(_) | D::Int32 | D::Signed | D::SignedInteger => {
            DataType::Int32
        }
        D::BigInt(_) | D::Int8(_) | D::Int64 => DataType::Int64,
        D::UTinyInt | D::UInt8 | D::TinyIntUnsigned(_) => DataType::UInt8,
        D::USmallInt | D::UInt16 | D::SmallIntUnsigned(_) | D::Int2Unsigned(_) => DataType::UInt16,
        D::UInt32
        | D::IntUnsigned(_)
        | D::IntegerUnsigned(_)
        | D::Int4Unsigned(_)
        | D::Unsigned
        | D::UnsignedInteger => DataType::UInt32,
        D::UBigInt | D::UInt64 | D::BigIntUnsigned(_) | D::Int8Unsigned(_) => DataType::UInt64,
        D::Double(_) | D::DoublePrecision | D::Float8 | D::Float64 => DataType::Float64,
        // FLOAT(p) is FLOAT up to 24 bits of mantissa, DOUBLE past, as in DuckDB
        D::Float(ExactNumberInfo::Precision(p) | ExactNumberInfo::PrecisionAndScale(p, _))
            if *p > 24 =>
        {
            DataType::Float64
        }
        D::Float(_) | D::Real | D::Float4 | D::Float32 => DataType::Float32,
        D::HugeInt | D::UHugeInt | D::Int128 | D::UInt128 => {
            return Err(unsupported(format!(
                "type {t} is not supported (HUGEINT is not a column type; an integer literal \
                 past BIGINT is a DECIMAL(38,0))"
            )));
        }
        D::Uuid => return Err(unsupported("type UUID is not supported")),
        D::Timestamp(_, ast::TimezoneInfo::WithTimeZone | ast::TimezoneInfo::Tz) => {
            return Err(unsupported(
                "type TIMESTAMP WITH TIME ZONE (TIMESTAMPTZ) is not supported; use TIMESTAMP",
            ));
        }
        D::Interval { .. } => {
            return Err(unsupported(
                "INTERVAL as a column or cast type is not supported (INTERVAL literals are, in date arithmetic)",
            ));
        }
        D::Array(_) => {
            return Err(unsupported(format!(
                "LIST types ({t}) are not supported yet"
            )));
        }
        D::Struct(..) | D::Map(..) | D::Union(_) | D::Tuple(_) => {
            return Err(unsupported(format!(
                "nested types ({t}) are not supported yet"
            )));
        }
        D::Decimal(info) | D::Numeric(info) | D::Dec(info) => {
            let (p, s) = match info {
                ExactNumberInfo::None => (18, 3),
                ExactNumberInfo::Precision(p) => (*p, 0),
                ExactNumberInfo::PrecisionAndScale(p, s) => (*p, *s),
            };
            if !(1..=38).contains(&p) {
                return Err(bind_err(format!(
                    "DECIMAL width must be between 1 and 38, got {p} in {t}"
                )));
            }
            if s < 0 || s as u64 > p {
                return Err(bind_err(format!(
                    "DECIMAL scale must be between 0 and the width {p}, got {s} in {t}"
                )));
            }
            DataType::Decimal128(p as u8, s as i8)
        }
        D::Varchar(_)
        | D::Text
        | D::String(_)
        | D::Char(_)
        | D::Character(_)
        | D::CharacterVarying(_)
        | D::CharVarying(_)
        | D::Nvarchar(_) => DataType::Utf8,
        D::Date => DataType::Date32,
        D::Blob(_) | D::Bytea | D::Varbinary(_) | D::Binary(_) => DataType::Binary,
        D::Timestamp(_, ast::TimezoneInfo::None | ast::TimezoneInfo::WithoutTimeZone)
        | D::Datetime(_)
        | D::TimestampNtz(_) => timestamp_type(),
        D::Custom(name, args) if args.is_empty() => {
            match name.to_string().to_ascii_lowercase().as_str() {
                "int32" => DataType::Int32,
                "long" => DataType::Int64,
                "int1" => DataType::Int8,
                "short" => DataType::Int16,
                "blob" | "bytea" | "varbinary" => DataType::Binary,
                "utinyint" => DataType::UInt8,
                "usmallint" => DataType::UInt16,
                "uinteger" => DataType::UInt32,
                "ubigint" => DataType::UInt64,
                "hugeint" | "uhugeint" | "int128" | "uint128" => {
                    return Err(unsupported(format!(
                        "type {t} is not supported (HUGEINT is not a column type; an integer \
                         literal past BIGINT is a DECIMAL(38,0))"
                    )));
                }
                "uuid" => return Err(unsupported("type UUID is not supported")),
                "bpchar" => DataType::Utf8,
                "timestamptz" => {
                    return Err(unsupported(
                        "type TIMESTAMP WITH TIME ZONE (TIMESTAMPTZ) is not supported; use TIMESTAMP",
                    ));
                }
                _ => return Err(unsupported(format!("type {t} is not supported"))),
            }
        }
        other
            if ["MAP(", "STRUCT(", "UNION("]
                .iter()
                .any(|k| other.to_string().to_ascii_uppercase().starts_with(k)) =>
        {
            return Err(unsupported(format!(
                "nested types ({other}) are not supported yet"
            )));
        }
        other => {
            return Err(unsupported(format!(
                "type {other} is not supported (supported: BOOLEAN, TINYINT, SMALLINT, INTEGER, \
                 BIGINT, UTINYINT, USMALLINT, UINTEGER, UBIGINT, FLOAT, DOUBLE, DECIMAL(p,s), \
                 VARCHAR, BLOB, DATE, TIMESTAMP)"
            )));
        }
    })
}

/// The first keywords of a statement, naming its kind in errors.
fn statement_kind(s: &ast::Statement) -> String {
    let text = s.to_string();
    let words: Vec<&str> = text.split_whitespace().take(2).collect();
    match words.as_slice() {
        [a, b]
            if matches!(
                a.to_ascii_uppercase().as_str(),
                "CREATE" | "ALTER" | "DROP" | "SHOW"
            ) =>
        {
            format!("{a} {b}").to_ascii_uppercase()
        }
        [a, ..] => a.to_ascii_uppercase(),
        [] => "empty".into(),
    }
}
