//! A project: a folder of `.sql` files, one stage each.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use weir_executor::{DagBuilder, Job, Node};
use weir_planner::TableReference;

use crate::error::{Error, Result};

/// One stage: a `.sql` file holding one query, whose result becomes the
/// table named after the file.
#[derive(Clone, Debug)]
pub struct Stage {
    /// The table it makes: the file's name without `.sql`.
    pub name: String,
    /// Its file.
    pub path: PathBuf,
    /// The query as it runs: parameters substituted, one statement.
    pub sql: String,
    /// The file's text with each `${name}` as a placeholder word, so a
    /// changed parameter is not taken for changed SQL.
    pub template: String,
    /// `-- output: path`: a file the result is also written to (format by
    /// its extension), relative to the project folder.
    pub output: Option<PathBuf>,
    /// `-- mutex: name` (several allowed): stages of one group never run
    /// at once.
    pub mutex: Vec<String>,
    /// `-- timeout: 30s`: the stage fails if it runs longer.
    pub timeout: Option<Duration>,
    /// `-- param: name = value`, overridden by the run's parameters: the
    /// values `${name}` takes in the SQL (only those it uses).
    pub params: BTreeMap<String, String>,
    /// Stages whose tables it reads.
    pub deps: Vec<String>,
    /// Files it reads in place, as written in the SQL.
    pub files: Vec<String>,
    /// `-- depends: a, b`: stages it runs after though it does not read
    /// them.
    pub explicit: Vec<String>,
}

/// A loaded, checked project: stages in a dependency order (each after
/// the stages it reads).
#[derive(Clone, Debug)]
pub struct Project {
    /// The project folder.
    pub dir: PathBuf,
    /// The stages, each after its dependencies.
    pub stages: Vec<Stage>,
}

impl Project {
    /// Reads every `.sql` file of `dir` (not of its subfolders) as a stage,
    /// with `params` overriding the files' `-- param:` defaults, and checks
    /// the project: two files making one table (names compare
    /// case-insensitively), a stage reading a table that is no stage, or a
    /// cycle are errors naming them.
    ///
    /// # Errors
    /// [`Error::Io`], [`Error::Project`], [`Error::Sql`].
    pub fn load(dir: &Path, params: &BTreeMap<String, String>) -> Result<Project> {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(Error::io("cannot read project folder", dir))? {
            let path = entry
                .map_err(Error::io("cannot read project folder", dir))?
                .path();
            if path.is_file() && path.extension().is_some_and(|e| e == "sql") {
                files.push(path);
            }
        }
        files.sort();
        if files.is_empty() {
            return Err(Error::Project(format!(
                "no stages: {} holds no .sql file",
                dir.display()
            )));
        }
        let mut stages: Vec<Stage> = Vec::with_capacity(files.len());
        let mut by_name: HashMap<String, usize> = HashMap::new();
        for path in files {
            let stage = parse_stage(&path, params)?;
            if let Some(&other) = by_name.get(&stage.name.to_lowercase()) {
                return Err(Error::Project(format!(
                    "two stages are named {}: {} and {}",
                    stage.name,
                    stages[other].path.display(),
                    path.display()
                )));
            }
            by_name.insert(stage.name.to_lowercase(), stages.len());
            stages.push(stage);
        }
        // dependencies: table references that are stages; any other table
        // is an error (a project's stages run in a fresh database)
        for i in 0..stages.len() {
            let mut refs: Vec<TableReference> = stages[i]
                .explicit
                .iter()
                .map(|d| TableReference::Table(d.clone()))
                .collect();
            refs.extend(
                weir_planner::table_references(&stages[i].sql).map_err(|source| Error::Sql {
                    stage: stages[i].name.clone(),
                    path: stages[i].path.clone(),
                    source,
                })?,
            );
            for r in refs {
                match r {
                    TableReference::Table(t) => match by_name.get(&t.to_lowercase()) {
                        Some(&d) => {
                            let dep = stages[d].name.clone();
                            if !stages[i].deps.contains(&dep) {
                                stages[i].deps.push(dep);
                            }
                        }
                        None => {
                            let mut names: Vec<&str> =
                                stages.iter().map(|s| s.name.as_str()).collect();
                            names.sort_unstable();
                            return Err(Error::Project(format!(
                                "stage {} ({}) reads table {t}, which is no stage of this project \
                                 (stages: {})",
                                stages[i].name,
                                stages[i].path.display(),
                                names.join(", ")
                            )));
                        }
                    },
                    TableReference::File(f) => stages[i].files.push(f),
                }
            }
        }
        check_acyclic(&stages)?;
        let stages = dependency_order(stages);
        Ok(Project {
            dir: dir.to_path_buf(),
            stages,
        })
    }

    /// The stage named `name` (case-insensitive).
    pub fn stage(&self, name: &str) -> Option<&Stage> {
        self.stages
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case(name))
    }

    /// The stages to run for a selection: the selected ones and every stage
    /// they need, in dependency order; all of them for an empty selection.
    ///
    /// # Errors
    /// [`Error::Project`] for a name that is no stage.
    pub fn select(&self, names: &[String]) -> Result<Vec<&Stage>> {
        if names.is_empty() {
            return Ok(self.stages.iter().collect());
        }
        let mut wanted: Vec<String> = Vec::new();
        let mut todo: Vec<String> = Vec::new();
        for n in names {
            let Some(s) = self.stage(n) else {
                return Err(Error::Project(format!("no stage is named {n}")));
            };
            todo.push(s.name.clone());
        }
        while let Some(n) = todo.pop() {
            if wanted.contains(&n) {
                continue;
            }
            let s = self.stage(&n).expect("dependencies are stages");
            todo.extend(s.deps.iter().cloned());
            wanted.push(n);
        }
        Ok(self
            .stages
            .iter()
            .filter(|s| wanted.contains(&s.name))
            .collect())
    }
}

/// Cycles are found by the executor's DAG builder, which names the cycle
/// (`a -> b -> a`); the nodes here never run.
fn check_acyclic(stages: &[Stage]) -> Result<()> {
    let mut dag = DagBuilder::new();
    for s in stages {
        let mut node = Node::job(s.name.clone(), Job::new(s.name.clone()));
        for d in &s.deps {
            node = node.after(d.clone());
        }
        dag.push(node);
    }
    dag.build()
        .map(drop)
        .map_err(|e| Error::Project(format!("the stages' dependencies are not a DAG: {e}")))
}

/// Stages reordered so each comes after its dependencies (file order
/// otherwise); the graph is known to be acyclic.
fn dependency_order(stages: Vec<Stage>) -> Vec<Stage> {
    let mut done: Vec<String> = Vec::with_capacity(stages.len());
    let mut left = stages;
    let mut out = Vec::with_capacity(left.len());
    while !left.is_empty() {
        let (ready, rest): (Vec<Stage>, Vec<Stage>) = left
            .into_iter()
            .partition(|s| s.deps.iter().all(|d| done.contains(d)));
        assert!(!ready.is_empty(), "a cycle passed the DAG check");
        done.extend(ready.iter().map(|s| s.name.clone()));
        out.extend(ready);
        left = rest;
    }
    out
}

/// Reads a stage file: its header comments, then one query.
fn parse_stage(path: &Path, overrides: &BTreeMap<String, String>) -> Result<Stage> {
    let text = std::fs::read_to_string(path).map_err(Error::io("cannot read stage", path))?;
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let bad =
        |line: usize, msg: String| Error::Project(format!("{}:{line}: {msg}", path.display()));
    let mut stage = Stage {
        name: name.clone(),
        path: path.to_path_buf(),
        sql: String::new(),
        template: String::new(),
        output: None,
        mutex: Vec::new(),
        timeout: None,
        params: BTreeMap::new(),
        deps: Vec::new(),
        files: Vec::new(),
        explicit: Vec::new(),
    };
    let mut defaults = BTreeMap::new();
    // the header: the comment lines before the first line of SQL
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let Some(comment) = line.strip_prefix("--") else {
            break;
        };
        let Some((key, value)) = comment.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match key.trim().to_ascii_lowercase().as_str() {
            "output" => {
                if value.is_empty() {
                    return Err(bad(i + 1, "-- output: needs a file name".into()));
                }
                stage.output = Some(PathBuf::from(value));
            }
            "mutex" => stage.mutex.push(value.to_string()),
            "depends" => stage.explicit.extend(
                value
                    .split(',')
                    .map(|d| d.trim().to_string())
                    .filter(|d| !d.is_empty()),
            ),
            "timeout" => {
                stage.timeout = Some(parse_duration(value).ok_or_else(|| {
                    bad(
                        i + 1,
                        format!("bad timeout \"{value}\" (write e.g. 30s, 500ms, 2m)"),
                    )
                })?);
            }
            "param" => {
                let Some((k, v)) = value.split_once('=') else {
                    return Err(bad(
                        i + 1,
                        format!("bad parameter \"{value}\" (write name = value)"),
                    ));
                };
                defaults.insert(k.trim().to_string(), v.trim().to_string());
            }
            // any other comment is just a comment
            _ => {}
        }
    }
    // substitute ${name}
    let mut sql = String::with_capacity(text.len());
    let mut template = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(start) = rest.find("${") {
        sql.push_str(&rest[..start]);
        template.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(Error::Project(format!(
                "{}: unclosed parameter reference ${{",
                path.display()
            )));
        };
        let key = after[..end].trim();
        let value = overrides
            .get(key)
            .or_else(|| defaults.get(key))
            .ok_or_else(|| {
                Error::Project(format!(
                    "{}: parameter {key} has no value (set it with -- param: {key} = value or --param {key}=value)",
                    path.display()
                ))
            })?;
        stage.params.insert(key.to_string(), value.clone());
        sql.push_str(value);
        template.push_str(&format!(" __weir_param_{key}__ "));
        rest = &after[end + 1..];
    }
    sql.push_str(rest);
    template.push_str(rest);
    stage.template = template;
    let statements = weir_engine::split_statements(&sql);
    let [one] = statements.as_slice() else {
        return Err(Error::Project(format!(
            "{}: a stage holds exactly one query, this file holds {} statements",
            path.display(),
            statements.len()
        )));
    };
    let single = weir_planner::is_single_query(one).map_err(|source| Error::Sql {
        stage: name.clone(),
        path: path.to_path_buf(),
        source,
    })?;
    if !single {
        return Err(Error::Project(format!(
            "{}: a stage holds one query (SELECT, WITH or VALUES), not another statement",
            path.display()
        )));
    }
    stage.sql = one.trim().to_string();
    Ok(stage)
}

/// `30s`, `500ms`, `2m`, `1h`, or seconds.
fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !(c.is_ascii_digit() || c == '.')) {
        Some(i) => (&text[..i], text[i..].trim()),
        None => (text, "s"),
    };
    let n: f64 = number.parse().ok()?;
    let seconds = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        _ => return None,
    };
    (seconds.is_finite() && seconds > 0.0).then(|| Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s"), Some(Duration::from_secs(30)));
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Some(Duration::from_secs(120)));
        assert_eq!(parse_duration("3"), Some(Duration::from_secs(3)));
        assert_eq!(parse_duration("3 days"), None);
        assert_eq!(parse_duration("0s"), None);
    }
}
