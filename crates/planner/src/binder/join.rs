//! Binding FROM with several relations: comma lists, `JOIN ... ON`,
//! derived tables, and the WHERE conjuncts around them (subqueries in
//! WHERE included, decorrelated into joins).
//!
//! The relations of a FROM list and of its inner and cross joins are
//! collected flat, with every condition (`ON` and WHERE conjuncts) bound
//! over their concatenated columns. A condition on one relation is pushed
//! below the joins; `a = b` across two sides becomes a hash-join key; the
//! rest is a residual filter on the first join that sees all its columns;
//! an OR over several relations also filters each relation named in every
//! branch by its parts. Equalities of plain columns form classes
//! (implied equalities: `a = b AND b = c` also joins `a` to `c`); a join
//! of two parts takes one key of each class with members on both sides.
//! The join order is the cheapest tree by dynamic programming
//! ([`crate::optimize::order`]) up to its limit of relations, else
//! greedy: each step joins the two connected parts whose join gives the
//! fewest estimated rows (filter selectivities and key distinct values
//! from [`crate::optimize::estimate`]); both build on the smaller side.
//! An outer join is planned where it is written (its sides are never
//! reordered across it); a LEFT join whose right side is the larger runs
//! as a RIGHT join with its sides swapped, so it builds on the smaller.

use std::collections::HashSet;

use arrow_schema::{Field, Schema, SchemaRef};
use sqlparser::ast::{self, Ident, JoinConstraint, JoinOperator, SetExpr, Spanned};

use super::expr::{ExprBinder, Scope};
use super::{Binder, at, bind_err, did_you_mean, unsupported};
use crate::error::Result;
use crate::expr::{BinaryOp, Expr};
use crate::optimize::{estimate, order};
use crate::plan::{JoinKind, LogicalPlan};
use crate::scalar::ScalarValue;

/// Marks the qualifier of an enclosing query's relation in a correlated
/// subquery's scope: its names are found only where the subquery's own
/// relations have none.
const OUTER: char = '\u{1}';

/// Estimated rows of a relation whose size the catalog does not know.
const UNKNOWN_ROWS: f64 = 1000.0;

/// One relation of a join: its plan, the names its columns go by, and
/// its estimated rows (`base`: before its filters).
struct Relation {
    plan: LogicalPlan,
    scope: Scope,
    rows: f64,
    base: f64,
    /// An uncorrelated scalar subquery: at most one row, else an error.
    single: bool,
}

/// Two tables of one FROM under the same name (`FROM t, t`) are refused,
/// as DuckDB's binder does; a derived table may share a table's alias.
fn check_table_aliases(from: &[ast::TableWithJoins]) -> Result<()> {
    let mut seen: Vec<String> = Vec::new();
    let factors = from.iter().flat_map(|twj| {
        std::iter::once(&twj.relation).chain(twj.joins.iter().map(|j| &j.relation))
    });
    for factor in factors {
        if let ast::TableFactor::Table { name, alias, .. } = factor {
            let qualifier = match alias {
                Some(a) => a.name.value.clone(),
                None => name
                    .0
                    .last()
                    .map(|p| p.to_string().trim_matches('"').to_string())
                    .unwrap_or_default(),
            };
            if seen.iter().any(|q| q.eq_ignore_ascii_case(&qualifier)) {
                return Err(bind_err(format!(
                    "Ambiguous reference to table \"{qualifier}\" (duplicate alias \"{qualifier}\", \
                     explicitly alias one of the tables using \"AS my_alias\")"
                )));
            }
            seen.push(qualifier);
        }
    }
    Ok(())
}

impl Scope {
    /// The relations of this scope: its parts, or itself as one.
    pub(super) fn parts(&self) -> Vec<(String, Vec<usize>)> {
        if self.relations.is_empty() {
            vec![(
                self.qualifier.clone().unwrap_or_default(),
                (0..self.schema.fields().len()).collect(),
            )]
        } else {
            self.relations.clone()
        }
    }

    /// This scope as the enclosing query's, seen from a subquery.
    fn as_outer(&self) -> Scope {
        Scope {
            qualifier: None,
            schema: self.schema.clone(),
            relations: self
                .parts()
                .into_iter()
                .map(|(q, cols)| (format!("{OUTER}{}", q.trim_start_matches(OUTER)), cols))
                .collect(),
        }
    }

    /// `a`'s columns followed by `b`'s, with `schema` (their concatenation,
    /// maybe with nullability changed) under their scopes' names (a
    /// derived table's column aliases are in its scope only).
    fn concat(a: &Scope, b: &Scope, schema: SchemaRef) -> Scope {
        let offset = a.schema.fields().len();
        let names: Vec<&String> = a
            .schema
            .fields()
            .iter()
            .chain(b.schema.fields())
            .map(|f| f.name())
            .collect();
        let schema = SchemaRef::new(Schema::new(
            schema
                .fields()
                .iter()
                .enumerate()
                .map(|(i, f)| match names.get(i) {
                    Some(&n) => f.as_ref().clone().with_name(n.clone()),
                    None => f.as_ref().clone(),
                })
                .collect::<Vec<_>>(),
        ));
        let mut relations = a.parts();
        relations.extend(
            b.parts()
                .into_iter()
                .map(|(q, cols)| (q, cols.into_iter().map(|c| c + offset).collect())),
        );
        Scope {
            qualifier: None,
            schema,
            relations,
        }
    }

    fn find_in(&self, cols: &[usize], name: &str) -> Option<usize> {
        let fields = self.schema.fields();
        cols.iter()
            .copied()
            .find(|&c| fields[c].name() == name)
            .or_else(|| {
                cols.iter()
                    .copied()
                    .find(|&c| fields[c].name().eq_ignore_ascii_case(name))
            })
    }

    /// Resolves `name` or `qualifier.name` over the relations of a join,
    /// with DuckDB's errors for an unknown table, an unknown column and an
    /// ambiguous name.
    pub(crate) fn resolve(&self, qualifier: Option<&Ident>, name: &Ident) -> Result<usize> {
        if let Some(q) = qualifier {
            let cols = self.relation_columns(q)?;
            return self.find_in(&cols, &name.value).ok_or_else(|| {
                let names: Vec<&str> = cols
                    .iter()
                    .map(|&c| self.schema.field(c).name().as_str())
                    .collect();
                let hint = match did_you_mean(&name.value, names.iter().copied()) {
                    Some(c) => format!(" Candidate bindings: \"{c}\""),
                    None => String::new(),
                };
                bind_err(format!(
                    "Table \"{}\" does not have a column named \"{}\"{hint}{}",
                    q.value,
                    name.value,
                    at(name.span)
                ))
            });
        }
        let mut found: Vec<(usize, &str)> = Vec::new();
        // the subquery's own relations shadow the outer query's
        for outer in [false, true] {
            for (q, cols) in &self.relations {
                if q.starts_with(OUTER) != outer {
                    continue;
                }
                if let Some(c) = self.find_in(cols, &name.value) {
                    found.push((c, q.trim_start_matches(OUTER)));
                }
            }
            if !found.is_empty() {
                break;
            }
        }
        match found.as_slice() {
            [(c, _)] => Ok(*c),
            [] => {
                let names = self.schema.fields().iter().map(|f| f.name().as_str());
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
            several => {
                let uses: Vec<String> = several
                    .iter()
                    .map(|(_, q)| format!("'{q}.{}'", name.value))
                    .collect();
                Err(bind_err(format!(
                    "Ambiguous reference to column name \"{}\" (use: {}){}",
                    name.value,
                    uses.join(" or "),
                    at(name.span)
                )))
            }
        }
    }

    /// The columns of relation `q` (for `q.*` and `q.x`).
    pub(crate) fn relation_columns(&self, q: &Ident) -> Result<Vec<usize>> {
        let parts = self.parts();
        for outer in [false, true] {
            if let Some((_, cols)) = parts.iter().find(|(name, _)| {
                name.starts_with(OUTER) == outer
                    && name
                        .trim_start_matches(OUTER)
                        .eq_ignore_ascii_case(&q.value)
            }) {
                return Ok(cols.clone());
            }
        }
        let names: Vec<String> = parts
            .iter()
            .map(|(n, _)| n.trim_start_matches(OUTER))
            .filter(|n| !n.is_empty() && !n.starts_with("__"))
            .map(|n| format!("\"{n}\""))
            .collect();
        Err(bind_err(format!(
            "Referenced table \"{}\" not found! Candidate tables: {}{}",
            q.value,
            names.join(", "),
            at(q.span)
        )))
    }
}

/// True if a top-level conjunct of `selection` is a subquery predicate
/// (`IN (SELECT ...)`, `EXISTS`, a comparison with a scalar subquery).
pub(crate) fn has_subquery(selection: Option<&ast::Expr>) -> bool {
    selection.is_some_and(|e| {
        let mut parts = Vec::new();
        split_and(e, &mut parts);
        parts.iter().any(|c| subquery_of(c).is_some())
    })
}

/// The top-level AND terms of `e` (parentheses looked through).
pub(crate) fn split_and<'e>(e: &'e ast::Expr, out: &mut Vec<&'e ast::Expr>) {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        match e {
            ast::Expr::BinaryOp {
                left,
                op: ast::BinaryOperator::And,
                right,
            } => {
                stack.push(right);
                stack.push(left);
            }
            ast::Expr::Nested(inner) if matches!(**inner, ast::Expr::BinaryOp { .. }) => {
                stack.push(inner)
            }
            other => out.push(other),
        }
    }
}

/// A WHERE conjunct that is a subquery predicate.
enum SubqueryTerm<'e> {
    /// `[NOT] EXISTS (q)`.
    Exists {
        query: &'e ast::Query,
        negated: bool,
    },
    /// `x [NOT] IN (q)`.
    In {
        expr: &'e ast::Expr,
        query: &'e ast::Query,
        negated: bool,
    },
    /// `x op (q)` or `(q) op x`: a scalar subquery compared.
    Scalar { query: &'e ast::Query },
}

fn subquery_of(e: &ast::Expr) -> Option<SubqueryTerm<'_>> {
    match e {
        ast::Expr::Exists { subquery, negated } => Some(SubqueryTerm::Exists {
            query: subquery,
            negated: *negated,
        }),
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Not,
            expr,
        } => match &**expr {
            ast::Expr::Exists { subquery, negated } => Some(SubqueryTerm::Exists {
                query: subquery,
                negated: !*negated,
            }),
            ast::Expr::Nested(inner) => match &**inner {
                ast::Expr::Exists { subquery, negated } => Some(SubqueryTerm::Exists {
                    query: subquery,
                    negated: !*negated,
                }),
                _ => None,
            },
            _ => None,
        },
        ast::Expr::InSubquery {
            expr,
            subquery,
            negated,
        } => Some(SubqueryTerm::In {
            expr,
            query: subquery,
            negated: *negated,
        }),
        ast::Expr::BinaryOp { left, op, right } if is_comparison(op) => match (&**left, &**right) {
            (ast::Expr::Subquery(q), other) | (other, ast::Expr::Subquery(q))
                if !matches!(other, ast::Expr::Subquery(_)) =>
            {
                Some(SubqueryTerm::Scalar { query: q })
            }
            _ => None,
        },
        _ => None,
    }
}

/// True if `e` holds a subquery anywhere.
pub(crate) fn contains_subquery(e: &ast::Expr) -> bool {
    ast::visit_expressions(e, |x| match x {
        ast::Expr::Subquery(_) | ast::Expr::Exists { .. } | ast::Expr::InSubquery { .. } => {
            std::ops::ControlFlow::Break(())
        }
        _ => std::ops::ControlFlow::Continue(()),
    })
    .is_break()
}

fn is_comparison(op: &ast::BinaryOperator) -> bool {
    use ast::BinaryOperator as B;
    matches!(op, B::Eq | B::NotEq | B::Lt | B::LtEq | B::Gt | B::GtEq)
}

pub(crate) use crate::optimize::map_columns;

/// The terms of `(a AND x) OR (a AND y)`: `a` and `x OR y`, so a join
/// key repeated in every branch of an OR (TPC-H Q19) is a key.
fn factor_or(e: Expr) -> Vec<Expr> {
    fn disjuncts(e: &Expr, out: &mut Vec<Expr>) {
        match e {
            Expr::Binary {
                op: BinaryOp::Or,
                left,
                right,
            } => {
                disjuncts(left, out);
                disjuncts(right, out);
            }
            other => out.push(other.clone()),
        }
    }
    if !matches!(
        e,
        Expr::Binary {
            op: BinaryOp::Or,
            ..
        }
    ) {
        return vec![e];
    }
    let mut branches = Vec::new();
    disjuncts(&e, &mut branches);
    let lists: Vec<Vec<Expr>> = branches
        .iter()
        .map(|b| b.conjuncts().into_iter().cloned().collect())
        .collect();
    let common: Vec<Expr> = lists[0]
        .iter()
        .filter(|t| lists[1..].iter().all(|l| l.contains(t)))
        .cloned()
        .collect();
    if common.is_empty() {
        return vec![e];
    }
    let mut rest = Vec::new();
    for l in lists {
        let left: Vec<Expr> = l.into_iter().filter(|t| !common.contains(t)).collect();
        match conjunction(left) {
            Some(x) => rest.push(x),
            // a branch that is only the common terms: the OR is TRUE
            None => return common,
        }
    }
    let mut out = common;
    out.extend(
        rest.into_iter()
            .reduce(|a, b| Expr::binary(a, BinaryOp::Or, b)),
    );
    out
}

fn conjunction(terms: Vec<Expr>) -> Option<Expr> {
    terms
        .into_iter()
        .reduce(|a, b| Expr::binary(a, BinaryOp::And, b))
}

fn filtered(plan: LogicalPlan, terms: Vec<Expr>) -> LogicalPlan {
    match conjunction(terms) {
        Some(predicate) => LogicalPlan::Filter {
            input: Box::new(plan),
            predicate,
        },
        None => plan,
    }
}

/// The output schema of a join of `left` and `right`.
pub(crate) fn join_schema(left: &Schema, right: &Schema, kind: JoinKind) -> SchemaRef {
    let pad_left = matches!(kind, JoinKind::Right | JoinKind::Full);
    let pad_right = matches!(kind, JoinKind::Left | JoinKind::Full | JoinKind::Single);
    let mut fields: Vec<Field> = left
        .fields()
        .iter()
        .map(|f| {
            f.as_ref()
                .clone()
                .with_nullable(f.is_nullable() || pad_left)
        })
        .collect();
    if kind.keeps_right() {
        fields.extend(right.fields().iter().map(|f| {
            f.as_ref()
                .clone()
                .with_nullable(f.is_nullable() || pad_right)
        }));
    }
    SchemaRef::new(Schema::new(fields))
}

/// Splits `terms` (over `left ++ right`, `left` columns first) into
/// equality keys across the two sides and the rest.
fn split_keys(terms: Vec<Expr>, left_len: usize, types: &Schema) -> (Vec<(Expr, Expr)>, Vec<Expr>) {
    let mut on = Vec::new();
    let mut rest = Vec::new();
    for t in terms {
        if let Expr::Binary {
            op: BinaryOp::Eq,
            left,
            right,
        } = &t
        {
            let lc = left.columns();
            let rc = right.columns();
            let is_left = |c: &Vec<usize>| !c.is_empty() && c.iter().all(|&i| i < left_len);
            let is_right = |c: &Vec<usize>| !c.is_empty() && c.iter().all(|&i| i >= left_len);
            let same_type = left.data_type(types) == right.data_type(types);
            let back = |e: &Expr| map_columns(e, &|c| c - left_len);
            if same_type && is_left(&lc) && is_right(&rc) {
                on.push(((**left).clone(), back(right)));
                continue;
            }
            if same_type && is_right(&lc) && is_left(&rc) {
                on.push(((**right).clone(), back(left)));
                continue;
            }
        }
        rest.push(t);
    }
    (on, rest)
}

/// Builds a join node of `left` and `right` with `terms` over
/// `left ++ right` as its condition.
pub(super) fn make_join(
    left: LogicalPlan,
    right: LogicalPlan,
    kind: JoinKind,
    terms: Vec<Expr>,
) -> LogicalPlan {
    let ls = left.schema();
    let rs = right.schema();
    let both = join_schema(&ls, &rs, JoinKind::Inner);
    let (on, rest) = split_keys(terms, ls.fields().len(), &both);
    LogicalPlan::Join {
        schema: join_schema(&ls, &rs, kind),
        left: Box::new(left),
        right: Box::new(right),
        kind,
        on,
        filter: conjunction(rest),
    }
}

/// A subquery predicate of WHERE, planned: a join applied to the
/// relations' result (`Semi`/`Anti`), or a relation joined like the
/// others, with extra conditions.
enum Planned {
    /// A SEMI, ANTI or NULL-aware ANTI join with `right`; `terms` over the
    /// outer columns followed by `right`'s.
    Filter {
        right: LogicalPlan,
        kind: JoinKind,
        terms: Vec<Expr>,
    },
}

impl Binder<'_> {
    /// `(SELECT ...) AS x`.
    pub(crate) fn derived(
        &self,
        subquery: &ast::Query,
        alias: Option<&ast::TableAlias>,
    ) -> Result<(LogicalPlan, Scope)> {
        let plan = self.query(subquery)?;
        let mut schema = plan.schema();
        if let Some(a) = alias
            && !a.columns.is_empty()
        {
            if a.columns.len() > schema.fields().len() {
                return Err(bind_err(format!(
                    "table \"{}\" has {} columns available but {} columns specified{}",
                    a.name.value,
                    schema.fields().len(),
                    a.columns.len(),
                    at(a.name.span)
                )));
            }
            let fields: Vec<Field> = schema
                .fields()
                .iter()
                .enumerate()
                .map(|(i, f)| match a.columns.get(i) {
                    Some(c) => f.as_ref().clone().with_name(c.name.value.clone()),
                    None => f.as_ref().clone(),
                })
                .collect();
            schema = SchemaRef::new(Schema::new(fields));
        }
        let scope = Scope {
            qualifier: Some(
                alias
                    .map(|a| a.name.value.clone())
                    .unwrap_or_else(|| "unnamed_subquery".to_owned()),
            ),
            schema,
            relations: Vec::new(),
        };
        Ok((plan, scope))
    }

    fn relation(&self, factor: &ast::TableFactor) -> Result<Relation> {
        let (plan, scope) = self.table_factor(factor)?;
        let rows = estimate_rows(self, &plan);
        Ok(Relation {
            plan,
            scope,
            rows,
            base: rows,
            single: false,
        })
    }

    /// Plans FROM with several relations or joins, placing the WHERE
    /// conjuncts (`selection`) on the way. Returns the plan (its columns
    /// in FROM order) and their scope.
    pub(crate) fn joined_from(
        &self,
        from: &[ast::TableWithJoins],
        selection: Option<&ast::Expr>,
    ) -> Result<(LogicalPlan, Scope)> {
        let (rels, conds) = self.collect(from)?;
        self.plan_relations(rels, conds, selection)
    }

    /// The relations of `from` (outer joins already planned as one
    /// relation each) and the ON conditions of its inner joins.
    fn collect<'q>(
        &self,
        from: &'q [ast::TableWithJoins],
    ) -> Result<(Vec<Relation>, Vec<&'q ast::Expr>)> {
        check_table_aliases(from)?;
        let mut rels = Vec::new();
        let mut conds = Vec::new();
        for twj in from {
            let mut local = vec![self.relation(&twj.relation)?];
            let mut local_conds: Vec<&ast::Expr> = Vec::new();
            for j in &twj.joins {
                let right = self.relation(&j.relation)?;
                let (kind, constraint) = match &j.join_operator {
                    JoinOperator::Join(c) | JoinOperator::Inner(c) => (JoinKind::Inner, Some(c)),
                    JoinOperator::CrossJoin(c) => (JoinKind::Inner, Some(c)),
                    JoinOperator::Left(c) | JoinOperator::LeftOuter(c) => (JoinKind::Left, Some(c)),
                    JoinOperator::Right(c) | JoinOperator::RightOuter(c) => {
                        (JoinKind::Right, Some(c))
                    }
                    JoinOperator::FullOuter(c) => (JoinKind::Full, Some(c)),
                    other => {
                        return Err(unsupported(format!(
                            "join {} is not supported{}",
                            join_name(other),
                            at(j.relation.span())
                        )));
                    }
                };
                let constraint = constraint.unwrap_or(&JoinConstraint::None);
                match constraint {
                    JoinConstraint::On(e) if kind == JoinKind::Inner => {
                        local.push(right);
                        local_conds.push(e);
                    }
                    JoinConstraint::None if kind == JoinKind::Inner => local.push(right),
                    JoinConstraint::None => {
                        return Err(bind_err(format!(
                            "{} JOIN needs a join condition (ON, USING or NATURAL){}",
                            kind.name(),
                            at(j.relation.span())
                        )));
                    }
                    JoinConstraint::On(e) => {
                        let left = self.collapse(local, std::mem::take(&mut local_conds))?;
                        local = vec![self.outer_join(left, right, kind, Some(e), &[])?];
                    }
                    JoinConstraint::Using(names) => {
                        let left = self.collapse(local, std::mem::take(&mut local_conds))?;
                        let mut idents = Vec::new();
                        for n in names {
                            match n.0.as_slice() {
                                [ast::ObjectNamePart::Identifier(id)] => idents.push(id.clone()),
                                _ => {
                                    return Err(unsupported(format!(
                                        "USING column {n} is not supported"
                                    )));
                                }
                            }
                        }
                        local = vec![self.outer_join(left, right, kind, None, &idents)?];
                    }
                    JoinConstraint::Natural => {
                        let left = self.collapse(local, std::mem::take(&mut local_conds))?;
                        let idents: Vec<Ident> = left
                            .scope
                            .schema
                            .fields()
                            .iter()
                            .filter(|f| {
                                right
                                    .scope
                                    .schema
                                    .fields()
                                    .iter()
                                    .any(|g| g.name().eq_ignore_ascii_case(f.name()))
                            })
                            .map(|f| Ident::new(f.name().clone()))
                            .collect();
                        if idents.is_empty() {
                            return Err(bind_err("No columns found to join on in NATURAL JOIN"));
                        }
                        local = vec![self.outer_join(left, right, kind, None, &idents)?];
                    }
                }
            }
            rels.extend(local);
            conds.extend(local_conds);
        }
        Ok((rels, conds))
    }

    /// Plans inner-joined relations into one.
    fn collapse(&self, rels: Vec<Relation>, conds: Vec<&ast::Expr>) -> Result<Relation> {
        if rels.len() == 1 && conds.is_empty() {
            return Ok(rels.into_iter().next().expect("one relation"));
        }
        let base = rels.iter().map(|r| r.base).fold(0.0, f64::max);
        let (plan, scope) = self.plan_relations(rels, conds, None)?;
        let rows = base;
        Ok(Relation {
            plan,
            scope,
            rows,
            base,
            single: false,
        })
    }

    /// `left kind JOIN right ON on` (or `USING (using)`), planned as
    /// written.
    fn outer_join(
        &self,
        left: Relation,
        right: Relation,
        kind: JoinKind,
        on: Option<&ast::Expr>,
        using: &[Ident],
    ) -> Result<Relation> {
        let ln = left.scope.schema.fields().len();
        let both = join_schema(&left.scope.schema, &right.scope.schema, JoinKind::Inner);
        let scope = Scope::concat(&left.scope, &right.scope, both);
        let mut terms = Vec::new();
        if let Some(on) = on {
            let mut eb = ExprBinder::new(
                &scope,
                self.fold,
                false,
                "JOIN conditions cannot contain aggregates",
            );
            eb.allow_subqueries(self);
            let p = eb.bind_predicate(on, "JOIN")?;
            let subs = eb.take_subqueries();
            if !subs.is_empty() {
                let plan = super::subquery::join_with(left.plan, right.plan, kind, p, subs)?;
                return Ok(Relation {
                    scope: Scope::concat(&left.scope, &right.scope, plan.schema()),
                    plan,
                    rows: left.rows.max(right.rows),
                    base: left.base.max(right.base),
                    single: false,
                });
            }
            terms.extend(p.conjuncts().into_iter().cloned());
        }
        let mut merged = Vec::new();
        for id in using {
            let l = left.scope.resolve_single(id)?;
            let r = right.scope.resolve_single(id)?;
            let lt = left.scope.schema.field(l).data_type();
            let rt = right.scope.schema.field(r).data_type();
            let (le, re) = (
                Expr::column(l, left.scope.schema.field(l).name().clone()),
                Expr::column(r + ln, right.scope.schema.field(r).name().clone()),
            );
            let (le, re) = if lt == rt {
                (le, re)
            } else {
                let Some(t) = super::coerce::comparison_type(lt, rt) else {
                    return Err(bind_err(format!(
                        "Cannot compare values of type {} and {} in USING ({}){}",
                        crate::types::sql_type_name(lt),
                        crate::types::sql_type_name(rt),
                        id.value,
                        at(id.span)
                    )));
                };
                (cast(le, lt, &t), cast(re, rt, &t))
            };
            terms.push(Expr::binary(le, BinaryOp::Eq, re));
            merged.push((l, r));
        }
        // a condition on the side that is not padded filters that side
        // first; one on the padded side stays in the join
        let mut left_terms = Vec::new();
        let mut right_terms = Vec::new();
        let mut join_terms = Vec::new();
        for t in terms {
            let cols = t.columns();
            let only_left = !cols.is_empty() && cols.iter().all(|&c| c < ln);
            let only_right = !cols.is_empty() && cols.iter().all(|&c| c >= ln);
            if only_right && kind == JoinKind::Left {
                right_terms.push(map_columns(&t, &|c| c - ln));
            } else if only_left && kind == JoinKind::Right {
                left_terms.push(t);
            } else {
                join_terms.push(t);
            }
        }
        let rows = left.rows.max(right.rows);
        let base = left.base.max(right.base);
        let lplan = filtered(left.plan, left_terms);
        let rplan = filtered(right.plan, right_terms);
        let plan = left_join_building_smaller(self, lplan, rplan, kind, join_terms);
        let schema = plan.schema();
        let mut scope = Scope::concat(&left.scope, &right.scope, schema.clone());
        if merged.is_empty() {
            return Ok(Relation {
                plan,
                scope,
                rows,
                base,
                single: false,
            });
        }
        // USING / NATURAL: one merged column per name (the left one, the
        // right one for RIGHT, their COALESCE for FULL), the right
        // duplicates dropped, as DuckDB shows them
        let mut exprs = Vec::new();
        let mut fields = Vec::new();
        for (i, f) in schema.fields().iter().enumerate() {
            if i >= ln && merged.iter().any(|&(_, r)| r + ln == i) {
                continue;
            }
            let e = match merged.iter().find(|&&(l, _)| l == i) {
                Some(&(l, r)) => {
                    let le = Expr::column(l, schema.field(l).name().clone());
                    let re = Expr::column(r + ln, schema.field(r + ln).name().clone());
                    let same = schema.field(l).data_type() == schema.field(r + ln).data_type();
                    match kind {
                        JoinKind::Right if same => re,
                        JoinKind::Full if same => Expr::Function {
                            func: crate::expr::ScalarFunction::Coalesce,
                            args: vec![le, re],
                        },
                        _ => le,
                    }
                }
                None => Expr::column(i, f.name().clone()),
            };
            let mut field = f.as_ref().clone();
            if matches!(kind, JoinKind::Right | JoinKind::Full)
                && merged.iter().any(|&(l, _)| l == i)
            {
                field = field.with_nullable(
                    schema
                        .field(merged.iter().find(|&&(l, _)| l == i).expect("merged").1 + ln)
                        .is_nullable()
                        || kind == JoinKind::Full,
                );
            }
            exprs.push(e);
            fields.push(field);
        }
        let out = SchemaRef::new(Schema::new(fields));
        // the scope: the left relations keep their columns; the right
        // ones lose the merged duplicates
        let keep: Vec<usize> = (0..schema.fields().len())
            .filter(|&i| !(i >= ln && merged.iter().any(|&(_, r)| r + ln == i)))
            .collect();
        let pos = |c: usize| keep.iter().position(|&k| k == c);
        scope.relations = scope
            .relations
            .into_iter()
            .map(|(q, cols)| (q, cols.into_iter().filter_map(pos).collect()))
            .collect();
        scope.schema = out.clone();
        Ok(Relation {
            plan: LogicalPlan::Projection {
                input: Box::new(plan),
                exprs,
                schema: out,
            },
            scope,
            rows,
            base,
            single: false,
        })
    }

    /// Plans inner-joined `rels` with `conds` (ON conditions) and the
    /// WHERE conjuncts of `selection` over their concatenated columns.
    fn plan_relations(
        &self,
        mut rels: Vec<Relation>,
        conds: Vec<&ast::Expr>,
        selection: Option<&ast::Expr>,
    ) -> Result<(LogicalPlan, Scope)> {
        let scope = combined_scope(&rels);
        let width = scope.schema.fields().len();
        let mut terms: Vec<Expr> = Vec::new();
        let mut subs = Vec::new();
        // conjuncts with a subquery elsewhere than at their top (and ON
        // conditions with one): applied to the joined result, the
        // subqueries joined to it
        let (mut late, mut asts): (Vec<&ast::Expr>, Vec<&ast::Expr>) =
            conds.into_iter().partition(|c| contains_subquery(c));
        if let Some(w) = selection {
            let mut parts = Vec::new();
            split_and(w, &mut parts);
            for p in parts {
                match subquery_of(p) {
                    Some(s) => subs.push((p, s)),
                    None if contains_subquery(p) => late.push(p),
                    None => asts.push(p),
                }
            }
        }
        for a in &asts {
            let mut eb = ExprBinder::new(
                &scope,
                self.fold,
                false,
                "WHERE clause cannot contain aggregates",
            );
            let p = eb.bind_predicate(a, "WHERE")?;
            if p == Expr::Literal(ScalarValue::Boolean(true)) {
                continue;
            }
            terms.extend(p.conjuncts().into_iter().cloned());
        }
        let terms: Vec<Expr> = terms.into_iter().flat_map(factor_or).collect();
        let mut terms = terms;
        // subquery predicates: scalar ones add a relation and a term,
        // the others a SEMI/ANTI join over the result
        // SEMI/ANTI joins apply to the block's columns, without those of
        // the scalar subqueries joined as relations
        let base = scope.clone();
        let mut scope = scope;
        let mut filters = Vec::new();
        for (p, s) in subs {
            match s {
                SubqueryTerm::Scalar { query } => {
                    let Some((rel, extra)) = self.scalar_subquery(query, &scope, rels.len())?
                    else {
                        late.push(p);
                        continue;
                    };
                    let name = rel.scope.qualifier.clone().unwrap_or_default();
                    let n = scope.schema.fields().len();
                    let mut fields: Vec<Field> = scope
                        .schema
                        .fields()
                        .iter()
                        .map(|f| f.as_ref().clone())
                        .collect();
                    fields.extend(rel.scope.schema.fields().iter().map(|f| f.as_ref().clone()));
                    scope.schema = SchemaRef::new(Schema::new(fields));
                    scope
                        .relations
                        .push((name.clone(), (n..scope.schema.fields().len()).collect()));
                    terms.extend(extra.into_iter().map(|e| map_columns(&e, &|c| c)));
                    rels.push(rel);
                    let replaced = replace_subquery(p, &name);
                    let mut eb = ExprBinder::new(
                        &scope,
                        self.fold,
                        false,
                        "WHERE clause cannot contain aggregates",
                    );
                    let bound = eb.bind_predicate(&replaced, "WHERE")?;
                    terms.extend(bound.conjuncts().into_iter().cloned());
                }
                other => match self.filter_subquery(other, &base)? {
                    Some(f) => filters.push(f),
                    None => late.push(p),
                },
            }
        }
        let (plan, cols) = self.order_joins(rels, terms)?;
        // back to FROM order, without the scalar subqueries' columns
        let exprs: Vec<Expr> = (0..width)
            .map(|i| {
                let at = cols
                    .iter()
                    .position(|&c| c == i)
                    .expect("every column joined");
                Expr::column(at, scope.schema.field(i).name().clone())
            })
            .collect();
        let mut plan = plan;
        let identity = cols.len() == width && cols.iter().enumerate().all(|(i, &c)| i == c);
        let out_fields: Vec<Field> = (0..width)
            .map(|i| {
                let at = cols
                    .iter()
                    .position(|&c| c == i)
                    .expect("every column joined");
                // the joined type and nullability, the scope's name (a
                // derived table's column aliases are its scope's only)
                plan.schema()
                    .field(at)
                    .clone()
                    .with_name(scope.schema.field(i).name().clone())
            })
            .collect();
        let out_schema = SchemaRef::new(Schema::new(out_fields));
        if !identity {
            plan = LogicalPlan::Projection {
                input: Box::new(plan),
                exprs,
                schema: out_schema.clone(),
            };
        }
        for f in filters {
            let Planned::Filter { right, kind, terms } = f;
            plan = make_join(plan, right, kind, terms);
        }
        scope
            .relations
            .retain(|(_, cols)| cols.iter().all(|&c| c < width));
        scope.schema = out_schema;
        if !late.is_empty() {
            let mut eb = ExprBinder::new(
                &scope,
                self.fold,
                false,
                "WHERE clause cannot contain aggregates",
            );
            eb.allow_subqueries(self);
            let mut predicates = Vec::with_capacity(late.len());
            for p in late {
                predicates.push(eb.bind_predicate(p, "WHERE")?);
            }
            let predicate = conjunction(predicates).expect("a late conjunct");
            plan = super::subquery::filter_with(plan, predicate, eb.take_subqueries());
        }
        Ok((plan, scope))
    }

    /// Joins `rels` with `terms` (over the scope's columns), in the
    /// cheapest order found (see the module documentation);
    /// returns the plan and, for each of its columns, the scope column it
    /// holds.
    fn order_joins(
        &self,
        rels: Vec<Relation>,
        terms: Vec<Expr>,
    ) -> Result<(LogicalPlan, Vec<usize>)> {
        let mut offsets = Vec::with_capacity(rels.len());
        let mut n = 0;
        for r in &rels {
            offsets.push(n);
            n += r.scope.schema.fields().len();
        }
        let rel_of = |c: usize| offsets.iter().rposition(|&o| o <= c).unwrap_or(0);
        let fields: Vec<Field> = rels
            .iter()
            .flat_map(|r| r.scope.schema.fields().iter().map(|f| f.as_ref().clone()))
            .collect();
        // estimated distinct values of a column, by scope column
        let plans: Vec<LogicalPlan> = rels.iter().map(|r| r.plan.clone()).collect();
        let distinct = |c: usize| {
            let r = rel_of(c);
            column_distinct(self, &plans[r], c - offsets[r])
        };
        let mut local: Vec<Vec<Expr>> = vec![Vec::new(); rels.len()];
        let mut pending: Vec<(HashSet<usize>, Expr)> = Vec::new();
        let mut constant = Vec::new();
        for t in terms {
            let set: HashSet<usize> = t.columns().into_iter().map(rel_of).collect();
            match set.len() {
                0 => constant.push(t),
                1 => {
                    let r = *set.iter().next().expect("one relation");
                    let o = offsets[r];
                    local[r].push(map_columns(&t, &|c| c - o));
                }
                _ => {
                    // an OR over several relations: each relation named in
                    // every branch gets the OR of its parts (Q7's
                    // `n1.n_name IN (...)`), the OR itself kept
                    let derived = crate::optimize::pushdown::derive_or(&t, &|x| {
                        let rels: HashSet<usize> = x.columns().into_iter().map(rel_of).collect();
                        (rels.len() == 1).then(|| *rels.iter().next().expect("one relation"))
                    });
                    for (r, d) in derived {
                        let o = offsets[r];
                        local[r].push(map_columns(&d, &|c| c - o));
                    }
                    pending.push((set, t));
                }
            }
        }
        // implied equalities: `a = b` between plain columns of two
        // relations (same type) puts them in one class; a join of two
        // parts uses one key per class with members on both sides, so
        // `c_nationkey = s_nationkey AND s_nationkey = n_nationkey` also
        // joins customer to nation, and no equality is checked twice
        let mut classes = implied_classes(&mut pending, &fields, &rel_of);
        for class in &mut classes {
            // two members in one relation: equal by a filter on it
            let mut seen: Vec<&Member> = Vec::new();
            for m in class.iter() {
                match seen.iter().find(|s| s.rel == m.rel) {
                    Some(first) => {
                        let o = offsets[m.rel];
                        local[m.rel].push(Expr::binary(
                            Expr::column(first.col - o, first.name.clone()),
                            BinaryOp::Eq,
                            Expr::column(m.col - o, m.name.clone()),
                        ));
                    }
                    None => seen.push(m),
                }
            }
        }
        struct Part {
            plan: LogicalPlan,
            cols: Vec<usize>,
            rels: HashSet<usize>,
            rows: f64,
            base: f64,
            single: bool,
        }
        let mut parts: Vec<Option<Part>> = rels
            .into_iter()
            .zip(local)
            .enumerate()
            .map(|(i, (r, terms))| {
                let o = offsets[i];
                let kept: f64 = terms
                    .iter()
                    .map(|t| estimate::selectivity(t, &|c| distinct(c + o)))
                    .product();
                let width = r.scope.schema.fields().len();
                Some(Part {
                    rows: (r.rows * kept).max(1.0),
                    plan: filtered(r.plan, terms),
                    cols: (o..o + width).collect(),
                    rels: HashSet::from([i]),
                    base: r.base,
                    single: r.single,
                })
            })
            .collect();
        // the distinct values of scope column `c` within a part of `rows`
        let ndv = |c: usize, rows: f64| distinct(c).map(|d| d.min(rows));
        let key_column = |e: &Expr| match e {
            Expr::Column(c) => Some(c.index),
            Expr::Cast { expr, .. } => match expr.as_ref() {
                Expr::Column(c) => Some(c.index),
                _ => None,
            },
            _ => None,
        };
        // the estimated rows of joining parts `a` and `b` with the
        // pending terms they complete; `None` when no equality connects
        // them
        let estimate = |a: &Shape, b: &Shape, pending: &[(HashSet<usize>, Expr)]| {
            let mut keys = Vec::new();
            let mut others = 1.0;
            for class in &classes {
                let (x, y) = (class_side(class, &a.rels), class_side(class, &b.rels));
                if x.is_empty() || y.is_empty() {
                    continue;
                }
                // the side's most distinct member bounds its key
                let most = |ms: &[&Member], rows: f64| {
                    ms.iter()
                        .filter_map(|m| ndv(m.col, rows))
                        .max_by(f64::total_cmp)
                };
                keys.push((most(&x, a.rows), most(&y, b.rows)));
            }
            for (set, t) in pending {
                if !set.iter().all(|r| a.rels.contains(r) || b.rels.contains(r))
                    || set.iter().all(|r| a.rels.contains(r))
                    || set.iter().all(|r| b.rels.contains(r))
                {
                    continue;
                }
                let pair = match t {
                    Expr::Binary {
                        op: BinaryOp::Eq,
                        left,
                        right,
                    } => {
                        let side = |e: &Expr| {
                            let rs: HashSet<usize> = e.columns().into_iter().map(rel_of).collect();
                            if rs.is_empty() {
                                None
                            } else if rs.iter().all(|r| a.rels.contains(r)) {
                                Some(0)
                            } else if rs.iter().all(|r| b.rels.contains(r)) {
                                Some(1)
                            } else {
                                None
                            }
                        };
                        match (side(left), side(right)) {
                            (Some(0), Some(1)) => Some((left, right)),
                            (Some(1), Some(0)) => Some((right, left)),
                            _ => None,
                        }
                    }
                    _ => None,
                };
                match pair {
                    Some((x, y)) => keys.push((
                        key_column(x).and_then(|c| ndv(c, a.rows)),
                        key_column(y).and_then(|c| ndv(c, b.rows)),
                    )),
                    None => others *= estimate::selectivity(t, &|_| None),
                }
            }
            if keys.is_empty() {
                return None;
            }
            let rows = estimate::join_rows(a.rows, b.rows, &keys)
                .unwrap_or_else(|| a.rows * b.rows / a.base.min(b.base).max(1.0));
            Some((rows * others).max(1.0))
        };
        // up to order::DP_LIMIT parts: the cheapest tree by dynamic
        // programming; past it (and for what it leaves) greedily
        let alive: Vec<usize> = (0..parts.len())
            .filter(|&i| parts[i].as_ref().is_some_and(|p| !p.single))
            .collect();
        let inputs: Vec<(f64, f64)> = alive
            .iter()
            .map(|&i| parts[i].as_ref().map_or((1.0, 1.0), |p| (p.rows, p.base)))
            .collect();
        let shape = |s: order::Side| Shape {
            rels: (0..alive.len())
                .filter(|k| s.mask & (1 << k) != 0)
                .map(|k| alive[k])
                .collect(),
            rows: s.rows,
            base: s.base,
        };
        if alive.len() >= 2
            && let Some(tree) =
                order::best_tree(&inputs, &|a, b| estimate(&shape(a), &shape(b), &pending))
        {
            let joined = assemble(&tree, &alive, &mut parts, &mut pending, &classes);
            parts[alive[0]] = Some(joined);
        }
        loop {
            let alive: Vec<usize> = (0..parts.len())
                .filter(|&i| parts[i].as_ref().is_some_and(|p| !p.single))
                .collect();
            if alive.len() < 2 {
                break;
            }
            // the connected pair with the smallest estimated result, else
            // (a cross join) the two smallest parts
            let mut best: Option<(f64, usize, usize)> = None;
            for (x, &i) in alive.iter().enumerate() {
                for &j in &alive[x + 1..] {
                    let (a, b) = (
                        parts[i].as_ref().expect("alive"),
                        parts[j].as_ref().expect("alive"),
                    );
                    if let Some(rows) = estimate(&a.shape(), &b.shape(), &pending)
                        && best.is_none_or(|(r, ..)| rows < r)
                    {
                        best = Some((rows, i, j));
                    }
                }
            }
            let (rows, i, j) = match best {
                Some(b) => b,
                None => {
                    let mut by_size = alive.clone();
                    let rows = |i: usize| parts[i].as_ref().map_or(0.0, |p| p.rows);
                    by_size.sort_by(|&a, &b| rows(a).total_cmp(&rows(b)).then(a.cmp(&b)));
                    let (i, j) = (by_size[0], by_size[1]);
                    (rows(i) * rows(j), i.min(j), i.max(j))
                }
            };
            let a = parts[i].take().expect("alive");
            let b = parts[j].take().expect("alive");
            // build (the right input) on the smaller side
            let (l, r) = if b.rows > a.rows { (b, a) } else { (a, b) };
            let merged = join_parts(l, r, &mut pending, &classes, rows);
            parts[i] = Some(merged);
        }
        // scalar subqueries: SINGLE joins onto the result
        let (singles, others): (Vec<Part>, Vec<Part>) =
            parts.into_iter().flatten().partition(|p| p.single);
        let mut cur = others.into_iter().next().expect("a relation of FROM");
        for s in singles {
            let rows = cur.rows;
            cur = join_parts(cur, s, &mut pending, &classes, rows);
        }
        impl Part {
            fn shape(&self) -> Shape {
                Shape {
                    rels: self.rels.clone(),
                    rows: self.rows,
                    base: self.base,
                }
            }
        }
        /// The part of `tree`, its leaves the parts at `alive`.
        fn assemble(
            tree: &order::Tree,
            alive: &[usize],
            parts: &mut [Option<Part>],
            pending: &mut Vec<(HashSet<usize>, Expr)>,
            classes: &[Vec<Member>],
        ) -> Part {
            match tree {
                order::Tree::Leaf(k) => parts[alive[*k]].take().expect("a part joined once"),
                order::Tree::Join { left, right, rows } => {
                    let l = assemble(left, alive, parts, pending, classes);
                    let r = assemble(right, alive, parts, pending, classes);
                    join_parts(l, r, pending, classes, *rows)
                }
            }
        }
        fn join_parts(
            l: Part,
            r: Part,
            pending: &mut Vec<(HashSet<usize>, Expr)>,
            classes: &[Vec<Member>],
            rows: f64,
        ) -> Part {
            let mut rels = l.rels.clone();
            rels.extend(&r.rels);
            let (ready, rest): (Vec<_>, Vec<_>) = std::mem::take(pending)
                .into_iter()
                .partition(|(set, _)| set.iter().all(|x| rels.contains(x)));
            *pending = rest;
            let mut cols = l.cols.clone();
            cols.extend(&r.cols);
            let pos = |c: usize| cols.iter().position(|&x| x == c).expect("joined column");
            // one key per class with members on both sides
            let keys = classes.iter().filter_map(|class| {
                let x = class_side(class, &l.rels).into_iter().next()?;
                let y = class_side(class, &r.rels).into_iter().next()?;
                Some(Expr::binary(
                    Expr::column(pos(x.col), x.name.clone()),
                    BinaryOp::Eq,
                    Expr::column(pos(y.col), y.name.clone()),
                ))
            });
            let terms: Vec<Expr> = keys
                .collect::<Vec<_>>()
                .into_iter()
                .chain(ready.into_iter().map(|(_, t)| map_columns(&t, &pos)))
                .collect();
            // a SINGLE join pads a missing row with NULLs: conditions on
            // its value filter the joined rows
            let plan = if r.single {
                filtered(
                    make_join(l.plan, r.plan, JoinKind::Single, Vec::new()),
                    terms,
                )
            } else {
                make_join(l.plan, r.plan, JoinKind::Inner, terms)
            };
            Part {
                plan,
                cols,
                rels,
                rows: rows.max(1.0),
                base: l.base.max(r.base),
                single: false,
            }
        }
        let plan = filtered(cur.plan, constant);
        Ok((plan, cur.cols))
    }
}

/// `left kind JOIN right ON terms` (`terms` over `left ++ right`). The
/// hash join builds on its right input: a LEFT join whose right side is
/// estimated larger than its left runs as `right RIGHT JOIN left` (the
/// preserved rows built, the unmatched ones emitted once the probe is
/// done), its columns put back in `left ++ right` order.
fn left_join_building_smaller(
    binder: &Binder<'_>,
    left: LogicalPlan,
    right: LogicalPlan,
    kind: JoinKind,
    terms: Vec<Expr>,
) -> LogicalPlan {
    if kind != JoinKind::Left || estimate_rows(binder, &right) <= estimate_rows(binder, &left) {
        return make_join(left, right, kind, terms);
    }
    let schema = join_schema(&left.schema(), &right.schema(), kind);
    let ln = left.schema().fields().len();
    let rn = right.schema().fields().len();
    // left column c is c + rn of the swapped join, right column ln + c is c
    let swap = |c: usize| if c < ln { c + rn } else { c - ln };
    let terms = terms.iter().map(|t| map_columns(t, &swap)).collect();
    let join = make_join(right, left, JoinKind::Right, terms);
    let exprs = (0..ln)
        .map(|c| c + rn)
        .chain(0..rn)
        .zip(schema.fields())
        .map(|(c, f)| Expr::column(c, f.name().clone()))
        .collect();
    LogicalPlan::Projection {
        input: Box::new(join),
        exprs,
        schema,
    }
}

/// A column of a class of implied equalities: its scope column, its
/// relation and its name.
struct Member {
    col: usize,
    rel: usize,
    name: String,
}

/// What the join order knows of a part: its relations and estimated
/// rows, and the largest base table below it.
struct Shape {
    rels: HashSet<usize>,
    rows: f64,
    base: f64,
}

/// The members of `class` in the relations `rels`.
fn class_side<'m>(class: &'m [Member], rels: &HashSet<usize>) -> Vec<&'m Member> {
    class.iter().filter(|m| rels.contains(&m.rel)).collect()
}

/// Takes the equalities of two plain columns of different relations and
/// the same type out of `pending` and returns their classes (the
/// transitive closure; each class two columns or more, in scope order).
fn implied_classes(
    pending: &mut Vec<(HashSet<usize>, Expr)>,
    fields: &[Field],
    rel_of: &dyn Fn(usize) -> usize,
) -> Vec<Vec<Member>> {
    fn root(parent: &mut [usize], mut c: usize) -> usize {
        while parent[c] != c {
            parent[c] = parent[parent[c]];
            c = parent[c];
        }
        c
    }
    let mut ids: Vec<usize> = Vec::new();
    let mut parent: Vec<usize> = Vec::new();
    let id = |c: usize, ids: &mut Vec<usize>, parent: &mut Vec<usize>| match ids
        .iter()
        .position(|&x| x == c)
    {
        Some(i) => i,
        None => {
            ids.push(c);
            parent.push(parent.len());
            parent.len() - 1
        }
    };
    let mut rest = Vec::new();
    for (set, t) in std::mem::take(pending) {
        if let Expr::Binary {
            op: BinaryOp::Eq,
            left,
            right,
        } = &t
            && let (Expr::Column(a), Expr::Column(b)) = (left.as_ref(), right.as_ref())
            && rel_of(a.index) != rel_of(b.index)
            && fields[a.index].data_type() == fields[b.index].data_type()
        {
            let x = id(a.index, &mut ids, &mut parent);
            let y = id(b.index, &mut ids, &mut parent);
            let (rx, ry) = (root(&mut parent, x), root(&mut parent, y));
            parent[rx] = ry;
            continue;
        }
        rest.push((set, t));
    }
    *pending = rest;
    let mut classes: Vec<(usize, Vec<usize>)> = Vec::new();
    for (i, &c) in ids.iter().enumerate() {
        let r = root(&mut parent, i);
        match classes.iter_mut().find(|(x, _)| *x == r) {
            Some((_, cols)) => cols.push(c),
            None => classes.push((r, vec![c])),
        }
    }
    classes
        .into_iter()
        .map(|(_, mut cols)| {
            cols.sort_unstable();
            cols.into_iter()
                .map(|c| Member {
                    col: c,
                    rel: rel_of(c),
                    name: fields[c].name().clone(),
                })
                .collect()
        })
        .collect()
}

fn cast(e: Expr, from: &arrow_schema::DataType, to: &arrow_schema::DataType) -> Expr {
    if from == to {
        e
    } else {
        Expr::Cast {
            expr: Box::new(e),
            to: to.clone(),
            try_cast: false,
        }
    }
}

/// The scope of `rels` side by side.
fn combined_scope(rels: &[Relation]) -> Scope {
    let mut fields = Vec::new();
    let mut relations = Vec::new();
    for r in rels {
        let offset = fields.len();
        relations.extend(
            r.scope
                .parts()
                .into_iter()
                .map(|(q, cols)| (q, cols.into_iter().map(|c| c + offset).collect::<Vec<_>>())),
        );
        fields.extend(r.scope.schema.fields().iter().map(|f| f.as_ref().clone()));
    }
    Scope {
        qualifier: None,
        schema: SchemaRef::new(Schema::new(fields)),
        relations,
    }
}

/// Estimated rows of a relation's plan: the catalog's count for a table,
/// times the estimated selectivity of its filters.
fn estimate_rows(binder: &Binder<'_>, plan: &LogicalPlan) -> f64 {
    match plan {
        LogicalPlan::Scan {
            source: crate::plan::TableSource::Table(name),
            ..
        } => binder
            .catalog
            .table_rows(name)
            .map_or(UNKNOWN_ROWS, |n| n as f64),
        LogicalPlan::Scan {
            source: crate::plan::TableSource::Series { start, stop, step },
            ..
        } => ((stop - start) / step).unsigned_abs() as f64,
        LogicalPlan::Values { rows, .. } => rows.len() as f64,
        LogicalPlan::Filter { input, predicate } => {
            estimate_rows(binder, input)
                * estimate::selectivity(predicate, &|c| column_distinct(binder, input, c))
        }
        LogicalPlan::Aggregate {
            input, group_by, ..
        } => {
            if group_by.is_empty() {
                1.0
            } else {
                estimate_rows(binder, input) * 0.5
            }
        }
        LogicalPlan::Limit {
            input,
            fetch: Some(f),
            ..
        } => estimate_rows(binder, input).min(*f as f64),
        LogicalPlan::Join { left, right, .. } => {
            estimate_rows(binder, left).max(estimate_rows(binder, right))
        }
        other => other
            .input()
            .map_or(UNKNOWN_ROWS, |i| estimate_rows(binder, i)),
    }
}

/// Estimated distinct values of output column `c` of `plan`.
fn column_distinct(binder: &Binder<'_>, plan: &LogicalPlan, c: usize) -> Option<f64> {
    estimate::column_distinct(plan, c, binder.catalog)
}

fn join_name(op: &JoinOperator) -> &'static str {
    match op {
        JoinOperator::Semi(_) | JoinOperator::LeftSemi(_) | JoinOperator::RightSemi(_) => "SEMI",
        JoinOperator::Anti(_) | JoinOperator::LeftAnti(_) | JoinOperator::RightAnti(_) => "ANTI",
        JoinOperator::AsOf { .. } => "ASOF",
        JoinOperator::CrossApply | JoinOperator::OuterApply => "APPLY",
        _ => "of this kind",
    }
}

/// `p` with its scalar subquery replaced by the column `name.__value`.
fn replace_subquery(p: &ast::Expr, name: &str) -> ast::Expr {
    let col = ast::Expr::CompoundIdentifier(vec![Ident::new(name), Ident::new("__value")]);
    match p {
        ast::Expr::BinaryOp { left, op, right } => {
            let (l, r) = match (&**left, &**right) {
                (ast::Expr::Subquery(_), other) => (col, other.clone()),
                (other, _) => (other.clone(), col),
            };
            ast::Expr::BinaryOp {
                left: Box::new(l),
                op: op.clone(),
                right: Box::new(r),
            }
        }
        other => other.clone(),
    }
}

impl Binder<'_> {
    /// `EXISTS`/`IN` in WHERE: a SEMI or ANTI join with the subquery,
    /// correlated conjuncts of its WHERE becoming join conditions.
    /// `None` for a correlated `IN`, which is planned as an expression.
    fn filter_subquery(&self, s: SubqueryTerm<'_>, outer: &Scope) -> Result<Option<Planned>> {
        match s {
            SubqueryTerm::Exists { query, negated } => {
                let (plan, _, correlated) = self.correlated_select(query, outer)?;
                Ok(Some(Planned::Filter {
                    right: plan,
                    kind: if negated {
                        JoinKind::Anti
                    } else {
                        JoinKind::Semi
                    },
                    terms: correlated,
                }))
            }
            SubqueryTerm::In {
                expr,
                query,
                negated,
            } => {
                // the subquery's rows, the value compared (over them) and,
                // correlated, the conditions naming the outer query
                let (plan, value, mut terms) = match self.query(query) {
                    Ok(plan) => {
                        let schema = plan.schema();
                        if schema.fields().len() != 1 {
                            return Err(bind_err(format!(
                                "Subquery returns {} columns - expected 1{}",
                                schema.fields().len(),
                                at(query.span())
                            )));
                        }
                        let value = Expr::column(0, schema.field(0).name().clone());
                        (plan, value, Vec::new())
                    }
                    // correlated: IN is a SEMI join on the correlation too;
                    // NOT IN (whose NULLs are the group's) and the shapes
                    // not planned here are planned as expressions
                    Err(e) if e.to_string().contains("not found") => {
                        let SetExpr::Select(s) = query.body.as_ref() else {
                            return Ok(None);
                        };
                        let [
                            ast::SelectItem::UnnamedExpr(v)
                            | ast::SelectItem::ExprWithAlias { expr: v, .. },
                        ] = s.projection.as_slice()
                        else {
                            return Ok(None);
                        };
                        if negated {
                            return Ok(None);
                        }
                        let Ok((plan, scope, terms)) = self.correlated_select(query, outer) else {
                            return Ok(None);
                        };
                        let mut eb = ExprBinder::new(&scope, self.fold, false, "");
                        let Ok(value) = eb.bind(v) else {
                            return Ok(None);
                        };
                        (plan, value, terms)
                    }
                    Err(e) => return Err(e),
                };
                let mut eb = ExprBinder::new(
                    outer,
                    self.fold,
                    false,
                    "WHERE clause cannot contain aggregates",
                );
                let left = eb.bind(expr)?;
                let lt = left.data_type(&outer.schema);
                let rt = value.data_type(&plan.schema());
                let Some(t) = super::coerce::comparison_type(&lt, &rt) else {
                    return Err(bind_err(format!(
                        "Cannot compare values of type {} and type {} in IN (subquery){}",
                        crate::types::sql_type_name(&lt),
                        crate::types::sql_type_name(&rt),
                        at(expr.span())
                    )));
                };
                let n = outer.schema.fields().len();
                let right = map_columns(&value, &|c| c + n);
                terms.push(Expr::binary(
                    cast(left, &lt, &t),
                    BinaryOp::Eq,
                    cast(right, &rt, &t),
                ));
                Ok(Some(Planned::Filter {
                    right: plan,
                    kind: if negated {
                        JoinKind::NullAwareAnti
                    } else {
                        JoinKind::Semi
                    },
                    terms,
                }))
            }
            SubqueryTerm::Scalar { .. } => Err(bind_err("a scalar subquery planned as a filter")),
        }
    }

    /// Plans the simple SELECT of a subquery whose WHERE may name the
    /// outer query's columns: returns its plan, its scope and the
    /// correlated conjuncts bound over the outer columns followed by the
    /// subquery's.
    pub(super) fn correlated_select(
        &self,
        query: &ast::Query,
        outer: &Scope,
    ) -> Result<(LogicalPlan, Scope, Vec<Expr>)> {
        let SetExpr::Select(s) = query.body.as_ref() else {
            return self.query(query).map(|p| {
                let scope = Scope {
                    qualifier: None,
                    schema: p.schema(),
                    relations: Vec::new(),
                };
                (p, scope, Vec::new())
            });
        };
        let simple = query.with.is_none()
            && query.order_by.is_none()
            && query.limit_clause.is_none()
            && s.having.is_none()
            && matches!(&s.group_by, ast::GroupByExpr::Expressions(g, _) if g.is_empty())
            && s.distinct.is_none();
        if !simple {
            return self
                .query(query)
                .map(|p| {
                    let scope = Scope {
                        qualifier: None,
                        schema: p.schema(),
                        relations: Vec::new(),
                    };
                    (p, scope, Vec::new())
                })
                .map_err(|e| correlation_hint(e, query));
        }
        let (rels, conds) = self.collect(&s.from)?;
        let inner = combined_scope(&rels);
        let (uncorrelated, correlated) =
            self.split_correlated(s.selection.as_ref(), &inner, outer)?;
        let selection = conjunction_ast(uncorrelated);
        let (plan, scope) = self.plan_relations(rels, conds, selection.as_ref())?;
        let both = Scope::concat(
            &outer.as_outer(),
            &scope,
            join_schema(&outer.schema, &scope.schema, JoinKind::Inner),
        );
        let mut terms = Vec::new();
        for c in correlated {
            let mut eb = ExprBinder::new(
                &both,
                self.fold,
                false,
                "WHERE clause cannot contain aggregates",
            );
            let p = eb.bind_predicate(c, "WHERE")?;
            terms.extend(p.conjuncts().into_iter().cloned());
        }
        Ok((plan, scope, terms))
    }

    /// Splits the WHERE conjuncts of a subquery into those over its own
    /// columns and those naming the outer query's.
    fn split_correlated<'e>(
        &self,
        selection: Option<&'e ast::Expr>,
        inner: &Scope,
        outer: &Scope,
    ) -> Result<(Vec<&'e ast::Expr>, Vec<&'e ast::Expr>)> {
        let mut own = Vec::new();
        let mut correlated = Vec::new();
        let Some(w) = selection else {
            return Ok((own, correlated));
        };
        let mut parts = Vec::new();
        split_and(w, &mut parts);
        for p in parts {
            if subquery_of(p).is_some() || self.names_resolve(p, inner) {
                own.push(p);
                continue;
            }
            let both = Scope::concat(
                &outer.as_outer(),
                inner,
                join_schema(&outer.schema, &inner.schema, JoinKind::Inner),
            );
            if self.names_resolve(p, &both) {
                correlated.push(p);
            } else {
                own.push(p);
            }
        }
        Ok((own, correlated))
    }

    /// A scalar subquery compared in WHERE as a relation to join:
    /// uncorrelated, one row at most (a SINGLE join); correlated by
    /// equalities and aggregating, grouped by its correlation columns and
    /// joined on them. Its value column is `__value`; returns the relation
    /// and the correlation terms over the scope `outer` extended by the
    /// relation's columns. `None` for the other scalar subqueries
    /// (`binder/subquery.rs` plans them as expressions).
    fn scalar_subquery(
        &self,
        query: &ast::Query,
        outer: &Scope,
        k: usize,
    ) -> Result<Option<(Relation, Vec<Expr>)>> {
        let sub = self.bind_subquery(query, outer, super::subquery::Tested::Scalar)?;
        let Some((plan, single, keys)) = sub.into_relation() else {
            return Ok(None);
        };
        let schema = plan.schema();
        let n = schema.fields().len() - 1;
        let mut fields: Vec<Field> = (0..n)
            .map(|i| schema.field(i).clone().with_name(format!("__key{i}")))
            .collect();
        fields.push(
            schema
                .field(n)
                .clone()
                .with_name("__value")
                .with_nullable(true),
        );
        let scope = Scope {
            qualifier: Some(format!("__subquery{k}")),
            schema: SchemaRef::new(Schema::new(fields)),
            relations: Vec::new(),
        };
        let ow = outer.schema.fields().len();
        let terms = keys
            .into_iter()
            .enumerate()
            .map(|(i, o)| Expr::binary(o, BinaryOp::Eq, Expr::column(ow + i, format!("__key{i}"))))
            .collect();
        let rows = if single {
            1.0
        } else {
            estimate_rows(self, &plan)
        };
        Ok(Some((
            Relation {
                plan,
                scope,
                rows,
                base: rows,
                single,
            },
            terms,
        )))
    }
}

impl Scope {
    /// `id` in a scope of one or several relations.
    fn resolve_single(&self, id: &Ident) -> Result<usize> {
        if self.relations.is_empty() {
            self.find(&id.value).ok_or_else(|| {
                bind_err(format!(
                    "Referenced column \"{}\" not found in FROM clause!{}",
                    id.value,
                    at(id.span)
                ))
            })
        } else {
            self.resolve(None, id)
        }
    }
}

impl Binder<'_> {
    /// True if `e` binds over `scope` alone (every name it uses is
    /// there).
    fn names_resolve(&self, e: &ast::Expr, scope: &Scope) -> bool {
        let mut eb = ExprBinder::new(scope, self.fold, false, "");
        eb.bind(e).is_ok()
    }
}

fn conjunction_ast(terms: Vec<&ast::Expr>) -> Option<ast::Expr> {
    terms
        .into_iter()
        .cloned()
        .reduce(|a, b| ast::Expr::BinaryOp {
            left: Box::new(a),
            op: ast::BinaryOperator::And,
            right: Box::new(b),
        })
}

/// A subquery that fails to bind because it names outer columns outside
/// the shapes decorrelated here says so.
pub(super) fn correlation_hint(e: crate::error::Error, query: &ast::Query) -> crate::error::Error {
    let msg = e.to_string();
    if msg.contains("not found") {
        unsupported(format!(
            "this correlated subquery is not supported (a subquery is decorrelated when the outer query's columns appear only in its own WHERE, and it has no GROUP BY, HAVING, DISTINCT, ORDER BY or LIMIT): {msg}{}",
            at(query.span())
        ))
    } else {
        e
    }
}
