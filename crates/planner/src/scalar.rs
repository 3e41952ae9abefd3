//! Constant values.

use std::fmt;

use arrow_schema::{DataType, IntervalUnit, TimeUnit};

/// A typed constant. `Null` carries the type it stands for.
#[derive(Clone, Debug, PartialEq)]
pub enum ScalarValue {
    /// A NULL of the given type (`DataType::Null` when untyped).
    Null(DataType),
    /// BOOLEAN
    Boolean(bool),
    /// INTEGER
    Int32(i32),
    /// BIGINT
    Int64(i64),
    /// TINYINT
    Int8(i8),
    /// SMALLINT
    Int16(i16),
    /// UTINYINT
    UInt8(u8),
    /// USMALLINT
    UInt16(u16),
    /// UINTEGER
    UInt32(u32),
    /// UBIGINT
    UInt64(u64),
    /// FLOAT (REAL)
    Float32(f32),
    /// DOUBLE
    Float64(f64),
    /// DECIMAL(precision, scale): the unscaled value.
    Decimal128(i128, u8, i8),
    /// VARCHAR
    Utf8(String),
    /// BLOB
    Binary(Vec<u8>),
    /// DATE: days since 1970-01-01.
    Date32(i32),
    /// TIMESTAMP: microseconds since 1970-01-01 00:00:00, no time zone.
    TimestampMicros(i64),
    /// INTERVAL: months, days and microseconds, each applied in turn.
    Interval(i32, i32, i64),
}

impl ScalarValue {
    /// The value's type.
    pub fn data_type(&self) -> DataType {
        match self {
            Self::Null(t) => t.clone(),
            Self::Boolean(_) => DataType::Boolean,
            Self::Int32(_) => DataType::Int32,
            Self::Int64(_) => DataType::Int64,
            Self::Int8(_) => DataType::Int8,
            Self::Int16(_) => DataType::Int16,
            Self::UInt8(_) => DataType::UInt8,
            Self::UInt16(_) => DataType::UInt16,
            Self::UInt32(_) => DataType::UInt32,
            Self::UInt64(_) => DataType::UInt64,
            Self::Float32(_) => DataType::Float32,
            Self::Float64(_) => DataType::Float64,
            Self::Decimal128(_, p, s) => DataType::Decimal128(*p, *s),
            Self::Utf8(_) => DataType::Utf8,
            Self::Binary(_) => DataType::Binary,
            Self::Date32(_) => DataType::Date32,
            Self::TimestampMicros(_) => DataType::Timestamp(TimeUnit::Microsecond, None),
            Self::Interval(..) => DataType::Interval(IntervalUnit::MonthDayNano),
        }
    }

    /// True for a NULL of any type.
    pub fn is_null(&self) -> bool {
        matches!(self, Self::Null(_))
    }
}

impl fmt::Display for ScalarValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Null(_) => write!(f, "NULL"),
            Self::Boolean(b) => write!(f, "{}", if *b { "TRUE" } else { "FALSE" }),
            Self::Int32(v) => write!(f, "{v}"),
            Self::Int64(v) => write!(f, "{v}"),
            Self::Int8(v) => write!(f, "CAST({v} AS TINYINT)"),
            Self::Int16(v) => write!(f, "CAST({v} AS SMALLINT)"),
            Self::UInt8(v) => write!(f, "CAST({v} AS UTINYINT)"),
            Self::UInt16(v) => write!(f, "CAST({v} AS USMALLINT)"),
            Self::UInt32(v) => write!(f, "CAST({v} AS UINTEGER)"),
            Self::UInt64(v) => write!(f, "CAST({v} AS UBIGINT)"),
            Self::Float32(v) => write!(f, "CAST({v:?} AS FLOAT)"),
            Self::Float64(v) => write!(f, "{v:?}"),
            Self::Decimal128(v, _, s) => write!(f, "{}", format_decimal(*v, *s)),
            Self::Utf8(s) => write!(f, "'{}'", s.replace('\'', "''")),
            Self::Binary(b) => write!(f, "'{}'::BLOB", format_blob(b).replace('\'', "''")),
            Self::Date32(d) => write!(f, "DATE '{}'", format_date(*d)),
            Self::TimestampMicros(t) => write!(f, "TIMESTAMP '{}'", format_timestamp(*t)),
            Self::Interval(m, d, us) => write!(f, "INTERVAL '{}'", format_interval(*m, *d, *us)),
        }
    }
}

/// A BLOB as text, as DuckDB writes it: printable ASCII as itself, any
/// other byte (and `\`, `'`, `"`) as `\xHH`.
pub fn format_blob(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len());
    for &c in b {
        if (32..=126).contains(&c) && !matches!(c, b'\\' | b'\'' | b'"') {
            s.push(c as char);
        } else {
            s.push_str(&format!("\\x{c:02X}"));
        }
    }
    s
}

/// Text as a BLOB, as DuckDB reads it: ASCII characters as themselves,
/// `\xHH` as the byte HH; the error (DuckDB's) otherwise.
pub fn parse_blob(s: &str) -> Result<Vec<u8>, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'\\' {
            if i + 4 > bytes.len() {
                return Err(format!(
                    "Invalid hex escape code encountered in string -> blob conversion of string \"{s}\": unterminated escape code at end of blob"
                ));
            }
            let code = String::from_utf8_lossy(&bytes[i..i + 4]);
            let hex = std::str::from_utf8(&bytes[i + 2..i + 4])
                .ok()
                .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
            match (
                bytes[i + 1],
                hex.and_then(|h| u8::from_str_radix(h, 16).ok()),
            ) {
                (b'x' | b'X', Some(v)) => out.push(v),
                _ => {
                    return Err(format!(
                        "Invalid hex escape code encountered in string -> blob conversion of string \"{s}\": {code}"
                    ));
                }
            }
            i += 4;
        } else if c.is_ascii() {
            out.push(c);
            i += 1;
        } else {
            return Err(format!(
                "Invalid byte encountered in STRING -> BLOB conversion of string \"{s}\". All non-ascii characters must be escaped with hex codes (e.g. \\xAA)"
            ));
        }
    }
    Ok(out)
}

/// `10^i` for `i` in `0..=38`.
pub const POW10: [i128; 39] = {
    let mut t = [1i128; 39];
    let mut i = 1;
    while i < 39 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

/// `10^i`, or `None` outside `0..=38`.
pub fn pow10(i: i32) -> Option<i128> {
    usize::try_from(i).ok().and_then(|i| POW10.get(i).copied())
}

/// Rescales the unscaled decimal `v` from scale `from` to scale `to`,
/// rounding half away from zero; `None` on overflow.
pub fn rescale(v: i128, from: i8, to: i8) -> Option<i128> {
    let diff = to as i32 - from as i32;
    if diff >= 0 {
        v.checked_mul(pow10(diff)?)
    } else {
        let Some(m) = pow10(-diff) else {
            return Some(0);
        };
        // in 64 bits where both fit (every DECIMAL of up to 18 digits):
        // one hardware division, where 128 bits call two routines
        if let (Ok(v), Ok(m)) = (i64::try_from(v), i64::try_from(m)) {
            return Some(i128::from(divide_rounded(v, m)));
        }
        let q = v / m;
        let r = v % m;
        if r.unsigned_abs() >= (m as u128).div_ceil(2) {
            Some(q + v.signum())
        } else {
            Some(q)
        }
    }
}

/// `v / m` rounded half away from zero (`m` > 0): [`rescale`]'s rule
/// for values of 64 bits.
#[inline]
pub fn divide_rounded(v: i64, m: i64) -> i64 {
    let (q, r) = (v / m, v % m);
    if r.unsigned_abs() >= (m as u64).div_ceil(2) {
        q + v.signum()
    } else {
        q
    }
}

/// True if the unscaled `v` fits `precision` digits.
pub fn fits_precision(v: i128, precision: u8) -> bool {
    match pow10(precision as i32) {
        Some(m) => v.unsigned_abs() < m as u128,
        None => true,
    }
}

/// `[+-]digits[.digits][e[+-]digits]` as an unscaled value at `scale`,
/// rounded half away from zero; `None` if malformed or too large.
pub fn parse_decimal(s: &str, scale: i8) -> Option<i128> {
    let t = s.trim();
    let (neg, t) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let (mant, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], t[i + 1..].parse::<i32>().ok()?),
        None => (t, 0),
    };
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digits = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    // value = digits * 10^(exp - frac.len()); we want it at `scale`
    let shift = scale as i64 + exp as i64 - frac.len() as i64;
    let mut v: i128 = 0;
    let mut round_up = false;
    if shift >= 0 {
        for b in digits.bytes() {
            v = v.checked_mul(10)?.checked_add((b - b'0') as i128)?;
        }
        if v != 0 {
            v = v.checked_mul(pow10(i32::try_from(shift).ok()?)?)?;
        }
    } else {
        let drop = usize::try_from(-shift).ok()?;
        let keep = digits.len().saturating_sub(drop);
        for b in digits[..keep].bytes() {
            v = v.checked_mul(10)?.checked_add((b - b'0') as i128)?;
        }
        if drop <= digits.len() {
            round_up = digits.as_bytes()[keep] >= b'5';
        }
    }
    if round_up {
        v = v.checked_add(1)?;
    }
    Some(if neg { -v } else { v })
}

/// The first DATE Weir represents, -262143-01-01, in days since the
/// epoch: the range every Arrow consumer (chrono) can print. DuckDB's own
/// range is wider; past this one Weir raises "Date out of range".
pub const MIN_DATE: i32 = -96_465_292;
/// The last DATE Weir represents, 262142-12-31, in days since the epoch.
pub const MAX_DATE: i32 = 95_026_236;
/// Microseconds in a day.
pub const MICROS_PER_DAY: i64 = 86_400_000_000;
/// The first TIMESTAMP: -262143-01-01 00:00:00, in microseconds.
pub const MIN_TIMESTAMP: i64 = MIN_DATE as i64 * MICROS_PER_DAY;
/// The last TIMESTAMP: 262142-12-31 23:59:59.999999, in microseconds.
pub const MAX_TIMESTAMP: i64 = (MAX_DATE as i64 + 1) * MICROS_PER_DAY - 1;

/// `days` as a DATE, if within [`MIN_DATE`]..=[`MAX_DATE`].
pub fn checked_date(days: i64) -> Option<i32> {
    (MIN_DATE as i64..=MAX_DATE as i64)
        .contains(&days)
        .then_some(days as i32)
}

/// `micros` as a TIMESTAMP, if within the TIMESTAMP range.
pub fn checked_timestamp(micros: i128) -> Option<i64> {
    (MIN_TIMESTAMP as i128..=MAX_TIMESTAMP as i128)
        .contains(&micros)
        .then_some(micros as i64)
}

/// Formats an unscaled decimal, e.g. `(12345, 2)` as `123.45`.
pub fn format_decimal(value: i128, scale: i8) -> String {
    if scale <= 0 {
        let mut s = value.to_string();
        s.extend(std::iter::repeat_n('0', (-scale) as usize));
        return s;
    }
    let scale = scale as usize;
    let neg = value < 0;
    let digits = value.unsigned_abs().to_string();
    let digits = if digits.len() <= scale {
        format!("{}{}", "0".repeat(scale + 1 - digits.len()), digits)
    } else {
        digits
    };
    let (int, frac) = digits.split_at(digits.len() - scale);
    format!("{}{int}.{frac}", if neg { "-" } else { "" })
}

/// Days since the epoch to `(year, month, day)` (proleptic Gregorian).
pub fn civil_from_days(days: i32) -> (i32, u32, u32) {
    // Howard Hinnant's algorithm.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    ((if m <= 2 { y + 1 } else { y }) as i32, m, d)
}

/// `(year, month, day)` to days since the epoch; `None` if the date does
/// not exist.
pub fn days_from_civil(year: i32, month: u32, day: u32) -> Option<i32> {
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    let y = if month <= 2 { year - 1 } else { year } as i64;
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = month as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    i32::try_from(era * 146_097 + doe - 719_468).ok()
}

/// `days` plus `months` calendar months; a day past the end of the
/// target month becomes its last day (2020-01-31 + 1 month is 2020-02-29).
pub fn add_months(days: i32, months: i32) -> Option<i32> {
    let (y, m, d) = civil_from_days(days);
    let total = y as i64 * 12 + (m as i64 - 1) + months as i64;
    let year = i32::try_from(total.div_euclid(12)).ok()?;
    let month = (total.rem_euclid(12) + 1) as u32;
    days_from_civil(year, month, d.min(days_in_month(year, month)))
}

/// TIMESTAMP `micros` plus an INTERVAL, in range.
pub fn add_interval(micros: i64, months: i32, days: i32, interval_micros: i64) -> Option<i64> {
    let day = micros.div_euclid(MICROS_PER_DAY);
    let tod = micros.rem_euclid(MICROS_PER_DAY);
    let day = add_months(i32::try_from(day).ok()?, months)? as i128 + days as i128;
    checked_timestamp(day * MICROS_PER_DAY as i128 + tod as i128 + interval_micros as i128)
}

/// An INTERVAL as DuckDB prints it: `1 year 2 months 3 days 01:30:00`.
pub fn format_interval(months: i32, days: i32, micros: i64) -> String {
    let mut parts = Vec::new();
    let plural = |n: i64, unit: &str| {
        if n.abs() == 1 {
            format!("{n} {unit}")
        } else {
            format!("{n} {unit}s")
        }
    };
    let (years, months) = (months / 12, months % 12);
    if years != 0 {
        parts.push(plural(years as i64, "year"));
    }
    if months != 0 {
        parts.push(plural(months as i64, "month"));
    }
    if days != 0 {
        parts.push(plural(days as i64, "day"));
    }
    if micros != 0 || parts.is_empty() {
        let sign = if micros < 0 { "-" } else { "" };
        let u = micros.unsigned_abs();
        let (h, rem) = (u / 3_600_000_000, u % 3_600_000_000);
        let (mi, rem) = (rem / 60_000_000, rem % 60_000_000);
        let (sec, us) = (rem / 1_000_000, rem % 1_000_000);
        let frac = if us == 0 {
            String::new()
        } else {
            format!(".{us:06}")
        };
        parts.push(format!("{sign}{h:02}:{mi:02}:{sec:02}{frac}"));
    }
    parts.join(" ")
}

/// Parses an INTERVAL text: `N unit [N unit ...]` (units year, quarter,
/// month, week, day, hour, minute, second, millisecond, microsecond,
/// singular or plural), or a count of `unit` when `unit` is given.
pub fn parse_interval(s: &str, unit: Option<&str>) -> Option<(i32, i32, i64)> {
    let words: Vec<&str> = s.split_whitespace().collect();
    let pairs: Vec<(&str, &str)> = match (unit, words.as_slice()) {
        (Some(u), [n]) => vec![(*n, u)],
        (None, w) if !w.is_empty() && w.len() % 2 == 0 => {
            w.chunks(2).map(|c| (c[0], c[1])).collect()
        }
        _ => return None,
    };
    let (mut months, mut days, mut micros) = (0i64, 0i64, 0i128);
    for (n, u) in pairs {
        let u = u.to_ascii_lowercase();
        let u = u.strip_suffix('s').unwrap_or(&u);
        let whole = |n: &str| n.parse::<i64>().ok();
        match u {
            "year" | "y" | "yr" => months += whole(n)?.checked_mul(12)?,
            "quarter" => months += whole(n)?.checked_mul(3)?,
            "month" | "mon" => months += whole(n)?,
            "week" | "w" => days += whole(n)?.checked_mul(7)?,
            "day" | "d" => days += whole(n)?,
            _ => {
                let per: i128 = match u {
                    "hour" | "h" | "hr" => 3_600_000_000,
                    "minute" | "min" | "m" => 60_000_000,
                    "second" | "sec" => 1_000_000,
                    "millisecond" | "ms" | "msec" => 1_000,
                    "microsecond" | "u" | "usec" => 1,
                    _ => return None,
                };
                let v: f64 = n.parse().ok()?;
                micros += (v * per as f64).round() as i128;
            }
        }
    }
    Some((
        i32::try_from(months).ok()?,
        i32::try_from(days).ok()?,
        i64::try_from(micros).ok()?,
    ))
}

fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        _ => 28,
    }
}

/// Formats days since the epoch as `YYYY-MM-DD`.
pub fn format_date(days: i32) -> String {
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Formats microseconds since the epoch as `YYYY-MM-DD HH:MM:SS[.f]`, the
/// fraction without trailing zeros, as DuckDB.
pub fn format_timestamp(micros: i64) -> String {
    let days = micros.div_euclid(86_400_000_000);
    let rem = micros.rem_euclid(86_400_000_000);
    let (h, rem) = (rem / 3_600_000_000, rem % 3_600_000_000);
    let (mi, rem) = (rem / 60_000_000, rem % 60_000_000);
    let (s, us) = (rem / 1_000_000, rem % 1_000_000);
    let date = format_date(days as i32);
    if us == 0 {
        format!("{date} {h:02}:{mi:02}:{s:02}")
    } else {
        // DuckDB drops the fraction's trailing zeros: `.25`, not `.250000`
        let frac = format!("{us:06}");
        format!(
            "{date} {h:02}:{mi:02}:{s:02}.{}",
            frac.trim_end_matches('0')
        )
    }
}

/// Parses `YYYY-MM-DD` into days since the epoch.
pub fn parse_date(s: &str) -> Option<i32> {
    let s = s.trim();
    let mut parts = s.splitn(3, '-');
    let y: i32 = parts.next()?.parse().ok()?;
    let m: u32 = parts.next()?.parse().ok()?;
    let d: u32 = parts.next()?.parse().ok()?;
    checked_date(days_from_civil(y, m, d)? as i64)
}

/// Parses `YYYY-MM-DD[ |T]HH:MM:SS[.fraction]` (or a bare date) into
/// microseconds since the epoch.
pub fn parse_timestamp(s: &str) -> Option<i64> {
    let s = s.trim();
    let (date, time) = match s.find([' ', 'T']) {
        Some(i) => (&s[..i], s[i + 1..].trim()),
        None => (s, ""),
    };
    let days = parse_date(date)? as i64;
    let mut micros = days * 86_400_000_000;
    if !time.is_empty() {
        let (hms, frac) = match time.split_once('.') {
            Some((a, b)) => (a, b),
            None => (time, ""),
        };
        let mut it = hms.split(':');
        let h: i64 = it.next()?.parse().ok()?;
        let mi: i64 = it.next()?.parse().ok()?;
        let sec: i64 = it.next().unwrap_or("0").parse().ok()?;
        if it.next().is_some() || h > 23 || mi > 59 || sec > 59 {
            return None;
        }
        if frac.len() > 9 || !frac.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let mut us: i64 = 0;
        for (i, c) in frac.chars().take(6).enumerate() {
            us += (c as i64 - '0' as i64) * 10_i64.pow(5 - i as u32);
        }
        micros += h * 3_600_000_000 + mi * 60_000_000 + sec * 1_000_000 + us;
    }
    checked_timestamp(micros as i128)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip() {
        for (s, days) in [
            ("1970-01-01", 0),
            ("1994-01-01", 8766),
            ("2000-02-29", 11016),
            ("1969-12-31", -1),
        ] {
            assert_eq!(parse_date(s), Some(days), "{s}");
            assert_eq!(format_date(days), s);
        }
        assert_eq!(parse_date("1995-02-29"), None);
        assert_eq!(parse_date("1995-13-01"), None);
        assert_eq!(parse_date("262142-12-31"), Some(MAX_DATE));
        assert_eq!(parse_date("262143-01-01"), None);
    }

    #[test]
    fn timestamps_parse() {
        assert_eq!(parse_timestamp("1970-01-01 00:00:01.5"), Some(1_500_000));
        assert_eq!(format_timestamp(1_500_000), "1970-01-01 00:00:01.5");
        assert_eq!(format_timestamp(1_000_100), "1970-01-01 00:00:01.0001");
        assert_eq!(parse_timestamp("1970-01-02"), Some(86_400_000_000));
        assert_eq!(parse_timestamp("1970-01-01 25:00:00"), None);
    }

    #[test]
    fn decimals_format() {
        assert_eq!(format_decimal(12345, 2), "123.45");
        assert_eq!(format_decimal(-5, 2), "-0.05");
        assert_eq!(format_decimal(7, 0), "7");
    }

    #[test]
    fn decimals_parse_and_rescale() {
        assert_eq!(parse_decimal("1.25", 1), Some(13));
        assert_eq!(parse_decimal("-1.25", 1), Some(-13));
        assert_eq!(parse_decimal("1e3", 0), Some(1000));
        assert_eq!(parse_decimal("15e-1", 0), Some(2));
        assert_eq!(parse_decimal("x", 0), None);
        assert_eq!(rescale(-150, 2, 0), Some(-2));
        assert_eq!(rescale(1, 0, 39), None);
        assert!(fits_precision(999, 3) && !fits_precision(1000, 3));
    }

    #[test]
    fn rescaling_down_rounds_half_away_from_zero_in_64_and_128_bits() {
        // the 128-bit rule, written out: the 64-bit path must agree
        let reference = |v: i128, m: i128| {
            let (q, r) = (v / m, v % m);
            if 2 * r.abs() >= m { q + v.signum() } else { q }
        };
        for from in 1..=20i8 {
            let m = pow10(i32::from(from)).unwrap();
            let mut values = vec![0, 1, -1, i128::from(i64::MAX), i128::from(i64::MIN)];
            for k in [1i128, 7, 1_000_003] {
                for edge in [m / 2 - 1, m / 2, m / 2 + 1, m - 1, m, 3 * m / 2] {
                    values.extend([k * edge, -k * edge]);
                }
            }
            // past 64 bits: the 128-bit path
            values.extend([i128::from(i64::MAX) + 1, i128::from(i64::MIN) - 1, 1 << 100]);
            for v in values {
                assert_eq!(
                    rescale(v, from, 0),
                    Some(reference(v, m)),
                    "{v} at scale {from}"
                );
            }
        }
        assert_eq!(rescale(25, 1, 0), Some(3));
        assert_eq!(rescale(-25, 1, 0), Some(-3));
        assert_eq!(rescale(24, 1, 0), Some(2));
        assert_eq!(
            rescale(i128::from(i64::MIN), 1, 0),
            Some(i128::from(i64::MIN / 10) - 1)
        );
    }
}
