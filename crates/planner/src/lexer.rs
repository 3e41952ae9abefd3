//! Tokens of a statement, read quickly where the text is plain.
//!
//! sqlparser's tokenizer reads the text a `char` at a time through a
//! peekable iterator, asks the dialect about every character and tracks
//! each one's line and column: on a short query it took about a third of
//! the time spent parsing. Most statements use a small part of SQL's
//! lexical grammar: words, numbers, quoted strings and identifiers,
//! whitespace and the common operators. [`tokenize`] reads that part a
//! byte at a time and hands the whole text to sqlparser's tokenizer as
//! soon as it meets anything else (a comment, a dollar quote, `E'...'`,
//! an exponent, an operator it does not know, a letter outside ASCII),
//! so sqlparser stays the one definition of the tokens and of their
//! errors. A test compares both on every statement of the SQL logic
//! tests and on edge cases, token by token and span by span.

use sqlparser::tokenizer::{
    Location, Span, Token, TokenWithSpan, Tokenizer, TokenizerError, Whitespace,
};

use crate::dialect::WEIR;

/// The tokens of `sql` with their spans, as sqlparser's tokenizer (with
/// unescaping, as `Parser::try_with_sql` reads) gives them.
pub(crate) fn tokenize(sql: &str) -> Result<Vec<TokenWithSpan>, TokenizerError> {
    match plain(sql) {
        Some(tokens) => Ok(tokens),
        None => Tokenizer::new(&WEIR, sql)
            .with_unescape(true)
            .tokenize_with_location(),
    }
}

/// The tokens of `sql` if it uses only the plain part of the grammar.
fn plain(sql: &str) -> Option<Vec<TokenWithSpan>> {
    let b = sql.as_bytes();
    let mut out = Vec::with_capacity(b.len() / 3 + 1);
    let mut at = Cursor {
        i: 0,
        line: 1,
        column: 1,
    };
    while at.i < b.len() {
        let start = at.location();
        let peek = |k: usize| b.get(at.i + k).copied();
        let (token, len) = match b[at.i] {
            b' ' => (Token::Whitespace(Whitespace::Space), 1),
            b'\t' => (Token::Whitespace(Whitespace::Tab), 1),
            b'\n' => {
                at.i += 1;
                at.line += 1;
                at.column = 1;
                out.push(TokenWithSpan::new(
                    Token::Whitespace(Whitespace::Newline),
                    Span::new(start, at.location()),
                ));
                continue;
            }
            c @ (b'a'..=b'z' | b'A'..=b'Z' | b'_') => {
                // N'..', X'..', E'..', U&'..', b'..', r"..", q'[..]' and the
                // like are literals in some dialect
                if b"NnXxEeUuQqBbRr".contains(&c) && matches!(peek(1), Some(b'\'' | b'"' | b'&')) {
                    return None;
                }
                let len = b[at.i..]
                    .iter()
                    .position(|&c| !(c.is_ascii_alphanumeric() || c == b'_' || c == b'$'))
                    .unwrap_or(b.len() - at.i);
                // a letter outside ASCII may go on with the word
                if b.get(at.i + len).is_some_and(|c| !c.is_ascii()) {
                    return None;
                }
                (Token::make_word(&sql[at.i..at.i + len], None), len)
            }
            b'0'..=b'9' | b'.' => number(b, at.i)?,
            quote @ (b'\'' | b'"') => {
                let (value, next) = quoted(sql, at.i, quote)?;
                // the literal may run over lines: count them and the
                // characters (not bytes) after the last
                let text = &sql[at.i..next];
                at.i = next;
                match text.rfind('\n') {
                    Some(last) => {
                        at.line += text.matches('\n').count() as u64;
                        at.column = 1 + text[last + 1..].chars().count() as u64;
                    }
                    None => at.column += text.chars().count() as u64,
                }
                let token = if quote == b'\'' {
                    Token::SingleQuotedString(value)
                } else {
                    Token::make_word(&value, Some('"'))
                };
                out.push(TokenWithSpan::new(token, Span::new(start, at.location())));
                continue;
            }
            b'(' => (Token::LParen, 1),
            b')' => (Token::RParen, 1),
            b',' => (Token::Comma, 1),
            b';' => (Token::SemiColon, 1),
            b'+' => (Token::Plus, 1),
            b'*' => (Token::Mul, 1),
            b'%' => (Token::Mod, 1),
            b'[' => (Token::LBracket, 1),
            b']' => (Token::RBracket, 1),
            b'-' => match peek(1) {
                // a comment, `->`, `->>`
                Some(b'-' | b'>') => return None,
                _ => (Token::Minus, 1),
            },
            b'/' => match peek(1) {
                // a comment, `//`
                Some(b'*' | b'/') => return None,
                _ => (Token::Div, 1),
            },
            b'=' => match peek(1) {
                Some(b'>') => return None,
                Some(b'=') => (Token::DoubleEq, 2),
                _ => (Token::Eq, 1),
            },
            b'<' => match peek(1) {
                Some(b'=') if peek(2) == Some(b'>') => return None,
                Some(b'=') => (Token::LtEq, 2),
                Some(b'>') => (Token::Neq, 2),
                Some(b'<' | b'@') => return None,
                _ => (Token::Lt, 1),
            },
            b'>' => match peek(1) {
                Some(b'=') => (Token::GtEq, 2),
                Some(b'>') => return None,
                _ => (Token::Gt, 1),
            },
            b'!' => match peek(1) {
                Some(b'=') => (Token::Neq, 2),
                _ => return None,
            },
            b'|' => match (peek(1), peek(2)) {
                (Some(b'|'), Some(b'/')) => return None,
                (Some(b'|'), _) => (Token::StringConcat, 2),
                _ => return None,
            },
            b':' => match peek(1) {
                Some(b':') => (Token::DoubleColon, 2),
                _ => return None,
            },
            b'^' => match peek(1) {
                Some(b'@') => return None,
                _ => (Token::Caret, 1),
            },
            _ => return None,
        };
        // every token above is ASCII on one line
        at.i += len;
        at.column += len as u64;
        out.push(TokenWithSpan::new(token, Span::new(start, at.location())));
    }
    Some(out)
}

/// Where the reading is: a byte offset and the line and column (in
/// characters, from 1) sqlparser gives it.
struct Cursor {
    i: usize,
    line: u64,
    column: u64,
}

impl Cursor {
    fn location(&self) -> Location {
        Location::new(self.line, self.column)
    }
}

/// A number, or the period, at `i`: digits, a period, digits. Underscores
/// between digits, `0x`, exponents and a trailing `L` are left to
/// sqlparser.
fn number(b: &[u8], i: usize) -> Option<(Token, usize)> {
    let digits = |from: usize| {
        b[from..]
            .iter()
            .position(|c| !c.is_ascii_digit())
            .unwrap_or(b.len() - from)
    };
    let mut end = i + digits(i);
    if b.get(end) == Some(&b'x') && &b[i..end] == b"0" {
        return None;
    }
    if b.get(end) == Some(&b'.') {
        end += 1;
        end += digits(end);
    }
    if matches!(b.get(end), Some(b'_' | b'e' | b'E' | b'L')) {
        return None;
    }
    let text = std::str::from_utf8(&b[i..end]).ok()?;
    Some(match text {
        "." => (Token::Period, 1),
        _ => (Token::Number(text.to_string(), false), end - i),
    })
}

/// The value of the string or identifier quoted by `quote` at `i` (a
/// doubled quote stands for one) and the offset past its closing quote;
/// `None` if it is not closed.
fn quoted(sql: &str, i: usize, quote: u8) -> Option<(String, usize)> {
    let b = sql.as_bytes();
    let mut value = String::new();
    let mut from = i + 1;
    loop {
        let close = from + b[from..].iter().position(|&c| c == quote)?;
        // quotes are ASCII: the cuts fall between characters
        value.push_str(&sql[from..close]);
        if b.get(close + 1) == Some(&quote) {
            value.push(quote as char);
            from = close + 2;
        } else {
            return Some((value, close + 1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sqlparser(sql: &str) -> Result<Vec<TokenWithSpan>, TokenizerError> {
        Tokenizer::new(&WEIR, sql)
            .with_unescape(true)
            .tokenize_with_location()
    }

    /// Statements of the SQL logic tests: the text between the record
    /// header and the `----` or blank line that ends it.
    fn corpus() -> Vec<String> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../engine/tests/slt");
        let mut out = Vec::new();
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .expect("the SQL logic tests")
            .map(|e| e.expect("a directory entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "slt"))
            .collect();
        files.sort();
        for file in files {
            let text = std::fs::read_to_string(&file).expect("a test file");
            let mut current: Option<String> = None;
            for line in text.lines() {
                match &mut current {
                    None if line.starts_with("statement") || line.starts_with("query") => {
                        current = Some(String::new());
                    }
                    None => {}
                    Some(sql) if line.is_empty() || line == "----" => {
                        out.push(std::mem::take(sql));
                        current = None;
                    }
                    Some(sql) => {
                        if !sql.is_empty() {
                            sql.push('\n');
                        }
                        sql.push_str(line);
                    }
                }
            }
            if let Some(sql) = current {
                out.push(sql);
            }
        }
        out
    }

    #[test]
    fn plain_tokens_are_sqlparsers_on_every_logic_test_statement() {
        let corpus = corpus();
        assert!(corpus.len() > 1000, "{} statements", corpus.len());
        let mut plain_ones = 0;
        for sql in &corpus {
            if let Some(tokens) = plain(sql) {
                plain_ones += 1;
                assert_eq!(Ok(tokens), sqlparser(sql), "{sql}");
            }
        }
        // the fast path is the common one
        assert!(
            plain_ones * 2 > corpus.len(),
            "{plain_ones} of {}",
            corpus.len()
        );
    }

    #[test]
    fn edge_cases_match_sqlparser() {
        let cases = [
            "SELECT l_orderkey, l_extendedprice FROM lineitem ORDER BY l_extendedprice DESC LIMIT 10",
            "select 1.5, .5, 1., 10.25, 0, 007, a.b, t.\"Col\"\"x\", x::INTEGER",
            "SELECT 'it''s', '', 'a\nb', 'naïve', \"naïve\" , 'x' || 'y', \"\"\"\"",
            "SELECT a<b, a<=b, a<>b, a!=b, a>=b, a>b, a=b, a==b, 2^3, 7%2, -1, +1, 4/2, [1, 2]",
            "SELECT\n  a\n\t, b\nFROM t\nWHERE x = 'line\none' AND y = 2;\nSELECT 3",
            "SELECT n, x, e, u, q, b, r, N, X, E, U, Q, B, R, name, xs FROM t",
            "SELECT col$1, _a, a_b2 FROM t1",
            "SELECT 1 AS \"select\", 'a' AS 'b'",
        ];
        for sql in cases {
            assert!(plain(sql).is_some(), "read plainly: {sql}");
            assert_eq!(tokenize(sql), sqlparser(sql), "{sql}");
        }
    }

    #[test]
    fn other_text_goes_to_sqlparser() {
        let cases = [
            "SELECT 1 -- a comment",
            "SELECT /* a comment */ 1",
            "SELECT 1e5, 1_000, 0x1F, 10L",
            "SELECT E'a\\nb', N'x', X'1F', U&'d\\0061t'",
            "SELECT a->b, a->>b, a<=>b, a<<2, a>>2, a||/b, a:b, a := 1",
            "SELECT $1, $$dollar$$, ?",
            "SELECT ünïcode_name FROM t",
            "SELECT `quoted` FROM t",
            "SELECT 'unterminated",
            "SELECT \"unterminated",
            "SELECT 1 // 2, a ~~ b, a !~ b, a @> b, a <@ b, #x",
            "SELECT x\r\nFROM t",
        ];
        for sql in cases {
            assert!(plain(sql).is_none(), "left to sqlparser: {sql}");
            assert_eq!(tokenize(sql), sqlparser(sql), "{sql}");
        }
    }
}
