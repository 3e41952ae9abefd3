//! The window breaker (`f(...) OVER (PARTITION BY ... ORDER BY ...)`).
//!
//! Lanes collect their rows; at its end each lane evaluates the partition
//! keys, order keys and function arguments once, appends them (and each
//! row's input position) to its rows and cuts them into buckets by a hash
//! of the partition keys (all rows in one bucket without PARTITION BY).
//! The merge is a parallel job of one task per bucket: it sorts the rows
//! every lane holds of its bucket by (partition keys, order keys, input
//! position) as the sort breaker sorts and computes each function over
//! each partition. Without PARTITION BY but with an ORDER BY, a full sort
//! by the order keys runs before the window (on every worker, see
//! `rewrite::sort_under_window`); rows whose input is sorted so (by
//! [`window_order`]: partition keys, then order keys), or without either,
//! are in window order as they come and never cut into buckets. Then,
//! where every function reads only a row's position, its partition's and
//! peer group's bounds, a value a fixed number of rows away, or a count
//! or exact sum from its partition's first row, each batch is a task of
//! its own, told by one pass over the batches (not their rows) where its
//! first and last partitions and peer groups start and end and what the
//! batches before it counted and summed ([`Batches`]); otherwise the one
//! task puts the lanes' rows back in input order and computes over all.
//! The input position as the last key makes the
//! answer independent of the number of threads.
//!
//! Frames are never rescanned row by row: running and moving sums and
//! counts use prefix sums (a segment tree for DOUBLE sums over frames that
//! do not start at the partition's start, so rounding matches a plain
//! sum), MIN/MAX a monotonic deque (frame bounds only move forward), RANGE
//! offsets a binary search on the order key.

use std::cell::OnceCell;
use std::collections::VecDeque;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, Decimal128Array, Float64Array, Int64Array, RecordBatch, UInt32Array,
    UInt64Array, new_null_array,
};
use arrow::buffer::NullBuffer;
use arrow::compute::kernels::cmp::distinct;
use arrow::compute::{cast, interleave, take, take_record_batch};
use arrow::datatypes::{DataType, Field, Float64Type, Int64Type, Schema, SchemaRef, UInt64Type};
use arrow::row::{OwnedRow, RowConverter, Rows, SortField};
use weir_planner::{
    AggregateFunction, BinaryOp, Expr, FrameBound, FrameUnits, LogicalPlan, ScalarValue, SortKey,
    WindowExpr, WindowFunction,
};

use crate::aggregate::{AggregatePlan, GroupTable, conform, sliding_quantile};
use crate::error::{Error, Result};
use crate::eval::evaluate;
use crate::hash::{fold_word, hash_bytes, mix};
use crate::sort::{RowLimit, SortSpec, part_positions, sort_parts};
use crate::step::PipelineBatch;

/// Buckets the lanes cut rows into when there is a PARTITION BY.
const BUCKETS: usize = 64;

/// A Window node, ready to run.
pub(crate) struct WindowPlan {
    input: SchemaRef,
    output: SchemaRef,
    partition_by: Vec<Expr>,
    order_by: Vec<SortKey>,
    functions: Vec<WindowExpr>,
    /// Input columns, the position, then the partition keys, order keys
    /// and arguments that are not an input column as it is ([`appended`]):
    /// a key or argument that is one is read where it is, so that it is
    /// not copied twice as the rows are cut into buckets and sorted.
    ///
    /// [`appended`]: WindowPlan::appended
    work: SchemaRef,
    /// The expressions evaluated into `work` after the position.
    appended: Vec<Expr>,
    /// Where in `work` the partition keys, the order keys and each
    /// function's arguments are.
    partition_cols: Vec<usize>,
    order_cols: Vec<usize>,
    arg_cols: Vec<Vec<usize>>,
    /// The sort of a bucket's `work` rows: partition keys, order keys
    /// (the input position breaks ties).
    sort: SortSpec,
    /// Where the partition keys keep `sort` off the radix sort (a VARCHAR,
    /// or keys too wide together) but the order keys would not: a bucket
    /// numbers its partitions instead ([`GroupTable`], as met in input
    /// order) and sorts its rows by that number, a `UInt32` column after
    /// `work`'s, then the order keys. A bucket needs its partitions
    /// apart, not in key order.
    numbered: Option<SortSpec>,
    /// A PARTITION BY without ORDER BY whose functions are all
    /// aggregates over the whole partition: a bucket is not sorted; its
    /// rows are numbered by partition ([`GroupTable`]), each partition's
    /// aggregates computed once and every row given its partition's.
    unordered: bool,
    /// The input's rows in input order are in window order: a full sort
    /// by [`window_order`] runs before the window (`input_sorted`, see
    /// `rewrite::sort_under_window`), or there is neither a PARTITION BY
    /// nor an ORDER BY. Rows are then never cut into buckets, and only a
    /// window without PARTITION BY whose rewrite did not run sorts its one
    /// bucket.
    presorted: bool,
    /// A presorted window whose functions all read positions, partition
    /// and peer bounds, values a fixed number of rows away, or running
    /// counts and exact sums ([`by_batch`]): it is computed batch by
    /// batch, each batch a task ([`Batches`]). The others are computed by
    /// one task over all rows.
    by_batch: bool,
    /// `by_batch`: per function, where its frame ends if it is a count or
    /// an exact sum from the partition's first row ([`Running`]).
    running: Vec<Option<Running>>,
    /// `by_batch` with a function that reads peer groups.
    reads_peers: bool,
    /// A presorted window that is not `by_batch`, each of whose
    /// functions' frames reach a bounded number of rows or a bounded
    /// distance in the order key from a row ([`Span::of`]): its rows are
    /// computed range by range, each range a task ([`Ranges`]).
    span: Option<Span>,
    /// Only the first rows of each partition are wanted ([`row_limit`]):
    /// a bucket gathers and computes no others.
    limit: Option<usize>,
    /// With a row limit of at most [`LEADERS_MAX`] rows, the order keys
    /// (over `work`): each lane then drops the rows its own partitions
    /// already have enough better rows for ([`Leaders`]).
    leaders: Option<Box<SortSpec>>,
}

/// The largest row limit for which lanes keep each partition's best rows
/// so far ([`Leaders`]); above it, every row is cut into the buckets.
const LEADERS_MAX: usize = 64;

/// Rows a lane judges [`Leaders`] by: if more than half of such a run of
/// rows (after the first, when every partition is new) were kept, the
/// lane stops dropping rows.
const LEADERS_TRIAL: usize = 1 << 16;

/// How many rows of each partition a filter above `window` can keep at
/// most: every function of the window is `ROW_NUMBER()` (its value for a
/// row depends on the rows before it only), there is a PARTITION BY, and
/// a conjunct of `predicate` (over the window's output) bounds one of
/// their columns from above by a constant (`rn <= 2`, `rn < 3`, `rn = 1`,
/// `2 >= rn`). The filter still runs; the window only drops rows it
/// would reject. `None` otherwise.
pub(crate) fn row_limit(window: &LogicalPlan, predicate: &Expr) -> Option<usize> {
    let LogicalPlan::Window {
        input,
        partition_by,
        functions,
        ..
    } = window
    else {
        return None;
    };
    if partition_by.is_empty()
        || functions.is_empty()
        || functions
            .iter()
            .any(|f| f.func != WindowFunction::RowNumber)
    {
        return None;
    }
    let width = input.schema().fields().len();
    let number = |e: &Expr| match e {
        Expr::Column(c) if c.index >= width => Some(()),
        _ => None,
    };
    let constant = |e: &Expr| match e {
        Expr::Literal(v) => integer(v),
        _ => None,
    };
    // the largest row number a conjunct lets through
    let bound = |e: &Expr| -> Option<i128> {
        let Expr::Binary { op, left, right } = e else {
            return None;
        };
        let (op, k) = match (number(left), constant(right), constant(left), number(right)) {
            (Some(()), Some(k), _, _) => (*op, k),
            // `k >= rn` is `rn <= k`
            (_, _, Some(k), Some(())) => match op {
                BinaryOp::GtEq => (BinaryOp::LtEq, k),
                BinaryOp::Gt => (BinaryOp::Lt, k),
                BinaryOp::Eq => (BinaryOp::Eq, k),
                _ => return None,
            },
            _ => return None,
        };
        match op {
            BinaryOp::LtEq | BinaryOp::Eq => Some(k),
            BinaryOp::Lt => Some(k - 1),
            _ => None,
        }
    };
    let mut conjuncts = vec![predicate];
    let mut limit: Option<i128> = None;
    while let Some(e) = conjuncts.pop() {
        match e {
            Expr::Binary {
                op: BinaryOp::And,
                left,
                right,
            } => conjuncts.extend([&**left, &**right]),
            e => {
                if let Some(k) = bound(e) {
                    limit = Some(limit.map_or(k, |l| l.min(k)));
                }
            }
        }
    }
    limit.map(|k| usize::try_from(k.max(0)).unwrap_or(usize::MAX))
}

/// An integer constant's value.
fn integer(v: &ScalarValue) -> Option<i128> {
    Some(match *v {
        ScalarValue::Int8(x) => x.into(),
        ScalarValue::Int16(x) => x.into(),
        ScalarValue::Int32(x) => x.into(),
        ScalarValue::Int64(x) => x.into(),
        ScalarValue::UInt8(x) => x.into(),
        ScalarValue::UInt16(x) => x.into(),
        ScalarValue::UInt32(x) => x.into(),
        ScalarValue::UInt64(x) => x.into(),
        _ => return None,
    })
}

/// A lane's rows, cut into buckets.
#[derive(Default)]
pub(crate) struct WindowLane {
    /// Per bucket (one without a PARTITION BY), the lane's `work` rows of
    /// each morsel (with its index), in input order. A bucket's task sorts
    /// the rows every lane holds of it at once: the buckets are the
    /// parallelism, and no lane's sorted rows are merged again (W1 on 2
    /// threads: the bucket tasks took as long as on 1 thread, merging
    /// what the lanes had sorted).
    parts: Vec<Vec<(usize, RecordBatch)>>,
    /// A window computed batch by batch ([`WindowPlan::by_batch`]): the
    /// [`Marks`] of each batch of the one bucket.
    marks: Vec<Marks>,
    /// The best rows so far of each partition the lane met, when only the
    /// first rows of each partition are wanted.
    leaders: Option<Box<Leaders>>,
    /// The lane stopped dropping rows ([`Leaders::pays`]).
    keeps_all: bool,
}

/// A lane's best rows so far of each partition, when a filter keeps only
/// the first `k` rows of each ([`row_limit`]): a row with `k` rows of its
/// partition before it in this lane alone has at least `k` before it in
/// the whole input, so the lane drops it before it is cut into a bucket
/// and sorted (QUALIFY `row_number() OVER (PARTITION BY a ORDER BY b) <=
/// 2` keeps a few rows in a hundred). A row is ranked by its order keys
/// (as one number, [`SortSpec::ordered_keys`], where they fit 128 bits;
/// else row-encoded), then its input position, as the bucket's sort ranks
/// it, so the rows kept are a superset of the first `k` of each partition
/// and the answer is the same.
struct Leaders {
    k: usize,
    /// The partitions met, numbered as met (an aggregation's group table).
    partitions: GroupTable,
    ranks: Ranks,
    ids: Vec<u32>,
    /// Rows seen and rows kept of the current run of [`LEADERS_TRIAL`]
    /// rows, and whether a run ended before.
    seen: usize,
    kept: usize,
    judged: bool,
}

/// Each partition's best ranks so far.
enum Ranks {
    /// Order keys of fixed widths as one number, then the position: per
    /// partition `k` slots, best first, `held` of them filled.
    Fixed {
        best: Vec<(u128, u64)>,
        held: Vec<u32>,
    },
    /// Any other order keys, row-encoded with the position last: per
    /// partition its best rows, best first.
    Rows {
        converter: RowConverter,
        best: Vec<Vec<OwnedRow>>,
    },
}

impl Leaders {
    fn new(k: usize, types: &[DataType], order: &SortSpec) -> Result<Self> {
        let ranks = if order.fixed_width() {
            Ranks::Fixed {
                best: Vec::new(),
                held: Vec::new(),
            }
        } else {
            Ranks::Rows {
                converter: order.converter()?,
                best: Vec::new(),
            }
        };
        Ok(Leaders {
            k,
            partitions: GroupTable::new(types)?,
            ranks,
            ids: Vec::new(),
            seen: 0,
            kept: 0,
            judged: false,
        })
    }

    /// The rows to keep of `work` (the rows of a morsel, their input
    /// positions `seq`), whose partition keys are `keys`; `order` ranks
    /// them.
    fn keep(
        &mut self,
        order: &SortSpec,
        keys: &[ArrayRef],
        work: &RecordBatch,
        seq: &UInt64Array,
    ) -> Result<Vec<u32>> {
        let k = self.k;
        self.partitions.group_ids(keys, &mut self.ids)?;
        let groups = self.partitions.len();
        let mut keep = Vec::new();
        match &mut self.ranks {
            Ranks::Fixed { best, held } => {
                let ranks = order.ordered_keys(work)?.ok_or_else(|| {
                    Error::Internal("a window's fixed-width ranks of other keys".into())
                })?;
                held.resize(groups, 0);
                best.resize(groups * k, (0, 0));
                let rows = self.ids.iter().zip(ranks).zip(seq.values());
                for (i, ((&g, key), &position)) in rows.enumerate() {
                    let g = g as usize;
                    let rank = (key, position);
                    let slots = &mut best[g * k..(g + 1) * k];
                    let h = held[g] as usize;
                    if h == k && rank >= slots[k - 1] {
                        continue;
                    }
                    // insert in order, the worst falling off when all are held
                    let mut j = h.min(k - 1);
                    while j > 0 && slots[j - 1] > rank {
                        slots[j] = slots[j - 1];
                        j -= 1;
                    }
                    slots[j] = rank;
                    if h < k {
                        held[g] += 1;
                    }
                    keep.push(i as u32);
                }
            }
            Ranks::Rows { converter, best } => {
                best.resize_with(groups, Vec::new);
                let rows = order.rows(converter, work, seq)?;
                for (i, &g) in self.ids.iter().enumerate() {
                    let row = rows.row(i);
                    let slots = &mut best[g as usize];
                    let at = slots.partition_point(|s| s.row() < row);
                    if at == k {
                        continue;
                    }
                    slots.insert(at, row.owned());
                    slots.truncate(k);
                    keep.push(i as u32);
                }
            }
        }
        self.seen += work.num_rows();
        self.kept += keep.len();
        Ok(keep)
    }

    /// Bytes held.
    fn size(&self) -> usize {
        let ranks = match &self.ranks {
            Ranks::Fixed { best, held } => best.capacity() * 32 + held.capacity() * 4,
            Ranks::Rows { best, .. } => best
                .iter()
                .flatten()
                .map(|r| r.as_ref().len() + 32)
                .sum::<usize>(),
        };
        self.partitions.size() + ranks + self.ids.capacity() * 4
    }

    /// Whether dropping rows still pays: at most half the rows of the
    /// last run were kept (partitions of a few rows each keep most). The
    /// first run is not judged: a partition's first `k` rows are always
    /// kept, and they are most of the first rows of many partitions.
    fn pays(&mut self) -> bool {
        if self.seen < LEADERS_TRIAL {
            return true;
        }
        let judged = std::mem::replace(&mut self.judged, true);
        let pays = !judged || self.kept * 2 <= self.seen;
        (self.seen, self.kept) = (0, 0);
        pays
    }
}

impl WindowLane {
    pub(crate) fn size(&self) -> usize {
        let leaders = self.leaders.as_ref().map_or(0, |l| l.size());
        self.parts
            .iter()
            .flatten()
            // (a presorted window's parts are slices of the sort's
            // result: their own rows' bytes, not the whole buffers)
            .map(|(_, b)| crate::pipeline::batch_bytes(b))
            .sum::<usize>()
            + self.marks.iter().map(Marks::size).sum::<usize>()
            + leaders
    }

    pub(crate) fn rows(&self) -> usize {
        self.parts.iter().flatten().map(|(_, b)| b.num_rows()).sum()
    }
}

impl WindowPlan {
    pub(crate) fn new(
        input: SchemaRef,
        output: SchemaRef,
        partition_by: &[Expr],
        order_by: &[SortKey],
        functions: &[WindowExpr],
        input_sorted: bool,
        limit: Option<usize>,
    ) -> Result<Self> {
        let mut fields: Vec<Field> = input.fields().iter().map(|f| f.as_ref().clone()).collect();
        fields.push(Field::new("__position", DataType::UInt64, false));
        let mut appended = Vec::new();
        // an input column of the expression's own type is read in place;
        // anything else is evaluated into a column of its own
        let mut place = |e: &Expr, name: String| -> usize {
            let t = e.data_type(&input);
            if let Expr::Column(c) = e
                && input
                    .fields()
                    .get(c.index)
                    .is_some_and(|f| *f.data_type() == t)
            {
                return c.index;
            }
            fields.push(Field::new(name, t, true));
            appended.push(e.clone());
            fields.len() - 1
        };
        let partition_cols: Vec<usize> = partition_by
            .iter()
            .enumerate()
            .map(|(i, p)| place(p, format!("__p{i}")))
            .collect();
        let order_cols: Vec<usize> = order_by
            .iter()
            .enumerate()
            .map(|(i, k)| place(&k.expr, format!("__o{i}")))
            .collect();
        let arg_cols: Vec<Vec<usize>> = functions
            .iter()
            .enumerate()
            .map(|(j, f)| {
                f.args
                    .iter()
                    .enumerate()
                    .map(|(i, a)| place(a, format!("__a{j}_{i}")))
                    .collect()
            })
            .collect();
        if output.fields().len() != input.fields().len() + functions.len() {
            return Err(Error::Internal(
                "a Window's output is not its input and one column per function".into(),
            ));
        }
        let work: SchemaRef = Arc::new(Schema::new(fields));
        let column = |i: usize| Expr::column(i, work.field(i).name().clone());
        let keys: Vec<SortKey> = partition_cols
            .iter()
            .map(|&i| SortKey {
                expr: column(i),
                asc: true,
                nulls_first: false,
            })
            .chain(order_by.iter().zip(&order_cols).map(|(k, &i)| SortKey {
                expr: column(i),
                asc: k.asc,
                nulls_first: k.nulls_first,
            }))
            .collect();
        let sort = SortSpec::new(&keys, Arc::clone(&work))?;
        let numbered = if partition_cols.is_empty() || sort.by_radix_fixed() {
            None
        } else {
            let mut fields: Vec<Field> = work.fields().iter().map(|f| f.as_ref().clone()).collect();
            fields.push(Field::new("__partition", DataType::UInt32, false));
            let schema: SchemaRef = Arc::new(Schema::new(fields));
            let number = SortKey {
                expr: Expr::column(work.fields().len(), "__partition".to_owned()),
                asc: true,
                nulls_first: false,
            };
            let keys: Vec<SortKey> = std::iter::once(number)
                .chain(keys[partition_cols.len()..].iter().cloned())
                .collect();
            Some(SortSpec::new(&keys, schema)?).filter(SortSpec::by_radix_fixed)
        };
        let unordered = !partition_by.is_empty()
            && order_by.is_empty()
            && functions.iter().all(|f| {
                // (without an ORDER BY every row of a partition is a peer)
                matches!(f.func, WindowFunction::Aggregate(_))
                    && matches!(Reach::of(f), Some(Reach::Partition | Reach::Peers))
            });
        let limit = limit.filter(|_| !partition_by.is_empty());
        let presorted = input_sorted || (partition_by.is_empty() && order_by.is_empty());
        let running: Vec<Option<Running>> =
            functions.iter().map(|f| Running::of(f, &input)).collect();
        let by_batch = presorted && functions.iter().all(|f| by_batch(f, &input));
        let leaders = match limit {
            Some(k) if (1..=LEADERS_MAX).contains(&k) => Some(Box::new(SortSpec::new(
                &keys[partition_cols.len()..],
                Arc::clone(&work),
            )?)),
            _ => None,
        };
        let span = if presorted && !by_batch && limit.is_none() {
            // RANGE offsets are searched among all rows: only over one
            // partition, by one key of a type they move
            let keyable = partition_by.is_empty()
                && order_by.len() == 1
                && range_keyable(&order_by[0].expr.data_type(&input));
            functions.iter().try_fold(Span::default(), |span, f| {
                Some(span.and(Span::of(f, keyable)?))
            })
        } else {
            None
        };
        Ok(WindowPlan {
            input,
            output,
            partition_by: partition_by.to_vec(),
            order_by: order_by.to_vec(),
            functions: functions.to_vec(),
            work,
            appended,
            partition_cols,
            order_cols,
            arg_cols,
            sort,
            numbered,
            unordered,
            presorted,
            by_batch,
            reads_peers: by_batch
                && (functions.iter().any(|f| reads_peers(f.func))
                    || running.contains(&Some(Running::Peers))),
            running: if by_batch { running } else { Vec::new() },
            span,
            limit,
            leaders,
        })
    }

    pub(crate) fn output(&self) -> SchemaRef {
        Arc::clone(&self.output)
    }

    /// Buckets the merge runs as tasks.
    pub(crate) fn buckets(&self) -> usize {
        if self.presorted { 1 } else { BUCKETS }
    }

    pub(crate) fn describe(&self) -> String {
        let list = |v: Vec<String>| v.join(", ");
        if self.presorted {
            let ranges;
            let how = if self.by_batch {
                "computed batch by batch in parallel"
            } else if let Some(span) = self.span {
                ranges = format!("computed by ranges of rows in parallel (frames reach {span})");
                &ranges
            } else {
                "computed by one task"
            };
            let keys = window_order(&self.partition_by, &self.order_by);
            let order = if keys.is_empty() {
                "no ORDER BY".to_owned()
            } else {
                format!(
                    "sorted by [{}] before",
                    list(keys.iter().map(ToString::to_string).collect())
                )
            };
            return format!(
                "window: rows in input order ({order}), {how}: {}",
                list(self.functions.iter().map(ToString::to_string).collect()),
            );
        }
        let kept = match (self.limit, &self.leaders) {
            (Some(k), Some(_)) => format!(
                ", keeping the first {k} row(s) of each partition (each lane first drops rows behind {k} better ones of their partition in that lane)"
            ),
            (Some(k), None) => format!(", keeping the first {k} row(s) of each partition"),
            (None, _) => String::new(),
        };
        if self.unordered {
            return format!(
                "window: rows cut by a hash of [{}] into {} bucket(s), each numbering its partitions (no sort) and computing each partition's aggregates once, in parallel: {}",
                list(self.partition_by.iter().map(ToString::to_string).collect()),
                self.buckets(),
                list(self.functions.iter().map(ToString::to_string).collect()),
            );
        }
        let numbered = if self.numbered.is_some() {
            "its partitions numbered, "
        } else {
            ""
        };
        format!(
            "window: rows cut by a hash of [{}] into {} bucket(s), each {numbered}sorted by [{}]{kept} and computed in parallel: {}",
            list(self.partition_by.iter().map(ToString::to_string).collect()),
            self.buckets(),
            list(self.order_by.iter().map(ToString::to_string).collect()),
            list(self.functions.iter().map(ToString::to_string).collect()),
        )
    }

    /// The columns of `batch` (of `work`) at `at`.
    fn columns_at(batch: &RecordBatch, at: &[usize]) -> Vec<ArrayRef> {
        at.iter().map(|&i| Arc::clone(batch.column(i))).collect()
    }

    /// The lane's share: evaluates keys and arguments over its rows and
    /// cuts them into buckets; without a PARTITION BY, sorts its rows.
    /// Where the row limit lets a lane drop rows ([`Leaders`]), only
    /// those it may need are cut.
    pub(crate) fn scatter(
        &self,
        parts: Vec<(usize, RecordBatch)>,
        lane: &mut WindowLane,
    ) -> Result<()> {
        let n_buckets = self.buckets();
        if lane.parts.is_empty() {
            lane.parts = (0..n_buckets).map(|_| Vec::new()).collect();
        }
        if let (Some(k), Some(order), None, false) =
            (self.limit, &self.leaders, &lane.leaders, lane.keeps_all)
        {
            lane.leaders = Some(Box::new(Leaders::new(k, &self.partition_types(), order)?));
        }
        let converter = if self.presorted {
            None
        } else {
            let fields = self
                .partition_by
                .iter()
                .map(|p| SortField::new(p.data_type(&self.input)));
            Some(RowConverter::new(fields.collect()).map_err(Error::arrow)?)
        };
        let seqs = part_positions(&parts);
        for ((morsel, batch), seq) in parts.into_iter().zip(seqs) {
            let n = batch.num_rows();
            if n == 0 {
                continue;
            }
            let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
            columns.push(Arc::new(seq));
            for e in &self.appended {
                let t = self.work.field(columns.len()).data_type().clone();
                columns.push(conform(evaluate(e, &batch)?, &t)?);
            }
            let work =
                RecordBatch::try_new(Arc::clone(&self.work), columns).map_err(Error::arrow)?;
            let Some(converter) = &converter else {
                if self.by_batch {
                    lane.marks.push(self.marks(&work)?);
                }
                lane.parts[0].push((morsel, work));
                continue;
            };
            let mut work = work;
            let mut keys = Self::columns_at(&work, &self.partition_cols);
            if let (Some(leaders), Some(order)) = (&mut lane.leaders, &self.leaders) {
                let seq = work
                    .column(self.input.fields().len())
                    .as_primitive::<UInt64Type>();
                let keep = leaders.keep(order, &keys, &work, seq)?;
                if !leaders.pays() {
                    lane.leaders = None;
                    lane.keeps_all = true;
                }
                if keep.is_empty() {
                    continue;
                }
                if keep.len() < n {
                    work =
                        take_record_batch(&work, &UInt32Array::from(keep)).map_err(Error::arrow)?;
                    keys = Self::columns_at(&work, &self.partition_cols);
                }
            }
            let n = work.num_rows();
            let mut picks: Vec<Vec<u32>> = vec![Vec::new(); n_buckets];
            for (i, h) in partition_hashes(&keys, converter)?.into_iter().enumerate() {
                picks[(h >> 48) as usize % n_buckets].push(i as u32);
            }
            for (b, idx) in picks.into_iter().enumerate() {
                if idx.is_empty() {
                    continue;
                }
                let part = if idx.len() == n {
                    work.clone()
                } else {
                    take_record_batch(&work, &UInt32Array::from(idx)).map_err(Error::arrow)?
                };
                // (a bucket keeps a morsel's rows in input order, so the
                // morsel and the row within it still order ties)
                lane.parts[b].push((morsel, part));
            }
        }
        Ok(())
    }

    /// The types of the partition keys (in `work`).
    fn partition_types(&self) -> Vec<DataType> {
        self.partition_cols
            .iter()
            .map(|&i| self.work.field(i).data_type().clone())
            .collect()
    }

    /// The non-empty parts of bucket `b` of every lane.
    fn bucket(lanes: &[WindowLane], b: usize) -> impl Iterator<Item = &(usize, RecordBatch)> {
        lanes
            .iter()
            .filter_map(move |l| l.parts.get(b))
            .flatten()
            .filter(|(_, batch)| batch.num_rows() > 0)
    }

    /// `parts` (a bucket's rows of every lane) with their partitions'
    /// numbers appended, as [`WindowPlan::numbered`] sorts them: numbered
    /// as first met in input order, so that a bucket's output is the same
    /// whichever lane took which morsel.
    fn number_partitions(
        &self,
        spec: &SortSpec,
        mut parts: Vec<(usize, RecordBatch)>,
    ) -> Result<Vec<(usize, RecordBatch)>> {
        parts.sort_by_key(|(morsel, _)| *morsel);
        let mut table = GroupTable::new(&self.partition_types())?;
        let mut ids = Vec::new();
        parts
            .into_iter()
            .map(|(morsel, batch)| {
                table.group_ids(&Self::columns_at(&batch, &self.partition_cols), &mut ids)?;
                let mut columns = batch.columns().to_vec();
                columns.push(Arc::new(UInt32Array::from(std::mem::take(&mut ids))));
                let batch = RecordBatch::try_new(Arc::clone(&spec.schema), columns)
                    .map_err(Error::arrow)?;
                Ok((morsel, batch))
            })
            .collect()
    }

    /// Bucket `b` of every lane, in input order, with its functions
    /// ([`WindowPlan::unordered`]): each partition's aggregates are
    /// computed once, over its rows in input order.
    fn compute_unordered(&self, lanes: &[WindowLane], b: usize) -> Result<Option<RecordBatch>> {
        let mut parts: Vec<&(usize, RecordBatch)> = Self::bucket(lanes, b).collect();
        if parts.is_empty() {
            return Ok(None);
        }
        parts.sort_by_key(|(morsel, _)| *morsel);
        let batch = arrow::compute::concat_batches(&self.work, parts.iter().map(|(_, b)| b))
            .map_err(Error::arrow)?;
        let mut table = GroupTable::new(&self.partition_types())?;
        let mut ids = Vec::new();
        table.group_ids(&Self::columns_at(&batch, &self.partition_cols), &mut ids)?;
        let groups = table.len();
        let n_in = self.input.fields().len();
        let mut columns: Vec<ArrayRef> = batch.columns()[..n_in].to_vec();
        // each row's partition as the aggregation's group, and as the row
        // of its value (made once, for the functions that need them)
        let tagged: OnceCell<(ArrayRef, UInt32Array)> = OnceCell::new();
        for (j, f) in self.functions.iter().enumerate() {
            let args = Self::columns_at(&batch, &self.arg_cols[j]);
            let t = self.output.field(n_in + j).data_type();
            let value = match &f.aggregate {
                // any other aggregate: the GROUP BY aggregation's, each
                // partition one group
                Some(shape) => {
                    let (tags, picks) = tagged.get_or_init(|| {
                        let tags = Int64Array::from_iter_values(ids.iter().map(|&g| i64::from(g)));
                        (Arc::new(tags), UInt32Array::from(ids.clone()))
                    });
                    let (by_partition, _) =
                        tagged_aggregate(shape, args, Arc::clone(tags), groups, false, t)?;
                    take(by_partition.as_ref(), picks, None).map_err(Error::arrow)?
                }
                None => partition_aggregate(f, args.first(), &ids, groups, t)?,
            };
            columns.push(conform(value, t)?);
        }
        RecordBatch::try_new(Arc::clone(&self.output), columns)
            .map(Some)
            .map_err(Error::arrow)
    }

    /// Sorts bucket `b` of every lane and computes the functions over it.
    pub(crate) fn compute(&self, lanes: &[WindowLane], b: usize) -> Result<Option<RecordBatch>> {
        let sorted = if self.presorted {
            // every lane's rows, in input order: the window's order
            let mut parts: Vec<&(usize, RecordBatch)> = lanes
                .iter()
                .filter_map(|l| l.parts.first())
                .flatten()
                .filter(|(_, batch)| batch.num_rows() > 0)
                .collect();
            parts.sort_by_key(|(m, _)| *m);
            let batches: Vec<&RecordBatch> = parts.iter().map(|(_, b)| b).collect();
            match batches.first() {
                None => None,
                Some(first) => Some(
                    arrow::compute::concat_batches(&first.schema(), batches.iter().copied())
                        .map_err(Error::arrow)?,
                ),
            }
        } else if self.unordered {
            return self.compute_unordered(lanes, b);
        } else {
            // the bucket's rows of every lane, sorted at once (a morsel's
            // index orders it among the others of any lane)
            let parts: Vec<(usize, RecordBatch)> = Self::bucket(lanes, b).cloned().collect();
            if parts.is_empty() {
                None
            } else if let Some(spec) = &self.numbered {
                let limit = self.limit.map(|rows| RowLimit { keys: 1, rows });
                Some(sort_parts(
                    spec,
                    self.number_partitions(spec, parts)?,
                    limit,
                )?)
            } else {
                let limit = self.limit.map(|rows| RowLimit {
                    keys: self.partition_cols.len(),
                    rows,
                });
                Some(sort_parts(&self.sort, parts, limit)?)
            }
        };
        let Some(sorted) = sorted else {
            return Ok(None);
        };
        self.compute_sorted(sorted, 0).map(Some)
    }

    /// The functions computed over `sorted` (`work` rows in window order,
    /// as [`WindowPlan::compute`] gathers them, from position `base` among
    /// all rows).
    fn compute_sorted(&self, sorted: RecordBatch, base: usize) -> Result<RecordBatch> {
        let n_in = self.input.fields().len();
        let no = self.order_by.len();
        let n = sorted.num_rows();
        // partitions and peer groups, as runs of equal keys (of the
        // partitions' numbers, where the bucket numbered them: never rows
        // already in window order)
        let partition_keys = match self.numbered {
            Some(_) if !self.presorted => vec![Arc::clone(sorted.column(self.work.fields().len()))],
            _ => Self::columns_at(&sorted, &self.partition_cols),
        };
        let mut same_partition = same_as_previous(&partition_keys, n)?;
        let mut partitions = partition_bounds(&same_partition);
        // the first rows of each partition only, where the sort kept more
        let (sorted, n) = match self.limit {
            Some(k) if partitions.windows(2).any(|p| p[1] - p[0] > k) => {
                let keep: Vec<u32> = partitions
                    .windows(2)
                    .flat_map(|p| p[0] as u32..(p[0] + k).min(p[1]) as u32)
                    .collect();
                // (a partition's first row starts it, the next k - 1 do not)
                same_partition = keep.iter().map(|&i| same_partition[i as usize]).collect();
                partitions = partition_bounds(&same_partition);
                let kept =
                    take_record_batch(&sorted, &UInt32Array::from(keep)).map_err(Error::arrow)?;
                let n = kept.num_rows();
                (kept, n)
            }
            _ => (sorted, n),
        };
        let order_keys = Self::columns_at(&sorted, &self.order_cols);
        let ctx = Ctx {
            n,
            base,
            partitions: &partitions,
            same_partition: &same_partition,
            order_keys: &order_keys,
            peers: OnceCell::new(),
            same_order: OnceCell::new(),
            order_key: (no == 1).then(|| (sorted.column(self.order_cols[0]), self.order_by[0].asc)),
        };
        let mut columns: Vec<ArrayRef> = sorted.columns()[..n_in].to_vec();
        for (j, f) in self.functions.iter().enumerate() {
            let args = &Self::columns_at(&sorted, &self.arg_cols[j]);
            let t = self.output.field(n_in + j).data_type();
            columns.push(conform(compute_function(f, args, &ctx, t)?, t)?);
        }
        RecordBatch::try_new(Arc::clone(&self.output), columns).map_err(Error::arrow)
    }
}

/// Rows per range of a window computed range by range ([`Ranges`]), at
/// most (a morsel's rows where morsels are smaller), and at least four
/// times the rows a frame spans.
const RANGE_ROWS: usize = 1 << 16;

/// A presorted window's rows, in window order, to be computed range by
/// range ([`WindowPlan::compute_range`]): every function's frames reach a
/// bounded span from their row ([`Span`]), so a range's rows are computed
/// over the range and the rows its frames reach alone, as if they were
/// all rows. A partition that starts before
/// them seems to start at their first row, which only the rows around the
/// range (not kept) can tell.
pub(crate) struct Ranges {
    batches: Vec<RecordBatch>,
    /// Where each batch's first row is among all rows, then their number.
    offsets: Vec<usize>,
    /// Rows per range (the last may have fewer; all rows in one where the
    /// window runs on one lane).
    rows: usize,
    /// Where the order key is not NULL (RANGE offsets are searched
    /// there; NULLs sort first or last).
    keyed: std::ops::Range<usize>,
}

impl Ranges {
    /// The number of ranges (one where there are no rows).
    pub(crate) fn len(&self) -> usize {
        self.offsets[self.offsets.len() - 1]
            .div_ceil(self.rows)
            .max(1)
    }
}

impl WindowPlan {
    /// The window is computed range by range ([`Ranges`]).
    pub(crate) fn by_range(&self) -> bool {
        self.span.is_some()
    }

    /// The lanes' rows (in morsel order: the window's) cut into ranges
    /// for `parallel` lanes of morsels of `morsel_rows` rows: ranges of a
    /// morsel's rows (at most [`RANGE_ROWS`]), or four times as many as a
    /// frame spans where that is more (RANGE offsets' spans measured at
    /// three rows), so that the rows read around each range add at most
    /// about a quarter; on one lane, one range unless frames span a
    /// sixteenth of a range at most.
    pub(crate) fn ranges(
        &self,
        lanes: Vec<WindowLane>,
        parallel: usize,
        morsel_rows: usize,
    ) -> Result<Ranges> {
        let mut parts: Vec<(usize, RecordBatch)> = lanes
            .into_iter()
            .filter_map(|l| l.parts.into_iter().next())
            .flatten()
            .filter(|(_, batch)| batch.num_rows() > 0)
            .collect();
        parts.sort_by_key(|(m, _)| *m);
        let mut offsets = Vec::with_capacity(parts.len() + 1);
        offsets.push(0);
        let batches: Vec<RecordBatch> = parts
            .into_iter()
            .map(|(_, b)| {
                offsets.push(offsets[offsets.len() - 1] + b.num_rows());
                b
            })
            .collect();
        let total = offsets[offsets.len() - 1];
        let nulls: usize = match self.order_cols.first() {
            Some(&c) if self.span.is_some_and(|s| s.keyed) => batches
                .iter()
                .map(|b: &RecordBatch| b.column(c).logical_null_count())
                .sum(),
            _ => 0,
        };
        let keyed = match self.order_by.first() {
            Some(k) if k.nulls_first => nulls..total,
            _ => 0..total - nulls,
        };
        let mut all = Ranges {
            batches,
            offsets,
            rows: total.max(1),
            keyed,
        };
        let Some(span) = self.span else {
            return Ok(all);
        };
        // one lane cuts ranges only where the rows around them are few
        // (frames of a few rows): small ranges keep a frame's vectors in
        // cache, which pays for them (a 7-row moving average over 6M rows
        // 222 -> 209 ms on one thread; RANGE offsets over 3 days, a
        // quarter more rows and searches, 261 -> 281)
        if parallel <= 1 && span.keyed {
            return Ok(all);
        }
        let mut reach = span.back.saturating_add(span.ahead).saturating_add(1);
        if span.keyed && total > 0 {
            for i in [total / 4, total / 2, total * 3 / 4] {
                let (first, last) = self.keyed_reach(&all, i, i + 1)?;
                reach = reach.max(last - first);
            }
        }
        let per = morsel_rows.clamp(1, RANGE_ROWS);
        if parallel <= 1 && reach.saturating_mul(16) > per {
            return Ok(all);
        }
        all.rows = per.max(reach.saturating_mul(4)).min(all.rows);
        Ok(all)
    }

    /// Range `r` of `all` with its functions computed: over the rows from
    /// one before the first any frame of the range's rows holds to the
    /// last (a DOUBLE sum's tree adds the same nodes in the same order as
    /// over all rows: its nodes are aligned on the rows' positions among
    /// all, see [`SumTree`]). The extra row before makes a frame that
    /// starts at the range's first row but not its partition's start no
    /// frame that seems to start at the partition's.
    pub(crate) fn compute_range(&self, all: &Ranges, r: usize) -> Result<RecordBatch> {
        let span = self.span.ok_or_else(|| {
            Error::Internal("a window computed by ranges without a bounded span".into())
        })?;
        let total = all.offsets[all.offsets.len() - 1];
        if total == 0 {
            return Ok(RecordBatch::new_empty(Arc::clone(&self.output)));
        }
        let (start, end) = (r * all.rows, ((r + 1) * all.rows).min(total));
        let (mut lo, mut hi) = (
            start.saturating_sub(span.back),
            end.saturating_add(span.ahead),
        );
        if span.keyed {
            let (first, last) = self.keyed_reach(all, start, end)?;
            (lo, hi) = (lo.min(first), hi.max(last));
        }
        // (one row more before: see above)
        let (lo, hi) = (lo.saturating_sub(1), hi.min(total));
        let first = all.offsets.partition_point(|&o| o <= lo) - 1;
        let mut pieces = Vec::new();
        for (k, batch) in all.batches.iter().enumerate().skip(first) {
            let o = all.offsets[k];
            if o >= hi {
                break;
            }
            let (s, e) = (lo.max(o) - o, hi.min(all.offsets[k + 1]) - o);
            pieces.push(batch.slice(s, e - s));
        }
        let rows = arrow::compute::concat_batches(&self.work, &pieces).map_err(Error::arrow)?;
        let out = self.compute_sorted(rows, lo)?;
        Ok(out.slice(start - lo, end - start))
    }

    /// The first row the RANGE frames of rows `start..end` hold and one
    /// past their last ([`Span::keyed`]), found among all rows of `all`
    /// by binary search on the order key: a frame's bounds do not move
    /// back from row to row, so those of the range's first row and of its
    /// last bound them all. A NULL key's frame is its peers: every NULL.
    fn keyed_reach(&self, all: &Ranges, start: usize, end: usize) -> Result<(usize, usize)> {
        let col = self.order_cols[0];
        let sign = if self.order_by[0].asc { 1.0 } else { -1.0 };
        let total = all.offsets[all.offsets.len() - 1];
        let key_at = |i: usize| -> Result<Option<f64>> {
            let b = all.offsets.partition_point(|&o| o <= i) - 1;
            let one = all.batches[b].column(col).slice(i - all.offsets[b], 1);
            let k = range_key(&one)?;
            let k = k.as_primitive::<Float64Type>();
            Ok(k.is_valid(0).then(|| sign * k.value(0)))
        };
        // the first row of the keyed run whose key is past `target` (for
        // a start, the first not before it), as `frames` finds it
        let search = |target: f64, is_start: bool| -> Result<usize> {
            let (mut l, mut r) = (all.keyed.start, all.keyed.end);
            while l < r {
                let m = l + (r - l) / 2;
                let past =
                    key_at(m)?.is_some_and(|x| if is_start { x < target } else { x <= target });
                if past {
                    l = m + 1;
                } else {
                    r = m;
                }
            }
            Ok(l)
        };
        let bounds = |i: usize, is_first: bool| -> Result<usize> {
            let Some(key) = key_at(i)? else {
                // a NULL's peers: the NULLs before or after the keyed run
                return Ok(match (is_first, all.keyed.start > 0) {
                    (true, true) => 0,
                    (true, false) => all.keyed.end,
                    (false, true) => all.keyed.start,
                    (false, false) => total,
                });
            };
            let mut at = if is_first { usize::MAX } else { 0 };
            for f in self
                .functions
                .iter()
                .filter(|f| f.frame.units == FrameUnits::Range)
            {
                for (b, is_start) in [(&f.frame.start, true), (&f.frame.end, false)] {
                    let target = match b {
                        FrameBound::CurrentRow => key,
                        FrameBound::Preceding(v) => range_target(v, key, sign, true)?,
                        FrameBound::Following(v) => range_target(v, key, sign, false)?,
                        _ => {
                            return Err(Error::Internal(
                                "an unbounded RANGE frame computed by ranges".into(),
                            ));
                        }
                    };
                    let row = search(target, is_start)?;
                    at = if is_first { at.min(row) } else { at.max(row) };
                }
            }
            Ok(at)
        };
        let first = bounds(start, true)?.min(start);
        let last = bounds(end - 1, false)?.max(end);
        Ok((first, last))
    }
}

/// How far the frames of a window's functions reach from a row, where
/// that is bounded (`WindowPlan::span`): `back` rows before it and
/// `ahead` after it, and where `keyed`, the rows RANGE offsets from its
/// order key reach (searched among all rows).
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
struct Span {
    back: usize,
    ahead: usize,
    keyed: bool,
}

impl Span {
    /// The span of `f`: LAG and LEAD without IGNORE NULLS (their offset),
    /// and aggregates, FIRST_VALUE, LAST_VALUE and NTH_VALUE over ROWS
    /// frames both of whose ends are the current row or a constant
    /// number of rows from it, or (where `keyable`: one partition, one
    /// order key that offsets move) over RANGE frames whose ends are the
    /// current row's peers or an offset from its key. Ranks and row
    /// numbers read the partition's start; unbounded frames reach it.
    fn of(f: &WindowExpr, keyable: bool) -> Option<Span> {
        let rows = |back, ahead| {
            Some(Span {
                back,
                ahead,
                keyed: false,
            })
        };
        match f.func {
            WindowFunction::Lag | WindowFunction::Lead if !f.ignore_nulls => {
                let d = usize::try_from(f.offset.unsigned_abs()).ok()?;
                rows(d, d)
            }
            WindowFunction::FirstValue
            | WindowFunction::LastValue
            | WindowFunction::NthValue
            | WindowFunction::Aggregate(_) => {
                let bounds = [&f.frame.start, &f.frame.end];
                if f.frame.units == FrameUnits::Groups {
                    // (peer groups of any length)
                    return None;
                }
                if f.frame.units == FrameUnits::Range {
                    let offsets = bounds.iter().all(|b| {
                        matches!(
                            b,
                            FrameBound::CurrentRow
                                | FrameBound::Preceding(_)
                                | FrameBound::Following(_)
                        )
                    });
                    return (keyable && offsets).then_some(Span {
                        back: 0,
                        ahead: 0,
                        keyed: true,
                    });
                }
                let (mut back, mut ahead) = (0usize, 0usize);
                for bound in bounds {
                    match bound {
                        FrameBound::CurrentRow => {}
                        FrameBound::Preceding(ScalarValue::Int64(d)) => {
                            back = back.max(usize::try_from(*d).ok()?);
                        }
                        FrameBound::Following(ScalarValue::Int64(d)) => {
                            ahead = ahead.max(usize::try_from(*d).ok()?);
                        }
                        _ => return None,
                    }
                }
                rows(back, ahead)
            }
            _ => None,
        }
    }

    /// The span of functions of spans `self` and `other`.
    fn and(self, other: Span) -> Span {
        Span {
            back: self.back.max(other.back),
            ahead: self.ahead.max(other.ahead),
            keyed: self.keyed || other.keyed,
        }
    }
}

impl std::fmt::Display for Span {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let rows = self.back > 0 || self.ahead > 0 || !self.keyed;
        if rows {
            write!(f, "{} row(s) back, {} ahead", self.back, self.ahead)?;
        }
        match (self.keyed, rows) {
            (true, true) => write!(f, ", and as far as their RANGE offsets (searched by key)"),
            (true, false) => write!(f, "as far as their RANGE offsets (searched by key)"),
            (false, _) => Ok(()),
        }
    }
}

/// Whether RANGE offsets move keys of type `t` ([`range_key`]).
fn range_keyable(t: &DataType) -> bool {
    t.is_numeric() || matches!(t, DataType::Date32 | DataType::Timestamp(..))
}

/// Whether `f` can be computed batch by batch over rows in window order
/// ([`Batches`]): it reads a row's position, its partition's and peer
/// group's bounds, a value a fixed number of rows away (LAG, LEAD without
/// IGNORE NULLS), or is a count or exact sum from its partition's first
/// row ([`Running`]). `input` is the window's input.
pub(crate) fn by_batch(f: &WindowExpr, input: &SchemaRef) -> bool {
    match f.func {
        WindowFunction::RowNumber
        | WindowFunction::Rank
        | WindowFunction::DenseRank
        | WindowFunction::PercentRank
        | WindowFunction::CumeDist
        | WindowFunction::Ntile => true,
        WindowFunction::Lag | WindowFunction::Lead => !f.ignore_nulls,
        _ => Running::of(f, input).is_some(),
    }
}

/// The keys a window's rows are in window order by: the partition keys
/// (ascending, NULLs last), then the order keys. A full sort by them runs
/// under a window computed batch by batch (`rewrite::sort_under_window`).
pub(crate) fn window_order(partition_by: &[Expr], order_by: &[SortKey]) -> Vec<SortKey> {
    partition_by
        .iter()
        .map(|p| SortKey {
            expr: p.clone(),
            asc: true,
            nulls_first: false,
        })
        .chain(order_by.iter().cloned())
        .collect()
}

/// Where the frame of a count or an exact sum (of integers or decimals:
/// a sum carried over from the batches before adds up as one sum over
/// the partition would) ends in a window computed batch by batch; it
/// starts at the partition's first row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Running {
    /// `ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW`: at the row.
    Row,
    /// `RANGE ... AND CURRENT ROW` (the default with ORDER BY): at the
    /// row's last peer.
    Peers,
    /// `... AND UNBOUNDED FOLLOWING` (the default without ORDER BY): at
    /// the partition's last row.
    All,
}

impl Running {
    fn of(f: &WindowExpr, input: &SchemaRef) -> Option<Self> {
        let exact = |e: &Expr| {
            let t = e.data_type(input);
            t.is_integer() || matches!(t, DataType::Decimal128(..) | DataType::Null)
        };
        if f.aggregate.is_some() {
            return None;
        }
        match f.func {
            WindowFunction::Aggregate(AggregateFunction::CountStar | AggregateFunction::Count) => {}
            WindowFunction::Aggregate(AggregateFunction::Sum | AggregateFunction::Avg)
                if f.args.first().is_some_and(exact) => {}
            _ => return None,
        }
        if !matches!(f.frame.start, FrameBound::UnboundedPreceding) {
            return None;
        }
        match (&f.frame.end, f.frame.units) {
            (FrameBound::CurrentRow, FrameUnits::Rows) => Some(Self::Row),
            (FrameBound::CurrentRow, FrameUnits::Range | FrameUnits::Groups) => Some(Self::Peers),
            (FrameBound::UnboundedFollowing, _) => Some(Self::All),
            _ => None,
        }
    }
}

/// Whether `func` reads peer groups (rows equal in the order keys).
fn reads_peers(func: WindowFunction) -> bool {
    matches!(
        func,
        WindowFunction::Rank
            | WindowFunction::DenseRank
            | WindowFunction::PercentRank
            | WindowFunction::CumeDist
    )
}

/// Each row's run (its partition or peer group) among all rows: `[start,
/// end)`, the same for every row of a batch or per row.
enum Runs {
    All(usize, usize),
    Rows(Vec<usize>, Vec<usize>),
}

impl Runs {
    fn start(&self, i: usize) -> usize {
        match self {
            Runs::All(s, _) => *s,
            Runs::Rows(s, _) => s[i],
        }
    }

    fn end(&self, i: usize) -> usize {
        match self {
            Runs::All(_, e) => *e,
            Runs::Rows(_, e) => e[i],
        }
    }
}

/// A count and an unscaled sum of non-NULL values.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Part {
    count: u64,
    sum: i128,
}

impl Part {
    fn add(self, other: Part) -> Result<Part> {
        Ok(Part {
            count: self.count + other.count,
            sum: self.sum.checked_add(other.sum).ok_or_else(sum_overflow)?,
        })
    }

    /// Adds row `i` of a function's [`running_values`]: counted unless
    /// NULL, its value (0 for NULL) summed.
    ///
    /// [`running_values`]: WindowPlan::running_values
    #[inline]
    fn step(&mut self, values: &[i128], nulls: Option<&NullBuffer>, i: usize) -> Result<()> {
        self.count += u64::from(nulls.is_none_or(|b| b.is_valid(i)));
        if let Some(v) = values.get(i) {
            self.sum = self.sum.checked_add(*v).ok_or_else(sum_overflow)?;
        }
        Ok(())
    }

    /// `self - other`, where `other` is a prefix of `self`.
    fn sub(self, other: Part) -> Part {
        Part {
            count: self.count - other.count,
            sum: self.sum - other.sum,
        }
    }
}

/// A lane's account of one batch of a window computed batch by batch,
/// made where the batch's rows were cut ([`WindowPlan::scatter`]) so that
/// the one pass over the batches reads no row ([`Batches`]).
pub(crate) struct Marks {
    /// Per row, whether it is in the partition of the row before it
    /// (false for the first); empty without a PARTITION BY.
    part: Vec<bool>,
    /// Per row, whether it is a peer of the row before it: in its
    /// partition and equal in the order keys (false for the first); empty
    /// where no function reads peer groups.
    peer: Vec<bool>,
    /// Where the batch's first partition ends and its last starts.
    part_first_end: usize,
    part_last_start: usize,
    /// Where the batch's first peer group ends and its last starts.
    peer_first_end: usize,
    peer_last_start: usize,
    /// Peer groups starting after the batch's last partition start (after
    /// its first row where none does): its last row's dense rank counts
    /// them.
    dense_tail: i64,
    /// Per function ([`Running`]; default for the others): its count and
    /// sum from the batch's first row to where its first peer group ends,
    /// to where its first partition ends, to where its last partition
    /// starts, and over the batch.
    sums: Vec<[Part; 4]>,
}

impl Marks {
    fn size(&self) -> usize {
        self.part.len() + self.peer.len() + self.sums.len() * size_of::<[Part; 4]>()
    }
}

/// Where the first run of `same` (marks as [`same_as_previous`] makes
/// them) ends, and where its last starts.
fn runs(same: &[bool]) -> (usize, usize) {
    let n = same.len();
    let first_end = same.iter().skip(1).position(|&x| !x).map_or(n, |p| p + 1);
    let last_start = same.iter().rposition(|&x| !x).unwrap_or(0);
    (first_end, last_start)
}

/// Rows already in window order (a full sort by [`window_order`] ran
/// below the window), computed batch by batch ([`WindowPlan::by_batch`]):
/// the lanes' batches in order, where each starts, and what a batch must
/// know of the others, found in one pass over the batches' [`Marks`]: the
/// partition and the peer group of its first row may start before it and
/// those of its last row end after it; its first row's dense rank counts
/// the peer groups before it in its partition; the running counts and
/// sums of its first partition carry those of the batches before it.
pub(crate) struct Batches {
    batches: Vec<RecordBatch>,
    marks: Vec<Marks>,
    /// Where each batch's first row is among all rows, then their number.
    offsets: Vec<usize>,
    /// Per batch, where the partition and the peer group of its first
    /// row start, and one past where those of its last row end.
    part_first_start: Vec<usize>,
    part_last_end: Vec<usize>,
    peer_first_start: Vec<usize>,
    peer_last_end: Vec<usize>,
    /// Per batch, the dense rank of its first row.
    first_dense: Vec<i64>,
    /// Per batch, per function ([`Running`]): its count and sum over the
    /// rows of the partition of the batch's first row before the batch.
    carry: Vec<Vec<Part>>,
    /// Per batch, per function: its count and sum from the start of the
    /// partition of the batch's last row to where that row's peer group
    /// ends, and to where the partition ends, where these are in later
    /// batches.
    peer_tail: Vec<Vec<Part>>,
    part_tail: Vec<Vec<Part>>,
}

impl Batches {
    pub(crate) fn len(&self) -> usize {
        self.batches.len()
    }
}

impl WindowPlan {
    /// The window is computed batch by batch ([`Batches`]).
    pub(crate) fn by_batch(&self) -> bool {
        self.by_batch
    }

    /// A lane's [`Marks`] of `batch` (of `work` rows in window order).
    fn marks(&self, batch: &RecordBatch) -> Result<Marks> {
        let n = batch.num_rows();
        // (no marks where nothing reads them: without a PARTITION BY all
        // rows are one partition)
        let part = if self.partition_cols.is_empty() {
            Vec::new()
        } else {
            same_as_previous(&Self::columns_at(batch, &self.partition_cols), n)?
        };
        let peer = if self.reads_peers {
            let order = same_as_previous(&Self::columns_at(batch, &self.order_cols), n)?;
            if part.is_empty() {
                order
            } else {
                part.iter().zip(&order).map(|(&p, &o)| p && o).collect()
            }
        } else {
            Vec::new()
        };
        let (part_first_end, part_last_start) = if part.is_empty() { (n, 0) } else { runs(&part) };
        let (peer_first_end, peer_last_start) = if peer.is_empty() { (n, 0) } else { runs(&peer) };
        let dense_tail = peer
            .get(part_last_start + 1..)
            .unwrap_or_default()
            .iter()
            .filter(|&&x| !x)
            .count() as i64;
        let sums = (0..self.functions.len())
            .map(|j| {
                if self.running[j].is_none() {
                    return Ok([Part::default(); 4]);
                }
                // one pass, keeping the running count and sum at each
                // point (no prefix kept)
                let points = [peer_first_end, part_first_end, part_last_start, n];
                let mut order = [0, 1, 2, 3];
                order.sort_by_key(|&k| points[k]);
                let (values, nulls, _) = self.running_values(j, batch)?;
                let mut at = [Part::default(); 4];
                let (mut acc, mut i) = (Part::default(), 0);
                for k in order {
                    while i < points[k] {
                        acc.step(&values, nulls.as_ref(), i)?;
                        i += 1;
                    }
                    at[k] = acc;
                }
                Ok(at)
            })
            .collect::<Result<_>>()?;
        Ok(Marks {
            part,
            peer,
            part_first_end,
            part_last_start,
            peer_first_end,
            peer_last_start,
            dense_tail,
            sums,
        })
    }

    /// The lanes' rows, in window order, ready to be computed batch by
    /// batch.
    pub(crate) fn batches(&self, lanes: Vec<WindowLane>) -> Result<Batches> {
        let mut parts: Vec<(usize, RecordBatch, Marks)> = Vec::new();
        for lane in lanes {
            let mut marks = lane.marks.into_iter();
            for (morsel, batch) in lane.parts.into_iter().flatten() {
                let m = marks
                    .next()
                    .ok_or_else(|| Error::Internal("a window batch without its marks".into()))?;
                if batch.num_rows() > 0 {
                    parts.push((morsel, batch, m));
                }
            }
        }
        // (a morsel's batches stay in the order a lane made them)
        parts.sort_by_key(|(m, ..)| *m);
        let k = parts.len();
        let mut offsets = Vec::with_capacity(k + 1);
        offsets.push(0);
        let mut batches = Vec::with_capacity(k);
        let mut marks = Vec::with_capacity(k);
        for (_, b, m) in parts {
            offsets.push(offsets[offsets.len() - 1] + b.num_rows());
            batches.push(b);
            marks.push(m);
        }
        let len = |b: usize| offsets[b + 1] - offsets[b];
        // per batch: whether its first row is in the partition of the
        // last row of the batch before, and a peer of it
        let (mut part_cont, mut peer_cont) = (vec![false; k], vec![false; k]);
        for b in 1..k {
            part_cont[b] = self.continues(&batches[b - 1], &batches[b], &self.partition_cols)?;
            peer_cont[b] =
                part_cont[b] && self.continues(&batches[b - 1], &batches[b], &self.order_cols)?;
        }
        // runs (partitions, peer groups) reaching back into the batches
        // before, and on into the batches after
        let back = |cont: &[bool],
                    first_end: &dyn Fn(usize) -> usize,
                    last_start: &dyn Fn(usize) -> usize| {
            let mut start: Vec<usize> = offsets[..k].to_vec();
            for b in 1..k {
                if cont[b] {
                    start[b] = if first_end(b - 1) == len(b - 1) {
                        start[b - 1]
                    } else {
                        offsets[b - 1] + last_start(b - 1)
                    };
                }
            }
            start
        };
        let forth = |cont: &[bool],
                     first_end: &dyn Fn(usize) -> usize,
                     last_start: &dyn Fn(usize) -> usize| {
            let mut end: Vec<usize> = offsets[1..].to_vec();
            for b in (0..k.saturating_sub(1)).rev() {
                if cont[b + 1] {
                    end[b] = if last_start(b + 1) == 0 {
                        end[b + 1]
                    } else {
                        offsets[b + 1] + first_end(b + 1)
                    };
                }
            }
            end
        };
        let (pfe, pls) = (
            |b: usize| marks[b].part_first_end,
            |b: usize| marks[b].part_last_start,
        );
        let (efe, els) = (
            |b: usize| marks[b].peer_first_end,
            |b: usize| marks[b].peer_last_start,
        );
        let part_first_start = back(&part_cont, &pfe, &pls);
        let part_last_end = forth(&part_cont, &pfe, &pls);
        let peer_first_start = back(&peer_cont, &efe, &els);
        let peer_last_end = forth(&peer_cont, &efe, &els);
        // dense ranks, restarting with each partition
        let mut first_dense = vec![1i64; k];
        for b in 1..k {
            if part_cont[b] {
                let m = &marks[b - 1];
                let last = if m.part_last_start == 0 {
                    first_dense[b - 1] + m.dense_tail
                } else {
                    1 + m.dense_tail
                };
                first_dense[b] = last + i64::from(!peer_cont[b]);
            }
        }
        // running counts and sums, from each partition's first row
        let f = self.functions.len();
        let mut carry = vec![vec![Part::default(); f]; k];
        let (mut peer_tail, mut part_tail) = (vec![Vec::new(); k], vec![Vec::new(); k]);
        if self.running.iter().any(Option::is_some) {
            // over the partition of a batch's last row, to the batch's end
            let mut at_end = vec![vec![Part::default(); f]; k];
            for b in 0..k {
                let m = &marks[b];
                for j in 0..f {
                    let [_, _, last_start, all] = m.sums[j];
                    at_end[b][j] = if m.part_last_start == 0 {
                        carry[b][j].add(all)?
                    } else {
                        all.sub(last_start)
                    };
                    if b + 1 < k && part_cont[b + 1] {
                        carry[b + 1][j] = at_end[b][j];
                    }
                }
            }
            // over a partition to `e`, in a later batch than `b`: at a
            // batch's end, or where its first peer group or partition ends
            let tail = |b: usize, e: usize, which: usize| -> Result<Vec<Part>> {
                let at = offsets.partition_point(|&o| o < e) - 1;
                if at == b || e == offsets[at + 1] {
                    return Ok(at_end[at].clone());
                }
                (0..f)
                    .map(|j| carry[at][j].add(marks[at].sums[j][which]))
                    .collect()
            };
            for b in 0..k {
                if peer_last_end[b] > offsets[b + 1] {
                    peer_tail[b] = tail(b, peer_last_end[b], 0)?;
                }
                if part_last_end[b] > offsets[b + 1] {
                    part_tail[b] = tail(b, part_last_end[b], 1)?;
                }
            }
        }
        Ok(Batches {
            batches,
            marks,
            offsets,
            part_first_start,
            part_last_end,
            peer_first_start,
            peer_last_end,
            first_dense,
            carry,
            peer_tail,
            part_tail,
        })
    }

    /// Running count and sum of function `j` ([`Running`]) over `batch`,
    /// from `start`: `n + 1` prefixes, and the scale of the sums.
    fn prefix(&self, j: usize, batch: &RecordBatch, start: Part) -> Result<(Vec<Part>, i8)> {
        let n = batch.num_rows();
        let (values, nulls, scale) = self.running_values(j, batch)?;
        let mut prefix = Vec::with_capacity(n + 1);
        let mut acc = start;
        prefix.push(acc);
        for i in 0..n {
            acc.step(&values, nulls.as_ref(), i)?;
            prefix.push(acc);
        }
        Ok((prefix, scale))
    }

    /// What function `j` ([`Running`]) counts and sums over `batch`: its
    /// argument's values unscaled (none for a count), where it is NULL
    /// (none for `count(*)`), and the scale of the sums.
    fn running_values(
        &self,
        j: usize,
        batch: &RecordBatch,
    ) -> Result<(Vec<i128>, Option<NullBuffer>, i8)> {
        let f = &self.functions[j];
        let x = self.arg_cols[j].first().map(|&c| batch.column(c));
        let (values, scale) = match (f.func, x) {
            (
                WindowFunction::Aggregate(AggregateFunction::Sum | AggregateFunction::Avg),
                Some(x),
            ) => unscaled(x)?,
            _ => (Vec::new(), 0),
        };
        let nulls = x
            .and_then(|x| x.logical_nulls())
            .filter(|n| n.null_count() > 0);
        Ok((values, nulls, scale))
    }

    /// Whether the first row of `next` equals the last row of `prev` in
    /// columns `cols` (as [`same_as_previous`] compares them; true for
    /// none).
    fn continues(&self, prev: &RecordBatch, next: &RecordBatch, cols: &[usize]) -> Result<bool> {
        let last = prev.num_rows() - 1;
        let pair = cols
            .iter()
            .map(|&c| {
                arrow::compute::concat(&[
                    prev.column(c).slice(last, 1).as_ref(),
                    next.column(c).slice(0, 1).as_ref(),
                ])
                .map_err(Error::arrow)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(same_as_previous(&pair, 2)?[1])
    }

    /// Batch `b` of `all` with its functions computed.
    pub(crate) fn compute_batch(&self, all: &Batches, b: usize) -> Result<RecordBatch> {
        let batch = &all.batches[b];
        let marks = &all.marks[b];
        let n = batch.num_rows();
        let offset = all.offsets[b];
        // each row's partition and peer group among all rows
        let runs = |same: &[bool],
                    first_end: usize,
                    last_start: usize,
                    first_start: usize,
                    last_end: usize| {
            if same.is_empty() {
                return Runs::All(first_start, last_end);
            }
            let mut start = Vec::with_capacity(n);
            for (j, &s) in same.iter().enumerate() {
                start.push(if j < first_end {
                    first_start
                } else if s {
                    start[j - 1]
                } else {
                    offset + j
                });
            }
            let mut end = vec![0; n];
            for j in (0..n).rev() {
                end[j] = if j >= last_start {
                    last_end
                } else if same[j + 1] {
                    end[j + 1]
                } else {
                    offset + j + 1
                };
            }
            Runs::Rows(start, end)
        };
        let part = runs(
            &marks.part,
            marks.part_first_end,
            marks.part_last_start,
            all.part_first_start[b],
            all.part_last_end[b],
        );
        let peer = runs(
            &marks.peer,
            marks.peer_first_end,
            marks.peer_last_start,
            all.peer_first_start[b],
            all.peer_last_end[b],
        );
        let n_in = self.input.fields().len();
        let mut columns: Vec<ArrayRef> = batch.columns()[..n_in].to_vec();
        for (j, f) in self.functions.iter().enumerate() {
            let t = self.output.field(n_in + j).data_type();
            let ints = |v: Vec<i64>| -> ArrayRef { Arc::new(Int64Array::from(v)) };
            let doubles = |v: Vec<f64>| -> ArrayRef { Arc::new(Float64Array::from(v)) };
            let rows = 0..n;
            let value: ArrayRef = match f.func {
                WindowFunction::RowNumber => ints(
                    rows.map(|i| (offset + i - part.start(i) + 1) as i64)
                        .collect(),
                ),
                WindowFunction::Rank => ints(
                    rows.map(|i| (peer.start(i) - part.start(i) + 1) as i64)
                        .collect(),
                ),
                WindowFunction::DenseRank => {
                    let mut v = Vec::with_capacity(n);
                    let mut rank = all.first_dense[b];
                    for i in rows {
                        if i > 0 && !marks.peer[i] {
                            rank = if marks.part.get(i).is_none_or(|&p| p) {
                                rank + 1
                            } else {
                                1
                            };
                        }
                        v.push(rank);
                    }
                    ints(v)
                }
                WindowFunction::PercentRank => doubles(
                    rows.map(|i| {
                        let size = part.end(i) - part.start(i);
                        if size <= 1 {
                            0.0
                        } else {
                            (peer.start(i) - part.start(i)) as f64 / (size - 1) as f64
                        }
                    })
                    .collect(),
                ),
                WindowFunction::CumeDist => doubles(
                    rows.map(|i| {
                        (peer.end(i) - part.start(i)) as f64 / (part.end(i) - part.start(i)) as f64
                    })
                    .collect(),
                ),
                WindowFunction::Ntile => {
                    let v: Vec<Option<i64>> = rows
                        .map(|i| {
                            ntile(
                                f.offset,
                                part.end(i) - part.start(i),
                                offset + i - part.start(i),
                            )
                        })
                        .collect();
                    Arc::new(Int64Array::from(v))
                }
                WindowFunction::Lag | WindowFunction::Lead => {
                    let shift = if f.func == WindowFunction::Lag {
                        f.offset.saturating_neg()
                    } else {
                        f.offset
                    };
                    self.shifted(all, b, j, shift, &part)?
                }
                WindowFunction::Aggregate(a) => {
                    // from the first row of the batch's first partition
                    // (which may start in a batch before): the carry
                    // added to every prefix (differences of two, the
                    // partitions after it, are the same)
                    let (prefix, scale) = self.prefix(j, batch, all.carry[b][j])?;
                    let (part_tail, peer_tail) = (all.part_tail[b].get(j), all.peer_tail[b].get(j));
                    let running = self.running[j];
                    // the count and sum from the partition's first row to
                    // one past the frame's last row, for row `i`
                    let parts = rows.map(|i| {
                        let e = match running {
                            Some(Running::Row) => offset + i + 1,
                            Some(Running::Peers) => peer.end(i),
                            _ => part.end(i),
                        };
                        if e > offset + n {
                            // (a run reaching into a later batch: the tail
                            // the pass over the batches found)
                            let tail = if e == part.end(i) {
                                part_tail
                            } else {
                                peer_tail
                            };
                            tail.copied().unwrap_or_default()
                        } else if i < marks.part_first_end {
                            prefix[e - offset]
                        } else {
                            prefix[e - offset].sub(prefix[part.start(i) - offset])
                        }
                    });
                    match a {
                        AggregateFunction::CountStar | AggregateFunction::Count => {
                            ints(parts.map(|p| p.count as i64).collect())
                        }
                        _ => exact_sums(
                            a == AggregateFunction::Avg,
                            parts.map(|p| (p.count > 0).then_some((p.sum, p.count))),
                            scale,
                            t,
                        )?,
                    }
                }
                _ => {
                    return Err(Error::Internal(format!(
                        "{} computed batch by batch",
                        f.func.name()
                    )));
                }
            };
            columns.push(conform(value, t)?);
        }
        RecordBatch::try_new(Arc::clone(&self.output), columns).map_err(Error::arrow)
    }

    /// LAG or LEAD (function `j`) of batch `b`: the argument `shift` rows
    /// away among all rows where that is in the row's partition (`[start,
    /// end)` per row), else the default (the second argument, or NULL).
    fn shifted(
        &self,
        all: &Batches,
        b: usize,
        j: usize,
        shift: i64,
        part: &Runs,
    ) -> Result<ArrayRef> {
        let arg = |k: usize, i: usize| Arc::clone(all.batches[k].column(self.arg_cols[j][i]));
        let n = all.batches[b].num_rows();
        let offset = all.offsets[b] as i64;
        let total = all.offsets.last().copied().unwrap_or(0) as i64;
        // the batches the shifted rows lie in: a run of them
        let batch_of = |i: i64| all.offsets.partition_point(|&o| o as i64 <= i) - 1;
        let (lo, hi) = (
            offset.saturating_add(shift),
            (offset + n as i64 - 1).saturating_add(shift),
        );
        let (first, last) = (
            batch_of(lo.clamp(0, total - 1)),
            batch_of(hi.clamp(0, total - 1)),
        );
        let mut arrays: Vec<ArrayRef> = (first..=last).map(|k| arg(k, 0)).collect();
        let defaults = self.arg_cols[j].len() > 1;
        let default = if defaults {
            arg(b, 1)
        } else {
            new_null_array(arrays[0].data_type(), 1)
        };
        let d = arrays.len();
        arrays.push(default);
        let mut k = first;
        let picks: Vec<(usize, usize)> = (0..n)
            .map(|i| {
                let t = (offset + i as i64).saturating_add(shift);
                if t < part.start(i) as i64 || t >= part.end(i) as i64 {
                    return (d, if defaults { i } else { 0 });
                }
                let t = t as usize;
                while all.offsets[k + 1] <= t {
                    k += 1;
                }
                (k - first, t - all.offsets[k])
            })
            .collect();
        let refs: Vec<&dyn Array> = arrays.iter().map(AsRef::as_ref).collect();
        interleave(&refs, &picks).map_err(Error::arrow)
    }
}

/// NTILE(`buckets`) of row `i` of `rows`: DuckDB's rule, the first (rows
/// mod buckets) buckets get one more row; NULL for fewer than one bucket.
fn ntile(buckets: i64, rows: usize, i: usize) -> Option<i64> {
    if buckets <= 0 {
        return None;
    }
    let rows = rows as i64;
    let k = buckets.min(rows);
    let size = rows / k;
    let large = rows - k * size;
    let small_from = large * (size + 1);
    let r = i as i64;
    Some(if r < small_from {
        1 + r / (size + 1)
    } else {
        1 + large + (r - small_from) / size
    })
}

/// Where each partition starts, given per row whether it is in the
/// partition of the row before, then the number of rows.
fn partition_bounds(same_partition: &[bool]) -> Vec<usize> {
    let mut bounds: Vec<usize> = same_partition
        .iter()
        .enumerate()
        .filter(|&(i, same)| i == 0 || !same)
        .map(|(i, _)| i)
        .collect();
    bounds.push(same_partition.len());
    bounds
}

/// Per row of `keys` (the partition keys), a hash: their values folded
/// word by word where every key is a primitive of at most 8 bytes (NULL
/// as one word of its own), else the bytes of the row format. Equal keys
/// hash alike; which bucket a partition lands in matters to nothing else.
fn partition_hashes(keys: &[ArrayRef], converter: &RowConverter) -> Result<Vec<u64>> {
    /// The word a NULL key folds in.
    const NULL: u64 = 0x9e37_79b9_7f4a_7c15;
    let n = keys.first().map_or(0, |k| k.len());
    let width = |k: &ArrayRef| {
        let t = k.data_type();
        t.primitive_width().filter(|&w| t.is_primitive() && w <= 8)
    };
    if !keys.iter().all(|k| width(k).is_some()) {
        let rows = converter.convert_columns(keys).map_err(Error::arrow)?;
        return Ok(rows.iter().map(|r| hash_bytes(r.as_ref())).collect());
    }
    let mut hashes = vec![0u64; n];
    for k in keys {
        let w = width(k).expect("checked above");
        let data = k.to_data();
        let bytes = &data.buffers()[0].as_slice()[data.offset() * w..(data.offset() + n) * w];
        let word = |chunk: &[u8]| {
            let mut buf = [0u8; 8];
            buf[..w].copy_from_slice(chunk);
            u64::from_le_bytes(buf)
        };
        match k.logical_nulls().filter(|m| m.null_count() > 0) {
            None if w == 8 => {
                for (h, c) in hashes.iter_mut().zip(bytes.chunks_exact(8)) {
                    *h = fold_word(*h, u64::from_le_bytes(c.try_into().expect("8 bytes")));
                }
            }
            None => {
                for (h, c) in hashes.iter_mut().zip(bytes.chunks_exact(w)) {
                    *h = fold_word(*h, word(c));
                }
            }
            Some(nulls) => {
                for (i, (h, c)) in hashes.iter_mut().zip(bytes.chunks_exact(w)).enumerate() {
                    *h = fold_word(*h, if nulls.is_null(i) { NULL } else { word(c) });
                }
            }
        }
    }
    Ok(hashes.into_iter().map(mix).collect())
}

/// Per row of `cols` (all `n` rows long), whether it equals the row
/// before it in every column (NULL equal to NULL); false for the first.
fn same_as_previous(cols: &[ArrayRef], n: usize) -> Result<Vec<bool>> {
    let mut same = vec![true; n];
    if let Some(first) = same.first_mut() {
        *first = false;
    }
    if n < 2 {
        return Ok(same);
    }
    for c in cols {
        let (now, before) = (c.slice(1, n - 1), c.slice(0, n - 1));
        match distinct(&now, &before) {
            Ok(differs) => {
                for (i, d) in differs.values().iter().enumerate() {
                    if d {
                        same[i + 1] = false;
                    }
                }
            }
            // a type the comparison kernels lack: compare encoded rows
            Err(_) => {
                let conv = RowConverter::new(vec![SortField::new(c.data_type().clone())])
                    .map_err(Error::arrow)?;
                let rows = conv
                    .convert_columns(std::slice::from_ref(c))
                    .map_err(Error::arrow)?;
                for (i, s) in same.iter_mut().enumerate().take(n).skip(1) {
                    if rows.row(i) != rows.row(i - 1) {
                        *s = false;
                    }
                }
            }
        }
    }
    Ok(same)
}

/// The sorted rows' structure: partition starts (and the end), each row's
/// peer group (found when a function first needs them), and the one
/// ORDER BY key (for RANGE offsets).
struct Ctx<'a> {
    n: usize,
    /// The position of the first row among all rows (where a range of
    /// them is computed, [`WindowPlan::compute_range`]).
    base: usize,
    partitions: &'a [usize],
    /// Per row, whether it is in the partition of the row before.
    same_partition: &'a [bool],
    /// The ORDER BY keys: rows of a partition equal in them are peers.
    order_keys: &'a [ArrayRef],
    peers: OnceCell<Peers>,
    /// Per row, whether it equals the row before in the ORDER BY keys.
    same_order: OnceCell<Vec<bool>>,
    order_key: Option<(&'a ArrayRef, bool)>,
}

/// Per row, the first row of its peer group and one past its last.
struct Peers {
    start: Vec<usize>,
    end: Vec<usize>,
}

impl Ctx<'_> {
    /// `(start, end)` of each partition.
    fn parts(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.partitions.windows(2).map(|w| (w[0], w[1]))
    }

    /// The peer groups, found the first time a function asks (ROW_NUMBER,
    /// NTILE, LAG, LEAD and ROWS frames never do).
    fn peers(&self) -> Result<&Peers> {
        if let Some(peers) = self.peers.get() {
            return Ok(peers);
        }
        let n = self.n;
        let same_order = self.same_order()?;
        let peer = |i: usize| self.same_partition[i] && same_order[i];
        let mut start = vec![0usize; n];
        for i in 0..n {
            start[i] = if i > 0 && peer(i) { start[i - 1] } else { i };
        }
        let mut end = vec![n; n];
        for i in (0..n).rev() {
            end[i] = if i + 1 < n && peer(i + 1) {
                end[i + 1]
            } else {
                i + 1
            };
        }
        Ok(self.peers.get_or_init(|| Peers { start, end }))
    }

    /// Per row, whether it equals the row before in the ORDER BY keys.
    fn same_order(&self) -> Result<&[bool]> {
        if let Some(same) = self.same_order.get() {
            return Ok(same);
        }
        let same = same_as_previous(self.order_keys, self.n)?;
        Ok(self.same_order.get_or_init(|| same))
    }

    /// The frames that run from each partition's first row to the row
    /// itself, to its last peer or to the partition's last row, as
    /// [`Growing`] walks them.
    fn growing(&self, reach: Reach) -> Result<Growing<'_>> {
        Ok(Growing {
            same_partition: self.same_partition,
            same_order: match reach {
                Reach::Peers => Some(self.same_order()?),
                Reach::Row | Reach::Partition => None,
            },
            whole: reach == Reach::Partition,
            i: 0,
            entered: 0,
        })
    }
}

/// Where a frame from the partition's first row ends.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reach {
    /// At the row itself (ROWS ... CURRENT ROW).
    Row,
    /// At the row's last peer (RANGE ... CURRENT ROW).
    Peers,
    /// At the partition's last row (... UNBOUNDED FOLLOWING).
    Partition,
}

impl Reach {
    /// The reach of `f`'s frame, if it starts at the partition's first
    /// row and ends at one of these.
    fn of(f: &WindowExpr) -> Option<Self> {
        let frame = &f.frame;
        match (&frame.start, &frame.end, frame.units) {
            (FrameBound::UnboundedPreceding, FrameBound::CurrentRow, FrameUnits::Rows) => {
                Some(Reach::Row)
            }
            (
                FrameBound::UnboundedPreceding,
                FrameBound::CurrentRow,
                FrameUnits::Range | FrameUnits::Groups,
            ) => Some(Reach::Peers),
            (FrameBound::UnboundedPreceding, FrameBound::UnboundedFollowing, _) => {
                Some(Reach::Partition)
            }
            _ => None,
        }
    }
}

/// The frames of a partition's rows in order, from the partition's first
/// row to the row itself, to its last peer or to the partition's end:
/// each holds the one before it, so one running aggregate serves them all
/// and no frame bounds are kept. Per row: whether it starts a partition
/// (the aggregate starts over), and the rows that enter its frame (none
/// for a row whose frame is the row before's).
struct Growing<'a> {
    same_partition: &'a [bool],
    /// Frames to the last peer: per row, whether it equals the row before
    /// in the ORDER BY keys (a peer, within one partition).
    same_order: Option<&'a [bool]>,
    /// Frames to the partition's end.
    whole: bool,
    i: usize,
    /// Rows before this one are in the frame so far.
    entered: usize,
}

impl Iterator for Growing<'_> {
    type Item = (bool, std::ops::Range<usize>);

    fn next(&mut self) -> Option<Self::Item> {
        let n = self.same_partition.len();
        let i = self.i;
        if i >= n {
            return None;
        }
        self.i += 1;
        let starts = !self.same_partition[i];
        if self.entered > i {
            // a peer of the row before: the same frame
            return Some((starts, i..i));
        }
        let mut end = i + 1;
        if self.whole {
            while end < n && self.same_partition[end] {
                end += 1;
            }
        } else if let Some(same) = self.same_order {
            while end < n && self.same_partition[end] && same[end] {
                end += 1;
            }
        }
        let from = std::mem::replace(&mut self.entered, end);
        Some((starts, from.max(i)..end))
    }
}

/// COUNT, SUM, AVG, MIN and MAX over frames from the partition's first
/// row to the current row, its last peer (the default frame with an ORDER
/// BY) or the partition's last row (the default without), in one pass
/// ([`Growing`]); `None` for other functions, frames and types. Values
/// are added in row order, as [`sum_or_avg`] adds them.
fn running_aggregate(
    f: &WindowExpr,
    x: Option<&ArrayRef>,
    ctx: &Ctx<'_>,
    out: &DataType,
) -> Result<Option<ArrayRef>> {
    let Some(reach) = Reach::of(f).filter(|_| f.aggregate.is_none()) else {
        return Ok(None);
    };
    let rows = ctx.growing(reach)?;
    let func = match f.func {
        WindowFunction::Aggregate(a) => a,
        _ => return Ok(None),
    };
    if func == AggregateFunction::CountStar {
        let mut count = 0i64;
        let counts = rows.map(|(starts, enter)| {
            if starts {
                count = 0;
            }
            count += enter.len() as i64;
            count
        });
        return Ok(Some(Arc::new(Int64Array::from_iter_values(counts))));
    }
    let Some(x) = x else {
        return Ok(None);
    };
    match func {
        AggregateFunction::Count => {
            let mut count = 0i64;
            let counts = rows.map(|(starts, enter)| {
                if starts {
                    count = 0;
                }
                count += enter.filter(|&j| x.is_valid(j)).count() as i64;
                count
            });
            Ok(Some(Arc::new(Int64Array::from_iter_values(counts))))
        }
        AggregateFunction::Sum | AggregateFunction::Avg => {
            let avg = func == AggregateFunction::Avg;
            match x.data_type() {
                DataType::Float64 => {
                    let v = x.as_primitive::<Float64Type>();
                    let (mut sum, mut count) = (0.0f64, 0u64);
                    let sums = rows.map(|(starts, enter)| {
                        if starts {
                            (sum, count) = (0.0, 0);
                        }
                        for j in enter.filter(|&j| v.is_valid(j)) {
                            sum += v.value(j);
                            count += 1;
                        }
                        (count > 0).then(|| if avg { sum / count as f64 } else { sum })
                    });
                    Ok(Some(Arc::new(Float64Array::from_iter(sums))))
                }
                DataType::Decimal128(_, scale) => {
                    let v = x.as_primitive::<arrow::datatypes::Decimal128Type>();
                    exact_running(
                        avg,
                        rows,
                        |j| v.is_valid(j).then(|| v.value(j)),
                        *scale,
                        out,
                    )
                    .map(Some)
                }
                t if t.is_integer() && *t != DataType::UInt64 => {
                    let c = cast(x, &DataType::Int64).map_err(Error::arrow)?;
                    let v = c.as_primitive::<Int64Type>();
                    exact_running(
                        avg,
                        rows,
                        |j| v.is_valid(j).then(|| i128::from(v.value(j))),
                        0,
                        out,
                    )
                    .map(Some)
                }
                _ => Ok(None),
            }
        }
        AggregateFunction::Min | AggregateFunction::Max => {
            let min = func == AggregateFunction::Min;
            let keys = min_max_keys(x)?;
            // the row of the frame's least (greatest) value so far; of
            // equal values the first
            let mut best: Option<usize> = None;
            let picks: UInt32Array = rows
                .map(|(starts, enter)| {
                    if starts {
                        best = None;
                    }
                    for j in enter.filter(|&j| x.is_valid(j)) {
                        let better = best.is_none_or(|b| beats(&keys, min, j, b));
                        if better {
                            best = Some(j);
                        }
                    }
                    best.map(|b| b as u32)
                })
                .collect();
            Ok(Some(take(x.as_ref(), &picks, None).map_err(Error::arrow)?))
        }
        _ => Ok(None),
    }
}

/// An aggregate over whole partitions, per row: `ids` numbers each row's
/// partition (`groups` of them); each partition's aggregate is computed
/// once, adding its values in row order (as [`running_aggregate`] does),
/// and given to each of its rows.
fn partition_aggregate(
    f: &WindowExpr,
    x: Option<&ArrayRef>,
    ids: &[u32],
    groups: usize,
    out: &DataType,
) -> Result<ArrayRef> {
    let func = match f.func {
        WindowFunction::Aggregate(a) => a,
        other => {
            return Err(Error::Internal(format!(
                "{} over whole partitions without an order",
                other.name()
            )));
        }
    };
    // each partition's rows (of a non-NULL value, given one)
    let counts = || {
        let mut counts = vec![0i64; groups];
        for (j, &g) in ids.iter().enumerate() {
            counts[g as usize] += i64::from(x.is_none_or(|x| x.is_valid(j)));
        }
        counts
    };
    if matches!(
        func,
        AggregateFunction::CountStar | AggregateFunction::Count
    ) {
        let counts = counts();
        return Ok(Arc::new(Int64Array::from_iter_values(
            ids.iter().map(|&g| counts[g as usize]),
        )));
    }
    let x = x.ok_or_else(|| Error::Internal(format!("{} without its argument", func.name())))?;
    match func {
        AggregateFunction::Sum | AggregateFunction::Avg => {
            let avg = func == AggregateFunction::Avg;
            match x.data_type() {
                DataType::Float64 => {
                    let counts = counts();
                    let v = x.as_primitive::<Float64Type>();
                    let mut sums = vec![0.0f64; groups];
                    for (j, &g) in ids.iter().enumerate() {
                        if v.is_valid(j) {
                            sums[g as usize] += v.value(j);
                        }
                    }
                    let values = ids.iter().map(|&g| {
                        let (s, c) = (sums[g as usize], counts[g as usize]);
                        (c > 0).then(|| if avg { s / c as f64 } else { s })
                    });
                    Ok(Arc::new(Float64Array::from_iter(values)))
                }
                // FLOAT sums in DOUBLE, as the aggregate does
                DataType::Float32 => {
                    let wide = cast(x, &DataType::Float64).map_err(Error::arrow)?;
                    partition_aggregate(f, Some(&wide), ids, groups, out)
                }
                _ => {
                    let counts = counts();
                    let (unscaled, scale) = unscaled(x)?;
                    let mut sums = vec![0i128; groups];
                    for (&v, &g) in unscaled.iter().zip(ids) {
                        let s = &mut sums[g as usize];
                        *s = s.checked_add(v).ok_or_else(sum_overflow)?;
                    }
                    exact_sums(
                        avg,
                        ids.iter().map(|&g| {
                            let c = counts[g as usize];
                            (c > 0).then(|| (sums[g as usize], c as u64))
                        }),
                        scale,
                        out,
                    )
                }
            }
        }
        AggregateFunction::Min | AggregateFunction::Max => {
            let min = func == AggregateFunction::Min;
            let keys = min_max_keys(x)?;
            let mut best: Vec<Option<u32>> = vec![None; groups];
            for (j, &g) in ids.iter().enumerate() {
                if !x.is_valid(j) {
                    continue;
                }
                let b = &mut best[g as usize];
                let better = b.is_none_or(|b| beats(&keys, min, j, b as usize));
                if better {
                    *b = Some(j as u32);
                }
            }
            let picks: UInt32Array = ids.iter().map(|&g| best[g as usize]).collect();
            take(x.as_ref(), &picks, None).map_err(Error::arrow)
        }
        other => Err(Error::Internal(format!(
            "aggregate {} is not a window function",
            other.name()
        ))),
    }
}

/// The values of a column as MIN and MAX compare them: numbers, dates,
/// times and decimals as the zones' `i128` keys (floats in IEEE total
/// order, as the row format), others row-encoded.
enum MinMaxKeys {
    Native(Vec<i128>),
    Rows(Rows),
}

impl MinMaxKeys {
    fn cmp(&self, a: usize, b: usize) -> std::cmp::Ordering {
        match self {
            MinMaxKeys::Native(v) => v[a].cmp(&v[b]),
            MinMaxKeys::Rows(r) => r.row(a).cmp(&r.row(b)),
        }
    }
}

fn min_max_keys(x: &ArrayRef) -> Result<MinMaxKeys> {
    if let Some(keys) = crate::zones::keys_of(x) {
        return Ok(MinMaxKeys::Native(keys));
    }
    let converter =
        RowConverter::new(vec![SortField::new(x.data_type().clone())]).map_err(Error::arrow)?;
    converter
        .convert_columns(std::slice::from_ref(x))
        .map(MinMaxKeys::Rows)
        .map_err(Error::arrow)
}

/// Whether row `new` of `keys` is less (`min`) or greater than row `old`:
/// of equal values the one met first stays.
fn beats(keys: &MinMaxKeys, min: bool, new: usize, old: usize) -> bool {
    let o = keys.cmp(new, old);
    if min { o.is_lt() } else { o.is_gt() }
}

/// Exact running sums (or averages) of `value` over `rows`' frames.
fn exact_running(
    avg: bool,
    rows: Growing<'_>,
    value: impl Fn(usize) -> Option<i128>,
    scale: i8,
    out: &DataType,
) -> Result<ArrayRef> {
    let (mut sum, mut count, mut overflow) = (0i128, 0u64, false);
    let sums = rows.map(|(starts, enter)| {
        if starts {
            (sum, count) = (0, 0);
        }
        for v in enter.filter_map(&value) {
            match sum.checked_add(v) {
                Some(s) => sum = s,
                None => overflow = true,
            }
            count += 1;
        }
        (count > 0).then_some((sum, count))
    });
    let array = exact_sums(avg, sums, scale, out)?;
    if overflow {
        return Err(sum_overflow());
    }
    Ok(array)
}

fn compute_function(
    f: &WindowExpr,
    args: &[ArrayRef],
    ctx: &Ctx<'_>,
    out: &DataType,
) -> Result<ArrayRef> {
    let n = ctx.n;
    let ints = |g: &dyn Fn(usize, usize, usize) -> Option<i64>| -> ArrayRef {
        let mut v = Vec::with_capacity(n);
        for (ps, pe) in ctx.parts() {
            for i in ps..pe {
                v.push(g(ps, pe, i));
            }
        }
        Arc::new(Int64Array::from(v))
    };
    let doubles = |g: &dyn Fn(usize, usize, usize) -> f64| -> ArrayRef {
        let mut v = Vec::with_capacity(n);
        for (ps, pe) in ctx.parts() {
            for i in ps..pe {
                v.push(g(ps, pe, i));
            }
        }
        Arc::new(Float64Array::from(v))
    };
    let value = || -> Result<&ArrayRef> {
        args.first()
            .ok_or_else(|| Error::Internal(format!("{} without its argument", f.func.name())))
    };
    Ok(match f.func {
        WindowFunction::RowNumber => {
            let mut v = Vec::with_capacity(n);
            for (ps, pe) in ctx.parts() {
                v.extend(1..=(pe - ps) as i64);
            }
            Arc::new(Int64Array::from(v))
        }
        WindowFunction::Rank => {
            let peers = ctx.peers()?;
            let mut v = Vec::with_capacity(n);
            for (ps, pe) in ctx.parts() {
                v.extend(peers.start[ps..pe].iter().map(|&s| (s - ps + 1) as i64));
            }
            Arc::new(Int64Array::from(v))
        }
        WindowFunction::DenseRank => {
            let peers = ctx.peers()?;
            let mut v = Vec::with_capacity(n);
            for (ps, pe) in ctx.parts() {
                let mut rank = 0i64;
                for i in ps..pe {
                    if peers.start[i] == i {
                        rank += 1;
                    }
                    v.push(rank);
                }
            }
            Arc::new(Int64Array::from(v))
        }
        WindowFunction::PercentRank => {
            let peers = ctx.peers()?;
            doubles(&|ps, pe, i| {
                if pe - ps <= 1 {
                    0.0
                } else {
                    (peers.start[i] - ps) as f64 / (pe - ps - 1) as f64
                }
            })
        }
        WindowFunction::CumeDist => {
            let peers = ctx.peers()?;
            doubles(&|ps, pe, i| (peers.end[i] - ps) as f64 / (pe - ps) as f64)
        }
        WindowFunction::Ntile => ints(&|ps, pe, i| ntile(f.offset, pe - ps, i - ps)),
        WindowFunction::Lag | WindowFunction::Lead => {
            let x = value()?;
            let default = match args.get(1) {
                Some(d) => Arc::clone(d),
                None => new_null_array(x.data_type(), 1),
            };
            let shift = if f.func == WindowFunction::Lag {
                f.offset.saturating_neg()
            } else {
                f.offset
            };
            let mut picks = Vec::with_capacity(n);
            // IGNORE NULLS: the shift counts non-NULL values only
            let skipping = f.ignore_nulls.then(|| NonNulls::new(x));
            for (ps, pe) in ctx.parts() {
                for i in ps..pe {
                    let target = match &skipping {
                        None => {
                            let j = (i as i64).saturating_add(shift);
                            (j >= ps as i64 && j < pe as i64).then_some(j as usize)
                        }
                        Some(nn) => nn.shifted(i, shift, ps, pe),
                    };
                    picks.push(match target {
                        Some(j) => (0, j),
                        None if args.len() > 1 => (1, i),
                        None => (1, 0),
                    });
                }
            }
            interleave(&[x.as_ref(), default.as_ref()], &picks).map_err(Error::arrow)?
        }
        WindowFunction::FirstValue | WindowFunction::LastValue | WindowFunction::NthValue => {
            let x = value()?;
            let (fs, fe) = frames(f, ctx)?;
            let skipping = f.ignore_nulls.then(|| NonNulls::new(x));
            let picks: UInt32Array = (0..n)
                .map(|i| {
                    let (s, e) = (fs[i], fe[i]);
                    if let Some(nn) = &skipping {
                        return nn.in_frame(f.func, f.offset, s, e).map(|j| j as u32);
                    }
                    let j = match f.func {
                        WindowFunction::FirstValue => s,
                        WindowFunction::LastValue => e.wrapping_sub(1),
                        // (an n-th value for n < 1 is NULL, as in DuckDB)
                        _ if f.offset < 1 => e,
                        _ => s + (f.offset as usize).saturating_sub(1),
                    };
                    (s < e && j >= s && j < e).then_some(j as u32)
                })
                .collect();
            take(x.as_ref(), &picks, None).map_err(Error::arrow)?
        }
        WindowFunction::Aggregate(_) if let Some(shape) = &f.aggregate => {
            let (fs, fe) = frames(f, ctx)?;
            framed_aggregate(shape, args, &fs, &fe, out)?
        }
        WindowFunction::Aggregate(_)
            if let Some(a) = running_aggregate(f, args.first(), ctx, out)? =>
        {
            a
        }
        WindowFunction::Aggregate(AggregateFunction::CountStar) => {
            let (fs, fe) = frames(f, ctx)?;
            Arc::new(Int64Array::from_iter_values(
                (0..n).map(|i| fe[i].saturating_sub(fs[i]) as i64),
            ))
        }
        WindowFunction::Aggregate(AggregateFunction::Count) => {
            let x = value()?;
            let (fs, fe) = frames(f, ctx)?;
            let counts = prefix_counts(x);
            Arc::new(Int64Array::from_iter_values(
                (0..n).map(|i| range_count(&counts, fs[i], fe[i]) as i64),
            ))
        }
        WindowFunction::Aggregate(a @ (AggregateFunction::Sum | AggregateFunction::Avg)) => {
            let x = value()?;
            let (fs, fe) = frames(f, ctx)?;
            sum_or_avg(a, x, ctx, &fs, &fe, out)?
        }
        WindowFunction::Aggregate(a @ (AggregateFunction::Min | AggregateFunction::Max)) => {
            let x = value()?;
            let (fs, fe) = frames(f, ctx)?;
            let picks = min_max(a == AggregateFunction::Min, x, ctx, &fs, &fe)?;
            take(x.as_ref(), &picks, None).map_err(Error::arrow)?
        }
        WindowFunction::Aggregate(other) => {
            return Err(Error::Internal(format!(
                "aggregate {} is not a window function",
                other.name()
            )));
        }
    })
}

/// The most rows [`framed_aggregate`] hands the aggregation (frames that
/// overlap hand a row once per frame that holds it): this many in all,
/// or [`FRAMED_ROWS_PER_ROW`] per row of the window, whichever is more.
/// Frames of a few dozen rows (moving aggregates, small partitions) pass
/// at any size; a frame growing over a long partition, whose rows are
/// handed over quadratically often, is refused rather than left to run
/// for hours.
const FRAMED_ROWS_MAX: usize = 1 << 24;
const FRAMED_ROWS_PER_ROW: usize = 32;

/// An aggregate the window's kernels do not compute
/// ([`WindowExpr::aggregate`], its columns standing for `args`) over each
/// row's frame `[fs, fe)`: the rows of each distinct frame (consecutive
/// rows with the same frame share it), in window order and tagged with
/// the frame's number, go through the GROUP BY aggregation, whose result
/// for a frame goes to every row of it; an empty frame gets the
/// aggregate of no rows. A frame that moves row by row hands a row once
/// per frame holding it (quadratic in the frame's length): past
/// [`FRAMED_ROWS_MAX`] rows it is an error, not a stall.
fn framed_aggregate(
    shape: &weir_planner::AggregateExpr,
    args: &[ArrayRef],
    fs: &[usize],
    fe: &[usize],
    out: &DataType,
) -> Result<ArrayRef> {
    // a median or continuous quantile over sliding frames keeps one sorted
    // window instead
    let column = |e: &Option<Expr>| match e {
        Some(Expr::Column(c)) => args.get(c.index).map(Some),
        None => Some(None),
        Some(_) => None,
    };
    if !shape.distinct
        && shape.order_by.is_empty()
        && let (Some(Some(values)), Some(fraction)) = (column(&shape.arg), column(&shape.key))
        && let Some(a) = sliding_quantile(shape.func, values, fraction, fs, fe)?
    {
        return conform(a, out);
    }
    let n = fs.len();
    // each row's frame number; the rows each non-empty frame holds
    let mut frame_of = Vec::with_capacity(n);
    let mut rows: Vec<u32> = Vec::new();
    let mut tags: Vec<i64> = Vec::new();
    let mut frames = 0i64;
    let mut empty = false;
    let most = FRAMED_ROWS_MAX.max(FRAMED_ROWS_PER_ROW.saturating_mul(n));
    for i in 0..n {
        if i > 0 && fs[i] == fs[i - 1] && fe[i] == fe[i - 1] {
            frame_of.push(frame_of[i - 1]);
            continue;
        }
        if fe[i] <= fs[i] {
            frame_of.push(None);
            empty = true;
            continue;
        }
        if rows.len() + (fe[i] - fs[i]) > most {
            return Err(Error::Execution(format!(
                "{shape} as a window function over frames that hold more than {most} rows in \
                 all: its frames overlap too much (a frame growing row by row over a long \
                 partition); count, sum, avg, min and max, or a narrower frame, compute it"
            )));
        }
        rows.extend((fs[i] as u32)..(fe[i] as u32));
        tags.extend(std::iter::repeat_n(frames, fe[i] - fs[i]));
        frame_of.push(Some(frames));
        frames += 1;
    }
    let indices = UInt32Array::from(rows);
    let taken = args
        .iter()
        .map(|a| take(a.as_ref(), &indices, None).map_err(Error::arrow))
        .collect::<Result<Vec<_>>>()?;
    let tags = Arc::new(Int64Array::from(tags));
    let (values, none) = tagged_aggregate(shape, taken, tags, frames as usize, empty, out)?;
    let picks: Vec<(usize, usize)> = frame_of
        .iter()
        .map(|f| match f {
            Some(f) => (0, *f as usize),
            None => (1, 0),
        })
        .collect();
    interleave(&[values.as_ref(), none.as_ref()], &picks).map_err(Error::arrow)
}

/// `shape` (its columns standing for `args`) aggregated by the GROUP BY
/// aggregation over the rows of `args`, grouped by `tags` (a BIGINT column of numbers
/// `0..groups`, every one used): each group's value in number order and,
/// where `empty`, the aggregate of no rows (else a NULL), both of type
/// `out`.
fn tagged_aggregate(
    shape: &weir_planner::AggregateExpr,
    args: Vec<ArrayRef>,
    tags: ArrayRef,
    groups: usize,
    empty: bool,
    out: &DataType,
) -> Result<(ArrayRef, ArrayRef)> {
    // the aggregation's input: the group's number, then the arguments
    let mut fields = vec![Field::new("__group", DataType::Int64, false)];
    fields.extend(
        args.iter()
            .enumerate()
            .map(|(i, a)| Field::new(format!("__a{i}"), a.data_type().clone(), true)),
    );
    let input = Arc::new(Schema::new(fields));
    let mut columns: Vec<ArrayRef> = vec![tags];
    columns.extend(args);
    let batch = RecordBatch::try_new(Arc::clone(&input), columns).map_err(Error::arrow)?;
    let aggregate = [shape.clone().map_exprs(|e| match e {
        Expr::Column(c) => Expr::column(c.index + 1, c.name.clone()),
        other => other.clone(),
    })];
    let value = Field::new("__value", out.clone(), true);
    let group = Expr::column(0, "__group");
    let grouped = AggregatePlan::new(
        std::slice::from_ref(&group),
        &aggregate,
        &input,
        Arc::new(Schema::new(vec![
            Field::new("__group", DataType::Int64, false),
            value.clone(),
        ])),
    )?;
    let mut state = grouped.new_state()?;
    state.update(&grouped, &PipelineBatch::new(batch))?;
    let result = state.finish(&grouped)?;
    // the result's row of each group, in number order
    let mut at = vec![0u32; groups];
    for (row, g) in result
        .column(0)
        .as_primitive::<Int64Type>()
        .values()
        .iter()
        .enumerate()
    {
        at[*g as usize] = row as u32;
    }
    let values =
        take(result.column(1).as_ref(), &UInt32Array::from(at), None).map_err(Error::arrow)?;
    let none = if empty {
        let alone =
            AggregatePlan::new(&[], &aggregate, &input, Arc::new(Schema::new(vec![value])))?;
        alone.new_state()?.finish(&alone)?.column(0).clone()
    } else {
        new_null_array(out, 1)
    };
    Ok((conform(values, out)?, conform(none, out)?))
}

const MICROS_PER_DAY: f64 = 86_400_000_000.0;

/// A frame bound's offset: a number of rows, a RANGE offset in the
/// order key's terms (an INTERVAL over a DATE or TIMESTAMP key in
/// microseconds, as [`range_key`] has the key).
fn frame_offset(v: &ScalarValue) -> Result<f64> {
    match v {
        ScalarValue::Int64(x) => Ok(*x as f64),
        ScalarValue::Float64(x) => Ok(*x),
        ScalarValue::Interval(0, days, micros) => {
            Ok(*days as f64 * MICROS_PER_DAY + *micros as f64)
        }
        other => Err(Error::Internal(format!("a frame offset {other}"))),
    }
}

/// Where a RANGE bound `v` PRECEDING (`back`) or FOLLOWING lies from
/// `key` ([`range_key`]'s, times `sign`: -1 where the window orders it
/// descending).
fn range_target(v: &ScalarValue, key: f64, sign: f64, back: bool) -> Result<f64> {
    Ok(match v {
        ScalarValue::Interval(months, days, micros) if *months != 0 => {
            calendar_target(key, sign, back, (*months, *days, *micros))
        }
        _ => {
            let d = frame_offset(v)?;
            key + if back { -d } else { d }
        }
    })
}

/// A RANGE bound an INTERVAL with months away from `key` (a DATE or
/// TIMESTAMP in microseconds, times `sign`: -1 where the window orders it
/// descending), in the same terms: the calendar moves the key's instant
/// (2024-03-31 less a month is 2024-02-29, as DuckDB has it), back in the
/// window's order for PRECEDING. Past the TIMESTAMP range, the bound is
/// past every key.
fn calendar_target(
    key: f64,
    sign: f64,
    back: bool,
    (months, days, micros): (i32, i32, i64),
) -> f64 {
    let dir: i32 = if back == (sign > 0.0) { -1 } else { 1 };
    let instant = (key * sign) as i64;
    match weir_planner::scalar::add_interval(
        instant,
        dir * months,
        dir * days,
        i64::from(dir) * micros,
    ) {
        Some(moved) => sign * moved as f64,
        None => sign * f64::from(dir) * f64::INFINITY,
    }
}

/// A RANGE frame's order key as the DOUBLEs its offsets move it by: a
/// number as itself, a DATE or TIMESTAMP in microseconds since the epoch
/// (exact in a DOUBLE for 285 years either side).
fn range_key(key: &ArrayRef) -> Result<ArrayRef> {
    match key.data_type() {
        DataType::Date32 => {
            let days = key.as_primitive::<arrow::datatypes::Date32Type>();
            Ok(Arc::new(
                days.unary::<_, Float64Type>(|d| d as f64 * MICROS_PER_DAY),
            ))
        }
        DataType::Timestamp(..) => {
            let micros = cast(
                key,
                &DataType::Timestamp(arrow::datatypes::TimeUnit::Microsecond, None),
            )
            .map_err(Error::arrow)?;
            let micros = cast(&micros, &DataType::Int64).map_err(Error::arrow)?;
            cast(&micros, &DataType::Float64).map_err(Error::arrow)
        }
        _ => cast(key, &DataType::Float64).map_err(Error::arrow),
    }
}

/// Each row's frame as `[start, end)` row indices (empty where end <=
/// start).
fn frames(f: &WindowExpr, ctx: &Ctx<'_>) -> Result<(Vec<usize>, Vec<usize>)> {
    let n = ctx.n;
    let mut fs = Vec::with_capacity(n);
    let mut fe = Vec::with_capacity(n);
    let frame = &f.frame;
    // a RANGE frame's bounds are peer groups (ROWS frames never read them)
    let peers = match frame.units {
        FrameUnits::Range | FrameUnits::Groups => Some(ctx.peers()?),
        FrameUnits::Rows => None,
    };
    let peer_start = |i: usize| peers.map_or(i, |p| p.start[i]);
    let peer_end = |i: usize| peers.map_or(i + 1, |p| p.end[i]);
    // the frames of running and whole-partition aggregates (the default
    // frames with and without ORDER BY), partition by partition
    let whole = match (&frame.start, &frame.end) {
        (FrameBound::UnboundedPreceding, FrameBound::CurrentRow) => Some(false),
        (FrameBound::UnboundedPreceding, FrameBound::UnboundedFollowing) => Some(true),
        _ => None,
    };
    if let Some(whole) = whole {
        for (ps, pe) in ctx.parts() {
            fs.extend(std::iter::repeat_n(ps, pe - ps));
            match (whole, peers) {
                (true, _) => fe.extend(std::iter::repeat_n(pe, pe - ps)),
                (false, Some(p)) => fe.extend_from_slice(&p.end[ps..pe]),
                (false, None) => fe.extend(ps + 1..pe + 1),
            }
        }
        return Ok((fs, fe));
    }
    if frame.units == FrameUnits::Rows {
        // each bound the partition's start or end, or a shift from the
        // row (an end one past the frame's last row)
        enum RowBound {
            Start,
            End,
            Shift(i64),
        }
        let resolve = |b: &FrameBound, is_start: bool| -> Result<RowBound> {
            let past = i64::from(!is_start);
            Ok(match b {
                FrameBound::UnboundedPreceding => RowBound::Start,
                FrameBound::UnboundedFollowing => RowBound::End,
                FrameBound::CurrentRow => RowBound::Shift(past),
                FrameBound::Preceding(v) => {
                    RowBound::Shift((-frame_offset(v)? as i64).saturating_add(past))
                }
                FrameBound::Following(v) => {
                    RowBound::Shift((frame_offset(v)? as i64).saturating_add(past))
                }
            })
        };
        let (start, end) = (resolve(&frame.start, true)?, resolve(&frame.end, false)?);
        for (ps, pe) in ctx.parts() {
            let at = |b: &RowBound, i: usize| match b {
                RowBound::Start => ps,
                RowBound::End => pe,
                RowBound::Shift(d) => {
                    (i as i64).saturating_add(*d).clamp(ps as i64, pe as i64) as usize
                }
            };
            for i in ps..pe {
                let s = at(&start, i);
                fs.push(s);
                fe.push(at(&end, i).max(s));
            }
        }
        return Ok((fs, fe));
    }
    if frame.units == FrameUnits::Groups {
        let peers = ctx.peers()?;
        for (ps, pe) in ctx.parts() {
            // the first row of each peer group of the partition
            let mut starts = Vec::new();
            let mut i = ps;
            while i < pe {
                starts.push(i);
                i = peers.end[i];
            }
            let groups = starts.len();
            let first = |g: usize| starts[g];
            let past = |g: usize| starts.get(g + 1).copied().unwrap_or(pe);
            // the row's group
            let mut g = 0;
            for i in ps..pe {
                while g + 1 < groups && starts[g + 1] <= i {
                    g += 1;
                }
                let at = |b: &FrameBound, is_start: bool| -> Result<usize> {
                    let edge = |h: usize| if is_start { first(h) } else { past(h) };
                    Ok(match b {
                        FrameBound::UnboundedPreceding => ps,
                        FrameBound::UnboundedFollowing => pe,
                        FrameBound::CurrentRow => edge(g),
                        FrameBound::Preceding(v) => {
                            match g.checked_sub(frame_offset(v)? as usize) {
                                Some(h) => edge(h),
                                None => ps,
                            }
                        }
                        FrameBound::Following(v) => {
                            let h = g.saturating_add(frame_offset(v)? as usize);
                            if h < groups { edge(h) } else { pe }
                        }
                    })
                };
                let s = at(&frame.start, true)?;
                fs.push(s);
                fe.push(at(&frame.end, false)?.max(s));
            }
        }
        return Ok((fs, fe));
    }
    // a RANGE frame from here on
    let range_keys = match (&frame.start, &frame.end) {
        (FrameBound::Preceding(_) | FrameBound::Following(_), _)
        | (_, FrameBound::Preceding(_) | FrameBound::Following(_)) => {
            let (key, asc) = ctx.order_key.ok_or_else(|| {
                Error::Internal("a RANGE offset frame without one order key".into())
            })?;
            let k = range_key(key)?;
            let k = k.as_primitive::<Float64Type>();
            let sign = if asc { 1.0 } else { -1.0 };
            Some((
                (0..k.len())
                    .map(|i| k.is_valid(i).then(|| sign * k.value(i)))
                    .collect::<Vec<Option<f64>>>(),
                sign,
            ))
        }
        _ => None,
    };
    for (ps, pe) in ctx.parts() {
        // the non-NULL run of the order key (RANGE offsets search it)
        let (vs, ve) = match &range_keys {
            Some((k, _)) => {
                let mut vs = ps;
                while vs < pe && k[vs].is_none() {
                    vs += 1;
                }
                let mut ve = vs;
                while ve < pe && k[ve].is_some() {
                    ve += 1;
                }
                (vs, ve)
            }
            None => (ps, pe),
        };
        // where the last row's offset bounds fell: keys ascend (in the
        // window's order), so the next row's are at or after them
        let mut found = [vs, vs];
        for i in ps..pe {
            let mut bound = |b: &FrameBound, is_start: bool| -> Result<usize> {
                Ok(match b {
                    FrameBound::UnboundedPreceding => ps,
                    FrameBound::UnboundedFollowing => pe,
                    FrameBound::CurrentRow if is_start => peer_start(i),
                    FrameBound::CurrentRow => peer_end(i),
                    FrameBound::Preceding(v) | FrameBound::Following(v) => {
                        let back = matches!(b, FrameBound::Preceding(_));
                        match &range_keys {
                            Some((k, sign)) => match k[i] {
                                // NULL keys: the frame is the row's peers
                                None if is_start => peer_start(i),
                                None => peer_end(i),
                                Some(key) => {
                                    let target = range_target(v, key, *sign, back)?;
                                    // the first key past the bound (for a
                                    // start, the first not before it)
                                    let past = |x: &Option<f64>| {
                                        x.is_some_and(|x| {
                                            if is_start { x < target } else { x <= target }
                                        })
                                    };
                                    let at = &mut found[usize::from(!is_start)];
                                    if target.is_nan() {
                                        // (a NaN key's bound: searched, the
                                        // cursor left where it was)
                                        return Ok(vs + k[vs..ve].partition_point(past));
                                    }
                                    while *at < ve && past(&k[*at]) {
                                        *at += 1;
                                    }
                                    *at
                                }
                            },
                            None => {
                                return Err(Error::Internal("RANGE offsets without keys".into()));
                            }
                        }
                    }
                })
            };
            let s = bound(&frame.start, true)?;
            let e = bound(&frame.end, false)?;
            fs.push(s);
            fe.push(e.max(s));
        }
    }
    Ok((fs, fe))
}

/// Non-NULL values before each row: `counts[i]` over rows `0..i`.
/// The non-NULL values of a sorted column, for IGNORE NULLS: their rows
/// in order, and per row the number of them before it.
struct NonNulls {
    rows: Vec<usize>,
    before: Vec<u64>,
}

impl NonNulls {
    fn new(x: &ArrayRef) -> Self {
        NonNulls {
            rows: (0..x.len()).filter(|&i| x.is_valid(i)).collect(),
            before: prefix_counts(x),
        }
    }

    /// The row `shift` non-NULL values away from row `i` (before it when
    /// negative, after it when positive; `i` itself for 0) within the
    /// partition `ps..pe`.
    fn shifted(&self, i: usize, shift: i64, ps: usize, pe: usize) -> Option<usize> {
        let (first, end) = (self.before[ps] as i64, self.before[pe] as i64);
        let k = match shift {
            0 => return Some(i),
            s if s < 0 => (self.before[i] as i64).saturating_add(s),
            s => (self.before[i + 1] as i64 - 1).saturating_add(s),
        };
        (k >= first && k < end).then(|| self.rows[k as usize])
    }

    /// The row of `first_value`, `last_value` or `nth_value(x, n)` among
    /// the non-NULL values of the frame `s..e`.
    fn in_frame(&self, func: WindowFunction, n: i64, s: usize, e: usize) -> Option<usize> {
        let (first, end) = (self.before[s], self.before[e.max(s)]);
        let k = match func {
            WindowFunction::FirstValue => first,
            WindowFunction::LastValue => end.checked_sub(1)?,
            _ if n < 1 => return None,
            _ => first.saturating_add(n as u64 - 1),
        };
        (k >= first && k < end).then(|| self.rows[k as usize])
    }
}

fn prefix_counts(x: &ArrayRef) -> Vec<u64> {
    let mut counts = Vec::with_capacity(x.len() + 1);
    let mut c = 0u64;
    counts.push(0);
    for i in 0..x.len() {
        c += u64::from(x.is_valid(i));
        counts.push(c);
    }
    counts
}

fn range_count(counts: &[u64], s: usize, e: usize) -> u64 {
    if e <= s { 0 } else { counts[e] - counts[s] }
}

fn sum_or_avg(
    func: AggregateFunction,
    x: &ArrayRef,
    ctx: &Ctx<'_>,
    fs: &[usize],
    fe: &[usize],
    out: &DataType,
) -> Result<ArrayRef> {
    // FLOAT sums in DOUBLE, as the aggregate does
    if *x.data_type() == DataType::Float32 {
        let wide = cast(x, &DataType::Float64).map_err(Error::arrow)?;
        return sum_or_avg(func, &wide, ctx, fs, fe, out);
    }
    let n = x.len();
    let counts = prefix_counts(x);
    let avg = func == AggregateFunction::Avg;
    match x.data_type() {
        DataType::Float64 => {
            let v = x.as_primitive::<Float64Type>();
            let mut sums = vec![0.0f64; n];
            // other frames: a tree over all rows, its nodes aligned on
            // the rows' positions among all (`ctx.base` on)
            let tree = OnceCell::new();
            for (ps, pe) in ctx.parts() {
                // frames from the partition's first row: one running sum
                // (frame ends never move back)
                let (mut acc, mut upto) = (0.0, ps);
                for i in ps..pe {
                    if fs[i] == ps {
                        while upto < fe[i] {
                            if v.is_valid(upto) {
                                acc += v.value(upto);
                            }
                            upto += 1;
                        }
                        sums[i] = acc;
                    } else {
                        let tree = tree.get_or_init(|| {
                            SumTree::new(
                                (0..n).map(|i| if v.is_valid(i) { v.value(i) } else { 0.0 }),
                                ctx.base,
                            )
                        });
                        sums[i] = tree.sum(fs[i], fe[i]);
                    }
                }
            }
            let values = (0..n).map(|i| {
                let c = range_count(&counts, fs[i], fe[i]);
                (c > 0).then(|| if avg { sums[i] / c as f64 } else { sums[i] })
            });
            Ok(Arc::new(Float64Array::from_iter(values)))
        }
        _ => {
            // exact: integers and decimals as unscaled i128 prefix sums
            let (unscaled, scale) = unscaled(x)?;
            let mut prefix = Vec::with_capacity(n + 1);
            let mut acc = 0i128;
            prefix.push(0);
            for v in &unscaled {
                acc = acc.checked_add(*v).ok_or_else(sum_overflow)?;
                prefix.push(acc);
            }
            exact_sums(
                avg,
                (0..n).map(|i| {
                    let c = range_count(&counts, fs[i], fe[i]);
                    (c > 0).then(|| (prefix[fe[i]] - prefix[fs[i]], c))
                }),
                scale,
                out,
            )
        }
    }
}

fn sum_overflow() -> Error {
    Error::Execution("Out of Range Error: Overflow in SUM".into())
}

/// The values of an integer or decimal column as unscaled `i128`s (0 for
/// NULL), and their scale.
fn unscaled(x: &ArrayRef) -> Result<(Vec<i128>, i8)> {
    /// The values of `a` widened, 0 for NULL.
    fn widen<T: arrow::datatypes::ArrowPrimitiveType>(
        a: &arrow::array::PrimitiveArray<T>,
    ) -> Vec<i128>
    where
        T::Native: Into<i128>,
    {
        (0..a.len())
            .map(|i| if a.is_valid(i) { a.value(i).into() } else { 0 })
            .collect()
    }
    Ok(match x.data_type() {
        DataType::Decimal128(_, s) => (
            widen(x.as_primitive::<arrow::datatypes::Decimal128Type>()),
            *s,
        ),
        DataType::Null => (vec![0; x.len()], 0),
        // UBIGINT past BIGINT: every value as it is
        DataType::UInt64 => (widen(x.as_primitive::<UInt64Type>()), 0),
        _ => {
            let c = cast(x, &DataType::Int64).map_err(Error::arrow)?;
            (widen(c.as_primitive::<Int64Type>()), 0)
        }
    })
}

/// Exact sums (or averages), one per row: the unscaled sum and count of
/// the frame's non-NULL values, `None` where it has none.
fn exact_sums(
    avg: bool,
    sums: impl Iterator<Item = Option<(i128, u64)>>,
    scale: i8,
    out: &DataType,
) -> Result<ArrayRef> {
    if avg {
        let div = 10f64.powi(i32::from(scale));
        return Ok(Arc::new(Float64Array::from_iter(
            sums.map(|s| s.map(|(s, c)| s as f64 / div / c as f64)),
        )));
    }
    match out {
        DataType::Decimal128(p, s) => {
            let a = Decimal128Array::from_iter(sums.map(|s| s.map(|(s, _)| s)))
                .with_precision_and_scale(*p, *s)
                .map_err(Error::arrow)?;
            Ok(Arc::new(a))
        }
        _ => {
            let v = sums
                .map(|s| {
                    s.map(|(s, _)| {
                        i64::try_from(s).map_err(|_| {
                            Error::Execution(format!(
                                "Out of Range Error: Overflow in SUM: {s} does not fit in BIGINT"
                            ))
                        })
                    })
                    .transpose()
                })
                .collect::<Result<Vec<Option<i64>>>>()?;
            Ok(Arc::new(Int64Array::from(v)))
        }
    }
}

/// Sums of DOUBLE ranges in O(log n), adding in a fixed tree order: a
/// node covers an aligned block of positions among all rows (the values
/// are those from `base` on), so a range adds the same nodes in the same
/// order over any run of rows that holds it (a window computed range by
/// range sums as over all rows, [`WindowPlan::compute_range`]).
struct SumTree {
    base: usize,
    /// Per level, the sums of its blocks of `2^level` positions that
    /// reach the values, from block `base >> level` on (a block the
    /// values hold only part of is never read).
    levels: Vec<Vec<f64>>,
}

impl SumTree {
    fn new(values: impl ExactSizeIterator<Item = f64>, base: usize) -> Self {
        let mut levels: Vec<Vec<f64>> = vec![values.collect()];
        loop {
            let below = &levels[levels.len() - 1];
            if below.len() <= 1 {
                break;
            }
            let first = base >> (levels.len() - 1);
            let (from, to) = (first >> 1, (first + below.len() - 1) >> 1);
            let at = |k: usize| k.checked_sub(first).and_then(|i| below.get(i)).copied();
            let level = (from..=to)
                .map(|k| at(2 * k).unwrap_or(0.0) + at(2 * k + 1).unwrap_or(0.0))
                .collect();
            levels.push(level);
        }
        SumTree { base, levels }
    }

    /// The sum of `[s, e)` (positions from `base`).
    fn sum(&self, s: usize, e: usize) -> f64 {
        let (mut l, mut r) = (self.base + s, self.base + e);
        let (mut left, mut right) = (0.0, 0.0);
        let mut level = 0;
        while l < r {
            let first = self.base >> level;
            if l & 1 == 1 {
                left += self.levels[level][l - first];
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                right += self.levels[level][r - first];
            }
            l /= 2;
            r /= 2;
            level += 1;
        }
        left + right
    }
}

/// The row holding the MIN (or MAX) non-NULL value of each frame, by a
/// monotonic deque: frame starts and ends never move back within a
/// partition, so each row enters and leaves the deque once.
fn min_max(
    min: bool,
    x: &ArrayRef,
    ctx: &Ctx<'_>,
    fs: &[usize],
    fe: &[usize],
) -> Result<UInt32Array> {
    let keys = min_max_keys(x)?;
    // `a` is kept over `b` when it is better or equal
    let better = |a: usize, b: usize| {
        let o = keys.cmp(a, b);
        if min { o.is_le() } else { o.is_ge() }
    };
    let mut out = Vec::with_capacity(x.len());
    for (ps, pe) in ctx.parts() {
        let mut deque: VecDeque<usize> = VecDeque::new();
        let mut next = ps;
        for i in ps..pe {
            while next < fe[i] {
                if x.is_valid(next) {
                    while deque.back().is_some_and(|&b| better(next, b)) {
                        deque.pop_back();
                    }
                    deque.push_back(next);
                }
                next += 1;
            }
            while deque.front().is_some_and(|&f| f < fs[i]) {
                deque.pop_front();
            }
            out.push(deque.front().map(|&j| j as u32));
        }
    }
    Ok(UInt32Array::from(out))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, Date32Array, Int16Array, Int64Array, StringArray};
    use arrow::row::{RowConverter, SortField};

    use arrow::datatypes::{DataType, Field, Schema};
    use weir_planner::{Expr, SortKey, WindowExpr};

    use super::{SumTree, WindowPlan, partition_hashes};

    /// A window over `(p, o)` of the given types, partitioned by `p` and
    /// ordered by `o`, with ROW_NUMBER.
    fn plan(p: DataType, o: DataType) -> WindowPlan {
        let input = Arc::new(Schema::new(vec![
            Field::new("p", p, true),
            Field::new("o", o, true),
        ]));
        let mut fields: Vec<Field> = input.fields().iter().map(|f| f.as_ref().clone()).collect();
        fields.push(Field::new("rn", DataType::Int64, false));
        let output = Arc::new(Schema::new(fields));
        let f = WindowExpr::row_number();
        let order = SortKey {
            expr: Expr::column(1, "o"),
            asc: true,
            nulls_first: false,
        };
        WindowPlan::new(
            input,
            output,
            &[Expr::column(0, "p")],
            &[order],
            &[f],
            false,
            None,
        )
        .unwrap()
    }

    #[test]
    fn partitions_are_numbered_only_where_their_keys_keep_the_sort_off_the_radix() {
        // a VARCHAR partition key: numbered, then sorted by radix
        assert!(plan(DataType::Utf8, DataType::Date32).numbered.is_some());
        // a fixed-width key sorts as it is
        assert!(plan(DataType::Int64, DataType::Date32).numbered.is_none());
        // a VARCHAR order key keeps the sort off the radix anyway
        assert!(plan(DataType::Utf8, DataType::Utf8).numbered.is_none());
    }

    #[test]
    fn equal_partition_keys_hash_alike_and_others_apart() {
        // sliced, so the values start at an offset into their buffers
        let keys: Vec<ArrayRef> = vec![
            Arc::new(
                Int64Array::from(vec![
                    Some(9),
                    Some(1),
                    Some(1),
                    None,
                    Some(1),
                    None,
                    Some(0),
                ])
                .slice(1, 6),
            ),
            Arc::new(Int16Array::from(vec![
                Some(5),
                Some(5),
                None,
                None,
                Some(5),
                Some(5),
            ])),
            Arc::new(Date32Array::from(vec![3, 3, 3, 3, 3, 4])),
        ];
        let fields = keys.iter().map(|k| SortField::new(k.data_type().clone()));
        let converter = RowConverter::new(fields.collect()).unwrap();
        let h = partition_hashes(&keys, &converter).unwrap();
        // rows 0 and 1 are (1, 5, 3); then (NULL, NULL, 3), (1, NULL, 3),
        // (NULL, 5, 3) and (0, 5, 4)
        assert_eq!(h[0], h[1]);
        assert_eq!(h.len(), 6);
        let distinct: std::collections::HashSet<u64> = [h[0], h[2], h[3], h[4], h[5]].into();
        assert_eq!(distinct.len(), 5, "{h:?}");
        // a key of another type takes the row format, equal rows alike
        let text: Vec<ArrayRef> = vec![Arc::new(StringArray::from(vec!["a", "b", "a"]))];
        let converter =
            RowConverter::new(vec![SortField::new(text[0].data_type().clone())]).unwrap();
        let h = partition_hashes(&text, &converter).unwrap();
        assert_eq!((h[0] == h[2], h[0] == h[1]), (true, false));
    }

    #[test]
    fn sum_tree_sums_every_range() {
        let v: Vec<f64> = (0..37).map(|i| i as f64).collect();
        let t = SumTree::new(v.iter().copied(), 0);
        for s in 0..=v.len() {
            for e in s..=v.len() {
                assert_eq!(t.sum(s, e), v[s..e].iter().sum::<f64>(), "{s}..{e}");
            }
        }
    }

    /// A range sums to the same bits over any run of values that holds it
    /// (a window computed range by range sums as over all rows).
    #[test]
    fn sum_tree_sums_alike_in_any_run() {
        // values of mixed magnitudes, so that the order of additions shows
        let v: Vec<f64> = (0..300u64)
            .map(|i| {
                let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11;
                (x as f64 / (1u64 << 53) as f64 - 0.5) * 10f64.powi((i % 17) as i32 - 8)
            })
            .collect();
        let whole = SumTree::new(v.iter().copied(), 0);
        for lo in 0..v.len() {
            for hi in [lo + 1, lo + 7, lo + 40, v.len()] {
                let hi = hi.min(v.len());
                let run = SumTree::new(v[lo..hi].iter().copied(), lo);
                for s in lo..hi {
                    for e in s..hi.min(s + 20) + 1 {
                        assert_eq!(
                            run.sum(s - lo, e - lo).to_bits(),
                            whole.sum(s, e).to_bits(),
                            "run {lo}..{hi}, range {s}..{e}"
                        );
                    }
                }
            }
        }
    }
}
