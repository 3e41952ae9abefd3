//! The allocator: mimalloc, told to keep freed pages for a while.
//!
//! The system allocator hands freed pages back to the kernel and faults them
//! in again on every morsel; mimalloc keeps them (TPC-H Q1 at SF1 on two
//! threads: 332 ms with the system allocator, 231 ms with mimalloc). By
//! default mimalloc still returns ("purges") memory unused for 10 ms, and
//! a query frees and allocates far more than that between its pipelines:
//! five TPC-H Q1 runs at SF1 on two threads took 963,344 page faults and
//! 2.4 s of kernel time zeroing pages with the default, 1,432 faults and
//! 0.5 s with a 10 s delay. Memory unused for 10 s is still returned.
//!
//! The benchmark harness of `weir-engine` includes this file (`#[path]`),
//! so its numbers are the binary's.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

unsafe extern "C" {
    /// mimalloc's `mi_option_set` (mimalloc.h); the allocator linked above
    /// provides it.
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
}

/// `mi_option_purge_delay` in mimalloc's `mi_option_t` (v2 and v3 alike):
/// milliseconds before unused memory is returned to the system.
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

/// Keeps freed memory for 10 s before returning it to the system. Call
/// first thing in `main`.
pub(crate) fn keep_freed_pages() {
    // SAFETY: setting an option is a plain store into mimalloc's option
    // table, valid at any time; the index is the purge delay's.
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, 10_000) }
}
