//! Tables, plan builders and result checks shared by the tests.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{
    ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int32Array, Int64Array,
    RecordBatch, StringArray,
};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use weir_executor::{ExecutorConfig, PipelineExecutor};
use weir_pipeline::eval::scalar_from_array;
use weir_pipeline::{ExecOptions, QueryOutput, SourceResolver, TableData, execute, series_table};
use weir_planner::{
    AggregateExpr, AggregateFunction, BinaryOp, Expr, LogicalPlan, ScalarValue, SortKey,
    TableSource,
};

/// Tables by name, plus `range()`.
#[derive(Default)]
pub(crate) struct Tables(pub(crate) HashMap<String, Arc<TableData>>);

impl SourceResolver for Tables {
    fn resolve(&self, source: &TableSource) -> weir_pipeline::Result<Arc<TableData>> {
        match source {
            TableSource::Table(name) => self
                .0
                .get(name)
                .cloned()
                .ok_or_else(|| weir_pipeline::Error::Execution(format!("no table {name}"))),
            TableSource::Series { start, stop, step } => {
                Ok(Arc::new(series_table(*start, *stop, *step, "range")?))
            }
            other => Err(weir_pipeline::Error::Execution(format!(
                "no source {other} here"
            ))),
        }
    }
}

impl Tables {
    pub(crate) fn with(mut self, name: &str, table: TableData) -> Self {
        self.0.insert(name.to_owned(), Arc::new(table));
        self
    }
}

/// `t`: a INT (nullable), b BIGINT, s VARCHAR (nullable), d DECIMAL(15,2),
/// f DOUBLE, dt DATE, flag BOOLEAN (nullable). Ten rows in batches of
/// 4, 0, 6 rows.
pub(crate) fn t_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("a", DataType::Int32, true),
        Field::new("b", DataType::Int64, false),
        Field::new("s", DataType::Utf8, true),
        Field::new("d", DataType::Decimal128(15, 2), false),
        Field::new("f", DataType::Float64, true),
        Field::new("dt", DataType::Date32, false),
        Field::new("flag", DataType::Boolean, true),
    ]))
}

pub(crate) fn t_table() -> TableData {
    let a = vec![
        Some(1),
        Some(2),
        None,
        Some(4),
        Some(5),
        Some(1),
        None,
        Some(3),
        Some(2),
        Some(10),
    ];
    let b: Vec<i64> = vec![10, 20, 30, 40, 50, 60, 70, 80, 90, 100];
    let s = vec![
        Some("apple"),
        Some("banana"),
        Some("cherry"),
        None,
        Some("apple"),
        Some("special offer"),
        Some("kiwi"),
        Some("banana"),
        None,
        Some("date"),
    ];
    let d: Vec<i128> = vec![150, 250, 1000, 5, 995, 100, 700, 320, 45, 1];
    let f = vec![
        Some(0.5),
        Some(1.5),
        Some(-2.0),
        None,
        Some(3.25),
        Some(0.0),
        Some(10.0),
        None,
        Some(7.5),
        Some(1.0),
    ];
    let dt: Vec<i32> = vec![8766, 8800, 9000, 9131, 8500, 8766, 9200, 8900, 9100, 9130];
    let flag = vec![
        Some(true),
        Some(false),
        None,
        Some(true),
        Some(true),
        Some(false),
        None,
        Some(false),
        Some(true),
        Some(true),
    ];
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from(a)),
        Arc::new(Int64Array::from(b)),
        Arc::new(StringArray::from(s)),
        Arc::new(
            Decimal128Array::from(d)
                .with_precision_and_scale(15, 2)
                .unwrap(),
        ),
        Arc::new(Float64Array::from(f)),
        Arc::new(Date32Array::from(dt)),
        Arc::new(BooleanArray::from(flag)),
    ];
    let all = RecordBatch::try_new(t_schema(), columns).unwrap();
    let batches = vec![all.slice(0, 4), all.slice(4, 0), all.slice(4, 6)];
    TableData::new(t_schema(), batches)
}

pub(crate) fn tables() -> Tables {
    Tables::default().with("t", t_table())
}

pub(crate) fn scan(name: &str, schema: SchemaRef) -> LogicalPlan {
    LogicalPlan::Scan {
        source: TableSource::Table(name.to_owned()),
        schema,
    }
}

pub(crate) fn scan_t() -> LogicalPlan {
    scan("t", t_schema())
}

pub(crate) fn filter(input: LogicalPlan, predicate: Expr) -> LogicalPlan {
    LogicalPlan::Filter {
        input: Box::new(input),
        predicate,
    }
}

/// A projection naming each output after its expression.
pub(crate) fn project(input: LogicalPlan, exprs: Vec<Expr>) -> LogicalPlan {
    let in_schema = input.schema();
    let fields: Vec<Field> = exprs
        .iter()
        .map(|e| Field::new(e.to_string(), e.data_type(&in_schema), true))
        .collect();
    LogicalPlan::Projection {
        input: Box::new(input),
        exprs,
        schema: Arc::new(Schema::new(fields)),
    }
}

pub(crate) fn agg(func: AggregateFunction, arg: Option<Expr>, distinct: bool) -> AggregateExpr {
    AggregateExpr {
        func,
        arg,
        key: None,
        distinct,
        order_by: Vec::new(),
    }
}

/// The planner's output type of an aggregate.
pub(crate) fn agg_type(a: &AggregateExpr, input: &Schema) -> DataType {
    let t = a.arg.as_ref().map(|e| e.data_type(input));
    match (a.func, t) {
        (AggregateFunction::CountStar | AggregateFunction::Count, _) => DataType::Int64,
        (AggregateFunction::Sum, Some(DataType::Decimal128(_, s))) => DataType::Decimal128(38, s),
        (AggregateFunction::Sum, Some(t)) if t.is_integer() => DataType::Int64,
        (AggregateFunction::Sum | AggregateFunction::Avg, _) => DataType::Float64,
        (_, Some(t)) => t,
        (_, None) => DataType::Null,
    }
}

pub(crate) fn aggregate(
    input: LogicalPlan,
    group_by: Vec<Expr>,
    aggregates: Vec<AggregateExpr>,
) -> LogicalPlan {
    let in_schema = input.schema();
    let mut fields: Vec<Field> = group_by
        .iter()
        .map(|g| Field::new(g.to_string(), g.data_type(&in_schema), true))
        .collect();
    for a in &aggregates {
        fields.push(Field::new(a.to_string(), agg_type(a, &in_schema), true));
    }
    LogicalPlan::Aggregate {
        input: Box::new(input),
        group_by,
        aggregates,
        schema: Arc::new(Schema::new(fields)),
    }
}

pub(crate) fn sort(input: LogicalPlan, keys: Vec<(Expr, bool, bool)>) -> LogicalPlan {
    LogicalPlan::Sort {
        input: Box::new(input),
        keys: keys
            .into_iter()
            .map(|(expr, asc, nulls_first)| SortKey {
                expr,
                asc,
                nulls_first,
            })
            .collect(),
    }
}

pub(crate) fn limit(input: LogicalPlan, offset: usize, fetch: Option<usize>) -> LogicalPlan {
    LogicalPlan::Limit {
        input: Box::new(input),
        offset,
        fetch,
    }
}

pub(crate) fn col(index: usize) -> Expr {
    let name = t_schema().field(index).name().clone();
    Expr::column(index, name)
}

pub(crate) fn lit_i32(v: i32) -> Expr {
    Expr::Literal(ScalarValue::Int32(v))
}

pub(crate) fn lit_i64(v: i64) -> Expr {
    Expr::Literal(ScalarValue::Int64(v))
}

pub(crate) fn lit_str(v: &str) -> Expr {
    Expr::Literal(ScalarValue::Utf8(v.to_owned()))
}

pub(crate) fn bin(l: Expr, op: BinaryOp, r: Expr) -> Expr {
    Expr::binary(l, op, r)
}

pub(crate) fn and(l: Expr, r: Expr) -> Expr {
    bin(l, BinaryOp::And, r)
}

pub(crate) fn or(l: Expr, r: Expr) -> Expr {
    bin(l, BinaryOp::Or, r)
}

pub(crate) fn executor(threads: usize) -> PipelineExecutor {
    PipelineExecutor::new(ExecutorConfig::with_threads(threads)).unwrap()
}

pub(crate) fn options(morsel_rows: usize) -> ExecOptions {
    ExecOptions {
        morsel_rows,
        ..ExecOptions::default()
    }
}

/// Each row as its values' SQL text joined by `|`.
pub(crate) fn rows(out: &QueryOutput) -> Vec<String> {
    let mut rows = Vec::new();
    for b in &out.batches {
        assert_eq!(b.schema(), out.schema, "batch schema");
        for r in 0..b.num_rows() {
            let cells: Vec<String> = b
                .columns()
                .iter()
                .map(|c| scalar_from_array(c.as_ref(), r).unwrap().to_string())
                .collect();
            rows.push(cells.join("|"));
        }
    }
    rows
}

/// Runs `plan` on 1, 2 and 4 threads with morsels of 1, 3 and 64 Ki rows;
/// every run must give `expect`, in order.
pub(crate) fn check(sources: &Tables, plan: &LogicalPlan, expect: &[&str]) {
    for threads in [1, 2, 4] {
        let executor = executor(threads);
        for morsel_rows in [1, 3, 65_536] {
            let out = execute(plan, sources, &executor, &options(morsel_rows))
                .unwrap_or_else(|e| panic!("{threads} threads, morsels of {morsel_rows}: {e}"));
            assert_eq!(out.schema, plan.schema());
            assert_eq!(
                rows(&out),
                expect,
                "{threads} threads, morsels of {morsel_rows}"
            );
        }
    }
}

/// Like [`check`], ignoring row order.
pub(crate) fn check_unordered(sources: &Tables, plan: &LogicalPlan, expect: &[&str]) {
    let mut expect: Vec<String> = expect.iter().map(|s| s.to_string()).collect();
    expect.sort();
    for threads in [1, 2, 4] {
        let executor = executor(threads);
        for morsel_rows in [1, 3, 65_536] {
            let out = execute(plan, sources, &executor, &options(morsel_rows))
                .unwrap_or_else(|e| panic!("{threads} threads, morsels of {morsel_rows}: {e}"));
            let mut got = rows(&out);
            got.sort();
            assert_eq!(got, expect, "{threads} threads, morsels of {morsel_rows}");
        }
    }
}

/// `count(*)` of `input`.
pub(crate) fn count_star(input: LogicalPlan) -> LogicalPlan {
    aggregate(
        input,
        vec![],
        vec![agg(AggregateFunction::CountStar, None, false)],
    )
}
