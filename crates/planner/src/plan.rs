//! Logical plans and statements: the planner's output.
//!
//! A query plan is a tree of [`LogicalPlan`] nodes. The planner always
//! builds it in this canonical shape, bottom to top (bracketed nodes are
//! present only when the query needs them):
//!
//! ```text
//! Scan -> [Filter] -> [Aggregate] -> [Filter (HAVING)] -> [Window ...]
//!      -> [Filter (QUALIFY)] -> Projection -> [Distinct] -> [Sort]
//!      -> [Projection (drops hidden sort keys)] -> [Limit]
//! ```
//!
//! There is one Window node per distinct (PARTITION BY, ORDER BY) of the
//! query's window functions, each adding its functions' columns.
//!
//! The optimiser then rewrites the tree without changing its output: a
//! filter may sit lower (below a projection, on a join side), a
//! projection of just the columns used may sit over a scan's filters
//! under a join, and a projection that only repeats its input is left
//! out (so a block may end in its Aggregate or Sort).
//!
//! `Values` replaces `Scan` for `SELECT` without `FROM` and for
//! `INSERT ... VALUES`. Each node's [`LogicalPlan::schema`] is its output;
//! expressions on a node refer to the columns of its input by index.

use std::fmt;

use arrow_schema::{Field, Schema, SchemaRef};

use crate::expr::Expr;
use crate::scalar::ScalarValue;

/// Where a scan reads from.
#[derive(Clone, Debug, PartialEq)]
pub enum TableSource {
    /// A table of the catalog.
    Table(String),
    /// A file read in place (`read_csv('p')`, `read_parquet('p')`,
    /// `FROM 'p.csv'`).
    File {
        /// The path as written.
        path: String,
        /// Its format.
        format: FileFormat,
        /// Reader options.
        options: FileOptions,
    },
    /// `range(start, stop, step)` / `generate_series(start, stop, step)`:
    /// one BIGINT column named `range` or `generate_series`. `range` stops
    /// before `stop`; `generate_series` includes it (as in DuckDB), which
    /// the planner has already folded into `stop`.
    Series {
        /// First value.
        start: i64,
        /// Exclusive end.
        stop: i64,
        /// Increment, never zero.
        step: i64,
    },
    /// The rows of a recursive common table expression (`WITH RECURSIVE
    /// r AS (anchor UNION [ALL] recursive)`), which the engine computes
    /// before the query that reads them.
    Recursive(std::sync::Arc<RecursiveCte>),
    /// Inside the recursive term of recursive CTE `id`: the rows the
    /// last round added (the working table).
    WorkTable {
        /// The CTE's name.
        name: String,
        /// Its [`RecursiveCte::id`].
        id: usize,
        /// Its schema.
        schema: SchemaRef,
    },
}

impl fmt::Display for TableSource {
    /// As EXPLAIN names it: `lineitem`, `'data.csv'`, `range(0, 10, 1)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableSource::Table(t) => write!(f, "{t}"),
            TableSource::File { path, .. } => write!(f, "'{path}'"),
            TableSource::Series { start, stop, step } => {
                write!(f, "range({start}, {stop}, {step})")
            }
            TableSource::Recursive(cte) => write!(f, "recursive CTE {}", cte.name),
            TableSource::WorkTable { name, .. } => write!(f, "working table of {name}"),
        }
    }
}

/// A recursive common table expression: the rows of `anchor`, then
/// round after round the rows `recursive` gives over the rows the last
/// round added (its [`TableSource::WorkTable`]), until a round adds
/// none. With UNION (not `union_all`) a row already given is not added
/// again, which ends recursions that come back to a row.
#[derive(Debug, PartialEq)]
pub struct RecursiveCte {
    /// The name.
    pub name: String,
    /// Which working table the recursive term reads; unique within a
    /// statement.
    pub id: usize,
    /// The first rows.
    pub anchor: LogicalPlan,
    /// Each round's rows, over the working table; of the anchor's types.
    pub recursive: LogicalPlan,
    /// UNION ALL: every round's rows are kept, duplicates too.
    pub union_all: bool,
    /// The output schema (the anchor's types, the CTE's column names).
    pub schema: SchemaRef,
}

/// Options of a file reader, as DuckDB's `read_csv` / `read_parquet` take
/// them: `read_csv('p', delim=';', header=false, types={'a': 'DOUBLE'})`.
/// `None` leaves a CSV dialect setting to the sniffer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FileOptions {
    /// Rows sampled to infer a CSV file's column types (`None`: the
    /// reader's default; `Some(usize::MAX)`: every row, `sample_size=-1`).
    pub sample_rows: Option<usize>,
    /// Column types fixed by the user, by column name.
    pub types: Vec<(String, arrow_schema::DataType)>,
    /// CSV field separator (`delim`, `sep`).
    pub delimiter: Option<u8>,
    /// CSV quote character (`quote`; `Some(None)`: no quoting, `quote=''`).
    pub quote: Option<Option<u8>>,
    /// CSV escape character inside quotes (`escape`; `Some(None)`: the
    /// quote doubled, the default).
    pub escape: Option<Option<u8>>,
    /// The first row holds the column names (`header`).
    pub header: Option<bool>,
    /// Every column's name and type (`columns={'a': 'INT', ...}`): no
    /// sniffing of names or types.
    pub columns: Option<Vec<(String, arrow_schema::DataType)>>,
    /// The text read as NULL (`nullstr`) instead of the empty field, which
    /// is then an empty string, as in DuckDB.
    pub null_string: Option<String>,
    /// Lines skipped before the header (`skip`).
    pub skip: usize,
    /// Rows that do not parse are left out (`ignore_errors`).
    pub ignore_errors: bool,
    /// `auto_detect=false`: nothing is sniffed, `columns` must be given.
    pub no_auto_detect: bool,
    /// Adds a `filename` column holding each row's file (`filename=true`).
    pub filename: bool,
    /// Partition columns from `key=value` folders (`hive_partitioning`;
    /// `None`: when every file's path has the same keys, as in DuckDB).
    pub hive_partitioning: Option<bool>,
    /// The paths of a list argument (`read_parquet(['a', 'b'])`), each a
    /// path or a glob; empty when the scan's one `path` is the pattern.
    pub paths: Vec<String>,
}

/// A file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileFormat {
    /// Comma-separated values with a header row.
    Csv,
    /// Apache Parquet.
    Parquet,
}

/// Options of `COPY ... TO`, checked against the format by the binder.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CopyOptions {
    /// CSV: a header row (DuckDB's default: true).
    pub header: bool,
    /// CSV: the field delimiter (default `,`).
    pub delimiter: u8,
    /// CSV: the quote character (default `"`).
    pub quote: u8,
    /// CSV: how NULL is written (default: the empty string).
    pub null: String,
    /// Parquet: the compression codec.
    pub compression: Compression,
    /// Parquet: rows per row group (DuckDB's default: 122,880).
    pub row_group_size: usize,
    /// `PARTITION_BY (cols)`: the columns (indices into the rows written)
    /// whose values name a `col=value` folder per partition; empty for one
    /// file.
    pub partition_by: Vec<usize>,
    /// `OVERWRITE`: a partitioned write first empties its directory.
    pub overwrite: bool,
    /// `OVERWRITE_OR_IGNORE`: a partitioned write into a directory that is
    /// not empty replaces only the files it writes.
    pub overwrite_or_ignore: bool,
    /// `FILENAME_PATTERN`: the name of each partition's file, without the
    /// extension; `{i}` is the file's number, `{uuid}` a random UUID
    /// (DuckDB's default: `data_{i}`).
    pub filename_pattern: String,
    /// `WRITE_PARTITION_COLUMNS`: the partition columns are also written
    /// into the files (by default only the folder names hold them).
    pub write_partition_columns: bool,
}

impl Default for CopyOptions {
    fn default() -> Self {
        Self {
            header: true,
            delimiter: b',',
            quote: b'"',
            null: String::new(),
            compression: Compression::Snappy,
            row_group_size: 122_880,
            partition_by: Vec::new(),
            overwrite: false,
            overwrite_or_ignore: false,
            filename_pattern: "data_{i}".into(),
            write_partition_columns: false,
        }
    }
}

/// A Parquet compression codec of `COPY ... (COMPRESSION c)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compression {
    /// No compression.
    Uncompressed,
    /// Snappy (DuckDB's default for Parquet).
    Snappy,
    /// Zstandard.
    Zstd,
}

/// A sort key.
#[derive(Clone, Debug, PartialEq)]
pub struct SortKey {
    /// The expression sorted on (over the input of the Sort).
    pub expr: Expr,
    /// Ascending (the default).
    pub asc: bool,
    /// NULLs first. The default, as in DuckDB, is NULLS LAST in both
    /// directions.
    pub nulls_first: bool,
}

impl fmt::Display for SortKey {
    /// `expr ASC|DESC NULLS FIRST|LAST`, as EXPLAIN shows it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} NULLS {}",
            self.expr,
            if self.asc { "ASC" } else { "DESC" },
            if self.nulls_first { "FIRST" } else { "LAST" }
        )
    }
}

/// Aggregate functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AggregateFunction {
    /// `count(*)`: rows, BIGINT.
    CountStar,
    /// `count(x)`: non-NULL values, BIGINT.
    Count,
    /// `sum(x)`: BIGINT for integers, DECIMAL(38, s) for decimals, DOUBLE
    /// for doubles; NULL over no non-NULL value.
    Sum,
    /// `avg(x)`: DOUBLE (DECIMAL inputs give DOUBLE too).
    Avg,
    /// `min(x)`, of the input type.
    Min,
    /// `max(x)`, of the input type.
    Max,
    /// `var_samp(x)` (alias `variance`): sample variance, DOUBLE; NULL
    /// over fewer than two non-NULL values.
    VarSamp,
    /// `var_pop(x)`: population variance, DOUBLE; NULL over no non-NULL
    /// value.
    VarPop,
    /// `stddev_samp(x)` (alias `stddev`): square root of `var_samp`.
    StddevSamp,
    /// `stddev_pop(x)`: square root of `var_pop`.
    StddevPop,
    /// `covar_pop(y, x)`: the population covariance of the pairs where
    /// neither is NULL, DOUBLE.
    CovarPop,
    /// `covar_samp(y, x)`: the sample covariance; NULL under two pairs.
    CovarSamp,
    /// `corr(y, x)`: the correlation coefficient (NaN where either
    /// variance is 0).
    Corr,
    /// `regr_slope(y, x)`: the least-squares line's slope,
    /// `covar_pop / var_pop(x)`.
    RegrSlope,
    /// `regr_intercept(y, x)`: where that line meets `x = 0`.
    RegrIntercept,
    /// `regr_r2(y, x)`: the coefficient of determination.
    RegrR2,
    /// `regr_count(y, x)`: the pairs where neither is NULL, UINTEGER.
    RegrCount,
    /// `regr_avgx(y, x)`: the mean of `x` over those pairs.
    RegrAvgx,
    /// `regr_avgy(y, x)`: the mean of `y` over those pairs.
    RegrAvgy,
    /// `regr_sxx(y, x)`: `regr_count * var_pop(x)`.
    RegrSxx,
    /// `regr_syy(y, x)`: `regr_count * var_pop(y)`.
    RegrSyy,
    /// `regr_sxy(y, x)`: `regr_count * covar_pop(y, x)`.
    RegrSxy,
    /// `arg_min(x, y)` (aliases `argmin`, `min_by`): `x` of the row with
    /// the smallest `y`, over rows where neither is NULL; of `x`'s type.
    ArgMin,
    /// `arg_max(x, y)` (aliases `argmax`, `max_by`): `x` of the row with
    /// the largest `y`.
    ArgMax,
    /// `string_agg(x, sep)` (aliases `group_concat`, `listagg`): the
    /// non-NULL values as VARCHAR joined by the constant `sep` (`,` by
    /// default), in no defined order.
    StringAgg,
    /// `median(x)` of numbers: DOUBLE, the mean of the two middle values
    /// when their count is even.
    Median,
    /// `mode(x)`: the most frequent non-NULL value (a tie goes to the
    /// smallest), of the input type.
    Mode,
    /// `any_value(x)`: a non-NULL value of the group, in no defined order.
    AnyValue,
    /// `first(x)`: the value (NULL included) of the group's first row in
    /// the order the lanes meet the rows: the table's order on one
    /// thread, not guaranteed on several (as DuckDB without ORDER BY).
    First,
    /// `last(x)`: as [`First`](Self::First), the group's last row.
    Last,
    /// `bit_and(x)` of integers, of the input type.
    BitAnd,
    /// `bit_or(x)` of integers, of the input type.
    BitOr,
    /// `bit_xor(x)` of integers, of the input type.
    BitXor,
    /// `product(x)` of numbers: DOUBLE.
    Product,
    /// `skewness(x)` of numbers: the sample skewness, DOUBLE; NULL under
    /// three values or without spread.
    Skewness,
    /// `kurtosis(x)` of numbers: the sample excess kurtosis (bias
    /// corrected), DOUBLE; NULL under four values or without spread.
    Kurtosis,
    /// `kurtosis_pop(x)`: the population excess kurtosis; NULL under two
    /// values or without spread.
    KurtosisPop,
    /// `entropy(x)` of any type: the Shannon entropy (log base 2) of the
    /// distinct non-NULL values' frequencies, DOUBLE; 0 without any.
    Entropy,
    /// `quantile_cont(x, q)` of numbers: DOUBLE, interpolated between the
    /// values around `(n - 1) * q`; `q` a constant in [0, 1], carried as
    /// the key argument.
    QuantileCont,
    /// `quantile_disc(x, q)` of any ordered type: the value at
    /// `ceil(n * q) - 1` in order, of the input type.
    QuantileDisc,
    /// `GROUPING(x)` of one GROUP BY key `x`: 1 in the groups of a
    /// grouping set that leaves `x` out, else 0 (`GROUPING(a, b)` is
    /// `2 * GROUPING(a) + GROUPING(b)`). The binder makes it a constant of
    /// each grouping set; it is never computed.
    Grouping,
}

impl AggregateFunction {
    /// The SQL name.
    pub fn name(self) -> &'static str {
        match self {
            Self::CountStar | Self::Count => "count",
            Self::Sum => "sum",
            Self::Avg => "avg",
            Self::Min => "min",
            Self::Max => "max",
            Self::VarSamp => "var_samp",
            Self::VarPop => "var_pop",
            Self::StddevSamp => "stddev_samp",
            Self::StddevPop => "stddev_pop",
            Self::CovarPop => "covar_pop",
            Self::CovarSamp => "covar_samp",
            Self::Corr => "corr",
            Self::RegrSlope => "regr_slope",
            Self::RegrIntercept => "regr_intercept",
            Self::RegrR2 => "regr_r2",
            Self::RegrCount => "regr_count",
            Self::RegrAvgx => "regr_avgx",
            Self::RegrAvgy => "regr_avgy",
            Self::RegrSxx => "regr_sxx",
            Self::RegrSyy => "regr_syy",
            Self::RegrSxy => "regr_sxy",
            Self::ArgMin => "arg_min",
            Self::ArgMax => "arg_max",
            Self::StringAgg => "string_agg",
            Self::Median => "median",
            Self::Mode => "mode",
            Self::AnyValue => "any_value",
            Self::First => "first",
            Self::Last => "last",
            Self::BitAnd => "bit_and",
            Self::BitOr => "bit_or",
            Self::BitXor => "bit_xor",
            Self::Product => "product",
            Self::Skewness => "skewness",
            Self::Kurtosis => "kurtosis",
            Self::KurtosisPop => "kurtosis_pop",
            Self::Entropy => "entropy",
            Self::QuantileCont => "quantile_cont",
            Self::QuantileDisc => "quantile_disc",
            Self::Grouping => "grouping",
        }
    }

    /// True for the aggregates of two arguments (`arg_min(x, y)`,
    /// `string_agg(x, sep)`, `covar_pop(y, x)`).
    pub fn takes_key(self) -> bool {
        matches!(self, Self::ArgMin | Self::ArgMax | Self::StringAgg) || self.of_pairs()
    }

    /// True for the statistics of numeric pairs (`covar_pop(y, x)`,
    /// `corr`, the `regr_*` family): both arguments DOUBLE, a pair where
    /// either is NULL skipped.
    pub fn of_pairs(self) -> bool {
        matches!(
            self,
            Self::CovarPop
                | Self::CovarSamp
                | Self::Corr
                | Self::RegrSlope
                | Self::RegrIntercept
                | Self::RegrR2
                | Self::RegrCount
                | Self::RegrAvgx
                | Self::RegrAvgy
                | Self::RegrSxx
                | Self::RegrSyy
                | Self::RegrSxy
        )
    }

    /// True where the order the values arrive in changes the result, so
    /// an `ORDER BY` inside the call is kept (`string_agg(x ORDER BY y)`,
    /// `first(x ORDER BY y)`); elsewhere it is dropped, as in DuckDB.
    pub fn depends_on_order(self) -> bool {
        matches!(
            self,
            Self::StringAgg | Self::First | Self::Last | Self::AnyValue
        )
    }
}

/// One aggregate of an [`LogicalPlan::Aggregate`].
#[derive(Clone, Debug, PartialEq)]
pub struct AggregateExpr {
    /// The function.
    pub func: AggregateFunction,
    /// Its argument over the Aggregate's input (`None` for `count(*)`).
    pub arg: Option<Expr>,
    /// The second argument, the key compared (`y` of `arg_min(x, y)`);
    /// `None` for the aggregates of one argument.
    pub key: Option<Expr>,
    /// `DISTINCT`: aggregate each distinct non-NULL value once.
    pub distinct: bool,
    /// `ORDER BY` inside the call (`string_agg(x, ',' ORDER BY y)`): the
    /// order the values reach the aggregate in, over the Aggregate's
    /// input. Empty for the aggregates whose value no order changes
    /// (the binder drops it there, as DuckDB does).
    pub order_by: Vec<SortKey>,
}

impl AggregateExpr {
    /// An aggregate of `func` over `arg` (and `key`), neither DISTINCT nor
    /// ordered.
    pub fn new(func: AggregateFunction, arg: Option<Expr>, key: Option<Expr>) -> Self {
        AggregateExpr {
            func,
            arg,
            key,
            distinct: false,
            order_by: Vec::new(),
        }
    }

    /// Every expression it reads: the argument, the key, the ORDER BY
    /// terms.
    pub fn exprs(&self) -> impl Iterator<Item = &Expr> {
        self.arg
            .iter()
            .chain(&self.key)
            .chain(self.order_by.iter().map(|k| &k.expr))
    }

    /// The same aggregate with `f` applied to every expression it reads.
    pub fn map_exprs(mut self, mut f: impl FnMut(&Expr) -> Expr) -> Self {
        self.arg = self.arg.map(|e| f(&e));
        self.key = self.key.map(|e| f(&e));
        for k in &mut self.order_by {
            k.expr = f(&k.expr);
        }
        self
    }
}

impl fmt::Display for AggregateExpr {
    /// As DuckDB names the column: `string_agg(s, ',' ORDER BY o DESC)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(a) = &self.arg else {
            return write!(f, "count(*)");
        };
        let d = if self.distinct { "DISTINCT " } else { "" };
        write!(f, "{}({d}{a}", self.func.name())?;
        if let Some(k) = &self.key {
            write!(f, ", {k}")?;
        }
        for (i, k) in self.order_by.iter().enumerate() {
            let by = if i == 0 { " ORDER BY " } else { ", " };
            write!(f, "{by}{}", k.expr)?;
            if !k.asc {
                write!(f, " DESC")?;
            }
            if k.nulls_first {
                write!(f, " NULLS FIRST")?;
            }
        }
        write!(f, ")")
    }
}

/// A window function (`f(...) OVER (...)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WindowFunction {
    /// `row_number()`: 1, 2, ... in the partition, BIGINT.
    RowNumber,
    /// `rank()`: 1 + rows before the row's peers, BIGINT.
    Rank,
    /// `dense_rank()`: 1 + peer groups before the row's, BIGINT.
    DenseRank,
    /// `percent_rank()`: `(rank - 1) / (rows - 1)`, 0 for one row, DOUBLE.
    PercentRank,
    /// `cume_dist()`: rows up to the row's last peer / rows, DOUBLE.
    CumeDist,
    /// `ntile(n)`: the bucket 1..n of the row, BIGINT.
    Ntile,
    /// `lag(x[, offset[, default]])`.
    Lag,
    /// `lead(x[, offset[, default]])`.
    Lead,
    /// `first_value(x)` over the frame.
    FirstValue,
    /// `last_value(x)` over the frame.
    LastValue,
    /// `nth_value(x, n)` over the frame.
    NthValue,
    /// An aggregate over the frame (count, count(*), sum, avg, min, max).
    Aggregate(AggregateFunction),
}

impl WindowFunction {
    /// The SQL name.
    pub fn name(self) -> &'static str {
        match self {
            Self::RowNumber => "row_number",
            Self::Rank => "rank",
            Self::DenseRank => "dense_rank",
            Self::PercentRank => "percent_rank",
            Self::CumeDist => "cume_dist",
            Self::Ntile => "ntile",
            Self::Lag => "lag",
            Self::Lead => "lead",
            Self::FirstValue => "first_value",
            Self::LastValue => "last_value",
            Self::NthValue => "nth_value",
            Self::Aggregate(a) => a.name(),
        }
    }

    /// True for the functions computed over the frame (the others ignore it).
    pub fn uses_frame(self) -> bool {
        matches!(
            self,
            Self::FirstValue | Self::LastValue | Self::NthValue | Self::Aggregate(_)
        )
    }
}

/// The unit of a window frame's bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FrameUnits {
    /// Bounds count rows.
    Rows,
    /// Bounds are values of the (one) ORDER BY key; CURRENT ROW means the
    /// row's peers.
    Range,
    /// Bounds count peer groups (rows equal in the ORDER BY keys); CURRENT
    /// ROW means the row's peers.
    Groups,
}

/// One bound of a window frame. Offsets are non-negative: an integer
/// number of rows for ROWS, a value of the ORDER BY key's type for RANGE.
#[derive(Clone, Debug, PartialEq)]
pub enum FrameBound {
    /// `UNBOUNDED PRECEDING`.
    UnboundedPreceding,
    /// `n PRECEDING`.
    Preceding(ScalarValue),
    /// `CURRENT ROW`.
    CurrentRow,
    /// `n FOLLOWING`.
    Following(ScalarValue),
    /// `UNBOUNDED FOLLOWING`.
    UnboundedFollowing,
}

impl fmt::Display for FrameBound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnboundedPreceding => write!(f, "UNBOUNDED PRECEDING"),
            Self::Preceding(n) => write!(f, "{n} PRECEDING"),
            Self::CurrentRow => write!(f, "CURRENT ROW"),
            Self::Following(n) => write!(f, "{n} FOLLOWING"),
            Self::UnboundedFollowing => write!(f, "UNBOUNDED FOLLOWING"),
        }
    }
}

/// The kind of a [`LogicalPlan::Join`]. The right input is the build side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JoinKind {
    /// Pairs that match.
    Inner,
    /// Inner, plus left rows without a match, padded with NULLs.
    Left,
    /// Inner, plus right rows without a match, padded with NULLs.
    Right,
    /// Left and right rows without a match, padded with NULLs.
    Full,
    /// Left rows with at least one match, left columns only (`EXISTS`, `IN`).
    Semi,
    /// Left rows without a match, left columns only (`NOT EXISTS`).
    Anti,
    /// `x NOT IN (subquery)`: as `Anti`, with SQL's NULL rule: no row when
    /// the right side holds a NULL key, and a left row with a NULL key is
    /// kept only when the right side is empty.
    NullAwareAnti,
    /// An uncorrelated scalar subquery: as `Left` without keys, the right
    /// side holding at most one row (more is an error).
    Single,
    /// `INTERSECT`: as `Semi`, NULL keys equal to each other.
    Intersect,
    /// `EXCEPT`: as `Anti`, NULL keys equal to each other.
    Except,
    /// Right rows with at least one match, right columns only: a `Semi`
    /// join with its sides swapped, so that its hash table holds the
    /// smaller, outer side and the subquery's rows are probed past it
    /// (made by the optimiser, never by the binder).
    RightSemi,
    /// Right rows without a match, right columns only: an `Anti` join
    /// with its sides swapped, as `RightSemi`.
    RightAnti,
}

impl JoinKind {
    /// True when the output has the right input's columns.
    pub fn keeps_right(self) -> bool {
        !matches!(
            self,
            Self::Semi | Self::Anti | Self::NullAwareAnti | Self::Intersect | Self::Except
        )
    }

    /// True when the output has the left input's columns (all but the
    /// right semi and anti joins: the right's only).
    pub fn keeps_left(self) -> bool {
        !matches!(self, Self::RightSemi | Self::RightAnti)
    }

    /// The SQL name, as EXPLAIN shows it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Inner => "INNER",
            Self::Left => "LEFT",
            Self::Right => "RIGHT",
            Self::Full => "FULL",
            Self::Semi => "SEMI",
            Self::Anti => "ANTI",
            Self::NullAwareAnti => "NULL-AWARE ANTI",
            Self::Single => "SINGLE",
            Self::Intersect => "INTERSECT",
            Self::Except => "EXCEPT",
            Self::RightSemi => "RIGHT SEMI",
            Self::RightAnti => "RIGHT ANTI",
        }
    }
}

/// A window frame: `ROWS|RANGE BETWEEN start AND end`.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowFrame {
    /// ROWS or RANGE.
    pub units: FrameUnits,
    /// The first row of the frame.
    pub start: FrameBound,
    /// The last row of the frame.
    pub end: FrameBound,
}

impl fmt::Display for WindowFrame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let units = match self.units {
            FrameUnits::Rows => "ROWS",
            FrameUnits::Range => "RANGE",
            FrameUnits::Groups => "GROUPS",
        };
        write!(f, "{units} BETWEEN {} AND {}", self.start, self.end)
    }
}

/// One window function of a [`LogicalPlan::Window`]; the node's partition
/// and order keys are shared by all of its functions.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowExpr {
    /// The function.
    pub func: WindowFunction,
    /// Its arguments over the Window's input: the value (`x` of `lag`,
    /// `sum`; none for `count(*)` and the ranks), then, for `lag`/`lead`,
    /// the default value (cast to the value's type); `ntile`'s and
    /// `nth_value`'s counts and `lag`'s offset are in `offset`.
    pub args: Vec<Expr>,
    /// `lag`/`lead` offset (1 by default), `ntile` buckets, `nth_value`'s n.
    pub offset: i64,
    /// The frame (DuckDB's default when none is written: RANGE BETWEEN
    /// UNBOUNDED PRECEDING AND CURRENT ROW with ORDER BY, the whole
    /// partition without).
    pub frame: WindowFrame,
    /// `IGNORE NULLS` (`lag`, `lead`, `first_value`, `last_value`,
    /// `nth_value`): NULL values are skipped, as if not in the partition.
    pub ignore_nulls: bool,
    /// An aggregate that the window's own kernels do not compute (any but
    /// count, sum, avg, min and max, or one with DISTINCT or ORDER BY
    /// inside the call): the call, its expressions columns standing for
    /// `args` by position (column `i` is `args[i]`), so that rewriting
    /// `args` rewrites it. It is computed by the aggregation over each
    /// frame's rows. `None` for every other function.
    pub aggregate: Option<Box<AggregateExpr>>,
}

impl WindowExpr {
    /// `ROW_NUMBER()`, over the whole partition (it reads no frame): the
    /// occurrence numbers the binder's rewrites give rows.
    pub fn row_number() -> Self {
        WindowExpr {
            func: WindowFunction::RowNumber,
            args: Vec::new(),
            offset: 1,
            frame: WindowFrame {
                units: FrameUnits::Rows,
                start: FrameBound::UnboundedPreceding,
                end: FrameBound::UnboundedFollowing,
            },
            ignore_nulls: false,
            aggregate: None,
        }
    }

    /// The aggregate of [`WindowExpr::aggregate`] over the Window's input
    /// (its columns replaced by the arguments they stand for).
    pub fn aggregate_call(&self) -> Option<AggregateExpr> {
        let a = self.aggregate.as_deref()?.clone();
        Some(a.map_exprs(|e| match e {
            Expr::Column(c) => self.args.get(c.index).cloned().unwrap_or_else(|| e.clone()),
            other => other.clone(),
        }))
    }
}

impl fmt::Display for WindowExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(call) = self.aggregate_call() {
            return write!(f, "{call} {}", self.frame);
        }
        let args: Vec<String> = self.args.iter().map(ToString::to_string).collect();
        let mut args = args.join(", ");
        if self.func == WindowFunction::Aggregate(AggregateFunction::CountStar) {
            args = "*".into();
        }
        match self.func {
            WindowFunction::Lag | WindowFunction::Lead if self.args.len() == 1 => {
                args = format!("{args}, {}", self.offset)
            }
            WindowFunction::Lag | WindowFunction::Lead => {
                let (x, d) = (&self.args[0], &self.args[1]);
                args = format!("{x}, {}, {d}", self.offset)
            }
            WindowFunction::Ntile => args = self.offset.to_string(),
            WindowFunction::NthValue => args = format!("{args}, {}", self.offset),
            _ => {}
        }
        if self.ignore_nulls {
            args.push_str(" IGNORE NULLS");
        }
        write!(f, "{}({args})", self.func.name())?;
        if self.func.uses_frame() {
            write!(f, " {}", self.frame)?;
        }
        Ok(())
    }
}

/// A logical query plan.
#[derive(Clone, Debug, PartialEq)]
pub enum LogicalPlan {
    /// Joins `left` (the probe side) with `right` (the build side): rows
    /// pair up where every `on` pair is equal (NULL never equals) and
    /// `filter` is TRUE. No `on` pair is a nested-loop join (a cross join
    /// without `filter`). The output is the left columns, then the right
    /// ones (only the left ones for SEMI and ANTI); the columns of a side
    /// padded with NULLs by an outer join are nullable.
    Join {
        /// The probe side.
        left: Box<LogicalPlan>,
        /// The build side.
        right: Box<LogicalPlan>,
        /// The kind.
        kind: JoinKind,
        /// Equality keys: an expression over `left`, one over `right`, of
        /// one type.
        on: Vec<(Expr, Expr)>,
        /// Further condition over the left columns followed by the right
        /// ones (both sides, whatever the kind).
        filter: Option<Expr>,
        /// The output schema.
        schema: SchemaRef,
    },
    /// Reads all columns of a source; `schema` is the source's schema.
    Scan {
        /// The source.
        source: TableSource,
        /// Its schema.
        schema: SchemaRef,
    },
    /// Literal rows; every value already has the schema's column type.
    Values {
        /// The rows.
        rows: Vec<Vec<ScalarValue>>,
        /// Their schema.
        schema: SchemaRef,
    },
    /// The rows of every input, one input after the other (`UNION ALL`);
    /// every input has the schema's column types.
    Union {
        /// The inputs, two or more.
        inputs: Vec<LogicalPlan>,
        /// The output schema (the first input's names).
        schema: SchemaRef,
    },
    /// Keeps the rows where `predicate` is TRUE (not FALSE, not NULL).
    Filter {
        /// The input.
        input: Box<LogicalPlan>,
        /// A BOOLEAN expression over the input.
        predicate: Expr,
    },
    /// Computes `exprs` over each input row; `schema` names them.
    Projection {
        /// The input.
        input: Box<LogicalPlan>,
        /// One expression per output column.
        exprs: Vec<Expr>,
        /// The output schema.
        schema: SchemaRef,
    },
    /// Groups by `group_by` and computes `aggregates`. The output has the
    /// group columns first, then one column per aggregate. No group keys
    /// means one output row, even over no input.
    Aggregate {
        /// The input.
        input: Box<LogicalPlan>,
        /// Group keys over the input.
        group_by: Vec<Expr>,
        /// Aggregates over the input.
        aggregates: Vec<AggregateExpr>,
        /// The output schema.
        schema: SchemaRef,
    },
    /// Window functions: the output is the input's columns, then one
    /// column per function, computed over the rows of the same
    /// `partition_by` values ordered by `order_by`. Rows come out grouped
    /// by partition, in no defined order otherwise.
    Window {
        /// The input.
        input: Box<LogicalPlan>,
        /// Partition keys over the input.
        partition_by: Vec<Expr>,
        /// Order within a partition.
        order_by: Vec<SortKey>,
        /// The functions.
        functions: Vec<WindowExpr>,
        /// The output schema.
        schema: SchemaRef,
    },
    /// Removes duplicate rows (NULLs compare equal here).
    Distinct {
        /// The input.
        input: Box<LogicalPlan>,
    },
    /// Sorts by `keys`, stably.
    Sort {
        /// The input.
        input: Box<LogicalPlan>,
        /// Keys, most significant first.
        keys: Vec<SortKey>,
    },
    /// Skips `offset` rows, then keeps at most `fetch` rows.
    Limit {
        /// The input.
        input: Box<LogicalPlan>,
        /// Rows to skip.
        offset: usize,
        /// Rows to keep (`None`: all).
        fetch: Option<usize>,
    },
}

impl LogicalPlan {
    /// The output schema of this node.
    pub fn schema(&self) -> SchemaRef {
        match self {
            Self::Scan { schema, .. }
            | Self::Values { schema, .. }
            | Self::Projection { schema, .. }
            | Self::Aggregate { schema, .. }
            | Self::Join { schema, .. }
            | Self::Union { schema, .. }
            | Self::Window { schema, .. } => schema.clone(),
            Self::Filter { input, .. }
            | Self::Distinct { input }
            | Self::Sort { input, .. }
            | Self::Limit { input, .. } => input.schema(),
        }
    }

    /// The input of this node, if it has exactly one (a Join has two:
    /// see [`LogicalPlan::children`]).
    pub fn input(&self) -> Option<&LogicalPlan> {
        match self {
            Self::Scan { .. } | Self::Values { .. } | Self::Join { .. } | Self::Union { .. } => {
                None
            }
            Self::Filter { input, .. }
            | Self::Projection { input, .. }
            | Self::Aggregate { input, .. }
            | Self::Window { input, .. }
            | Self::Distinct { input }
            | Self::Sort { input, .. }
            | Self::Limit { input, .. } => Some(input),
        }
    }

    /// True if an expression anywhere in this plan calls a volatile
    /// function (`random()`), so that computing it twice may differ from
    /// computing it once.
    pub fn calls_volatile(&self) -> bool {
        let own = match self {
            Self::Join { on, filter, .. } => {
                on.iter().any(|(l, r)| l.is_volatile() || r.is_volatile())
                    || filter.as_ref().is_some_and(Expr::is_volatile)
            }
            Self::Filter { predicate, .. } => predicate.is_volatile(),
            Self::Projection { exprs, .. } => exprs.iter().any(Expr::is_volatile),
            Self::Aggregate {
                group_by,
                aggregates,
                ..
            } => {
                group_by.iter().any(Expr::is_volatile)
                    || aggregates.iter().any(|a| a.exprs().any(Expr::is_volatile))
            }
            Self::Window {
                partition_by,
                order_by,
                functions,
                ..
            } => {
                partition_by.iter().any(Expr::is_volatile)
                    || order_by.iter().any(|k| k.expr.is_volatile())
                    || functions
                        .iter()
                        .any(|f| f.args.iter().any(Expr::is_volatile))
            }
            Self::Sort { keys, .. } => keys.iter().any(|k| k.expr.is_volatile()),
            Self::Scan { .. }
            | Self::Values { .. }
            | Self::Union { .. }
            | Self::Distinct { .. }
            | Self::Limit { .. } => false,
        };
        own || self.children().iter().any(|c| c.calls_volatile())
    }

    /// The node with `f` applied to each of its inputs (in order), its
    /// own fields kept.
    pub(crate) fn map_inputs(self, f: &mut impl FnMut(LogicalPlan) -> LogicalPlan) -> LogicalPlan {
        let mut one = |p: Box<LogicalPlan>| Box::new(f(*p));
        match self {
            LogicalPlan::Join {
                left,
                right,
                kind,
                on,
                filter,
                schema,
            } => {
                let left = one(left);
                let right = one(right);
                LogicalPlan::Join {
                    left,
                    right,
                    kind,
                    on,
                    filter,
                    schema,
                }
            }
            LogicalPlan::Union { inputs, schema } => LogicalPlan::Union {
                inputs: inputs.into_iter().map(&mut *f).collect(),
                schema,
            },
            LogicalPlan::Filter { input, predicate } => LogicalPlan::Filter {
                input: one(input),
                predicate,
            },
            LogicalPlan::Projection {
                input,
                exprs,
                schema,
            } => LogicalPlan::Projection {
                input: one(input),
                exprs,
                schema,
            },
            LogicalPlan::Aggregate {
                input,
                group_by,
                aggregates,
                schema,
            } => LogicalPlan::Aggregate {
                input: one(input),
                group_by,
                aggregates,
                schema,
            },
            LogicalPlan::Window {
                input,
                partition_by,
                order_by,
                functions,
                schema,
            } => LogicalPlan::Window {
                input: one(input),
                partition_by,
                order_by,
                functions,
                schema,
            },
            LogicalPlan::Distinct { input } => LogicalPlan::Distinct { input: one(input) },
            LogicalPlan::Sort { input, keys } => LogicalPlan::Sort {
                input: one(input),
                keys,
            },
            LogicalPlan::Limit {
                input,
                offset,
                fetch,
            } => LogicalPlan::Limit {
                input: one(input),
                offset,
                fetch,
            },
            leaf @ (LogicalPlan::Scan { .. } | LogicalPlan::Values { .. }) => leaf,
        }
    }

    /// The inputs of this node: none for a leaf, two for a Join (left,
    /// right).
    pub fn children(&self) -> Vec<&LogicalPlan> {
        match self {
            Self::Join { left, right, .. } => vec![left, right],
            Self::Union { inputs, .. } => inputs.iter().collect(),
            other => other.input().into_iter().collect(),
        }
    }

    /// An indented, one-node-per-line rendering for EXPLAIN (a Join's
    /// inputs below it, left first).
    pub fn display_indent(&self) -> String {
        let mut out = String::new();
        let mut stack = vec![(self, 0)];
        while let Some((n, depth)) = stack.pop() {
            out.push_str(&"  ".repeat(depth));
            out.push_str(&n.describe());
            out.push('\n');
            for c in n.children().into_iter().rev() {
                stack.push((c, depth + 1));
            }
        }
        out
    }

    /// The first line of [`LogicalPlan::display_indent`]: this node alone.
    pub fn describe_node(&self) -> String {
        self.describe()
    }

    fn describe(&self) -> String {
        fn list<T: fmt::Display>(items: &[T]) -> String {
            items
                .iter()
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        }
        match self {
            Self::Scan { source, schema } => {
                format!("Scan: {source} ({} columns)", schema.fields().len())
            }
            Self::Values { rows, .. } => format!("Values: {} rows", rows.len()),
            Self::Union { inputs, .. } => format!("Union: {} inputs", inputs.len()),
            Self::Join {
                kind, on, filter, ..
            } => {
                let mut parts: Vec<String> = on.iter().map(|(l, r)| format!("{l} = {r}")).collect();
                if let Some(f) = filter {
                    parts.push(f.to_string());
                }
                if on.is_empty() && filter.is_none() && *kind == JoinKind::Inner {
                    "CrossJoin".to_string()
                } else {
                    format!("{} Join: {}", kind.name(), parts.join(" AND "))
                }
            }
            Self::Filter { predicate, .. } => format!("Filter: {predicate}"),
            Self::Projection { exprs, .. } => format!("Projection: {}", list(exprs)),
            Self::Aggregate {
                group_by,
                aggregates,
                ..
            } => format!(
                "Aggregate: groupBy=[{}], aggr=[{}]",
                list(group_by),
                list(aggregates)
            ),
            Self::Window {
                partition_by,
                order_by,
                functions,
                ..
            } => format!(
                "Window: partitionBy=[{}], orderBy=[{}], functions=[{}]",
                list(partition_by),
                list(order_by),
                list(functions)
            ),
            Self::Distinct { .. } => "Distinct".to_string(),
            Self::Sort { keys, .. } => {
                let keys: Vec<String> = keys.iter().map(SortKey::to_string).collect();
                format!("Sort: {}", keys.join(", "))
            }
            Self::Limit { offset, fetch, .. } => match fetch {
                Some(n) => format!("Limit: {n} offset {offset}"),
                None => format!("Limit: all offset {offset}"),
            },
        }
    }
}

/// A column of `CREATE TABLE`.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnDef {
    /// Name.
    pub name: String,
    /// Type.
    pub data_type: arrow_schema::DataType,
    /// False for `NOT NULL`.
    pub nullable: bool,
}

/// The schema of the table `CREATE TABLE ... AS query` makes: the query's
/// column names and types, every column nullable (such a table has no
/// constraints, so a later INSERT may store NULL anywhere, as in DuckDB).
pub fn created_table_schema(query: &Schema) -> SchemaRef {
    let fields: Vec<Field> = query
        .fields()
        .iter()
        .map(|f| f.as_ref().clone().with_nullable(true))
        .collect();
    SchemaRef::new(Schema::new_with_metadata(fields, query.metadata().clone()))
}

/// A planned statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Statement {
    /// A query returning rows.
    Query(LogicalPlan),
    /// `EXPLAIN [ANALYZE] query`.
    Explain {
        /// Run the query and report per-step statistics.
        analyze: bool,
        /// The query.
        plan: LogicalPlan,
    },
    /// `CREATE [OR REPLACE] TABLE [IF NOT EXISTS] name (columns)`.
    CreateTable {
        /// Table name.
        name: String,
        /// Its schema.
        schema: SchemaRef,
        /// `IF NOT EXISTS`.
        if_not_exists: bool,
        /// `OR REPLACE`.
        or_replace: bool,
    },
    /// `CREATE [OR REPLACE] TABLE [IF NOT EXISTS] name AS query`.
    CreateTableAs {
        /// Table name.
        name: String,
        /// The rows.
        plan: LogicalPlan,
        /// `IF NOT EXISTS`.
        if_not_exists: bool,
        /// `OR REPLACE`.
        or_replace: bool,
    },
    /// `INSERT INTO name [(cols)] VALUES ... | query`. The planner has
    /// already mapped and cast the rows to the table's full schema (missing
    /// columns are NULL), so `plan.schema()` matches the table's.
    Insert {
        /// Table name.
        table: String,
        /// Rows in the table's schema.
        plan: LogicalPlan,
    },
    /// `UPDATE name SET ... [WHERE ...]`: `plan` gives every row of the
    /// table (in its order) with its new values, in the table's columns,
    /// then a BOOLEAN column that is TRUE for the rows updated.
    Update {
        /// Table name.
        table: String,
        /// The rows afterwards, and which changed.
        plan: LogicalPlan,
    },
    /// `DELETE FROM name [WHERE ...]`: `plan` gives the rows kept, in the
    /// table's order.
    Delete {
        /// Table name.
        table: String,
        /// The rows kept.
        plan: LogicalPlan,
    },
    /// `ALTER TABLE name ...`: column `k` of the altered table is column
    /// `columns[k]` of the old one, or all NULL (`ADD COLUMN`).
    AlterTable {
        /// Table name.
        name: String,
        /// The table's name afterwards (`RENAME TO`, else `name`).
        new_name: String,
        /// The table's schema afterwards.
        schema: SchemaRef,
        /// Where each column of `schema` comes from.
        columns: Vec<Option<usize>>,
        /// `IF EXISTS`: no table is no error.
        if_exists: bool,
    },
    /// `DROP TABLE [IF EXISTS] name`.
    DropTable {
        /// Table name.
        name: String,
        /// `IF EXISTS`.
        if_exists: bool,
    },
    /// `SHOW TABLES`.
    ShowTables,
    /// `CREATE [OR REPLACE] VIEW [IF NOT EXISTS] name [(columns)] AS
    /// query`: the query was bound once to check it.
    CreateView {
        /// The view, as kept by the catalog.
        view: crate::catalog::ViewDef,
        /// `OR REPLACE`.
        or_replace: bool,
        /// `IF NOT EXISTS`.
        if_not_exists: bool,
    },
    /// `DROP VIEW [IF EXISTS] name`.
    DropView {
        /// View name.
        name: String,
        /// `IF EXISTS`.
        if_exists: bool,
    },
    /// `SET name = value`, `PRAGMA name = value`: `name` is a setting the
    /// catalog listed, by its main name.
    Set {
        /// The setting.
        name: String,
        /// The value, a constant.
        value: ScalarValue,
    },
    /// `RESET name` (`None`: `RESET ALL`): back to the default.
    Reset {
        /// The setting, by its main name.
        name: Option<String>,
    },
    /// `CALL dbgen(sf = 0.1)`: create the eight TPC-H tables at that scale
    /// factor, as DuckDB's `tpch` extension does.
    Dbgen {
        /// The scale factor (1.0 is about 6 million `lineitem` rows).
        sf: f64,
    },
    /// `COPY (query) TO 'path' (options)`, `COPY table TO 'path'`: writes
    /// the rows to a file.
    Copy {
        /// The rows written.
        plan: LogicalPlan,
        /// The file written, as given.
        path: String,
        /// The format (the `FORMAT` option, else from the extension).
        format: FileFormat,
        /// The writer's options.
        options: CopyOptions,
    },
    /// `DESCRIBE name`: columns, types, nullability.
    Describe {
        /// Table name (or quoted file path).
        name: String,
        /// The schema described.
        schema: SchemaRef,
    },
}
