//! Bound, typed expressions: what the planner produces and the pipeline
//! evaluates.
//!
//! Every [`Expr`] is resolved against the schema of the plan node it sits
//! on: a [`Expr::Column`] holds the index of the field in that input
//! schema. The planner inserts explicit [`Expr::Cast`]s for implicit
//! coercions, so that after planning:
//! - both operands of a comparison have the same [`DataType`];
//! - both operands of `+ - * / %` have the same type, except DECIMAL, where
//!   precisions and scales may differ (Arrow's decimal kernels align them);
//! - `AND`, `OR`, `NOT` take and give BOOLEAN;
//! - the items of an `IN` list have the type of the tested expression.

use std::any::Any;
use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use arrow_schema::{DataType, Schema};

use crate::scalar::ScalarValue;

/// A bound expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// The field at `index` of the input schema.
    Column(ColumnRef),
    /// A constant, with its type.
    Literal(ScalarValue),
    /// A binary operator.
    Binary {
        /// The operator.
        op: BinaryOp,
        /// Left operand.
        left: Box<Expr>,
        /// Right operand.
        right: Box<Expr>,
    },
    /// Boolean negation, three-valued (`NOT NULL` is NULL).
    Not(Box<Expr>),
    /// Arithmetic negation.
    Negative(Box<Expr>),
    /// `expr IS NULL` (never NULL itself).
    IsNull(Box<Expr>),
    /// `expr IS NOT NULL` (never NULL itself).
    IsNotNull(Box<Expr>),
    /// `expr [NOT] IN (list)`, three-valued: NULL when no item matches and
    /// the expression or any item is NULL.
    InList {
        /// The tested expression.
        expr: Box<Expr>,
        /// The items, already of the type of `expr`.
        list: InItems,
        /// `NOT IN`.
        negated: bool,
    },
    /// `expr [NOT] LIKE|ILIKE pattern` with `%` and `_` wildcards and an
    /// optional escape character.
    Like {
        /// The tested string expression.
        expr: Box<Expr>,
        /// The constant pattern.
        pattern: String,
        /// `NOT LIKE`.
        negated: bool,
        /// `ILIKE`: compare case-insensitively.
        case_insensitive: bool,
        /// The escape character, if any.
        escape: Option<char>,
    },
    /// `CAST(expr AS type)`; also inserted for implicit coercions.
    Cast {
        /// The value to convert.
        expr: Box<Expr>,
        /// The target type.
        to: DataType,
        /// `TRY_CAST`: a value that does not convert is NULL rather than
        /// an error.
        try_cast: bool,
    },
    /// `CASE WHEN c THEN v ... [ELSE e] END` (the operand form is rewritten
    /// to this one by the planner). All branches have the result type.
    Case {
        /// `(condition, value)` pairs, tried in order.
        when_then: Vec<(Expr, Expr)>,
        /// The value when no condition holds (NULL when absent).
        else_expr: Option<Box<Expr>>,
    },
    /// A scalar function call.
    Function {
        /// The function.
        func: ScalarFunction,
        /// Its arguments, already coerced to what the function takes.
        args: Vec<Expr>,
    },
}

/// The items of an IN list, with a slot for the evaluator's compiled form
/// of them (a hash set for a long list), built on first use and shared by
/// every clone of the expression, so once per query.
#[derive(Clone, Default)]
pub struct InItems {
    items: Vec<ScalarValue>,
    compiled: Arc<OnceLock<Arc<dyn Any + Send + Sync>>>,
}

impl InItems {
    /// The evaluator's compiled form of the items, built by `build` on
    /// first use.
    pub fn compiled(
        &self,
        build: impl FnOnce(&[ScalarValue]) -> Arc<dyn Any + Send + Sync>,
    ) -> &Arc<dyn Any + Send + Sync> {
        self.compiled.get_or_init(|| build(&self.items))
    }
}

impl From<Vec<ScalarValue>> for InItems {
    fn from(items: Vec<ScalarValue>) -> Self {
        Self {
            items,
            compiled: Arc::default(),
        }
    }
}

impl Deref for InItems {
    type Target = [ScalarValue];
    fn deref(&self) -> &[ScalarValue] {
        &self.items
    }
}

impl PartialEq for InItems {
    fn eq(&self, other: &Self) -> bool {
        self.items == other.items
    }
}

impl fmt::Debug for InItems {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.items.fmt(f)
    }
}

/// True for the casts that succeed on every value: widening numbers, DATE
/// to TIMESTAMP, anything to VARCHAR, and from NULL.
fn cast_cannot_fail(from: &DataType, to: &DataType) -> bool {
    use DataType::*;
    matches!(
        (from, to),
        (Int32, Int64)
            | (Int32, Float64)
            | (Int64, Float64)
            | (Date32, Timestamp(..))
            | (_, Utf8)
            | (Null, _)
    )
}

/// A reference to a field of the input schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnRef {
    /// Index of the field in the input schema.
    pub index: usize,
    /// The field's name, for display.
    pub name: String,
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `=`
    Eq,
    /// `<>` or `!=`
    NotEq,
    /// `<`
    Lt,
    /// `<=`
    LtEq,
    /// `>`
    Gt,
    /// `>=`
    GtEq,
    /// `AND`, three-valued: `FALSE AND NULL` is FALSE.
    And,
    /// `OR`, three-valued: `TRUE OR NULL` is TRUE.
    Or,
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Multiply,
    /// `/` (integer division for integers; division by zero is an error)
    Divide,
    /// `%`
    Modulo,
    /// `||` string concatenation
    Concat,
}

impl BinaryOp {
    /// True for `= <> < <= > >=`.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            Self::Eq | Self::NotEq | Self::Lt | Self::LtEq | Self::Gt | Self::GtEq
        )
    }

    /// True for `+ - * / %`.
    pub fn is_arithmetic(self) -> bool {
        matches!(
            self,
            Self::Plus | Self::Minus | Self::Multiply | Self::Divide | Self::Modulo
        )
    }

    /// The SQL spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Eq => "=",
            Self::NotEq => "<>",
            Self::Lt => "<",
            Self::LtEq => "<=",
            Self::Gt => ">",
            Self::GtEq => ">=",
            Self::And => "AND",
            Self::Or => "OR",
            Self::Plus => "+",
            Self::Minus => "-",
            Self::Multiply => "*",
            Self::Divide => "/",
            Self::Modulo => "%",
            Self::Concat => "||",
        }
    }
}

/// Scalar functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarFunction {
    /// `abs(x)`
    Abs,
    /// `round(x [, digits])`
    Round,
    /// `lower(s)`
    Lower,
    /// `upper(s)`
    Upper,
    /// `length(s)` in characters
    Length,
    /// `octet_length(b)`: bytes of a BLOB
    OctetLength,
    /// `substr(s, start [, len])`, 1-based
    Substr,
    /// `coalesce(a, b, ...)`
    Coalesce,
    /// `date_part(field, d)` and `EXTRACT(field FROM d)`; the first
    /// argument is a VARCHAR literal naming the field (year, month, day,
    /// hour, minute, second, dow, doy, quarter, week, epoch).
    DatePart,
    /// `greatest(a, b, ...)`: the largest argument, NULLs skipped
    Greatest,
    /// `least(a, b, ...)`: the smallest argument, NULLs skipped
    Least,
    /// `concat(a, ...)`: concatenation, NULLs skipped
    Concat,
    /// `concat_ws(sep, a, ...)`: concatenation with a separator, NULLs skipped
    ConcatWs,
    /// `strpos(s, sub)`: 1-based position of sub in s, 0 if absent
    Strpos,
    /// `replace(s, from, to)`: every from replaced by to
    Replace,
    /// `trim(s [, chars])`: chars (default spaces) removed from both ends
    Trim,
    /// `ltrim(s [, chars])`: chars removed from the start
    Ltrim,
    /// `rtrim(s [, chars])`: chars removed from the end
    Rtrim,
    /// `left(s, n)`: the first n characters (all but the last -n if negative)
    Left,
    /// `right(s, n)`: the last n characters (all but the first -n if negative)
    Right,
    /// `lpad(s, n, pad)`: s padded on the left (or cut) to n characters
    Lpad,
    /// `rpad(s, n, pad)`: s padded on the right (or cut) to n characters
    Rpad,
    /// `reverse(s)`: the characters in reverse order
    Reverse,
    /// `repeat(s, n)`: s repeated n times
    Repeat,
    /// `starts_with(s, prefix)`: true if s starts with prefix
    StartsWith,
    /// `ends_with(s, suffix)`: true if s ends with suffix
    EndsWith,
    /// `contains(s, sub)`: true if s contains sub
    Contains,
    /// `floor(x)`: largest integer not above x
    Floor,
    /// `ceil(x)`: smallest integer not below x
    Ceil,
    /// `trunc(x)`: x with its fraction dropped
    Trunc,
    /// `sign(x)`: -1, 0 or 1
    Sign,
    /// `sqrt(x)`: square root
    Sqrt,
    /// `pow(x, y)`: x to the power y
    Power,
    /// `exp(x)`: e to the power x
    Exp,
    /// `ln(x)`: natural logarithm
    Ln,
    /// `log10(x)`: base-10 logarithm (also log(x))
    Log10,
    /// `log(x)`: base-10 logarithm; `log(b, x)`: base-b logarithm
    Log,
    /// `log2(x)`: base-2 logarithm
    Log2,
    /// `date_trunc(part, t)`: the TIMESTAMP `t` truncated to `part` (a
    /// VARCHAR literal: year, quarter, month, week, day, hour, minute,
    /// second, millisecond, microsecond)
    DateTrunc,
    /// `regexp_matches(s, pattern [, options])`: true if the pattern matches somewhere in s
    RegexpMatches,
    /// `regexp_full_match(s, pattern [, options])`: true if the pattern matches all of s
    RegexpFullMatch,
    /// `like_escape(s, pattern, escape)`: `s LIKE pattern ESCAPE escape`
    /// (`''`: no escape character); what a LIKE whose pattern is not a
    /// constant binds to
    LikeEscape,
    /// `ilike_escape(s, pattern, escape)`: the same, ignoring case
    IlikeEscape,
    /// `s GLOB pattern`: the whole string matches the shell pattern (`*`,
    /// `?`, `[a-z]`, `[!a]`, `\` escaping); the operator's function, not
    /// callable by name (DuckDB's `glob` is a table function)
    Glob,
    /// `regexp_extract(s, pattern [, group])`: the match (or a group of it), '' if none
    RegexpExtract,
    /// `regexp_replace(s, pattern, replacement [, options])`: the first match (every one with 'g') replaced
    RegexpReplace,
    /// `printf(format, ...)`: C-style formatting
    Printf,
    /// `format(format, ...)`: `{}`-style formatting
    Format,
    /// `md5(s)`: the MD5 digest as 32 hex digits
    Md5,
    /// `levenshtein(a, b)`: the edit distance in bytes, as DuckDB
    Levenshtein,
    /// `split_part(s, sep, n)`: the n-th field (1-based; negative from the end)
    SplitPart,
    /// `ascii(s)`: the code point of the first character
    Ascii,
    /// `chr(n)`: the character of code point n
    Chr,
    /// `translate(s, from, to)`: each character of from replaced by the one at its place in to (dropped if none)
    Translate,
    /// `gcd(a, b)`: the greatest common divisor
    Gcd,
    /// `lcm(a, b)`: the least common multiple
    Lcm,
    /// `random()`: a pseudo-random DOUBLE in [0, 1), a new one per row
    Random,
    /// `setseed(x)`: seeds random() with x in [-1, 1]; returns NULL
    SetSeed,
    /// `pi()`
    Pi,
    /// `sin(x)`
    Sin,
    /// `cos(x)`
    Cos,
    /// `tan(x)`
    Tan,
    /// `cot(x)`
    Cot,
    /// `asin(x)` (NaN outside [-1, 1])
    Asin,
    /// `acos(x)` (NaN outside [-1, 1])
    Acos,
    /// `atan(x)`
    Atan,
    /// `atan2(y, x)`
    Atan2,
    /// `degrees(x)`: radians to degrees
    Degrees,
    /// `radians(x)`: degrees to radians
    Radians,
    /// `cbrt(x)`: cube root
    Cbrt,
    /// `isnan(x)`
    IsNan,
    /// `isinf(x)`
    IsInf,
    /// `isfinite(x)`
    IsFinite,
    /// `date_diff(part, start, end)`: the number of part boundaries between two TIMESTAMPs (a VARCHAR literal part)
    DateDiff,
    /// `strftime(t, format)`: the TIMESTAMP t as text
    Strftime,
    /// `strptime(s, format)`: the text s read as a TIMESTAMP
    Strptime,
    /// `make_date(y, m, d)`
    MakeDate,
    /// `make_timestamp(y, m, d, h, min, sec)`
    MakeTimestamp,
    /// `now()`: the current time (UTC) as TIMESTAMP, the same for the whole statement
    Now,
    /// `current_date`: today's date (UTC)
    Today,
    /// `epoch_ms(ms)`: the TIMESTAMP ms milliseconds after 1970-01-01; `epoch_ms(t)`: the milliseconds of TIMESTAMP t
    EpochMs,
    /// `last_day(d)`: the last day of d's month
    LastDay,
    /// `dayname(d)`: the English name of d's weekday
    DayName,
    /// `monthname(d)`: the English name of d's month
    MonthName,
    /// `error(message)`: raises an Invalid Input Error with the message
    /// on any row it is evaluated for (typed NULL, as DuckDB's)
    Error,
}

impl ScalarFunction {
    /// True if the function itself can raise an error (overflow, a bad
    /// date field), whatever its arguments.
    pub fn can_fail(self) -> bool {
        matches!(
            self,
            Self::Abs
                | Self::Round
                | Self::Substr
                | Self::DatePart
                | Self::RegexpMatches
                | Self::RegexpFullMatch
                | Self::LikeEscape
                | Self::IlikeEscape
                | Self::Glob
                | Self::RegexpExtract
                | Self::RegexpReplace
                | Self::Printf
                | Self::Format
                | Self::SplitPart
                | Self::Chr
                | Self::Lcm
                | Self::Gcd
                | Self::SetSeed
                | Self::DateDiff
                | Self::Strftime
                | Self::Strptime
                | Self::MakeDate
                | Self::MakeTimestamp
                | Self::EpochMs
                | Self::Error
        )
    }

    /// True if the function gives a new value at each call (`random()`):
    /// it is never folded to a constant.
    pub fn is_volatile(self) -> bool {
        matches!(self, Self::Random | Self::SetSeed)
    }

    /// The SQL name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Abs => "abs",
            Self::Round => "round",
            Self::Lower => "lower",
            Self::Upper => "upper",
            Self::Length => "length",
            Self::OctetLength => "octet_length",
            Self::Substr => "substr",
            Self::Coalesce => "coalesce",
            Self::DatePart => "date_part",
            Self::Greatest => "greatest",
            Self::Least => "least",
            Self::Concat => "concat",
            Self::ConcatWs => "concat_ws",
            Self::Strpos => "strpos",
            Self::Replace => "replace",
            Self::Trim => "trim",
            Self::Ltrim => "ltrim",
            Self::Rtrim => "rtrim",
            Self::Left => "left",
            Self::Right => "right",
            Self::Lpad => "lpad",
            Self::Rpad => "rpad",
            Self::Reverse => "reverse",
            Self::Repeat => "repeat",
            Self::StartsWith => "starts_with",
            Self::EndsWith => "ends_with",
            Self::Contains => "contains",
            Self::Floor => "floor",
            Self::Ceil => "ceil",
            Self::Trunc => "trunc",
            Self::Sign => "sign",
            Self::Sqrt => "sqrt",
            Self::Power => "pow",
            Self::Exp => "exp",
            Self::Ln => "ln",
            Self::Log10 => "log10",
            Self::Log => "log",
            Self::Log2 => "log2",
            Self::DateTrunc => "date_trunc",
            Self::RegexpMatches => "regexp_matches",
            Self::RegexpFullMatch => "regexp_full_match",
            Self::LikeEscape => "like_escape",
            Self::IlikeEscape => "ilike_escape",
            Self::Glob => "glob",
            Self::RegexpExtract => "regexp_extract",
            Self::RegexpReplace => "regexp_replace",
            Self::Printf => "printf",
            Self::Format => "format",
            Self::Md5 => "md5",
            Self::Levenshtein => "levenshtein",
            Self::SplitPart => "split_part",
            Self::Ascii => "ascii",
            Self::Chr => "chr",
            Self::Translate => "translate",
            Self::Gcd => "gcd",
            Self::Lcm => "lcm",
            Self::Random => "random",
            Self::SetSeed => "setseed",
            Self::Pi => "pi",
            Self::Sin => "sin",
            Self::Cos => "cos",
            Self::Tan => "tan",
            Self::Cot => "cot",
            Self::Asin => "asin",
            Self::Acos => "acos",
            Self::Atan => "atan",
            Self::Atan2 => "atan2",
            Self::Degrees => "degrees",
            Self::Radians => "radians",
            Self::Cbrt => "cbrt",
            Self::IsNan => "isnan",
            Self::IsInf => "isinf",
            Self::IsFinite => "isfinite",
            Self::DateDiff => "date_diff",
            Self::Strftime => "strftime",
            Self::Strptime => "strptime",
            Self::MakeDate => "make_date",
            Self::MakeTimestamp => "make_timestamp",
            Self::Now => "now",
            Self::Today => "current_date",
            Self::EpochMs => "epoch_ms",
            Self::LastDay => "last_day",
            Self::DayName => "dayname",
            Self::MonthName => "monthname",
            Self::Error => "error",
        }
    }
}

impl Expr {
    /// A column reference.
    pub fn column(index: usize, name: impl Into<String>) -> Self {
        Self::Column(ColumnRef {
            index,
            name: name.into(),
        })
    }

    /// A binary expression.
    pub fn binary(left: Expr, op: BinaryOp, right: Expr) -> Self {
        Self::Binary {
            op,
            left: Box::new(left),
            right: Box::new(right),
        }
    }

    /// True if the expression calls a volatile function (`random()`),
    /// which must not be folded to a constant.
    pub fn is_volatile(&self) -> bool {
        let mut volatile = false;
        self.visit(&mut |e| {
            if let Expr::Function { func, .. } = e {
                volatile |= func.is_volatile();
            }
        });
        volatile
    }

    /// Indices of the input columns this expression reads, sorted, without
    /// duplicates.
    pub fn columns(&self) -> Vec<usize> {
        let mut out = Vec::new();
        self.visit(&mut |e| {
            if let Expr::Column(c) = e {
                out.push(c.index);
            }
        });
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Calls `f` on this expression and every sub-expression, parents first.
    pub fn visit(&self, f: &mut impl FnMut(&Expr)) {
        f(self);
        self.for_each_child(|child| child.visit(f));
    }

    /// Calls `f` on each direct child, in order (the one place that knows
    /// which variants have children; walks build on it).
    pub fn for_each_child<'a>(&'a self, mut f: impl FnMut(&'a Expr)) {
        match self {
            Expr::Column(_) | Expr::Literal(_) => {}
            Expr::Binary { left, right, .. } => {
                f(left);
                f(right);
            }
            Expr::Not(e)
            | Expr::Negative(e)
            | Expr::IsNull(e)
            | Expr::IsNotNull(e)
            | Expr::InList { expr: e, .. }
            | Expr::Like { expr: e, .. }
            | Expr::Cast { expr: e, .. } => f(e),
            Expr::Case {
                when_then,
                else_expr,
            } => {
                for (w, t) in when_then {
                    f(w);
                    f(t);
                }
                if let Some(e) = else_expr {
                    f(e);
                }
            }
            Expr::Function { args, .. } => args.iter().for_each(f),
        }
    }

    /// Rebuilds this expression with `f` applied to each direct child (a
    /// bottom-up rewrite calls it recursively from `f`). Leaves come back
    /// unchanged.
    pub fn try_map_children<E>(
        self,
        f: &mut impl FnMut(Expr) -> Result<Expr, E>,
    ) -> Result<Expr, E> {
        let e = self;
        let mut b = |x: Box<Expr>| f(*x).map(Box::new);
        Ok(match e {
            Expr::Column(_) | Expr::Literal(_) => e,
            Expr::Binary { op, left, right } => Expr::Binary {
                op,
                left: b(left)?,
                right: b(right)?,
            },
            Expr::Not(x) => Expr::Not(b(x)?),
            Expr::Negative(x) => Expr::Negative(b(x)?),
            Expr::IsNull(x) => Expr::IsNull(b(x)?),
            Expr::IsNotNull(x) => Expr::IsNotNull(b(x)?),
            Expr::InList {
                expr,
                list,
                negated,
            } => Expr::InList {
                expr: b(expr)?,
                list,
                negated,
            },
            Expr::Like {
                expr,
                pattern,
                negated,
                case_insensitive,
                escape,
            } => Expr::Like {
                expr: b(expr)?,
                pattern,
                negated,
                case_insensitive,
                escape,
            },
            Expr::Cast { expr, to, try_cast } => Expr::Cast {
                expr: b(expr)?,
                to,
                try_cast,
            },
            Expr::Case {
                when_then,
                else_expr,
            } => Expr::Case {
                when_then: when_then
                    .into_iter()
                    .map(|(w, t)| Ok((f(w)?, f(t)?)))
                    .collect::<Result<_, E>>()?,
                else_expr: else_expr.map(|x| f(*x).map(Box::new)).transpose()?,
            },
            Expr::Function { func, args } => Expr::Function {
                func,
                args: args.into_iter().map(&mut *f).collect::<Result<_, E>>()?,
            },
        })
    }

    /// True if evaluating this expression over `input` could raise an
    /// error on some row: integer and decimal arithmetic (overflow),
    /// division and modulo, negation of an integer, a cast that can fail,
    /// a LIKE with an escape, a fallible function. The one rule the
    /// planner (folding `x AND FALSE` must not hide an error), the
    /// evaluator (fallible terms run only on the rows that need them) and
    /// the pipeline's step ordering (fallible terms last) follow.
    pub fn can_fail(&self, input: &Schema) -> bool {
        let mut r = false;
        self.visit(&mut |e| {
            r |= match e {
                Expr::Binary { op, left, .. } if op.is_arithmetic() => {
                    matches!(op, BinaryOp::Divide | BinaryOp::Modulo)
                        || !left.data_type(input).is_floating()
                }
                Expr::Negative(x) => !x.data_type(input).is_floating(),
                Expr::Cast { expr, to, try_cast } => {
                    let from = expr.data_type(input);
                    !try_cast && &from != to && !cast_cannot_fail(&from, to)
                }
                Expr::Like { escape, .. } => escape.is_some(),
                Expr::Function { func, .. } => func.can_fail(),
                _ => false,
            }
        });
        r
    }

    /// Splits a predicate into its top-level `AND` terms.
    pub fn conjuncts(&self) -> Vec<&Expr> {
        let mut out = Vec::new();
        fn walk<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
            match e {
                Expr::Binary {
                    op: BinaryOp::And,
                    left,
                    right,
                } => {
                    walk(left, out);
                    walk(right, out);
                }
                other => out.push(other),
            }
        }
        walk(self, &mut out);
        out
    }

    /// The result type of this expression over `input`.
    ///
    /// Only meaningful for planner output, whose types were checked.
    pub fn data_type(&self, input: &Schema) -> DataType {
        match self {
            Expr::Column(c) => input.field(c.index).data_type().clone(),
            Expr::Literal(v) => v.data_type(),
            Expr::Binary { op, left, right } => {
                if op.is_comparison() || matches!(op, BinaryOp::And | BinaryOp::Or) {
                    DataType::Boolean
                } else if *op == BinaryOp::Concat {
                    DataType::Utf8
                } else {
                    crate::types::arithmetic_result_type(
                        *op,
                        &left.data_type(input),
                        &right.data_type(input),
                    )
                    .unwrap_or(DataType::Null)
                }
            }
            Expr::Not(_)
            | Expr::IsNull(_)
            | Expr::IsNotNull(_)
            | Expr::InList { .. }
            | Expr::Like { .. } => DataType::Boolean,
            Expr::Negative(e) => e.data_type(input),
            Expr::Cast { to, .. } => to.clone(),
            Expr::Case {
                when_then,
                else_expr,
            } => when_then
                .first()
                .map(|(_, t)| t.data_type(input))
                .or_else(|| else_expr.as_ref().map(|e| e.data_type(input)))
                .unwrap_or(DataType::Null),
            Expr::Function { func, args } => crate::types::function_result_type(*func, args, input),
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Column(c) => write!(f, "{}", c.name),
            Expr::Literal(v) => write!(f, "{v}"),
            Expr::Binary { op, left, right } => write!(f, "({left} {} {right})", op.as_str()),
            Expr::Not(e) => write!(f, "NOT {e}"),
            Expr::Negative(e) => match e.as_ref() {
                // never `--`, which would read as a comment
                Expr::Literal(_) | Expr::Negative(_) => write!(f, "-({e})"),
                e => write!(f, "-{e}"),
            },
            Expr::IsNull(e) => write!(f, "{e} IS NULL"),
            Expr::IsNotNull(e) => write!(f, "{e} IS NOT NULL"),
            Expr::InList {
                expr,
                list,
                negated,
            } => {
                // a long list shows its first items and a count (EXPLAIN)
                const SHOWN: usize = 10;
                let mut items: Vec<String> =
                    list.iter().take(SHOWN).map(|v| v.to_string()).collect();
                if list.len() > SHOWN {
                    items.push(format!("... {} more", list.len() - SHOWN));
                }
                let not = if *negated { "NOT " } else { "" };
                write!(f, "{expr} {not}IN ({})", items.join(", "))
            }
            Expr::Like {
                expr,
                pattern,
                negated,
                case_insensitive,
                ..
            } => {
                let not = if *negated { "NOT " } else { "" };
                let like = if *case_insensitive { "ILIKE" } else { "LIKE" };
                write!(f, "{expr} {not}{like} '{}'", pattern.replace('\'', "''"))
            }
            Expr::Cast { expr, to, try_cast } => {
                let cast = if *try_cast { "TRY_CAST" } else { "CAST" };
                write!(f, "{cast}({expr} AS {})", crate::types::sql_type_name(to))
            }
            Expr::Case {
                when_then,
                else_expr,
            } => {
                write!(f, "CASE")?;
                for (w, t) in when_then {
                    write!(f, " WHEN {w} THEN {t}")?;
                }
                if let Some(e) = else_expr {
                    write!(f, " ELSE {e}")?;
                }
                write!(f, " END")
            }
            Expr::Function { func, args } => {
                let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
                write!(f, "{}({})", func.name(), args.join(", "))
            }
        }
    }
}
