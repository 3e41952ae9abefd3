//! The function registry: every function Weir knows, with its signature,
//! in one table. The binder resolves names through it, "did you mean"
//! hints come from it, and `SELECT * FROM weir_functions()` lists it.

use crate::expr::ScalarFunction;
use crate::plan::AggregateFunction;

/// What a function is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FunctionKind {
    /// A scalar function, computed per row.
    Scalar(ScalarFunction),
    /// An aggregate function.
    Aggregate(AggregateFunction),
    /// A table function, used in FROM.
    Table,
    /// `extract(field FROM x)` and `date_part(field, x)`: a scalar
    /// function whose first argument names a field.
    DatePart,
    /// `nullif(a, b)`: bound as `CASE WHEN a = b THEN NULL ELSE a END`.
    NullIf,
    /// `typeof(x)`: bound to the constant name of the type of `x`.
    TypeOf,
    /// `count_if(c)`: bound as `sum(CAST(c AS INTEGER))`.
    CountIf,
    /// `approx_count_distinct(x)`: bound as `count(DISTINCT x)`, the
    /// exact count (DuckDB estimates it with a HyperLogLog).
    ApproxCountDistinct,
    /// `bool_and(b)`: bound as `min(b)` over BOOLEAN.
    BoolAnd,
    /// `bool_or(b)`: bound as `max(b)` over BOOLEAN.
    BoolOr,
    /// `current_setting('name')`: the setting's value, as a constant.
    CurrentSetting,
    /// `year(x)`, `month(x)`, ...: bound as `date_part('<field>', x)`.
    DateField(&'static str),
    /// `if(c, a, b)`: bound as `CASE WHEN c THEN a ELSE b END`.
    If,
    /// `ifnull(a, b)`: bound as `coalesce(a, b)`.
    IfNull,
    /// `mod(a, b)`: bound as `a % b`.
    Mod,
    /// `date_add(t, interval)`: bound as `t + interval`.
    DateAdd,
}

impl FunctionKind {
    /// `scalar`, `aggregate` or `table`, as `weir_functions()` shows it.
    pub fn label(self) -> &'static str {
        match self {
            Self::Scalar(_)
            | Self::DatePart
            | Self::NullIf
            | Self::TypeOf
            | Self::CurrentSetting
            | Self::DateField(_)
            | Self::If
            | Self::IfNull
            | Self::Mod
            | Self::DateAdd => "scalar",
            Self::Aggregate(_)
            | Self::CountIf
            | Self::ApproxCountDistinct
            | Self::BoolAnd
            | Self::BoolOr => "aggregate",
            Self::Table => "table",
        }
    }
}

/// One entry of the registry.
#[derive(Clone, Copy, Debug)]
pub struct FunctionDef {
    /// The name (lower case); an alias has an entry of its own.
    pub name: &'static str,
    /// What it is.
    pub kind: FunctionKind,
    /// Its arguments and result, e.g. `strpos(VARCHAR, VARCHAR) -> BIGINT`.
    pub signature: &'static str,
    /// One line on what it computes.
    pub description: &'static str,
}

const fn scalar(
    name: &'static str,
    f: ScalarFunction,
    signature: &'static str,
    description: &'static str,
) -> FunctionDef {
    FunctionDef {
        name,
        kind: FunctionKind::Scalar(f),
        signature,
        description,
    }
}

const fn aggregate(
    name: &'static str,
    f: AggregateFunction,
    signature: &'static str,
    description: &'static str,
) -> FunctionDef {
    FunctionDef {
        name,
        kind: FunctionKind::Aggregate(f),
        signature,
        description,
    }
}

const fn table(
    name: &'static str,
    signature: &'static str,
    description: &'static str,
) -> FunctionDef {
    FunctionDef {
        name,
        kind: FunctionKind::Table,
        signature,
        description,
    }
}

use AggregateFunction as A;
use ScalarFunction as S;

/// Every function, by name.
pub const FUNCTIONS: &[FunctionDef] = &[
    scalar("abs", S::Abs, "abs(NUMERIC) -> NUMERIC", "absolute value"),
    scalar(
        "round",
        S::Round,
        "round(NUMERIC [, INTEGER]) -> NUMERIC",
        "rounded half away from zero to a number of decimal digits",
    ),
    scalar("lower", S::Lower, "lower(VARCHAR) -> VARCHAR", "lower case"),
    scalar(
        "lcase",
        S::Lower,
        "lcase(VARCHAR) -> VARCHAR",
        "alias of lower",
    ),
    scalar("upper", S::Upper, "upper(VARCHAR) -> VARCHAR", "upper case"),
    scalar(
        "ucase",
        S::Upper,
        "ucase(VARCHAR) -> VARCHAR",
        "alias of upper",
    ),
    scalar(
        "length",
        S::Length,
        "length(VARCHAR) -> BIGINT",
        "number of characters",
    ),
    scalar(
        "len",
        S::Length,
        "len(VARCHAR) -> BIGINT",
        "alias of length",
    ),
    scalar(
        "char_length",
        S::Length,
        "char_length(VARCHAR) -> BIGINT",
        "alias of length",
    ),
    scalar(
        "character_length",
        S::Length,
        "character_length(VARCHAR) -> BIGINT",
        "alias of length",
    ),
    scalar(
        "octet_length",
        S::OctetLength,
        "octet_length(BLOB) -> BIGINT",
        "number of bytes",
    ),
    scalar(
        "substr",
        S::Substr,
        "substr(VARCHAR, BIGINT [, BIGINT]) -> VARCHAR",
        "characters from a 1-based start, optionally of a length",
    ),
    scalar(
        "substring",
        S::Substr,
        "substring(VARCHAR, BIGINT [, BIGINT]) -> VARCHAR",
        "alias of substr; also substring(s FROM a FOR b)",
    ),
    scalar(
        "coalesce",
        S::Coalesce,
        "coalesce(ANY, ...) -> ANY",
        "the first non-NULL argument",
    ),
    FunctionDef {
        name: "date_part",
        kind: FunctionKind::DatePart,
        signature: "date_part(VARCHAR, DATE|TIMESTAMP) -> BIGINT",
        description: "a field (year, month, day, hour, minute, second, dow, doy, quarter, week; epoch as DOUBLE)",
    },
    FunctionDef {
        name: "datepart",
        kind: FunctionKind::DatePart,
        signature: "datepart(VARCHAR, DATE|TIMESTAMP) -> BIGINT",
        description: "alias of date_part",
    },
    FunctionDef {
        name: "extract",
        kind: FunctionKind::DatePart,
        signature: "extract(field FROM DATE|TIMESTAMP) -> BIGINT",
        description: "a field of a date, as date_part",
    },
    scalar(
        "date_trunc",
        S::DateTrunc,
        "date_trunc(VARCHAR, DATE|TIMESTAMP) -> TIMESTAMP",
        "truncated to year, quarter, month, week, day, hour, minute, second, millisecond or microsecond",
    ),
    scalar(
        "greatest",
        S::Greatest,
        "greatest(ANY, ...) -> ANY",
        "the largest argument, NULLs skipped",
    ),
    scalar(
        "least",
        S::Least,
        "least(ANY, ...) -> ANY",
        "the smallest argument, NULLs skipped",
    ),
    FunctionDef {
        name: "nullif",
        kind: FunctionKind::NullIf,
        signature: "nullif(ANY, ANY) -> ANY",
        description: "NULL if both arguments are equal, else the first",
    },
    FunctionDef {
        name: "typeof",
        kind: FunctionKind::TypeOf,
        signature: "typeof(ANY) -> VARCHAR",
        description: "the SQL type of the argument",
    },
    scalar(
        "concat",
        S::Concat,
        "concat(ANY, ...) -> VARCHAR",
        "concatenation, NULLs skipped",
    ),
    scalar(
        "concat_ws",
        S::ConcatWs,
        "concat_ws(VARCHAR, ANY, ...) -> VARCHAR",
        "concatenation with a separator, NULLs skipped",
    ),
    scalar(
        "strpos",
        S::Strpos,
        "strpos(VARCHAR, VARCHAR) -> BIGINT",
        "1-based position of the second string in the first, 0 if absent",
    ),
    scalar(
        "instr",
        S::Strpos,
        "instr(VARCHAR, VARCHAR) -> BIGINT",
        "alias of strpos",
    ),
    scalar(
        "replace",
        S::Replace,
        "replace(VARCHAR, VARCHAR, VARCHAR) -> VARCHAR",
        "every occurrence of the second string replaced by the third",
    ),
    scalar(
        "trim",
        S::Trim,
        "trim(VARCHAR [, VARCHAR]) -> VARCHAR",
        "characters (default spaces) removed from both ends",
    ),
    scalar(
        "ltrim",
        S::Ltrim,
        "ltrim(VARCHAR [, VARCHAR]) -> VARCHAR",
        "characters removed from the start",
    ),
    scalar(
        "rtrim",
        S::Rtrim,
        "rtrim(VARCHAR [, VARCHAR]) -> VARCHAR",
        "characters removed from the end",
    ),
    scalar(
        "left",
        S::Left,
        "left(VARCHAR, BIGINT) -> VARCHAR",
        "the first n characters",
    ),
    scalar(
        "right",
        S::Right,
        "right(VARCHAR, BIGINT) -> VARCHAR",
        "the last n characters",
    ),
    scalar(
        "lpad",
        S::Lpad,
        "lpad(VARCHAR, BIGINT, VARCHAR) -> VARCHAR",
        "padded on the left, or cut, to n characters",
    ),
    scalar(
        "rpad",
        S::Rpad,
        "rpad(VARCHAR, BIGINT, VARCHAR) -> VARCHAR",
        "padded on the right, or cut, to n characters",
    ),
    scalar(
        "reverse",
        S::Reverse,
        "reverse(VARCHAR) -> VARCHAR",
        "the characters in reverse order",
    ),
    scalar(
        "repeat",
        S::Repeat,
        "repeat(VARCHAR, BIGINT) -> VARCHAR",
        "the string repeated n times",
    ),
    scalar(
        "starts_with",
        S::StartsWith,
        "starts_with(VARCHAR, VARCHAR) -> BOOLEAN",
        "true if the first string starts with the second",
    ),
    scalar(
        "ends_with",
        S::EndsWith,
        "ends_with(VARCHAR, VARCHAR) -> BOOLEAN",
        "true if the first string ends with the second",
    ),
    scalar(
        "suffix",
        S::EndsWith,
        "suffix(VARCHAR, VARCHAR) -> BOOLEAN",
        "alias of ends_with",
    ),
    scalar(
        "prefix",
        S::StartsWith,
        "prefix(VARCHAR, VARCHAR) -> BOOLEAN",
        "alias of starts_with",
    ),
    scalar(
        "contains",
        S::Contains,
        "contains(VARCHAR, VARCHAR) -> BOOLEAN",
        "true if the first string contains the second",
    ),
    scalar(
        "floor",
        S::Floor,
        "floor(NUMERIC) -> NUMERIC",
        "largest integer not above x (DOUBLE for integers, as DuckDB)",
    ),
    scalar(
        "ceil",
        S::Ceil,
        "ceil(NUMERIC) -> NUMERIC",
        "smallest integer not below x",
    ),
    scalar(
        "ceiling",
        S::Ceil,
        "ceiling(NUMERIC) -> NUMERIC",
        "alias of ceil",
    ),
    scalar(
        "trunc",
        S::Trunc,
        "trunc(NUMERIC) -> NUMERIC",
        "x with its fraction dropped",
    ),
    scalar("sign", S::Sign, "sign(NUMERIC) -> INTEGER", "-1, 0 or 1"),
    scalar(
        "sqrt",
        S::Sqrt,
        "sqrt(DOUBLE) -> DOUBLE",
        "square root (NaN below zero)",
    ),
    scalar(
        "pow",
        S::Power,
        "pow(DOUBLE, DOUBLE) -> DOUBLE",
        "x to the power y",
    ),
    scalar(
        "power",
        S::Power,
        "power(DOUBLE, DOUBLE) -> DOUBLE",
        "alias of pow",
    ),
    scalar("exp", S::Exp, "exp(DOUBLE) -> DOUBLE", "e to the power x"),
    scalar(
        "ln",
        S::Ln,
        "ln(DOUBLE) -> DOUBLE",
        "natural logarithm (-inf at 0, NaN below)",
    ),
    scalar(
        "log",
        S::Log,
        "log([DOUBLE,] DOUBLE) -> DOUBLE",
        "base-10 logarithm; log(b, x): base-b logarithm",
    ),
    scalar(
        "log10",
        S::Log10,
        "log10(DOUBLE) -> DOUBLE",
        "base-10 logarithm",
    ),
    scalar(
        "log2",
        S::Log2,
        "log2(DOUBLE) -> DOUBLE",
        "base-2 logarithm",
    ),
    scalar(
        "regexp_matches",
        S::RegexpMatches,
        "regexp_matches(VARCHAR, VARCHAR [, VARCHAR]) -> BOOLEAN",
        "true if the regular expression matches somewhere in the string (options: i, c, s, m/n/p)",
    ),
    scalar(
        "regexp_full_match",
        S::RegexpFullMatch,
        "regexp_full_match(VARCHAR, VARCHAR [, VARCHAR]) -> BOOLEAN",
        "true if the regular expression matches the whole string",
    ),
    scalar(
        "like_escape",
        S::LikeEscape,
        "like_escape(VARCHAR, VARCHAR, VARCHAR) -> BOOLEAN",
        "s LIKE pattern ESCAPE escape ('' for none)",
    ),
    scalar(
        "ilike_escape",
        S::IlikeEscape,
        "ilike_escape(VARCHAR, VARCHAR, VARCHAR) -> BOOLEAN",
        "s ILIKE pattern ESCAPE escape ('' for none)",
    ),
    scalar(
        "regexp_extract",
        S::RegexpExtract,
        "regexp_extract(VARCHAR, VARCHAR [, INTEGER]) -> VARCHAR",
        "the first match, or its group n (a constant), '' if none",
    ),
    scalar(
        "regexp_replace",
        S::RegexpReplace,
        "regexp_replace(VARCHAR, VARCHAR, VARCHAR [, VARCHAR]) -> VARCHAR",
        "the first match (every match with option 'g') replaced; \\1 names a group",
    ),
    scalar(
        "printf",
        S::Printf,
        "printf(VARCHAR, ANY, ...) -> VARCHAR",
        "C-style formatting: %s %d %i %f %e %g %x %X %o %c %%, flags - 0 + space, width, precision",
    ),
    scalar(
        "format",
        S::Format,
        "format(VARCHAR, ANY, ...) -> VARCHAR",
        "{}-style formatting: {} {0} {:.2f} {:>5} {:05d} {:x}",
    ),
    scalar(
        "md5",
        S::Md5,
        "md5(VARCHAR) -> VARCHAR",
        "the MD5 digest as 32 lower-case hex digits",
    ),
    scalar(
        "levenshtein",
        S::Levenshtein,
        "levenshtein(VARCHAR, VARCHAR) -> BIGINT",
        "the edit distance, in bytes (as DuckDB)",
    ),
    scalar(
        "editdist3",
        S::Levenshtein,
        "editdist3(VARCHAR, VARCHAR) -> BIGINT",
        "alias of levenshtein",
    ),
    scalar(
        "split_part",
        S::SplitPart,
        "split_part(VARCHAR, VARCHAR, BIGINT) -> VARCHAR",
        "the n-th field split by a separator ('' past the end; negative counts from the end)",
    ),
    scalar(
        "ascii",
        S::Ascii,
        "ascii(VARCHAR) -> INTEGER",
        "the code point of the first character",
    ),
    scalar(
        "chr",
        S::Chr,
        "chr(INTEGER) -> VARCHAR",
        "the character of a code point",
    ),
    scalar(
        "translate",
        S::Translate,
        "translate(VARCHAR, VARCHAR, VARCHAR) -> VARCHAR",
        "each character of the second string replaced by the one at its place in the third (removed if none)",
    ),
    scalar(
        "gcd",
        S::Gcd,
        "gcd(BIGINT, BIGINT) -> BIGINT",
        "greatest common divisor",
    ),
    scalar(
        "greatest_common_divisor",
        S::Gcd,
        "greatest_common_divisor(BIGINT, BIGINT) -> BIGINT",
        "alias of gcd",
    ),
    scalar(
        "lcm",
        S::Lcm,
        "lcm(BIGINT, BIGINT) -> BIGINT",
        "least common multiple",
    ),
    scalar(
        "least_common_multiple",
        S::Lcm,
        "least_common_multiple(BIGINT, BIGINT) -> BIGINT",
        "alias of lcm",
    ),
    scalar(
        "random",
        S::Random,
        "random() -> DOUBLE",
        "a pseudo-random number in [0, 1), a new one per row",
    ),
    scalar(
        "setseed",
        S::SetSeed,
        "setseed(DOUBLE) -> NULL",
        "seeds random() with a number in [-1, 1]",
    ),
    scalar("pi", S::Pi, "pi() -> DOUBLE", "3.14159..."),
    scalar(
        "error",
        S::Error,
        "error(VARCHAR) -> NULL",
        "raises an Invalid Input Error with the message",
    ),
    scalar("sin", S::Sin, "sin(DOUBLE) -> DOUBLE", "sine"),
    scalar("cos", S::Cos, "cos(DOUBLE) -> DOUBLE", "cosine"),
    scalar("tan", S::Tan, "tan(DOUBLE) -> DOUBLE", "tangent"),
    scalar("cot", S::Cot, "cot(DOUBLE) -> DOUBLE", "cotangent"),
    scalar(
        "asin",
        S::Asin,
        "asin(DOUBLE) -> DOUBLE",
        "arcsine (NaN outside [-1, 1])",
    ),
    scalar(
        "acos",
        S::Acos,
        "acos(DOUBLE) -> DOUBLE",
        "arccosine (NaN outside [-1, 1])",
    ),
    scalar("atan", S::Atan, "atan(DOUBLE) -> DOUBLE", "arctangent"),
    scalar(
        "atan2",
        S::Atan2,
        "atan2(DOUBLE, DOUBLE) -> DOUBLE",
        "arctangent of y / x, in the quadrant of (x, y)",
    ),
    scalar(
        "degrees",
        S::Degrees,
        "degrees(DOUBLE) -> DOUBLE",
        "radians to degrees",
    ),
    scalar(
        "radians",
        S::Radians,
        "radians(DOUBLE) -> DOUBLE",
        "degrees to radians",
    ),
    scalar("cbrt", S::Cbrt, "cbrt(DOUBLE) -> DOUBLE", "cube root"),
    scalar(
        "isnan",
        S::IsNan,
        "isnan(DOUBLE) -> BOOLEAN",
        "true for NaN",
    ),
    scalar(
        "isinf",
        S::IsInf,
        "isinf(DOUBLE) -> BOOLEAN",
        "true for infinity or -infinity",
    ),
    scalar(
        "isfinite",
        S::IsFinite,
        "isfinite(DOUBLE) -> BOOLEAN",
        "true unless NaN or infinite",
    ),
    scalar(
        "date_diff",
        S::DateDiff,
        "date_diff(VARCHAR, DATE|TIMESTAMP, DATE|TIMESTAMP) -> BIGINT",
        "the number of part boundaries (year, quarter, month, week, day, hour, minute, second, millisecond, microsecond) from the first to the second",
    ),
    scalar(
        "datediff",
        S::DateDiff,
        "datediff(VARCHAR, DATE|TIMESTAMP, DATE|TIMESTAMP) -> BIGINT",
        "alias of date_diff",
    ),
    scalar(
        "strftime",
        S::Strftime,
        "strftime(DATE|TIMESTAMP, VARCHAR) -> VARCHAR",
        "formatted with %Y %m %d %H %M %S %f %g %j %a %A %b %B %y %p %I %-d ...",
    ),
    scalar(
        "strptime",
        S::Strptime,
        "strptime(VARCHAR, VARCHAR) -> TIMESTAMP",
        "parsed with a strftime format (an error if it does not fit)",
    ),
    scalar(
        "make_date",
        S::MakeDate,
        "make_date(BIGINT, BIGINT, BIGINT) -> DATE",
        "the date of a year, month and day",
    ),
    scalar(
        "make_timestamp",
        S::MakeTimestamp,
        "make_timestamp(BIGINT, BIGINT, BIGINT, BIGINT, BIGINT, DOUBLE) -> TIMESTAMP",
        "the timestamp of a year, month, day, hour, minute and seconds",
    ),
    scalar(
        "now",
        S::Now,
        "now() -> TIMESTAMP",
        "the statement's start time (UTC; DuckDB gives TIMESTAMP WITH TIME ZONE)",
    ),
    scalar(
        "current_timestamp",
        S::Now,
        "current_timestamp -> TIMESTAMP",
        "alias of now",
    ),
    scalar(
        "get_current_timestamp",
        S::Now,
        "get_current_timestamp() -> TIMESTAMP",
        "alias of now",
    ),
    scalar(
        "transaction_timestamp",
        S::Now,
        "transaction_timestamp() -> TIMESTAMP",
        "alias of now",
    ),
    scalar(
        "current_date",
        S::Today,
        "current_date -> DATE",
        "the statement's start date (UTC)",
    ),
    scalar(
        "today",
        S::Today,
        "today() -> DATE",
        "alias of current_date",
    ),
    scalar(
        "epoch_ms",
        S::EpochMs,
        "epoch_ms(BIGINT) -> TIMESTAMP; epoch_ms(TIMESTAMP) -> BIGINT",
        "milliseconds since 1970-01-01 to TIMESTAMP, or back",
    ),
    scalar(
        "last_day",
        S::LastDay,
        "last_day(DATE|TIMESTAMP) -> DATE",
        "the last day of the month",
    ),
    scalar(
        "dayname",
        S::DayName,
        "dayname(DATE|TIMESTAMP) -> VARCHAR",
        "the English name of the weekday",
    ),
    scalar(
        "monthname",
        S::MonthName,
        "monthname(DATE|TIMESTAMP) -> VARCHAR",
        "the English name of the month",
    ),
    FunctionDef {
        name: "year",
        kind: FunctionKind::DateField("year"),
        signature: "year(DATE|TIMESTAMP) -> BIGINT",
        description: "date_part('year', x)",
    },
    FunctionDef {
        name: "month",
        kind: FunctionKind::DateField("month"),
        signature: "month(DATE|TIMESTAMP) -> BIGINT",
        description: "date_part('month', x)",
    },
    FunctionDef {
        name: "day",
        kind: FunctionKind::DateField("day"),
        signature: "day(DATE|TIMESTAMP) -> BIGINT",
        description: "date_part('day', x)",
    },
    FunctionDef {
        name: "hour",
        kind: FunctionKind::DateField("hour"),
        signature: "hour(DATE|TIMESTAMP) -> BIGINT",
        description: "date_part('hour', x)",
    },
    FunctionDef {
        name: "minute",
        kind: FunctionKind::DateField("minute"),
        signature: "minute(DATE|TIMESTAMP) -> BIGINT",
        description: "date_part('minute', x)",
    },
    FunctionDef {
        name: "second",
        kind: FunctionKind::DateField("second"),
        signature: "second(DATE|TIMESTAMP) -> BIGINT",
        description: "date_part('second', x)",
    },
    FunctionDef {
        name: "quarter",
        kind: FunctionKind::DateField("quarter"),
        signature: "quarter(DATE|TIMESTAMP) -> BIGINT",
        description: "date_part('quarter', x)",
    },
    FunctionDef {
        name: "week",
        kind: FunctionKind::DateField("week"),
        signature: "week(DATE|TIMESTAMP) -> BIGINT",
        description: "date_part('week', x)",
    },
    FunctionDef {
        name: "weekofyear",
        kind: FunctionKind::DateField("week"),
        signature: "weekofyear(DATE|TIMESTAMP) -> BIGINT",
        description: "date_part('week', x)",
    },
    FunctionDef {
        name: "dayofweek",
        kind: FunctionKind::DateField("dow"),
        signature: "dayofweek(DATE|TIMESTAMP) -> BIGINT",
        description: "date_part('dow', x)",
    },
    FunctionDef {
        name: "dayofmonth",
        kind: FunctionKind::DateField("day"),
        signature: "dayofmonth(DATE|TIMESTAMP) -> BIGINT",
        description: "date_part('day', x)",
    },
    FunctionDef {
        name: "dayofyear",
        kind: FunctionKind::DateField("doy"),
        signature: "dayofyear(DATE|TIMESTAMP) -> BIGINT",
        description: "date_part('doy', x)",
    },
    FunctionDef {
        name: "isodow",
        kind: FunctionKind::DateField("isodow"),
        signature: "isodow(DATE|TIMESTAMP) -> BIGINT",
        description: "date_part('isodow', x)",
    },
    FunctionDef {
        name: "millisecond",
        kind: FunctionKind::DateField("millisecond"),
        signature: "millisecond(DATE|TIMESTAMP) -> BIGINT",
        description: "date_part('millisecond', x)",
    },
    FunctionDef {
        name: "microsecond",
        kind: FunctionKind::DateField("microsecond"),
        signature: "microsecond(DATE|TIMESTAMP) -> BIGINT",
        description: "date_part('microsecond', x)",
    },
    FunctionDef {
        name: "epoch",
        kind: FunctionKind::DateField("epoch"),
        signature: "epoch(DATE|TIMESTAMP) -> DOUBLE",
        description: "date_part('epoch', x)",
    },
    FunctionDef {
        name: "if",
        kind: FunctionKind::If,
        signature: "if(BOOLEAN, ANY, ANY) -> ANY",
        description: "the second argument where the first is true, else the third",
    },
    FunctionDef {
        name: "iif",
        kind: FunctionKind::If,
        signature: "iif(BOOLEAN, ANY, ANY) -> ANY",
        description: "alias of if",
    },
    FunctionDef {
        name: "ifnull",
        kind: FunctionKind::IfNull,
        signature: "ifnull(ANY, ANY) -> ANY",
        description: "the first argument unless NULL, else the second",
    },
    FunctionDef {
        name: "mod",
        kind: FunctionKind::Mod,
        signature: "mod(NUMERIC, NUMERIC) -> NUMERIC",
        description: "a % b",
    },
    FunctionDef {
        name: "date_add",
        kind: FunctionKind::DateAdd,
        signature: "date_add(DATE|TIMESTAMP, INTERVAL) -> TIMESTAMP",
        description: "t + interval",
    },
    aggregate(
        "count",
        A::Count,
        "count(ANY) -> BIGINT; count(*)",
        "number of non-NULL values (of rows with *)",
    ),
    aggregate("sum", A::Sum, "sum(NUMERIC) -> NUMERIC", "sum"),
    aggregate("avg", A::Avg, "avg(NUMERIC) -> DOUBLE", "mean"),
    aggregate("mean", A::Avg, "mean(NUMERIC) -> DOUBLE", "alias of avg"),
    aggregate("min", A::Min, "min(ANY) -> ANY", "smallest value"),
    aggregate("max", A::Max, "max(ANY) -> ANY", "largest value"),
    aggregate(
        "var_samp",
        A::VarSamp,
        "var_samp(NUMERIC) -> DOUBLE",
        "sample variance (NULL under two values)",
    ),
    aggregate(
        "variance",
        A::VarSamp,
        "variance(NUMERIC) -> DOUBLE",
        "alias of var_samp",
    ),
    aggregate(
        "var_pop",
        A::VarPop,
        "var_pop(NUMERIC) -> DOUBLE",
        "population variance",
    ),
    aggregate(
        "stddev_samp",
        A::StddevSamp,
        "stddev_samp(NUMERIC) -> DOUBLE",
        "sample standard deviation (NULL under two values)",
    ),
    aggregate(
        "stddev",
        A::StddevSamp,
        "stddev(NUMERIC) -> DOUBLE",
        "alias of stddev_samp",
    ),
    aggregate(
        "arg_min",
        A::ArgMin,
        "arg_min(ANY, ANY) -> ANY",
        "x of the row with the smallest y",
    ),
    aggregate(
        "argmin",
        A::ArgMin,
        "argmin(ANY, ANY) -> ANY",
        "alias of arg_min",
    ),
    aggregate(
        "min_by",
        A::ArgMin,
        "min_by(ANY, ANY) -> ANY",
        "alias of arg_min",
    ),
    aggregate(
        "arg_max",
        A::ArgMax,
        "arg_max(ANY, ANY) -> ANY",
        "x of the row with the largest y",
    ),
    aggregate(
        "argmax",
        A::ArgMax,
        "argmax(ANY, ANY) -> ANY",
        "alias of arg_max",
    ),
    aggregate(
        "max_by",
        A::ArgMax,
        "max_by(ANY, ANY) -> ANY",
        "alias of arg_max",
    ),
    aggregate(
        "string_agg",
        A::StringAgg,
        "string_agg(ANY[, VARCHAR]) -> VARCHAR",
        "the values as VARCHAR joined by a constant separator (default ','), in no defined order",
    ),
    aggregate(
        "group_concat",
        A::StringAgg,
        "group_concat(ANY[, VARCHAR]) -> VARCHAR",
        "alias of string_agg",
    ),
    aggregate(
        "listagg",
        A::StringAgg,
        "listagg(ANY[, VARCHAR]) -> VARCHAR",
        "alias of string_agg",
    ),
    aggregate(
        "stddev_pop",
        A::StddevPop,
        "stddev_pop(NUMERIC) -> DOUBLE",
        "population standard deviation",
    ),
    aggregate(
        "skewness",
        A::Skewness,
        "skewness(NUMERIC) -> DOUBLE",
        "sample skewness (NULL under three values or without spread)",
    ),
    aggregate(
        "kurtosis",
        A::Kurtosis,
        "kurtosis(NUMERIC) -> DOUBLE",
        "sample excess kurtosis, bias corrected (NULL under four values or without spread)",
    ),
    aggregate(
        "kurtosis_pop",
        A::KurtosisPop,
        "kurtosis_pop(NUMERIC) -> DOUBLE",
        "population excess kurtosis",
    ),
    aggregate(
        "entropy",
        A::Entropy,
        "entropy(ANY) -> DOUBLE",
        "Shannon entropy (base 2) of the non-NULL values' frequencies",
    ),
    aggregate(
        "covar_pop",
        A::CovarPop,
        "covar_pop(NUMERIC y, NUMERIC x) -> DOUBLE",
        "population covariance of the pairs where neither is NULL",
    ),
    aggregate(
        "covar_samp",
        A::CovarSamp,
        "covar_samp(NUMERIC y, NUMERIC x) -> DOUBLE",
        "sample covariance (NULL under two pairs)",
    ),
    aggregate(
        "corr",
        A::Corr,
        "corr(NUMERIC y, NUMERIC x) -> DOUBLE",
        "correlation coefficient (NaN where either variance is 0)",
    ),
    aggregate(
        "regr_slope",
        A::RegrSlope,
        "regr_slope(NUMERIC y, NUMERIC x) -> DOUBLE",
        "slope of the least-squares line of y on x",
    ),
    aggregate(
        "regr_intercept",
        A::RegrIntercept,
        "regr_intercept(NUMERIC y, NUMERIC x) -> DOUBLE",
        "intercept of the least-squares line of y on x",
    ),
    aggregate(
        "regr_r2",
        A::RegrR2,
        "regr_r2(NUMERIC y, NUMERIC x) -> DOUBLE",
        "coefficient of determination",
    ),
    aggregate(
        "regr_count",
        A::RegrCount,
        "regr_count(NUMERIC y, NUMERIC x) -> UINTEGER",
        "pairs where neither is NULL",
    ),
    aggregate(
        "regr_avgx",
        A::RegrAvgx,
        "regr_avgx(NUMERIC y, NUMERIC x) -> DOUBLE",
        "mean of x over the pairs where neither is NULL",
    ),
    aggregate(
        "regr_avgy",
        A::RegrAvgy,
        "regr_avgy(NUMERIC y, NUMERIC x) -> DOUBLE",
        "mean of y over those pairs",
    ),
    aggregate(
        "regr_sxx",
        A::RegrSxx,
        "regr_sxx(NUMERIC y, NUMERIC x) -> DOUBLE",
        "regr_count * var_pop(x)",
    ),
    aggregate(
        "regr_syy",
        A::RegrSyy,
        "regr_syy(NUMERIC y, NUMERIC x) -> DOUBLE",
        "regr_count * var_pop(y)",
    ),
    aggregate(
        "regr_sxy",
        A::RegrSxy,
        "regr_sxy(NUMERIC y, NUMERIC x) -> DOUBLE",
        "regr_count * covar_pop(y, x)",
    ),
    aggregate(
        "median",
        A::Median,
        "median(INTEGER|BIGINT|DOUBLE) -> DOUBLE",
        "the middle value (the mean of the two middle ones for an even count)",
    ),
    aggregate(
        "mode",
        A::Mode,
        "mode(ANY) -> ANY",
        "the most frequent value (a tie goes to the smallest)",
    ),
    aggregate(
        "grouping",
        A::Grouping,
        "grouping(ANY, ...) -> BIGINT",
        "a bit per argument (a GROUP BY key), the first the highest: 1 where the row's \
         grouping set (ROLLUP, CUBE, GROUPING SETS) leaves that key out",
    ),
    aggregate(
        "grouping_id",
        A::Grouping,
        "grouping_id(ANY, ...) -> BIGINT",
        "alias of grouping",
    ),
    aggregate(
        "any_value",
        A::AnyValue,
        "any_value(ANY) -> ANY",
        "a non-NULL value of the group, in no defined order",
    ),
    aggregate(
        "first",
        A::First,
        "first(ANY) -> ANY",
        "the value of the group's first row, NULL included (in the table's order on one thread; \
         the order is not guaranteed on several threads)",
    ),
    aggregate(
        "arbitrary",
        A::First,
        "arbitrary(ANY) -> ANY",
        "first(x): the value of the group's first row, NULL included",
    ),
    aggregate(
        "last",
        A::Last,
        "last(ANY) -> ANY",
        "the value of the group's last row, NULL included (in the table's order on one thread; \
         the order is not guaranteed on several threads)",
    ),
    aggregate(
        "bit_and",
        A::BitAnd,
        "bit_and(INTEGER) -> INTEGER",
        "bitwise AND of the values",
    ),
    aggregate(
        "bit_or",
        A::BitOr,
        "bit_or(INTEGER) -> INTEGER",
        "bitwise OR of the values",
    ),
    aggregate(
        "bit_xor",
        A::BitXor,
        "bit_xor(INTEGER) -> INTEGER",
        "bitwise XOR of the values",
    ),
    aggregate(
        "product",
        A::Product,
        "product(NUMERIC) -> DOUBLE",
        "product of the values",
    ),
    aggregate(
        "quantile_cont",
        A::QuantileCont,
        "quantile_cont(INTEGER|BIGINT|DOUBLE, DOUBLE) -> DOUBLE",
        "the interpolated quantile at a constant fraction in [0, 1]",
    ),
    aggregate(
        "quantile_disc",
        A::QuantileDisc,
        "quantile_disc(ANY, DOUBLE) -> ANY",
        "the value at a constant fraction in [0, 1] of the ordered values",
    ),
    aggregate(
        "quantile",
        A::QuantileDisc,
        "quantile(ANY, DOUBLE) -> ANY",
        "alias of quantile_disc",
    ),
    FunctionDef {
        name: "approx_count_distinct",
        kind: FunctionKind::ApproxCountDistinct,
        signature: "approx_count_distinct(ANY) -> BIGINT",
        description: "the number of distinct non-NULL values (counted exactly, as count(DISTINCT x))",
    },
    FunctionDef {
        name: "count_if",
        kind: FunctionKind::CountIf,
        signature: "count_if(BOOLEAN) -> BIGINT",
        description: "number of rows where the argument is true (NULL when all are NULL)",
    },
    FunctionDef {
        name: "bool_and",
        kind: FunctionKind::BoolAnd,
        signature: "bool_and(BOOLEAN) -> BOOLEAN",
        description: "true if every non-NULL value is true",
    },
    FunctionDef {
        name: "bool_or",
        kind: FunctionKind::BoolOr,
        signature: "bool_or(BOOLEAN) -> BOOLEAN",
        description: "true if any non-NULL value is true",
    },
    FunctionDef {
        name: "current_setting",
        kind: FunctionKind::CurrentSetting,
        signature: "current_setting(VARCHAR) -> ANY",
        description: "the value of a setting (see weir_settings())",
    },
    table(
        "read_csv",
        "read_csv(VARCHAR | VARCHAR[], option := value, ...)",
        "rows of CSV files (a path, a glob or a list; options: delim, header, quote, escape, columns, types, nullstr, sample_size, skip, ignore_errors, auto_detect, filename, hive_partitioning)",
    ),
    table(
        "read_csv_auto",
        "read_csv_auto(VARCHAR | VARCHAR[], option := value, ...)",
        "alias of read_csv",
    ),
    table(
        "read_parquet",
        "read_parquet(VARCHAR | VARCHAR[], option := value, ...)",
        "rows of Parquet files (a path, a glob or a list; options: filename, hive_partitioning)",
    ),
    table(
        "range",
        "range([start,] stop [, step])",
        "BIGINT rows start..stop (exclusive)",
    ),
    table(
        "generate_series",
        "generate_series([start,] stop [, step])",
        "BIGINT rows start..stop (inclusive)",
    ),
    table(
        "weir_functions",
        "weir_functions()",
        "this list: function_name, function_type, signature, description",
    ),
    table(
        "weir_settings",
        "weir_settings()",
        "the settings: name, value, description, input_type",
    ),
];

/// DuckDB functions Weir knows of but does not support yet, with why:
/// calling one is refused with that reason instead of "does not exist".
pub const NOT_SUPPORTED: &[(&str, &str)] = &[
    ("list", "LIST values are not supported"),
    ("uuid", "UUID values are not supported"),
    ("gen_random_uuid", "UUID values are not supported"),
    ("array_agg", "LIST values are not supported"),
    ("list_value", "LIST values are not supported"),
    (
        "string_split",
        "it returns a LIST, and LIST values are not supported",
    ),
    (
        "str_split",
        "it returns a LIST, and LIST values are not supported",
    ),
    (
        "string_to_array",
        "it returns a LIST, and LIST values are not supported",
    ),
    (
        "regexp_split_to_array",
        "it returns a LIST, and LIST values are not supported",
    ),
    (
        "regexp_extract_all",
        "it returns a LIST, and LIST values are not supported",
    ),
    ("unnest", "LIST values are not supported"),
    ("struct_pack", "STRUCT values are not supported"),
    (
        "hash",
        "its value is DuckDB's implementation detail (a UBIGINT); use md5",
    ),
    ("date_sub", "use date_diff, which counts part boundaries"),
    (
        "to_timestamp",
        "TIMESTAMP WITH TIME ZONE is not supported; use make_timestamp or epoch_ms",
    ),
];

/// The entry named `name` (case-insensitive).
pub fn lookup(name: &str) -> Option<&'static FunctionDef> {
    FUNCTIONS.iter().find(|f| f.name.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_lower_case() {
        let mut names: Vec<&str> = FUNCTIONS.iter().map(|f| f.name).collect();
        assert!(names.iter().all(|n| *n == n.to_ascii_lowercase()));
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n);
        assert!(matches!(
            lookup("STRPOS").map(|f| f.kind),
            Some(FunctionKind::Scalar(ScalarFunction::Strpos))
        ));
    }
}
