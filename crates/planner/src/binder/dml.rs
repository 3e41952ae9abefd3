//! `UPDATE t SET a = expr [, ...] [WHERE cond]` and `DELETE FROM t [WHERE
//! cond]`, planned as queries over the table whose result the engine
//! stores in its place.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema};
use sqlparser::ast::{self, Spanned};

use super::coerce::can_cast;
use super::expr::{ExprBinder, Scope};
use super::{Binder, at, bind_err, did_you_mean, unsupported};
use crate::error::Result;
use crate::expr::Expr;
use crate::plan::{LogicalPlan, Statement, TableSource};
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
        let condition = self.dml_condition(&scope, u.selection.as_ref())?;
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
            let mut eb = ExprBinder::new(&scope, self.fold, false, NO_AGGREGATES);
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
        let plan = LogicalPlan::Projection {
            input: Box::new(plan),
            exprs,
            schema: Arc::new(Schema::new(fields)),
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
        let predicate = match self.dml_condition(&scope, d.selection.as_ref())? {
            None => Expr::Literal(ScalarValue::Boolean(false)),
            Some(c) => self.fold.not(is_true(c)),
        };
        let plan = LogicalPlan::Filter {
            input: Box::new(plan),
            predicate,
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

    fn dml_condition(&self, scope: &Scope, cond: Option<&ast::Expr>) -> Result<Option<Expr>> {
        let Some(cond) = cond else {
            return Ok(None);
        };
        let mut eb = ExprBinder::new(scope, self.fold, false, NO_AGGREGATES);
        let c = eb.bind_predicate(cond, "WHERE")?;
        Ok(Some(c))
    }
}

/// `c IS TRUE` (FALSE where `c` is NULL), as a CASE.
fn is_true(c: Expr) -> Expr {
    Expr::Case {
        when_then: vec![(c, Expr::Literal(ScalarValue::Boolean(true)))],
        else_expr: Some(Box::new(Expr::Literal(ScalarValue::Boolean(false)))),
    }
}
