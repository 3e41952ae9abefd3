//! Built-in sample data: TPC-H `lineitem`, generated in memory.

use arrow::array::RecordBatch;
use tpchgen::generators::LineItemGenerator;
use tpchgen_arrow::LineItemArrow;

use crate::error::Result;

/// Generates TPC-H `lineitem` at scale factor `sf` (1.0 is about 6 million
/// rows; 0.01 about 60 thousand), split into `parts` independently
/// generated parts (so parts can be generated on several threads).
pub fn lineitem_part(sf: f64, part: i32, parts: i32) -> Result<Vec<RecordBatch>> {
    let generator = LineItemGenerator::new(sf, part, parts);
    let batches = LineItemArrow::new(generator)
        .with_batch_size(65_536)
        .collect::<Result<Vec<RecordBatch>, _>>()?;
    Ok(batches)
}

/// Generates TPC-H `lineitem` at scale factor `sf`, using every core.
pub fn lineitem(sf: f64) -> Result<Vec<RecordBatch>> {
    let parts = std::thread::available_parallelism().map_or(1, |n| n.get()) as i32;
    let handles: Vec<_> = (1..=parts)
        .map(|part| std::thread::spawn(move || lineitem_part(sf, part, parts)))
        .collect();
    let mut out = Vec::new();
    for h in handles {
        out.extend(h.join().expect("lineitem generator thread panicked")?);
    }
    Ok(out)
}

/// The TPC-H tables, by name.
pub const TABLES: [&str; 8] = [
    "region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem",
];

/// Generates TPC-H table `name` (one of [`TABLES`]) at scale factor `sf`
/// in one part, the rows `tpchgen-cli` writes for it.
pub fn table(name: &str, sf: f64) -> Result<Vec<RecordBatch>> {
    use tpchgen::generators::{
        CustomerGenerator, NationGenerator, OrderGenerator, PartGenerator, PartSuppGenerator,
        RegionGenerator, SupplierGenerator,
    };
    use tpchgen_arrow::{
        CustomerArrow, NationArrow, OrderArrow, PartArrow, PartSuppArrow, RegionArrow,
        SupplierArrow,
    };
    const BATCH: usize = 65_536;
    let batches: Vec<std::result::Result<RecordBatch, _>> = match name {
        "region" => RegionArrow::new(RegionGenerator::new(sf, 1, 1))
            .with_batch_size(BATCH)
            .collect(),
        "nation" => NationArrow::new(NationGenerator::new(sf, 1, 1))
            .with_batch_size(BATCH)
            .collect(),
        "supplier" => SupplierArrow::new(SupplierGenerator::new(sf, 1, 1))
            .with_batch_size(BATCH)
            .collect(),
        "customer" => CustomerArrow::new(CustomerGenerator::new(sf, 1, 1))
            .with_batch_size(BATCH)
            .collect(),
        "part" => PartArrow::new(PartGenerator::new(sf, 1, 1))
            .with_batch_size(BATCH)
            .collect(),
        "partsupp" => PartSuppArrow::new(PartSuppGenerator::new(sf, 1, 1))
            .with_batch_size(BATCH)
            .collect(),
        "orders" => OrderArrow::new(OrderGenerator::new(sf, 1, 1))
            .with_batch_size(BATCH)
            .collect(),
        "lineitem" => return lineitem_part(sf, 1, 1),
        other => {
            return Err(crate::error::Error::InvalidInput(format!(
                "no TPC-H table named {other}"
            )));
        }
    };
    Ok(batches
        .into_iter()
        .collect::<std::result::Result<Vec<_>, _>>()?)
}
