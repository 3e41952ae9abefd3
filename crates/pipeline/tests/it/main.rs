//! Integration tests of weir-pipeline: plans built by hand, run on
//! executors of 1, 2 and 4 threads and several morsel sizes.

mod aggregate;
mod common;
mod control;
mod explain;
mod filter;
mod morsels;
mod planning;
mod sort_limit;
