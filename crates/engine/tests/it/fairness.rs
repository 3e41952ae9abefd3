//! Two queries at once: a short query submitted while a long one runs
//! finishes in about its own time (the long query's lanes lend their
//! workers between morsels).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use weir_engine::{Config, Database};

/// Time given the long query to be planned and submitted before short
/// queries count.
const SETTLE: Duration = Duration::from_millis(100);

const SHORT: &str = "SELECT count(*) FROM range(2000) WHERE range % 3 = 0";

fn long_query(rows: u64) -> String {
    format!("SELECT count(*) FROM range({rows}) WHERE (range * 7) % 13 = 0")
}

fn time(db: &Database, sql: &str) -> Duration {
    let started = Instant::now();
    db.execute(sql).expect("query runs");
    started.elapsed()
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

#[test]
fn a_short_query_is_not_stuck_behind_a_long_one() {
    let db = Database::with_config(Config {
        threads: 2,
        ..Config::default()
    })
    .expect("database");
    let alone = median((0..5).map(|_| time(&db, SHORT)).collect());
    // a long query of at least half a second on this build and machine
    let mut rows = 4_000_000;
    while time(&db, &long_query(rows)) < Duration::from_millis(500) && rows < 1 << 34 {
        rows *= 2;
    }

    let started = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicBool::new(false));
    let long = {
        let (db, started, done) = (db.clone(), Arc::clone(&started), Arc::clone(&done));
        std::thread::spawn(move || {
            let sql = long_query(rows);
            started.store(true, Ordering::SeqCst);
            let elapsed = time(&db, &sql);
            done.store(true, Ordering::SeqCst);
            elapsed
        })
    };
    while !started.load(Ordering::SeqCst) {
        std::hint::spin_loop();
    }
    // short queries back to back while the long one runs; those started
    // once it has surely been planned and submitted, and finished before
    // it ends, count
    let since = Instant::now();
    let mut during = Vec::new();
    while !done.load(Ordering::SeqCst) {
        let submitted = since.elapsed();
        let t = time(&db, SHORT);
        if submitted >= SETTLE && !done.load(Ordering::SeqCst) {
            during.push(t);
        }
    }
    let long_took = long.join().expect("long query thread");
    // Without lending workers a short query waits for the whole long
    // one, so none would finish while it runs.
    assert!(
        during.len() >= 3,
        "only {} short queries finished during a {long_took:?} long query (alone: {alone:?})",
        during.len()
    );
    let behind = median(during.clone());
    assert!(
        behind <= alone * 10 + Duration::from_millis(200),
        "short query: {alone:?} alone, {behind:?} (median of {}) beside a {long_took:?} query",
        during.len()
    );
}
