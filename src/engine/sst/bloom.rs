//! Bloom filters over whole user keys and over partition prefixes.
//!
//! ```text
//! contents: bit array (m / 8 bytes) | probe count k u8
//! ```
//!
//! A key is hashed once with xxh3-64 (seeded per filter kind); probe `i` sets bit
//! `fastrange32(h1 + i * h2, m)` where `h1`/`h2` are the low/high 32 bits of the hash
//! (Kirsch–Mitzenmacher double hashing: one hash, `k` nearly independent probes).

use super::format::{
    BLOOM_PROBES_PER_BIT_PERCENT, MAX_BLOOM_BITS, MAX_BLOOM_PROBES, MIN_BLOOM_BITS, corruption,
};
use crate::engine::Result;

/// The 64-bit hash both sides of a filter agree on.
#[inline]
pub fn bloom_hash(bytes: &[u8], seed: u64) -> u64 {
    xxhash_rust::xxh3::xxh3_64_with_seed(bytes, seed)
}

#[inline]
fn bit_of(h: u64, i: u32, m: u64) -> u64 {
    let h1 = h as u32;
    let h2 = (h >> 32) as u32;
    let g = h1.wrapping_add(i.wrapping_mul(h2));
    (u64::from(g) * m) >> 32
}

/// Builds the contents of a filter holding `hashes` at `bits_per_key`.
pub fn build_bloom(hashes: &[u64], bits_per_key: usize) -> Vec<u8> {
    let wanted = (hashes.len() as u64).saturating_mul(bits_per_key as u64);
    let m = wanted.clamp(MIN_BLOOM_BITS, MAX_BLOOM_BITS).div_ceil(8) * 8;
    let k = (bits_per_key as u64 * BLOOM_PROBES_PER_BIT_PERCENT).div_ceil(100);
    let k = k.clamp(1, u64::from(MAX_BLOOM_PROBES)) as u32;
    let mut bits = vec![0u8; (m / 8) as usize];
    for &h in hashes {
        for i in 0..k {
            let bit = bit_of(h, i, m);
            if let Some(byte) = bits.get_mut((bit / 8) as usize) {
                *byte |= 1 << (bit % 8);
            }
        }
    }
    bits.push(k as u8);
    bits
}

/// A loaded filter.
#[derive(Debug, Clone)]
pub struct Bloom {
    bits: Vec<u8>,
    m: u64,
    k: u32,
}

impl Bloom {
    /// Parses filter contents found in the block at absolute `offset`.
    pub fn decode(contents: &[u8], offset: u64) -> Result<Self> {
        let Some((&k, bits)) = contents.split_last() else {
            return Err(corruption(offset, "empty bloom filter"));
        };
        if k == 0 || k > MAX_BLOOM_PROBES {
            return Err(corruption(offset, format!("bloom filter has {k} probes")));
        }
        let m = bits.len() as u64 * 8;
        if !(MIN_BLOOM_BITS..=MAX_BLOOM_BITS).contains(&m) {
            return Err(corruption(offset, format!("bloom filter has {m} bits")));
        }
        Ok(Self {
            bits: bits.to_vec(),
            m,
            k: u32::from(k),
        })
    }

    /// Bytes of heap the filter holds (its bit array's allocation).
    pub fn heap_bytes(&self) -> usize {
        self.bits.capacity()
    }

    /// False when the hashed item is certainly absent.
    #[inline]
    pub fn may_contain(&self, h: u64) -> bool {
        (0..self.k).all(|i| {
            let bit = bit_of(h, i, self.m);
            self.bits
                .get((bit / 8) as usize)
                .is_some_and(|b| b & (1 << (bit % 8)) != 0)
        })
    }
}
