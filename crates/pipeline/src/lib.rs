//! weir-pipeline (under construction)
