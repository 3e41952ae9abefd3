//! String functions of the registry: concat, concat_ws, strpos, replace,
//! trim, left/right, lpad/rpad, reverse, repeat, starts_with, ends_with,
//! contains. Arguments arrive as VARCHAR and BIGINT (the planner casts
//! them); each is a full array or a one-row constant.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanBuilder, Int32Builder, Int64Array, Int64Builder, StringArray,
    StringBuilder,
};
use arrow::datatypes::{DataType, Int64Type};
use weir_planner::ScalarFunction as F;

use super::{EvalError, Result, Value};

/// The largest string a function may build, as DuckDB.
const MAX_STRING: u64 = u32::MAX as u64;

/// One argument, read row by row.
enum Arg<'a> {
    Str(&'a StringArray),
    Int(&'a Int64Array),
    Null,
}

impl Arg<'_> {
    fn str(&self, i: usize) -> Option<&str> {
        match self {
            Arg::Str(a) if a.is_valid(i) => Some(a.value(i)),
            _ => None,
        }
    }

    fn int(&self, i: usize) -> Option<i64> {
        match self {
            Arg::Int(a) if a.is_valid(i) => Some(a.value(i)),
            _ => None,
        }
    }
}

/// Evaluates string function `func` over its evaluated arguments.
pub(crate) fn eval_text(func: F, args: &[Value]) -> Result<Value> {
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
    let cols: Vec<Arg<'_>> = arrays
        .iter()
        .map(|a| match a.data_type() {
            DataType::Utf8 => Arg::Str(a.as_string::<i32>()),
            DataType::Int64 => Arg::Int(a.as_primitive::<Int64Type>()),
            _ => Arg::Null,
        })
        .collect();
    let out: ArrayRef = match func {
        F::Strpos => {
            let mut b = Int64Builder::with_capacity(n);
            for i in 0..n {
                b.append_option(match (cols[0].str(i), cols[1].str(i)) {
                    (Some(s), Some(sub)) => Some(match s.find(sub) {
                        Some(at) => s[..at].chars().count() as i64 + 1,
                        None => 0,
                    }),
                    _ => None,
                });
            }
            Arc::new(b.finish())
        }
        F::StartsWith | F::EndsWith | F::Contains => {
            let mut b = BooleanBuilder::with_capacity(n);
            for i in 0..n {
                b.append_option(match (cols[0].str(i), cols[1].str(i)) {
                    (Some(s), Some(t)) => Some(match func {
                        F::StartsWith => s.starts_with(t),
                        F::EndsWith => s.ends_with(t),
                        _ => s.contains(t),
                    }),
                    _ => None,
                });
            }
            Arc::new(b.finish())
        }
        F::Levenshtein => {
            let mut b = Int64Builder::with_capacity(n);
            for i in 0..n {
                b.append_option(match (cols[0].str(i), cols[1].str(i)) {
                    (Some(x), Some(y)) => Some(levenshtein(x, y)),
                    _ => None,
                });
            }
            Arc::new(b.finish())
        }
        F::Ascii => {
            let mut b = Int32Builder::with_capacity(n);
            for i in 0..n {
                b.append_option(
                    cols[0]
                        .str(i)
                        .map(|x| x.chars().next().map_or(0, |c| c as i32)),
                );
            }
            Arc::new(b.finish())
        }
        _ => {
            let mut b = StringBuilder::with_capacity(n, n * 8);
            let mut buf = String::new();
            for i in 0..n {
                buf.clear();
                if string_row(func, &cols, i, &mut buf)? {
                    b.append_value(&buf);
                } else {
                    b.append_null();
                }
            }
            Arc::new(b.finish())
        }
    };
    Ok(Value::wrap(out, scalar))
}

/// Writes row `i` of a VARCHAR-valued function into `out`; false for NULL.
fn string_row(func: F, cols: &[Arg<'_>], i: usize, out: &mut String) -> Result<bool> {
    let s = |k: usize| cols.get(k).and_then(|c| c.str(i));
    let int = |k: usize| cols.get(k).and_then(|c| c.int(i));
    match func {
        F::Concat => {
            for c in cols {
                out.push_str(c.str(i).unwrap_or(""));
            }
        }
        F::ConcatWs => {
            let Some(sep) = s(0) else { return Ok(false) };
            let mut first = true;
            for c in &cols[1..] {
                if let Some(v) = c.str(i) {
                    if !first {
                        out.push_str(sep);
                    }
                    out.push_str(v);
                    first = false;
                }
            }
        }
        F::Replace => {
            let (Some(x), Some(from), Some(to)) = (s(0), s(1), s(2)) else {
                return Ok(false);
            };
            if from.is_empty() {
                out.push_str(x);
            } else {
                out.push_str(&x.replace(from, to));
            }
        }
        F::Trim | F::Ltrim | F::Rtrim => {
            let Some(x) = s(0) else { return Ok(false) };
            let chars: Vec<char> = match cols.get(1) {
                Some(c) => match c.str(i) {
                    Some(set) => set.chars().collect(),
                    None => return Ok(false),
                },
                None => vec![' '],
            };
            let strip = |c: char| chars.contains(&c);
            out.push_str(match func {
                F::Trim => x.trim_matches(strip),
                F::Ltrim => x.trim_start_matches(strip),
                _ => x.trim_end_matches(strip),
            });
        }
        F::Left | F::Right => {
            let (Some(x), Some(k)) = (s(0), int(1)) else {
                return Ok(false);
            };
            let len = x.chars().count() as i64;
            // a negative count keeps all but that many characters
            let take = if k >= 0 { k.min(len) } else { (len + k).max(0) };
            if func == F::Left {
                out.extend(x.chars().take(take as usize));
            } else {
                out.extend(x.chars().skip((len - take) as usize));
            }
        }
        F::Lpad | F::Rpad => {
            let (Some(x), Some(k), Some(pad)) = (s(0), int(1), s(2)) else {
                return Ok(false);
            };
            let k = k.max(0) as u64;
            if k > MAX_STRING {
                return Err(too_long(k));
            }
            let len = x.chars().count() as u64;
            if k <= len {
                out.extend(x.chars().take(k as usize));
                return Ok(true);
            }
            if pad.is_empty() {
                return Err(EvalError::InvalidInput(format!(
                    "Insufficient padding in {}.",
                    func.name().to_ascii_uppercase()
                )));
            }
            let fill: String = pad.chars().cycle().take((k - len) as usize).collect();
            if func == F::Lpad {
                out.push_str(&fill);
                out.push_str(x);
            } else {
                out.push_str(x);
                out.push_str(&fill);
            }
        }
        F::Reverse => {
            let Some(x) = s(0) else { return Ok(false) };
            out.extend(x.chars().rev());
        }
        F::Repeat => {
            let (Some(x), Some(k)) = (s(0), int(1)) else {
                return Ok(false);
            };
            let k = k.max(0) as u64;
            let size = (x.len() as u64).saturating_mul(k);
            if size > MAX_STRING {
                return Err(too_long(size));
            }
            out.push_str(&x.repeat(k as usize));
        }
        F::Md5 => {
            use md5::{Digest, Md5};
            use std::fmt::Write;
            let Some(x) = s(0) else { return Ok(false) };
            for byte in Md5::digest(x.as_bytes()) {
                let _ = write!(out, "{byte:02x}");
            }
        }
        F::SplitPart => {
            let (Some(x), Some(sep), Some(k)) = (s(0), s(1), int(2)) else {
                return Ok(false);
            };
            // an empty separator splits into characters, as DuckDB
            let parts: Vec<&str> = if sep.is_empty() {
                x.char_indices()
                    .map(|(at, c)| &x[at..at + c.len_utf8()])
                    .collect()
            } else {
                x.split(sep).collect()
            };
            let part = match k {
                0 => None,
                k if k > 0 => parts.get(k as usize - 1),
                k => (parts.len() as i64 + k)
                    .try_into()
                    .ok()
                    .and_then(|at: usize| parts.get(at)),
            };
            out.push_str(part.copied().unwrap_or(""));
        }
        F::Chr => {
            let Some(k) = int(0) else { return Ok(false) };
            let c = u32::try_from(k)
                .ok()
                .and_then(char::from_u32)
                .ok_or_else(|| EvalError::InvalidInput(format!("Invalid UTF8 Codepoint {k}")))?;
            out.push(c);
        }
        F::Translate => {
            let (Some(x), Some(from), Some(to)) = (s(0), s(1), s(2)) else {
                return Ok(false);
            };
            let from: Vec<char> = from.chars().collect();
            let to: Vec<char> = to.chars().collect();
            for c in x.chars() {
                match from.iter().position(|f| *f == c) {
                    Some(k) => out.extend(to.get(k)),
                    None => out.push(c),
                }
            }
        }
        other => {
            return Err(EvalError::Unsupported(format!(
                "{} is not a string function",
                other.name()
            )));
        }
    }
    Ok(true)
}

fn too_long(size: u64) -> EvalError {
    EvalError::OutOfRange(format!(
        "Cannot create a string of size: '{size}', the maximum supported string size is: '{MAX_STRING}'"
    ))
}

/// The Levenshtein distance between two strings, in bytes, as DuckDB
/// (`levenshtein('héllo', 'hello')` is 2).
fn levenshtein(a: &str, b: &str) -> i64 {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != cb))
                .min(above + 1)
                .min(row[j] + 1);
            diagonal = above;
        }
    }
    row[b.len()] as i64
}
