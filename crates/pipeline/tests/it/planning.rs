//! Data-driven planner tests: SQL in, plan text (or error text) out. They
//! live here, beside the evaluator, because the planner folds constants
//! with it ([`ConstantFolder`]).

use std::fmt::Write;

use weir_pipeline::eval::ConstantFolder;
use weir_planner::arrow_schema::{DataType, Field, Schema, SchemaRef};
use weir_planner::types::{sql_type_name, timestamp_type};
use weir_planner::{Catalog, Error, FileFormat, LogicalPlan, Statement};

/// Plans `sql` as the engine does: constants folded by the evaluator.
fn plan_sql(sql: &str, catalog: &dyn Catalog) -> Result<Vec<Statement>, Error> {
    weir_planner::plan_sql_with(sql, catalog, Some(&ConstantFolder))
}

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
        Statement::Update { table, plan } => {
            format!("Update {table}\n{}", render_plan(plan))
        }
        Statement::Delete { table, plan } => {
            format!("Delete {table}\n{}", render_plan(plan))
        }
        Statement::Insert { table, plan } => format!(
            "Insert {table} [{}]\n{}",
            render_schema(&plan.schema()),
            render_plan(plan)
        ),
        Statement::AlterTable {
            name,
            new_name,
            schema,
            columns,
            if_exists,
        } => format!(
            "AlterTable {name} -> {new_name} ({}) from {columns:?} if_exists={if_exists}\n",
            render_schema(schema)
        ),
        Statement::DropTable { name, if_exists } => {
            format!("DropTable {name} if_exists={if_exists}\n")
        }
        Statement::ShowTables => "ShowTables\n".into(),
        Statement::CreateView {
            view,
            or_replace,
            if_not_exists,
        } => format!(
            "CreateView {} {:?} AS {} or_replace={or_replace} if_not_exists={if_not_exists}\n",
            view.name, view.columns, view.query
        ),
        Statement::DropView { name, if_exists } => {
            format!("DropView {name} if_exists={if_exists}\n")
        }
        Statement::Dbgen { sf } => format!("Dbgen sf={sf}\n"),
        Statement::Set { name, value } => format!("Set {name} = {value}\n"),
        Statement::Reset { name } => format!("Reset {name:?}\n"),
        Statement::Describe { name, schema } => {
            format!("Describe {name}: {}\n", render_schema(schema))
        }
        Statement::Copy {
            plan,
            path,
            format,
            options,
        } => format!(
            "Copy to {path} as {format:?} {options:?}\n{}",
            plan.display_indent()
        ),
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
            assert!(
                msg.contains(expect),
                "\nSQL: {sql}\nerror: {msg}\nexpected to contain: {expect}"
            );
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
    check_schema(
        "SELECT l.l_quantity AS q, l_tax FROM LineItem l",
        "q DECIMAL(15,2) NOT NULL, l_tax DECIMAL(15,2) NOT NULL",
    );
    check_schema(
        "SELECT l.*, 1 FROM t AS l",
        "i INTEGER, d DOUBLE, s VARCHAR, b BOOLEAN, ts TIMESTAMP, 1 INTEGER NOT NULL",
    );
    check_schema("SELECT I, \"S\" FROM t", "i INTEGER, s VARCHAR");
    check(
        "FROM t",
        "
        Projection: i, d, s, b, ts
          Scan: t (5 columns)
        ",
    );
}

#[test]
fn brief_queries_f1_to_f6() {
    check(
        "SELECT count(*) FROM lineitem WHERE l_quantity < 5",
        "
        Aggregate: groupBy=[], aggr=[count(*)]
          Filter: (l_quantity < 5.00)
            Scan: lineitem (13 columns)
        ",
    );
    check(
        "SELECT sum(l_extendedprice * l_discount) AS revenue FROM lineitem WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24",
        "
        Aggregate: groupBy=[], aggr=[sum((l_extendedprice * l_discount))]
          Filter: ((((l_shipdate >= DATE '1994-01-01') AND (l_shipdate < DATE '1995-01-01')) AND ((l_discount >= 0.05) AND (l_discount <= 0.07))) AND (l_quantity < 24.00))
            Scan: lineitem (13 columns)
        ",
    );
    check_schema(
        "SELECT sum(l_extendedprice * l_discount) AS revenue FROM lineitem",
        "revenue DECIMAL(38,4)",
    );
    check(
        "SELECT l_orderkey, l_partkey, l_extendedprice FROM lineitem WHERE l_shipmode = 'AIR' AND l_quantity > 45 AND l_discount = 0.10",
        "
        Projection: l_orderkey, l_partkey, l_extendedprice
          Filter: (((l_shipmode = 'AIR') AND (l_quantity > 45.00)) AND (l_discount = 0.10))
            Scan: lineitem (13 columns)
        ",
    );
    check(
        "SELECT count(*) FROM lineitem WHERE l_comment LIKE '%special%'",
        "
        Aggregate: groupBy=[], aggr=[count(*)]
          Filter: l_comment LIKE '%special%'
            Scan: lineitem (13 columns)
        ",
    );
    check(
        "SELECT count(*) FROM lineitem WHERE l_returnflag = 'R' OR l_linestatus = 'F'",
        "
        Aggregate: groupBy=[], aggr=[count(*)]
          Filter: ((l_returnflag = 'R') OR (l_linestatus = 'F'))
            Scan: lineitem (13 columns)
        ",
    );
    check(
        "SELECT count(*) FROM lineitem WHERE l_shipmode IN ('MAIL', 'SHIP') AND l_receiptdate BETWEEN DATE '1995-06-01' AND DATE '1995-12-31'",
        "
        Aggregate: groupBy=[], aggr=[count(*)]
          Filter: (l_shipmode IN ('MAIL', 'SHIP') AND ((l_receiptdate >= DATE '1995-06-01') AND (l_receiptdate <= DATE '1995-12-31')))
            Scan: lineitem (13 columns)
        ",
    );
}

#[test]
fn tpch_q1_and_q6() {
    let q1 = "SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, \
        sum(l_extendedprice) AS sum_base_price, \
        sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price, \
        sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge, \
        avg(l_quantity) AS avg_qty, avg(l_extendedprice) AS avg_price, \
        avg(l_discount) AS avg_disc, count(*) AS count_order \
        FROM lineitem WHERE l_shipdate <= CAST('1998-09-02' AS date) \
        GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus";
    check(
        q1,
        "
        Sort: l_returnflag ASC NULLS LAST, l_linestatus ASC NULLS LAST
          Aggregate: groupBy=[l_returnflag, l_linestatus], aggr=[sum(l_quantity), sum(l_extendedprice), sum((l_extendedprice * (1 - l_discount))), sum(((l_extendedprice * (1 - l_discount)) * (1 + l_tax))), avg(l_quantity), avg(l_extendedprice), avg(l_discount), count(*)]
            Filter: (l_shipdate <= DATE '1998-09-02')
              Scan: lineitem (13 columns)
        ",
    );
    check_schema(
        q1,
        "l_returnflag VARCHAR NOT NULL, l_linestatus VARCHAR NOT NULL, sum_qty DECIMAL(38,2), \
         sum_base_price DECIMAL(38,2), sum_disc_price DECIMAL(38,4), sum_charge DECIMAL(38,6), \
         avg_qty DOUBLE, avg_price DOUBLE, avg_disc DOUBLE, count_order BIGINT NOT NULL",
    );
    check(
        "SELECT sum(l_extendedprice * l_discount) AS revenue FROM lineitem \
         WHERE l_shipdate >= CAST('1994-01-01' AS date) AND l_shipdate < CAST('1995-01-01' AS date) \
         AND l_discount BETWEEN 0.06 - 0.01 AND 0.06 + 0.01 AND l_quantity < 24",
        "
        Aggregate: groupBy=[], aggr=[sum((l_extendedprice * l_discount))]
          Filter: ((((l_shipdate >= DATE '1994-01-01') AND (l_shipdate < DATE '1995-01-01')) AND ((l_discount >= 0.05) AND (l_discount <= 0.07))) AND (l_quantity < 24.00))
            Scan: lineitem (13 columns)
        ",
    );
}

#[test]
fn select_without_from_and_constant_folding() {
    check(
        "SELECT 1 + 1, CAST('5' AS INTEGER), -5, 'a' || 'b', 7 // 2, 1.5 * 2, NULL AND FALSE, NULL OR TRUE, NOT NULL",
        "
        Projection: 2, 5, -5, 'ab', 3, 3.0, FALSE, TRUE, NULL
          Values: 1 rows
        ",
    );
    check_schema(
        "SELECT 1 AS a, 3000000000 AS b, 0.05 AS c, 1e3 AS d, 99999999999999999999 AS e, 'x' AS f, DATE '1994-01-01' + 365 AS g",
        "a INTEGER NOT NULL, b BIGINT NOT NULL, c DECIMAL(3,2) NOT NULL, d DOUBLE NOT NULL, \
         e DECIMAL(38,0) NOT NULL, f VARCHAR NOT NULL, g DATE NOT NULL",
    );
    check(
        "SELECT DATE '1994-01-01' + 365, DATE '1995-01-01' - DATE '1994-01-01', -(-2147483647), - - 1, +2",
        "
        Projection: DATE '1995-01-01', 365, 2147483647, 1, 2
          Values: 1 rows
        ",
    );
    check(
        "SELECT CASE WHEN TRUE THEN 1 END, CASE WHEN FALSE THEN 1 ELSE 2 END, CASE WHEN NULL THEN 1 END, 1 IS NULL, NULL IS NOT NULL",
        "
        Projection: 1, 2, NULL, FALSE, FALSE
          Values: 1 rows
        ",
    );
    // WHERE TRUE disappears; WHERE NULL keeps its (empty) filter.
    check("SELECT 1 WHERE 1 = 1", "Projection: 1\n  Values: 1 rows");
    check(
        "SELECT 1 WHERE NULL",
        "Projection: 1\n  Filter: NULL\n    Values: 1 rows",
    );
    // A constant whose evaluation fails stays an expression and raises
    // its error when it runs, as over a column (folding.slt).
    check(
        "SELECT 1//0, 1.0 % 0.0, 2147483647 + 1, CAST('abc' AS INTEGER), -(-2147483648)",
        "
        Projection: (1 / 0), (1.0 % 0.0), (2147483647 + 1), CAST('abc' AS INTEGER), -(-2147483648)
          Values: 1 rows
        ",
    );
    check_err("SELECT *", "SELECT * with no tables specified is not valid");
}

#[test]
fn folding_respects_three_valued_logic_and_errors() {
    // x = NULL is NULL; x AND FALSE is FALSE only when x cannot fail.
    check(
        "SELECT * FROM t WHERE i = NULL OR i + NULL > 1 OR (i // 0 > 1 AND FALSE) OR (i > 1 AND FALSE)",
        "
        Projection: i, d, s, b, ts
          Filter: (NULL OR (((i / 0) > 1) AND FALSE))
            Scan: t (5 columns)
        ",
    );
    check(
        "SELECT * FROM t WHERE b AND TRUE",
        "
        Projection: i, d, s, b, ts
          Filter: b
            Scan: t (5 columns)
        ",
    );
    check(
        "SELECT b OR TRUE, b AND NULL, NOT NOT b FROM t",
        "
        Projection: TRUE, (b AND NULL), b
          Scan: t (5 columns)
        ",
    );
}

#[test]
fn coercions() {
    check(
        "SELECT l_quantity + 1, l_quantity - 1.5, l_quantity * l_tax, l_quantity / 2, l_shipdate + 1, l_shipdate - l_commitdate, l_quantity + 1e0 FROM lineitem",
        "
        Projection: (l_quantity + 1), (l_quantity - 1.5), (l_quantity * l_tax), (l_quantity / 2), (l_shipdate + 1), (l_shipdate - l_commitdate), (CAST(l_quantity AS DOUBLE) + 1.0)
          Scan: lineitem (13 columns)
        ",
    );
    check_schema(
        "SELECT l_quantity + 1 AS a, l_quantity * l_tax AS b, l_quantity / 2 AS c, l_shipdate - l_commitdate AS d FROM lineitem",
        "a DECIMAL(16,2) NOT NULL, b DECIMAL(18,4) NOT NULL, c DOUBLE NOT NULL, d INTEGER NOT NULL",
    );
    check_schema(
        "SELECT i + 3000000000 AS e, i + d AS f, s || 1 AS g, 1 || NULL AS h FROM t",
        "e BIGINT, f DOUBLE, g VARCHAR, h VARCHAR",
    );
    // String literals take the type of the other side, at plan time.
    check(
        "SELECT * FROM t WHERE b = 'true' AND i = '5' AND d < '2.5' AND ts > '2020-01-01' AND ts < DATE '2021-01-01'",
        "
        Projection: i, d, s, b, ts
          Filter: (((((b = TRUE) AND (i = 5)) AND (d < 2.5)) AND (ts > TIMESTAMP '2020-01-01 00:00:00')) AND (ts < TIMESTAMP '2021-01-01 00:00:00'))
            Scan: t (5 columns)
        ",
    );
    check(
        "SELECT * FROM lineitem WHERE l_shipdate >= '1994-01-01' AND l_quantity = 1.234 AND l_orderkey IN (1, 3000000000)",
        "
        Projection: l_orderkey, l_partkey, l_quantity, l_extendedprice, l_discount, l_tax, l_returnflag, l_linestatus, l_shipdate, l_commitdate, l_receiptdate, l_shipmode, l_comment
          Filter: (((l_shipdate >= DATE '1994-01-01') AND (CAST(l_quantity AS DECIMAL(16,3)) = 1.234)) AND l_orderkey IN (1, 3000000000))
            Scan: lineitem (13 columns)
        ",
    );
    check(
        "SELECT l_orderkey FROM lineitem WHERE l_shipdate < '1994-13-01'",
        "
        Projection: l_orderkey
          Filter: (l_shipdate < CAST('1994-13-01' AS DATE))
            Scan: lineitem (13 columns)
        ",
    );
    check_err(
        "SELECT * FROM t WHERE s = 5",
        "Cannot compare values of type VARCHAR and type INTEGER in \"s = 5\" at line 1, column 23",
    );
    // a constant that fails to convert raises when it runs (as DuckDB)
    check(
        "SELECT i FROM t WHERE i = 'x'",
        "
        Projection: i
          Filter: (i = CAST('x' AS INTEGER))
            Scan: t (5 columns)
        ",
    );
    check_err(
        "SELECT s + 1 FROM t",
        "Cannot apply operator + to types VARCHAR and INTEGER",
    );
    check_err(
        "SELECT ts + 1 FROM t",
        "Cannot apply operator + to types TIMESTAMP and INTEGER",
    );
    check_err(
        "SELECT i FROM t WHERE s",
        "argument of WHERE must be type BOOLEAN, not type VARCHAR",
    );
    check_err(
        "SELECT NOT s FROM t",
        "argument of NOT must be type BOOLEAN, not type VARCHAR",
    );
    check_err(
        "SELECT * FROM t WHERE i IN (1, 'a', s)",
        "Cannot compare values of type INTEGER and type VARCHAR in \"i IN (1, 'a', s)\"",
    );
}

#[test]
fn order_by_group_by_having_distinct_limit() {
    check(
        "SELECT i FROM t WHERE s IS NULL AND b IS NOT NULL ORDER BY d DESC NULLS LAST, 1 LIMIT 10 OFFSET 5",
        "
        Limit: 10 offset 5
          Projection: i
            Sort: __sort_key_0 DESC NULLS LAST, i ASC NULLS LAST
              Projection: i, d
                Filter: (s IS NULL AND b IS NOT NULL)
                  Scan: t (5 columns)
        ",
    );
    check(
        "SELECT i AS s FROM t ORDER BY s DESC",
        "
        Sort: s DESC NULLS LAST
          Projection: i
            Scan: t (5 columns)
        ",
    );
    check(
        "SELECT DISTINCT s FROM t ORDER BY s",
        "
        Sort: s ASC NULLS LAST
          Distinct
            Projection: s
              Scan: t (5 columns)
        ",
    );
    check(
        "SELECT s, count(DISTINCT i), sum(DISTINCT d), avg(i), min(ts), max(s) FROM t GROUP BY 1 HAVING count(*) > 1 ORDER BY count(*) DESC",
        "
        Projection: s, count(DISTINCT i), sum(DISTINCT d), avg(i), min(ts), max(s)
          Sort: __sort_key_0 DESC NULLS LAST
            Filter: (count(*) > 1)
              Aggregate: groupBy=[s], aggr=[count(DISTINCT i), sum(DISTINCT d), avg(i), min(ts), max(s), count(*)]
                Scan: t (5 columns)
        ",
    );
    check(
        "SELECT s AS name, count(*) FROM t GROUP BY name",
        "
        Aggregate: groupBy=[s], aggr=[count(*)]
          Scan: t (5 columns)
        ",
    );
    check(
        "SELECT i * 2 AS k, count(*) FROM t GROUP BY i * 2 ORDER BY k",
        "
        Sort: k ASC NULLS LAST
          Aggregate: groupBy=[(i * 2)], aggr=[count(*)]
            Scan: t (5 columns)
        ",
    );
    check(
        "SELECT i + 1, count(*) FROM t GROUP BY i ORDER BY i + 1, sum(d)",
        "
        Projection: i + 1, count(*)
          Sort: i + 1 ASC NULLS LAST, __sort_key_0 ASC NULLS LAST
            Projection: (i + 1), count(*), sum(d)
              Aggregate: groupBy=[i], aggr=[count(*), sum(d)]
                Scan: t (5 columns)
        ",
    );
    check(
        "SELECT count(*), count(), count(1) FROM t HAVING count(*) > 0",
        "
        Projection: count(*), count(*), count(1)
          Filter: (count(*) > 0)
            Aggregate: groupBy=[], aggr=[count(*), count(1)]
              Scan: t (5 columns)
        ",
    );
    check(
        "SELECT * FROM t OFFSET 3",
        "Limit: all offset 3\n  Projection: i, d, s, b, ts\n    Scan: t (5 columns)",
    );
    check(
        "SELECT * FROM t LIMIT NULL",
        "Projection: i, d, s, b, ts\n  Scan: t (5 columns)",
    );
    // past BIGINT is an error, as in DuckDB
    check_err(
        "SELECT * FROM t LIMIT 99999999999999999999999",
        "Failed to cast decimal value 99999999999999999999999 to type INT64",
    );
    check(
        "SELECT * FROM t LIMIT 9223372036854775807",
        &format!(
            "Limit: {} offset 0\n  Projection: i, d, s, b, ts\n    Scan: t (5 columns)",
            i64::MAX
        ),
    );
    check_err(
        "SELECT i, count(*) FROM t",
        "column \"i\" must appear in the GROUP BY clause or must be part of an aggregate function",
    );
    check_err(
        "SELECT i FROM t GROUP BY i HAVING d > 1",
        "column \"d\" must appear in the GROUP BY clause",
    );
    check_err(
        "SELECT * FROM t GROUP BY i",
        "column \"d\" must appear in the GROUP BY clause",
    );
    check_err(
        "SELECT i FROM t GROUP BY i ORDER BY d",
        "column \"d\" must appear in the GROUP BY clause",
    );
    check_err(
        "SELECT DISTINCT s FROM t ORDER BY i",
        "for SELECT DISTINCT, ORDER BY expressions must appear in the select list",
    );
    check_err(
        "SELECT * FROM t ORDER BY 7",
        "ORDER term out of range - should be between 1 and 5, got 7 at line 1, column 26",
    );
    check_err(
        "SELECT count(*) FROM t GROUP BY 2",
        "GROUP BY term out of range - should be between 1 and 1, got 2",
    );
    check_err(
        "SELECT count(*) AS c FROM t GROUP BY c",
        "GROUP BY clause cannot contain aggregates",
    );
    check_err(
        "SELECT * FROM t WHERE count(*) > 1",
        "WHERE clause cannot contain aggregates: count(*) at line 1, column 23",
    );
    check_err(
        "SELECT sum(count(i)) FROM t",
        "aggregate function calls cannot be nested: count(i)",
    );
    check_err(
        "SELECT sum(s) FROM t",
        "No function matches the given name and argument types 'sum(VARCHAR)'",
    );
    check_err("SELECT avg(b) FROM t", "'avg(BOOLEAN)'");
    check_err(
        "SELECT count(DISTINCT *) FROM t",
        "count(DISTINCT *) is not supported",
    );
    check_err(
        "SELECT * FROM t LIMIT -1",
        "LIMIT must be non-negative, got \"-1\"",
    );
    check_err(
        "SELECT * FROM t LIMIT 'x'",
        "LIMIT must be an integer constant, got \"'x'\"",
    );
    check_err(
        "SELECT * FROM t LIMIT -0.6",
        "LIMIT must be non-negative, got \"-0.6\"",
    );
    check_err(
        "SELECT * FROM t LIMIT i",
        "Referenced column \"i\" not found in FROM clause!",
    );
    check_err("SELECT * FROM t OFFSET -2", "OFFSET must be non-negative");
}

#[test]
fn expressions_and_functions() {
    check(
        "SELECT CASE WHEN i > 1 THEN 'big' WHEN i IS NULL THEN NULL ELSE 'small' END, CASE s WHEN 'a' THEN 1 ELSE 2.5 END FROM t",
        "
        Projection: CASE WHEN (i > 1) THEN 'big' WHEN i IS NULL THEN NULL ELSE 'small' END, CASE WHEN (s = 'a') THEN 1.0 ELSE 2.5 END
          Scan: t (5 columns)
        ",
    );
    check(
        "SELECT abs(i), round(d, 2), lower(s), upper(s), length(s), substr(s, 2, 3), substring(s FROM 2), coalesce(i, 0), extract(year FROM ts), date_part('month', ts) FROM t",
        "
        Projection: abs(i), round(d, 2), lower(s), upper(s), length(s), substr(s, 2, 3), substr(s, 2), coalesce(i, 0), date_part('year', ts), date_part('month', ts)
          Scan: t (5 columns)
        ",
    );
    check(
        "SELECT coalesce(NULL, 1, i), coalesce(i, d), coalesce(NULL, NULL), extract(dow FROM DATE '1994-01-01'), date_part('years', ts), CAST(i AS VARCHAR), i::BIGINT FROM t",
        "
        Projection: 1, coalesce(CAST(i AS DOUBLE), d), NULL, 6, date_part('year', ts), CAST(i AS VARCHAR), CAST(i AS BIGINT)
          Scan: t (5 columns)
        ",
    );
    check(
        "SELECT * FROM t WHERE s ILIKE 'a%' OR s NOT LIKE 'a!%%' ESCAPE '!' OR i NOT BETWEEN 1 AND 3 OR i IN (1, 2.5, NULL) OR d NOT IN (1, 2)",
        "
        Projection: i, d, s, b, ts
          Filter: ((((s ILIKE 'a%' OR s NOT LIKE 'a!%%') OR ((i < 1) OR (i > 3))) OR CAST(i AS DECIMAL(11,1)) IN (1.0, 2.5, NULL)) OR d NOT IN (1.0, 2.0))
            Scan: t (5 columns)
        ",
    );
    check_schema(
        "SELECT 'it''s' AS q, -i AS n, CAST(s AS DATE) AS dt, TIMESTAMP '2020-01-01 10:00:00' AS t1, length(s) AS len FROM t",
        "q VARCHAR NOT NULL, n INTEGER, dt DATE, t1 TIMESTAMP NOT NULL, len BIGINT",
    );
    check_err(
        "SELECT foo(i) FROM t",
        "Scalar Function with name foo does not exist! Did you mean \"floor\"? at line 1, column 8",
    );
    check_err(
        "SELECT lowr(s) FROM t",
        "Scalar Function with name lowr does not exist! Did you mean \"lower\"?",
    );
    check_err(
        "SELECT range(1) FROM t",
        "range is a table function: use it in FROM",
    );
    check_err(
        "SELECT abs(i, d) FROM t",
        "abs() takes 1 arguments but 2 were given",
    );
    check_err(
        "SELECT lower(i) FROM t",
        "lower() argument 1 must be VARCHAR, not INTEGER",
    );
    check_err(
        "SELECT substr(s, 'a') FROM t",
        "substr() argument 2 must be an integer, not VARCHAR",
    );
    check_err(
        "SELECT round(d, i) FROM t",
        "round() argument 2 must be an integer constant",
    );
    check_err(
        "SELECT * FROM t WHERE i LIKE 'a'",
        "No function matches LIKE for type INTEGER",
    );
    check_err(
        "SELECT * FROM t WHERE s LIKE i",
        "like_escape() argument 2 must be VARCHAR, not INTEGER",
    );
    check_err(
        "SELECT * FROM t WHERE s LIKE 'a' ESCAPE 'ab'",
        "Invalid escape string \"'ab'\": an escape string must be empty or one character",
    );
    check_err(
        "SELECT date_part('foo', ts) FROM t",
        "the first argument of date_part must be a constant naming one of year",
    );
    check_err(
        "SELECT extract(year FROM s) FROM t",
        "date_part/EXTRACT needs a DATE or TIMESTAMP, not VARCHAR",
    );
    check(
        "SELECT TIMESTAMP '2020-01-01 25:00:00', DATE '1995-02-29'",
        "
        Projection: CAST('2020-01-01 25:00:00' AS TIMESTAMP), CAST('1995-02-29' AS DATE)
          Values: 1 rows
        ",
    );
    check_err(
        "SELECT CAST(ts AS INTEGER) FROM t",
        "Unimplemented type for cast (TIMESTAMP -> INTEGER)",
    );
    check_err(
        "SELECT CASE WHEN s THEN 1 END FROM t",
        "argument of CASE WHEN must be type BOOLEAN",
    );
    check_err(
        "SELECT CASE WHEN b THEN 1 ELSE ts END FROM t",
        "Cannot mix values of type INTEGER and TIMESTAMP",
    );
}

#[test]
fn names_and_did_you_mean() {
    check_err(
        "SELECT l_quantiy FROM lineitem",
        "Binder Error: Referenced column \"l_quantiy\" not found in FROM clause! Candidate bindings: \"l_quantity\" at line 1, column 8",
    );
    check_err(
        "SELECT zzz FROM t",
        "Referenced column \"zzz\" not found in FROM clause! at line 1, column 8",
    );
    check_err(
        "SELECT *\nFROM lineitme",
        "Binder Error: Table with name lineitme does not exist! Did you mean \"lineitem\"? at line 2, column 6",
    );
    check_err(
        "SELECT x.i FROM t",
        "Referenced table \"x\" not found! Candidate tables: \"t\" at line 1, column 8",
    );
    check_err(
        "SELECT lineitem.l_tax FROM lineitem l",
        "Referenced table \"lineitem\" not found! Candidate tables: \"l\"",
    );
    check_err("SELECT x.* FROM t", "Referenced table \"x\" not found!");
    check_err(
        "SELECT a.b.c FROM t",
        "column reference a.b.c is not supported",
    );
}

#[test]
fn files_and_series() {
    check(
        "SELECT * FROM 'data/x.csv' WHERE id > 3",
        "Projection: id, csv_col\n  Filter: (id > 3)\n    Scan: 'data/x.csv' (2 columns)",
    );
    check(
        "SELECT x.id FROM 'data/x.CSV'",
        "Projection: id\n  Scan: 'data/x.CSV' (2 columns)",
    );
    check(
        "SELECT r.* FROM read_parquet('p.parquet') r",
        "Projection: id, parquet_col\n  Scan: 'p.parquet' (2 columns)",
    );
    check(
        "SELECT * FROM read_csv_auto('p.txt')",
        "Projection: id, csv_col\n  Scan: 'p.txt' (2 columns)",
    );
    check(
        "FROM 'p.parquet'",
        "Projection: id, parquet_col\n  Scan: 'p.parquet' (2 columns)",
    );
    check(
        "SELECT * FROM range(10)",
        "Projection: range\n  Scan: range(0, 10, 1) (1 columns)",
    );
    check(
        "SELECT * FROM range(2, 10, 3)",
        "Projection: range\n  Scan: range(2, 10, 3) (1 columns)",
    );
    check(
        "SELECT generate_series FROM generate_series(1, 5)",
        "Projection: generate_series\n  Scan: range(1, 6, 1) (1 columns)",
    );
    check(
        "SELECT * FROM generate_series(10, 1, -2)",
        "Projection: generate_series\n  Scan: range(10, 0, -2) (1 columns)",
    );
    check(
        "SELECT r.range FROM range(5) r WHERE r.range > 2",
        "Projection: range\n  Filter: (range > 2)\n    Scan: range(0, 5, 1) (1 columns)",
    );
    check_schema("SELECT * FROM range(3)", "range BIGINT NOT NULL");
    check_err(
        "SELECT * FROM range(1, 10, 0)",
        "range step must not be zero at line 1, column 15",
    );
    check_err(
        "SELECT * FROM generate_series(1, 9223372036854775807)",
        "generate_series bound 9223372036854775807 is out of range",
    );
    check_err(
        "SELECT * FROM range('a')",
        "arguments of range must be integer constants, found VARCHAR",
    );
    check_err(
        "SELECT * FROM range(1, 2, 3, 4)",
        "range takes 1 to 3 integer arguments, got 4",
    );
    check_err(
        "SELECT * FROM 'x.json'",
        "cannot tell the format of file 'x.json' from its extension",
    );
    check_err(
        "SELECT * FROM 'missing.csv'",
        "IO Error: No files found that match the pattern \"missing.csv\"",
    );
    check_err(
        "SELECT * FROM read_csv('a.csv', foo = true)",
        "Invalid named parameter \"foo\" for function read_csv",
    );
    check_err(
        "SELECT * FROM read_csv(1)",
        "read_csv path must be a string, found INTEGER \"1\"",
    );
    check_err(
        "SELECT * FROM read_csvv('a.csv')",
        "Table Function with name read_csvv does not exist! Did you mean \"read_csv\"?",
    );
}

#[test]
fn unsupported_constructs_are_named() {
    for (sql, expect) in [
        (
            "SELECT sum((SELECT 1)) FROM t",
            "subqueries in GROUP BY and in the arguments of aggregates are not supported",
        ),
        (
            "SELECT * FROM t WHERE i = 1 OR EXISTS (SELECT 1 FROM t AS u WHERE u.i < coalesce(t.i, 0))",
            "correlated subquery condition \"(i < coalesce(i, 0))\" is not supported",
        ),
        (
            "SELECT * FROM lineitem LEFT JOIN t",
            "LEFT JOIN needs a join condition (ON, USING or NATURAL)",
        ),
        (
            "SELECT sum(i) OVER (ORDER BY i GROUPS 1.5 PRECEDING) FROM t",
            "GROUPS frame offsets must be non-negative integer constants, found \"1.5\"",
        ),
        (
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3 LIMIT 2) SELECT * FROM r",
            "ORDER BY and LIMIT on the query of recursive CTE \"r\" are not supported",
        ),
        (
            "SELECT 1 INTERSECT BY NAME SELECT 2",
            "INTERSECT BY NAME is not supported",
        ),
        (
            "SELECT INTERVAL '1' DAY TO SECOND",
            "INTERVAL ... TO ... and precisions are not supported",
        ),
        (
            "SELECT DISTINCT ON (i) i FROM t QUALIFY i > 1",
            "DISTINCT ON with QUALIFY is not supported",
        ),
        (
            "SELECT count(*) FROM t GROUP BY CUBE (i, i+1, i+2, i+3, i+4, i+5, i+6, i+7, i+8, i+9, i+10, i+11, i+12)",
            "CUBE of more than 12 elements is not supported",
        ),
        (
            "SELECT i FROM t WHERE $1 = 1",
            "prepared statement parameters are not supported ($1)",
        ),
        (
            "SELECT quantile_cont(i, 0.5) WITHIN GROUP (ORDER BY i) FROM t",
            "WITHIN GROUP and IGNORE NULLS are not supported (quantile_cont)",
        ),
        (
            "SELECT * FROM other.lineitem",
            "qualified name other.lineitem is not supported (there is one schema, memory.main)",
        ),
        (
            "CREATE MATERIALIZED VIEW v AS SELECT 1",
            "CREATE MATERIALIZED VIEW is not supported",
        ),
        (
            "EXPLAIN INSERT INTO t VALUES (1, 2, 3, 4, 5)",
            "EXPLAIN of INSERT is not supported",
        ),
        ("DROP SEQUENCE s", "DROP SEQUENCE is not supported"),
    ] {
        check_err(sql, expect);
    }
    assert!(matches!(
        plan_sql("SELECT 1 EXCEPT BY NAME SELECT 2", &TestCatalog),
        Err(Error::Unsupported(_))
    ));
    assert!(matches!(
        plan_sql("SELEC 1", &TestCatalog),
        Err(Error::Parse(_))
    ));
    assert!(matches!(
        plan_sql("SELECT * FROM 'missing.csv'", &TestCatalog),
        Err(Error::Catalog(_))
    ));
}

#[test]
fn statements() {
    check(
        "CREATE TABLE x (a INTEGER NOT NULL, b BIGINT, c DOUBLE, d DECIMAL(10,2), e NUMERIC, f VARCHAR, g TEXT, h DATE, i TIMESTAMP, j BOOLEAN, k REAL, l INT, m DECIMAL(5), n STRING, o FLOAT8);
         INSERT INTO x (a, f) VALUES (1, 'x'), (2, NULL);
         INSERT INTO x SELECT * FROM x;
         SELECT a FROM x;
         DROP TABLE x",
        "
        CreateTable x (a INTEGER NOT NULL, b BIGINT, c DOUBLE, d DECIMAL(10,2), e DECIMAL(18,3), f VARCHAR, g VARCHAR, h DATE, i TIMESTAMP, j BOOLEAN, k FLOAT, l INTEGER, m DECIMAL(5,0), n VARCHAR, o DOUBLE) if_not_exists=false or_replace=false
        Insert x [a INTEGER NOT NULL, b BIGINT, c DOUBLE, d DECIMAL(10,2), e DECIMAL(18,3), f VARCHAR, g VARCHAR, h DATE, i TIMESTAMP, j BOOLEAN, k FLOAT, l INTEGER, m DECIMAL(5,0), n VARCHAR, o DOUBLE]
        Values: 2 rows
        values [a INTEGER NOT NULL, b BIGINT, c DOUBLE, d DECIMAL(10,2), e DECIMAL(18,3), f VARCHAR, g VARCHAR, h DATE, i TIMESTAMP, j BOOLEAN, k FLOAT, l INTEGER, m DECIMAL(5,0), n VARCHAR, o DOUBLE]
          (1, NULL, NULL, NULL, NULL, 'x', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
          (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
        Insert x [a INTEGER NOT NULL, b BIGINT, c DOUBLE, d DECIMAL(10,2), e DECIMAL(18,3), f VARCHAR, g VARCHAR, h DATE, i TIMESTAMP, j BOOLEAN, k FLOAT, l INTEGER, m DECIMAL(5,0), n VARCHAR, o DOUBLE]
        Projection: a, b, c, d, e, f, g, h, i, j, k, l, m, n, o
          Scan: x (15 columns)
        Projection: a
          Scan: x (15 columns)
        DropTable x if_exists=false
        ",
    );
    check(
        "CREATE OR REPLACE TABLE y AS SELECT l_orderkey, l_quantity * 2 AS q FROM lineitem; INSERT INTO y VALUES (1, 2.5); INSERT INTO y SELECT i, d FROM t",
        "
        CreateTableAs y if_not_exists=false or_replace=true [l_orderkey BIGINT NOT NULL, q DECIMAL(18,2) NOT NULL]
        Projection: l_orderkey, (l_quantity * 2)
          Scan: lineitem (13 columns)
        Insert y [l_orderkey BIGINT, q DECIMAL(18,2)]
        Values: 1 rows
        values [l_orderkey BIGINT, q DECIMAL(18,2)]
          (1, 2.50)
        Insert y [l_orderkey BIGINT, q DECIMAL(18,2)]
        Projection: CAST(i AS BIGINT), CAST(d AS DECIMAL(18,2))
          Scan: t (5 columns)
        ",
    );
    check(
        "INSERT INTO t (s, i) VALUES ('a', '7'), (NULL, 2 + 3)",
        "
        Insert t [i INTEGER, d DOUBLE, s VARCHAR, b BOOLEAN, ts TIMESTAMP]
        Values: 2 rows
        values [i INTEGER, d DOUBLE, s VARCHAR, b BOOLEAN, ts TIMESTAMP]
          (7, NULL, 'a', NULL, NULL)
          (5, NULL, NULL, NULL, NULL)
        ",
    );
    check(
        "INSERT INTO t (i, s) SELECT 1, 2",
        "
        Insert t [i INTEGER, d DOUBLE, s VARCHAR, b BOOLEAN, ts TIMESTAMP]
        Projection: 1, NULL, CAST(2 AS VARCHAR), NULL, NULL
          Projection: 1, 2
            Values: 1 rows
        ",
    );
    check(
        "SHOW TABLES; DESCRIBE t; DESCRIBE 'foo.parquet'; DESCRIBE SELECT i, s FROM t; EXPLAIN SELECT 1; EXPLAIN ANALYZE SELECT count(*) FROM t",
        "
        ShowTables
        Describe t: i INTEGER, d DOUBLE, s VARCHAR, b BOOLEAN, ts TIMESTAMP
        Describe foo.parquet: id BIGINT, parquet_col VARCHAR
        Describe SELECT i, s FROM t: i INTEGER, s VARCHAR
        Explain analyze=false
        Projection: 1
          Values: 1 rows
        Explain analyze=true
        Aggregate: groupBy=[], aggr=[count(*)]
          Scan: t (5 columns)
        ",
    );
    check(
        "CREATE TABLE IF NOT EXISTS t (a INT); DROP TABLE IF EXISTS nope; DROP TABLE T",
        "
        CreateTable t (a INTEGER) if_not_exists=true or_replace=false
        DropTable nope if_exists=true
        DropTable t if_exists=false
        ",
    );
    check(
        "VALUES (1, 'a'), (2.5, NULL) ORDER BY 1 DESC LIMIT 1",
        "
        Limit: 1 offset 0
          Sort: col0 DESC NULLS LAST
            Projection: col0, col1
              Values: 2 rows
        values [col0 DECIMAL(11,1) NOT NULL, col1 VARCHAR]
          (1.0, 'a')
          (2.5, NULL)
        ",
    );
    assert_eq!(plan_sql("", &TestCatalog).map(|s| s.len()).ok(), Some(0));
    assert_eq!(plan_sql(";;", &TestCatalog).map(|s| s.len()).ok(), Some(0));
    check_err(
        "DROP TABLE nope",
        "Table with name nope does not exist! at line 1, column 12",
    );
    check_err(
        "CREATE TABLE z (a INT); DROP TABLE z; SELECT * FROM z",
        "Table with name z does not exist!",
    );
    check_err(
        "CREATE TABLE t (a INT)",
        "Table with name t already exists! at line 1, column 14",
    );
    check_err(
        "CREATE OR REPLACE TABLE IF NOT EXISTS z (a INT)",
        "cannot have both OR REPLACE and IF NOT EXISTS",
    );
    check_err(
        "CREATE TABLE z (a INT, A INT)",
        "Column with name A already exists! at line 1, column 24",
    );
    check_err(
        "CREATE TABLE z (a INT PRIMARY KEY)",
        "column constraint PRIMARY KEY is not supported (column a)",
    );
    check_err(
        "CREATE TABLE z (a DECIMAL(40, 2))",
        "DECIMAL width must be between 1 and 38, got 40",
    );
    check_err(
        "CREATE TABLE z (a DECIMAL(4, 5))",
        "DECIMAL scale must be between 0 and the width 4, got 5",
    );
    check_err("CREATE TABLE z (a UUID)", "type UUID is not supported");
    check_err(
        "CREATE TABLE z (a INT NOT NULL, b INT); INSERT INTO z (b) VALUES (1)",
        "NOT NULL constraint failed: z.a",
    );
    check_err(
        "CREATE TABLE z (a INT NOT NULL, b INT); INSERT INTO z VALUES (NULL, 1)",
        "NOT NULL constraint failed: z.a",
    );
    check_err(
        "CREATE TABLE z (a INT NOT NULL, b INT); INSERT INTO z (b) SELECT 1",
        "NOT NULL constraint failed: z.a",
    );
    check_err(
        "INSERT INTO t VALUES (1, 2)",
        "table t has 5 columns but 2 values were supplied",
    );
    check_err(
        "INSERT INTO t (i) SELECT 1, 2",
        "table t has 1 columns but 2 values were supplied",
    );
    check_err(
        "INSERT INTO t (i, nope) VALUES (1, 2)",
        "Table \"t\" does not have a column with name \"nope\"! at line 1, column 19",
    );
    check_err(
        "INSERT INTO t (i) VALUES ('abc')",
        "Conversion Error: Could not convert string 'abc' to INT32",
    );
    check_err(
        "INSERT INTO t (i) VALUES (i)",
        "Referenced column \"i\" not found",
    );
    check_err(
        "INSERT INTO t (ts) VALUES (1)",
        "cannot insert a value of type INTEGER into column ts of type TIMESTAMP",
    );
    check_err(
        "INSERT INTO t (i, i) VALUES (1, 2)",
        "Duplicate column name \"i\" in INSERT",
    );
    check_err(
        "INSERT INTO nope VALUES (1)",
        "Table with name nope does not exist!",
    );
    check_err("DESCRIBE nope", "Table with name nope does not exist!");
    check_err(
        "VALUES (1), (1, 2)",
        "VALUES lists must all be the same length",
    );
}

#[test]
fn hostile_input_never_panics() {
    let deep = format!("SELECT {}1{}", "(".repeat(1100), ")".repeat(1100));
    check_err(&deep, "Max expression depth limit of 1000 exceeded");
    // a flat AND chain is not nesting (crates/planner/tests/deep.rs)
    let chain = format!("SELECT {} FROM t", vec!["b"; 5000].join(" AND "));
    assert!(plan_sql(&chain, &TestCatalog).is_ok());
    let negs = format!("SELECT {}1", "- ".repeat(3000));
    assert!(plan_sql(&negs, &TestCatalog).is_err());
    let items: Vec<String> = (0..5000).map(|x| x.to_string()).collect();
    let in_list = format!("SELECT * FROM t WHERE i IN ({})", items.join(","));
    assert!(plan_sql(&in_list, &TestCatalog).is_ok());
    for sql in [
        "SELECT 1e400",
        "SELECT 0.0000000000000000000000000000000000000000001",
        "SELECT -9223372036854775808",
        "SELECT CAST(1e300 AS INTEGER)",
        "SELECT CAST('1e5' AS DECIMAL(3,1))",
        "SELECT * FROM range(-9223372036854775808, 9223372036854775807)",
        "SELECT 'a' || NULL || 1",
        "SELECT * FROM t LIMIT 1 OFFSET 99999999999999999999999999",
        "SELECT",
        "SELECT FROM",
        ")(",
        "'",
        "SELECT round(1.5, 99999999999)",
        "SELECT substr('abc', 1, 2, 3)",
        "SELECT date_part(1, 2)",
        "SELECT CAST(NULL AS DATE) + 1",
        "SELECT NULL + NULL, NULL = NULL, -NULL",
        "SELECT abs(NULL), lower(NULL), coalesce(NULL)",
        "SELECT 99999999999999999999999999999999999999 + 1",
        "SELECT 0.5 * 0.5 * 0.5 * 0.5 * 0.5 * 0.5 * 0.5 * 0.5 * 0.5 * 0.5 * 0.5 * 0.5 * 0.5 * 0.5 * 0.5 * 0.5 * 0.5 * 0.5 * 0.5 * 0.5",
        "SELECT CAST('2020-01-01' AS DATE) - CAST('1000-01-01' AS DATE)",
        "SELECT -2147483648 / -1",
        "SELECT min(NULL), sum(NULL), avg(NULL) FROM t",
        "SELECT 1 GROUP BY 0",
        "SELECT i FROM t ORDER BY 0",
        "SELECT count(*) FROM t GROUP BY 18446744073709551616",
        "SELECT CASE WHEN NULL THEN NULL END",
        "SELECT * FROM t WHERE i IN (NULL)",
        "SELECT DATE '9999-12-31' + 2147483647",
    ] {
        // Planning may succeed or fail, but must not panic.
        let _ = plan_sql(sql, &TestCatalog);
    }
    check(
        "SELECT (-2147483647 - 1) // -1, 99999999999999999999999999999999999999 + 1",
        "
        Projection: (-2147483648 / -1), (99999999999999999999999999999999999999 + 1)
          Values: 1 rows
        ",
    );
}

#[test]
fn long_in_lists_are_abbreviated() {
    let items: Vec<String> = (0..100).map(|x| x.to_string()).collect();
    check(
        &format!("SELECT i FROM t WHERE i IN ({})", items.join(", ")),
        "
        Projection: i
          Filter: i IN (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ... 90 more)
            Scan: t (5 columns)
        ",
    );
}

#[test]
fn division_follows_duckdb() {
    // `/` on integers divides as DOUBLE; `//` is integer division
    check(
        "SELECT 7 / 2 AS q, 7 // 2 AS r",
        "
        Projection: 3.5, 3
          Values: 1 rows
        ",
    );
    check_schema(
        "SELECT 1 / 0 AS inf, 7 // 2 AS r",
        "inf DOUBLE NOT NULL, r INTEGER NOT NULL",
    );
    check_err(
        "SELECT 1.5 // 2",
        "Cannot apply operator // to types DECIMAL(2,1) and INTEGER",
    );
    check(
        "SELECT 1 // 0, 5 % 0",
        "
        Projection: (1 / 0), (5 % 0)
          Values: 1 rows
        ",
    );
}

#[test]
fn window_functions_plan_a_window_node_per_partition_and_order() {
    // two specifications: two Window nodes; QUALIFY filters above them;
    // the final projection reads the windows' columns
    check(
        "SELECT i, row_number() OVER (PARTITION BY s ORDER BY i), i - lag(i) OVER w \
         FROM t QUALIFY sum(d) OVER (PARTITION BY s ORDER BY i) > 1 WINDOW w AS (ORDER BY ts)",
        "
        Projection: i, row_number() OVER (PARTITION BY s ORDER BY i), (i - lag(i) OVER w)
          Filter: (sum(d) OVER (PARTITION BY s ORDER BY i) > 1.0)
            Window: partitionBy=[], orderBy=[ts ASC NULLS LAST], functions=[lag(i, 1)]
              Window: partitionBy=[s], orderBy=[i ASC NULLS LAST], functions=[row_number(), sum(d) RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW]
                Projection: i, d, s, ts
                  Scan: t (5 columns)
        ",
    );
    // over GROUP BY: the windows read the Aggregate's output
    check(
        "SELECT s, rank() OVER (ORDER BY count(*) DESC) FROM t GROUP BY s",
        "
        Projection: s, rank() OVER (ORDER BY count(*) DESC)
          Window: partitionBy=[], orderBy=[count(*) DESC NULLS LAST], functions=[rank()]
            Aggregate: groupBy=[s], aggr=[count(*)]
              Scan: t (5 columns)
        ",
    );
    check_schema(
        "SELECT row_number() OVER () AS r, avg(i) OVER () AS a, sum(i) OVER () AS s, \
         lag(d, 1, 0) OVER () AS l, ntile(2) OVER () AS n FROM t",
        "r BIGINT NOT NULL, a DOUBLE, s BIGINT, l DOUBLE, n BIGINT",
    );
    check_err(
        "SELECT i FROM t WHERE rank() OVER () = 1",
        "WHERE clause cannot contain window functions",
    );
    check_err(
        "SELECT sum(i) OVER (ROWS BETWEEN -1 PRECEDING AND CURRENT ROW) FROM t",
        "ROWS frame offsets must be non-negative integer constants",
    );
    check_err(
        "SELECT sum(i) OVER (ORDER BY s RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t",
        "RANGE frames with an offset need a numeric, DATE or TIMESTAMP ORDER BY key, not VARCHAR",
    );
}

#[test]
fn update_and_delete_plan_queries_over_the_table() {
    check(
        "UPDATE t SET i = i + 1, s = 'x' WHERE d > 0",
        "
        Update t
        Projection: CASE WHEN (d > 0.0) THEN (i + 1) ELSE i END, d, CASE WHEN (d > 0.0) THEN 'x' ELSE s END, b, ts, CASE WHEN (d > 0.0) THEN TRUE ELSE FALSE END
          Scan: t (5 columns)
        ",
    );
    check(
        "DELETE FROM t WHERE i = 1",
        "
        Delete t
        Filter: NOT CASE WHEN (i = 1) THEN TRUE ELSE FALSE END
          Scan: t (5 columns)
        ",
    );
    check_err(
        "UPDATE t SET nope = 1",
        "Referenced update column nope not found",
    );
    check_err("DELETE FROM lineitem USING t", "DELETE options");
}
