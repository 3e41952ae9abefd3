//! The [`Database`]: catalog, settings, and statement execution.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use arrow::array::{ArrayRef, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use weir_executor::{ExecutorConfig, PipelineExecutor};
use weir_pipeline::{ExecOptions, Progress, SourceResolver, TableData};
use weir_planner::{Catalog, FileFormat, LogicalPlan, Statement, TableSource};

use crate::error::{Error, Result};
use crate::load;
use crate::result::QueryResult;

/// Database settings.
#[derive(Clone, Debug)]
pub struct Config {
    /// Worker threads of the executor (default: all cores).
    pub threads: usize,
    /// Per-statement timeout (default: none). A statement past it is
    /// cancelled, stops using CPU, and fails with [`Error::Timeout`].
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

/// Per-call options of [`Database::execute_with`].
#[derive(Clone, Debug, Default)]
pub struct ExecuteOptions {
    /// Counts the morsels of the running statement, for progress bars.
    pub progress: Option<Arc<Progress>>,
}

/// An in-memory database. Cheap to clone: clones share tables, settings and
/// the executor, and may run statements from several threads at once.
#[derive(Clone)]
pub struct Database {
    shared: Arc<Shared>,
}

struct Shared {
    tables: RwLock<BTreeMap<String, Table>>,
    config: Mutex<Config>,
    executor: RwLock<Arc<PipelineExecutor>>,
    running: Mutex<Vec<Arc<AtomicBool>>>,
}

#[derive(Clone)]
struct Table {
    /// The name as created (lookups are case-insensitive).
    name: String,
    data: Arc<TableData>,
}

/// Cancels the statements running on a [`Database`] from another thread
/// (a shell's Ctrl-C handler, say).
#[derive(Clone)]
pub struct InterruptHandle {
    shared: Arc<Shared>,
}

impl InterruptHandle {
    /// Cancels every statement running now; they fail with
    /// [`Error::Cancelled`]. Statements started later are not affected.
    pub fn interrupt(&self) {
        for flag in self
            .shared
            .running
            .lock()
            .expect("running list poisoned")
            .iter()
        {
            flag.store(true, Ordering::Release);
        }
    }
}

fn new_executor(threads: usize) -> Result<PipelineExecutor> {
    if threads == 0 {
        return Err(Error::InvalidInput("threads must be at least 1".into()));
    }
    Ok(PipelineExecutor::new(ExecutorConfig {
        threads,
        thread_name: "weir".into(),
        ..ExecutorConfig::default()
    })?)
}

impl Database {
    /// An empty in-memory database using every core.
    pub fn new() -> Result<Self> {
        Self::with_config(Config::default())
    }

    /// An empty in-memory database with these settings.
    pub fn with_config(config: Config) -> Result<Self> {
        if config.morsel_rows == 0 {
            return Err(Error::InvalidInput("morsel_rows must be at least 1".into()));
        }
        let executor = new_executor(config.threads)?;
        Ok(Self {
            shared: Arc::new(Shared {
                tables: RwLock::new(BTreeMap::new()),
                config: Mutex::new(config),
                executor: RwLock::new(Arc::new(executor)),
                running: Mutex::new(Vec::new()),
            }),
        })
    }

    /// The current settings.
    pub fn config(&self) -> Config {
        self.shared.config.lock().expect("config poisoned").clone()
    }

    /// Sets the number of worker threads. Running statements finish on the
    /// old executor.
    pub fn set_threads(&self, threads: usize) -> Result<()> {
        let executor = new_executor(threads)?;
        *self
            .shared
            .executor
            .write()
            .expect("executor lock poisoned") = Arc::new(executor);
        self.shared.config.lock().expect("config poisoned").threads = threads;
        Ok(())
    }

    /// Sets the per-statement timeout (`None`: no limit).
    pub fn set_timeout(&self, timeout: Option<Duration>) {
        self.shared.config.lock().expect("config poisoned").timeout = timeout;
    }

    /// A handle that cancels running statements from another thread.
    pub fn interrupt_handle(&self) -> InterruptHandle {
        InterruptHandle {
            shared: self.shared.clone(),
        }
    }

    /// Runs every statement of `sql` in order and returns the result of the
    /// last one. Stops at the first error.
    pub fn execute(&self, sql: &str) -> Result<QueryResult> {
        self.execute_with(sql, &ExecuteOptions::default())
    }

    /// [`Database::execute`] with per-call options.
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
            for statement in weir_planner::plan_sql_with(text, &catalog, Some(&folder))? {
                last = self.run_statement(statement, options)?;
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
        let data = load::read_file(path.as_ref(), FileFormat::Csv)?;
        self.create_table(name, data, false)
    }

    /// Loads the Parquet file at `path` as table `name`.
    pub fn register_parquet(&self, name: &str, path: impl AsRef<Path>) -> Result<()> {
        let data = load::read_file(path.as_ref(), FileFormat::Parquet)?;
        self.create_table(name, data, false)
    }

    /// Names of all tables, sorted.
    pub fn table_names(&self) -> Vec<String> {
        let tables = self.shared.tables.read().expect("catalog poisoned");
        tables.values().map(|t| t.name.clone()).collect()
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
        let mut tables = self.shared.tables.write().expect("catalog poisoned");
        let key = name.to_lowercase();
        if !or_replace && tables.contains_key(&key) {
            return Err(Error::Catalog(format!(
                "Table with name \"{name}\" already exists!"
            )));
        }
        tables.insert(
            key,
            Table {
                name: name.to_string(),
                data: Arc::new(data),
            },
        );
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
                    let executor = self.executor();
                    weir_pipeline::explain(
                        &plan,
                        &Resolver { db: self },
                        &executor,
                        &self.exec_options(false, options, None),
                    )?
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
                self.create_table(
                    &name,
                    TableData {
                        schema,
                        batches: Vec::new(),
                    },
                    or_replace,
                )?;
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
                let data = load::normalize(out.schema, out.batches)?;
                self.create_table(&name, data, or_replace)?;
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
                existing.data = Arc::new(TableData { schema, batches });
                Ok(QueryResult::no_rows(Some(rows)))
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
            Statement::ShowTables => {
                let names = self.table_names();
                Ok(text_result("name", names.iter().map(String::as_str)))
            }
            Statement::Describe { schema, .. } => {
                let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
                let types: Vec<String> = schema
                    .fields()
                    .iter()
                    .map(|f| weir_planner::types::sql_type_name(f.data_type()))
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

    fn run_plan(
        &self,
        plan: &LogicalPlan,
        analyze: bool,
        options: &ExecuteOptions,
    ) -> Result<weir_pipeline::QueryOutput> {
        let cancel = Arc::new(AtomicBool::new(false));
        self.shared
            .running
            .lock()
            .expect("running list poisoned")
            .push(cancel.clone());
        let executor = self.executor();
        let exec_options = self.exec_options(analyze, options, Some(cancel.clone()));
        let result = weir_pipeline::execute(plan, &Resolver { db: self }, &executor, &exec_options);
        self.shared
            .running
            .lock()
            .expect("running list poisoned")
            .retain(|f| !Arc::ptr_eq(f, &cancel));
        Ok(result?)
    }
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
    db: &'a Database,
}

impl Catalog for CatalogView<'_> {
    fn table_schema(&self, name: &str) -> Option<SchemaRef> {
        self.db.table_schema(name)
    }

    fn table_names(&self) -> Vec<String> {
        self.db.table_names()
    }

    fn file_schema(&self, path: &str, format: FileFormat) -> Result<SchemaRef, String> {
        load::file_schema(Path::new(path), format).map_err(|e| match e {
            // the planner adds its own "IO Error: " prefix
            Error::Io { path, source } => {
                format!("could not read \"{}\": {source}", path.display())
            }
            other => other.to_string(),
        })
    }
}

/// The pipeline's access to data.
struct Resolver<'a> {
    db: &'a Database,
}

impl SourceResolver for Resolver<'_> {
    fn resolve(&self, source: &TableSource) -> weir_pipeline::Result<Arc<TableData>> {
        match source {
            TableSource::Table(name) => self.db.table(name).map(|t| t.data).ok_or_else(|| {
                weir_pipeline::Error::Execution(format!("Table with name {name} does not exist!"))
            }),
            TableSource::File { path, format } => load::read_file(Path::new(path), *format)
                .map(Arc::new)
                .map_err(|e| weir_pipeline::Error::Execution(e.to_string())),
            TableSource::Series { start, stop, step } => {
                weir_pipeline::series_table(*start, *stop, *step, "range").map(Arc::new)
            }
        }
    }
}
