//! weir-engine (under construction)
