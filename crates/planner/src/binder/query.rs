//! Binding queries: FROM, WHERE, GROUP BY, HAVING, SELECT, DISTINCT,
//! ORDER BY, LIMIT, in the canonical plan shape of `plan.rs`.

use arrow_schema::{DataType, Field, Schema, SchemaRef};
use sqlparser::ast::{
    self, FunctionArg, FunctionArgExpr, LimitClause, OrderByKind, SelectItem, SetExpr, Spanned,
    TableFactor, Value, WildcardAdditionalOptions,
};

use super::coerce::{Folder, comparison_type, union_type};
use super::expr::{ExprBinder, Placeholder, Scope, table_functions};
use super::window::BoundWindow;
use super::{Binder, at, bind_err, did_you_mean, format_from_extension, single_name, unsupported};
use crate::error::Result;
use crate::expr::Expr;
use crate::plan::{AggregateExpr, FileFormat, FileOptions, LogicalPlan, SortKey, TableSource};
use crate::scalar::ScalarValue;
use crate::types::sql_type_name;

/// The clauses of one SELECT.
struct SelectParts<'q> {
    distinct: bool,
    /// `None` means `*` (for `VALUES` and `FROM t` without SELECT).
    projection: Option<&'q [SelectItem]>,
    selection: Option<&'q ast::Expr>,
    group_by: &'q [ast::Expr],
    /// `GROUP BY ROLLUP | CUBE | GROUPING SETS`: the sets of `group_by`
    /// (by index) grouped by, one after the other.
    grouping_sets: Option<Vec<Vec<usize>>>,
    /// `GROUP BY ALL`: group by every SELECT item without an aggregate.
    group_all: bool,
    having: Option<&'q ast::Expr>,
    /// `WINDOW name AS (...)` definitions.
    named_windows: &'q [ast::NamedWindowDefinition],
    /// `QUALIFY`: a filter over window function results.
    qualify: Option<&'q ast::Expr>,
}

impl SelectParts<'_> {
    /// `SELECT *` and no other clause (over VALUES or a set operation).
    fn star() -> Self {
        Self {
            distinct: false,
            projection: None,
            selection: None,
            group_by: &[],
            grouping_sets: None,
            group_all: false,
            having: None,
            named_windows: &[],
            qualify: None,
        }
    }
}

/// One output column of the SELECT list, after `*` expansion.
struct Item<'q> {
    kind: ItemKind<'q>,
    name: String,
    /// Named by `AS`.
    aliased: bool,
}

enum ItemKind<'q> {
    Ast(&'q ast::Expr),
    /// A column of the scope (from `*` or `t.*`).
    Column(usize),
}

/// What an ORDER BY term sorts on.
enum SortTarget {
    /// An output column of the SELECT list.
    Output(usize),
    /// An expression over the projection's input.
    Expr(Expr),
}

impl Binder<'_> {
    /// Plans a query.
    pub(crate) fn query(&self, q: &ast::Query) -> Result<LogicalPlan> {
        if let Some(with) = &q.with {
            let before = self.ctes.borrow().len();
            for (i, cte) in with.cte_tables.iter().enumerate() {
                let name = &cte.alias.name.value;
                if with.cte_tables[..i]
                    .iter()
                    .any(|c| c.alias.name.value.eq_ignore_ascii_case(name))
                {
                    return Err(bind_err(format!("Duplicate CTE name \"{name}\"")));
                }
            }
            let bound = (|| {
                for cte in &with.cte_tables {
                    let alias = ast::TableAlias {
                        explicit: true,
                        name: cte.alias.name.clone(),
                        columns: cte.alias.columns.clone(),
                        at: None,
                    };
                    let recursive = match with.recursive {
                        true => self.recursive_cte(cte, &alias)?,
                        false => None,
                    };
                    let (plan, schema) = match recursive {
                        Some(bound) => bound,
                        None => {
                            let (plan, scope) = self.derived(&cte.query, Some(&alias))?;
                            (plan, scope.schema)
                        }
                    };
                    self.ctes
                        .borrow_mut()
                        .push((cte.alias.name.value.clone(), plan, schema));
                }
                let mut inner = q.clone();
                inner.with = None;
                self.query(&inner)
            })();
            self.ctes.borrow_mut().truncate(before);
            return bound;
        }
        if q.fetch.is_some() {
            return Err(unsupported("FETCH FIRST is not supported; use LIMIT"));
        }
        if !q.locks.is_empty()
            || q.for_clause.is_some()
            || q.settings.is_some()
            || q.format_clause.is_some()
            || !q.pipe_operators.is_empty()
        {
            return Err(unsupported(
                "FOR UPDATE, FOR XML/JSON, SETTINGS, FORMAT and pipe operators are not supported",
            ));
        }
        let order_by = match &q.order_by {
            None => Ordering::default(),
            Some(ob) => {
                if ob.interpolate.is_some() {
                    return Err(unsupported("ORDER BY ... INTERPOLATE is not supported"));
                }
                match &ob.kind {
                    OrderByKind::Expressions(v) => Ordering {
                        exprs: v,
                        all: None,
                    },
                    OrderByKind::All(o) => Ordering {
                        exprs: &[],
                        all: Some(o),
                    },
                }
            }
        };
        let limit = limit(self.fold, q.limit_clause.as_ref())?;
        match q.body.as_ref() {
            SetExpr::Select(s) => self.select(s, order_by, limit),
            SetExpr::Values(v) => {
                let plan = values(self.fold, v)?;
                let scope = Scope {
                    qualifier: None,
                    schema: plan.schema(),
                    relations: Vec::new(),
                };
                let parts = SelectParts::star();
                select_over(self, plan, &scope, parts, order_by, limit)
            }
            SetExpr::Query(inner) if order_by.is_empty() && limit == (0, None) => self.query(inner),
            SetExpr::Query(inner) => Err(unsupported(format!(
                "subqueries are not supported{}",
                at(inner.span())
            ))),
            SetExpr::SetOperation { .. } => {
                let plan = self.set_operation(q.body.as_ref())?;
                let scope = Scope {
                    qualifier: None,
                    schema: plan.schema(),
                    relations: Vec::new(),
                };
                let parts = SelectParts::star();
                select_over(self, plan, &scope, parts, order_by, limit)
            }
            other => Err(unsupported(format!("query {other} is not supported"))),
        }
    }

    fn select(
        &self,
        s: &ast::Select,
        order_by: Ordering<'_>,
        limit: (usize, Option<usize>),
    ) -> Result<LogicalPlan> {
        let unsupported_clause = [
            (s.top.is_some(), "TOP"),
            (s.into.is_some(), "SELECT INTO"),
            (!s.lateral_views.is_empty(), "LATERAL VIEW"),
            (s.prewhere.is_some(), "PREWHERE"),
            (!s.connect_by.is_empty(), "CONNECT BY"),
            (!s.cluster_by.is_empty(), "CLUSTER BY"),
            (!s.distribute_by.is_empty(), "DISTRIBUTE BY"),
            (!s.sort_by.is_empty(), "SORT BY"),
            (s.value_table_mode.is_some(), "SELECT AS VALUE/STRUCT"),
            (s.exclude.is_some(), "EXCLUDE"),
            (s.select_modifiers.is_some(), "SELECT modifiers"),
            (!s.optimizer_hints.is_empty(), "optimizer hints"),
        ];
        if let Some((_, name)) = unsupported_clause.iter().find(|(bad, _)| *bad) {
            return Err(unsupported(format!("{name} is not supported")));
        }
        let distinct = match &s.distinct {
            None | Some(ast::Distinct::All) => false,
            Some(ast::Distinct::Distinct) => true,
            Some(ast::Distinct::On(on)) => {
                let rewritten = distinct_on(s, on, &order_by)?;
                return self.select(&rewritten, order_by, limit);
            }
        };
        let (group_by, group_all): (&[ast::Expr], bool) = match &s.group_by {
            ast::GroupByExpr::Expressions(_, modifiers) | ast::GroupByExpr::All(modifiers)
                if !modifiers.is_empty() =>
            {
                return Err(unsupported(
                    "GROUP BY ... WITH ROLLUP/CUBE/TOTALS is not supported",
                ));
            }
            ast::GroupByExpr::Expressions(exprs, _) => (exprs, false),
            ast::GroupByExpr::All(_) => (&[], true),
        };
        let (keys, grouping_sets) = grouping_sets(group_by)?;
        let group_by = keys.as_deref().unwrap_or(group_by);
        let (plan, scope, where_placed) = self.from(&s.from, s.selection.as_ref())?;
        let parts = SelectParts {
            distinct,
            projection: match s.flavor {
                ast::SelectFlavor::FromFirstNoSelect => None,
                _ => Some(&s.projection),
            },
            selection: if where_placed {
                None
            } else {
                s.selection.as_ref()
            },
            group_by,
            grouping_sets,
            group_all,
            having: s.having.as_ref(),
            named_windows: &s.named_window,
            qualify: s.qualify.as_ref(),
        };
        select_over(self, plan, &scope, parts, order_by, limit)
    }

    /// Plans the FROM clause: a Scan (or one empty row without FROM) and
    /// the scope its columns are named in; several tables and joins go
    /// through `binder/join.rs`, which also places the WHERE conjuncts
    /// (`selection`, then consumed: the returned flag is true).
    pub(super) fn from(
        &self,
        from: &[ast::TableWithJoins],
        selection: Option<&ast::Expr>,
    ) -> Result<(LogicalPlan, Scope, bool)> {
        match from {
            [] => {
                let schema = SchemaRef::new(Schema::empty());
                let plan = LogicalPlan::Values {
                    rows: vec![vec![]],
                    schema: schema.clone(),
                };
                Ok((plan, Scope::empty(), false))
            }
            [one] if one.joins.is_empty() && !super::join::has_subquery(selection) => {
                let (plan, scope) = self.table_factor(&one.relation)?;
                Ok((plan, scope, false))
            }
            _ => {
                let (plan, scope) = self.joined_from(from, selection)?;
                Ok((plan, scope, true))
            }
        }
    }

    /// Plans one relation of FROM: a table, file, table function or
    /// derived table (`(SELECT ...) AS x`), or a parenthesised join.
    pub(crate) fn table_factor(&self, relation: &TableFactor) -> Result<(LogicalPlan, Scope)> {
        if let TableFactor::Derived {
            lateral,
            subquery,
            alias,
            ..
        } = relation
        {
            if *lateral {
                return Err(unsupported(format!(
                    "LATERAL subqueries are not supported{}",
                    at(relation.span())
                )));
            }
            return self.derived(subquery, alias.as_ref());
        }
        if let TableFactor::NestedJoin {
            table_with_joins,
            alias: None,
        } = relation
        {
            return self.joined_from(std::slice::from_ref(table_with_joins), None);
        }
        if matches!(
            relation,
            TableFactor::Pivot { .. } | TableFactor::Unpivot { .. }
        ) {
            return self.pivot(relation);
        }
        let TableFactor::Table {
            name,
            alias,
            args,
            with_hints,
            version,
            with_ordinality,
            partitions,
            json_path,
            sample,
            index_hints,
        } = relation
        else {
            let what = match relation {
                TableFactor::Derived { .. } => "subqueries in FROM are".to_string(),
                TableFactor::NestedJoin { .. } => "JOIN is".to_string(),
                TableFactor::UNNEST { .. } => "UNNEST is".to_string(),
                other => format!("{other} in FROM is"),
            };
            return Err(unsupported(format!(
                "{what} not supported{}",
                at(relation.span())
            )));
        };
        if !with_hints.is_empty()
            || version.is_some()
            || *with_ordinality
            || !partitions.is_empty()
            || json_path.is_some()
            || sample.is_some()
            || !index_hints.is_empty()
        {
            return Err(unsupported(format!(
                "table options (hints, AS OF, WITH ORDINALITY, partitions, sampling) are not supported: {}",
                relation
            )));
        }
        let column_aliases: Vec<&ast::Ident> = match alias {
            Some(a) => a.columns.iter().map(|c| &c.name).collect(),
            None => Vec::new(),
        };
        if let [
            ast::ObjectNamePart::Identifier(schema),
            ast::ObjectNamePart::Identifier(view),
        ] = name.0.as_slice()
            && schema.value.eq_ignore_ascii_case("information_schema")
            && args.is_none()
        {
            let Some(plan) = self.information_schema(view)? else {
                return Err(unsupported(format!(
                    "{name} is not supported (information_schema has tables and columns){}",
                    at(name.span())
                )));
            };
            let scope = Scope {
                qualifier: Some(
                    alias
                        .as_ref()
                        .map_or_else(|| view.value.clone(), |a| a.name.value.clone()),
                ),
                schema: plan.schema(),
                relations: Vec::new(),
            };
            return Ok((plan, scope));
        }
        let id = single_name(name)?;
        let raw_alias = alias.clone();
        let alias = alias.as_ref().map(|a| a.name.value.clone());
        if let Some(args) = args
            && id.value.eq_ignore_ascii_case("weir_functions")
        {
            if !args.args.is_empty() {
                return Err(bind_err(format!(
                    "weir_functions() takes no arguments{}",
                    at(id.span)
                )));
            }
            let plan = functions_table();
            let scope = Scope {
                qualifier: Some(alias.unwrap_or_else(|| "weir_functions".into())),
                schema: rename_columns(plan.schema(), &column_aliases, id)?,
                relations: Vec::new(),
            };
            return Ok((plan, scope));
        }
        let (source, schema, default_qualifier) = if let Some(args) = args {
            if args.settings.is_some() {
                return Err(unsupported("SETTINGS in table functions are not supported"));
            }
            if id.value.eq_ignore_ascii_case("weir_settings") {
                if !args.args.is_empty() {
                    return Err(bind_err(format!(
                        "weir_settings takes no arguments{}",
                        at(id.span)
                    )));
                }
                let plan = super::settings::settings_table(self.catalog);
                let scope = Scope {
                    qualifier: Some(alias.unwrap_or_else(|| "weir_settings".into())),
                    schema: plan.schema(),
                    relations: Vec::new(),
                };
                return Ok((plan, scope));
            }
            self.table_function(id, &args.args)?
        } else if id.quote_style == Some('\'') {
            let format = format_from_extension(id)?;
            let schema = self.file_schema(&id.value, format)?;
            let source = TableSource::File {
                path: id.value.clone(),
                format,
                options: FileOptions::default(),
            };
            (source, schema, file_stem(&id.value))
        } else if let Some((plan, schema)) = self.cte(&id.value) {
            // a CTE: its plan, inlined where it is named
            let scope = Scope {
                qualifier: Some(alias.unwrap_or_else(|| id.value.clone())),
                schema: rename_columns(schema, &column_aliases, id)?,
                relations: Vec::new(),
            };
            return Ok((plan, scope));
        } else if let Some(view) = self
            .catalog
            .view(&id.value)
            .filter(|_| self.table_schema(&id.value).is_none())
        {
            return self.view(&view, id, raw_alias.as_ref());
        } else {
            let (canonical, schema) = self.lookup_table(id)?;
            (TableSource::Table(canonical), schema, id.value.clone())
        };
        // `FROM t AS x(a, b)` renames the columns in this scope only: the
        // plan reads them by position
        let scope = Scope {
            qualifier: Some(alias.unwrap_or(default_qualifier)),
            schema: rename_columns(schema.clone(), &column_aliases, id)?,
            relations: Vec::new(),
        };
        Ok((LogicalPlan::Scan { source, schema }, scope))
    }

    /// A term of a set operation: `UNION`, `INTERSECT` or `EXCEPT`
    /// `[ALL]` of two terms, a SELECT, a parenthesised query or VALUES.
    /// A CTE of `WITH RECURSIVE` whose query is `anchor UNION [ALL]
    /// recursive` with `recursive` reading the CTE itself: a scan of
    /// its [`crate::plan::RecursiveCte`], and its schema. `None` for any
    /// other CTE, bound as in a plain WITH.
    fn recursive_cte(
        &self,
        cte: &ast::Cte,
        alias: &ast::TableAlias,
    ) -> Result<Option<(LogicalPlan, SchemaRef)>> {
        let SetExpr::SetOperation {
            op: ast::SetOperator::Union,
            set_quantifier,
            left,
            right,
        } = cte.query.body.as_ref()
        else {
            return Ok(None);
        };
        let union_all = match set_quantifier {
            ast::SetQuantifier::All => true,
            ast::SetQuantifier::Distinct | ast::SetQuantifier::None => false,
            _ => return Ok(None),
        };
        let name = &cte.alias.name.value;
        let part = |body: &SetExpr| {
            let mut q = (*cte.query).clone();
            q.body = Box::new(body.clone());
            q.order_by = None;
            q.limit_clause = None;
            q
        };
        let (anchor, scope) = self.derived(&part(left), Some(alias))?;
        // a column of the anchor may be NULL in a later round
        let schema = SchemaRef::new(Schema::new(
            scope
                .schema
                .fields()
                .iter()
                .map(|f| f.as_ref().clone().with_nullable(true))
                .collect::<Vec<_>>(),
        ));
        let id = self.recursive_ctes.get();
        self.recursive_ctes.set(id + 1);
        let work = LogicalPlan::Scan {
            source: TableSource::WorkTable {
                name: name.clone(),
                id,
                schema: schema.clone(),
            },
            schema: schema.clone(),
        };
        self.ctes
            .borrow_mut()
            .push((name.clone(), work, schema.clone()));
        let bound = self.derived(&part(right), Some(alias));
        self.ctes.borrow_mut().pop();
        let (recursive, _) = bound?;
        if !reads_work_table(&recursive, id) {
            // a plain UNION
            return Ok(None);
        }
        if cte.query.order_by.is_some() || cte.query.limit_clause.is_some() {
            return Err(unsupported(format!(
                "ORDER BY and LIMIT on the query of recursive CTE \"{name}\" are not supported{}",
                at(cte.query.span())
            )));
        }
        let (width, got) = (schema.fields().len(), recursive.schema().fields().len());
        if width != got {
            return Err(bind_err(format!(
                "Set operations can only apply to expressions with the same number of result columns ({width} and {got}) in recursive CTE \"{name}\""
            )));
        }
        let cte = crate::plan::RecursiveCte {
            name: name.clone(),
            id,
            anchor: crate::optimize::optimize(cast_columns(anchor, &schema), self.catalog),
            recursive: crate::optimize::optimize(cast_columns(recursive, &schema), self.catalog),
            union_all,
            schema: schema.clone(),
        };
        let scan = LogicalPlan::Scan {
            source: TableSource::Recursive(std::sync::Arc::new(cte)),
            schema: schema.clone(),
        };
        Ok(Some((scan, schema)))
    }

    fn set_operation(&self, e: &SetExpr) -> Result<LogicalPlan> {
        let (op, quantifier, left, right) = match e {
            SetExpr::SetOperation {
                op,
                set_quantifier,
                left,
                right,
            } => (op, set_quantifier, left, right),
            SetExpr::Select(s) => return self.select(s, Ordering::default(), (0, None)),
            SetExpr::Query(q) => return self.query(q),
            SetExpr::Values(v) => return values(self.fold, v),
            other => return Err(unsupported(format!("query {other} is not supported"))),
        };
        let kind = match op {
            ast::SetOperator::Union => None,
            ast::SetOperator::Intersect => Some(crate::plan::JoinKind::Intersect),
            ast::SetOperator::Except => Some(crate::plan::JoinKind::Except),
            other => return Err(unsupported(format!("{other} is not supported"))),
        };
        let (all, by_name) = match quantifier {
            ast::SetQuantifier::All => (true, false),
            ast::SetQuantifier::Distinct | ast::SetQuantifier::None => (false, false),
            ast::SetQuantifier::AllByName => (true, true),
            ast::SetQuantifier::ByName | ast::SetQuantifier::DistinctByName => (false, true),
        };
        if by_name && kind.is_some() {
            return Err(unsupported(format!("{op} BY NAME is not supported")));
        }
        let l = self.set_operation(left)?;
        let r = self.set_operation(right)?;
        let (l, r) = if by_name {
            by_name_columns(l, r)
        } else {
            (l, r)
        };
        let (ls, rs) = (l.schema(), r.schema());
        if ls.fields().len() != rs.fields().len() {
            return Err(bind_err(format!(
                "Set operations can only apply to expressions with the same number of result columns ({} and {})",
                ls.fields().len(),
                rs.fields().len()
            )));
        }
        let mut fields = Vec::new();
        for (a, b) in ls.fields().iter().zip(rs.fields()) {
            let t = if a.data_type() == b.data_type() {
                a.data_type().clone()
            } else {
                union_type(a.data_type(), b.data_type()).ok_or_else(|| {
                    bind_err(format!(
                        "Cannot combine types {} and {} in UNION (column \"{}\")",
                        sql_type_name(a.data_type()),
                        sql_type_name(b.data_type()),
                        a.name()
                    ))
                })?
            };
            fields.push(Field::new(a.name(), t, a.is_nullable() || b.is_nullable()));
        }
        let schema = SchemaRef::new(Schema::new(fields));
        let conform = |plan: LogicalPlan| cast_columns(plan, &schema);
        if let Some(kind) = kind {
            // distinct rows of the left side with (INTERSECT) or without
            // (EXCEPT) an equal row on the right, NULLs equal; with ALL,
            // each row numbered among its duplicates on both sides, so
            // the n-th copy on the left meets the n-th on the right
            let (l, r) = (conform(l), conform(r));
            let (left, r) = if all {
                (number_duplicates(l), number_duplicates(r))
            } else {
                (LogicalPlan::Distinct { input: Box::new(l) }, r)
            };
            let rs = r.schema();
            let on = left
                .schema()
                .fields()
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    (
                        Expr::column(i, f.name().clone()),
                        Expr::column(i, rs.field(i).name().clone()),
                    )
                })
                .collect();
            let joined_schema = super::join::join_schema(&left.schema(), &rs, kind);
            let joined = LogicalPlan::Join {
                left: Box::new(left),
                right: Box::new(r),
                kind,
                on,
                filter: None,
                schema: joined_schema.clone(),
            };
            if !all {
                return Ok(joined);
            }
            let n = schema.fields().len();
            return Ok(LogicalPlan::Projection {
                input: Box::new(joined),
                exprs: (0..n)
                    .map(|i| Expr::column(i, joined_schema.field(i).name().clone()))
                    .collect(),
                schema: SchemaRef::new(Schema::new(joined_schema.fields()[..n].to_vec())),
            });
        }
        let mut inputs = Vec::new();
        for side in [l, r] {
            match side {
                // UNION ALL chains flatten into one union
                LogicalPlan::Union { inputs: more, .. } => {
                    inputs.extend(more.into_iter().map(conform))
                }
                other => inputs.push(conform(other)),
            }
        }
        let union = LogicalPlan::Union { inputs, schema };
        Ok(if all {
            union
        } else {
            LogicalPlan::Distinct {
                input: Box::new(union),
            }
        })
    }

    /// The innermost CTE named `name`, if any.
    fn cte(&self, name: &str) -> Option<(LogicalPlan, SchemaRef)> {
        self.ctes
            .borrow()
            .iter()
            .rev()
            .find(|(n, _, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, p, s)| (p.clone(), s.clone()))
    }

    fn table_function(
        &self,
        id: &ast::Ident,
        args: &[FunctionArg],
    ) -> Result<(TableSource, SchemaRef, String)> {
        let name = id.value.to_ascii_lowercase();
        if let "read_csv" | "read_csv_auto" | "read_parquet" = name.as_str() {
            let format = if name == "read_parquet" {
                FileFormat::Parquet
            } else {
                FileFormat::Csv
            };
            let super::files::FileArgs { path, options } =
                super::files::file_args(&name, format, id, args, self.fold)?;
            let schema = if options == FileOptions::default() {
                self.file_schema(&path, format)?
            } else {
                self.catalog
                    .file_schema_with(&path, format, &options)
                    .map_err(crate::error::Error::Catalog)?
            };
            let stem = file_stem(options.paths.first().unwrap_or(&path));
            return Ok((
                TableSource::File {
                    path,
                    format,
                    options,
                },
                schema,
                stem,
            ));
        }
        let mut values = Vec::with_capacity(args.len());
        for a in args {
            let FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) = a else {
                return Err(unsupported(format!(
                    "{name} option {a} is not supported{}",
                    at(id.span)
                )));
            };
            let scope = Scope::empty();
            let mut eb = ExprBinder::new(
                &scope,
                self.fold,
                false,
                "aggregate functions are not allowed here",
            );
            let bound = eb.bind(e)?;
            match self.fold.value(&bound)? {
                Some(v) => values.push((v, e)),
                None => {
                    return Err(bind_err(format!(
                        "arguments of {name} must be constants, found \"{e}\"{}",
                        at(e.span())
                    )));
                }
            }
        }
        match name.as_str() {
            "range" | "generate_series" => {
                let mut ints = Vec::with_capacity(values.len());
                for (v, e) in &values {
                    match v {
                        ScalarValue::Int32(x) => ints.push(*x as i64),
                        ScalarValue::Int64(x) => ints.push(*x),
                        _ => {
                            return Err(bind_err(format!(
                                "arguments of {name} must be integer constants, found {} \"{e}\"{}",
                                sql_type_name(&v.data_type()),
                                at(e.span())
                            )));
                        }
                    }
                }
                let (start, end, step) = match ints.as_slice() {
                    [n] => (0, *n, 1),
                    [a, b] => (*a, *b, 1),
                    [a, b, s] => (*a, *b, *s),
                    _ => {
                        return Err(bind_err(format!(
                            "{name} takes 1 to 3 integer arguments, got {}{}",
                            ints.len(),
                            at(id.span)
                        )));
                    }
                };
                if step == 0 {
                    return Err(bind_err(format!(
                        "{name} step must not be zero{}",
                        at(id.span)
                    )));
                }
                let stop = if name == "range" {
                    Some(end)
                } else if step > 0 {
                    end.checked_add(1)
                } else {
                    end.checked_sub(1)
                };
                let Some(stop) = stop else {
                    return Err(bind_err(format!(
                        "{name} bound {end} is out of range{}",
                        at(id.span)
                    )));
                };
                let schema = SchemaRef::new(Schema::new(vec![Field::new(
                    name.clone(),
                    DataType::Int64,
                    false,
                )]));
                Ok((TableSource::Series { start, stop, step }, schema, name))
            }
            _ => {
                let hint = match did_you_mean(&name, table_functions()) {
                    Some(c) => format!(" Did you mean \"{c}\"?"),
                    None => String::new(),
                };
                Err(bind_err(format!(
                    "Table Function with name {name} does not exist!{hint}{}",
                    at(id.span)
                )))
            }
        }
    }
}

/// `plan` with a last column numbering each row among the rows equal to
/// it (NULLs equal): 1, 2, ... (`row_number() OVER (PARTITION BY every
/// column)`), for INTERSECT ALL and EXCEPT ALL.
fn number_duplicates(plan: LogicalPlan) -> LogicalPlan {
    use crate::plan::WindowExpr;
    let schema = plan.schema();
    let partition_by = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| Expr::column(i, f.name().clone()))
        .collect();
    let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    fields.push(Field::new("__occurrence", DataType::Int64, false));
    LogicalPlan::Window {
        input: Box::new(plan),
        partition_by,
        order_by: Vec::new(),
        functions: vec![WindowExpr::row_number()],
        schema: SchemaRef::new(Schema::new(fields)),
    }
}

/// `SELECT items FROM plan GROUP BY group` over `scope` (a decorrelated
/// scalar subquery: its value grouped by its correlation columns).
pub(crate) fn select_grouped(
    b: &Binder<'_>,
    plan: LogicalPlan,
    scope: &Scope,
    items: &[SelectItem],
    group: &[ast::Expr],
) -> Result<LogicalPlan> {
    let parts = SelectParts {
        projection: Some(items),
        group_by: group,
        ..SelectParts::star()
    };
    select_over(b, plan, scope, parts, Ordering::default(), (0, None))
}

/// The most grouping sets one GROUP BY may make (CUBE of 12 keys).
const MAX_GROUPING_SETS: usize = 4096;

/// `GROUP BY` with `ROLLUP`, `CUBE` or `GROUPING SETS`: its distinct key
/// expressions and the sets of them (by index) grouped by, the sets of
/// every item crossed (`GROUP BY a, ROLLUP(b, c)` groups by `(a, b, c)`,
/// `(a, b)` and `(a)`); `(None, None)` for a plain GROUP BY.
type GroupingSets = (Option<Vec<ast::Expr>>, Option<Vec<Vec<usize>>>);

fn grouping_sets(group_by: &[ast::Expr]) -> Result<GroupingSets> {
    let is_set = |g: &ast::Expr| {
        matches!(
            g,
            ast::Expr::Rollup(_) | ast::Expr::Cube(_) | ast::Expr::GroupingSets(_)
        )
    };
    if !group_by.iter().any(is_set) {
        return Ok((None, None));
    }
    let mut keys: Vec<ast::Expr> = Vec::new();
    let mut key = |e: &ast::Expr| -> Result<usize> {
        if is_set(e) {
            return Err(unsupported(format!(
                "{e} inside ROLLUP, CUBE or GROUPING SETS is not supported"
            )));
        }
        let text = e.to_string();
        Ok(match keys.iter().position(|k| k.to_string() == text) {
            Some(k) => k,
            None => {
                keys.push(e.clone());
                keys.len() - 1
            }
        })
    };
    let mut sets: Vec<Vec<usize>> = vec![Vec::new()];
    for g in group_by {
        // the sets this item alone groups by
        let own: Vec<Vec<usize>> = match g {
            ast::Expr::Rollup(elements) | ast::Expr::Cube(elements) => {
                let elements = elements
                    .iter()
                    .map(|e| e.iter().map(&mut key).collect::<Result<Vec<_>>>())
                    .collect::<Result<Vec<_>>>()?;
                if matches!(g, ast::Expr::Rollup(_)) {
                    // every prefix, longest first
                    (0..=elements.len())
                        .rev()
                        .map(|n| elements[..n].concat())
                        .collect()
                } else {
                    if elements.len() > MAX_GROUPING_SETS.trailing_zeros() as usize {
                        return Err(unsupported(format!(
                            "CUBE of more than {} elements is not supported",
                            MAX_GROUPING_SETS.trailing_zeros()
                        )));
                    }
                    // every subset, the fullest first
                    (0..1usize << elements.len())
                        .rev()
                        .map(|bits| {
                            elements
                                .iter()
                                .enumerate()
                                .filter(|(i, _)| bits & (1 << i) != 0)
                                .flat_map(|(_, e)| e.iter().copied())
                                .collect()
                        })
                        .collect()
                }
            }
            ast::Expr::GroupingSets(sets) => sets
                .iter()
                .map(|set| set.iter().map(&mut key).collect::<Result<Vec<_>>>())
                .collect::<Result<Vec<_>>>()?,
            plain => vec![vec![key(plain)?]],
        };
        if sets.len().saturating_mul(own.len()) > MAX_GROUPING_SETS {
            return Err(unsupported(format!(
                "GROUP BY with more than {MAX_GROUPING_SETS} grouping sets is not supported"
            )));
        }
        sets = sets
            .iter()
            .flat_map(|a| own.iter().map(move |b| [a.as_slice(), b].concat()))
            .collect();
    }
    Ok((Some(keys), Some(sets)))
}

/// `plan` with each column cast to the type of `schema`'s column at its
/// place, where they differ (the sides of a set operation, a recursive
/// CTE's rounds).
fn cast_columns(plan: LogicalPlan, schema: &SchemaRef) -> LogicalPlan {
    let from = plan.schema();
    if from
        .fields()
        .iter()
        .zip(schema.fields())
        .all(|(f, t)| f.data_type() == t.data_type())
    {
        return plan;
    }
    let exprs = from
        .fields()
        .iter()
        .zip(schema.fields())
        .enumerate()
        .map(|(i, (f, t))| {
            let c = Expr::column(i, f.name().clone());
            if f.data_type() == t.data_type() {
                c
            } else {
                Expr::Cast {
                    expr: Box::new(c),
                    to: t.data_type().clone(),
                    try_cast: false,
                }
            }
        })
        .collect();
    let out: Vec<Field> = from
        .fields()
        .iter()
        .zip(schema.fields())
        .map(|(f, t)| f.as_ref().clone().with_data_type(t.data_type().clone()))
        .collect();
    LogicalPlan::Projection {
        input: Box::new(plan),
        exprs,
        schema: SchemaRef::new(Schema::new(out)),
    }
}

/// Whether `plan` reads the working table of recursive CTE `id`.
fn reads_work_table(plan: &LogicalPlan, id: usize) -> bool {
    match plan {
        LogicalPlan::Scan {
            source: TableSource::WorkTable { id: w, .. },
            ..
        } => *w == id,
        other => other
            .children()
            .into_iter()
            .any(|c| reads_work_table(c, id)),
    }
}

/// The one group of no keys (`SELECT 1 FROM t HAVING ...`, the `()` of a
/// ROLLUP) is one row, and an Aggregate computes at least one value: a
/// `count(*)` no one reads, and its field.
fn unread_count() -> (AggregateExpr, Field) {
    let count = AggregateExpr {
        func: crate::plan::AggregateFunction::CountStar,
        arg: None,
        key: None,
        distinct: false,
        order_by: Vec::new(),
    };
    (count, Field::new("count_star()", DataType::Int64, false))
}

/// The groups of each grouping set in `sets` (indices into `group_by`),
/// one after the other, as one Aggregate's output `schema`: the keys a
/// set leaves out NULL, each `GROUPING(x)` the set's constant.
fn grouped_by_sets(
    input: LogicalPlan,
    group_by: &[Expr],
    sets: &[Vec<usize>],
    aggregates: &[AggregateExpr],
    schema: &SchemaRef,
) -> Result<LogicalPlan> {
    use crate::plan::AggregateFunction;
    let n = group_by.len();
    // each aggregate: the key a GROUPING reads, or its place among the
    // aggregates computed
    let mut computed: Vec<AggregateExpr> = Vec::new();
    let mut fields: Vec<Field> = Vec::new();
    let mut roles: Vec<Result<usize, usize>> = Vec::with_capacity(aggregates.len());
    for (a, field) in aggregates.iter().zip(&schema.fields()[n..]) {
        if a.func == AggregateFunction::Grouping {
            let arg = a.arg.as_ref();
            let Some(k) = group_by.iter().position(|g| Some(g) == arg) else {
                return Err(bind_err(format!(
                    "GROUPING child \"{}\" must be a grouping column",
                    arg.map(ToString::to_string).unwrap_or_default()
                )));
            };
            roles.push(Ok(k));
        } else {
            roles.push(Err(computed.len()));
            computed.push(a.clone());
            fields.push((**field).clone());
        }
    }
    let inputs = sets
        .iter()
        .map(|set| {
            let mut computed = computed.clone();
            let mut set_fields: Vec<Field> = set.iter().map(|&k| schema.field(k).clone()).collect();
            set_fields.extend(fields.iter().cloned());
            if set.is_empty() && computed.is_empty() {
                let (count, field) = unread_count();
                computed.push(count);
                set_fields.push(field);
            }
            let aggregate = LogicalPlan::Aggregate {
                input: Box::new(input.clone()),
                group_by: set.iter().map(|&k| group_by[k].clone()).collect(),
                aggregates: computed,
                schema: SchemaRef::new(Schema::new(set_fields)),
            };
            let keys = (0..n).map(|k| match set.iter().position(|&s| s == k) {
                Some(at) => Expr::column(at, schema.field(k).name().clone()),
                None => Expr::Literal(ScalarValue::Null(schema.field(k).data_type().clone())),
            });
            let values = roles
                .iter()
                .zip(&schema.fields()[n..])
                .map(|(role, field)| match role {
                    Ok(k) => Expr::Literal(ScalarValue::Int64(i64::from(!set.contains(k)))),
                    Err(c) => Expr::column(set.len() + c, field.name().clone()),
                });
            LogicalPlan::Projection {
                input: Box::new(aggregate),
                exprs: keys.chain(values).collect(),
                schema: SchemaRef::clone(schema),
            }
        })
        .collect();
    Ok(LogicalPlan::Union {
        inputs,
        schema: SchemaRef::clone(schema),
    })
}

/// `schema` with its first columns renamed to `names` (`FROM t AS x(a, b)`).
fn rename_columns(
    schema: SchemaRef,
    names: &[&ast::Ident],
    table: &ast::Ident,
) -> Result<SchemaRef> {
    if names.is_empty() {
        return Ok(schema);
    }
    if names.len() > schema.fields().len() {
        return Err(bind_err(format!(
            "table \"{}\" has {} columns available but {} columns specified{}",
            table.value,
            schema.fields().len(),
            names.len(),
            at(table.span)
        )));
    }
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| match names.get(i) {
            Some(n) => f.as_ref().clone().with_name(n.value.clone()),
            None => f.as_ref().clone(),
        })
        .collect();
    Ok(SchemaRef::new(Schema::new(fields)))
}

/// `weir_functions()`: the function registry as rows (name, kind,
/// signature, description).
fn functions_table() -> LogicalPlan {
    let rows = crate::functions::FUNCTIONS
        .iter()
        .map(|f| {
            [f.name, f.kind.label(), f.signature, f.description]
                .into_iter()
                .map(|s| ScalarValue::Utf8(s.to_string()))
                .collect()
        })
        .collect();
    let fields: Vec<Field> = ["function_name", "function_type", "signature", "description"]
        .into_iter()
        .map(|n| Field::new(n, DataType::Utf8, false))
        .collect();
    LogicalPlan::Values {
        rows,
        schema: SchemaRef::new(Schema::new(fields)),
    }
}

/// Plans the clauses of a SELECT over its source `plan`.
fn select_over(
    b: &Binder<'_>,
    plan: LogicalPlan,
    scope: &Scope,
    parts: SelectParts<'_>,
    order_by: Ordering<'_>,
    (offset, fetch): (usize, Option<usize>),
) -> Result<LogicalPlan> {
    let fold = b.fold;
    let mut plan = plan;
    let mut items = expand_items(parts.projection, scope)?;
    // SELECT aliases a name that is no column may stand for, as in DuckDB:
    // in WHERE, HAVING and ORDER BY any of them, in a SELECT item those
    // before it (`(item index, alias, expression)`)
    let aliases: Vec<(usize, String, ast::Expr)> = items
        .iter()
        .enumerate()
        .filter_map(|(k, it)| match it.kind {
            ItemKind::Ast(e) if it.aliased => Some((k, it.name.clone(), e.clone())),
            _ => None,
        })
        .collect();
    let aliases_before = |k: usize| -> Vec<(String, ast::Expr)> {
        aliases
            .iter()
            .filter(|(j, ..)| *j < k)
            .map(|(_, name, e)| (name.clone(), e.clone()))
            .collect()
    };
    if let Some(w) = parts.selection {
        let mut eb = ExprBinder::new(scope, fold, false, "WHERE clause cannot contain aggregates");
        eb.allow_subqueries(b);
        eb.set_select_aliases(aliases_before(usize::MAX));
        let predicate = eb.predicate_without_windows(
            w,
            "WHERE",
            "WHERE clause cannot contain window functions",
        )?;
        if predicate != Expr::Literal(ScalarValue::Boolean(true)) {
            plan = super::subquery::filter_with(plan, predicate, eb.take_subqueries());
        }
    }
    let mut eb = ExprBinder::new(scope, fold, true, "");
    eb.named_windows = super::window::named_windows(parts.named_windows)?;
    eb.allow_windows();
    eb.allow_subqueries(b);
    const NO_AGG_GROUP: &str = "GROUP BY clause cannot contain aggregates";

    // GROUP BY: expressions, output ordinals, or output aliases.
    let mut group_by: Vec<Expr> = Vec::new();
    // the key each GROUP BY expression is (equal keys are one)
    let mut key_of: Vec<usize> = Vec::with_capacity(parts.group_by.len());
    for g in parts.group_by {
        let e = if let Some(k) = ordinal(g, items.len(), "GROUP BY")? {
            bind_item(&mut eb, &items[k], scope, NO_AGG_GROUP)?
        } else if let Some(k) = alias_of(g, &items, scope, false) {
            bind_item(&mut eb, &items[k], scope, NO_AGG_GROUP)?
        } else {
            eb.bind_without_aggregates(g, NO_AGG_GROUP)?
        };
        match group_by.iter().position(|k| *k == e) {
            Some(k) => key_of.push(k),
            None => {
                key_of.push(group_by.len());
                group_by.push(e);
            }
        }
    }
    let grouping_sets: Option<Vec<Vec<usize>>> = parts.grouping_sets.as_ref().map(|sets| {
        sets.iter()
            .map(|set| {
                let mut keys: Vec<usize> = set.iter().map(|&g| key_of[g]).collect();
                keys.sort_unstable();
                keys.dedup();
                keys
            })
            .collect()
    });
    if parts.group_all {
        // every item that binds without an aggregate is a key
        for item in &items {
            let mut probe = ExprBinder::new(scope, fold, false, NO_AGG_GROUP);
            if let Ok(e) = bind_item(&mut probe, item, scope, NO_AGG_GROUP)
                && !group_by.contains(&e)
            {
                group_by.push(e);
            }
        }
    }

    let mut exprs = Vec::with_capacity(items.len());
    for (k, item) in items.iter_mut().enumerate() {
        exprs.push(match item.kind {
            ItemKind::Ast(e) => {
                if !aliases.is_empty() {
                    eb.set_select_aliases(aliases_before(k));
                }
                let bound = eb.bind(e)?;
                if item.name.is_empty() {
                    item.name = expr_text(e);
                }
                bound
            }
            ItemKind::Column(i) => Expr::column(i, scope.schema.field(i).name().clone()),
        });
    }
    if !aliases.is_empty() {
        eb.set_select_aliases(aliases_before(usize::MAX));
    }
    let having = parts
        .having
        .map(|h| {
            eb.predicate_without_windows(
                h,
                "HAVING",
                "HAVING clause cannot contain window functions",
            )
        })
        .transpose()?;
    let qualify = parts
        .qualify
        .map(|q| eb.bind_predicate(&with_aliases(q, &items, scope), "QUALIFY"))
        .transpose()?;

    let mut sort = Vec::with_capacity(order_by.exprs.len());
    if let Some(options) = order_by.all {
        // ORDER BY ALL: every output column, left to right
        let (asc, nulls_first) = sort_options(options)?;
        sort.extend((0..items.len()).map(|k| (SortTarget::Output(k), asc, nulls_first)));
    }
    for ob in order_by.exprs {
        if ob.with_fill.is_some() {
            return Err(unsupported("ORDER BY ... WITH FILL is not supported"));
        }
        let (asc, nulls_first) = sort_options(&ob.options)?;
        reject_constant_order(&ob.expr)?;
        let target = if let Some(k) = ordinal(&ob.expr, items.len(), "ORDER")? {
            SortTarget::Output(k)
        } else if let Some(k) = alias_of(&ob.expr, &items, scope, true) {
            SortTarget::Output(k)
        } else {
            SortTarget::Expr(eb.bind(&ob.expr)?)
        };
        sort.push((target, asc, nulls_first));
    }

    if qualify.is_some() && eb.windows().is_empty() {
        return Err(bind_err(
            "at least one window function must appear in the SELECT column or QUALIFY clause",
        ));
    }
    let mut windows = eb.windows().to_vec();
    let mut qualify = qualify;
    let mut subqueries = eb.take_subqueries();
    let aggregating = !group_by.is_empty()
        || grouping_sets.is_some()
        || !eb.aggregates().is_empty()
        || having.is_some();
    if !aggregating && !subqueries.is_empty() {
        // subquery `s` becomes column `n + s` of the input, the window
        // functions follow them
        let n = plan.schema().fields().len();
        let k = subqueries.len();
        let place = |e: Expr| super::subquery::place(e, n, k, &eb);
        rewrite_outputs(&place, &mut exprs, &mut qualify, &mut windows, &mut sort)?;
        subqueries = subqueries
            .into_iter()
            .map(|s| s.map_exprs(&mut |e| place(e)))
            .collect::<Result<_>>()?;
        super::subquery::check_attachable(&subqueries, n)?;
        plan = super::subquery::attach(plan, std::mem::take(&mut subqueries));
    }
    if aggregating {
        let input_schema = plan.schema();
        let n_input = input_schema.fields().len();
        let mut fields: Vec<Field> = group_by
            .iter()
            .map(|g| {
                Field::new(
                    g.to_string(),
                    g.data_type(&input_schema),
                    // a key left out of a grouping set is NULL there
                    grouping_sets.is_some() || nullable(g, &input_schema),
                )
            })
            .collect();
        fields.extend(eb.aggregate_fields());
        let mut aggregates = eb.aggregates().to_vec();
        // GROUPING() without ROLLUP, CUBE or GROUPING SETS: one set, of
        // every key
        let grouping_sets = grouping_sets.or_else(|| {
            aggregates
                .iter()
                .any(|a| a.func == crate::plan::AggregateFunction::Grouping)
                .then(|| vec![(0..group_by.len()).collect()])
        });
        if aggregates.is_empty() && group_by.is_empty() {
            let (count, field) = unread_count();
            aggregates.push(count);
            fields.push(field);
        }
        let agg_schema = SchemaRef::new(Schema::new(fields));
        let places = Places {
            eb: &eb,
            group_by: &group_by,
            n_input,
            width: agg_schema.fields().len(),
            subqueries: subqueries.len(),
        };
        let rewrite = |e: Expr| to_aggregate_output(e, &places, &agg_schema);
        let having = having.map(rewrite).transpose()?;
        rewrite_outputs(&rewrite, &mut exprs, &mut qualify, &mut windows, &mut sort)?;
        let subqueries = subqueries
            .into_iter()
            .map(|s| s.map_exprs(&mut |e| rewrite(e)))
            .collect::<Result<Vec<_>>>()?;
        let width = agg_schema.fields().len();
        plan = match &grouping_sets {
            None => LogicalPlan::Aggregate {
                input: Box::new(plan),
                group_by: group_by.clone(),
                aggregates,
                schema: agg_schema,
            },
            Some(sets) => grouped_by_sets(plan, &group_by, sets, &aggregates, &agg_schema)?,
        };
        // subqueries over the groups: joined before HAVING filters
        super::subquery::check_attachable(&subqueries, width)?;
        plan = super::subquery::attach(plan, subqueries);
        if let Some(predicate) = having
            && predicate != Expr::Literal(ScalarValue::Boolean(true))
        {
            plan = LogicalPlan::Filter {
                input: Box::new(plan),
                predicate,
            };
        }
    }

    if !windows.is_empty() {
        let width = plan.schema().fields().len();
        let (windowed, columns) = super::window::plan_windows(plan, windows);
        plan = windowed;
        let schema = plan.schema();
        let remap = |e: Expr| super::window::remap_windows(e, width, &columns, &schema);
        exprs = exprs.into_iter().map(remap).collect();
        qualify = qualify.map(remap);
        for (target, _, _) in &mut sort {
            if let SortTarget::Expr(e) = target {
                *e = remap(std::mem::replace(
                    e,
                    Expr::Literal(ScalarValue::Null(DataType::Null)),
                ));
            }
        }
        if let Some(predicate) = qualify
            && predicate != Expr::Literal(ScalarValue::Boolean(true))
        {
            plan = LogicalPlan::Filter {
                input: Box::new(plan),
                predicate,
            };
        }
    }
    let input_schema = plan.schema();
    let visible = exprs.len();
    let mut fields: Vec<Field> = items
        .iter()
        .zip(&exprs)
        .map(|(item, e)| {
            Field::new(
                item.name.clone(),
                e.data_type(&input_schema),
                nullable(e, &input_schema),
            )
        })
        .collect();
    let mut keys = Vec::with_capacity(sort.len());
    for (target, asc, nulls_first) in sort {
        let k = match target {
            SortTarget::Output(k) => k,
            SortTarget::Expr(e) => match exprs.iter().position(|x| *x == e) {
                Some(k) => k,
                None if parts.distinct => {
                    return Err(bind_err(format!(
                        "for SELECT DISTINCT, ORDER BY expressions must appear in the select list: {e}"
                    )));
                }
                None => {
                    fields.push(Field::new(
                        format!("__sort_key_{}", exprs.len() - visible),
                        e.data_type(&input_schema),
                        nullable(&e, &input_schema),
                    ));
                    exprs.push(e);
                    exprs.len() - 1
                }
            },
        };
        keys.push(SortKey {
            expr: Expr::column(k, fields[k].name().clone()),
            asc,
            nulls_first,
        });
    }
    let hidden = exprs.len() > visible;
    let schema = SchemaRef::new(Schema::new(fields));
    plan = LogicalPlan::Projection {
        input: Box::new(plan),
        exprs,
        schema: schema.clone(),
    };
    if parts.distinct {
        plan = LogicalPlan::Distinct {
            input: Box::new(plan),
        };
    }
    if !keys.is_empty() {
        plan = LogicalPlan::Sort {
            input: Box::new(plan),
            keys,
        };
    }
    if hidden {
        let exprs = (0..visible)
            .map(|i| Expr::column(i, schema.field(i).name().clone()))
            .collect();
        let schema = SchemaRef::new(Schema::new(schema.fields()[..visible].to_vec()));
        plan = LogicalPlan::Projection {
            input: Box::new(plan),
            exprs,
            schema,
        };
    }
    if offset > 0 || fetch.is_some() {
        plan = LogicalPlan::Limit {
            input: Box::new(plan),
            offset,
            fetch,
        };
    }
    Ok(plan)
}

/// Expands `*` and `t.*` and names every output column.
fn expand_items<'q>(projection: Option<&'q [SelectItem]>, scope: &Scope) -> Result<Vec<Item<'q>>> {
    let all_columns = |out: &mut Vec<Item<'q>>, opts: Option<&'q WildcardAdditionalOptions>| {
        if scope.schema.fields().is_empty() {
            return Err(bind_err("SELECT * with no tables specified is not valid"));
        }
        let (excluded, replaced) = match opts {
            Some(o) => check_wildcard_options(o, scope)?,
            None => (Vec::new(), Vec::new()),
        };
        let before = out.len();
        for (i, f) in scope.schema.fields().iter().enumerate() {
            if excluded.contains(&i) {
                continue;
            }
            let replacement = replaced.iter().find(|(k, _)| *k == i);
            if replacement.is_none()
                && let Some(message) = crate::catalog::unsupported_column(f)
            {
                return Err(unsupported(message));
            }
            out.push(match replacement {
                Some((_, r)) => Item {
                    kind: ItemKind::Ast(&r.expr),
                    name: r.column_name.value.clone(),
                    aliased: true,
                },
                None => Item {
                    kind: ItemKind::Column(i),
                    name: f.name().clone(),
                    aliased: false,
                },
            });
        }
        if out.len() == before {
            return Err(bind_err(
                "SELECT list is empty after resolving * expressions!",
            ));
        }
        Ok(())
    };
    let mut out = Vec::new();
    let Some(projection) = projection else {
        all_columns(&mut out, None)?;
        return Ok(out);
    };
    for item in projection {
        match item {
            SelectItem::UnnamedExpr(e) if columns_call(e).is_some() => {
                for i in columns_expression(e, scope)? {
                    out.push(Item {
                        kind: ItemKind::Column(i),
                        name: scope.schema.field(i).name().clone(),
                        aliased: false,
                    });
                }
            }
            SelectItem::UnnamedExpr(e) => {
                let name = match e {
                    ast::Expr::Identifier(id) => column_name(scope, id),
                    ast::Expr::CompoundIdentifier(ids) => match ids.last() {
                        Some(id) => column_name(scope, id),
                        None => e.to_string(),
                    },
                    // Named after binding, which bounds its depth.
                    _ => String::new(),
                };
                out.push(Item {
                    kind: ItemKind::Ast(e),
                    name,
                    aliased: false,
                });
            }
            SelectItem::ExprWithAlias { expr, alias } => out.push(Item {
                kind: ItemKind::Ast(expr),
                name: alias.value.clone(),
                aliased: true,
            }),
            SelectItem::Wildcard(opts) => all_columns(&mut out, Some(opts))?,
            SelectItem::QualifiedWildcard(kind, opts) => {
                let q = match kind {
                    ast::SelectItemQualifiedWildcardKind::ObjectName(n) => single_name(n)?,
                    ast::SelectItemQualifiedWildcardKind::Expr(e) => {
                        return Err(unsupported(format!("{e}.* is not supported")));
                    }
                };
                if scope.relations.is_empty() {
                    scope.check_qualifier(q)?;
                    all_columns(&mut out, Some(opts))?;
                } else {
                    for i in scope.relation_columns(q)? {
                        out.push(Item {
                            kind: ItemKind::Column(i),
                            name: scope.schema.field(i).name().clone(),
                            aliased: false,
                        });
                    }
                }
            }
            SelectItem::ExprWithAliases { .. } => {
                return Err(unsupported(format!("{item} is not supported")));
            }
        }
    }
    Ok(out)
}

/// `e` if it is a call of `COLUMNS(...)`.
fn columns_call(e: &ast::Expr) -> Option<&ast::Function> {
    match e {
        ast::Expr::Function(f)
            if matches!(f.name.0.as_slice(),
                [ast::ObjectNamePart::Identifier(id)] if id.value.eq_ignore_ascii_case("columns")) =>
        {
            Some(f)
        }
        _ => None,
    }
}

/// The scope's columns a SELECT item `COLUMNS(*)` or `COLUMNS('regex')`
/// stands for, in order; the regular expression matches anywhere in a
/// name, as DuckDB's.
fn columns_expression(e: &ast::Expr, scope: &Scope) -> Result<Vec<usize>> {
    let refused = || {
        unsupported(format!(
            "{e} is not supported: COLUMNS takes * or a constant regular expression{}",
            at(e.span())
        ))
    };
    let Some(f) = columns_call(e) else {
        return Err(refused());
    };
    let ast::FunctionArguments::List(list) = &f.args else {
        return Err(refused());
    };
    let fields = scope.schema.fields();
    match list.args.as_slice() {
        [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard)] if list.clauses.is_empty() => {
            if fields.is_empty() {
                return Err(bind_err("SELECT * with no tables specified is not valid"));
            }
            Ok((0..fields.len()).collect())
        }
        [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(ast::Expr::Value(v)))]
            if list.clauses.is_empty() =>
        {
            let ast::Value::SingleQuotedString(pattern) = &v.value else {
                return Err(refused());
            };
            let re = regex::Regex::new(pattern).map_err(|err| {
                let text = err.to_string();
                let why = text
                    .lines()
                    .find_map(|l| l.trim().strip_prefix("error: "))
                    .unwrap_or(&text)
                    .to_string();
                bind_err(format!(
                    "Failed to compile regex \"{pattern}\": {why}{}",
                    at(e.span())
                ))
            })?;
            let matched: Vec<usize> = (0..fields.len())
                .filter(|&i| re.is_match(fields[i].name()))
                .collect();
            if matched.is_empty() {
                return Err(bind_err(format!(
                    "No matching columns found that match regex \"{pattern}\"{}",
                    at(e.span())
                )));
            }
            Ok(matched)
        }
        _ => Err(refused()),
    }
}

/// The columns `* REPLACE (...)` replaces, with their new expressions.
type Replaced<'q> = Vec<(usize, &'q ast::ReplaceSelectElement)>;

/// The columns `* EXCLUDE (...)` leaves out and those `* REPLACE (...)`
/// replaces; the other options of `*` are refused.
fn check_wildcard_options<'q>(
    o: &'q WildcardAdditionalOptions,
    scope: &Scope,
) -> Result<(Vec<usize>, Replaced<'q>)> {
    if o.opt_ilike.is_some()
        || o.opt_except.is_some()
        || o.opt_rename.is_some()
        || o.opt_alias.is_some()
    {
        return Err(unsupported(format!(
            "* with ILIKE/EXCEPT/RENAME is not supported: {o}"
        )));
    }
    let excluded = excluded_columns(o, scope)?;
    let mut replaced: Replaced<'q> = Vec::new();
    for r in o.opt_replace.iter().flat_map(|r| &r.items) {
        let id = &r.column_name;
        let Some(i) = scope.find(&id.value) else {
            return Err(bind_err(format!(
                "Column \"{}\" in REPLACE list not found in FROM clause{}",
                id.value,
                at(id.span)
            )));
        };
        if replaced.iter().any(|(k, _)| *k == i) {
            return Err(bind_err(format!(
                "Duplicate entry \"{}\" in REPLACE list{}",
                id.value,
                at(id.span)
            )));
        }
        if excluded.contains(&i) {
            return Err(bind_err(format!(
                "Column \"{}\" cannot occur in both EXCLUDE and REPLACE list{}",
                id.value,
                at(id.span)
            )));
        }
        replaced.push((i, r.as_ref()));
    }
    Ok((excluded, replaced))
}

/// The columns `* EXCLUDE (...)` leaves out.
fn excluded_columns(o: &WildcardAdditionalOptions, scope: &Scope) -> Result<Vec<usize>> {
    let names: Vec<&ast::ObjectName> = match &o.opt_exclude {
        None => return Ok(Vec::new()),
        Some(ast::ExcludeSelectItem::Single(n)) => vec![n],
        Some(ast::ExcludeSelectItem::Multiple(ns)) => ns.iter().collect(),
    };
    let mut out = Vec::with_capacity(names.len());
    for n in names {
        let Some(ast::ObjectNamePart::Identifier(id)) = n.0.last() else {
            return Err(unsupported(format!("EXCLUDE {n} is not supported")));
        };
        match scope.find(&id.value) {
            Some(i) => out.push(i),
            None => {
                return Err(bind_err(format!(
                    "Column \"{}\" in EXCLUDE list not found in FROM clause{}",
                    id.value,
                    at(id.span)
                )));
            }
        }
    }
    Ok(out)
}

fn column_name(scope: &Scope, id: &ast::Ident) -> String {
    match scope.find(&id.value) {
        Some(i) => scope.schema.field(i).name().clone(),
        None => id.value.clone(),
    }
}

/// Binds a SELECT item for GROUP BY (no aggregates allowed).
fn bind_item(
    eb: &mut ExprBinder<'_>,
    item: &Item<'_>,
    scope: &Scope,
    reason: &'static str,
) -> Result<Expr> {
    match item.kind {
        ItemKind::Ast(e) => eb.bind_without_aggregates(e, reason),
        ItemKind::Column(i) => Ok(Expr::column(i, scope.schema.field(i).name().clone())),
    }
}

/// A query's ORDER BY: its terms, or ORDER BY ALL with its options.
/// The two sides of a `UNION [ALL] BY NAME` with the same columns in the
/// same order: the left side's, then those only the right side has, names
/// matched without regard to case, as in DuckDB; a column a side lacks is
/// NULL there (of the other side's type).
fn by_name_columns(l: LogicalPlan, r: LogicalPlan) -> (LogicalPlan, LogicalPlan) {
    let (ls, rs) = (l.schema(), r.schema());
    let find = |schema: &Schema, name: &str| {
        schema
            .fields()
            .iter()
            .position(|f| f.name().eq_ignore_ascii_case(name))
    };
    let mut names: Vec<(String, DataType)> = ls
        .fields()
        .iter()
        .map(|f| (f.name().clone(), f.data_type().clone()))
        .collect();
    for f in rs.fields() {
        if find(&ls, f.name()).is_none() {
            names.push((f.name().clone(), f.data_type().clone()));
        }
    }
    let side = |plan: LogicalPlan, schema: &Schema| -> LogicalPlan {
        let (mut exprs, mut fields) = (Vec::new(), Vec::new());
        for (name, t) in &names {
            match find(schema, name) {
                Some(i) => {
                    exprs.push(Expr::column(i, schema.field(i).name().clone()));
                    fields.push(schema.field(i).clone().with_name(name.clone()));
                }
                None => {
                    exprs.push(Expr::Literal(ScalarValue::Null(t.clone())));
                    fields.push(Field::new(name.clone(), t.clone(), true));
                }
            }
        }
        LogicalPlan::Projection {
            input: Box::new(plan),
            exprs,
            schema: SchemaRef::new(Schema::new(fields)),
        }
    };
    (side(l, &ls), side(r, &rs))
}

/// `SELECT DISTINCT ON (k, ...) items ... ORDER BY o, ...` as DuckDB runs
/// it: of each value of the keys, the first row by the ORDER BY. The
/// select without DISTINCT ON, keeping the rows that
/// `QUALIFY row_number() OVER (PARTITION BY k, ... ORDER BY o, ...) = 1`
/// keeps (ORDER BY and ON positions stand for their select items; QUALIFY
/// sees the select list's aliases).
fn distinct_on(s: &ast::Select, on: &[ast::Expr], order_by: &Ordering<'_>) -> Result<ast::Select> {
    if s.qualify.is_some() {
        return Err(unsupported("DISTINCT ON with QUALIFY is not supported"));
    }
    if order_by.all.is_some() {
        return Err(unsupported(
            "DISTINCT ON with ORDER BY ALL is not supported",
        ));
    }
    // a position (`ORDER BY 2`) names a select item
    let item = |e: &ast::Expr| -> Result<String> {
        let ast::Expr::Value(v) = e else {
            return Ok(e.to_string());
        };
        let Value::Number(n, _) = &v.value else {
            return Ok(e.to_string());
        };
        let chosen = n
            .parse::<usize>()
            .ok()
            .and_then(|i| i.checked_sub(1))
            .and_then(|i| s.projection.get(i));
        match chosen {
            Some(SelectItem::UnnamedExpr(x) | SelectItem::ExprWithAlias { expr: x, .. }) => {
                Ok(format!("({x})"))
            }
            Some(_) => Err(unsupported(format!(
                "DISTINCT ON with a position ({n}) that names a * is not supported"
            ))),
            None => Err(bind_err(format!(
                "term out of range - should be between 1 and {}: {n}",
                s.projection.len()
            ))),
        }
    };
    let keys = on.iter().map(item).collect::<Result<Vec<_>>>()?;
    let mut order = Vec::with_capacity(order_by.exprs.len());
    for o in order_by.exprs {
        order.push(format!("{}{}", item(&o.expr)?, o.options));
    }
    let mut window = format!("row_number() OVER (PARTITION BY {}", keys.join(", "));
    if !order.is_empty() {
        window.push_str(&format!(" ORDER BY {}", order.join(", ")));
    }
    window.push_str(") = 1");
    let qualify = sqlparser::parser::Parser::new(&crate::dialect::WEIR)
        .try_with_sql(&window)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| bind_err(format!("DISTINCT ON ({}): {e}", keys.join(", "))))?;
    let mut rewritten = s.clone();
    rewritten.distinct = None;
    rewritten.qualify = Some(qualify);
    Ok(rewritten)
}

#[derive(Clone, Copy, Default)]
struct Ordering<'a> {
    exprs: &'a [ast::OrderByExpr],
    all: Option<&'a ast::OrderByOptions>,
}

impl Ordering<'_> {
    fn is_empty(&self) -> bool {
        self.exprs.is_empty() && self.all.is_none()
    }
}

/// `(ascending, nulls_first)` of an ORDER BY term's options.
pub(super) fn sort_options(o: &ast::OrderByOptions) -> Result<(bool, bool)> {
    let asc = match &o.sort {
        None | Some(ast::OrderBySort::Asc) => true,
        Some(ast::OrderBySort::Desc) => false,
        Some(ast::OrderBySort::Using(op)) => {
            return Err(unsupported(format!(
                "ORDER BY ... USING {op} is not supported"
            )));
        }
    };
    // DuckDB's default: NULLs last in both directions
    Ok((
        asc,
        o.nulls_first
            .unwrap_or_else(|| super::settings::default_nulls_first(asc)),
    ))
}

/// `Some(k)` if `e` is an integer literal naming output column `k + 1`.
fn ordinal(e: &ast::Expr, n: usize, clause: &str) -> Result<Option<usize>> {
    let Some((negative, v)) = literal_term(e) else {
        return Ok(None);
    };
    let Value::Number(s, _) = &v.value else {
        return Ok(None);
    };
    if s.contains(['.', 'e', 'E']) {
        return Ok(None);
    }
    match s.parse::<usize>() {
        Ok(k) if !negative && (1..=n).contains(&k) => Ok(Some(k - 1)),
        _ => Err(bind_err(format!(
            "{clause} term out of range - should be between 1 and {n}, got {}{s}{}",
            if negative { "-" } else { "" },
            at(v.span)
        ))),
    }
}

/// The literal a GROUP BY or ORDER BY term is, if it is one: parentheses
/// and a leading minus are looked through, as DuckDB does; `true` when
/// negated.
fn literal_term(e: &ast::Expr) -> Option<(bool, &ast::ValueWithSpan)> {
    match e {
        ast::Expr::Nested(inner) => literal_term(inner),
        ast::Expr::Value(v) => Some((false, v)),
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => match expr.as_ref() {
            ast::Expr::Value(v) => Some((true, v)),
            _ => None,
        },
        _ => None,
    }
}

/// Rejects an ORDER BY term that is a literal but not an output ordinal
/// (`ORDER BY 'x'`, `ORDER BY 1.5`, `ORDER BY NULL`): it would not order
/// anything, and DuckDB's binder rejects it.
fn reject_constant_order(e: &ast::Expr) -> Result<()> {
    let Some((_, v)) = literal_term(e) else {
        return Ok(());
    };
    match &v.value {
        Value::Number(s, _) if !s.contains(['.', 'e', 'E']) => Ok(()),
        Value::Placeholder(_) => Ok(()),
        _ => Err(bind_err(format!(
            "ORDER BY non-integer literal has no effect: {e}{}",
            at(v.span)
        ))),
    }
}

/// `Some(k)` if `e` is a bare name that an `AS` gave output column `k`.
/// ORDER BY prefers such an alias to a column of the same name; GROUP BY
/// prefers the column (as DuckDB does).
fn alias_of(e: &ast::Expr, items: &[Item<'_>], scope: &Scope, prefer_alias: bool) -> Option<usize> {
    let ast::Expr::Identifier(id) = e else {
        return None;
    };
    let k = items
        .iter()
        .position(|it| it.aliased && it.name.eq_ignore_ascii_case(&id.value))?;
    (prefer_alias || scope.find(&id.value).is_none()).then_some(k)
}

/// Where [`to_aggregate_output`] maps placeholders.
struct Places<'a, 'b> {
    eb: &'a ExprBinder<'b>,
    group_by: &'a [Expr],
    /// Columns of the Aggregate's input (the scope).
    n_input: usize,
    /// Columns of the Aggregate's output.
    width: usize,
    /// Subqueries joined after it (their columns follow its output).
    subqueries: usize,
}

/// `e` with each bare name that is not a column but an `AS` alias of the
/// SELECT list replaced by the aliased expression (`QUALIFY r <= 3`),
/// through operators, parentheses, IS [NOT] NULL, BETWEEN and IN lists.
fn with_aliases(e: &ast::Expr, items: &[Item<'_>], scope: &Scope) -> ast::Expr {
    use ast::Expr as A;
    let sub = |x: &ast::Expr| Box::new(with_aliases(x, items, scope));
    match e {
        A::Identifier(id) if scope.find(&id.value).is_none() => {
            match items
                .iter()
                .find(|it| it.aliased && it.name.eq_ignore_ascii_case(&id.value))
            {
                Some(Item {
                    kind: ItemKind::Ast(x),
                    ..
                }) => A::Nested(Box::new((*x).clone())),
                _ => e.clone(),
            }
        }
        A::BinaryOp { left, op, right } => A::BinaryOp {
            left: sub(left),
            op: op.clone(),
            right: sub(right),
        },
        A::UnaryOp { op, expr } => A::UnaryOp {
            op: *op,
            expr: sub(expr),
        },
        A::Nested(x) => A::Nested(sub(x)),
        A::IsNull(x) => A::IsNull(sub(x)),
        A::IsNotNull(x) => A::IsNotNull(sub(x)),
        A::Between {
            expr,
            negated,
            low,
            high,
        } => A::Between {
            expr: sub(expr),
            negated: *negated,
            low: sub(low),
            high: sub(high),
        },
        A::InList {
            expr,
            list,
            negated,
        } => A::InList {
            expr: sub(expr),
            list: list.iter().map(|x| with_aliases(x, items, scope)).collect(),
            negated: *negated,
        },
        other => other.clone(),
    }
}

/// Maps an expression over (scope + placeholders) onto the Aggregate's
/// output: group keys and aggregates become its columns; window function
/// `j` becomes column `width + j`, as the Window nodes above will number
/// it; any other column is an error.
fn to_aggregate_output(e: Expr, places: &Places<'_, '_>, schema: &Schema) -> Result<Expr> {
    let group_by = places.group_by;
    if let Some(i) = group_by.iter().position(|g| *g == e) {
        return Ok(Expr::column(i, schema.field(i).name().clone()));
    }
    match e {
        Expr::Column(c) if c.index >= places.n_input => {
            match places.eb.placeholder(c.index - places.n_input) {
                Some(Placeholder::Aggregate(k)) => {
                    let i = group_by.len() + k;
                    Ok(Expr::column(i, schema.field(i).name().clone()))
                }
                Some(Placeholder::Window(j)) => {
                    Ok(Expr::column(places.width + places.subqueries + j, c.name))
                }
                Some(Placeholder::Subquery(s)) => Ok(Expr::column(places.width + s, c.name)),
                None => Err(bind_err(format!(
                    "unknown placeholder column \"{}\"",
                    c.name
                ))),
            }
        }
        Expr::Column(c) => Err(bind_err(format!(
            "column \"{}\" must appear in the GROUP BY clause or must be part of an aggregate function",
            c.name
        ))),
        Expr::Literal(_) => Ok(e),
        other => other.try_map_children(&mut |c| to_aggregate_output(c, places, schema)),
    }
}

/// Whether `e` over `schema` can be NULL (conservatively true).
fn nullable(e: &Expr, schema: &Schema) -> bool {
    match e {
        Expr::Column(c) => schema.field(c.index).is_nullable(),
        Expr::Literal(v) => v.is_null(),
        Expr::IsNull(_) | Expr::IsNotNull(_) => false,
        Expr::Binary { left, right, .. } => nullable(left, schema) || nullable(right, schema),
        Expr::Not(x)
        | Expr::Negative(x)
        | Expr::Cast { expr: x, .. }
        | Expr::Like { expr: x, .. } => nullable(x, schema),
        Expr::InList { expr, list, .. } => {
            nullable(expr, schema) || list.iter().any(|v| v.is_null())
        }
        Expr::Case {
            when_then,
            else_expr,
        } => {
            when_then.iter().any(|(_, t)| nullable(t, schema))
                || else_expr.as_ref().is_none_or(|x| nullable(x, schema))
        }
        Expr::Function { func, args } => {
            if *func == crate::expr::ScalarFunction::Coalesce {
                args.iter().all(|a| nullable(a, schema))
            } else {
                args.iter().any(|a| nullable(a, schema))
            }
        }
    }
}

/// `LIMIT` / `OFFSET` as `(offset, fetch)`.
fn limit(fold: Folder<'_>, lc: Option<&LimitClause>) -> Result<(usize, Option<usize>)> {
    let (limit, offset) = match lc {
        None => return Ok((0, None)),
        Some(LimitClause::LimitOffset {
            limit,
            offset,
            limit_by,
        }) => {
            if !limit_by.is_empty() {
                return Err(unsupported("LIMIT ... BY is not supported"));
            }
            (limit.as_ref(), offset.as_ref().map(|o| &o.value))
        }
        Some(LimitClause::OffsetCommaLimit { offset, limit }) => (Some(limit), Some(offset)),
    };
    let fetch = match limit {
        Some(e) => count(fold, e, "LIMIT")?,
        None => None,
    };
    let offset = match offset {
        Some(e) => count(fold, e, "OFFSET")?.unwrap_or(0),
        None => 0,
    };
    Ok((offset, fetch))
}

/// A non-negative integer constant (`None` for NULL).
fn count(fold: Folder<'_>, e: &ast::Expr, clause: &str) -> Result<Option<usize>> {
    let scope = Scope::empty();
    let mut eb = ExprBinder::new(
        &scope,
        fold,
        false,
        "aggregate functions are not allowed in LIMIT",
    );
    let v = eb.bind(e)?;
    let bad = |what: &str| {
        bind_err(format!(
            "{clause} must be {what}, got \"{e}\"{}",
            at(e.span())
        ))
    };
    // a number is cast to BIGINT as DuckDB casts it (`LIMIT 1.5` is 2)
    let t = eb.type_of(&v);
    if !crate::types::is_numeric(&t) && t != DataType::Null {
        return Err(bad("an integer constant"));
    }
    // an integer literal needs no evaluator (a planner used without one
    // still binds `LIMIT 10`)
    let n = match &v {
        Expr::Literal(ScalarValue::Int32(n)) => i64::from(*n),
        Expr::Literal(ScalarValue::Int64(n)) => *n,
        _ => match fold.value(&fold.cast(v, &t, &DataType::Int64))? {
            Some(ScalarValue::Null(_)) => return Ok(None),
            Some(ScalarValue::Int64(n)) => n,
            _ => return Err(bad("an integer constant")),
        },
    };
    if n < 0 {
        return Err(bad("non-negative"));
    }
    Ok(Some(usize::try_from(n).unwrap_or(usize::MAX)))
}

/// A standalone `VALUES (...), (...)`: columns `col0, col1, ...`.
fn values(fold: Folder<'_>, v: &ast::Values) -> Result<LogicalPlan> {
    let scope = Scope::empty();
    let mut rows: Vec<Vec<ScalarValue>> = Vec::with_capacity(v.rows.len());
    let width = v.rows.first().map_or(0, |r| r.len());
    for row in &v.rows {
        if row.len() != width {
            return Err(bind_err(format!(
                "VALUES lists must all be the same length ({width} and {})",
                row.len()
            )));
        }
        let mut out = Vec::with_capacity(width);
        for e in row.iter() {
            let mut eb = ExprBinder::new(
                &scope,
                fold,
                false,
                "aggregate functions are not allowed in VALUES",
            );
            let bound = eb.bind(e)?;
            match fold.value(&bound)? {
                Some(x) => out.push(x),
                None => {
                    return Err(unsupported(format!(
                        "VALUES items must be constant expressions, found \"{e}\"{}",
                        at(e.span())
                    )));
                }
            }
        }
        rows.push(out);
    }
    let mut fields = Vec::with_capacity(width);
    for c in 0..width {
        let mut t = DataType::Null;
        let mut strings = false;
        for row in &rows {
            if matches!(row[c], ScalarValue::Utf8(_)) {
                strings = true;
                continue;
            }
            let vt = row[c].data_type();
            t = comparison_type(&t, &vt).ok_or_else(|| {
                bind_err(format!(
                    "VALUES column {} mixes types {} and {}",
                    c + 1,
                    sql_type_name(&t),
                    sql_type_name(&vt)
                ))
            })?;
        }
        if t == DataType::Null && strings {
            t = DataType::Utf8;
        }
        for (row, ast_row) in rows.iter_mut().zip(&v.rows) {
            let x = std::mem::replace(&mut row[c], ScalarValue::Null(DataType::Null));
            let xt = x.data_type();
            let cast = fold.cast(Expr::Literal(x), &xt, &t);
            row[c] = fold.value(&cast)?.ok_or_else(|| {
                unsupported(format!(
                    "VALUES items must be constant expressions, found \"{}\"",
                    ast_row[c]
                ))
            })?;
        }
        let null = rows.iter().any(|r| r[c].is_null());
        fields.push(Field::new(format!("col{c}"), t, null));
    }
    Ok(LogicalPlan::Values {
        rows,
        schema: SchemaRef::new(Schema::new(fields)),
    })
}

/// `dir/lineitem.csv` -> `lineitem`.
/// `e` as SQL text, as its `Display` writes it, but with a chain of
/// binary operators written in a loop: a flat chain may be far deeper
/// than a recursive `Display` can go.
fn expr_text(e: &ast::Expr) -> String {
    use std::fmt::Write;
    let mut spine = Vec::new();
    let mut leaf = e;
    while let ast::Expr::BinaryOp { left, .. } = leaf {
        spine.push(leaf);
        leaf = left;
    }
    let mut out = leaf.to_string();
    for node in spine.iter().rev() {
        if let ast::Expr::BinaryOp { op, right, .. } = node {
            let _ = write!(out, " {op} {right}");
        }
    }
    out
}

fn file_stem(path: &str) -> String {
    let base = path.rsplit(['/', '\\']).next().unwrap_or(path);
    base.split('.').next().unwrap_or(base).to_string()
}

/// Applies `f` to every expression bound over the query's input that the
/// plan above it reads: the SELECT list, QUALIFY, the window functions'
/// keys and arguments and the ORDER BY expressions.
fn rewrite_outputs(
    f: &dyn Fn(Expr) -> Result<Expr>,
    exprs: &mut Vec<Expr>,
    qualify: &mut Option<Expr>,
    windows: &mut [BoundWindow],
    sort: &mut [(SortTarget, bool, bool)],
) -> Result<()> {
    let all = |v: Vec<Expr>| v.into_iter().map(f).collect::<Result<Vec<_>>>();
    *exprs = all(std::mem::take(exprs))?;
    *qualify = qualify.take().map(f).transpose()?;
    for w in windows {
        w.partition_by = all(std::mem::take(&mut w.partition_by))?;
        for key in &mut w.order_by {
            key.expr = f(key.expr.clone())?;
        }
        w.expr.args = all(std::mem::take(&mut w.expr.args))?;
    }
    for (target, _, _) in sort {
        if let SortTarget::Expr(e) = target {
            *e = f(std::mem::replace(
                e,
                Expr::Literal(ScalarValue::Null(DataType::Null)),
            ))?;
        }
    }
    Ok(())
}
