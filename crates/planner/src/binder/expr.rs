//! Binding SQL expressions to typed [`Expr`]s over one input scope.

use arrow_schema::{DataType, Field, Schema, SchemaRef};
use sqlparser::ast::{
    self, BinaryOperator, CastKind, DateTimeField, DuplicateTreatment, FunctionArg,
    FunctionArgExpr, FunctionArguments, Ident, Spanned, UnaryOperator, Value,
};

use super::coerce::{Folder, arithmetic_operand_types, can_cast, comparison_type, number_literal};
use super::subquery::{BoundSubquery, Tested};
use super::window::BoundWindow;
use super::{Binder, at, bind_err, data_type_from_sql, did_you_mean, unsupported};
use crate::error::Result;
use crate::expr::{BinaryOp, Expr, ScalarFunction};
use crate::functions::{self, FunctionKind};
use crate::plan::{AggregateExpr, AggregateFunction, SortKey};
use crate::scalar::ScalarValue;
use crate::types::{
    aggregate_result_type, arithmetic_result_type, canonical, integer_fits, sql_type_name,
    timestamp_type,
};

/// How deep an expression may nest before the binder refuses it, as
/// DuckDB's default `max_expression_depth`: parentheses, function calls,
/// and chains of operators other than AND, OR and `||` (those chains are
/// not nesting: they are bound iteratively and built balanced). Planning
/// runs on a thread with a stack sized for this depth (see `plan_sql`).
pub(crate) const MAX_EXPR_DEPTH: usize = 1000;

/// A chain of one associative operator longer than this is built as a
/// balanced tree, so a 100,000-term `a OR b OR ...` is 17 levels deep.
const BALANCE_PAST: usize = 64;

/// The error for an expression nested past [`MAX_EXPR_DEPTH`].
pub(crate) fn too_deep() -> crate::error::Error {
    bind_err(format!(
        "Max expression depth limit of {MAX_EXPR_DEPTH} exceeded \
         (parentheses, function calls and operators other than AND, OR and ||)"
    ))
}

/// The fields an expression can name: one relation, maybe qualified.
#[derive(Clone, Debug)]
pub(crate) struct Scope {
    /// The table name or alias that qualifies its columns (`l.x`).
    pub qualifier: Option<String>,
    /// Its fields.
    pub schema: SchemaRef,
    /// Several relations (a join): each one's qualifier and columns;
    /// empty for one relation named by `qualifier` (see `binder/join.rs`).
    pub relations: Vec<(String, Vec<usize>)>,
}

impl Scope {
    /// Checks that `q` names this scope's table (or its alias), as in
    /// `l.x` or `l.*`.
    pub(crate) fn check_qualifier(&self, q: &Ident) -> Result<()> {
        let ok = self
            .qualifier
            .as_deref()
            .is_some_and(|s| s.eq_ignore_ascii_case(&q.value));
        if ok {
            return Ok(());
        }
        let hint = match &self.qualifier {
            Some(s) => format!(" Candidate tables: \"{s}\""),
            None => String::new(),
        };
        Err(bind_err(format!(
            "Referenced table \"{}\" not found!{hint}{}",
            q.value,
            at(q.span)
        )))
    }

    /// No columns (`SELECT 1`, `VALUES`, `LIMIT`).
    pub(crate) fn empty() -> Self {
        Self {
            qualifier: None,
            schema: SchemaRef::new(Schema::empty()),
            relations: Vec::new(),
        }
    }

    /// Finds a column: exact spelling first, then case-insensitively.
    pub(crate) fn find(&self, name: &str) -> Option<usize> {
        let fields = self.schema.fields();
        fields.iter().position(|f| f.name() == name).or_else(|| {
            fields
                .iter()
                .position(|f| f.name().eq_ignore_ascii_case(name))
        })
    }
}

/// Table function names (usable only in FROM), from the registry.
pub(crate) fn table_functions() -> impl Iterator<Item = &'static str> + Clone {
    functions::FUNCTIONS
        .iter()
        .filter(|f| f.kind == FunctionKind::Table)
        .map(|f| f.name)
}

const DATE_PARTS: &[&str] = &[
    "year",
    "month",
    "day",
    "hour",
    "minute",
    "second",
    "millisecond",
    "microsecond",
    "dow",
    "isodow",
    "doy",
    "quarter",
    "week",
    "epoch",
];

/// Binds expressions over a [`Scope`], collecting aggregates and window
/// functions when they are allowed. Each binds to a placeholder column
/// past the end of the scope (index `scope.len() + k` for the `k`-th
/// placeholder, see [`Placeholder`]), which the query binder later maps
/// onto the Aggregate's or the Window's output.
pub(crate) struct ExprBinder<'s> {
    scope: &'s Scope,
    /// Constant folding.
    fold: Folder<'s>,
    /// Aggregates found so far; `None` where aggregates are not allowed.
    aggregates: Option<Vec<AggregateExpr>>,
    /// Why aggregates are not allowed here.
    no_aggregates: &'static str,
    /// Window functions found so far.
    windows: Vec<BoundWindow>,
    /// Why window functions are not allowed here; `None` where they are.
    no_windows: Option<&'static str>,
    /// The `WINDOW name AS (...)` definitions of the SELECT.
    pub(crate) named_windows: Vec<(String, ast::WindowSpec)>,
    /// What each column past the scope stands for, in order.
    placeholders: Vec<Placeholder>,
    /// The scope's fields followed by one field per aggregate: the schema
    /// the bound expressions are typed over.
    types: Schema,
    depth: usize,
    /// SELECT aliases a name that is no column may stand for (WHERE, as
    /// DuckDB): `(alias, its expression)`.
    select_aliases: Vec<(String, ast::Expr)>,
    /// Plans the subqueries met (`None`: subqueries are refused here).
    binder: Option<&'s Binder<'s>>,
    /// Why subqueries are refused inside the expression being bound.
    no_subqueries: Option<&'static str>,
    /// The subqueries found so far, decorrelated (see `binder/subquery.rs`).
    subqueries: Vec<BoundSubquery>,
    /// An aggregate call being bound as a window function: its arguments
    /// are over the Window's input, where aggregates may stand (`sum(x)`
    /// of a grouped query), rather than below a GROUP BY.
    aggregate_in_window: bool,
}

impl<'s> ExprBinder<'s> {
    /// A binder over `scope`; aggregates are allowed if `allow_aggregates`,
    /// otherwise they fail with `reason`.
    pub(crate) fn new(
        scope: &'s Scope,
        fold: Folder<'s>,
        allow_aggregates: bool,
        reason: &'static str,
    ) -> Self {
        Self {
            scope,
            fold,
            aggregates: allow_aggregates.then(Vec::new),
            no_aggregates: reason,
            windows: Vec::new(),
            no_windows: Some("window functions are not allowed here"),
            named_windows: Vec::new(),
            placeholders: Vec::new(),
            types: scope.schema.as_ref().clone(),
            depth: 0,
            select_aliases: Vec::new(),
            binder: None,
            no_subqueries: None,
            subqueries: Vec::new(),
            aggregate_in_window: false,
        }
    }

    /// Lets scalar, EXISTS and IN subqueries stand in expressions: each
    /// is planned by `binder` and bound to a placeholder column
    /// ([`Placeholder::Subquery`]) that the caller joins in with
    /// [`super::subquery::attach`].
    pub(crate) fn allow_subqueries(&mut self, binder: &'s Binder<'s>) {
        self.binder = Some(binder);
    }

    /// The subqueries found so far, in placeholder order, taken out.
    pub(crate) fn take_subqueries(&mut self) -> Vec<BoundSubquery> {
        std::mem::take(&mut self.subqueries)
    }

    /// `left op ANY|ALL (subquery)`: `= ANY` is `IN`, `<> ALL` is `NOT IN`.
    fn quantified(
        &mut self,
        left: &ast::Expr,
        op: &BinaryOperator,
        right: &ast::Expr,
        all: bool,
        e: &ast::Expr,
    ) -> Result<Expr> {
        let mut right = right;
        while let ast::Expr::Nested(inner) = right {
            right = inner;
        }
        let op = match op {
            BinaryOperator::Eq => BinaryOp::Eq,
            BinaryOperator::NotEq => BinaryOp::NotEq,
            BinaryOperator::Lt => BinaryOp::Lt,
            BinaryOperator::LtEq => BinaryOp::LtEq,
            BinaryOperator::Gt => BinaryOp::Gt,
            BinaryOperator::GtEq => BinaryOp::GtEq,
            _ => {
                return Err(unsupported(format!(
                    "expression {e} is not supported (ANY and ALL take a comparison){}",
                    at(e.span())
                )));
            }
        };
        let ast::Expr::Subquery(query) = right else {
            return Err(unsupported(format!(
                "expression {e} is not supported (ANY and ALL take a subquery){}",
                at(e.span())
            )));
        };
        let probe = self.bind(left)?;
        let probe_type = self.type_of(&probe);
        let at = left.span();
        let what = match (op, all) {
            (BinaryOp::Eq, false) | (BinaryOp::NotEq, true) => Tested::In {
                probe,
                probe_type,
                negated: all,
                at,
            },
            _ => Tested::Quantified {
                probe,
                probe_type,
                op,
                all,
                at,
            },
        };
        self.subquery(query, what, e)
    }

    /// Plans the subquery of `e` (`what` it is tested for) over this
    /// binder's scope and returns its placeholder column.
    fn subquery(&mut self, query: &ast::Query, what: Tested, e: &ast::Expr) -> Result<Expr> {
        let Some(binder) = self.binder else {
            return Err(unsupported(format!(
                "subqueries are not supported here{}",
                at(e.span())
            )));
        };
        if let Some(reason) = self.no_subqueries {
            return Err(unsupported(format!("{reason}: {e}{}", at(e.span()))));
        }
        let sub = binder.bind_subquery(query, self.scope, what)?;
        let s = self.subqueries.len();
        let field = sub.field.clone();
        self.subqueries.push(sub);
        self.add_placeholder(field, Placeholder::Subquery(s));
        Ok(self.placeholder_column(self.scope.schema.fields().len(), Placeholder::Subquery(s)))
    }

    /// Lets a name that is no column of the scope stand for the SELECT
    /// item it aliases, as DuckDB binds `SELECT x AS y ... WHERE y > 1`.
    pub(crate) fn set_select_aliases(&mut self, aliases: Vec<(String, ast::Expr)>) {
        self.select_aliases = aliases;
    }

    /// The SELECT item `name` aliases, bound in its place; `None` if `name`
    /// is a column or no alias. The alias is hidden while its own
    /// expression binds, so `SELECT y + 1 AS y ... WHERE y > 1` fails as
    /// DuckDB's does instead of recursing.
    fn select_alias(&mut self, name: &Ident) -> Option<Result<Expr>> {
        if self.select_aliases.is_empty() || self.scope.find(&name.value).is_some() {
            return None;
        }
        let k = self
            .select_aliases
            .iter()
            .position(|(a, _)| a.eq_ignore_ascii_case(&name.value))?;
        let (alias, e) = self.select_aliases.remove(k);
        let bound = self.bind(&e);
        self.select_aliases.insert(k, (alias, e));
        Some(bound)
    }

    /// `l op r` folded, over this binder's types.
    fn fold_binary(&self, op: BinaryOp, l: Expr, r: Expr) -> Expr {
        self.fold.binary(op, l, r, &self.types)
    }

    /// The aggregates found so far.
    pub(crate) fn aggregates(&self) -> &[AggregateExpr] {
        self.aggregates.as_deref().unwrap_or(&[])
    }

    /// The fields of the aggregates found so far, in order.
    pub(crate) fn aggregate_fields(&self) -> Vec<Field> {
        let input = self.scope.schema.fields().len();
        (0..self.aggregates().len())
            .map(|k| {
                let slot = self.slot_of(Placeholder::Aggregate(k));
                self.types.field(input + slot).clone()
            })
            .collect()
    }

    /// Allows window functions (the SELECT list, QUALIFY, ORDER BY).
    pub(crate) fn allow_windows(&mut self) {
        self.no_windows = None;
    }

    /// The window functions found so far.
    pub(crate) fn windows(&self) -> &[BoundWindow] {
        &self.windows
    }

    /// Binds a predicate with window functions forbidden for `reason`.
    pub(crate) fn predicate_without_windows(
        &mut self,
        e: &ast::Expr,
        clause: &str,
        reason: &'static str,
    ) -> Result<Expr> {
        let p = self.bind_without_windows(e, reason)?;
        self.to_boolean(p, e, clause)
    }

    /// What placeholder column `k` past the scope stands for.
    pub(crate) fn placeholder(&self, k: usize) -> Option<Placeholder> {
        self.placeholders.get(k).copied()
    }

    fn slot_of(&self, p: Placeholder) -> usize {
        self.placeholders
            .iter()
            .position(|x| *x == p)
            .expect("every aggregate and window has a placeholder")
    }

    /// The constant folder.
    pub(crate) fn folder(&self) -> Folder<'s> {
        self.fold
    }

    /// Binds `e` with window functions forbidden for `reason`.
    pub(crate) fn bind_without_windows(
        &mut self,
        e: &ast::Expr,
        reason: &'static str,
    ) -> Result<Expr> {
        let saved = self.no_windows.replace(reason);
        let r = self.bind(e);
        self.no_windows = saved;
        r
    }

    /// Records window function `w` (once) and returns its placeholder
    /// column; an error where window functions are not allowed.
    pub(crate) fn push_window(&mut self, w: BoundWindow, e: &ast::Expr) -> Result<Expr> {
        if let Some(reason) = self.no_windows {
            return Err(bind_err(format!("{reason}: {e}{}", at(e.span()))));
        }
        let windows = &mut self.windows;
        let input = self.scope.schema.fields().len();
        let j = match windows.iter().position(|x| *x == w) {
            Some(j) => j,
            None => {
                let field = w.field.clone();
                windows.push(w);
                let j = windows.len() - 1;
                self.add_placeholder(field, Placeholder::Window(j));
                j
            }
        };
        Ok(self.placeholder_column(input, Placeholder::Window(j)))
    }

    /// Adds a placeholder column of `field` past the scope, standing for `p`.
    fn add_placeholder(&mut self, field: Field, p: Placeholder) {
        let mut fields: Vec<_> = self.types.fields().iter().cloned().collect();
        fields.push(field.into());
        self.types = Schema::new(fields);
        self.placeholders.push(p);
    }

    /// The column placeholder `p` binds to (`input`: the scope's width).
    fn placeholder_column(&self, input: usize, p: Placeholder) -> Expr {
        let slot = self.slot_of(p);
        let name = self.types.field(input + slot).name().clone();
        Expr::column(input + slot, name)
    }

    /// The type of a bound expression.
    pub(crate) fn type_of(&self, e: &Expr) -> DataType {
        e.data_type(&self.types)
    }

    /// Binds `e` with aggregates forbidden for `reason`.
    pub(crate) fn bind_without_aggregates(
        &mut self,
        e: &ast::Expr,
        reason: &'static str,
    ) -> Result<Expr> {
        let saved = (self.aggregates.take(), self.no_aggregates);
        self.no_aggregates = reason;
        // an aggregate's arguments and the GROUP BY keys are computed
        // below the aggregation, where no subquery is joined
        let subqueries = self
            .no_subqueries
            .replace("subqueries in GROUP BY and in the arguments of aggregates are not supported");
        let r = self.bind_without_windows(e, reason);
        (self.aggregates, self.no_aggregates) = saved;
        self.no_subqueries = subqueries;
        r
    }

    /// Binds a predicate (WHERE, HAVING): must be BOOLEAN.
    pub(crate) fn bind_predicate(&mut self, e: &ast::Expr, clause: &str) -> Result<Expr> {
        let p = self.bind(e)?;
        self.to_boolean(p, e, clause)
    }

    /// Binds one expression.
    pub(crate) fn bind(&mut self, e: &ast::Expr) -> Result<Expr> {
        if self.depth >= MAX_EXPR_DEPTH {
            return Err(too_deep());
        }
        self.depth += 1;
        let r = self.bind_inner(e);
        self.depth -= 1;
        r
    }

    /// The recursive path of common expressions, kept small: deep
    /// expressions recurse through these frames only.
    fn bind_inner(&mut self, e: &ast::Expr) -> Result<Expr> {
        use ast::Expr as A;
        match e {
            A::Nested(inner) => self.bind(inner),
            A::BinaryOp { .. } => self.chain(e),
            _ => self.bind_other(e),
        }
    }

    /// Binds a chain of binary operators (`a + b - c`, `x AND y AND z`,
    /// left-deep in the AST) walking its left spine in a loop, so that a
    /// long flat chain never recurses. A run of AND, OR or `||` is built
    /// balanced past [`BALANCE_PAST`] terms; other operators nest, one
    /// level per operator.
    #[inline(never)]
    fn chain(&mut self, e: &ast::Expr) -> Result<Expr> {
        use ast::Expr as A;
        let mut spine: Vec<&ast::Expr> = Vec::new();
        let mut leaf = e;
        while let A::BinaryOp { left, .. } = leaf {
            spine.push(leaf);
            leaf = left;
        }
        let nesting = spine.iter().filter(|n| associative(n).is_none()).count();
        if self.depth + nesting >= MAX_EXPR_DEPTH {
            return Err(too_deep());
        }
        let mut acc = self.bind(leaf)?;
        let mut i = spine.len();
        while i > 0 {
            i -= 1;
            let node = spine[i];
            let A::BinaryOp { left, op, right } = node else {
                unreachable!("the spine holds binary operators only");
            };
            let Some(bop) = associative(node) else {
                let r = self.bind(right)?;
                acc = self.binary(acc, left, op, r, right, node)?;
                continue;
            };
            // the run of this operator up the spine
            let mut operands = vec![(acc, left.as_ref())];
            loop {
                let A::BinaryOp { right, .. } = spine[i] else {
                    unreachable!("the spine holds binary operators only");
                };
                operands.push((self.bind(right)?, right.as_ref()));
                if i == 0 || associative(spine[i - 1]) != Some(bop) {
                    break;
                }
                i -= 1;
            }
            acc = self.combine(bop, operands)?;
        }
        Ok(acc)
    }

    /// `t1 op t2 op ... op tn` for an associative `op` (AND, OR, `||`):
    /// left-deep when short, balanced when long; each term keeps its AST
    /// for messages.
    fn combine(&self, op: BinaryOp, terms: Vec<(Expr, &ast::Expr)>) -> Result<Expr> {
        let mut terms = terms
            .into_iter()
            .map(|(v, ast)| match op {
                BinaryOp::Concat => self.to_string_operand(v),
                _ => self.to_boolean(v, ast, op.as_str()),
            })
            .collect::<Result<Vec<Expr>>>()?;
        if terms.len() <= BALANCE_PAST {
            let mut it = terms.into_iter();
            let first = it
                .next()
                .unwrap_or(Expr::Literal(ScalarValue::Null(DataType::Null)));
            return Ok(it.fold(first, |acc, t| self.fold_binary(op, acc, t)));
        }
        // pairwise, keeping the terms in order
        while terms.len() > 1 {
            let mut next = Vec::with_capacity(terms.len().div_ceil(2));
            let mut it = terms.into_iter();
            while let Some(a) = it.next() {
                next.push(match it.next() {
                    Some(b) => self.fold_binary(op, a, b),
                    None => a,
                });
            }
            terms = next;
        }
        Ok(terms
            .pop()
            .unwrap_or(Expr::Literal(ScalarValue::Null(DataType::Null))))
    }

    #[inline(never)]
    fn bind_other(&mut self, e: &ast::Expr) -> Result<Expr> {
        use ast::Expr as A;
        match e {
            A::Identifier(id) => match self.select_alias(id) {
                Some(bound) => bound,
                None => self.column(None, id),
            },
            A::CompoundIdentifier(ids) => match ids.as_slice() {
                [q, c] => self.column(Some(q), c),
                // `main.t.x`, `memory.main.t.x`: the one schema
                [s, q, c] if s.value.eq_ignore_ascii_case("main") => self.column(Some(q), c),
                [d, s, q, c]
                    if d.value.eq_ignore_ascii_case("memory")
                        && s.value.eq_ignore_ascii_case("main") =>
                {
                    self.column(Some(q), c)
                }
                _ => Err(unsupported(format!(
                    "column reference {e} is not supported (use column or table.column){}",
                    at(e.span())
                ))),
            },
            A::Value(v) => literal(&v.value, e),
            A::TypedString(ts) => self.typed_string(ts, e),
            A::Nested(inner) => self.bind(inner),
            A::BinaryOp { .. } => self.chain(e),
            A::UnaryOp { op, expr } => self.unary(*op, expr, e),
            A::IsNull(x) | A::IsNotNull(x) => {
                let v = self.bind(x)?;
                let null = matches!(e, A::IsNull(_));
                Ok(self.fold.fold(if null {
                    Expr::IsNull(Box::new(v))
                } else {
                    Expr::IsNotNull(Box::new(v))
                }))
            }
            A::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let x = self.bind(expr)?;
                let lo = self.bind(low)?;
                let hi = self.bind(high)?;
                let (lo_op, hi_op, join) = if *negated {
                    (BinaryOp::Lt, BinaryOp::Gt, BinaryOp::Or)
                } else {
                    (BinaryOp::GtEq, BinaryOp::LtEq, BinaryOp::And)
                };
                let a = self.compare(lo_op, x.clone(), lo, e)?;
                let b = self.compare(hi_op, x, hi, e)?;
                Ok(self.fold_binary(join, a, b))
            }
            A::InList {
                expr,
                list,
                negated,
            } => self.in_list(expr, list, *negated, e),
            A::Like {
                negated,
                any,
                expr,
                pattern,
                escape_char,
            } => self.like(
                *negated,
                *any,
                false,
                expr,
                pattern,
                escape_char.as_deref(),
                e,
            ),
            A::ILike {
                negated,
                any,
                expr,
                pattern,
                escape_char,
            } => self.like(
                *negated,
                *any,
                true,
                expr,
                pattern,
                escape_char.as_deref(),
                e,
            ),
            A::Cast {
                kind,
                expr,
                data_type,
                format,
            } => {
                if format.is_some() {
                    return Err(unsupported(format!(
                        "CAST ... FORMAT is not supported{}",
                        at(e.span())
                    )));
                }
                let to = data_type_from_sql(data_type)?;
                let x = self.bind(expr)?;
                let try_cast = matches!(kind, CastKind::TryCast | CastKind::SafeCast);
                self.explicit_cast(x, &to, try_cast, e)
            }
            A::Extract { field, expr, .. } => {
                let Some(part) = extract_field(field) else {
                    return Err(unsupported(format!(
                        "EXTRACT field {field} is not supported (supported: {}){}",
                        DATE_PARTS.join(", "),
                        at(e.span())
                    )));
                };
                let x = self.bind(expr)?;
                self.date_part(part.to_string(), x, e)
            }
            A::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let s = self.bind(expr)?;
                let from = match substring_from {
                    Some(f) => self.bind(f)?,
                    None => Expr::Literal(ScalarValue::Int64(1)),
                };
                let len = substring_for.as_deref().map(|f| self.bind(f)).transpose()?;
                let mut args = vec![s, from];
                args.extend(len);
                self.scalar_function(ScalarFunction::Substr, args, e)
            }
            A::Trim {
                trim_where,
                trim_what,
                expr,
                trim_characters,
            } => {
                let func = match trim_where {
                    None | Some(ast::TrimWhereField::Both) => ScalarFunction::Trim,
                    Some(ast::TrimWhereField::Leading) => ScalarFunction::Ltrim,
                    Some(ast::TrimWhereField::Trailing) => ScalarFunction::Rtrim,
                };
                let mut args = vec![self.bind(expr)?];
                // trim(s, chars) and TRIM(chars FROM s)
                match (trim_what.as_deref(), trim_characters.as_deref()) {
                    (Some(w), _) | (None, Some([w])) => args.push(self.bind(w)?),
                    (None, None) => {}
                    (None, Some(_)) => {
                        return Err(bind_err(format!(
                            "trim() takes 1 to 2 arguments: \"{e}\"{}",
                            at(e.span())
                        )));
                    }
                }
                self.scalar_function(func, args, e)
            }
            A::Ceil { expr: x, field } | A::Floor { expr: x, field } => {
                if !matches!(
                    field,
                    ast::CeilFloorKind::DateTimeField(DateTimeField::NoDateTime)
                ) {
                    return Err(unsupported(format!(
                        "floor/ceil with a scale or field is not supported: \"{e}\"{}",
                        at(e.span())
                    )));
                }
                let func = if matches!(e, A::Ceil { .. }) {
                    ScalarFunction::Ceil
                } else {
                    ScalarFunction::Floor
                };
                let args = vec![self.bind(x)?];
                self.scalar_function(func, args, e)
            }
            A::Position { expr: sub, r#in } => {
                let args = vec![self.bind(r#in)?, self.bind(sub)?];
                self.scalar_function(ScalarFunction::Strpos, args, e)
            }
            A::Case {
                operand,
                conditions,
                else_result,
                ..
            } => self.case(operand.as_deref(), conditions, else_result.as_deref(), e),
            A::Function(f) => self.function(f, e),
            A::Subquery(q) => self.subquery(q, Tested::Scalar, e),
            A::Exists { subquery, negated } => {
                self.subquery(subquery, Tested::Exists { negated: *negated }, e)
            }
            A::AnyOp {
                left,
                compare_op,
                right,
                ..
            } => self.quantified(left, compare_op, right, false, e),
            A::AllOp {
                left,
                compare_op,
                right,
            } => self.quantified(left, compare_op, right, true, e),
            A::InSubquery {
                expr,
                subquery,
                negated,
            } => {
                let probe = self.bind(expr)?;
                let probe_type = self.type_of(&probe);
                self.subquery(
                    subquery,
                    Tested::In {
                        probe,
                        probe_type,
                        negated: *negated,
                        at: expr.span(),
                    },
                    e,
                )
            }
            A::Interval(iv) => self.interval(iv, e),
            A::Wildcard(_) | A::QualifiedWildcard(..) => Err(bind_err(format!(
                "* is only allowed in the SELECT list and in count(*){}",
                at(e.span())
            ))),
            A::IsDistinctFrom(x, y) | A::IsNotDistinctFrom(x, y) => {
                // a comparison in which NULL equals NULL, never NULL:
                // `CASE WHEN x IS NULL THEN y IS [NOT] NULL WHEN y IS NULL
                // THEN distinct ELSE x <> y (x = y) END`
                let distinct = matches!(e, A::IsDistinctFrom(..));
                let (l, r) = (self.bind(x)?, self.bind(y)?);
                let op = if distinct {
                    BinaryOp::NotEq
                } else {
                    BinaryOp::Eq
                };
                let differ = self.compare(op, l.clone(), r.clone(), e)?;
                let r_null = if distinct {
                    Expr::IsNotNull(Box::new(r.clone()))
                } else {
                    Expr::IsNull(Box::new(r.clone()))
                };
                Ok(self.fold.fold(Expr::Case {
                    when_then: vec![
                        (Expr::IsNull(Box::new(l)), r_null),
                        (
                            Expr::IsNull(Box::new(r)),
                            Expr::Literal(ScalarValue::Boolean(distinct)),
                        ),
                    ],
                    else_expr: Some(Box::new(differ)),
                }))
            }
            A::IsTrue(x) | A::IsFalse(x) | A::IsNotTrue(x) | A::IsNotFalse(x) => {
                // x IS TRUE: true only for true, never NULL; the others
                // from it and NOT
                let v = self.bind(x)?;
                let v = self.to_boolean(v, x, "IS TRUE")?;
                let test = match e {
                    A::IsFalse(_) | A::IsNotFalse(_) => Expr::Not(Box::new(v)),
                    _ => v,
                };
                let is = Expr::Case {
                    when_then: vec![(test, Expr::Literal(ScalarValue::Boolean(true)))],
                    else_expr: Some(Box::new(Expr::Literal(ScalarValue::Boolean(false)))),
                };
                Ok(match e {
                    A::IsNotTrue(_) | A::IsNotFalse(_) => Expr::Not(Box::new(is)),
                    _ => is,
                })
            }
            // the whole string matches the regular expression
            A::SimilarTo {
                negated,
                expr,
                pattern,
                escape_char: None,
            } => {
                let args = vec![self.bind(expr)?, self.bind(pattern)?];
                let m = self.scalar_function(ScalarFunction::RegexpFullMatch, args, e)?;
                Ok(if *negated { Expr::Not(Box::new(m)) } else { m })
            }
            A::SimilarTo { .. } | A::RLike { .. } => Err(unsupported(format!(
                "SIMILAR TO ... ESCAPE and RLIKE are not supported{}",
                at(e.span())
            ))),
            A::Array(_) => Err(unsupported(format!(
                "LIST literals ({e}) are not supported yet{}",
                at(e.span())
            ))),
            A::Dictionary(_) | A::Struct { .. } | A::Tuple(_) => Err(unsupported(format!(
                "STRUCT literals ({e}) are not supported yet{}",
                at(e.span())
            ))),
            A::Map(_) => Err(unsupported(format!(
                "MAP literals ({e}) are not supported yet{}",
                at(e.span())
            ))),
            A::CompoundFieldAccess { .. } => Err(unsupported(format!(
                "LIST indexing and STRUCT field access ({e}) are not supported yet{}",
                at(e.span())
            ))),
            A::Lambda(_) => Err(unsupported(format!(
                "lambda functions ({e}) are not supported yet{}",
                at(e.span())
            ))),
            other => Err(unsupported(format!(
                "expression {other} is not supported{}",
                at(e.span())
            ))),
        }
    }

    /// `INTERVAL 90 DAY`, `INTERVAL '90' DAY`, `INTERVAL '1 year 2 months'`.
    fn interval(&mut self, iv: &ast::Interval, e: &ast::Expr) -> Result<Expr> {
        if iv.last_field.is_some()
            || iv.leading_precision.is_some()
            || iv.fractional_seconds_precision.is_some()
        {
            return Err(unsupported(format!(
                "INTERVAL ... TO ... and precisions are not supported{}",
                at(e.span())
            )));
        }
        let unit = match &iv.leading_field {
            None => None,
            Some(f) => Some(interval_unit(f).ok_or_else(|| {
                unsupported(format!(
                    "INTERVAL unit {f} is not supported{}",
                    at(e.span())
                ))
            })?),
        };
        let v = self.bind(&iv.value)?;
        let text = match self.fold.value(&v)? {
            Some(ScalarValue::Utf8(s)) => s,
            Some(ScalarValue::Null(_)) => {
                return Ok(Expr::Literal(ScalarValue::Null(DataType::Interval(
                    arrow_schema::IntervalUnit::MonthDayNano,
                ))));
            }
            Some(n @ (ScalarValue::Int32(_) | ScalarValue::Int64(_))) => n.to_string(),
            _ => {
                return Err(unsupported(format!(
                    "INTERVAL needs a constant, found \"{}\"{}",
                    iv.value,
                    at(e.span())
                )));
            }
        };
        match crate::scalar::parse_interval(&text, unit) {
            Some((m, d, us)) => Ok(Expr::Literal(ScalarValue::Interval(m, d, us))),
            None => Err(bind_err(format!(
                "Could not convert string '{text}' to INTERVAL{}",
                at(e.span())
            ))),
        }
    }

    fn column(&self, qualifier: Option<&Ident>, name: &Ident) -> Result<Expr> {
        if !self.scope.relations.is_empty() {
            let i = self.scope.resolve(qualifier, name)?;
            return Ok(Expr::column(i, self.scope.schema.field(i).name().clone()));
        }
        if let Some(q) = qualifier {
            self.scope.check_qualifier(q)?;
        }
        match self.scope.find(&name.value) {
            Some(i) => {
                let field = self.scope.schema.field(i);
                if let Some(message) = crate::catalog::unsupported_column(field) {
                    return Err(unsupported(format!("{message}{}", at(name.span))));
                }
                Ok(Expr::column(i, field.name().clone()))
            }
            None => {
                let names = self.scope.schema.fields().iter().map(|f| f.name().as_str());
                let hint = match did_you_mean(&name.value, names) {
                    Some(c) => format!(" Candidate bindings: \"{c}\""),
                    None => String::new(),
                };
                Err(bind_err(format!(
                    "Referenced column \"{}\" not found in FROM clause!{hint}{}",
                    name.value,
                    at(name.span)
                )))
            }
        }
    }

    fn typed_string(&mut self, ts: &ast::TypedString, e: &ast::Expr) -> Result<Expr> {
        let to = data_type_from_sql(&ts.data_type)?;
        let s = match &ts.value.value {
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => s.clone(),
            other => {
                return Err(unsupported(format!(
                    "typed literal {other} is not supported"
                )));
            }
        };
        let _ = e;
        Ok(self
            .fold
            .cast(Expr::Literal(ScalarValue::Utf8(s)), &DataType::Utf8, &to))
    }

    #[inline(never)]
    fn binary(
        &mut self,
        l: Expr,
        left: &ast::Expr,
        op: &BinaryOperator,
        r: Expr,
        right: &ast::Expr,
        e: &ast::Expr,
    ) -> Result<Expr> {
        // `/` divides as DOUBLE when both operands are integers, as in
        // DuckDB; `//` is integer division (truncating).
        let integer_divide = matches!(
            op,
            BinaryOperator::DuckIntegerDivide | BinaryOperator::MyIntegerDivide
        );
        // `^` is the power, as in DuckDB (which writes XOR `xor(a, b)`)
        if matches!(op, BinaryOperator::BitwiseXor | BinaryOperator::PGExp) {
            return self.scalar_function(ScalarFunction::Power, vec![l, r], e);
        }
        // `~~` is LIKE and `~~*` ILIKE (`!` negates); `~` is
        // regexp_matches and `~*` it without regard to case:
        // (regex, negated, case-insensitive)
        let pattern = match op {
            BinaryOperator::PGLikeMatch => Some((false, false, false)),
            BinaryOperator::PGNotLikeMatch => Some((false, true, false)),
            BinaryOperator::PGILikeMatch => Some((false, false, true)),
            BinaryOperator::PGNotILikeMatch => Some((false, true, true)),
            BinaryOperator::PGRegexMatch => Some((true, false, false)),
            BinaryOperator::PGRegexNotMatch => Some((true, true, false)),
            BinaryOperator::PGRegexIMatch => Some((true, false, true)),
            BinaryOperator::PGRegexNotIMatch => Some((true, true, true)),
            _ => None,
        };
        if let Some((false, negated, case_insensitive)) = pattern {
            return self.like_of(l, negated, case_insensitive, r, None, e);
        }
        // `x GLOB p`: the whole string matches the shell pattern (`*`, `?`,
        // `[a-z]`, `[!a]`, `\\*`), constant or of each row
        if let BinaryOperator::Custom(name) = op
            && name == GLOB
        {
            return self.scalar_function(ScalarFunction::Glob, vec![l, r], e);
        }
        if let Some((true, negated, case_insensitive)) = pattern {
            let mut args = vec![l, r];
            if case_insensitive {
                args.push(Expr::Literal(ScalarValue::Utf8("i".into())));
            }
            let m = self.scalar_function(ScalarFunction::RegexpMatches, args, e)?;
            return Ok(if negated { Expr::Not(Box::new(m)) } else { m });
        }
        let op = match op {
            BinaryOperator::DuckIntegerDivide | BinaryOperator::MyIntegerDivide => BinaryOp::Divide,
            BinaryOperator::Plus => BinaryOp::Plus,
            BinaryOperator::Minus => BinaryOp::Minus,
            BinaryOperator::Multiply => BinaryOp::Multiply,
            BinaryOperator::Divide => BinaryOp::Divide,
            BinaryOperator::Modulo => BinaryOp::Modulo,
            BinaryOperator::StringConcat => BinaryOp::Concat,
            BinaryOperator::Gt => BinaryOp::Gt,
            BinaryOperator::Lt => BinaryOp::Lt,
            BinaryOperator::GtEq => BinaryOp::GtEq,
            BinaryOperator::LtEq => BinaryOp::LtEq,
            BinaryOperator::Eq => BinaryOp::Eq,
            BinaryOperator::NotEq => BinaryOp::NotEq,
            BinaryOperator::And => BinaryOp::And,
            BinaryOperator::Or => BinaryOp::Or,
            other => {
                return Err(unsupported(format!(
                    "operator {other} is not supported{}",
                    at(e.span())
                )));
            }
        };
        let fold = |l, r| Ok(self.fold_binary(op, l, r));
        if op.is_comparison() {
            return self.compare(op, l, r, e);
        }
        match op {
            BinaryOp::And | BinaryOp::Or => {
                let l = self.to_boolean(l, left, op.as_str())?;
                let r = self.to_boolean(r, right, op.as_str())?;
                fold(l, r)
            }
            BinaryOp::Concat => {
                let l = self.to_string_operand(l)?;
                let r = self.to_string_operand(r)?;
                fold(l, r)
            }
            BinaryOp::Divide => {
                let is_int = |t: &DataType| {
                    let t = canonical(t);
                    crate::types::is_integer(&t) || t == DataType::Null
                };
                let (lt, rt) = (self.type_of(&l), self.type_of(&r));
                let both_int = is_int(&lt) && is_int(&rt);
                if integer_divide && !both_int {
                    return Err(bind_err(format!(
                        "Cannot apply operator // to types {} and {} in \"{e}\": it divides integers{}",
                        sql_type_name(&lt),
                        sql_type_name(&rt),
                        at(e.span())
                    )));
                }
                let (l, r) = if both_int && !integer_divide {
                    (
                        self.fold.cast(l, &lt, &DataType::Float64),
                        self.fold.cast(r, &rt, &DataType::Float64),
                    )
                } else {
                    (l, r)
                };
                let (l, r) = self.coerce_arithmetic(op, l, r, e)?;
                fold(l, r)
            }
            _ => {
                let (l, r) = self.coerce_arithmetic(op, l, r, e)?;
                fold(l, r)
            }
        }
    }

    fn unary(&mut self, op: UnaryOperator, x: &ast::Expr, e: &ast::Expr) -> Result<Expr> {
        // `-<number>` is one literal, as in DuckDB: -9223372036854775808 is
        // a BIGINT, not the negation of a DECIMAL.
        if let (UnaryOperator::Minus, ast::Expr::Value(v)) = (op, x)
            && let Value::Number(n, _) = &v.value
        {
            return number_literal(&format!("-{n}"))
                .map(Expr::Literal)
                .ok_or_else(|| bind_err(format!("invalid number -{n}{}", at(e.span()))));
        }
        let v = self.bind(x)?;
        let t = canonical(&self.type_of(&v));
        match op {
            UnaryOperator::Not => Ok(self.fold.not(self.to_boolean(v, x, "NOT")?)),
            UnaryOperator::Minus | UnaryOperator::Plus => {
                if !is_numeric(&t) && t != DataType::Null {
                    return Err(bind_err(format!(
                        "Cannot apply unary {op} to type {} in \"{e}\"{}",
                        sql_type_name(&t),
                        at(e.span())
                    )));
                }
                if op == UnaryOperator::Plus {
                    return Ok(v);
                }
                let v = if t == DataType::Null {
                    Expr::Literal(ScalarValue::Null(DataType::Int32))
                } else {
                    v
                };
                Ok(self.fold.negative(v))
            }
            other => Err(unsupported(format!(
                "operator {other} is not supported{}",
                at(e.span())
            ))),
        }
    }

    /// Converts a bound operand of AND/OR/NOT/WHERE to BOOLEAN.
    fn to_boolean(&self, v: Expr, ast: &ast::Expr, what: &str) -> Result<Expr> {
        match self.type_of(&v) {
            DataType::Boolean => Ok(v),
            DataType::Null => Ok(Expr::Literal(ScalarValue::Null(DataType::Boolean))),
            // DuckDB casts numbers to BOOLEAN implicitly (zero is false)
            t if t.is_integer() || t.is_floating() => Ok(self.fold.cast(v, &t, &DataType::Boolean)),
            t => Err(bind_err(format!(
                "argument of {what} must be type BOOLEAN, not type {}: \"{ast}\"{}",
                sql_type_name(&t),
                at(ast.span())
            ))),
        }
    }

    fn to_string_operand(&self, v: Expr) -> Result<Expr> {
        let t = self.type_of(&v);
        if t == DataType::Null {
            return Ok(Expr::Literal(ScalarValue::Null(DataType::Utf8)));
        }
        Ok(self.fold.cast(v, &t, &DataType::Utf8))
    }

    /// Builds `l op r` for a comparison, coercing both sides to one type.
    pub(crate) fn compare(&self, op: BinaryOp, l: Expr, r: Expr, e: &ast::Expr) -> Result<Expr> {
        let (lt, rt) = (self.type_of(&l), self.type_of(&r));
        let adopted = literal_adopts(&l, &r, &lt, &rt, e);
        let target = match (&l, &r) {
            // A string literal takes the type of the other side.
            (Expr::Literal(ScalarValue::Utf8(_)), _) if !is_string(&rt) => canonical(&rt),
            (_, Expr::Literal(ScalarValue::Utf8(_))) if !is_string(&lt) => canonical(&lt),
            _ if adopted.is_some() => adopted.expect("checked"),
            _ => comparison_type(&lt, &rt).ok_or_else(|| {
                bind_err(format!(
                    "Cannot compare values of type {} and type {} in \"{e}\"{}",
                    sql_type_name(&lt),
                    sql_type_name(&rt),
                    at(e.span())
                ))
            })?,
        };
        let target = if target == DataType::Null {
            DataType::Boolean
        } else {
            target
        };
        let l = self.fold.cast(l, &lt, &target);
        let r = self.fold.cast(r, &rt, &target);
        Ok(self.fold_binary(op, l, r))
    }

    fn coerce_arithmetic(
        &self,
        op: BinaryOp,
        l: Expr,
        r: Expr,
        e: &ast::Expr,
    ) -> Result<(Expr, Expr)> {
        let (lt, rt) = (self.type_of(&l), self.type_of(&r));
        let mismatch = || {
            bind_err(format!(
                "Cannot apply operator {} to types {} and {} in \"{e}\"{}",
                op.as_str(),
                sql_type_name(&lt),
                sql_type_name(&rt),
                at(e.span())
            ))
        };
        // A string literal as written (not a VARCHAR value, such as
        // `1::VARCHAR`, even once folded) takes the type of the other
        // (numeric) side.
        let (l_lit, r_lit) = match e {
            ast::Expr::BinaryOp { left, right, .. } => {
                (is_string_literal(left), is_string_literal(right))
            }
            _ => (false, false),
        };
        let (lt2, rt2) = match (&l, &r) {
            (Expr::Literal(ScalarValue::Utf8(_)), _) if l_lit && is_numeric(&canonical(&rt)) => {
                (canonical(&rt), canonical(&rt))
            }
            (_, Expr::Literal(ScalarValue::Utf8(_))) if r_lit && is_numeric(&canonical(&lt)) => {
                (canonical(&lt), canonical(&lt))
            }
            _ => match literal_adopts(&l, &r, &lt, &rt, e) {
                Some(t) => (t.clone(), t),
                None => (lt.clone(), rt.clone()),
            },
        };
        let (lt2, rt2) = arithmetic_operand_types(op, &lt2, &rt2).ok_or_else(mismatch)?;
        if arithmetic_result_type(op, &lt2, &rt2).is_none() {
            return Err(mismatch());
        }
        Ok((self.fold.cast(l, &lt, &lt2), self.fold.cast(r, &rt, &rt2)))
    }

    /// `CAST(x AS to)`, or with `try_cast` `TRY_CAST`: NULL where a value
    /// does not convert, and NULL throughout (as in DuckDB) where the
    /// types do not convert at all.
    fn explicit_cast(&self, x: Expr, to: &DataType, try_cast: bool, e: &ast::Expr) -> Result<Expr> {
        let t = self.type_of(&x);
        if try_cast && !can_cast(&t, to) {
            return Ok(Expr::Literal(ScalarValue::Null(to.clone())));
        }
        if !can_cast(&t, to) {
            return Err(bind_err(format!(
                "Unimplemented type for cast ({} -> {}) in \"{e}\"{}",
                sql_type_name(&t),
                sql_type_name(to),
                at(e.span())
            )));
        }
        Ok(self.fold.cast_as(x, &t, to, try_cast))
    }

    fn in_list(
        &mut self,
        expr: &ast::Expr,
        list: &[ast::Expr],
        negated: bool,
        e: &ast::Expr,
    ) -> Result<Expr> {
        let x = self.bind(expr)?;
        let xt = self.type_of(&x);
        let bound = list
            .iter()
            .map(|item| self.bind(item))
            .collect::<Result<Vec<_>>>()?;
        let mut items = Vec::with_capacity(list.len());
        for b in &bound {
            match self.fold.value(b) {
                Ok(Some(v)) => items.push(v),
                _ => break,
            }
        }
        if items.len() < bound.len() {
            // an item that is not a constant: x = a OR x = b OR ..., which
            // is what IN means, NULLs included
            let mut terms = Vec::with_capacity(bound.len());
            for (b, item) in bound.into_iter().zip(list) {
                terms.push((self.compare(BinaryOp::Eq, x.clone(), b, e)?, item));
            }
            let any = self.combine(BinaryOp::Or, terms)?;
            return Ok(if negated { self.fold.not(any) } else { any });
        }
        let mut target = canonical(&xt);
        for v in &items {
            let vt = v.data_type();
            if matches!(v, ScalarValue::Utf8(_)) && !is_string(&target) && target != DataType::Null
            {
                continue;
            }
            target = comparison_type(&target, &vt).ok_or_else(|| {
                bind_err(format!(
                    "Cannot compare values of type {} and type {} in \"{e}\"{}",
                    sql_type_name(&xt),
                    sql_type_name(&vt),
                    at(e.span())
                ))
            })?;
        }
        if target == DataType::Null {
            return Ok(Expr::Literal(ScalarValue::Null(DataType::Boolean)));
        }
        let x = self.fold.cast(x, &xt, &target);
        let Some(cast_items) = self.fold.cast_values(items, &target)? else {
            return Err(unsupported(format!(
                "IN list items must be constants of the type of the tested value without a \
                 constant evaluator, in \"{e}\"{}",
                at(e.span())
            )));
        };
        Ok(self.fold.fold(Expr::InList {
            expr: Box::new(x),
            list: cast_items.into(),
            negated,
        }))
    }

    #[allow(clippy::too_many_arguments)] // mirrors the two LIKE variants of the AST
    fn like(
        &mut self,
        negated: bool,
        any: bool,
        case_insensitive: bool,
        expr: &ast::Expr,
        pattern: &ast::Expr,
        escape: Option<&ast::Expr>,
        e: &ast::Expr,
    ) -> Result<Expr> {
        if any {
            return Err(unsupported(format!(
                "LIKE ANY is not supported{}",
                at(e.span())
            )));
        }
        let x = self.bind(expr)?;
        let bound = self.bind(pattern)?;
        self.like_of(x, negated, case_insensitive, bound, escape, e)
    }

    /// [`ExprBinder::like`] of the bound `x` and pattern `bound`; also
    /// `x ~~ p` and its kin. A constant pattern compiles once
    /// ([`Expr::Like`]); any other binds to `like_escape`/`ilike_escape`.
    fn like_of(
        &mut self,
        x: Expr,
        negated: bool,
        case_insensitive: bool,
        bound: Expr,
        escape: Option<&ast::Expr>,
        e: &ast::Expr,
    ) -> Result<Expr> {
        let xt = self.type_of(&x);
        if !is_string(&xt) && xt != DataType::Null {
            return Err(bind_err(format!(
                "No function matches LIKE for type {}: \"{e}\" (cast it to VARCHAR){}",
                sql_type_name(&xt),
                at(e.span())
            )));
        }
        let x = self.fold.cast(x, &xt, &DataType::Utf8);
        // the escape: none, a constant (one character, or '' for none),
        // NULL, or a value of each row
        let escape = match escape {
            None => Escape::Char(None),
            Some(esc) => {
                let bound = self.bind(esc)?;
                match self.fold.value(&bound)? {
                    Some(ScalarValue::Utf8(s)) if s.chars().count() <= 1 => {
                        Escape::Char(s.chars().next())
                    }
                    Some(ScalarValue::Null(_)) => {
                        return Ok(Expr::Literal(ScalarValue::Null(DataType::Boolean)));
                    }
                    Some(ScalarValue::Utf8(_)) => {
                        return Err(bind_err(format!(
                            "Invalid escape string \"{esc}\": an escape string must be empty \
                             or one character{}",
                            at(esc.span())
                        )));
                    }
                    _ => Escape::Rows(bound),
                }
            }
        };
        if matches!(x, Expr::Literal(ScalarValue::Null(_))) {
            return Ok(Expr::Literal(ScalarValue::Null(DataType::Boolean)));
        }
        match (self.fold.value(&bound)?, escape) {
            (Some(ScalarValue::Utf8(pattern)), Escape::Char(escape)) => {
                Ok(self.fold.fold(Expr::Like {
                    expr: Box::new(x),
                    pattern,
                    negated,
                    case_insensitive,
                    escape,
                }))
            }
            (Some(ScalarValue::Null(_)), _) => {
                Ok(Expr::Literal(ScalarValue::Null(DataType::Boolean)))
            }
            // a pattern (or escape) of each row: compiled per distinct
            // pattern as the rows are matched
            (_, escape) => {
                let escape = match escape {
                    Escape::Char(c) => {
                        Expr::Literal(ScalarValue::Utf8(c.map(String::from).unwrap_or_default()))
                    }
                    Escape::Rows(e) => e,
                };
                let func = if case_insensitive {
                    ScalarFunction::IlikeEscape
                } else {
                    ScalarFunction::LikeEscape
                };
                let matched = self.scalar_function(func, vec![x, bound, escape], e)?;
                Ok(if negated {
                    self.fold.fold(Expr::Not(Box::new(matched)))
                } else {
                    matched
                })
            }
        }
    }

    fn case(
        &mut self,
        operand: Option<&ast::Expr>,
        conditions: &[ast::CaseWhen],
        else_result: Option<&ast::Expr>,
        e: &ast::Expr,
    ) -> Result<Expr> {
        let operand = operand.map(|o| self.bind(o)).transpose()?;
        let mut whens = Vec::with_capacity(conditions.len());
        let mut values = Vec::with_capacity(conditions.len() + 1);
        for cw in conditions {
            let c = self.bind(&cw.condition)?;
            let c = match &operand {
                Some(o) => self.compare(BinaryOp::Eq, o.clone(), c, &cw.condition)?,
                None => self.to_boolean(c, &cw.condition, "CASE WHEN")?,
            };
            whens.push(c);
            values.push(self.bind(&cw.result)?);
        }
        let else_value = else_result.map(|x| self.bind(x)).transpose()?;
        values.extend(else_value.clone());
        let t = self.common_type(&values, e)?;
        let mut when_then = Vec::with_capacity(whens.len());
        for (c, v) in whens.into_iter().zip(values) {
            let vt = self.type_of(&v);
            let v = self.fold.cast(v, &vt, &t);
            match c {
                // A branch that can never be taken is dropped; one that is
                // always taken ends the CASE.
                Expr::Literal(ScalarValue::Boolean(false) | ScalarValue::Null(_)) => {}
                Expr::Literal(ScalarValue::Boolean(true)) if when_then.is_empty() => return Ok(v),
                c => when_then.push((c, v)),
            }
        }
        let else_expr = match else_value {
            Some(v) => {
                let vt = self.type_of(&v);
                Some(self.fold.cast(v, &vt, &t))
            }
            None => None,
        };
        if when_then.is_empty() {
            return Ok(else_expr.unwrap_or(Expr::Literal(ScalarValue::Null(t))));
        }
        Ok(Expr::Case {
            when_then,
            else_expr: else_expr.map(Box::new),
        })
    }

    /// The type CASE branches or COALESCE arguments share; string literals
    /// adapt to the others.
    fn common_type(&self, values: &[Expr], e: &ast::Expr) -> Result<DataType> {
        let mut t = DataType::Null;
        for v in values {
            if matches!(v, Expr::Literal(ScalarValue::Utf8(_))) {
                continue;
            }
            let vt = self.type_of(v);
            t = comparison_type(&t, &vt).ok_or_else(|| {
                bind_err(format!(
                    "Cannot mix values of type {} and {} in \"{e}\"{}",
                    sql_type_name(&t),
                    sql_type_name(&vt),
                    at(e.span())
                ))
            })?;
        }
        if t == DataType::Null
            && values
                .iter()
                .any(|v| matches!(v, Expr::Literal(ScalarValue::Utf8(_))))
        {
            t = DataType::Utf8;
        }
        Ok(t)
    }

    fn function(&mut self, f: &ast::Function, e: &ast::Expr) -> Result<Expr> {
        let name = match f.name.0.as_slice() {
            [ast::ObjectNamePart::Identifier(id)] => id.value.to_ascii_lowercase(),
            _ => {
                return Err(unsupported(format!(
                    "function {} is not supported{}",
                    f.name,
                    at(e.span())
                )));
            }
        };
        if f.over.is_some() || super::window::is_window_only(&name) {
            return super::window::bind_window(self, f, &name, e);
        }
        if !f.within_group.is_empty() || f.null_treatment.is_some() {
            return Err(unsupported(format!(
                "WITHIN GROUP and IGNORE NULLS are not supported ({name}){}",
                at(e.span())
            )));
        }
        if !matches!(f.parameters, FunctionArguments::None) {
            return Err(unsupported(format!(
                "parametric function {name} is not supported"
            )));
        }
        let equalities: Vec<Option<FunctionArgExpr>>;
        let mut order_by: &[ast::OrderByExpr] = &[];
        let (args, distinct) = match &f.args {
            FunctionArguments::None => (Vec::new(), false),
            FunctionArguments::Subquery(_) => {
                return Err(unsupported(format!(
                    "subqueries are not supported{}",
                    at(e.span())
                )));
            }
            FunctionArguments::List(list) => {
                if list
                    .clauses
                    .iter()
                    .any(|c| matches!(c, ast::FunctionArgumentClause::IgnoreOrRespectNulls(_)))
                {
                    // DuckDB's message
                    return Err(bind_err(format!(
                        "RESPECT/IGNORE NULLS is not supported for non-window functions ({name}){}",
                        at(e.span())
                    )));
                }
                for clause in &list.clauses {
                    match clause {
                        ast::FunctionArgumentClause::OrderBy(terms) => order_by = terms,
                        _ => {
                            return Err(unsupported(format!(
                                "the clause {clause} inside {name}(...) is not supported{}",
                                at(e.span())
                            )));
                        }
                    }
                }
                // `f(a = b)` is a comparison, as in DuckDB, not a named
                // argument
                let compared: Vec<Option<FunctionArgExpr>> = list
                    .args
                    .iter()
                    .map(|a| match a {
                        FunctionArg::Named {
                            name,
                            arg: FunctionArgExpr::Expr(v),
                            operator: ast::FunctionArgOperator::Equals,
                        } => Some(FunctionArgExpr::Expr(ast::Expr::BinaryOp {
                            left: Box::new(ast::Expr::Identifier(name.clone())),
                            op: BinaryOperator::Eq,
                            right: Box::new(v.clone()),
                        })),
                        _ => None,
                    })
                    .collect();
                equalities = compared;
                let mut args = Vec::with_capacity(list.args.len());
                for (a, eq) in list.args.iter().zip(&equalities) {
                    if let Some(eq) = eq {
                        args.push(eq);
                        continue;
                    }
                    match a {
                        FunctionArg::Unnamed(x) => args.push(x),
                        _ => {
                            return Err(unsupported(format!(
                                "named arguments are not supported ({a} in {name}){}",
                                at(e.span())
                            )));
                        }
                    }
                }
                let distinct = list.duplicate_treatment == Some(DuplicateTreatment::Distinct);
                (args, distinct)
            }
        };
        if name == "columns" {
            return Err(unsupported(format!(
                "COLUMNS(...) is only supported as a whole SELECT item, not inside an expression: \"{e}\"{}",
                at(e.span())
            )));
        }
        let def = functions::lookup(&name);
        let aggregate = def.and_then(|d| aggregate_kind(d.kind));
        if let Some((func, rewrite)) = aggregate {
            let call = AggregateCall {
                name: &name,
                args: &args,
                distinct: distinct || def.is_some_and(|d| counts_distinct(d.kind)),
                filter: f.filter.as_deref(),
                order_by,
                rewrite,
            };
            return self.aggregate(func, call, e);
        }
        if f.filter.is_some() {
            return Err(bind_err(format!(
                "FILTER is only allowed in aggregate functions, not {name}{}",
                at(e.span())
            )));
        }
        if distinct || !order_by.is_empty() {
            let what = if distinct { "DISTINCT" } else { "ORDER BY" };
            return Err(bind_err(format!(
                "{what} is only allowed in aggregate functions, not {name}{}",
                at(e.span())
            )));
        }
        if let Some(kind @ (FunctionKind::If | FunctionKind::Mod | FunctionKind::DateAdd)) =
            def.map(|d| d.kind)
        {
            return self.rewritten_call(kind, &name, &args, e);
        }
        let mut bound = Vec::with_capacity(args.len());
        for a in &args {
            match a {
                FunctionArgExpr::Expr(x) => bound.push(self.bind(x)?),
                _ => {
                    return Err(bind_err(format!(
                        "* is not a valid argument of {name}{}",
                        at(e.span())
                    )));
                }
            }
        }
        let func = match def.map(|d| d.kind) {
            Some(FunctionKind::Scalar(f)) => f,
            Some(FunctionKind::CurrentSetting) => {
                return super::settings::current_setting(bound, e);
            }
            Some(FunctionKind::DatePart) => {
                check_arg_count(&name, bound.len(), 2, 2, e)?;
                let x = bound
                    .pop()
                    .unwrap_or(Expr::Literal(ScalarValue::Null(DataType::Null)));
                let part = match bound.pop() {
                    Some(Expr::Literal(ScalarValue::Utf8(p))) => normalize_date_part(&p),
                    _ => None,
                };
                let Some(part) = part else {
                    return Err(bind_err(format!(
                        "the first argument of date_part must be a constant naming one of {}{}",
                        DATE_PARTS.join(", "),
                        at(e.span())
                    )));
                };
                return self.date_part(part, x, e);
            }
            Some(FunctionKind::NullIf) => {
                check_arg_count(&name, bound.len(), 2, 2, e)?;
                let b = bound
                    .pop()
                    .unwrap_or(Expr::Literal(ScalarValue::Null(DataType::Null)));
                let a = bound
                    .pop()
                    .unwrap_or(Expr::Literal(ScalarValue::Null(DataType::Null)));
                let t = self.type_of(&a);
                let t = if t == DataType::Null {
                    self.type_of(&b)
                } else {
                    canonical(&t)
                };
                let equal = self.compare(BinaryOp::Eq, a.clone(), b, e)?;
                let at_ = self.type_of(&a);
                let a = self.fold.cast(a, &at_, &t);
                return Ok(match equal {
                    Expr::Literal(ScalarValue::Boolean(true)) => {
                        Expr::Literal(ScalarValue::Null(t))
                    }
                    Expr::Literal(ScalarValue::Boolean(false) | ScalarValue::Null(_)) => a,
                    equal => self.fold.fold(Expr::Case {
                        when_then: vec![(equal, Expr::Literal(ScalarValue::Null(t)))],
                        else_expr: Some(Box::new(a)),
                    }),
                });
            }
            Some(FunctionKind::DateField(part)) => {
                check_arg_count(&name, bound.len(), 1, 1, e)?;
                let x = bound
                    .pop()
                    .unwrap_or(Expr::Literal(ScalarValue::Null(DataType::Null)));
                return self.date_part(part.to_string(), x, e);
            }
            Some(FunctionKind::IfNull) => {
                check_arg_count(&name, bound.len(), 2, 2, e)?;
                ScalarFunction::Coalesce
            }
            Some(FunctionKind::TypeOf) => {
                check_arg_count(&name, bound.len(), 1, 1, e)?;
                let t = self.type_of(&bound[0]);
                let name = match t {
                    DataType::Null => "\"NULL\"".to_string(),
                    t => sql_type_name(&t),
                };
                return Ok(Expr::Literal(ScalarValue::Utf8(name)));
            }
            Some(FunctionKind::Table) => {
                return Err(bind_err(format!(
                    "{name} is a table function: use it in FROM{}",
                    at(e.span())
                )));
            }
            Some(kind @ (FunctionKind::If | FunctionKind::Mod | FunctionKind::DateAdd)) => {
                return self.rewritten_call(kind, &name, &args, e);
            }
            Some(
                FunctionKind::Aggregate(_)
                | FunctionKind::CountIf
                | FunctionKind::ApproxCountDistinct
                | FunctionKind::BoolAnd
                | FunctionKind::BoolOr,
            )
            | None => {
                if let Some((_, why)) = functions::NOT_SUPPORTED
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case(&name))
                {
                    return Err(unsupported(format!(
                        "{name}() is not supported yet: {why}{}",
                        at(e.span())
                    )));
                }
                let names = functions::FUNCTIONS
                    .iter()
                    .filter(|f| f.kind != FunctionKind::Table)
                    .map(|f| f.name);
                let hint = match did_you_mean(&name, names) {
                    Some(c) => format!(" Did you mean \"{c}\"?"),
                    None => String::new(),
                };
                return Err(bind_err(format!(
                    "Scalar Function with name {name} does not exist!{hint}{}",
                    at(e.span())
                )));
            }
        };
        self.scalar_function(func, bound, e)
    }

    fn aggregate(
        &mut self,
        func: AggregateFunction,
        call: AggregateCall<'_>,
        e: &ast::Expr,
    ) -> Result<Expr> {
        if self.aggregates.is_none() {
            return Err(bind_err(format!(
                "{}: {e}{}",
                self.no_aggregates,
                at(e.span())
            )));
        }
        if func == AggregateFunction::Grouping {
            if !call.order_by.is_empty() {
                return Err(bind_err(format!(
                    "{}() takes no ORDER BY: \"{e}\"{}",
                    call.name,
                    at(e.span())
                )));
            }
            return self.grouping(call.name, call.args, call.distinct, call.filter, e);
        }
        let agg = self.aggregate_expr(func, call, e)?;
        Ok(self.aggregate_column(agg))
    }

    /// An aggregate call as a window function's (see
    /// [`ExprBinder::aggregate_expr`]): its arguments over the Window's
    /// input.
    pub(crate) fn window_aggregate(
        &mut self,
        func: AggregateFunction,
        call: AggregateCall<'_>,
        e: &ast::Expr,
    ) -> Result<AggregateExpr> {
        if func == AggregateFunction::Grouping {
            return Err(bind_err(format!(
                "GROUPING is not a window function{}",
                at(e.span())
            )));
        }
        let saved = std::mem::replace(&mut self.aggregate_in_window, true);
        let r = self.aggregate_expr(func, call, e);
        self.aggregate_in_window = saved;
        r
    }

    /// Binds an expression read by an aggregate call: below the GROUP BY
    /// (no aggregate in it), or over a Window's input.
    fn aggregate_arg(&mut self, x: &ast::Expr) -> Result<Expr> {
        if self.aggregate_in_window {
            self.bind_without_windows(x, NESTED_WINDOWS)
        } else {
            self.bind_without_aggregates(x, "aggregate function calls cannot be nested")
        }
    }

    /// The aggregate a call binds to, the same in a GROUP BY and as a
    /// window function: its arguments typed, DISTINCT, FILTER (folded into
    /// the arguments) and ORDER BY.
    fn aggregate_expr(
        &mut self,
        func: AggregateFunction,
        call: AggregateCall<'_>,
        e: &ast::Expr,
    ) -> Result<AggregateExpr> {
        let AggregateCall {
            name,
            args,
            distinct,
            filter,
            order_by,
            rewrite,
        } = call;
        // DuckDB: with DISTINCT, the values are what is ordered
        if distinct
            && let Some(o) = order_by.iter().find(|o| {
                !args
                    .iter()
                    .any(|a| matches!(a, FunctionArgExpr::Expr(x) if *x == o.expr))
            })
        {
            return Err(bind_err(format!(
                "In a DISTINCT aggregate, ORDER BY expressions must appear in the argument list: \"{}\"{}",
                o.expr,
                at(e.span())
            )));
        }
        // DISTINCT changes these, and only count, sum, avg and the
        // variances keep a set of distinct values
        if distinct
            && matches!(
                func,
                AggregateFunction::Median
                    | AggregateFunction::Mode
                    | AggregateFunction::Product
                    | AggregateFunction::Skewness
                    | AggregateFunction::Kurtosis
                    | AggregateFunction::KurtosisPop
                    | AggregateFunction::Entropy
                    | AggregateFunction::BitXor
                    | AggregateFunction::First
                    | AggregateFunction::Last
            )
        {
            return Err(unsupported(format!(
                "{name}(DISTINCT ...) is not supported{}",
                at(e.span())
            )));
        }
        // FILTER (WHERE c): the argument becomes CASE WHEN c THEN arg END,
        // so the rows that fail c count as NULLs, which aggregates skip
        let filter = match filter {
            Some(c) => {
                let p = self.aggregate_arg(c)?;
                Some(self.to_boolean(p, c, "FILTER")?)
            }
            None => None,
        };
        let kept_filter = match func {
            AggregateFunction::First | AggregateFunction::Last => filter.clone(),
            _ => None,
        };
        let when = |c: &Option<Expr>, v: Expr| match c {
            Some(c) => Expr::Case {
                when_then: vec![(c.clone(), v)],
                else_expr: None,
            },
            None => v,
        };
        let star = matches!(args, [] | [FunctionArgExpr::Wildcard]);
        let agg = if func == AggregateFunction::Count && star && rewrite.is_none() {
            if distinct {
                let call = if name == "count" {
                    "count(DISTINCT *)"
                } else {
                    &format!("{name}(*)")
                };
                return Err(bind_err(format!(
                    "{call} is not supported: name the column whose distinct values to count{}",
                    at(e.span())
                )));
            }
            match filter {
                Some(c) => AggregateExpr {
                    func: AggregateFunction::Count,
                    arg: Some(when(&Some(c), Expr::Literal(ScalarValue::Int32(1)))),
                    key: None,
                    distinct: false,
                    order_by: Vec::new(),
                },
                None => AggregateExpr {
                    func: AggregateFunction::CountStar,
                    arg: None,
                    key: None,
                    distinct: false,
                    order_by: Vec::new(),
                },
            }
        } else if func == AggregateFunction::StringAgg {
            self.string_agg(name, args, distinct, &filter, e)?
        } else if matches!(
            func,
            AggregateFunction::QuantileCont | AggregateFunction::QuantileDisc
        ) {
            self.quantile(func, name, args, distinct, &filter, e)?
        } else if func.takes_key() {
            // arg_min(x, y): rows where x or y is NULL are skipped, so a
            // FILTER makes both NULL on the rows it drops
            let [FunctionArgExpr::Expr(x), FunctionArgExpr::Expr(y)] = args else {
                return Err(bind_err(format!(
                    "{name}() takes exactly two arguments, got {}: \"{e}\"{}",
                    args.len(),
                    at(e.span())
                )));
            };
            let mut bound = Vec::with_capacity(2);
            let mut types = Vec::with_capacity(2);
            for a in [x, y] {
                let v = self.aggregate_arg(a)?;
                let v = when(&filter, v);
                let t = self.type_of(&v);
                let want = canonical(&t);
                bound.push(self.fold.cast(v, &t, &want));
                types.push(t);
            }
            // the statistics of pairs compute in DOUBLE
            if func.of_pairs() {
                if types.iter().any(|t| !is_numeric(t) && *t != DataType::Null) {
                    let names: Vec<String> = types.iter().map(sql_type_name).collect();
                    return Err(bind_err(format!(
                        "No function matches the given name and argument types '{name}({})': \"{e}\"{}",
                        names.join(", "),
                        at(e.span())
                    )));
                }
                if distinct {
                    return Err(unsupported(format!(
                        "{name}(DISTINCT ...) is not supported{}",
                        at(e.span())
                    )));
                }
                bound = bound
                    .into_iter()
                    .map(|v| {
                        let t = self.type_of(&v);
                        self.fold.cast(v, &t, &DataType::Float64)
                    })
                    .collect();
            }
            let key = bound.pop();
            AggregateExpr {
                func,
                arg: bound.pop(),
                key,
                distinct,
                order_by: Vec::new(),
            }
        } else {
            let [FunctionArgExpr::Expr(x)] = args else {
                return Err(bind_err(format!(
                    "{name}() takes exactly one argument, got {}: \"{e}\"{}",
                    args.len(),
                    at(e.span())
                )));
            };
            let arg = self.aggregate_arg(x)?;
            let t = self.type_of(&arg);
            let arg = match rewrite {
                Some(_) if !matches!(t, DataType::Boolean | DataType::Null) => {
                    return Err(bind_err(format!(
                        "No function matches the given name and argument types '{name}({})': \"{e}\"{}",
                        sql_type_name(&t),
                        at(e.span())
                    )));
                }
                // count_if(c) is sum(CAST(c AS INTEGER)): NULL when every
                // c is NULL or there are no rows, as in DuckDB
                Some(FunctionKind::CountIf) => {
                    let c = self.to_boolean(arg, x, name)?;
                    self.fold.cast(c, &DataType::Boolean, &DataType::Int32)
                }
                Some(_) => self.to_boolean(arg, x, name)?,
                None => arg,
            };
            let arg = when(&filter, arg);
            let t = self.type_of(&arg);
            let want = canonical(&t);
            let arg = self.fold.cast(arg, &t, &want);
            if aggregate_result_type(func, Some(&want)).is_none() {
                return Err(bind_err(format!(
                    "No function matches the given name and argument types '{name}({})': \"{e}\"{}",
                    sql_type_name(&t),
                    at(e.span())
                )));
            }
            AggregateExpr {
                func,
                arg: Some(arg),
                key: None,
                distinct,
                order_by: Vec::new(),
            }
        };
        let mut agg = agg;
        // first/last keep NULLs, so the rows FILTER turns to NULL must
        // not be the ones they pick: those rows go after (first) or
        // before (last) every other, whatever the rest of the order
        if let Some(c) = kept_filter {
            let (passes, fails) = match func {
                AggregateFunction::First => (0, 1),
                _ => (1, 0),
            };
            agg.order_by.push(SortKey {
                expr: Expr::Case {
                    when_then: vec![(c, Expr::Literal(ScalarValue::Int32(passes)))],
                    else_expr: Some(Box::new(Expr::Literal(ScalarValue::Int32(fails)))),
                },
                asc: true,
                nulls_first: false,
            });
        }
        // an order no result depends on is dropped, as DuckDB does
        if func.depends_on_order() {
            for o in order_by {
                let (asc, nulls_first) = super::query::sort_options(&o.options)?;
                let expr = self.aggregate_arg(&o.expr)?;
                agg.order_by.push(SortKey {
                    expr,
                    asc,
                    nulls_first,
                });
            }
        }
        Ok(agg)
    }

    /// `GROUPING(x, ...)`: one [`AggregateFunction::Grouping`] per
    /// argument, the first the highest bit.
    fn grouping(
        &mut self,
        name: &str,
        args: &[&FunctionArgExpr],
        distinct: bool,
        filter: Option<&ast::Expr>,
        e: &ast::Expr,
    ) -> Result<Expr> {
        if distinct || filter.is_some() || args.is_empty() {
            return Err(bind_err(format!(
                "{name}() takes GROUP BY keys, without DISTINCT or FILTER: \"{e}\"{}",
                at(e.span())
            )));
        }
        let mut bits = Vec::with_capacity(args.len());
        for a in args {
            let FunctionArgExpr::Expr(x) = a else {
                return Err(bind_err(format!(
                    "{name}() takes GROUP BY keys: \"{e}\"{}",
                    at(e.span())
                )));
            };
            let x = self.aggregate_arg(x)?;
            bits.push(self.aggregate_column(AggregateExpr {
                func: AggregateFunction::Grouping,
                arg: Some(x),
                key: None,
                distinct: false,
                order_by: Vec::new(),
            }));
        }
        let n = bits.len();
        let terms = bits
            .into_iter()
            .enumerate()
            .map(|(i, bit)| match n - 1 - i {
                0 => bit,
                shift => Expr::binary(
                    bit,
                    BinaryOp::Multiply,
                    Expr::Literal(ScalarValue::Int64(
                        1i64.checked_shl(shift as u32).unwrap_or(0),
                    )),
                ),
            });
        Ok(terms
            .reduce(|sum, t| Expr::binary(sum, BinaryOp::Plus, t))
            .expect("at least one argument"))
    }

    /// The column standing for aggregate `agg` (one per distinct aggregate).
    fn aggregate_column(&mut self, agg: AggregateExpr) -> Expr {
        let input = self.scope.schema.fields().len();
        let aggregates = self.aggregates.get_or_insert_with(Vec::new);
        let k = match aggregates.iter().position(|a| *a == agg) {
            Some(k) => k,
            None => {
                let arg_type = agg.arg.as_ref().map(|a| a.data_type(&self.types));
                let t =
                    aggregate_result_type(agg.func, arg_type.as_ref()).unwrap_or(DataType::Null);
                let nullable = !matches!(
                    agg.func,
                    AggregateFunction::Count | AggregateFunction::CountStar
                );
                let field = Field::new(agg.to_string(), t, nullable);
                aggregates.push(agg);
                let k = aggregates.len() - 1;
                self.add_placeholder(field, Placeholder::Aggregate(k));
                k
            }
        };
        self.placeholder_column(input, Placeholder::Aggregate(k))
    }

    /// `quantile_cont|quantile_disc(x, q)`: `q` a constant in [0, 1],
    /// kept as the key argument (a DOUBLE literal).
    fn quantile(
        &mut self,
        func: AggregateFunction,
        name: &str,
        args: &[&FunctionArgExpr],
        distinct: bool,
        filter: &Option<Expr>,
        e: &ast::Expr,
    ) -> Result<AggregateExpr> {
        let [FunctionArgExpr::Expr(x), FunctionArgExpr::Expr(q)] = args else {
            return Err(bind_err(format!(
                "{name}() takes exactly two arguments, got {}: \"{e}\"{}",
                args.len(),
                at(e.span())
            )));
        };
        if distinct {
            return Err(unsupported(format!(
                "{name}(DISTINCT ...) is not supported{}",
                at(e.span())
            )));
        }
        let q = self.aggregate_arg(q)?;
        let qt = self.type_of(&q);
        let q = if is_numeric(&canonical(&qt)) {
            self.fold.cast(q, &qt, &DataType::Float64)
        } else {
            q
        };
        let fraction = match self.fold.value(&q) {
            Ok(Some(ScalarValue::Float64(f))) if (0.0..=1.0).contains(&f) => f,
            Ok(Some(ScalarValue::Float64(_))) => {
                return Err(bind_err(format!(
                    "QUANTILE can only take parameters in the range [0, 1]: \"{e}\"{}",
                    at(e.span())
                )));
            }
            _ => {
                return Err(bind_err(format!(
                    "The \"quantile\" argument in function \"{name}\" must be a constant number: \"{e}\"{}",
                    at(e.span())
                )));
            }
        };
        let arg = self.aggregate_arg(x)?;
        let t = self.type_of(&arg);
        let want = canonical(&t);
        let arg = self.fold.cast(arg, &t, &want);
        if aggregate_result_type(func, Some(&want)).is_none() {
            return Err(bind_err(format!(
                "No function matches the given name and argument types '{name}({})': \"{e}\"{}",
                sql_type_name(&t),
                at(e.span())
            )));
        }
        let arg = match filter {
            Some(c) => Expr::Case {
                when_then: vec![(c.clone(), arg)],
                else_expr: None,
            },
            None => arg,
        };
        Ok(AggregateExpr {
            func,
            arg: Some(arg),
            key: Some(Expr::Literal(ScalarValue::Float64(fraction))),
            distinct: false,
            order_by: Vec::new(),
        })
    }

    /// `string_agg(x[, sep])`: `x` as VARCHAR, the separator a constant
    /// VARCHAR (or NULL: the result is NULL) kept as the key argument.
    fn string_agg(
        &mut self,
        name: &str,
        args: &[&FunctionArgExpr],
        distinct: bool,
        filter: &Option<Expr>,
        e: &ast::Expr,
    ) -> Result<AggregateExpr> {
        let (x, sep) = match args {
            [FunctionArgExpr::Expr(x)] => (x, None),
            [FunctionArgExpr::Expr(x), FunctionArgExpr::Expr(sep)] => (x, Some(sep)),
            _ => {
                return Err(bind_err(format!(
                    "{name}() takes one or two arguments, got {}: \"{e}\"{}",
                    args.len(),
                    at(e.span())
                )));
            }
        };
        let key = match sep {
            None => Expr::Literal(ScalarValue::Utf8(",".into())),
            Some(sep) => {
                let sep = self.aggregate_arg(sep)?;
                let sep = self.fold.fold(sep);
                match sep {
                    Expr::Literal(ScalarValue::Utf8(_) | ScalarValue::Null(_)) => sep,
                    _ => {
                        return Err(bind_err(format!(
                            "The separator of {name} must be a constant VARCHAR: \"{e}\"{}",
                            at(e.span())
                        )));
                    }
                }
            }
        };
        let arg = self.aggregate_arg(x)?;
        let t = self.type_of(&arg);
        let arg = self.fold.cast(arg, &t, &DataType::Utf8);
        let arg = match filter {
            Some(c) => Expr::Case {
                when_then: vec![(c.clone(), arg)],
                else_expr: None,
            },
            None => arg,
        };
        Ok(AggregateExpr {
            func: AggregateFunction::StringAgg,
            arg: Some(arg),
            key: Some(key),
            distinct,
            order_by: Vec::new(),
        })
    }

    /// `if(c, a, b)` as CASE, `mod(a, b)` as `a % b`, `date_add(t, i)` as
    /// `t + i`: bound from the arguments' syntax, so they type and fold
    /// exactly as what they stand for.
    fn rewritten_call(
        &mut self,
        kind: FunctionKind,
        name: &str,
        args: &[&FunctionArgExpr],
        e: &ast::Expr,
    ) -> Result<Expr> {
        let mut exprs = Vec::with_capacity(args.len());
        for a in args {
            match a {
                FunctionArgExpr::Expr(x) => exprs.push(x),
                _ => {
                    return Err(bind_err(format!(
                        "* is not a valid argument of {name}{}",
                        at(e.span())
                    )));
                }
            }
        }
        let n = if kind == FunctionKind::If { 3 } else { 2 };
        check_arg_count(name, exprs.len(), n, n, e)?;
        if kind == FunctionKind::If {
            let when = ast::CaseWhen {
                condition: exprs[0].clone(),
                result: exprs[1].clone(),
            };
            return self.case(None, &[when], Some(exprs[2]), e);
        }
        let op = if kind == FunctionKind::Mod {
            BinaryOperator::Modulo
        } else {
            BinaryOperator::Plus
        };
        let l = self.bind(exprs[0])?;
        let r = self.bind(exprs[1])?;
        self.binary(l, exprs[0], &op, r, exprs[1], e)
    }

    fn scalar_function(
        &self,
        func: ScalarFunction,
        mut args: Vec<Expr>,
        e: &ast::Expr,
    ) -> Result<Expr> {
        let name = func.name();
        let types: Vec<DataType> = args.iter().map(|a| canonical(&self.type_of(a))).collect();
        let bad_type = |i: usize, want: &str| {
            bind_err(format!(
                "{name}() argument {} must be {want}, not {}: \"{e}\"{}",
                i + 1,
                sql_type_name(&types[i]),
                at(e.span())
            ))
        };
        let null = DataType::Null;
        if matches!(func, ScalarFunction::Now | ScalarFunction::Today) {
            check_arg_count(name, args.len(), 0, 0, e)?;
            let now = statement_time();
            return Ok(Expr::Literal(if func == ScalarFunction::Now {
                ScalarValue::TimestampMicros(now)
            } else {
                ScalarValue::Date32(now.div_euclid(crate::scalar::MICROS_PER_DAY) as i32)
            }));
        }
        if func == ScalarFunction::EpochMs {
            check_arg_count(name, args.len(), 1, 1, e)?;
            let t = &types[0];
            let want = match t {
                DataType::Date32 | DataType::Timestamp(..) => timestamp_type(),
                t if t.is_integer() || *t == null => DataType::Int64,
                _ => return Err(bad_type(0, "an integer or a TIMESTAMP")),
            };
            let a = args.remove(0);
            let at_ = self.type_of(&a);
            let a = self.fold.cast(a, &at_, &want);
            return Ok(self.fold.fold(Expr::Function {
                func,
                args: vec![a],
            }));
        }
        if let Some((min, max, kinds)) = signature(func) {
            check_arg_count(name, args.len(), min, max, e)?;
            let mut out = Vec::with_capacity(args.len());
            for (i, a) in args.into_iter().enumerate() {
                let kind = kinds[i.min(kinds.len() - 1)];
                let t = &types[i];
                let want = match kind {
                    Arg::AnyString => DataType::Utf8,
                    Arg::String if is_string(t) || *t == null => DataType::Utf8,
                    Arg::String => return Err(bad_type(i, "VARCHAR")),
                    Arg::Integer if t.is_integer() || *t == null => DataType::Int64,
                    Arg::Integer => return Err(bad_type(i, "an integer")),
                    Arg::Double if is_numeric(t) || *t == null => DataType::Float64,
                    Arg::Numeric if *t == null => DataType::Float64,
                    // floor and ceil of an integer are DOUBLE, as in DuckDB
                    Arg::Numeric
                        if t.is_integer()
                            && matches!(func, ScalarFunction::Floor | ScalarFunction::Ceil) =>
                    {
                        DataType::Float64
                    }
                    Arg::Numeric if is_numeric(t) => t.clone(),
                    Arg::Double | Arg::Numeric => return Err(bad_type(i, "numeric")),
                    Arg::Any if *t == null => DataType::Utf8,
                    Arg::Any => t.clone(),
                    Arg::Date | Arg::Timestamp
                        if matches!(t, DataType::Date32 | DataType::Timestamp(..))
                            || is_string(t)
                            || *t == null =>
                    {
                        if matches!(kind, Arg::Date) {
                            DataType::Date32
                        } else {
                            timestamp_type()
                        }
                    }
                    Arg::Date | Arg::Timestamp => return Err(bad_type(i, "a DATE or TIMESTAMP")),
                };
                let at_ = self.type_of(&a);
                out.push(self.fold.cast(a, &at_, &want));
            }
            return Ok(self.fold.fold(Expr::Function { func, args: out }));
        }
        match func {
            ScalarFunction::DateTrunc => {
                check_arg_count(name, args.len(), 2, 2, e)?;
                let part = match self.fold.value(&args[0])? {
                    Some(ScalarValue::Utf8(p)) => p.trim().to_ascii_lowercase(),
                    Some(ScalarValue::Null(_)) => {
                        return Ok(Expr::Literal(ScalarValue::Null(timestamp_type())));
                    }
                    _ => return Err(bad_type(0, "a constant naming a date part")),
                };
                let part = part.strip_suffix('s').unwrap_or(&part).to_string();
                const PARTS: &[&str] = &[
                    "year",
                    "quarter",
                    "month",
                    "week",
                    "day",
                    "hour",
                    "minute",
                    "second",
                    "millisecond",
                    "microsecond",
                ];
                if !PARTS.contains(&part.as_str()) {
                    return Err(bind_err(format!(
                        "date_trunc specifier \"{part}\" not recognized (one of {}){}",
                        PARTS.join(", "),
                        at(e.span())
                    )));
                }
                let t = &types[1];
                if !matches!(
                    t,
                    DataType::Date32 | DataType::Timestamp(..) | DataType::Null
                ) {
                    return Err(bad_type(1, "a DATE or TIMESTAMP"));
                }
                let x = args
                    .pop()
                    .unwrap_or(Expr::Literal(ScalarValue::Null(DataType::Null)));
                let xt = self.type_of(&x);
                let x = self.fold.cast(x, &xt, &timestamp_type());
                return Ok(self.fold.fold(Expr::Function {
                    func,
                    args: vec![Expr::Literal(ScalarValue::Utf8(part)), x],
                }));
            }
            ScalarFunction::Greatest | ScalarFunction::Least => {
                check_arg_count(name, args.len(), 1, usize::MAX, e)?;
                let t = self.common_type(&args, e)?;
                let t = if t == null { DataType::Int32 } else { t };
                let args = args
                    .into_iter()
                    .map(|a| {
                        let at_ = self.type_of(&a);
                        self.fold.cast(a, &at_, &t)
                    })
                    .collect();
                return Ok(self.fold.fold(Expr::Function { func, args }));
            }
            ScalarFunction::Abs => {
                check_arg_count(name, args.len(), 1, 1, e)?;
                if !is_numeric(&types[0]) && types[0] != null {
                    return Err(bad_type(0, "numeric"));
                }
            }
            ScalarFunction::Round => {
                check_arg_count(name, args.len(), 1, 2, e)?;
                if !is_numeric(&types[0]) && types[0] != null {
                    return Err(bad_type(0, "numeric"));
                }
                if args.len() == 2 {
                    let t = &types[1];
                    if !t.is_integer() && *t != null {
                        return Err(bad_type(1, "an integer constant"));
                    }
                    let d = self.fold.cast(args[1].clone(), t, &DataType::Int32);
                    match self.fold.value(&d)? {
                        Some(v) => args[1] = Expr::Literal(v),
                        None => return Err(bad_type(1, "an integer constant")),
                    }
                }
            }
            ScalarFunction::OctetLength => {
                check_arg_count(name, args.len(), 1, 1, e)?;
                if types[0] != DataType::Binary && types[0] != null {
                    return Err(bad_type(0, "BLOB"));
                }
            }
            ScalarFunction::Lower | ScalarFunction::Upper | ScalarFunction::Length => {
                check_arg_count(name, args.len(), 1, 1, e)?;
                if types[0] != DataType::Utf8 && types[0] != null {
                    return Err(bad_type(0, "VARCHAR"));
                }
            }
            ScalarFunction::Substr => {
                check_arg_count(name, args.len(), 2, 3, e)?;
                if types[0] != DataType::Utf8 && types[0] != null {
                    return Err(bad_type(0, "VARCHAR"));
                }
                for (i, t) in types.iter().enumerate().skip(1) {
                    if !t.is_integer() && *t != null {
                        return Err(bad_type(i, "an integer"));
                    }
                }
            }
            ScalarFunction::Coalesce => {
                check_arg_count(name, args.len(), 1, usize::MAX, e)?;
                let t = self.common_type(&args, e)?;
                let mut out = Vec::with_capacity(args.len());
                for a in args {
                    // NULL arguments never decide the result.
                    if matches!(&a, Expr::Literal(v) if v.is_null()) {
                        continue;
                    }
                    let at_ = self.type_of(&a);
                    // A non-NULL constant ends the list.
                    let stop = matches!(&a, Expr::Literal(v) if !v.is_null());
                    out.push(self.fold.cast(a, &at_, &t));
                    if stop {
                        break;
                    }
                }
                match out.len() {
                    0 => return Ok(Expr::Literal(ScalarValue::Null(t))),
                    1 => return Ok(out.remove(0)),
                    _ => {}
                }
                return Ok(self.fold.fold(Expr::Function { func, args: out }));
            }
            _ => {}
        }
        // Canonical argument types: VARCHAR for strings, BIGINT positions.
        let want: Vec<DataType> = match func {
            ScalarFunction::Substr => (0..args.len())
                .map(|i| {
                    if i == 0 {
                        DataType::Utf8
                    } else {
                        DataType::Int64
                    }
                })
                .collect(),
            ScalarFunction::Lower | ScalarFunction::Upper | ScalarFunction::Length => {
                vec![DataType::Utf8]
            }
            _ => types
                .iter()
                .map(|t| {
                    if *t == null {
                        DataType::Int32
                    } else {
                        t.clone()
                    }
                })
                .collect(),
        };
        let args = args
            .into_iter()
            .zip(want)
            .map(|(a, w)| {
                let t = self.type_of(&a);
                self.fold.cast(a, &t, &w)
            })
            .collect();
        Ok(self.fold.fold(Expr::Function { func, args }))
    }

    fn date_part(&self, part: String, x: Expr, e: &ast::Expr) -> Result<Expr> {
        let xt = canonical(&self.type_of(&x));
        let x = match (&x, &xt) {
            (Expr::Literal(ScalarValue::Utf8(s)), _) => {
                // a string is a DATE if it reads as one, else a TIMESTAMP
                let date = self
                    .fold
                    .cast(x.clone(), &DataType::Utf8, &DataType::Date32);
                let date_only = s.trim().len() <= 10;
                if matches!(date, Expr::Literal(_)) || date_only {
                    date
                } else {
                    self.fold.cast(x, &DataType::Utf8, &timestamp_type())
                }
            }
            (_, DataType::Date32 | DataType::Timestamp(..)) => {
                let t = self.type_of(&x);
                self.fold.cast(x, &t, &xt)
            }
            (_, DataType::Null) => Expr::Literal(ScalarValue::Null(DataType::Date32)),
            _ => {
                return Err(bind_err(format!(
                    "date_part/EXTRACT needs a DATE or TIMESTAMP, not {}: \"{e}\"{}",
                    sql_type_name(&xt),
                    at(e.span())
                )));
            }
        };
        Ok(self.fold.fold(Expr::Function {
            func: ScalarFunction::DatePart,
            args: vec![Expr::Literal(ScalarValue::Utf8(part)), x],
        }))
    }
}

thread_local! {
    /// What now() and current_date give: read at the first now() of a
    /// planning call and kept until the next call starts
    /// ([`start_statement_time`]), so every now() of a statement agrees,
    /// as DuckDB's transaction time.
    static STATEMENT_TIME: std::cell::Cell<Option<i64>> = const { std::cell::Cell::new(None) };
}

/// Forgets the time of the previous planning call on this thread, until
/// the guard drops and gives it back: a plan made while planning (on the
/// same thread) keeps its own time and leaves the outer one's alone.
pub(crate) fn start_statement_time() -> StatementTimeGuard {
    StatementTimeGuard {
        previous: STATEMENT_TIME.with(|t| t.replace(None)),
    }
}

/// Restores the statement time seen before [`start_statement_time`].
pub(crate) struct StatementTimeGuard {
    previous: Option<i64>,
}

impl Drop for StatementTimeGuard {
    fn drop(&mut self) {
        STATEMENT_TIME.with(|t| t.set(self.previous));
    }
}

/// The statement's time, in microseconds since 1970-01-01 (UTC).
fn statement_time() -> i64 {
    STATEMENT_TIME.with(|t| match t.get() {
        Some(now) => now,
        None => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_micros() as i64);
            t.set(Some(now));
            now
        }
    })
}

/// What a placeholder column past an [`ExprBinder`]'s scope stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Placeholder {
    /// The `k`-th aggregate.
    Aggregate(usize),
    /// The `k`-th window function.
    Window(usize),
    /// The `k`-th subquery.
    Subquery(usize),
}

/// An aggregate call as written: its name, arguments, DISTINCT, FILTER,
/// and the registry's rewrite for `count_if`, `bool_and`, `bool_or`.
pub(crate) struct AggregateCall<'a> {
    pub(crate) name: &'a str,
    pub(crate) args: &'a [&'a FunctionArgExpr],
    pub(crate) distinct: bool,
    pub(crate) filter: Option<&'a ast::Expr>,
    /// `ORDER BY` inside the call.
    pub(crate) order_by: &'a [ast::OrderByExpr],
    /// How a call of the registry's other aggregate kinds (count_if,
    /// bool_and, bool_or) rewrites to its aggregate.
    pub(crate) rewrite: Option<FunctionKind>,
}

/// The aggregate a function of the registry binds to, and the rewrite of
/// its argument (count_if, bool_and, bool_or); `None` if it is none.
pub(crate) fn aggregate_kind(
    kind: FunctionKind,
) -> Option<(AggregateFunction, Option<FunctionKind>)> {
    match kind {
        FunctionKind::Aggregate(f) => Some((f, None)),
        k @ FunctionKind::CountIf => Some((AggregateFunction::Sum, Some(k))),
        FunctionKind::ApproxCountDistinct => Some((AggregateFunction::Count, None)),
        k @ FunctionKind::BoolAnd => Some((AggregateFunction::Min, Some(k))),
        k @ FunctionKind::BoolOr => Some((AggregateFunction::Max, Some(k))),
        _ => None,
    }
}

/// Whether the registry's function counts distinct values whether or
/// not the call says DISTINCT (`approx_count_distinct`).
pub(crate) fn counts_distinct(kind: FunctionKind) -> bool {
    kind == FunctionKind::ApproxCountDistinct
}

/// Why a window function may not stand inside another's arguments.
const NESTED_WINDOWS: &str = "window functions cannot be nested";

/// What an argument of a function of the registry takes.
#[derive(Clone, Copy)]
enum Arg {
    /// A VARCHAR (or NULL).
    String,
    /// Any value, converted to VARCHAR.
    AnyString,
    /// An integer, as BIGINT.
    Integer,
    /// A number, as DOUBLE.
    Double,
    /// A number, kept in its type.
    Numeric,
    /// Any value, kept in its type (NULL as VARCHAR).
    Any,
    /// A DATE, TIMESTAMP or string, as DATE.
    Date,
    /// A DATE, TIMESTAMP or string, as TIMESTAMP.
    Timestamp,
}

/// A LIKE's escape character as bound: a constant (`None`: no escape),
/// or an expression of each row.
enum Escape {
    Char(Option<char>),
    Rows(Expr),
}

/// `(min args, max args, kinds)` of a function typed by its arguments'
/// kinds alone (the last kind repeats); `None` for the functions with
/// rules of their own.
fn signature(func: ScalarFunction) -> Option<(usize, usize, &'static [Arg])> {
    use Arg::*;
    use ScalarFunction as F;
    Some(match func {
        F::Concat => (1, usize::MAX, &[AnyString]),
        F::ConcatWs => (2, usize::MAX, &[String, AnyString]),
        F::Strpos | F::StartsWith | F::EndsWith | F::Contains => (2, 2, &[String]),
        F::Replace | F::LikeEscape | F::IlikeEscape => (3, 3, &[String]),
        F::Glob => (2, 2, &[String]),
        F::Trim | F::Ltrim | F::Rtrim => (1, 2, &[String]),
        F::Left | F::Right | F::Repeat => (2, 2, &[String, Integer]),
        F::Lpad | F::Rpad => (3, 3, &[String, Integer, String]),
        F::Reverse => (1, 1, &[String]),
        F::Sqrt | F::Exp | F::Ln | F::Log10 | F::Log2 => (1, 1, &[Double]),
        F::Log => (1, 2, &[Double]),
        F::Power => (2, 2, &[Double]),
        F::Floor | F::Ceil | F::Trunc | F::Sign => (1, 1, &[Numeric]),
        F::RegexpMatches | F::RegexpFullMatch => (2, 3, &[String]),
        F::RegexpExtract => (2, 3, &[String, String, Integer]),
        F::RegexpReplace => (3, 4, &[String]),
        F::Printf | F::Format => (1, usize::MAX, &[String, Any]),
        F::Md5 | F::Ascii | F::Error => (1, 1, &[String]),
        F::Levenshtein => (2, 2, &[String]),
        F::SplitPart => (3, 3, &[String, String, Integer]),
        F::Translate => (3, 3, &[String]),
        F::Chr => (1, 1, &[Integer]),
        F::Gcd | F::Lcm => (2, 2, &[Integer]),
        F::Random | F::Pi | F::Now | F::Today => (0, 0, &[Double]),
        F::SetSeed
        | F::Sin
        | F::Cos
        | F::Tan
        | F::Cot
        | F::Asin
        | F::Acos
        | F::Atan
        | F::Degrees
        | F::Radians
        | F::Cbrt
        | F::IsNan
        | F::IsInf
        | F::IsFinite => (1, 1, &[Double]),
        F::Atan2 => (2, 2, &[Double]),
        F::DateDiff => (3, 3, &[String, Timestamp]),
        F::Strftime => (2, 2, &[Timestamp, String]),
        F::Strptime => (2, 2, &[String]),
        F::MakeDate => (3, 3, &[Integer]),
        F::MakeTimestamp => (6, 6, &[Integer, Integer, Integer, Integer, Integer, Double]),
        F::LastDay | F::DayName | F::MonthName => (1, 1, &[Date]),
        _ => return None,
    })
}

/// The operator of a binary node if it is AND, OR or `||`, whose chains
/// are not nesting.
fn associative(e: &ast::Expr) -> Option<BinaryOp> {
    match e {
        ast::Expr::BinaryOp { op, .. } => match op {
            BinaryOperator::And => Some(BinaryOp::And),
            BinaryOperator::Or => Some(BinaryOp::Or),
            BinaryOperator::StringConcat => Some(BinaryOp::Concat),
            _ => None,
        },
        _ => None,
    }
}

fn check_arg_count(name: &str, n: usize, min: usize, max: usize, e: &ast::Expr) -> Result<()> {
    if n < min || n > max {
        let want = if min == max {
            format!("{min}")
        } else if max == usize::MAX {
            format!("at least {min}")
        } else {
            format!("{min} to {max}")
        };
        return Err(bind_err(format!(
            "{name}() takes {want} arguments but {n} were given: \"{e}\"{}",
            at(e.span())
        )));
    }
    Ok(())
}

/// A constant from the AST.
fn literal(v: &Value, e: &ast::Expr) -> Result<Expr> {
    let s = match v {
        Value::Number(n, _) => {
            return number_literal(n)
                .map(Expr::Literal)
                .ok_or_else(|| bind_err(format!("invalid number {n}{}", at(e.span()))));
        }
        Value::Boolean(b) => ScalarValue::Boolean(*b),
        Value::Null => ScalarValue::Null(DataType::Null),
        Value::SingleQuotedString(s)
        | Value::DoubleQuotedString(s)
        | Value::EscapedStringLiteral(s)
        | Value::NationalStringLiteral(s)
        | Value::TripleSingleQuotedString(s)
        | Value::TripleDoubleQuotedString(s) => ScalarValue::Utf8(s.clone()),
        Value::Placeholder(p) => {
            return Err(unsupported(format!(
                "prepared statement parameters are not supported ({p}){}",
                at(e.span())
            )));
        }
        other => {
            return Err(unsupported(format!(
                "literal {other} is not supported{}",
                at(e.span())
            )));
        }
    };
    Ok(Expr::Literal(s))
}

fn extract_field(f: &DateTimeField) -> Option<String> {
    use DateTimeField as F;
    Some(
        match f {
            F::Year | F::Years => "year",
            F::Month | F::Months => "month",
            F::Day | F::Days => "day",
            F::Hour | F::Hours => "hour",
            F::Minute | F::Minutes => "minute",
            F::Second | F::Seconds => "second",
            F::Dow | F::DayOfWeek => "dow",
            F::Doy | F::DayOfYear => "doy",
            F::Quarter => "quarter",
            F::Week(None) | F::Weeks => "week",
            F::Epoch => "epoch",
            F::Custom(id) => return normalize_date_part(&id.value),
            _ => return None,
        }
        .to_string(),
    )
}

/// The unit word of `INTERVAL n <unit>`.
fn interval_unit(f: &DateTimeField) -> Option<&'static str> {
    use DateTimeField as F;
    Some(match f {
        F::Year | F::Years => "year",
        F::Quarter => "quarter",
        F::Month | F::Months => "month",
        F::Week(None) | F::Weeks => "week",
        F::Day | F::Days => "day",
        F::Hour | F::Hours => "hour",
        F::Minute | F::Minutes => "minute",
        F::Second | F::Seconds => "second",
        F::Millisecond | F::Milliseconds => "millisecond",
        F::Microsecond | F::Microseconds => "microsecond",
        _ => return None,
    })
}

fn normalize_date_part(p: &str) -> Option<String> {
    let p = p.trim().to_ascii_lowercase();
    let p = match p.as_str() {
        "dayofweek" | "weekday" => "dow".to_string(),
        "dayofyear" => "doy".to_string(),
        _ => p,
    };
    if DATE_PARTS.contains(&p.as_str()) {
        return Some(p);
    }
    let singular = p.strip_suffix('s')?;
    DATE_PARTS.contains(&singular).then(|| singular.to_string())
}

use crate::types::is_numeric;

/// DuckDB's integer literal rule: an integer literal as written (`1`,
/// `-5`, not a cast nor a folded expression) beside an operand of another
/// integer type takes that type when its value fits it, so `tinyint_col + 1`
/// is TINYINT and `utinyint_col = 300` compares as INTEGER. `e` is the
/// binary expression `l op r`; the type both sides take, if the rule applies.
fn literal_adopts(
    l: &Expr,
    r: &Expr,
    lt: &DataType,
    rt: &DataType,
    e: &ast::Expr,
) -> Option<DataType> {
    let ast::Expr::BinaryOp { left, right, .. } = e else {
        return None;
    };
    let value = |x: &Expr| match x {
        Expr::Literal(ScalarValue::Int32(v)) => Some(*v as i128),
        Expr::Literal(ScalarValue::Int64(v)) => Some(*v as i128),
        _ => None,
    };
    if is_integer_literal(left) && !is_integer_literal(right) {
        let v = value(l)?;
        return integer_fits(v, rt).then(|| rt.clone());
    }
    if is_integer_literal(right) && !is_integer_literal(left) {
        let v = value(r)?;
        return integer_fits(v, lt).then(|| lt.clone());
    }
    None
}

/// True for an integer literal as written: digits, maybe negated or in
/// parentheses.
fn is_integer_literal(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::Nested(inner) => is_integer_literal(inner),
        ast::Expr::UnaryOp {
            op: UnaryOperator::Minus | UnaryOperator::Plus,
            expr,
        } => is_integer_literal(expr),
        ast::Expr::Value(v) => {
            matches!(&v.value, Value::Number(n, _) if n.bytes().all(|b| b.is_ascii_digit()))
        }
        _ => false,
    }
}

/// Whether `e` is a quoted string literal, possibly in parentheses.
fn is_string_literal(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::Nested(inner) => is_string_literal(inner),
        ast::Expr::Value(v) => matches!(
            v.value,
            Value::SingleQuotedString(_)
                | Value::DoubleQuotedString(_)
                | Value::EscapedStringLiteral(_)
                | Value::NationalStringLiteral(_)
                | Value::TripleSingleQuotedString(_)
                | Value::TripleDoubleQuotedString(_)
        ),
        _ => false,
    }
}

fn is_string(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

/// The custom operator the dialect reads `x GLOB p` as.
pub(crate) const GLOB: &str = "GLOB";
