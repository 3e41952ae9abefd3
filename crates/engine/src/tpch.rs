//! Built-in sample data: the eight TPC-H tables, generated in memory.

use arrow::array::RecordBatch;
use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator,
    PartSuppGenerator, RegionGenerator, SupplierGenerator,
};
use tpchgen_arrow::{
    CustomerArrow, LineItemArrow, NationArrow, OrderArrow, PartArrow, PartSuppArrow, RegionArrow,
    SupplierArrow,
};

use arrow::datatypes::SchemaRef;

use crate::error::{Error, Result};
use crate::load::{Part, PartError, RunParts};

/// The TPC-H tables, smallest first.
pub const TABLES: [&str; 8] = [
    "region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem",
];

const BATCH_ROWS: usize = 65_536;

/// Generates part `part` (1-based) of `parts` of TPC-H table `name` at
/// scale factor `sf` (1.0 is about 6 million `lineitem` rows). Parts are
/// independent, so they can be generated on several threads; `region` and
/// `nation` are whole in part 1 and empty in the others.
pub fn table_part(name: &str, sf: f64, part: i32, parts: i32) -> Result<Vec<RecordBatch>> {
    table_batches(name, sf, part, parts)?.collect()
}

/// Generates TPC-H table `name` at scale factor `sf`, using every core;
/// its rows are in the generator's order.
pub fn table(name: &str, sf: f64) -> Result<Vec<RecordBatch>> {
    let parts = std::thread::available_parallelism().map_or(1, |n| n.get()) as i32;
    let name_owned = name.to_string();
    let handles: Vec<_> = (1..=parts)
        .map(|part| {
            let name = name_owned.clone();
            std::thread::spawn(move || table_part(&name, sf, part, parts))
        })
        .collect();
    let mut out = Vec::new();
    for h in handles {
        out.extend(h.join().expect("TPC-H generator thread panicked")?);
    }
    Ok(out)
}

/// Generates TPC-H table `name` at scale factor `sf` as parts run by
/// `runner` (the executor's workers), each stopping between batches when
/// its poll says so; the parts are kept in order.
pub(crate) fn generate_with(
    name: &str,
    sf: f64,
    runner: &dyn RunParts,
) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    // region and nation are a few rows: one part
    let parts = match name {
        "region" | "nation" => 1,
        _ => runner.workers().max(1) as i32 * 4,
    };
    let jobs: Vec<Part> = (1..=parts)
        .map(|part| {
            let name = name.to_string();
            let part: Part = Box::new(move |stop: &dyn Fn() -> bool| {
                let mut out = Vec::new();
                for batch in table_batches(&name, sf, part, parts).map_err(PartError::Other)? {
                    if stop() {
                        return Err(PartError::Stopped);
                    }
                    out.push(batch.map_err(PartError::Other)?);
                }
                Ok(out)
            });
            part
        })
        .collect();
    let mut batches = Vec::new();
    for result in runner.run(jobs)? {
        match result {
            Ok(b) => batches.extend(b),
            Err(PartError::Stopped) => return Err(Error::Cancelled),
            Err(PartError::Other(e)) => return Err(e),
            Err(PartError::Arrow(e, _)) => return Err(e.into()),
        }
    }
    Ok((schema(name)?, batches))
}

/// The schema of TPC-H table `name`.
pub fn schema(name: &str) -> Result<SchemaRef> {
    Ok(match name {
        "region" => RegionArrow::schema_ref(),
        "nation" => NationArrow::schema_ref(),
        "supplier" => SupplierArrow::schema_ref(),
        "customer" => CustomerArrow::schema_ref(),
        "part" => PartArrow::schema_ref(),
        "partsupp" => PartSuppArrow::schema_ref(),
        "orders" => OrderArrow::schema_ref(),
        "lineitem" => LineItemArrow::schema_ref(),
        other => return Err(unknown(other)),
    })
}

fn unknown(name: &str) -> Error {
    Error::InvalidInput(format!(
        "unknown TPC-H table '{name}' (one of {})",
        TABLES.join(", ")
    ))
}

/// The batches of one part of a table, generated as they are pulled.
fn table_batches(
    name: &str,
    sf: f64,
    part: i32,
    parts: i32,
) -> Result<Box<dyn Iterator<Item = Result<RecordBatch>>>> {
    fn boxed<I, E>(it: I) -> Box<dyn Iterator<Item = Result<RecordBatch>>>
    where
        I: Iterator<Item = std::result::Result<RecordBatch, E>> + 'static,
        Error: From<E>,
    {
        Box::new(it.map(|b| b.map_err(Error::from)))
    }
    Ok(match name {
        "region" | "nation" if part != 1 => Box::new(std::iter::empty()),
        "region" => {
            boxed(RegionArrow::new(RegionGenerator::new(sf, 1, 1)).with_batch_size(BATCH_ROWS))
        }
        "nation" => {
            boxed(NationArrow::new(NationGenerator::new(sf, 1, 1)).with_batch_size(BATCH_ROWS))
        }
        "supplier" => boxed(
            SupplierArrow::new(SupplierGenerator::new(sf, part, parts)).with_batch_size(BATCH_ROWS),
        ),
        "customer" => boxed(
            CustomerArrow::new(CustomerGenerator::new(sf, part, parts)).with_batch_size(BATCH_ROWS),
        ),
        "part" => {
            boxed(PartArrow::new(PartGenerator::new(sf, part, parts)).with_batch_size(BATCH_ROWS))
        }
        "partsupp" => boxed(
            PartSuppArrow::new(PartSuppGenerator::new(sf, part, parts)).with_batch_size(BATCH_ROWS),
        ),
        "orders" => {
            boxed(OrderArrow::new(OrderGenerator::new(sf, part, parts)).with_batch_size(BATCH_ROWS))
        }
        "lineitem" => boxed(
            LineItemArrow::new(LineItemGenerator::new(sf, part, parts)).with_batch_size(BATCH_ROWS),
        ),
        other => return Err(unknown(other)),
    })
}

/// Generates part `part` of `parts` of TPC-H `lineitem` at scale factor
/// `sf` (1.0 is about 6 million rows; 0.01 about 60 thousand).
pub fn lineitem_part(sf: f64, part: i32, parts: i32) -> Result<Vec<RecordBatch>> {
    table_part("lineitem", sf, part, parts)
}

/// Generates TPC-H `lineitem` at scale factor `sf`, using every core.
pub fn lineitem(sf: f64) -> Result<Vec<RecordBatch>> {
    table("lineitem", sf)
}
