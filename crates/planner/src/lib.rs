//! SQL text to a validated logical plan.
//!
//! `weir-planner` parses SQL with [`sqlparser`], resolves table and column
//! names against a [`Catalog`], checks and coerces types, folds constants,
//! and returns a [`Statement`] holding a [`LogicalPlan`]. It does no I/O and
//! knows nothing of how plans run.
//!
//! [`plan_sql`] is the entry point. It speaks the DuckDB dialect: files are
//! read in place with `read_csv('p')`, `read_parquet('p')` or
//! `FROM 'p.parquet'`; `range(n)` and `generate_series(a, b)` generate
//! rows. Implicit coercions become explicit casts, and constant
//! expressions are folded by the [`ConstantEvaluator`] given to
//! [`plan_sql_with`] (the engine passes the pipeline's evaluator, so a
//! constant computes exactly what it would at run time); [`plan_sql`]
//! folds only structurally (`TRUE AND x` is `x`). The binder builds each
//! query block in the canonical shape documented in [`plan`]; the
//! optimiser then moves filters down, narrows every node to the columns
//! used above it and leaves out projections that only repeat their input.
//!
//! ```
//! use weir_planner::{plan_sql, Catalog, FileFormat, Statement};
//! # use weir_planner::arrow_schema::{DataType, Field, Schema, SchemaRef};
//! # struct Tables;
//! # impl Catalog for Tables {
//! #     fn table_schema(&self, name: &str) -> Option<SchemaRef> {
//! #         name.eq_ignore_ascii_case("lineitem").then(|| {
//! #             SchemaRef::new(Schema::new(vec![
//! #                 Field::new("l_quantity", DataType::Decimal128(15, 2), false),
//! #                 Field::new("l_shipdate", DataType::Date32, false),
//! #             ]))
//! #         })
//! #     }
//! #     fn table_names(&self) -> Vec<String> {
//! #         vec!["lineitem".into()]
//! #     }
//! #     fn file_schema(&self, path: &str, _: FileFormat) -> Result<SchemaRef, String> {
//! #         Err(format!("no file {path}"))
//! #     }
//! # }
//! let catalog = Tables; // any `Catalog`
//! let sql = "SELECT count(*) FROM lineitem \
//!            WHERE l_shipdate >= '1994-01-01' AND l_quantity < 24";
//! let statements = plan_sql(sql, &catalog)?;
//! let [Statement::Query(plan)] = statements.as_slice() else { unreachable!() };
//! assert_eq!(
//!     plan.display_indent(),
//!     "Aggregate: groupBy=[], aggr=[count(*)]\n  \
//!        Filter: ((l_shipdate >= CAST('1994-01-01' AS DATE)) AND (l_quantity < CAST(24 AS DECIMAL(15,2))))\n    \
//!          Scan: lineitem (2 columns)\n"
//! );
//!
//! let err = plan_sql("SELECT l_quantiy FROM lineitem", &catalog).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "Binder Error: Referenced column \"l_quantiy\" not found in FROM clause! \
//!      Candidate bindings: \"l_quantity\" at line 1, column 8"
//! );
//! # Ok::<(), weir_planner::Error>(())
//! ```

mod binder;
pub mod catalog;
mod dialect;
pub mod error;
pub mod expr;
pub mod fold;
pub mod functions;
mod lexer;
mod optimize;
pub mod plan;
pub mod references;
pub mod scalar;
pub mod types;

pub use arrow_schema;
pub use binder::{plan_sql, plan_sql_with};
pub use catalog::{Catalog, Setting, SettingScope, ViewDef};
pub use error::{Error, Result};
pub use expr::{BinaryOp, ColumnRef, Expr, InItems, ScalarFunction};
pub use fold::ConstantEvaluator;
pub use plan::{
    AggregateExpr, AggregateFunction, ColumnDef, Compression, CopyOptions, FileFormat, FileOptions,
    FrameBound, FrameUnits, JoinKind, LogicalPlan, RecursiveCte, SortKey, Statement, TableSource,
    WindowExpr, WindowFrame, WindowFunction, created_table_schema,
};
pub use references::{TableReference, is_single_query, normalize_sql, table_references};
pub use scalar::ScalarValue;
