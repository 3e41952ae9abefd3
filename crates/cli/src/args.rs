//! Command-line flags.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::output::Format;

pub(crate) const HELP: &str = "\
weir: an embeddable parallel SQL engine, on CSV and Parquet files

usage: weir [OPTIONS]            interactive shell (SQL on stdin when it is not a terminal)
       weir -c SQL [-c SQL ...]  run SQL statements in order
       weir -f FILE              run the statements of FILE
       weir --demo [--scale SF]  run the benchmark queries on generated TPC-H lineitem
       weir run [DIR] [STAGE...] run a folder of SQL stages (see `weir run --help`)

options:
  -c, --command SQL          run SQL (repeatable; -c and -f run in the order given)
  -f, --file FILE            run the statements in FILE
      --format table|box|csv|json
                             output format (default table; json prints one object per row)
      --threads N            threads per query, the caller's included (default: all cores)
      --timeout SECS         cancel a statement that runs longer than SECS
      --on-error stop|continue
                             after a failed statement: stop (default) or run the rest
      --timer                print `Run Time (s): real X.XXXXXX` to stderr after each statement
      --demo                 generate TPC-H lineitem in memory and run the benchmark queries
      --scale SF             scale factor for --demo (default 0.1)
  -h, --help                 print this help
  -V, --version              print the version

In the shell, statements end with `;`. Dot commands: .tables, .schema [TABLE],
.timer on|off, .mode table|box|csv|json, .maxrows N, .read FILE, .help, .quit
Files are queried in place: SELECT * FROM 'data.csv' or read_parquet('data.parquet').
Exit status: 0 when every statement succeeded, 1 otherwise.
";

/// What to run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Mode {
    Help,
    Version,
    Demo {
        scale: f64,
    },
    /// `-c` and `-f` in order.
    Commands(Vec<Command>),
    /// Interactive on a terminal, else a script on stdin.
    Auto,
}

/// One `-c` or `-f`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Command {
    Sql(String),
    File(PathBuf),
}

/// Whether to go on after an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnError {
    Stop,
    Continue,
}

/// Parsed flags.
#[derive(Debug, Clone)]
pub(crate) struct Args {
    pub(crate) mode: Mode,
    pub(crate) format: Format,
    pub(crate) threads: Option<usize>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) on_error: OnError,
    pub(crate) timer: bool,
}

pub(crate) fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Args> {
    let mut out = Args {
        mode: Mode::Auto,
        format: Format::Table,
        threads: None,
        timeout: None,
        on_error: OnError::Stop,
        timer: false,
    };
    let mut commands = Vec::new();
    let mut demo = false;
    let mut scale = None;
    let mut help = false;
    let mut version = false;
    let mut it = args.into_iter().map(|a| a.to_string_lossy().into_owned());
    while let Some(arg) = it.next() {
        // --flag=value is the same as --flag value
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| -> Result<String> {
            match inline.clone() {
                Some(v) => Ok(v),
                None => it.next().with_context(|| format!("{name} needs a value")),
            }
        };
        match flag.as_str() {
            "-c" | "--command" => commands.push(Command::Sql(value(&flag)?)),
            "-f" | "--file" => commands.push(Command::File(value(&flag)?.into())),
            "--format" => out.format = value(&flag)?.parse()?,
            "--threads" => {
                let v = value(&flag)?;
                let n: usize = v.parse().ok().filter(|n| *n > 0).with_context(|| {
                    format!("--threads must be a positive integer, got \"{v}\"")
                })?;
                out.threads = Some(n);
            }
            "--timeout" => {
                let v = value(&flag)?;
                let secs: f64 = v
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s > 0.0)
                    .with_context(|| {
                        format!("--timeout must be a positive number of seconds, got \"{v}\"")
                    })?;
                out.timeout = Some(Duration::from_secs_f64(secs));
            }
            "--on-error" => {
                out.on_error = match value(&flag)?.as_str() {
                    "stop" => OnError::Stop,
                    "continue" => OnError::Continue,
                    other => bail!("--on-error must be stop or continue, got \"{other}\""),
                }
            }
            "--timer" => out.timer = true,
            "--demo" => demo = true,
            "--scale" => {
                let v = value(&flag)?;
                let sf: f64 = v
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s > 0.0 && *s <= 100.0)
                    .with_context(|| {
                        format!("--scale must be a number in (0, 100], got \"{v}\"")
                    })?;
                scale = Some(sf);
            }
            "-h" | "--help" => help = true,
            "-V" | "--version" => version = true,
            other if other.starts_with('-') => bail!("unknown option \"{other}\""),
            other => bail!(
                "unexpected argument \"{other}\" (weir databases live in memory; query files with SELECT * FROM '{other}')"
            ),
        }
    }
    out.mode = if help {
        Mode::Help
    } else if version {
        Mode::Version
    } else if demo {
        if !commands.is_empty() {
            bail!("--demo cannot be combined with -c or -f");
        }
        Mode::Demo {
            scale: scale.unwrap_or(0.1),
        }
    } else if scale.is_some() {
        bail!("--scale is only meaningful with --demo");
    } else if commands.is_empty() {
        Mode::Auto
    } else {
        Mode::Commands(commands)
    };
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_strs(args: &[&str]) -> Result<Args> {
        parse(args.iter().map(OsString::from))
    }

    #[test]
    fn commands_keep_their_order() {
        let a = parse_strs(&["-c", "SELECT 1", "-f", "x.sql", "--command=SELECT 2"]).unwrap();
        assert_eq!(
            a.mode,
            Mode::Commands(vec![
                Command::Sql("SELECT 1".into()),
                Command::File("x.sql".into()),
                Command::Sql("SELECT 2".into()),
            ])
        );
    }

    #[test]
    fn flags_parse_and_bad_values_are_named() {
        let a = parse_strs(&[
            "--format",
            "csv",
            "--threads=3",
            "--timeout",
            "1.5",
            "--on-error",
            "continue",
            "--timer",
        ])
        .unwrap();
        assert_eq!(a.format, Format::Csv);
        assert_eq!(a.threads, Some(3));
        assert_eq!(a.timeout, Some(Duration::from_millis(1500)));
        assert_eq!(a.on_error, OnError::Continue);
        assert!(a.timer);
        for (bad, needle) in [
            (vec!["--threads", "0"], "\"0\""),
            (vec!["--format", "xml"], "xml"),
            (vec!["--timeout", "-1"], "\"-1\""),
            (vec!["--bogus"], "--bogus"),
            (vec!["-c"], "needs a value"),
            (vec!["data.db"], "data.db"),
        ] {
            let err = parse_strs(&bad).unwrap_err().to_string();
            assert!(err.contains(needle), "{bad:?}: {err}");
        }
    }
}
