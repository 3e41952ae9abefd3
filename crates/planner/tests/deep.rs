//! No input aborts the planner: deep and long expressions either plan or
//! fail with a clean error, never overflow a stack (issue 7 items 1, 5).

use weir_planner::arrow_schema::{DataType, Field, Schema, SchemaRef};
use weir_planner::{Catalog, FileFormat, LogicalPlan, Statement, plan_sql};

struct OneTable;

impl Catalog for OneTable {
    fn table_schema(&self, name: &str) -> Option<SchemaRef> {
        name.eq_ignore_ascii_case("t").then(|| {
            SchemaRef::new(Schema::new(vec![
                Field::new("x", DataType::Int32, true),
                Field::new("s", DataType::Utf8, true),
                Field::new("b", DataType::Boolean, true),
            ]))
        })
    }
    fn table_names(&self) -> Vec<String> {
        vec!["t".into()]
    }
    fn file_schema(&self, path: &str, _: FileFormat) -> Result<SchemaRef, String> {
        Err(format!("no file {path}"))
    }
}

fn chain(term: &str, op: &str, n: usize) -> String {
    vec![term; n].join(op)
}

#[track_caller]
fn too_deep(sql: &str) {
    let err = plan_sql(sql, &OneTable).expect_err("should be too deep");
    assert!(
        err.to_string()
            .contains("Max expression depth limit of 1000 exceeded"),
        "{err}"
    );
}

/// The depth of the filter predicate of `SELECT x FROM t WHERE ...`.
fn filter_depth(sql: &str) -> usize {
    let statements = plan_sql(sql, &OneTable).unwrap_or_else(|e| panic!("{e}"));
    let [Statement::Query(plan)] = statements.as_slice() else {
        panic!("not one query");
    };
    let mut p = plan;
    loop {
        match p {
            LogicalPlan::Filter { predicate, .. } => return depth(predicate),
            LogicalPlan::Projection { input, .. } => p = input,
            other => panic!("no filter in {other:?}"),
        }
    }
}

fn depth(e: &weir_planner::Expr) -> usize {
    match e {
        weir_planner::Expr::Binary { left, right, .. } => 1 + depth(left).max(depth(right)),
        _ => 1,
    }
}

#[test]
fn a_200000_term_sum_is_a_clean_error() {
    too_deep(&format!("SELECT {}", chain("1", "+", 200_000)));
    too_deep(&format!("SELECT {} FROM t", chain("x", " - ", 200_000)));
    too_deep(&format!("SELECT {}", chain("1", "+", 1001)));
}

#[test]
fn sums_up_to_duckdbs_depth_plan() {
    assert!(plan_sql(&format!("SELECT {}", chain("1", "+", 990)), &OneTable).is_ok());
    assert!(
        plan_sql(
            &format!("SELECT {} FROM t", chain("x", "+", 990)),
            &OneTable
        )
        .is_ok()
    );
}

#[test]
fn long_and_or_concat_chains_are_not_nesting() {
    // 50,000 terms: bound iteratively, built balanced (16 levels)
    let ors = (0..50_000)
        .map(|i| format!("x = {i}"))
        .collect::<Vec<_>>()
        .join(" OR ");
    let d = filter_depth(&format!("SELECT x FROM t WHERE {ors}"));
    assert!(d <= 20, "depth {d}");
    let ands = chain("b", " AND ", 128);
    let d = filter_depth(&format!("SELECT x FROM t WHERE {ands}"));
    assert!(d <= 9, "depth {d}");
    let concat = chain("s", " || ", 100_000);
    assert!(plan_sql(&format!("SELECT {concat} FROM t"), &OneTable).is_ok());
    // mixed: an AND of ORs
    let mixed = format!("{ors} AND {ands}");
    assert!(plan_sql(&format!("SELECT x FROM t WHERE {mixed}"), &OneTable).is_ok());
}

#[test]
fn short_chains_stay_left_deep() {
    assert_eq!(filter_depth("SELECT x FROM t WHERE b AND b AND b AND b"), 4);
}

fn nest(n: usize, inner: &str) -> String {
    format!("{}{inner}{}", "(".repeat(n), ")".repeat(n))
}

#[test]
fn nested_parentheses_up_to_duckdbs_depth() {
    assert!(plan_sql(&format!("SELECT {}", nest(990, "1")), &OneTable).is_ok());
    assert!(plan_sql(&format!("SELECT {} FROM t", nest(990, "x + 1")), &OneTable).is_ok());
}

#[test]
fn nested_parentheses_past_it() {
    too_deep(&format!("SELECT {}", nest(1001, "1")));
    too_deep(&format!("SELECT {}", nest(100_000, "1")));
}

#[test]
fn unary_nesting() {
    too_deep(&format!("SELECT {}1", "- ".repeat(5000)));
}

#[test]
fn call_nesting() {
    too_deep(&format!(
        "SELECT {}1{}",
        "abs(".repeat(1000),
        ")".repeat(1000)
    ));
    too_deep(&format!(
        "SELECT {}1{}",
        "abs(".repeat(5000),
        ")".repeat(5000)
    ));
    assert!(
        plan_sql(
            &format!("SELECT {}x{} FROM t", "abs(".repeat(990), ")".repeat(990)),
            &OneTable
        )
        .is_ok()
    );
}

/// A catalog that remembers the thread each lookup ran on.
struct Watched(std::sync::Mutex<Vec<String>>);

impl Catalog for Watched {
    fn table_schema(&self, name: &str) -> Option<SchemaRef> {
        let thread = std::thread::current().name().unwrap_or("").to_string();
        self.0.lock().unwrap().push(thread);
        OneTable.table_schema(name)
    }
    fn table_names(&self) -> Vec<String> {
        OneTable.table_names()
    }
    fn file_schema(&self, path: &str, format: FileFormat) -> Result<SchemaRef, String> {
        OneTable.file_schema(path, format)
    }
}

/// The threads `sql` was planned on, planned from a thread named `caller`
/// with a stack of `stack` bytes.
fn planned_on(sql: &'static str, stack: usize) -> Vec<String> {
    std::thread::Builder::new()
        .name("caller".into())
        .stack_size(stack)
        .spawn(move || {
            let catalog = Watched(Default::default());
            plan_sql(sql, &catalog).unwrap_or_else(|e| panic!("{e}"));
            let mut threads = catalog.0.into_inner().unwrap();
            threads.dedup();
            threads
        })
        .unwrap()
        .join()
        .unwrap()
}

#[test]
fn a_short_statement_is_planned_where_the_stack_has_room() {
    // starting a thread costs several times what planning a short query
    // does: one is started only when this stack may not hold the plan
    let sql = "SELECT x FROM t WHERE x > 1 ORDER BY x LIMIT 10";
    assert_eq!(planned_on(sql, 64 << 20), ["caller"]);
    assert_eq!(planned_on(sql, 256 << 10), ["weir-plan"]);
}
