//! Times the benchmark queries (F1-F6 of `benches/queries.sql`) straight on
//! the pipeline, TPC-H `lineitem` generated in memory, on 1 and 2 threads.
//!
//! `cargo run --release -p weir-pipeline --example lineitem -- [SF] [MORSEL_ROWS]`

use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::RecordBatch;
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use tpchgen::generators::LineItemGenerator;
use tpchgen_arrow::LineItemArrow;
use weir_executor::{ExecutorConfig, PipelineExecutor};
use weir_pipeline::{ExecOptions, SourceResolver, TableData, execute};
use weir_planner::{Catalog, FileFormat, Statement, TableSource, plan_sql};

const QUERIES: [(&str, &str); 6] = [
    ("F1", "SELECT count(*) FROM lineitem WHERE l_quantity < 5"),
    (
        "F2",
        "SELECT sum(l_extendedprice * l_discount) AS revenue FROM lineitem WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24",
    ),
    (
        "F3",
        "SELECT l_orderkey, l_partkey, l_extendedprice FROM lineitem WHERE l_shipmode = 'AIR' AND l_quantity > 45 AND l_discount = 0.10",
    ),
    (
        "F4",
        "SELECT count(*) FROM lineitem WHERE l_comment LIKE '%special%'",
    ),
    (
        "F5",
        "SELECT count(*) FROM lineitem WHERE l_returnflag = 'R' OR l_linestatus = 'F'",
    ),
    (
        "F6",
        "SELECT count(*) FROM lineitem WHERE l_shipmode IN ('MAIL', 'SHIP') AND l_receiptdate BETWEEN DATE '1995-06-01' AND DATE '1995-12-31'",
    ),
];

struct Lineitem(Arc<TableData>);

impl SourceResolver for Lineitem {
    fn resolve(&self, _source: &TableSource) -> weir_pipeline::Result<Arc<TableData>> {
        Ok(Arc::clone(&self.0))
    }
}

impl Catalog for Lineitem {
    fn table_schema(&self, name: &str) -> Option<SchemaRef> {
        name.eq_ignore_ascii_case("lineitem")
            .then(|| Arc::clone(&self.0.schema))
    }
    fn table_names(&self) -> Vec<String> {
        vec!["lineitem".into()]
    }
    fn file_schema(&self, _path: &str, _format: FileFormat) -> Result<SchemaRef, String> {
        Err("no files".into())
    }
}

/// `lineitem` with canonical types (string views become `Utf8`).
fn generate(sf: f64) -> TableData {
    let batches: Vec<RecordBatch> = LineItemArrow::new(LineItemGenerator::new(sf, 1, 1))
        .with_batch_size(65_536)
        .collect::<Result<_, _>>()
        .unwrap();
    let fields: Vec<Field> = batches[0]
        .schema()
        .fields()
        .iter()
        .map(|f| {
            let t = match f.data_type() {
                DataType::Utf8View | DataType::LargeUtf8 => DataType::Utf8,
                t => t.clone(),
            };
            Field::new(f.name(), t, f.is_nullable())
        })
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let batches = batches
        .into_iter()
        .map(|b| {
            let cols = b
                .columns()
                .iter()
                .zip(schema.fields())
                .map(|(c, f)| cast(c, f.data_type()).unwrap())
                .collect();
            RecordBatch::try_new(Arc::clone(&schema), cols).unwrap()
        })
        .collect();
    TableData::new(schema, batches)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sf: f64 = args.get(1).map_or(1.0, |s| s.parse().unwrap());
    let morsel_rows: usize = args.get(2).map_or(65_536, |s| s.parse().unwrap());
    let t = Instant::now();
    let table = Lineitem(Arc::new(generate(sf)));
    eprintln!("generated {} rows in {:?}", table.0.num_rows(), t.elapsed());
    let options = ExecOptions {
        morsel_rows,
        ..ExecOptions::default()
    };
    for threads in [1, 2] {
        let executor = PipelineExecutor::new(ExecutorConfig::with_threads(threads)).unwrap();
        for (name, sql) in QUERIES {
            let Statement::Query(plan) = plan_sql(sql, &table).unwrap().remove(0) else {
                panic!("not a query");
            };
            let mut times = Vec::new();
            let mut rows = 0;
            for _ in 0..7 {
                let t = Instant::now();
                let out = execute(&plan, &table, &executor, &options).unwrap();
                times.push(t.elapsed());
                rows = out.num_rows();
                if name != "F3" && threads == 2 && times.len() == 1 {
                    let b = &out.batches[0];
                    eprintln!(
                        "  {name} = {:?}",
                        weir_pipeline::eval::scalar_from_array(b.column(0).as_ref(), 0).unwrap()
                    );
                }
            }
            if std::env::var_os("PROFILE").is_some() {
                let opts = ExecOptions {
                    analyze: true,
                    ..options.clone()
                };
                let out = execute(&plan, &table, &executor, &opts).unwrap();
                println!("{}", out.profile.unwrap());
            }
            times.sort();
            let median: Duration = times[times.len() / 2];
            println!(
                "{threads} threads {name}: {:8.2} ms ({rows} rows)",
                median.as_secs_f64() * 1e3
            );
        }
    }
}
