//! One memory accountant per query: the bytes held by breaker state
//! (partial hash tables, sort runs, top-N candidates, materialised
//! results), counted as it grows and shrinks, and its peak.
//!
//! Every breaker reports its state through [`MemoryAccountant::grow`]
//! when it keeps it and [`MemoryAccountant::shrink`] when it lets it go;
//! a memory limit and spilling will stand on these counts.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes of breaker state held by one query, and the most held at once.
#[derive(Debug, Default)]
pub struct MemoryAccountant {
    current: AtomicUsize,
    peak: AtomicUsize,
}

impl MemoryAccountant {
    /// A new accountant holding nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts `bytes` more.
    pub fn grow(&self, bytes: usize) {
        let now = self.current.fetch_add(bytes, Ordering::Relaxed) + bytes;
        self.peak.fetch_max(now, Ordering::Relaxed);
    }

    /// Counts `bytes` less (never below zero).
    pub fn shrink(&self, bytes: usize) {
        let _ = self
            .current
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| {
                Some(c.saturating_sub(bytes))
            });
    }

    /// Bytes held now.
    pub fn current(&self) -> usize {
        self.current.load(Ordering::Relaxed)
    }

    /// The most bytes held at once.
    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_is_the_high_water_mark() {
        let m = MemoryAccountant::new();
        m.grow(100);
        m.grow(50);
        m.shrink(120);
        m.grow(10);
        assert_eq!(m.current(), 40);
        assert_eq!(m.peak(), 150);
        m.shrink(1000);
        assert_eq!(m.current(), 0);
    }
}
