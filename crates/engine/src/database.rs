//! The [`Database`] (catalog, executor) and its [`Connection`]s (settings,
//! statement execution).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use arrow::array::{ArrayRef, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use weir_executor::{ExecutorConfig, PipelineExecutor};
use weir_pipeline::{ExecOptions, Progress, SourceResolver, TableData};
use weir_planner::{
    Catalog, FileFormat, FileOptions, LogicalPlan, ScalarValue, Setting, SettingScope, Statement,
    TableSource,
};

use crate::error::{Error, Result};
use crate::load;
use crate::result::QueryResult;

/// Database settings: the start-up values of [`Database::with_config`], or
/// the current ones as a connection sees them ([`Connection::config`]).
#[derive(Clone, Debug)]
pub struct Config {
    /// Threads that run a query (default: all cores), counting the
    /// thread that runs the statement, as DuckDB's `threads` does: from
    /// two on, `threads - 1` executor workers and the statement's own
    /// thread, which works on its query while it waits for it (several
    /// statements running at once each bring their own). Global: one value
    /// for the database and all its connections.
    pub threads: usize,
    /// Per-statement timeout (default: none). A statement past it is
    /// cancelled, stops using CPU, and fails with [`Error::Timeout`]. Per
    /// connection: each starts with this value and may change its own.
    pub timeout: Option<Duration>,
    /// Rows per morsel, the unit of parallel work (default 65,536... see
    /// `weir_pipeline::ExecOptions`).
    pub morsel_rows: usize,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            timeout: None,
            morsel_rows: ExecOptions::default().morsel_rows,
        }
    }
}

/// Per-call options of [`Database::execute_with`] and
/// [`Connection::execute_with`].
#[derive(Clone, Debug, Default)]
pub struct ExecuteOptions {
    /// Counts the morsels of the running statement, for progress bars.
    pub progress: Option<Arc<Progress>>,
}

/// An in-memory database: the catalog and the executor, shared by its
/// connections ([`Database::connect`]).
///
/// A `Database` is also its own *default connection*: [`Database::execute`]
/// and the other statement methods run on it. Cheap to clone: clones share
/// tables, the executor and the default connection (so its settings too),
/// and may run statements from several threads at once.
pub struct Database {
    conn: Connection,
}

impl Clone for Database {
    fn clone(&self) -> Self {
        Self {
            conn: Connection {
                shared: self.conn.shared.clone(),
                local: self.conn.local.clone(),
                running: self.conn.running.clone(),
            },
        }
    }
}

/// A connection to a [`Database`] (a session, as in DuckDB): it sees the
/// database's tables and runs statements on its executor, and has its own
/// per-connection settings (`statement_timeout`), which `SET` and `RESET`
/// on it change for it alone. Global settings (`threads`) belong to the
/// database: a change made through any connection is seen by all.
///
/// `Send` and `Sync`: statements may run on one connection from several
/// threads at once.
pub struct Connection {
    shared: Arc<Shared>,
    local: Arc<Mutex<Local>>,
    /// The cancel flags of the statements running on this connection.
    running: Arc<Mutex<Vec<Arc<AtomicBool>>>>,
}

/// The per-connection settings (scope `LOCAL` in `weir_settings()`).
struct Local {
    timeout: Option<Duration>,
}

struct Shared {
    tables: RwLock<BTreeMap<String, Table>>,
    /// Views by lower-cased name: their queries, bound where they are
    /// read. Tables and views share one namespace.
    views: RwLock<BTreeMap<String, weir_planner::ViewDef>>,
    /// The settings the database was made with: the start-up values of
    /// every connection, and what `RESET` restores.
    initial: Config,
    /// CSV schemas widened by a load past the sniffed sample, so the next
    /// plan of the file uses them (see [`load::read_csv`]).
    csv_schemas: Mutex<HashMap<CsvKey, CsvSchema>>,
    /// The executor; its thread count is the global `threads` setting.
    executor: RwLock<Arc<PipelineExecutor>>,
    /// The global `default_null_order` setting, as DuckDB shows it
    /// (`NULLS_LAST`, ...).
    null_order: RwLock<String>,
}

/// `default_null_order`'s value for what `SET` was given, as DuckDB
/// accepts it.
fn null_order(value: &str) -> Option<&'static str> {
    Some(match value.trim().to_ascii_lowercase().as_str() {
        "nulls_first" | "nulls first" | "first" => "NULLS_FIRST",
        "nulls_last" | "nulls last" | "last" => "NULLS_LAST",
        "nulls_first_on_asc_last_on_desc" | "sqlite" | "mysql" => "NULLS_FIRST_ON_ASC_LAST_ON_DESC",
        "nulls_last_on_asc_first_on_desc" | "postgres" => "NULLS_LAST_ON_ASC_FIRST_ON_DESC",
        _ => return None,
    })
}

/// A CSV file read with some options.
#[derive(Clone, PartialEq, Eq, Hash)]
struct CsvKey {
    path: std::path::PathBuf,
    options: load::CsvOptions,
}

/// The schema a load settled on, valid while the file is unchanged.
struct CsvSchema {
    modified: Option<std::time::SystemTime>,
    len: u64,
    schema: Schema,
}

/// How many times a statement is planned again after a CSV column widened.
const MAX_REPLANS: usize = 3;

#[derive(Clone)]
struct Table {
    /// The name as created (lookups are case-insensitive).
    name: String,
    data: Arc<TableData>,
    /// Estimated distinct values per column name, computed on first use
    /// for the join order; a changed table is a new `Table`, so the cache
    /// holds for this version of the rows only.
    distinct: Arc<Mutex<HashMap<String, Option<f64>>>>,
}

impl Table {
    fn new(name: String, data: Arc<TableData>) -> Self {
        Self {
            name,
            data,
            distinct: Arc::default(),
        }
    }

    /// The estimated number of distinct non-NULL values of `column`.
    fn distinct(&self, column: &str) -> Option<f64> {
        let mut cache = self.distinct.lock().expect("statistics poisoned");
        if let Some(d) = cache.get(column) {
            return *d;
        }
        let index = self.data.schema.index_of(column).ok()?;
        let arrays: Vec<&ArrayRef> = self.data.batches.iter().map(|b| b.column(index)).collect();
        let d = approx_distinct(&arrays);
        cache.insert(column.to_owned(), d);
        d
    }
}

/// A HyperLogLog estimate (4096 registers, about 1.6% error) of the
/// distinct non-NULL values of the arrays, for integer, decimal, date and
/// string columns (`None` for other types): one pass of a cheap hash per
/// value.
fn approx_distinct(arrays: &[&ArrayRef]) -> Option<f64> {
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::{Date32Type, Decimal128Type, Int32Type, Int64Type};
    const BITS: u32 = 12;
    const M: usize = 1 << BITS;
    let mut registers = vec![0u8; M];
    let mut add = |h: u64| {
        // a 64-bit finaliser (murmur3's) spreads the bits
        let mut h = h;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^= h >> 33;
        let slot = (h >> (64 - BITS)) as usize;
        let rank = ((h << BITS) | (1 << (BITS - 1))).leading_zeros() as u8 + 1;
        registers[slot] = registers[slot].max(rank);
    };
    for a in arrays {
        let valid = |i: usize| a.is_valid(i);
        match a.data_type() {
            DataType::Int64 => {
                let v = a.as_primitive::<Int64Type>();
                (0..v.len())
                    .filter(|&i| valid(i))
                    .for_each(|i| add(v.value(i) as u64));
            }
            DataType::Int32 => {
                let v = a.as_primitive::<Int32Type>();
                (0..v.len())
                    .filter(|&i| valid(i))
                    .for_each(|i| add(v.value(i) as u64));
            }
            DataType::Date32 => {
                let v = a.as_primitive::<Date32Type>();
                (0..v.len())
                    .filter(|&i| valid(i))
                    .for_each(|i| add(v.value(i) as u64));
            }
            DataType::Decimal128(..) => {
                let v = a.as_primitive::<Decimal128Type>();
                (0..v.len()).filter(|&i| valid(i)).for_each(|i| {
                    let x = v.value(i);
                    add((x as u64) ^ ((x >> 64) as u64).rotate_left(29))
                });
            }
            DataType::Utf8 => {
                let v = a.as_string::<i32>();
                (0..v.len()).filter(|&i| valid(i)).for_each(|i| {
                    // FNV-1a over the bytes
                    let h = v.value(i).bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
                    });
                    add(h)
                });
            }
            _ => return None,
        }
    }
    let m = M as f64;
    let sum: f64 = registers.iter().map(|&r| 2f64.powi(-i32::from(r))).sum();
    let raw = 0.7213 / (1.0 + 1.079 / m) * m * m / sum;
    let zeros = registers.iter().filter(|&&r| r == 0).count();
    // few values: linear counting is exact enough
    Some(if raw <= 2.5 * m && zeros > 0 {
        m * (m / zeros as f64).ln()
    } else {
        raw
    })
}

/// Cancels the statements running on one [`Connection`] (or on a
/// [`Database`]'s default connection) from another thread (a shell's
/// Ctrl-C handler, say), as DuckDB's `interrupt()` does.
#[derive(Clone)]
pub struct InterruptHandle {
    running: Arc<Mutex<Vec<Arc<AtomicBool>>>>,
}

impl InterruptHandle {
    /// Cancels every statement running now; they fail with
    /// [`Error::Cancelled`]. Statements started later are not affected.
    pub fn interrupt(&self) {
        for flag in self.running.lock().expect("running list poisoned").iter() {
            flag.store(true, Ordering::Release);
        }
    }
}

/// The executor for `threads` threads, DuckDB's way: the thread that runs
/// a statement is one of them. From two threads on, `threads - 1` workers
/// and each statement's own thread, which works on its query while it
/// waits for it; one thread is one worker (a statement's thread then only
/// waits: a query is never run on the caller's thread alone).
fn new_executor(threads: usize) -> Result<PipelineExecutor> {
    if threads == 0 {
        return Err(Error::InvalidInput("threads must be at least 1".into()));
    }
    let waiters_work = threads >= 2;
    Ok(PipelineExecutor::new(ExecutorConfig {
        threads: threads - usize::from(waiters_work),
        thread_name: "weir".into(),
        waiters_work,
        ..ExecutorConfig::default()
    })?)
}

impl Database {
    /// An empty in-memory database using every core.
    pub fn new() -> Result<Self> {
        Self::with_config(Config::default())
    }

    /// An empty in-memory database with these settings: `threads` for the
    /// database, `timeout` as the start-up statement timeout of every
    /// connection (the default one included).
    pub fn with_config(config: Config) -> Result<Self> {
        if config.morsel_rows == 0 {
            return Err(Error::InvalidInput("morsel_rows must be at least 1".into()));
        }
        let executor = new_executor(config.threads)?;
        let shared = Arc::new(Shared {
            tables: RwLock::new(BTreeMap::new()),
            views: RwLock::new(BTreeMap::new()),
            initial: config,
            csv_schemas: Mutex::new(HashMap::new()),
            executor: RwLock::new(Arc::new(executor)),
            null_order: RwLock::new("NULLS_LAST".into()),
        });
        Ok(Self {
            conn: Connection::new(shared),
        })
    }

    /// A new connection to this database, with its own per-connection
    /// settings at their start-up values (those of [`Database::with_config`]).
    pub fn connect(&self) -> Connection {
        Connection::new(self.conn.shared.clone())
    }

    /// The current settings of the default connection.
    pub fn config(&self) -> Config {
        self.conn.config()
    }

    /// Sets the number of worker threads: a global setting, for every
    /// connection. See [`Connection::set_threads`].
    pub fn set_threads(&self, threads: usize) -> Result<()> {
        self.conn.set_threads(threads)
    }

    /// Sets the default connection's statement timeout (`None`: no limit).
    pub fn set_timeout(&self, timeout: Option<Duration>) {
        self.conn.set_timeout(timeout)
    }

    /// A handle that cancels the default connection's running statements
    /// (those of [`Database::execute`] and clones) from another thread;
    /// statements of other connections are not affected.
    pub fn interrupt_handle(&self) -> InterruptHandle {
        self.conn.interrupt_handle()
    }

    /// Runs every statement of `sql` in order on the default connection and
    /// returns the result of the last one. Stops at the first error.
    pub fn execute(&self, sql: &str) -> Result<QueryResult> {
        self.conn.execute(sql)
    }

    /// [`Database::execute`] with per-call options.
    pub fn execute_with(&self, sql: &str, options: &ExecuteOptions) -> Result<QueryResult> {
        self.conn.execute_with(sql, options)
    }

    /// Registers `batches` as table `name`; see
    /// [`Connection::register_batches`].
    pub fn register_batches(
        &self,
        name: &str,
        schema: SchemaRef,
        batches: Vec<RecordBatch>,
    ) -> Result<()> {
        self.conn.register_batches(name, schema, batches)
    }

    /// Loads the CSV file at `path` (header row, inferred types) as table
    /// `name`.
    pub fn register_csv(&self, name: &str, path: impl AsRef<Path>) -> Result<()> {
        self.conn.register_csv(name, path)
    }

    /// Loads the Parquet file at `path` as table `name`.
    pub fn register_parquet(&self, name: &str, path: impl AsRef<Path>) -> Result<()> {
        self.conn.register_parquet(name, path)
    }

    /// The names of the tables, sorted.
    pub fn table_names(&self) -> Vec<String> {
        self.conn.table_names()
    }

    /// Names of all views, sorted.
    pub fn view_names(&self) -> Vec<String> {
        self.conn.view_names()
    }

    /// View `name` (case-insensitive): its name, query and column names.
    pub fn view(&self, name: &str) -> Option<weir_planner::ViewDef> {
        self.conn.view(name)
    }

    /// The schema of table `name` (case-insensitive).
    pub fn table_schema(&self, name: &str) -> Option<SchemaRef> {
        self.conn.table_schema(name)
    }

    /// The settings as the default connection sees them; see
    /// [`Connection::settings`].
    pub fn settings(&self) -> Vec<Setting> {
        self.conn.settings()
    }

    #[cfg(test)]
    fn executor(&self) -> Arc<PipelineExecutor> {
        self.conn.executor()
    }
}

impl Connection {
    fn new(shared: Arc<Shared>) -> Self {
        let local = Local {
            timeout: shared.initial.timeout,
        };
        Self {
            shared,
            local: Arc::new(Mutex::new(local)),
            running: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// The current settings, as this connection sees them.
    pub fn config(&self) -> Config {
        Config {
            threads: self.executor().parallelism(),
            timeout: self.local.lock().expect("settings poisoned").timeout,
            morsel_rows: self.shared.initial.morsel_rows,
        }
    }

    /// Sets the number of worker threads: a global setting, seen by every
    /// connection of the database.
    ///
    /// Statements never wait for the switch: the new executor is started
    /// before any lock is taken and swapped in under a write lock held only
    /// for the swap; statements starting after it use the new executor,
    /// statements already running finish on the old one. The old executor
    /// is dropped after the lock is released: if no running statement still
    /// holds it, this call waits while it drains its queued work and joins
    /// its threads; otherwise the last such statement does, as it ends.
    /// Must not be called from a step running on this database's executor.
    pub fn set_threads(&self, threads: usize) -> Result<()> {
        let executor = Arc::new(new_executor(threads)?);
        let old = std::mem::replace(
            &mut *self
                .shared
                .executor
                .write()
                .expect("executor lock poisoned"),
            executor,
        );
        // Outside every lock: dropping the last handle joins its threads.
        drop(old);
        Ok(())
    }

    /// Sets this connection's statement timeout (`None`: no limit).
    pub fn set_timeout(&self, timeout: Option<Duration>) {
        self.local.lock().expect("settings poisoned").timeout = timeout;
    }

    /// A handle that cancels this connection's running statements from
    /// another thread; statements of other connections are not affected.
    pub fn interrupt_handle(&self) -> InterruptHandle {
        InterruptHandle {
            running: self.running.clone(),
        }
    }

    /// Runs every statement of `sql` in order and returns the result of the
    /// last one. Stops at the first error.
    pub fn execute(&self, sql: &str) -> Result<QueryResult> {
        self.execute_with(sql, &ExecuteOptions::default())
    }

    /// [`Connection::execute`] with per-call options.
    pub fn execute_with(&self, sql: &str, options: &ExecuteOptions) -> Result<QueryResult> {
        let statements = crate::script::split_statements(sql);
        if statements.is_empty() {
            return Err(Error::Plan(weir_planner::Error::Bind(
                "no statement to execute".into(),
            )));
        }
        let mut last = QueryResult::no_rows(None);
        for text in &statements {
            let catalog = CatalogView { db: self };
            let folder = weir_pipeline::eval::ConstantFolder;
            let mut replans = 0;
            'plan: loop {
                for statement in weir_planner::plan_sql_with(text, &catalog, Some(&folder))? {
                    match self.run_statement(statement, options) {
                        Ok(r) => last = r,
                        // a CSV column widened past the sniffed sample: plan
                        // again with the wider type
                        Err(Error::SchemaChanged) if replans < MAX_REPLANS => {
                            replans += 1;
                            continue 'plan;
                        }
                        Err(e) => return Err(e),
                    }
                }
                break;
            }
        }
        Ok(last)
    }

    /// Registers `batches` as table `name`. Columns are stored with Weir's
    /// types (e.g. `Utf8View` and `LargeUtf8` as VARCHAR, `Float32` as
    /// DOUBLE); types Weir cannot store are an error naming the column.
    pub fn register_batches(
        &self,
        name: &str,
        schema: SchemaRef,
        batches: Vec<RecordBatch>,
    ) -> Result<()> {
        if let Some(b) = batches
            .iter()
            .find(|b| b.schema().fields() != schema.fields())
        {
            return Err(Error::InvalidInput(format!(
                "a batch for table \"{name}\" has schema {:?}, expected {:?}",
                b.schema(),
                schema
            )));
        }
        let data = load::normalize(schema, batches)?;
        self.create_table(name, data, false)
    }

    /// Loads the CSV file at `path` (header row, inferred types) as table
    /// `name`.
    pub fn register_csv(&self, name: &str, path: impl AsRef<Path>) -> Result<()> {
        let data = self.load(path.as_ref(), FileFormat::Csv)?;
        self.create_table(name, data, false)
    }

    /// Loads the Parquet file at `path` as table `name`.
    pub fn register_parquet(&self, name: &str, path: impl AsRef<Path>) -> Result<()> {
        let data = self.load(path.as_ref(), FileFormat::Parquet)?;
        self.create_table(name, data, false)
    }

    /// Reads a file on the executor's workers, as a query would.
    fn load(&self, path: &Path, format: FileFormat) -> Result<TableData> {
        let path = path.to_str().ok_or_else(|| {
            Error::InvalidInput(format!("the path {} is not UTF-8", path.display()))
        })?;
        let resolver = Resolver::new(self, &ExecOptions::default(), false);
        let mut widened = 0;
        loop {
            match resolver
                .load_file(
                    path,
                    format,
                    &FileOptions::default(),
                    &[],
                    load::ParquetReads::default(),
                )
                .map(|(table, ..)| table)
            {
                // the wider schema is remembered: read again with it
                Err(Error::SchemaChanged) if widened < MAX_REPLANS => widened += 1,
                other => return other,
            }
        }
    }

    /// Names of all tables, sorted.
    pub fn table_names(&self) -> Vec<String> {
        let tables = self.shared.tables.read().expect("catalog poisoned");
        tables.values().map(|t| t.name.clone()).collect()
    }

    /// Names of all views, sorted.
    pub fn view_names(&self) -> Vec<String> {
        let views = self.shared.views.read().expect("catalog poisoned");
        views.values().map(|v| v.name.clone()).collect()
    }

    /// View `name` (case-insensitive): its name, query and column names.
    pub fn view(&self, name: &str) -> Option<weir_planner::ViewDef> {
        let views = self.shared.views.read().expect("catalog poisoned");
        views.get(&name.to_lowercase()).cloned()
    }

    /// The schema of table `name` (case-insensitive).
    pub fn table_schema(&self, name: &str) -> Option<SchemaRef> {
        self.table(name).map(|t| t.data.schema.clone())
    }

    fn table(&self, name: &str) -> Option<Table> {
        let tables = self.shared.tables.read().expect("catalog poisoned");
        tables.get(&name.to_lowercase()).cloned()
    }

    fn create_table(&self, name: &str, data: TableData, or_replace: bool) -> Result<()> {
        let key = name.to_lowercase();
        if self.view(&key).is_some() {
            return Err(Error::Catalog(format!(
                "View with name \"{name}\" already exists!"
            )));
        }
        let mut tables = self.shared.tables.write().expect("catalog poisoned");
        if !or_replace && tables.contains_key(&key) {
            return Err(Error::Catalog(format!(
                "Table with name \"{name}\" already exists!"
            )));
        }
        tables.insert(key, Table::new(name.to_string(), Arc::new(data)));
        Ok(())
    }

    /// Rebuilds table `name` as the binder planned it: column `k` is old
    /// column `columns[k]`, or all NULL; renamed to `new_name`.
    fn alter_table(
        &self,
        name: &str,
        new_name: &str,
        schema: SchemaRef,
        columns: &[Option<usize>],
        if_exists: bool,
    ) -> Result<()> {
        let mut tables = self.shared.tables.write().expect("catalog poisoned");
        let key = name.to_lowercase();
        let Some(old) = tables.get(&key) else {
            if if_exists {
                return Ok(());
            }
            return Err(Error::Catalog(format!(
                "Table with name {name} does not exist!"
            )));
        };
        let new_key = new_name.to_lowercase();
        if new_key != key && tables.contains_key(&new_key) {
            return Err(Error::Catalog(format!(
                "Could not rename \"{name}\" to \"{new_name}\": another entry with this name already exists!"
            )));
        }
        let mut batches = Vec::with_capacity(old.data.batches.len());
        for b in &old.data.batches {
            let mut out: Vec<ArrayRef> = Vec::with_capacity(columns.len());
            for (field, source) in schema.fields().iter().zip(columns) {
                out.push(match source {
                    Some(i) => b.column(*i).clone(),
                    None if !field.is_nullable() && b.num_rows() > 0 => {
                        return Err(Error::Constraint(format!(
                            "NOT NULL constraint failed: {}.{}",
                            old.name,
                            field.name()
                        )));
                    }
                    None => arrow::array::new_null_array(field.data_type(), b.num_rows()),
                });
            }
            batches.push(
                RecordBatch::try_new(schema.clone(), out)
                    .map_err(|e| Error::InvalidInput(format!("ALTER TABLE {name}: {e}")))?,
            );
        }
        let table = Table::new(
            new_name.to_string(),
            Arc::new(TableData::new(schema, batches)),
        );
        tables.remove(&key);
        tables.insert(new_key, table);
        Ok(())
    }

    /// Stores `batches` as the rows of `table` (UPDATE, DELETE), checking
    /// NOT NULL; fails if the table changed since `before` was read (a
    /// statement of another connection ran in between).
    fn replace_rows(
        &self,
        table: &str,
        before: Option<Table>,
        batches: Vec<RecordBatch>,
        what: &str,
    ) -> Result<()> {
        let mut tables = self.shared.tables.write().expect("catalog poisoned");
        let Some(existing) = tables.get_mut(&table.to_lowercase()) else {
            return Err(Error::Catalog(format!(
                "Table with name {table} does not exist!"
            )));
        };
        if !before.is_some_and(|b| Arc::ptr_eq(&b.data, &existing.data)) {
            return Err(Error::InvalidInput(format!(
                "{what} on \"{table}\" conflicts with a change made to it while it ran; run it again"
            )));
        }
        let schema = existing.data.schema.clone();
        let mut out = Vec::with_capacity(batches.len());
        for b in batches.into_iter().filter(|b| b.num_rows() > 0) {
            for (field, column) in schema.fields().iter().zip(b.columns()) {
                if !field.is_nullable() && column.null_count() > 0 {
                    return Err(Error::Constraint(format!(
                        "NOT NULL constraint failed: {}.{}",
                        existing.name,
                        field.name()
                    )));
                }
            }
            out.push(
                RecordBatch::try_new(schema.clone(), b.columns().to_vec())
                    .map_err(|e| Error::InvalidInput(format!("{what} of \"{table}\": {e}")))?,
            );
        }
        *existing = Table::new(existing.name.clone(), Arc::new(TableData::new(schema, out)));
        Ok(())
    }

    fn run_statement(&self, statement: Statement, options: &ExecuteOptions) -> Result<QueryResult> {
        match statement {
            Statement::Query(plan) => {
                let out = self.run_plan(&plan, false, options)?;
                Ok(QueryResult::rows(out.schema, out.batches))
            }
            Statement::Explain { analyze, plan } => {
                let text = if analyze {
                    let out = self.run_plan(&plan, true, options)?;
                    let mut text = plan.display_indent();
                    if let Some(profile) = out.profile {
                        text.push_str(&profile.to_string());
                    }
                    text
                } else {
                    // a dry run: files give their schemas, never their rows
                    let executor = self.executor();
                    let exec_options = self.exec_options(false, options, None);
                    let resolver = Resolver::new(self, &exec_options, true);
                    weir_pipeline::explain(&plan, &resolver, &executor, &exec_options)?
                };
                Ok(text_result("explain", text.lines()))
            }
            Statement::CreateTable {
                name,
                schema,
                if_not_exists,
                or_replace,
            } => {
                if if_not_exists && self.table(&name).is_some() {
                    return Ok(QueryResult::no_rows(None));
                }
                self.create_table(&name, TableData::new(schema, Vec::new()), or_replace)?;
                Ok(QueryResult::no_rows(None))
            }
            Statement::CreateTableAs {
                name,
                plan,
                if_not_exists,
                or_replace,
            } => {
                if self.table(&name).is_some() {
                    if if_not_exists {
                        return Ok(QueryResult::no_rows(None));
                    }
                    if !or_replace {
                        return Err(Error::Catalog(format!(
                            "Table with name \"{name}\" already exists!"
                        )));
                    }
                }
                let out = self.run_plan(&plan, false, options)?;
                let rows = out.batches.iter().map(|b| b.num_rows() as u64).sum();
                let schema = weir_planner::created_table_schema(&out.schema);
                let data = load::normalize(schema, out.batches)?;
                self.create_table(&name, data, or_replace)?;
                Ok(QueryResult::no_rows(Some(rows)))
            }
            Statement::Copy {
                plan,
                path,
                format,
                options: copy,
            } => {
                let out = self.run_plan(&plan, false, options)?;
                let write = if copy.partition_by.is_empty() {
                    crate::write::write_batches
                } else {
                    crate::write::write_partitioned
                };
                let rows = write(Path::new(&path), format, &copy, &out.schema, &out.batches)?;
                Ok(QueryResult::no_rows(Some(rows)))
            }
            Statement::Insert { table, plan } => {
                let out = self.run_plan(&plan, false, options)?;
                let rows: u64 = out.batches.iter().map(|b| b.num_rows() as u64).sum();
                let mut tables = self.shared.tables.write().expect("catalog poisoned");
                let key = table.to_lowercase();
                let Some(existing) = tables.get_mut(&key) else {
                    return Err(Error::Catalog(format!(
                        "Table with name {table} does not exist!"
                    )));
                };
                let schema = existing.data.schema.clone();
                let mut batches = existing.data.batches.clone();
                for b in out.batches.into_iter().filter(|b| b.num_rows() > 0) {
                    for (field, column) in schema.fields().iter().zip(b.columns()) {
                        if !field.is_nullable() && column.null_count() > 0 {
                            return Err(Error::Constraint(format!(
                                "NOT NULL constraint failed: {}.{}",
                                existing.name,
                                field.name()
                            )));
                        }
                    }
                    batches.push(
                        RecordBatch::try_new(schema.clone(), b.columns().to_vec()).map_err(
                            |e| Error::InvalidInput(format!("INSERT into \"{table}\": {e}")),
                        )?,
                    );
                }
                *existing = Table::new(
                    existing.name.clone(),
                    Arc::new(TableData::new(schema, batches)),
                );
                Ok(QueryResult::no_rows(Some(rows)))
            }
            Statement::Update { table, plan } => {
                let before = self.table(&table);
                let out = self.run_plan(&plan, false, options)?;
                let mut updated = 0u64;
                let mut batches = Vec::with_capacity(out.batches.len());
                for b in out.batches {
                    let n = b.num_columns() - 1;
                    let flags = arrow::array::AsArray::as_boolean(b.column(n));
                    updated += flags.true_count() as u64;
                    batches.push(b.project(&(0..n).collect::<Vec<_>>())?);
                }
                self.replace_rows(&table, before, batches, "UPDATE")?;
                Ok(QueryResult::no_rows(Some(updated)))
            }
            Statement::Delete { table, plan } => {
                let before = self.table(&table);
                let old_rows: u64 = before.as_ref().map_or(0, |t| {
                    t.data.batches.iter().map(|b| b.num_rows() as u64).sum()
                });
                let out = self.run_plan(&plan, false, options)?;
                let kept: u64 = out.batches.iter().map(|b| b.num_rows() as u64).sum();
                self.replace_rows(&table, before, out.batches, "DELETE")?;
                Ok(QueryResult::no_rows(Some(old_rows - kept)))
            }
            Statement::AlterTable {
                name,
                new_name,
                schema,
                columns,
                if_exists,
            } => {
                self.alter_table(&name, &new_name, schema, &columns, if_exists)?;
                Ok(QueryResult::no_rows(None))
            }
            Statement::CreateView {
                view,
                or_replace,
                if_not_exists,
            } => {
                let key = view.name.to_lowercase();
                if self.table(&key).is_some() {
                    return Err(Error::Catalog(format!(
                        "Table with name \"{}\" already exists!",
                        view.name
                    )));
                }
                let mut views = self.shared.views.write().expect("catalog poisoned");
                if views.contains_key(&key) && !or_replace {
                    if if_not_exists {
                        return Ok(QueryResult::no_rows(None));
                    }
                    return Err(Error::Catalog(format!(
                        "View with name \"{}\" already exists!",
                        view.name
                    )));
                }
                views.insert(key, view);
                Ok(QueryResult::no_rows(None))
            }
            Statement::DropView { name, if_exists } => {
                let removed = self
                    .shared
                    .views
                    .write()
                    .expect("catalog poisoned")
                    .remove(&name.to_lowercase());
                if removed.is_none() && !if_exists {
                    return Err(Error::Catalog(format!(
                        "View with name {name} does not exist!"
                    )));
                }
                Ok(QueryResult::no_rows(None))
            }
            Statement::DropTable { name, if_exists } => {
                let removed = self
                    .shared
                    .tables
                    .write()
                    .expect("catalog poisoned")
                    .remove(&name.to_lowercase());
                if removed.is_none() && !if_exists {
                    return Err(Error::Catalog(format!(
                        "Table with name {name} does not exist!"
                    )));
                }
                Ok(QueryResult::no_rows(None))
            }
            Statement::Set { name, value } => {
                self.set(&name, &value)?;
                Ok(QueryResult::no_rows(None))
            }
            Statement::Reset { name } => {
                let initial = &self.shared.initial;
                let names = match name {
                    Some(n) => vec![n],
                    None => self.settings().into_iter().map(|s| s.name).collect(),
                };
                for name in names {
                    match name.as_str() {
                        "threads" => {
                            if self.config().threads != initial.threads {
                                self.set_threads(initial.threads)?;
                            }
                        }
                        "statement_timeout" => self.set_timeout(initial.timeout),
                        "default_null_order" => self.set(
                            "default_null_order",
                            &ScalarValue::Utf8("nulls_last".into()),
                        )?,
                        other => {
                            return Err(Error::Catalog(format!(
                                "unrecognized configuration parameter \"{other}\""
                            )));
                        }
                    }
                }
                Ok(QueryResult::no_rows(None))
            }
            Statement::Dbgen { sf } => {
                self.dbgen(sf, options)?;
                Ok(QueryResult::no_rows(None))
            }
            Statement::ShowTables => {
                // views too, as DuckDB lists them
                let mut names = self.table_names();
                names.extend(self.view_names());
                names.sort_by_key(|n| n.to_lowercase());
                Ok(text_result("name", names.iter().map(String::as_str)))
            }
            Statement::Describe { schema, .. } => {
                let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
                let types: Vec<String> = schema
                    .fields()
                    .iter()
                    .map(|f| {
                        // a file's column of a type Weir does not support
                        match f.metadata().get(weir_planner::catalog::UNSUPPORTED_TYPE) {
                            Some(t) => t.clone(),
                            None => weir_planner::types::sql_type_name(f.data_type()),
                        }
                    })
                    .collect();
                let nulls: Vec<&str> = schema
                    .fields()
                    .iter()
                    .map(|f| if f.is_nullable() { "YES" } else { "NO" })
                    .collect();
                let out_schema = Arc::new(Schema::new(vec![
                    Field::new("column_name", DataType::Utf8, false),
                    Field::new("column_type", DataType::Utf8, false),
                    Field::new("null", DataType::Utf8, false),
                ]));
                let columns: Vec<ArrayRef> = vec![
                    Arc::new(StringArray::from(names)),
                    Arc::new(StringArray::from(types)),
                    Arc::new(StringArray::from(nulls)),
                ];
                let batch = RecordBatch::try_new(out_schema.clone(), columns)?;
                Ok(QueryResult::rows(out_schema, vec![batch]))
            }
        }
    }

    /// The settings `SET`, `RESET`, `PRAGMA`, `current_setting()` and
    /// `weir_settings()` know, with their values as this connection sees
    /// them. As in DuckDB, `threads` is global (one value for the database,
    /// [`SettingScope::Global`]); `statement_timeout` is per connection
    /// ([`SettingScope::Local`]), starting at [`Config::timeout`].
    pub fn settings(&self) -> Vec<Setting> {
        let config = self.config();
        vec![
            Setting {
                name: "threads".into(),
                aliases: vec!["worker_threads".into()],
                value: ScalarValue::Int64(config.threads as i64),
                description: "The number of worker threads queries run on".into(),
                scope: SettingScope::Global,
            },
            Setting {
                name: "statement_timeout".into(),
                aliases: vec!["timeout".into()],
                value: ScalarValue::Float64(config.timeout.map_or(0.0, |t| t.as_secs_f64())),
                description: "Seconds a statement may run before it is cancelled (0: no limit); \
                              a number, or a string with a unit: '500ms', '2s', '1min'"
                    .into(),
                scope: SettingScope::Local,
            },
            Setting {
                name: "default_null_order".into(),
                aliases: vec!["null_order".into()],
                value: ScalarValue::Utf8(
                    self.shared
                        .null_order
                        .read()
                        .expect("settings poisoned")
                        .clone(),
                ),
                description: "The NULL ordering used when none is specified: NULLS_FIRST, \
                              NULLS_LAST (the default), NULLS_FIRST_ON_ASC_LAST_ON_DESC \
                              (or SQLite, MySQL), NULLS_LAST_ON_ASC_FIRST_ON_DESC (or Postgres)"
                    .into(),
                scope: SettingScope::Global,
            },
        ]
    }

    /// `SET name = value` for a setting of [`Connection::settings`].
    fn set(&self, name: &str, value: &ScalarValue) -> Result<()> {
        let invalid = |what: &str| {
            Error::InvalidInput(format!(
                "SET {name}: {what}, got {value} ({})",
                weir_planner::types::sql_type_name(&value.data_type())
            ))
        };
        match name {
            "threads" => {
                let n = match value {
                    ScalarValue::Int32(n) => i64::from(*n),
                    ScalarValue::Int64(n) => *n,
                    _ => return Err(invalid("expected a positive integer")),
                };
                if n < 1 {
                    return Err(invalid("expected a positive integer"));
                }
                let n = usize::try_from(n).map_err(|_| invalid("too many threads"))?;
                if n != self.config().threads {
                    self.set_threads(n)?;
                }
                Ok(())
            }
            "statement_timeout" => {
                let secs = match value {
                    ScalarValue::Int32(n) => f64::from(*n),
                    ScalarValue::Int64(n) => *n as f64,
                    ScalarValue::Float64(x) => *x,
                    ScalarValue::Decimal128(..) => value
                        .to_string()
                        .parse()
                        .map_err(|_| invalid("expected seconds"))?,
                    ScalarValue::Utf8(s) => parse_duration(s).ok_or_else(|| {
                        invalid("expected seconds or a duration such as '500ms', '2s', '1min'")
                    })?,
                    _ => return Err(invalid("expected seconds")),
                };
                if !secs.is_finite() || secs < 0.0 {
                    return Err(invalid("expected a number of seconds, 0 or more"));
                }
                self.set_timeout((secs > 0.0).then(|| Duration::from_secs_f64(secs)));
                Ok(())
            }
            "default_null_order" => {
                let ScalarValue::Utf8(s) = value else {
                    return Err(invalid("expected a string"));
                };
                let order = null_order(s).ok_or_else(|| {
                    Error::InvalidInput(format!(
                        "Unrecognized parameter for option NULL_ORDER \"{s}\", expected either NULLS FIRST, NULLS LAST, SQLite, MySQL or Postgres"
                    ))
                })?;
                *self.shared.null_order.write().expect("settings poisoned") = order.into();
                Ok(())
            }
            other => Err(Error::Catalog(format!(
                "unrecognized configuration parameter \"{other}\""
            ))),
        }
    }

    fn executor(&self) -> Arc<PipelineExecutor> {
        self.shared
            .executor
            .read()
            .expect("executor lock poisoned")
            .clone()
    }

    fn exec_options(
        &self,
        analyze: bool,
        options: &ExecuteOptions,
        cancel: Option<Arc<AtomicBool>>,
    ) -> ExecOptions {
        let config = self.config();
        ExecOptions {
            morsel_rows: config.morsel_rows,
            analyze,
            deadline: config.timeout.map(|t| Instant::now() + t),
            cancel,
            progress: options.progress.clone(),
        }
    }

    /// `CALL dbgen(sf = ...)`: generates the eight TPC-H tables, each in
    /// parts on the executor's workers (Ctrl-C and the timeout stop it
    /// between batches), and creates them; a table that already exists is
    /// an error and nothing is created.
    fn dbgen(&self, sf: f64, options: &ExecuteOptions) -> Result<()> {
        if let Some(t) = crate::tpch::TABLES.iter().find(|t| self.table(t).is_some()) {
            return Err(Error::Catalog(format!(
                "Table with name \"{t}\" already exists!"
            )));
        }
        let cancel = Arc::new(AtomicBool::new(false));
        self.running
            .lock()
            .expect("running list poisoned")
            .push(cancel.clone());
        let exec_options = self.exec_options(false, options, Some(cancel.clone()));
        let resolver = Resolver::new(self, &exec_options, false);
        let generated = crate::tpch::TABLES
            .iter()
            .map(|t| {
                let data = crate::tpch::generate_with(t, sf, &resolver)?;
                Ok((*t, data))
            })
            .collect::<Result<Vec<_>>>();
        self.running
            .lock()
            .expect("running list poisoned")
            .retain(|f| !Arc::ptr_eq(f, &cancel));
        for (name, (schema, batches)) in generated? {
            let data = load::normalize(schema, batches)?;
            self.create_table(name, data, false)?;
        }
        Ok(())
    }

    fn run_plan(
        &self,
        plan: &LogicalPlan,
        analyze: bool,
        options: &ExecuteOptions,
    ) -> Result<weir_pipeline::QueryOutput> {
        self.run_plan_with(plan, analyze, options, &[])
    }

    /// [`Connection::run_plan`] inside the recursive terms of recursive
    /// CTEs: `work` holds the rows of their last rounds (by CTE id).
    fn run_plan_with(
        &self,
        plan: &LogicalPlan,
        analyze: bool,
        options: &ExecuteOptions,
        work: &[(usize, Arc<TableData>)],
    ) -> Result<weir_pipeline::QueryOutput> {
        let mut recursive = Vec::new();
        self.recursive_ctes(plan, options, work, &mut recursive)?;
        let cancel = Arc::new(AtomicBool::new(false));
        self.running
            .lock()
            .expect("running list poisoned")
            .push(cancel.clone());
        let executor = self.executor();
        let exec_options = self.exec_options(analyze, options, Some(cancel.clone()));
        let mut resolver = Resolver::new(self, &exec_options, false).with_plan(plan);
        resolver.recursive = recursive;
        resolver.work = work.to_vec();
        let result = weir_pipeline::execute(plan, &resolver, &executor, &exec_options);
        self.running
            .lock()
            .expect("running list poisoned")
            .retain(|f| !Arc::ptr_eq(f, &cancel));
        let scans = resolver.scans.into_inner().expect("scans poisoned");
        for s in &scans {
            let widened = s.scan.widened.lock().expect("widened poisoned").take();
            if let (Some(schema), Some(key)) = (widened, &s.csv) {
                // a CSV value did not fit: plan again with the wider types
                self.remember_csv_schema(key.clone(), schema);
                return Err(Error::SchemaChanged);
            }
        }
        let loads = resolver.loads.into_inner().expect("loads poisoned");
        if let Some(e) = loads.iter().find_map(|l| l.failure.as_ref()) {
            // the load's own error (a timeout, Ctrl-C, a widened schema)
            // rather than the pipeline's rendering of it
            return Err(e.clone().into_error());
        }
        let mut out = result?;
        if let Some(profile) = &mut out.profile {
            // loading files happens before the scan: show it first
            let reads = loads.into_iter().map(|l| weir_pipeline::OperatorProfile {
                name: l.name,
                rows_in: l.rows,
                rows_out: l.rows,
                time: l.time,
                ..Default::default()
            });
            let scans = scans.iter().map(|s| weir_pipeline::OperatorProfile {
                name: s.scan.describe(&s.path, s.files),
                rows_in: s.scan.stats.rows.load(Ordering::Relaxed),
                rows_out: s.scan.stats.rows.load(Ordering::Relaxed),
                time: s.scan.time(),
                morsels_main: s.scan.parts_read(),
                parallel: true,
                ..Default::default()
            });
            profile.operators.splice(0..0, reads.chain(scans));
        }
        Ok(out)
    }

    /// Computes the recursive CTEs `plan` reads (not those only their own
    /// terms read: running those computes them) into `out`, by id, each
    /// once.
    fn recursive_ctes(
        &self,
        plan: &LogicalPlan,
        options: &ExecuteOptions,
        work: &[(usize, Arc<TableData>)],
        out: &mut Vec<(usize, Arc<TableData>)>,
    ) -> Result<()> {
        match plan {
            LogicalPlan::Scan {
                source: TableSource::Recursive(cte),
                ..
            } => {
                if !out.iter().any(|(id, _)| *id == cte.id) {
                    let rows = self.run_recursive(cte, options, work)?;
                    out.push((cte.id, rows));
                }
                Ok(())
            }
            other => other
                .children()
                .into_iter()
                .try_for_each(|c| self.recursive_ctes(c, options, work, out)),
        }
    }

    /// The rows of recursive CTE `cte`: its anchor's, then round after
    /// round its recursive term's over the rows the last round added,
    /// until a round adds none (with UNION, rows given before are not
    /// added again). The statement's timeout and Ctrl-C stop it between
    /// rounds as within them.
    fn run_recursive(
        &self,
        cte: &weir_planner::RecursiveCte,
        options: &ExecuteOptions,
        work: &[(usize, Arc<TableData>)],
    ) -> Result<Arc<TableData>> {
        let cancel = Arc::new(AtomicBool::new(false));
        self.running
            .lock()
            .expect("running list poisoned")
            .push(cancel.clone());
        let result = (|| {
            let started = Instant::now();
            let timeout = self.config().timeout;
            let mut seen = match cte.union_all {
                true => None,
                false => Some(RowSet::new(&cte.schema)?),
            };
            let anchor = self.run_plan_with(&cte.anchor, false, options, work)?;
            let mut last = new_rows(anchor.batches, &cte.schema, seen.as_mut())?;
            let mut all = Vec::new();
            while !last.is_empty() {
                if cancel.load(Ordering::Relaxed) {
                    return Err(Error::Cancelled);
                }
                if let Some(t) = timeout.filter(|t| started.elapsed() > *t) {
                    return Err(Error::Timeout(t));
                }
                all.extend(last.iter().cloned());
                let mut rounds = work.to_vec();
                rounds.push((cte.id, Arc::new(TableData::new(cte.schema.clone(), last))));
                let next = self.run_plan_with(&cte.recursive, false, options, &rounds)?;
                last = new_rows(next.batches, &cte.schema, seen.as_mut())?;
            }
            Ok(Arc::new(TableData::new(cte.schema.clone(), all)))
        })();
        self.running
            .lock()
            .expect("running list poisoned")
            .retain(|f| !Arc::ptr_eq(f, &cancel));
        result
    }

    fn csv_key(path: &str, options: &load::CsvOptions) -> CsvKey {
        CsvKey {
            path: std::fs::canonicalize(path).unwrap_or_else(|_| path.into()),
            options: options.clone(),
        }
    }

    /// The CSV schema an earlier load of this unchanged file settled on.
    fn known_csv_schema(&self, key: &CsvKey) -> Option<Schema> {
        let meta = std::fs::metadata(&key.path).ok()?;
        let schemas = self
            .shared
            .csv_schemas
            .lock()
            .expect("csv schemas poisoned");
        let known = schemas.get(key)?;
        (known.modified == meta.modified().ok() && known.len == meta.len())
            .then(|| known.schema.clone())
    }

    fn remember_csv_schema(&self, key: CsvKey, schema: Schema) {
        if let Ok(meta) = std::fs::metadata(&key.path) {
            self.shared
                .csv_schemas
                .lock()
                .expect("csv schemas poisoned")
                .insert(
                    key,
                    CsvSchema {
                        modified: meta.modified().ok(),
                        len: meta.len(),
                        schema,
                    },
                );
        }
    }
}

/// Seconds in `'500ms'`, `'2s'`, `'2 s'`, `'1min'`, `'1.5'` (seconds).
fn parse_duration(s: &str) -> Option<f64> {
    let s = s.trim().to_ascii_lowercase();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let number: f64 = number.parse().ok()?;
    let scale = match unit.trim() {
        "" | "s" | "sec" | "second" | "seconds" => 1.0,
        "ms" | "millisecond" | "milliseconds" => 1e-3,
        "min" | "minute" | "minutes" => 60.0,
        "h" | "hour" | "hours" => 3600.0,
        _ => return None,
    };
    Some(number * scale)
}

fn text_result<'a>(column: &str, lines: impl Iterator<Item = &'a str>) -> QueryResult {
    let schema = Arc::new(Schema::new(vec![Field::new(column, DataType::Utf8, false)]));
    let array: ArrayRef = Arc::new(StringArray::from_iter_values(lines));
    let batch = RecordBatch::try_new(schema.clone(), vec![array])
        .expect("one Utf8 column matches its schema");
    QueryResult::rows(schema, vec![batch])
}

/// The planner's view of the catalog.
struct CatalogView<'a> {
    db: &'a Connection,
}

impl Catalog for CatalogView<'_> {
    fn table_schema(&self, name: &str) -> Option<SchemaRef> {
        self.db.table_schema(name)
    }

    fn table_names(&self) -> Vec<String> {
        self.db.table_names()
    }

    fn view(&self, name: &str) -> Option<weir_planner::ViewDef> {
        self.db.view(name)
    }

    fn view_names(&self) -> Vec<String> {
        self.db.view_names()
    }

    fn table_rows(&self, name: &str) -> Option<usize> {
        self.db.table(name).map(|t| t.data.num_rows())
    }

    fn column_distinct(&self, name: &str, column: &str) -> Option<f64> {
        self.db.table(name)?.distinct(column)
    }

    fn file_schema(&self, path: &str, format: FileFormat) -> Result<SchemaRef, String> {
        self.file_schema_with(path, format, &FileOptions::default())
    }

    fn file_schema_with(
        &self,
        path: &str,
        format: FileFormat,
        options: &FileOptions,
    ) -> Result<SchemaRef, String> {
        let schema = || -> Result<SchemaRef> {
            let files = crate::files::expand(path, options)?;
            let one = |file: &str, known: bool| {
                let known = match format {
                    FileFormat::Csv if known => self
                        .db
                        .known_csv_schema(&Connection::csv_key(file, options)),
                    _ => None,
                };
                load::file_schema(Path::new(file), format, options, known.as_ref())
            };
            let first = one(&files[0], true)?;
            let hive = crate::files::hive(&files, options.hive_partitioning)?;
            crate::files::schema(
                &files,
                first,
                &|f| one(f, false),
                options.filename,
                hive.as_ref(),
            )
        };
        schema().map_err(|e| match e {
            // the planner adds its own "IO Error: " prefix
            Error::Io { path, source } => {
                format!("could not read \"{}\": {source}", path.display())
            }
            Error::InvalidInput(message) => message,
            other => other.to_string(),
        })
    }

    fn settings(&self) -> Vec<Setting> {
        self.db.settings()
    }
}

/// The pipeline's access to data.
struct Resolver<'a> {
    db: &'a Connection,
    /// Decodes the parts of a file load in parallel.
    executor: Arc<PipelineExecutor>,
    cancel: Option<Arc<AtomicBool>>,
    deadline: Option<(Instant, Duration)>,
    /// EXPLAIN: files give their schema and no rows.
    dry_run: bool,
    /// The files loaded, for EXPLAIN ANALYZE, and how a load failed.
    loads: Mutex<Vec<Load>>,
    /// The WHERE conjuncts right above each file scan of the plan, which
    /// can skip a partitioned file without reading it.
    filters: Vec<(TableSource, Vec<weir_planner::Expr>)>,
    /// The columns the plan reads of each file scan (read once), when
    /// known: a Parquet file's other columns are not read.
    columns: Vec<(TableSource, Vec<usize>)>,
    /// The rows the plan reads of each file scan (read once) under a LIMIT
    /// with no filter, sort or aggregation between: a Parquet load stops
    /// at the row group (and file) that holds them.
    limits: Vec<(TableSource, usize)>,
    /// The file scans the lanes read part by part.
    scans: Mutex<Vec<Scan>>,
    /// The rows of the recursive CTEs the plan reads, by id.
    recursive: Vec<(usize, Arc<TableData>)>,
    /// The working tables of the recursive CTEs whose recursive term
    /// this plan is, by id.
    work: Vec<(usize, Arc<TableData>)>,
}

/// Rows seen before, for UNION: NULLs equal, as DISTINCT has them.
struct RowSet {
    converter: arrow::row::RowConverter,
    seen: std::collections::HashSet<Box<[u8]>>,
}

impl RowSet {
    fn new(schema: &SchemaRef) -> Result<Self> {
        let fields = schema
            .fields()
            .iter()
            .map(|f| arrow::row::SortField::new(f.data_type().clone()))
            .collect();
        let converter = arrow::row::RowConverter::new(fields)
            .map_err(|e| Error::InvalidInput(format!("UNION of these types: {e}")))?;
        Ok(RowSet {
            converter,
            seen: std::collections::HashSet::new(),
        })
    }

    /// Which rows of `batch` were not seen before (nor earlier in it); they
    /// are seen from now on.
    fn keep_new(&mut self, batch: &RecordBatch) -> Result<arrow::array::BooleanArray> {
        let rows = self
            .converter
            .convert_columns(batch.columns())
            .map_err(|e| Error::InvalidInput(e.to_string()))?;
        Ok(rows
            .iter()
            .map(|r| Some(self.seen.insert(r.data().into())))
            .collect())
    }
}

/// `batches` (a round of a recursive CTE) with the CTE's schema, without
/// empty batches, and without rows `seen` before where it is given.
fn new_rows(
    batches: Vec<RecordBatch>,
    schema: &SchemaRef,
    mut seen: Option<&mut RowSet>,
) -> Result<Vec<RecordBatch>> {
    let mut out = Vec::with_capacity(batches.len());
    for b in batches.into_iter().filter(|b| b.num_rows() > 0) {
        let mut b = RecordBatch::try_new(schema.clone(), b.columns().to_vec())
            .map_err(|e| Error::InvalidInput(format!("a round of a recursive CTE: {e}")))?;
        if let Some(seen) = seen.as_deref_mut() {
            let keep = seen.keep_new(&b)?;
            b = arrow::compute::filter_record_batch(&b, &keep)
                .map_err(|e| Error::InvalidInput(e.to_string()))?;
        }
        if b.num_rows() > 0 {
            out.push(b);
        }
    }
    Ok(out)
}

/// A file scan handed to the pipeline, kept for EXPLAIN ANALYZE and for
/// the schema a CSV column widened to.
struct Scan {
    scan: Arc<crate::scan::FileScan>,
    /// The scan's path (a file, a glob) and its number of files.
    path: String,
    files: usize,
    /// The CSV schema's key.
    csv: Option<CsvKey>,
}

/// One file loaded for a statement.
struct Load {
    name: String,
    rows: u64,
    time: Duration,
    failure: Option<LoadFailure>,
}

/// Why a load stopped, kept to be returned as the statement's error.
#[derive(Clone)]
enum LoadFailure {
    Cancelled,
    Timeout(Duration),
    SchemaChanged,
}

impl LoadFailure {
    fn into_error(self) -> Error {
        match self {
            LoadFailure::Cancelled => Error::Cancelled,
            LoadFailure::Timeout(d) => Error::Timeout(d),
            LoadFailure::SchemaChanged => Error::SchemaChanged,
        }
    }
}

impl<'a> Resolver<'a> {
    fn new(db: &'a Connection, options: &ExecOptions, dry_run: bool) -> Self {
        let timeout = db.config().timeout;
        Self {
            db,
            executor: db.executor(),
            cancel: options.cancel.clone(),
            deadline: options.deadline.zip(timeout),
            dry_run,
            loads: Mutex::new(Vec::new()),
            filters: Vec::new(),
            columns: Vec::new(),
            limits: Vec::new(),
            scans: Mutex::new(Vec::new()),
            recursive: Vec::new(),
            work: Vec::new(),
        }
    }

    /// Notes what `plan` does with its file scan: the filters right above
    /// it, and the columns read by those filters and the node above them
    /// (a projection or an aggregation; any other node reads them all). A
    /// source the plan reads more than once (a self-join) gets neither:
    /// its other reads may need more. (The count looks at the whole plan
    /// through its debug form, whatever nodes it has.)
    fn with_plan(mut self, plan: &LogicalPlan) -> Self {
        let mut chain = vec![plan];
        while let Some(input) = chain.last().and_then(|n| n.input()) {
            chain.push(input);
        }
        // only plans of the nodes known here (a new kind of node, a join,
        // must be thought through here before its scans are pruned)
        for node in &chain {
            match node {
                LogicalPlan::Scan { .. }
                | LogicalPlan::Values { .. }
                | LogicalPlan::Filter { .. }
                | LogicalPlan::Projection { .. }
                | LogicalPlan::Aggregate { .. }
                | LogicalPlan::Distinct { .. }
                | LogicalPlan::Sort { .. }
                | LogicalPlan::Limit { .. } => {}
                // a join or a union ends the chain (`input` is None): its scans are
                // not pruned; a window reads every column of its input, so
                // right above a scan's filters it keeps them all (below)
                LogicalPlan::Join { .. }
                | LogicalPlan::Union { .. }
                | LogicalPlan::Window { .. } => {}
            }
        }
        let Some(LogicalPlan::Scan {
            source: source @ TableSource::File { .. },
            ..
        }) = chain.pop()
        else {
            return self;
        };
        if format!("{plan:?}").matches(&format!("{source:?}")).count() != 1 {
            return self;
        }
        let mut columns = Vec::new();
        let mut above = chain.pop();
        let unfiltered = !matches!(above, Some(LogicalPlan::Filter { .. }));
        while let Some(LogicalPlan::Filter { predicate, .. }) = above {
            if self.filters.is_empty() {
                let conjuncts = predicate.conjuncts().into_iter().cloned().collect();
                self.filters.push((source.clone(), conjuncts));
            }
            columns.extend(predicate.columns());
            above = chain.pop();
        }
        // every field listed: a new field that holds an expression must be
        // added here
        match above {
            Some(LogicalPlan::Projection {
                input: _,
                exprs,
                schema: _,
            }) => {
                columns.extend(exprs.iter().flat_map(|e| e.columns()));
                // the first rows of the file are the answer
                if unfiltered
                    && let Some(LogicalPlan::Limit {
                        offset,
                        fetch: Some(fetch),
                        ..
                    }) = chain.last()
                {
                    self.limits
                        .push((source.clone(), offset.saturating_add(*fetch)));
                }
            }
            Some(LogicalPlan::Aggregate {
                input: _,
                group_by,
                aggregates,
                schema: _,
            }) => {
                columns.extend(group_by.iter().flat_map(|e| e.columns()));
                columns.extend(
                    aggregates
                        .iter()
                        .flat_map(weir_planner::AggregateExpr::exprs)
                        .flat_map(|e| e.columns()),
                );
            }
            _ => return self,
        }
        columns.sort_unstable();
        columns.dedup();
        self.columns.push((source.clone(), columns));
        self
    }

    /// Stops a load between batches on Ctrl-C or past the timeout.
    fn check(&self) -> Result<()> {
        if self
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
        {
            return Err(Error::Cancelled);
        }
        if let Some((deadline, timeout)) = self.deadline
            && Instant::now() >= deadline
        {
            return Err(Error::Timeout(timeout));
        }
        Ok(())
    }

    /// Loads the files of a scan (a path, a glob or a list) as one table,
    /// skipping the files whose partitions `filters` (conjuncts over the
    /// scan's columns) rule out; also returns how many files it read, of
    /// how many.
    fn load_file(
        &self,
        path: &str,
        format: FileFormat,
        csv: &FileOptions,
        filters: &[weir_planner::Expr],
        reads: load::ParquetReads<'_>,
    ) -> Result<(TableData, usize, usize)> {
        let all_files = crate::files::expand(path, csv)?;
        let hive = crate::files::hive(&all_files, csv.hive_partitioning)?;
        let one = |file: &str, known: bool| {
            let known = match format {
                FileFormat::Csv if known => {
                    self.db.known_csv_schema(&Connection::csv_key(file, csv))
                }
                _ => None,
            };
            load::file_schema(Path::new(file), format, csv, known.as_ref())
        };
        if self.dry_run {
            let schema = crate::files::schema(
                &all_files,
                one(&all_files[0], true)?,
                &|f| one(f, false),
                csv.filename,
                hive.as_ref(),
            )?;
            return Ok((TableData::new(schema, Vec::new()), 0, all_files.len()));
        }
        let read: Vec<usize> = match &hive {
            Some(h) => {
                let schema = crate::files::with_extra_columns(
                    &one(&all_files[0], true)?,
                    csv.filename,
                    Some(h),
                );
                let read = crate::files::prune(h, &schema, filters);
                if read.is_empty() {
                    return Ok((TableData::new(schema, Vec::new()), 0, all_files.len()));
                }
                read
            }
            None => (0..all_files.len()).collect(),
        };
        let files: Vec<String> = read.iter().map(|&i| all_files[i].clone()).collect();
        let check = || self.check();
        let mut tables = Vec::with_capacity(files.len());
        match format {
            FileFormat::Parquet => {
                let mut rows = 0;
                for file in &files {
                    if reads.rows.is_some_and(|n| rows >= n) {
                        // a LIMIT has its rows: the other files stay unread
                        break;
                    }
                    check()?;
                    let reads = load::ParquetReads {
                        rows: reads.rows.map(|n| n - rows),
                        ..reads
                    };
                    let table = load::read_parquet_parallel(Path::new(file), reads, self, &check)?;
                    rows += table.num_rows();
                    tables.push(table);
                }
            }
            FileFormat::Csv => {
                // every file is read with the first's schema, which widens
                // for all of them
                let key = Connection::csv_key(&all_files[0], csv);
                let first = load::sniff_csv(Path::new(&all_files[0]), csv)?;
                let planned = self.db.known_csv_schema(&key).unwrap_or(first.schema);
                let mut dialect = first.dialect;
                for (i, file) in files.iter().enumerate() {
                    check()?;
                    if read[i] > 0 {
                        dialect = load::sniff_csv(Path::new(file), csv)?.dialect;
                    }
                    let fixed = csv.columns.as_deref().unwrap_or(&csv.types);
                    let data = load::read_csv_parallel(
                        Path::new(file),
                        planned.clone(),
                        &dialect,
                        fixed,
                        self,
                        &check,
                    )?;
                    if data.schema != planned {
                        self.db.remember_csv_schema(key, data.schema);
                        return Err(Error::SchemaChanged);
                    }
                    tables.push(load::normalize(Arc::new(data.schema), data.batches)?);
                }
            }
        }
        // a LIMIT may have left the last files unread
        let files = &files[..tables.len()];
        if files.len() == 1 && !csv.filename && hive.is_none() {
            let table = tables.pop().expect("one file, one table");
            return Ok((table, 1, all_files.len()));
        }
        let table = crate::files::combine(
            files,
            tables,
            csv.filename,
            hive.as_ref().map(|h| (h, read.as_slice())),
        )?;
        Ok((table, files.len(), all_files.len()))
    }
}

impl load::RunParts for Resolver<'_> {
    fn workers(&self) -> usize {
        self.executor.parallelism()
    }

    /// One executor job, a step per part, as a DAG of one node: the query
    /// thread waits for it (decoding parts too where waiters work),
    /// checking Ctrl-C and the deadline.
    fn run(
        &self,
        parts: Vec<load::Part>,
    ) -> Result<Vec<Result<Vec<RecordBatch>, load::PartError>>> {
        type Slot = Mutex<Option<Result<Vec<RecordBatch>, load::PartError>>>;
        let slots: Arc<Vec<Slot>> = Arc::new(parts.iter().map(|_| Mutex::new(None)).collect());
        let mut job = weir_executor::Job::new("load");
        for (i, part) in parts.into_iter().enumerate() {
            let slots = slots.clone();
            job.push_step(Box::new(weir_executor::step_fn(
                format!("load part {i}"),
                move |ctx: &weir_executor::StepContext<'_>| {
                    let result = part(&|| ctx.is_cancelled());
                    *slots[i].lock().expect("load slot poisoned") = Some(result);
                    Ok(())
                },
            )));
        }
        let dag = weir_executor::DagBuilder::new()
            .node(weir_executor::Node::job("load", job))
            .build()?;
        let outcome = dag
            .run(&self.executor)
            .wait_interruptible(Duration::from_millis(5), &|| self.check().is_err());
        match outcome {
            weir_executor::DagOutcome::Completed => {}
            weir_executor::DagOutcome::Cancelled => {
                self.check()?;
                return Err(Error::Cancelled);
            }
            weir_executor::DagOutcome::Failed(failures) => {
                let message = failures
                    .into_iter()
                    .map(|failure| match failure.error {
                        weir_executor::NodeError::Job(job) => job.message,
                        other => other.to_string(),
                    })
                    .next()
                    .unwrap_or_default();
                return Err(Error::InvalidInput(format!(
                    "loading a file failed: {message}"
                )));
            }
        }
        // a worker may drop its step (and its handle on the slots) just
        // after the job completes: take the results out rather than unwrap
        Ok(slots
            .iter()
            .map(|slot| {
                slot.lock()
                    .expect("load slot poisoned")
                    .take()
                    .unwrap_or(Err(load::PartError::Stopped))
            })
            .collect())
    }
}

impl Resolver<'_> {
    /// What the plan does with `source` (see [`Resolver::with_plan`]).
    fn usage(&self, source: &TableSource) -> crate::scan::ScanUse<'_> {
        crate::scan::ScanUse {
            filters: self
                .filters
                .iter()
                .find(|(s, _)| s == source)
                .map_or(&[][..], |(_, f)| f.as_slice()),
            columns: self
                .columns
                .iter()
                .find(|(s, _)| s == source)
                .map(|(_, c)| c.as_slice()),
            rows: self
                .limits
                .iter()
                .find(|(s, _)| s == source)
                .map(|(_, n)| *n),
        }
    }

    /// The scan of the files of `path` that the lanes read part by part,
    /// or `None` when partition filters rule out every file.
    fn file_scan(
        &self,
        path: &str,
        format: FileFormat,
        options: &FileOptions,
        usage: &crate::scan::ScanUse<'_>,
    ) -> Result<Option<Scan>> {
        let all_files = crate::files::expand(path, options)?;
        let hive = crate::files::hive(&all_files, options.hive_partitioning)?;
        let key = (format == FileFormat::Csv).then(|| Connection::csv_key(&all_files[0], options));
        let raw = match &key {
            Some(key) => Some(match self.db.known_csv_schema(key) {
                Some(known) => known,
                None => load::sniff_csv(Path::new(&all_files[0]), options)?.schema,
            }),
            None => None,
        };
        let read: Vec<usize> = match &hive {
            Some(h) => {
                let first = match &raw {
                    Some(raw) => load::canonical_schema(raw)?,
                    None => load::file_schema(Path::new(&all_files[0]), format, options, None)?,
                };
                let schema = crate::files::with_extra_columns(&first, options.filename, Some(h));
                let read = crate::files::prune(h, &schema, usage.filters);
                if read.is_empty() {
                    return Ok(None);
                }
                read
            }
            None => (0..all_files.len()).collect(),
        };
        let scan = match raw {
            Some(raw) => crate::scan::FileScan::csv(&all_files, &read, options, hive, raw, usage)?,
            None => crate::scan::FileScan::parquet(&all_files, &read, options, hive, usage)?,
        };
        Ok(Some(Scan {
            scan: Arc::new(scan),
            path: path.to_owned(),
            files: all_files.len(),
            csv: key,
        }))
    }
}

impl SourceResolver for Resolver<'_> {
    fn resolve_parts(
        &self,
        source: &TableSource,
    ) -> weir_pipeline::Result<Option<Arc<dyn weir_pipeline::PartSource>>> {
        let TableSource::File {
            path,
            format,
            options,
        } = source
        else {
            return Ok(None);
        };
        if self.dry_run {
            return Ok(None);
        }
        let usage = self.usage(source);
        match self.file_scan(path, *format, options, &usage) {
            Ok(Some(scan)) => {
                let parts: Arc<dyn weir_pipeline::PartSource> = scan.scan.clone();
                self.scans.lock().expect("scans poisoned").push(scan);
                Ok(Some(parts))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(weir_pipeline::Error::Execution(e.to_string())),
        }
    }

    fn resolve(&self, source: &TableSource) -> weir_pipeline::Result<Arc<TableData>> {
        match source {
            TableSource::Table(name) => self.db.table(name).map(|t| t.data).ok_or_else(|| {
                weir_pipeline::Error::Execution(format!("Table with name {name} does not exist!"))
            }),
            TableSource::File {
                path,
                format,
                options,
            } => {
                let started = Instant::now();
                let filters = self
                    .filters
                    .iter()
                    .find(|(s, _)| s == source)
                    .map_or(&[][..], |(_, f)| f.as_slice());
                let columns = self
                    .columns
                    .iter()
                    .find(|(s, _)| s == source)
                    .map(|(_, c)| c.as_slice());
                let limit = self
                    .limits
                    .iter()
                    .find(|(s, _)| s == source)
                    .map(|(_, n)| *n);
                let reads = load::ParquetReads {
                    columns,
                    rows: limit,
                };
                let loaded = self.load_file(path, *format, options, filters, reads);
                let (read, files) = loaded.as_ref().map_or((1, 1), |(_, r, n)| (*r, *n));
                let result = loaded.map(|(table, ..)| table);
                let failure = match &result {
                    Err(Error::Cancelled) => Some(LoadFailure::Cancelled),
                    Err(Error::Timeout(d)) => Some(LoadFailure::Timeout(*d)),
                    Err(Error::SchemaChanged) => Some(LoadFailure::SchemaChanged),
                    _ => None,
                };
                self.loads.lock().expect("loads poisoned").push(Load {
                    name: crate::files::load_name(path, read, files),
                    rows: result.as_ref().map_or(0, |d| d.num_rows() as u64),
                    time: started.elapsed(),
                    failure,
                });
                result
                    .map(Arc::new)
                    .map_err(|e| weir_pipeline::Error::Execution(e.to_string()))
            }
            TableSource::Series { start, stop, step } => {
                weir_pipeline::series_table(*start, *stop, *step, "range").map(Arc::new)
            }
            TableSource::Recursive(cte) => {
                let rows = self.recursive.iter().find(|(id, _)| *id == cte.id);
                match rows {
                    Some((_, rows)) => Ok(Arc::clone(rows)),
                    // EXPLAIN: the schema, no rows
                    None if self.dry_run => {
                        Ok(Arc::new(TableData::new(cte.schema.clone(), Vec::new())))
                    }
                    None => Err(weir_pipeline::Error::Internal(format!(
                        "recursive CTE {} read before it was computed",
                        cte.name
                    ))),
                }
            }
            TableSource::WorkTable { name, id, schema } => {
                match self.work.iter().find(|(w, _)| w == id) {
                    Some((_, rows)) => Ok(Arc::clone(rows)),
                    None if self.dry_run => {
                        Ok(Arc::new(TableData::new(schema.clone(), Vec::new())))
                    }
                    None => Err(weir_pipeline::Error::Internal(format!(
                        "the working table of recursive CTE {name} read outside it"
                    ))),
                }
            }
        }
    }
}

#[cfg(test)]
mod set_threads_tests {
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    use weir_executor::{Job, JobOutcome, step_fn};

    use super::*;

    /// Bound for waits that should end almost at once.
    const PATIENCE: Duration = Duration::from_secs(30);

    #[test]
    fn set_threads_does_not_block_statements_while_the_old_executor_drains() {
        let db = Database::with_config(Config {
            threads: 1,
            ..Config::default()
        })
        .unwrap();
        // Hold the old executor's only worker in a step until told.
        let (open_tx, open_rx) = mpsc::channel::<()>();
        let (started_tx, started_rx) = mpsc::channel::<()>();
        let open_rx = Mutex::new(open_rx);
        let held = db
            .executor()
            .submit(Job::new("held").with_step(step_fn("held", move |_ctx| {
                started_tx.send(()).unwrap();
                open_rx
                    .lock()
                    .unwrap()
                    .recv_timeout(PATIENCE)
                    .map_err(|_| "never released")?;
                Ok(())
            })))
            .unwrap();
        started_rx.recv_timeout(PATIENCE).unwrap();
        // The database holds the old executor's last handle: set_threads
        // drops it and so waits for the held step.
        let switcher = {
            let db = db.clone();
            std::thread::spawn(move || db.set_threads(2))
        };
        let deadline = Instant::now() + PATIENCE;
        while db.config().threads != 2 {
            assert!(Instant::now() < deadline, "set_threads never swapped");
            std::thread::yield_now();
        }
        // A statement runs on the new executor meanwhile.
        let (done_tx, done_rx) = mpsc::channel();
        {
            let db = db.clone();
            std::thread::spawn(move || {
                let _ = done_tx.send(db.execute("SELECT 1 + 1 AS two").map(|r| r.num_rows()));
            });
        }
        let rows = done_rx.recv_timeout(PATIENCE);
        assert!(
            !switcher.is_finished(),
            "set_threads joins the old executor"
        );
        open_tx.send(()).unwrap();
        assert_eq!(
            rows.expect("a statement waited for set_threads").unwrap(),
            1
        );
        switcher.join().unwrap().unwrap();
        assert_eq!(held.wait(), JobOutcome::Completed);
        assert_eq!(db.executor().parallelism(), 2);
    }
}
