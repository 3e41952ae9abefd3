//! `printf` (C's `%` specifiers) and `format` (`{}` specifiers), as DuckDB
//! (which formats with the fmt library): a NULL argument gives NULL, and a
//! specifier must suit its value's type (`%d` takes integers, `%f` numbers
//! with a fraction, `%s` strings, dates and timestamps).

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, StringBuilder};
use arrow::datatypes::{DataType, Decimal128Type, Float64Type, Int32Type, Int64Type};
use weir_planner::ScalarFunction as F;

use super::cast::cast_array;
use super::{EvalError, Result, Value};

/// One argument's value in a row.
enum Cell<'a> {
    Int(i64),
    Float(f64),
    Str(&'a str),
}

impl Cell<'_> {
    fn kind(&self) -> &'static str {
        match self {
            Cell::Int(_) => "int",
            Cell::Float(_) => "float",
            Cell::Str(_) => "string",
        }
    }
}

/// An argument column, read row by row.
enum Column {
    Int(ArrayRef),
    Float(ArrayRef),
    Str(ArrayRef),
}

impl Column {
    fn new(a: ArrayRef) -> Result<Self> {
        Ok(match a.data_type() {
            DataType::Int32 | DataType::Int64 => Column::Int(a),
            t if weir_planner::types::is_integer(t) => {
                Column::Int(cast_array(&a, &DataType::Int64)?)
            }
            DataType::Float32 => Column::Float(cast_array(&a, &DataType::Float64)?),
            DataType::Float64 | DataType::Decimal128(..) => Column::Float(a),
            _ => Column::Str(cast_array(&a, &DataType::Utf8)?),
        })
    }

    fn get(&self, i: usize) -> Option<Cell<'_>> {
        let a = match self {
            Column::Int(a) | Column::Float(a) | Column::Str(a) => a,
        };
        if a.is_null(i) {
            return None;
        }
        Some(match (self, a.data_type()) {
            (_, DataType::Int32) => Cell::Int(a.as_primitive::<Int32Type>().value(i) as i64),
            (_, DataType::Int64) => Cell::Int(a.as_primitive::<Int64Type>().value(i)),
            (_, DataType::Float64) => Cell::Float(a.as_primitive::<Float64Type>().value(i)),
            (_, DataType::Decimal128(_, s)) => {
                let v = a.as_primitive::<Decimal128Type>().value(i);
                Cell::Float(v as f64 / 10f64.powi(*s as i32))
            }
            _ => Cell::Str(a.as_string::<i32>().value(i)),
        })
    }
}

/// A parsed specifier.
#[derive(Clone, Copy, Debug, Default)]
struct Spec {
    /// `<`, `>` or `^`; `None` for the type's default.
    align: Option<char>,
    fill: Option<char>,
    plus: bool,
    space: bool,
    zero: bool,
    width: usize,
    comma: bool,
    precision: Option<usize>,
    /// The conversion letter; `None` for `{}`.
    conv: Option<char>,
}

/// A piece of a format string.
enum Piece {
    Text(String),
    Arg(usize, Spec),
}

fn bad_format(fmt: &str, why: &str) -> EvalError {
    EvalError::InvalidInput(format!("Invalid format string \"{fmt}\": {why}"))
}

fn parse_printf(fmt: &str) -> Result<Vec<Piece>> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut chars = fmt.chars().peekable();
    let mut next_arg = 0;
    while let Some(c) = chars.next() {
        if c != '%' {
            text.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            text.push('%');
            continue;
        }
        // C right-aligns every value unless `-` says otherwise
        let mut spec = Spec {
            align: Some('>'),
            ..Spec::default()
        };
        while let Some(&f) = chars.peek() {
            match f {
                '-' => spec.align = Some('<'),
                '+' => spec.plus = true,
                ' ' => spec.space = true,
                '0' => spec.zero = true,
                ',' | '\'' => spec.comma = true,
                '#' => {}
                _ => break,
            }
            chars.next();
        }
        while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
            spec.width = spec.width * 10 + d as usize;
            chars.next();
        }
        if chars.peek() == Some(&'.') {
            chars.next();
            let mut p = 0;
            while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
                p = p * 10 + d as usize;
                chars.next();
            }
            spec.precision = Some(p);
        }
        // length modifiers mean nothing here
        while matches!(chars.peek(), Some('l' | 'h' | 'L' | 'q' | 'j' | 'z' | 't')) {
            chars.next();
        }
        match chars.next() {
            Some(
                conv @ ('d' | 'i' | 'u' | 'x' | 'X' | 'o' | 'c' | 'f' | 'F' | 'e' | 'E' | 'g' | 'G'
                | 's'),
            ) => {
                spec.conv = Some(if matches!(conv, 'i' | 'u') { 'd' } else { conv });
            }
            Some(other) => return Err(bad_format(fmt, &format!("unknown specifier %{other}"))),
            None => return Err(bad_format(fmt, "it ends inside a specifier")),
        }
        if !text.is_empty() {
            out.push(Piece::Text(std::mem::take(&mut text)));
        }
        out.push(Piece::Arg(next_arg, spec));
        next_arg += 1;
    }
    if !text.is_empty() {
        out.push(Piece::Text(text));
    }
    Ok(out)
}

fn parse_braces(fmt: &str) -> Result<Vec<Piece>> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut chars = fmt.chars().peekable();
    let mut next_arg = 0;
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                text.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                text.push('}');
            }
            '}' => return Err(bad_format(fmt, "unmatched '}'")),
            '{' => {
                let mut inner = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(c) => inner.push(c),
                        None => return Err(bad_format(fmt, "unmatched '{'")),
                    }
                }
                let (index, spec) = match inner.split_once(':') {
                    Some((i, s)) => (i, s),
                    None => (inner.as_str(), ""),
                };
                let index = if index.is_empty() {
                    let i = next_arg;
                    next_arg += 1;
                    i
                } else {
                    index
                        .trim()
                        .parse()
                        .map_err(|_| bad_format(fmt, &format!("bad argument index {index}")))?
                };
                if !text.is_empty() {
                    out.push(Piece::Text(std::mem::take(&mut text)));
                }
                out.push(Piece::Arg(index, parse_brace_spec(fmt, spec)?));
            }
            c => text.push(c),
        }
    }
    if !text.is_empty() {
        out.push(Piece::Text(text));
    }
    Ok(out)
}

/// `[[fill]align][sign][0][width][,][.precision][type]`
fn parse_brace_spec(fmt: &str, s: &str) -> Result<Spec> {
    let mut spec = Spec::default();
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    let is_align = |c: char| matches!(c, '<' | '>' | '^');
    if chars.len() >= 2 && is_align(chars[1]) {
        spec.fill = Some(chars[0]);
        spec.align = Some(chars[1]);
        i = 2;
    } else if chars.first().is_some_and(|c| is_align(*c)) {
        spec.align = Some(chars[0]);
        i = 1;
    }
    match chars.get(i) {
        Some('+') => {
            spec.plus = true;
            i += 1;
        }
        Some(' ') => {
            spec.space = true;
            i += 1;
        }
        Some('-') => i += 1,
        _ => {}
    }
    if chars.get(i) == Some(&'0') {
        spec.zero = true;
        i += 1;
    }
    while let Some(d) = chars.get(i).and_then(|c| c.to_digit(10)) {
        spec.width = spec.width * 10 + d as usize;
        i += 1;
    }
    if chars.get(i) == Some(&',') {
        spec.comma = true;
        i += 1;
    }
    if chars.get(i) == Some(&'.') {
        i += 1;
        let mut p = 0;
        while let Some(d) = chars.get(i).and_then(|c| c.to_digit(10)) {
            p = p * 10 + d as usize;
            i += 1;
        }
        spec.precision = Some(p);
    }
    match chars.get(i) {
        None => {}
        Some(
            &c @ ('d' | 'x' | 'X' | 'o' | 'b' | 'c' | 'f' | 'F' | 'e' | 'E' | 'g' | 'G' | 's'),
        ) if i + 1 == chars.len() => {
            spec.conv = Some(c);
        }
        Some(_) => return Err(bad_format(fmt, &format!("invalid format specifier {s}"))),
    }
    Ok(spec)
}

fn group_thousands(digits: &str) -> String {
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// C's `%e`: one digit, a fraction of `p` digits, and an exponent of at
/// least two digits with its sign.
fn exp_format(v: f64, p: usize, upper: bool) -> String {
    let s = format!("{v:.p$e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let (sign, exp) = match exp.strip_prefix('-') {
        Some(e) => ('-', e),
        None => ('+', exp),
    };
    let e = if upper { 'E' } else { 'e' };
    format!("{mantissa}{e}{sign}{exp:0>2}")
}

/// C's `%g`: `%e` or `%f` by the exponent, trailing zeros dropped.
fn general_format(v: f64, p: usize, upper: bool) -> String {
    let p = p.max(1);
    if v == 0.0 {
        return "0".into();
    }
    let x = v.abs().log10().floor() as i64;
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if x < -4 || x >= p as i64 {
        let s = exp_format(v, p - 1, upper);
        let e = if upper { 'E' } else { 'e' };
        match s.split_once(e) {
            Some((m, x)) => format!("{}{e}{x}", trim(m.to_string())),
            None => s,
        }
    } else {
        trim(format!("{v:.*}", (p as i64 - 1 - x).max(0) as usize))
    }
}

fn type_error(conv: char, cell: &Cell<'_>) -> EvalError {
    EvalError::InvalidInput(format!(
        "Invalid type specifier \"{conv}\" for formatting a value of type {}",
        cell.kind()
    ))
}

/// Formats one value by its spec into `out`.
fn write_cell(
    out: &mut String,
    cell: &Cell<'_>,
    spec: &Spec,
    plain_float: Option<&str>,
) -> Result<()> {
    let (sign, body, numeric) = match *cell {
        Cell::Int(v) => {
            let digits = match spec.conv {
                None | Some('d') => {
                    let d = v.unsigned_abs().to_string();
                    if spec.comma { group_thousands(&d) } else { d }
                }
                Some('x') => format!("{:x}", v.unsigned_abs()),
                Some('X') => format!("{:X}", v.unsigned_abs()),
                Some('o') => format!("{:o}", v.unsigned_abs()),
                Some('b') => format!("{:b}", v.unsigned_abs()),
                Some('c') => {
                    let c = u32::try_from(v)
                        .ok()
                        .and_then(char::from_u32)
                        .ok_or_else(|| {
                            EvalError::InvalidInput(format!("Invalid UTF8 Codepoint {v}"))
                        })?;
                    c.to_string()
                }
                Some(conv) => return Err(type_error(conv, cell)),
            };
            let sign = if v < 0 { "-" } else { "" };
            (sign, digits, spec.conv != Some('c'))
        }
        Cell::Float(v) => {
            let a = v.abs();
            let body = match spec.conv {
                None => match plain_float {
                    Some(s) => s.trim_start_matches('-').to_string(),
                    None => format!("{a}"),
                },
                Some('f' | 'F') => {
                    let s = format!("{a:.*}", spec.precision.unwrap_or(6));
                    if spec.comma {
                        match s.split_once('.') {
                            Some((i, f)) => format!("{}.{f}", group_thousands(i)),
                            None => group_thousands(&s),
                        }
                    } else {
                        s
                    }
                }
                Some(c @ ('e' | 'E')) => exp_format(a, spec.precision.unwrap_or(6), c == 'E'),
                Some(c @ ('g' | 'G')) => general_format(a, spec.precision.unwrap_or(6), c == 'G'),
                Some(conv) => return Err(type_error(conv, cell)),
            };
            let body = if v.is_nan() {
                "nan".to_string()
            } else if v.is_infinite() {
                "inf".to_string()
            } else {
                body
            };
            let sign = if v.is_sign_negative() && !v.is_nan() {
                "-"
            } else {
                ""
            };
            (sign, body, true)
        }
        Cell::Str(s) => {
            if !matches!(spec.conv, None | Some('s')) {
                return Err(type_error(spec.conv.unwrap_or('s'), cell));
            }
            let body = match spec.precision {
                Some(p) => s.chars().take(p).collect(),
                None => s.to_string(),
            };
            ("", body, false)
        }
    };
    let sign = match sign {
        "" if numeric && spec.plus => "+",
        "" if numeric && spec.space => " ",
        s => s,
    };
    let len = sign.chars().count() + body.chars().count();
    let pad = spec.width.saturating_sub(len);
    let align = spec.align.unwrap_or(if numeric { '>' } else { '<' });
    if pad > 0 && spec.zero && numeric && spec.align != Some('<') && spec.fill.is_none() {
        out.push_str(sign);
        out.extend(std::iter::repeat_n('0', pad));
        out.push_str(&body);
        return Ok(());
    }
    let fill = spec.fill.unwrap_or(' ');
    let (before, after) = match align {
        '<' => (0, pad),
        '^' => (pad / 2, pad - pad / 2),
        _ => (pad, 0),
    };
    out.extend(std::iter::repeat_n(fill, before));
    out.push_str(sign);
    out.push_str(&body);
    out.extend(std::iter::repeat_n(fill, after));
    Ok(())
}

/// Evaluates printf or format over its evaluated arguments: the format
/// string (VARCHAR), then the values in their own types.
pub(crate) fn eval_format(func: F, args: &[Value]) -> Result<Value> {
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
    let fmts = arrays[0].clone();
    if *fmts.data_type() != DataType::Utf8 {
        return Ok(Value::wrap(
            arrow::array::new_null_array(&DataType::Utf8, n),
            scalar,
        ));
    }
    let fmts = fmts.as_string::<i32>();
    let cols = arrays[1..]
        .iter()
        .map(|a| Column::new(a.clone()))
        .collect::<Result<Vec<_>>>()?;
    // DOUBLEs in `{}` print as a cast to VARCHAR does (`2.0`, `1e+20`)
    let plain: Vec<Option<ArrayRef>> = arrays[1..]
        .iter()
        .map(|a| {
            (*a.data_type() == DataType::Float64)
                .then(|| cast_array(a, &DataType::Utf8))
                .transpose()
        })
        .collect::<Result<_>>()?;
    let mut b = StringBuilder::with_capacity(n, n * 16);
    let mut parsed: Option<(String, Vec<Piece>)> = None;
    let mut buf = String::new();
    'rows: for i in 0..n {
        if fmts.is_null(i) {
            b.append_null();
            continue;
        }
        // a NULL argument gives NULL, used by the format or not
        if cols.iter().any(|c| c.get(i).is_none()) {
            b.append_null();
            continue;
        }
        let fmt = fmts.value(i);
        if parsed.as_ref().is_none_or(|(f, _)| f != fmt) {
            let pieces = if func == F::Printf {
                parse_printf(fmt)?
            } else {
                parse_braces(fmt)?
            };
            parsed = Some((fmt.to_string(), pieces));
        }
        let Some((_, pieces)) = parsed.as_ref() else {
            continue;
        };
        buf.clear();
        for piece in pieces {
            match piece {
                Piece::Text(t) => buf.push_str(t),
                Piece::Arg(k, spec) => {
                    let Some(col) = cols.get(*k) else {
                        return Err(EvalError::InvalidInput(format!(
                            "Argument index \"{k}\" out of range"
                        )));
                    };
                    let Some(cell) = col.get(i) else {
                        b.append_null();
                        continue 'rows;
                    };
                    let plain_float = plain[*k].as_ref().map(|a| a.as_string::<i32>().value(i));
                    write_cell(&mut buf, &cell, spec, plain_float)?;
                }
            }
        }
        b.append_value(&buf);
    }
    Ok(Value::wrap(Arc::new(b.finish()), scalar))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_style_floats() {
        assert_eq!(exp_format(12345.678, 6, false), "1.234568e+04");
        assert_eq!(exp_format(0.00012, 2, true), "1.20E-04");
        assert_eq!(general_format(0.0001, 6, false), "0.0001");
        assert_eq!(general_format(1234567.0, 6, false), "1.23457e+06");
        assert_eq!(general_format(100.0, 6, false), "100");
        assert_eq!(group_thousands("1234567"), "1,234,567");
    }
}
