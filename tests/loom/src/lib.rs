//! weir-loom models
