//! `weir run [DIR] [STAGE...]`: flags, then weir-run does the work.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use weir_run::{OnError, Project, RunOptions};

pub(crate) const HELP: &str = "\
usage: weir run [DIR] [STAGE...] [OPTIONS]

Runs the SQL stages of folder DIR (default: the current folder): each .sql
file is one query whose result becomes the table named after the file.
Stages run in parallel as their inputs allow; unchanged stages are restored
from the cache in DIR/.weir/. Naming stages runs them and what they need.

Header comments of a stage file:
  -- output: out/x.parquet     also write the result to this file (.parquet or .csv)
  -- mutex: NAME               stages of one group never run at once
  -- depends: STAGE, ...       run after these stages, though not reading them
  -- timeout: 30s              fail the stage if it runs longer
  -- param: NAME = VALUE       a parameter, used in the SQL as ${NAME}

options:
      --on-error fail|keep-going|ignore
                             on a failed stage: stop everything (default), run what
                             does not depend on it, or run everything
      --dry-run              print what would run and why; change nothing
      --explain              print why each stage runs or not, then run
      --param NAME=VALUE     set a parameter (repeatable; overrides the files' values)
      --threads N            worker threads (default: all cores)
  -h, --help                 print this help

Exit status: 0 when every stage succeeded or was up to date, 1 otherwise.
";

struct RunArgs {
    dir: PathBuf,
    options: RunOptions,
    params: BTreeMap<String, String>,
    dry_run: bool,
    explain: bool,
}

fn parse(args: Vec<OsString>) -> Result<Option<RunArgs>> {
    let mut out = RunArgs {
        dir: PathBuf::from("."),
        options: RunOptions::default(),
        params: BTreeMap::new(),
        dry_run: false,
        explain: false,
    };
    let mut positional = Vec::new();
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        let arg = arg
            .into_string()
            .map_err(|a| anyhow::anyhow!("argument {a:?} is not UTF-8"))?;
        let mut value = |flag: &str| {
            it.next()
                .and_then(|v| v.into_string().ok())
                .with_context(|| format!("{flag} needs a value"))
        };
        match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "--dry-run" => out.dry_run = true,
            "--explain" => out.explain = true,
            "--on-error" => {
                out.options.on_error = match value("--on-error")?.as_str() {
                    "fail" => OnError::Fail,
                    "keep-going" => OnError::KeepGoing,
                    "ignore" => OnError::Ignore,
                    other => {
                        bail!("unknown --on-error \"{other}\": use fail, keep-going or ignore")
                    }
                }
            }
            "--param" => {
                let p = value("--param")?;
                let Some((k, v)) = p.split_once('=') else {
                    bail!("--param needs NAME=VALUE, got \"{p}\"");
                };
                out.params
                    .insert(k.trim().to_string(), v.trim().to_string());
            }
            "--threads" => {
                let n = value("--threads")?;
                out.options.threads =
                    Some(n.parse().ok().filter(|&n: &usize| n > 0).with_context(|| {
                        format!("--threads needs a positive number, got \"{n}\"")
                    })?);
            }
            flag if flag.starts_with('-') => bail!("unknown option {flag} for weir run"),
            _ => positional.push(arg),
        }
    }
    let mut positional = positional.into_iter();
    if let Some(first) = positional.next() {
        // the first word is the folder when it is one, else a stage
        if std::path::Path::new(&first).is_dir() {
            out.dir = PathBuf::from(first);
        } else {
            out.options.stages.push(first);
        }
    }
    out.options.stages.extend(positional);
    Ok(Some(out))
}

/// Prints a line; a closed stdout (`| head`) does not stop the run.
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
}

/// Runs `weir run`; true when every stage succeeded.
pub(crate) fn main(args: Vec<OsString>) -> Result<bool> {
    let Some(args) = parse(args)? else {
        print!("{HELP}");
        return Ok(true);
    };
    let dir = args
        .dir
        .canonicalize()
        .with_context(|| format!("cannot open project folder {}", args.dir.display()))?;
    // stages name files relative to their project folder
    std::env::set_current_dir(&dir)
        .with_context(|| format!("cannot enter project folder {}", dir.display()))?;
    let project = Project::load(&dir, &args.params)?;
    if args.dry_run || args.explain {
        let mut runs = 0;
        for (stage, reason) in weir_run::explain(&project, &args.options)? {
            if reason != weir_run::Reason::UpToDate {
                runs += 1;
            }
            say(&format!("{stage}: {reason}"));
        }
        if args.dry_run {
            println!(
                "{runs} of {} stages would run",
                project.select(&args.options.stages)?.len()
            );
            return Ok(true);
        }
    }
    let summary = weir_run::run(&project, &args.options, |report| say(&report.to_string()))?;
    say(&summary.to_string());
    Ok(summary.success())
}
