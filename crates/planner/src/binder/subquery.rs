//! Subqueries inside expressions: a scalar subquery, `EXISTS` and `IN`
//! wherever an expression may stand (the SELECT list, CASE, function
//! arguments, ORDER BY, HAVING, WHERE under OR and NOT, UPDATE and
//! DELETE), decorrelated into joins: never run again per row.
//!
//! The expression binder binds each subquery to a placeholder column
//! ([`super::expr::Placeholder::Subquery`]) and keeps it here as a
//! [`BoundSubquery`]: the plans to join and the outer expressions they
//! are joined on. Whoever binds the expression then maps those outer
//! expressions as it maps the expression itself and calls [`attach`] on
//! the plan the expression is evaluated over: each subquery adds one
//! column after that plan's columns, in order.
//!
//! A subquery is uncorrelated, or correlated by equalities between the
//! outer query and its own columns in its WHERE (`u.k = t.k`), which
//! become join keys: its rows are grouped by the inner sides of them (the
//! "keys"). Per kind:
//! - scalar, uncorrelated: a SINGLE join (more than one row is an error);
//! - scalar, correlated, aggregating: grouped by the keys and LEFT joined
//!   on them; an outer row without a group gets the aggregate's value
//!   over no rows (0 for `count`), folded to a constant or joined from
//!   the subquery over no rows;
//! - scalar, correlated, not aggregating: the keys with each group's
//!   count of rows and a value, LEFT joined; a count above 1 raises
//!   DuckDB's "More than one row" error for the rows that meet it;
//! - `EXISTS`: uncorrelated, one row saying whether there is one;
//!   correlated, the distinct keys LEFT joined (matched means TRUE);
//! - `x IN (q)`: the distinct non-NULL values (with the keys) LEFT joined
//!   on `x` (and the keys), and each group's count of rows and of
//!   non-NULL values, so `x IN (q)` is TRUE on a match, FALSE for an
//!   empty `q`, else NULL when `x` is NULL or `q` holds a NULL, else
//!   FALSE; `NOT IN` is its negation.

use arrow_schema::{DataType, Field, Schema, SchemaRef};
use sqlparser::ast::{self, SetExpr, Spanned};
use sqlparser::tokenizer::Span;

use super::coerce::comparison_type;
use super::expr::{ExprBinder, Placeholder, Scope};
use super::join::{correlation_hint, make_join, map_columns};
use super::{Binder, at, bind_err, unsupported};
use crate::error::Result;
use crate::expr::{BinaryOp, Expr, ScalarFunction};
use crate::plan::{AggregateExpr, AggregateFunction, JoinKind, LogicalPlan};
use crate::scalar::ScalarValue;
use crate::types::sql_type_name;

/// DuckDB's error for a scalar subquery giving an outer row two rows.
pub(crate) const TOO_MANY_ROWS: &str = "More than one row returned by a subquery used as an expression - scalar subqueries can only return a single row.";

/// The qualifier of the correlation keys appended to a correlated
/// subquery's columns.
const KEYS: &str = "__correlation";

/// A correlation other than equalities (`s.w > t.v`) is decorrelated
/// through the outer query's "domain": the distinct values of the outer
/// columns it reads. The subquery's rows are joined with the domain on
/// the correlation, so they carry those values as keys, and the outer
/// rows are then joined on them as for equalities. The domain is only
/// known where the subquery is attached, so its plans hold an empty
/// VALUES leaf whose schema carries this metadata key (with a unique id)
/// in its place until then.
const DOMAIN: &str = "weir.subquery.domain";

/// Numbers the domain leaves of a statement's plans.
static DOMAINS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// What a subquery is tested for.
pub(crate) enum Tested {
    /// Its one value (`(SELECT ...)`).
    Scalar,
    /// `[NOT] EXISTS (q)`.
    Exists {
        /// `NOT EXISTS`.
        negated: bool,
    },
    /// `probe op ANY|ALL (q)` for `op` one of `<`, `<=`, `>`, `>=`, and
    /// `= ALL`, `<> ANY` (`= ANY` is `IN`, `<> ALL` is `NOT IN`).
    Quantified {
        /// The tested value, over the enclosing binder's columns.
        probe: Expr,
        /// Its type.
        probe_type: DataType,
        /// The comparison.
        op: BinaryOp,
        /// ALL (else ANY).
        all: bool,
        /// Where the tested value is written, for messages.
        at: Span,
    },
    /// `probe [NOT] IN (q)`.
    In {
        /// The tested value, over the enclosing binder's columns.
        probe: Expr,
        /// Its type.
        probe_type: DataType,
        /// `NOT IN`.
        negated: bool,
        /// Where the tested value is written, for messages.
        at: Span,
    },
}

/// A subquery of an expression, planned: what to join and on what.
pub(crate) struct BoundSubquery {
    shape: Shape,
    /// The outer sides of the correlation equalities, over the enclosing
    /// binder's columns (then mapped by the caller), of the keys' types.
    outer: Vec<Expr>,
    /// `IN`: the tested value, cast to the type compared.
    probe: Option<Expr>,
    /// `NOT EXISTS`, `NOT IN`.
    negated: bool,
    /// The column it adds.
    pub(crate) field: Field,
    /// For a correlation other than equalities: the id of the leaf of its
    /// plans that stands for the distinct values of `outer` in the plan it
    /// is attached to.
    domain: Option<String>,
}

/// The value of an aggregating correlated subquery for an outer row
/// without rows.
enum Empty {
    /// NULL.
    Null,
    /// A constant.
    Value(Expr),
    /// The one row of this plan (the subquery over no rows).
    Plan(LogicalPlan),
}

enum Shape {
    /// An uncorrelated scalar subquery: one column, at most one row.
    Single(LogicalPlan),
    /// An aggregating correlated scalar subquery: the keys, the value.
    Grouped { plan: LogicalPlan, empty: Empty },
    /// A correlated scalar subquery that does not aggregate: the keys,
    /// the group's rows, a value.
    Rows(LogicalPlan),
    /// `EXISTS`: uncorrelated, one row of one BOOLEAN; correlated, the
    /// distinct keys.
    Exists(LogicalPlan),
    /// `op ANY|ALL`: the keys with their count of rows and of non-NULL
    /// values and the smallest and largest value (one row when
    /// uncorrelated).
    Quantified {
        counts: LogicalPlan,
        op: BinaryOp,
        all: bool,
    },
    /// `IN`: the distinct keys and non-NULL values; the keys with their
    /// count of rows and of non-NULL values (one row when uncorrelated).
    In {
        distinct: LogicalPlan,
        counts: LogicalPlan,
    },
}

/// The rows a subquery reads: its plan when uncorrelated, else its FROM
/// and own WHERE with the inner sides of the correlation as extra
/// columns (`__correlation.__key0`, ...).
enum Source<'q> {
    Uncorrelated(LogicalPlan),
    Correlated(Correlated<'q>),
}

struct Correlated<'q> {
    select: &'q ast::Select,
    plan: LogicalPlan,
    scope: Scope,
    /// The outer sides, over the outer scope.
    outer: Vec<Expr>,
    /// The id of the domain leaf of `plan`, for a correlation other than
    /// equalities (see [`DOMAIN`]).
    domain: Option<String>,
}

impl Correlated<'_> {
    fn keys(&self) -> usize {
        self.outer.len()
    }

    /// The first key column.
    fn first_key(&self) -> usize {
        self.scope.schema.fields().len() - self.keys()
    }

    fn key_columns(&self) -> Vec<Expr> {
        let first = self.first_key();
        (0..self.keys())
            .map(|i| Expr::column(first + i, format!("__key{i}")))
            .collect()
    }

    fn key_idents(&self) -> Vec<ast::Expr> {
        (0..self.keys())
            .map(|i| {
                ast::Expr::CompoundIdentifier(vec![
                    ast::Ident::new(KEYS),
                    ast::Ident::new(format!("__key{i}")),
                ])
            })
            .collect()
    }

    /// The one item of the subquery's SELECT list.
    fn item(&self, query: &ast::Query) -> Result<&ast::Expr> {
        match self.select.projection.as_slice() {
            [ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. }] => {
                Ok(e)
            }
            [_] => Err(unsupported(format!(
                "a correlated subquery selecting {} is not supported{}",
                self.select.projection[0],
                at(query.span())
            ))),
            items => Err(bind_err(format!(
                "Subquery returns {} columns - expected 1{}",
                items.len(),
                at(query.span())
            ))),
        }
    }
}

impl BoundSubquery {
    /// This subquery with its outer expressions mapped by `f` (onto the
    /// columns of the plan it is attached to).
    pub(crate) fn map_exprs(mut self, f: &mut impl FnMut(Expr) -> Result<Expr>) -> Result<Self> {
        self.outer = self.outer.into_iter().map(&mut *f).collect::<Result<_>>()?;
        self.probe = self.probe.map(f).transpose()?;
        Ok(self)
    }

    /// The columns its outer expressions read.
    pub(crate) fn columns(&self) -> Vec<usize> {
        self.outer
            .iter()
            .chain(&self.probe)
            .flat_map(Expr::columns)
            .collect()
    }

    /// As a relation of a WHERE clause's join: an uncorrelated scalar
    /// subquery (a SINGLE join) or an aggregating correlated one whose
    /// value over no rows is NULL (an inner join on the keys: a missing
    /// group fails every comparison, as NULL would). Returns the plan,
    /// whether it is a SINGLE join, and the outer sides of the keys,
    /// which are its first columns; its value is the last. `None` for
    /// the others.
    pub(crate) fn into_relation(self) -> Option<(LogicalPlan, bool, Vec<Expr>)> {
        if self.domain.is_some() {
            return None;
        }
        match self.shape {
            Shape::Single(plan) => Some((plan, true, Vec::new())),
            Shape::Grouped {
                plan,
                empty: Empty::Null,
            } => Some((plan, false, self.outer)),
            _ => None,
        }
    }

    /// Joins this subquery to `plan`, whose columns its outer
    /// expressions now name: `plan`'s columns and then its value.
    fn attach_one(mut self, plan: LogicalPlan) -> LogicalPlan {
        let w = plan.schema().fields().len();
        let k = self.outer.len();
        if let Some(id) = self.domain.take() {
            // the distinct values of the outer columns the correlation reads
            let values = aggregate(plan.clone(), self.outer.clone(), Vec::new());
            let put = |p: LogicalPlan| with_domain(p, &id, &values);
            self.shape = match self.shape {
                Shape::Single(p) => Shape::Single(put(p)),
                Shape::Grouped { plan: p, empty } => Shape::Grouped {
                    plan: put(p),
                    empty: match empty {
                        Empty::Plan(e) => Empty::Plan(put(e)),
                        other => other,
                    },
                },
                Shape::Rows(p) => Shape::Rows(put(p)),
                Shape::Exists(p) => Shape::Exists(put(p)),
                Shape::In { distinct, counts } => Shape::In {
                    distinct: put(distinct),
                    counts: put(counts),
                },
                Shape::Quantified { counts, op, all } => Shape::Quantified {
                    counts: put(counts),
                    op,
                    all,
                },
            };
        }
        let outer = self.outer;
        let key_terms = |base: usize| -> Vec<Expr> {
            outer
                .iter()
                .enumerate()
                .map(|(i, o)| {
                    Expr::binary(
                        o.clone(),
                        BinaryOp::Eq,
                        Expr::column(base + i, format!("__key{i}")),
                    )
                })
                .collect()
        };
        let col = |i: usize, name: &str| Expr::column(i, name);
        let is_null = |e: Expr| Expr::IsNull(Box::new(e));
        let boolean = |b: bool| Expr::Literal(ScalarValue::Boolean(b));
        let (joined, mut result) = match self.shape {
            Shape::Single(r) => (
                make_join(plan, r, JoinKind::Single, Vec::new()),
                col(w, "__value"),
            ),
            Shape::Grouped { plan: r, empty } => {
                let joined = make_join(plan, r, JoinKind::Left, key_terms(w));
                let value = col(w + k, "__value");
                let missing = is_null(col(w, "__key0"));
                match empty {
                    Empty::Null => (joined, value),
                    Empty::Value(v) => (
                        joined,
                        Expr::Case {
                            when_then: vec![(missing, v)],
                            else_expr: Some(Box::new(value)),
                        },
                    ),
                    Empty::Plan(e) => {
                        let joined = make_join(joined, e, JoinKind::Single, Vec::new());
                        let t = joined.schema().field(w + k).data_type().clone();
                        let over_none = cast(col(w + k + 1, "__empty"), &joined, w + k + 1, &t);
                        (
                            joined,
                            Expr::Case {
                                when_then: vec![(missing, over_none)],
                                else_expr: Some(Box::new(value)),
                            },
                        )
                    }
                }
            }
            Shape::Rows(r) => {
                let joined = make_join(plan, r, JoinKind::Left, key_terms(w));
                let t = joined.schema().field(w + k + 1).data_type().clone();
                let rows = col(w + k, "__rows");
                let error = Expr::Cast {
                    expr: Box::new(Expr::Function {
                        func: ScalarFunction::Error,
                        args: vec![Expr::Literal(ScalarValue::Utf8(TOO_MANY_ROWS.into()))],
                    }),
                    to: t,
                    try_cast: false,
                };
                let many = Expr::binary(rows, BinaryOp::Gt, Expr::Literal(ScalarValue::Int64(1)));
                (
                    joined,
                    Expr::Case {
                        when_then: vec![(many, error)],
                        else_expr: Some(Box::new(col(w + k + 1, "__value"))),
                    },
                )
            }
            Shape::Exists(r) if k == 0 => (
                make_join(plan, r, JoinKind::Single, Vec::new()),
                col(w, "__exists"),
            ),
            Shape::Exists(r) => {
                let joined = make_join(plan, r, JoinKind::Left, key_terms(w));
                (joined, Expr::IsNotNull(Box::new(col(w, "__key0"))))
            }
            Shape::Quantified { counts, op, all } => {
                let probe = self.probe.expect("a quantified comparison has a probe");
                let joined = if k == 0 {
                    make_join(plan, counts, JoinKind::Single, Vec::new())
                } else {
                    make_join(plan, counts, JoinKind::Left, key_terms(w))
                };
                let rows = col(w + k, "__rows");
                let values = col(w + k + 1, "__values");
                let (min, max) = (col(w + k + 2, "__min"), col(w + k + 3, "__max"));
                let cmp = |l: Expr, op: BinaryOp, r: Expr| Expr::binary(l, op, r);
                let x = probe.clone();
                // ANY: some value makes the comparison TRUE; ALL: some
                // value makes it FALSE
                let decided = match (op, all) {
                    (BinaryOp::Gt, false) => cmp(x, BinaryOp::Gt, min),
                    (BinaryOp::GtEq, false) => cmp(x, BinaryOp::GtEq, min),
                    (BinaryOp::Lt, false) => cmp(x, BinaryOp::Lt, max),
                    (BinaryOp::LtEq, false) => cmp(x, BinaryOp::LtEq, max),
                    (BinaryOp::Gt, true) => cmp(x, BinaryOp::LtEq, max),
                    (BinaryOp::GtEq, true) => cmp(x, BinaryOp::Lt, max),
                    (BinaryOp::Lt, true) => cmp(x, BinaryOp::GtEq, min),
                    (BinaryOp::LtEq, true) => cmp(x, BinaryOp::Gt, min),
                    // `<> ANY`, `= ALL`: a value other than x
                    _ => Expr::binary(
                        cmp(x.clone(), BinaryOp::NotEq, min),
                        BinaryOp::Or,
                        cmp(x, BinaryOp::NotEq, max),
                    ),
                };
                let null = Expr::Literal(ScalarValue::Null(DataType::Boolean));
                (
                    joined,
                    Expr::Case {
                        when_then: vec![
                            (is_null(rows.clone()), boolean(all)),
                            (
                                Expr::binary(
                                    rows.clone(),
                                    BinaryOp::Eq,
                                    Expr::Literal(ScalarValue::Int64(0)),
                                ),
                                boolean(all),
                            ),
                            (is_null(probe), null.clone()),
                            (decided, boolean(!all)),
                            (Expr::binary(rows, BinaryOp::Gt, values), null),
                        ],
                        else_expr: Some(Box::new(boolean(all))),
                    },
                )
            }
            Shape::In { distinct, counts } => {
                let probe = self.probe.expect("IN has a probe");
                let mut terms = key_terms(w);
                terms.push(Expr::binary(
                    probe.clone(),
                    BinaryOp::Eq,
                    col(w + k, "__value"),
                ));
                let joined = make_join(plan, distinct, JoinKind::Left, terms);
                let base = w + k + 1;
                let joined = if k == 0 {
                    make_join(joined, counts, JoinKind::Single, Vec::new())
                } else {
                    make_join(joined, counts, JoinKind::Left, key_terms(base))
                };
                let rows = col(base + k, "__rows");
                let values = col(base + k + 1, "__values");
                let null = Expr::Literal(ScalarValue::Null(DataType::Boolean));
                (
                    joined,
                    Expr::Case {
                        when_then: vec![
                            (Expr::IsNotNull(Box::new(col(w, "__match"))), boolean(true)),
                            (is_null(rows.clone()), boolean(false)),
                            (
                                Expr::binary(
                                    rows.clone(),
                                    BinaryOp::Eq,
                                    Expr::Literal(ScalarValue::Int64(0)),
                                ),
                                boolean(false),
                            ),
                            (is_null(probe), null.clone()),
                            (Expr::binary(rows, BinaryOp::Gt, values), null),
                        ],
                        else_expr: Some(Box::new(boolean(false))),
                    },
                )
            }
        };
        if self.negated {
            result = Expr::Not(Box::new(result));
        }
        let js = joined.schema();
        let mut exprs: Vec<Expr> = (0..w)
            .map(|i| Expr::column(i, js.field(i).name().clone()))
            .collect();
        let mut fields: Vec<Field> = (0..w).map(|i| js.field(i).as_ref().clone()).collect();
        exprs.push(result);
        fields.push(self.field);
        LogicalPlan::Projection {
            input: Box::new(joined),
            exprs,
            schema: SchemaRef::new(Schema::new(fields)),
        }
    }
}

/// `plan` with its domain leaf `id` replaced by `values`.
fn with_domain(plan: LogicalPlan, id: &str, values: &LogicalPlan) -> LogicalPlan {
    match plan {
        LogicalPlan::Values { schema, .. }
            if schema.metadata().get(DOMAIN).is_some_and(|v| v == id) =>
        {
            values.clone()
        }
        other => other.map_inputs(&mut |p| with_domain(p, id, values)),
    }
}

/// True if the comparison `t` is NULL whenever a column it reads is NULL
/// (its operands only compute with NULL-propagating operators): then an
/// outer row with a NULL there has no rows in the subquery, as the
/// domain join on equal values gives it.
fn null_rejecting(t: &Expr) -> bool {
    fn strict(e: &Expr) -> bool {
        match e {
            Expr::Column(_) | Expr::Literal(_) => true,
            Expr::Binary { op, left, right } if op.is_arithmetic() => strict(left) && strict(right),
            Expr::Cast { expr, .. } | Expr::Negative(expr) => strict(expr),
            _ => false,
        }
    }
    matches!(t, Expr::Binary { op, left, right } if op.is_comparison() && strict(left) && strict(right))
}

/// `e` (column `i` of `plan`) cast to `t` if its type differs.
fn cast(e: Expr, plan: &LogicalPlan, i: usize, t: &DataType) -> Expr {
    if plan.schema().field(i).data_type() == t {
        e
    } else {
        Expr::Cast {
            expr: Box::new(e),
            to: t.clone(),
            try_cast: false,
        }
    }
}

/// Joins `subs` to `plan` in order: subquery `k` becomes column
/// `width + k`. Their outer expressions must name `plan`'s columns (and
/// those of the subqueries before them).
pub(crate) fn attach(plan: LogicalPlan, subs: Vec<BoundSubquery>) -> LogicalPlan {
    subs.into_iter().fold(plan, |p, s| s.attach_one(p))
}

/// `plan` filtered by `predicate`, which may read the placeholder
/// columns of `subs` (bound by a binder whose only placeholders they
/// are): the subqueries are joined, the filter applied, and their
/// columns dropped again.
pub(crate) fn filter_with(
    plan: LogicalPlan,
    predicate: Expr,
    subs: Vec<BoundSubquery>,
) -> LogicalPlan {
    if subs.is_empty() {
        return LogicalPlan::Filter {
            input: Box::new(plan),
            predicate,
        };
    }
    let schema = plan.schema();
    let filtered = LogicalPlan::Filter {
        input: Box::new(attach(plan, subs)),
        predicate,
    };
    LogicalPlan::Projection {
        input: Box::new(filtered),
        exprs: (0..schema.fields().len())
            .map(|i| Expr::column(i, schema.field(i).name().clone()))
            .collect(),
        schema,
    }
}

/// `left kind JOIN right ON predicate` where `predicate` (over both
/// sides' columns) reads the placeholder columns of `subs`: each
/// subquery is joined to the side its outer expressions read (an
/// uncorrelated one to the left), the join made, and the subqueries'
/// columns dropped.
pub(crate) fn join_with(
    left: LogicalPlan,
    right: LogicalPlan,
    kind: JoinKind,
    predicate: Expr,
    subs: Vec<BoundSubquery>,
) -> Result<LogicalPlan> {
    let ln = left.schema().fields().len();
    let rn = right.schema().fields().len();
    let (mut on_left, mut on_right) = (Vec::new(), Vec::new());
    // per subquery: on the right side, and its place there
    let mut slots = Vec::with_capacity(subs.len());
    for sub in subs {
        let cols = sub.columns();
        if cols.iter().all(|&c| c < ln) {
            slots.push((false, on_left.len()));
            on_left.push(sub);
        } else if cols.iter().all(|&c| c >= ln && c < ln + rn) {
            slots.push((true, on_right.len()));
            on_right.push(sub.map_exprs(&mut |e| Ok(map_columns(&e, &|c| c - ln)))?);
        } else {
            return Err(unsupported(
                "a subquery in a join condition that reads both sides is not supported",
            ));
        }
    }
    let a = on_left.len();
    let left = attach(left, on_left);
    let right = attach(right, on_right);
    let place = |c: usize| {
        if c < ln {
            c
        } else if c < ln + rn {
            c + a
        } else {
            match slots[c - ln - rn] {
                (false, i) => ln + i,
                (true, i) => ln + a + rn + i,
            }
        }
    };
    let predicate = map_columns(&predicate, &place);
    let terms = predicate.conjuncts().into_iter().cloned().collect();
    let joined = make_join(left, right, kind, terms);
    let js = joined.schema();
    let keep: Vec<usize> = (0..ln).chain(ln + a..ln + a + rn).collect();
    Ok(LogicalPlan::Projection {
        input: Box::new(joined),
        exprs: keep
            .iter()
            .map(|&i| Expr::column(i, js.field(i).name().clone()))
            .collect(),
        schema: SchemaRef::new(Schema::new(
            keep.iter()
                .map(|&i| js.field(i).as_ref().clone())
                .collect::<Vec<_>>(),
        )),
    })
}

/// `e` with each placeholder column past `width` (of a binder without
/// aggregates) moved where the plan will have it: subquery `s` at
/// `width + s`, window function `j` after all `subqueries`.
pub(crate) fn place(e: Expr, width: usize, subqueries: usize, eb: &ExprBinder<'_>) -> Result<Expr> {
    match e {
        Expr::Column(c) if c.index >= width => match eb.placeholder(c.index - width) {
            Some(Placeholder::Subquery(s)) => Ok(Expr::column(width + s, c.name)),
            Some(Placeholder::Window(j)) => Ok(Expr::column(width + subqueries + j, c.name)),
            _ => Err(bind_err(format!(
                "unknown placeholder column \"{}\"",
                c.name
            ))),
        },
        other => other.try_map_children(&mut |x| place(x, width, subqueries, eb)),
    }
}

/// Checks that the outer expressions of `subs`, mapped onto a plan of
/// `width` columns, read only its columns and those of the subqueries
/// before them (not a window function computed above).
pub(crate) fn check_attachable(subs: &[BoundSubquery], width: usize) -> Result<()> {
    for (s, sub) in subs.iter().enumerate() {
        if sub.columns().iter().any(|&c| c >= width + s) {
            return Err(unsupported(
                "a subquery compared with or correlated by a window function is not supported",
            ));
        }
    }
    Ok(())
}

fn one_column(plan: &LogicalPlan, query: &ast::Query) -> Result<()> {
    let n = plan.schema().fields().len();
    if n != 1 {
        return Err(bind_err(format!(
            "Subquery returns {n} columns - expected 1{}",
            at(query.span())
        )));
    }
    Ok(())
}

fn aggregate(
    input: LogicalPlan,
    group_by: Vec<Expr>,
    aggregates: Vec<(AggregateFunction, Option<Expr>, Field)>,
) -> LogicalPlan {
    let ins = input.schema();
    let mut fields: Vec<Field> = group_by
        .iter()
        .enumerate()
        .map(|(i, g)| Field::new(format!("__key{i}"), g.data_type(&ins), true))
        .collect();
    let mut aggs = Vec::with_capacity(aggregates.len());
    for (func, arg, field) in aggregates {
        fields.push(field);
        aggs.push(AggregateExpr {
            func,
            arg,
            key: None,
            distinct: false,
            order_by: Vec::new(),
        });
    }
    LogicalPlan::Aggregate {
        input: Box::new(input),
        group_by,
        aggregates: aggs,
        schema: SchemaRef::new(Schema::new(fields)),
    }
}

fn count_field(name: &str) -> Field {
    Field::new(name, DataType::Int64, false)
}

impl Binder<'_> {
    /// Plans subquery `query` of an expression over `outer`, tested for
    /// `what`.
    pub(crate) fn bind_subquery(
        &self,
        query: &ast::Query,
        outer: &Scope,
        what: Tested,
    ) -> Result<BoundSubquery> {
        let source = self.source(query, outer)?;
        match what {
            Tested::Scalar => self.scalar(query, source),
            Tested::Exists { negated } => self.exists(query, source, negated),
            compared => self.in_subquery(query, source, compared),
        }
    }

    /// The subquery's plan when it binds alone, else its correlated form.
    fn source<'q>(&self, query: &'q ast::Query, outer: &Scope) -> Result<Source<'q>> {
        let err = match self.query(query) {
            Ok(plan) => return Ok(Source::Uncorrelated(plan)),
            Err(e) => e,
        };
        if !err.to_string().contains("not found") {
            return Err(err);
        }
        let SetExpr::Select(select) = query.body.as_ref() else {
            return Err(correlation_hint(err, query));
        };
        let (plan, scope, terms) = self.correlated_select(query, outer)?;
        if terms.is_empty() {
            return Err(correlation_hint(err, query));
        }
        let ow = outer.schema.fields().len();
        let mut outer_keys = Vec::new();
        let mut inner_keys = Vec::new();
        let mut domain = None;
        let (mut plan, mut scope) = (plan, scope);
        if terms.iter().all(|t| split_key(t, ow).is_some()) {
            for t in &terms {
                let (o, i) = split_key(t, ow).expect("an equality");
                outer_keys.push(o);
                inner_keys.push(i);
            }
        } else {
            if let Some(t) = terms
                .iter()
                .find(|t| split_key(t, ow).is_none() && !null_rejecting(t))
            {
                return Err(unsupported(format!(
                    "correlated subquery condition \"{t}\" is not supported (equalities and comparisons between the outer query and the subquery are decorrelated){}",
                    at(query.span())
                )));
            }
            // the subquery's rows joined with the domain: its values become the keys
            let mut read: Vec<usize> = terms
                .iter()
                .flat_map(Expr::columns)
                .filter(|&c| c < ow)
                .collect();
            read.sort_unstable();
            read.dedup();
            let m = read.len();
            let id = DOMAINS
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                .to_string();
            let fields: Vec<Field> = read
                .iter()
                .enumerate()
                .map(|(i, &c)| {
                    Field::new(
                        format!("__key{i}"),
                        outer.schema.field(c).data_type().clone(),
                        true,
                    )
                })
                .collect();
            let leaf = LogicalPlan::Values {
                rows: Vec::new(),
                schema: SchemaRef::new(Schema::new_with_metadata(
                    fields,
                    std::collections::HashMap::from([(DOMAIN.to_string(), id.clone())]),
                )),
            };
            let place = |c: usize| match read.iter().position(|&r| r == c) {
                Some(i) => i,
                None => c - ow + m,
            };
            let on: Vec<Expr> = terms.iter().map(|t| map_columns(t, &place)).collect();
            let joined = make_join(leaf, plan, JoinKind::Inner, on);
            // the subquery's columns first, the domain's after them
            let js = joined.schema();
            let w = js.fields().len() - m;
            let order: Vec<usize> = (m..m + w).chain(0..m).collect();
            plan = LogicalPlan::Projection {
                input: Box::new(joined),
                exprs: order
                    .iter()
                    .map(|&i| Expr::column(i, js.field(i).name().clone()))
                    .collect(),
                schema: SchemaRef::new(Schema::new(
                    order
                        .iter()
                        .map(|&i| js.field(i).as_ref().clone())
                        .collect::<Vec<_>>(),
                )),
            };
            scope = Scope {
                qualifier: None,
                relations: scope.parts(),
                schema: plan.schema(),
            };
            for (i, &c) in read.iter().enumerate() {
                outer_keys.push(Expr::column(c, outer.schema.field(c).name().clone()));
                inner_keys.push(Expr::column(w + i, format!("__key{i}")));
            }
            // the keys are the domain's columns, appended once more below
            // as the correlation's
            domain = Some(id);
        }
        // the inner sides as extra columns, named in a relation of their own
        let ps = plan.schema();
        let w = ps.fields().len();
        let mut exprs: Vec<Expr> = (0..w)
            .map(|i| Expr::column(i, ps.field(i).name().clone()))
            .collect();
        let mut fields: Vec<Field> = ps.fields().iter().map(|f| f.as_ref().clone()).collect();
        for (i, k) in inner_keys.into_iter().enumerate() {
            fields.push(Field::new(format!("__key{i}"), k.data_type(&ps), true));
            exprs.push(k);
        }
        let schema = SchemaRef::new(Schema::new(fields));
        let mut relations = scope.parts();
        relations.push((KEYS.to_string(), (w..schema.fields().len()).collect()));
        let scope = Scope {
            qualifier: None,
            schema: schema.clone(),
            relations,
        };
        let plan = LogicalPlan::Projection {
            input: Box::new(plan),
            exprs,
            schema,
        };
        Ok(Source::Correlated(Correlated {
            select,
            plan,
            scope,
            outer: outer_keys,
            domain,
        }))
    }

    fn scalar(&self, query: &ast::Query, source: Source<'_>) -> Result<BoundSubquery> {
        let c = match source {
            Source::Uncorrelated(plan) => {
                one_column(&plan, query)?;
                let field = plan
                    .schema()
                    .field(0)
                    .clone()
                    .with_name("__subquery")
                    .with_nullable(true);
                return Ok(BoundSubquery {
                    shape: Shape::Single(plan),
                    outer: Vec::new(),
                    probe: None,
                    negated: false,
                    field,
                    domain: None,
                });
            }
            Source::Correlated(c) => c,
        };
        let value = c.item(query)?;
        let k = c.keys();
        if self.aggregates_in(value, &c.scope)? {
            let mut items: Vec<ast::SelectItem> = c
                .key_idents()
                .into_iter()
                .map(ast::SelectItem::UnnamedExpr)
                .collect();
            items.push(ast::SelectItem::UnnamedExpr(value.clone()));
            let grouped = super::query::select_grouped(
                self,
                c.plan.clone(),
                &c.scope,
                &items,
                &c.key_idents(),
            )
            .map_err(|e| correlation_hint(e, query))?;
            let t = grouped.schema().field(k).data_type().clone();
            let empty = self.empty_value(value, &c, &t)?;
            let field = Field::new("__subquery", t, true);
            return Ok(BoundSubquery {
                shape: Shape::Grouped {
                    plan: grouped,
                    empty,
                },
                outer: c.outer,
                probe: None,
                negated: false,
                field,
                domain: c.domain,
            });
        }
        let (plan, v) = self.bind_over(c.plan.clone(), &c.scope, value, query)?;
        let t = v.data_type(&plan.schema());
        let rows = aggregate(
            plan,
            c.key_columns(),
            vec![
                (AggregateFunction::CountStar, None, count_field("__rows")),
                (
                    AggregateFunction::AnyValue,
                    Some(v),
                    Field::new("__value", t.clone(), true),
                ),
            ],
        );
        Ok(BoundSubquery {
            shape: Shape::Rows(rows),
            outer: c.outer,
            probe: None,
            negated: false,
            field: Field::new("__subquery", t, true),
            domain: c.domain,
        })
    }

    fn exists(
        &self,
        query: &ast::Query,
        source: Source<'_>,
        negated: bool,
    ) -> Result<BoundSubquery> {
        let (shape, outer, domain) = match source {
            Source::Uncorrelated(plan) => {
                let one = LogicalPlan::Limit {
                    input: Box::new(plan),
                    offset: 0,
                    fetch: Some(1),
                };
                let counted = aggregate(
                    one,
                    Vec::new(),
                    vec![(AggregateFunction::CountStar, None, count_field("__rows"))],
                );
                let plan = LogicalPlan::Projection {
                    input: Box::new(counted),
                    exprs: vec![Expr::binary(
                        Expr::column(0, "__rows"),
                        BinaryOp::Gt,
                        Expr::Literal(ScalarValue::Int64(0)),
                    )],
                    schema: SchemaRef::new(Schema::new(vec![Field::new(
                        "__exists",
                        DataType::Boolean,
                        false,
                    )])),
                };
                (Shape::Exists(plan), Vec::new(), None)
            }
            Source::Correlated(c) => {
                for item in &c.select.projection {
                    if let ast::SelectItem::UnnamedExpr(e)
                    | ast::SelectItem::ExprWithAlias { expr: e, .. } = item
                        && self.aggregates_in(e, &c.scope)?
                    {
                        return Err(unsupported(format!(
                            "a correlated EXISTS over an aggregate is not supported{}",
                            at(query.span())
                        )));
                    }
                }
                let keys = aggregate(c.plan.clone(), c.key_columns(), Vec::new());
                (Shape::Exists(keys), c.outer, c.domain)
            }
        };
        Ok(BoundSubquery {
            shape,
            outer,
            probe: None,
            negated,
            field: Field::new("__exists", DataType::Boolean, false),
            domain,
        })
    }

    /// `IN` and the quantified comparisons (`what`): the subquery's
    /// values compared with a probe.
    fn in_subquery(
        &self,
        query: &ast::Query,
        source: Source<'_>,
        what: Tested,
    ) -> Result<BoundSubquery> {
        let (probe, probe_type, span, negated, quantified) = match what {
            Tested::In {
                probe,
                probe_type,
                negated,
                at,
            } => (probe, probe_type, at, negated, None),
            Tested::Quantified {
                probe,
                probe_type,
                op,
                all,
                at,
            } => (probe, probe_type, at, false, Some((op, all))),
            Tested::Scalar | Tested::Exists { .. } => {
                unreachable!("only IN and quantified comparisons compare a value")
            }
        };
        let (plan, value, keys, outer, domain) = match source {
            Source::Uncorrelated(plan) => {
                one_column(&plan, query)?;
                let v = Expr::column(0, plan.schema().field(0).name().clone());
                (plan, v, Vec::new(), Vec::new(), None)
            }
            Source::Correlated(c) => {
                let value = c.item(query)?;
                if self.aggregates_in(value, &c.scope)? {
                    return Err(unsupported(format!(
                        "IN a correlated subquery over an aggregate is not supported{}",
                        at(query.span())
                    )));
                }
                let (plan, v) = self.bind_over(c.plan.clone(), &c.scope, value, query)?;
                (plan, v, c.key_columns(), c.outer, c.domain)
            }
        };
        let vt = value.data_type(&plan.schema());
        let Some(t) = comparison_type(&probe_type, &vt) else {
            return Err(bind_err(format!(
                "Cannot compare values of type {} and type {} in IN (subquery){}",
                sql_type_name(&probe_type),
                sql_type_name(&vt),
                at(span)
            )));
        };
        let probe = self.fold.cast(probe, &probe_type, &t);
        let compared = self.fold.cast(value.clone(), &vt, &t);
        if let Some((op, all)) = quantified {
            let counts = aggregate(
                plan,
                keys,
                vec![
                    (AggregateFunction::CountStar, None, count_field("__rows")),
                    (
                        AggregateFunction::Count,
                        Some(value),
                        count_field("__values"),
                    ),
                    (
                        AggregateFunction::Min,
                        Some(compared.clone()),
                        Field::new("__min", t.clone(), true),
                    ),
                    (
                        AggregateFunction::Max,
                        Some(compared),
                        Field::new("__max", t, true),
                    ),
                ],
            );
            return Ok(BoundSubquery {
                shape: Shape::Quantified { counts, op, all },
                outer,
                probe: Some(probe),
                negated: false,
                field: Field::new("__quantified", DataType::Boolean, true),
                domain,
            });
        }
        let mut group = keys.clone();
        group.push(compared);
        let distinct = aggregate(
            LogicalPlan::Filter {
                input: Box::new(plan.clone()),
                predicate: Expr::IsNotNull(Box::new(value.clone())),
            },
            group,
            Vec::new(),
        );
        let counts = aggregate(
            plan,
            keys,
            vec![
                (AggregateFunction::CountStar, None, count_field("__rows")),
                (
                    AggregateFunction::Count,
                    Some(value),
                    count_field("__values"),
                ),
            ],
        );
        Ok(BoundSubquery {
            shape: Shape::In { distinct, counts },
            outer,
            probe: Some(probe),
            negated,
            field: Field::new("__in", DataType::Boolean, true),
            domain,
        })
    }

    /// True if `e` over `scope` calls an aggregate.
    fn aggregates_in(&self, e: &ast::Expr, scope: &Scope) -> Result<bool> {
        let mut eb = ExprBinder::new(scope, self.fold, true, "");
        eb.allow_subqueries(self);
        Ok(eb.bind(e).is_ok() && !eb.aggregates().is_empty())
    }

    /// `value` bound over `scope` (the columns of `plan`), the subqueries
    /// in it joined to `plan`.
    fn bind_over(
        &self,
        plan: LogicalPlan,
        scope: &Scope,
        value: &ast::Expr,
        query: &ast::Query,
    ) -> Result<(LogicalPlan, Expr)> {
        let mut eb = ExprBinder::new(
            scope,
            self.fold,
            false,
            "aggregate functions are not allowed here",
        );
        eb.allow_subqueries(self);
        let v = eb.bind(value).map_err(|e| correlation_hint(e, query))?;
        let subs = eb.take_subqueries();
        Ok((attach(plan, subs), v))
    }

    /// The value of the aggregating select item `value` over no rows, of
    /// type `t`: folded from the aggregates' values over no rows where
    /// they are known, else the subquery planned over no rows.
    fn empty_value(&self, value: &ast::Expr, c: &Correlated<'_>, t: &DataType) -> Result<Empty> {
        let mut eb = ExprBinder::new(&c.scope, self.fold, true, "");
        let folded = eb.bind(value).ok().and_then(|e| {
            let n = c.scope.schema.fields().len();
            let fields = eb.aggregate_fields();
            let e = over_no_rows(e, n, &eb, &fields)?;
            let vt = eb.type_of(&e);
            self.fold.value(&self.fold.cast(e, &vt, t)).ok().flatten()
        });
        if let Some(v) = folded {
            return Ok(if v.is_null() {
                Empty::Null
            } else {
                Empty::Value(Expr::Literal(v))
            });
        }
        let none = LogicalPlan::Limit {
            input: Box::new(c.plan.clone()),
            offset: 0,
            fetch: Some(0),
        };
        let items = [ast::SelectItem::UnnamedExpr(value.clone())];
        let plan = super::query::select_grouped(self, none, &c.scope, &items, &[])?;
        Ok(Empty::Plan(plan))
    }
}

/// `e` (bound over `width` columns and aggregate placeholders) with each
/// aggregate replaced by its value over no rows; `None` where that is not
/// known or `e` reads a column.
fn over_no_rows(e: Expr, width: usize, eb: &ExprBinder<'_>, fields: &[Field]) -> Option<Expr> {
    match e {
        Expr::Column(c) => {
            let Some(Placeholder::Aggregate(k)) =
                c.index.checked_sub(width).and_then(|p| eb.placeholder(p))
            else {
                return None;
            };
            let agg = eb.aggregates()[k].func;
            use AggregateFunction as A;
            match agg {
                A::CountStar | A::Count => Some(Expr::Literal(ScalarValue::Int64(0))),
                A::RegrCount => Some(Expr::Literal(ScalarValue::UInt32(0))),
                A::Entropy => Some(Expr::Literal(ScalarValue::Float64(0.0))),
                A::Skewness | A::Kurtosis | A::KurtosisPop => {
                    Some(Expr::Literal(ScalarValue::Null(DataType::Float64)))
                }
                A::CovarPop
                | A::CovarSamp
                | A::Corr
                | A::RegrSlope
                | A::RegrIntercept
                | A::RegrR2
                | A::RegrAvgx
                | A::RegrAvgy
                | A::RegrSxx
                | A::RegrSyy
                | A::RegrSxy => Some(Expr::Literal(ScalarValue::Null(DataType::Float64))),
                A::Sum
                | A::Avg
                | A::Min
                | A::Max
                | A::AnyValue
                | A::ArgMin
                | A::ArgMax
                | A::VarSamp
                | A::VarPop
                | A::StddevSamp
                | A::StddevPop
                | A::Median
                | A::Mode
                | A::StringAgg
                | A::QuantileCont
                | A::QuantileDisc
                | A::First
                | A::Last => Some(Expr::Literal(ScalarValue::Null(
                    fields[k].data_type().clone(),
                ))),
                A::BitAnd | A::BitOr | A::BitXor | A::Product | A::Grouping => None,
            }
        }
        other => other
            .try_map_children(&mut |x| over_no_rows(x, width, eb, fields).ok_or(()))
            .ok(),
    }
}

/// `outer = inner` (either way round) of a correlated condition over the
/// outer query's `ow` columns followed by the subquery's: the outer side
/// and the inner side (over the subquery's columns).
fn split_key(t: &Expr, ow: usize) -> Option<(Expr, Expr)> {
    let Expr::Binary {
        op: BinaryOp::Eq,
        left,
        right,
    } = t
    else {
        return None;
    };
    let outer_only = |e: &Expr| {
        let c = e.columns();
        !c.is_empty() && c.iter().all(|&i| i < ow)
    };
    let inner_only = |e: &Expr| {
        let c = e.columns();
        !c.is_empty() && c.iter().all(|&i| i >= ow)
    };
    let back = |e: &Expr| map_columns(e, &|c| c - ow);
    if outer_only(left) && inner_only(right) {
        Some(((**left).clone(), back(right)))
    } else if outer_only(right) && inner_only(left) {
        Some(((**right).clone(), back(left)))
    } else {
        None
    }
}
