//! The optimiser on TPC-H's plans (SF 1 row counts and distinct values,
//! as the engine estimates them): every join side narrowed to the columns
//! it uses, ORs over two nations filtering each nation, and joins built on
//! the small or filtered sides with lineitem probing.

use weir_planner::arrow_schema::{DataType, Field, Schema, SchemaRef};
use weir_planner::{
    Catalog, ConstantEvaluator, Expr, FileFormat, JoinKind, LogicalPlan, ScalarValue, Statement,
    TableSource, plan_sql_with,
};

struct Tpch;

fn table(name: &str) -> Option<(&'static [(&'static str, DataType)], usize)> {
    use DataType::*;
    Some(match name {
        "lineitem" => (
            &[
                ("l_orderkey", Int64),
                ("l_partkey", Int64),
                ("l_suppkey", Int64),
                ("l_linenumber", Int32),
                ("l_quantity", Decimal128(15, 2)),
                ("l_extendedprice", Decimal128(15, 2)),
                ("l_discount", Decimal128(15, 2)),
                ("l_tax", Decimal128(15, 2)),
                ("l_returnflag", Utf8),
                ("l_linestatus", Utf8),
                ("l_shipdate", Date32),
                ("l_commitdate", Date32),
                ("l_receiptdate", Date32),
                ("l_shipinstruct", Utf8),
                ("l_shipmode", Utf8),
                ("l_comment", Utf8),
            ],
            6001215,
        ),
        "orders" => (
            &[
                ("o_orderkey", Int64),
                ("o_custkey", Int64),
                ("o_orderstatus", Utf8),
                ("o_totalprice", Decimal128(15, 2)),
                ("o_orderdate", Date32),
                ("o_orderpriority", Utf8),
                ("o_clerk", Utf8),
                ("o_shippriority", Int32),
                ("o_comment", Utf8),
            ],
            1500000,
        ),
        "customer" => (
            &[
                ("c_custkey", Int64),
                ("c_name", Utf8),
                ("c_address", Utf8),
                ("c_nationkey", Int64),
                ("c_phone", Utf8),
                ("c_acctbal", Decimal128(15, 2)),
                ("c_mktsegment", Utf8),
                ("c_comment", Utf8),
            ],
            150000,
        ),
        "supplier" => (
            &[
                ("s_suppkey", Int64),
                ("s_name", Utf8),
                ("s_address", Utf8),
                ("s_nationkey", Int64),
                ("s_phone", Utf8),
                ("s_acctbal", Decimal128(15, 2)),
                ("s_comment", Utf8),
            ],
            10000,
        ),
        "nation" => (
            &[
                ("n_nationkey", Int64),
                ("n_name", Utf8),
                ("n_regionkey", Int64),
                ("n_comment", Utf8),
            ],
            25,
        ),
        "region" => (
            &[
                ("r_regionkey", Int64),
                ("r_name", Utf8),
                ("r_comment", Utf8),
            ],
            5,
        ),
        "part" => (
            &[
                ("p_partkey", Int64),
                ("p_name", Utf8),
                ("p_mfgr", Utf8),
                ("p_brand", Utf8),
                ("p_type", Utf8),
                ("p_size", Int32),
                ("p_container", Utf8),
                ("p_retailprice", Decimal128(15, 2)),
                ("p_comment", Utf8),
            ],
            200000,
        ),
        "partsupp" => (
            &[
                ("ps_partkey", Int64),
                ("ps_suppkey", Int64),
                ("ps_availqty", Int32),
                ("ps_supplycost", Decimal128(15, 2)),
                ("ps_comment", Utf8),
            ],
            800000,
        ),
        _ => return None,
    })
}

impl Catalog for Tpch {
    fn table_schema(&self, name: &str) -> Option<SchemaRef> {
        let (cols, _) = table(name)?;
        let fields: Vec<Field> = cols
            .iter()
            .map(|(n, t)| Field::new(*n, t.clone(), false))
            .collect();
        Some(SchemaRef::new(Schema::new(fields)))
    }
    fn table_names(&self) -> Vec<String> {
        [
            "lineitem", "orders", "customer", "supplier", "nation", "region", "part", "partsupp",
        ]
        .map(String::from)
        .to_vec()
    }
    fn file_schema(&self, path: &str, _: FileFormat) -> Result<SchemaRef, String> {
        Err(format!("no file {path}"))
    }
    fn table_rows(&self, name: &str) -> Option<usize> {
        table(name).map(|(_, rows)| rows)
    }
    fn column_distinct(&self, name: &str, column: &str) -> Option<f64> {
        let rows = table(name)?.1 as f64;
        Some(match column {
            // keys of their own table
            "o_orderkey" | "c_custkey" | "s_suppkey" | "n_nationkey" | "r_regionkey"
            | "p_partkey" => rows,
            "l_orderkey" => 1_500_000.0,
            "l_partkey" | "ps_partkey" => 200_000.0,
            "l_suppkey" | "ps_suppkey" => 10_000.0,
            "o_custkey" => 100_000.0,
            "c_nationkey" | "s_nationkey" | "n_name" => 25.0,
            "n_regionkey" | "r_name" => 5.0,
            "p_type" => 150.0,
            "o_orderstatus" => 3.0,
            _ => return None,
        })
    }
}

/// Folds the constants these tests bind (LIMIT's cast of an integer to
/// BIGINT); the engine passes the pipeline's evaluator.
struct Integers;

impl ConstantEvaluator for Integers {
    fn evaluate(
        &self,
        expr: &Expr,
    ) -> Result<ScalarValue, Box<dyn std::error::Error + Send + Sync>> {
        let int = |v: &ScalarValue| match v {
            ScalarValue::Int32(i) => Some(i64::from(*i)),
            ScalarValue::Int64(i) => Some(*i),
            _ => None,
        };
        match expr {
            Expr::Literal(v) => Ok(v.clone()),
            Expr::Cast {
                expr,
                to: DataType::Int64,
                try_cast: false,
            } => match expr.as_ref() {
                Expr::Literal(v) if let Some(i) = int(v) => Ok(ScalarValue::Int64(i)),
                _ => Err(format!("not folded here: {expr:?}").into()),
            },
            other => Err(format!("not folded here: {other:?}").into()),
        }
    }
}

fn plan(sql: &str) -> LogicalPlan {
    match plan_sql_with(sql, &Tpch, Some(&Integers))
        .expect("plans")
        .pop()
    {
        Some(Statement::Query(p)) => p,
        other => panic!("not a query: {other:?}"),
    }
}

fn tpch(n: u32) -> LogicalPlan {
    let path = format!(
        "{}/../../benches/tpch/q{n:02}.sql",
        env!("CARGO_MANIFEST_DIR")
    );
    plan(&std::fs::read_to_string(path).expect("query file"))
}

/// The table a join input reads rows from (through its filters and
/// projections), if it is one scan.
fn leaf_table(p: &LogicalPlan) -> Option<&str> {
    match p {
        LogicalPlan::Scan {
            source: TableSource::Table(t),
            ..
        } => Some(t),
        LogicalPlan::Filter { input, .. } | LogicalPlan::Projection { input, .. } => {
            leaf_table(input)
        }
        _ => None,
    }
}

/// Every join of the plan, top first.
fn joins(p: &LogicalPlan) -> Vec<&LogicalPlan> {
    let mut out = Vec::new();
    let mut stack = vec![p];
    while let Some(n) = stack.pop() {
        if matches!(n, LogicalPlan::Join { .. }) {
            out.push(n);
        }
        stack.extend(n.children());
    }
    out
}

/// The scan at the end of the probe (left) inputs from the top join down.
fn probe_table(p: &LogicalPlan) -> Option<&str> {
    let mut n = joins(p).into_iter().next()?;
    loop {
        match n {
            LogicalPlan::Join { left, .. } => n = left,
            LogicalPlan::Projection { input, .. } | LogicalPlan::Filter { input, .. }
                if leaf_table(n).is_none() =>
            {
                n = input
            }
            other => return leaf_table(other),
        }
    }
}

#[test]
fn q7_join_sides_read_only_the_columns_they_use() {
    let text = tpch(7).display_indent();
    assert!(
        text.contains(
            "Projection: l_orderkey, l_suppkey, l_extendedprice, l_discount, l_shipdate\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("Projection: o_orderkey, o_custkey\n"),
        "{text}"
    );
    assert!(
        text.contains("Projection: c_custkey, c_nationkey\n"),
        "{text}"
    );
    // no projection of every column over the joins
    assert!(!text.contains("l_comment"), "{text}");
    // the OR over both nations filters each nation; the OR itself stays
    assert!(
        text.contains("Filter: ((n_name = 'FRANCE') OR (n_name = 'GERMANY'))"),
        "{text}"
    );
    assert!(
        text.contains("Filter: ((n_name = 'GERMANY') OR (n_name = 'FRANCE'))"),
        "{text}"
    );
    assert!(
        text.contains("(((n_name = 'FRANCE') AND (n_name = 'GERMANY')) OR ((n_name = 'GERMANY') AND (n_name = 'FRANCE')))"),
        "{text}"
    );
}

#[test]
fn joins_build_on_small_sides_and_lineitem_probes() {
    let p = tpch(5);
    assert_eq!(
        probe_table(&p),
        Some("lineitem"),
        "Q5:\n{}",
        p.display_indent()
    );
    // no join builds on lineitem's rows when a smaller side is there
    for q in [5, 8, 9] {
        let p = tpch(q);
        for j in joins(&p) {
            let LogicalPlan::Join { right, .. } = j else {
                unreachable!()
            };
            assert_ne!(
                leaf_table(right),
                Some("lineitem"),
                "Q{q}:\n{}",
                p.display_indent()
            );
        }
    }
    // Q5's region, filtered to one row, is joined first (the deepest join)
    let q5 = tpch(5).display_indent();
    let region = q5.find("Scan: region").expect("region");
    let lineitem = q5.find("Scan: lineitem").expect("lineitem");
    assert!(lineitem < region, "{q5}");
}

#[test]
fn pruning_keeps_the_query_columns_and_their_names() {
    let p = plan(
        "SELECT o_orderkey AS k, count(*) AS n FROM orders, customer WHERE o_custkey = c_custkey GROUP BY o_orderkey",
    );
    let names: Vec<String> = p
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(names, ["k", "n"]);
    let text = p.display_indent();
    assert!(text.contains("Projection: c_custkey\n"), "{text}");
    assert!(
        text.contains("Projection: o_orderkey, o_custkey\n"),
        "{text}"
    );
}

#[test]
fn filters_move_below_projections_but_not_below_a_limit() {
    let text =
        plan("SELECT * FROM (SELECT n_name, n_regionkey + 1 AS r FROM nation) AS t WHERE r = 2")
            .display_indent();
    assert!(
        text.contains("Filter: ((n_regionkey + 1) = 2)\n    Scan: nation"),
        "{text}"
    );
    let text = plan("SELECT * FROM (SELECT n_name FROM nation LIMIT 3) AS t WHERE n_name = 'PERU'")
        .display_indent();
    let filter = text.find("Filter").expect("filter");
    let limit = text.find("Limit").expect("limit");
    assert!(filter < limit, "{text}");
    // a volatile filter stays where it is written
    let text = plan("SELECT * FROM (SELECT n_name, random() AS r FROM nation) AS t WHERE r < 0.5")
        .display_indent();
    assert!(text.starts_with("Filter: (r < "), "{text}");
}

#[test]
fn q18_in_subquery_filters_orders_before_they_join_lineitem() {
    let text = tpch(18).display_indent();
    let join = text
        .find("INNER Join: l_orderkey = o_orderkey")
        .expect("the lineitem join");
    let semi = text
        .find("SEMI Join: o_orderkey = l_orderkey")
        .expect("the IN");
    assert!(join < semi, "{text}");
}
/// The SEMI joins of the plan that reduce a side (their build side is a
/// projection of key values, `__reduce0`, ...).
fn reductions(p: &LogicalPlan) -> Vec<&LogicalPlan> {
    joins(p)
        .into_iter()
        .filter(|j| {
            matches!(j, LogicalPlan::Join { kind: JoinKind::Semi, right, .. }
                if right.schema().field(0).name().starts_with("__reduce"))
        })
        .collect()
}

/// The join-key equalities of the plan's joins, as `a = b` strings.
fn join_keys(p: &LogicalPlan) -> Vec<String> {
    let text = p.display_indent();
    text.lines()
        .filter_map(|l| l.trim().split_once("Join: "))
        .flat_map(|(_, keys)| {
            keys.split(" AND ")
                .filter(|k| !k.starts_with('('))
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Every node of the plan that matches `f`, top first.
fn nodes<'a>(p: &'a LogicalPlan, f: &dyn Fn(&LogicalPlan) -> bool) -> Vec<&'a LogicalPlan> {
    let mut out = Vec::new();
    let mut stack = vec![p];
    while let Some(n) = stack.pop() {
        if f(n) {
            out.push(n);
        }
        stack.extend(n.children());
    }
    out
}

#[test]
fn q17_groups_only_the_lineitems_of_the_outer_parts() {
    let p = tpch(17);
    let text = p.display_indent();
    // the grouping by part reads lineitem reduced to the filtered parts
    let grouped = nodes(
        &p,
        &|n| matches!(n, LogicalPlan::Aggregate { group_by, .. } if !group_by.is_empty()),
    );
    assert_eq!(grouped.len(), 1, "{text}");
    let LogicalPlan::Aggregate { input, .. } = grouped[0] else {
        unreachable!()
    };
    let under = reductions(input);
    assert_eq!(under.len(), 1, "{text}");
    let LogicalPlan::Join { left, right, .. } = under[0] else {
        unreachable!()
    };
    assert_eq!(leaf_table(left), Some("lineitem"), "{text}");
    assert_eq!(leaf_table(right), Some("part"), "{text}");
    assert!(text.contains("Filter: ((p_brand = 'Brand#23') AND (p_container = 'MED BOX'))"));
}

#[test]
fn q4_exists_builds_on_lineitems_of_the_outer_orders() {
    let p = tpch(4);
    let text = p.display_indent();
    // the EXISTS join builds on lineitem reduced by the quarter's orders
    let LogicalPlan::Join {
        kind: JoinKind::Semi,
        right,
        ..
    } = joins(&p)[0]
    else {
        panic!("{text}")
    };
    let LogicalPlan::Join {
        kind: JoinKind::Semi,
        left,
        right: keys,
        ..
    } = right.as_ref()
    else {
        panic!("{text}")
    };
    assert_eq!(leaf_table(left), Some("lineitem"), "{text}");
    assert_eq!(leaf_table(keys), Some("orders"), "{text}");
}

#[test]
fn q21_exists_and_not_exists_build_on_the_saudi_suppliers_late_lineitems() {
    let p = tpch(21);
    let text = p.display_indent();
    // both subqueries' joins are swapped: the outer rows (the Saudi
    // suppliers' late lineitems) build, lineitem probes; nothing is left
    // to reduce
    assert!(reductions(&p).is_empty(), "{text}");
    let swapped = nodes(&p, &|n| {
        matches!(
            n,
            LogicalPlan::Join {
                kind: JoinKind::RightSemi | JoinKind::RightAnti,
                ..
            }
        )
    });
    assert_eq!(swapped.len(), 2, "{text}");
    for j in swapped {
        let LogicalPlan::Join {
            left,
            right,
            filter,
            ..
        } = j
        else {
            unreachable!()
        };
        assert_eq!(leaf_table(left), Some("lineitem"), "{text}");
        assert!(
            !nodes(right, &|n| leaf_table(n) == Some("supplier")).is_empty(),
            "{text}"
        );
        // the condition reads the probe's supplier against the outer one
        assert_eq!(
            filter.as_ref().map(ToString::to_string).as_deref(),
            Some("(l_suppkey <> l_suppkey)"),
            "{text}"
        );
    }
}

#[test]
fn exists_keeps_its_sides_without_a_condition_or_a_much_smaller_outer_side() {
    // the outer side is the larger one
    let p = plan(
        "SELECT count(*) FROM lineitem WHERE EXISTS (SELECT * FROM orders WHERE o_orderkey = l_orderkey AND o_custkey <> l_suppkey)",
    );
    let text = p.display_indent();
    assert!(
        text.contains("SEMI Join") && !text.contains("RIGHT SEMI"),
        "{text}"
    );
    // a tenth of the orders, against lineitem: swapped
    let p = plan(
        "SELECT count(*) FROM orders WHERE o_orderkey < 150000 AND EXISTS (SELECT * FROM lineitem WHERE l_orderkey = o_orderkey AND l_suppkey <> o_custkey)",
    );
    let text = p.display_indent();
    assert!(text.contains("RIGHT SEMI Join"), "{text}");
    // no condition beyond the key: the build is a set of lineitem's keys
    let p = plan(
        "SELECT count(*) FROM orders WHERE o_orderkey < 150000 AND NOT EXISTS (SELECT * FROM lineitem WHERE l_orderkey = o_orderkey)",
    );
    let text = p.display_indent();
    assert!(
        text.contains("ANTI Join") && !text.contains("RIGHT ANTI"),
        "{text}"
    );
}

#[test]
fn q5_joins_on_an_implied_key_building_on_region_and_nation_first() {
    let p = tpch(5);
    let text = p.display_indent();
    let keys = join_keys(&p);
    // c_nationkey = s_nationkey = n_nationkey is one class of three
    // columns: two keys join its three relations, none is checked twice
    // (a semi-join reduction's key, `__reduce0`, is not a join of the FROM)
    let nation: Vec<&String> = keys
        .iter()
        .filter(|k| k.contains("nationkey") && !k.contains("__reduce"))
        .collect();
    assert_eq!(nation.len(), 2, "{keys:?}\n{text}");
    // customer joins nation on the implied c_nationkey = n_nationkey
    // (written are c = s and s = n), so orders and customer reach the
    // region's nations before lineitem probes them
    assert!(
        keys.iter().any(|k| k == "c_nationkey = n_nationkey"),
        "{keys:?}\n{text}"
    );
    // the deepest join is nation with the one region (built first)
    let deepest = joins(&p).into_iter().last().expect("a join");
    let LogicalPlan::Join { left, right, .. } = deepest else {
        unreachable!()
    };
    assert_eq!(
        (leaf_table(left), leaf_table(right)),
        (Some("nation"), Some("region")),
        "{text}"
    );
    assert_eq!(probe_table(&p), Some("lineitem"), "{text}");
}

#[test]
fn q9_lineitem_probes_one_build_on_both_implied_keys() {
    // s_suppkey = l_suppkey, ps_suppkey = l_suppkey, ps_partkey =
    // l_partkey, p_partkey = l_partkey: two classes of three columns
    let p = tpch(9);
    let keys = join_keys(&p);
    let text = p.display_indent();
    assert_eq!(
        keys.iter().filter(|k| k.contains("suppkey")).count(),
        2,
        "{keys:?}\n{text}"
    );
    assert_eq!(
        keys.iter().filter(|k| k.contains("partkey")).count(),
        2,
        "{keys:?}\n{text}"
    );
    assert!(
        text.contains("INNER Join: l_suppkey = s_suppkey AND l_partkey = p_partkey"),
        "{text}"
    );
}

#[test]
fn no_reduction_when_the_outer_side_is_not_much_smaller() {
    // every order: as many keys as the grouped lineitems hold
    let p = plan(
        "SELECT o_orderkey, (SELECT count(*) FROM lineitem WHERE l_orderkey = o_orderkey) FROM orders",
    );
    assert!(reductions(&p).is_empty(), "{}", p.display_indent());
    // NOT IN: a NULL on the right decides every row, the right is kept whole
    let p = plan(
        "SELECT p_partkey FROM part WHERE p_size = 3 AND p_partkey NOT IN (SELECT l_partkey FROM lineitem)",
    );
    assert!(reductions(&p).is_empty(), "{}", p.display_indent());
    // a correlated NOT IN is reduced: only the outer keys are probed
    let p = plan(
        "SELECT p_partkey FROM part WHERE p_size = 3 AND p_retailprice NOT IN (SELECT l_extendedprice FROM lineitem WHERE l_partkey = p_partkey)",
    );
    assert!(!reductions(&p).is_empty(), "{}", p.display_indent());
}

#[test]
fn q20_sums_only_the_lineitems_of_reduced_partsupp_rows() {
    // the suppliers of CANADA restrict partsupp (the IN above), and the
    // grouping of lineitem by part and supplier below it (top down)
    let p = tpch(20);
    let text = p.display_indent();
    let grouped = nodes(
        &p,
        &|n| matches!(n, LogicalPlan::Aggregate { group_by, .. } if group_by.len() == 2),
    );
    assert_eq!(grouped.len(), 1, "{text}");
    let LogicalPlan::Aggregate { input, .. } = grouped[0] else {
        unreachable!()
    };
    let under = reductions(input);
    assert_eq!(under.len(), 1, "{text}");
    let LogicalPlan::Join { left, .. } = under[0] else {
        unreachable!()
    };
    assert_eq!(leaf_table(left), Some("lineitem"), "{text}");
    assert!(reductions(&p).len() >= 2, "{text}");
}

#[test]
fn two_columns_of_one_relation_in_a_class_are_a_filter_on_it() {
    let p = plan(
        "SELECT count(*) FROM nation, customer WHERE n_nationkey = c_nationkey AND n_regionkey = c_nationkey",
    );
    let text = p.display_indent();
    assert!(
        text.contains("Filter: (n_nationkey = n_regionkey)"),
        "{text}"
    );
    assert_eq!(join_keys(&p).len(), 1, "{text}");
}

#[test]
fn q13_left_join_builds_on_customer_as_a_right_join() {
    let p = tpch(13);
    let text = p.display_indent();
    let join = joins(&p).into_iter().next().expect("the join");
    let LogicalPlan::Join {
        left, right, kind, ..
    } = join
    else {
        unreachable!()
    };
    assert_eq!(kind.name(), "RIGHT", "{text}");
    assert_eq!(
        (leaf_table(left), leaf_table(right)),
        (Some("orders"), Some("customer")),
        "{text}"
    );
    // a LEFT join with the smaller side on the right stays as written
    let p = plan("SELECT * FROM orders LEFT JOIN nation ON o_custkey = n_nationkey");
    let LogicalPlan::Join { kind, .. } = joins(&p)[0] else {
        unreachable!()
    };
    assert_eq!(kind.name(), "LEFT", "{}", p.display_indent());
}
