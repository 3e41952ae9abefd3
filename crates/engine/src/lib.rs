//! Weir: an embeddable, parallel SQL engine over CSV, Parquet and Arrow.
//!
//! `weir-engine` is the facade: a [`Database`] holds tables in memory as
//! Arrow record batches, plans SQL with `weir-planner`, and runs it with
//! `weir-pipeline` on one `weir-executor` shared by all its queries.
//!
//! ```
//! use weir_engine::Database;
//!
//! # fn main() -> Result<(), weir_engine::Error> {
//! let db = Database::new()?;
//! db.execute("CREATE TABLE t (id INTEGER, name VARCHAR)")?;
//! db.execute("INSERT INTO t VALUES (1, 'ada'), (2, 'grace'), (3, NULL)")?;
//! let result = db.execute("SELECT count(*) AS n, count(name) AS named FROM t WHERE id > 1")?;
//! assert_eq!(result.num_rows(), 1);
//! assert_eq!(result.to_string().trim(), "\
//! +---+-------+
//! | n | named |
//! +---+-------+
//! | 2 | 1     |
//! +---+-------+");
//! # Ok(())
//! # }
//! ```
//!
//! Files are read in place, DuckDB style: `SELECT * FROM 'data.csv'`,
//! `read_csv('data.csv')`, `read_parquet('data.parquet')`; or registered as
//! tables with [`Database::register_csv`] and [`Database::register_parquet`].

mod database;
mod error;
mod load;
mod result;
mod script;
pub mod tpch;

pub use database::{Config, Database, ExecuteOptions, InterruptHandle};
pub use error::{Error, Result};
pub use result::QueryResult;
pub use script::{is_incomplete, split_statements, split_statements_with_offsets};
pub use weir_pipeline::Progress;
pub use weir_planner::types::sql_type_name;

pub use arrow;
