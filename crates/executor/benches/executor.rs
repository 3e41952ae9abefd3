//! Criterion benches (placeholder, replaced below).
fn main() {}
