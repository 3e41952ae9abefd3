//! What a project remembers between runs, under its `.weir/` folder:
//! `state/<stage>` (the fingerprint parts of the stage's last successful
//! run and its output's hash), `cache/<hash>.parquet` (outputs by
//! content), `locks/` and `tmp/`. Every file is written atomically: a
//! temporary file, fsync, rename.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use twox_hash::XxHash3_128;

use crate::error::{Error, Result};

/// Bumped whenever what a fingerprint covers, or the cache's format,
/// changes: every stage then runs again.
pub const FORMAT_VERSION: u32 = 1;

/// The folders of a project's `.weir/`.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    pub(crate) state: PathBuf,
    pub(crate) cache: PathBuf,
    pub(crate) locks: PathBuf,
    pub(crate) tmp: PathBuf,
}

impl Layout {
    pub(crate) fn new(project: &Path) -> Layout {
        let root = project.join(".weir");
        Layout {
            state: root.join("state"),
            cache: root.join("cache"),
            locks: root.join("locks"),
            tmp: root.join("tmp"),
        }
    }

    pub(crate) fn create(&self) -> Result<()> {
        for d in [&self.state, &self.cache, &self.locks, &self.tmp] {
            std::fs::create_dir_all(d).map_err(Error::io("cannot create", d))?;
        }
        Ok(())
    }

    pub(crate) fn state_file(&self, stage: &str) -> PathBuf {
        self.state.join(stage.to_lowercase())
    }

    pub(crate) fn lock_file(&self, stage: &str) -> PathBuf {
        self.locks.join(format!("{}.lock", stage.to_lowercase()))
    }

    pub(crate) fn cached(&self, hash: &str) -> PathBuf {
        self.cache.join(format!("{hash}.parquet"))
    }

    /// A fresh temporary file name in `tmp/`.
    pub(crate) fn temp(&self, stem: &str, ext: &str) -> PathBuf {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        self.tmp
            .join(format!("{stem}-{}-{n}.{ext}", std::process::id()))
    }
}

/// A 128-bit content hash, as 32 hex digits.
pub(crate) fn hash_bytes(bytes: &[u8]) -> String {
    format!("{:032x}", XxHash3_128::oneshot(bytes))
}

/// The content hash of a file, read in 1 MiB pieces.
pub(crate) fn hash_file(path: &Path) -> std::io::Result<String> {
    let mut file = File::open(path)?;
    let mut hasher = XxHash3_128::new();
    let mut buf = vec![0; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.write(&buf[..n]);
    }
    Ok(format!("{:032x}", hasher.finish_128()))
}

/// The parts of a stage's fingerprint and what its run made.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Record {
    /// Hash of the normalised SQL.
    pub(crate) sql: String,
    /// Hash of the parameters it uses.
    pub(crate) params: String,
    /// Each input (`file:PATH` or `stage:NAME`) and its content hash.
    pub(crate) inputs: BTreeMap<String, String>,
    /// Hash of all of the above and [`FORMAT_VERSION`].
    pub(crate) fingerprint: String,
    /// Content hash of the output (its file in `cache/`).
    pub(crate) output: String,
    /// Rows of the output.
    pub(crate) rows: u64,
}

impl Record {
    /// Fills `fingerprint` from the other parts.
    pub(crate) fn seal(mut self) -> Record {
        let mut text = format!("v{FORMAT_VERSION}\n{}\n{}\n", self.sql, self.params);
        for (k, v) in &self.inputs {
            text.push_str(&format!("{k}\t{v}\n"));
        }
        self.fingerprint = hash_bytes(text.as_bytes());
        self
    }

    fn render(&self) -> String {
        let mut out = format!(
            "format {FORMAT_VERSION}\nfingerprint {}\nsql {}\nparams {}\noutput {}\nrows {}\n",
            self.fingerprint, self.sql, self.params, self.output, self.rows
        );
        for (k, v) in &self.inputs {
            out.push_str(&format!("input {v} {k}\n"));
        }
        out
    }

    fn parse(text: &str) -> Option<Record> {
        let mut r = Record::default();
        let mut format = None;
        for line in text.lines() {
            let (key, value) = line.split_once(' ')?;
            match key {
                "format" => format = value.parse::<u32>().ok(),
                "fingerprint" => r.fingerprint = value.into(),
                "sql" => r.sql = value.into(),
                "params" => r.params = value.into(),
                "output" => r.output = value.into(),
                "rows" => r.rows = value.parse().ok()?,
                "input" => {
                    let (hash, name) = value.split_once(' ')?;
                    r.inputs.insert(name.into(), hash.into());
                }
                _ => return None,
            }
        }
        (format == Some(FORMAT_VERSION) && !r.fingerprint.is_empty()).then_some(r)
    }

    /// The record at `path`; `None` if there is none, or it is of another
    /// format version or unreadable (the stage then runs).
    pub(crate) fn read(path: &Path) -> Option<Record> {
        Record::parse(&std::fs::read_to_string(path).ok()?)
    }

    /// Writes the record atomically.
    pub(crate) fn write(&self, layout: &Layout, path: &Path) -> Result<()> {
        write_atomic(layout, path, self.render().as_bytes())
    }
}

/// Writes `bytes` to `path` whole or not at all: a temporary file in
/// `tmp/` (same file system), fsync, rename, fsync of the folder.
pub(crate) fn write_atomic(layout: &Layout, path: &Path, bytes: &[u8]) -> Result<()> {
    let temp = layout.temp("state", "tmp");
    let result = (|| {
        let mut f = File::create_new(&temp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&temp, path)?;
        if let Some(dir) = path.parent() {
            File::open(dir)?.sync_all()?;
        }
        Ok(())
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        Error::io("cannot write", path)(e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_fingerprints_cover_every_part() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(dir.path());
        layout.create().unwrap();
        let r = Record {
            sql: "a".into(),
            params: "b".into(),
            inputs: BTreeMap::from([("file:x y.csv".into(), "c".into())]),
            fingerprint: String::new(),
            output: "d".into(),
            rows: 3,
        }
        .seal();
        let path = layout.state_file("S");
        r.write(&layout, &path).unwrap();
        assert_eq!(Record::read(&path), Some(r.clone()));
        let mut other = r.clone();
        other.inputs.insert("file:x y.csv".into(), "changed".into());
        assert_ne!(other.seal().fingerprint, r.fingerprint);
        let mut other = r.clone();
        other.params = "changed".into();
        assert_ne!(other.seal().fingerprint, r.fingerprint);
        assert_eq!(std::fs::read_dir(&layout.tmp).unwrap().count(), 0);
    }
}
