//! `UPDATE t SET a = expr [, ...] [WHERE cond]` and `DELETE FROM t [WHERE
//! cond]`, planned as queries over the table whose result the engine
//! stores in its place.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema};
use sqlparser::ast::{self, Spanned};

use super::coerce::can_cast;
use super::expr::{ExprBinder, Scope};
use super::join::map_columns;
use super::subquery::{BoundSubquery, attach};
use super::{Binder, at, bind_err, did_you_mean, unsupported};
use crate::error::Result;
use crate::expr::Expr;
use crate::plan::{LogicalPlan, SortKey, Statement, TableSource, WindowExpr};
use crate::scalar::ScalarValue;
use crate::types::sql_type_name;

const NO_AGGREGATES: &str = "aggregate functions are not allowed in UPDATE and DELETE";

impl Binder<'_> {
    /// `UPDATE`: a projection of every column (the assigned ones where the
    /// condition holds), then a BOOLEAN column saying which rows changed.
    pub(super) fn update(&self, u: &ast::Update) -> Result<Statement> {
        if u.from.is_some()
            || u.returning.is_some()
            || u.output.is_some()
            || u.or.is_some()
            || !u.order_by.is_empty()
            || u.limit.is_some()
            || !u.optimizer_hints.is_empty()
        {
            return Err(unsupported(
                "UPDATE options (FROM, RETURNING, OR, ORDER BY, LIMIT) are not supported",
            ));
        }
        let (plan, scope, name) = self.dml_table(std::slice::from_ref(&u.table))?;
        let schema = scope.schema.clone();
        // one binder for the condition and the values, so that their
        // subqueries are numbered together
        let mut eb = ExprBinder::new(&scope, self.fold, false, NO_AGGREGATES);
        eb.allow_subqueries(self);
        let condition = u
            .selection
            .as_ref()
            .map(|c| eb.bind_predicate(c, "WHERE"))
            .transpose()?;
        let mut assigned: Vec<Option<Expr>> = vec![None; schema.fields().len()];
        for a in &u.assignments {
            let ast::AssignmentTarget::ColumnName(target) = &a.target else {
                return Err(unsupported(format!(
                    "UPDATE of a tuple of columns is not supported: {}",
                    a.target
                )));
            };
            let Some(ast::ObjectNamePart::Identifier(id)) = target.0.last() else {
                return Err(unsupported(format!("column {target} is not supported")));
            };
            let Some(i) = scope.find(&id.value) else {
                let names = schema.fields().iter().map(|f| f.name().as_str());
                let hint = match did_you_mean(&id.value, names) {
                    Some(c) => format!(" Did you mean \"{c}\"?"),
                    None => String::new(),
                };
                return Err(bind_err(format!(
                    "Referenced update column {} not found in table \"{name}\"!{hint}{}",
                    id.value,
                    at(id.span)
                )));
            };
            if assigned[i].is_some() {
                return Err(bind_err(format!(
                    "Multiple assignments to same column \"{}\"{}",
                    id.value,
                    at(id.span)
                )));
            }
            let value = eb.bind(&a.value)?;
            let field = schema.field(i);
            let vt = eb.type_of(&value);
            if !can_cast(&vt, field.data_type()) {
                return Err(bind_err(format!(
                    "cannot assign a value of type {} to column {} of type {}{}",
                    sql_type_name(&vt),
                    field.name(),
                    sql_type_name(field.data_type()),
                    at(a.value.span())
                )));
            }
            assigned[i] = Some(self.fold.cast(value, &vt, field.data_type()));
        }
        let mut exprs = Vec::with_capacity(schema.fields().len() + 1);
        let mut fields = Vec::with_capacity(schema.fields().len() + 1);
        for (i, (f, value)) in schema.fields().iter().zip(assigned).enumerate() {
            let column = Expr::column(i, f.name().clone());
            exprs.push(match (value, &condition) {
                (None, _) => column,
                (Some(v), None) => v,
                (Some(v), Some(c)) => self.fold.fold(Expr::Case {
                    when_then: vec![(c.clone(), v)],
                    else_expr: Some(Box::new(column)),
                }),
            });
            // the engine checks NOT NULL as it stores the rows
            fields.push(f.as_ref().clone().with_nullable(true));
        }
        exprs.push(match &condition {
            None => Expr::Literal(ScalarValue::Boolean(true)),
            Some(c) => is_true(c.clone()),
        });
        fields.push(Field::new("__updated", DataType::Boolean, false));
        let plan = match in_table_order(plan, eb.take_subqueries())? {
            (plan, None) => LogicalPlan::Projection {
                input: Box::new(plan),
                exprs,
                schema: Arc::new(Schema::new(fields)),
            },
            (plan, Some(position)) => {
                let n = fields.len();
                let mut exprs: Vec<Expr> =
                    exprs.iter().map(|e| after_position(e, position)).collect();
                exprs.push(Expr::column(position, "__position"));
                fields.push(Field::new("__position", DataType::Int64, false));
                let projected = LogicalPlan::Projection {
                    input: Box::new(plan),
                    exprs,
                    schema: Arc::new(Schema::new(fields)),
                };
                back_in_order(projected, n)
            }
        };
        Ok(Statement::Update { table: name, plan })
    }

    /// `DELETE`: the rows kept, those where the condition is not TRUE.
    pub(super) fn delete(&self, d: &ast::Delete) -> Result<Statement> {
        if !d.tables.is_empty()
            || d.using.is_some()
            || d.returning.is_some()
            || d.output.is_some()
            || !d.order_by.is_empty()
            || d.limit.is_some()
            || !d.optimizer_hints.is_empty()
        {
            return Err(unsupported(
                "DELETE options (USING, RETURNING, ORDER BY, LIMIT, several tables) are not supported",
            ));
        }
        let from = match &d.from {
            ast::FromTable::WithFromKeyword(f) | ast::FromTable::WithoutKeyword(f) => f,
        };
        let (plan, scope, name) = self.dml_table(from)?;
        let mut eb = ExprBinder::new(&scope, self.fold, false, NO_AGGREGATES);
        eb.allow_subqueries(self);
        let predicate = match &d.selection {
            None => Expr::Literal(ScalarValue::Boolean(false)),
            Some(c) => self.fold.not(is_true(eb.bind_predicate(c, "WHERE")?)),
        };
        let plan = match in_table_order(plan, eb.take_subqueries())? {
            (plan, None) => LogicalPlan::Filter {
                input: Box::new(plan),
                predicate,
            },
            (plan, Some(position)) => {
                let kept = LogicalPlan::Filter {
                    input: Box::new(plan),
                    predicate: after_position(&predicate, position),
                };
                // the table's columns and the position
                let schema = kept.schema();
                let keep: Vec<usize> = (0..=position).collect();
                let projected = LogicalPlan::Projection {
                    input: Box::new(kept),
                    exprs: keep
                        .iter()
                        .map(|&i| Expr::column(i, schema.field(i).name().clone()))
                        .collect(),
                    schema: Arc::new(Schema::new(
                        keep.iter()
                            .map(|&i| schema.field(i).clone())
                            .collect::<Vec<_>>(),
                    )),
                };
                back_in_order(projected, position)
            }
        };
        Ok(Statement::Delete { table: name, plan })
    }

    /// The one table an UPDATE or DELETE changes: its scan, scope and name.
    fn dml_table(&self, from: &[ast::TableWithJoins]) -> Result<(LogicalPlan, Scope, String)> {
        let [twj] = from else {
            return Err(unsupported(
                "UPDATE and DELETE of several tables are not supported",
            ));
        };
        if !twj.joins.is_empty() {
            return Err(unsupported(format!(
                "JOIN in UPDATE and DELETE is not supported{}",
                at(twj.relation.span())
            )));
        }
        let (plan, scope, _) = self.from(from, None)?;
        let LogicalPlan::Scan {
            source: TableSource::Table(name),
            ..
        } = &plan
        else {
            return Err(unsupported(format!(
                "UPDATE and DELETE change tables, not {}",
                twj.relation
            )));
        };
        let name = name.clone();
        Ok((plan, scope, name))
    }
}

/// The table's scan with the subqueries of its statement joined: each
/// row's position in the table first added (column `n`, the table having
/// `n` columns), so the rows can be put back in the table's order after
/// the joins; `None` and the scan without subqueries.
fn in_table_order(
    scan: LogicalPlan,
    subs: Vec<BoundSubquery>,
) -> Result<(LogicalPlan, Option<usize>)> {
    if subs.is_empty() {
        return Ok((scan, None));
    }
    let schema = scan.schema();
    let n = schema.fields().len();
    let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    fields.push(Field::new("__position", DataType::Int64, false));
    // row_number() OVER (): rows are numbered in their input order
    let numbered = LogicalPlan::Window {
        input: Box::new(scan),
        partition_by: Vec::new(),
        order_by: Vec::new(),
        functions: vec![WindowExpr::row_number()],
        schema: Arc::new(Schema::new(fields)),
    };
    let subs = subs
        .into_iter()
        .map(|s| s.map_exprs(&mut |e| Ok(after_position(&e, n))))
        .collect::<Result<Vec<_>>>()?;
    Ok((attach(numbered, subs), Some(n)))
}

/// `e` (over the table's `n` columns and the subqueries' placeholders)
/// over the numbered plan, where the position is column `n`.
fn after_position(e: &Expr, n: usize) -> Expr {
    map_columns(e, &|c| if c >= n { c + 1 } else { c })
}

/// `plan` (whose column `position` is each row's position in the table)
/// sorted back into the table's order, without the position.
fn back_in_order(plan: LogicalPlan, position: usize) -> LogicalPlan {
    let sorted = LogicalPlan::Sort {
        input: Box::new(plan),
        keys: vec![SortKey {
            expr: Expr::column(position, "__position"),
            asc: true,
            nulls_first: false,
        }],
    };
    let schema = sorted.schema();
    LogicalPlan::Projection {
        input: Box::new(sorted),
        exprs: (0..position)
            .map(|i| Expr::column(i, schema.field(i).name().clone()))
            .collect(),
        schema: Arc::new(Schema::new(schema.fields()[..position].to_vec())),
    }
}

/// `c IS TRUE` (FALSE where `c` is NULL), as a CASE.
fn is_true(c: Expr) -> Expr {
    Expr::Case {
        when_then: vec![(c, Expr::Literal(ScalarValue::Boolean(true)))],
        else_expr: Some(Box::new(Expr::Literal(ScalarValue::Boolean(false)))),
    }
}
