//! `execute` and `explain`: cut the plan into pipelines, run each as a
//! job of lanes and its breaker's merge as a parallel job.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use weir_executor::{Job, JobOutcome, PipelineExecutor, StepContext, StepResult, step_fn};
use weir_planner::LogicalPlan;

use crate::aggregate::{RADIX_BUCKETS, merge_partition};
use crate::error::{Error, Result};
use crate::fairness::YieldPoint;
use crate::memory::MemoryAccountant;
use crate::options::ExecOptions;
use crate::pipeline::{
    Breaker, BreakerSpec, LaneOutput, LaneReport, LaneShared, Pipeline, Segment, Sink,
    StepCounters, batch_bytes, make_job, segments,
};
use crate::profile::{OperatorProfile, QueryProfile};
use crate::rewrite::split_distinct;
use crate::sort::{MergePlan, SortedRun, TopN};
use crate::source::{SourceResolver, TableData};
use crate::tail::limit;

/// How long the query thread waits on the job before checking the cancel
/// flag and the deadline again.
const WAIT_SLICE: Duration = Duration::from_millis(5);

/// The result of [`execute`].
#[derive(Clone, Debug)]
pub struct QueryOutput {
    /// The plan's output schema; every batch has it.
    pub schema: SchemaRef,
    /// The rows (no batch is empty).
    pub batches: Vec<RecordBatch>,
    /// Per-step statistics, when [`ExecOptions::analyze`] is set.
    pub profile: Option<QueryProfile>,
}

impl QueryOutput {
    /// Total rows over all batches.
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }
}

/// Runs `plan` on `executor` as a chain of pipelines (cut at the
/// breakers; see the crate docs): each pipeline is one job of lanes over
/// morsels of its input, ended by a breaker whose merge runs as a second,
/// parallel job where it has real work (aggregation, sort). A pipeline
/// starts once the pipeline it reads has finished.
///
/// Returns [`Error::Cancelled`] once `options.cancel` is set and
/// [`Error::Timeout`] once `options.deadline` passes (the running job is
/// cancelled and its lanes stop after their current morsel), and the first
/// error a lane hit, unchanged (e.g. [`Error::Eval`] for a division by
/// zero).
pub fn execute(
    plan: &LogicalPlan,
    sources: &dyn SourceResolver,
    executor: &PipelineExecutor,
    options: &ExecOptions,
) -> Result<QueryOutput> {
    let started = Instant::now();
    check_interrupt(options, started)?;
    let memory = Arc::new(MemoryAccountant::new());
    let rewritten = split_distinct(plan);
    let physical = rewritten.as_ref().unwrap_or(plan);
    let run = Run {
        executor,
        options,
        started,
        memory: &memory,
    };
    let mut operators = Vec::new();
    let mut current: Option<(SchemaRef, Vec<RecordBatch>)> = None;
    let mut first_lanes = 0;
    let mut morsels_total = 0;
    for (i, segment) in segments(physical)?.iter().enumerate() {
        check_interrupt(options, started)?;
        if segment.is_pass_through() {
            // LIMIT over a finished result: slices, no job
            let (schema, batches) = current
                .take()
                .ok_or_else(|| Error::Internal("a pass-through pipeline without input".into()))?;
            let rows_in = count_rows(&batches);
            let t = Instant::now();
            let out = match segment.breaker {
                BreakerSpec::Materialize {
                    limit: Some((offset, fetch)),
                } => limit(batches, offset, fetch),
                _ => batches,
            };
            if options.analyze {
                operators.push(query_thread_op(
                    segment_name(segment),
                    rows_in,
                    count_rows(&out),
                    t.elapsed(),
                ));
            }
            current = Some((schema, out));
            continue;
        }
        let input = current
            .take()
            .map(|(schema, batches)| Arc::new(TableData::new(schema, batches)));
        let input_bytes = input
            .as_ref()
            .map_or(0, |t| t.batches.iter().map(batch_bytes).sum());
        let pipeline = Pipeline::build(segment, input, sources, executor.split(), options)?;
        if i == 0 {
            first_lanes = pipeline.lanes;
            morsels_total = pipeline.num_morsels() as u64;
            if let Some(progress) = &options.progress {
                progress.start(morsels_total);
            }
        }
        let out = run.pipeline(pipeline, i == 0, &mut operators)?;
        // the previous result was this pipeline's input: released now
        memory.shrink(input_bytes);
        current = Some(out);
    }
    let (_, batches) = current.ok_or_else(|| Error::Internal("a plan without pipelines".into()))?;
    let schema = plan.schema();
    let batches = batches
        .into_iter()
        .filter(|b| b.num_rows() > 0)
        .map(|b| {
            if b.schema() == schema {
                Ok(b)
            } else {
                b.with_schema(Arc::clone(&schema)).map_err(Error::arrow)
            }
        })
        .collect::<Result<Vec<_>>>()?;
    let profile = options.analyze.then(|| QueryProfile {
        operators,
        lanes: first_lanes,
        morsels_total,
        total: started.elapsed(),
        peak_memory: memory.peak(),
    });
    Ok(QueryOutput {
        schema,
        batches,
        profile,
    })
}

fn count_rows(batches: &[RecordBatch]) -> u64 {
    batches.iter().map(|b| b.num_rows() as u64).sum()
}

fn query_thread_op(name: String, rows_in: u64, rows_out: u64, time: Duration) -> OperatorProfile {
    OperatorProfile {
        name,
        rows_in,
        rows_out,
        time,
        ..OperatorProfile::default()
    }
}

fn segment_name(segment: &Segment<'_>) -> String {
    segment
        .nodes
        .iter()
        .map(|n| {
            n.display_indent()
                .lines()
                .next()
                .unwrap_or_default()
                .to_owned()
        })
        .collect::<Vec<_>>()
        .join(" -> ")
}

/// What every job of one query shares.
struct Run<'a> {
    executor: &'a PipelineExecutor,
    options: &'a ExecOptions,
    started: Instant,
    memory: &'a Arc<MemoryAccountant>,
}

impl Run<'_> {
    /// Submits `job` and waits for it, cancelling it on interrupt; a
    /// failed job gives the first error in `error` (with its type).
    fn wait(&self, job: Job, error: &Mutex<Option<Error>>) -> Result<()> {
        check_interrupt(self.options, self.started)?;
        let ticket = self.executor.submit(job)?;
        let outcome = loop {
            let slice = match self.options.deadline {
                Some(d) => d.saturating_duration_since(Instant::now()).min(WAIT_SLICE),
                None => WAIT_SLICE,
            };
            if let Some(outcome) = ticket.wait_timeout(slice) {
                break outcome;
            }
            if let Err(e) = check_interrupt(self.options, self.started) {
                ticket.cancel();
                return Err(e);
            }
        };
        match outcome {
            JobOutcome::Completed => Ok(()),
            JobOutcome::Cancelled => Err(Error::Cancelled),
            JobOutcome::Failed(failure) => {
                let first = error.lock().unwrap_or_else(|e| e.into_inner()).take();
                Err(first.unwrap_or(Error::Execution(failure.message)))
            }
        }
    }

    /// Runs `tasks` calls of `task` (task index in, result out) as one job
    /// of up to `workers` steps that claim task indices from a shared
    /// cursor, like morsels; results come back in task order.
    fn tasks<T: Send + 'static>(
        &self,
        name: &str,
        tasks: usize,
        cost: u64,
        task: impl Fn(usize) -> Result<T> + Send + Sync + 'static,
    ) -> Result<Vec<T>> {
        if tasks == 0 {
            return Ok(Vec::new());
        }
        let (main, reserve) = self.executor.split();
        let workers = (main + reserve).max(1).min(tasks);
        let shared = Arc::new(TaskShared {
            cursor: AtomicUsize::new(0),
            results: Mutex::new((0..tasks).map(|_| None).collect()),
            error: Mutex::new(None),
            task,
            tasks,
        });
        let mut job = Job::new(name.to_owned()).with_cost(cost);
        for w in 0..workers {
            let shared = Arc::clone(&shared);
            job.push_step(Box::new(step_fn(
                format!("{name} worker {w}"),
                move |ctx: &StepContext<'_>| shared.run(ctx),
            )));
        }
        self.wait(job, &shared.error)?;
        let results =
            std::mem::take(&mut *shared.results.lock().unwrap_or_else(|e| e.into_inner()));
        results
            .into_iter()
            .map(|r| r.ok_or_else(|| Error::Internal(format!("a task of {name} did not run"))))
            .collect()
    }

    /// Runs one pipeline: its job of lanes, then its breaker's merge.
    /// Returns the pipeline's result.
    fn pipeline(
        &self,
        pipeline: Pipeline,
        first: bool,
        operators: &mut Vec<OperatorProfile>,
    ) -> Result<(SchemaRef, Vec<RecordBatch>)> {
        let lanes = pipeline.lanes;
        let mut options = self.options.clone();
        if !first {
            options.progress = None;
        }
        let shared = Arc::new(LaneShared::new(pipeline, &options, Arc::clone(self.memory)));
        let (tx, rx) = crossbeam_channel::unbounded();
        let job = make_job(&shared, &tx);
        drop(tx);
        self.wait(job, &shared.error)?;
        let reports: Vec<LaneReport> = rx.try_iter().collect();
        if reports.len() != lanes {
            return Err(Error::Internal(format!(
                "{} of {lanes} lanes reported",
                reports.len()
            )));
        }
        let p = shared.pipeline();
        let mut counters = vec![StepCounters::default(); p.steps.len() + 3];
        let mut outputs = Vec::with_capacity(reports.len());
        for report in reports {
            for (total, c) in counters.iter_mut().zip(&report.counters) {
                total.add(c);
            }
            outputs.push(report.output);
        }
        let held: usize = outputs.iter().map(LaneOutput::size).sum();
        let partial_rows: u64 = outputs.iter().map(|o| o.rows() as u64).sum();
        let t = Instant::now();
        let (batches, parallel_merge) = self.finish_breaker(p, outputs)?;
        let merge_time = t.elapsed();
        self.memory.shrink(held);
        let out_bytes: usize = batches.iter().map(batch_bytes).sum();
        self.memory.grow(out_bytes);
        if self.options.analyze {
            operators.extend(parallel_operators(p, &counters, first));
            if let Some(merge) = merge_name(p) {
                operators.push(OperatorProfile {
                    name: merge,
                    rows_in: partial_rows,
                    rows_out: count_rows(&batches),
                    time: merge_time,
                    parallel: parallel_merge,
                    ..OperatorProfile::default()
                });
            }
        }
        Ok((output_schema(p), batches))
    }

    /// The breaker's merge of the lanes' outputs; `true` if it ran as a
    /// parallel job.
    fn finish_breaker(
        &self,
        p: &Pipeline,
        outputs: Vec<LaneOutput>,
    ) -> Result<(Vec<RecordBatch>, bool)> {
        match &p.breaker {
            Breaker::Materialize { limit: lim } => {
                let mut batches: Vec<(usize, RecordBatch)> = Vec::new();
                for o in outputs {
                    match o {
                        LaneOutput::Batches(b) => batches.extend(b),
                        _ => return Err(Error::Internal("a materialise lane without rows".into())),
                    }
                }
                // morsel order: the output is the input's order, whatever
                // the lanes' timing
                batches.sort_by_key(|(i, _)| *i);
                let batches = batches.into_iter().map(|(_, b)| b).collect();
                Ok((
                    match lim {
                        Some((offset, fetch)) => limit(batches, *offset, *fetch),
                        None => batches,
                    },
                    false,
                ))
            }
            Breaker::Aggregate | Breaker::Distinct { .. } => {
                let plan = match (&p.sink, &p.breaker) {
                    (Sink::Aggregate { plan, .. }, _) | (_, Breaker::Distinct { plan }) => plan,
                    _ => {
                        return Err(Error::Internal(
                            "an aggregate breaker without a plan".into(),
                        ));
                    }
                };
                let mut states = Vec::with_capacity(outputs.len());
                for o in outputs {
                    match o {
                        LaneOutput::Partitioned(s) => states.push(s),
                        _ => {
                            return Err(Error::Internal("an aggregate lane without groups".into()));
                        }
                    }
                }
                let groups: usize = states.iter().map(|s| s.state.num_groups()).sum();
                let partitions = if plan.has_groups() {
                    aggregate_partitions(groups, p.split)
                } else {
                    1
                };
                if states.len() == 1 {
                    // one lane: its groups are already merged
                    let state = states.pop().expect("one lane").state;
                    return Ok((vec![state.finish(plan)?], false));
                }
                if partitions == 1 {
                    let (batch, _) = merge_partition(plan, &states, 0..RADIX_BUCKETS)?;
                    return Ok((vec![batch], false));
                }
                let plan = Arc::new(plan.clone());
                let states = Arc::new(states);
                let memory = Arc::clone(self.memory);
                let per = RADIX_BUCKETS / partitions;
                let parts = self.tasks(
                    "merge aggregate partitions",
                    partitions,
                    groups as u64 / 1000 + 1,
                    move |i| {
                        let (batch, size) =
                            merge_partition(&plan, &states, i * per..(i + 1) * per)?;
                        memory.grow(size);
                        memory.shrink(size);
                        Ok(batch)
                    },
                )?;
                Ok((parts, true))
            }
            Breaker::TopN { sort, k } => {
                let mut top = TopN::new(sort, *k)?;
                for o in outputs {
                    match o {
                        LaneOutput::TopN(b, seq) => top.push(sort, b, seq)?,
                        _ => return Err(Error::Internal("a top-N lane without rows".into())),
                    }
                }
                let (batch, _) = top.finish(sort)?;
                Ok((vec![batch], false))
            }
            Breaker::Sort { .. } => {
                let mut runs = Vec::with_capacity(outputs.len());
                for o in outputs {
                    match o {
                        LaneOutput::Run(r) => runs.push(r),
                        _ => return Err(Error::Internal("a sort lane without a run".into())),
                    }
                }
                let rows: usize = runs.iter().map(SortedRun::num_rows).sum();
                let (main, reserve) = p.split;
                let wanted = if rows < 2 * SORT_PARTITION_ROWS {
                    1
                } else {
                    (4 * (main + reserve))
                        .min(rows / SORT_PARTITION_ROWS)
                        .max(1)
                };
                let merge = MergePlan::new(&runs, wanted);
                if merge.partitions == 1 || runs.len() == 1 {
                    let batches = (0..merge.partitions)
                        .map(|i| merge.merge(&runs, i))
                        .collect::<Result<Vec<_>>>()?;
                    return Ok((batches.into_iter().flatten().collect(), false));
                }
                let runs = Arc::new(runs);
                let merge = Arc::new(merge);
                let parts = self.tasks(
                    "merge sorted runs",
                    merge.partitions,
                    rows as u64 / 1000 + 1,
                    {
                        let merge = Arc::clone(&merge);
                        move |i| merge.merge(&runs, i)
                    },
                )?;
                Ok((parts.into_iter().flatten().collect(), true))
            }
        }
    }
}

/// Rows per partition of a parallel sort merge, at least.
const SORT_PARTITION_ROWS: usize = 1 << 14;

/// Merge partitions for `groups` partial groups: one when few, else
/// enough for every worker to claim several (a power of two dividing
/// [`RADIX_BUCKETS`]).
fn aggregate_partitions(groups: usize, (main, reserve): (usize, usize)) -> usize {
    if groups < 1 << 14 {
        return 1;
    }
    let workers = (main + reserve).max(1);
    (groups >> 14)
        .clamp(4 * workers, RADIX_BUCKETS)
        .next_power_of_two()
        .min(RADIX_BUCKETS)
}

/// State the workers of a [`Run::tasks`] job share.
struct TaskShared<T, F> {
    cursor: AtomicUsize,
    results: Mutex<Vec<Option<T>>>,
    error: Mutex<Option<Error>>,
    task: F,
    tasks: usize,
}

impl<T, F: Fn(usize) -> Result<T>> TaskShared<T, F> {
    fn run(&self, ctx: &StepContext<'_>) -> StepResult {
        let yield_point = YieldPoint::new();
        loop {
            yield_point.between_units(ctx);
            if ctx.is_cancelled() {
                return Ok(());
            }
            let i = self.cursor.fetch_add(1, Ordering::Relaxed);
            if i >= self.tasks {
                return Ok(());
            }
            match (self.task)(i) {
                Ok(v) => self.results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(v),
                Err(error) => {
                    let message = error.to_string();
                    let mut first = self.error.lock().unwrap_or_else(|e| e.into_inner());
                    if first.is_none() {
                        *first = Some(error);
                    }
                    return Err(message.into());
                }
            }
        }
    }
}

/// The schema of a pipeline's result.
fn output_schema(p: &Pipeline) -> SchemaRef {
    match (&p.sink, &p.breaker) {
        (Sink::Aggregate { plan, .. }, _) | (_, Breaker::Distinct { plan }) => plan.schema(),
        (Sink::Project { schema, .. }, _) => Arc::clone(schema),
        (Sink::Collect, _) => Arc::clone(p.scan_schema()),
    }
}

/// The EXPLAIN ANALYZE line of a breaker's merge, if it has one.
fn merge_name(p: &Pipeline) -> Option<String> {
    Some(match &p.breaker {
        Breaker::Materialize { limit: None } => return None,
        Breaker::Materialize {
            limit: Some((offset, fetch)),
        } => format!(
            "limit {} offset {offset}",
            fetch.map_or("ALL".to_owned(), |f| f.to_string())
        ),
        Breaker::Aggregate => "merge aggregate partitions".to_owned(),
        Breaker::Distinct { .. } => "merge distinct partitions".to_owned(),
        Breaker::TopN { k, .. } => format!("merge top-{k}"),
        Breaker::Sort { .. } => "merge sorted runs".to_owned(),
    })
}

/// Describes how `plan` would run, without running it: the plan, then
/// each pipeline with its lanes and morsels, its steps in order with their
/// estimated selectivity and cost, its sink and its breaker.
pub fn explain(
    plan: &LogicalPlan,
    sources: &dyn SourceResolver,
    executor: &PipelineExecutor,
    options: &ExecOptions,
) -> Result<String> {
    let mut out = String::from("Logical plan:\n");
    for line in plan.display_indent().lines() {
        let _ = writeln!(out, "  {line}");
    }
    let rewritten = split_distinct(plan);
    if let Some(physical) = &rewritten {
        out.push_str("Physical plan (DISTINCT aggregates split in two):\n");
        for line in physical.display_indent().lines() {
            let _ = writeln!(out, "  {line}");
        }
    }
    let physical = rewritten.as_ref().unwrap_or(plan);
    for (i, segment) in segments(physical)?.iter().enumerate() {
        let _ = writeln!(
            out,
            "Pipeline {}{}: {}",
            i + 1,
            if i == 0 {
                String::new()
            } else {
                format!(" (after pipeline {i})")
            },
            segment_name(segment)
        );
        if i > 0 {
            // its input does not exist before the query runs
            let _ = writeln!(
                out,
                "  job over the result of pipeline {i}: {}",
                describe_segment(segment)
            );
            continue;
        }
        let pipeline = Pipeline::build(segment, None, sources, executor.split(), options)?;
        let mut job = String::new();
        pipeline.describe(&mut job);
        for line in job.lines() {
            let _ = writeln!(out, "  {line}");
        }
    }
    Ok(out)
}

/// A one-line summary of a later pipeline for EXPLAIN.
fn describe_segment(segment: &Segment<'_>) -> String {
    let mut parts = Vec::new();
    if !segment.filters.is_empty() {
        parts.push(format!("{} filter(s)", segment.filters.len()));
    }
    if let Some(n) = segment.sink {
        parts.push(
            n.display_indent()
                .lines()
                .next()
                .unwrap_or_default()
                .to_owned(),
        );
    }
    parts.push(
        match segment.breaker {
            BreakerSpec::Materialize { limit: None } => "materialise",
            BreakerSpec::Materialize { limit: Some(_) } => "limit (slices, no job)",
            BreakerSpec::Aggregate => "partial aggregates, merged by radix partition in parallel",
            BreakerSpec::Distinct => "distinct by radix partition in parallel",
            BreakerSpec::TopN { .. } => "top-N: per-lane bounded candidates",
            BreakerSpec::Sort(_) => "sorted runs per lane, merged in parallel",
        }
        .to_owned(),
    );
    parts.join(" -> ")
}

fn parallel_operators(
    pipeline: &Pipeline,
    counters: &[StepCounters],
    first: bool,
) -> Vec<OperatorProfile> {
    let op = |name: String, c: &StepCounters| OperatorProfile {
        name,
        rows_in: c.rows_in,
        rows_out: c.rows_out,
        time: Duration::from_nanos(c.nanos),
        morsels_main: c.morsels_main,
        morsels_reserve: c.morsels_reserve,
        parallel: true,
    };
    let mut ops = Vec::new();
    if first {
        ops.push(op(
            format!(
                "scan {} ({} columns)",
                pipeline.source,
                pipeline.scan_schema().fields().len()
            ),
            &counters[0],
        ));
    }
    for (i, s) in pipeline.steps.iter().enumerate() {
        ops.push(op(format!("filter {}", s.predicate()), &counters[i + 1]));
    }
    let sink_at = pipeline.steps.len() + 1;
    let lane_breaker = &counters[sink_at + 1];
    match &pipeline.sink {
        Sink::Aggregate { node, .. } => {
            // its partial groups are what the lanes hand on
            let mut c = counters[sink_at];
            c.rows_out = lane_breaker.rows_out;
            c.nanos += lane_breaker.nanos;
            ops.push(op(format!("partial {node}"), &c));
            return ops;
        }
        Sink::Project { display, .. } => ops.push(op(
            format!(
                "project {}",
                display
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            &counters[sink_at],
        )),
        Sink::Collect => {}
    }
    if !matches!(pipeline.breaker, Breaker::Materialize { .. }) {
        let mut c = *lane_breaker;
        if matches!(pipeline.sink, Sink::Collect) {
            c.rows_in = counters[sink_at].rows_in;
        }
        ops.push(op(format!("{} (lanes)", pipeline.breaker.name()), &c));
    }
    ops
}

fn check_interrupt(options: &ExecOptions, started: Instant) -> Result<()> {
    if options.is_cancelled() {
        return Err(Error::Cancelled);
    }
    if options.is_past_deadline() {
        let budget = options
            .deadline
            .map_or(Duration::ZERO, |d| d.saturating_duration_since(started));
        return Err(Error::Timeout(budget));
    }
    Ok(())
}
