//! The builder: the parallel part of a plan as one executor job of lanes.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow::datatypes::{Schema, SchemaRef};
use crossbeam_channel::Sender;
use weir_executor::{Job, Step, StepContext, StepResult, WorkerKind};
use weir_planner::{Expr, LogicalPlan, TableSource};

use crate::aggregate::{AggregatePlan, AggregateState, conform};
use crate::error::{Error, Result};
use crate::eval::evaluate;
use crate::options::{ExecOptions, Progress};
use crate::source::{LazySeries, SourceResolver, TableData, values_table};
use crate::step::{PipelineBatch, PipelineStep, build_steps, conjunction, remap_columns};

/// A plan cut in two: the parallel part (leaf, filters, sink) and the
/// nodes above it, run on the query thread.
pub(crate) struct PlanSplit<'a> {
    pub(crate) leaf: &'a LogicalPlan,
    /// Filter predicates between the leaf and the sink, lowest first.
    pub(crate) filters: Vec<&'a Expr>,
    pub(crate) sink: Option<&'a LogicalPlan>,
    /// Nodes above the sink, lowest first.
    pub(crate) tail: Vec<&'a LogicalPlan>,
    /// Rows after which lanes may stop pulling morsels (a LIMIT reached
    /// from the sink through projections only).
    pub(crate) early_stop: Option<usize>,
}

impl<'a> PlanSplit<'a> {
    pub(crate) fn new(plan: &'a LogicalPlan) -> Self {
        let mut chain = Vec::new();
        let mut node = Some(plan);
        while let Some(n) = node {
            chain.push(n);
            node = n.input();
        }
        chain.reverse();
        let leaf = chain[0];
        let mut i = 1;
        let mut filters = Vec::new();
        while let Some(LogicalPlan::Filter { predicate, .. }) = chain.get(i) {
            filters.push(predicate);
            i += 1;
        }
        let sink = match chain.get(i) {
            Some(n @ (LogicalPlan::Projection { .. } | LogicalPlan::Aggregate { .. })) => {
                i += 1;
                Some(*n)
            }
            _ => None,
        };
        let tail: Vec<&LogicalPlan> = chain[i..].to_vec();
        let early_stop = if matches!(sink, Some(LogicalPlan::Aggregate { .. })) {
            None
        } else {
            tail.iter()
                .find(|n| !matches!(n, LogicalPlan::Projection { .. }))
                .and_then(|n| match n {
                    LogicalPlan::Limit {
                        offset,
                        fetch: Some(fetch),
                        ..
                    } => Some(offset.saturating_add(*fetch)),
                    _ => None,
                })
        };
        PlanSplit {
            leaf,
            filters,
            sink,
            tail,
            early_stop,
        }
    }
}

/// What each lane does with the rows that survive the steps.
pub(crate) enum Sink {
    /// Keep all columns of the survivors.
    Collect,
    /// Evaluate `exprs` (over `columns`, gathered at the survivors).
    Project {
        exprs: Vec<Expr>,
        display: Vec<Expr>,
        columns: Vec<usize>,
        schema: SchemaRef,
    },
    /// Aggregate into a lane-local partial state.
    Aggregate { plan: AggregatePlan, node: String },
}

impl Sink {
    fn describe(&self) -> String {
        match self {
            Sink::Collect => "collect all columns of the survivors".to_owned(),
            Sink::Project { display, .. } => {
                let exprs: Vec<String> = display.iter().map(ToString::to_string).collect();
                format!("project {} on survivors", exprs.join(", "))
            }
            Sink::Aggregate { plan, node } => {
                format!(
                    "partial {node} [{}], merged on the query thread",
                    plan.describe_inputs().join("; ")
                )
            }
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Sink::Collect => "collect",
            Sink::Project { .. } => "project",
            Sink::Aggregate { .. } => "aggregate",
        }
    }
}

/// A morsel: `len` rows of batch `batch` from row `offset`.
#[derive(Clone, Copy, Debug)]
struct MorselRange {
    batch: usize,
    offset: usize,
    len: usize,
}

/// Where a pipeline's morsels come from.
enum ScanData {
    /// In-memory batches, cut into zero-copy morsels.
    Table(Arc<TableData>),
    /// `range()`, generated one morsel at a time.
    Series(LazySeries),
}

impl ScanData {
    fn num_rows(&self) -> usize {
        match self {
            ScanData::Table(t) => t.num_rows(),
            ScanData::Series(s) => s.num_rows(),
        }
    }

    fn schema(&self) -> &SchemaRef {
        match self {
            ScanData::Table(t) => &t.schema,
            ScanData::Series(s) => s.schema(),
        }
    }

    fn morsel(&self, m: &MorselRange) -> Result<RecordBatch> {
        match self {
            ScanData::Table(t) => Ok(t.batches[m.batch].slice(m.offset, m.len)),
            ScanData::Series(s) => s.rows(m.offset, m.len),
        }
    }

    /// The morsels: runs of at most `morsel_rows` rows within one batch.
    fn morsels(&self, morsel_rows: usize) -> Vec<MorselRange> {
        let lengths: Vec<usize> = match self {
            ScanData::Table(t) => t.batches.iter().map(RecordBatch::num_rows).collect(),
            ScanData::Series(s) => vec![s.num_rows()],
        };
        let mut morsels = Vec::new();
        for (b, rows) in lengths.into_iter().enumerate() {
            let mut offset = 0;
            while offset < rows {
                let len = morsel_rows.min(rows - offset);
                morsels.push(MorselRange {
                    batch: b,
                    offset,
                    len,
                });
                offset += len;
            }
        }
        morsels
    }
}

/// The built parallel part of a query.
pub(crate) struct Pipeline {
    pub(crate) source: String,
    table: ScanData,
    pub(crate) steps: Vec<PipelineStep>,
    pub(crate) sink: Sink,
    morsels: Vec<MorselRange>,
    pub(crate) morsel_rows: usize,
    pub(crate) lanes: usize,
    pub(crate) split: (usize, usize),
    pub(crate) early_stop: Option<usize>,
    pub(crate) cost: u64,
}

impl Pipeline {
    pub(crate) fn build(
        split: &PlanSplit<'_>,
        sources: &dyn SourceResolver,
        threads: (usize, usize),
        options: &ExecOptions,
    ) -> Result<Self> {
        let (source, table) = match split.leaf {
            LogicalPlan::Scan {
                source: source @ TableSource::Series { start, stop, step },
                schema,
            } => (
                describe_source(source),
                ScanData::Series(LazySeries::new(*start, *stop, *step, Arc::clone(schema))?),
            ),
            LogicalPlan::Scan { source, schema } => {
                let table = sources.resolve(source)?;
                if table.schema.fields().len() != schema.fields().len() {
                    return Err(Error::Execution(format!(
                        "{} has {} columns, the plan expects {}",
                        describe_source(source),
                        table.schema.fields().len(),
                        schema.fields().len()
                    )));
                }
                (describe_source(source), ScanData::Table(table))
            }
            LogicalPlan::Values { rows, schema } => (
                format!("values ({} rows)", rows.len()),
                ScanData::Table(Arc::new(values_table(rows, schema)?)),
            ),
            other => {
                return Err(Error::Internal(format!(
                    "a plan leaf must be Scan or Values, not {}",
                    other.display_indent().trim_end()
                )));
            }
        };
        let schema = split.leaf.schema();
        let terms: Vec<Expr> = split
            .filters
            .iter()
            .flat_map(|p| p.conjuncts())
            .cloned()
            .collect();
        let steps = if terms.is_empty() {
            Vec::new()
        } else {
            build_steps(&conjunction(&terms), &schema)
        };
        let sink = match split.sink {
            None => Sink::Collect,
            Some(LogicalPlan::Projection {
                exprs, schema: out, ..
            }) => {
                let mut columns: Vec<usize> = exprs.iter().flat_map(Expr::columns).collect();
                columns.sort_unstable();
                columns.dedup();
                Sink::Project {
                    exprs: exprs.iter().map(|e| remap_columns(e, &columns)).collect(),
                    display: exprs.clone(),
                    columns,
                    schema: Arc::clone(out),
                }
            }
            Some(
                node @ LogicalPlan::Aggregate {
                    group_by,
                    aggregates,
                    schema: out,
                    ..
                },
            ) => Sink::Aggregate {
                plan: AggregatePlan::new(group_by, aggregates, &schema, Arc::clone(out))?,
                node: node
                    .display_indent()
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_owned(),
            },
            Some(_) => return Err(Error::Internal("unexpected sink node".into())),
        };
        let morsel_rows = options.morsel_rows.max(1);
        let morsels = table.morsels(morsel_rows);
        let total_threads = (threads.0 + threads.1).max(1);
        let lanes = total_threads.min(morsels.len()).max(1);
        let rows = table.num_rows() as f64;
        let mut per_row = 1.0;
        let mut surviving = 1.0;
        for step in &steps {
            per_row += surviving * step.cost();
            surviving *= step.selectivity();
        }
        let cost = (rows * per_row / 1000.0) as u64 + 1;
        Ok(Pipeline {
            source,
            table,
            steps,
            sink,
            morsels,
            morsel_rows,
            lanes,
            split: threads,
            early_stop: split.early_stop,
            cost,
        })
    }

    /// Number of morsels.
    pub(crate) fn num_morsels(&self) -> usize {
        self.morsels.len()
    }

    /// Rows of the source.
    pub(crate) fn num_rows(&self) -> usize {
        self.table.num_rows()
    }

    /// The schema of the source.
    pub(crate) fn scan_schema(&self) -> &SchemaRef {
        self.table.schema()
    }

    /// The EXPLAIN lines of the job.
    pub(crate) fn describe(&self, out: &mut String) {
        let (main, reserve) = self.split;
        let _ = writeln!(
            out,
            "job \"{}\": cost {}, {} lane{} on {} main + {} reserve workers, {} morsel{} of up to {} rows ({} rows)",
            self.source,
            self.cost,
            self.lanes,
            if self.lanes == 1 { "" } else { "s" },
            main,
            reserve,
            self.morsels.len(),
            if self.morsels.len() == 1 { "" } else { "s" },
            self.morsel_rows,
            self.num_rows()
        );
        let _ = writeln!(
            out,
            "  each lane: pull morsel from the shared cursor -> steps -> {} sink{}",
            self.sink.name(),
            match self.early_stop {
                Some(n) => format!(" (lanes stop after {n} rows)"),
                None => String::new(),
            }
        );
        let _ = writeln!(
            out,
            "  scan {} ({} columns)",
            self.source,
            self.table.schema().fields().len()
        );
        for (i, step) in self.steps.iter().enumerate() {
            let _ = writeln!(out, "  step {}: {step}", i + 1);
        }
        let _ = writeln!(out, "  sink: {}", self.sink.describe());
    }
}

/// Per step counters, summed over the morsels a lane ran.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct StepCounters {
    pub(crate) rows_in: u64,
    pub(crate) rows_out: u64,
    pub(crate) nanos: u64,
    pub(crate) morsels_main: u64,
    pub(crate) morsels_reserve: u64,
}

impl StepCounters {
    pub(crate) fn add(&mut self, other: &StepCounters) {
        self.rows_in += other.rows_in;
        self.rows_out += other.rows_out;
        self.nanos += other.nanos;
        self.morsels_main += other.morsels_main;
        self.morsels_reserve += other.morsels_reserve;
    }

    fn record(
        &mut self,
        worker: WorkerKind,
        rows_in: usize,
        rows_out: usize,
        started: Option<Instant>,
    ) {
        self.rows_in += rows_in as u64;
        self.rows_out += rows_out as u64;
        if let Some(t) = started {
            self.nanos += t.elapsed().as_nanos() as u64;
        }
        match worker {
            WorkerKind::Main => self.morsels_main += 1,
            WorkerKind::Reserve => self.morsels_reserve += 1,
        }
    }
}

/// What a lane hands to the query thread.
pub(crate) struct LaneReport {
    pub(crate) output: LaneOutput,
    /// Scan, each step, then the sink.
    pub(crate) counters: Vec<StepCounters>,
}

pub(crate) enum LaneOutput {
    /// Output batches tagged with their morsel's index.
    Batches(Vec<(usize, RecordBatch)>),
    Aggregate(AggregateState),
}

/// State the lanes of one job share.
pub(crate) struct LaneShared {
    pipeline: Pipeline,
    cursor: AtomicUsize,
    produced: AtomicUsize,
    progress: Option<Arc<Progress>>,
    analyze: bool,
    /// The first error a lane hit, with its type intact.
    pub(crate) error: Mutex<Option<Error>>,
}

impl LaneShared {
    pub(crate) fn new(pipeline: Pipeline, options: &ExecOptions) -> Self {
        LaneShared {
            pipeline,
            cursor: AtomicUsize::new(0),
            produced: AtomicUsize::new(0),
            progress: options.progress.clone(),
            analyze: options.analyze,
            error: Mutex::new(None),
        }
    }

    pub(crate) fn pipeline(&self) -> &Pipeline {
        &self.pipeline
    }

    fn next_morsel(&self) -> Option<Result<(usize, RecordBatch)>> {
        let i = self.cursor.fetch_add(1, Ordering::Relaxed);
        let m = self.pipeline.morsels.get(i)?;
        Some(self.pipeline.table.morsel(m).map(|b| (i, b)))
    }

    fn limit_reached(&self) -> bool {
        self.pipeline
            .early_stop
            .is_some_and(|n| self.produced.load(Ordering::Relaxed) >= n)
    }
}

/// Makes the job: one lane step per worker thread.
pub(crate) fn make_job(shared: &Arc<LaneShared>, tx: &Sender<LaneReport>) -> Job {
    let p = &shared.pipeline;
    let mut job = Job::new(format!("pipeline {}", p.source)).with_cost(p.cost);
    for lane in 0..p.lanes {
        job.push_step(Box::new(Lane {
            shared: Arc::clone(shared),
            tx: tx.clone(),
            name: format!("lane {lane}"),
        }));
    }
    job
}

/// One lane: pulls morsels from the shared cursor until none are left and
/// pushes each through the steps into its own sink.
struct Lane {
    shared: Arc<LaneShared>,
    tx: Sender<LaneReport>,
    name: String,
}

impl Step for Lane {
    fn run(&self, ctx: &StepContext<'_>) -> StepResult {
        match self.run_lane(ctx) {
            Ok(()) => Ok(()),
            Err(error) => {
                let message = error.to_string();
                let mut first = self.shared.error.lock().unwrap_or_else(|e| e.into_inner());
                if first.is_none() {
                    *first = Some(error);
                }
                Err(message.into())
            }
        }
    }

    fn name(&self) -> &str {
        &self.name
    }
}

impl Lane {
    fn run_lane(&self, ctx: &StepContext<'_>) -> Result<()> {
        let shared = &*self.shared;
        let p = &shared.pipeline;
        let mut counters = vec![StepCounters::default(); p.steps.len() + 2];
        let mut output = match &p.sink {
            Sink::Aggregate { plan, .. } => LaneOutput::Aggregate(plan.new_state()?),
            _ => LaneOutput::Batches(Vec::new()),
        };
        let clock = || shared.analyze.then(Instant::now);
        let worker = ctx.worker();
        loop {
            if ctx.is_cancelled() || shared.limit_reached() {
                break;
            }
            let Some(next) = shared.next_morsel() else {
                break;
            };
            let (index, morsel) = next?;
            let rows = morsel.num_rows();
            counters[0].record(worker, rows, rows, None);
            let mut batch = PipelineBatch::new(morsel);
            for (i, step) in p.steps.iter().enumerate() {
                let rows_in = batch.num_rows();
                if rows_in == 0 {
                    break;
                }
                let started = clock();
                batch = step.apply(batch)?;
                counters[i + 1].record(worker, rows_in, batch.num_rows(), started);
            }
            let rows_in = batch.num_rows();
            let started = clock();
            let rows_out = match (&p.sink, &mut output) {
                (Sink::Aggregate { plan, .. }, LaneOutput::Aggregate(state)) => {
                    state.update(plan, &batch)?;
                    0
                }
                (_, LaneOutput::Batches(_)) if rows_in == 0 => 0,
                (Sink::Collect, LaneOutput::Batches(out)) => {
                    out.push((index, batch.into_record_batch()?));
                    rows_in
                }
                (
                    Sink::Project {
                        exprs,
                        columns,
                        schema,
                        ..
                    },
                    LaneOutput::Batches(out),
                ) => {
                    out.push((index, project(&batch, exprs, columns, schema)?));
                    rows_in
                }
                _ => return Err(Error::Internal("lane sink and output disagree".into())),
            };
            if rows_out > 0 && p.early_stop.is_some() {
                shared.produced.fetch_add(rows_out, Ordering::Relaxed);
            }
            counters[p.steps.len() + 1].record(worker, rows_in, rows_out, started);
            if let Some(progress) = &shared.progress {
                progress.morsel_done();
            }
        }
        if ctx.is_cancelled() {
            return Ok(());
        }
        // the query thread holds the receiver until the job ends
        let _ = self.tx.send(LaneReport { output, counters });
        Ok(())
    }
}

/// Evaluates projection `exprs` (over `columns`) on the selected rows.
pub(crate) fn project(
    batch: &PipelineBatch,
    exprs: &[Expr],
    columns: &[usize],
    schema: &SchemaRef,
) -> Result<RecordBatch> {
    let rows = batch.num_rows();
    let compact = if columns.is_empty() {
        let options = RecordBatchOptions::new().with_row_count(Some(rows));
        RecordBatch::try_new_with_options(Arc::new(Schema::empty()), vec![], &options)
            .map_err(Error::arrow)?
    } else {
        batch.materialize(columns)?
    };
    project_batch(&compact, exprs, schema)
}

/// Evaluates `exprs` over all rows of `batch` into a batch of `schema`.
pub(crate) fn project_batch(
    batch: &RecordBatch,
    exprs: &[Expr],
    schema: &SchemaRef,
) -> Result<RecordBatch> {
    let arrays = exprs
        .iter()
        .zip(schema.fields())
        .map(|(e, f)| conform(evaluate(e, batch)?, f.data_type()))
        .collect::<Result<Vec<ArrayRef>>>()?;
    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    RecordBatch::try_new_with_options(Arc::clone(schema), arrays, &options).map_err(Error::arrow)
}

fn describe_source(source: &TableSource) -> String {
    match source {
        TableSource::Table(t) => t.clone(),
        TableSource::File { path, .. } => format!("'{path}'"),
        TableSource::Series { start, stop, step } => format!("range({start}, {stop}, {step})"),
    }
}
