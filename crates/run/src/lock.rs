//! Per-stage execution locks shared by every `weir run` process of a
//! project: sentinel files created with `O_CREAT|O_EXCL` holding the
//! owner's PID and its start time (so a reused PID is not mistaken for
//! the owner).
//!
//! A lock whose owner is dead (killed mid-stage) is *stale* and is broken.
//! Breaking races with other breakers and with new owners, so it happens
//! under a second sentinel (`<lock>.break`, also `O_EXCL`): the breaker
//! re-reads the lock under it and removes it only if it still holds the
//! dead owner seen before. Only an owner (its own lock) or a breaker
//! holding the break sentinel ever removes a lock file, so a live owner's
//! lock is never removed. A break sentinel left by a process killed in
//! the microseconds it is held is itself broken once its owner is dead.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// A held lock; dropping it releases it.
#[derive(Debug)]
pub(crate) struct StageLock {
    path: PathBuf,
}

/// Who holds a lock: `pid start-time`.
fn owner_token() -> String {
    let pid = std::process::id();
    format!("{pid} {}", start_time(pid).unwrap_or_default())
}

/// The process's start time (clock ticks since boot) from
/// `/proc/PID/stat`; `None` if the process does not exist (or is a zombie,
/// or the system has no `/proc`).
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // the command may hold spaces and parentheses: fields follow the last ')'
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // fields[0] is the state (field 3), the start time is field 22
    if fields.first() == Some(&"Z") || fields.first() == Some(&"X") {
        return None;
    }
    fields.get(19)?.parse().ok()
}

/// True while the owner recorded in `token` runs. Without `/proc` every
/// owner is taken as alive (locks are then never broken, only waited on).
fn owner_alive(token: &str) -> bool {
    if !Path::new("/proc/self/stat").exists() {
        return true;
    }
    let mut parts = token.split_whitespace();
    let (Some(pid), Some(start)) = (parts.next(), parts.next()) else {
        return false;
    };
    let (Ok(pid), Ok(start)) = (pid.parse::<u32>(), start.parse::<u64>()) else {
        return false;
    };
    start_time(pid) == Some(start)
}

fn read_token(path: &Path) -> std::io::Result<String> {
    let mut s = String::new();
    File::open(path)?.read_to_string(&mut s)?;
    Ok(s)
}

/// Creates `path` holding this process's token, or reports that it exists.
fn create(path: &Path) -> std::io::Result<bool> {
    match OpenOptions::new().write(true).create_new(true).open(path) {
        Ok(mut f) => {
            // no fsync: after a crash every lock is stale anyway
            f.write_all(owner_token().as_bytes())?;
            Ok(true)
        }
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}

/// A lock file seen empty (its owner between create and write) is taken
/// as live for this long.
const EMPTY_GRACE: Duration = Duration::from_secs(5);

impl StageLock {
    /// Takes the lock at `path`, waiting while a live process holds it and
    /// breaking it if its holder is dead. `on_wait` is called once if the
    /// lock was busy; waiting stops with an error once `cancelled` says so.
    pub(crate) fn acquire(
        path: &Path,
        on_wait: &mut dyn FnMut(&str),
        cancelled: &dyn Fn() -> bool,
    ) -> Result<StageLock> {
        let io = |what| Error::io(what, path);
        let mut waited = false;
        let mut pause = Duration::from_millis(1);
        let mut empty_since: Option<Instant> = None;
        loop {
            if create(path).map_err(io("cannot create lock"))? {
                return Ok(StageLock {
                    path: path.to_path_buf(),
                });
            }
            let token = match read_token(path) {
                Ok(t) => t,
                // released between our create and read: try again at once
                Err(e) if e.kind() == ErrorKind::NotFound => continue,
                Err(e) => return Err(io("cannot read lock")(e)),
            };
            let stale = if token.is_empty() {
                empty_since.get_or_insert_with(Instant::now).elapsed() > EMPTY_GRACE
            } else {
                empty_since = None;
                !owner_alive(&token)
            };
            if stale {
                break_stale(path, &token)?;
                continue;
            }
            if cancelled() {
                return Err(Error::Project(format!(
                    "stopped while waiting for lock {} (held by process {})",
                    path.display(),
                    token.split_whitespace().next().unwrap_or("?")
                )));
            }
            if !waited {
                waited = true;
                on_wait(token.split_whitespace().next().unwrap_or("?"));
            }
            // polling a file another process holds: back off up to 50 ms
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }
}

/// Removes the lock at `path` if it still holds `seen`, a dead owner.
fn break_stale(path: &Path, seen: &str) -> Result<()> {
    let guard = break_path(path);
    if !create(&guard).map_err(Error::io("cannot create lock", &guard))? {
        // another breaker is at it; if it died there, its sentinel is stale
        // (an empty one, its owner killed before writing, once it is old)
        if let Ok(token) = read_token(&guard) {
            let stale = if token.is_empty() {
                std::fs::metadata(&guard)
                    .and_then(|m| m.modified())
                    .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > EMPTY_GRACE))
            } else {
                !owner_alive(&token)
            };
            if stale {
                let _ = std::fs::remove_file(&guard);
            }
        }
        std::thread::sleep(Duration::from_millis(1));
        return Ok(());
    }
    let result = match read_token(path) {
        Ok(now) if now == seen => std::fs::remove_file(path)
            .or_else(|e| {
                if e.kind() == ErrorKind::NotFound {
                    Ok(())
                } else {
                    Err(e)
                }
            })
            .map_err(Error::io("cannot remove stale lock", path)),
        _ => Ok(()),
    };
    let _ = std::fs::remove_file(&guard);
    result
}

fn break_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".break");
    path.with_file_name(name)
}

impl Drop for StageLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusive_then_released() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.lock");
        let lock = StageLock::acquire(&path, &mut |_| panic!("free lock"), &|| false).unwrap();
        assert_eq!(read_token(&path).unwrap(), owner_token());
        assert!(!create(&path).unwrap(), "held lock is exclusive");
        drop(lock);
        assert!(!path.exists());
    }

    #[test]
    fn a_dead_owners_lock_is_broken_a_live_ones_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.lock");
        // a dead owner: a start time no process of this PID has
        std::fs::write(&path, format!("{} 1", std::process::id())).unwrap();
        assert!(!owner_alive(&read_token(&path).unwrap()));
        let lock =
            StageLock::acquire(&path, &mut |_| panic!("stale lock waited on"), &|| false).unwrap();
        assert_eq!(read_token(&path).unwrap(), owner_token());
        assert!(owner_alive(&owner_token()));
        // a breaker that saw an older owner leaves the live lock alone
        break_stale(&path, "1 1").unwrap();
        assert_eq!(read_token(&path).unwrap(), owner_token());
        drop(lock);
    }
}
