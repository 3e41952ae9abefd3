//! Hash aggregation: a partial state per lane, its groups partitioned by
//! hash as they are inserted (`groups`), and merge partitions that each
//! merge and finish a run of radix buckets of every lane's state.
//!
//! Group keys of fixed-width types are packed into 64-bit words, any other
//! key is encoded with Arrow's row format (`arrow::row`); either way NULL
//! keys form one group. Without GROUP BY there is exactly one group,
//! present even over no input.

mod groups;

use std::any::Any;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, ArrowPrimitiveType, AsArray, BooleanArray, BooleanBufferBuilder,
    Decimal128Array, Float64Array, Int64Array, PrimitiveArray, RecordBatch, RecordBatchOptions,
    StringArray, UInt32Array,
};
use arrow::buffer::{BooleanBuffer, NullBuffer};
use arrow::compute::SortOptions;
use arrow::compute::{cast, concat_batches, filter_record_batch, take_record_batch};
use arrow::datatypes::{
    ArrowNativeTypeOp, DataType, Date32Type, Decimal128Type, Float32Type, Float64Type, Int8Type,
    Int16Type, Int32Type, Int64Type, Schema, SchemaRef, TimeUnit, TimestampMicrosecondType,
    UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow::row::{RowConverter, SortField};
use weir_planner::{AggregateExpr, AggregateFunction, BinaryOp, Expr};

use crate::error::{Error, Result};

mod holistic;
pub(crate) use holistic::sliding_quantile;
mod ordered;
mod pairs;
use crate::eval::evaluate;

use self::groups::{DIRECT_PAGE, DirectMap, EMPTY as EMPTY_GROUP, Layout};
pub(crate) use self::groups::{GroupTable, RADIX_BUCKETS};
use crate::hash::FxHashSet;
use crate::pipeline::batch_bytes;
use crate::step::{PipelineBatch, Selection, remap_columns};

/// How an Aggregate runs: its keys and aggregates over the columns it
/// reads, and its output schema.
#[derive(Clone, Debug)]
pub(crate) struct AggregatePlan {
    local_groups: Vec<Expr>,
    group_types: Vec<DataType>,
    specs: Vec<AggSpec>,
    /// Per aggregate, the earlier one whose state it shares ([`twins`]).
    twins: Vec<Option<usize>>,
    /// Input columns the keys and (non fast path) arguments read.
    columns: Vec<usize>,
    /// Terms two or more arguments share (`l_extendedprice * (1 -
    /// l_discount)` in TPC-H Q1's two sums), over the materialised
    /// columns: computed once per batch and read by the arguments as the
    /// columns after those (see [`shared_terms`]).
    shared: Vec<Expr>,
    /// The materialised columns and then the shared terms.
    shared_schema: SchemaRef,
    schema: SchemaRef,
}

#[derive(Clone, Debug)]
struct AggSpec {
    func: AggregateFunction,
    distinct: bool,
    input: AggInput,
    input_type: DataType,
    /// The key's type of `arg_min|arg_max(x, key)`.
    key_type: Option<DataType>,
    output_type: DataType,
    /// The types and directions of the ORDER BY terms of an
    /// [`AggInput::Ordered`].
    order: Vec<(DataType, SortOptions)>,
}

#[derive(Clone, Debug)]
enum AggInput {
    /// `count(*)`: only the number of rows matters.
    Star,
    /// An argument over the materialised columns.
    Expr(Expr),
    /// `arg_min|arg_max(value, key)` over the materialised columns.
    Keyed { value: Expr, key: Expr },
    /// An aggregate that takes its values in an order (`string_agg(x,
    /// sep ORDER BY y)`) or each once (`string_agg(DISTINCT x)`): kept
    /// per group, fed at the end ([`ordered::Ordered`]).
    Ordered {
        value: Expr,
        key: Option<Expr>,
        order: Vec<Expr>,
    },
    /// `sum|avg(a * b)` of two DECIMAL columns whose product cannot
    /// overflow, summed straight from the morsel without materialising
    /// anything (input column indices).
    DecimalProduct {
        a: usize,
        b: usize,
        /// `p_a + p_b`: products have fewer digits.
        digits: u8,
    },
}

/// The terms that two or more of `inputs` compute (arguments over `width`
/// materialised columns), and the inputs reading each as column `width +
/// j` instead. A term is shared only where every row computes it anyway:
/// below arithmetic, casts and negations, never inside a CASE, AND, OR or
/// function, whose parts may run on some rows only (a division by zero
/// there must stay unraised); nor a volatile one.
fn shared_terms(inputs: Vec<AggInput>, width: usize) -> (Vec<Expr>, Vec<AggInput>) {
    /// Calls `f` on every term of `e` every row computes, parents first.
    fn each_term<'a>(e: &'a Expr, f: &mut impl FnMut(&'a Expr)) {
        if matches!(e, Expr::Column(_) | Expr::Literal(_)) || e.is_volatile() {
            return;
        }
        f(e);
        if children_on_every_row(e) {
            e.for_each_child(|c| each_term(c, f));
        }
    }
    /// Whether `e` computes each of its children on every row.
    fn children_on_every_row(e: &Expr) -> bool {
        match e {
            Expr::Binary { op, .. } => op.is_arithmetic() || op.is_comparison(),
            Expr::Cast { .. } | Expr::Negative(_) | Expr::Not(_) => true,
            _ => false,
        }
    }
    let args = |input: &AggInput| -> Vec<Expr> {
        match input {
            AggInput::Expr(e) => vec![e.clone()],
            AggInput::Keyed { value, key } => vec![value.clone(), key.clone()],
            _ => Vec::new(),
        }
    };
    let mut counts: Vec<(Expr, usize)> = Vec::new();
    for arg in inputs.iter().flat_map(args) {
        each_term(
            &arg,
            &mut |t| match counts.iter_mut().find(|(e, _)| e == t) {
                Some((_, n)) => *n += 1,
                None => counts.push((t.clone(), 1)),
            },
        );
    }
    let mut shared: Vec<Expr> = Vec::new();
    /// `e` with each outermost shared term replaced by its column.
    fn replace(e: Expr, counts: &[(Expr, usize)], shared: &mut Vec<Expr>, width: usize) -> Expr {
        if counts.iter().any(|(t, n)| *n > 1 && *t == e) {
            let j = match shared.iter().position(|t| *t == e) {
                Some(j) => j,
                None => {
                    shared.push(e.clone());
                    shared.len() - 1
                }
            };
            return Expr::column(width + j, format!("__shared{j}"));
        }
        if !children_on_every_row(&e) {
            return e;
        }
        let replaced = e.try_map_children(&mut |c| {
            Ok::<_, std::convert::Infallible>(replace(c, counts, shared, width))
        });
        match replaced {
            Ok(e) => e,
            Err(never) => match never {},
        }
    }
    let inputs = inputs
        .into_iter()
        .map(|input| match input {
            AggInput::Expr(e) => AggInput::Expr(replace(e, &counts, &mut shared, width)),
            AggInput::Keyed { value, key } => AggInput::Keyed {
                value: replace(value, &counts, &mut shared, width),
                key: replace(key, &counts, &mut shared, width),
            },
            other => other,
        })
        .collect();
    (shared, inputs)
}

/// Whether `agg` takes its values in an order, or each once where no
/// distinct set of values does ([`AggInput::Ordered`]).
fn ordered(agg: &AggregateExpr) -> bool {
    !agg.order_by.is_empty() || (agg.distinct && agg.func == AggregateFunction::StringAgg)
}

impl AggregatePlan {
    /// Plans `group_by` and `aggregates` over `input`, producing `schema`.
    pub(crate) fn new(
        group_by: &[Expr],
        aggregates: &[AggregateExpr],
        input: &Schema,
        schema: SchemaRef,
    ) -> Result<Self> {
        let expected = group_by.len() + aggregates.len();
        if schema.fields().len() != expected {
            return Err(Error::Internal(format!(
                "Aggregate schema has {} fields for {expected} keys and aggregates",
                schema.fields().len()
            )));
        }
        let mut columns: Vec<usize> = group_by.iter().flat_map(Expr::columns).collect();
        let mut inputs = Vec::with_capacity(aggregates.len());
        for agg in aggregates {
            if let Some(value) = agg.arg.as_ref().filter(|_| ordered(agg)) {
                columns.extend(agg.exprs().flat_map(Expr::columns));
                inputs.push(AggInput::Ordered {
                    value: value.clone(),
                    key: agg.key.clone(),
                    order: agg.order_by.iter().map(|k| k.expr.clone()).collect(),
                });
                continue;
            }
            let input_kind = match (&agg.arg, &agg.key) {
                (Some(value), Some(key)) => {
                    columns.extend(value.columns());
                    columns.extend(key.columns());
                    AggInput::Keyed {
                        value: value.clone(),
                        key: key.clone(),
                    }
                }
                (None, _) => AggInput::Star,
                (Some(arg), None) => match decimal_product(agg, arg, input, group_by.is_empty()) {
                    Some((a, b, digits)) => AggInput::DecimalProduct { a, b, digits },
                    None => {
                        columns.extend(arg.columns());
                        AggInput::Expr(arg.clone())
                    }
                },
            };
            inputs.push(input_kind);
        }
        columns.sort_unstable();
        columns.dedup();
        let local_groups = group_by
            .iter()
            .map(|g| remap_columns(g, &columns))
            .collect();
        let group_types = group_by.iter().map(|g| g.data_type(input)).collect();
        let inputs: Vec<AggInput> = inputs
            .into_iter()
            .map(|kind| match kind {
                AggInput::Expr(e) => AggInput::Expr(remap_columns(&e, &columns)),
                AggInput::Keyed { value, key } => AggInput::Keyed {
                    value: remap_columns(&value, &columns),
                    key: remap_columns(&key, &columns),
                },
                AggInput::Ordered { value, key, order } => AggInput::Ordered {
                    value: remap_columns(&value, &columns),
                    key: key.map(|k| remap_columns(&k, &columns)),
                    order: order.iter().map(|o| remap_columns(o, &columns)).collect(),
                },
                other => other,
            })
            .collect();
        let materialised = input.project(&columns).map_err(Error::arrow)?;
        let (shared, inputs) = shared_terms(inputs, columns.len());
        let mut fields: Vec<arrow::datatypes::Field> = materialised
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        for (j, term) in shared.iter().enumerate() {
            fields.push(arrow::datatypes::Field::new(
                format!("__shared{j}"),
                term.data_type(&materialised),
                true,
            ));
        }
        let shared_schema = Arc::new(Schema::new(fields));
        let specs = aggregates
            .iter()
            .zip(inputs)
            .enumerate()
            .map(|(i, (agg, argument))| {
                let input_type = agg
                    .arg
                    .as_ref()
                    .map_or(DataType::Int64, |a| a.data_type(input));
                let key_type = agg.key.as_ref().map(|k| k.data_type(input));
                let order = agg
                    .order_by
                    .iter()
                    .map(|k| {
                        let options = SortOptions {
                            descending: !k.asc,
                            nulls_first: k.nulls_first,
                        };
                        (k.expr.data_type(input), options)
                    })
                    .collect();
                AggSpec {
                    func: agg.func,
                    distinct: agg.distinct,
                    input: argument,
                    input_type,
                    key_type,
                    output_type: schema.field(group_by.len() + i).data_type().clone(),
                    order,
                }
            })
            .collect::<Vec<_>>();
        Ok(AggregatePlan {
            local_groups,
            group_types,
            twins: twins(&specs),
            specs,
            columns,
            shared,
            shared_schema,
            schema,
        })
    }

    /// The group keys of `compact` (rows of the columns it reads).
    fn keys(&self, compact: &RecordBatch) -> Result<Vec<ArrayRef>> {
        self.local_groups
            .iter()
            .zip(&self.group_types)
            .map(|(g, t)| conform(evaluate(g, compact)?, t))
            .collect()
    }

    /// True if it has GROUP BY keys (else exactly one group).
    pub(crate) fn has_groups(&self) -> bool {
        !self.local_groups.is_empty()
    }

    /// The output schema: keys, then aggregates.
    pub(crate) fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    /// An empty partial state.
    pub(crate) fn new_state(&self) -> Result<AggregateState> {
        let groups = if self.local_groups.is_empty() {
            None
        } else {
            Some(GroupTable::new(&self.group_types)?)
        };
        let accumulators = self.new_accumulators(groups.is_none())?;
        Ok(AggregateState {
            groups,
            accumulators,
            ids: Vec::new(),
            rows: 0,
            spill: None,
            spill_from: SpillFrom::Groups(SPILL_FROM),
        })
    }

    /// Empty accumulators of the aggregates (of one group without GROUP
    /// BY, `alone`).
    fn new_accumulators(&self, alone: bool) -> Result<Vec<Box<dyn Accumulator>>> {
        let mut accumulators = Vec::with_capacity(self.specs.len());
        for (spec, twin) in self.specs.iter().zip(&self.twins) {
            let mut acc = match twin {
                Some(_) => Box::new(TwinAcc),
                None => new_accumulator(spec)?,
            };
            if alone {
                acc.resize(1);
            }
            accumulators.push(acc);
        }
        for (spec, twin) in self.specs.iter().zip(&self.twins) {
            if let (AggregateFunction::CountStar, Some(j)) = (spec.func, *twin)
                && !accumulators[j].count_null_rows()
            {
                return Err(Error::Internal(
                    "a count(*) sharing a state that cannot count its rows".into(),
                ));
            }
        }
        Ok(accumulators)
    }

    /// An empty partial state for one of `lanes` lanes. A lone lane puts
    /// rows aside ([`Spill`]) only once its table holds
    /// [`SPILL_BYTES_ALONE`]: its groups are made once anyway, so the
    /// extra pass pays only once the table is far past the cache.
    pub(crate) fn new_lane_state(&self, lanes: usize) -> Result<AggregateState> {
        let mut state = self.new_state()?;
        if lanes < 2 {
            state.spill_from = SpillFrom::Bytes(SPILL_BYTES_ALONE);
        }
        Ok(state)
    }

    /// A one-line description for EXPLAIN: which aggregates take a fast path.
    pub(crate) fn describe_inputs(&self) -> Vec<&'static str> {
        self.specs
            .iter()
            .zip(&self.twins)
            .map(|(s, twin)| match s.input {
                _ if twin.is_some() => "shares the state of another aggregate",
                AggInput::Star => "rows counted, nothing materialised",
                AggInput::DecimalProduct { .. } => "decimal product summed in place",
                AggInput::Expr(_) | AggInput::Keyed { .. } => "evaluated on survivors",
                AggInput::Ordered { .. } => "kept per group, then fed in order",
            })
            .collect()
    }
}

/// `Some((a, b))` if `agg` is `sum|avg(a * b)` over DECIMAL columns whose
/// product fits in 38 digits, with no GROUP BY.
fn decimal_product(
    agg: &AggregateExpr,
    arg: &Expr,
    input: &Schema,
    no_groups: bool,
) -> Option<(usize, usize, u8)> {
    if !no_groups
        || agg.distinct
        || !matches!(agg.func, AggregateFunction::Sum | AggregateFunction::Avg)
    {
        return None;
    }
    let Expr::Binary {
        op: BinaryOp::Multiply,
        left,
        right,
    } = arg
    else {
        return None;
    };
    let (Expr::Column(a), Expr::Column(b)) = (left.as_ref(), right.as_ref()) else {
        return None;
    };
    let (DataType::Decimal128(p1, s1), DataType::Decimal128(p2, s2)) = (
        input.field(a.index).data_type(),
        input.field(b.index).data_type(),
    ) else {
        return None;
    };
    // each factor fits in i64, the product (p1 + p2 digits) and the
    // declared result type (p1 + p2 + 1 <= 38, scale s1 + s2) are exact
    let fits = *p1 <= 18 && *p2 <= 18 && p1 + p2 < 38;
    let product_type = arg.data_type(input);
    (fits && product_type == DataType::Decimal128(p1 + p2 + 1, s1 + s2)).then_some((
        a.index,
        b.index,
        p1 + p2,
    ))
}

/// A partial aggregation: group keys seen and one accumulator per aggregate.
pub(crate) struct AggregateState {
    groups: Option<GroupTable>,
    accumulators: Vec<Box<dyn Accumulator>>,
    /// The group of each row of the batch being added (reused).
    ids: Vec<u32>,
    /// Rows added to the groups (not put aside).
    rows: usize,
    /// Rows put aside by radix bucket for the merge, once the groups
    /// outgrew the cache without the rows folding into them ([`Spill`]).
    spill: Option<Box<Spill>>,
    /// From when the lane may put rows aside.
    spill_from: SpillFrom,
}

/// From when a lane may put rows aside ([`Spill`]).
#[derive(Clone, Copy, Debug)]
enum SpillFrom {
    /// Once its hash table holds this many groups (a lane beside others:
    /// [`SPILL_FROM`]).
    Groups(usize),
    /// Once its hash table takes this many bytes (a lone lane:
    /// [`SPILL_BYTES_ALONE`]).
    Bytes(usize),
}

/// Groups a lane's hash table holds before it may put rows aside
/// ([`Spill`]): about 2.5 MiB of slots, keys and ids.
const SPILL_FROM: usize = 1 << 16;

/// Bytes a lone lane's hash table takes before the lane may put rows
/// aside: far past the cache, a miss a row. (About 300K groups of
/// strings of 40 bytes; integer keys, 40 bytes a group in all, pass it
/// at 800K groups.)
const SPILL_BYTES_ALONE: usize = 32 << 20;

/// Every how many rows put aside one is looked up in the lane's table.
const SPILL_PROBE_STRIDE: usize = 16;

/// Rows looked up before the lane may find that its rows fold into its
/// table ([`Spill::folds`]), and after which it looks up no more (each
/// lookup in a table past the cache is a miss).
const SPILL_PROBE_MIN: usize = 1024;
const SPILL_PROBE_MAX: usize = 16 * 1024;

/// Rows a lane puts aside are sorted by radix bucket this many at a time
/// (a morsel; fewer at the lane's end).
const SPILL_CHUNK: usize = 1 << 16;

/// The most merge partitions of lanes that put rows aside: each reads
/// its buckets' rows of every chunk ([`SPILL_CHUNK`] / 64 rows on
/// average), so more would cut them too thin.
pub(crate) const SPILL_PARTITIONS: usize = 64;

/// Rows a lane puts aside instead of adding them to its groups.
///
/// A lane whose hash table outgrew the cache ([`SPILL_FROM`] groups)
/// while at least every second row it added made a new group (a key of
/// many values in no order: the table would take a cache miss for most
/// rows and keep most of the key's groups in every lane, each made and
/// then merged again) stops adding rows to it. It sorts the rows it reads
/// from then on (the columns the aggregate reads) by the radix bucket of
/// their key, [`SPILL_CHUNK`] rows at a time, and the merge partition of
/// those buckets adds its slice of each chunk to its own groups: one
/// table of a few thousand groups per partition, in the cache, each group
/// made once more at most (the lanes' tables hold the first
/// [`SPILL_FROM`]). The buckets are those of the lane table's layout: a
/// key that widens it sorts the rows again ([`Spill::rebucket`]).
///
/// Every [`SPILL_PROBE_STRIDE`]-th row put aside is looked up in the
/// table, until [`SPILL_PROBE_MAX`] were: a key of not many more groups
/// than the table holds (most rows found) is one whose rows fold well
/// into it, and the lane stops putting rows aside (the table, in the
/// cache or near it, takes the rest), so a key of a hundred thousand
/// values over a billion rows keeps a hundred thousand groups, not the
/// rows.
struct Spill {
    /// Whether rows are still put aside: the lane stops once the sampled
    /// rows show its table holds most of their groups ([`Spill::folds`]).
    open: bool,
    /// Rows put aside looked up in the lane's table (every
    /// [`SPILL_PROBE_STRIDE`]-th), and of those the rows it held.
    probed: usize,
    held: usize,
    /// The layout whose hash the chunks are sorted by.
    layout: Layout,
    /// Sorted chunks.
    chunks: Vec<SpillChunk>,
    /// Batches not sorted yet, each with its rows' buckets.
    pending: Vec<(RecordBatch, Vec<u8>)>,
    pending_rows: usize,
    bytes: usize,
}

/// Rows sorted by radix bucket: bucket `b`'s are
/// `offsets[b]..offsets[b + 1]`, in the order they came.
struct SpillChunk {
    batch: RecordBatch,
    offsets: Vec<usize>,
}

impl SpillChunk {
    /// The rows of `buckets`, if any.
    fn rows(&self, buckets: &std::ops::Range<usize>) -> Option<RecordBatch> {
        let (from, to) = (self.offsets[buckets.start], self.offsets[buckets.end]);
        (from < to).then(|| self.batch.slice(from, to - from))
    }

    fn size(&self) -> usize {
        batch_bytes(&self.batch) + self.offsets.len() * 8
    }
}

impl Spill {
    fn new(layout: Layout) -> Self {
        Spill {
            open: true,
            probed: 0,
            held: 0,
            layout,
            chunks: Vec::new(),
            pending: Vec::new(),
            pending_rows: 0,
            bytes: 0,
        }
    }

    /// Whether the rows looked up so far show the lane's table holding
    /// most of their groups (the key has not many more groups than the
    /// table, twice at most): its rows fold well into it after all.
    fn folds(&self) -> bool {
        self.probed >= SPILL_PROBE_MIN && self.held * 2 > self.probed
    }

    /// Puts `batch` aside, its rows in buckets `radixes`.
    fn push(&mut self, batch: RecordBatch, radixes: Vec<u8>) -> Result<()> {
        self.pending_rows += batch.num_rows();
        // (the rows of a slice, not the table's buffers it shares)
        self.bytes += batch_bytes(&batch) + radixes.capacity();
        self.pending.push((batch, radixes));
        if self.pending_rows >= SPILL_CHUNK {
            self.sort_pending()?;
        }
        Ok(())
    }

    /// Makes the pending batches one chunk: one batch (concatenated if
    /// several), its row numbers sorted by bucket.
    fn sort_pending(&mut self) -> Result<()> {
        let Some((first, _)) = self.pending.first() else {
            return Ok(());
        };
        let batch = if self.pending.len() == 1 {
            first.clone()
        } else {
            let batches = self.pending.iter().map(|(b, _)| b);
            concat_batches(&first.schema(), batches).map_err(Error::arrow)?
        };
        let radixes = self.pending.iter().flat_map(|(_, r)| r);
        let mut offsets = vec![0usize; RADIX_BUCKETS + 1];
        for &r in radixes.clone() {
            offsets[r as usize + 1] += 1;
        }
        for b in 0..RADIX_BUCKETS {
            offsets[b + 1] += offsets[b];
        }
        let mut order = vec![0u32; offsets[RADIX_BUCKETS]];
        let mut next = offsets.clone();
        for (row, &r) in radixes.enumerate() {
            let at = &mut next[r as usize];
            order[*at] = row as u32;
            *at += 1;
        }
        self.pending.clear();
        self.pending_rows = 0;
        // gathered now, while the rows are in the cache: the merge reads
        // each bucket's rows in a run
        let batch = take_record_batch(&batch, &UInt32Array::from(order)).map_err(Error::arrow)?;
        self.chunks.push(SpillChunk { batch, offsets });
        self.bytes = self.chunks.iter().map(SpillChunk::size).sum();
        Ok(())
    }

    /// Rows put aside.
    fn rows(&self) -> usize {
        self.chunks
            .iter()
            .map(|c| c.batch.num_rows())
            .sum::<usize>()
            + self.pending_rows
    }

    /// Sorts every row put aside again by its bucket in `table`, whose
    /// layout is no longer the one they were sorted by.
    fn rebucket(&mut self, plan: &AggregatePlan, table: &mut GroupTable) -> Result<()> {
        let batches: Vec<RecordBatch> = self
            .chunks
            .drain(..)
            .map(|c| c.batch)
            .chain(self.pending.drain(..).map(|(b, _)| b))
            .collect();
        self.pending_rows = 0;
        for batch in batches {
            let keys = plan.keys(&batch)?;
            let mut radixes = Vec::new();
            if table.radixes(&keys, &mut radixes, 0)?.widened {
                return Err(Error::Internal(
                    "rows put aside widened their lane's group table".into(),
                ));
            }
            self.pending_rows += batch.num_rows();
            self.pending.push((batch, radixes));
        }
        self.layout = table.layout();
        self.sort_pending()
    }
}

/// A lane's partial aggregation, finished: its groups are already cut
/// into radix buckets.
pub(crate) struct PartitionedState {
    pub(crate) state: Box<AggregateState>,
}

impl PartitionedState {
    /// Bytes held.
    pub(crate) fn size(&self) -> usize {
        self.state.size()
    }

    /// Groups of radix bucket `b` (the one group without GROUP BY is in
    /// bucket 0).
    fn bucket_len(&self, b: usize) -> usize {
        match &self.state.groups {
            None => usize::from(b == 0),
            Some(table) => table.bucket_len(b),
        }
    }
}

impl AggregateState {
    /// Number of groups so far.
    pub(crate) fn num_groups(&self) -> usize {
        self.groups.as_ref().map_or(1, GroupTable::len)
    }

    /// Adds the selected rows of `input` (a batch of the Aggregate's input).
    /// Rows a filter selected by a mask (over a quarter of the morsel) are gathered
    /// [`UPDATE_ROWS`] rows of the morsel at a time, so that the gathered
    /// columns and the expressions computed from them stay in the cache
    /// between the steps that write and read them; a morsel taken whole
    /// or a few selected rows are not copied much and go at once.
    pub(crate) fn update(&mut self, plan: &AggregatePlan, input: &PipelineBatch) -> Result<()> {
        let rows = input.batch.num_rows();
        let dense = match &input.selection {
            Selection::Mask(m) => m.true_count() * 4 > rows,
            _ => false,
        };
        if rows <= UPDATE_ROWS || plan.columns.is_empty() || !dense {
            return self.update_chunk(plan, input);
        }
        for offset in (0..rows).step_by(UPDATE_ROWS) {
            self.update_chunk(plan, &input.slice(offset, UPDATE_ROWS.min(rows - offset)))?;
        }
        Ok(())
    }

    fn update_chunk(&mut self, plan: &AggregatePlan, input: &PipelineBatch) -> Result<()> {
        let rows = input.num_rows();
        if rows == 0 {
            return Ok(());
        }
        let compact = if plan.columns.is_empty() {
            let options = RecordBatchOptions::new().with_row_count(Some(rows));
            RecordBatch::try_new_with_options(Arc::new(Schema::empty()), vec![], &options)
                .map_err(Error::arrow)?
        } else {
            input.materialize(&plan.columns)?
        };
        if let (Some(spill), Some(table)) = (&mut self.spill, &mut self.groups)
            && spill.open
        {
            let keys = plan.keys(&compact)?;
            let mut radixes = Vec::with_capacity(rows);
            // rows are looked up until enough were to tell
            let stride = if spill.probed < SPILL_PROBE_MAX {
                SPILL_PROBE_STRIDE
            } else {
                0
            };
            let found = table.radixes(&keys, &mut radixes, stride)?;
            if found.widened {
                spill.rebucket(plan, table)?;
            }
            spill.probed += found.probed;
            spill.held += found.held;
            if !spill.folds() {
                return spill.push(compact, radixes);
            }
            // the table holds most of the keys the rows bring: the groups
            // are few enough for it after all, and it takes this batch and
            // the rest
            spill.open = false;
        }
        self.add(plan, compact, Some(input))?;
        if let (None, Some(table)) = (&self.spill, &self.groups) {
            let n = table.len();
            let big = match self.spill_from {
                SpillFrom::Groups(groups) => n >= groups,
                SpillFrom::Bytes(bytes) => table.size() >= bytes,
            };
            if big && n * 2 > self.rows && !table.finds_by_value() {
                self.spill = Some(Box::new(Spill::new(table.layout())));
            }
        }
        Ok(())
    }

    /// Adds the rows of `compact` (the columns the aggregate reads) to the
    /// groups; `input`, the batch they came from, for aggregates summed
    /// straight from it (none with GROUP BY).
    fn add(
        &mut self,
        plan: &AggregatePlan,
        compact: RecordBatch,
        input: Option<&PipelineBatch>,
    ) -> Result<()> {
        let rows = compact.num_rows();
        self.rows += rows;
        let ids = match &mut self.groups {
            None => None,
            Some(table) => {
                let keys = plan.keys(&compact)?;
                if !table.slot_ids(&keys, &mut self.ids)? {
                    if table.in_slots() {
                        // a value outside the window
                        let src = table.leave_slots()?;
                        table.bar_slots();
                        renumber(plan, &mut self.accumulators, &src, None)?;
                    }
                    table.group_ids(&keys, &mut self.ids)?;
                }
                let n = table.len();
                for acc in &mut self.accumulators {
                    acc.resize(n);
                }
                Some(self.ids.as_slice())
            }
        };
        let compact = if plan.shared.is_empty() {
            compact
        } else {
            let mut columns = compact.columns().to_vec();
            let types = plan.shared_schema.fields()[columns.len()..].iter();
            for (term, field) in plan.shared.iter().zip(types) {
                columns.push(conform(evaluate(term, &compact)?, field.data_type())?);
            }
            RecordBatch::try_new(Arc::clone(&plan.shared_schema), columns).map_err(Error::arrow)?
        };
        for ((spec, acc), twin) in plan
            .specs
            .iter()
            .zip(&mut self.accumulators)
            .zip(&plan.twins)
        {
            if twin.is_some() {
                continue;
            }
            match &spec.input {
                AggInput::Star => acc.update_rows(rows, ids)?,
                AggInput::Expr(e) => {
                    let mut values = evaluate(e, &compact)?;
                    if values.data_type() != &spec.input_type
                        && values.data_type() != &DataType::Null
                    {
                        values = cast(&values, &spec.input_type).map_err(Error::arrow)?;
                    }
                    acc.update(&values, ids)?;
                }
                AggInput::Keyed { value, key } => {
                    let values = evaluate(value, &compact)?;
                    let keys = evaluate(key, &compact)?;
                    acc.update_keyed(&values, &keys, ids)?;
                }
                AggInput::Ordered { value, key, order } => {
                    let mut values = evaluate(value, &compact)?;
                    if values.data_type() != &spec.input_type
                        && values.data_type() != &DataType::Null
                    {
                        values = cast(&values, &spec.input_type).map_err(Error::arrow)?;
                    }
                    let key = key.as_ref().map(|k| evaluate(k, &compact)).transpose()?;
                    let order = order
                        .iter()
                        .zip(&spec.order)
                        .map(|(o, (t, _))| conform(evaluate(o, &compact)?, t))
                        .collect::<Result<Vec<_>>>()?;
                    acc.update_ordered(&values, key.as_ref(), &order, ids)?;
                }
                AggInput::DecimalProduct { a, b, digits } => {
                    let Some(input) = input else {
                        return Err(Error::Internal(
                            "a decimal product summed from rows put aside".into(),
                        ));
                    };
                    let (sum, count) = sum_decimal_product(input, *a, *b, *digits)?;
                    acc.add_i128(sum, count)?;
                }
            }
        }
        if let Some(table) = &mut self.groups
            && table.wants_slots()
        {
            let (dst, n) = table.enter_slots()?;
            renumber(plan, &mut self.accumulators, &dst, Some(n))?;
        }
        Ok(())
    }

    /// Bytes held by the groups, accumulators and rows put aside.
    pub(crate) fn size(&self) -> usize {
        self.groups.as_ref().map_or(0, GroupTable::size)
            + self.accumulators.iter().map(|a| a.size()).sum::<usize>()
            + self.ids.capacity() * 4
            + self.spill.as_ref().map_or(0, |s| s.bytes)
    }

    /// Rows put aside for the merge ([`Spill`]).
    pub(crate) fn rows_put_aside(&self) -> usize {
        self.spill.as_ref().map_or(0, |s| s.rows())
    }

    /// Resizes the accumulators to the groups and folds groups `src` of
    /// `other`'s accumulators into groups `dst`.
    fn merge_accumulators(
        &mut self,
        other: &AggregateState,
        src: &[u32],
        dst: &[u32],
    ) -> Result<()> {
        let n = self.num_groups();
        for (mine, theirs) in self.accumulators.iter_mut().zip(&other.accumulators) {
            mine.resize(n);
            mine.merge_from(theirs.as_ref(), src, dst)?;
        }
        Ok(())
    }

    /// Takes radix bucket `b` of `base` (a partial state of the same plan),
    /// whose groups this state does not hold, as it is: its hash table is
    /// copied and its accumulators gathered, no key is hashed again.
    /// The table gets room for `expected` groups of the bucket at once;
    /// `src` and `dst` are scratch space.
    fn adopt_bucket(
        &mut self,
        base: &AggregateState,
        b: usize,
        expected: usize,
        (src, dst): (&mut Vec<u32>, &mut Vec<u32>),
    ) -> Result<()> {
        let (Some(mine), Some(theirs)) = (&mut self.groups, &base.groups) else {
            return Err(Error::Internal(
                "merging aggregate states of different plans".into(),
            ));
        };
        let offset = mine.len() as u32;
        mine.adopt(theirs, b, expected, src)?;
        dst.clear();
        dst.extend(offset..mine.len() as u32);
        self.merge_accumulators(base, src, dst)
    }

    /// Folds the groups of radix bucket `b` of `other` (a partial state of
    /// the same plan) into this one; `src` and `map` are scratch space.
    fn merge_bucket(
        &mut self,
        other: &AggregateState,
        b: usize,
        (src, map): (&mut Vec<u32>, &mut Vec<u32>),
    ) -> Result<()> {
        let (Some(mine), Some(theirs)) = (&mut self.groups, &other.groups) else {
            return Err(Error::Internal(
                "merging aggregate states of different plans".into(),
            ));
        };
        mine.merge_bucket(theirs, b, src, map)?;
        self.merge_accumulators(other, src, map)
    }

    /// Numbers groups numbered by slot ([`GroupTable::enter_slots`]) as
    /// first seen again (the seen slots in value order), as every merge
    /// but [`merge_slots`] reads them (and a finish, which settles first).
    pub(crate) fn settle(&mut self, plan: &AggregatePlan) -> Result<()> {
        if let Some(table) = &mut self.groups
            && table.in_slots()
        {
            let src = table.leave_slots()?;
            renumber(plan, &mut self.accumulators, &src, None)?;
        }
        Ok(())
    }

    /// Hands the state over for merging: its groups are already cut into
    /// radix buckets, and so are the rows it put aside.
    pub(crate) fn partition(mut self: Box<Self>) -> Result<PartitionedState> {
        if let Some(spill) = &mut self.spill {
            spill.sort_pending()?;
        }
        Ok(PartitionedState { state: self })
    }
}

/// Moves the groups of `accumulators` to fresh ones of the same
/// aggregates: with `groups` (`Some(n)`), group `g` to group `ids[g]` of
/// `n`; without, group `ids[i]` to group `i` of `ids.len()`.
fn renumber(
    plan: &AggregatePlan,
    accumulators: &mut Vec<Box<dyn Accumulator>>,
    ids: &[u32],
    groups: Option<usize>,
) -> Result<()> {
    let order: Vec<u32> = (0..ids.len() as u32).collect();
    let (src, dst, n) = match groups {
        Some(n) => (order.as_slice(), ids, n),
        None => (ids, order.as_slice(), ids.len()),
    };
    let mut fresh = plan.new_accumulators(false)?;
    for (new, old) in fresh.iter_mut().zip(accumulators.iter()) {
        new.resize(n);
        new.merge_from(old.as_ref(), src, dst)?;
    }
    *accumulators = fresh;
    Ok(())
}

/// Brings the lanes' group tables to one layout before they merge: the
/// widest any lane needed (one lane met a string key too long for one
/// word, or for the fixed-width layout). Unless every lane found its
/// groups by value ([`by_value`]), every group goes in its radix bucket.
pub(crate) fn unify_layouts(plan: &AggregatePlan, lanes: &mut [PartitionedState]) -> Result<()> {
    if one_slot_window(lanes) {
        // they merge slot by slot
        return Ok(());
    }
    for lane in lanes.iter_mut() {
        lane.state.settle(plan)?;
    }
    let widest = lanes
        .iter()
        .filter_map(|l| l.state.groups.as_ref().map(GroupTable::layout))
        .max();
    if let Some(widest) = widest {
        for lane in lanes.iter_mut() {
            let state = &mut lane.state;
            if let Some(groups) = &mut state.groups {
                groups.widen_to(widest)?;
                if let Some(spill) = &mut state.spill
                    && spill.layout != widest
                {
                    spill.rebucket(plan, groups)?;
                }
            }
        }
    }
    // (after widening: a widened table numbers its groups anew)
    if by_value(lanes).is_none() {
        for lane in lanes.iter_mut() {
            if let Some(groups) = &mut lane.state.groups {
                groups.seal();
            }
        }
    }
    Ok(())
}

/// Merges the groups of radix buckets `buckets` of every lane's state
/// and finishes them: one partition of the aggregate's result. Each
/// bucket starts as a copy of the lane holding most of its groups; only
/// the other lanes' groups are inserted.
pub(crate) fn merge_partition(
    plan: &AggregatePlan,
    lanes: &[PartitionedState],
    buckets: std::ops::Range<usize>,
) -> Result<(RecordBatch, usize)> {
    if one_slot_window(lanes) {
        return merge_slots(plan, lanes, buckets);
    }
    if let Some(by) = by_value(lanes) {
        return merge_by_value(plan, lanes, &by, buckets);
    }
    let mut merged = plan.new_state()?;
    // the lanes share one layout (`unify_layouts`); so does the merge
    if let (Some(groups), Some(first)) = (
        &mut merged.groups,
        lanes.first().and_then(|l| l.state.groups.as_ref()),
    ) {
        *groups = first.empty_like()?;
    }
    if merged.groups.is_none() {
        if buckets.contains(&0) {
            for lane in lanes {
                merged.merge_accumulators(&lane.state, &[0], &[0])?;
            }
        }
    } else {
        let (mut src, mut map) = (Vec::new(), Vec::new());
        for b in buckets.clone() {
            let Some((base, biggest)) = lanes
                .iter()
                .enumerate()
                .max_by_key(|(_, l)| l.bucket_len(b))
            else {
                break;
            };
            if biggest.bucket_len(b) == 0 {
                continue;
            }
            let expected = lanes.iter().map(|l| l.bucket_len(b)).sum();
            merged.adopt_bucket(&biggest.state, b, expected, (&mut src, &mut map))?;
            for (i, lane) in lanes.iter().enumerate() {
                if i != base && lane.bucket_len(b) > 0 {
                    merged.merge_bucket(&lane.state, b, (&mut src, &mut map))?;
                }
            }
        }
        // then the rows the lanes put aside, of these buckets, found by
        // hash (the buckets adopted above are in the hash tables already)
        let mut spills = lanes
            .iter()
            .filter_map(|l| l.state.spill.as_ref())
            .peekable();
        if spills.peek().is_some()
            && let Some(groups) = &mut merged.groups
        {
            groups.by_hash();
            // rows are put aside while they fold poorly (about a group a
            // row): room for a group per row of each bucket at once, not
            // grown by doubling as they come
            for b in buckets.clone() {
                let rows: usize = spills
                    .clone()
                    .flat_map(|s| &s.chunks)
                    .map(|c| c.offsets[b + 1] - c.offsets[b])
                    .sum();
                groups.reserve_bucket(b, rows);
            }
        }
        for chunk in spills.flat_map(|s| &s.chunks) {
            if let Some(rows) = chunk.rows(&buckets) {
                merged.add(plan, rows, None)?;
            }
        }
    }
    let size = merged.size();
    Ok((merged.finish(plan)?, size))
}

/// The lanes' direct maps ([`GroupTable::direct_map`]), when every lane
/// found its groups by the value of a one-word key; `lo..hi` the values
/// they span together.
struct ByValue<'a> {
    maps: Vec<DirectMap<'a>>,
    lo: u64,
    hi: u64,
}

/// The lanes' [`ByValue`] maps, if every lane kept one and together they
/// span at most [`BY_VALUE_SPAN`] values.
fn by_value(lanes: &[PartitionedState]) -> Option<ByValue<'_>> {
    let slots = |l: &PartitionedState| l.state.groups.as_ref().is_some_and(GroupTable::in_slots);
    if lanes.iter().any(|l| l.state.spill.is_some() || slots(l)) {
        return None;
    }
    let maps: Vec<DirectMap<'_>> = lanes
        .iter()
        .map(|l| l.state.groups.as_ref()?.direct_map())
        .collect::<Option<_>>()?;
    let spans = maps.iter().filter(|m| m.end() > m.base);
    let lo = spans.clone().map(|m| m.base).min().unwrap_or(0);
    let hi = spans.map(DirectMap::end).max().unwrap_or(0);
    (hi - lo <= BY_VALUE_SPAN).then_some(ByValue { maps, lo, hi })
}

/// The most values lanes' direct maps may span together for a merge by
/// value (lanes that saw values far apart merge by hash).
const BY_VALUE_SPAN: u64 = 1 << 23;

/// [`merge_partition`] of lanes that found their groups by value: the
/// values the lanes' maps span are cut into [`RADIX_BUCKETS`] even
/// ranges, and the partition of `buckets` merges the groups of its
/// ranges page by page, in value order; no key is hashed or compared. A
/// page only one lane made is taken as it is; where several made it, a
/// page of merged ids finds each value's group. NULL goes with bucket 0.
fn merge_by_value(
    plan: &AggregatePlan,
    lanes: &[PartitionedState],
    by: &ByValue<'_>,
    buckets: std::ops::Range<usize>,
) -> Result<(RecordBatch, usize)> {
    let mut merged = plan.new_state()?;
    let (lo, hi) = (by.lo, by.hi);
    let cut = |b: usize| lo + ((hi - lo) as u128 * b as u128 / RADIX_BUCKETS as u128) as u64;
    let (from, to) = (cut(buckets.start), cut(buckets.end));
    // the merged groups' values, in the order they are numbered, and per
    // lane its groups (`src`) and the merged groups they go to (`dst`):
    // none without aggregates to fold (DISTINCT)
    let folds = !merged.accumulators.is_empty();
    // room for each lane's groups in the range were they spread evenly
    // over the lanes' span (and a quarter more), at most one a value: the
    // lists are not grown by doubling, copying what they hold
    let share = |groups: usize| {
        let part = groups as u128 * u128::from(to - from) / u128::from((hi - lo).max(1));
        (part as usize + part as usize / 4).min((to - from) as usize)
    };
    let groups: Vec<usize> = lanes.iter().map(|l| l.state.num_groups()).collect();
    let mut values: Vec<u64> = Vec::with_capacity(share(groups.iter().sum()));
    let mut src: Vec<Vec<u32>> = Vec::with_capacity(lanes.len());
    let mut dst: Vec<Vec<u32>> = Vec::with_capacity(lanes.len());
    for &g in &groups {
        let room = if folds { share(g) } else { 0 };
        src.push(Vec::with_capacity(room));
        dst.push(Vec::with_capacity(room));
    }
    let mut ours = vec![EMPTY_GROUP; DIRECT_PAGE];
    let mut held = Vec::with_capacity(lanes.len());
    let mut start = from - from % DIRECT_PAGE as u64;
    while start < to {
        // this page's values in the range: `start + a .. start + b`
        let a = (from.max(start) - start) as usize;
        let b = (to - start).min(DIRECT_PAGE as u64) as usize;
        held.clear();
        held.extend(
            by.maps
                .iter()
                .enumerate()
                .filter_map(|(l, m)| Some((l, m.page(start)?))),
        );
        if let [(l, page)] = held[..] {
            // one lane's groups: each is a merged group
            let (src, dst) = (&mut src[l], &mut dst[l]);
            values.reserve(b - a);
            if folds {
                src.reserve(b - a);
                dst.reserve(b - a);
            }
            for (v, &id) in (start + a as u64..).zip(&page[a..b]) {
                if id != EMPTY_GROUP {
                    if folds {
                        src.push(id);
                        dst.push(values.len() as u32);
                    }
                    values.push(v);
                }
            }
        } else if !held.is_empty() {
            ours[a..b].fill(EMPTY_GROUP);
            for &(l, page) in &held {
                for (i, &id) in page.iter().enumerate().take(b).skip(a) {
                    if id == EMPTY_GROUP {
                        continue;
                    }
                    let group = &mut ours[i];
                    if *group == EMPTY_GROUP {
                        *group = values.len() as u32;
                        values.push(start + i as u64);
                    }
                    if folds {
                        src[l].push(id);
                        dst[l].push(*group);
                    }
                }
            }
        }
        start += DIRECT_PAGE as u64;
    }
    let Some(groups) = &mut merged.groups else {
        return Err(Error::Internal("a merge by value without groups".into()));
    };
    groups.extend_by_value(&values)?;
    if buckets.contains(&0) {
        // NULL's group, after the values'
        let mut null_group = EMPTY_GROUP;
        for (l, m) in by.maps.iter().enumerate() {
            if m.null != EMPTY_GROUP {
                if null_group == EMPTY_GROUP {
                    null_group = values.len() as u32;
                    groups.push_null_by_value()?;
                }
                src[l].push(m.null);
                dst[l].push(null_group);
            }
        }
    }
    for ((lane, src), dst) in lanes.iter().zip(&src).zip(&dst) {
        merged.merge_accumulators(&lane.state, src, dst)?;
    }
    let size = merged.size();
    Ok((merged.finish(plan)?, size))
}

/// Whether every lane numbers its groups by slot in one window
/// ([`GroupTable::enter_slots`]): they merge by [`merge_slots`].
pub(crate) fn one_slot_window(lanes: &[PartitionedState]) -> bool {
    let mut windows = lanes.iter().map(|l| {
        l.state
            .groups
            .as_ref()
            .and_then(GroupTable::slot_window)
            .map(|w| (w.base, w.span))
    });
    let Some(Some(first)) = windows.next() else {
        return false;
    };
    windows.all(|w| w == Some(first))
}

/// [`merge_partition`] of lanes that number their groups by slot in one
/// window ([`one_slot_window`]): the window is cut into
/// [`RADIX_BUCKETS`] even ranges, and the partition of `buckets` folds
/// each lane's groups of its ranges slot by slot, in value order: a
/// lane's slot is the same value in every lane, so no key is looked up,
/// hashed or compared, and each lane's states are read in a run. NULL
/// goes with bucket 0.
pub(crate) fn merge_slots(
    plan: &AggregatePlan,
    lanes: &[PartitionedState],
    buckets: std::ops::Range<usize>,
) -> Result<(RecordBatch, usize)> {
    let windows: Vec<_> = lanes
        .iter()
        .map(|l| l.state.groups.as_ref().and_then(GroupTable::slot_window))
        .collect::<Option<_>>()
        .ok_or_else(|| Error::Internal("a merge by slot of a lane without slots".into()))?;
    let Some(first) = windows.first() else {
        return Err(Error::Internal("a merge by slot of no lane".into()));
    };
    let (base, span) = (first.base, first.span);
    let cut = |b: usize| (u128::from(span) * b as u128 / RADIX_BUCKETS as u128) as usize;
    let (from, to) = (cut(buckets.start), cut(buckets.end));
    let null = buckets.contains(&0) && windows.iter().any(|w| w.null);
    // the slots some lane reached, and NULL's
    let mut kept: Vec<u32> = (from..to)
        .filter(|&s| windows.iter().any(|w| w.seen[s] != 0))
        .map(|s| s as u32)
        .collect();
    let mut merged = plan.new_state()?;
    let Some(groups) = &mut merged.groups else {
        return Err(Error::Internal("a merge by slot without groups".into()));
    };
    let values: Vec<u64> = kept.iter().map(|&s| base + u64::from(s)).collect();
    groups.extend_by_value(&values)?;
    if null {
        groups.push_null_by_value()?;
        kept.push(span as u32);
    }
    let (mut src, mut dst) = (Vec::new(), Vec::new());
    for (lane, window) in lanes.iter().zip(&windows) {
        src.clear();
        dst.clear();
        for (g, &s) in kept.iter().enumerate() {
            if window.seen[s as usize] != 0 && (s as u64) < span + u64::from(window.null) {
                src.push(s);
                dst.push(g as u32);
            }
        }
        merged.merge_accumulators(&lane.state, &src, &dst)?;
    }
    let size = merged.size();
    Ok((merged.finish(plan)?, size))
}

/// Lanes that found their groups by value ([`by_value`]) and share at
/// most one value page in this many are finished lane by lane
/// ([`fold_shared_pages`]).
const SHARED_PAGES_MAX: usize = 16;

/// Readies lanes that found their groups by value ([`by_value`]) and
/// share few of their value pages to be finished each as it is
/// ([`finish_lane`]), with no merge: rows came with their keys clustered
/// (a table sorted by the key, a log by date), so each value's groups
/// are mostly one lane's, and the lanes' groups, finished in parallel,
/// are the result. The groups of a page several lanes made (and of
/// NULL) are folded into the first of those lanes; per lane, the groups
/// folded away, which its result leaves out. `None` (and the lanes as
/// they were) where lanes share more pages than one in
/// [`SHARED_PAGES_MAX`]: those merge by value ([`merge_partition`]).
pub(crate) fn fold_shared_pages(lanes: &mut [PartitionedState]) -> Result<Option<Vec<Vec<u32>>>> {
    // (lane, lane folded into it, the page's first value or None: NULL)
    let mut folds: Vec<(usize, usize, Option<u64>)> = Vec::new();
    {
        let Some(by) = by_value(lanes) else {
            return Ok(None);
        };
        // per page of the lanes' span, the first lane that made it
        let mut first = vec![u32::MAX; ((by.hi - by.lo) as usize).div_ceil(DIRECT_PAGE)];
        let mut made = 0;
        for (l, map) in by.maps.iter().enumerate() {
            for (start, _) in map.made() {
                let owner = &mut first[((start - by.lo) as usize) / DIRECT_PAGE];
                if *owner == u32::MAX {
                    *owner = l as u32;
                    made += 1;
                } else {
                    folds.push((*owner as usize, l, Some(start)));
                }
            }
        }
        if folds.len() * SHARED_PAGES_MAX > made {
            return Ok(None);
        }
        let mut nulls = by
            .maps
            .iter()
            .enumerate()
            .filter(|(_, m)| m.null != EMPTY_GROUP);
        if let Some((owner, _)) = nulls.next() {
            folds.extend(nulls.map(|(l, _)| (owner, l, None)));
        }
    }
    let mut dropped = vec![Vec::new(); lanes.len()];
    let mut dst = Vec::new();
    for (owner, l, start) in folds {
        let (mine, theirs) = pair_mut(lanes, owner, l);
        let (Some(table), Some(map)) = (
            &mut mine.state.groups,
            theirs
                .state
                .groups
                .as_ref()
                .and_then(GroupTable::direct_map),
        ) else {
            return Err(Error::Internal(
                "a fold by value of a lane without a map".into(),
            ));
        };
        let src = &mut dropped[l];
        let from = src.len();
        dst.clear();
        match start {
            None => {
                src.push(map.null);
                dst.push(table.group_by_value(None)?);
            }
            Some(start) => {
                let page = map.page(start).ok_or_else(|| {
                    Error::Internal(format!("a fold of page {start} the lane did not make"))
                })?;
                for (v, &id) in (start..).zip(page) {
                    if id != EMPTY_GROUP {
                        src.push(id);
                        dst.push(table.group_by_value(Some(v))?);
                    }
                }
            }
        }
        mine.state
            .merge_accumulators(&theirs.state, &src[from..], &dst)?;
    }
    Ok(Some(dropped))
}

/// `items[a]` to change and `items[b]` to read (`a != b`).
fn pair_mut<T>(items: &mut [T], a: usize, b: usize) -> (&mut T, &T) {
    if a < b {
        let (left, right) = items.split_at_mut(b);
        (&mut left[a], &right[0])
    } else {
        let (left, right) = items.split_at_mut(a);
        (&mut right[0], &left[b])
    }
}

/// A lane's groups finished as they are, less groups `dropped` (folded
/// into another lane's by [`fold_shared_pages`]): parts of the
/// aggregate's result, and the bytes of the result made beside the
/// lane's state (which is counted already). Groups are numbered
/// as first seen, so those of a page shared at a morsel's edge are runs
/// of ids: the kept runs between them are slices of the lane's result
/// (no copy) unless they are short (a filter copies the rest).
pub(crate) fn finish_lane(
    plan: &AggregatePlan,
    lane: PartitionedState,
    dropped: &mut [u32],
) -> Result<(Vec<RecordBatch>, usize)> {
    let batch = lane.state.finish(plan)?;
    let size = batch_bytes(&batch);
    let rows = batch.num_rows();
    dropped.sort_unstable();
    // the kept runs of ids
    let mut kept = Vec::new();
    let mut from = 0;
    for &g in dropped.iter() {
        let g = g as usize;
        if g > from {
            kept.push(from..g);
        }
        from = g + 1;
    }
    if rows > from {
        kept.push(from..rows);
    }
    if kept.len() <= 1 || kept.len() * KEPT_RUN_ROWS <= rows {
        let parts = kept.into_iter().map(|r| batch.slice(r.start, r.len()));
        return Ok((parts.collect(), size));
    }
    let mut keep = BooleanBufferBuilder::new(rows);
    keep.append_n(rows, true);
    for &g in dropped.iter() {
        keep.set_bit(g as usize, false);
    }
    let keep = BooleanArray::new(keep.finish(), None);
    let batch = filter_record_batch(&batch, &keep).map_err(Error::arrow)?;
    Ok((vec![batch], size))
}

/// The fewest rows a lane's kept run of groups has on average for
/// [`finish_lane`] to give the runs as slices.
const KEPT_RUN_ROWS: usize = 4096;

impl AggregateState {
    /// The result: group keys, then one column per aggregate.
    pub(crate) fn finish(mut self, plan: &AggregatePlan) -> Result<RecordBatch> {
        self.settle(plan)?;
        let rows = self.num_groups();
        let mut columns: Vec<ArrayRef> = match self.groups {
            None => Vec::new(),
            Some(table) => table.finish()?,
        };
        // the aggregates that share a state read it before it is finished
        let mut shared: Vec<Option<ArrayRef>> = vec![None; plan.specs.len()];
        for (i, twin) in plan.twins.iter().enumerate() {
            if let Some(j) = *twin {
                let state = downcast::<SumAcc>(self.accumulators[j].as_ref())?;
                let spec = &plan.specs[i];
                shared[i] = Some(match spec.func {
                    AggregateFunction::CountStar => state.counts(true)?,
                    AggregateFunction::Count => state.counts(false)?,
                    f => state.output(f == AggregateFunction::Avg, &spec.output_type)?,
                });
            }
        }
        for (acc, shared) in self.accumulators.into_iter().zip(shared) {
            columns.push(match shared {
                Some(column) => column,
                None => acc.finish()?,
            });
        }
        let columns = columns
            .into_iter()
            .zip(plan.schema.fields())
            .map(|(c, f)| conform(c, f.data_type()))
            .collect::<Result<Vec<_>>>()?;
        let options = RecordBatchOptions::new().with_row_count(Some(rows));
        RecordBatch::try_new_with_options(Arc::clone(&plan.schema), columns, &options)
            .map_err(Error::arrow)
    }
}

/// `array` cast to `to` if it is of another type.
pub(crate) fn conform(array: ArrayRef, to: &DataType) -> Result<ArrayRef> {
    if array.data_type() == to {
        Ok(array)
    } else {
        // a value out of `to`'s range (a UBIGINT past BIGINT) is an error,
        // never a NULL
        let options = arrow::compute::CastOptions {
            safe: false,
            ..Default::default()
        };
        arrow::compute::cast_with_options(&array, to, &options).map_err(Error::arrow)
    }
}

/// Rows of a morsel an aggregate takes in one step.
const UPDATE_ROWS: usize = 8192;

/// Sum and count of the non-NULL products `a[i] * b[i]` over the selected
/// rows, as unscaled i128 at scale `s_a + s_b`.
fn sum_decimal_product(
    input: &PipelineBatch,
    a: usize,
    b: usize,
    digits: u8,
) -> Result<(i128, i64)> {
    let a = input.batch.column(a).as_primitive::<Decimal128Type>();
    let b = input.batch.column(b).as_primitive::<Decimal128Type>();
    let (av, bv) = (a.values(), b.values());
    // factors have at most 18 digits: the widening i64 multiply is exact
    let product = |i: usize| i128::from(av[i] as i64) * i128::from(bv[i] as i64);
    let has_nulls = a.null_count() > 0 || b.null_count() > 0;
    let valid = |i: usize| a.is_valid(i) && b.is_valid(i);
    // |product| < 10^digits; unchecked adds are exact while
    // rows * 10^digits < 2^126, else every add is checked
    let unchecked = f64::from(digits) + (av.len().max(1) as f64).log10() < 37.9;
    let mut sum: i128 = 0;
    let mut count: i64 = 0;
    let mut overflowed = false;
    let mut add = |i: usize| {
        if unchecked {
            sum += product(i);
        } else {
            match sum.checked_add(product(i)) {
                Some(s) => sum = s,
                None => overflowed = true,
            }
        }
        count += 1;
    };
    match &input.selection {
        Selection::All if !has_nulls => (0..av.len()).for_each(&mut add),
        Selection::All => (0..av.len()).filter(|&i| valid(i)).for_each(&mut add),
        Selection::Mask(m) if !has_nulls => m.values().set_indices().for_each(&mut add),
        Selection::Mask(m) => m
            .values()
            .set_indices()
            .filter(|&i| valid(i))
            .for_each(&mut add),
        Selection::Indices(idx) if !has_nulls => idx.values().iter().for_each(|&i| add(i as usize)),
        Selection::Indices(idx) => idx
            .values()
            .iter()
            .map(|&i| i as usize)
            .filter(|&i| valid(i))
            .for_each(&mut add),
    }
    if overflowed {
        return Err(overflow("DECIMAL"));
    }
    Ok((sum, count))
}

/// One aggregate's per-group state.
trait Accumulator: Send + Sync {
    /// Makes room for `groups` groups (new ones empty).
    fn resize(&mut self, groups: usize);
    /// Adds one value per row; `groups` is each row's group (`None`: all in
    /// group 0).
    fn update(&mut self, values: &ArrayRef, groups: Option<&[u32]>) -> Result<()>;
    /// Adds `rows` rows (for `count(*)`).
    fn update_rows(&mut self, _rows: usize, _groups: Option<&[u32]>) -> Result<()> {
        Err(Error::Internal(
            "update_rows on an aggregate with an argument".into(),
        ))
    }
    /// Adds one (value, key) pair per row (for `arg_min|arg_max`).
    fn update_keyed(
        &mut self,
        _values: &ArrayRef,
        _keys: &ArrayRef,
        _groups: Option<&[u32]>,
    ) -> Result<()> {
        Err(Error::Internal(
            "update_keyed on an aggregate of one argument".into(),
        ))
    }
    /// Adds one value per row (and key, for `string_agg`'s separator)
    /// with the row's ORDER BY terms (for [`AggInput::Ordered`]).
    fn update_ordered(
        &mut self,
        _values: &ArrayRef,
        _key: Option<&ArrayRef>,
        _order: &[ArrayRef],
        _groups: Option<&[u32]>,
    ) -> Result<()> {
        Err(Error::Internal(
            "update_ordered on an aggregate that keeps no order".into(),
        ))
    }
    /// Adds a pre-summed (unscaled) decimal and its count to group 0.
    fn add_i128(&mut self, _sum: i128, _count: i64) -> Result<()> {
        Err(Error::Internal(
            "add_i128 on a non-decimal aggregate".into(),
        ))
    }
    /// Starts counting, per group, the rows whose value is NULL, for a
    /// `count(*)` that shares this state ([`twins`]); false where the
    /// accumulator cannot.
    fn count_null_rows(&mut self) -> bool {
        false
    }
    /// Folds groups `src` of `other` (an accumulator of the same kind) into
    /// this one's groups `dst` (same length).
    fn merge_from(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32]) -> Result<()>;
    /// One value per group.
    fn finish(self: Box<Self>) -> Result<ArrayRef>;
    /// Bytes held (for the memory accountant).
    fn size(&self) -> usize;
    fn as_any(&self) -> &dyn Any;
}

fn downcast<T: 'static>(other: &dyn Accumulator) -> Result<&T> {
    other
        .as_any()
        .downcast_ref::<T>()
        .ok_or_else(|| Error::Internal("merging accumulators of different kinds".into()))
}

/// `(src, dst)` group pairs of a merge.
fn pairs<'a>(src: &'a [u32], dst: &'a [u32]) -> impl Iterator<Item = (usize, usize)> + 'a {
    src.iter().zip(dst).map(|(&s, &d)| (s as usize, d as usize))
}

fn new_accumulator(spec: &AggSpec) -> Result<Box<dyn Accumulator>> {
    if matches!(spec.input, AggInput::Ordered { .. }) {
        // the function's own accumulator, fed in order at the end
        let plain = AggSpec {
            distinct: false,
            input: AggInput::Star,
            order: Vec::new(),
            ..spec.clone()
        };
        return Ok(Box::new(ordered::Ordered::new(
            new_accumulator(&plain)?,
            spec.func,
            spec.order
                .iter()
                .map(|(t, o)| SortField::new_with_options(t.clone(), *o))
                .collect(),
            spec.distinct
                .then(|| SortField::new(spec.input_type.clone())),
        )?));
    }
    if spec.distinct
        && matches!(
            spec.func,
            AggregateFunction::Count
                | AggregateFunction::Sum
                | AggregateFunction::Avg
                | AggregateFunction::VarSamp
                | AggregateFunction::VarPop
                | AggregateFunction::StddevSamp
                | AggregateFunction::StddevPop
        )
    {
        return Ok(Box::new(DistinctAcc::new(spec)?));
    }
    if let Some(key_type) = &spec.key_type {
        if spec.input_type == DataType::Null || *key_type == DataType::Null {
            return Ok(Box::new(CountAcc::null_result(spec.output_type.clone())));
        }
        if spec.func == AggregateFunction::StringAgg {
            return Ok(Box::new(StringAgg::default()));
        }
        if matches!(
            spec.func,
            AggregateFunction::QuantileCont | AggregateFunction::QuantileDisc
        ) {
            return holistic::quantile(spec.func, &spec.input_type);
        }
        if spec.func.of_pairs() {
            return Ok(Box::new(pairs::PairsAcc::new(spec.func)));
        }
        return Ok(Box::new(ArgMinMax::new(
            spec.func == AggregateFunction::ArgMin,
            &spec.input_type,
            key_type,
        )?));
    }
    new_plain_accumulator(spec.func, &spec.input_type, &spec.output_type)
}

fn new_plain_accumulator(
    func: AggregateFunction,
    input: &DataType,
    output: &DataType,
) -> Result<Box<dyn Accumulator>> {
    use AggregateFunction::*;
    let unsupported = || {
        Error::Execution(format!(
            "{}({}) is not supported",
            func.name(),
            weir_planner::types::sql_type_name(input)
        ))
    };
    Ok(match func {
        Grouping => {
            return Err(Error::Internal(
                "GROUPING is a constant of its grouping set, never computed".into(),
            ));
        }
        CountStar | Count => Box::new(CountAcc::default()),
        Sum | Avg => {
            let avg = func == Avg;
            match input {
                DataType::Decimal128(_, s) => {
                    Box::new(SumAcc::new(SumKind::Decimal(*s), avg, output))
                }
                t if t.is_integer() => Box::new(SumAcc::new(SumKind::Int, avg, output)),
                t if t.is_floating() => Box::new(FloatSumAcc {
                    sums: Vec::new(),
                    counts: Vec::new(),
                    avg,
                }),
                DataType::Null => Box::new(SumAcc::new(SumKind::Int, avg, output)),
                _ => return Err(unsupported()),
            }
        }
        Min | Max => {
            let min = func == Min;
            match input {
                DataType::Int8 => Box::new(PrimMinMax::<Int8Type>::new(min, input)),
                DataType::Int16 => Box::new(PrimMinMax::<Int16Type>::new(min, input)),
                DataType::Int32 => Box::new(PrimMinMax::<Int32Type>::new(min, input)),
                DataType::Int64 => Box::new(PrimMinMax::<Int64Type>::new(min, input)),
                DataType::UInt8 => Box::new(PrimMinMax::<UInt8Type>::new(min, input)),
                DataType::UInt16 => Box::new(PrimMinMax::<UInt16Type>::new(min, input)),
                DataType::UInt32 => Box::new(PrimMinMax::<UInt32Type>::new(min, input)),
                DataType::UInt64 => Box::new(PrimMinMax::<UInt64Type>::new(min, input)),
                DataType::Float32 => Box::new(PrimMinMax::<Float32Type>::new(min, input)),
                DataType::Float64 => Box::new(PrimMinMax::<Float64Type>::new(min, input)),
                DataType::Decimal128(..) => Box::new(PrimMinMax::<Decimal128Type>::new(min, input)),
                DataType::Date32 => Box::new(PrimMinMax::<Date32Type>::new(min, input)),
                DataType::Timestamp(TimeUnit::Microsecond, _) => {
                    Box::new(PrimMinMax::<TimestampMicrosecondType>::new(min, input))
                }
                DataType::Utf8 => Box::new(OrdMinMax::<String>::new(min)),
                DataType::Boolean => Box::new(OrdMinMax::<bool>::new(min)),
                DataType::Null => Box::new(CountAcc::null_result(output.clone())),
                _ => return Err(unsupported()),
            }
        }
        VarSamp | VarPop | StddevSamp | StddevPop => match input {
            DataType::Null => Box::new(CountAcc::null_result(output.clone())),
            t if weir_planner::types::is_numeric(t) => Box::new(VarianceAcc {
                moments: Vec::new(),
                sample: matches!(func, VarSamp | StddevSamp),
                root: matches!(func, StddevSamp | StddevPop),
            }),
            _ => return Err(unsupported()),
        },
        Median | Mode | AnyValue | First | Last | BitAnd | BitOr | BitXor | Product | Skewness
        | Kurtosis | KurtosisPop => match input {
            DataType::Null => Box::new(CountAcc::null_result(output.clone())),
            _ => return holistic::new_accumulator(func, input, output),
        },
        // the entropy of no values is 0, not NULL
        Entropy => return holistic::new_accumulator(func, input, output),
        ArgMin | ArgMax | StringAgg | QuantileCont | QuantileDisc | CovarPop | CovarSamp | Corr
        | RegrSlope | RegrIntercept | RegrR2 | RegrCount | RegrAvgx | RegrAvgy | RegrSxx
        | RegrSyy | RegrSxy => {
            return Err(Error::Internal(format!(
                "{}() without its key argument",
                func.name()
            )));
        }
    })
}

/// Up to this many groups, `count(*)` and `sum` add a batch into local
/// copies of the groups' states first, [`LANES`] of them taken by turns:
/// with a handful of groups neighbouring rows mostly hit the same state,
/// and one copy would make each addition wait for the one before it (a
/// store and a load apart); the copies' chains run side by side.
const FEW_GROUPS: usize = 16;

/// Copies of the states a few-group batch adds into.
const LANES: usize = 4;

/// Calls `f(row, value)` for each non-NULL value.
#[inline]
fn for_each_valid<T: ArrowPrimitiveType>(
    array: &PrimitiveArray<T>,
    mut f: impl FnMut(usize, T::Native),
) {
    let values = array.values();
    match array.nulls() {
        Some(nulls) if nulls.null_count() > 0 => {
            for i in nulls.valid_indices() {
                f(i, values[i]);
            }
        }
        _ => {
            for (i, v) in values.iter().enumerate() {
                f(i, *v);
            }
        }
    }
}

fn overflow(what: &str) -> Error {
    Error::Execution(format!("Out of Range Error: Overflow in SUM of {what}"))
}

// ---------------------------------------------------------------- count

#[derive(Default)]
struct CountAcc {
    counts: Vec<i64>,
    /// For `min`/`max` of an untyped NULL column: always NULL.
    null_result: Option<DataType>,
}

impl CountAcc {
    fn null_result(t: DataType) -> Self {
        CountAcc {
            counts: Vec::new(),
            null_result: Some(t),
        }
    }
}

impl Accumulator for CountAcc {
    fn resize(&mut self, groups: usize) {
        self.counts.resize(groups, 0);
    }

    fn update(&mut self, values: &ArrayRef, groups: Option<&[u32]>) -> Result<()> {
        match groups {
            None => self.counts[0] += (values.len() - values.logical_null_count()) as i64,
            Some(ids) => match values.logical_nulls() {
                None => ids.iter().for_each(|&g| self.counts[g as usize] += 1),
                Some(nulls) => nulls
                    .valid_indices()
                    .for_each(|i| self.counts[ids[i] as usize] += 1),
            },
        }
        Ok(())
    }

    fn update_keyed(
        &mut self,
        _values: &ArrayRef,
        _keys: &ArrayRef,
        _groups: Option<&[u32]>,
    ) -> Result<()> {
        // arg_min|arg_max over an untyped NULL value or key: always NULL
        match self.null_result {
            Some(_) => Ok(()),
            None => Err(Error::Internal("update_keyed on count".into())),
        }
    }

    fn update_rows(&mut self, rows: usize, groups: Option<&[u32]>) -> Result<()> {
        match groups {
            None => self.counts[0] += rows as i64,
            Some(ids) if self.counts.len() <= FEW_GROUPS => {
                let mut lanes = [[0i64; FEW_GROUPS]; LANES];
                for (i, &g) in ids.iter().enumerate() {
                    lanes[i % LANES][g as usize] += 1;
                }
                for (g, count) in self.counts.iter_mut().enumerate() {
                    *count += lanes.iter().map(|l| l[g]).sum::<i64>();
                }
            }
            Some(ids) => ids.iter().for_each(|&g| self.counts[g as usize] += 1),
        }
        Ok(())
    }

    fn merge_from(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32]) -> Result<()> {
        let other = downcast::<Self>(other)?;
        for (s, d) in pairs(src, dst) {
            self.counts[d] += other.counts[s];
        }
        Ok(())
    }

    fn size(&self) -> usize {
        self.counts.capacity() * 8
    }

    fn finish(self: Box<Self>) -> Result<ArrayRef> {
        if let Some(t) = &self.null_result {
            return Ok(arrow::array::new_null_array(t, self.counts.len()));
        }
        Ok(Arc::new(Int64Array::from(self.counts)))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

// ---------------------------------------------------------------- sum / avg

#[derive(Clone, Copy, Debug, PartialEq)]
enum SumKind {
    /// Integers summed exactly (see [`SumStates`]); `sum` must fit BIGINT.
    Int,
    /// Unscaled decimals of this scale, summed exactly.
    Decimal(i8),
}

struct SumAcc {
    kind: SumKind,
    avg: bool,
    output: DataType,
    /// Per group its sum and count side by side: one cache line per
    /// update instead of two.
    groups: SumStates,
    /// Per group, its rows whose value was NULL, where a `count(*)` reads
    /// this state (its count is `count` plus these): empty until a NULL
    /// value comes, so that a column without NULLs costs no list to grow,
    /// merge or add.
    null_rows: Option<Vec<i64>>,
}

/// A group's exact sum and count of values.
#[derive(Clone, Copy, Debug, Default)]
struct SumState {
    sum: i128,
    count: i64,
}

/// A group's sum while every sum so far fits 64 bits: 16 bytes where
/// [`SumState`] takes 32 (an i128 is 16-aligned), so a table of a million
/// groups is 16 MB instead of 32 and more of it sits in the cache.
#[derive(Clone, Copy, Debug, Default)]
struct NarrowSum {
    sum: i64,
    count: i64,
}

impl NarrowSum {
    /// Adds `sum` (of `count` values) if the total stays within 64 bits;
    /// false (and nothing added) if it would not.
    #[inline]
    fn try_add(&mut self, sum: i128, count: i64) -> bool {
        match i64::try_from(sum)
            .ok()
            .and_then(|v| self.sum.checked_add(v))
        {
            Some(s) => {
                self.sum = s;
                self.count += count;
                true
            }
            None => false,
        }
    }
}

impl From<NarrowSum> for SumState {
    fn from(n: NarrowSum) -> Self {
        SumState {
            sum: i128::from(n.sum),
            count: n.count,
        }
    }
}

/// The groups' states: narrow until a value or a sum leaves i64, then
/// every group wide from that row on (the sum is exact either way).
enum SumStates {
    Narrow(Vec<NarrowSum>),
    Wide(Vec<SumState>),
}

impl SumStates {
    /// Number of groups.
    fn len(&self) -> usize {
        match self {
            SumStates::Narrow(n) => n.len(),
            SumStates::Wide(w) => w.len(),
        }
    }

    /// The wide states, widening the narrow ones first.
    fn wide(&mut self) -> &mut Vec<SumState> {
        if let SumStates::Narrow(narrow) = self {
            let wide = narrow.iter().copied().map(SumState::from).collect();
            *self = SumStates::Wide(wide);
        }
        match self {
            SumStates::Wide(wide) => wide,
            SumStates::Narrow(_) => unreachable!("widened above"),
        }
    }

    /// Group `g`'s state.
    fn get(&self, g: usize) -> SumState {
        match self {
            SumStates::Narrow(n) => n[g].into(),
            SumStates::Wide(w) => w[g],
        }
    }
}

/// Adds the valid values of `values` (at rows `rows`) to their groups'
/// narrow sums, stopping at the first that leaves i64; returns that row.
#[inline]
fn add_narrow<N: Copy>(
    values: &[N],
    rows: impl Iterator<Item = usize>,
    ids: &[u32],
    states: &mut [NarrowSum],
    widen: impl Fn(N) -> i128,
) -> Option<usize> {
    rows.into_iter()
        .find(|&i| !states[ids[i] as usize].try_add(widen(values[i]), 1))
}

/// Rows a few-group batch adds in 64 bits before folding into 128: with
/// every value below [`FEW_NARROW_MAX`], no lane's sum can leave i64.
const FEW_CHUNK: usize = 4096;

/// The magnitude below which [`FEW_CHUNK`] values sum within i64.
const FEW_NARROW_MAX: u64 = 1 << 50;

/// Per lane and group the sum and count of a chunk of a few-group batch
/// without NULLs, added in 64 bits; `None` if a value is too large for
/// that (the chunk is then added by [`add_few_wide`]).
#[inline]
fn add_few_narrow<N: Copy>(
    values: &[N],
    ids: &[u32],
    widen: impl Fn(N) -> i128,
) -> Option<[[SumState; FEW_GROUPS]; LANES]> {
    let mut lanes = [[NarrowSum::default(); FEW_GROUPS]; LANES];
    // the bits of every value's magnitude, and whether one left i64
    let (mut bits, mut wide) = (0u64, false);
    for (i, (&v, &g)) in values.iter().zip(ids).enumerate() {
        let v = widen(v);
        let n = v as i64;
        wide |= i128::from(n) != v;
        bits |= (n ^ (n >> 63)) as u64;
        let state = &mut lanes[i % LANES][g as usize];
        state.sum = state.sum.wrapping_add(n);
        state.count += 1;
    }
    if wide || bits >= FEW_NARROW_MAX {
        return None;
    }
    Some(lanes.map(|lane| lane.map(SumState::from)))
}

/// [`add_few_narrow`] in 128 bits; `None` if a sum leaves i128.
fn add_few_wide<N: Copy>(
    values: &[N],
    ids: &[u32],
    widen: impl Fn(N) -> i128,
) -> Option<[[SumState; FEW_GROUPS]; LANES]> {
    let mut lanes = [[SumState::default(); FEW_GROUPS]; LANES];
    let mut failed = false;
    for (i, (&v, &g)) in values.iter().zip(ids).enumerate() {
        let state = &mut lanes[i % LANES][g as usize];
        match state.sum.checked_add(widen(v)) {
            Some(s) => state.sum = s,
            None => failed = true,
        }
        state.count += 1;
    }
    (!failed).then_some(lanes)
}

impl SumAcc {
    fn new(kind: SumKind, avg: bool, output: &DataType) -> Self {
        SumAcc {
            kind,
            avg,
            output: output.clone(),
            groups: SumStates::Narrow(Vec::new()),
            null_rows: None,
        }
    }

    /// Adds `array`'s values, made i128 by `widen`; `small`: every value
    /// is below 2^120 in magnitude.
    fn add<T: ArrowPrimitiveType>(
        &mut self,
        array: &PrimitiveArray<T>,
        groups: Option<&[u32]>,
        widen: impl Fn(T::Native) -> i128,
        small: bool,
    ) -> Result<()> {
        match groups {
            // values below 2^120 in magnitude (any integer, a decimal of
            // up to 36 digits): a chunk of 64 cannot overflow an i128, so
            // each chunk adds up unchecked, in four independent sums, and
            // only the chunks' totals are checked
            None if array.null_count() == 0 && small => {
                let mut sum = 0i128;
                for chunk in array.values().chunks(64) {
                    let mut parts = [0i128; 4];
                    let mut quads = chunk.chunks_exact(4);
                    for quad in &mut quads {
                        for (part, v) in parts.iter_mut().zip(quad) {
                            *part = part.wrapping_add(widen(*v));
                        }
                    }
                    let rest = quads
                        .remainder()
                        .iter()
                        .fold(0i128, |a, v| a.wrapping_add(widen(*v)));
                    let total = parts.iter().fold(rest, |a, p| a.wrapping_add(*p));
                    sum = sum.checked_add(total).ok_or_else(|| self.overflow())?;
                }
                self.add_i128(sum, array.len() as i64)
            }
            None => {
                let (mut sum, mut count) = (0i128, 0i64);
                let mut failed = false;
                for_each_valid(array, |_, v| {
                    match sum.checked_add(widen(v)) {
                        Some(s) => sum = s,
                        None => failed = true,
                    }
                    count += 1;
                });
                if failed {
                    return Err(self.overflow());
                }
                self.add_i128(sum, count)
            }
            Some(ids) if self.len() <= FEW_GROUPS && array.null_count() == 0 => {
                let mut totals = [SumState::default(); FEW_GROUPS];
                let values = array.values();
                for start in (0..values.len()).step_by(FEW_CHUNK) {
                    let end = (start + FEW_CHUNK).min(values.len());
                    let (values, ids) = (&values[start..end], &ids[start..end]);
                    let lanes = match add_few_narrow(values, ids, &widen) {
                        Some(lanes) => lanes,
                        None => add_few_wide(values, ids, &widen).ok_or_else(|| self.overflow())?,
                    };
                    for lane in &lanes {
                        for (total, state) in totals.iter_mut().zip(lane) {
                            total.sum = total
                                .sum
                                .checked_add(state.sum)
                                .ok_or_else(|| self.overflow())?;
                            total.count += state.count;
                        }
                    }
                }
                for (g, &total) in totals.iter().enumerate().take(self.len()) {
                    if total.count > 0 {
                        self.add_to(g, total)?;
                    }
                }
                Ok(())
            }
            Some(ids) if self.len() <= FEW_GROUPS => {
                let mut lanes = [[SumState::default(); FEW_GROUPS]; LANES];
                let mut failed = false;
                for_each_valid(array, |i, v| {
                    let state = &mut lanes[i % LANES][ids[i] as usize];
                    match state.sum.checked_add(widen(v)) {
                        Some(s) => state.sum = s,
                        None => failed = true,
                    }
                    state.count += 1;
                });
                if failed {
                    return Err(self.overflow());
                }
                for g in 0..self.len() {
                    let mut total = SumState::default();
                    for lane in &lanes {
                        total.sum = total
                            .sum
                            .checked_add(lane[g].sum)
                            .ok_or_else(|| self.overflow())?;
                        total.count += lane[g].count;
                    }
                    if total.count > 0 {
                        self.add_to(g, total)?;
                    }
                }
                Ok(())
            }
            Some(ids) => {
                let values = array.values();
                let nulls = array.nulls().filter(|n| n.null_count() > 0);
                // the first row the narrow states could not take
                let mut from = 0;
                if let SumStates::Narrow(states) = &mut self.groups {
                    let stop = match nulls {
                        Some(n) => add_narrow(values, n.valid_indices(), ids, states, &widen),
                        None => add_narrow(values, 0..values.len(), ids, states, &widen),
                    };
                    match stop {
                        None => return Ok(()),
                        Some(row) => from = row,
                    }
                }
                let states = self.groups.wide();
                let mut failed = false;
                for_each_valid(array, |i, v| {
                    if i < from {
                        return;
                    }
                    let state = &mut states[ids[i] as usize];
                    match state.sum.checked_add(widen(v)) {
                        Some(s) => state.sum = s,
                        None => failed = true,
                    }
                    state.count += 1;
                });
                if failed { Err(self.overflow()) } else { Ok(()) }
            }
        }
    }

    fn overflow(&self) -> Error {
        self.kind.overflow()
    }

    /// Number of groups.
    fn len(&self) -> usize {
        self.groups.len()
    }

    /// Adds a sum of `add.count` values to group `g`, widening the states
    /// if the group's sum leaves 64 bits.
    fn add_to(&mut self, g: usize, add: SumState) -> Result<()> {
        if let SumStates::Narrow(states) = &mut self.groups
            && states[g].try_add(add.sum, add.count)
        {
            return Ok(());
        }
        let kind = self.kind;
        let state = &mut self.groups.wide()[g];
        state.sum = state
            .sum
            .checked_add(add.sum)
            .ok_or_else(|| kind.overflow())?;
        state.count += add.count;
        Ok(())
    }
}

impl SumKind {
    fn overflow(self) -> Error {
        match self {
            SumKind::Int => overflow("BIGINT"),
            SumKind::Decimal(_) => overflow("DECIMAL"),
        }
    }
}

impl Accumulator for SumAcc {
    fn resize(&mut self, groups: usize) {
        match &mut self.groups {
            SumStates::Narrow(n) => n.resize(groups, NarrowSum::default()),
            SumStates::Wide(w) => w.resize(groups, SumState::default()),
        }
        if let Some(rows) = self.null_rows.as_mut().filter(|r| !r.is_empty()) {
            rows.resize(groups, 0);
        }
    }

    fn count_null_rows(&mut self) -> bool {
        self.null_rows = Some(Vec::new());
        true
    }

    fn update(&mut self, values: &ArrayRef, groups: Option<&[u32]>) -> Result<()> {
        // (a validity buffer without a NULL costs no pass over the rows)
        let nulls = values.logical_nulls().filter(|n| n.null_count() > 0);
        if let (Some(rows), Some(nulls)) = (&mut self.null_rows, nulls) {
            rows.resize(self.groups.len(), 0);
            for i in (0..values.len()).filter(|&i| nulls.is_null(i)) {
                rows[groups.map_or(0, |g| g[i] as usize)] += 1;
            }
        }
        match values.data_type() {
            DataType::Null => Ok(()),
            DataType::Decimal128(p, _) => {
                let a = values.as_primitive::<Decimal128Type>();
                self.add(a, groups, |v| v, *p <= 36)
            }
            DataType::Int64 => {
                self.add(values.as_primitive::<Int64Type>(), groups, i128::from, true)
            }
            DataType::Int32 => {
                self.add(values.as_primitive::<Int32Type>(), groups, i128::from, true)
            }
            DataType::UInt64 => self.add(
                values.as_primitive::<UInt64Type>(),
                groups,
                i128::from,
                true,
            ),
            _ => {
                let v = cast(values, &DataType::Int64).map_err(Error::arrow)?;
                self.add(v.as_primitive::<Int64Type>(), groups, i128::from, true)
            }
        }
    }

    fn add_i128(&mut self, sum: i128, count: i64) -> Result<()> {
        self.add_to(0, SumState { sum, count })
    }

    fn merge_from(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32]) -> Result<()> {
        let other = downcast::<Self>(other)?;
        if let (Some(mine), Some(theirs)) = (&mut self.null_rows, &other.null_rows)
            && !theirs.is_empty()
        {
            mine.resize(self.groups.len(), 0);
            for (s, g) in pairs(src, dst) {
                mine[g] += theirs[s];
            }
        }
        // the first pair the narrow states could not take
        let mut from = 0;
        if let (SumStates::Narrow(mine), SumStates::Narrow(theirs)) =
            (&mut self.groups, &other.groups)
        {
            let stop = pairs(src, dst)
                .position(|(s, g)| !mine[g].try_add(i128::from(theirs[s].sum), theirs[s].count));
            match stop {
                None => return Ok(()),
                Some(k) => from = k,
            }
        }
        let kind = self.kind;
        let states = self.groups.wide();
        for (s, g) in pairs(src, dst).skip(from) {
            let (theirs, mine) = (other.groups.get(s), &mut states[g]);
            match mine.sum.checked_add(theirs.sum) {
                Some(sum) => mine.sum = sum,
                None => return Err(kind.overflow()),
            }
            mine.count += theirs.count;
        }
        Ok(())
    }

    fn size(&self) -> usize {
        let rows = self.null_rows.as_ref().map_or(0, |r| r.capacity() * 8);
        rows + match &self.groups {
            SumStates::Narrow(n) => n.capacity() * std::mem::size_of::<NarrowSum>(),
            SumStates::Wide(w) => w.capacity() * std::mem::size_of::<SumState>(),
        }
    }

    fn finish(self: Box<Self>) -> Result<ArrayRef> {
        self.output(self.avg, &self.output)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl SumAcc {
    /// Per group, `count(x)` of its values (`rows`: `count(*)`, its NULLs
    /// too), for a count that shares this state ([`twins`]).
    fn counts(&self, rows: bool) -> Result<ArrayRef> {
        let mut counts: Vec<i64> = match &self.groups {
            SumStates::Narrow(n) => n.iter().map(|x| x.count).collect(),
            SumStates::Wide(w) => w.iter().map(|x| x.count).collect(),
        };
        if rows {
            let nulls = self.null_rows.as_ref().ok_or_else(|| {
                Error::Internal("a count(*) sharing a sum that counts no NULL rows".into())
            })?;
            for (c, n) in counts.iter_mut().zip(nulls) {
                *c += n;
            }
        }
        Ok(Arc::new(Int64Array::from(counts)))
    }

    /// The groups' sums (of type `output`), or their averages if `avg`:
    /// either of one state, for `sum(x)` and `avg(x)` side by side (see
    /// [`twins`]).
    fn output(&self, avg: bool, output: &DataType) -> Result<ArrayRef> {
        // a group without a value sums to NULL
        let nulls = {
            let valid = match &self.groups {
                SumStates::Narrow(n) => BooleanBuffer::collect_bool(n.len(), |g| n[g].count > 0),
                SumStates::Wide(w) => BooleanBuffer::collect_bool(w.len(), |g| w[g].count > 0),
            };
            Some(NullBuffer::new(valid)).filter(|n| n.null_count() > 0)
        };
        if avg {
            let div = match self.kind {
                SumKind::Int => 1.0,
                SumKind::Decimal(s) => 10f64.powi(i32::from(s)),
            };
            let avg = |sum: f64, count: i64| {
                if count > 0 {
                    sum / div / count as f64
                } else {
                    0.0
                }
            };
            let values: Vec<f64> = match &self.groups {
                SumStates::Narrow(n) => n.iter().map(|x| avg(x.sum as f64, x.count)).collect(),
                SumStates::Wide(w) => w.iter().map(|x| avg(x.sum as f64, x.count)).collect(),
            };
            return Ok(Arc::new(Float64Array::new(values.into(), nulls)));
        }
        match (self.kind, &self.groups) {
            (SumKind::Int, SumStates::Narrow(n)) => {
                let values: Vec<i64> = n.iter().map(|x| x.sum).collect();
                Ok(Arc::new(Int64Array::new(values.into(), nulls)))
            }
            (SumKind::Int, SumStates::Wide(w)) => {
                // (a group without values sums to 0)
                let values = w
                    .iter()
                    .map(|x| i64::try_from(x.sum).map_err(|_| overflow("BIGINT")))
                    .collect::<Result<Vec<i64>>>()?;
                Ok(Arc::new(Int64Array::new(values.into(), nulls)))
            }
            (SumKind::Decimal(scale), groups) => {
                const MAX: i128 = 99_999_999_999_999_999_999_999_999_999_999_999_999;
                let values: Vec<i128> = match groups {
                    // within 64 bits: far inside 38 digits
                    SumStates::Narrow(n) => n.iter().map(|x| i128::from(x.sum)).collect(),
                    SumStates::Wide(w) => {
                        if w.iter().any(|x| x.sum.abs() > MAX) {
                            return Err(overflow("DECIMAL"));
                        }
                        w.iter().map(|x| x.sum).collect()
                    }
                };
                let out = match output {
                    DataType::Decimal128(p, s) => DataType::Decimal128(*p, *s),
                    _ => DataType::Decimal128(38, scale),
                };
                let values = Decimal128Array::new(values.into(), nulls)
                    .with_data_type(DataType::Decimal128(38, scale));
                conform(Arc::new(values), &out)
            }
        }
    }
}

/// The place of an aggregate whose state another one keeps ([`twins`]):
/// it takes no rows and finishes from that state.
struct TwinAcc;

impl Accumulator for TwinAcc {
    fn resize(&mut self, _groups: usize) {}

    fn update(&mut self, _values: &ArrayRef, _groups: Option<&[u32]>) -> Result<()> {
        Ok(())
    }

    fn merge_from(&mut self, _other: &dyn Accumulator, _src: &[u32], _dst: &[u32]) -> Result<()> {
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<ArrayRef> {
        Err(Error::Internal(
            "an aggregate finished without the state it shares".into(),
        ))
    }

    fn size(&self) -> usize {
        0
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Per aggregate, another one whose state it reads instead of keeping
/// its own: `sum(x)` and `avg(x)` of one integer or DECIMAL argument (and
/// repeats of either) keep one sum and count per group, added once per
/// row; `count(x)` beside them reads that count, and `count(*)` beside
/// any of them reads it too, plus the rows whose value was NULL (counted
/// apart, [`Accumulator::count_null_rows`]): `count(*), sum(x) ... GROUP
/// BY k` touches one state per row, not two. `None` for an aggregate
/// with a state of its own.
fn twins(specs: &[AggSpec]) -> Vec<Option<usize>> {
    let sums = |s: &AggSpec| {
        matches!(s.func, AggregateFunction::Sum | AggregateFunction::Avg)
            && !s.distinct
            && s.key_type.is_none()
            && matches!(s.input, AggInput::Expr(_))
            && (s.input_type.is_integer() || matches!(s.input_type, DataType::Decimal128(..)))
    };
    let same = |a: &AggSpec, b: &AggSpec| {
        a.input_type == b.input_type
            && matches!((&a.input, &b.input), (AggInput::Expr(x), AggInput::Expr(y)) if x == y)
    };
    specs
        .iter()
        .enumerate()
        .map(|(i, s)| {
            if sums(s) {
                // (the first of a kind keeps the state)
                return specs[..i].iter().position(|o| sums(o) && same(o, s));
            }
            if s.distinct || s.key_type.is_some() {
                return None;
            }
            match (s.func, &s.input) {
                (AggregateFunction::CountStar, AggInput::Star) => specs.iter().position(sums),
                (AggregateFunction::Count, AggInput::Expr(_)) => {
                    specs.iter().position(|o| sums(o) && same(o, s))
                }
                _ => None,
            }
        })
        .collect()
}

struct FloatSumAcc {
    sums: Vec<f64>,
    counts: Vec<i64>,
    avg: bool,
}

impl Accumulator for FloatSumAcc {
    fn resize(&mut self, groups: usize) {
        self.sums.resize(groups, 0.0);
        self.counts.resize(groups, 0);
    }

    fn update(&mut self, values: &ArrayRef, groups: Option<&[u32]>) -> Result<()> {
        let values = conform(Arc::clone(values), &DataType::Float64)?;
        let array = values.as_primitive::<Float64Type>();
        match groups {
            None => {
                let (mut sum, mut count) = (0.0f64, 0i64);
                for_each_valid(array, |_, v| {
                    sum += v;
                    count += 1;
                });
                self.sums[0] += sum;
                self.counts[0] += count;
            }
            Some(ids) => {
                let (sums, counts) = (&mut self.sums, &mut self.counts);
                for_each_valid(array, |i, v| {
                    let g = ids[i] as usize;
                    sums[g] += v;
                    counts[g] += 1;
                });
            }
        }
        Ok(())
    }

    fn merge_from(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32]) -> Result<()> {
        let other = downcast::<Self>(other)?;
        for (s, g) in pairs(src, dst) {
            self.sums[g] += other.sums[s];
            self.counts[g] += other.counts[s];
        }
        Ok(())
    }

    fn size(&self) -> usize {
        self.sums.capacity() * 8 + self.counts.capacity() * 8
    }

    fn finish(self: Box<Self>) -> Result<ArrayRef> {
        let avg = self.avg;
        let values: Float64Array = self
            .sums
            .iter()
            .zip(&self.counts)
            .map(|(&s, &c)| (c > 0).then(|| if avg { s / c as f64 } else { s }))
            .collect();
        Ok(Arc::new(values))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

// ---------------------------------------------------------------- variance

/// Count, mean and sum of squared deviations from the mean of one group's
/// values: Welford's update per value, Chan's formula to merge two groups,
/// so partial states of lanes and partitions combine without the
/// cancellation of a sum-of-squares formula.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Moments {
    count: i64,
    mean: f64,
    m2: f64,
}

impl Moments {
    #[inline]
    fn add(&mut self, x: f64) {
        self.count += 1;
        let delta = x - self.mean;
        self.mean += delta / self.count as f64;
        self.m2 += delta * (x - self.mean);
    }

    fn merge(&mut self, other: &Moments) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = *other;
            return;
        }
        let (na, nb) = (self.count as f64, other.count as f64);
        let n = na + nb;
        let delta = other.mean - self.mean;
        self.mean += delta * nb / n;
        self.m2 += other.m2 + delta * delta * na * nb / n;
        self.count += other.count;
    }

    /// The variance (`sample`: over `n - 1`), or `None` under too few
    /// values.
    fn variance(&self, sample: bool) -> Option<f64> {
        let n = self.count - i64::from(sample);
        (n > 0 && self.count > 0).then(|| self.m2 / n as f64)
    }
}

/// `var_samp`, `var_pop`, `stddev_samp` and `stddev_pop`.
struct VarianceAcc {
    moments: Vec<Moments>,
    /// Divide by `n - 1` (else by `n`).
    sample: bool,
    /// Standard deviation: the square root of the variance.
    root: bool,
}

impl Accumulator for VarianceAcc {
    fn resize(&mut self, groups: usize) {
        self.moments.resize(groups, Moments::default());
    }

    fn update(&mut self, values: &ArrayRef, groups: Option<&[u32]>) -> Result<()> {
        let values = conform(Arc::clone(values), &DataType::Float64)?;
        let array = values.as_primitive::<Float64Type>();
        match groups {
            None => {
                let m = &mut self.moments[0];
                for_each_valid(array, |_, v| m.add(v));
            }
            Some(ids) => {
                let moments = &mut self.moments;
                for_each_valid(array, |i, v| moments[ids[i] as usize].add(v));
            }
        }
        Ok(())
    }

    fn merge_from(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32]) -> Result<()> {
        let other = downcast::<Self>(other)?;
        for (s, g) in pairs(src, dst) {
            self.moments[g].merge(&other.moments[s]);
        }
        Ok(())
    }

    fn size(&self) -> usize {
        self.moments.capacity() * std::mem::size_of::<Moments>()
    }

    fn finish(self: Box<Self>) -> Result<ArrayRef> {
        let values: Float64Array = self
            .moments
            .iter()
            .map(|m| {
                m.variance(self.sample)
                    .map(|v| if self.root { v.sqrt() } else { v })
            })
            .collect();
        Ok(Arc::new(values))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

// ---------------------------------------------------------------- arg_min / arg_max

/// A key and its value, row-encoded.
type KeyedRow = (Box<[u8]>, Box<[u8]>);

/// `arg_min|arg_max(x, y)`: per group, the best key and its value, both
/// in Arrow's row format, whose bytes compare as the values sort. Rows
/// where `x` or `y` is NULL are skipped, as in DuckDB; on ties the first
/// row seen is kept.
struct ArgMinMax {
    min: bool,
    value_type: DataType,
    key_type: DataType,
    values: RowConverter,
    keys: RowConverter,
    best: Vec<Option<KeyedRow>>,
}

impl ArgMinMax {
    fn new(min: bool, value_type: &DataType, key_type: &DataType) -> Result<Self> {
        let converter =
            |t: &DataType| RowConverter::new(vec![SortField::new(t.clone())]).map_err(Error::arrow);
        Ok(ArgMinMax {
            min,
            value_type: value_type.clone(),
            key_type: key_type.clone(),
            values: converter(value_type)?,
            keys: converter(key_type)?,
            best: Vec::new(),
        })
    }

    fn better(&self, key: &[u8], current: &Option<KeyedRow>) -> bool {
        match current {
            None => true,
            Some((k, _)) if self.min => key < &k[..],
            Some((k, _)) => key > &k[..],
        }
    }
}

impl Accumulator for ArgMinMax {
    fn resize(&mut self, groups: usize) {
        self.best.resize(groups, None);
    }

    fn update(&mut self, _values: &ArrayRef, _groups: Option<&[u32]>) -> Result<()> {
        Err(Error::Internal("arg_min/arg_max without its key".into()))
    }

    fn update_keyed(
        &mut self,
        values: &ArrayRef,
        keys: &ArrayRef,
        groups: Option<&[u32]>,
    ) -> Result<()> {
        if values.data_type() == &DataType::Null || keys.data_type() == &DataType::Null {
            return Ok(());
        }
        let values = conform(Arc::clone(values), &self.value_type)?;
        let keys = conform(Arc::clone(keys), &self.key_type)?;
        let (value_nulls, key_nulls) = (values.logical_nulls(), keys.logical_nulls());
        let value_rows = self
            .values
            .convert_columns(std::slice::from_ref(&values))
            .map_err(Error::arrow)?;
        let key_rows = self
            .keys
            .convert_columns(std::slice::from_ref(&keys))
            .map_err(Error::arrow)?;
        for i in 0..values.len() {
            if value_nulls.as_ref().is_some_and(|n| n.is_null(i))
                || key_nulls.as_ref().is_some_and(|n| n.is_null(i))
            {
                continue;
            }
            let g = groups.map_or(0, |ids| ids[i] as usize);
            let key = key_rows.row(i);
            if self.better(key.as_ref(), &self.best[g]) {
                self.best[g] = Some((key.as_ref().into(), value_rows.row(i).as_ref().into()));
            }
        }
        Ok(())
    }

    fn merge_from(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32]) -> Result<()> {
        let other = downcast::<Self>(other)?;
        for (s, g) in pairs(src, dst) {
            if let Some((key, _)) = &other.best[s]
                && self.better(key, &self.best[g])
            {
                self.best[g] = other.best[s].clone();
            }
        }
        Ok(())
    }

    fn size(&self) -> usize {
        self.best.capacity() * 40
            + self
                .best
                .iter()
                .flatten()
                .map(|(k, v)| k.len() + v.len())
                .sum::<usize>()
    }

    fn finish(self: Box<Self>) -> Result<ArrayRef> {
        // groups without a pair get the row encoding of a NULL value
        let null = arrow::array::new_null_array(&self.value_type, 1);
        let null_rows = self.values.convert_columns(&[null]).map_err(Error::arrow)?;
        let null_row = null_rows.row(0);
        let parser = self.values.parser();
        let rows: Vec<_> = self
            .best
            .iter()
            .map(|b| match b {
                Some((_, v)) => parser.parse(v),
                None => null_row,
            })
            .collect();
        let mut columns = self.values.convert_rows(rows).map_err(Error::arrow)?;
        columns
            .pop()
            .ok_or_else(|| Error::Internal("arg_min/arg_max produced no column".into()))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

// ---------------------------------------------------------------- string_agg

/// `string_agg(x, sep)`: per group, the non-NULL values joined by the
/// (constant) separator, in the order lanes and merges meet them.
#[derive(Default)]
struct StringAgg {
    separator: Option<String>,
    /// The separator is a typed NULL: every result is NULL.
    null_separator: bool,
    joined: Vec<Option<String>>,
}

impl StringAgg {
    fn append(&mut self, g: usize, value: &str) {
        match &mut self.joined[g] {
            Some(s) => {
                s.push_str(self.separator.as_deref().unwrap_or_default());
                s.push_str(value);
            }
            slot @ None => *slot = Some(value.to_owned()),
        }
    }
}

impl Accumulator for StringAgg {
    fn resize(&mut self, groups: usize) {
        self.joined.resize(groups, None);
    }

    fn update(&mut self, _values: &ArrayRef, _groups: Option<&[u32]>) -> Result<()> {
        Err(Error::Internal("string_agg without its separator".into()))
    }

    fn update_keyed(
        &mut self,
        values: &ArrayRef,
        separators: &ArrayRef,
        groups: Option<&[u32]>,
    ) -> Result<()> {
        if values.data_type() == &DataType::Null {
            return Ok(());
        }
        if self.separator.is_none() && !separators.is_empty() {
            let separators = conform(Arc::clone(separators), &DataType::Utf8)?;
            let separators = separators.as_string::<i32>();
            self.null_separator = separators.is_null(0);
            self.separator = Some(separators.value(0).to_owned());
        }
        let values = conform(Arc::clone(values), &DataType::Utf8)?;
        let values = values.as_string::<i32>();
        for i in 0..values.len() {
            if values.is_valid(i) {
                self.append(groups.map_or(0, |ids| ids[i] as usize), values.value(i));
            }
        }
        Ok(())
    }

    fn merge_from(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32]) -> Result<()> {
        let other = downcast::<Self>(other)?;
        if self.separator.is_none() {
            self.separator.clone_from(&other.separator);
            self.null_separator = other.null_separator;
        }
        for (s, g) in pairs(src, dst) {
            if let Some(v) = &other.joined[s] {
                self.append(g, v);
            }
        }
        Ok(())
    }

    fn size(&self) -> usize {
        self.joined.capacity() * 24 + self.joined.iter().flatten().map(String::len).sum::<usize>()
    }

    fn finish(self: Box<Self>) -> Result<ArrayRef> {
        if self.null_separator {
            return Ok(arrow::array::new_null_array(
                &DataType::Utf8,
                self.joined.len(),
            ));
        }
        let values: StringArray = self.joined.into_iter().collect();
        Ok(Arc::new(values))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

// ---------------------------------------------------------------- min / max

struct PrimMinMax<T: ArrowPrimitiveType> {
    values: Vec<T::Native>,
    seen: Vec<bool>,
    min: bool,
    data_type: DataType,
}

impl<T: ArrowPrimitiveType> PrimMinMax<T> {
    fn new(min: bool, data_type: &DataType) -> Self {
        PrimMinMax {
            values: Vec::new(),
            seen: Vec::new(),
            min,
            data_type: data_type.clone(),
        }
    }

    #[inline]
    fn better(min: bool, candidate: T::Native, current: T::Native) -> bool {
        if min {
            candidate.is_lt(current)
        } else {
            candidate.is_gt(current)
        }
    }

    fn offer(&mut self, g: usize, v: T::Native) {
        if !self.seen[g] || Self::better(self.min, v, self.values[g]) {
            self.values[g] = v;
            self.seen[g] = true;
        }
    }

    /// [`Self::offer`] of each valid row of `array` to its group `ids[i]`,
    /// without a branch on the values (whether a row beats its group's
    /// best is as good as random): a select, then the stores.
    fn offer_rows<const MIN: bool>(&mut self, array: &PrimitiveArray<T>, ids: &[u32]) {
        let (values, seen) = (&mut self.values, &mut self.seen);
        for_each_valid(array, |i, v| {
            let g = ids[i] as usize;
            let current = values[g];
            let take = !seen[g] | Self::better(MIN, v, current);
            values[g] = if take { v } else { current };
            seen[g] = true;
        });
    }
}

impl<T: ArrowPrimitiveType> Accumulator for PrimMinMax<T> {
    fn resize(&mut self, groups: usize) {
        self.values.resize(groups, T::Native::default());
        self.seen.resize(groups, false);
    }

    fn update(&mut self, values: &ArrayRef, groups: Option<&[u32]>) -> Result<()> {
        let values = conform(Arc::clone(values), &self.data_type)?;
        let array = values.as_primitive::<T>();
        match groups {
            None => {
                let min = self.min;
                let mut best: Option<T::Native> = None;
                for_each_valid(array, |_, v| {
                    if best.is_none_or(|b| Self::better(min, v, b)) {
                        best = Some(v);
                    }
                });
                if let Some(b) = best {
                    self.offer(0, b);
                }
            }
            Some(ids) if self.min => self.offer_rows::<true>(array, ids),
            Some(ids) => self.offer_rows::<false>(array, ids),
        }
        Ok(())
    }

    fn merge_from(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32]) -> Result<()> {
        let other = downcast::<Self>(other)?;
        for (s, g) in pairs(src, dst) {
            if other.seen[s] {
                self.offer(g, other.values[s]);
            }
        }
        Ok(())
    }

    fn size(&self) -> usize {
        self.values.capacity() * std::mem::size_of::<T::Native>() + self.seen.capacity()
    }

    fn finish(self: Box<Self>) -> Result<ArrayRef> {
        let nulls = arrow::buffer::NullBuffer::from(self.seen.clone());
        let array = PrimitiveArray::<T>::new(self.values.into(), Some(nulls))
            .with_data_type(self.data_type.clone());
        Ok(Arc::new(array))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `min`/`max` of the non-primitive types (VARCHAR, BOOLEAN): the best
/// value per group, by the type's own order (`false < true`).
struct OrdMinMax<T> {
    values: Vec<Option<T>>,
    min: bool,
}

impl<T> OrdMinMax<T> {
    fn new(min: bool) -> Self {
        OrdMinMax {
            values: Vec::new(),
            min,
        }
    }

    /// Keeps `v` for group `g` if it beats the value there; copies it only
    /// then.
    fn offer<Q>(&mut self, g: usize, v: &Q)
    where
        Q: ?Sized + Ord + ToOwned<Owned = T>,
        T: std::borrow::Borrow<Q>,
    {
        let replace = match &self.values[g] {
            None => true,
            Some(cur) if self.min => v < cur.borrow(),
            Some(cur) => v > cur.borrow(),
        };
        if replace {
            self.values[g] = Some(v.to_owned());
        }
    }
}

/// How an [`OrdMinMax`] reads its input and builds its result.
trait MinMaxValue: Sized + Send + 'static {
    fn update(acc: &mut OrdMinMax<Self>, values: &ArrayRef, groups: Option<&[u32]>) -> Result<()>;
    fn finish(values: Vec<Option<Self>>) -> ArrayRef;
}

impl MinMaxValue for String {
    fn update(acc: &mut OrdMinMax<Self>, values: &ArrayRef, groups: Option<&[u32]>) -> Result<()> {
        let values = conform(Arc::clone(values), &DataType::Utf8)?;
        let array = values.as_string::<i32>();
        match groups {
            None => {
                let best = if acc.min {
                    arrow::compute::min_string(array)
                } else {
                    arrow::compute::max_string(array)
                };
                if let Some(b) = best {
                    acc.offer(0, b);
                }
            }
            Some(ids) => {
                for (i, v) in array.iter().enumerate() {
                    if let Some(v) = v {
                        acc.offer(ids[i] as usize, v);
                    }
                }
            }
        }
        Ok(())
    }

    fn finish(values: Vec<Option<Self>>) -> ArrayRef {
        Arc::new(StringArray::from(values))
    }
}

impl MinMaxValue for bool {
    fn update(acc: &mut OrdMinMax<Self>, values: &ArrayRef, groups: Option<&[u32]>) -> Result<()> {
        for (i, v) in values.as_boolean().iter().enumerate() {
            if let Some(v) = v {
                acc.offer(groups.map_or(0, |ids| ids[i] as usize), &v);
            }
        }
        Ok(())
    }

    fn finish(values: Vec<Option<Self>>) -> ArrayRef {
        Arc::new(BooleanArray::from(values))
    }
}

impl<T: MinMaxValue + Ord + Clone + Sync> Accumulator for OrdMinMax<T> {
    fn resize(&mut self, groups: usize) {
        self.values.resize(groups, None);
    }

    fn update(&mut self, values: &ArrayRef, groups: Option<&[u32]>) -> Result<()> {
        T::update(self, values, groups)
    }

    fn merge_from(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32]) -> Result<()> {
        let other = downcast::<Self>(other)?;
        for (s, g) in pairs(src, dst) {
            if let Some(v) = &other.values[s] {
                self.offer(g, v);
            }
        }
        Ok(())
    }

    fn size(&self) -> usize {
        self.values.capacity() * std::mem::size_of::<Option<T>>()
    }

    fn finish(self: Box<Self>) -> Result<ArrayRef> {
        Ok(T::finish(self.values))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

// ---------------------------------------------------------------- distinct

/// `count|sum|avg|var_*|stddev_*(DISTINCT x)`: the set of distinct non-NULL values per
/// group ([`DistinctKind`]), aggregated at the end.
struct DistinctAcc {
    func: AggregateFunction,
    input_type: DataType,
    output_type: DataType,
    converter: RowConverter,
    /// How values are kept: as words, as string bytes or row-encoded.
    kind: DistinctKind,
    /// Per group its values as words ([`DistinctKind::Words`]).
    words: Vec<FxHashSet<u64>>,
    /// Per group its values' bytes (the other kinds).
    sets: Vec<FxHashSet<Box<[u8]>>>,
}

/// How a [`DistinctAcc`] keeps its values. `count(DISTINCT x)` only counts
/// them: an integer (or date, time, timestamp) is kept as one word and a
/// string as its bytes, neither row-encoded; any other argument or
/// function keeps row-encoded values, decoded again to compute `f`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum DistinctKind {
    Words,
    Strings,
    Rows,
}

/// Each value of `values` (of an integer, date, time or timestamp type)
/// as a 64-bit word, equal words for equal values; `None` for other types.
fn distinct_words(values: &ArrayRef) -> Option<Vec<u64>> {
    fn words<T: ArrowPrimitiveType>(a: &ArrayRef, word: impl Fn(T::Native) -> u64) -> Vec<u64> {
        a.as_primitive::<T>()
            .values()
            .iter()
            .map(|&v| word(v))
            .collect()
    }
    use arrow::datatypes::*;
    Some(match values.data_type() {
        DataType::Int8 => words::<Int8Type>(values, |v| v as u64),
        DataType::Int16 => words::<Int16Type>(values, |v| v as u64),
        DataType::Int32 => words::<Int32Type>(values, |v| v as u64),
        DataType::Int64 => words::<Int64Type>(values, |v| v as u64),
        DataType::UInt8 => words::<UInt8Type>(values, u64::from),
        DataType::UInt16 => words::<UInt16Type>(values, u64::from),
        DataType::UInt32 => words::<UInt32Type>(values, u64::from),
        DataType::UInt64 => words::<UInt64Type>(values, |v| v),
        DataType::Date32 => words::<Date32Type>(values, |v| v as u64),
        DataType::Date64 => words::<Date64Type>(values, |v| v as u64),
        DataType::Time32(_) | DataType::Time64(_) | DataType::Timestamp(_, _) => {
            let v = cast(values, &DataType::Int64).ok()?;
            words::<Int64Type>(&v, |v| v as u64)
        }
        _ => return None,
    })
}

impl DistinctAcc {
    fn new(spec: &AggSpec) -> Result<Self> {
        let converter = RowConverter::new(vec![SortField::new(spec.input_type.clone())])
            .map_err(Error::arrow)?;
        let t = &spec.input_type;
        let kind = match spec.func {
            AggregateFunction::Count
                if distinct_words(&arrow::array::new_empty_array(t)).is_some() =>
            {
                DistinctKind::Words
            }
            AggregateFunction::Count if matches!(t, DataType::Utf8 | DataType::LargeUtf8) => {
                DistinctKind::Strings
            }
            _ => DistinctKind::Rows,
        };
        Ok(DistinctAcc {
            func: spec.func,
            input_type: spec.input_type.clone(),
            output_type: spec.output_type.clone(),
            converter,
            kind,
            words: Vec::new(),
            sets: Vec::new(),
        })
    }
}

impl Accumulator for DistinctAcc {
    fn resize(&mut self, groups: usize) {
        match self.kind {
            DistinctKind::Words => self.words.resize_with(groups, FxHashSet::default),
            _ => self.sets.resize_with(groups, FxHashSet::default),
        }
    }

    fn update(&mut self, values: &ArrayRef, groups: Option<&[u32]>) -> Result<()> {
        if values.data_type() == &DataType::Null {
            return Ok(());
        }
        let values = conform(Arc::clone(values), &self.input_type)?;
        let nulls = values.logical_nulls().filter(|n| n.null_count() > 0);
        let valid = |i: usize| nulls.as_ref().is_none_or(|n| n.is_valid(i));
        let group = |i: usize| groups.map_or(0, |ids| ids[i] as usize);
        match self.kind {
            DistinctKind::Words => {
                let words = distinct_words(&values).ok_or_else(|| {
                    Error::Internal("count(DISTINCT) of words over another type".into())
                })?;
                for (i, w) in words.into_iter().enumerate() {
                    if valid(i) {
                        self.words[group(i)].insert(w);
                    }
                }
            }
            DistinctKind::Strings => {
                let add = |sets: &mut Vec<FxHashSet<Box<[u8]>>>, i: usize, bytes: &[u8]| {
                    let set = &mut sets[group(i)];
                    if !set.contains(bytes) {
                        set.insert(bytes.into());
                    }
                };
                match values.data_type() {
                    DataType::LargeUtf8 => {
                        for (i, v) in values.as_string::<i64>().iter().enumerate() {
                            if let Some(v) = v.filter(|_| valid(i)) {
                                add(&mut self.sets, i, v.as_bytes());
                            }
                        }
                    }
                    _ => {
                        for (i, v) in values.as_string::<i32>().iter().enumerate() {
                            if let Some(v) = v.filter(|_| valid(i)) {
                                add(&mut self.sets, i, v.as_bytes());
                            }
                        }
                    }
                }
            }
            DistinctKind::Rows => {
                let rows = self
                    .converter
                    .convert_columns(std::slice::from_ref(&values))
                    .map_err(Error::arrow)?;
                for (i, row) in rows.iter().enumerate() {
                    if !valid(i) {
                        continue;
                    }
                    let set = &mut self.sets[group(i)];
                    if !set.contains(row.as_ref()) {
                        set.insert(row.as_ref().into());
                    }
                }
            }
        }
        Ok(())
    }

    fn merge_from(&mut self, other: &dyn Accumulator, src: &[u32], dst: &[u32]) -> Result<()> {
        let other = downcast::<Self>(other)?;
        for (s, g) in pairs(src, dst) {
            if self.kind == DistinctKind::Words {
                self.words[g].extend(&other.words[s]);
                continue;
            }
            let set = &mut self.sets[g];
            for value in &other.sets[s] {
                if !set.contains(value) {
                    set.insert(value.clone());
                }
            }
        }
        Ok(())
    }

    fn size(&self) -> usize {
        let words = self.words.iter().map(|s| s.capacity() * 9).sum::<usize>();
        self.sets
            .iter()
            .map(|s| s.capacity() * 24 + s.iter().map(|v| v.len()).sum::<usize>())
            .sum::<usize>()
            + (self.sets.capacity() + self.words.capacity()) * 48
            + words
    }

    fn finish(self: Box<Self>) -> Result<ArrayRef> {
        if self.func == AggregateFunction::Count {
            let counts: Int64Array = match self.kind {
                DistinctKind::Words => self.words.iter().map(|s| Some(s.len() as i64)).collect(),
                _ => self.sets.iter().map(|s| Some(s.len() as i64)).collect(),
            };
            return Ok(Arc::new(counts));
        }
        let parser = self.converter.parser();
        let mut parts = Vec::with_capacity(self.sets.len());
        for set in &self.sets {
            let values = self
                .converter
                .convert_rows(set.iter().map(|bytes| parser.parse(bytes)))
                .map_err(Error::arrow)?;
            let mut acc = new_plain_accumulator(self.func, &self.input_type, &self.output_type)?;
            acc.resize(1);
            if let Some(v) = values.first() {
                acc.update(v, None)?;
            }
            parts.push(acc.finish()?);
        }
        if parts.is_empty() {
            return Ok(arrow::array::new_empty_array(&self.output_type));
        }
        let refs: Vec<&dyn Array> = parts.iter().map(|p| p.as_ref()).collect();
        arrow::compute::concat(&refs).map_err(Error::arrow)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use arrow::row::{RowConverter, SortField};
    use rand::{Rng, SeedableRng, rngs::StdRng};

    use super::groups::radix;
    use super::*;
    use crate::hash::hash_bytes;

    #[test]
    fn keys_of_one_radix_bucket_keep_distinct_tags() {
        // hashbrown tags each slot with the top 7 bits of its hash: the keys
        // merged by one partition must not share them, or every probe of
        // the partition's table compares keys
        let converter = RowConverter::new(vec![SortField::new(DataType::Int64)]).unwrap();
        let keys: ArrayRef = Arc::new(Int64Array::from_iter_values(0..1 << 16));
        let rows = converter.convert_columns(&[keys]).unwrap();
        let tags: std::collections::HashSet<u64> = rows
            .iter()
            .map(|r| hash_bytes(r.as_ref()))
            .filter(|&h| radix(h) == 0)
            .map(|h| h >> 57)
            .collect();
        assert!(tags.len() > 100, "{} tags in bucket 0", tags.len());
    }

    #[test]
    fn terms_two_arguments_compute_are_computed_once() {
        use weir_planner::{ScalarFunction, ScalarValue};
        let col = |i: usize| Expr::column(i, format!("c{i}"));
        let one = || Expr::Literal(ScalarValue::Int64(1));
        let mul = |a, b| Expr::binary(a, BinaryOp::Multiply, b);
        let disc = || mul(col(0), Expr::binary(one(), BinaryOp::Minus, col(1)));
        let charge = mul(disc(), Expr::binary(one(), BinaryOp::Plus, col(2)));
        let quotient = || Expr::binary(col(0), BinaryOp::Divide, col(1));
        let guarded = || Expr::Case {
            when_then: vec![(
                Expr::binary(
                    col(1),
                    BinaryOp::NotEq,
                    Expr::Literal(ScalarValue::Int64(0)),
                ),
                quotient(),
            )],
            else_expr: None,
        };
        let random = || Expr::Function {
            func: ScalarFunction::Random,
            args: vec![],
        };
        let inputs = vec![
            AggInput::Expr(disc()),
            AggInput::Expr(charge),
            AggInput::Star,
            // a term under a CASE runs on some rows only: never hoisted,
            // though the CASE as a whole may be
            AggInput::Expr(mul(guarded(), col(2))),
            AggInput::Expr(mul(quotient(), col(2))),
            AggInput::Expr(random()),
            AggInput::Expr(random()),
            AggInput::Expr(col(2)),
            AggInput::Expr(col(2)),
        ];
        let (shared, out) = shared_terms(inputs, 3);
        assert_eq!(shared, vec![disc()]);
        let shared_col = Expr::column(3, "__shared0");
        let args: Vec<Option<Expr>> = out
            .into_iter()
            .map(|i| match i {
                AggInput::Expr(e) => Some(e),
                _ => None,
            })
            .collect();
        assert_eq!(args[0], Some(shared_col.clone()));
        assert_eq!(
            args[1],
            Some(mul(shared_col, Expr::binary(one(), BinaryOp::Plus, col(2))))
        );
        assert_eq!(args[2], None);
        assert_eq!(args[3], Some(mul(guarded(), col(2))));
        assert_eq!(args[4], Some(mul(quotient(), col(2))));
        assert_eq!(args[5], Some(random()));
        assert_eq!(args[8], Some(col(2)));
    }

    /// The sums of `acc`'s groups, as the i128 of their states.
    fn sums(acc: &SumAcc) -> Vec<(i128, i64)> {
        (0..acc.len())
            .map(|g| acc.groups.get(g))
            .map(|s| (s.sum, s.count))
            .collect()
    }

    #[test]
    fn a_sum_leaving_64_bits_widens_every_group_from_that_row_on() {
        let mut acc = SumAcc::new(SumKind::Int, false, &DataType::Int64);
        // more groups than the few-group path takes
        acc.resize(FEW_GROUPS + 1);
        // group 1 leaves i64 at its second value; rows around it, of both
        // groups, must each count once
        let values: ArrayRef = Arc::new(Int64Array::from(vec![
            Some(5),
            Some(i64::MAX),
            None,
            Some(7),
            Some(3),
            Some(-10),
        ]));
        acc.update(&values, Some(&[0, 1, 0, 0, 1, 1])).unwrap();
        assert!(matches!(acc.groups, SumStates::Wide(_)));
        assert_eq!(
            sums(&acc)[..2],
            [(12, 2), (i128::from(i64::MAX) - 7, 3)],
            "the values before, at and after the row that widened"
        );
        // the wide states go on taking rows, and back within BIGINT the
        // result is exact
        let out = Box::new(acc).finish().unwrap();
        let out = out.as_primitive::<Int64Type>();
        assert_eq!(out.values()[..2], [12, i64::MAX - 7]);
        assert_eq!(out.null_count(), FEW_GROUPS - 1);
    }

    #[test]
    fn a_few_groups_sum_and_count_by_turns_as_one_state_would() {
        let mut rng = StdRng::seed_from_u64(3);
        let rows = 1000;
        let ids: Vec<u32> = (0..rows).map(|_| rng.random_range(0..5)).collect();
        let values: Vec<Option<i64>> = (0..rows)
            .map(|_| (rng.random_range(0..10) > 0).then(|| rng.random_range(-1000..1000)))
            .collect();
        let mut want = [(0i128, 0i64); 5];
        for (v, &g) in values.iter().zip(&ids) {
            if let Some(v) = v {
                want[g as usize].0 += i128::from(*v);
                want[g as usize].1 += 1;
            }
        }
        let mut acc = SumAcc::new(SumKind::Int, false, &DataType::Int64);
        acc.resize(5);
        let array: ArrayRef = Arc::new(Int64Array::from(values));
        // twice, the second time onto the sums of the first
        acc.update(&array, Some(&ids)).unwrap();
        acc.update(&array, Some(&ids)).unwrap();
        let twice: Vec<(i128, i64)> = want.iter().map(|&(s, c)| (2 * s, 2 * c)).collect();
        assert_eq!(sums(&acc), twice);
        let mut count = CountAcc::default();
        count.resize(5);
        count.update_rows(rows, Some(&ids)).unwrap();
        let per_group: Vec<i64> = (0..5)
            .map(|g| ids.iter().filter(|&&i| i == g).count() as i64)
            .collect();
        assert_eq!(count.counts, per_group);
        // a group's total past 64 bits widens the states; past 128 bits
        // it is the overflow error
        let big: ArrayRef = Arc::new(Int64Array::from(vec![i64::MAX, i64::MAX, 1]));
        acc.update(&big, Some(&[4, 4, 0])).unwrap();
        assert!(matches!(acc.groups, SumStates::Wide(_)));
        assert_eq!(sums(&acc)[4].0, twice[4].0 + 2 * i128::from(i64::MAX));
        let mut dec = SumAcc::new(SumKind::Decimal(0), false, &DataType::Decimal128(38, 0));
        dec.resize(2);
        let huge: ArrayRef = Arc::new(
            Decimal128Array::from(vec![i128::MAX / 2 + 1; 2])
                .with_precision_and_scale(38, 0)
                .unwrap(),
        );
        assert!(dec.update(&huge, Some(&[1, 1])).is_err());
    }

    #[test]
    fn a_sum_without_groups_adds_chunks_unchecked_and_checks_their_totals() {
        // DECIMAL(36,0) values near the type's bound, of both signs, over
        // a length no multiple of the chunk: the exact sum
        let mut rng = StdRng::seed_from_u64(11);
        let bound = 10i128.pow(36) - 1;
        let values: Vec<i128> = (0..64 * 5 + 7)
            .map(|_| rng.random_range(-bound..=bound))
            .collect();
        let want: i128 = values.iter().sum();
        let mut acc = SumAcc::new(SumKind::Decimal(0), false, &DataType::Decimal128(38, 0));
        acc.resize(1);
        let array: ArrayRef = Arc::new(
            Decimal128Array::from(values)
                .with_precision_and_scale(36, 0)
                .unwrap(),
        );
        acc.update(&array, None).unwrap();
        assert_eq!(sums(&acc), [(want, 64 * 5 + 7)]);
        // 200 values of 10^36 - 1 leave i128 only past 170 of them: the
        // chunks' totals are checked, so it is the overflow error
        let big: ArrayRef = Arc::new(
            Decimal128Array::from(vec![bound; 200])
                .with_precision_and_scale(36, 0)
                .unwrap(),
        );
        let mut acc = SumAcc::new(SumKind::Decimal(0), false, &DataType::Decimal128(38, 0));
        acc.resize(1);
        assert!(acc.update(&big, None).is_err());
    }

    #[test]
    fn a_few_groups_sum_without_nulls_is_exact_across_chunks_of_small_and_large_values() {
        let mut rng = StdRng::seed_from_u64(7);
        let rows = 3 * FEW_CHUNK + 17;
        let mut ids: Vec<u32> = (0..rows).map(|_| rng.random_range(0..6)).collect();
        let limit = FEW_NARROW_MAX as i128;
        let mut values: Vec<i128> = (0..rows)
            .map(|_| rng.random_range(-limit + 1..limit))
            .collect();
        // the second chunk holds values too large for 64-bit chunk sums
        // (four of them leave i64), the third one that leaves i64 itself,
        // though its low 64 bits are small: each is added in 128 bits,
        // the others in 64
        for k in 0..4 {
            values[FEW_CHUNK + 4 * k] = i128::from(i64::MAX / 2);
            ids[FEW_CHUNK + 4 * k] = 1;
        }
        values[2 * FEW_CHUNK + 9] = (1 << 64) + 3;
        let mut want = [(0i128, 0i64); 6];
        for (&v, &g) in values.iter().zip(&ids) {
            want[g as usize].0 += v;
            want[g as usize].1 += 1;
        }
        let mut acc = SumAcc::new(SumKind::Decimal(2), false, &DataType::Decimal128(38, 2));
        acc.resize(6);
        let array: ArrayRef = Arc::new(
            Decimal128Array::from(values)
                .with_precision_and_scale(38, 2)
                .unwrap(),
        );
        acc.update(&array, Some(&ids)).unwrap();
        assert_eq!(sums(&acc), want);
        // chunk sums of every value at the bound stay exact too
        let mut acc = SumAcc::new(SumKind::Int, false, &DataType::Int64);
        acc.resize(1);
        let edge = FEW_NARROW_MAX as i64 - 1;
        let array: ArrayRef = Arc::new(Int64Array::from(vec![edge; 2 * FEW_CHUNK]));
        acc.update(&array, Some(&vec![0; 2 * FEW_CHUNK])).unwrap();
        assert_eq!(
            sums(&acc),
            [(
                i128::from(edge) * 2 * FEW_CHUNK as i128,
                2 * FEW_CHUNK as i64
            )]
        );
    }

    #[test]
    fn a_decimal_beyond_64_bits_widens_before_it_is_added() {
        let mut acc = SumAcc::new(SumKind::Decimal(0), false, &DataType::Decimal128(38, 0));
        acc.resize(1);
        let big = i128::from(i64::MAX) * 4;
        let values: ArrayRef = Arc::new(
            Decimal128Array::from(vec![1, big, 2])
                .with_precision_and_scale(38, 0)
                .unwrap(),
        );
        acc.update(&values, Some(&[0, 0, 0])).unwrap();
        assert_eq!(sums(&acc), vec![(big + 3, 3)]);
    }

    #[test]
    fn merging_narrow_and_wide_sums_is_exact_in_every_order() {
        let state = |values: Vec<i64>| {
            let mut acc = SumAcc::new(SumKind::Int, false, &DataType::Int64);
            acc.resize(2);
            let ids: Vec<u32> = (0..values.len() as u32).map(|i| i % 2).collect();
            acc.update(
                &(Arc::new(Int64Array::from(values)) as ArrayRef),
                Some(&ids),
            )
            .unwrap();
            acc
        };
        let max = i128::from(i64::MAX);
        // narrow into narrow, overflowing at the second pair: the first
        // pair stays as merged, the rest goes on wide
        let mut mine = state(vec![1, i64::MAX]);
        let theirs = state(vec![2, 1]);
        mine.merge_from(&theirs, &[0, 1], &[0, 1]).unwrap();
        assert!(matches!(mine.groups, SumStates::Wide(_)));
        assert_eq!(sums(&mine), vec![(3, 2), (max + 1, 2)]);
        // wide into narrow
        let mut narrow = state(vec![4, 5]);
        narrow.merge_from(&mine, &[0, 1], &[1, 0]).unwrap();
        assert_eq!(sums(&narrow), vec![(max + 5, 3), (8, 3)]);
        // narrow into wide
        mine.merge_from(&state(vec![10, 20]), &[1], &[1]).unwrap();
        assert_eq!(sums(&mine), vec![(3, 2), (max + 21, 3)]);
        // add_i128 of group 0 widens as well
        let mut total = state(vec![1]);
        total.add_i128(max, 1).unwrap();
        assert_eq!(sums(&total)[0], (max + 1, 2));
    }

    #[test]
    fn merged_moments_keep_the_variance_of_large_close_values() {
        // 1e12 + 0..30 in three interleaved partials, merged by Chan's
        // formula: the population variance of 0..30 is (30^2 - 1) / 12
        let mut parts = [Moments::default(); 3];
        for i in 0..30 {
            parts[i % 3].add(1e12 + i as f64);
        }
        let mut all = Moments::default();
        for p in &parts {
            all.merge(p);
        }
        assert_eq!(all.count, 30);
        assert!((all.variance(false).unwrap() - 899.0 / 12.0).abs() < 1e-6);
        assert!((all.variance(true).unwrap() - 77.5).abs() < 1e-6);
        assert_eq!(Moments::default().variance(false), None);
        let mut one = Moments::default();
        one.add(5.0);
        assert_eq!(one.variance(false), Some(0.0));
        assert_eq!(one.variance(true), None);
    }

    /// `GROUP BY k, n` with `count(*), sum(v)` over (k VARCHAR, n BIGINT,
    /// v BIGINT).
    fn spill_plan() -> AggregatePlan {
        use arrow::datatypes::Field;
        use weir_planner::AggregateExpr;
        let input = Schema::new(vec![
            Field::new("k", DataType::Utf8, false),
            Field::new("n", DataType::Int64, true),
            Field::new("v", DataType::Int64, false),
        ]);
        let out = Arc::new(Schema::new(vec![
            Field::new("k", DataType::Utf8, false),
            Field::new("n", DataType::Int64, true),
            Field::new("count", DataType::Int64, false),
            Field::new("sum", DataType::Int64, true),
        ]));
        let agg = |func, arg| AggregateExpr {
            func,
            arg,
            key: None,
            distinct: false,
            order_by: Vec::new(),
        };
        AggregatePlan::new(
            &[Expr::column(0, "k"), Expr::column(1, "n")],
            &[
                agg(AggregateFunction::CountStar, None),
                agg(AggregateFunction::Sum, Some(Expr::column(2, "v"))),
            ],
            &input,
            out,
        )
        .unwrap()
    }

    type Key = (String, Option<i64>);

    #[test]
    fn lanes_that_put_rows_aside_merge_each_group_once_whatever_their_layouts() {
        // 400K groups in no order over 2 x 200K rows: each lane's table
        // passes SPILL_FROM groups with most rows new, and the lane puts
        // the rest of its rows aside (its table holds too few of their
        // groups for them to fold). Lane 1 then meets a key too long for
        // one word and one too long for two (its table widens to rows and
        // sorts its rows aside again); lane 0 widens when the lanes
        // unify. NULLs in `n`.
        let plan = spill_plan();
        let mut rng = StdRng::seed_from_u64(41);
        let mut want: std::collections::HashMap<Key, (i64, i64)> = Default::default();
        let mut lanes = Vec::new();
        for lane in 0..2 {
            let mut state = plan.new_lane_state(2).unwrap();
            for batch in 0..4 {
                let rows = if batch == 3 { 8_000 } else { 64_000 };
                let mut keys: Vec<Key> = (0..rows)
                    .map(|_| {
                        let g = rng.random_range(0..400_000i64);
                        let n = (g % 97 != 0).then_some(g / 1000);
                        (format!("{:x}", g % 1000), n)
                    })
                    .collect();
                if lane == 1 && batch == 2 {
                    keys[5].0 = "ten chars!".into();
                }
                if lane == 1 && batch == 3 {
                    keys[7].0 = "a key of twenty byte".into();
                }
                let v: Vec<i64> = (0..rows as i64).map(|i| i % 13).collect();
                add_rows(&plan, &mut state, &mut want, &keys, v);
            }
            // the first two batches went to the table, the rest aside
            assert_eq!(state.rows, 128_000, "lane {lane}");
            assert_eq!(state.rows_put_aside(), 72_000, "lane {lane}");
            lanes.push(Box::new(state).partition().unwrap());
        }
        let layouts = |lanes: &[PartitionedState]| -> Vec<Layout> {
            lanes
                .iter()
                .map(|l| l.state.groups.as_ref().unwrap().layout())
                .collect()
        };
        assert_eq!(layouts(&lanes), [Layout::Tiny, Layout::Rows]);
        unify_layouts(&plan, &mut lanes).unwrap();
        assert_eq!(layouts(&lanes), [Layout::Rows, Layout::Rows]);
        let got = merged_groups(&plan, &lanes);
        assert_eq!(got.len(), want.len());
        assert!(got == want, "the merged groups differ");
    }

    /// Adds rows (`keys`, `v`) to `state` and to the expected (count,
    /// sum) per key.
    fn add_rows(
        plan: &AggregatePlan,
        state: &mut AggregateState,
        want: &mut std::collections::HashMap<Key, (i64, i64)>,
        keys: &[Key],
        v: Vec<i64>,
    ) {
        for (key, &v) in keys.iter().zip(&v) {
            let e = want.entry(key.clone()).or_default();
            e.0 += 1;
            e.1 += v;
        }
        state.update(plan, &spill_batch(keys, v)).unwrap();
    }

    /// A batch of (k, n, v) for [`spill_plan`].
    fn spill_batch(keys: &[Key], v: Vec<i64>) -> PipelineBatch {
        let batch = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                arrow::datatypes::Field::new("k", DataType::Utf8, false),
                arrow::datatypes::Field::new("n", DataType::Int64, true),
                arrow::datatypes::Field::new("v", DataType::Int64, false),
            ])),
            vec![
                Arc::new(StringArray::from_iter_values(keys.iter().map(|k| &k.0))),
                Arc::new(Int64Array::from_iter(keys.iter().map(|k| k.1))),
                Arc::new(Int64Array::from(v)),
            ],
        )
        .unwrap();
        PipelineBatch::new(batch)
    }

    /// The groups of `lanes` (unified) merged in 8 partitions: (count,
    /// sum) per key, each key from one partition only.
    fn merged_groups(
        plan: &AggregatePlan,
        lanes: &[PartitionedState],
    ) -> std::collections::HashMap<Key, (i64, i64)> {
        let mut got: std::collections::HashMap<Key, (i64, i64)> = Default::default();
        let per = RADIX_BUCKETS / 8;
        for p in 0..8 {
            let (batch, _) = merge_partition(plan, lanes, p * per..(p + 1) * per).unwrap();
            let k = batch.column(0).as_string::<i32>();
            let n = batch.column(1).as_primitive::<Int64Type>();
            let count = batch.column(2).as_primitive::<Int64Type>();
            let sum = cast(batch.column(3), &DataType::Int64).unwrap();
            let sum = sum.as_primitive::<Int64Type>();
            for i in 0..batch.num_rows() {
                let key = (k.value(i).to_owned(), n.is_valid(i).then(|| n.value(i)));
                let old = got.insert(key.clone(), (count.value(i), sum.value(i)));
                assert!(old.is_none(), "group {key:?} in two partitions");
            }
        }
        got
    }

    #[test]
    fn a_lane_stops_putting_rows_aside_once_they_fold_into_its_table() {
        // 90K groups: each lane passes SPILL_FROM groups at its second
        // batch with most rows new, then finds most of the next rows'
        // groups in its table. Batches of 8,000 rows look up 500 rows
        // each: the first two are put aside before the lane has looked up
        // enough rows to stop, the rest go to the table.
        let plan = spill_plan();
        let mut rng = StdRng::seed_from_u64(47);
        let mut want: std::collections::HashMap<Key, (i64, i64)> = Default::default();
        let mut lanes = Vec::new();
        for lane in 0..2 {
            let mut state = plan.new_lane_state(2).unwrap();
            let sizes = [64_000, 64_000].into_iter().chain([8_000; 30]);
            for rows in sizes {
                let keys: Vec<Key> = (0..rows)
                    .map(|_| {
                        let g = rng.random_range(0..90_000i64);
                        (format!("{:x}", g % 300), Some(g / 300))
                    })
                    .collect();
                let v: Vec<i64> = (0..rows as i64).map(|i| i % 7).collect();
                add_rows(&plan, &mut state, &mut want, &keys, v);
            }
            let spill = state
                .spill
                .as_ref()
                .expect("the lane began to put rows aside");
            assert!(!spill.open, "lane {lane} still puts rows aside");
            assert_eq!(state.rows_put_aside(), 16_000, "lane {lane}");
            assert_eq!(state.rows, 128_000 + 28 * 8_000, "lane {lane}");
            lanes.push(Box::new(state).partition().unwrap());
        }
        unify_layouts(&plan, &mut lanes).unwrap();
        let got = merged_groups(&plan, &lanes);
        assert_eq!(got.len(), want.len());
        assert!(got == want, "the merged groups differ");
    }

    #[test]
    fn a_lone_lane_puts_rows_aside_only_once_its_table_is_large() {
        // every row a group of its own, 100K rows a batch: the lone lane
        // keeps adding rows to its table past the 64K groups that lanes
        // beside others stop at, and puts rows aside once the table takes
        // SPILL_BYTES_ALONE (32 MiB: about half a million such groups)
        let plan = spill_plan();
        let mut state = plan.new_lane_state(1).unwrap();
        let mut want: std::collections::HashMap<Key, (i64, i64)> = Default::default();
        let per = 100_000i64;
        for batch in 0..12 {
            let keys: Vec<Key> = (batch * per..(batch + 1) * per)
                .map(|i| (format!("{:x}", i % 1000), Some(i / 1000)))
                .collect();
            let v: Vec<i64> = (0..per).map(|i| i % 5).collect();
            add_rows(&plan, &mut state, &mut want, &keys, v);
            if batch == 1 {
                assert_eq!(state.rows_put_aside(), 0, "a lone lane at 200K groups");
            }
        }
        assert!(
            state.rows_put_aside() >= 100_000,
            "{}",
            state.rows_put_aside()
        );
        assert_eq!(state.rows + state.rows_put_aside(), 1_200_000);
        let mut lanes = vec![Box::new(state).partition().unwrap()];
        unify_layouts(&plan, &mut lanes).unwrap();
        let got = merged_groups(&plan, &lanes);
        assert_eq!(got.len(), 1_200_000);
        assert!(got == want, "the merged groups differ");
    }

    /// `... GROUP BY k` over (k BIGINT, v BIGINT), both nullable, of
    /// `aggs` (each: the function, whether it reads `v`, DISTINCT), whose
    /// outputs (BIGINT) are `outs` (each: its name, whether it may be NULL).
    fn kv_plan(aggs: &[(AggregateFunction, bool, bool)], outs: &[(&str, bool)]) -> AggregatePlan {
        use arrow::datatypes::Field;
        let input = Schema::new(vec![
            Field::new("k", DataType::Int64, true),
            Field::new("v", DataType::Int64, true),
        ]);
        let fields = std::iter::once(Field::new("k", DataType::Int64, true)).chain(
            outs.iter()
                .map(|&(name, nullable)| Field::new(name, DataType::Int64, nullable)),
        );
        let aggs: Vec<AggregateExpr> = aggs
            .iter()
            .map(|&(func, reads, distinct)| AggregateExpr {
                func,
                arg: reads.then(|| Expr::column(1, "v")),
                key: None,
                distinct,
                order_by: Vec::new(),
            })
            .collect();
        let out = Arc::new(Schema::new(fields.collect::<Vec<_>>()));
        AggregatePlan::new(&[Expr::column(0, "k")], &aggs, &input, out).unwrap()
    }

    /// A batch of rows (k, v) for [`kv_plan`].
    fn kv_batch(rows: &[(Option<i64>, Option<i64>)]) -> PipelineBatch {
        let batch = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                arrow::datatypes::Field::new("k", DataType::Int64, true),
                arrow::datatypes::Field::new("v", DataType::Int64, true),
            ])),
            vec![
                Arc::new(Int64Array::from_iter(rows.iter().map(|r| r.0))),
                Arc::new(Int64Array::from_iter(rows.iter().map(|r| r.1))),
            ],
        )
        .unwrap();
        PipelineBatch::new(batch)
    }

    /// `count(*), sum(v) ... GROUP BY k` (a count sharing the sum's state:
    /// NULL values are counted apart).
    fn value_plan() -> AggregatePlan {
        use AggregateFunction::*;
        kv_plan(
            &[(CountStar, false, false), (Sum, true, false)],
            &[("count", false), ("sum", true)],
        )
    }

    type Groups = std::collections::HashMap<Option<i64>, (i64, Option<i64>)>;

    /// Adds rows (`k`, `v`) to `state` and to the expected groups.
    fn add_values(
        plan: &AggregatePlan,
        state: &mut AggregateState,
        want: &mut Groups,
        rows: &[(Option<i64>, Option<i64>)],
    ) {
        for &(k, v) in rows {
            let e = want.entry(k).or_insert((0, None));
            e.0 += 1;
            if let Some(v) = v {
                e.1 = Some(e.1.unwrap_or(0) + v);
            }
        }
        state.update(plan, &kv_batch(rows)).unwrap();
    }

    /// The groups of finished parts, each key in one row only.
    fn groups_of(batches: &[RecordBatch]) -> Groups {
        let mut got = Groups::default();
        for batch in batches {
            let k = batch.column(0).as_primitive::<Int64Type>();
            let count = batch.column(1).as_primitive::<Int64Type>();
            let sum = batch.column(2).as_primitive::<Int64Type>();
            for i in 0..batch.num_rows() {
                let key = k.is_valid(i).then(|| k.value(i));
                let group = (count.value(i), sum.is_valid(i).then(|| sum.value(i)));
                assert!(got.insert(key, group).is_none(), "group {key:?} twice");
            }
        }
        got
    }

    #[test]
    fn lanes_of_clustered_keys_finish_each_as_it_is_and_fold_the_pages_they_share() {
        // 12 morsels of 70K keys 3 apart, dealt to 3 lanes in turn: each
        // morsel's keys are one lane's, but for the value pages at its
        // edges (shared with the lanes of the morsels beside it) and its
        // first 5 keys, which the morsel before holds too. Lanes 0 and 2
        // have a NULL key; every 7th value is NULL
        let plan = value_plan();
        let mut want = Groups::default();
        let mut lanes: Vec<AggregateState> =
            (0..3).map(|_| plan.new_lane_state(3).unwrap()).collect();
        let span = 210_000i64;
        for m in 0..12i64 {
            let first = (m * span - 15).max(0);
            let rows: Vec<(Option<i64>, Option<i64>)> = (first..(m + 1) * span)
                .step_by(3)
                .map(|k| (Some(k), (k % 7 != 0).then_some(k % 100)))
                .chain((m % 3 != 1).then_some((None, Some(m))))
                .collect();
            add_values(&plan, &mut lanes[m as usize % 3], &mut want, &rows);
        }
        let mut lanes: Vec<PartitionedState> = lanes
            .into_iter()
            .map(|s| Box::new(s).partition().unwrap())
            .collect();
        unify_layouts(&plan, &mut lanes).unwrap();
        let mut dropped = fold_shared_pages(&mut lanes)
            .unwrap()
            .expect("lanes sharing 11 pages of 600 finish each as it is");
        // lane 0 never folds into another (the first of any page); the
        // others fold their first keys and their NULL into the lane before
        assert!(dropped[0].is_empty());
        assert!(dropped[1].len() > 5 && dropped[2].len() > 5, "{dropped:?}");
        let mut parts = Vec::new();
        for (lane, dropped) in lanes.into_iter().zip(&mut dropped) {
            let (batches, _) = finish_lane(&plan, lane, dropped).unwrap();
            // the kept runs are slices: one a morsel at most
            assert!(batches.len() <= 4, "{} parts", batches.len());
            parts.extend(batches);
        }
        let got = groups_of(&parts);
        assert_eq!(got.len(), want.len());
        assert!(got == want, "the lanes' groups differ");
    }

    #[test]
    fn lanes_of_scattered_keys_share_their_window_and_are_merged() {
        let plan = value_plan();
        let mut rng = StdRng::seed_from_u64(5);
        let mut want = Groups::default();
        let mut lanes = Vec::new();
        for _ in 0..2 {
            let mut state = plan.new_lane_state(2).unwrap();
            let rows: Vec<(Option<i64>, Option<i64>)> = (0..50_000)
                .map(|_| (Some(rng.random_range(0..100_000)), Some(1)))
                .collect();
            add_values(&plan, &mut state, &mut want, &rows);
            lanes.push(Box::new(state).partition().unwrap());
        }
        unify_layouts(&plan, &mut lanes).unwrap();
        assert!(fold_shared_pages(&mut lanes).unwrap().is_none());
        // (the lanes as they were: the merge, slot by slot, finds every
        // group)
        let per = RADIX_BUCKETS / 4;
        let parts: Vec<RecordBatch> = (0..4)
            .map(|p| {
                merge_partition(&plan, &lanes, p * per..(p + 1) * per)
                    .unwrap()
                    .0
            })
            .collect();
        assert!(groups_of(&parts) == want, "the merged groups differ");
    }

    #[test]
    fn a_lane_whose_folded_groups_are_scattered_leaves_them_out_by_a_filter() {
        let plan = value_plan();
        let mut want = Groups::default();
        let mut state = plan.new_lane_state(2).unwrap();
        let rows: Vec<(Option<i64>, Option<i64>)> =
            (0..30_000).map(|k| (Some(k), Some(k % 10))).collect();
        add_values(&plan, &mut state, &mut want, &rows);
        // every third group folded away (ids are the keys: first seen)
        let mut dropped: Vec<u32> = (0..30_000).step_by(3).rev().collect();
        want.retain(|k, _| k.is_some_and(|k| k % 3 != 0));
        let lane = Box::new(state).partition().unwrap();
        let (batches, _) = finish_lane(&plan, lane, &mut dropped).unwrap();
        assert_eq!(batches.len(), 1, "a filter, not 10K slices");
        assert!(groups_of(&batches) == want);
    }

    /// `count(*), sum(v), min(v), count(DISTINCT v) ... GROUP BY k`: a
    /// count sharing a sum, and aggregates of their own states.
    fn slots_plan() -> AggregatePlan {
        use AggregateFunction::*;
        kv_plan(
            &[
                (CountStar, false, false),
                (Sum, true, false),
                (Min, true, false),
                (Count, true, true),
            ],
            &[
                ("count", false),
                ("sum", true),
                ("min", true),
                ("distinct", false),
            ],
        )
    }

    /// Per key: rows, sum and least of the values, distinct values.
    type Stats = std::collections::HashMap<Option<i64>, (i64, Option<i64>, Option<i64>, i64)>;

    fn stats_of(rows: &[(Option<i64>, Option<i64>)]) -> Stats {
        let mut values: std::collections::HashMap<Option<i64>, Vec<Option<i64>>> =
            Default::default();
        for &(k, v) in rows {
            values.entry(k).or_default().push(v);
        }
        values
            .into_iter()
            .map(|(k, vs)| {
                let some: Vec<i64> = vs.iter().flatten().copied().collect();
                let distinct: std::collections::HashSet<i64> = some.iter().copied().collect();
                let sum = (!some.is_empty()).then(|| some.iter().sum());
                let min = some.iter().min().copied();
                (k, (vs.len() as i64, sum, min, distinct.len() as i64))
            })
            .collect()
    }

    fn stats_got(batches: &[RecordBatch]) -> Stats {
        let mut got = Stats::default();
        for batch in batches {
            let col = |c: usize| batch.column(c).as_primitive::<Int64Type>().clone();
            let (k, n, sum, min, distinct) = (col(0), col(1), col(2), col(3), col(4));
            let at = |a: &Int64Array, i: usize| a.is_valid(i).then(|| a.value(i));
            for i in 0..batch.num_rows() {
                let group = (n.value(i), at(&sum, i), at(&min, i), distinct.value(i));
                assert!(
                    got.insert(at(&k, i), group).is_none(),
                    "group {:?} twice",
                    at(&k, i)
                );
            }
        }
        got
    }

    #[test]
    fn groups_numbered_by_slot_keep_every_aggregate_through_windows_nulls_and_merges() {
        let plan = slots_plan();
        let mut rng = StdRng::seed_from_u64(9);
        // lane 0: dense keys in 0..30K (it numbers its groups by slot),
        // NULL keys once it does, then keys far outside the window (it
        // leaves the slots and finds its groups by hash); lane 1: dense
        // keys of the same window only (by slot to its end); lane 2: a
        // few keys, by its map
        let dense = |rng: &mut StdRng, n: usize, nulls: bool| -> Vec<(Option<i64>, Option<i64>)> {
            (0..n)
                .map(|_| {
                    let k = (!nulls || rng.random_range(0..50) > 0)
                        .then(|| rng.random_range(0..30_000));
                    let v = (rng.random_range(0..9) > 0).then(|| rng.random_range(-5..40));
                    (k, v)
                })
                .collect()
        };
        let far: Vec<(Option<i64>, Option<i64>)> = (0..5_000)
            .map(|i| (Some(1 << 40 | i), Some(i % 3)))
            .collect();
        let mut all = Vec::new();
        let mut lanes = Vec::new();
        for lane in 0..3 {
            let mut state = plan.new_lane_state(3).unwrap();
            let batches: Vec<Vec<(Option<i64>, Option<i64>)>> = match lane {
                0 => vec![
                    dense(&mut rng, 40_000, false),
                    dense(&mut rng, 20_000, true),
                    far.clone(),
                    dense(&mut rng, 10_000, true),
                ],
                1 => vec![
                    dense(&mut rng, 50_000, false),
                    dense(&mut rng, 50_000, true),
                ],
                _ => vec![(0..300).map(|i| (Some(i % 7), Some(i))).collect()],
            };
            let mut by_slot = false;
            for rows in batches {
                state.update(&plan, &kv_batch(&rows)).unwrap();
                by_slot |= state.groups.as_ref().unwrap().in_slots();
                all.extend(rows);
            }
            assert_eq!(by_slot, lane < 2, "lane {lane}");
            lanes.push(Box::new(state).partition().unwrap());
        }
        let want = stats_of(&all);
        // lane 0 gave its map up: the lanes merge by hash, lane 1 out of
        // its slots
        let mut merged = Vec::new();
        let mut by_hash = lanes;
        assert!(by_hash[1].state.groups.as_ref().unwrap().in_slots());
        unify_layouts(&plan, &mut by_hash).unwrap();
        assert!(!by_hash[1].state.groups.as_ref().unwrap().in_slots());
        assert!(fold_shared_pages(&mut by_hash).unwrap().is_none());
        for p in 0..4 {
            let per = RADIX_BUCKETS / 4;
            merged.push(
                merge_partition(&plan, &by_hash, p * per..(p + 1) * per)
                    .unwrap()
                    .0,
            );
        }
        assert!(stats_got(&merged) == want, "merged by hash");
    }

    #[test]
    fn lanes_numbered_by_slot_merge_slot_by_slot_or_by_value_and_a_lone_lane_finishes() {
        let plan = slots_plan();
        let mut rng = StdRng::seed_from_u64(10);
        let mut all = Vec::new();
        let mut lanes = Vec::new();
        for _ in 0..2 {
            let mut state = plan.new_lane_state(2).unwrap();
            for _ in 0..3 {
                let rows: Vec<(Option<i64>, Option<i64>)> = (0..20_000)
                    .map(|_| {
                        let k =
                            (rng.random_range(0..100) > 0).then(|| rng.random_range(1_000..19_000));
                        (k, Some(rng.random_range(0..5)))
                    })
                    .collect();
                state.update(&plan, &kv_batch(&rows)).unwrap();
                all.extend(rows);
            }
            assert!(state.groups.as_ref().unwrap().in_slots());
            lanes.push(Box::new(state).partition().unwrap());
        }
        let want = stats_of(&all);
        unify_layouts(&plan, &mut lanes).unwrap();
        assert!(one_slot_window(&lanes));
        assert!(by_value(&lanes).is_none());
        assert!(fold_shared_pages(&mut lanes).unwrap().is_none());
        let per = RADIX_BUCKETS / 4;
        let merge = |lanes: &[PartitionedState]| -> Vec<RecordBatch> {
            (0..4)
                .map(|p| {
                    merge_partition(&plan, lanes, p * per..(p + 1) * per)
                        .unwrap()
                        .0
                })
                .collect()
        };
        assert!(stats_got(&merge(&lanes)) == want, "merged slot by slot");
        // and out of their slots, by value
        for lane in &mut lanes {
            lane.state.settle(&plan).unwrap();
        }
        assert!(by_value(&lanes).is_some());
        assert!(stats_got(&merge(&lanes)) == want, "merged by value");
        // one lane alone: its state is its result
        let mut state = plan.new_lane_state(1).unwrap();
        let rows: Vec<(Option<i64>, Option<i64>)> = (0..30_000)
            .map(|i| (Some(i * 7 % 10_000), Some(i % 11)))
            .collect();
        state.update(&plan, &kv_batch(&rows)).unwrap();
        assert!(state.groups.as_ref().unwrap().in_slots());
        let lane = Box::new(state).partition().unwrap();
        assert!(stats_got(&[lane.state.finish(&plan).unwrap()]) == stats_of(&rows));
    }

    #[test]
    fn a_lane_whose_values_keep_leaving_the_window_numbers_by_slot_a_few_times() {
        // sorted dense keys: each batch's values lie past the window the
        // groups so far fill (a sorted table, a lone lane)
        let plan = slots_plan();
        let mut state = plan.new_lane_state(1).unwrap();
        let mut all = Vec::new();
        for b in 0..64i64 {
            let rows: Vec<(Option<i64>, Option<i64>)> = (b * 8192..(b + 1) * 8192)
                .map(|k| (Some(k), Some(k % 3)))
                .collect();
            state.update(&plan, &kv_batch(&rows)).unwrap();
            all.extend(rows);
        }
        let entries = state.groups.as_ref().unwrap().slot_entries();
        assert!((1..=8).contains(&entries), "{entries} times by slot");
        let lane = Box::new(state).partition().unwrap();
        assert!(stats_got(&[lane.state.finish(&plan).unwrap()]) == stats_of(&all));
    }
}
