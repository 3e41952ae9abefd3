//! Synchronisation primitives: `loom`'s under `cfg(weir_loom)`, `std`'s
//! otherwise. The rest of the crate imports them from here, never from
//! `std::sync` directly, so loom models see every synchronising operation.

#[cfg(weir_loom)]
pub(crate) use loom::sync::{
    Arc, Condvar, Mutex,
    atomic::{AtomicUsize, Ordering},
};
#[cfg(weir_loom)]
pub(crate) use loom::thread;

// Mutex and Condvar are used only by the loom channel stand-in; they stay
// here so both sides of the shim export the same names.
#[cfg(not(weir_loom))]
#[allow(unused_imports)]
pub(crate) use std::sync::{
    Arc, Condvar, Mutex,
    atomic::{AtomicUsize, Ordering},
};
#[cfg(not(weir_loom))]
pub(crate) use std::thread;
