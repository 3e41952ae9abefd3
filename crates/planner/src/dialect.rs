//! The SQL dialect Weir parses: sqlparser's DuckDB dialect, plus
//! DuckDB's `IGNORE NULLS` / `RESPECT NULLS` inside a window function's
//! parentheses (`lag(x IGNORE NULLS) OVER (...)`), which sqlparser's
//! DuckDB dialect does not accept, and DuckDB's power operator `^` (also
//! written `**`) at DuckDB's precedence: above `*` and `/`, below a sign
//! (`2 * 3 ^ 2` is 18, `-2 ^ 2` is 4), where sqlparser puts `^` below `+`
//! and reads `**` as two `*`s.
//!
//! Plain operands (an identifier that is no keyword, a number, a string)
//! are read straight: sqlparser first tries every operand as a type name
//! before a string (`DATE '1994-01-01'`) and gives up with a formatted
//! error, which was a third of the time it took to parse a short query.
//!
//! sqlparser checks dialects by type in places (`dialect_of!`), so the
//! wrapper reports DuckDB's type and hands every method DuckDB's dialect
//! overrides on to it. A test parses DuckDB-only syntax with both and
//! compares the trees.

use std::any::TypeId;

use sqlparser::ast::{BinaryOperator, Expr, UnaryOperator};
use sqlparser::dialect::{Dialect, DuckDbDialect, Precedence};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// DuckDB's dialect with the null treatment argument of window functions.
#[derive(Debug)]
pub(crate) struct WeirDialect(DuckDbDialect);

/// The precedence of `^`: above sqlparser's `*` (40), below `::` (50).
const CARET: u8 = 41;

/// The next tokens are two `*`s with nothing between them (`**`).
fn double_star(parser: &Parser) -> bool {
    // asked before every operator: the tokens are looked at, not copied
    let a = parser.peek_token_ref();
    if a.token != Token::Mul {
        return false;
    }
    let b = parser.peek_nth_token_ref(1);
    b.token == Token::Mul && a.span.end == b.span.start
}

/// `Some(negated)` if the next tokens are `GLOB` or `NOT GLOB`.
fn glob(parser: &Parser) -> Option<bool> {
    let is_glob = |t: &Token| matches!(t, Token::Word(w) if w.keyword == Keyword::GLOB);
    if is_glob(&parser.peek_token_ref().token) {
        return Some(false);
    }
    let not = matches!(&parser.peek_token_ref().token, Token::Word(w) if w.keyword == Keyword::NOT);
    (not && is_glob(&parser.peek_nth_token_ref(1).token)).then_some(true)
}

/// Whether the next token is an operand sqlparser would read as it
/// stands, without its type-name attempt: a number, a single-quoted
/// string, or a word that is no keyword followed by a token that cannot
/// make it a function call (`f(`), a lambda (`x ->`, `x INT ->`) or a
/// typed or introduced string (`name 'text'`).
fn plain_operand(parser: &Parser) -> bool {
    match &parser.peek_token_ref().token {
        Token::Number(..) | Token::SingleQuotedString(_) => true,
        Token::Word(w) if w.keyword == Keyword::NoKeyword => {
            match &parser.peek_nth_token_ref(1).token {
                Token::Word(_) => parser.peek_nth_token_ref(2).token != Token::Arrow,
                Token::Comma
                | Token::RParen
                | Token::RBracket
                | Token::LBracket
                | Token::EOF
                | Token::SemiColon
                | Token::Period
                | Token::DoubleColon
                | Token::Eq
                | Token::DoubleEq
                | Token::Neq
                | Token::Lt
                | Token::Gt
                | Token::LtEq
                | Token::GtEq
                | Token::Plus
                | Token::Minus
                | Token::Mul
                | Token::Div
                | Token::Mod
                | Token::Caret
                | Token::StringConcat => true,
                _ => false,
            }
        }
        _ => false,
    }
}

/// The dialect every statement, script and expression is parsed with.
pub(crate) const WEIR: WeirDialect = WeirDialect(DuckDbDialect {});

/// Methods handed on to DuckDB's dialect unchanged.
macro_rules! delegate {
    ($($name:ident($($arg:ident: $t:ty),*) -> $ret:ty;)*) => {
        $(fn $name(&self, $($arg: $t),*) -> $ret { self.0.$name($($arg),*) })*
    };
}

impl Dialect for WeirDialect {
    fn dialect(&self) -> TypeId {
        TypeId::of::<DuckDbDialect>()
    }

    fn supports_window_function_null_treatment_arg(&self) -> bool {
        true
    }

    /// `^` and `**` bind tighter than `*` (sqlparser's `*` is 40);
    /// `[NOT] GLOB` as LIKE does.
    fn get_next_precedence(&self, parser: &Parser) -> Option<Result<u8, ParserError>> {
        if glob(parser).is_some() {
            return Some(Ok(self.prec_value(Precedence::Like)));
        }
        (parser.peek_token_ref().token == Token::Caret || double_star(parser)).then_some(Ok(CARET))
    }

    /// `x ** y`, DuckDB's other spelling of `x ^ y` (sqlparser reads two
    /// `*`s).
    fn parse_infix(
        &self,
        parser: &mut Parser,
        expr: &Expr,
        _precedence: u8,
    ) -> Option<Result<Expr, ParserError>> {
        if let Some(negated) = glob(parser) {
            // `x [NOT] GLOB p`, which sqlparser does not read
            parser.next_token();
            if negated {
                parser.next_token();
            }
            let glob = parser
                .parse_subexpr(self.prec_value(Precedence::Like))
                .map(|right| Expr::BinaryOp {
                    left: Box::new(expr.clone()),
                    op: BinaryOperator::Custom(crate::binder::GLOB.into()),
                    right: Box::new(right),
                });
            return Some(glob.map(|g| match negated {
                true => Expr::UnaryOp {
                    op: UnaryOperator::Not,
                    expr: Box::new(g),
                },
                false => g,
            }));
        }
        if !double_star(parser) {
            return None;
        }
        parser.next_token();
        parser.next_token();
        Some(parser.parse_subexpr(CARET).map(|right| Expr::BinaryOp {
            left: Box::new(expr.clone()),
            op: BinaryOperator::PGExp,
            right: Box::new(right),
        }))
    }

    /// A sign's operand stops before `^`: `-2 ^ 2` is `(-2) ^ 2`. It takes
    /// what binds tighter (`::`, `.`) as before.
    ///
    /// A plain operand is read straight (see the module docs).
    fn parse_prefix(&self, parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
        if plain_operand(parser) {
            if matches!(parser.peek_token_ref().token, Token::Word(_)) {
                let next = parser.next_token();
                let Token::Word(w) = next.token else {
                    unreachable!("peeked a word");
                };
                return Some(Ok(Expr::Identifier(w.into_ident(next.span))));
            }
            return Some(parser.parse_value().map(Expr::Value));
        }
        let op = match parser.peek_token_ref().token {
            Token::Minus => UnaryOperator::Minus,
            Token::Plus => UnaryOperator::Plus,
            _ => return None,
        };
        parser.next_token();
        Some(parser.parse_subexpr(CARET).map(|expr| Expr::UnaryOp {
            op,
            expr: Box::new(expr),
        }))
    }

    delegate! {
        supports_trailing_commas() -> bool;
        is_identifier_start(ch: char) -> bool;
        is_identifier_part(ch: char) -> bool;
        identifier_quote_style(identifier: &str) -> Option<char>;
        supports_filter_during_aggregation() -> bool;
        supports_group_by_expr() -> bool;
        supports_bitwise_shift_operators() -> bool;
        supports_named_fn_args_with_eq_operator() -> bool;
        supports_named_fn_args_with_assignment_operator() -> bool;
        supports_dictionary_syntax() -> bool;
        support_map_literal_syntax() -> bool;
        supports_lambda_functions() -> bool;
        allow_extract_single_quotes() -> bool;
        supports_explain_with_utility_options() -> bool;
        supports_load_extension() -> bool;
        supports_array_typedef_with_brackets() -> bool;
        supports_from_first_select() -> bool;
        supports_order_by_all() -> bool;
        supports_select_wildcard_exclude() -> bool;
        supports_notnull_operator() -> bool;
        supports_install() -> bool;
        supports_detach() -> bool;
        supports_select_wildcard_replace() -> bool;
        supports_comma_separated_trim() -> bool;
        supports_numeric_literal_underscores() -> bool;
    }
}

#[cfg(test)]
mod tests {
    use sqlparser::parser::Parser;

    use super::*;

    #[test]
    fn duckdb_syntax_parses_as_with_duckdbs_dialect() {
        let queries = [
            "SELECT a, b, FROM t",
            "FROM t SELECT a",
            "SELECT * EXCLUDE (a) REPLACE (b + 1 AS b) FROM t ORDER BY ALL",
            "SELECT count(*) FILTER (WHERE a > 1) FROM t GROUP BY ALL",
            "SELECT 1_000 << 2, a NOTNULL, trim(a, 'x'), {'k': 1}, MAP {1: 2}",
            "SELECT list_transform([1, 2], x -> x + 1), f(a := 1), g(b = 2)",
            "SELECT extract('year' FROM d), \"quoted id\" FROM t",
            "SELECT lag(x) OVER (PARTITION BY p ORDER BY o) FROM t",
            "INSTALL httpfs",
            "LOAD httpfs",
            "DETACH db",
            "CREATE TABLE t (a INTEGER[])",
            // operands read straight, and those that are not
            "SELECT a, t.b, \"Q\".c, 1, 2.5e3, 'x', a::INT, a[1], a || 'b' FROM t",
            "SELECT a FROM t WHERE a = 1 AND b <> 'x' OR c >= 2.5 ORDER BY a DESC, b LIMIT 10 OFFSET 5",
            "SELECT f(a), g(a, b), a + b * c - d / e % f, (a), -a, +1 FROM t",
            "SELECT DATE '1994-01-01', TIMESTAMP '2020-01-01 00:00:00', INTERVAL '1' DAY",
            "SELECT x -> x + 1, list_transform(l, y -> y * 2), apply(l, z INT -> z) FROM t",
            "SELECT _utf8'abc', name 'alias' FROM t",
            "SELECT a AS b, c d, count(*) total FROM t GROUP BY a HAVING count(*) > 1",
            "SELECT CASE WHEN a = 1 THEN 'one' ELSE b END, a IS NULL, a IN (1, 2), a BETWEEN 1 AND 2 FROM t",
            "SELECT a FROM t WHERE a LIKE 'x%' AND b NOT IN (SELECT c FROM u) AND EXISTS (SELECT 1)",
            "SELECT value, name, date, year FROM t",
        ];
        for q in queries {
            let theirs = Parser::parse_sql(&DuckDbDialect {}, q).expect(q);
            let ours = Parser::parse_sql(&WEIR, q).expect(q);
            assert_eq!(ours, theirs, "{q}");
        }
    }

    #[test]
    fn glob_binds_as_like_does() {
        let q = "SELECT a NOT GLOB 'x*' AND b GLOB 'y?' || 'z' FROM t";
        let parsed = Parser::parse_sql(&WEIR, q).expect("parses");
        // NOT GLOB below AND, || above GLOB
        let like = Parser::parse_sql(&WEIR, &q.replace("GLOB", "LIKE")).expect("parses");
        assert_eq!(
            parsed[0].to_string(),
            "SELECT NOT a GLOB 'x*' AND b GLOB 'y?' || 'z' FROM t"
        );
        assert_eq!(like[0].to_string(), q.replace("GLOB", "LIKE"));
        let glob = |e: &Expr| matches!(e, Expr::BinaryOp { op: BinaryOperator::Custom(g), .. } if g == "GLOB");
        let sqlparser::ast::Statement::Query(query) = &parsed[0] else {
            panic!("a query");
        };
        let sqlparser::ast::SetExpr::Select(select) = query.body.as_ref() else {
            panic!("a SELECT");
        };
        let sqlparser::ast::SelectItem::UnnamedExpr(Expr::BinaryOp { left, op, right }) =
            &select.projection[0]
        else {
            panic!("an AND");
        };
        assert_eq!(*op, BinaryOperator::And);
        assert!(
            matches!(left.as_ref(), Expr::UnaryOp { op: UnaryOperator::Not, expr } if glob(expr))
        );
        assert!(glob(right), "{right:?}");
    }

    #[test]
    fn ignore_nulls_inside_a_window_functions_parentheses_parses() {
        let q = "SELECT lag(x, 2 IGNORE NULLS) OVER (ORDER BY o), first_value(x RESPECT NULLS) OVER () FROM t";
        assert!(Parser::parse_sql(&DuckDbDialect {}, q).is_err());
        let parsed = Parser::parse_sql(&WEIR, q).expect("parses");
        let text = parsed[0].to_string();
        assert!(
            text.contains("IGNORE NULLS") && text.contains("RESPECT NULLS"),
            "{text}"
        );
    }
}
