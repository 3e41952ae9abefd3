//! Settings: `SET`, `RESET`, `PRAGMA`, `current_setting()` and
//! `weir_settings()`. The values come from [`Catalog::settings`]; running
//! `SET` is the engine's job.

use std::cell::RefCell;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema};
use sqlparser::ast::{self, Spanned};

use super::expr::{ExprBinder, Scope};
use super::{Binder, at, bind_err, did_you_mean, unsupported};
use crate::catalog::{Catalog, Setting};
use crate::error::{Error, Result};
use crate::expr::Expr;
use crate::plan::{LogicalPlan, Statement};
use crate::scalar::ScalarValue;

thread_local! {
    /// The settings of the catalog being planned against, for
    /// `current_setting()` deep in expression binding.
    static SETTINGS: RefCell<Vec<Setting>> = const { RefCell::new(Vec::new()) };
}

/// Makes `catalog`'s settings visible to `current_setting()` until the
/// guard drops.
pub(super) fn install(catalog: &dyn Catalog) -> SettingsGuard {
    let previous = SETTINGS.with(|s| s.replace(catalog.settings()));
    SettingsGuard { previous }
}

/// Restores the settings seen before [`install`] (plans may nest).
pub(super) struct SettingsGuard {
    previous: Vec<Setting>,
}

impl Drop for SettingsGuard {
    fn drop(&mut self) {
        let previous = std::mem::take(&mut self.previous);
        SETTINGS.with(|s| s.replace(previous));
    }
}

/// Whether NULLs sort first in an ORDER BY term that does not say, by the
/// `default_null_order` setting (NULLS LAST, DuckDB's default, without
/// one).
pub(super) fn default_nulls_first(ascending: bool) -> bool {
    SETTINGS.with(|s| {
        let order = s
            .borrow()
            .iter()
            .find(|s| s.name == "default_null_order")
            .and_then(|s| match &s.value {
                ScalarValue::Utf8(v) => Some(v.to_ascii_uppercase()),
                _ => None,
            });
        match order.as_deref() {
            Some("NULLS_FIRST") => true,
            Some("NULLS_FIRST_ON_ASC_LAST_ON_DESC") => ascending,
            Some("NULLS_LAST_ON_ASC_FIRST_ON_DESC") => !ascending,
            _ => false,
        }
    })
}

/// The setting called `name` (or one of its aliases), or an error naming
/// it with the closest setting.
fn find(settings: &[Setting], name: &str, span: sqlparser::tokenizer::Span) -> Result<Setting> {
    let lower = name.to_ascii_lowercase();
    if let Some(s) = settings
        .iter()
        .find(|s| s.name == lower || s.aliases.contains(&lower))
    {
        return Ok(s.clone());
    }
    let names = settings
        .iter()
        .flat_map(|s| std::iter::once(s.name.as_str()).chain(s.aliases.iter().map(String::as_str)));
    let hint = match did_you_mean(name, names) {
        Some(c) => format!(" Did you mean \"{c}\"?"),
        None => String::new(),
    };
    Err(Error::UnknownSetting(format!(
        "unrecognized configuration parameter \"{name}\"{hint}{}",
        at(span)
    )))
}

/// `current_setting('name')`: the setting's value, as a constant.
pub(super) fn current_setting(args: Vec<Expr>, e: &ast::Expr) -> Result<Expr> {
    let name = match args.as_slice() {
        [Expr::Literal(ScalarValue::Utf8(name))] => name.clone(),
        _ => {
            return Err(bind_err(format!(
                "current_setting takes one argument, a setting name string{}",
                at(e.span())
            )));
        }
    };
    let setting = SETTINGS.with(|s| find(&s.borrow(), &name, e.span()))?;
    Ok(Expr::Literal(setting.value))
}

/// `weir_settings()`: one row per setting.
pub(super) fn settings_table(catalog: &dyn Catalog) -> LogicalPlan {
    let schema = Arc::new(Schema::new(vec![
        Field::new("name", DataType::Utf8, false),
        Field::new("value", DataType::Utf8, true),
        Field::new("description", DataType::Utf8, false),
        Field::new("input_type", DataType::Utf8, false),
        Field::new("scope", DataType::Utf8, false),
    ]));
    let rows = catalog
        .settings()
        .into_iter()
        .map(|s| {
            let value = match &s.value {
                ScalarValue::Null(_) => ScalarValue::Null(DataType::Utf8),
                // a string shows as itself, as in duckdb_settings()
                ScalarValue::Utf8(v) => ScalarValue::Utf8(v.clone()),
                v => ScalarValue::Utf8(v.to_string()),
            };
            vec![
                ScalarValue::Utf8(s.name),
                value,
                ScalarValue::Utf8(s.description),
                ScalarValue::Utf8(crate::types::sql_type_name(&s.value.data_type())),
                ScalarValue::Utf8(s.scope.as_str().into()),
            ]
        })
        .collect();
    LogicalPlan::Values { rows, schema }
}

impl Binder<'_> {
    /// A constant setting value.
    fn setting_value(&self, e: &ast::Expr) -> Result<ScalarValue> {
        let scope = Scope::empty();
        let mut eb = ExprBinder::new(
            &scope,
            self.fold,
            false,
            "aggregate functions are not allowed in SET",
        );
        match eb.bind(e)? {
            Expr::Literal(v) => Ok(v),
            _ => Err(bind_err(format!(
                "a setting's value must be a constant, found \"{e}\"{}",
                at(e.span())
            ))),
        }
    }

    /// `SET [SESSION] name = value`.
    pub(super) fn set(&self, set: &ast::Set) -> Result<Statement> {
        let ast::Set::SingleAssignment {
            variable, values, ..
        } = set
        else {
            return Err(unsupported(format!("{set} is not supported")));
        };
        let id = super::single_name(variable)?;
        let setting = find(&self.catalog.settings(), &id.value, id.span)?;
        let [value] = values.as_slice() else {
            return Err(bind_err(format!(
                "SET {} takes one value{}",
                setting.name,
                at(id.span)
            )));
        };
        Ok(Statement::Set {
            name: setting.name,
            value: self.setting_value(value)?,
        })
    }

    /// `RESET name`, `RESET ALL`.
    pub(super) fn reset(&self, reset: &ast::ResetStatement) -> Result<Statement> {
        match &reset.reset {
            ast::Reset::ALL => Ok(Statement::Reset { name: None }),
            ast::Reset::ConfigurationParameter(name) => {
                let id = super::single_name(name)?;
                let setting = find(&self.catalog.settings(), &id.value, id.span)?;
                Ok(Statement::Reset {
                    name: Some(setting.name),
                })
            }
            other => Err(unsupported(format!("RESET {other:?} is not supported"))),
        }
    }

    /// `PRAGMA name = value` and `PRAGMA name(value)` set; `PRAGMA name`
    /// shows the value.
    pub(super) fn pragma(
        &self,
        name: &ast::ObjectName,
        value: Option<&ast::ValueWithSpan>,
    ) -> Result<Statement> {
        let id = super::single_name(name)?;
        let setting = find(&self.catalog.settings(), &id.value, id.span)?;
        match value {
            Some(v) => Ok(Statement::Set {
                name: setting.name,
                value: self.setting_value(&ast::Expr::Value(v.clone()))?,
            }),
            None => {
                let schema = Arc::new(Schema::new(vec![Field::new(
                    setting.name.clone(),
                    setting.value.data_type(),
                    true,
                )]));
                Ok(Statement::Query(LogicalPlan::Values {
                    rows: vec![vec![setting.value]],
                    schema,
                }))
            }
        }
    }
}
