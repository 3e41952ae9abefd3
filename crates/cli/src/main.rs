//! `weir`: SQL on CSV and Parquet files from the command line.
//!
//! Thin by design: parse the flags, hand statements to `weir-engine`,
//! print results, and map errors to the exit status.

mod args;
mod demo;
mod output;
mod shell;

use std::io::IsTerminal;
use std::process::ExitCode;

use args::{Args, Mode};

/// The system allocator hands freed pages back to the kernel and faults them
/// in again on every morsel; mimalloc keeps them (TPC-H Q1 at SF1 on two
/// threads: 332 ms with the system allocator, 231 ms with mimalloc).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args = match args::parse(std::env::args_os().skip(1)) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("Error: {e}");
            eprintln!("Try `weir --help`.");
            return ExitCode::FAILURE;
        }
    };
    match run(args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("Error: {}", one_line(&format!("{e:#}")));
            ExitCode::FAILURE
        }
    }
}

/// Runs what the flags ask; `Ok(false)` when a statement failed.
fn run(args: Args) -> anyhow::Result<bool> {
    match &args.mode {
        Mode::Help => {
            print!("{}", args::HELP);
            Ok(true)
        }
        Mode::Version => {
            println!("weir {}", env!("CARGO_PKG_VERSION"));
            Ok(true)
        }
        Mode::Demo { scale } => {
            let mut shell = shell::Shell::new(&args)?;
            demo::run(&mut shell, *scale)
        }
        Mode::Commands(commands) => {
            let mut shell = shell::Shell::new(&args)?;
            shell.run_commands(commands)
        }
        Mode::Auto => {
            let mut shell = shell::Shell::new(&args)?;
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
