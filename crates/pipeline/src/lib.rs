//! `weir-pipeline`: runs a planner [`LogicalPlan`](weir_planner::LogicalPlan) over in-memory Arrow
//! data as executor jobs, in parallel on all cores.
//!
//! It sits between `weir-planner` (which gives it plans) and
//! `weir-executor` (which runs its jobs), below `weir-engine`. It does no
//! I/O: scans get their data from a [`SourceResolver`] the engine
//! implements.
//!
//! # How a plan runs
//!
//! The planner's canonical plan is `Scan -> [Filter] -> [Aggregate] ->
//! [Filter] -> Projection -> [Distinct] -> [Sort] -> [Projection] ->
//! [Limit]`. It is cut into a chain of **pipelines**, each a source, the
//! operators its rows stream through and a **breaker** that collects them
//! (hash aggregation, DISTINCT, top-N, sort, or materialise with a LIMIT).
//! A pipeline reads the previous one's result and starts when it has
//! finished. Each pipeline is **one executor job**:
//!
//! - Its input is cut into **morsels**, zero-copy slices of
//!   [`ExecOptions::morsel_rows`] rows.
//! - The WHERE clause is split into its top-level `AND` terms, and terms
//!   reading the same set of columns form one [`PipelineStep`]
//!   ([`build_steps`]); an `OR`, `NOT` or `CASE` term is never split.
//!   Steps run cheapest-and-most-selective first, ranked by
//!   `(1 - selectivity) / cost`; terms that may raise an error run last, in
//!   the query's order.
//! - The job's steps are **lanes**, one per executor thread. Each lane pulls
//!   the next morsel from a shared atomic cursor (morsel-driven
//!   scheduling, after Leis et al., SIGMOD 2014, so skew balances itself),
//!   pushes it through the steps as a [`PipelineBatch`] whose
//!   [`Selection`] narrows step by step (each step reads only its columns
//!   at the rows still selected: late materialisation), then through the
//!   projection or partial aggregation into the lane's share of the
//!   breaker.
//! - Breakers finish in parallel: partial hash tables are cut into radix
//!   partitions by hash and each partition is merged and finished by its
//!   own task; sorted runs are cut into key ranges by sampled splitters and
//!   each range is merged by its own task; top-N lanes keep only rows that
//!   beat their current k-th best key. `f(DISTINCT x)` aggregates become two
//!   aggregations on the same machinery.
//!
//! The seed design chained steps across workers with channels, one
//! channel per step. A worker blocked on its step's input channel is a core
//! doing nothing, and a single filter could only use one core. Here the
//! steps of a morsel are plain calls within a lane, and channels carry only
//! each lane's finished result, so every worker stays busy.
//!
//! A `LIMIT` without `ORDER BY` stops the lanes early: they stop pulling
//! morsels once enough rows were produced. Results come back in the
//! input's order whatever the lanes' timing, since lane outputs are put
//! back in morsel order. Sorts are stable and give the same answer on any
//! number of threads.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use arrow::array::{Int64Array, RecordBatch};
//! use arrow::datatypes::{DataType, Field, Schema};
//! use weir_executor::{ExecutorConfig, PipelineExecutor};
//! use weir_pipeline::{ExecOptions, SourceResolver, TableData, execute};
//! use weir_planner::{
//!     AggregateExpr, AggregateFunction, BinaryOp, Expr, LogicalPlan, ScalarValue, TableSource,
//! };
//!
//! struct OneTable(Arc<TableData>);
//! impl SourceResolver for OneTable {
//!     fn resolve(&self, _source: &TableSource) -> weir_pipeline::Result<Arc<TableData>> {
//!         Ok(Arc::clone(&self.0))
//!     }
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // t(a BIGINT) = 1, 2, 3, 4
//! let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int64, true)]));
//! let batch = RecordBatch::try_new(
//!     Arc::clone(&schema),
//!     vec![Arc::new(Int64Array::from(vec![1, 2, 3, 4]))],
//! )?;
//! let table = OneTable(Arc::new(TableData::new(Arc::clone(&schema), vec![batch])));
//!
//! // SELECT count(*) FROM t WHERE a > 1
//! let scan = LogicalPlan::Scan { source: TableSource::Table("t".into()), schema };
//! let filter = LogicalPlan::Filter {
//!     input: Box::new(scan),
//!     predicate: Expr::binary(
//!         Expr::column(0, "a"),
//!         BinaryOp::Gt,
//!         Expr::Literal(ScalarValue::Int64(1)),
//!     ),
//! };
//! let plan = LogicalPlan::Aggregate {
//!     input: Box::new(filter),
//!     group_by: vec![],
//!     aggregates: vec![AggregateExpr { func: AggregateFunction::CountStar, arg: None, key: None, distinct: false , order_by: Vec::new() }],
//!     schema: Arc::new(Schema::new(vec![Field::new("count_star()", DataType::Int64, false)])),
//! };
//!
//! let executor = PipelineExecutor::new(ExecutorConfig::with_threads(2))?;
//! let out = execute(&plan, &table, &executor, &ExecOptions::default())?;
//! let count = out.batches[0].column(0).as_any().downcast_ref::<Int64Array>().unwrap();
//! assert_eq!(count.value(0), 3);
//! # Ok(())
//! # }
//! ```

mod aggregate;
mod error;
mod execute;
mod fairness;
mod hash;
mod join;
mod memory;
mod options;
mod pipeline;
mod profile;
mod rewrite;
mod shared;
mod sort;
mod source;
mod step;
mod strings;
mod tail;
mod window;
mod zones;

pub use crate::error::{Error, Result};
pub use crate::execute::{QueryOutput, execute, explain};
pub use crate::memory::MemoryAccountant;
pub use crate::options::{DEFAULT_MORSEL_ROWS, ExecOptions, Progress};
pub use crate::profile::{OperatorProfile, QueryProfile};
pub use crate::source::{PartSource, SourceResolver, TableData, series_table};
pub use crate::step::{PipelineBatch, PipelineStep, Selection, build_steps, row_cost, selectivity};
/// Expression evaluation, the `weir-expr` crate (re-exported under its old path).
pub use weir_expr as eval;
