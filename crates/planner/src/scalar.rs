//! Constant values.

use std::fmt;

use arrow_schema::{DataType, TimeUnit};

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
    /// DOUBLE
    Float64(f64),
    /// DECIMAL(precision, scale): the unscaled value.
    Decimal128(i128, u8, i8),
    /// VARCHAR
    Utf8(String),
    /// DATE: days since 1970-01-01.
    Date32(i32),
    /// TIMESTAMP: microseconds since 1970-01-01 00:00:00, no time zone.
    TimestampMicros(i64),
}

impl ScalarValue {
    /// The value's type.
    pub fn data_type(&self) -> DataType {
        match self {
            Self::Null(t) => t.clone(),
            Self::Boolean(_) => DataType::Boolean,
            Self::Int32(_) => DataType::Int32,
            Self::Int64(_) => DataType::Int64,
            Self::Float64(_) => DataType::Float64,
            Self::Decimal128(_, p, s) => DataType::Decimal128(*p, *s),
            Self::Utf8(_) => DataType::Utf8,
            Self::Date32(_) => DataType::Date32,
            Self::TimestampMicros(_) => DataType::Timestamp(TimeUnit::Microsecond, None),
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
            Self::Float64(v) => write!(f, "{v:?}"),
            Self::Decimal128(v, _, s) => write!(f, "{}", format_decimal(*v, *s)),
            Self::Utf8(s) => write!(f, "'{}'", s.replace('\'', "''")),
            Self::Date32(d) => write!(f, "DATE '{}'", format_date(*d)),
            Self::TimestampMicros(t) => write!(f, "TIMESTAMP '{}'", format_timestamp(*t)),
        }
    }
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

/// Formats microseconds since the epoch as `YYYY-MM-DD HH:MM:SS[.ffffff]`.
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
        format!("{date} {h:02}:{mi:02}:{s:02}.{us:06}")
    }
}

/// Parses `YYYY-MM-DD` into days since the epoch.
pub fn parse_date(s: &str) -> Option<i32> {
    let s = s.trim();
    let mut parts = s.splitn(3, '-');
    let y: i32 = parts.next()?.parse().ok()?;
    let m: u32 = parts.next()?.parse().ok()?;
    let d: u32 = parts.next()?.parse().ok()?;
    days_from_civil(y, m, d)
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
    Some(micros)
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
    }

    #[test]
    fn timestamps_parse() {
        assert_eq!(parse_timestamp("1970-01-01 00:00:01.5"), Some(1_500_000));
        assert_eq!(format_timestamp(1_500_000), "1970-01-01 00:00:01.500000");
        assert_eq!(parse_timestamp("1970-01-02"), Some(86_400_000_000));
        assert_eq!(parse_timestamp("1970-01-01 25:00:00"), None);
    }

    #[test]
    fn decimals_format() {
        assert_eq!(format_decimal(12345, 2), "123.45");
        assert_eq!(format_decimal(-5, 2), "-0.05");
        assert_eq!(format_decimal(7, 0), "7");
    }
}
