//! Regular expression functions: regexp_matches, regexp_full_match,
//! regexp_extract, regexp_replace, with RE2's options and replacement
//! syntax as DuckDB. A pattern is compiled once per thread (a small cache
//! keyed by pattern and options), so a constant pattern is compiled once
//! however many morsels run it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanBuilder, StringBuilder};
use arrow::datatypes::{DataType, Int64Type};
use regex::{Regex, RegexBuilder};
use weir_planner::ScalarFunction as F;

use super::like::{text_at, utf8_arguments};
use super::{EvalError, Result, Value};

/// The patterns a thread keeps compiled.
const CACHE_SIZE: usize = 64;

thread_local! {
    static CACHE: RefCell<HashMap<(String, Flags), Regex>> = RefCell::new(HashMap::new());
}

/// The options of a call, from its options string.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
struct Flags {
    case_insensitive: bool,
    dot_matches_newline: bool,
    literal: bool,
    global: bool,
}

impl Flags {
    fn parse(func: F, options: Option<&str>) -> Result<Self> {
        let mut f = Flags::default();
        for c in options.unwrap_or("").chars() {
            match c {
                'c' => f.case_insensitive = false,
                'i' => f.case_insensitive = true,
                'l' => f.literal = true,
                'm' | 'n' | 'p' => f.dot_matches_newline = false,
                's' => f.dot_matches_newline = true,
                'g' if func == F::RegexpReplace => f.global = true,
                'g' => {
                    return Err(EvalError::InvalidInput(
                        "Option 'g' (global replace) is only valid for regexp_replace".into(),
                    ));
                }
                other => {
                    return Err(EvalError::InvalidInput(format!(
                        "Unrecognized Regex option {other}"
                    )));
                }
            }
        }
        Ok(f)
    }
}

/// `pattern` compiled with `flags` (whole-string for full matches), from
/// the thread's cache.
fn compiled(pattern: &str, flags: Flags, full: bool) -> Result<Regex> {
    let source = match (flags.literal, full) {
        (true, false) => regex::escape(pattern),
        (true, true) => format!("^(?:{})$", regex::escape(pattern)),
        (false, false) => pattern.to_string(),
        (false, true) => format!("^(?:{pattern})$"),
    };
    CACHE.with(|cache| {
        let key = (source, flags);
        if let Some(r) = cache.borrow().get(&key) {
            return Ok(r.clone());
        }
        let r = RegexBuilder::new(&key.0)
            .case_insensitive(flags.case_insensitive)
            .dot_matches_new_line(flags.dot_matches_newline)
            .build()
            .map_err(|e| {
                // the syntax error's own line, without the pattern excerpt
                let text = e.to_string();
                let why = text
                    .lines()
                    .find_map(|l| l.trim().strip_prefix("error: "))
                    .unwrap_or(&text)
                    .to_string();
                EvalError::InvalidInput(format!("invalid regular expression '{pattern}': {why}"))
            })?;
        let mut cache = cache.borrow_mut();
        if cache.len() >= CACHE_SIZE {
            cache.clear();
        }
        cache.insert(key, r.clone());
        Ok(r)
    })
}

/// RE2's replacement syntax (`\0`..`\9` name groups, `\\` a backslash)
/// in the `regex` crate's (`${1}`, `$$`); an error if it names a group
/// the pattern lacks.
fn replacement(rewrite: &str, groups: usize) -> Result<String> {
    let mut out = String::with_capacity(rewrite.len());
    let mut chars = rewrite.chars();
    while let Some(c) = chars.next() {
        match c {
            '$' => out.push_str("$$"),
            '\\' => match chars.next() {
                Some(d @ '0'..='9') => {
                    let n = d as usize - '0' as usize;
                    if n >= groups {
                        return Err(EvalError::InvalidInput(format!(
                            "Invalid replacement string for regexp_replace: Rewrite schema requests {n} matches, but the regexp only has {} parenthesized subexpressions.",
                            groups - 1
                        )));
                    }
                    out.push_str(&format!("${{{n}}}"));
                }
                Some('\\') => out.push('\\'),
                _ => {
                    return Err(EvalError::InvalidInput(format!(
                        "Invalid replacement string for regexp_replace: invalid rewrite pattern: {rewrite}"
                    )));
                }
            },
            c => out.push(c),
        }
    }
    Ok(out)
}

/// `s GLOB pattern` over evaluated VARCHAR arguments: each distinct
/// pattern of the batch translated ([`glob_regex`]) and compiled once (the
/// thread's cache keeps them across batches), matched against the whole
/// string; NULL in, NULL out.
pub(crate) fn eval_glob(args: &[Value]) -> Result<Value> {
    let scalar = args.iter().all(Value::is_scalar);
    let (n, arrays) = utf8_arguments(args)?;
    let [s, p] = [0, 1].map(|k| (arrays[k].as_string::<i32>(), args[k].is_scalar()));
    let mut patterns: HashMap<&str, Regex> = HashMap::new();
    let mut out = BooleanBuilder::with_capacity(n);
    for i in 0..n {
        let (Some(s), Some(p)) = (text_at(s, i), text_at(p, i)) else {
            out.append_null();
            continue;
        };
        let r = match patterns.get(p) {
            Some(r) => r,
            None => {
                if patterns.len() >= CACHE_SIZE {
                    patterns.clear();
                }
                let r = compiled(&glob_regex(p), Flags::default(), true)?;
                patterns.entry(p).or_insert(r)
            }
        };
        out.append_value(r.is_match(s));
    }
    Ok(Value::wrap(Arc::new(out.finish()), scalar))
}

/// The regular expression (matched against the whole string) of shell
/// pattern `p`, as DuckDB's GLOB reads it: `*` any run, `?` one
/// character, `[abc]`, `[a-z]` and `[!abc]` one character of a set (a `]`
/// first in the set is one of its characters; an unclosed `[` is itself),
/// `\` before a character that character itself.
fn glob_regex(p: &str) -> String {
    let chars: Vec<char> = p.chars().collect();
    let mut out = String::from("(?s)");
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '*' => out.push_str(".*"),
            '?' => out.push('.'),
            '\\' if i + 1 < chars.len() => {
                i += 1;
                out.push_str(&regex_syntax_escape(chars[i]));
            }
            '[' => {
                let mut j = i + 1;
                let negated = chars.get(j) == Some(&'!');
                if negated {
                    j += 1;
                }
                // a `]` first in the set is one of its characters
                let first = j;
                while j < chars.len() && (chars[j] != ']' || j == first) {
                    j += 1;
                }
                if j >= chars.len() {
                    out.push_str("\\[");
                } else {
                    out.push('[');
                    if negated {
                        out.push('^');
                    }
                    for &c in &chars[first..j] {
                        match c {
                            '-' => out.push('-'),
                            c => out.push_str(&regex_syntax_escape(c)),
                        }
                    }
                    out.push(']');
                    i = j;
                }
            }
            c => out.push_str(&regex_syntax_escape(c)),
        }
        i += 1;
    }
    out
}

/// `c` escaped where a regular expression gives it a meaning.
fn regex_syntax_escape(c: char) -> String {
    regex::escape(c.encode_utf8(&mut [0; 4]))
}

/// Evaluates regular expression function `func` over its evaluated
/// arguments (VARCHAR, and a BIGINT group for regexp_extract).
pub(crate) fn eval_regex(func: F, args: &[Value]) -> Result<Value> {
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
        let a = arrays.get(k)?;
        match a.data_type() {
            DataType::Utf8 if a.is_valid(i) => Some(a.as_string::<i32>().value(i)),
            _ => None,
        }
    };
    let group = |i: usize| -> Option<i64> {
        let a = arrays.get(2)?;
        match a.data_type() {
            DataType::Int64 if a.is_valid(i) => Some(a.as_primitive::<Int64Type>().value(i)),
            _ => None,
        }
    };
    let options_at = if func == F::RegexpReplace { 3 } else { 2 };
    let has_options = func != F::RegexpExtract && arrays.len() > options_at;
    let out: ArrayRef = match func {
        F::RegexpMatches | F::RegexpFullMatch => {
            let mut b = BooleanBuilder::with_capacity(n);
            for i in 0..n {
                let options = if has_options {
                    match text(options_at, i) {
                        Some(o) => Some(o),
                        None => {
                            b.append_null();
                            continue;
                        }
                    }
                } else {
                    None
                };
                let (Some(s), Some(p)) = (text(0, i), text(1, i)) else {
                    b.append_null();
                    continue;
                };
                let flags = Flags::parse(func, options)?;
                let r = compiled(p, flags, func == F::RegexpFullMatch)?;
                b.append_value(r.is_match(s));
            }
            Arc::new(b.finish())
        }
        F::RegexpExtract => {
            let mut b = StringBuilder::with_capacity(n, n * 8);
            for i in 0..n {
                // a NULL group extracts nothing, as DuckDB
                let g = if arrays.len() > 2 {
                    match group(i) {
                        Some(g) => g,
                        None => {
                            b.append_value("");
                            continue;
                        }
                    }
                } else {
                    0
                };
                if !(0..=9).contains(&g) {
                    return Err(EvalError::InvalidInput(
                        "Group index must be between 0 and 9!".into(),
                    ));
                }
                let (Some(s), Some(p)) = (text(0, i), text(1, i)) else {
                    b.append_null();
                    continue;
                };
                let r = compiled(p, Flags::default(), false)?;
                let found = r
                    .captures(s)
                    .and_then(|c| c.get(g as usize))
                    .map_or("", |m| m.as_str());
                b.append_value(found);
            }
            Arc::new(b.finish())
        }
        F::RegexpReplace => {
            let mut b = StringBuilder::with_capacity(n, n * 8);
            for i in 0..n {
                let options = if has_options {
                    match text(options_at, i) {
                        Some(o) => Some(o),
                        None => {
                            b.append_null();
                            continue;
                        }
                    }
                } else {
                    None
                };
                let (Some(s), Some(p), Some(with)) = (text(0, i), text(1, i), text(2, i)) else {
                    b.append_null();
                    continue;
                };
                let flags = Flags::parse(func, options)?;
                let r = compiled(p, flags, false)?;
                let with = replacement(with, r.captures_len())?;
                let replaced = if flags.global {
                    r.replace_all(s, with.as_str())
                } else {
                    r.replace(s, with.as_str())
                };
                b.append_value(replaced);
            }
            Arc::new(b.finish())
        }
        other => {
            return Err(EvalError::Unsupported(format!(
                "{} is not a regular expression function",
                other.name()
            )));
        }
    };
    Ok(Value::wrap(out, scalar))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replacements_translate_re2_syntax() {
        assert_eq!(replacement(r"<\1>", 2).unwrap(), "<${1}>");
        assert_eq!(replacement(r"$0\\", 1).unwrap(), "$$0\\");
        assert!(replacement(r"\2", 2).is_err());
    }

    #[test]
    fn patterns_are_cached_per_thread() {
        let a = compiled("a+", Flags::default(), false).unwrap();
        let b = compiled("a+", Flags::default(), false).unwrap();
        assert_eq!(a.as_str(), b.as_str());
        assert!(compiled("(", Flags::default(), false).is_err());
    }
}
