//! Weir: an embeddable, parallel SQL engine over CSV, Parquet and Arrow.
//!
//! `weir-engine` is the facade: a [`Database`] holds tables in memory as
//! Arrow record batches, plans SQL with `weir-planner`, and runs it with
//! `weir-pipeline` on one `weir-executor` shared by all its queries and
//! all its [`Connection`]s.
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
//! Like DuckDB, a database has connections ([`Database::connect`]), which
//! share its tables and executor; the database is its own default
//! connection. Settings are global (`threads`: one value for the database)
//! or per connection (`statement_timeout`: each connection has its own,
//! starting at [`Config::timeout`]); `weir_settings()` shows each one's
//! `scope`:
//!
//! ```
//! use weir_engine::Database;
//!
//! # fn main() -> Result<(), weir_engine::Error> {
//! let db = Database::new()?;
//! let (a, b) = (db.connect(), db.connect());
//! a.execute("CREATE TABLE t AS SELECT range AS x FROM range(10)")?;
//! a.execute("SET statement_timeout = '2s'")?; // `a` only
//! b.execute("SET threads = 2")?; // the whole database
//! let show = "SELECT current_setting('statement_timeout') AS timeout, \
//!             current_setting('threads') AS threads, count(*) AS n FROM t";
//! assert_eq!(a.execute(show)?.to_string().trim(), "\
//! +---------+---------+----+
//! | timeout | threads | n  |
//! +---------+---------+----+
//! | 2.0     | 2       | 10 |
//! +---------+---------+----+");
//! assert_eq!(b.execute(show)?.to_string().trim(), "\
//! +---------+---------+----+
//! | timeout | threads | n  |
//! +---------+---------+----+
//! | 0.0     | 2       | 10 |
//! +---------+---------+----+");
//! a.execute("RESET statement_timeout")?; // back to a's start-up value
//! assert_eq!(a.config().timeout, None);
//! # Ok(())
//! # }
//! ```
//!
//! Files are read in place, DuckDB style: `SELECT * FROM 'data.csv'`,
//! `read_csv('data.csv')`, `read_parquet('data.parquet')`; or registered as
//! tables with [`Database::register_csv`] and [`Database::register_parquet`].

mod csv_sniff;
mod database;
mod error;
mod files;
mod load;
mod result;
mod scan;
mod script;
pub mod tpch;
mod write;

pub use database::{Config, Connection, Database, ExecuteOptions, InterruptHandle};
pub use error::{Error, Result};
pub use result::QueryResult;
pub use script::{is_incomplete, split_statements, split_statements_with_offsets};
pub use weir_pipeline::Progress;
pub use weir_planner::ViewDef;
pub use weir_planner::scalar::format_blob;
pub use weir_planner::types::sql_type_name;
pub use write::write_batches;

pub use arrow;
