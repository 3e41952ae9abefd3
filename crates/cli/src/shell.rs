//! Running statements and dot commands, interactively or from scripts.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use weir_engine::{Config, Database, ExecuteOptions, Progress, QueryResult};

use crate::args::{Args, Command, OnError};
use crate::one_line;
use crate::output::{self, Format, PrintOptions};

/// How long a statement runs before a progress bar appears.
const PROGRESS_AFTER: Duration = Duration::from_secs(2);

/// How deeply `.read` may nest (a script reading a script ...).
const MAX_READ_DEPTH: usize = 64;

/// Where a statement starts in a script file (1-based line and column).
#[derive(Clone, Copy)]
struct Location<'a> {
    file: &'a Path,
    line: usize,
    column: usize,
}

/// A database plus the shell's settings.
pub(crate) struct Shell {
    pub(crate) db: Database,
    format: Format,
    /// Table formats show at most this many rows (0: all).
    max_rows: usize,
    timer: bool,
    on_error: OnError,
    /// True while a statement runs or prints, so Ctrl-C cancels it rather
    /// than ending the shell.
    running: Arc<AtomicBool>,
    interactive: Arc<AtomicBool>,
    /// Set by Ctrl-C: stops the statement, its printing, and a script
    /// (whatever `--on-error` says).
    interrupted: Arc<AtomicBool>,
    /// The script files being run, outermost first (`-f`, `.read`).
    reading: Vec<PathBuf>,
    /// Results go to this file instead of stdout (`.output FILE`, or
    /// `.once FILE` for the next statement only).
    redirect: Option<Redirect>,
}

/// A file results are written to, and whether only the next statement's.
struct Redirect {
    file: std::io::BufWriter<std::fs::File>,
    once: bool,
}

/// What a dot command asks the shell to do next.
enum Next {
    Continue,
    Quit,
}

impl Shell {
    pub(crate) fn new(args: &Args) -> Result<Self> {
        let mut config = Config::default();
        if let Some(n) = args.threads {
            config.threads = n;
        }
        config.timeout = args.timeout;
        let db = Database::with_config(config)?;
        let running = Arc::new(AtomicBool::new(false));
        let interactive = Arc::new(AtomicBool::new(false));
        let interrupted = Arc::new(AtomicBool::new(false));
        let interrupt = db.interrupt_handle();
        let (r, i, stop) = (running.clone(), interactive.clone(), interrupted.clone());
        // Ctrl-C cancels the running statement (and a script); with none
        // running, a script ends (130, as shells do) and the interactive
        // shell ignores it.
        ctrlc::set_handler(move || {
            if r.load(Ordering::Acquire) {
                stop.store(true, Ordering::Release);
                interrupt.interrupt();
            } else if !i.load(Ordering::Acquire) {
                std::process::exit(130);
            }
        })
        .context("could not install the Ctrl-C handler")?;
        Ok(Self {
            db,
            format: args.format,
            max_rows: output::DEFAULT_MAX_ROWS,
            timer: args.timer,
            on_error: args.on_error,
            running,
            interactive,
            interrupted,
            reading: Vec::new(),
            redirect: None,
        })
    }

    /// True once Ctrl-C stopped a script.
    pub(crate) fn was_interrupted(&self) -> bool {
        !self.interactive.load(Ordering::Acquire) && self.interrupted.load(Ordering::Acquire)
    }

    /// Runs `-c` and `-f` arguments in order; false if any statement failed.
    pub(crate) fn run_commands(&mut self, commands: &[Command]) -> Result<bool> {
        let mut ok = true;
        for c in commands {
            let step_ok = match c {
                Command::Sql(sql) => self.run_script(sql)?,
                Command::File(path) => self.run_file(path)?,
            };
            ok &= step_ok;
            if self.interrupted.load(Ordering::Acquire)
                || (!step_ok && self.on_error == OnError::Stop)
            {
                return Ok(false);
            }
        }
        Ok(ok)
    }

    /// Runs the script file at `path`; an error if it is already being
    /// run (a `.read` cycle) or `.read`s nest too deeply.
    fn run_file(&mut self, path: &Path) -> Result<bool> {
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if let Some(first) = self.reading.iter().position(|p| *p == key) {
            let cycle: Vec<String> = self.reading[first..]
                .iter()
                .chain([&key])
                .map(|p| p.display().to_string())
                .collect();
            anyhow::bail!(".read cycle: {}", cycle.join(" -> "));
        }
        if self.reading.len() >= MAX_READ_DEPTH {
            anyhow::bail!(
                ".read of \"{}\" nests more than {MAX_READ_DEPTH} scripts deep",
                path.display()
            );
        }
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) => {
                report(&format!("could not read \"{}\": {e}", path.display()));
                return Ok(false);
            }
        };
        self.reading.push(key);
        let result = self.run_script_from(&text, Some(path));
        self.reading.pop();
        result
    }

    /// Runs a script: SQL statements ended by `;`, and dot commands on
    /// lines of their own. False if any statement failed.
    pub(crate) fn run_script(&mut self, text: &str) -> Result<bool> {
        self.run_script_from(text, None)
    }

    /// [`Shell::run_script`]; errors name `file` and the line in it.
    fn run_script_from(&mut self, text: &str, file: Option<&Path>) -> Result<bool> {
        let mut ok = true;
        let mut buffer = String::new();
        let mut buffer_line = 1;
        for (index, line) in text.lines().enumerate() {
            if self.interrupted.load(Ordering::Acquire) {
                return Ok(false);
            }
            if buffer.trim().is_empty() && line.trim_start().starts_with('.') {
                buffer.clear();
                match self.dot_command(line.trim()) {
                    Ok(Next::Continue) => {}
                    Ok(Next::Quit) => return Ok(ok),
                    Err(e) => {
                        let location = file.map(|file| Location {
                            file,
                            line: index + 1,
                            column: line.len() - line.trim_start().len() + 1,
                        });
                        report_error(&e, location);
                        ok = false;
                        if self.on_error == OnError::Stop {
                            return Ok(false);
                        }
                    }
                }
                continue;
            }
            if buffer.is_empty() {
                buffer_line = index + 1;
            }
            buffer.push_str(line);
            buffer.push('\n');
            if !weir_engine::is_incomplete(&buffer) {
                if !self.run_statements_from(&buffer, file.map(|f| (f, buffer_line))) {
                    ok = false;
                    if self.on_error == OnError::Stop || self.interrupted.load(Ordering::Acquire) {
                        return Ok(false);
                    }
                }
                buffer.clear();
            }
        }
        if !buffer.trim().is_empty()
            && !self.run_statements_from(&buffer, file.map(|f| (f, buffer_line)))
        {
            ok = false;
        }
        Ok(ok)
    }

    /// Runs each statement of `sql`; false if one failed. Stops at the
    /// first failure unless on-error is continue, and always after Ctrl-C.
    fn run_statements(&mut self, sql: &str) -> bool {
        self.run_statements_from(sql, None)
    }

    /// [`Shell::run_statements`] for text that starts at line `origin.1`
    /// of file `origin.0`.
    fn run_statements_from(&mut self, sql: &str, origin: Option<(&Path, usize)>) -> bool {
        let mut ok = true;
        for (offset, statement) in weir_engine::split_statements_with_offsets(sql) {
            let location = origin.map(|(file, first_line)| {
                let before = &sql[..offset];
                let line_start = before.rfind('\n').map_or(0, |i| i + 1);
                Location {
                    file,
                    line: first_line + before.matches('\n').count(),
                    column: before[line_start..].chars().count() + 1,
                }
            });
            if !self.run_statement_at(&statement, location) {
                ok = false;
                if self.on_error == OnError::Stop || self.interrupted.load(Ordering::Acquire) {
                    break;
                }
            }
        }
        ok
    }

    /// Runs one statement and prints its result or error.
    pub(crate) fn run_statement(&mut self, sql: &str) -> bool {
        self.run_statement_at(sql, None)
    }

    fn run_statement_at(&mut self, sql: &str, location: Option<Location>) -> bool {
        if self.interactive.load(Ordering::Acquire) {
            // an earlier Ctrl-C ended its own statement only
            self.interrupted.store(false, Ordering::Release);
        }
        let start = Instant::now();
        let result = self.execute_with_progress(sql);
        let elapsed = start.elapsed();
        let ok = match result {
            Ok(result) => {
                self.running.store(true, Ordering::Release);
                let printed = {
                    let options = PrintOptions {
                        format: self.format,
                        max_rows: self.max_rows,
                        stop: &self.interrupted,
                    };
                    match self.redirect.as_mut() {
                        Some(r) => output::write(&mut r.file, result, &options)
                            .and_then(|()| Ok(r.file.flush()?)),
                        None => {
                            let mut stdout = std::io::stdout().lock();
                            output::write(&mut stdout, result, &options)
                                .and_then(|()| Ok(stdout.flush()?))
                        }
                    }
                };
                self.running.store(false, Ordering::Release);
                match printed {
                    Ok(()) => true,
                    Err(e) => {
                        report_error(&e, location);
                        false
                    }
                }
            }
            Err(e) => {
                report_at(&e.to_string(), location);
                false
            }
        };
        if self.redirect.as_ref().is_some_and(|r| r.once) {
            self.redirect = None;
        }
        if self.timer {
            eprintln!("Run Time (s): real {:.6}", elapsed.as_secs_f64());
        }
        ok
    }

    /// Executes `sql`, drawing a progress bar on a terminal's stderr when it
    /// runs longer than [`PROGRESS_AFTER`].
    pub(crate) fn execute_with_progress(&self, sql: &str) -> weir_engine::Result<QueryResult> {
        let progress = Arc::new(Progress::default());
        let options = ExecuteOptions {
            progress: Some(progress.clone()),
        };
        self.running.store(true, Ordering::Release);
        let result = if std::io::stderr().is_terminal() {
            let (done_tx, done_rx) = mpsc::channel::<()>();
            std::thread::scope(|scope| {
                scope.spawn(move || draw_progress(&progress, &done_rx));
                let result = self.db.execute_with(sql, &options);
                drop(done_tx);
                result
            })
        } else {
            self.db.execute_with(sql, &options)
        };
        self.running.store(false, Ordering::Release);
        result
    }

    fn dot_command(&mut self, line: &str) -> Result<Next> {
        let mut words = line.split_whitespace();
        let command = words.next().unwrap_or(".");
        let arg = words.next();
        let mut out = std::io::stdout().lock();
        match (command, arg) {
            (".quit" | ".exit", _) => return Ok(Next::Quit),
            (".help", _) => write!(out, "{}", DOT_HELP)?,
            (".tables", _) => {
                // views too, as DuckDB's shell lists them
                let mut names = self.db.table_names();
                names.extend(self.db.view_names());
                names.sort_by_key(|n| n.to_lowercase());
                for name in names {
                    writeln!(out, "{name}")?;
                }
            }
            (".schema", table) => {
                let names = match table {
                    Some(t) => vec![t.to_string()],
                    None => {
                        let mut names = self.db.table_names();
                        names.extend(self.db.view_names());
                        names.sort_by_key(|n| n.to_lowercase());
                        names
                    }
                };
                for name in names {
                    if let Some(view) = self.db.view(&name) {
                        let columns = match view.columns.is_empty() {
                            true => String::new(),
                            false => format!(" ({})", view.columns.join(", ")),
                        };
                        writeln!(out, "CREATE VIEW {}{columns} AS {};", view.name, view.query)?;
                        continue;
                    }
                    let schema = self
                        .db
                        .table_schema(&name)
                        .with_context(|| format!("Table with name {name} does not exist!"))?;
                    let columns: Vec<String> = schema
                        .fields()
                        .iter()
                        .map(|f| {
                            let null = if f.is_nullable() { "" } else { " NOT NULL" };
                            format!(
                                "{} {}{null}",
                                f.name(),
                                weir_engine::sql_type_name(f.data_type())
                            )
                        })
                        .collect();
                    writeln!(out, "CREATE TABLE {name}({});", columns.join(", "))?;
                }
            }
            (".timer", Some("on")) => self.timer = true,
            (".timer", Some("off")) => self.timer = false,
            (".timer", _) => anyhow::bail!(".timer takes on or off"),
            (".mode", Some(mode)) => self.format = mode.parse()?,
            (".mode", None) => anyhow::bail!(".mode takes table, box, csv or json"),
            (".maxrows", Some(n)) => {
                self.max_rows = n.parse().ok().with_context(|| {
                    format!(".maxrows takes a number of rows (0: all), got \"{n}\"")
                })?;
            }
            (".maxrows", None) => writeln!(out, "{}", self.max_rows)?,
            (".read", Some(path)) => {
                drop(out);
                if !self.run_file(Path::new(path))? {
                    anyhow::bail!("a statement in \"{path}\" failed");
                }
            }
            (".read", None) => anyhow::bail!(".read takes a file name"),
            (".output" | ".once", Some(path)) => {
                let file = std::fs::File::create(path)
                    .with_context(|| format!("cannot open \"{path}\" for writing"))?;
                self.redirect = Some(Redirect {
                    file: std::io::BufWriter::new(file),
                    once: command == ".once",
                });
            }
            (".output", None) => self.redirect = None,
            (".once", None) => anyhow::bail!(".once takes a file name"),
            (other, _) => anyhow::bail!("unknown command \"{other}\": try .help"),
        }
        Ok(Next::Continue)
    }

    /// The interactive shell: line editing, history, multi-line statements.
    pub(crate) fn interactive(&mut self) -> Result<bool> {
        use rustyline::error::ReadlineError;

        self.interactive.store(true, Ordering::Release);
        println!(
            "weir {} — in-memory database. Enter \".help\" for usage hints.",
            env!("CARGO_PKG_VERSION")
        );
        let mut editor = rustyline::DefaultEditor::new()?;
        let history = std::env::var_os("HOME").map(|h| Path::new(&h).join(".weir_history"));
        if let Some(h) = &history {
            // a missing history file is normal on first use
            let _ = editor.load_history(h);
        }
        let mut buffer = String::new();
        loop {
            let prompt = if buffer.is_empty() {
                "weir> "
            } else {
                "  ...> "
            };
            match editor.readline(prompt) {
                Ok(line) => {
                    if buffer.is_empty() && line.trim_start().starts_with('.') {
                        let _ = editor.add_history_entry(line.as_str());
                        match self.dot_command(line.trim()) {
                            Ok(Next::Continue) => {}
                            Ok(Next::Quit) => break,
                            Err(e) => report_error(&e, None),
                        }
                        continue;
                    }
                    buffer.push_str(&line);
                    buffer.push('\n');
                    if !weir_engine::is_incomplete(&buffer) {
                        let _ = editor.add_history_entry(buffer.trim());
                        let statements = std::mem::take(&mut buffer);
                        // errors are reported; the shell goes on
                        let saved = std::mem::replace(&mut self.on_error, OnError::Continue);
                        self.run_statements(&statements);
                        self.on_error = saved;
                    }
                }
                Err(ReadlineError::Interrupted) => buffer.clear(),
                Err(ReadlineError::Eof) => break,
                Err(e) => return Err(e.into()),
            }
        }
        if let Some(h) = &history {
            let _ = editor.save_history(h);
        }
        Ok(true)
    }
}

const DOT_HELP: &str = "\
.tables              list tables
.schema [TABLE]      show CREATE TABLE statements
.timer on|off        print the run time of each statement
.mode table|box|csv|json
                     output format
.maxrows N           tables show the first and last of at most N rows (0: all; default 40)
.read FILE           run the statements in FILE
.output [FILE]       write results to FILE (no FILE: back to stdout)
.once FILE           write the next statement's result to FILE
.help                this text
.quit                leave the shell (also Ctrl-D)
";

/// Prints an error on stderr, naming the script file and line when there
/// is one. A broken pipe on stdout ends the process quietly, as other
/// command-line tools do.
fn report_error(e: &anyhow::Error, location: Option<Location>) {
    exit_if_broken_pipe(e);
    report_at(&format!("{e:#}"), location);
}

/// Ends the process quietly (status 0, like ripgrep) when `e` is a write
/// to a closed pipe: the reader (`head`, say) has all it wanted.
pub(crate) fn exit_if_broken_pipe(e: &anyhow::Error) {
    let broken = e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || matches!(
                c.downcast_ref::<arrow::error::ArrowError>(),
                Some(arrow::error::ArrowError::IoError(_, io))
                    if io.kind() == std::io::ErrorKind::BrokenPipe
            )
    });
    if broken {
        std::process::exit(0);
    }
}

/// [`report`], prefixed with `file:line:column:` when the statement came
/// from a script file. A position the message gives (`at line L, column
/// C`, counted from the statement's start) becomes the file's.
fn report_at(message: &str, location: Option<Location>) {
    let Some(loc) = location else {
        report(message);
        return;
    };
    let message = one_line(message);
    let message = message.strip_prefix("Error: ").unwrap_or(&message);
    let (line, column, message) = match statement_position(message) {
        Some((start, end, l, c)) => {
            let line = loc.line + l - 1;
            let column = if l == 1 { loc.column + c - 1 } else { c };
            (
                line,
                column,
                format!("{}{}", &message[..start], &message[end..]),
            )
        }
        None => (loc.line, loc.column, message.to_string()),
    };
    eprintln!("Error: {}:{line}:{column}: {message}", loc.file.display());
}

/// Where the ` at line L, column C` that ends `message` (the planner's
/// position in the statement) starts and ends, and L and C. A position
/// inside the message (a line of a CSV file, say) is not the statement's.
fn statement_position(message: &str) -> Option<(usize, usize, usize, usize)> {
    let start = message.rfind(" at line ")?;
    let rest = &message[start + " at line ".len()..];
    let (line, rest) = rest.split_once(", column ")?;
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if !rest[digits..].trim().is_empty() {
        return None;
    }
    let end = message.len() - rest.len() + digits;
    Some((start, end, line.parse().ok()?, rest[..digits].parse().ok()?))
}

/// Prints an error as one line on stderr.
pub(crate) fn report(message: &str) {
    let message = one_line(message);
    let message = message.strip_prefix("Error: ").unwrap_or(&message);
    eprintln!("Error: {message}");
}

/// Draws a progress bar on stderr until `done` closes, if that takes
/// longer than [`PROGRESS_AFTER`].
fn draw_progress(progress: &Progress, done: &mpsc::Receiver<()>) {
    if done.recv_timeout(PROGRESS_AFTER) != Err(mpsc::RecvTimeoutError::Timeout) {
        return;
    }
    let mut stderr = std::io::stderr();
    loop {
        let total = progress.morsels_total().max(1);
        let finished = progress.morsels_done().min(total);
        let width = 40;
        let filled = (finished * width / total) as usize;
        let _ = write!(
            stderr,
            "\r[{}{}] {:>3}% ",
            "=".repeat(filled),
            " ".repeat(width as usize - filled),
            finished * 100 / total
        );
        let _ = stderr.flush();
        if done.recv_timeout(Duration::from_millis(100)) != Err(mpsc::RecvTimeoutError::Timeout) {
            let _ = write!(stderr, "\r{}\r", " ".repeat(width as usize + 8));
            let _ = stderr.flush();
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::statement_position;

    #[test]
    fn only_a_trailing_position_is_the_statements() {
        let m = "Binder Error: x not found at line 2, column 7";
        let (start, end, l, c) = statement_position(m).unwrap();
        assert_eq!(
            (&m[..start], &m[end..], l, c),
            ("Binder Error: x not found", "", 2, 7)
        );
        assert_eq!(
            statement_position("the quote opened at line 100002, column 3 never ends"),
            None
        );
        assert_eq!(statement_position("Division by zero"), None);
    }
}
