//! Running a project: each stage a node of the executor's DAG scheduler.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use weir_engine::{Config, Database, InterruptHandle};
use weir_executor::{
    DagBuilder, ErrorMode, ExecutorConfig, Job, Node, NodeState, PipelineExecutor, StepError,
    step_fn,
};

use crate::error::{Error, Result};
use crate::lock::StageLock;
use crate::project::{Project, Stage};
use crate::state::{Layout, Record, hash_bytes, hash_file};

/// What a stage failure does (`--on-error`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnError {
    /// Stop: running stages are interrupted, the rest do not start.
    #[default]
    Fail,
    /// Run every stage that does not depend on a failed one.
    KeepGoing,
    /// Run every stage; a stage reading a failed one fails in turn.
    Ignore,
}

/// Options of [`run`] and [`explain`].
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Stages to run (with what they need); all when empty.
    pub stages: Vec<String>,
    /// What a failure does.
    pub on_error: OnError,
    /// Worker threads of the database (default: all cores).
    pub threads: Option<usize>,
}

/// Why a stage runs, or that it does not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    /// No run of it is recorded.
    NeverRun,
    /// Its SQL changed (beyond layout and comments).
    SqlChanged,
    /// A parameter it uses changed.
    ParamsChanged,
    /// An input changed: `file PATH` or `stage NAME`.
    InputChanged(String),
    /// Its fingerprint matches, but the cached output is gone.
    NoCachedOutput,
    /// Nothing changed: restored from the cache.
    UpToDate,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::NeverRun => write!(f, "never run"),
            Reason::SqlChanged => write!(f, "SQL changed"),
            Reason::ParamsChanged => write!(f, "parameters changed"),
            Reason::InputChanged(what) => write!(f, "input changed: {what}"),
            Reason::NoCachedOutput => write!(f, "no cached output"),
            Reason::UpToDate => write!(f, "up to date"),
        }
    }
}

/// How a stage ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StageStatus {
    /// It ran and made this many rows.
    Ran {
        /// Rows of its table.
        rows: u64,
    },
    /// Unchanged: its table was restored from the cache.
    Restored {
        /// Rows of its table.
        rows: u64,
    },
    /// It failed (or ran past its timeout).
    Failed(String),
    /// It did not start (a stage it needs failed, or the run stopped).
    NotRun(String),
}

/// One stage's line of a run.
#[derive(Clone, Debug)]
pub struct StageReport {
    /// The stage.
    pub name: String,
    /// How it ended.
    pub status: StageStatus,
    /// When it started and ended, from the start of the run.
    pub span: (Duration, Duration),
}

impl fmt::Display for StageReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (start, end) = self.span;
        let took = end.saturating_sub(start).as_secs_f64();
        let at = format!("[{:.3}s..{:.3}s]", start.as_secs_f64(), end.as_secs_f64());
        match &self.status {
            StageStatus::Ran { rows } => {
                write!(f, "ran      {} ({rows} rows) in {took:.3}s {at}", self.name)
            }
            StageStatus::Restored { rows } => {
                write!(f, "skipped  {} ({rows} rows, up to date) {at}", self.name)
            }
            StageStatus::Failed(e) => write!(f, "FAILED   {} after {took:.3}s: {e}", self.name),
            StageStatus::NotRun(why) => write!(f, "not run  {}: {why}", self.name),
        }
    }
}

/// What a run did.
#[derive(Clone, Debug)]
pub struct Summary {
    /// Every selected stage, in the order they finished.
    pub stages: Vec<StageReport>,
    /// The run's wall time.
    pub elapsed: Duration,
}

impl Summary {
    fn count(&self, f: impl Fn(&StageStatus) -> bool) -> usize {
        self.stages.iter().filter(|s| f(&s.status)).count()
    }

    /// True when no stage failed or was left out.
    pub fn success(&self) -> bool {
        self.count(|s| matches!(s, StageStatus::Failed(_) | StageStatus::NotRun(_))) == 0
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ran, {} skipped, {} failed, {} not run in {:.3}s",
            self.count(|s| matches!(s, StageStatus::Ran { .. })),
            self.count(|s| matches!(s, StageStatus::Restored { .. })),
            self.count(|s| matches!(s, StageStatus::Failed(_))),
            self.count(|s| matches!(s, StageStatus::NotRun(_))),
            self.elapsed.as_secs_f64()
        )
    }
}

/// The parts of a stage's fingerprint that need no upstream output.
fn own_parts(stage: &Stage) -> Result<(String, String)> {
    let normal = weir_planner::normalize_sql(&stage.template).map_err(|source| Error::Sql {
        stage: stage.name.clone(),
        path: stage.path.clone(),
        source,
    })?;
    // a statement's closing `;` is no change either
    let normal = normal.trim_end_matches([';', ' ']);
    let mut params = String::new();
    for (k, v) in &stage.params {
        params.push_str(&format!("{k}={v}\n"));
    }
    Ok((hash_bytes(normal.as_bytes()), hash_bytes(params.as_bytes())))
}

/// The content hash of a file a stage reads (`missing` if it cannot be
/// read: the stage itself then reports why).
fn file_hash(path: &str) -> String {
    hash_file(Path::new(path)).unwrap_or_else(|_| "missing".into())
}

/// File hashes of one run: a file read by several stages is hashed once
/// (a second stage asking meanwhile waits for the first hash).
#[derive(Default)]
struct FileHashes(Mutex<HashMap<String, Arc<OnceLock<String>>>>);

impl FileHashes {
    fn get(&self, path: &str) -> String {
        let cell = self
            .0
            .lock()
            .expect("file hashes poisoned")
            .entry(path.to_string())
            .or_default()
            .clone();
        cell.get_or_init(|| file_hash(path)).clone()
    }
}

/// Why each selected stage would run (in dependency order), changing
/// nothing: what `--dry-run` and `--explain` print. A stage downstream of
/// one that runs runs too (its input will change).
///
/// # Errors
/// [`Error::Project`] for an unknown stage selected, [`Error::Sql`].
pub fn explain(project: &Project, options: &RunOptions) -> Result<Vec<(String, Reason)>> {
    let layout = Layout::new(&project.dir);
    let mut out: Vec<(String, Reason)> = Vec::new();
    let mut outputs: HashMap<String, Option<String>> = HashMap::new();
    let files = FileHashes::default();
    for stage in project.select(&options.stages)? {
        let (sql, params) = own_parts(stage)?;
        let record = Record::read(&layout.state_file(&stage.name));
        let reason = match &record {
            None => Reason::NeverRun,
            Some(r) if r.sql != sql => Reason::SqlChanged,
            Some(r) if r.params != params => Reason::ParamsChanged,
            Some(r) => {
                let mut changed = None;
                for f in &stage.files {
                    if r.inputs.get(&format!("file:{f}")) != Some(&files.get(f)) {
                        changed.get_or_insert(format!("file {f}"));
                    }
                }
                for d in &stage.deps {
                    let upstream = outputs.get(d).cloned().flatten();
                    match upstream {
                        None => {
                            changed.get_or_insert(format!("stage {d} runs"));
                        }
                        Some(h) if r.inputs.get(&format!("stage:{d}")) != Some(&h) => {
                            changed.get_or_insert(format!("stage {d}"));
                        }
                        Some(_) => {}
                    }
                }
                match changed {
                    Some(what) => Reason::InputChanged(what),
                    None if !layout.cached(&r.output).exists() => Reason::NoCachedOutput,
                    None => Reason::UpToDate,
                }
            }
        };
        let output = (reason == Reason::UpToDate)
            .then(|| record.map(|r| r.output))
            .flatten();
        outputs.insert(stage.name.clone(), output);
        out.push((stage.name.clone(), reason));
    }
    Ok(out)
}

// A stage's state in this run. Each change is a compare-and-swap from the
// state it was read in, and only the winner acts (seed 003): WAITING ->
// PENDING when the scheduler makes its job, PENDING -> RUNNING when a
// worker starts it, RUNNING -> DONE | FAILED when it ends.
const WAITING: u8 = 0;
const PENDING: u8 = 1;
const RUNNING: u8 = 2;
const DONE: u8 = 3;
const FAILED: u8 = 4;

/// The states of a run's stages (`WAITING`, ...).
struct StageStates(Vec<AtomicU8>);

impl StageStates {
    fn new(n: usize) -> Self {
        StageStates((0..n).map(|_| AtomicU8::new(WAITING)).collect())
    }

    /// Moves stage `i` from `from` to `to`; false (and nothing changes) if
    /// it is no longer in `from`: another caller already moved it, and
    /// only the caller that moved it acts on the move.
    fn advance(&self, i: usize, from: u8, to: u8) -> bool {
        self.0[i]
            .compare_exchange(from, to, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    fn get(&self, i: usize) -> u8 {
        self.0[i].load(Ordering::Acquire)
    }
}

struct Shared {
    layout: Layout,
    db: Database,
    stages: Vec<Stage>,
    states: StageStates,
    /// Output hash of each stage done.
    outputs: Mutex<HashMap<String, String>>,
    files: FileHashes,
    /// Stages restored from the cache whose tables are not loaded yet.
    restored: Mutex<HashMap<String, PathBuf>>,
    reports: Mutex<Vec<StageReport>>,
    /// The connections of the stages running now, to interrupt them.
    running: Mutex<Vec<(usize, InterruptHandle)>>,
    failed: AtomicBool,
    start: Instant,
    on_stage: Box<dyn Fn(&StageReport) + Send + Sync>,
}

impl Shared {
    fn advance(&self, i: usize, from: u8, to: u8) -> bool {
        self.states.advance(i, from, to)
    }

    fn report(&self, report: StageReport) {
        (self.on_stage)(&report);
        self.reports.lock().expect("reports poisoned").push(report);
    }

    fn interrupt_all(&self) {
        for (_, h) in self.running.lock().expect("running poisoned").iter() {
            h.interrupt();
        }
    }

    /// The stage's step: fingerprint, lock, re-check, restore or run.
    fn run_stage(&self, i: usize, cancelled: &dyn Fn() -> bool) -> Result<StageStatus, String> {
        let stage = &self.stages[i];
        let (sql, params) = own_parts(stage).map_err(|e| e.to_string())?;
        let mut inputs = BTreeMap::new();
        for f in &stage.files {
            inputs.insert(format!("file:{f}"), self.files.get(f));
        }
        {
            let outputs = self.outputs.lock().expect("outputs poisoned");
            for d in &stage.deps {
                let Some(h) = outputs.get(d) else {
                    return Err(format!("stage {d}, which it reads, failed"));
                };
                inputs.insert(format!("stage:{d}"), h.clone());
            }
        }
        let want = Record {
            sql,
            params,
            inputs,
            ..Record::default()
        }
        .seal();
        // check, lock, re-check: the decision is taken inside the lock, on
        // the state as the last holder left it
        let lock_path = self.layout.lock_file(&stage.name);
        let _lock =
            StageLock::acquire(&lock_path, &mut |_| {}, cancelled).map_err(|e| e.to_string())?;
        let state_path = self.layout.state_file(&stage.name);
        if let Some(r) = Record::read(&state_path)
            && r.fingerprint == want.fingerprint
        {
            let cached = self.layout.cached(&r.output);
            if cached.exists() {
                // the table is loaded only if a stage that runs reads it
                self.restored
                    .lock()
                    .expect("restored poisoned")
                    .insert(stage.name.clone(), cached);
                if let Some(out) = &stage.output
                    && !out.exists()
                {
                    self.load_restored(&stage.name)?;
                    self.write_output(&self.db.connect(), &stage.name, out)?;
                }
                self.outputs
                    .lock()
                    .expect("outputs poisoned")
                    .insert(stage.name.clone(), r.output.clone());
                return Ok(StageStatus::Restored { rows: r.rows });
            }
        }
        let conn = self.db.connect();
        conn.set_timeout(stage.timeout);
        self.running
            .lock()
            .expect("running poisoned")
            .push((i, conn.interrupt_handle()));
        let result = self.compute(stage, &conn, want, &state_path);
        self.running
            .lock()
            .expect("running poisoned")
            .retain(|(j, _)| *j != i);
        result
    }

    fn compute(
        &self,
        stage: &Stage,
        conn: &weir_engine::Connection,
        want: Record,
        state_path: &Path,
    ) -> Result<StageStatus, String> {
        for d in &stage.deps {
            self.load_restored(d)?;
        }
        let name = quote_ident(&stage.name);
        let made = conn
            .execute(&format!("CREATE OR REPLACE TABLE {name} AS {}", stage.sql))
            .map_err(|e| e.to_string())?;
        let rows = made.rows_affected().unwrap_or(0);
        // the output goes to the cache under its content hash: a temporary
        // file (written atomically by COPY), hashed, renamed into place
        let temp = self.layout.temp(&stage.name.to_lowercase(), "parquet");
        self.copy_to(conn, &stage.name, &temp)?;
        let hash = hash_file(&temp).map_err(|e| format!("cannot read {}: {e}", temp.display()))?;
        let cached = self.layout.cached(&hash);
        std::fs::rename(&temp, &cached).map_err(|e| {
            let _ = std::fs::remove_file(&temp);
            format!("cannot move {} into the cache: {e}", temp.display())
        })?;
        if let Some(out) = &stage.output {
            self.write_output(conn, &stage.name, out)?;
        }
        let record = Record {
            output: hash.clone(),
            rows,
            ..want
        };
        record
            .write(&self.layout, state_path)
            .map_err(|e| e.to_string())?;
        self.outputs
            .lock()
            .expect("outputs poisoned")
            .insert(stage.name.clone(), hash);
        Ok(StageStatus::Ran { rows })
    }

    /// Loads the table of a stage restored from the cache, once, if it
    /// has not been loaded yet (under the map's lock, so a second caller
    /// waits for the first load).
    fn load_restored(&self, name: &str) -> Result<(), String> {
        let mut restored = self.restored.lock().expect("restored poisoned");
        if let Some(path) = restored.remove(name) {
            self.db
                .register_parquet(name, &path)
                .map_err(|e| format!("cannot restore stage {name} from {}: {e}", path.display()))?;
        }
        Ok(())
    }

    /// A stage's `-- output:` file, its folder made if missing.
    fn write_output(
        &self,
        conn: &weir_engine::Connection,
        table: &str,
        path: &Path,
    ) -> Result<(), String> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create folder {}: {e}", dir.display()))?;
        }
        self.copy_to(conn, table, path)
    }

    /// `COPY table TO 'path'`: the one writer of `COPY`, so `-- output:`
    /// files are exactly what COPY writes (format by extension).
    fn copy_to(
        &self,
        conn: &weir_engine::Connection,
        table: &str,
        path: &Path,
    ) -> Result<(), String> {
        let path = path.to_string_lossy().replace('\'', "''");
        conn.execute(&format!("COPY {} TO '{path}'", quote_ident(table)))
            .map(drop)
            .map_err(|e| e.to_string())
    }
}

fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Runs the selected stages of `project` (with what they need): each a
/// node of the executor's DAG scheduler, started as soon as the stages it
/// reads are done, at most one per mutex group at a time, stopped at its
/// timeout. An unchanged stage is restored from the cache. `on_stage` is
/// called once per stage as it ends (from the worker that ran it).
///
/// Relative file paths in stages (and `-- output:`) are relative to the
/// current directory, as for any query; the `weir` binary runs in the
/// project folder.
///
/// # Errors
/// [`Error::Project`] for an unknown stage, [`Error::Io`] if `.weir/`
/// cannot be made, [`Error::Engine`]/[`Error::Executor`] if they cannot
/// start. A stage's failure is in the summary, not an error.
pub fn run(
    project: &Project,
    options: &RunOptions,
    on_stage: impl Fn(&StageReport) + Send + Sync + 'static,
) -> Result<Summary> {
    let start = Instant::now();
    let layout = Layout::new(&project.dir);
    layout.create()?;
    let stages: Vec<Stage> = project
        .select(&options.stages)?
        .into_iter()
        .cloned()
        .collect();
    let mut config = Config::default();
    if let Some(t) = options.threads {
        config.threads = t;
    }
    let db = Database::with_config(config)?;
    // stages mostly wait for their queries (which run on the database's
    // workers), so the stage executor has a worker for each stage that
    // may run at once
    let workers = stages.len().clamp(1, 64);
    let executor = PipelineExecutor::new(ExecutorConfig {
        thread_name: "weir-stage".into(),
        ..ExecutorConfig::with_threads(workers)
    })?;
    let shared = Arc::new(Shared {
        layout,
        db,
        states: StageStates::new(stages.len()),
        stages: stages.clone(),
        outputs: Mutex::new(HashMap::new()),
        restored: Mutex::new(HashMap::new()),
        files: FileHashes::default(),
        reports: Mutex::new(Vec::new()),
        running: Mutex::new(Vec::new()),
        failed: AtomicBool::new(false),
        start,
        on_stage: Box::new(on_stage),
    });
    let mut dag = DagBuilder::new().error_mode(match options.on_error {
        OnError::Fail => ErrorMode::Fail,
        OnError::KeepGoing => ErrorMode::KeepGoing,
        OnError::Ignore => ErrorMode::Ignore,
    });
    for (i, stage) in stages.iter().enumerate() {
        let s = shared.clone();
        let name = stage.name.clone();
        let mut node = Node::lazy(stage.name.clone(), move || {
            if !s.advance(i, WAITING, PENDING) {
                return Err(StepError::new(format!("stage {name} was started twice")));
            }
            Ok(Job::new(name.clone()).with_step(step_fn(name, move |ctx| {
                if !s.advance(i, PENDING, RUNNING) {
                    return Err(StepError::new("stage step ran twice"));
                }
                let began = s.start.elapsed();
                let result = s.run_stage(i, &|| ctx.is_cancelled());
                let span = (began, s.start.elapsed());
                let (status, to) = match result {
                    Ok(status) => (status, DONE),
                    Err(e) => (StageStatus::Failed(e), FAILED),
                };
                if s.advance(i, RUNNING, to) {
                    let error = match &status {
                        StageStatus::Failed(e) => Some(e.clone()),
                        _ => None,
                    };
                    s.report(StageReport {
                        name: s.stages[i].name.clone(),
                        status,
                        span,
                    });
                    if let Some(e) = error {
                        s.failed.store(true, Ordering::Release);
                        return Err(StepError::new(e));
                    }
                }
                Ok(())
            })))
        });
        for d in &stage.deps {
            node = node.after(d.clone());
        }
        if let Some(t) = stage.timeout {
            node = node.timeout(t);
        }
        for m in &stage.mutex {
            node = node.mutex(m.clone());
        }
        dag.push(node);
    }
    let dag = dag
        .build()
        .map_err(|e| Error::Project(format!("the stages' dependencies are not a DAG: {e}")))?;
    let handle = dag.run(&executor);
    let mut interrupted = false;
    let outcome = loop {
        if let Some(outcome) = handle.wait_timeout(Duration::from_millis(20)) {
            break outcome;
        }
        if options.on_error == OnError::Fail
            && !interrupted
            && shared.failed.load(Ordering::Acquire)
        {
            interrupted = true;
            shared.interrupt_all();
        }
    };
    if outcome != weir_executor::DagOutcome::Completed {
        shared.interrupt_all();
    }
    let states = handle.states();
    drop(handle);
    // joins the stage workers: every running stage has ended and reported
    drop(executor);
    for (i, stage) in stages.iter().enumerate() {
        let mine = shared.states.get(i);
        if mine == DONE || mine == FAILED {
            continue;
        }
        let dag_state = states
            .iter()
            .find(|(n, _)| *n == stage.name)
            .map(|(_, s)| *s);
        let status = match dag_state {
            Some(NodeState::Failed | NodeState::TimedOut) => {
                StageStatus::Failed("could not start".into())
            }
            Some(NodeState::Cancelled) => StageStatus::NotRun("the run stopped".into()),
            _ if stage.deps.iter().any(|d| {
                stages
                    .iter()
                    .position(|s| s.name == *d)
                    .is_some_and(|j| shared.states.get(j) != DONE)
            }) =>
            {
                StageStatus::NotRun("a stage it reads did not succeed".into())
            }
            _ => StageStatus::NotRun("the run stopped".into()),
        };
        let now = shared.start.elapsed();
        shared.report(StageReport {
            name: stage.name.clone(),
            status,
            span: (now, now),
        });
    }
    let reports = std::mem::take(&mut *shared.reports.lock().expect("reports poisoned"));
    Ok(Summary {
        stages: reports,
        elapsed: start.elapsed(),
    })
}

/// The folder holding the project's state (`.weir/`).
pub fn state_dir(project: &Path) -> PathBuf {
    project.join(".weir")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seed 003: many workers advancing one stage from the state they read
    /// at once: exactly one wins each step, and a stage never goes back.
    #[test]
    fn each_state_change_has_exactly_one_winner() {
        for _ in 0..200 {
            let states = Arc::new(StageStates::new(1));
            let winners: Vec<(bool, bool, bool)> = std::thread::scope(|scope| {
                let handles: Vec<_> = (0..4)
                    .map(|_| {
                        let states = states.clone();
                        scope.spawn(move || {
                            (
                                states.advance(0, WAITING, PENDING),
                                states.advance(0, PENDING, RUNNING),
                                states.advance(0, RUNNING, DONE),
                            )
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            assert_eq!(winners.iter().filter(|w| w.0).count(), 1);
            assert_eq!(winners.iter().filter(|w| w.1).count(), 1);
            assert_eq!(winners.iter().filter(|w| w.2).count(), 1);
            assert_eq!(states.get(0), DONE);
            // advancing again from any earlier state changes nothing
            assert!(!states.advance(0, WAITING, PENDING));
            assert!(!states.advance(0, RUNNING, FAILED));
            assert_eq!(states.get(0), DONE);
        }
    }
}
