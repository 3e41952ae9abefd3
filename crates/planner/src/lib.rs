//! SQL text to a validated logical plan.
//!
//! `weir-planner` parses SQL with [`sqlparser`], resolves table and column
//! names against a [`Catalog`], checks and coerces types, folds constants,
//! and returns a [`Statement`] holding a [`LogicalPlan`]. It does no I/O and
//! knows nothing of how plans run.
//!
//! (The binder, `plan_sql`, is being written.)

mod binder;
pub mod catalog;
pub mod error;
pub mod expr;
pub mod plan;
pub mod scalar;
pub mod types;

pub use arrow_schema;
pub use binder::plan_sql;
pub use catalog::Catalog;
pub use error::{Error, Result};
pub use expr::{BinaryOp, ColumnRef, Expr, ScalarFunction};
pub use plan::{
    AggregateExpr, AggregateFunction, ColumnDef, FileFormat, LogicalPlan, SortKey, Statement,
    TableSource,
};
pub use scalar::ScalarValue;
