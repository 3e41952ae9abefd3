//! `execute` and `explain`: cut the plan into pipelines and run them as a
//! DAG on the executor: each pipeline's lanes, then its breaker's merge,
//! one node each.

use std::fmt::Write as _;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arrow::array::{RecordBatch, RecordBatchOptions};
use arrow::datatypes::SchemaRef;
use crossbeam_channel::{Receiver, Sender};
use weir_executor::{
    DagBuilder, DagOutcome, Job, Node, NodeError, PipelineExecutor, StepContext, StepError,
    StepResult, step_fn,
};
use weir_planner::LogicalPlan;

use crate::aggregate::{
    PartitionedState, RADIX_BUCKETS, SPILL_PARTITIONS, finish_lane, fold_shared_pages,
    merge_partition, unify_layouts,
};
use crate::error::{Error, Result};
use crate::fairness::YieldPoint;
use crate::join::{BuildChunk, BuildPart, JoinSpec, ProbeOp, build_partitions};
use crate::memory::MemoryAccountant;
use crate::options::ExecOptions;
use crate::pipeline::{
    Breaker, BreakerSpec, LaneOutput, LaneReport, LaneShared, Operator, Phase, Pipeline, Prefix,
    ScanData, Segment, Sink, StepCounters, Workers, batch_bytes, make_job, segments, streaming_ops,
};
use crate::profile::{OperatorProfile, QueryProfile};
use crate::rewrite::rewrite;
use crate::shared::repeated_subplans;
use crate::sort::{FullSort, MergePlan, RadixSort, Scattered, SortedRun, TopN, kept_rows};
use crate::source::{SourceResolver, TableData};
use crate::tail::limit;

/// How long the query thread blocks waiting for its DAG before checking
/// the cancel flag and the deadline again (it also checks them between the
/// morsels of the lanes it runs itself).
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

/// Runs `plan` on `executor` as a DAG of pipelines (cut at the breakers;
/// see the crate docs) on the executor's [`weir_executor::Dag`]
/// scheduler: each pipeline is a node whose job of lanes runs over
/// morsels of its input, followed by a node for its breaker's merge (a
/// parallel job where it has real work: aggregation, sort). A pipeline's
/// node starts when the merge of the pipeline it reads has finished; its
/// job is made then, from the result handed over in a shared slot. The
/// query thread builds the DAG, waits for it (running lanes and tasks of
/// its jobs meanwhile where the executor lets waiters work: then it is one
/// of the query's threads) and collects the last result.
///
/// Returns [`Error::Cancelled`] once `options.cancel` is set and
/// [`Error::Timeout`] once `options.deadline` passes (the DAG is cancelled
/// and the running lanes stop after their current morsel), and the first
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
    let mut build = DagBuild::new(options, sources, executor, started);
    let last = build.root(plan)?;
    let DagBuild {
        dag,
        nodes,
        first_lanes,
        morsels_total,
        memory,
        ops,
        ..
    } = build;
    let handle = dag.build()?.run(executor);
    let poll = match options.deadline {
        Some(d) => d.saturating_duration_since(Instant::now()).min(WAIT_SLICE),
        None => WAIT_SLICE,
    };
    let outcome = handle.wait_interruptible(poll, &|| check_interrupt(options, started).is_err());
    match outcome {
        DagOutcome::Completed => {}
        DagOutcome::Cancelled => {
            check_interrupt(options, started)?;
            return Err(Error::Cancelled);
        }
        DagOutcome::Failed(failures) => {
            let failure = failures
                .into_iter()
                .next()
                .ok_or_else(|| Error::Internal("a failed DAG without a failed node".into()))?;
            let typed = nodes.iter().find_map(NodeSlots::take_error);
            return Err(typed.unwrap_or_else(|| {
                Error::Execution(match failure.error {
                    NodeError::Job(job) => job.message,
                    other => other.to_string(),
                })
            }));
        }
    }
    let finish = take(&last.result, "the last pipeline's result")?;
    let (_, batches) = finish_with(finish, &last.then, &ops, options.analyze)?;
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
    let profile = options.analyze.then(|| {
        let mut operators = lock(&ops).take().unwrap_or_default();
        // by pipeline, in the order each pipeline recorded them
        operators.sort_by_key(|(i, _)| *i);
        QueryProfile {
            operators: operators.into_iter().map(|(_, op)| op).collect(),
            lanes: first_lanes,
            morsels_total,
            total: started.elapsed(),
            peak_memory: memory.peak(),
        }
    });
    Ok(QueryOutput {
        schema,
        batches,
        profile,
    })
}

/// Where a part of the plan leaves its result: the slot, the LIMITs
/// applied as it is read, and the DAG node after which it is there.
struct Output {
    result: Slot<Finish>,
    then: Vec<PassThrough>,
    /// The DAG nodes after which the result is there.
    after: Vec<String>,
    /// What EXPLAIN calls it (`pipeline 2`).
    name: String,
}

/// The result of a subtree built once and read by several parts of the
/// plan: the first reader assembles it (the producer's finish and
/// LIMITs), every reader gets the same batches.
struct SharedResult {
    cell: Arc<Mutex<SharedCell>>,
    after: Vec<String>,
    name: String,
}

enum SharedCell {
    Pending(Slot<Finish>, Vec<PassThrough>),
    Ready(SchemaRef, Vec<RecordBatch>),
    Failed(String),
}

impl SharedResult {
    fn new(output: Output) -> Self {
        SharedResult {
            cell: Arc::new(Mutex::new(SharedCell::Pending(output.result, output.then))),
            after: output.after,
            name: output.name,
        }
    }

    /// An output reading the shared result (after the same DAG nodes).
    fn reader(&self, ops: Slot<Vec<(usize, OperatorProfile)>>, analyze: bool) -> Output {
        let cell = Arc::clone(&self.cell);
        let finish: Finish = Box::new(move || {
            let mut cell = lock(&cell);
            if let SharedCell::Pending(result, then) = &*cell {
                let finish = take(result, "a shared result")?;
                *cell = match finish_with(finish, then, &ops, analyze) {
                    Ok((schema, batches)) => SharedCell::Ready(schema, batches),
                    Err(e) => {
                        let message = e.to_string();
                        *cell = SharedCell::Failed(message);
                        return Err(e);
                    }
                };
            }
            match &*cell {
                SharedCell::Ready(schema, batches) => Ok((Arc::clone(schema), batches.clone())),
                SharedCell::Failed(message) => Err(Error::Execution(message.clone())),
                SharedCell::Pending(..) => {
                    Err(Error::Internal("a shared result not assembled".into()))
                }
            }
        });
        Output {
            result: Arc::new(Mutex::new(Some(finish))),
            then: Vec::new(),
            after: self.after.clone(),
            name: self.name.clone(),
        }
    }
}

/// Rows on their way to a pipeline's sink: where they come from and the
/// operators already on their way (the filters and projections of the
/// plan below, and the probes of its joins), so a join's probe side and
/// the plan above the join run in one pipeline.
struct Stream {
    source: StreamSource,
    ops: Vec<Operator>,
    /// The DAG nodes the lanes wait for besides the source (the builds).
    after: Vec<String>,
    /// The builds handed to the probes as the lanes start.
    builds: Vec<PendingBuild>,
    /// What EXPLAIN says the pipeline waits for besides its source.
    waits: Vec<String>,
}

enum StreamSource {
    /// The plan's leaf: a table, a file, values, a range.
    Leaf(String, ScanData),
    /// The result of a pipeline that ended in a breaker (or a union).
    Output(Output),
}

impl Stream {
    fn over(source: StreamSource) -> Self {
        Stream {
            source,
            ops: Vec::new(),
            after: Vec::new(),
            builds: Vec::new(),
            waits: Vec::new(),
        }
    }
}

/// A join's hash tables, built by its build nodes, put together and
/// handed to its probe operator when the probing pipeline's lanes start.
struct PendingBuild {
    probe: Arc<ProbeOp>,
    tables: Slot<Tables>,
    /// EXPLAIN ANALYZE position of the build's line.
    index: usize,
}

/// The build's chunks, its table job, its rows, and the time spent
/// before that job (assembling the build side, the keys job).
type Tables = (Arc<Vec<BuildChunk>>, TaskHandle<BuildPart>, u64, Duration);

impl PendingBuild {
    fn finish(
        self,
        memory: &MemoryAccountant,
        ops: &Slot<Vec<(usize, OperatorProfile)>>,
        analyze: bool,
    ) -> Result<()> {
        let (chunks, handle, rows, spent) = take(&self.tables, "a join's hash tables")?;
        let started = Instant::now();
        let spent = spent + handle.busy();
        let parts = handle.results()?;
        let built = self.probe.spec.finish_build(&chunks, parts)?;
        memory.grow(built.size());
        memory.shrink(chunks.iter().map(BuildChunk::size).sum());
        drop(chunks);
        if analyze && let Some(v) = lock(ops).as_mut() {
            v.push((
                self.index,
                OperatorProfile {
                    name: format!(
                        "join {} build hash table: {}",
                        self.probe.join,
                        self.probe.spec.describe()
                    ),
                    rows_in: rows,
                    rows_out: rows,
                    // the work, not the wait for the probe side to start
                    time: spent + started.elapsed(),
                    parallel: true,
                    ..OperatorProfile::default()
                },
            ));
        }
        self.probe.set_built(Arc::new(built))
    }
}

/// The DAG of a query as it is built: a plan tree becomes pipelines (one
/// per breaker; a join's probe runs inside the pipeline of its probe
/// side) and, per join, the nodes of its build. With `explain` set, each
/// pipeline and build is also described there (nothing runs).
struct DagBuild<'a> {
    dag: DagBuilder,
    nodes: Vec<NodeSlots>,
    memory: Arc<MemoryAccountant>,
    ops: Slot<Vec<(usize, OperatorProfile)>>,
    options: &'a ExecOptions,
    sources: &'a dyn SourceResolver,
    workers: Workers,
    started: Instant,
    first_lanes: usize,
    morsels_total: u64,
    progress_given: bool,
    /// Order of EXPLAIN ANALYZE lines: children before parents.
    index: usize,
    pipelines: usize,
    joins: usize,
    explain: Option<String>,
    /// Subtrees that occur more than once (a CTE named twice): computed
    /// once, read by each occurrence (see `shared.rs`).
    repeated: Vec<LogicalPlan>,
    /// Per built entry of `repeated`, its result for later readers.
    shared: Vec<(usize, SharedResult)>,
}

impl<'a> DagBuild<'a> {
    fn new(
        options: &'a ExecOptions,
        sources: &'a dyn SourceResolver,
        executor: &PipelineExecutor,
        started: Instant,
    ) -> Self {
        DagBuild {
            dag: DagBuilder::new(),
            nodes: Vec::new(),
            memory: Arc::new(MemoryAccountant::new()),
            ops: Arc::new(Mutex::new(Some(Vec::new()))),
            options,
            sources,
            workers: Workers::of(executor),
            started,
            first_lanes: 0,
            morsels_total: 0,
            progress_given: false,
            index: 0,
            pipelines: 0,
            joins: 0,
            explain: None,
            repeated: Vec::new(),
            shared: Vec::new(),
        }
    }

    /// Builds the DAG of the whole query `plan`.
    fn root(&mut self, plan: &LogicalPlan) -> Result<Output> {
        self.repeated = repeated_subplans(plan);
        self.plan(plan)
    }

    /// `build`'s output for `plan`, or, when `plan` occurs more than once
    /// in the query and was built already, a reader of that result.
    fn once(
        &mut self,
        plan: &LogicalPlan,
        build: impl FnOnce(&mut Self) -> Result<Output>,
    ) -> Result<Output> {
        if let Some(output) = self.reuse(plan) {
            return Ok(output);
        }
        let output = build(self)?;
        Ok(self.share(plan, output))
    }

    /// A reader of `plan`'s result if `plan` occurs more than once in the
    /// query and its result is being built already.
    fn reuse(&self, plan: &LogicalPlan) -> Option<Output> {
        let k = self.repeated.iter().position(|r| r == plan)?;
        let (_, shared) = self.shared.iter().find(|(i, _)| *i == k)?;
        Some(shared.reader(Arc::clone(&self.ops), self.options.analyze))
    }

    /// `output`, the result of `plan`, kept for later readers if `plan`
    /// occurs more than once in the query (then a reader of it).
    fn share(&mut self, plan: &LogicalPlan, output: Output) -> Output {
        let Some(k) = self.repeated.iter().position(|r| r == plan) else {
            return output;
        };
        if self.shared.iter().any(|(i, _)| *i == k) {
            return output;
        }
        let shared = SharedResult::new(output);
        let reader = shared.reader(Arc::clone(&self.ops), self.options.analyze);
        self.shared.push((k, shared));
        reader
    }

    /// Adds the nodes computing `plan`; returns where its result lands.
    ///
    /// Building recurses once per nested plan (a subquery in a subquery):
    /// where the caller's stack runs short, the rest is built on a stack
    /// of its own, so a query the planner accepts never overflows it.
    fn plan(&mut self, plan: &LogicalPlan) -> Result<Output> {
        stacker::maybe_grow(BUILD_RED_ZONE, BUILD_STACK, || {
            self.once(plan, |b| {
                if let LogicalPlan::Union { .. } = plan {
                    return b.union(plan);
                }
                let rewritten = rewrite(plan);
                let physical = rewritten.as_ref().unwrap_or(plan);
                let segments = segments(physical)?;
                b.chain(&segments)
            })
        })
    }

    /// The rows of `plan` as a stream for the plan above it (a join's
    /// probe side): its last pipeline's operators, unless that pipeline
    /// ends in a breaker (then its result).
    fn stream(&mut self, plan: &LogicalPlan) -> Result<Stream> {
        match plan {
            LogicalPlan::Union { .. } => {
                return Ok(Stream::over(StreamSource::Output(self.plan(plan)?)));
            }
            LogicalPlan::Join { .. } => return self.stream_join(plan),
            _ => {}
        }
        let rewritten = rewrite(plan);
        let physical = rewritten.as_ref().unwrap_or(plan);
        let segments = segments(physical)?;
        let Some((last, before)) = segments.split_last() else {
            return Err(Error::Internal("a plan without pipelines".into()));
        };
        if !last.is_streaming() || (before.is_empty() && last.leaf.is_none()) {
            let output = self.once(plan, |b| b.chain(&segments))?;
            return Ok(Stream::over(StreamSource::Output(output)));
        }
        let mut stream = if before.is_empty() {
            self.leaf_stream(last)?
        } else {
            Stream::over(StreamSource::Output(self.chain(before)?))
        };
        stream.ops.extend(streaming_ops(last)?);
        Ok(stream)
    }

    /// The stream a chain's first segment reads: its leaf.
    fn leaf_stream(&mut self, segment: &Segment<'_>) -> Result<Stream> {
        Ok(match segment.leaf {
            Some(join @ LogicalPlan::Join { .. }) => self.stream_join(join)?,
            Some(union @ LogicalPlan::Union { .. }) => {
                Stream::over(StreamSource::Output(self.union(union)?))
            }
            Some(leaf) => {
                let (name, data) = Pipeline::leaf(leaf, self.sources)?;
                Stream::over(StreamSource::Leaf(name, data))
            }
            None => return Err(Error::Internal("a first pipeline without a leaf".into())),
        })
    }

    /// Adds the pipelines of `segments` (a chain over one leaf, bottom
    /// first); returns where the last one's result lands.
    fn chain(&mut self, segments: &[Segment<'_>]) -> Result<Output> {
        let mut previous: Option<Output> = None;
        // a part of the chain computed already for another occurrence of
        // the same subtree (a CTE named twice) is read, not run again
        let mut start = 0;
        for (j, segment) in segments.iter().enumerate().rev() {
            if let Some(output) = segment.nodes.last().and_then(|top| self.reuse(top)) {
                previous = Some(output);
                start = j + 1;
                break;
            }
        }
        for (j, segment) in segments.iter().enumerate().skip(start) {
            if segment.is_pass_through() {
                self.index += 1;
                self.pipelines += 1;
                // LIMIT over a finished result: slices, no job; applied by
                // the previous pipeline's result as it is read
                let previous = previous.as_mut().ok_or_else(|| {
                    Error::Internal("a pass-through pipeline without input".into())
                })?;
                let lim = match segment.breaker {
                    BreakerSpec::Materialize { limit } => limit,
                    _ => None,
                };
                if let Some(text) = &mut self.explain {
                    let _ = writeln!(
                        text,
                        "Pipeline {} (after {}): {}\n  job over the result of {}: {}",
                        self.pipelines,
                        previous.name,
                        segment_name(segment),
                        previous.name,
                        describe_segment(segment, None)
                    );
                }
                previous.name = format!("pipeline {}", self.pipelines);
                // (its EXPLAIN ANALYZE name, made only when asked for)
                let name = if self.options.analyze {
                    segment_name(segment)
                } else {
                    String::new()
                };
                previous.then.push((self.index, name, lim));
                continue;
            }
            let stream = match previous.take() {
                Some(output) => Stream::over(StreamSource::Output(output)),
                None if j == 0 => self.leaf_stream(segment)?,
                None => return Err(Error::Internal("a pipeline without input".into())),
            };
            let output = self.pipeline(segment, stream)?;
            previous = Some(match segment.nodes.last() {
                Some(top) => self.share(top, output),
                None => output,
            });
        }
        previous.ok_or_else(|| Error::Internal("a plan without pipelines".into()))
    }

    /// Adds one pipeline: `stream`'s rows through `segment`'s operators
    /// into its breaker. Its lanes node waits for the source and for the
    /// builds of the joins it probes; for each RIGHT or FULL join it
    /// probes, a second job of lanes runs the join's unmatched build rows
    /// through the operators above the probe into the same sink; then the
    /// breaker's merge.
    fn pipeline(&mut self, segment: &Segment<'_>, stream: Stream) -> Result<Output> {
        check_interrupt(self.options, self.started)?;
        self.index += 1;
        self.pipelines += 1;
        let i = self.index;
        let Stream {
            source,
            ops,
            after,
            builds,
            waits,
        } = stream;
        let (prefix_source, input) = match source {
            StreamSource::Leaf(name, data) => (Some((name, data)), None),
            StreamSource::Output(output) => (None, Some(output)),
        };
        let reads_leaf = input.is_none();
        let mut pipeline = Pipeline::build(
            segment,
            Prefix {
                source: prefix_source,
                ops,
            },
            self.sources,
            self.workers,
            self.options,
        )?;
        let lanes_node = format!("pipeline {}", self.pipelines);
        let merge_node = format!("{lanes_node} merge");
        if let Some(text) = &mut self.explain {
            let mut waits_for: Vec<String> = input.iter().map(|o| o.name.clone()).collect();
            waits_for.extend(waits);
            let _ = writeln!(
                text,
                "Pipeline {}{}: {}",
                self.pipelines,
                if waits_for.is_empty() {
                    String::new()
                } else {
                    format!(" (after {})", waits_for.join(", "))
                },
                segment_name(segment)
            );
            let mut job = String::new();
            match &input {
                Some(p) => {
                    // its input does not exist before the query runs
                    let _ = writeln!(
                        job,
                        "job over the result of {}: {}",
                        p.name,
                        describe_segment(segment, Some(&pipeline.breaker))
                    );
                    pipeline.describe_ops(&mut job);
                }
                None => pipeline.describe(&mut job),
            }
            for line in job.lines() {
                let _ = writeln!(text, "  {line}");
            }
        }
        let phases: Vec<usize> = pipeline
            .ops
            .iter()
            .enumerate()
            .filter(|(_, op)| matches!(op, Operator::Probe(p) if p.spec.emits_unmatched()))
            .map(|(k, _)| k)
            .collect();
        let radix_sort = matches!(&pipeline.breaker, Breaker::Sort { sort, .. } if sort.by_radix());
        let slots = NodeSlots::new();
        let ctx = NodeContext {
            index: i,
            first: reads_leaf,
            memory: Arc::clone(&self.memory),
            ops: Arc::clone(&self.ops),
            analyze: self.options.analyze,
        };
        let mut options = self.options.clone();
        if !reads_leaf || self.progress_given || self.explain.is_some() {
            options.progress = None;
        } else {
            self.progress_given = true;
            self.first_lanes = pipeline.lanes;
            self.morsels_total = pipeline.num_morsels() as u64;
            if let Some(progress) = &options.progress {
                progress.start(self.morsels_total);
            }
        }
        if input.is_none() && builds.is_empty() {
            let shared = Arc::new(LaneShared::new(
                pipeline,
                &options,
                Arc::clone(&self.memory),
            )?);
            let job = slots.lanes_job(shared, 0);
            self.dag.push(Node::job(lanes_node.clone(), job));
        } else {
            let slots = slots.clone();
            let memory = Arc::clone(&self.memory);
            let ops = Arc::clone(&self.ops);
            let analyze = self.options.analyze;
            let input_after = input.as_ref().map(|o| o.after.clone()).unwrap_or_default();
            let node = Node::lazy(lanes_node.clone(), move || {
                slots.record(|| {
                    let mut input_bytes = 0;
                    if let Some(input) = input {
                        let finish = take(&input.result, "a pipeline's input")?;
                        let (schema, batches) = finish_with(finish, &input.then, &ops, analyze)?;
                        input_bytes = batches.iter().map(batch_bytes).sum();
                        pipeline.set_input(Arc::new(TableData::new(schema, batches)));
                    }
                    for build in builds {
                        build.finish(&memory, &ops, analyze)?;
                    }
                    let shared = Arc::new(LaneShared::new(pipeline, &options, memory)?);
                    Ok(slots.lanes_job(shared, input_bytes))
                })
            });
            self.dag
                .push(node.after_all(&input_after).after_all(&after));
        }
        let mut last = lanes_node.clone();
        for op in phases {
            let name = format!("{lanes_node} unmatched {op}");
            let slots = slots.clone();
            self.dag.push(
                Node::lazy(name.clone(), move || {
                    slots.record(|| slots.phase_job(Phase::Unmatched { op }))
                })
                .after(last),
            );
            last = name;
        }
        if radix_sort {
            let name = format!("{lanes_node} sort");
            let (slots, ctx) = (slots.clone(), ctx.clone());
            self.dag.push(
                Node::lazy(name.clone(), move || {
                    slots.record(|| sort_job(&slots, &ctx))
                })
                .after(last),
            );
            last = name;
        }
        let merge_slots = slots.clone();
        self.dag.push(
            Node::lazy_or_done(merge_node.clone(), move || {
                merge_slots.record(|| merge_job(&merge_slots, ctx))
            })
            .after(last),
        );
        self.nodes.push(slots.clone());
        Ok(Output {
            result: Arc::clone(&slots.result),
            then: Vec::new(),
            after: vec![merge_node],
            name: lanes_node,
        })
    }

    /// A join as a stream: its probe side's stream with the probe added,
    /// after the build (keys per batch with the rows scattered by
    /// partition, then the partitions' hash tables, in parallel) of its
    /// build side's result.
    fn stream_join(&mut self, node: &LogicalPlan) -> Result<Stream> {
        let LogicalPlan::Join { left, right, .. } = node else {
            return Err(Error::Internal("a join of a node that is no join".into()));
        };
        let mut stream = self.stream(left)?;
        let build_side = self.plan(right)?;
        let spec = Arc::new(JoinSpec::new(node)?);
        self.joins += 1;
        self.index += 1;
        let index = self.index;
        let k = self.joins;
        let name = format!("join {k}");
        if let Some(text) = &mut self.explain {
            let _ = writeln!(
                text,
                "Join {k} build (after {}): {}\n  key rows and hashes per batch, each row scattered to its partition, then one hash table per partition from its rows (and the build side's columns concatenated), in parallel",
                build_side.name,
                spec.describe()
            );
        }
        let slots = NodeSlots::new();
        self.nodes.push(slots.clone());
        let workers = self.workers.total();
        let analyze = self.options.analyze;
        let ops = Arc::clone(&self.ops);
        let memory = Arc::clone(&self.memory);

        // 1. the build side's batches with their keys and hashes, their
        // rows grouped by partition
        let chunks: Slot<(TaskHandle<BuildChunk>, u64, usize, Duration)> =
            Arc::new(Mutex::new(None));
        {
            let (slots, spec, chunks) = (slots.clone(), Arc::clone(&spec), Arc::clone(&chunks));
            self.dag.push(
                Node::lazy(format!("{name} build"), move || {
                    slots.record(|| {
                        let started = Instant::now();
                        let finish = take(&build_side.result, "a join's build side")?;
                        let (_, batches) = finish_with(finish, &build_side.then, &ops, analyze)?;
                        let batches: Vec<RecordBatch> =
                            batches.into_iter().filter(|b| b.num_rows() > 0).collect();
                        let rows = count_rows(&batches);
                        let partitions = build_partitions(rows as usize);
                        let inputs: Vec<Mutex<Option<RecordBatch>>> =
                            batches.into_iter().map(|b| Mutex::new(Some(b))).collect();
                        let n = inputs.len();
                        let (job, handle) = task_job(
                            "join build: keys".to_owned(),
                            n,
                            workers,
                            rows / 1000 + 1,
                            &slots.error,
                            move |i| {
                                let batch = lock(&inputs[i]).take().ok_or_else(|| {
                                    Error::Internal("a build batch taken twice".into())
                                })?;
                                spec.build_chunk(batch, partitions)
                            },
                        );
                        *lock(&chunks) = Some((handle, rows, partitions, started.elapsed()));
                        Ok(job)
                    })
                })
                .after_all(&build_side.after),
            );
        }
        // 2. one hash table per partition, from that partition's rows
        // only, and the build side's columns concatenated
        let tables: Slot<Tables> = Arc::new(Mutex::new(None));
        {
            let (slots, spec, tables, memory) = (
                slots.clone(),
                Arc::clone(&spec),
                Arc::clone(&tables),
                Arc::clone(&memory),
            );
            self.dag.push(
                Node::lazy(format!("{name} build table"), move || {
                    slots.record(|| {
                        let (handle, rows, partitions, spent) =
                            take(&chunks, "a join's build keys")?;
                        let started = Instant::now();
                        let spent = spent + handle.busy();
                        let chunks = Arc::new(handle.results()?);
                        memory.grow(chunks.iter().map(BuildChunk::size).sum());
                        let parts = Arc::clone(&chunks);
                        let tasks = spec.build_tasks(partitions);
                        let (job, handle) = task_job(
                            "join build: hash tables".to_owned(),
                            tasks,
                            workers,
                            rows / 1000 + 1,
                            &slots.error,
                            move |t| spec.build_part(&parts, t, partitions),
                        );
                        *lock(&tables) = Some((chunks, handle, rows, spent + started.elapsed()));
                        Ok(job)
                    })
                })
                .after(format!("{name} build")),
            );
        }
        let probe = Arc::new(ProbeOp::new(k, Arc::clone(&spec)));
        stream.ops.push(Operator::Probe(Arc::clone(&probe)));
        stream.after.push(format!("{name} build table"));
        stream.waits.push(name);
        stream.builds.push(PendingBuild {
            probe,
            tables,
            index,
        });
        Ok(stream)
    }

    /// Adds a UNION ALL: its inputs; its result is theirs one after the
    /// other, assembled by its reader (no job of its own).
    fn union(&mut self, node: &LogicalPlan) -> Result<Output> {
        let LogicalPlan::Union { inputs, schema } = node else {
            return Err(Error::Internal("a union of a node that is no union".into()));
        };
        let mut parts = Vec::with_capacity(inputs.len());
        for input in inputs {
            parts.push(self.plan(input)?);
        }
        self.index += 1;
        let after = parts.iter().flat_map(|p| p.after.clone()).collect();
        let name = parts
            .iter()
            .map(|p| p.name.clone())
            .collect::<Vec<_>>()
            .join(" and ");
        let schema = Arc::clone(schema);
        let ops = Arc::clone(&self.ops);
        let analyze = self.options.analyze;
        let finish: Finish = Box::new(move || {
            let mut batches = Vec::new();
            for part in parts {
                let finish = take(&part.result, "an input of a union")?;
                let (_, rows) = finish_with(finish, &part.then, &ops, analyze)?;
                for b in rows {
                    let options = RecordBatchOptions::new().with_row_count(Some(b.num_rows()));
                    batches.push(
                        RecordBatch::try_new_with_options(
                            Arc::clone(&schema),
                            b.columns().to_vec(),
                            &options,
                        )
                        .map_err(Error::arrow)?,
                    );
                }
            }
            Ok((schema, batches))
        });
        Ok(Output {
            result: Arc::new(Mutex::new(Some(finish))),
            then: Vec::new(),
            after,
            name,
        })
    }
}

/// A node after each of `after`.
trait AfterAll {
    fn after_all(self, after: &[String]) -> Self;
}

impl AfterAll for Node {
    fn after_all(mut self, after: &[String]) -> Self {
        for a in after {
            self = self.after(a.clone());
        }
        self
    }
}

/// The results of a [`task_job`], read once its job ran.
struct TaskHandle<T> {
    results: Arc<Mutex<Vec<Option<T>>>>,
    /// Nanoseconds the tasks ran, summed over the workers.
    busy: Arc<AtomicU64>,
}

impl<T> TaskHandle<T> {
    /// The time the tasks ran, summed over the workers (as EXPLAIN
    /// ANALYZE sums an operator's time over its lanes).
    fn busy(&self) -> Duration {
        Duration::from_nanos(self.busy.load(Ordering::Relaxed))
    }

    fn results(self) -> Result<Vec<T>> {
        std::mem::take(&mut *lock(&self.results))
            .into_iter()
            .map(|r| r.ok_or_else(|| Error::Internal("a task did not run".into())))
            .collect()
    }
}

/// A job of `tasks` tasks claimed by up to `workers` steps from a cursor;
/// task `i` runs `task(i)`. The first error is kept in `error`.
fn task_job<T: Send + 'static>(
    name: String,
    tasks: usize,
    workers: usize,
    cost: u64,
    error: &Arc<Mutex<Option<Error>>>,
    task: impl Fn(usize) -> Result<T> + Send + Sync + 'static,
) -> (Job, TaskHandle<T>) {
    let results = Arc::new(Mutex::new((0..tasks).map(|_| None).collect::<Vec<_>>()));
    let busy = Arc::new(AtomicU64::new(0));
    let shared = Arc::new(TaskShared {
        cursor: AtomicUsize::new(0),
        results: Mutex::new((0..tasks).map(|_| None).collect()),
        error: Arc::clone(error),
        task: {
            let (results, busy) = (Arc::clone(&results), Arc::clone(&busy));
            move |i: usize| -> Result<()> {
                let started = Instant::now();
                let v = task(i)?;
                busy.fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
                lock(&results)[i] = Some(v);
                Ok(())
            }
        },
        tasks,
    });
    let mut job = Job::new(name.clone()).with_cost(cost);
    for w in 0..workers.min(tasks).max(1) {
        let shared = Arc::clone(&shared);
        job.push_step(Box::new(step_fn(
            format!("{name} worker {w}"),
            move |step: &StepContext<'_>| shared.run(step),
        )));
    }
    (job, TaskHandle { results, busy })
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
    if segment.nodes.is_empty()
        && let Some(leaf) = segment.leaf
    {
        // a pipeline that only collects its leaf
        return leaf.describe_node();
    }
    segment
        .nodes
        .iter()
        .map(|n| n.describe_node())
        .collect::<Vec<_>>()
        .join(" -> ")
}

/// A value handed from one DAG node to the next.
type Slot<T> = Arc<Mutex<Option<T>>>;

/// A pipeline's result, assembled by whoever reads it (the next
/// pipeline's node as it starts, or the query thread): the merge job's
/// parts put together, memory accounted, the merge's profile line added.
type Finish = Box<dyn FnOnce() -> Result<(SchemaRef, Vec<RecordBatch>)> + Send>;

/// A LIMIT applied to a finished result (a pass-through pipeline): its
/// segment index, EXPLAIN ANALYZE name and `(offset, fetch)`.
type PassThrough = (usize, String, Option<(usize, Option<usize>)>);

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn take<T>(slot: &Slot<T>, what: &str) -> Result<T> {
    lock(slot)
        .take()
        .ok_or_else(|| Error::Internal(format!("{what} was not handed over")))
}

/// Assembles a pipeline's result and applies the pass-through LIMITs
/// after it.
fn finish_with(
    finish: Finish,
    then: &[PassThrough],
    ops: &Slot<Vec<(usize, OperatorProfile)>>,
    analyze: bool,
) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let (schema, mut batches) = finish()?;
    for (i, name, lim) in then {
        let rows_in = count_rows(&batches);
        let t = Instant::now();
        if let Some((offset, fetch)) = lim {
            batches = limit(batches, *offset, *fetch);
        }
        if analyze {
            let op = query_thread_op(name.clone(), rows_in, count_rows(&batches), t.elapsed());
            if let Some(v) = lock(ops).as_mut() {
                v.push((*i, op));
            }
        }
    }
    Ok((schema, batches))
}

/// What the two nodes of one pipeline (lanes, merge) hand over.
#[derive(Clone)]
struct NodeSlots {
    /// The lanes' shared state, their reports and the input's bytes, from
    /// the lanes node to the merge node.
    lanes: Slot<(Arc<LaneShared>, Receiver<LaneReport>, usize)>,
    /// The lanes' sender, for the jobs of later phases.
    tx: Slot<Sender<LaneReport>>,
    /// The lanes' shared state, kept to read a failed lane's error.
    shared: Slot<Arc<LaneShared>>,
    /// The pipeline's result, for the next pipeline or the query thread.
    result: Slot<Finish>,
    /// A radix sort's lanes and first job, from its sort node to its
    /// merge node.
    sorting: Slot<SortStage>,
    /// The first typed error of a node of this pipeline outside its lanes
    /// (making a job, a merge task).
    error: Arc<Mutex<Option<Error>>>,
}

impl NodeSlots {
    fn new() -> Self {
        NodeSlots {
            lanes: Arc::new(Mutex::new(None)),
            tx: Arc::new(Mutex::new(None)),
            shared: Arc::new(Mutex::new(None)),
            result: Arc::new(Mutex::new(None)),
            sorting: Arc::new(Mutex::new(None)),
            error: Arc::new(Mutex::new(None)),
        }
    }

    /// The lanes' job; hands their state to the merge node.
    fn lanes_job(&self, shared: Arc<LaneShared>, input_bytes: usize) -> Job {
        let (tx, rx) = crossbeam_channel::unbounded();
        let job = make_job(&shared, &tx, Phase::Source);
        *lock(&self.tx) = Some(tx);
        *lock(&self.shared) = Some(Arc::clone(&shared));
        *lock(&self.lanes) = Some((shared, rx, input_bytes));
        job
    }

    /// A later phase's job of lanes (see [`Phase`]), reporting to the
    /// same merge.
    fn phase_job(&self, phase: Phase) -> Result<Job> {
        let shared = lock(&self.shared)
            .clone()
            .ok_or_else(|| Error::Internal("a pipeline's phase before its lanes".into()))?;
        let tx = lock(&self.tx)
            .clone()
            .ok_or_else(|| Error::Internal("a pipeline's phase before its lanes".into()))?;
        Ok(make_job(&shared, &tx, phase))
    }

    /// Runs a node's job maker, keeping its error's type.
    fn record<T>(&self, make: impl FnOnce() -> Result<T>) -> std::result::Result<T, StepError> {
        make().map_err(|error| {
            let message = error.to_string();
            let mut first = lock(&self.error);
            if first.is_none() {
                *first = Some(error);
            }
            StepError::from(message)
        })
    }

    /// The typed error a node of this pipeline stored, if any.
    fn take_error(&self) -> Option<Error> {
        if let Some(e) = lock(&self.error).take() {
            return Some(e);
        }
        let shared = lock(&self.shared).clone()?;
        lock(&shared.error).take()
    }
}

/// What a pipeline's merge node needs besides its slots.
#[derive(Clone)]
struct NodeContext {
    index: usize,
    first: bool,
    memory: Arc<MemoryAccountant>,
    ops: Slot<Vec<(usize, OperatorProfile)>>,
    analyze: bool,
}

/// Building a nested plan goes on a new stack of [`BUILD_STACK`] bytes
/// when less than this is left (a level of nesting took 3.5 KiB in a
/// release build, several times that in a debug one).
const BUILD_RED_ZONE: usize = 256 << 10;
const BUILD_STACK: usize = 8 << 20;

/// What the lanes of a pipeline handed over, read by the node after
/// them.
struct Collected {
    shared: Arc<LaneShared>,
    input_bytes: usize,
    outputs: Vec<LaneOutput>,
    /// Bytes the lanes' outputs (and what was made of them) hold.
    held: usize,
    partial_rows: u64,
    started: Instant,
}

/// Takes the lanes' reports: their outputs, with their counters summed
/// (and, for EXPLAIN ANALYZE, recorded).
fn collect_lanes(slots: &NodeSlots, ctx: &NodeContext) -> Result<Collected> {
    let (shared, rx, input_bytes) = take(&slots.lanes, "a pipeline's lanes")?;
    // the lanes succeeded: no error to read there, and their input may go
    lock(&slots.shared).take();
    lock(&slots.tx).take();
    let started = Instant::now();
    let p = shared.pipeline();
    let lanes = shared.lanes_made.load(Ordering::Relaxed);
    let reports: Vec<LaneReport> = rx.try_iter().collect();
    if reports.len() != lanes {
        return Err(Error::Internal(format!(
            "{} of {lanes} lanes reported",
            reports.len()
        )));
    }
    // every probe ran: the joins' hash tables go with the lanes' state
    for op in &p.ops {
        if let Operator::Probe(probe) = op {
            ctx.memory.shrink(probe.built()?.size());
        }
    }
    let mut counters = vec![StepCounters::default(); p.ops.len() + 3];
    let mut outputs = Vec::with_capacity(reports.len());
    for report in reports {
        for (total, c) in counters.iter_mut().zip(&report.counters) {
            total.add(c);
        }
        outputs.push(report.output);
    }
    let held: usize = outputs.iter().map(LaneOutput::size).sum();
    let partial_rows: u64 = outputs.iter().map(|o| o.rows() as u64).sum();
    if ctx.analyze
        && let Some(v) = lock(&ctx.ops).as_mut()
    {
        v.extend(
            parallel_operators(p, &counters, ctx.first)
                .into_iter()
                .map(|op| (ctx.index, op)),
        );
    }
    Ok(Collected {
        shared,
        input_bytes,
        outputs,
        held,
        partial_rows,
        started,
    })
}

/// A radix-sorted pipeline between its sort node and its merge node:
/// what its lanes handed over, and the sort's first job.
struct SortStage {
    collected: Collected,
    work: SortWork,
}

enum SortWork {
    /// Each run of morsels' words, scattered by digit.
    Radix(Arc<RadixSort>, TaskHandle<Scattered>),
    /// Codes too wide for 64 bits, or strings too varied to rank: a
    /// sorted run per lane, beside the runs lanes cut themselves.
    Runs(TaskHandle<SortedRun>, Vec<SortedRun>),
}

/// A full sort's first job, after its lanes computed their rows' keys:
/// each run of morsels' words scattered by a digit ([`RadixSort`]), or
/// each lane's rows sorted into a run.
fn sort_job(slots: &NodeSlots, ctx: &NodeContext) -> Result<Job> {
    let mut collected = collect_lanes(slots, ctx)?;
    let p = collected.shared.pipeline();
    let workers = p.workers.total();
    let cost = collected.partial_rows / 1000 + 1;
    // lanes whose strings were too varied to rank hand over runs; then
    // every lane's rows are sorted into runs and merged
    let (mut lanes, mut runs) = (Vec::new(), Vec::new());
    for o in std::mem::take(&mut collected.outputs) {
        match o {
            LaneOutput::Keyed(k) => lanes.push(k),
            LaneOutput::Runs(r) => runs.extend(r),
            _ => return Err(Error::Internal("a radix sort lane without its keys".into())),
        }
    }
    let full = if runs.is_empty() {
        FullSort::new(lanes)
    } else {
        FullSort::Runs(
            lanes
                .into_iter()
                .map(|k| Mutex::new(Some(k.into_parts())))
                .collect(),
        )
    };
    let (job, work) = match full {
        FullSort::Radix(radix) => {
            let r = Arc::clone(&radix);
            let (job, handle) = task_job(
                "sort: words by digit".to_owned(),
                radix.chunks(),
                workers,
                cost,
                &slots.error,
                move |i| r.scatter(i),
            );
            (job, SortWork::Radix(radix, handle))
        }
        FullSort::Runs(lanes) => {
            let shared = Arc::clone(&collected.shared);
            let (job, handle) = task_job(
                "sort: runs".to_owned(),
                lanes.len(),
                workers,
                cost,
                &slots.error,
                move |i| {
                    let Breaker::Sort { sort, rows } = &shared.pipeline().breaker else {
                        return Err(Error::Internal("a sort's runs without a sort".into()));
                    };
                    let parts = lock(&lanes[i])
                        .take()
                        .ok_or_else(|| Error::Internal("a lane's rows sorted twice".into()))?;
                    SortedRun::new(sort, parts, rows.as_ref().map(|r| r.end))
                },
            );
            (job, SortWork::Runs(handle, runs))
        }
    };
    *lock(&slots.sorting) = Some(SortStage { collected, work });
    Ok(job)
}

/// Makes a pipeline's merge job from its lanes' reports (or from its sort
/// node's job), and leaves the pipeline's result in `slots.result`, to be
/// assembled once the job ran.
/// The most cost (about thousands of rows) a merge of one task may have to
/// run where the lanes finished, without a job of its own.
const INLINE_MERGE_COST: u64 = 4;

/// The merge of a pipeline's lanes: a job of its tasks, or `None` when
/// its one small task ran here.
fn merge_job(slots: &NodeSlots, ctx: NodeContext) -> Result<Option<Job>> {
    let (collected, sorted) = match lock(&slots.sorting).take() {
        Some(stage) => (stage.collected, Some(stage.work)),
        None => (collect_lanes(slots, &ctx)?, None),
    };
    let Collected {
        shared,
        input_bytes,
        outputs,
        mut held,
        partial_rows,
        started,
    } = collected;
    let p = shared.pipeline();
    let schema = output_schema(p);
    let name = match &sorted {
        // a radix sort that found its keys' codes too wide, or its
        // strings too varied, merged runs
        Some(SortWork::Runs(..)) => Some("merge sorted runs".to_owned()),
        _ => merge_name(p),
    };
    let work = match sorted {
        Some(work) => sorted_work(p, work, &ctx.memory, &mut held)?,
        None => merge_work(&shared, outputs, &ctx.memory)?,
    };
    let workers = p.workers.total().min(work.tasks).max(1);
    let tasks = Arc::new(TaskShared {
        cursor: AtomicUsize::new(0),
        results: Mutex::new((0..work.tasks).map(|_| None).collect()),
        error: Arc::clone(&slots.error),
        task: work.task,
        tasks: work.tasks,
    });
    let job_name = name.clone().unwrap_or_else(|| "collect lanes".to_owned());
    // a merge of one small task runs here, on the thread that finished
    // the lanes, rather than as a job handed to a worker
    let inline = !work.parallel && work.tasks == 1 && work.cost <= INLINE_MERGE_COST;
    let job = if inline {
        let out = (tasks.task)(0)?;
        lock(&tasks.results)[0] = Some(out);
        None
    } else {
        let mut job = Job::new(job_name.clone()).with_cost(work.cost);
        for w in 0..workers {
            let tasks = Arc::clone(&tasks);
            job.push_step(Box::new(step_fn(
                format!("{job_name} worker {w}"),
                move |step: &StepContext<'_>| tasks.run(step),
            )));
        }
        Some(job)
    };
    drop(shared);
    let parallel = work.parallel;
    let finish: Finish = Box::new(move || {
        let results = std::mem::take(&mut *lock(&tasks.results));
        let mut batches = Vec::new();
        for r in results {
            batches.extend(
                r.ok_or_else(|| Error::Internal(format!("a task of {job_name} did not run")))?,
            );
        }
        ctx.memory.shrink(held);
        let out_bytes: usize = batches.iter().map(batch_bytes).sum();
        ctx.memory.grow(out_bytes);
        // the previous result was this pipeline's input: released now
        ctx.memory.shrink(input_bytes);
        if ctx.analyze
            && let Some(merge) = name
            && let Some(v) = lock(&ctx.ops).as_mut()
        {
            v.push((
                ctx.index,
                OperatorProfile {
                    name: merge,
                    rows_in: partial_rows,
                    rows_out: count_rows(&batches),
                    time: started.elapsed(),
                    parallel,
                    ..OperatorProfile::default()
                },
            ));
        }
        Ok((schema, batches))
    });
    *lock(&slots.result) = Some(finish);
    Ok(job)
}

/// A breaker's merge as tasks: task `i` gives the `i`-th part of the
/// result.
struct MergeWork {
    tasks: usize,
    cost: u64,
    parallel: bool,
    task: TaskFn,
}

type TaskFn = Box<dyn Fn(usize) -> Result<Vec<RecordBatch>> + Send + Sync>;

/// A merge that is one task.
fn serial(cost: u64, f: impl FnOnce() -> Result<Vec<RecordBatch>> + Send + 'static) -> MergeWork {
    let f = Mutex::new(Some(f));
    MergeWork {
        tasks: 1,
        cost,
        parallel: false,
        task: Box::new(move |_| {
            let f = lock(&f)
                .take()
                .ok_or_else(|| Error::Internal("a serial merge ran twice".into()))?;
            f()
        }),
    }
}

/// The breaker's merge of the lanes' outputs.
fn merge_work(
    shared: &Arc<LaneShared>,
    outputs: Vec<LaneOutput>,
    memory: &Arc<MemoryAccountant>,
) -> Result<MergeWork> {
    let p = shared.pipeline();
    match &p.breaker {
        Breaker::Materialize { limit: lim } => {
            let lim = *lim;
            let mut batches: Vec<(usize, RecordBatch)> = Vec::new();
            for o in outputs {
                match o {
                    LaneOutput::Batches(b) => batches.extend(b),
                    _ => return Err(Error::Internal("a materialise lane without rows".into())),
                }
            }
            Ok(serial(1, move || {
                // morsel order: the output is the input's order, whatever
                // the lanes' timing
                batches.sort_by_key(|(i, _)| *i);
                let batches = batches.into_iter().map(|(_, b)| b).collect();
                Ok(match lim {
                    Some((offset, fetch)) => limit(batches, offset, fetch),
                    None => batches,
                })
            }))
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
            unify_layouts(plan, &mut states)?;
            let groups: usize = states.iter().map(|s| s.state.num_groups()).sum();
            // rows put aside: at most one group each
            let aside: usize = states.iter().map(|s| s.state.rows_put_aside()).sum();
            let cost = (groups + aside) as u64 / 1000 + 1;
            let partitions = match (plan.has_groups(), aside) {
                (false, _) => 1,
                (true, 0) => aggregate_partitions(groups, p.workers),
                (true, _) => aggregate_partitions(groups + aside, p.workers).min(SPILL_PARTITIONS),
            };
            let plan = plan.clone();
            if states.len() == 1 && aside == 0 {
                // one lane: its groups are already merged
                let state = states.pop().expect("one lane").state;
                return Ok(serial(cost, move || Ok(vec![state.finish(&plan)?])));
            }
            if partitions > 1
                && let Some(dropped) = fold_shared_pages(&mut states)?
            {
                // each lane's groups are (nearly) its own: a task a lane
                let tasks = states.len();
                // each lane with the groups it folded away, taken by its task
                type Lane = Mutex<Option<(PartitionedState, Vec<u32>)>>;
                let lanes: Vec<Lane> = states
                    .into_iter()
                    .zip(dropped)
                    .map(|lane| Mutex::new(Some(lane)))
                    .collect();
                let memory = Arc::clone(memory);
                return Ok(MergeWork {
                    tasks,
                    cost,
                    parallel: true,
                    task: Box::new(move |i| {
                        let (lane, mut dropped) = lock(&lanes[i])
                            .take()
                            .ok_or_else(|| Error::Internal("a lane finished twice".into()))?;
                        let (batches, size) = finish_lane(&plan, lane, &mut dropped)?;
                        memory.grow(size);
                        memory.shrink(size);
                        Ok(batches)
                    }),
                });
            }
            if partitions == 1 {
                return Ok(serial(cost, move || {
                    let (batch, _) = merge_partition(&plan, &states, 0..RADIX_BUCKETS)?;
                    Ok(vec![batch])
                }));
            }
            let memory = Arc::clone(memory);
            let per = RADIX_BUCKETS / partitions;
            Ok(MergeWork {
                tasks: partitions,
                cost,
                parallel: true,
                task: Box::new(move |i| {
                    let (batch, size) = merge_partition(&plan, &states, i * per..(i + 1) * per)?;
                    memory.grow(size);
                    memory.shrink(size);
                    Ok(vec![batch])
                }),
            })
        }
        Breaker::TopN { k, .. } => {
            let k = *k;
            let shared = Arc::clone(shared);
            Ok(serial(1, move || {
                let Breaker::TopN { sort, .. } = &shared.pipeline().breaker else {
                    return Err(Error::Internal("a top-N merge without a sort".into()));
                };
                let lanes = outputs
                    .into_iter()
                    .map(|o| match o {
                        LaneOutput::TopN(top) => Ok(top),
                        _ => Err(Error::Internal("a top-N lane without rows".into())),
                    })
                    .collect::<Result<Vec<_>>>()?;
                Ok(vec![TopN::merge(sort, k, lanes)?])
            }))
        }
        Breaker::Sort { rows, .. } => {
            let mut runs = Vec::with_capacity(outputs.len());
            for o in outputs {
                match o {
                    LaneOutput::Runs(r) => runs.extend(r),
                    _ => return Err(Error::Internal("a sort lane without a run".into())),
                }
            }
            Ok(merge_runs(runs, p.workers, rows.clone()))
        }
        Breaker::Window { plan } => window_work(shared, plan, outputs, memory),
    }
}

/// Sorted runs merged: ranges of keys cut by splitters, one task each;
/// with `kept`, only the sorted rows at those positions.
fn merge_runs(runs: Vec<SortedRun>, workers: Workers, kept: Option<Range<usize>>) -> MergeWork {
    let rows: usize = runs.iter().map(SortedRun::num_rows).sum();
    let cost = rows as u64 / 1000 + 1;
    let merge = MergePlan::new(&runs, sort_tasks(rows, workers));
    let keep = task_rows((0..merge.partitions).map(|i| merge.partition_rows(i)), kept);
    if merge.partitions == 1 || runs.len() == 1 {
        return serial(cost, move || {
            let batches = (0..merge.partitions)
                .map(|i| merge.merge(&runs, i, keep[i].clone()))
                .collect::<Result<Vec<_>>>()?;
            Ok(batches.into_iter().flatten().collect())
        });
    }
    MergeWork {
        tasks: merge.partitions,
        cost,
        parallel: true,
        task: Box::new(move |i| {
            Ok(merge
                .merge(&runs, i, keep[i].clone())?
                .into_iter()
                .collect())
        }),
    }
}

/// What each of a sort's last tasks, of `counts` rows each in output
/// order, keeps of its rows when the sort keeps only `kept`
/// ([`kept_rows`]); `None` each when it keeps them all.
fn task_rows(
    counts: impl Iterator<Item = usize>,
    kept: Option<Range<usize>>,
) -> Vec<Option<Range<usize>>> {
    let counts: Vec<usize> = counts.collect();
    match kept {
        None => vec![None; counts.len()],
        Some(rows) => kept_rows(&counts, &rows).into_iter().map(Some).collect(),
    }
}

/// Tasks for the last job of a full sort of `rows` rows: several per
/// worker, of at least [`SORT_PARTITION_ROWS`] rows.
fn sort_tasks(rows: usize, workers: Workers) -> usize {
    if rows < 2 * SORT_PARTITION_ROWS {
        1
    } else {
        (4 * workers.total()).min(rows / SORT_PARTITION_ROWS).max(1)
    }
}

/// A full sort's last job, after its sort node's: ranges of digits
/// sorted and gathered ([`RadixSort::sort_range`]), or the lanes' runs
/// merged.
fn sorted_work(
    p: &Pipeline,
    work: SortWork,
    memory: &Arc<MemoryAccountant>,
    held: &mut usize,
) -> Result<MergeWork> {
    let kept = match &p.breaker {
        Breaker::Sort { rows, .. } => rows.clone(),
        _ => None,
    };
    match work {
        SortWork::Runs(handle, mut runs) => {
            runs.extend(handle.results()?);
            Ok(merge_runs(runs, p.workers, kept))
        }
        SortWork::Radix(radix, handle) => {
            let scattered = handle.results()?;
            // the words live until the sort's result is assembled
            let bytes: usize = scattered.iter().map(Scattered::size).sum();
            memory.grow(bytes);
            *held += bytes;
            let rows = radix.num_rows();
            let ranges = radix.ranges(&scattered, sort_tasks(rows, p.workers));
            let keep = task_rows(
                ranges
                    .iter()
                    .map(|r| radix.range_rows(&scattered, r.clone())),
                kept,
            );
            Ok(MergeWork {
                tasks: ranges.len(),
                cost: rows as u64 / 1000 + 1,
                parallel: ranges.len() > 1,
                task: Box::new(move |i| {
                    Ok(radix
                        .sort_range(&scattered, ranges[i].clone(), None, keep[i].clone())?
                        .into_iter()
                        .collect())
                }),
            })
        }
    }
}

/// The window breaker's merge: one task per bucket, sorting it and
/// computing the functions over its partitions.
fn window_work(
    shared: &Arc<LaneShared>,
    plan: &crate::window::WindowPlan,
    outputs: Vec<LaneOutput>,
    memory: &Arc<MemoryAccountant>,
) -> Result<MergeWork> {
    let mut lanes = Vec::with_capacity(outputs.len());
    for o in outputs {
        match o {
            LaneOutput::Window(w) => lanes.push(w),
            _ => return Err(Error::Internal("a window lane without rows".into())),
        }
    }
    let rows: usize = lanes.iter().map(|l| l.rows()).sum();
    let shared = Arc::clone(shared);
    // one task per part of rows in window order, each computing its own
    let per_part = |tasks: usize, task: TaskFn| MergeWork {
        tasks,
        cost: rows as u64 / 1000 + 1,
        parallel: tasks > 1,
        task,
    };
    if plan.by_batch() {
        // rows already in window order, one batch a task: each batch
        // knows what it needs of the others from one pass over them
        let batches = plan.batches(lanes)?;
        return Ok(per_part(
            batches.len(),
            Box::new(move |b| Ok(vec![window_plan(&shared)?.compute_batch(&batches, b)?])),
        ));
    }
    if plan.by_range() {
        // rows in window order, frames of a bounded reach: one range of
        // rows a task, each reading the rows its frames reach
        let p = shared.pipeline();
        let ranges = plan.ranges(lanes, p.lanes, p.morsel_rows)?;
        return Ok(per_part(
            ranges.len(),
            Box::new(move |r| Ok(vec![window_plan(&shared)?.compute_range(&ranges, r)?])),
        ));
    }
    let tasks = plan.buckets();
    let memory = Arc::clone(memory);
    Ok(MergeWork {
        tasks,
        cost: rows as u64 / 1000 + 1,
        parallel: tasks > 1,
        task: Box::new(move |b| {
            let out = window_plan(&shared)?.compute(&lanes, b)?;
            // the task's sorted copy of its bucket, held while it ran
            let size = out.as_ref().map_or(0, batch_bytes);
            memory.grow(size);
            memory.shrink(size);
            Ok(out.into_iter().collect())
        }),
    })
}

/// The window plan of a window breaker's pipeline.
fn window_plan(shared: &LaneShared) -> Result<&crate::window::WindowPlan> {
    match &shared.pipeline().breaker {
        Breaker::Window { plan } => Ok(plan),
        _ => Err(Error::Internal("a window merge without its plan".into())),
    }
}

/// Rows per partition of a parallel sort merge, at least.
const SORT_PARTITION_ROWS: usize = 1 << 14;

/// Merge partitions for `groups` partial groups: one when few, else
/// enough for every worker to claim several (a power of two dividing
/// [`RADIX_BUCKETS`]).
fn aggregate_partitions(groups: usize, workers: Workers) -> usize {
    if groups < 1 << 14 {
        return 1;
    }
    let workers = workers.total();
    (groups >> 14)
        .clamp(4 * workers, RADIX_BUCKETS)
        .next_power_of_two()
        .min(RADIX_BUCKETS)
}

/// State the workers of a `Run::tasks` job share.
struct TaskShared<T, F> {
    cursor: AtomicUsize,
    results: Mutex<Vec<Option<T>>>,
    error: Arc<Mutex<Option<Error>>>,
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
        (_, Breaker::Window { plan }) => plan.output(),
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
        Breaker::Sort { sort, .. } if sort.by_radix() => "radix sort".to_owned(),
        Breaker::Sort { .. } => "merge sorted runs".to_owned(),
        Breaker::Window { .. } => "window partitions".to_owned(),
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
    let rewritten = rewrite(plan);
    if let Some(physical) = &rewritten {
        out.push_str(
            "Physical plan (DISTINCT aggregates split in two, a sort under a window without PARTITION BY):\n",
        );
        for line in physical.display_indent().lines() {
            let _ = writeln!(out, "  {line}");
        }
    }
    // the DAG is built as for running it, and describes itself as it
    // goes; nothing runs
    let mut build = DagBuild::new(options, sources, executor, Instant::now());
    build.explain = Some(String::new());
    build.root(plan)?;
    out.push_str(&build.explain.take().unwrap_or_default());
    Ok(out)
}

/// A one-line summary of a later pipeline for EXPLAIN.
/// The EXPLAIN line of `segment`'s job; `breaker`, where the job is
/// built, says how its breaker runs.
fn describe_segment(segment: &Segment<'_>, breaker: Option<&Breaker>) -> String {
    let mut parts = Vec::new();
    if !segment.filters.is_empty() {
        parts.push(format!("{} filter(s)", segment.filters.len()));
    }
    if let Some(n) = segment.sink {
        parts.push(n.describe_node());
    }
    if let Some(Breaker::Window { plan }) = breaker {
        parts.push(plan.describe());
        return parts.join(" -> ");
    }
    parts.push(
        match segment.breaker {
            BreakerSpec::Materialize { limit: None } => "materialise",
            BreakerSpec::Materialize { limit: Some(_) } => "limit (slices, no job)",
            BreakerSpec::Aggregate => "partial aggregates, merged by radix partition in parallel",
            BreakerSpec::Distinct => "distinct by radix partition in parallel",
            BreakerSpec::TopN { .. } => "top-N: per-lane bounded candidates",
            BreakerSpec::Sort { .. } => {
                "full sort: one radix sort of every lane's rows (fixed-width keys) or sorted runs per lane merged, in parallel"
            }
            BreakerSpec::Window { .. } => {
                "window: rows bucketed by partition keys, each bucket sorted and computed in parallel"
            }
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
    for (i, o) in pipeline.ops.iter().enumerate() {
        ops.push(op(o.name(), &counters[i + 1]));
    }
    let sink_at = pipeline.ops.len() + 1;
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
