//! Integration tests of weir-engine through its public API.

mod api;
mod cells;
mod differential;
mod fairness;
mod files;
mod groups;
mod sniff;
mod tpch;
mod tpch_queries;
mod windows;
