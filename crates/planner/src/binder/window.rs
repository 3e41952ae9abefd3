//! Binding window functions (`f(...) OVER (...)`, named `WINDOW`s) and
//! planning the Window nodes of a SELECT.

use arrow_schema::{DataType, Field, Schema, SchemaRef};
use sqlparser::ast::{self, FunctionArg, FunctionArgExpr, FunctionArguments, Spanned};

use super::expr::{AggregateCall, ExprBinder, aggregate_kind, counts_distinct};
use super::query::sort_options;
use super::{at, bind_err, unsupported};
use crate::error::Result;
use crate::expr::Expr;
use crate::functions::{self, FunctionKind};
use crate::plan::{
    AggregateExpr, AggregateFunction, FrameBound, FrameUnits, LogicalPlan, SortKey, WindowExpr,
    WindowFrame, WindowFunction,
};
use crate::scalar::ScalarValue;
use crate::types::{canonical, is_numeric, sql_type_name, window_result_type};

/// A window function as bound: its partition and order keys, the call,
/// and the field of its output column.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct BoundWindow {
    pub(crate) partition_by: Vec<Expr>,
    pub(crate) order_by: Vec<SortKey>,
    pub(crate) expr: WindowExpr,
    pub(crate) field: Field,
}

const NESTED: &str = "window functions cannot be nested";

/// True for the functions that exist only with OVER.
pub(crate) fn is_window_only(name: &str) -> bool {
    window_only(name).is_some()
}

fn window_only(name: &str) -> Option<WindowFunction> {
    Some(match name {
        "row_number" => WindowFunction::RowNumber,
        "rank" => WindowFunction::Rank,
        "dense_rank" => WindowFunction::DenseRank,
        "percent_rank" => WindowFunction::PercentRank,
        "cume_dist" => WindowFunction::CumeDist,
        "ntile" => WindowFunction::Ntile,
        "lag" => WindowFunction::Lag,
        "lead" => WindowFunction::Lead,
        "first_value" => WindowFunction::FirstValue,
        "last_value" => WindowFunction::LastValue,
        "nth_value" => WindowFunction::NthValue,
        _ => return None,
    })
}

/// The `WINDOW name AS (...)` definitions of a SELECT, each resolved to a
/// full specification (a definition may build on an earlier one).
pub(crate) fn named_windows(
    defs: &[ast::NamedWindowDefinition],
) -> Result<Vec<(String, ast::WindowSpec)>> {
    let mut out: Vec<(String, ast::WindowSpec)> = Vec::with_capacity(defs.len());
    for ast::NamedWindowDefinition(name, def) in defs {
        let spec = match def {
            ast::NamedWindowExpr::NamedWindow(base) => lookup(&out, base)?.clone(),
            ast::NamedWindowExpr::WindowSpec(spec) => resolve(&out, spec)?,
        };
        if out.iter().any(|(n, _)| n.eq_ignore_ascii_case(&name.value)) {
            return Err(bind_err(format!(
                "duplicate window name \"{}\"{}",
                name.value,
                at(name.span)
            )));
        }
        out.push((name.value.clone(), spec));
    }
    Ok(out)
}

fn lookup<'a>(
    named: &'a [(String, ast::WindowSpec)],
    id: &ast::Ident,
) -> Result<&'a ast::WindowSpec> {
    named
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(&id.value))
        .map(|(_, s)| s)
        .ok_or_else(|| {
            bind_err(format!(
                "window \"{}\" is not defined{}",
                id.value,
                at(id.span)
            ))
        })
}

/// `spec` with the named window it starts from (`OVER (w ORDER BY x)`)
/// filled in: a named window's partition, order and frame are kept, and
/// the spec may add only what the named one lacks.
fn resolve(named: &[(String, ast::WindowSpec)], spec: &ast::WindowSpec) -> Result<ast::WindowSpec> {
    let Some(base_name) = &spec.window_name else {
        return Ok(spec.clone());
    };
    let mut base = lookup(named, base_name)?.clone();
    if !spec.partition_by.is_empty() {
        return Err(bind_err(format!(
            "cannot override PARTITION BY of window \"{}\"{}",
            base_name.value,
            at(base_name.span)
        )));
    }
    if !spec.order_by.is_empty() {
        if !base.order_by.is_empty() {
            return Err(bind_err(format!(
                "cannot override ORDER BY of window \"{}\"{}",
                base_name.value,
                at(base_name.span)
            )));
        }
        base.order_by = spec.order_by.clone();
    }
    if spec.window_frame.is_some() {
        base.window_frame = spec.window_frame.clone();
    }
    base.window_name = None;
    Ok(base)
}

/// Binds `f(...) OVER (...)` and returns its placeholder column.
pub(crate) fn bind_window(
    eb: &mut ExprBinder<'_>,
    f: &ast::Function,
    name: &str,
    e: &ast::Expr,
) -> Result<Expr> {
    let spec = match &f.over {
        None => {
            return Err(bind_err(format!(
                "window function {name} requires an OVER clause{}",
                at(e.span())
            )));
        }
        Some(ast::WindowType::NamedWindow(id)) => lookup(&eb.named_windows, id)?.clone(),
        Some(ast::WindowType::WindowSpec(spec)) => resolve(&eb.named_windows, spec)?,
    };
    if !f.within_group.is_empty() {
        return Err(unsupported(format!(
            "WITHIN GROUP is not supported ({name}){}",
            at(e.span())
        )));
    }
    // `lag(x IGNORE NULLS)` (DuckDB's form) or `lag(x) IGNORE NULLS`
    let mut null_treatment = f.null_treatment;
    if !matches!(f.parameters, FunctionArguments::None) {
        return Err(unsupported(format!(
            "parametric function {name} is not supported"
        )));
    }
    let mut distinct = false;
    let mut inner_order: &[ast::OrderByExpr] = &[];
    let args: Vec<&FunctionArgExpr> = match &f.args {
        FunctionArguments::None => Vec::new(),
        FunctionArguments::Subquery(_) => {
            return Err(unsupported(format!(
                "subqueries are not supported{}",
                at(e.span())
            )));
        }
        FunctionArguments::List(list) => {
            distinct = list.duplicate_treatment == Some(ast::DuplicateTreatment::Distinct);
            for clause in &list.clauses {
                match clause {
                    ast::FunctionArgumentClause::IgnoreOrRespectNulls(t) => {
                        null_treatment = Some(*t);
                    }
                    ast::FunctionArgumentClause::OrderBy(terms) => inner_order = terms,
                    _ => {
                        return Err(unsupported(format!(
                            "clauses inside {name}(...) are not supported{}",
                            at(e.span())
                        )));
                    }
                }
            }
            let mut args = Vec::with_capacity(list.args.len());
            for a in &list.args {
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
            args
        }
    };
    let aggregate = match window_only(name) {
        Some(_) => None,
        None => functions::lookup(name).and_then(|d| {
            distinct |= counts_distinct(d.kind);
            aggregate_kind(d.kind)
        }),
    };
    // an aggregate the window's kernels do not compute: bound as in a
    // GROUP BY, computed by the aggregation over each frame
    if let Some((func, rewrite)) = aggregate
        && (distinct
            || !inner_order.is_empty()
            || rewrite.is_some()
            || !matches!(
                func,
                AggregateFunction::Count
                    | AggregateFunction::Sum
                    | AggregateFunction::Avg
                    | AggregateFunction::Min
                    | AggregateFunction::Max
                    | AggregateFunction::First
                    | AggregateFunction::Last
            ))
    {
        if null_treatment.is_some() {
            return Err(bind_err(format!(
                "RESPECT/IGNORE NULLS is not supported for {name}: only for lag, lead, first_value, last_value and nth_value{}",
                at(e.span())
            )));
        }
        let call = AggregateCall {
            name,
            args: &args,
            distinct,
            filter: f.filter.as_deref(),
            order_by: inner_order,
            rewrite,
        };
        let agg = eb.window_aggregate(func, call, e)?;
        let value_type = agg.arg.as_ref().map(|a| eb.type_of(a));
        let args: Vec<Expr> = agg.exprs().cloned().collect();
        let mut position = 0;
        let shape = agg.map_exprs(|x| {
            position += 1;
            Expr::column(position - 1, x.to_string())
        });
        return finish(
            eb,
            Call {
                func: WindowFunction::Aggregate(shape.func),
                args,
                offset: 1,
                ignore_nulls: false,
                aggregate: Some(Box::new(shape)),
                value_type,
            },
            &spec,
            e,
        );
    }
    if distinct || !inner_order.is_empty() {
        let what = if distinct { "DISTINCT" } else { "ORDER BY" };
        return Err(bind_err(format!(
            "{what} is only allowed in aggregate functions, not {name}{}",
            at(e.span())
        )));
    }
    let func = match window_only(name) {
        Some(w) => w,
        None => match functions::lookup(name).map(|d| d.kind) {
            Some(FunctionKind::Aggregate(a))
                if matches!(
                    a,
                    AggregateFunction::Count
                        | AggregateFunction::Sum
                        | AggregateFunction::Avg
                        | AggregateFunction::Min
                        | AggregateFunction::Max
                ) =>
            {
                if a == AggregateFunction::Count
                    && matches!(args[..], [] | [FunctionArgExpr::Wildcard])
                {
                    WindowFunction::Aggregate(AggregateFunction::CountStar)
                } else {
                    WindowFunction::Aggregate(a)
                }
            }
            // the first (last) value of the frame, NULL or not: DuckDB's
            // `first(x) OVER (...)` is `first_value(x)`
            Some(FunctionKind::Aggregate(AggregateFunction::First)) => {
                window_only("first_value").expect("first_value is a window function")
            }
            Some(FunctionKind::Aggregate(AggregateFunction::Last)) => {
                window_only("last_value").expect("last_value is a window function")
            }
            _ => {
                return Err(unsupported(format!(
                    "{name} is not supported as a window function (window functions: row_number, rank, dense_rank, percent_rank, cume_dist, ntile, lag, lead, first_value, last_value, nth_value, count, sum, avg, min, max, first, last){}",
                    at(e.span())
                )));
            }
        },
    };
    if f.filter.is_some() && !matches!(func, WindowFunction::Aggregate(_)) {
        return Err(bind_err(format!(
            "FILTER is only allowed in aggregate functions, not {name}{}",
            at(e.span())
        )));
    }
    let mut exprs = Vec::with_capacity(args.len());
    if func != WindowFunction::Aggregate(AggregateFunction::CountStar) {
        for a in &args {
            match a {
                FunctionArgExpr::Expr(x) => exprs.push((eb.bind_without_windows(x, NESTED)?, x)),
                _ => {
                    return Err(bind_err(format!(
                        "* is not a valid argument of {name}{}",
                        at(e.span())
                    )));
                }
            }
        }
    }
    let ignore_nulls = match null_treatment {
        None | Some(ast::NullTreatment::RespectNulls) => false,
        Some(ast::NullTreatment::IgnoreNulls) => true,
    };
    if null_treatment.is_some()
        && !matches!(
            func,
            WindowFunction::Lag
                | WindowFunction::Lead
                | WindowFunction::FirstValue
                | WindowFunction::LastValue
                | WindowFunction::NthValue
        )
    {
        return Err(bind_err(format!(
            "RESPECT/IGNORE NULLS is not supported for {name}: only for lag, lead, first_value, last_value and nth_value{}",
            at(e.span())
        )));
    }
    let (min, max) = match func {
        WindowFunction::RowNumber
        | WindowFunction::Rank
        | WindowFunction::DenseRank
        | WindowFunction::PercentRank
        | WindowFunction::CumeDist
        | WindowFunction::Aggregate(AggregateFunction::CountStar) => (0, 0),
        WindowFunction::Ntile
        | WindowFunction::FirstValue
        | WindowFunction::LastValue
        | WindowFunction::Aggregate(_) => (1, 1),
        WindowFunction::NthValue => (2, 2),
        WindowFunction::Lag | WindowFunction::Lead => (1, 3),
    };
    if !(min..=max).contains(&exprs.len()) {
        let want = if min == max {
            format!("{min}")
        } else {
            format!("{min} to {max}")
        };
        return Err(bind_err(format!(
            "{name}() takes {want} argument{}, got {}: \"{e}\"{}",
            if max == 1 { "" } else { "s" },
            exprs.len(),
            at(e.span())
        )));
    }
    let fold = eb.folder();
    // a constant integer argument (ntile's count, lag's offset, nth_value's n)
    let constant =
        |eb: &ExprBinder<'_>, x: &Expr, ast: &ast::Expr, what: &str| -> Result<Option<i64>> {
            let bad = || {
                bind_err(format!(
                    "{what} of {name} must be an integer constant, found \"{ast}\"{}",
                    at(ast.span())
                ))
            };
            let t = eb.type_of(x);
            let v = fold.value(&fold.cast(x.clone(), &t, &DataType::Int64))?;
            match v {
                Some(ScalarValue::Int64(n)) if t.is_integer() => Ok(Some(n)),
                Some(ScalarValue::Null(_)) => Ok(None),
                _ => Err(bad()),
            }
        };
    let mut offset = 1;
    let mut bound = Vec::new();
    let mut value_type = None;
    let mut iter = exprs.into_iter();
    match func {
        WindowFunction::Ntile => {
            let (x, ast) = iter.next().expect("one argument");
            offset = match constant(eb, &x, ast, "the argument")? {
                Some(n) if n > 0 => n,
                Some(_) => {
                    return Err(bind_err(format!(
                        "Argument for ntile must be greater than zero{}",
                        at(ast.span())
                    )));
                }
                None => 0,
            };
        }
        WindowFunction::Aggregate(AggregateFunction::CountStar) => {
            if let Some(c) = &f.filter {
                // count(*) FILTER (WHERE c) counts the rows where c holds
                let c = eb.bind_without_windows(c, NESTED)?;
                bound.push(Expr::Case {
                    when_then: vec![(c, Expr::Literal(ScalarValue::Int32(1)))],
                    else_expr: None,
                });
                return finish(
                    eb,
                    Call {
                        func: WindowFunction::Aggregate(AggregateFunction::Count),
                        args: bound,
                        offset: 1,
                        ignore_nulls: false,
                        aggregate: None,
                        value_type: Some(DataType::Int32),
                    },
                    &spec,
                    e,
                );
            }
        }
        WindowFunction::RowNumber
        | WindowFunction::Rank
        | WindowFunction::DenseRank
        | WindowFunction::PercentRank
        | WindowFunction::CumeDist => {}
        _ => {
            let (x, _) = iter.next().expect("a value argument");
            let t = eb.type_of(&x);
            let want = canonical(&t);
            let mut x = fold.cast(x, &t, &want);
            if let (WindowFunction::Aggregate(_), Some(c)) = (func, &f.filter) {
                let c = eb.bind_without_windows(c, NESTED)?;
                x = Expr::Case {
                    when_then: vec![(c, x)],
                    else_expr: None,
                };
            }
            if window_result_type(func, Some(&want)).is_none() {
                return Err(bind_err(format!(
                    "No function matches the given name and argument types '{name}({})': \"{e}\"{}",
                    sql_type_name(&t),
                    at(e.span())
                )));
            }
            bound.push(x);
            value_type = Some(want.clone());
            if let Some((n, ast)) = iter.next() {
                let what = if func == WindowFunction::NthValue {
                    "the second argument"
                } else {
                    "the offset"
                };
                offset = match constant(eb, &n, ast, what)? {
                    Some(n) => n,
                    // as in DuckDB, a NULL offset gives NULL on every row
                    None => {
                        let t = window_result_type(func, Some(&want)).unwrap_or(want);
                        return Ok(Expr::Literal(ScalarValue::Null(t)));
                    }
                };
            }
            if let Some((d, _)) = iter.next() {
                let dt = eb.type_of(&d);
                bound.push(fold.cast(d, &dt, &want));
            }
        }
    }
    finish(
        eb,
        Call {
            func,
            args: bound,
            offset,
            ignore_nulls,
            aggregate: None,
            value_type,
        },
        &spec,
        e,
    )
}

/// A window function call as bound, before its OVER clause.
struct Call {
    func: WindowFunction,
    args: Vec<Expr>,
    offset: i64,
    ignore_nulls: bool,
    aggregate: Option<Box<AggregateExpr>>,
    /// The type of the value argument, if any.
    value_type: Option<DataType>,
}

/// Binds the OVER clause of a window function and records it.
fn finish(
    eb: &mut ExprBinder<'_>,
    call: Call,
    spec: &ast::WindowSpec,
    e: &ast::Expr,
) -> Result<Expr> {
    let Call {
        func,
        args,
        offset,
        ignore_nulls,
        aggregate,
        value_type,
    } = call;
    let mut partition_by = Vec::with_capacity(spec.partition_by.len());
    for p in &spec.partition_by {
        partition_by.push(eb.bind_without_windows(p, NESTED)?);
    }
    let mut order_by = Vec::with_capacity(spec.order_by.len());
    for o in &spec.order_by {
        let (asc, nulls_first) = sort_options(&o.options)?;
        order_by.push(SortKey {
            expr: eb.bind_without_windows(&o.expr, NESTED)?,
            asc,
            nulls_first,
        });
    }
    let frame = match &spec.window_frame {
        None if order_by.is_empty() => WindowFrame {
            units: FrameUnits::Rows,
            start: FrameBound::UnboundedPreceding,
            end: FrameBound::UnboundedFollowing,
        },
        None => WindowFrame {
            units: FrameUnits::Range,
            start: FrameBound::UnboundedPreceding,
            end: FrameBound::CurrentRow,
        },
        Some(f) => frame(eb, f, &order_by)?,
    };
    let t = window_result_type(func, value_type.as_ref()).unwrap_or(DataType::Null);
    let nullable = !matches!(
        func,
        WindowFunction::RowNumber
            | WindowFunction::Rank
            | WindowFunction::DenseRank
            | WindowFunction::PercentRank
            | WindowFunction::CumeDist
            | WindowFunction::Aggregate(AggregateFunction::Count | AggregateFunction::CountStar)
    ) || (func == WindowFunction::Ntile && offset == 0);
    let w = BoundWindow {
        partition_by,
        order_by,
        expr: WindowExpr {
            func,
            args,
            offset,
            frame,
            ignore_nulls,
            aggregate,
        },
        field: Field::new(e.to_string(), t, nullable),
    };
    eb.push_window(w, e)
}

fn frame(
    eb: &mut ExprBinder<'_>,
    f: &ast::WindowFrame,
    order_by: &[SortKey],
) -> Result<WindowFrame> {
    let units = match f.units {
        ast::WindowFrameUnits::Rows => FrameUnits::Rows,
        ast::WindowFrameUnits::Range => FrameUnits::Range,
        ast::WindowFrameUnits::Groups => FrameUnits::Groups,
    };
    let start = bound(eb, &f.start_bound, units, order_by)?;
    let end = match &f.end_bound {
        None => FrameBound::CurrentRow,
        Some(b) => bound(eb, b, units, order_by)?,
    };
    if start == FrameBound::UnboundedFollowing {
        return Err(bind_err("frame start cannot be UNBOUNDED FOLLOWING"));
    }
    if end == FrameBound::UnboundedPreceding {
        return Err(bind_err("frame end cannot be UNBOUNDED PRECEDING"));
    }
    // DuckDB's parser: a frame may not end before the row it starts from
    match (&start, &end) {
        (FrameBound::CurrentRow, FrameBound::Preceding(_)) => {
            return Err(bind_err(
                "Frame starting from current row cannot have preceding rows",
            ));
        }
        (FrameBound::Following(_), FrameBound::CurrentRow) if f.end_bound.is_none() => {
            return Err(bind_err(
                "Frame starting from following row cannot end with current row",
            ));
        }
        (FrameBound::Following(_), FrameBound::Preceding(_) | FrameBound::CurrentRow) => {
            return Err(bind_err(
                "Frame starting from following row cannot have preceding rows",
            ));
        }
        _ => {}
    }
    Ok(WindowFrame { units, start, end })
}

fn bound(
    eb: &mut ExprBinder<'_>,
    b: &ast::WindowFrameBound,
    units: FrameUnits,
    order_by: &[SortKey],
) -> Result<FrameBound> {
    let (n, preceding) = match b {
        ast::WindowFrameBound::CurrentRow => return Ok(FrameBound::CurrentRow),
        ast::WindowFrameBound::Preceding(None) => return Ok(FrameBound::UnboundedPreceding),
        ast::WindowFrameBound::Following(None) => return Ok(FrameBound::UnboundedFollowing),
        ast::WindowFrameBound::Preceding(Some(n)) => (n, true),
        ast::WindowFrameBound::Following(Some(n)) => (n, false),
    };
    let x = eb.bind_without_windows(n, NESTED)?;
    let t = eb.type_of(&x);
    let fold = eb.folder();
    let value = match units {
        FrameUnits::Rows | FrameUnits::Groups => {
            let v = fold.value(&fold.cast(x, &t, &DataType::Int64))?;
            match v {
                Some(ScalarValue::Int64(v)) if t.is_integer() && v >= 0 => ScalarValue::Int64(v),
                _ => {
                    return Err(bind_err(format!(
                        "{} frame offsets must be non-negative integer constants, found \"{n}\"{}",
                        if units == FrameUnits::Rows {
                            "ROWS"
                        } else {
                            "GROUPS"
                        },
                        at(n.span())
                    )));
                }
            }
        }
        FrameUnits::Range => {
            let [key] = order_by else {
                return Err(bind_err(format!(
                    "RANGE frames with an offset need exactly one ORDER BY key{}",
                    at(n.span())
                )));
            };
            let kt = eb.type_of(&key.expr);
            if matches!(kt, DataType::Date32 | DataType::Timestamp(..)) {
                // over a DATE or TIMESTAMP: a constant INTERVAL (months move
                // each key by the calendar); over a DATE also a whole
                // number of days, as DuckDB's `date - n`
                let date = matches!(kt, DataType::Date32);
                let days = date && t.is_integer();
                let x = if days {
                    fold.cast(x, &t, &DataType::Int64)
                } else {
                    x
                };
                match fold.value(&x)? {
                    Some(ScalarValue::Int64(n)) if days && n >= 0 => {
                        ScalarValue::Interval(0, i32::try_from(n).unwrap_or(i32::MAX), 0)
                    }
                    Some(ScalarValue::Interval(m, d, us)) if m >= 0 && d >= 0 && us >= 0 => {
                        ScalarValue::Interval(m, d, us)
                    }
                    _ => {
                        return Err(bind_err(format!(
                            "RANGE frame offsets over a {} key must be non-negative constant \
                             INTERVALs{}, found \"{n}\"{}",
                            sql_type_name(&kt),
                            if date { " or days" } else { "" },
                            at(n.span())
                        )));
                    }
                }
            } else {
                if !is_numeric(&kt) {
                    return Err(unsupported(format!(
                        "RANGE frames with an offset need a numeric, DATE or TIMESTAMP \
                         ORDER BY key, not {}{}",
                        sql_type_name(&kt),
                        at(n.span())
                    )));
                }
                let v = fold.value(&fold.cast(x, &t, &DataType::Float64))?;
                match v {
                    Some(ScalarValue::Float64(v))
                        if is_numeric(&t) && v >= 0.0 && v.is_finite() =>
                    {
                        ScalarValue::Float64(v)
                    }
                    _ => {
                        return Err(bind_err(format!(
                            "RANGE frame offsets must be non-negative numeric constants, found \"{n}\"{}",
                            at(n.span())
                        )));
                    }
                }
            }
        }
    };
    Ok(if preceding {
        FrameBound::Preceding(value)
    } else {
        FrameBound::Following(value)
    })
}

/// Plans the Window nodes over `plan` (whose output has `width` columns):
/// one node per distinct (PARTITION BY, ORDER BY), in the order the
/// windows first appear. Window `j` was bound to placeholder column
/// `width + j`; returns the plan and, per window, its column in the last
/// node's output.
pub(crate) fn plan_windows(
    mut plan: LogicalPlan,
    windows: Vec<BoundWindow>,
) -> (LogicalPlan, Vec<usize>) {
    let width = plan.schema().fields().len();
    let mut groups: Vec<(Vec<Expr>, Vec<SortKey>, Vec<usize>)> = Vec::new();
    for (j, w) in windows.iter().enumerate() {
        match groups
            .iter_mut()
            .find(|(p, o, _)| *p == w.partition_by && *o == w.order_by)
        {
            Some(g) => g.2.push(j),
            None => groups.push((w.partition_by.clone(), w.order_by.clone(), vec![j])),
        }
    }
    let mut column = vec![0; windows.len()];
    let mut next = width;
    for (partition_by, order_by, members) in groups {
        let mut fields: Vec<Field> = plan
            .schema()
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        let mut functions = Vec::with_capacity(members.len());
        for j in members {
            column[j] = next;
            next += 1;
            fields.push(windows[j].field.clone());
            functions.push(windows[j].expr.clone());
        }
        plan = LogicalPlan::Window {
            input: Box::new(plan),
            partition_by,
            order_by,
            functions,
            schema: SchemaRef::new(Schema::new(fields)),
        };
    }
    (plan, column)
}

/// `e` with each window placeholder (`width + j`) moved to the column
/// `columns[j]` that [`plan_windows`] gave window `j`.
pub(crate) fn remap_windows(e: Expr, width: usize, columns: &[usize], schema: &Schema) -> Expr {
    match e {
        Expr::Column(c) if c.index >= width => {
            let k = columns[c.index - width];
            Expr::column(k, schema.field(k).name().clone())
        }
        other => other
            .try_map_children::<std::convert::Infallible>(&mut |c| {
                Ok(remap_windows(c, width, columns, schema))
            })
            .unwrap_or_else(|never| match never {}),
    }
}
