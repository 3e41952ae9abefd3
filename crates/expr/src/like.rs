//! `LIKE` / `ILIKE` with `%`, `_` and an optional escape character.
//!
//! A pattern is compiled once into the cheapest matcher that decides it:
//! equality, prefix, suffix, substring (searched with `memchr::memmem` over
//! the whole values buffer of the array at once), a sequence of `%`-separated
//! literal segments, or, when `_` appears, a backtracking wildcard matcher.
//! Matching works on UTF-8 bytes; `_` consumes one whole character.

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, BooleanBuilder, StringArray, new_null_array,
};
use arrow::buffer::{BooleanBuffer, MutableBuffer};
use arrow::datatypes::DataType;
use arrow::util::bit_util;
use memchr::memmem::Finder;

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use super::cast::cast_array;
use super::{EvalError, Result, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tok {
    Lit(u8),
    One,
    Many,
}

enum Matcher {
    /// `%` only: every non-NULL string.
    All,
    Exact(Vec<u8>),
    Prefix(Vec<u8>),
    Suffix(Vec<u8>),
    Contains(Box<Finder<'static>>),
    /// `[prefix]%seg%seg%[suffix]` without `_`.
    Segments {
        prefix: Option<Vec<u8>>,
        middle: Vec<Finder<'static>>,
        suffix: Option<Vec<u8>>,
    },
    General(Vec<Tok>),
}

/// A compiled `LIKE` pattern.
pub(crate) struct Like {
    matcher: Matcher,
    case_insensitive: bool,
}

impl Like {
    /// Compiles `pattern`; an escape character at the end of the pattern is
    /// an error, as in DuckDB.
    pub(crate) fn new(pattern: &str, case_insensitive: bool, escape: Option<char>) -> Result<Self> {
        let mut toks = Vec::new();
        let mut chars = pattern.chars();
        let mut buf = [0u8; 4];
        let mut push_lit = |c: char, toks: &mut Vec<Tok>| {
            if case_insensitive {
                for l in c.to_lowercase() {
                    toks.extend(l.encode_utf8(&mut buf).bytes().map(Tok::Lit));
                }
            } else {
                toks.extend(c.encode_utf8(&mut buf).bytes().map(Tok::Lit));
            }
        };
        while let Some(c) = chars.next() {
            if Some(c) == escape {
                match chars.next() {
                    Some(n) => push_lit(n, &mut toks),
                    None => {
                        return Err(EvalError::InvalidInput(
                            "Like pattern must not end with escape character!".into(),
                        ));
                    }
                }
            } else if c == '%' {
                if toks.last() != Some(&Tok::Many) {
                    toks.push(Tok::Many);
                }
            } else if c == '_' {
                toks.push(Tok::One);
            } else {
                push_lit(c, &mut toks);
            }
        }
        Ok(Self {
            matcher: compile(toks),
            case_insensitive,
        })
    }

    /// Matches every string of `a` (VARCHAR, or NULL-typed), NULL in, NULL
    /// out; `negated` gives `NOT LIKE`.
    pub(crate) fn evaluate(&self, a: &ArrayRef, negated: bool) -> Result<BooleanArray> {
        let a = match a.data_type() {
            DataType::Utf8 => a.clone(),
            DataType::Null => {
                return Ok(new_null_array(&DataType::Boolean, a.len())
                    .as_boolean()
                    .clone());
            }
            _ => cast_array(a, &DataType::Utf8)?,
        };
        let s = a.as_string::<i32>();
        let values = self.match_all(s);
        let values = if negated { !&values } else { values };
        Ok(BooleanArray::new(values, s.nulls().cloned()))
    }

    fn match_all(&self, s: &StringArray) -> BooleanBuffer {
        let len = s.len();
        if self.case_insensitive {
            let mut buf = Vec::new();
            return BooleanBuffer::collect_bool(len, |i| self.matches_str(s.value(i), &mut buf));
        }
        match &self.matcher {
            Matcher::Contains(f) => return contains_all(s, f),
            Matcher::Segments { middle, .. } if !middle.is_empty() => {
                // rows holding the first middle segment anywhere, found in one
                // pass over the buffer, are the only candidates
                let candidates = contains_all(s, &middle[0]);
                return BooleanBuffer::collect_bool(len, |i| {
                    candidates.value(i) && self.matches(s.value(i).as_bytes())
                });
            }
            _ => {}
        }
        BooleanBuffer::collect_bool(len, |i| self.matches(s.value(i).as_bytes()))
    }

    /// Whether `v` matches, ignoring case if the pattern does (`buf`
    /// holds the lower-cased value).
    fn matches_str(&self, v: &str, buf: &mut Vec<u8>) -> bool {
        if !self.case_insensitive {
            return self.matches(v.as_bytes());
        }
        buf.clear();
        if v.is_ascii() {
            buf.extend(v.bytes().map(|b| b.to_ascii_lowercase()));
        } else {
            buf.extend_from_slice(v.to_lowercase().as_bytes());
        }
        self.matches(buf)
    }

    fn matches(&self, v: &[u8]) -> bool {
        match &self.matcher {
            Matcher::All => true,
            Matcher::Exact(p) => v == p.as_slice(),
            Matcher::Prefix(p) => v.starts_with(p),
            Matcher::Suffix(p) => v.ends_with(p),
            Matcher::Contains(f) => f.find(v).is_some(),
            Matcher::Segments {
                prefix,
                middle,
                suffix,
            } => {
                let mut lo = 0;
                let mut hi = v.len();
                if let Some(p) = prefix {
                    if !v.starts_with(p) {
                        return false;
                    }
                    lo = p.len();
                }
                if let Some(x) = suffix {
                    if hi - lo < x.len() || !v[lo..].ends_with(x) {
                        return false;
                    }
                    hi -= x.len();
                }
                for f in middle {
                    match f.find(&v[lo..hi]) {
                        Some(i) => lo += i + f.needle().len(),
                        None => return false,
                    }
                }
                true
            }
            Matcher::General(p) => wildcard(p, v),
        }
    }
}

/// The most patterns [`eval_escape`] keeps compiled while it matches one
/// batch; past it, it starts over.
const PATTERNS_KEPT: usize = 256;

/// `like_escape(s, pattern, escape)` (or `ilike_escape` when
/// `case_insensitive`) over evaluated VARCHAR arguments: a pattern of each
/// row, compiled once per distinct pattern and escape in the batch. NULL
/// in any argument gives NULL; an escape of more than one character is an
/// error, as in DuckDB.
pub(crate) fn eval_escape(case_insensitive: bool, args: &[Value]) -> Result<Value> {
    let scalar = args.iter().all(Value::is_scalar);
    let (n, arrays) = utf8_arguments(args)?;
    let column = |k: usize| (arrays[k].as_string::<i32>(), args[k].is_scalar());
    let (s, p, e) = (column(0), column(1), column(2));
    let mut compiled: HashMap<(&str, Option<char>), Like, BuildHasherDefault<Fnv>> =
        HashMap::default();
    let mut buf = Vec::new();
    let mut out = BooleanBuilder::with_capacity(n);
    for i in 0..n {
        let (Some(s), Some(p), Some(e)) = (text_at(s, i), text_at(p, i), text_at(e, i)) else {
            out.append_null();
            continue;
        };
        let mut escape = e.chars();
        let escape = match (escape.next(), escape.next()) {
            (c, None) => c,
            _ => {
                return Err(EvalError::InvalidInput(
                    "Invalid escape string. Escape string must be empty or one character.".into(),
                ));
            }
        };
        let key = (p, escape);
        let like = match compiled.get(&key) {
            Some(like) => like,
            None => {
                if compiled.len() >= PATTERNS_KEPT {
                    compiled.clear();
                }
                let like = Like::new(key.0, case_insensitive, escape)?;
                compiled.entry(key).or_insert(like)
            }
        };
        out.append_value(like.matches_str(s, &mut buf));
    }
    Ok(Value::wrap(Arc::new(out.finish()), scalar))
}

/// The rows of the batch (1 when every argument is a constant) and the
/// arguments as VARCHAR arrays, a constant one still one row (read at row
/// 0 by [`text_at`]).
pub(crate) fn utf8_arguments(args: &[Value]) -> Result<(usize, Vec<ArrayRef>)> {
    let rows = args
        .iter()
        .filter(|a| !a.is_scalar())
        .map(|a| a.array().len())
        .max()
        .unwrap_or(1);
    let arrays = args
        .iter()
        .map(|a| match a.data_type() {
            DataType::Utf8 => Ok(a.array().clone()),
            _ => cast_array(a.array(), &DataType::Utf8),
        })
        .collect::<Result<_>>()?;
    Ok((rows, arrays))
}

/// Row `i` of a VARCHAR argument (`constant`: its one row), `None` for
/// NULL.
pub(crate) fn text_at((a, constant): (&StringArray, bool), i: usize) -> Option<&str> {
    let row = if constant { 0 } else { i };
    a.is_valid(row).then(|| a.value(row))
}

/// FNV-1a: patterns are short, and SipHash (the default) took most of the
/// time of matching a row against a pattern already compiled.
#[derive(Default)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

fn lit_bytes(toks: &[Tok]) -> Option<Vec<u8>> {
    toks.iter()
        .map(|t| match t {
            Tok::Lit(b) => Some(*b),
            _ => None,
        })
        .collect()
}

fn compile(toks: Vec<Tok>) -> Matcher {
    if toks.contains(&Tok::One) {
        return Matcher::General(toks);
    }
    let segments: Vec<&[Tok]> = toks.split(|t| *t == Tok::Many).collect();
    let lits: Vec<Vec<u8>> = segments
        .iter()
        .map(|s| lit_bytes(s).unwrap_or_default())
        .collect();
    let n = lits.len();
    if n == 1 {
        return Matcher::Exact(lits.into_iter().next().unwrap_or_default());
    }
    // n >= 2: the first and last segments are anchored (empty when the
    // pattern starts / ends with %)
    let first = &lits[0];
    let last = &lits[n - 1];
    let middle: Vec<&Vec<u8>> = lits[1..n - 1].iter().filter(|l| !l.is_empty()).collect();
    match (first.is_empty(), middle.len(), last.is_empty()) {
        (true, 0, true) => Matcher::All,
        (false, 0, true) => Matcher::Prefix(first.clone()),
        (true, 0, false) => Matcher::Suffix(last.clone()),
        (true, 1, true) => Matcher::Contains(Box::new(Finder::new(middle[0]).into_owned())),
        _ => Matcher::Segments {
            prefix: (!first.is_empty()).then(|| first.clone()),
            middle: middle
                .into_iter()
                .map(|m| Finder::new(m).into_owned())
                .collect(),
            suffix: (!last.is_empty()).then(|| last.clone()),
        },
    }
}

/// Substring search over the whole values buffer, mapping hits to rows by
/// their offsets: one `memmem` pass however many rows there are.
fn contains_all(s: &StringArray, f: &Finder<'_>) -> BooleanBuffer {
    let len = s.len();
    let offsets = s.value_offsets();
    let values = s.value_data();
    let n = f.needle().len();
    if n == 0 {
        // an empty needle matches every row, including empty strings
        return BooleanBuffer::new_set(len);
    }
    let mut bits = MutableBuffer::from_len_zeroed(bit_util::ceil(len, 8));
    let slice = bits.as_slice_mut();
    let end = offsets[len] as usize;
    let mut pos = offsets[0] as usize;
    let mut row = 0usize;
    while pos < end {
        let Some(i) = f.find(&values[pos..end]) else {
            break;
        };
        let m = pos + i;
        // the row holding byte `m`: the first from `row` on whose end
        // passes it, found by galloping (a match is usually tens of rows
        // on, and the offsets between are never read one by one)
        let ends = &offsets[row + 1..=len];
        let mut step = 1;
        while step < ends.len() && (ends[step - 1] as usize) <= m {
            step *= 2;
        }
        let from = step / 2;
        let to = step.min(ends.len());
        row += from + ends[from..to].partition_point(|&e| (e as usize) <= m);
        if row >= len {
            break;
        }
        let row_end = offsets[row + 1] as usize;
        if m + n <= row_end {
            bit_util::set_bit(slice, row);
            pos = row_end;
            row += 1;
        } else {
            pos = m + 1;
        }
    }
    BooleanBuffer::new(bits.into(), 0, len)
}

/// Glob matching with `_` (one UTF-8 character) and `%` (any run), with the
/// classic single-backtrack-point algorithm.
fn wildcard(p: &[Tok], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() {
            match p[pi] {
                Tok::Many => {
                    star = Some((pi, si));
                    pi += 1;
                    continue;
                }
                Tok::One => {
                    si = (si + utf8_len(s[si])).min(s.len());
                    pi += 1;
                    continue;
                }
                Tok::Lit(b) if b == s[si] => {
                    si += 1;
                    pi += 1;
                    continue;
                }
                Tok::Lit(_) => {}
            }
        }
        match star {
            Some((sp, ss)) => {
                let mut ns = ss + 1;
                while ns < s.len() && (s[ns] & 0xC0) == 0x80 {
                    ns += 1;
                }
                star = Some((sp, ns));
                pi = sp + 1;
                si = ns;
            }
            None => return false,
        }
    }
    while pi < p.len() && p[pi] == Tok::Many {
        pi += 1;
    }
    pi == p.len()
}

fn utf8_len(b: u8) -> usize {
    match b {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_substring_search_of_the_whole_buffer_finds_each_rows_matches() {
        // rows of 0-30 letters of a small alphabet: matches many rows
        // apart and in neighbours, needles across two rows' bytes (no
        // match), empty rows, and a sliced array (its first offset not 0)
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let rows: Vec<String> = (0..20_000)
            .map(|i| {
                let len = if i % 97 == 0 {
                    0
                } else {
                    (next() % 31) as usize
                };
                (0..len)
                    .map(|_| char::from(b"abcd"[(next() % 4) as usize]))
                    .collect()
            })
            .collect();
        let all = StringArray::from_iter_values(&rows);
        for needle in ["abcab", "dddd", "a", "cbad", "abcdabcdabcd"] {
            let f = Finder::new(needle.as_bytes());
            for (from, count) in [(0, rows.len()), (37, 15_000), (19_990, 10)] {
                let s = all.slice(from, count);
                let got = contains_all(&s, &f);
                for i in 0..count {
                    assert_eq!(
                        got.value(i),
                        rows[from + i].contains(needle),
                        "{needle} row {}",
                        from + i
                    );
                }
            }
        }
    }
}
