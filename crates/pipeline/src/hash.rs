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
//! [`hash_bytes`], the hash of a key's bytes, folds sixteen bytes per
//! multiply.

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

/// A second constant, for the second word of a pair.
const SEED2: u64 = 0x2d35_8dcc_aa6c_78a5;

/// The product of `x` and `y` in 128 bits, its halves xored.
#[inline]
fn folded(x: u64, y: u64) -> u64 {
    let product = u128::from(x) * u128::from(y);
    (product as u64) ^ ((product >> 64) as u64)
}

#[inline]
fn word_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

#[inline]
fn half_at(bytes: &[u8], at: usize) -> u64 {
    u64::from(u32::from_le_bytes(
        bytes[at..at + 4].try_into().expect("4 bytes"),
    ))
}

/// The hash of a key's bytes (a row-encoded key, a string), as the group
/// tables, joins and windows compute it: sixteen bytes per folded
/// multiply, as foldhash hashes strings (a key of up to 16 bytes is one
/// multiply of two overlapping reads, which with the length cover every
/// byte), then [`mix`]. Half the dependent multiplies of folding eight
/// bytes at a time, which a string key's hash waited on.
#[inline]
pub(crate) fn hash_bytes(bytes: &[u8]) -> u64 {
    let len = bytes.len();
    let mut h = SEED ^ (len as u64).wrapping_mul(SEED2);
    let (a, b) = if len <= 16 {
        if len >= 8 {
            (word_at(bytes, 0), word_at(bytes, len - 8))
        } else if len >= 4 {
            (half_at(bytes, 0), half_at(bytes, len - 4))
        } else if len > 0 {
            let three = u64::from(bytes[0])
                | u64::from(bytes[len / 2]) << 8
                | u64::from(bytes[len - 1]) << 16;
            (three, 0)
        } else {
            (0, 0)
        }
    } else {
        let mut at = 0;
        while len - at > 16 {
            h = folded(word_at(bytes, at) ^ h, word_at(bytes, at + 8) ^ SEED2);
            at += 16;
        }
        (word_at(bytes, len - 16), word_at(bytes, len - 8))
    };
    mix(folded(a ^ h, b ^ SEED2))
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
    fn keys_of_every_length_hash_apart() {
        // every length from 0 to 40, keys that differ in one byte (at
        // each place) or only in their length: no two hashes alike
        let mut seen = std::collections::HashMap::new();
        for len in 0..=40usize {
            let base: Vec<u8> = (0..len as u8).map(|b| b.wrapping_mul(37)).collect();
            let mut keys = vec![base.clone()];
            for at in 0..len {
                for delta in [1u8, 0x80] {
                    let mut k = base.clone();
                    k[at] = k[at].wrapping_add(delta);
                    keys.push(k);
                }
            }
            for k in keys {
                if let Some(other) = seen.insert(hash_bytes(&k), k.clone()) {
                    assert_eq!(other, k, "two keys hash alike");
                }
            }
        }
        // a key and the same bytes with a zero byte after them
        assert_ne!(hash_bytes(b"a"), hash_bytes(b"a\0"));
        assert_ne!(hash_bytes(b""), hash_bytes(b"\0"));
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
