//! Times loading TPC-H `lineitem` from CSV and Parquet on 1 and 2 threads.
//!
//! `cargo run --release -p weir-engine --example load_lineitem -- [SF] [REPS]`
//! writes `target/tpch/sf{SF}/lineitem.{csv,parquet}` once (SF default 1),
//! then prints the median of REPS (default 3) loads for each format and
//! thread count.

use std::fs::File;
use std::path::PathBuf;
use std::time::Instant;

use weir_engine::{Config, Database};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let mut args = std::env::args().skip(1);
    let sf: f64 = args.next().map_or(1.0, |v| v.parse().expect("SF"));
    let reps: usize = args.next().map_or(3, |v| v.parse().expect("REPS"));
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/tpch")
        .join(format!("sf{sf}"));
    std::fs::create_dir_all(&dir).expect("create the data folder");
    let csv = dir.join("lineitem.csv");
    let parquet = dir.join("lineitem.parquet");
    if !csv.exists() || !parquet.exists() {
        eprintln!("generating lineitem at SF {sf} into {}", dir.display());
        let batches = weir_engine::tpch::lineitem(sf).expect("generate lineitem");
        let schema = batches[0].schema();
        let mut w = parquet::arrow::ArrowWriter::try_new(
            File::create(&parquet).expect("create parquet"),
            schema,
            None,
        )
        .expect("parquet writer");
        for b in &batches {
            w.write(b).expect("write parquet");
        }
        w.close().expect("close parquet");
        let mut w = arrow::csv::WriterBuilder::new()
            .with_header(true)
            .build(File::create(&csv).expect("create csv"));
        for b in &batches {
            w.write(b).expect("write csv");
        }
    }
    for (format, path) in [("csv", &csv), ("parquet", &parquet)] {
        for threads in [1, 2] {
            let mut times = Vec::new();
            for _ in 0..reps {
                let db = Database::with_config(Config {
                    threads,
                    ..Config::default()
                })
                .expect("database");
                let start = Instant::now();
                match format {
                    "csv" => db.register_csv("lineitem", path),
                    _ => db.register_parquet("lineitem", path),
                }
                .expect("load");
                times.push(start.elapsed().as_secs_f64());
            }
            times.sort_by(f64::total_cmp);
            println!(
                "{format:<8} {threads} thread{}: median {:.3} s of {reps} ({:?})",
                if threads == 1 { " " } else { "s" },
                times[times.len() / 2],
                times.iter().map(|t| format!("{t:.3}")).collect::<Vec<_>>()
            );
        }
    }
}
