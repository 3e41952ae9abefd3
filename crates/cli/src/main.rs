//! `weir`: SQL on CSV and Parquet files from the command line.
//!
//! Thin by design: parse the flags, hand statements to `weir-engine`,
//! print results, and map errors to the exit status.

mod alloc;
mod args;
mod demo;
mod output;
mod run;
mod shell;

use std::io::IsTerminal;
use std::process::ExitCode;

use args::{Args, Mode};

fn main() -> ExitCode {
    alloc::keep_freed_pages();
    let raw: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if raw.first().is_some_and(|a| a == "run") {
        return match run::main(raw[1..].to_vec()) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::FAILURE,
            Err(e) => {
                eprintln!("Error: {}", one_line(&format!("{e:#}")));
                ExitCode::FAILURE
            }
        };
    }
    let args = match args::parse(raw) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("Error: {e}");
            eprintln!("Try `weir --help`.");
            return ExitCode::FAILURE;
        }
    };
    match run(args) {
        Ok(Outcome::Done(true)) => ExitCode::SUCCESS,
        Ok(Outcome::Done(false)) => ExitCode::FAILURE,
        // Ctrl-C stopped a script: 128 + SIGINT, as shells report it
        Ok(Outcome::Interrupted) => ExitCode::from(130),
        Err(e) => {
            shell::exit_if_broken_pipe(&e);
            eprintln!("Error: {}", one_line(&format!("{e:#}")));
            ExitCode::FAILURE
        }
    }
}

/// How a run ended.
enum Outcome {
    /// Every statement ran: true when all succeeded.
    Done(bool),
    /// Ctrl-C stopped a script.
    Interrupted,
}

/// Runs what the flags ask.
fn run(args: Args) -> anyhow::Result<Outcome> {
    let mut shell = match &args.mode {
        Mode::Help | Mode::Version => None,
        _ => Some(shell::Shell::new(&args)?),
    };
    let ok = run_mode(&args, shell.as_mut())?;
    if shell.is_some_and(|s| s.was_interrupted()) {
        return Ok(Outcome::Interrupted);
    }
    Ok(Outcome::Done(ok))
}

/// Runs what the flags ask; `Ok(false)` when a statement failed.
fn run_mode(args: &Args, shell: Option<&mut shell::Shell>) -> anyhow::Result<bool> {
    match &args.mode {
        Mode::Help => {
            print!("{}", args::HELP);
            Ok(true)
        }
        Mode::Version => {
            println!("weir {}", env!("CARGO_PKG_VERSION"));
            Ok(true)
        }
        Mode::Demo { scale } => demo::run(shell.expect("a shell"), *scale),
        Mode::Commands(commands) => shell.expect("a shell").run_commands(commands),
        Mode::Auto => {
            let shell = shell.expect("a shell");
            if std::io::stdin().is_terminal() {
                shell.interactive()
            } else {
                let mut text = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)?;
                shell.run_script(&text)
            }
        }
    }
}

/// Folds a multi-line message onto one line.
pub(crate) fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}
