//! Splitting SQL scripts into statements.

/// Splits `sql` into statements at top-level `;`, skipping quoted strings,
/// quoted identifiers and comments. Empty statements are dropped; the
/// statements keep their text but not the `;`.
///
/// ```
/// let parts = weir_engine::split_statements("SELECT 'a;b'; -- c;\nSELECT 2;;");
/// assert_eq!(parts, ["SELECT 'a;b'", "-- c;\nSELECT 2"]);
/// ```
pub fn split_statements(sql: &str) -> Vec<String> {
    scan(sql).0.into_iter().map(|(_, s)| s).collect()
}

/// [`split_statements`], each statement with the byte offset in `sql` of
/// its first character, so a shell can tell the line and column where it
/// starts in a script.
///
/// ```
/// let parts = weir_engine::split_statements_with_offsets("SELECT 1;\n  SELECT 2;");
/// assert_eq!(parts, [(0, "SELECT 1".to_string()), (12, "SELECT 2".to_string())]);
/// ```
pub fn split_statements_with_offsets(sql: &str) -> Vec<(usize, String)> {
    scan(sql).0
}

/// True when `sql` ends inside a statement: text after the last top-level
/// `;` that is more than whitespace and comments, or an open quote or
/// block comment. An interactive shell keeps reading lines until this is
/// false.
///
/// ```
/// assert!(weir_engine::is_incomplete("SELECT 1"));
/// assert!(weir_engine::is_incomplete("SELECT 'a;"));
/// assert!(!weir_engine::is_incomplete("SELECT 1; -- done"));
/// ```
pub fn is_incomplete(sql: &str) -> bool {
    let (_, tail, open) = scan(sql);
    open || !only_comments(tail.trim())
}

/// Returns the statements, the text after the last top-level `;`, and
/// whether the text ends inside a quote or block comment.
fn scan(sql: &str) -> (Vec<(usize, String)>, &str, bool) {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = sql.as_bytes();
    let mut open = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            q @ (b'\'' | b'"') => {
                open = true;
                i += 1;
                while i < bytes.len() {
                    if bytes[i] == q {
                        if bytes.get(i + 1) == Some(&q) {
                            i += 1; // a doubled quote stands for itself
                        } else {
                            open = false;
                            break;
                        }
                    }
                    i += 1;
                }
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                open = true;
                i += 2;
                while i < bytes.len() {
                    if bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/') {
                        open = false;
                        i += 1;
                        break;
                    }
                    i += 1;
                }
            }
            b';' => {
                push(&mut out, sql, start, i);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    let start = start.min(sql.len());
    let tail = &sql[start..];
    push(&mut out, sql, start, sql.len());
    (out, tail, open)
}

fn only_comments(s: &str) -> bool {
    s.lines().all(|l| {
        let l = l.trim();
        l.is_empty() || l.starts_with("--")
    })
}

fn push(out: &mut Vec<(usize, String)>, sql: &str, start: usize, end: usize) {
    let part = &sql[start..end];
    let trimmed = part.trim();
    if !trimmed.is_empty() && !only_comments(trimmed) {
        let offset = start + (part.len() - part.trim_start().len());
        out.push((offset, trimmed.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(sql: &str, expect: &[&str]) {
        assert_eq!(split_statements(sql), expect, "{sql:?}");
    }

    #[test]
    fn splits_at_top_level_semicolons() {
        check("SELECT 1; SELECT 2", &["SELECT 1", "SELECT 2"]);
        check("SELECT ';' AS \"a;b\";", &["SELECT ';' AS \"a;b\""]);
        check("SELECT 'it''s; fine'", &["SELECT 'it''s; fine'"]);
        check("/* ; */ SELECT 1 -- ;\n;", &["/* ; */ SELECT 1 -- ;"]);
        check(" ;; \n -- only a comment\n", &[]);
        check("SELECT 'unterminated;", &["SELECT 'unterminated;"]);
    }

    #[test]
    fn incomplete_until_semicolon() {
        assert!(is_incomplete("SELECT 1"));
        assert!(is_incomplete("SELECT 1;\nSELECT"));
        assert!(!is_incomplete("SELECT 1;"));
        assert!(!is_incomplete("SELECT ';'  ;  "));
        assert!(!is_incomplete("-- nothing yet"));
        assert!(is_incomplete("SELECT 'a;"));
    }
}
