//! Synchronisation primitives: `loom`'s under `cfg(weir_loom)`, `std`'s
//! otherwise. The rest of the crate imports them from here, never from
//! `std::sync` directly, so loom models see every synchronising operation.
//!
//! [`channel`] is `weir_pool::channel`: crossbeam-channel normally, a loom
//! `Mutex<VecDeque>` + `Condvar` stand-in under `cfg(weir_loom)`.

pub(crate) use weir_pool::channel;

#[cfg(weir_loom)]
pub(crate) use loom::sync::{
    Arc, Condvar, Mutex,
    atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering, fence},
};

#[cfg(not(weir_loom))]
pub(crate) use std::sync::{
    Arc, Condvar, Mutex,
    atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering, fence},
};

#[cfg(weir_loom)]
pub(crate) use loom::cell::UnsafeCell;

/// `std::cell::UnsafeCell` with loom's `with_mut` shape, so the same code
/// compiles against both and loom can check exclusive access.
#[cfg(not(weir_loom))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(weir_loom))]
impl<T> UnsafeCell<T> {
    pub(crate) fn new(value: T) -> Self {
        UnsafeCell(std::cell::UnsafeCell::new(value))
    }

    /// Calls `f` with a raw pointer to the contents; the caller must ensure
    /// no other access to the contents overlaps with its use.
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}
