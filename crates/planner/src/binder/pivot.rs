//! `PIVOT` and `UNPIVOT` in FROM, in the SQL-standard form DuckDB reads:
//!
//! - `t PIVOT (sum(v) [AS s], ... FOR k IN ('a' [AS x], 'b', ...))`: one
//!   row per group of the columns of `t` that neither the aggregates nor
//!   `k` read, one column per value and aggregate, `sum(v) FILTER (WHERE
//!   k = 'a')`, named by the value (`a`), or `a_s` with several
//!   aggregates.
//! - `t UNPIVOT [INCLUDE NULLS] (val FOR name IN (c1, c2, ...))`: per row
//!   of `t` and listed column, the other columns, the column's name and
//!   its value (rows of a NULL value left out unless INCLUDE NULLS).
//!
//! Both are rewritten to the query they stand for (a grouped SELECT, a
//! UNION ALL of SELECTs) over the same table, which is then bound as a
//! derived table.

use sqlparser::ast::{
    self, BinaryOperator, Expr as AstExpr, ExprWithAlias, GroupByExpr, Ident, NullInclusion,
    PivotValueSource, SelectItem, SetExpr, TableFactor, TableWithJoins, Visit, Visitor,
};
use std::ops::ControlFlow;

use super::Binder;
use super::expr::Scope;
use super::{bind_err, unsupported};
use crate::error::Result;
use crate::plan::LogicalPlan;

impl Binder<'_> {
    /// Binds a PIVOT or UNPIVOT table factor (see the module docs).
    pub(crate) fn pivot(&self, relation: &TableFactor) -> Result<(LogicalPlan, Scope)> {
        let (query, alias) = match relation {
            TableFactor::Pivot {
                table,
                aggregate_functions,
                value_column,
                value_source,
                default_on_null,
                alias,
            } => {
                let [key] = value_column.as_slice() else {
                    return Err(unsupported(format!(
                        "PIVOT on more than one column is not supported: {relation}"
                    )));
                };
                let PivotValueSource::List(values) = value_source else {
                    return Err(unsupported(format!(
                        "PIVOT ... IN ({value_source}) is not supported: list the values"
                    )));
                };
                if default_on_null.is_some() {
                    return Err(unsupported(format!(
                        "PIVOT ... DEFAULT ON NULL is not supported: {relation}"
                    )));
                }
                let read = read_columns(aggregate_functions.iter().map(|a| &a.expr).chain([key]));
                let groups = self.other_columns(table, &read)?;
                (
                    pivot_query(table, aggregate_functions, key, values, &groups)?,
                    alias,
                )
            }
            TableFactor::Unpivot {
                table,
                value,
                name,
                columns,
                null_inclusion,
                alias,
            } => {
                let AstExpr::Identifier(value) = value else {
                    return Err(unsupported(format!(
                        "UNPIVOT into {value}, not one column, is not supported"
                    )));
                };
                let read = read_columns(columns.iter().map(|c| &c.expr));
                let rest = self.other_columns(table, &read)?;
                let include_nulls = matches!(null_inclusion, Some(NullInclusion::IncludeNulls));
                let query = unpivot_query(table, value, name, columns, &rest, include_nulls)?;
                (query, alias)
            }
            other => {
                return Err(unsupported(format!("{other} in FROM is not supported")));
            }
        };
        self.derived(&query, alias.as_ref())
    }

    /// The columns of `table` not named in `read` (case-insensitively), in
    /// order.
    fn other_columns(&self, table: &TableFactor, read: &[String]) -> Result<Vec<Ident>> {
        let (_, scope) = self.table_factor(table)?;
        Ok(scope
            .schema
            .fields()
            .iter()
            .filter(|f| !read.iter().any(|r| r.eq_ignore_ascii_case(f.name())))
            .map(|f| Ident::with_quote('"', f.name()))
            .collect())
    }
}

/// The names of the columns `exprs` read (the last part of each
/// identifier).
fn read_columns<'a>(exprs: impl Iterator<Item = &'a AstExpr>) -> Vec<String> {
    struct Names(Vec<String>);
    impl Visitor for Names {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &AstExpr) -> ControlFlow<()> {
            match e {
                AstExpr::Identifier(i) => self.0.push(i.value.clone()),
                AstExpr::CompoundIdentifier(parts) => {
                    self.0.extend(parts.last().map(|i| i.value.clone()));
                }
                _ => {}
            }
            ControlFlow::Continue(())
        }
    }
    let mut names = Names(Vec::new());
    for e in exprs {
        let _ = e.visit(&mut names);
    }
    names.0
}

/// An empty `SELECT ... FROM table GROUP BY ...` to fill in.
fn select_from(table: &TableFactor) -> Result<ast::Select> {
    let parsed = sqlparser::parser::Parser::new(&crate::dialect::WEIR)
        .try_with_sql("SELECT 1 FROM t GROUP BY 1")
        .and_then(|mut p| p.parse_query())
        .map_err(|e| bind_err(format!("a PIVOT's query: {e}")))?;
    let SetExpr::Select(select) = *parsed.body else {
        return Err(bind_err("a PIVOT's query is not a SELECT"));
    };
    let mut select = *select;
    select.projection.clear();
    select.from = vec![TableWithJoins {
        relation: table.clone(),
        joins: Vec::new(),
    }];
    select.group_by = GroupByExpr::Expressions(Vec::new(), Vec::new());
    Ok(select)
}

/// A query whose body is `body`.
fn query_of(body: SetExpr) -> Result<ast::Query> {
    let mut parsed = sqlparser::parser::Parser::new(&crate::dialect::WEIR)
        .try_with_sql("SELECT 1")
        .and_then(|mut p| p.parse_query())
        .map_err(|e| bind_err(format!("a PIVOT's query: {e}")))?;
    *parsed.body = body;
    Ok(*parsed)
}

/// A value's name as a pivot column: its alias, or the value as written
/// without its quotes.
fn value_name(v: &ExprWithAlias) -> String {
    match (&v.alias, &v.expr) {
        (Some(a), _) => a.value.clone(),
        (None, AstExpr::Value(value)) => match &value.value {
            ast::Value::SingleQuotedString(s) => s.clone(),
            other => other.to_string(),
        },
        (None, e) => e.to_string(),
    }
}

fn pivot_query(
    table: &TableFactor,
    aggregates: &[ExprWithAlias],
    key: &AstExpr,
    values: &[ExprWithAlias],
    groups: &[Ident],
) -> Result<ast::Query> {
    let mut select = select_from(table)?;
    let group: Vec<AstExpr> = groups.iter().cloned().map(AstExpr::Identifier).collect();
    select
        .projection
        .extend(group.iter().cloned().map(SelectItem::UnnamedExpr));
    for v in values {
        for a in aggregates {
            let AstExpr::Function(f) = &a.expr else {
                return Err(bind_err(format!(
                    "PIVOT takes aggregate function calls, not {}",
                    a.expr
                )));
            };
            let mut f = f.clone();
            let mut filter = AstExpr::BinaryOp {
                left: Box::new(key.clone()),
                op: BinaryOperator::Eq,
                right: Box::new(v.expr.clone()),
            };
            if let Some(own) = f.filter.take() {
                filter = AstExpr::BinaryOp {
                    left: own,
                    op: BinaryOperator::And,
                    right: Box::new(filter),
                };
            }
            f.filter = Some(Box::new(filter));
            let name = match (aggregates.len(), &a.alias) {
                (1, None) => value_name(v),
                (_, Some(alias)) => format!("{}_{}", value_name(v), alias.value),
                (_, None) => format!("{}_{}", value_name(v), a.expr),
            };
            select.projection.push(SelectItem::ExprWithAlias {
                expr: AstExpr::Function(f),
                alias: Ident::with_quote('"', name),
            });
        }
    }
    select.group_by = GroupByExpr::Expressions(group, Vec::new());
    query_of(SetExpr::Select(Box::new(select)))
}

fn unpivot_query(
    table: &TableFactor,
    value: &Ident,
    name: &Ident,
    columns: &[ExprWithAlias],
    rest: &[Ident],
    include_nulls: bool,
) -> Result<ast::Query> {
    // one SELECT per column, each from the same empty one
    let template = select_from(table)?;
    let mut body: Option<SetExpr> = None;
    for c in columns {
        let label = match (&c.alias, &c.expr) {
            (Some(a), _) => a.value.clone(),
            (None, AstExpr::Identifier(i)) => i.value.clone(),
            (None, e) => {
                return Err(unsupported(format!(
                    "UNPIVOT of {e}, not a column, is not supported"
                )));
            }
        };
        let mut select = template.clone();
        select.projection.extend(
            rest.iter()
                .cloned()
                .map(|i| SelectItem::UnnamedExpr(AstExpr::Identifier(i))),
        );
        select.projection.push(SelectItem::ExprWithAlias {
            expr: AstExpr::Value(ast::Value::SingleQuotedString(label).into()),
            alias: name.clone(),
        });
        select.projection.push(SelectItem::ExprWithAlias {
            expr: c.expr.clone(),
            alias: value.clone(),
        });
        if !include_nulls {
            select.selection = Some(AstExpr::IsNotNull(Box::new(c.expr.clone())));
        }
        let part = SetExpr::Select(Box::new(select));
        body = Some(match body {
            None => part,
            Some(left) => SetExpr::SetOperation {
                op: ast::SetOperator::Union,
                set_quantifier: ast::SetQuantifier::All,
                left: Box::new(left),
                right: Box::new(part),
            },
        });
    }
    let body = body.ok_or_else(|| bind_err("UNPIVOT needs at least one column"))?;
    query_of(body)
}
