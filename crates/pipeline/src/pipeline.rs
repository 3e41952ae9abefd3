//! The builder: the parallel part of a plan as one executor job of lanes.

use std::fmt::{self, Write as _};
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow::datatypes::{Schema, SchemaRef};
use crossbeam_channel::Sender;
use weir_executor::{Job, PipelineExecutor, Step, StepContext, StepResult, WorkerKind};
use weir_planner::{AggregateExpr, Expr, LogicalPlan, TableSource};

use crate::aggregate::{AggregatePlan, AggregateState, PartitionedState, conform};
use crate::error::{Error, Result};
use crate::eval::evaluate;
use crate::fairness::YieldPoint;
use crate::join::ProbeOp;
use crate::memory::MemoryAccountant;
use crate::options::{ExecOptions, Progress};
use crate::sort::{
    KeyedRows, SharedBound, SortSpec, SortedRun, TopN, TopRows, position_base, top_n_max,
};
use crate::source::{LazySeries, PartSource, SourceResolver, TableData, values_table};
use crate::step::{PipelineBatch, PipelineStep, build_steps, conjunction, remap_columns};
use crate::window::{WindowLane, WindowPlan, row_limit, window_order};
use crate::zones::{self, ZoneFilter, has_zones};

/// One pipeline of a query: a source, the filters and projection (or
/// aggregation) its lanes stream each morsel through, and the breaker
/// that collects the lanes' output.
pub(crate) struct Segment<'a> {
    /// The plan leaf for the first pipeline; `None`: the previous
    /// pipeline's result.
    pub(crate) leaf: Option<&'a LogicalPlan>,
    /// The schema of the rows the pipeline reads.
    pub(crate) input: SchemaRef,
    /// Filter predicates, lowest first.
    pub(crate) filters: Vec<&'a Expr>,
    /// A Projection or Aggregate node.
    pub(crate) sink: Option<&'a LogicalPlan>,
    pub(crate) breaker: BreakerSpec<'a>,
    /// Rows after which lanes may stop pulling morsels.
    pub(crate) early_stop: Option<usize>,
    /// The plan nodes this pipeline runs, lowest first (for EXPLAIN).
    pub(crate) nodes: Vec<&'a LogicalPlan>,
}

/// The breaker that ends a [`Segment`].
pub(crate) enum BreakerSpec<'a> {
    /// Keep the rows in input order, then `LIMIT fetch OFFSET offset`.
    Materialize {
        limit: Option<(usize, Option<usize>)>,
    },
    /// The sink is an Aggregate: partial states, merged by partition.
    Aggregate,
    /// DISTINCT: an aggregate grouping by every column.
    Distinct,
    /// ORDER BY with a LIMIT above it: the best `k` rows.
    TopN { sort: &'a LogicalPlan, k: usize },
    /// ORDER BY: sorted runs, merged by range; with `rows`, only the
    /// rows at those sorted positions (a LIMIT above too large for a
    /// top-N, its OFFSET taken here: see [`segments`]).
    Sort {
        sort: &'a LogicalPlan,
        rows: Option<Range<usize>>,
    },
    /// Window functions: rows bucketed by partition, sorted and computed
    /// per bucket in parallel; with `limit`, the first rows of each
    /// partition only ([`crate::window::row_limit`]).
    Window {
        window: &'a LogicalPlan,
        limit: Option<usize>,
    },
}

impl Segment<'_> {
    /// True if the pipeline only passes its input on (and maybe limits
    /// it): no job needed.
    pub(crate) fn is_pass_through(&self) -> bool {
        self.leaf.is_none()
            && self.filters.is_empty()
            && self.sink.is_none()
            && matches!(self.breaker, BreakerSpec::Materialize { .. })
    }
}

/// Cuts `plan` (a chain of nodes over one leaf) into pipelines, bottom
/// first: each starts where the previous one's breaker ends and depends
/// on it.
pub(crate) fn segments(plan: &LogicalPlan) -> Result<Vec<Segment<'_>>> {
    let mut chain = Vec::new();
    let mut node = Some(plan);
    while let Some(n) = node {
        chain.push(n);
        node = n.input();
    }
    chain.reverse();
    let mut out = Vec::new();
    // a LIMIT whose OFFSET a full sort below took (the sort emits only
    // the rows the LIMIT keeps)
    let mut offset_taken: Option<&LogicalPlan> = None;
    let mut i = 1;
    loop {
        let first = out.is_empty();
        let start = i;
        let input = chain[i - 1].schema();
        let mut filters = Vec::new();
        while let Some(LogicalPlan::Filter { predicate, .. }) = chain.get(i) {
            filters.push(predicate);
            i += 1;
        }
        let mut sink = None;
        let mut breaker = None;
        match chain.get(i) {
            Some(n @ LogicalPlan::Aggregate { .. }) => {
                sink = Some(*n);
                breaker = Some(BreakerSpec::Aggregate);
                i += 1;
            }
            Some(n @ LogicalPlan::Projection { .. }) => {
                sink = Some(*n);
                i += 1;
            }
            _ => {}
        }
        let mut early_stop = None;
        let breaker = match breaker {
            Some(b) => b,
            None => match chain.get(i) {
                Some(LogicalPlan::Distinct { .. }) => {
                    i += 1;
                    BreakerSpec::Distinct
                }
                Some(n @ LogicalPlan::Window { .. }) if sink.is_none() => {
                    i += 1;
                    // a filter above that keeps the first rows of each
                    // partition only (QUALIFY ROW_NUMBER() ... <= k)
                    let limit = match chain.get(i) {
                        Some(LogicalPlan::Filter { predicate, .. }) => row_limit(n, predicate),
                        _ => None,
                    };
                    BreakerSpec::Window { window: n, limit }
                }
                Some(n @ LogicalPlan::Sort { .. }) => {
                    i += 1;
                    let mut j = i;
                    while let Some(LogicalPlan::Projection { .. }) = chain.get(j) {
                        j += 1;
                    }
                    match chain.get(j) {
                        Some(LogicalPlan::Limit {
                            offset,
                            fetch: Some(fetch),
                            ..
                        }) if offset.saturating_add(*fetch) <= top_n_max(n)? => BreakerSpec::TopN {
                            sort: n,
                            k: offset + fetch,
                        },
                        // past a top-N's size the full sort gathers only
                        // the rows the LIMIT keeps, its OFFSET skipped
                        Some(limit @ LogicalPlan::Limit { offset, fetch, .. }) => {
                            offset_taken = Some(*limit);
                            let end = fetch.map_or(usize::MAX, |f| offset.saturating_add(f));
                            BreakerSpec::Sort {
                                sort: n,
                                rows: Some(*offset..end),
                            }
                        }
                        _ => BreakerSpec::Sort {
                            sort: n,
                            rows: None,
                        },
                    }
                }
                Some(limit @ LogicalPlan::Limit { offset, fetch, .. }) => {
                    i += 1;
                    let offset = if offset_taken.is_some_and(|t| std::ptr::eq(t, *limit)) {
                        0
                    } else {
                        *offset
                    };
                    early_stop = fetch.map(|f| offset.saturating_add(f));
                    BreakerSpec::Materialize {
                        limit: Some((offset, *fetch)),
                    }
                }
                Some(LogicalPlan::Scan { .. } | LogicalPlan::Values { .. }) => {
                    return Err(Error::Internal(
                        "a Scan or Values node above the plan's leaf".into(),
                    ));
                }
                _ => BreakerSpec::Materialize { limit: None },
            },
        };
        if i == start && chain.len() > 1 {
            return Err(Error::Internal("a pipeline that runs no plan node".into()));
        }
        out.push(Segment {
            leaf: first.then_some(chain[0]),
            input,
            filters,
            sink,
            breaker,
            early_stop,
            nodes: chain[start..i].to_vec(),
        });
        if i >= chain.len() {
            break;
        }
    }
    Ok(out)
}

impl Segment<'_> {
    /// True if the pipeline's rows can flow on into the operators of the
    /// plan above it (a join's probe) instead of ending in a breaker: no
    /// aggregation, no LIMIT, only filters and a projection.
    pub(crate) fn is_streaming(&self) -> bool {
        self.early_stop.is_none()
            && matches!(self.breaker, BreakerSpec::Materialize { limit: None })
            && matches!(self.sink, None | Some(LogicalPlan::Projection { .. }))
    }
}

/// A streaming operator of a pipeline: what a lane does to each morsel
/// between the source and the sink.
pub(crate) enum Operator {
    /// WHERE terms over the same columns (narrows the selection).
    Filter(PipelineStep),
    /// A projection below the pipeline's end (a derived table's SELECT
    /// under a join).
    Project(Projection),
    /// A join's probe: the morsel's selected rows looked up in the
    /// join's hash table, the joined rows passed on.
    Probe(Arc<ProbeOp>),
}

impl Operator {
    /// The EXPLAIN (ANALYZE) name.
    pub(crate) fn name(&self) -> String {
        match self {
            Operator::Filter(step) => format!("filter {}", step.predicate()),
            Operator::Project(p) => format!("project {}", p.describe()),
            Operator::Probe(probe) => probe.name(),
        }
    }
}

/// Projection expressions over the columns they read.
pub(crate) struct Projection {
    exprs: Vec<Expr>,
    display: Vec<Expr>,
    columns: Vec<usize>,
    schema: SchemaRef,
    input_width: usize,
}

impl Projection {
    fn new(exprs: &[Expr], schema: &SchemaRef, input_width: usize) -> Self {
        let mut columns: Vec<usize> = exprs.iter().flat_map(Expr::columns).collect();
        columns.sort_unstable();
        columns.dedup();
        Projection {
            exprs: exprs.iter().map(|e| remap_columns(e, &columns)).collect(),
            display: exprs.to_vec(),
            columns,
            schema: Arc::clone(schema),
            input_width,
        }
    }

    fn describe(&self) -> String {
        self.display
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Where every expression is a column of its own type: `batch`'s
    /// columns picked (no copy) with its selection kept, so that the rows
    /// a filter dropped are never gathered and an operator after (a join's
    /// probe, another filter) reads only the selected rows of what it
    /// needs. `None` where an expression computes or casts.
    fn pick(&self, batch: &PipelineBatch) -> Result<Option<PipelineBatch>> {
        let mut columns = Vec::with_capacity(self.exprs.len());
        for (e, f) in self.exprs.iter().zip(self.schema.fields()) {
            let Expr::Column(c) = e else {
                return Ok(None);
            };
            let column = batch.batch.column(self.columns[c.index]);
            if column.data_type() != f.data_type() {
                return Ok(None);
            }
            columns.push(Arc::clone(column));
        }
        let options = RecordBatchOptions::new().with_row_count(Some(batch.batch.num_rows()));
        let picked = RecordBatch::try_new_with_options(Arc::clone(&self.schema), columns, &options)
            .map_err(Error::arrow)?;
        Ok(Some(PipelineBatch {
            batch: picked,
            selection: batch.selection.clone(),
        }))
    }
}

/// The filters of `segment` as operators (over its input's schema).
fn filter_ops(segment: &Segment<'_>) -> Vec<Operator> {
    let terms: Vec<Expr> = segment
        .filters
        .iter()
        .flat_map(|p| p.conjuncts())
        .cloned()
        .collect();
    if terms.is_empty() {
        return Vec::new();
    }
    build_steps(&conjunction(&terms), &segment.input)
        .into_iter()
        .map(Operator::Filter)
        .collect()
}

/// The operators of a streaming segment (see [`Segment::is_streaming`])
/// run inside the pipeline of the plan above it: its filters, then its
/// projection.
pub(crate) fn streaming_ops(segment: &Segment<'_>) -> Result<Vec<Operator>> {
    let mut ops = filter_ops(segment);
    match segment.sink {
        None => {}
        Some(LogicalPlan::Projection { exprs, schema, .. }) => {
            ops.push(Operator::Project(Projection::new(
                exprs,
                schema,
                segment.input.fields().len(),
            )));
        }
        Some(_) => {
            return Err(Error::Internal(
                "a streaming segment that aggregates".into(),
            ));
        }
    }
    Ok(ops)
}

/// What comes before a pipeline's own operators when it continues
/// another's rows: the source (`None`: the previous pipeline's result or
/// the segment's own leaf) and the operators already on the way (filters,
/// projections and probes of the plan below).
#[derive(Default)]
pub(crate) struct Prefix {
    pub(crate) source: Option<(String, ScanData)>,
    pub(crate) ops: Vec<Operator>,
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
                format!("partial {node} [{}]", plan.describe_inputs().join("; "))
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

/// What collects the lanes' rows once the sink made them.
pub(crate) enum Breaker {
    /// Keep them in input order, then `LIMIT fetch OFFSET offset`.
    Materialize {
        limit: Option<(usize, Option<usize>)>,
    },
    /// Partial aggregates (the sink is [`Sink::Aggregate`]), merged by
    /// partition.
    Aggregate,
    /// Distinct rows: an aggregate grouping by every column.
    Distinct { plan: AggregatePlan },
    /// The best `k` rows by `sort`.
    TopN { sort: SortSpec, k: usize },
    /// All rows by `sort`; with `rows`, only the rows at those sorted
    /// positions are gathered.
    Sort {
        sort: SortSpec,
        rows: Option<Range<usize>>,
    },
    /// Window functions over all rows.
    Window { plan: Box<WindowPlan> },
}

/// How [`Breaker::describe`] names the rows a sort keeps.
fn rows_gathered(rows: Option<&Range<usize>>) -> String {
    match rows {
        None => String::new(),
        Some(r) if r.end == usize::MAX => format!("; rows from {} on gathered", r.start),
        Some(r) => format!("; only rows {} to {} gathered", r.start, r.end),
    }
}

impl Breaker {
    pub(crate) fn describe(&self) -> String {
        match self {
            Breaker::Materialize { limit: None } => "materialise in input order".to_owned(),
            Breaker::Materialize {
                limit: Some((offset, fetch)),
            } => format!(
                "limit {} offset {offset} in input order",
                fetch.map_or("ALL".to_owned(), |f| f.to_string())
            ),
            Breaker::Aggregate => {
                "merge partial groups: radix partitions merged and finished in parallel".to_owned()
            }
            Breaker::Distinct { .. } => {
                "distinct: per-lane hash tables, radix partitions merged in parallel".to_owned()
            }
            Breaker::TopN { sort, k } => format!(
                "top-{k} by {}: a bounded candidate set per lane, merged at the end",
                sort.describe()
            ),
            Breaker::Sort { sort, rows } if sort.by_radix() => format!(
                "sort by {}: one radix sort of every lane's rows (runs of morsels' keys scattered by digit, then ranges of digits sorted and their rows gathered, in parallel){}",
                sort.describe(),
                rows_gathered(rows.as_ref())
            ),
            Breaker::Sort { sort, rows } => format!(
                "sort by {}: a sorted run per lane, merged in parallel by key ranges{}",
                sort.describe(),
                rows_gathered(rows.as_ref())
            ),
            Breaker::Window { plan } => plan.describe(),
        }
    }

    pub(crate) fn name(&self) -> &'static str {
        match self {
            Breaker::Materialize { limit: None } => "materialize",
            Breaker::Materialize { limit: Some(_) } => "limit",
            Breaker::Aggregate => "merge aggregate",
            Breaker::Distinct { .. } => "distinct",
            Breaker::TopN { .. } => "top-n",
            Breaker::Sort { .. } => "sort",
            Breaker::Window { .. } => "window",
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
pub(crate) enum ScanData {
    /// In-memory batches, cut into zero-copy morsels.
    Table(Arc<TableData>),
    /// `range()`, generated one morsel at a time.
    Series(LazySeries),
    /// Parts read by the lane that pulls them (a file's row groups or byte
    /// ranges), each cut into morsels there.
    Parts(Arc<dyn PartSource>),
}

/// A part's morsels are numbered `part << PART_SHIFT | k`, so they sort in
/// input order among all parts. A row's position is its morsel's number
/// above 32 bits of row, so this leaves 2^20 parts of at most 2^12
/// morsels each.
const PART_SHIFT: u32 = 12;

impl ScanData {
    fn num_rows(&self) -> usize {
        match self {
            ScanData::Table(t) => t.num_rows(),
            ScanData::Series(s) => s.num_rows(),
            ScanData::Parts(p) => p.estimated_rows(),
        }
    }

    fn schema(&self) -> &SchemaRef {
        match self {
            ScanData::Table(t) => &t.schema,
            ScanData::Series(s) => s.schema(),
            ScanData::Parts(p) => p.schema(),
        }
    }

    /// The morsels of unit `i` (`m`) with their numbers: one, or those of
    /// the part it reads.
    fn unit(
        &self,
        i: usize,
        m: &MorselRange,
        morsel_rows: usize,
    ) -> Result<Vec<(usize, RecordBatch)>> {
        match self {
            ScanData::Table(t) => Ok(vec![(i, t.batches[m.batch].slice(m.offset, m.len))]),
            ScanData::Series(s) => Ok(vec![(i, s.rows(m.offset, m.len)?)]),
            ScanData::Parts(p) => {
                let batches = p.read(m.batch)?;
                let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
                // at most 2^PART_SHIFT morsels per part
                let per = morsel_rows.max(rows.div_ceil(1 << PART_SHIFT)).max(1);
                let mut out = Vec::new();
                for b in batches {
                    let mut offset = 0;
                    while offset < b.num_rows() {
                        let len = per.min(b.num_rows() - offset);
                        out.push(((i << PART_SHIFT) | out.len(), b.slice(offset, len)));
                        offset += len;
                    }
                }
                Ok(out)
            }
        }
    }

    /// The morsels: runs of at most `morsel_rows` rows within one batch.
    fn morsels(&self, morsel_rows: usize) -> Vec<MorselRange> {
        let cut =
            |lengths: &mut dyn Iterator<Item = usize>, count: usize| {
                let mut morsels = Vec::with_capacity(count);
                for (batch, rows) in lengths.enumerate() {
                    morsels.extend((0..rows).step_by(morsel_rows.max(1)).map(|offset| {
                        MorselRange {
                            batch,
                            offset,
                            len: morsel_rows.min(rows - offset),
                        }
                    }));
                }
                morsels
            };
        match self {
            ScanData::Table(t) => {
                let count = t
                    .batches
                    .iter()
                    .map(|b| b.num_rows().div_ceil(morsel_rows.max(1)))
                    .sum();
                cut(&mut t.batches.iter().map(RecordBatch::num_rows), count)
            }
            ScanData::Series(s) => cut(
                &mut std::iter::once(s.num_rows()),
                s.num_rows().div_ceil(morsel_rows.max(1)),
            ),
            ScanData::Parts(p) => (0..p.num_parts())
                .map(|batch| MorselRange {
                    batch,
                    offset: 0,
                    len: 0,
                })
                .collect(),
        }
    }
}

/// The source column a top-N's first key is, when every operator before
/// it only narrows the rows and the column has zones: blocks of an
/// in-memory source whose zone cannot beat the lane's threshold are then
/// not read at all.
fn zone_column(
    ops: &[Operator],
    sink: &Sink,
    breaker: &Breaker,
    input: &SchemaRef,
) -> Option<usize> {
    let Breaker::TopN { sort, .. } = breaker else {
        return None;
    };
    if !ops.iter().all(|op| matches!(op, Operator::Filter(_))) {
        return None;
    }
    let (key, data_type) = sort.first_column()?;
    let column = match sink {
        Sink::Collect => key,
        Sink::Project { display, .. } => match display.get(key)? {
            Expr::Column(c) => c.index,
            _ => return None,
        },
        Sink::Aggregate { .. } => return None,
    };
    let field = input.fields().get(column)?;
    (field.data_type() == data_type && has_zones(data_type)).then_some(column)
}

/// One built pipeline: a job of lanes over the morsels of its source.
pub(crate) struct Pipeline {
    pub(crate) source: String,
    table: ScanData,
    /// The streaming operators, in order.
    pub(crate) ops: Vec<Operator>,
    pub(crate) sink: Sink,
    pub(crate) breaker: Breaker,
    morsels: Vec<MorselRange>,
    /// The source column whose zones can skip blocks of an in-memory
    /// table: a top-N's first key, read straight from the source.
    zone_column: Option<usize>,
    /// WHERE terms the source's blocks are first tested on by their
    /// zones ([`ZoneFilter`]): a block none of whose rows can pass one is
    /// not read.
    zone_filters: Vec<ZoneFilter>,
    pub(crate) morsel_rows: usize,
    pub(crate) lanes: usize,
    pub(crate) workers: Workers,
    pub(crate) early_stop: Option<usize>,
    pub(crate) cost: u64,
}

impl Pipeline {
    /// Builds `segment`: the first pipeline over the plan's leaf, a later
    /// one over an empty stand-in for the previous pipeline's result,
    /// until [`Pipeline::set_input`] hands it over.
    pub(crate) fn build(
        segment: &Segment<'_>,
        prefix: Prefix,
        sources: &dyn SourceResolver,
        workers: Workers,
        options: &ExecOptions,
    ) -> Result<Self> {
        let Prefix { source, mut ops } = prefix;
        let (source, table) = match (source, segment.leaf) {
            (Some(source), _) => source,
            // built before the previous pipeline (or the join it reads)
            // ran: its result comes through `set_input`
            (None, None | Some(LogicalPlan::Join { .. } | LogicalPlan::Union { .. })) => (
                "previous pipeline".to_owned(),
                ScanData::Table(Arc::new(TableData::new(
                    Arc::clone(&segment.input),
                    Vec::new(),
                ))),
            ),
            (None, Some(leaf)) => Self::leaf(leaf, sources)?,
        };
        let schema = Arc::clone(&segment.input);
        ops.extend(filter_ops(segment));
        let sink = match segment.sink {
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
                node: node.describe_node(),
            },
            Some(_) => return Err(Error::Internal("unexpected sink node".into())),
        };
        let rows_schema = match &sink {
            Sink::Project { schema, .. } => Arc::clone(schema),
            _ => Arc::clone(&schema),
        };
        let breaker = match &segment.breaker {
            BreakerSpec::Materialize { limit } => Breaker::Materialize { limit: *limit },
            BreakerSpec::Aggregate => Breaker::Aggregate,
            BreakerSpec::Distinct => {
                let group_by: Vec<Expr> = rows_schema
                    .fields()
                    .iter()
                    .enumerate()
                    .map(|(i, f)| Expr::column(i, f.name()))
                    .collect();
                Breaker::Distinct {
                    plan: AggregatePlan::new(
                        &group_by,
                        &[],
                        &rows_schema,
                        Arc::clone(&rows_schema),
                    )?,
                }
            }
            BreakerSpec::TopN {
                sort: LogicalPlan::Sort { keys, .. },
                k,
            } => Breaker::TopN {
                sort: SortSpec::new(keys, Arc::clone(&rows_schema))?,
                k: *k,
            },
            BreakerSpec::Sort {
                sort: LogicalPlan::Sort { keys, .. },
                rows,
            } => Breaker::Sort {
                sort: SortSpec::new(keys, Arc::clone(&rows_schema))?,
                rows: rows.clone(),
            },
            BreakerSpec::Window {
                window:
                    LogicalPlan::Window {
                        input,
                        partition_by,
                        order_by,
                        functions,
                        schema: out,
                    },
                limit,
            } => Breaker::Window {
                plan: Box::new(WindowPlan::new(
                    Arc::clone(&rows_schema),
                    Arc::clone(out),
                    partition_by,
                    order_by,
                    functions,
                    matches!(&**input, LogicalPlan::Sort { keys, .. }
                        if *keys == window_order(partition_by, order_by)),
                    *limit,
                )?),
            },
            BreakerSpec::Window { .. } => {
                return Err(Error::Internal(
                    "a window breaker without a Window node".into(),
                ));
            }
            BreakerSpec::TopN { .. } | BreakerSpec::Sort { .. } => {
                return Err(Error::Internal("a sort breaker without a Sort node".into()));
            }
        };
        let zone_column = zone_column(&ops, &sink, &breaker, &schema);
        // the terms of the filters an in-memory source's rows meet first,
        // over columns whose values look clustered
        let zone_filters = match &table {
            ScanData::Table(data) => ops
                .iter()
                .map_while(|op| match op {
                    Operator::Filter(step) => Some(step.terms()),
                    _ => None,
                })
                .flatten()
                .flat_map(Expr::conjuncts)
                .filter_map(|term| ZoneFilter::of(term, &schema))
                .filter(|f| data.zones.clustered(&data.batches, f.column) == Some(true))
                .collect(),
            _ => Vec::new(),
        };
        let mut pipeline = Pipeline {
            source,
            table,
            ops,
            sink,
            breaker,
            zone_column,
            zone_filters,
            morsels: Vec::new(),
            morsel_rows: options.morsel_rows.max(1),
            lanes: 1,
            workers,
            early_stop: segment.early_stop,
            cost: 1,
        };
        pipeline.size();
        pipeline.prune(segment);
        Ok(pipeline)
    }

    /// Tells each probe which of its output columns the operators above
    /// it read (a liveness pass from the sink down), so it gathers only
    /// those.
    fn prune(&self, segment: &Segment<'_>) {
        let width = segment.input.fields().len();
        let mut needed = match (&self.sink, segment.sink) {
            (Sink::Project { columns, .. }, _) => {
                let mut n = vec![false; width];
                for &c in columns {
                    if let Some(x) = n.get_mut(c) {
                        *x = true;
                    }
                }
                n
            }
            (
                Sink::Aggregate { .. },
                Some(LogicalPlan::Aggregate {
                    group_by,
                    aggregates,
                    ..
                }),
            ) => {
                let mut n = vec![false; width];
                let mut read = |e: &Expr| {
                    for c in e.columns() {
                        if let Some(x) = n.get_mut(c) {
                            *x = true;
                        }
                    }
                };
                group_by.iter().for_each(&mut read);
                aggregates
                    .iter()
                    .flat_map(AggregateExpr::exprs)
                    .for_each(&mut read);
                n
            }
            _ => vec![true; width],
        };
        for op in self.ops.iter().rev() {
            match op {
                Operator::Filter(step) => {
                    for &c in step.columns() {
                        if let Some(x) = needed.get_mut(c) {
                            *x = true;
                        }
                    }
                }
                Operator::Project(p) => {
                    needed = vec![false; p.input_width];
                    for &c in &p.columns {
                        if let Some(x) = needed.get_mut(c) {
                            *x = true;
                        }
                    }
                }
                Operator::Probe(probe) => needed = probe.set_keep(&needed),
            }
        }
    }

    /// Replaces the source of a pipeline built before its input existed
    /// with `input`, the previous pipeline's result.
    pub(crate) fn set_input(&mut self, input: Arc<TableData>) {
        self.table = ScanData::Table(input);
        self.size();
    }

    /// Cuts the source into morsels and sizes the job: lanes and cost.
    fn size(&mut self) {
        self.morsels = self.table.morsels(self.morsel_rows);
        let total_threads = self.workers.total();
        self.lanes = total_threads.min(self.morsels.len()).max(1);
        let rows = self.table.num_rows() as f64;
        let mut per_row = 1.0;
        let mut surviving = 1.0;
        for op in &self.ops {
            match op {
                Operator::Filter(step) => {
                    per_row += surviving * step.cost();
                    surviving *= step.selectivity();
                }
                Operator::Project(p) => per_row += surviving * p.exprs.len() as f64,
                Operator::Probe(_) => per_row += surviving * 4.0,
            }
        }
        self.cost = (rows * per_row / 1000.0) as u64 + 1;
    }

    /// The source of the first pipeline: the plan's leaf.
    pub(crate) fn leaf(
        leaf: &LogicalPlan,
        sources: &dyn SourceResolver,
    ) -> Result<(String, ScanData)> {
        Ok(match leaf {
            LogicalPlan::Scan {
                source: source @ TableSource::Series { start, stop, step },
                schema,
            } => (
                source.to_string(),
                ScanData::Series(LazySeries::new(*start, *stop, *step, Arc::clone(schema))?),
            ),
            LogicalPlan::Scan { source, schema } => {
                if let Some(parts) = sources.resolve_parts(source)? {
                    if parts.schema().fields().len() != schema.fields().len() {
                        return Err(Error::Execution(format!(
                            "{} has {} columns, the plan expects {}",
                            source,
                            parts.schema().fields().len(),
                            schema.fields().len()
                        )));
                    }
                    return Ok((source.to_string(), ScanData::Parts(parts)));
                }
                let table = sources.resolve(source)?;
                if table.schema.fields().len() != schema.fields().len() {
                    return Err(Error::Execution(format!(
                        "{} has {} columns, the plan expects {}",
                        source,
                        table.schema.fields().len(),
                        schema.fields().len()
                    )));
                }
                (source.to_string(), ScanData::Table(table))
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
        let _ = writeln!(
            out,
            "job \"{}\": cost {}, {} lane{} on {}, {} morsel{} of up to {} rows ({} rows)",
            self.source,
            self.cost,
            self.lanes,
            if self.lanes == 1 { "" } else { "s" },
            self.workers,
            self.morsels.len(),
            if self.morsels.len() == 1 { "" } else { "s" },
            self.morsel_rows,
            self.num_rows()
        );
        let _ = writeln!(
            out,
            "  each lane: pull morsel from the shared cursor -> operators -> {} sink -> {} breaker{}",
            self.sink.name(),
            self.breaker.name(),
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
        self.describe_ops(out);
        let _ = writeln!(out, "  sink: {}", self.sink.describe());
        let _ = writeln!(out, "  breaker: {}", self.breaker.describe());
    }

    /// The EXPLAIN lines of the operators.
    pub(crate) fn describe_ops(&self, out: &mut String) {
        for (i, op) in self.ops.iter().enumerate() {
            match op {
                Operator::Filter(step) => {
                    let _ = writeln!(out, "  step {}: {step}", i + 1);
                }
                Operator::Project(p) => {
                    let _ = writeln!(out, "  step {}: project {}", i + 1, p.describe());
                }
                Operator::Probe(probe) => {
                    let _ = writeln!(
                        out,
                        "  step {}: {} ({})",
                        i + 1,
                        probe.name(),
                        probe.describe_gather()
                    );
                    if probe.spec.emits_unmatched() {
                        let _ = writeln!(
                            out,
                            "    then, after every probe: {}, through steps {}..",
                            probe.spec.emitted_after_probes(),
                            i + 2
                        );
                    }
                }
            }
        }
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
            WorkerKind::Main | WorkerKind::Waiter => self.morsels_main += 1,
            WorkerKind::Reserve => self.morsels_reserve += 1,
        }
    }
}

/// What a lane hands to its pipeline's merge node.
pub(crate) struct LaneReport {
    pub(crate) output: LaneOutput,
    /// Scan, each step, then the sink.
    pub(crate) counters: Vec<StepCounters>,
}

pub(crate) enum LaneOutput {
    /// Output batches tagged with their morsel's index.
    Batches(Vec<(usize, RecordBatch)>),
    /// Partial groups, cut into radix buckets.
    Partitioned(PartitionedState),
    /// The lane's best rows, sorted, with their input positions.
    TopN(TopRows),
    /// The lane's rows as sorted runs (one, or one per share of the
    /// input the lane took: see [`LaneRun::cut_run`]).
    Runs(Vec<SortedRun>),
    /// The lane's rows with their sort keys' values, for one radix sort
    /// of every lane's rows.
    Keyed(KeyedRows),
    /// The lane's rows with their window keys, cut into buckets.
    Window(WindowLane),
}

impl LaneOutput {
    /// Bytes held (for the memory accountant).
    pub(crate) fn size(&self) -> usize {
        match self {
            LaneOutput::Batches(b) => b.iter().map(|(_, b)| batch_bytes(b)).sum(),
            LaneOutput::Partitioned(p) => p.size(),
            LaneOutput::TopN(t) => t.size(),
            LaneOutput::Runs(r) => r.iter().map(SortedRun::size).sum(),
            LaneOutput::Keyed(k) => k.size(),
            LaneOutput::Window(w) => w.size(),
        }
    }

    /// Rows or groups held.
    pub(crate) fn rows(&self) -> usize {
        match self {
            LaneOutput::Batches(b) => b.iter().map(|(_, b)| b.num_rows()).sum(),
            LaneOutput::Partitioned(p) => p.state.num_groups() + p.state.rows_put_aside(),
            LaneOutput::TopN(t) => t.batch.num_rows(),
            LaneOutput::Runs(r) => r.iter().map(SortedRun::num_rows).sum(),
            LaneOutput::Keyed(k) => k.num_rows(),
            LaneOutput::Window(w) => w.rows(),
        }
    }
}

/// The bytes of `batch`'s rows (of the slice, not of shared buffers).
pub(crate) fn batch_bytes(batch: &RecordBatch) -> usize {
    batch.columns().iter().map(array_bytes).sum()
}

/// Arrow's `ArrayData::get_slice_memory_size` of `array`, read off the
/// array for the types Weir stores most (building the `ArrayData` first
/// costs allocations, which a short query's accounting felt).
fn array_bytes(array: &ArrayRef) -> usize {
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::DataType;
    let len = array.len();
    let nulls = if array.nulls().is_some() {
        len.div_ceil(8)
    } else {
        0
    };
    let values = match array.data_type() {
        DataType::Boolean => len.div_ceil(8),
        DataType::Utf8 => {
            let offsets = array.as_string::<i32>().value_offsets();
            (len + 1) * 4 + (offsets[len] - offsets[0]) as usize
        }
        DataType::LargeUtf8 => {
            let offsets = array.as_string::<i64>().value_offsets();
            (len + 1) * 8 + (offsets[len] - offsets[0]) as usize
        }
        DataType::Utf8View => {
            let views = array.as_string_view();
            len * 16
                + views
                    .data_buffers()
                    .iter()
                    .map(|b| b.capacity())
                    .sum::<usize>()
        }
        t if t.is_primitive() => len * t.primitive_width().unwrap_or(0),
        _ => return array.to_data().get_slice_memory_size().unwrap_or(0),
    };
    values + nulls
}

/// What a lane holds while it runs.
enum LaneState {
    Batches(Vec<(usize, RecordBatch)>),
    Aggregate(Box<AggregateState>),
    TopN(TopN),
    Keyed(KeyedRows),
}

/// Which rows a job of a pipeline's lanes reads.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Phase {
    /// The pipeline's source, morsel by morsel, through every operator.
    Source,
    /// Once every probe ran: the build rows of the RIGHT or FULL join
    /// probed by operator `op` that no probe row matched, in ranges of
    /// `morsel_rows` build rows, through the operators after it into the
    /// same sink.
    Unmatched { op: usize },
}

/// State the lanes of one pipeline share.
pub(crate) struct LaneShared {
    pipeline: Pipeline,
    cursor: AtomicUsize,
    /// Per operator: the next range of its join's unmatched build rows.
    unmatched_cursors: Vec<AtomicUsize>,
    /// Per operator: the index of its first unmatched range among the
    /// pipeline's morsels (after the source's).
    unmatched_base: Vec<usize>,
    produced: AtomicUsize,
    progress: Option<Arc<Progress>>,
    analyze: bool,
    pub(crate) memory: Arc<MemoryAccountant>,
    /// The first error a lane hit, with its type intact.
    pub(crate) error: Mutex<Option<Error>>,
    /// Lanes made over all phases: the reports the merge waits for.
    pub(crate) lanes_made: AtomicUsize,
    /// A top-N's best threshold over its lanes.
    top_bound: SharedBound,
}

impl LaneShared {
    /// The lanes' state; every probe's build must be set.
    pub(crate) fn new(
        pipeline: Pipeline,
        options: &ExecOptions,
        memory: Arc<MemoryAccountant>,
    ) -> Result<Self> {
        let mut unmatched_base = Vec::with_capacity(pipeline.ops.len());
        // after the source's morsels (a part's are numbered `part << PART_SHIFT | k`)
        let mut next = match pipeline.table {
            ScanData::Parts(_) => pipeline.morsels.len() << PART_SHIFT,
            _ => pipeline.morsels.len(),
        };
        for op in &pipeline.ops {
            unmatched_base.push(next);
            if let Operator::Probe(probe) = op
                && probe.spec.emits_unmatched()
            {
                next += probe.built()?.num_rows().div_ceil(pipeline.morsel_rows);
            }
        }
        Ok(LaneShared {
            unmatched_cursors: pipeline.ops.iter().map(|_| AtomicUsize::new(0)).collect(),
            unmatched_base,
            pipeline,
            cursor: AtomicUsize::new(0),
            produced: AtomicUsize::new(0),
            progress: options.progress.clone(),
            analyze: options.analyze,
            memory,
            error: Mutex::new(None),
            lanes_made: AtomicUsize::new(0),
            top_bound: SharedBound::default(),
        })
    }

    pub(crate) fn pipeline(&self) -> &Pipeline {
        &self.pipeline
    }

    /// The next unit of the source (a morsel, or a part of a file) that no
    /// lane took yet.
    fn claim_unit(&self) -> Option<usize> {
        let i = self.cursor.fetch_add(1, Ordering::Relaxed);
        (i < self.pipeline.morsels.len()).then_some(i)
    }

    /// The morsels of unit `i` ([`ScanData::unit`]).
    fn unit(&self, i: usize) -> Result<Vec<(usize, RecordBatch)>> {
        let p = &self.pipeline;
        p.table.unit(i, &p.morsels[i], p.morsel_rows)
    }

    fn limit_reached(&self) -> bool {
        self.pipeline
            .early_stop
            .is_some_and(|n| self.produced.load(Ordering::Relaxed) >= n)
    }
}

/// The threads that work on a query: the executor's main and reserve
/// workers, and the query's own thread where it works while it waits for
/// its DAG ([`weir_executor::ExecutorConfig::waiters_work`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Workers {
    pub(crate) main: usize,
    pub(crate) reserve: usize,
    pub(crate) waiter: bool,
}

impl Workers {
    pub(crate) fn of(executor: &PipelineExecutor) -> Self {
        let (main, reserve) = executor.split();
        Workers {
            main,
            reserve,
            waiter: executor.waiters_work(),
        }
    }

    /// How many threads run a parallel job of the query (at least one).
    pub(crate) fn total(self) -> usize {
        (self.main + self.reserve + usize::from(self.waiter)).max(1)
    }
}

impl fmt::Display for Workers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} main + {} reserve workers", self.main, self.reserve)?;
        if self.waiter {
            f.write_str(" and the query's thread")?;
        }
        Ok(())
    }
}

/// Makes a job of `phase`: one lane step per worker thread (at most one
/// per morsel).
pub(crate) fn make_job(shared: &Arc<LaneShared>, tx: &Sender<LaneReport>, phase: Phase) -> Job {
    let p = &shared.pipeline;
    let total_threads = p.workers.total();
    let (name, lanes) = match phase {
        Phase::Source => (format!("pipeline {}", p.source), p.lanes),
        Phase::Unmatched { op } => {
            let ranges = match &p.ops[op] {
                Operator::Probe(probe) => probe
                    .built()
                    .map_or(0, |b| b.num_rows().div_ceil(p.morsel_rows)),
                _ => 0,
            };
            (
                format!("pipeline {}: unmatched build rows", p.source),
                total_threads.min(ranges).max(1),
            )
        }
    };
    let mut job = Job::new(name).with_cost(p.cost);
    for lane in 0..lanes {
        shared.lanes_made.fetch_add(1, Ordering::Relaxed);
        job.push_step(Box::new(Lane {
            shared: Arc::clone(shared),
            tx: tx.clone(),
            name: format!("lane {lane}"),
            phase,
        }));
    }
    job
}

/// One lane: pulls morsels from the shared cursor until none are left and
/// pushes each through the operators into its own sink.
struct Lane {
    shared: Arc<LaneShared>,
    tx: Sender<LaneReport>,
    name: String,
    phase: Phase,
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

/// A lane's state while it runs: its sink's state, its counters and
/// where in the input its rows come from.
struct LaneRun<'a> {
    shared: &'a LaneShared,
    state: LaneState,
    /// Scan, each operator, the sink, the lane's part of the breaker.
    counters: Vec<StepCounters>,
    worker: WorkerKind,
    /// The morsel being run and the rows it gave the sink so far (the
    /// input positions of its next rows).
    morsel: (usize, usize),
    /// A sort lane's runs cut so far, a window lane's bucketed runs, and
    /// the source rows it took since the last cut.
    runs: Vec<SortedRun>,
    windows: WindowLane,
    taken: usize,
    /// Whether a top-N lane asked the table's zones for a first bound.
    seeded: bool,
}

impl LaneRun<'_> {
    fn clock(&self) -> Option<Instant> {
        self.shared.analyze.then(Instant::now)
    }

    /// Runs `batch` through the operators from `from` on, then the sink.
    fn push(&mut self, from: usize, mut batch: PipelineBatch) -> Result<()> {
        let shared = self.shared;
        let p = &shared.pipeline;
        for (k, op) in p.ops.iter().enumerate().skip(from) {
            let rows_in = batch.num_rows();
            if rows_in == 0 {
                break;
            }
            let started = self.clock();
            match op {
                Operator::Filter(step) => {
                    batch = step.apply(batch)?;
                    self.counters[k + 1].record(self.worker, rows_in, batch.num_rows(), started);
                }
                Operator::Project(pr) => {
                    batch = match pr.pick(&batch)? {
                        Some(picked) => picked,
                        None => {
                            PipelineBatch::new(project(&batch, &pr.exprs, &pr.columns, &pr.schema)?)
                        }
                    };
                    self.counters[k + 1].record(self.worker, rows_in, rows_in, started);
                }
                Operator::Probe(probe) => {
                    let built = probe.built()?;
                    let mut rows_out = 0;
                    let mut downstream = Duration::ZERO;
                    probe
                        .spec
                        .probe(built, probe.gather(), &batch, &mut |out| {
                            rows_out += out.num_rows();
                            let t = started.map(|_| Instant::now());
                            self.push(k + 1, out)?;
                            if let Some(t) = t {
                                downstream += t.elapsed();
                            }
                            Ok(())
                        })?;
                    let c = &mut self.counters[k + 1];
                    c.record(self.worker, rows_in, rows_out, None);
                    if let Some(t) = started {
                        c.nanos += t.elapsed().saturating_sub(downstream).as_nanos() as u64;
                    }
                    return Ok(());
                }
            }
        }
        self.sink(batch)
    }

    /// Sorts the rows a sort lane holds into a run once it took its share
    /// of the source. The rows are only collected as morsels arrive and
    /// sorted at the end, so a lane that started first could take every
    /// morsel before the others start and then sort them all alone; cut
    /// at its share, it sorts while the others take the rest.
    /// A window lane likewise buckets what it holds (keys evaluated once).
    fn cut_run(&mut self, share: usize) -> Result<()> {
        let LaneState::Batches(parts) = &mut self.state else {
            return Ok(());
        };
        let breaker = &self.shared.pipeline.breaker;
        if !matches!(breaker, Breaker::Sort { .. } | Breaker::Window { .. })
            || self.taken < share
            || parts.is_empty()
        {
            return Ok(());
        }
        let parts = std::mem::take(parts);
        self.taken = 0;
        let started = self.clock();
        match breaker {
            // one lane's run is the result; several lanes' runs are merged
            Breaker::Sort { sort, rows } => {
                let first = rows.as_ref().map(|r| r.end);
                self.runs.push(SortedRun::new(sort, parts, first)?);
            }
            Breaker::Window { plan } => plan.scatter(parts, &mut self.windows)?,
            _ => {}
        }
        let at = self.shared.pipeline.ops.len() + 2;
        self.counters[at].record(self.worker, 0, 0, started);
        Ok(())
    }

    /// Gives a top-N lane its first bound from the zones its table
    /// computed so far (a query before this one over the same column),
    /// when the lane reads every row of the table and nothing between the
    /// scan and the top-N drops one (no filter): its first morsel is then
    /// cut by the zones and the prefilter like the rest, instead of read
    /// whole for a bound.
    fn seed_top(&mut self) {
        self.seeded = true;
        let p = &self.shared.pipeline;
        let (Some(column), true) = (p.zone_column, p.ops.is_empty()) else {
            return;
        };
        let (ScanData::Table(table), LaneState::TopN(top), Breaker::TopN { sort, k }) =
            (&p.table, &mut self.state, &p.breaker)
        else {
            return;
        };
        let desc = sort.first_descending();
        if let Some(first) = table.zones.bound(&table.batches, column, *k, desc) {
            top.seed(first);
        }
    }

    /// Runs the rows of source morsel `index` (of `rows` rows) that the
    /// zones leave through the operators: `slice` gives a range of them.
    fn read_morsel(
        &mut self,
        index: usize,
        rows: usize,
        slice: impl Fn(std::ops::Range<usize>) -> RecordBatch,
    ) -> Result<()> {
        self.morsel = (index, 0);
        self.taken += rows;
        if !self.seeded {
            self.seed_top();
        }
        let worker = self.worker;
        // the scan's time is testing the zones and cutting the rows
        let started = self.clock();
        let parts = self.zone_parts(index, rows);
        let kept = parts
            .as_ref()
            .map_or(rows, |parts| parts.iter().map(|r| r.len()).sum());
        self.counters[0].record(worker, rows, kept, started);
        for part in parts.unwrap_or_else(|| std::iter::once(0..rows).collect()) {
            let started = self.clock();
            let batch = slice(part);
            if let Some(t) = started {
                self.counters[0].nanos += t.elapsed().as_nanos() as u64;
            }
            self.push(0, PipelineBatch::new(batch))?;
        }
        Ok(())
    }

    /// The row ranges of source morsel `index` (of `rows` rows) whose
    /// zones may pass the leading WHERE terms and beat the lane's top-N
    /// threshold; `None` to read it whole.
    fn zone_parts(&self, index: usize, rows: usize) -> Option<Vec<std::ops::Range<usize>>> {
        let p = &self.shared.pipeline;
        let ScanData::Table(table) = &p.table else {
            return None;
        };
        let m = p.morsels.get(index)?;
        debug_assert_eq!(m.len, rows);
        let span = m.offset..m.offset + m.len;
        let mut parts: Option<Vec<Range<usize>>> = None;
        let mut narrow = |kept: Option<Vec<Range<usize>>>| {
            if let Some(kept) = kept {
                parts = Some(match parts.take() {
                    None => kept,
                    Some(so_far) => zones::both(&so_far, &kept),
                });
            }
        };
        for f in &p.zone_filters {
            let test = |z: &zones::Zone| f.keeps(z);
            narrow(
                table
                    .zones
                    .surviving(&table.batches, f.column, m.batch, span.clone(), test),
            );
        }
        if let (Some(column), LaneState::TopN(top), Breaker::TopN { sort, .. }) =
            (p.zone_column, &self.state, &p.breaker)
            && let Some(test) = top.zone_test(sort)
        {
            narrow(
                table
                    .zones
                    .surviving(&table.batches, column, m.batch, span, test),
            );
        }
        parts
    }

    /// Hands the rows that reached the end of the operators to the sink
    /// and the lane's part of the breaker.
    fn sink(&mut self, batch: PipelineBatch) -> Result<()> {
        let shared = self.shared;
        let p = &shared.pipeline;
        let sink_at = p.ops.len() + 1;
        let worker = self.worker;
        let rows_in = batch.num_rows();
        let started = self.clock();
        if let (Sink::Aggregate { plan, .. }, LaneState::Aggregate(agg)) =
            (&p.sink, &mut self.state)
        {
            agg.update(plan, &batch)?;
            self.counters[sink_at].record(worker, rows_in, 0, started);
            return Ok(());
        }
        if rows_in == 0 {
            return Ok(());
        }
        let rows = match &p.sink {
            Sink::Collect => batch.into_record_batch()?,
            Sink::Project {
                exprs,
                columns,
                schema,
                ..
            } => project(&batch, exprs, columns, schema)?,
            Sink::Aggregate { .. } => {
                return Err(Error::Internal("lane sink and state disagree".into()));
            }
        };
        self.counters[sink_at].record(worker, rows_in, rows_in, started);
        let started = self.clock();
        let (index, first_row) = self.morsel;
        self.morsel.1 += rows_in;
        match (&p.breaker, &mut self.state) {
            (Breaker::Distinct { plan }, LaneState::Aggregate(agg)) => {
                agg.update(plan, &PipelineBatch::new(rows))?;
            }
            (Breaker::TopN { sort, .. }, LaneState::TopN(top)) => {
                top.share_bound(sort, &shared.top_bound)?;
                top.push_morsel(sort, rows, position_base(index, first_row))?;
                top.share_bound(sort, &shared.top_bound)?;
            }
            (Breaker::Sort { sort, .. }, LaneState::Keyed(keyed)) => {
                keyed.push(sort, index, rows)?;
                if keyed.unranked() {
                    // strings too varied to rank: sorted into runs, as
                    // keys of no fixed width are
                    let keyed = std::mem::replace(&mut self.state, LaneState::Batches(Vec::new()));
                    if let LaneState::Keyed(keyed) = keyed {
                        self.state = LaneState::Batches(keyed.into_parts());
                    }
                }
            }
            (_, LaneState::Batches(out)) => {
                if p.early_stop.is_some() {
                    shared.produced.fetch_add(rows_in, Ordering::Relaxed);
                }
                out.push((index, rows));
            }
            _ => return Err(Error::Internal("lane breaker and state disagree".into())),
        }
        self.counters[sink_at + 1].record(worker, rows_in, 0, started);
        Ok(())
    }
}

impl Lane {
    fn run_lane(&self, ctx: &StepContext<'_>) -> Result<()> {
        let shared = &*self.shared;
        let p = &shared.pipeline;
        let state = match (&p.sink, &p.breaker) {
            (Sink::Aggregate { plan, .. }, _) => {
                LaneState::Aggregate(Box::new(plan.new_lane_state(p.lanes)?))
            }
            (_, Breaker::Distinct { plan }) => {
                LaneState::Aggregate(Box::new(plan.new_lane_state(p.lanes)?))
            }
            (_, Breaker::TopN { sort, k }) => LaneState::TopN(TopN::new(sort, *k)?),
            (_, Breaker::Sort { sort, .. }) if sort.by_radix() => {
                LaneState::Keyed(KeyedRows::new(sort))
            }
            _ => LaneState::Batches(Vec::new()),
        };
        let mut run = LaneRun {
            shared,
            state,
            counters: vec![StepCounters::default(); p.ops.len() + 3],
            worker: ctx.worker(),
            morsel: (0, 0),
            runs: Vec::new(),
            windows: WindowLane::default(),
            taken: 0,
            seeded: false,
        };
        let worker = ctx.worker();
        let sink_at = p.ops.len() + 1;
        // a lane's fair share of the source, past which a sort lane sorts
        // what it holds (see `cut_run`)
        let share = p.num_rows().div_ceil(p.lanes.max(1)).max(1);
        let yield_point = YieldPoint::new();
        // the morsels of the part being run
        let mut pending = std::collections::VecDeque::new();
        loop {
            yield_point.between_units(ctx);
            // a part is run whole, so a LIMIT's rows are a prefix of the input
            if ctx.is_cancelled() || (pending.is_empty() && shared.limit_reached()) {
                break;
            }
            match self.phase {
                Phase::Source => {
                    let Some((index, morsel)) = pending.pop_front() else {
                        let started = run.clock();
                        let Some(i) = shared.claim_unit() else {
                            break;
                        };
                        // an in-memory table's morsel is cut by the zones
                        // before it is sliced: one that cannot beat a
                        // top-N's threshold costs no slice of its columns
                        if let (ScanData::Table(t), Some(m)) = (&p.table, p.morsels.get(i)) {
                            let batch = &t.batches[m.batch];
                            run.read_morsel(i, m.len, |r| {
                                batch.slice(m.offset + r.start, r.len())
                            })?;
                            run.cut_run(share)?;
                            if let Some(progress) = &shared.progress {
                                progress.morsel_done();
                            }
                            continue;
                        }
                        pending.extend(shared.unit(i)?);
                        if let Some(t) = started {
                            // reading and decoding a part is the scan's time
                            run.counters[0].nanos += t.elapsed().as_nanos() as u64;
                        }
                        if pending.is_empty()
                            && let Some(progress) = &shared.progress
                        {
                            progress.morsel_done();
                        }
                        continue;
                    };
                    let rows = morsel.num_rows();
                    run.read_morsel(index, rows, |r| {
                        if r.len() == rows {
                            morsel.clone()
                        } else {
                            morsel.slice(r.start, r.len())
                        }
                    })?;
                    run.cut_run(share)?;
                    if pending.is_empty()
                        && let Some(progress) = &shared.progress
                    {
                        progress.morsel_done();
                    }
                }
                Phase::Unmatched { op } => {
                    let Some(Operator::Probe(probe)) = p.ops.get(op) else {
                        return Err(Error::Internal(
                            "unmatched build rows of an operator that is no probe".into(),
                        ));
                    };
                    let built = probe.built()?;
                    let i = shared.unmatched_cursors[op].fetch_add(1, Ordering::Relaxed);
                    let start = i.saturating_mul(p.morsel_rows);
                    if start >= built.num_rows() {
                        break;
                    }
                    let started = run.clock();
                    let rows = probe.spec.unmatched(
                        built,
                        probe.gather(),
                        start,
                        start + p.morsel_rows,
                    )?;
                    let c = &mut run.counters[op + 1];
                    c.record(
                        worker,
                        0,
                        rows.as_ref().map_or(0, RecordBatch::num_rows),
                        started,
                    );
                    if let Some(rows) = rows {
                        run.morsel = (shared.unmatched_base[op] + i, 0);
                        run.push(op + 1, PipelineBatch::new(rows))?;
                    }
                }
            }
        }
        if ctx.is_cancelled() {
            return Ok(());
        }
        let LaneRun {
            state,
            mut counters,
            runs: mut run_runs,
            windows: mut run_windows,
            ..
        } = run;
        // the lane's share of the breaker: partition, sort or cut its
        // state before handing it over
        let started = shared.analyze.then(Instant::now);
        let output = match (state, &p.breaker) {
            (LaneState::Aggregate(agg), _) => LaneOutput::Partitioned(agg.partition()?),
            (LaneState::TopN(top), Breaker::TopN { sort, .. }) => {
                LaneOutput::TopN(top.finish(sort, p.lanes > 1)?)
            }
            (LaneState::Keyed(keyed), _) => LaneOutput::Keyed(keyed),
            (LaneState::Batches(parts), Breaker::Sort { sort, rows }) => {
                let mut runs = std::mem::take(&mut run_runs);
                if !parts.is_empty() || runs.is_empty() {
                    runs.push(SortedRun::new(sort, parts, rows.as_ref().map(|r| r.end))?);
                }
                LaneOutput::Runs(runs)
            }
            (LaneState::Batches(parts), Breaker::Window { plan }) => {
                if !parts.is_empty() {
                    plan.scatter(parts, &mut run_windows)?;
                }
                LaneOutput::Window(run_windows)
            }
            (LaneState::Batches(parts), _) => LaneOutput::Batches(parts),
            (LaneState::TopN(_), _) => {
                return Err(Error::Internal("a top-N state without its breaker".into()));
            }
        };
        let held = output.rows();
        counters[sink_at + 1].record(worker, 0, held, started);
        shared.memory.grow(output.size());
        // the receiver waits in a slot until the merge node takes it
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

#[cfg(test)]
mod tests {
    use arrow::array::{Array, AsArray, BooleanArray, Int64Array};
    use arrow::datatypes::{DataType, Field, Int64Type};

    use super::*;
    use crate::step::Selection;

    #[test]
    fn array_bytes_are_arrows_slice_sizes() {
        use arrow::array::{
            Date32Array, Decimal128Array, Float64Array, LargeStringArray, ListArray, StringArray,
            StringViewArray,
        };
        let arrays: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(vec![Some(1), None, Some(3), Some(4)])),
            Arc::new(Int64Array::from(vec![1, 2, 3])),
            Arc::new(Float64Array::from(vec![1.5, 2.5])),
            Arc::new(Date32Array::from(vec![Some(1), None])),
            Arc::new(
                Decimal128Array::from(vec![Some(150), None, Some(7)])
                    .with_precision_and_scale(15, 2)
                    .unwrap(),
            ),
            Arc::new(BooleanArray::from(vec![Some(true), None, Some(false)])),
            Arc::new(StringArray::from(vec![
                Some("ab"),
                None,
                Some("cdef"),
                Some(""),
            ])),
            Arc::new(LargeStringArray::from(vec!["x", "yz"])),
            Arc::new(StringViewArray::from(vec![
                Some("short"),
                None,
                Some("a string longer than twelve bytes"),
            ])),
            Arc::new(ListArray::from_iter_primitive::<Int64Type, _, _>(vec![
                Some(vec![Some(1), Some(2)]),
                None,
            ])),
        ];
        for array in arrays {
            for (offset, len) in [(0, array.len()), (1, array.len() - 1), (1, 1), (0, 0)] {
                let slice = array.slice(offset, len);
                assert_eq!(
                    array_bytes(&slice),
                    slice.to_data().get_slice_memory_size().unwrap(),
                    "{:?} [{offset}, +{len})",
                    slice.data_type()
                );
            }
        }
    }

    #[test]
    fn a_projection_of_columns_keeps_the_selection_and_copies_nothing() {
        let input = Arc::new(Schema::new(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("b", DataType::Int64, true),
            Field::new("c", DataType::Int64, true),
        ]));
        let column = |k: i64| Arc::new(Int64Array::from_iter_values((0..6).map(|i| i * k)));
        let batch = RecordBatch::try_new(input, vec![column(1), column(10), column(100)]).unwrap();
        let selected = PipelineBatch {
            batch,
            selection: Selection::Mask(BooleanArray::from(vec![
                true, false, false, true, false, true,
            ])),
        };
        // `c, a`: picked, the rows the filter dropped still there, unselected
        let output = Arc::new(Schema::new(vec![
            Field::new("c", DataType::Int64, true),
            Field::new("a", DataType::Int64, true),
        ]));
        let columns = [Expr::column(2, "c"), Expr::column(0, "a")];
        let pr = Projection::new(&columns, &output, 3);
        let picked = pr.pick(&selected).unwrap().expect("plain columns");
        assert_eq!(picked.batch.num_rows(), 6);
        assert_eq!(picked.num_rows(), 3);
        assert!(
            picked.batch.column(0).to_data().buffers()[0].as_ptr()
                == selected.batch.column(2).to_data().buffers()[0].as_ptr()
        );
        let c = picked.materialize(&[0, 1]).unwrap();
        let got: Vec<(i64, i64)> = c
            .column(0)
            .as_primitive::<Int64Type>()
            .values()
            .iter()
            .zip(c.column(1).as_primitive::<Int64Type>().values())
            .map(|(&x, &y)| (x, y))
            .collect();
        assert_eq!(got, vec![(0, 0), (300, 3), (500, 5)]);
        // an expression that computes is not picked
        let sum = [Expr::Binary {
            op: weir_planner::BinaryOp::Plus,
            left: Box::new(Expr::column(0, "a")),
            right: Box::new(Expr::column(1, "b")),
        }];
        let one = Arc::new(Schema::new(vec![Field::new("s", DataType::Int64, true)]));
        assert!(
            Projection::new(&sum, &one, 3)
                .pick(&selected)
                .unwrap()
                .is_none()
        );
    }
}
