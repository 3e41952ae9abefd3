//! The DAG scheduler: greedy starts, failure modes, mutex groups,
//! timeouts, cancel, cycles.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use weir_executor::{
    DagBuilder, DagOutcome, Error, ErrorMode, Job, JobFailure, JobOutcome, Node, NodeError,
    NodeFailure, NodeState, StepContext, StepResult, step_fn,
};

use crate::{Gate, PATIENCE, Rendezvous, executor};

/// A one-step job that appends `name` to `log`.
fn logging(name: &str, log: &Arc<Mutex<Vec<String>>>) -> Job {
    let log = Arc::clone(log);
    let entry = name.to_owned();
    Job::new(name).with_step(step_fn(name.to_owned(), move |_ctx| {
        log.lock().unwrap().push(entry.clone());
        Ok(())
    }))
}

/// A one-step job that runs until its job is cancelled (an error after
/// `PATIENCE`).
fn until_cancelled(name: &str) -> Job {
    Job::new(name).with_step(step_fn(name.to_owned(), spin_until_cancelled))
}

fn spin_until_cancelled(ctx: &StepContext<'_>) -> StepResult {
    let deadline = Instant::now() + PATIENCE;
    while !ctx.is_cancelled() {
        if Instant::now() > deadline {
            return Err("never cancelled".into());
        }
        std::thread::yield_now();
    }
    Ok(())
}

fn failing(name: &str) -> Job {
    Job::new(name).with_step(step_fn("bad", |_ctx| Err("bad row".into())))
}

fn failure_of(node: &str) -> NodeFailure {
    NodeFailure {
        node: node.to_owned(),
        error: NodeError::Job(JobFailure {
            step: 0,
            step_name: "bad".to_owned(),
            message: "bad row".to_owned(),
        }),
    }
}

fn states(pairs: &[(&str, NodeState)]) -> Vec<(String, NodeState)> {
    pairs.iter().map(|(n, s)| ((*n).to_owned(), *s)).collect()
}

#[test]
fn a_diamond_runs_its_middle_nodes_at_once_and_in_dependency_order() {
    let executor = executor(4);
    let log = Arc::new(Mutex::new(Vec::new()));
    // B and C meet: each waits until the other has started, so they must
    // run at the same time.
    let meet = Rendezvous::new(2);
    let middle = |name: &str| {
        let meet = meet.clone();
        let log = Arc::clone(&log);
        let entry = name.to_owned();
        Job::new(name).with_step(move |_: &StepContext<'_>| {
            meet.arrive()?;
            log.lock().unwrap().push(entry.clone());
            Ok(())
        })
    };
    let dag = DagBuilder::new()
        .node(Node::job("d", logging("d", &log)).after("b").after("c"))
        .node(Node::job("b", middle("b")).after("a"))
        .node(Node::job("c", middle("c")).after("a"))
        .node(Node::job("a", logging("a", &log)))
        .build()
        .unwrap();
    let handle = dag.run(&executor);
    assert_eq!(handle.wait_timeout(PATIENCE), Some(DagOutcome::Completed));
    let log = log.lock().unwrap().clone();
    assert_eq!(log.first().map(String::as_str), Some("a"));
    assert_eq!(log.last().map(String::as_str), Some("d"));
    assert_eq!(log.len(), 4);
    assert!(
        handle
            .states()
            .iter()
            .all(|(_, s)| *s == NodeState::Succeeded)
    );
    assert_eq!(executor.stats().jobs_completed, 4);
}

/// a -> b (fails) -> c, and x beside them.
fn failing_chain(mode: ErrorMode, x: Job, log: &Arc<Mutex<Vec<String>>>) -> DagBuilder {
    DagBuilder::new()
        .error_mode(mode)
        .node(Node::job("a", logging("a", log)))
        .node(Node::job("b", failing("b")).after("a"))
        .node(Node::job("c", logging("c", log)).after("b"))
        .node(Node::job("x", x))
}

#[test]
fn fail_mode_stops_everything_and_reports_the_failure_once() {
    let executor = executor(4);
    let log = Arc::new(Mutex::new(Vec::new()));
    // x is a root like a, so it may start after b has already failed
    // (the thread starting the roots can be descheduled between them). To
    // test the stop of a *running* node, b fails only once x runs.
    let meet = Rendezvous::new(2);
    let x_meet = meet.clone();
    let x = Job::new("x").with_step(step_fn("x", move |ctx| -> StepResult {
        x_meet.arrive()?;
        spin_until_cancelled(ctx)
    }));
    let b = Job::new("b").with_step(step_fn("bad", move |_ctx| -> StepResult {
        meet.arrive()?;
        Err("bad row".into())
    }));
    let dag = DagBuilder::new()
        .error_mode(ErrorMode::Fail)
        .node(Node::job("a", logging("a", &log)))
        .node(Node::job("b", b).after("a"))
        .node(Node::job("c", logging("c", &log)).after("b"))
        .node(Node::job("x", x))
        .build()
        .unwrap();
    let handle = dag.run(&executor);
    let outcome = handle.wait_timeout(PATIENCE);
    assert_eq!(outcome, Some(DagOutcome::Failed(vec![failure_of("b")])));
    assert_eq!(
        handle.states(),
        states(&[
            ("a", NodeState::Succeeded),
            ("b", NodeState::Failed),
            ("c", NodeState::Skipped),
            ("x", NodeState::Cancelled),
        ])
    );
    assert_eq!(*log.lock().unwrap(), ["a"]);
    assert!(!handle.cancel(), "an ended run cannot be cancelled");
}

#[test]
fn keep_going_runs_everything_not_depending_on_the_failure() {
    let executor = executor(4);
    let log = Arc::new(Mutex::new(Vec::new()));
    let dag = failing_chain(ErrorMode::KeepGoing, logging("x", &log), &log)
        .node(Node::job("after c", logging("after c", &log)).after("c"))
        .node(Node::job("after x", logging("after x", &log)).after("x"))
        .build()
        .unwrap();
    let handle = dag.run(&executor);
    let outcome = handle.wait_timeout(PATIENCE);
    assert_eq!(outcome, Some(DagOutcome::Failed(vec![failure_of("b")])));
    assert_eq!(
        handle.states(),
        states(&[
            ("a", NodeState::Succeeded),
            ("b", NodeState::Failed),
            ("c", NodeState::Skipped),
            ("x", NodeState::Succeeded),
            ("after c", NodeState::Skipped),
            ("after x", NodeState::Succeeded),
        ])
    );
    let mut log = log.lock().unwrap().clone();
    log.sort();
    assert_eq!(log, ["a", "after x", "x"]);
}

#[test]
fn ignore_mode_treats_a_failure_as_success() {
    let executor = executor(4);
    let log = Arc::new(Mutex::new(Vec::new()));
    let dag = failing_chain(ErrorMode::Ignore, logging("x", &log), &log)
        .build()
        .unwrap();
    let handle = dag.run(&executor);
    assert_eq!(handle.wait_timeout(PATIENCE), Some(DagOutcome::Completed));
    assert_eq!(handle.state("b"), Some(NodeState::Failed));
    assert_eq!(handle.state("c"), Some(NodeState::Succeeded));
    assert_eq!(handle.error("b"), Some(failure_of("b").error));
    assert_eq!(handle.state("nope"), None);
}

#[test]
fn two_nodes_of_one_mutex_group_never_run_at_once() {
    let executor = executor(4);
    let active = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let mut dag = DagBuilder::new();
    for i in 0..6 {
        let active = Arc::clone(&active);
        let most = Arc::clone(&most);
        let job = Job::new(format!("g{i}")).with_step(move |_: &StepContext<'_>| {
            let now = active.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            for _ in 0..200 {
                std::thread::yield_now();
            }
            active.fetch_sub(1, Ordering::SeqCst);
            Ok(())
        });
        dag.push(Node::job(format!("g{i}"), job).mutex("disk"));
    }
    // Nodes of different groups still run at once: they meet.
    let meet = Rendezvous::new(2);
    for name in ["p", "q"] {
        let meet = meet.clone();
        let job = Job::new(name).with_step(move |_: &StepContext<'_>| meet.arrive());
        dag.push(Node::job(name, job).mutex(format!("own {name}")));
    }
    let handle = dag.build().unwrap().run(&executor);
    assert_eq!(handle.wait_timeout(PATIENCE), Some(DagOutcome::Completed));
    assert_eq!(most.load(Ordering::SeqCst), 1);
}

#[test]
fn a_node_past_its_timeout_is_cancelled_and_fails() {
    let executor = executor(2);
    let log = Arc::new(Mutex::new(Vec::new()));
    let limit = Duration::from_millis(20);
    let dag = DagBuilder::new()
        .error_mode(ErrorMode::KeepGoing)
        .node(Node::job("slow", until_cancelled("slow")).timeout(limit))
        .node(Node::job("after", logging("after", &log)).after("slow"))
        .node(Node::job("quick", logging("quick", &log)).timeout(PATIENCE))
        .build()
        .unwrap();
    let handle = dag.run(&executor);
    let expected = NodeFailure {
        node: "slow".to_owned(),
        error: NodeError::TimedOut(limit),
    };
    assert_eq!(
        handle.wait_timeout(PATIENCE),
        Some(DagOutcome::Failed(vec![expected.clone()]))
    );
    assert_eq!(
        expected.to_string(),
        "node slow failed: timed out after 20ms"
    );
    assert_eq!(
        handle.states(),
        states(&[
            ("slow", NodeState::TimedOut),
            ("after", NodeState::Skipped),
            ("quick", NodeState::Succeeded),
        ])
    );
}

#[test]
fn cancel_stops_running_nodes_and_skips_the_rest_once() {
    let executor = executor(2);
    let (gate, gate_job) = Gate::job();
    let log = Arc::new(Mutex::new(Vec::new()));
    let dag = DagBuilder::new()
        .node(Node::job("gate", gate_job))
        .node(Node::job("long", until_cancelled("long")).after("gate"))
        .node(Node::job("later", logging("later", &log)).after("long"))
        .build()
        .unwrap();
    let handle = dag.run(&executor);
    gate.wait_started();
    assert_eq!(handle.state("gate"), Some(NodeState::Running));
    assert_eq!(handle.state("long"), Some(NodeState::Waiting));
    assert_eq!(handle.wait_timeout(Duration::from_millis(1)), None);
    gate.open();
    // Wait until "long" runs, then cancel.
    let deadline = Instant::now() + PATIENCE;
    while handle.state("long") != Some(NodeState::Running) {
        assert!(Instant::now() < deadline, "long never started");
        std::thread::yield_now();
    }
    assert!(handle.cancel());
    assert!(!handle.cancel(), "only the first cancel stops the run");
    assert_eq!(handle.wait_timeout(PATIENCE), Some(DagOutcome::Cancelled));
    assert_eq!(
        handle.states(),
        states(&[
            ("gate", NodeState::Succeeded),
            ("long", NodeState::Cancelled),
            ("later", NodeState::Skipped),
        ])
    );
    assert!(log.lock().unwrap().is_empty());
}

#[test]
fn a_cycle_is_reported_at_build_time_naming_its_nodes() {
    let job = |name: &str| Job::new(name);
    let err = DagBuilder::new()
        .node(Node::job("start", job("start")))
        .node(Node::job("a", job("a")).after("start").after("c"))
        .node(Node::job("b", job("b")).after("a"))
        .node(Node::job("c", job("c")).after("b"))
        .build()
        .unwrap_err();
    assert!(matches!(err, Error::InvalidDag(_)));
    assert_eq!(
        err.to_string(),
        "invalid DAG: the dependencies form a cycle: a -> b -> c -> a"
    );
    let err = DagBuilder::new()
        .node(Node::job("self", job("self")).after("self"))
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid DAG: the dependencies form a cycle: self -> self"
    );
    let err = DagBuilder::new()
        .node(Node::job("a", job("a")).after("missing"))
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid DAG: node a depends on missing, which is not a node"
    );
    let err = DagBuilder::new()
        .node(Node::job("a", job("a")))
        .node(Node::job("a", job("a")))
        .build()
        .unwrap_err();
    assert_eq!(err.to_string(), "invalid DAG: two nodes are named a");
}

#[test]
fn lazy_nodes_make_their_job_when_they_start() {
    let executor = executor(2);
    let log = Arc::new(Mutex::new(Vec::new()));
    let made = {
        let log = Arc::clone(&log);
        Node::lazy("made", move || {
            // "first" has run by now.
            assert_eq!(*log.lock().unwrap(), ["first"]);
            Ok(logging("made", &log))
        })
    };
    let dag = DagBuilder::new()
        .error_mode(ErrorMode::KeepGoing)
        .node(Node::job("first", logging("first", &log)))
        .node(made.after("first"))
        .node(Node::lazy("refuses", || Err("no such table t".into())))
        .node(Node::lazy("panics", || panic!("boom in make")))
        .build()
        .unwrap();
    let handle = dag.run(&executor);
    let Some(DagOutcome::Failed(failures)) = handle.wait_timeout(PATIENCE) else {
        panic!("expected failures");
    };
    let text: Vec<String> = failures.iter().map(ToString::to_string).collect();
    assert_eq!(
        text,
        [
            "node refuses failed: could not start: no such table t",
            "node panics failed: could not start: making its job panicked: boom in make",
        ]
    );
    assert_eq!(handle.state("made"), Some(NodeState::Succeeded));
    assert_eq!(*log.lock().unwrap(), ["first", "made"]);
}

#[test]
fn a_node_whose_make_does_the_work_succeeds_without_a_job() {
    // first -> done (its work done in make, no job) -> last; a node after
    // a done node that fails is skipped in turn
    let executor = executor(2);
    let log = Arc::new(Mutex::new(Vec::new()));
    let done = {
        let log = Arc::clone(&log);
        Node::lazy_or_done("done", move || {
            assert_eq!(*log.lock().unwrap(), ["first"]);
            log.lock().unwrap().push("done".to_owned());
            Ok(None)
        })
    };
    let last = {
        let log = Arc::clone(&log);
        Node::lazy_or_done("last", move || Ok(Some(logging("last", &log))))
    };
    let dag = DagBuilder::new()
        .error_mode(ErrorMode::KeepGoing)
        .node(Node::job("first", logging("first", &log)))
        .node(done.after("first"))
        .node(last.after("done"))
        .node(Node::lazy_or_done("refuses", || Err("no rows".into())))
        .node(Node::job("after refusal", Job::new("after refusal")).after("refuses"))
        .build()
        .unwrap();
    let handle = dag.run(&executor);
    let Some(DagOutcome::Failed(failures)) = handle.wait_timeout(PATIENCE) else {
        panic!("expected one failure");
    };
    let text: Vec<String> = failures.iter().map(ToString::to_string).collect();
    assert_eq!(text, ["node refuses failed: could not start: no rows"]);
    assert_eq!(handle.state("done"), Some(NodeState::Succeeded));
    assert_eq!(handle.state("last"), Some(NodeState::Succeeded));
    assert_eq!(handle.state("after refusal"), Some(NodeState::Skipped));
    assert_eq!(*log.lock().unwrap(), ["first", "done", "last"]);
}

#[test]
fn an_empty_dag_completes_and_a_node_on_a_dropped_executor_fails() {
    let executor = executor(1);
    let handle = DagBuilder::new().build().unwrap().run(&executor);
    assert_eq!(handle.wait(), DagOutcome::Completed);
    let dag = DagBuilder::new()
        .node(Node::job("late", Job::new("late")))
        .build()
        .unwrap();
    let submitter = executor.submitter();
    drop(executor);
    let handle = dag.run_with(submitter);
    let Some(DagOutcome::Failed(failures)) = handle.wait_timeout(PATIENCE) else {
        panic!("expected a failure");
    };
    assert_eq!(
        failures[0].to_string(),
        "node late failed: could not start: the executor has shut down"
    );
}

#[test]
fn the_done_hook_runs_once_after_every_step_stopped() {
    let executor = executor(4);
    // A failed job: the hook waits for the step still running.
    let (gate, gate_job) = Gate::job();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut job = Job::new("fails while one step runs");
    for step in gate_job.into_steps() {
        job.push_step(step);
    }
    let job = job
        .with_step(step_fn("bad", |_ctx| Err("bad row".into())))
        .on_done({
            let seen = Arc::clone(&seen);
            move |outcome: &JobOutcome| seen.lock().unwrap().push(outcome.clone())
        });
    let ticket = executor.submit(job).unwrap();
    gate.wait_started();
    assert!(matches!(
        ticket.wait_timeout(PATIENCE),
        Some(JobOutcome::Failed(_))
    ));
    assert!(seen.lock().unwrap().is_empty(), "the gate step still runs");
    gate.open();
    drop(executor);
    assert_eq!(seen.lock().unwrap().len(), 1);
    assert!(matches!(seen.lock().unwrap()[0], JobOutcome::Failed(_)));

    // A job cancelled while queued: the hook runs on the cancelling thread.
    let executor = crate::executor(1);
    let (gate, gate_job) = Gate::job();
    executor.submit(gate_job).unwrap();
    gate.wait_started();
    let cancelled = Arc::new(Mutex::new(None));
    let job = Job::new("queued").on_done({
        let cancelled = Arc::clone(&cancelled);
        move |outcome: &JobOutcome| {
            *cancelled.lock().unwrap() = Some((outcome.clone(), std::thread::current().id()));
        }
    });
    let ticket = executor.submit(job).unwrap();
    assert!(ticket.cancel());
    assert_eq!(
        *cancelled.lock().unwrap(),
        Some((JobOutcome::Cancelled, std::thread::current().id()))
    );
    gate.open();
}

#[test]
fn jobs_submitted_by_done_hooks_while_the_executor_drops_never_hang() {
    for _ in 0..20 {
        let executor = executor(1);
        let submitter = executor.submitter();
        let next: Arc<Mutex<Option<weir_executor::JobTicket>>> = Arc::new(Mutex::new(None));
        let job = Job::new("first")
            .with_step(step_fn("work", |_ctx| Ok(())))
            .on_done({
                let next = Arc::clone(&next);
                move |_outcome: &JobOutcome| {
                    let ticket = submitter
                        .submit(Job::new("second").with_step(step_fn("work", |_ctx| Ok(()))))
                        .expect("the executor is still alive while it drains");
                    *next.lock().unwrap() = Some(ticket);
                }
            });
        let first = executor.submit(job).unwrap();
        // Drains "first"; "second" lands behind the stop messages, or not.
        drop(executor);
        assert_eq!(first.wait(), JobOutcome::Completed);
        let second = next.lock().unwrap().clone().expect("the hook ran");
        let outcome = second.wait_timeout(PATIENCE);
        assert!(
            matches!(outcome, Some(JobOutcome::Completed | JobOutcome::Cancelled)),
            "{outcome:?}"
        );
    }
}

/// One worker, and the thread waiting for a DAG works on it.
fn working_waiter_executor() -> weir_executor::PipelineExecutor {
    weir_executor::PipelineExecutor::new(weir_executor::ExecutorConfig {
        thread_name: "it-waiter".to_owned(),
        waiters_work: true,
        ..weir_executor::ExecutorConfig::with_threads(1)
    })
    .unwrap()
}

/// A job of two steps that must run at once (each waits for the other)
/// and record the thread each ran on.
fn rendezvous_recording(ran_on: &Arc<Mutex<Vec<std::thread::ThreadId>>>) -> Job {
    let meet = Arc::new(Rendezvous::new(2));
    let mut job = Job::new("meet");
    for i in 0..2 {
        let meet = Arc::clone(&meet);
        let ran_on = Arc::clone(ran_on);
        job.push_step(Box::new(step_fn(format!("meet {i}"), move |_ctx| {
            ran_on.lock().unwrap().push(std::thread::current().id());
            meet.arrive()
        })));
    }
    job
}

#[test]
fn a_waiting_thread_works_on_its_dag() {
    let executor = working_waiter_executor();
    assert_eq!((executor.threads(), executor.parallelism()), (1, 2));
    // The two steps meet, so with one worker the job completes only if
    // the waiter runs one of them.
    let ran_on = Arc::new(Mutex::new(Vec::new()));
    let dag = DagBuilder::new()
        .node(Node::job("first", logging("first", &Arc::default())))
        .node(Node::job("meet", rendezvous_recording(&ran_on)).after("first"))
        .build()
        .unwrap();
    assert_eq!(dag.run(&executor).wait(), DagOutcome::Completed);
    let ran_on = ran_on.lock().unwrap();
    assert_eq!(ran_on.len(), 2);
    assert!(ran_on.contains(&std::thread::current().id()), "{ran_on:?}");
    let stats = executor.shutdown();
    assert_eq!(stats.steps_run_waiting, 1);
    assert_eq!(stats.steps_run_main, 2);
    assert_eq!(stats.board_len, 0);
}

#[test]
fn a_waiting_thread_does_not_work_unless_configured() {
    let executor = executor(2);
    assert!(!executor.waiters_work());
    let ran_on = Arc::new(Mutex::new(Vec::new()));
    let dag = DagBuilder::new()
        .node(Node::job("meet", rendezvous_recording(&ran_on)))
        .build()
        .unwrap();
    assert_eq!(dag.run(&executor).wait(), DagOutcome::Completed);
    let ran_on = ran_on.lock().unwrap();
    assert_eq!(ran_on.len(), 2);
    assert!(!ran_on.contains(&std::thread::current().id()), "{ran_on:?}");
    assert_eq!(executor.shutdown().steps_run_waiting, 0);
}

#[test]
fn an_interrupted_waiter_cancels_the_run_from_inside_a_step() {
    let executor = working_waiter_executor();
    // Two steps that run until cancelled: the worker holds one, the waiter
    // the other; only the waiter's check of `interrupted` (asked where the
    // step asks whether it is cancelled) can end them.
    let mut job = Job::new("spin");
    for i in 0..2 {
        job.push_step(Box::new(step_fn(format!("spin {i}"), spin_until_cancelled)));
    }
    let dag = DagBuilder::new()
        .node(Node::job("spin", job))
        .build()
        .unwrap();
    let handle = dag.run(&executor);
    // Blocked, the waiter asks once per 30 s poll: a hundred asks come
    // from the step it runs.
    let asked = AtomicUsize::new(0);
    let outcome =
        handle.wait_interruptible(PATIENCE, &|| asked.fetch_add(1, Ordering::Relaxed) >= 100);
    assert_eq!(outcome, DagOutcome::Cancelled);
    assert!(asked.load(Ordering::Relaxed) > 100);
    // The worker's step stops too, and the run ends.
    assert_eq!(handle.wait(), DagOutcome::Cancelled);
    assert_eq!(handle.state("spin"), Some(NodeState::Cancelled));
}

#[test]
fn an_interrupt_while_blocked_cancels_within_a_poll() {
    let executor = working_waiter_executor();
    // One step: not offered to the waiter, which blocks and polls.
    let dag = DagBuilder::new()
        .node(Node::job("spin", until_cancelled("spin")))
        .build()
        .unwrap();
    let handle = dag.run(&executor);
    let polls = AtomicUsize::new(0);
    let outcome = handle.wait_interruptible(Duration::from_millis(1), &|| {
        polls.fetch_add(1, Ordering::Relaxed) == 3
    });
    assert_eq!(outcome, DagOutcome::Cancelled);
    assert_eq!(polls.load(Ordering::Relaxed), 4);
    assert_eq!(handle.wait(), DagOutcome::Cancelled);
}

#[test]
fn a_waiting_thread_with_a_small_stack_only_waits() {
    let executor = working_waiter_executor();
    let ran_on = Arc::new(Mutex::new(Vec::new()));
    let (outcome, waiter) = {
        let mut job = Job::new("two");
        for i in 0..2 {
            let ran_on = Arc::clone(&ran_on);
            job.push_step(Box::new(step_fn(format!("step {i}"), move |_ctx| {
                ran_on.lock().unwrap().push(std::thread::current().id());
                Ok(())
            })));
        }
        let dag = DagBuilder::new()
            .node(Node::job("two", job))
            .build()
            .unwrap();
        let handle = dag.run(&executor);
        std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(move || (handle.wait(), std::thread::current().id()))
            .unwrap()
            .join()
            .unwrap()
    };
    assert_eq!(outcome, DagOutcome::Completed);
    let ran_on = ran_on.lock().unwrap();
    assert_eq!(ran_on.len(), 2);
    assert!(!ran_on.contains(&waiter), "{ran_on:?}");
    assert_eq!(executor.shutdown().steps_run_waiting, 0);
}

#[test]
fn many_working_waiters_run_every_step_of_their_dags_exactly_once() {
    let executor = Arc::new(
        weir_executor::PipelineExecutor::new(weir_executor::ExecutorConfig {
            thread_name: "it-waiters".to_owned(),
            waiters_work: true,
            ..weir_executor::ExecutorConfig::with_threads(2)
        })
        .unwrap(),
    );
    let runs = Arc::new(AtomicUsize::new(0));
    let counting = |name: &str, steps: usize| {
        let mut job = Job::new(name);
        for i in 0..steps {
            let runs = Arc::clone(&runs);
            job.push_step(Box::new(step_fn(format!("{name} {i}"), move |_ctx| {
                runs.fetch_add(1, Ordering::Relaxed);
                Ok(())
            })));
        }
        job
    };
    let (threads, dags) = (4, 50);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let executor = Arc::clone(&executor);
            scope.spawn(move || {
                for _ in 0..dags {
                    // a diamond: 3 + 2 + 4 + 3 steps
                    let dag = DagBuilder::new()
                        .node(Node::job("top", counting("top", 3)))
                        .node(Node::job("left", counting("left", 2)).after("top"))
                        .node(Node::job("right", counting("right", 4)).after("top"))
                        .node(
                            Node::job("bottom", counting("bottom", 3))
                                .after("left")
                                .after("right"),
                        )
                        .build()
                        .unwrap();
                    assert_eq!(dag.run(&executor).wait(), DagOutcome::Completed);
                }
            });
        }
    });
    assert_eq!(runs.load(Ordering::Relaxed), threads * dags * 12);
    let stats = Arc::into_inner(executor).unwrap().shutdown();
    assert_eq!(
        stats.steps_run_main + stats.steps_run_reserve + stats.steps_run_waiting,
        (threads * dags * 12) as u64
    );
    assert_eq!(stats.board_len, 0);
}
