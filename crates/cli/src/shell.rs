//! Running statements and dot commands, interactively or from scripts.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use weir_engine::{Config, Database, ExecuteOptions, Progress, QueryResult};

use crate::args::{Args, Command, OnError};
use crate::one_line;
use crate::output::{self, Format};

/// How long a statement runs before a progress bar appears.
const PROGRESS_AFTER: Duration = Duration::from_secs(2);

/// A database plus the shell's settings.
pub(crate) struct Shell {
    pub(crate) db: Database,
    format: Format,
    timer: bool,
    on_error: OnError,
    /// True while a statement runs, so Ctrl-C cancels it rather than
    /// ending the shell.
    running: Arc<AtomicBool>,
    interactive: Arc<AtomicBool>,
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
        let interrupt = db.interrupt_handle();
        let (r, i) = (running.clone(), interactive.clone());
        // Ctrl-C cancels the running statement; with none running, a script
        // ends (130, as shells do) and the interactive shell ignores it.
        ctrlc::set_handler(move || {
            if r.load(Ordering::Acquire) {
                interrupt.interrupt();
            } else if !i.load(Ordering::Acquire) {
                std::process::exit(130);
            }
        })
        .context("could not install the Ctrl-C handler")?;
        Ok(Self {
            db,
            format: args.format,
            timer: args.timer,
            on_error: args.on_error,
            running,
            interactive,
        })
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
            if !step_ok && self.on_error == OnError::Stop {
                return Ok(false);
            }
        }
        Ok(ok)
    }

    fn run_file(&mut self, path: &Path) -> Result<bool> {
        match std::fs::read_to_string(path) {
            Ok(text) => self.run_script(&text),
            Err(e) => {
                report(&format!("could not read \"{}\": {e}", path.display()));
                Ok(false)
            }
        }
    }

    /// Runs a script: SQL statements ended by `;`, and dot commands on
    /// lines of their own. False if any statement failed.
    pub(crate) fn run_script(&mut self, text: &str) -> Result<bool> {
        let mut ok = true;
        let mut buffer = String::new();
        for line in text.lines() {
            if buffer.trim().is_empty() && line.trim_start().starts_with('.') {
                buffer.clear();
                match self.dot_command(line.trim()) {
                    Ok(Next::Continue) => {}
                    Ok(Next::Quit) => return Ok(ok),
                    Err(e) => {
                        report(&format!("{e:#}"));
                        ok = false;
                        if self.on_error == OnError::Stop {
                            return Ok(false);
                        }
                    }
                }
                continue;
            }
            buffer.push_str(line);
            buffer.push('\n');
            if !weir_engine::is_incomplete(&buffer) {
                if !self.run_statements(&buffer) {
                    ok = false;
                    if self.on_error == OnError::Stop {
                        return Ok(false);
                    }
                }
                buffer.clear();
            }
        }
        if !buffer.trim().is_empty() && !self.run_statements(&buffer) {
            ok = false;
        }
        Ok(ok)
    }

    /// Runs each statement of `sql`; false if one failed. Stops at the
    /// first failure unless on-error is continue.
    fn run_statements(&mut self, sql: &str) -> bool {
        let mut ok = true;
        for statement in weir_engine::split_statements(sql) {
            if !self.run_statement(&statement) {
                ok = false;
                if self.on_error == OnError::Stop {
                    break;
                }
            }
        }
        ok
    }

    /// Runs one statement and prints its result or error.
    pub(crate) fn run_statement(&mut self, sql: &str) -> bool {
        let start = Instant::now();
        let result = self.execute_with_progress(sql);
        let elapsed = start.elapsed();
        let ok = match result {
            Ok(result) => {
                let mut stdout = std::io::stdout().lock();
                match output::write(&mut stdout, &result, self.format)
                    .and_then(|()| Ok(stdout.flush()?))
                {
                    Ok(()) => true,
                    Err(e) => {
                        report(&format!("could not print the result: {e:#}"));
                        false
                    }
                }
            }
            Err(e) => {
                report(&e.to_string());
                false
            }
        };
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
                for name in self.db.table_names() {
                    writeln!(out, "{name}")?;
                }
            }
            (".schema", table) => {
                let names = match table {
                    Some(t) => vec![t.to_string()],
                    None => self.db.table_names(),
                };
                for name in names {
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
            (".mode", None) => anyhow::bail!(".mode takes table, csv or json"),
            (".read", Some(path)) => {
                drop(out);
                if !self.run_file(Path::new(path))? {
                    anyhow::bail!("a statement in \"{path}\" failed");
                }
            }
            (".read", None) => anyhow::bail!(".read takes a file name"),
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
                            Err(e) => report(&format!("{e:#}")),
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
.mode table|csv|json output format
.read FILE           run the statements in FILE
.help                this text
.quit                leave the shell (also Ctrl-D)
";

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
