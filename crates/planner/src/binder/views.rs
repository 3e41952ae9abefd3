//! Views: `CREATE VIEW v AS query` keeps the query's text in the catalog
//! ([`crate::ViewDef`]), and each statement that reads `v` binds that
//! query again as a derived table, so a view always reads its tables as
//! they are.

use sqlparser::ast::{self, Ident};

use super::expr::Scope;
use super::{Binder, bind_err, single_name, unsupported};
use crate::catalog::ViewDef;
use crate::error::{Error, Result};
use crate::plan::{LogicalPlan, Statement};

impl Binder<'_> {
    /// `CREATE [OR REPLACE] VIEW [IF NOT EXISTS] v [(a, b)] AS query`: the
    /// query is bound once here, so its errors show now.
    pub(crate) fn create_view(&mut self, v: &ast::CreateView) -> Result<Statement> {
        if v.materialized {
            return Err(unsupported("CREATE MATERIALIZED VIEW is not supported"));
        }
        let id = single_name(&v.name)?;
        let view = ViewDef {
            name: id.value.clone(),
            query: v.query.to_string(),
            columns: v.columns.iter().map(|c| c.name.value.clone()).collect(),
        };
        self.view(&view, id, None)?;
        Ok(Statement::CreateView {
            view,
            or_replace: v.or_replace,
            if_not_exists: v.if_not_exists,
        })
    }

    /// View `view`, read as `id` (and `alias`): its query bound as a
    /// derived table named by the alias, or by the view.
    pub(crate) fn view(
        &self,
        view: &ViewDef,
        id: &Ident,
        alias: Option<&ast::TableAlias>,
    ) -> Result<(LogicalPlan, Scope)> {
        if self
            .views
            .borrow()
            .iter()
            .any(|v| v.eq_ignore_ascii_case(&view.name))
        {
            return Err(bind_err(format!(
                "infinite recursion detected: view \"{}\" reads itself",
                view.name
            )));
        }
        let query = sqlparser::parser::Parser::new(&crate::dialect::WEIR)
            .try_with_sql(&view.query)
            .and_then(|mut p| p.parse_query())
            .map_err(|e| Error::Object(format!("view \"{}\" no longer parses: {e}", view.name)))?;
        let mut named = alias.cloned().unwrap_or_else(|| ast::TableAlias {
            explicit: false,
            name: id.clone(),
            columns: Vec::new(),
            at: None,
        });
        if named.columns.is_empty() {
            named.columns = view
                .columns
                .iter()
                .map(|c| ast::TableAliasColumnDef::from_name(c.as_str()))
                .collect();
        }
        self.views.borrow_mut().push(view.name.clone());
        let bound = self.derived(&query, Some(&named));
        self.views.borrow_mut().pop();
        bound
    }
}
