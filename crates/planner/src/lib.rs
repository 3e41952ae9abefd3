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
//! rows. String literals compared with DATE columns become DATE constants
//! at plan time, and constant expressions are folded, so a plan holds
//! typed, simplified literals. Plans always have the canonical shape
//! documented in [`plan`].
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
//!     "Projection: count(*)\n  \
//!        Aggregate: groupBy=[], aggr=[count(*)]\n    \
//!          Filter: ((l_shipdate >= DATE '1994-01-01') AND (l_quantity < 24.00))\n      \
//!            Scan: lineitem (2 columns)\n"
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
pub mod error;
pub mod expr;
pub mod plan;
pub mod scalar;
pub mod types;

pub use arrow_schema;
pub use binder::plan_sql;
pub use catalog::{Catalog, Setting};
pub use error::{Error, Result};
pub use expr::{BinaryOp, ColumnRef, Expr, ScalarFunction};
pub use plan::{
    AggregateExpr, AggregateFunction, ColumnDef, FileFormat, FileOptions, LogicalPlan, SortKey,
    Statement, TableSource,
};
pub use scalar::ScalarValue;
