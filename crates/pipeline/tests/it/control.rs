//! Timeouts, cancellation and progress.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use arrow::datatypes::{DataType, Field, Schema};
use weir_pipeline::{Error, ExecOptions, Progress, execute, series_table};
use weir_planner::{AggregateFunction, BinaryOp, Expr, LogicalPlan, TableSource};

use crate::common::*;

/// `count(*) FROM big WHERE CAST(x AS VARCHAR) LIKE '%123%'` over 4 M rows
/// in morsels of 1000: far more than a few milliseconds of work.
fn slow_query() -> (Tables, LogicalPlan) {
    let table = series_table(0, 4_000_000, 1, "x").unwrap();
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)]));
    let sources = Tables::default().with("big", table);
    let like = Expr::Like {
        expr: Box::new(Expr::Cast {
            expr: Box::new(Expr::column(0, "x")),
            to: DataType::Utf8,
            try_cast: false,
        }),
        pattern: "%123%".into(),
        negated: false,
        case_insensitive: false,
        escape: None,
    };
    let plan = aggregate(
        filter(
            LogicalPlan::Scan {
                source: TableSource::Table("big".into()),
                schema,
            },
            like,
        ),
        vec![],
        vec![agg(AggregateFunction::CountStar, None, false)],
    );
    (sources, plan)
}

#[test]
fn deadline_already_past() {
    let (sources, plan) = slow_query();
    let opts = ExecOptions {
        deadline: Some(Instant::now()),
        ..ExecOptions::default()
    };
    let err = execute(&plan, &sources, &executor(2), &opts).unwrap_err();
    assert!(matches!(err, Error::Timeout(_)), "{err:?}");
}

#[test]
fn deadline_during_the_job() {
    let (sources, plan) = slow_query();
    let executor = executor(2);
    let progress = Arc::new(Progress::new());
    let opts = ExecOptions {
        morsel_rows: 1000,
        deadline: Some(Instant::now() + Duration::from_millis(20)),
        progress: Some(Arc::clone(&progress)),
        ..ExecOptions::default()
    };
    let started = Instant::now();
    let err = execute(&plan, &sources, &executor, &opts).unwrap_err();
    assert!(matches!(err, Error::Timeout(_)), "{err:?}");
    assert!(err.to_string().contains("Timeout"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(progress.morsels_done() < progress.morsels_total());
    // the executor is free again: a small query runs to the end
    let out = execute(
        &count_star(scan_t()),
        &tables(),
        &executor,
        &ExecOptions::default(),
    )
    .unwrap();
    assert_eq!(rows(&out), vec!["10"]);
}

#[test]
fn cancel_before_and_during() {
    let (sources, plan) = slow_query();
    let executor = executor(2);
    let cancel = Arc::new(AtomicBool::new(true));
    let opts = ExecOptions {
        cancel: Some(Arc::clone(&cancel)),
        ..ExecOptions::default()
    };
    assert!(matches!(
        execute(&plan, &sources, &executor, &opts),
        Err(Error::Cancelled)
    ));

    cancel.store(false, Ordering::SeqCst);
    let progress = Arc::new(Progress::new());
    let opts = ExecOptions {
        morsel_rows: 1000,
        cancel: Some(Arc::clone(&cancel)),
        progress: Some(Arc::clone(&progress)),
        ..ExecOptions::default()
    };
    let result = std::thread::scope(|s| {
        let watcher = {
            let (cancel, progress) = (Arc::clone(&cancel), Arc::clone(&progress));
            s.spawn(move || {
                // cancel once the first morsel is done
                while progress.morsels_done() == 0 {
                    std::thread::yield_now();
                }
                cancel.store(true, Ordering::SeqCst);
            })
        };
        let result = execute(&plan, &sources, &executor, &opts);
        watcher.join().unwrap();
        result
    });
    assert!(matches!(result, Err(Error::Cancelled)), "{result:?}");
    assert!(progress.morsels_done() < progress.morsels_total());
    let out = execute(
        &count_star(scan_t()),
        &tables(),
        &executor,
        &ExecOptions::default(),
    )
    .unwrap();
    assert_eq!(rows(&out), vec!["10"]);
}

#[test]
fn a_later_pipelines_error_keeps_its_type() {
    // `SELECT * FROM (SELECT count(*) c FROM t) WHERE 1 / (c - c) > 0`:
    // the division by zero happens in the second pipeline's lanes, whose
    // job the DAG makes once the count's merge ended
    let division = bin(
        bin(
            lit_i64(1),
            BinaryOp::Divide,
            bin(col(0), BinaryOp::Minus, col(0)),
        ),
        BinaryOp::Gt,
        lit_i64(0),
    );
    let plan = filter(count_star(scan_t()), division);
    for threads in [1, 2] {
        let err = execute(&plan, &tables(), &executor(threads), &options(3)).unwrap_err();
        assert!(matches!(err, Error::Eval(_)), "{err:?}");
    }
    // and the same chain without the error runs to the end
    let fine = filter(count_star(scan_t()), bin(col(0), BinaryOp::Gt, lit_i64(0)));
    let out = execute(&fine, &tables(), &executor(2), &options(3)).unwrap();
    assert_eq!(out.num_rows(), 1);
}
