//! Randomized multi-threaded histories of the real lock-free `SkipSet`
//! [`JobBoard`], checked against the contract the loom stand-in (a
//! `Mutex<BTreeSet>`) models: `insert` adds, `front` returns the
//! highest-priority handle present, and `remove` succeeds for exactly one
//! caller per insert.
//!
//! Each round, four threads mix inserts of their own new handles, `front`s
//! and `remove`s (of the front, as the executor's helpers do, or of any
//! handle inserted so far, as racing retirers do). Then, at the quiescent
//! point after the round:
//! - no handle was removed successfully more than once, nor before it was
//!   inserted;
//! - the board's length and front agree with a sequential replay of the
//!   successful operations (inserted minus successfully removed);
//! - during the round, `front` only returned handles already inserted and
//!   not yet removed when the `front` call began.
//!
//! At the end the board is drained through `front` and `remove` and must
//! yield exactly the replay's handles, in priority order.

use std::cmp::Reverse;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::thread;

use rand::{Rng, SeedableRng, rngs::StdRng};
use weir_executor::{Job, JobBoard, JobHandle};

const ROUNDS: u64 = 20;
const THREADS: u64 = 4;
/// New handles each thread inserts per round.
const INSERTS: u64 = 1_000;
/// Operations (insert, front or remove) each thread makes per round, at
/// least.
const OPS: u64 = 4_000;
/// Costs are drawn from `0..COSTS`, so many handles tie on cost and order
/// by age.
const COSTS: u64 = 6;

/// A handle's priority key: the order the board must keep (heaviest, then
/// oldest, first).
fn key(handle: &JobHandle) -> (Reverse<u64>, u64) {
    (Reverse(handle.cost()), handle.seq())
}

/// What the threads record about each handle, indexed by `seq`.
struct Ledger {
    handles: Vec<JobHandle>,
    /// Set just before the handle's one `insert`.
    inserted: Vec<AtomicBool>,
    /// Successful `remove`s.
    removals: Vec<AtomicUsize>,
    /// `clock` value taken just after the handle's successful removal
    /// returned (`u64::MAX` while none has).
    removed_at: Vec<AtomicU64>,
    clock: AtomicU64,
}

impl Ledger {
    fn new(handles: Vec<JobHandle>) -> Self {
        let n = handles.len();
        Ledger {
            handles,
            inserted: (0..n).map(|_| AtomicBool::new(false)).collect(),
            removals: (0..n).map(|_| AtomicUsize::new(0)).collect(),
            removed_at: (0..n).map(|_| AtomicU64::new(u64::MAX)).collect(),
            clock: AtomicU64::new(0),
        }
    }

    fn insert(&self, board: &JobBoard, seq: usize) {
        self.inserted[seq].store(true, Ordering::SeqCst);
        board.insert(self.handles[seq].clone());
    }

    fn remove(&self, board: &JobBoard, handle: &JobHandle) {
        if board.remove(handle) {
            let seq = handle.seq() as usize;
            self.removals[seq].fetch_add(1, Ordering::SeqCst);
            let now = self.clock.fetch_add(1, Ordering::SeqCst);
            self.removed_at[seq].store(now, Ordering::SeqCst);
        }
    }

    /// `front`, checking that what it returns was present at some point
    /// during the call.
    fn front(&self, board: &JobBoard) -> Option<JobHandle> {
        let began = self.clock.fetch_add(1, Ordering::SeqCst);
        let front = board.front()?;
        let seq = front.seq() as usize;
        assert!(
            self.inserted[seq].load(Ordering::SeqCst),
            "front returned {front:?}, which was never inserted"
        );
        let removed_at = self.removed_at[seq].load(Ordering::SeqCst);
        assert!(
            removed_at == u64::MAX || removed_at > began,
            "front returned {front:?}, removed before the call began"
        );
        Some(front)
    }
}

/// One thread's part of a round: insert `mine` (in order) among `OPS`
/// random operations on the board.
fn run_thread(board: &JobBoard, ledger: &Ledger, mine: &[usize], known: usize, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut next = 0;
    let mut ops = 0;
    while ops < OPS || next < mine.len() {
        ops += 1;
        let dice = rng.random_range(0..10);
        if dice < 4 && next < mine.len() {
            ledger.insert(board, mine[next]);
            next += 1;
        } else if dice < 6 {
            ledger.front(board);
        } else if dice < 8 {
            // The helpers' pattern: take the front off.
            if let Some(front) = ledger.front(board) {
                ledger.remove(board, &front);
            }
        } else {
            // A retirer's pattern: remove a given handle, perhaps one that
            // is already gone or not yet inserted.
            let seq = rng.random_range(0..known);
            ledger.remove(board, &ledger.handles[seq]);
        }
    }
}

#[test]
fn skipset_board_histories_match_a_sequential_replay() {
    let total = (ROUNDS * THREADS * INSERTS) as usize;
    let mut rng = StdRng::seed_from_u64(0x5eed);
    let handles = (0..total as u64)
        .map(|seq| {
            let job = Job::new(format!("h{seq}")).with_cost(rng.random_range(0..COSTS));
            JobHandle::new(job, seq)
        })
        .collect();
    let ledger = Ledger::new(handles);
    let board = JobBoard::default();
    // The sequential replay: inserted minus successfully removed.
    let mut replay = BTreeSet::new();
    let per_round = (THREADS * INSERTS) as usize;
    for round in 0..ROUNDS as usize {
        let first = round * per_round;
        let known = first + per_round;
        thread::scope(|scope| {
            for t in 0..THREADS as usize {
                let start = first + t * INSERTS as usize;
                let mine: Vec<usize> = (start..start + INSERTS as usize).collect();
                let (board, ledger) = (&board, &ledger);
                let seed = (round as u64) << 8 | t as u64;
                scope.spawn(move || run_thread(board, ledger, &mine, known, seed));
            }
        });
        // Quiescent point: replay the round's successful operations.
        for seq in 0..known {
            let removals = ledger.removals[seq].load(Ordering::SeqCst);
            assert!(removals <= 1, "handle {seq} removed {removals} times");
            let handle = &ledger.handles[seq];
            if seq >= first {
                replay.insert(key(handle));
            }
            if removals == 1 {
                replay.remove(&key(handle));
            }
        }
        // Count each removal once, in the round it happened.
        let removed: usize = (0..known)
            .filter(|&seq| ledger.removals[seq].load(Ordering::SeqCst) == 1)
            .count();
        assert_eq!(
            board.len(),
            known - removed,
            "round {round}: the board holds every inserted handle not removed"
        );
        assert_eq!(board.len(), replay.len(), "round {round}");
        assert_eq!(
            board.front().map(|front| key(&front)),
            replay.first().copied(),
            "round {round}: front is the replay's highest priority"
        );
    }
    // Drain sequentially: exactly the replay's handles, in priority order.
    let mut drained = Vec::new();
    while let Some(front) = board.front() {
        assert!(board.remove(&front), "a present handle is removed");
        assert!(!board.remove(&front), "a handle is removed once");
        drained.push(key(&front));
    }
    assert_eq!(drained, replay.into_iter().collect::<Vec<_>>());
    assert!(board.is_empty());
}
