//! `execute` and `explain`: build the job, run it, finish on the query
//! thread.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use weir_executor::{JobOutcome, PipelineExecutor};
use weir_planner::LogicalPlan;

use crate::error::{Error, Result};
use crate::options::ExecOptions;
use crate::pipeline::{
    LaneOutput, LaneReport, LaneShared, Pipeline, PlanSplit, Sink, StepCounters, make_job,
};
use crate::profile::{OperatorProfile, QueryProfile};
use crate::source::SourceResolver;
use crate::tail::run_node;

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

/// Runs `plan` on `executor`: its parallel part (scan, filters, projection
/// or partial aggregation) as one job of lanes over morsels, the rest on
/// the calling thread.
///
/// Returns [`Error::Cancelled`] once `options.cancel` is set and
/// [`Error::Timeout`] once `options.deadline` passes (the job is cancelled
/// and its lanes stop after their current morsel), and the first error a
/// lane hit, unchanged (e.g. [`Error::Eval`] for a division by zero).
pub fn execute(
    plan: &LogicalPlan,
    sources: &dyn SourceResolver,
    executor: &PipelineExecutor,
    options: &ExecOptions,
) -> Result<QueryOutput> {
    let started = Instant::now();
    check_interrupt(options, started)?;
    let split = PlanSplit::new(plan);
    let pipeline = Pipeline::build(&split, sources, executor.split(), options)?;
    if let Some(progress) = &options.progress {
        progress.start(pipeline.num_morsels() as u64);
    }
    let lanes = pipeline.lanes;
    let morsels_total = pipeline.num_morsels() as u64;
    let shared = Arc::new(LaneShared::new(pipeline, options));
    let (tx, rx) = crossbeam_channel::unbounded();
    let job = make_job(&shared, &tx);
    drop(tx);
    check_interrupt(options, started)?;
    let ticket = executor.submit(job)?;
    let outcome = loop {
        let slice = match options.deadline {
            Some(d) => d.saturating_duration_since(Instant::now()).min(WAIT_SLICE),
            None => WAIT_SLICE,
        };
        if let Some(outcome) = ticket.wait_timeout(slice) {
            break outcome;
        }
        if let Err(e) = check_interrupt(options, started) {
            ticket.cancel();
            return Err(e);
        }
    };
    match outcome {
        JobOutcome::Completed => {}
        JobOutcome::Cancelled => return Err(Error::Cancelled),
        JobOutcome::Failed(failure) => {
            let first = shared
                .error
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            return Err(first.unwrap_or(Error::Execution(failure.message)));
        }
    }
    let reports: Vec<LaneReport> = rx.try_iter().collect();
    if reports.len() != lanes {
        return Err(Error::Internal(format!(
            "{} of {lanes} lanes reported",
            reports.len()
        )));
    }
    let pipeline = shared.pipeline();
    let mut counters = vec![StepCounters::default(); pipeline.steps.len() + 2];
    let mut batches: Vec<(usize, RecordBatch)> = Vec::new();
    let mut merged = None;
    for report in reports {
        for (total, c) in counters.iter_mut().zip(&report.counters) {
            total.add(c);
        }
        match report.output {
            LaneOutput::Batches(b) => batches.extend(b),
            LaneOutput::Aggregate(state) => match &mut merged {
                None => merged = Some(state),
                Some(m) => {
                    let t = Instant::now();
                    m.merge(state)?;
                    counters.last_mut().expect("sink").nanos += t.elapsed().as_nanos() as u64;
                }
            },
        }
    }
    let mut current: Vec<RecordBatch> = match (&pipeline.sink, merged) {
        (Sink::Aggregate { plan, .. }, Some(state)) => {
            let t = Instant::now();
            let batch = state.finish(plan)?;
            let sink = counters.last_mut().expect("sink");
            sink.nanos += t.elapsed().as_nanos() as u64;
            sink.rows_out = batch.num_rows() as u64;
            vec![batch]
        }
        (Sink::Aggregate { .. }, None) => {
            return Err(Error::Internal("no partial aggregate state".into()));
        }
        _ => {
            // morsel order: the output is the table's order, whatever the
            // lanes' timing
            batches.sort_by_key(|(i, _)| *i);
            batches.into_iter().map(|(_, b)| b).collect()
        }
    };
    let mut operators = Vec::new();
    if options.analyze {
        operators = parallel_operators(pipeline, &counters);
    }
    for node in &split.tail {
        check_interrupt(options, started)?;
        let rows_in: usize = current.iter().map(RecordBatch::num_rows).sum();
        let t = Instant::now();
        current = run_node(node, current)?;
        if options.analyze {
            operators.push(OperatorProfile {
                name: node
                    .display_indent()
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_owned(),
                rows_in: rows_in as u64,
                rows_out: current.iter().map(|b| b.num_rows() as u64).sum(),
                time: t.elapsed(),
                ..OperatorProfile::default()
            });
        }
    }
    current.retain(|b| b.num_rows() > 0);
    let schema = plan.schema();
    let batches = current
        .into_iter()
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
        lanes,
        morsels_total,
        total: started.elapsed(),
    });
    Ok(QueryOutput {
        schema,
        batches,
        profile,
    })
}

/// Describes how `plan` would run, without running it: the plan, the job
/// with its lanes and morsels, its steps in order with their estimated
/// selectivity and cost, the sink, and the nodes left for the query thread.
pub fn explain(
    plan: &LogicalPlan,
    sources: &dyn SourceResolver,
    executor: &PipelineExecutor,
    options: &ExecOptions,
) -> Result<String> {
    let split = PlanSplit::new(plan);
    let pipeline = Pipeline::build(&split, sources, executor.split(), options)?;
    let mut out = String::from("Logical plan:\n");
    for line in plan.display_indent().lines() {
        let _ = writeln!(out, "  {line}");
    }
    out.push_str("Pipeline:\n");
    let mut job = String::new();
    pipeline.describe(&mut job);
    for line in job.lines() {
        let _ = writeln!(out, "  {line}");
    }
    if !split.tail.is_empty() {
        out.push_str("  then on the query thread:\n");
        for node in &split.tail {
            let line = node.display_indent();
            let _ = writeln!(out, "    {}", line.lines().next().unwrap_or_default());
        }
    }
    Ok(out)
}

fn parallel_operators(pipeline: &Pipeline, counters: &[StepCounters]) -> Vec<OperatorProfile> {
    let mut names = vec![format!(
        "scan {} ({} columns)",
        pipeline.source,
        pipeline.scan_schema().fields().len()
    )];
    names.extend(
        pipeline
            .steps
            .iter()
            .map(|s| format!("filter {}", s.predicate())),
    );
    names.push(match &pipeline.sink {
        Sink::Collect => "collect".to_owned(),
        Sink::Project { display, .. } => format!(
            "project {}",
            display
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Sink::Aggregate { node, .. } => format!("partial {node}"),
    });
    names
        .into_iter()
        .zip(counters)
        .map(|(name, c)| OperatorProfile {
            name,
            rows_in: c.rows_in,
            rows_out: c.rows_out,
            time: Duration::from_nanos(c.nanos),
            morsels_main: c.morsels_main,
            morsels_reserve: c.morsels_reserve,
            parallel: true,
        })
        .collect()
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
