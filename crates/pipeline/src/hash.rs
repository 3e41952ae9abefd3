//! A fast, non-cryptographic hasher for hash tables keyed by row-encoded
//! values (group keys, DISTINCT sets). SipHash, std's default, is several
//! times slower on short keys and its DoS resistance buys nothing here.
//!
//! It was FxHash (`h = (rotl(h, 5) ^ word) * K`, no finaliser). A
//! multiply only carries low bits up, so a change in a word's high bytes
//! (the row encoding of an integer is big-endian: sequential keys differ
//! in a word's top byte and the next word's low byte) stayed in the high
//! bits and even cancelled against the next word: 65,536 sequential
//! integers had about 2,000 distinct states, GROUP BY and DISTINCT piled
//! keys into a few buckets and grew quadratically. Now each word is
//! folded in by a 128-bit multiply whose halves are xored (as foldhash
//! does), and [`Hasher::finish`] applies murmur3's 64-bit finaliser.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

/// Eight bytes at a time, each folded in by a multiply; finished by a mix.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    /// Folds a word in with a folded multiply (the 128-bit product's
    /// halves xored, as in foldhash): unlike FxHash's rotate-xor-multiply,
    /// a change in a word's high bits reaches the low bits of the state.
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = fold_word(self.hash, word);
    }
}

/// Folds `word` into the hash state `h`: the 128-bit product of their xor
/// and a constant, its halves xored (foldhash's folded multiply), so a
/// change in a word's high bits reaches the low bits of the state.
#[inline]
pub(crate) fn fold_word(h: u64, word: u64) -> u64 {
    let product = u128::from(h ^ word) * u128::from(SEED);
    (product as u64) ^ ((product >> 64) as u64)
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut buf = [0u8; 8];
            buf[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(buf));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn finish(&self) -> u64 {
        mix(self.hash)
    }
}

/// murmur3's `fmix64`: every input bit affects every output bit.
#[inline]
pub(crate) fn mix(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// The hash of a row-encoded key, as the group tables compute it.
#[inline]
pub(crate) fn hash_bytes(bytes: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    FxBuild::default().hash_one(bytes)
}

/// Builds [`FxHasher`]s.
pub(crate) type FxBuild = BuildHasherDefault<FxHasher>;
/// A `HashSet` with [`FxHasher`].
pub(crate) type FxHashSet<K> = HashSet<K, FxBuild>;

#[cfg(test)]
mod tests {
    use arrow::array::{ArrayRef, Int64Array, StringArray};
    use arrow::row::{RowConverter, SortField};
    use std::sync::Arc;

    use super::*;

    /// Distinct buckets hit by `hashes` in a table of `2^bits` buckets
    /// indexed by the low bits (hashbrown's choice), and the longest run of
    /// keys in one bucket.
    fn spread(hashes: &[u64], bits: u32) -> (usize, usize) {
        let mut buckets = vec![0usize; 1 << bits];
        for h in hashes {
            buckets[(h & ((1 << bits) - 1)) as usize] += 1;
        }
        let used = buckets.iter().filter(|&&n| n > 0).count();
        (used, buckets.into_iter().max().unwrap_or(0))
    }

    fn row_hashes(column: ArrayRef) -> Vec<u64> {
        let converter =
            RowConverter::new(vec![SortField::new(column.data_type().clone())]).unwrap();
        let rows = converter.convert_columns(&[column]).unwrap();
        rows.iter().map(|r| hash_bytes(r.as_ref())).collect()
    }

    #[test]
    fn sequential_integer_keys_spread_over_buckets() {
        // 2^16 keys into 2^16 buckets: a random hash uses ~63% of them
        // (1 - 1/e) with no bucket above a handful; the unmixed hash used a
        // few hundred buckets with hundreds of keys each
        let n = 1i64 << 16;
        let keys: ArrayRef = Arc::new(Int64Array::from_iter_values(0..n));
        let (used, longest) = spread(&row_hashes(keys), 16);
        assert!(used > (n as usize) * 55 / 100, "{used} buckets used");
        assert!(longest <= 12, "{longest} keys in one bucket");
        // the top 7 bits (hashbrown's tag) vary too
        let keys: ArrayRef = Arc::new(Int64Array::from_iter_values(0..n));
        let tags: std::collections::HashSet<u64> =
            row_hashes(keys).iter().map(|h| h >> 57).collect();
        assert_eq!(tags.len(), 128);
    }

    #[test]
    fn sequential_string_keys_spread_over_buckets() {
        let n = 1usize << 16;
        let keys: ArrayRef = Arc::new(StringArray::from_iter_values((0..n).map(|i| i.to_string())));
        let (used, longest) = spread(&row_hashes(keys), 16);
        assert!(used > n * 55 / 100, "{used} buckets used");
        assert!(longest <= 12, "{longest} keys in one bucket");
    }
}
