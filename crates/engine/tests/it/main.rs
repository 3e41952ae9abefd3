//! Integration tests of weir-engine through its public API.

mod api;
mod differential;
mod files;
mod tpch;
