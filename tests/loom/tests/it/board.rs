//! Board removal: workers that find the same job exhausted race to take it
//! off the board; exactly one removal succeeds and the board ends empty.

use loom::sync::Arc;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::thread;
use weir_executor::{JobBoard, JobHandle, JobOutcome, StepClaim, WorkerKind};

use crate::{check, counting_job, run_counts};

/// What one helper did: successful removals of the heavy and the light job.
type Removals = [usize; 2];

/// The reserve workers' loop, on the public board API: run a step of the
/// front (heaviest) job, and take the job off once its steps are all
/// claimed.
fn help_until_empty(board: &JobBoard, worker: WorkerKind) -> Removals {
    let mut removed = [0; 2];
    while let Some(front) = board.front() {
        if front.run_next_step(worker) == StepClaim::Exhausted && board.remove(&front) {
            // seq 0 is the heavy job, seq 1 the light one.
            removed[front.seq() as usize] += 1;
        }
    }
    removed
}

/// Two helper threads race over a board holding a heavy two-step job while
/// the model's thread inserts a light one-step job and then helps too. Each
/// job is removed by exactly one successful `remove`, every step runs once,
/// and the board ends empty.
pub(crate) fn board_removal_model() {
    let board = Arc::new(JobBoard::default());
    let (heavy, heavy_runs) = counting_job("heavy", 2);
    let (light, light_runs) = counting_job("light", 1);
    let heavy = JobHandle::new(heavy.with_cost(5), 0);
    let light = JobHandle::new(light.with_cost(1), 1);
    let tickets = [heavy.ticket(), light.ticket()];
    assert!(heavy.start());
    board.insert(heavy);
    let helpers: Vec<_> = [WorkerKind::Main, WorkerKind::Reserve]
        .into_iter()
        .map(|worker| {
            let board = Arc::clone(&board);
            thread::spawn(move || help_until_empty(&board, worker))
        })
        .collect();
    assert!(light.start());
    board.insert(light);
    let mut removals = help_until_empty(&board, WorkerKind::Main);
    for helper in helpers {
        let theirs = helper.join().unwrap();
        removals[0] += theirs[0];
        removals[1] += theirs[1];
    }
    assert_eq!(removals, [1, 1], "each job removed exactly once");
    assert!(board.is_empty());
    assert_eq!(board.len(), 0);
    assert_eq!(run_counts(&heavy_runs), [1, 1]);
    assert_eq!(run_counts(&light_runs), [1]);
    for ticket in tickets {
        assert_eq!(ticket.wait(), JobOutcome::Completed);
    }
}

/// The bare race: two threads remove the same handle; exactly one wins.
pub(crate) fn racing_remove_model() {
    let board = Arc::new(JobBoard::default());
    let (job, _runs) = counting_job("once", 1);
    let handle = JobHandle::new(job, 0);
    board.insert(handle.clone());
    let wins = Arc::new(AtomicUsize::new(0));
    let racer = {
        let (board, handle, wins) = (Arc::clone(&board), handle.clone(), Arc::clone(&wins));
        thread::spawn(move || {
            if board.remove(&handle) {
                wins.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    if board.remove(&handle) {
        wins.fetch_add(1, Ordering::Relaxed);
    }
    racer.join().unwrap();
    assert_eq!(wins.load(Ordering::Relaxed), 1, "exactly one removal wins");
    assert!(board.is_empty());
}

#[test]
fn board_removal_succeeds_once_per_job() {
    check("board_removal", board_removal_model);
}

#[test]
fn board_racing_remove_succeeds_once() {
    check("board_racing_remove", racing_remove_model);
}
