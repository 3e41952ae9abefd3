//! TPC-H lineitem at scale factor 0.01: the benchmark queries F1-F6 and
//! TPC-H Q1 and Q6 give DuckDB's answers.
//!
//! The expected values were computed by DuckDB 1.x (Python `duckdb`) on the
//! same data, written by `tpchgen-cli parquet -s 0.01 --tables=lineitem`
//! (the same generator, `tpchgen` 4, that `weir_engine::tpch` uses).

use crate::cells::rows;
use weir_engine::{Config, Database};

const QUERIES: &str = include_str!("../../../../benches/queries.sql");

fn query(label: &str) -> String {
    let mut lines = QUERIES.lines();
    while let Some(l) = lines.next() {
        if l.strip_prefix("-- ") == Some(label) {
            return lines
                .next()
                .expect("a query follows its label")
                .trim_end_matches(';')
                .to_string();
        }
    }
    panic!("no query {label} in benches/queries.sql");
}

/// Exact match, except that a float cell matches within 1e-9 relative.
fn assert_row(got: &[String], expected: &[&str], what: &str) {
    assert_eq!(got.len(), expected.len(), "{what}: {got:?}");
    for (g, e) in got.iter().zip(expected) {
        if g == e {
            continue;
        }
        let (gf, ef): (f64, f64) = (g.parse().unwrap_or(f64::NAN), e.parse().unwrap_or(f64::NAN));
        assert!(
            e.contains('.') && (gf - ef).abs() <= 1e-9 * ef.abs().max(1.0),
            "{what}: got {got:?}, DuckDB says {expected:?}"
        );
    }
}

#[test]
fn benchmark_queries_match_duckdb_at_sf_0_01() {
    let batches = weir_engine::tpch::lineitem(0.01).expect("generate lineitem");
    for threads in [1, 2] {
        let db = Database::with_config(Config {
            threads,
            morsel_rows: 8192,
            ..Config::default()
        })
        .unwrap();
        db.register_batches("lineitem", batches[0].schema(), batches.clone())
            .unwrap();
        let one = |label: &str, expected: &[&str]| {
            let got = rows(&db, &query(label));
            assert_eq!(got.len(), 1, "{label}: {got:?}");
            assert_row(&got[0], expected, label);
        };
        one("F1", &["4798"]);
        one("F2", &["1193053.2253"]);
        one("F4", &["2776"]);
        one("F5", &["30126"]);
        one("F6", &["1487"]);
        let f3 = format!(
            "SELECT count(*), sum(l_orderkey), sum(l_partkey), sum(l_extendedprice) FROM lineitem WHERE {}",
            query("F3")
                .split(" WHERE ")
                .nth(1)
                .expect("F3 has a WHERE clause")
        );
        let got = rows(&db, &f3);
        assert_row(
            &got[0],
            &["74", "2197695", "77821", "4948223.12"],
            "F3 checksum",
        );
        assert_eq!(rows(&db, &query("F3")).len(), 74, "F3 rows");

        // TPC-H Q6 as the spec writes it (F2 is Q6 with folded bounds)
        let q6 = "SELECT sum(l_extendedprice * l_discount) AS revenue FROM lineitem \
                  WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1994-01-01' + 365 \
                  AND l_discount BETWEEN 0.06 - 0.01 AND 0.06 + 0.01 AND l_quantity < 24";
        assert_row(&rows(&db, q6)[0], &["1193053.2253"], "Q6");

        let q1 = rows(&db, &query("Q1"));
        let expected: [[&str; 10]; 4] = [
            [
                "A",
                "F",
                "380456.00",
                "532348211.65",
                "505822441.4861",
                "526165934.000839",
                "25.575154611454693",
                "35785.709306937344",
                "0.05008133906964238",
                "14876",
            ],
            [
                "N",
                "F",
                "8971.00",
                "12384801.37",
                "11798257.2080",
                "12282485.056933",
                "25.778735632183906",
                "35588.50968390804",
                "0.047758620689655175",
                "348",
            ],
            [
                "N",
                "O",
                "742802.00",
                "1041502841.45",
                "989737518.6346",
                "1029418531.523350",
                "25.45498783454988",
                "35691.1292090744",
                "0.04993111956409993",
                "29181",
            ],
            [
                "R",
                "F",
                "381449.00",
                "534594445.35",
                "507996454.4067",
                "528524219.358903",
                "25.597168165346933",
                "35874.00653268018",
                "0.049827539927526504",
                "14902",
            ],
        ];
        assert_eq!(q1.len(), 4, "Q1: {q1:?}");
        for (got, want) in q1.iter().zip(&expected) {
            assert_row(got, want, &format!("Q1 ({threads} threads)"));
        }
    }
}
