//! Date and time functions: date_diff, strftime, strptime, make_date,
//! make_timestamp, now, current_date, epoch_ms, last_day, dayname,
//! monthname. DATE arguments arrive as DATE or TIMESTAMP as the planner's
//! signature says; the range checks are the planner's (`scalar.rs`).

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, Date32Builder, Int64Builder, StringBuilder,
    TimestampMicrosecondBuilder,
};
use arrow::datatypes::{DataType, Date32Type, Float64Type, Int64Type, TimestampMicrosecondType};
use weir_planner::ScalarFunction as F;
use weir_planner::scalar::{
    MICROS_PER_DAY, checked_date, checked_timestamp, civil_from_days, days_from_civil,
};

use super::{EvalError, Result, Value};

const DAY_NAMES: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const MONTH_NAMES: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// Day of the week of `days` since the epoch, 0 = Sunday.
fn weekday(days: i64) -> usize {
    (days + 4).rem_euclid(7) as usize
}

/// Evaluates date function `func` over its evaluated arguments; `len` is
/// the batch's row count (for now() and current_date, which take none).
pub(crate) fn eval_datetime(func: F, args: &[Value], len: usize) -> Result<Value> {
    let _ = len;
    match func {
        F::Now => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_micros() as i64);
            let mut b = TimestampMicrosecondBuilder::with_capacity(1);
            b.append_value(now);
            return Ok(Value::Scalar(Arc::new(b.finish())));
        }
        F::Today => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_micros() as i64);
            let mut b = Date32Builder::with_capacity(1);
            b.append_value(now.div_euclid(MICROS_PER_DAY) as i32);
            return Ok(Value::Scalar(Arc::new(b.finish())));
        }
        _ => {}
    }
    let scalar = args.iter().all(Value::is_scalar);
    let n = if scalar {
        1
    } else {
        args.iter().map(|a| a.array().len()).max().unwrap_or(1)
    };
    let arrays: Vec<ArrayRef> = args
        .iter()
        .map(|a| a.clone().into_array(n))
        .collect::<Result<_>>()?;
    let text = |k: usize, i: usize| -> Option<&str> {
        let a = &arrays[k];
        (*a.data_type() == DataType::Utf8 && a.is_valid(i)).then(|| a.as_string::<i32>().value(i))
    };
    let int = |k: usize, i: usize| -> Option<i64> {
        let a = &arrays[k];
        (*a.data_type() == DataType::Int64 && a.is_valid(i))
            .then(|| a.as_primitive::<Int64Type>().value(i))
    };
    let ts = |k: usize, i: usize| -> Option<i64> {
        let a = &arrays[k];
        (matches!(a.data_type(), DataType::Timestamp(..)) && a.is_valid(i))
            .then(|| a.as_primitive::<TimestampMicrosecondType>().value(i))
    };
    let date = |k: usize, i: usize| -> Option<i32> {
        let a = &arrays[k];
        (*a.data_type() == DataType::Date32 && a.is_valid(i))
            .then(|| a.as_primitive::<Date32Type>().value(i))
    };
    let out: ArrayRef = match func {
        F::DateDiff => {
            let mut b = Int64Builder::with_capacity(n);
            let mut last: Option<(String, DiffPart)> = None;
            for i in 0..n {
                let (Some(p), Some(a), Some(z)) = (text(0, i), ts(1, i), ts(2, i)) else {
                    b.append_null();
                    continue;
                };
                let part = match &last {
                    Some((q, part)) if q == p => *part,
                    _ => {
                        let part = DiffPart::parse(p)?;
                        last = Some((p.to_string(), part));
                        part
                    }
                };
                b.append_value(part.diff(a, z));
            }
            Arc::new(b.finish())
        }
        F::Strftime => {
            let mut b = StringBuilder::with_capacity(n, n * 20);
            let mut last: Option<(String, Vec<Tok>)> = None;
            let mut buf = String::new();
            for i in 0..n {
                let (Some(t), Some(f)) = (ts(0, i), text(1, i)) else {
                    b.append_null();
                    continue;
                };
                if last.as_ref().is_none_or(|(q, _)| q != f) {
                    last = Some((f.to_string(), parse_format(f)?));
                }
                let Some((_, toks)) = last.as_ref() else {
                    continue;
                };
                buf.clear();
                write_timestamp(&mut buf, t, toks);
                b.append_value(&buf);
            }
            Arc::new(b.finish())
        }
        F::Strptime => {
            let mut b = TimestampMicrosecondBuilder::with_capacity(n);
            let mut last: Option<(String, Vec<Tok>)> = None;
            for i in 0..n {
                let (Some(s), Some(f)) = (text(0, i), text(1, i)) else {
                    b.append_null();
                    continue;
                };
                if last.as_ref().is_none_or(|(q, _)| q != f) {
                    last = Some((f.to_string(), parse_format(f)?));
                }
                let Some((_, toks)) = last.as_ref() else {
                    continue;
                };
                b.append_value(parse_timestamp(s, f, toks)?);
            }
            Arc::new(b.finish())
        }
        F::MakeDate => {
            let mut b = Date32Builder::with_capacity(n);
            for i in 0..n {
                let (Some(y), Some(m), Some(d)) = (int(0, i), int(1, i), int(2, i)) else {
                    b.append_null();
                    continue;
                };
                b.append_value(make_date(y, m, d)?);
            }
            Arc::new(b.finish())
        }
        F::MakeTimestamp => {
            let mut b = TimestampMicrosecondBuilder::with_capacity(n);
            let secs = &arrays[5];
            for i in 0..n {
                let fields = (int(0, i), int(1, i), int(2, i), int(3, i), int(4, i));
                let s = (*secs.data_type() == DataType::Float64 && secs.is_valid(i))
                    .then(|| secs.as_primitive::<Float64Type>().value(i));
                let ((Some(y), Some(mo), Some(d), Some(h), Some(mi)), Some(s)) = (fields, s) else {
                    b.append_null();
                    continue;
                };
                let day = make_date(y, mo, d)?;
                let micros = (s * 1e6).round();
                if !(0..24).contains(&h)
                    || !(0..60).contains(&mi)
                    || !(0.0..=60e6).contains(&micros)
                {
                    return Err(EvalError::Cast(format!(
                        "Time out of range: {h}:{mi}:{s:?}"
                    )));
                }
                let t = day as i128 * MICROS_PER_DAY as i128
                    + (h * 3600 + mi * 60) as i128 * 1_000_000
                    + micros as i128;
                let t = checked_timestamp(t).ok_or_else(|| {
                    EvalError::Cast(format!(
                        "Timestamp out of range: {y}-{mo}-{d} {h}:{mi}:{s:?}"
                    ))
                })?;
                b.append_value(t);
            }
            Arc::new(b.finish())
        }
        F::EpochMs => {
            let a = &arrays[0];
            if matches!(a.data_type(), DataType::Timestamp(..)) {
                let out: arrow::array::PrimitiveArray<Int64Type> = a
                    .as_primitive::<TimestampMicrosecondType>()
                    .unary(|t| t.div_euclid(1000));
                Arc::new(out)
            } else {
                let mut b = TimestampMicrosecondBuilder::with_capacity(n);
                for i in 0..n {
                    let Some(ms) = int(0, i) else {
                        b.append_null();
                        continue;
                    };
                    let t = checked_timestamp(ms as i128 * 1000).ok_or_else(|| {
                        EvalError::OutOfRange(format!(
                            "epoch_ms({ms}) is out of the TIMESTAMP range"
                        ))
                    })?;
                    b.append_value(t);
                }
                Arc::new(b.finish())
            }
        }
        F::LastDay => {
            let mut b = Date32Builder::with_capacity(n);
            for i in 0..n {
                let Some(d) = date(0, i) else {
                    b.append_null();
                    continue;
                };
                let (y, m, _) = civil_from_days(d);
                let (ny, nm) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
                let first = days_from_civil(ny, nm, 1).map_or(d, |f| f - 1);
                b.append_value(first);
            }
            Arc::new(b.finish())
        }
        F::DayName | F::MonthName => {
            let mut b = StringBuilder::with_capacity(n, n * 8);
            for i in 0..n {
                let Some(d) = date(0, i) else {
                    b.append_null();
                    continue;
                };
                b.append_value(if func == F::DayName {
                    DAY_NAMES[weekday(d as i64)]
                } else {
                    MONTH_NAMES[civil_from_days(d).1 as usize - 1]
                });
            }
            Arc::new(b.finish())
        }
        other => {
            return Err(EvalError::Unsupported(format!(
                "{} is not a date function",
                other.name()
            )));
        }
    };
    Ok(Value::wrap(out, scalar))
}

fn make_date(y: i64, m: i64, d: i64) -> Result<i32> {
    let bad = || EvalError::Cast(format!("Date out of range: {y}-{m}-{d}"));
    let year = i32::try_from(y).map_err(|_| bad())?;
    let (m, d) = (
        u32::try_from(m).map_err(|_| bad())?,
        u32::try_from(d).map_err(|_| bad())?,
    );
    let days = days_from_civil(year, m, d).ok_or_else(bad)?;
    checked_date(days as i64).ok_or_else(bad)
}

/// What date_diff counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DiffPart {
    Millennium,
    Century,
    Decade,
    Year,
    IsoYear,
    Quarter,
    Month,
    Week,
    Day,
    Hour,
    Minute,
    Second,
    Millisecond,
    Microsecond,
}

impl DiffPart {
    fn parse(s: &str) -> Result<Self> {
        let p = s.trim().to_ascii_lowercase();
        Ok(match p.as_str() {
            "millennium" | "millennia" | "millenium" | "millenniums" | "mil" | "mils" => {
                Self::Millennium
            }
            "century" | "centuries" | "cent" | "c" => Self::Century,
            "decade" | "decades" | "dec" | "decs" => Self::Decade,
            "year" | "years" | "y" | "yr" | "yrs" => Self::Year,
            "isoyear" => Self::IsoYear,
            "quarter" | "quarters" => Self::Quarter,
            "month" | "months" | "mon" | "mons" => Self::Month,
            "week" | "weeks" | "w" | "weekofyear" | "yearweek" => Self::Week,
            "day" | "days" | "d" | "dayofmonth" | "dow" | "dayofweek" | "weekday" | "isodow"
            | "doy" | "dayofyear" | "julian" | "jd" => Self::Day,
            "hour" | "hours" | "h" | "hr" | "hrs" => Self::Hour,
            "minute" | "minutes" | "min" | "mins" | "m" => Self::Minute,
            "second" | "seconds" | "sec" | "secs" | "s" | "epoch" => Self::Second,
            "millisecond" | "milliseconds" | "ms" | "msec" | "msecs" => Self::Millisecond,
            "microsecond" | "microseconds" | "us" | "usec" | "usecs" => Self::Microsecond,
            _ => {
                return Err(EvalError::InvalidInput(format!(
                    "date_diff specifier \"{s}\" not recognized"
                )));
            }
        })
    }

    /// The number of this part's boundaries from `a` to `b` (TIMESTAMPs),
    /// as DuckDB counts them: calendar fields for years to days, whole
    /// units since the epoch (floored) for hours and below.
    fn diff(self, a: i64, b: i64) -> i64 {
        let date = |t: i64| civil_from_days(t.div_euclid(MICROS_PER_DAY) as i32);
        let days = |t: i64| t.div_euclid(MICROS_PER_DAY);
        let (ya, ma, _) = date(a);
        let (yb, mb, _) = date(b);
        let (ya, yb) = (ya as i64, yb as i64);
        match self {
            Self::Millennium => yb / 1000 - ya / 1000,
            Self::Century => yb / 100 - ya / 100,
            Self::Decade => yb / 10 - ya / 10,
            Self::Year => yb - ya,
            Self::IsoYear => iso_year(days(b)) - iso_year(days(a)),
            Self::Quarter => (yb * 4 + (mb as i64 - 1) / 3) - (ya * 4 + (ma as i64 - 1) / 3),
            Self::Month => (yb * 12 + mb as i64) - (ya * 12 + ma as i64),
            Self::Week => (days(b) - days(a)) / 7,
            Self::Day => days(b) - days(a),
            Self::Hour => b.div_euclid(3_600_000_000) - a.div_euclid(3_600_000_000),
            Self::Minute => b.div_euclid(60_000_000) - a.div_euclid(60_000_000),
            Self::Second => b.div_euclid(1_000_000) - a.div_euclid(1_000_000),
            Self::Millisecond => b.div_euclid(1000) - a.div_euclid(1000),
            Self::Microsecond => b - a,
        }
    }
}

/// The ISO-8601 year of a day (the year of its week's Thursday).
fn iso_year(days: i64) -> i64 {
    let dow = weekday(days) as i64;
    let iso = if dow == 0 { 7 } else { dow };
    let thursday = days - (iso - 1) + 3;
    civil_from_days(thursday.clamp(i32::MIN as i64, i32::MAX as i64) as i32).0 as i64
}

/// The ISO-8601 week of a day.
fn iso_week(days: i64) -> i64 {
    let dow = weekday(days) as i64;
    let iso = if dow == 0 { 7 } else { dow };
    let thursday = days - (iso - 1) + 3;
    let y = civil_from_days(thursday.clamp(i32::MIN as i64, i32::MAX as i64) as i32).0;
    days_from_civil(y, 1, 1).map_or(0, |jan1| (thursday - jan1 as i64) / 7 + 1)
}

/// One piece of a strftime/strptime format.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Lit(char),
    /// A specifier letter; `true` when written `%-x` (no padding).
    Spec(char, bool),
}

/// The specifiers strftime and strptime know.
const SPECIFIERS: &str = "aAwubBhmdyYHIpMSfgjUWVGzZnxXc";

fn parse_format(f: &str) -> Result<Vec<Tok>> {
    let mut out = Vec::new();
    let mut chars = f.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(Tok::Lit(c));
            continue;
        }
        let (c, bare) = match chars.next() {
            Some('-') => (chars.next(), true),
            c => (c, false),
        };
        match c {
            Some('%') if !bare => out.push(Tok::Lit('%')),
            Some(c) if SPECIFIERS.contains(c) => out.push(Tok::Spec(c, bare)),
            other => {
                let spec: String = other.map(String::from).unwrap_or_default();
                return Err(EvalError::InvalidInput(format!(
                    "Failed to parse format specifier {f}: Unrecognized format for strftime/strptime: %{}{spec}",
                    if bare { "-" } else { "" }
                )));
            }
        }
    }
    Ok(out)
}

fn write_timestamp(out: &mut String, t: i64, toks: &[Tok]) {
    use std::fmt::Write;
    let days = t.div_euclid(MICROS_PER_DAY);
    let tod = t.rem_euclid(MICROS_PER_DAY);
    let (y, m, d) = civil_from_days(days as i32);
    let (h, mi, s) = (
        tod / 3_600_000_000,
        tod / 60_000_000 % 60,
        tod / 1_000_000 % 60,
    );
    let micros = tod % 1_000_000;
    let jan1 = days_from_civil(y, 1, 1).map_or(days, |j| j as i64);
    let doy = days - jan1 + 1;
    let dow = weekday(days);
    let h12 = if h % 12 == 0 { 12 } else { h % 12 };
    let num = |out: &mut String, v: i64, width: usize, bare: bool| {
        if bare {
            let _ = write!(out, "{v}");
        } else {
            let _ = write!(out, "{v:0width$}");
        }
    };
    for tok in toks {
        match *tok {
            Tok::Lit(c) => out.push(c),
            Tok::Spec(c, bare) => match c {
                'a' => out.push_str(&DAY_NAMES[dow][..3]),
                'A' => out.push_str(DAY_NAMES[dow]),
                'w' => num(out, dow as i64, 1, true),
                'u' => num(out, if dow == 0 { 7 } else { dow as i64 }, 1, true),
                'b' | 'h' => out.push_str(&MONTH_NAMES[m as usize - 1][..3]),
                'B' => out.push_str(MONTH_NAMES[m as usize - 1]),
                'm' => num(out, m as i64, 2, bare),
                'd' => num(out, d as i64, 2, bare),
                'y' => num(out, (y as i64).rem_euclid(100), 2, bare),
                'Y' => num(out, y as i64, 4, bare),
                'H' => num(out, h, 2, bare),
                'I' => num(out, h12, 2, bare),
                'p' => out.push_str(if h < 12 { "AM" } else { "PM" }),
                'M' => num(out, mi, 2, bare),
                'S' => num(out, s, 2, bare),
                'f' | 'n' => num(out, micros, 6, false),
                'g' => num(out, micros / 1000, 3, false),
                'j' => num(out, doy, 3, bare),
                // weeks of the year starting on Sunday (%U) or Monday (%W)
                'U' => num(out, (doy + 6 - dow as i64) / 7, 2, bare),
                'W' => num(out, (doy + 6 - (dow as i64 + 6) % 7) / 7, 2, bare),
                'V' => num(out, iso_week(days), 2, bare),
                'G' => num(out, iso_year(days), 4, bare),
                'z' => out.push_str("+00"),
                'Z' => {}
                'x' => {
                    let _ = write!(out, "{y:04}-{m:02}-{d:02}");
                }
                'X' => {
                    let _ = write!(out, "{h:02}:{mi:02}:{s:02}");
                }
                _ => {
                    let _ = write!(out, "{y:04}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}");
                }
            },
        }
    }
}

fn parse_timestamp(s: &str, f: &str, toks: &[Tok]) -> Result<i64> {
    let fail = |why: &str| {
        EvalError::InvalidInput(format!(
            "Could not parse string \"{s}\" according to format specifier \"{f}\": {why}"
        ))
    };
    let b = s.as_bytes();
    let mut i = 0;
    let (mut y, mut m, mut d) = (1900i64, 1i64, 1i64);
    let (mut h, mut mi, mut sec, mut micros) = (0i64, 0i64, 0i64, 0i64);
    let mut pm: Option<bool> = None;
    let mut doy: Option<i64> = None;
    let mut offset_minutes = 0i64;
    let digits = |i: &mut usize, max: usize| -> Option<(i64, usize)> {
        let start = *i;
        let neg = b.get(*i) == Some(&b'-');
        if neg {
            *i += 1;
        }
        let first = *i;
        while *i < b.len() && *i - first < max && b[*i].is_ascii_digit() {
            *i += 1;
        }
        if *i == first {
            *i = start;
            return None;
        }
        let v: i64 = s[first..*i].parse().ok()?;
        Some((if neg { -v } else { v }, *i - first))
    };
    let name = |i: &mut usize, names: &[&str]| -> Option<usize> {
        let rest = &s[*i..];
        for (k, n) in names.iter().enumerate() {
            for cand in [*n, &n[..3]] {
                if rest.len() >= cand.len() && rest[..cand.len()].eq_ignore_ascii_case(cand) {
                    *i += cand.len();
                    return Some(k);
                }
            }
        }
        None
    };
    for tok in toks {
        match *tok {
            Tok::Lit(c) if c.is_whitespace() => {
                while i < b.len() && b[i].is_ascii_whitespace() {
                    i += 1;
                }
            }
            Tok::Lit(c) => {
                if !s[i..].starts_with(c) {
                    return Err(fail(&format!("expected \"{c}\" at position {}", i + 1)));
                }
                i += c.len_utf8();
            }
            Tok::Spec(c, _) => {
                let num = |i: &mut usize, max| {
                    digits(i, max).ok_or_else(|| {
                        fail(&format!(
                            "expected a number for %{c} at position {}",
                            *i + 1
                        ))
                    })
                };
                match c {
                    'Y' | 'G' => y = num(&mut i, 9)?.0,
                    'y' => {
                        let v = num(&mut i, 2)?.0;
                        y = if v < 69 { 2000 + v } else { 1900 + v };
                    }
                    'm' => m = num(&mut i, 2)?.0,
                    'd' => d = num(&mut i, 2)?.0,
                    'H' => h = num(&mut i, 2)?.0,
                    'I' => {
                        h = num(&mut i, 2)?.0;
                        if !(1..=12).contains(&h) {
                            return Err(fail(
                                "hour out of range, expected a value between 1 and 12",
                            ));
                        }
                    }
                    'M' => mi = num(&mut i, 2)?.0,
                    'S' => sec = num(&mut i, 2)?.0,
                    'f' | 'g' | 'n' => {
                        let max = match c {
                            'g' => 3,
                            'f' => 6,
                            _ => 9,
                        };
                        let (v, width) = num(&mut i, max)?;
                        micros = v * 10i64.pow((6 - width.min(6)) as u32)
                            / 10i64.pow(width.saturating_sub(6) as u32);
                    }
                    'j' => doy = Some(num(&mut i, 3)?.0),
                    'w' | 'u' | 'U' | 'W' | 'V' => {
                        num(&mut i, 2)?;
                    }
                    'p' => {
                        let rest = &s[i..];
                        if rest.len() >= 2 && rest[..2].eq_ignore_ascii_case("am") {
                            pm = Some(false);
                        } else if rest.len() >= 2 && rest[..2].eq_ignore_ascii_case("pm") {
                            pm = Some(true);
                        } else {
                            return Err(fail("expected AM or PM"));
                        }
                        i += 2;
                    }
                    'b' | 'h' | 'B' => {
                        m = name(&mut i, &MONTH_NAMES)
                            .ok_or_else(|| fail("expected a month name"))?
                            as i64
                            + 1;
                    }
                    'a' | 'A' => {
                        name(&mut i, &DAY_NAMES).ok_or_else(|| fail("expected a day name"))?;
                    }
                    'z' => {
                        let sign = match b.get(i) {
                            Some(b'+') => 1,
                            Some(b'-') => -1,
                            Some(b'Z') => {
                                i += 1;
                                continue;
                            }
                            _ => return Err(fail("expected a UTC offset")),
                        };
                        i += 1;
                        let hh = num(&mut i, 2)?.0;
                        if b.get(i) == Some(&b':') {
                            i += 1;
                        }
                        let mm = digits(&mut i, 2).map_or(0, |v| v.0);
                        offset_minutes = sign * (hh * 60 + mm);
                    }
                    'Z' => {
                        while i < b.len()
                            && (b[i].is_ascii_alphanumeric() || b"/_+-".contains(&b[i]))
                        {
                            i += 1;
                        }
                    }
                    _ => return Err(fail(&format!("%{c} cannot be parsed"))),
                }
            }
        }
    }
    if i != b.len() {
        return Err(fail(&format!("unexpected text at position {}", i + 1)));
    }
    if let Some(pm) = pm {
        h = h % 12 + if pm { 12 } else { 0 };
    }
    if !(1..=12).contains(&m) {
        return Err(fail(
            "month out of range, expected a value between 1 and 12",
        ));
    }
    if !(0..24).contains(&h) || !(0..60).contains(&mi) || !(0..60).contains(&sec) {
        return Err(fail("time out of range"));
    }
    let day = match doy {
        Some(j) => {
            let jan1 = make_date(y, 1, 1)? as i64;
            let last = make_date(y, 12, 31)? as i64;
            if j < 1 || jan1 + j - 1 > last {
                return Err(fail("day of the year out of range"));
            }
            jan1 + j - 1
        }
        None => make_date(y, m, d)? as i64,
    };
    let t = day as i128 * MICROS_PER_DAY as i128
        + ((h * 60 + mi - offset_minutes) * 60 + sec) as i128 * 1_000_000
        + micros as i128;
    checked_timestamp(t).ok_or_else(|| EvalError::Cast(format!("Timestamp out of range: {s}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> i64 {
        weir_planner::scalar::parse_timestamp(s).unwrap()
    }

    #[test]
    fn date_diff_counts_boundaries() {
        let p = |s| DiffPart::parse(s).unwrap();
        assert_eq!(
            p("day").diff(ts("2020-01-01 23:00:00"), ts("2020-01-02 01:00:00")),
            1
        );
        assert_eq!(p("months").diff(ts("2020-03-01"), ts("2020-01-31")), -2);
        assert_eq!(p("week").diff(ts("2020-01-05"), ts("2020-01-06")), 0);
        assert_eq!(p("isoyear").diff(ts("2020-12-31"), ts("2021-01-04")), 1);
        assert!(DiffPart::parse("fortnight").is_err());
    }

    #[test]
    fn strftime_and_strptime_round_trip() {
        let f = "%Y-%m-%d %H:%M:%S.%f";
        let toks = parse_format(f).unwrap();
        let t = ts("2020-03-04 13:05:06.123456");
        let mut s = String::new();
        write_timestamp(&mut s, t, &toks);
        assert_eq!(s, "2020-03-04 13:05:06.123456");
        assert_eq!(parse_timestamp(&s, f, &toks).unwrap(), t);
        assert!(parse_format("%Q").is_err());
    }
}
