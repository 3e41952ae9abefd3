use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rand::{Rng, SeedableRng, rngs::StdRng};
use weir_executor::{Job, JobBoard, JobHandle, JobOutcome, StepClaim, WorkerKind, step_fn};

fn handle(cost: u64, seq: u64) -> JobHandle {
    JobHandle::new(Job::new(format!("{cost}/{seq}")).with_cost(cost), seq)
}

#[test]
fn front_is_heaviest_then_oldest() {
    let board = JobBoard::default();
    assert!(board.is_empty());
    for (cost, seq) in [(5, 3), (10, 2), (1, 0), (10, 1), (5, 4)] {
        board.insert(handle(cost, seq));
    }
    assert_eq!(board.len(), 5);
    let mut order = Vec::new();
    while let Some(front) = board.front() {
        assert!(board.remove(&front));
        assert!(!board.remove(&front), "a handle is removed once");
        order.push((front.cost(), front.seq()));
    }
    assert_eq!(order, [(10, 1), (10, 2), (5, 3), (5, 4), (1, 0)]);
    assert!(board.is_empty());
}

/// Randomized multi-threaded history against the board's contract: every
/// inserted handle is removed by exactly one successful `remove`, and the
/// board ends empty.
#[test]
fn concurrent_inserts_and_pops_remove_each_handle_once() {
    const THREADS: u64 = 4;
    const PER_THREAD: u64 = 2_000;
    let board = Arc::new(JobBoard::default());
    let removed = Arc::new(Mutex::new(Vec::new()));
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let board = Arc::clone(&board);
            let removed = Arc::clone(&removed);
            std::thread::spawn(move || {
                let mut rng = StdRng::seed_from_u64(t);
                let mut mine = Vec::new();
                let mut inserted = 0;
                while inserted < PER_THREAD || rng.random_bool(0.2) {
                    if inserted < PER_THREAD && rng.random_bool(0.5) {
                        let seq = t * PER_THREAD + inserted;
                        board.insert(handle(rng.random_range(0..8), seq));
                        inserted += 1;
                    } else if let Some(front) = board.front()
                        && board.remove(&front)
                    {
                        mine.push(front.seq());
                    }
                }
                removed.lock().unwrap().extend(mine);
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let mut removed = std::mem::take(&mut *removed.lock().unwrap());
    while let Some(front) = board.front() {
        assert!(board.remove(&front));
        removed.push(front.seq());
    }
    let total = (THREADS * PER_THREAD) as usize;
    assert_eq!(removed.len(), total, "no handle removed twice");
    let distinct: HashSet<_> = removed.into_iter().collect();
    assert_eq!(distinct.len(), total);
    assert!(board.is_empty());
}

/// The claim protocol on its own: racing claimers run every step once.
#[test]
fn racing_claimers_run_each_step_once() {
    for round in 0..50 {
        let counts: Arc<Vec<AtomicUsize>> =
            Arc::new((0..16).map(|_| AtomicUsize::new(0)).collect());
        let mut job = Job::new("claims");
        for i in 0..16 {
            let counts = Arc::clone(&counts);
            job.push_step(Box::new(step_fn("count", move |_ctx| {
                counts[i].fetch_add(1, Ordering::SeqCst);
                Ok(())
            })));
        }
        let handle = JobHandle::new(job, round);
        let ticket = handle.ticket();
        assert!(handle.start());
        let claimers: Vec<_> = (0..3)
            .map(|_| {
                let handle = handle.clone();
                std::thread::spawn(move || {
                    let mut ran = Vec::new();
                    loop {
                        match handle.run_next_step(WorkerKind::Reserve) {
                            StepClaim::Ran(i) => ran.push(i),
                            StepClaim::Discarded(i) => panic!("discarded {i}"),
                            StepClaim::Exhausted => return ran,
                        }
                    }
                })
            })
            .collect();
        let mut ran: Vec<usize> = claimers
            .into_iter()
            .flat_map(|c| c.join().unwrap())
            .collect();
        ran.sort_unstable();
        assert_eq!(ran, (0..16).collect::<Vec<_>>());
        assert!(handle.is_exhausted());
        assert_eq!(ticket.wait(), JobOutcome::Completed);
        assert!(counts.iter().all(|c| c.load(Ordering::SeqCst) == 1));
    }
}
