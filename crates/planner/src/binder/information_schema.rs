//! `information_schema.tables` and `information_schema.columns`: the
//! catalog's tables and views as rows, with DuckDB's columns, built when a
//! statement reads them.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema};
use sqlparser::ast::Ident;

use super::Binder;
use crate::error::Result;
use crate::plan::LogicalPlan;
use crate::scalar::ScalarValue;
use crate::types::sql_type_name;

/// One column of a view: (name, type, nullable).
type Column = (String, DataType, bool);

impl Binder<'_> {
    /// The rows of `information_schema.<name>`, if Weir has that view.
    pub(crate) fn information_schema(&self, name: &Ident) -> Result<Option<LogicalPlan>> {
        let table = name.value.to_ascii_lowercase();
        if table != "tables" && table != "columns" {
            return Ok(None);
        }
        // tables and views, by name: (name, is a view, columns)
        let mut objects: Vec<(String, bool, Vec<Column>)> = Vec::new();
        for t in self.catalog.table_names() {
            if let Some(schema) = self.table_schema(&t) {
                let columns = schema
                    .fields()
                    .iter()
                    .map(|f| (f.name().clone(), f.data_type().clone(), f.is_nullable()))
                    .collect();
                objects.push((t, false, columns));
            }
        }
        for v in self.catalog.view_names() {
            let Some(view) = self.catalog.view(&v) else {
                continue;
            };
            // a view that no longer binds has no columns to show
            let columns = match self.view(&view, &Ident::new(view.name.clone()), None) {
                Ok((_, scope)) => scope
                    .schema
                    .fields()
                    .iter()
                    .map(|f| (f.name().clone(), f.data_type().clone(), true))
                    .collect(),
                Err(_) => Vec::new(),
            };
            objects.push((view.name, true, columns));
        }
        objects.sort_by_key(|(n, ..)| n.to_lowercase());
        Ok(Some(if table == "tables" {
            tables(&objects)
        } else {
            columns(&objects)
        }))
    }
}

fn text(v: &str) -> ScalarValue {
    ScalarValue::Utf8(v.to_string())
}

fn tables(objects: &[(String, bool, Vec<Column>)]) -> LogicalPlan {
    let names = [
        "table_catalog",
        "table_schema",
        "table_name",
        "table_type",
        "self_referencing_column_name",
        "reference_generation",
        "user_defined_type_catalog",
        "user_defined_type_schema",
        "user_defined_type_name",
        "is_insertable_into",
        "is_typed",
        "commit_action",
        "TABLE_COMMENT",
    ];
    let schema = Schema::new(
        names
            .iter()
            .map(|n| Field::new(*n, DataType::Utf8, true))
            .collect::<Vec<_>>(),
    );
    let null = ScalarValue::Null(DataType::Utf8);
    let rows = objects
        .iter()
        .map(|(name, view, _)| {
            let mut row = vec![
                text("memory"),
                text("main"),
                text(name),
                text(if *view { "VIEW" } else { "BASE TABLE" }),
            ];
            row.extend(std::iter::repeat_n(null.clone(), 5));
            row.extend([
                text(if *view { "NO" } else { "YES" }),
                text("NO"),
                null.clone(),
                null.clone(),
            ]);
            row
        })
        .collect();
    LogicalPlan::Values {
        rows,
        schema: Arc::new(schema),
    }
}

/// (precision, radix, scale) of a number type, as DuckDB reports them.
fn numeric(t: &DataType) -> Option<(i32, i32, i32)> {
    Some(match t {
        DataType::Int8 | DataType::UInt8 => (8, 2, 0),
        DataType::Int16 | DataType::UInt16 => (16, 2, 0),
        DataType::Int32 | DataType::UInt32 => (32, 2, 0),
        DataType::Int64 | DataType::UInt64 => (64, 2, 0),
        DataType::Float32 => (24, 2, 0),
        DataType::Float64 => (53, 2, 0),
        DataType::Decimal128(p, s) => (i32::from(*p), 10, i32::from(*s)),
        _ => return None,
    })
}

fn columns(objects: &[(String, bool, Vec<Column>)]) -> LogicalPlan {
    use DataType::{Boolean, Int32, Int64, Utf8};
    // DuckDB's columns and their types, in order
    let layout: [(&str, DataType); 45] = [
        ("table_catalog", Utf8),
        ("table_schema", Utf8),
        ("table_name", Utf8),
        ("column_name", Utf8),
        ("ordinal_position", Int32),
        ("column_default", Utf8),
        ("is_nullable", Utf8),
        ("data_type", Utf8),
        ("character_maximum_length", Int32),
        ("character_octet_length", Int32),
        ("numeric_precision", Int32),
        ("numeric_precision_radix", Int32),
        ("numeric_scale", Int32),
        ("datetime_precision", Int32),
        ("interval_type", Utf8),
        ("interval_precision", Int32),
        ("character_set_catalog", Utf8),
        ("character_set_schema", Utf8),
        ("character_set_name", Utf8),
        ("collation_catalog", Utf8),
        ("collation_schema", Utf8),
        ("collation_name", Utf8),
        ("domain_catalog", Utf8),
        ("domain_schema", Utf8),
        ("domain_name", Utf8),
        ("udt_catalog", Utf8),
        ("udt_schema", Utf8),
        ("udt_name", Utf8),
        ("scope_catalog", Utf8),
        ("scope_schema", Utf8),
        ("scope_name", Utf8),
        ("maximum_cardinality", Int64),
        ("dtd_identifier", Utf8),
        ("is_self_referencing", Boolean),
        ("is_identity", Boolean),
        ("identity_generation", Utf8),
        ("identity_start", Utf8),
        ("identity_increment", Utf8),
        ("identity_maximum", Utf8),
        ("identity_minimum", Utf8),
        ("identity_cycle", Boolean),
        ("is_generated", Utf8),
        ("generation_expression", Utf8),
        ("is_updatable", Boolean),
        ("COLUMN_COMMENT", Utf8),
    ];
    let schema = Schema::new(
        layout
            .iter()
            .map(|(n, t)| Field::new(*n, t.clone(), true))
            .collect::<Vec<_>>(),
    );
    let mut rows = Vec::new();
    for (table, _, columns) in objects {
        for (k, (name, t, nullable)) in columns.iter().enumerate() {
            let mut row: Vec<ScalarValue> = layout
                .iter()
                .map(|(_, t)| ScalarValue::Null(t.clone()))
                .collect();
            row[0] = text("memory");
            row[1] = text("main");
            row[2] = text(table);
            row[3] = text(name);
            row[4] = ScalarValue::Int32(k as i32 + 1);
            row[6] = text(if *nullable { "YES" } else { "NO" });
            row[7] = text(&sql_type_name(t));
            if let Some((precision, radix, scale)) = numeric(t) {
                row[10] = ScalarValue::Int32(precision);
                row[11] = ScalarValue::Int32(radix);
                row[12] = ScalarValue::Int32(scale);
            }
            row[41] = text("NEVER");
            rows.push(row);
        }
    }
    LogicalPlan::Values {
        rows,
        schema: Arc::new(schema),
    }
}
