//! The JobBoard: running jobs that other workers may help with, heaviest
//! first.

use std::fmt;

use crate::job::JobHandle;

/// A concurrent ordered set of [`JobHandle`]s, highest priority first.
///
/// Contract (linearizable): `insert` adds a handle; `front` returns a clone
/// of the highest-priority handle present; `remove` takes a handle off and
/// returns true for exactly one caller per insert, however many race.
///
/// Backed by a lock-free `crossbeam_skiplist::SkipSet`; under
/// `cfg(weir_loom)` a `loom` `Mutex<BTreeSet>` stands in (loom cannot see
/// the skip list's atomics). The stand-in must not order more than the
/// skip list: a scan of the real board that misses a concurrent insert
/// synchronises with nobody, so `front` and `find` first read a length
/// kept beside the set (stored under the lock) and return `None` without
/// locking when it reads zero. Loom may hand them a stale zero, just as
/// the skip list may miss an insert that does not happen-before the scan;
/// the executor's wake-up fences are what rule that out. The skip list frees removed entries through
/// epoch-based reclamation, so a removed handle's memory may outlive
/// `remove` briefly; the executor drops every step before removing it, so
/// only bookkeeping lingers.
pub struct JobBoard {
    #[cfg(not(weir_loom))]
    set: crossbeam_skiplist::SkipSet<JobHandle>,
    #[cfg(weir_loom)]
    set: crate::sync::Mutex<std::collections::BTreeSet<JobHandle>>,
    /// The set's length, stored under the lock.
    #[cfg(weir_loom)]
    len: crate::sync::AtomicUsize,
}

impl Default for JobBoard {
    fn default() -> Self {
        JobBoard {
            #[cfg(not(weir_loom))]
            set: crossbeam_skiplist::SkipSet::new(),
            #[cfg(weir_loom)]
            set: crate::sync::Mutex::new(std::collections::BTreeSet::new()),
            #[cfg(weir_loom)]
            len: crate::sync::AtomicUsize::new(0),
        }
    }
}

impl JobBoard {
    /// Puts a handle on the board.
    pub fn insert(&self, handle: JobHandle) {
        #[cfg(not(weir_loom))]
        self.set.insert(handle);
        #[cfg(weir_loom)]
        {
            let mut set = self.set.lock().unwrap();
            set.insert(handle);
            self.len.store(set.len(), crate::sync::Ordering::Release);
        }
    }

    /// The highest-priority handle (heaviest, then oldest), if any.
    pub fn front(&self) -> Option<JobHandle> {
        #[cfg(not(weir_loom))]
        return self.set.front().map(|entry| entry.value().clone());
        #[cfg(weir_loom)]
        return self.find(|_| true);
    }

    /// Takes `handle` off the board; true iff this call removed it.
    pub fn remove(&self, handle: &JobHandle) -> bool {
        // Not `SkipSet::remove(..).is_some()`: in crossbeam-skiplist 0.1.3 it
        // returns `Some` to every racing caller, also to those whose marking
        // of the node failed (`base.rs`, `SkipList::remove` returns the entry
        // after `mark_tower()` whatever it returned). `Entry::remove` reports
        // the marking itself, which succeeds exactly once per node.
        #[cfg(not(weir_loom))]
        let removed = self.set.get(handle).is_some_and(|entry| entry.remove());
        #[cfg(weir_loom)]
        let removed = {
            let mut set = self.set.lock().unwrap();
            let removed = set.remove(handle);
            self.len.store(set.len(), crate::sync::Ordering::Release);
            removed
        };
        #[cfg(weir_loom_bug = "pop")]
        {
            // Planted bug: ignore whether this caller's removal succeeded.
            let _ = removed;
            true
        }
        #[cfg(not(weir_loom_bug = "pop"))]
        removed
    }

    /// The highest-priority handle for which `pred` holds, if any.
    pub(crate) fn find(&self, pred: impl Fn(&JobHandle) -> bool) -> Option<JobHandle> {
        #[cfg(not(weir_loom))]
        return self
            .set
            .iter()
            .find(|entry| pred(entry.value()))
            .map(|entry| entry.value().clone());
        #[cfg(weir_loom)]
        {
            if self.len.load(crate::sync::Ordering::Acquire) == 0 {
                return None;
            }
            self.set.lock().unwrap().iter().find(|h| pred(h)).cloned()
        }
    }

    /// Number of handles on the board. Exact (it counts the entries rather
    /// than reading the skip list's relaxed counter), and O(len): the board
    /// holds about one job per main worker.
    pub fn len(&self) -> usize {
        #[cfg(not(weir_loom))]
        return self.set.iter().count();
        #[cfg(weir_loom)]
        return self.set.lock().unwrap().len();
    }

    /// True if the board holds no handle.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl fmt::Debug for JobBoard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JobBoard")
            .field("len", &self.len())
            .finish()
    }
}
