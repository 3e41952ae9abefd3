//! Data-driven binder tests: SQL in, plan text (or error text) out.

use std::fmt::Write;

use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::catalog::Catalog;
use crate::plan::{FileFormat, LogicalPlan, Statement};
use crate::types::{sql_type_name, timestamp_type};
use crate::{Error, plan_sql};

struct TestCatalog;

fn lineitem() -> SchemaRef {
    let dec = DataType::Decimal128(15, 2);
    SchemaRef::new(Schema::new(vec![
        Field::new("l_orderkey", DataType::Int64, false),
        Field::new("l_partkey", DataType::Int64, false),
        Field::new("l_quantity", dec.clone(), false),
        Field::new("l_extendedprice", dec.clone(), false),
        Field::new("l_discount", dec.clone(), false),
        Field::new("l_tax", dec, false),
        Field::new("l_returnflag", DataType::Utf8, false),
        Field::new("l_linestatus", DataType::Utf8, false),
        Field::new("l_shipdate", DataType::Date32, false),
        Field::new("l_commitdate", DataType::Date32, false),
        Field::new("l_receiptdate", DataType::Date32, false),
        Field::new("l_shipmode", DataType::Utf8, false),
        Field::new("l_comment", DataType::Utf8, false),
    ]))
}

fn nullable_table() -> SchemaRef {
    SchemaRef::new(Schema::new(vec![
        Field::new("i", DataType::Int32, true),
        Field::new("d", DataType::Float64, true),
        Field::new("s", DataType::Utf8, true),
        Field::new("b", DataType::Boolean, true),
        Field::new("ts", timestamp_type(), true),
    ]))
}

impl Catalog for TestCatalog {
    fn table_schema(&self, name: &str) -> Option<SchemaRef> {
        match name.to_ascii_lowercase().as_str() {
            "lineitem" => Some(lineitem()),
            "t" => Some(nullable_table()),
            _ => None,
        }
    }

    fn table_names(&self) -> Vec<String> {
        vec!["lineitem".into(), "t".into()]
    }

    fn file_schema(&self, path: &str, format: FileFormat) -> Result<SchemaRef, String> {
        if path.contains("missing") {
            return Err(format!("No files found that match the pattern \"{path}\""));
        }
        let kind = match format {
            FileFormat::Csv => "csv_col",
            FileFormat::Parquet => "parquet_col",
        };
        Ok(SchemaRef::new(Schema::new(vec![
            Field::new("id", DataType::Int64, true),
            Field::new(kind, DataType::Utf8, true),
        ])))
    }
}

fn render_schema(s: &Schema) -> String {
    s.fields()
        .iter()
        .map(|f| {
            let null = if f.is_nullable() { "" } else { " NOT NULL" };
            format!("{} {}{null}", f.name(), sql_type_name(f.data_type()))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The plan as EXPLAIN shows it, then the rows of any Values node.
fn render_plan(p: &LogicalPlan) -> String {
    let mut out = p.display_indent();
    let mut node = Some(p);
    while let Some(n) = node {
        if let LogicalPlan::Values { rows, schema } = n
            && !schema.fields().is_empty()
        {
            let _ = writeln!(out, "values [{}]", render_schema(schema));
            for r in rows {
                let r: Vec<String> = r.iter().map(|v| v.to_string()).collect();
                let _ = writeln!(out, "  ({})", r.join(", "));
            }
        }
        node = n.input();
    }
    out
}

fn render(s: &Statement) -> String {
    match s {
        Statement::Query(p) => render_plan(p),
        Statement::Explain { analyze, plan } => {
            format!("Explain analyze={analyze}\n{}", render_plan(plan))
        }
        Statement::CreateTable {
            name,
            schema,
            if_not_exists,
            or_replace,
        } => format!(
            "CreateTable {name} ({}) if_not_exists={if_not_exists} or_replace={or_replace}\n",
            render_schema(schema)
        ),
        Statement::CreateTableAs {
            name,
            plan,
            if_not_exists,
            or_replace,
        } => format!(
            "CreateTableAs {name} if_not_exists={if_not_exists} or_replace={or_replace} [{}]\n{}",
            render_schema(&plan.schema()),
            render_plan(plan)
        ),
        Statement::Insert { table, plan } => format!(
            "Insert {table} [{}]\n{}",
            render_schema(&plan.schema()),
            render_plan(plan)
        ),
        Statement::DropTable { name, if_exists } => format!("DropTable {name} if_exists={if_exists}\n"),
        Statement::ShowTables => "ShowTables\n".into(),
        Statement::Describe { name, schema } => {
            format!("Describe {name}: {}\n", render_schema(schema))
        }
    }
}

/// Strips the common indentation and the blank first/last lines of an
/// expected text.
fn dedent(s: &str) -> String {
    let lines: Vec<&str> = s.lines().skip_while(|l| l.trim().is_empty()).collect();
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out = String::new();
    for l in lines {
        out.push_str(l.get(indent..).unwrap_or("").trim_end());
        out.push('\n');
    }
    out.trim_end().to_string() + "\n"
}

#[track_caller]
fn check(sql: &str, expect: &str) {
    let statements = match plan_sql(sql, &TestCatalog) {
        Ok(s) => s,
        Err(e) => panic!("{sql}\nfailed: {e}"),
    };
    let got: String = statements.iter().map(render).collect();
    assert_eq!(got, dedent(expect), "\nSQL: {sql}\nGOT:\n{got}");
}

#[track_caller]
fn check_err(sql: &str, expect: &str) {
    match plan_sql(sql, &TestCatalog) {
        Ok(s) => panic!(
            "{sql}\nplanned but should fail with {expect:?}:\n{}",
            s.iter().map(render).collect::<String>()
        ),
        Err(e) => {
            let msg = e.to_string();
            assert!(msg.contains(expect), "\nSQL: {sql}\nerror: {msg}\nexpected to contain: {expect}");
        }
    }
}

/// The output schema of a one-statement query.
#[track_caller]
fn check_schema(sql: &str, expect: &str) {
    let statements = plan_sql(sql, &TestCatalog).unwrap_or_else(|e| panic!("{sql}\nfailed: {e}"));
    let [Statement::Query(p)] = statements.as_slice() else {
        panic!("{sql}: not one query");
    };
    assert_eq!(render_schema(&p.schema()), expect, "\nSQL: {sql}");
}

#[test]
fn select_star_and_columns() {
    check(
        "SELECT * FROM lineitem",
        "
        Projection: l_orderkey, l_partkey, l_quantity, l_extendedprice, l_discount, l_tax, l_returnflag, l_linestatus, l_shipdate, l_commitdate, l_receiptdate, l_shipmode, l_comment
          Scan: lineitem (13 columns)
        ",
    );
    check(
        "SELECT l.l_quantity AS q, l_tax FROM LineItem l",
        "
        Projection: l_quantity, l_tax
          Scan: lineitem (13 columns)
        ",
    );
    check_schema("SELECT l.l_quantity AS q, l_tax FROM LineItem l", "q DECIMAL(15,2) NOT NULL, l_tax DECIMAL(15,2) NOT NULL");
    check_schema("SELECT l.*, 1 FROM t AS l", "i INTEGER, d DOUBLE, s VARCHAR, b BOOLEAN, ts TIMESTAMP, 1 INTEGER NOT NULL");
    check_schema("SELECT I, \"S\" FROM t", "i INTEGER, s VARCHAR");
    check(
        "FROM t",
        "
        Projection: i, d, s, b, ts
          Scan: t (5 columns)
        ",
    );
}
