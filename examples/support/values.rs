//! The peer bench's value shape, shared by the CPU examples (each uses a part of it).
#![allow(dead_code)]

/// Bytes of each value (the peer bench's default).
pub const VALUE_BYTES: usize = 180;
/// Bytes of the pool values are cut from.
const POOL_BYTES: usize = 1 << 20;
/// Each run of this many random bytes appears twice in the pool (values compress to ~half).
const POOL_RUN: usize = 16;

/// A small deterministic generator (SplitMix64).
pub struct Mix(pub u64);

impl Mix {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// A value like the peer bench's: a 16-byte header (`version`, random), then a slice of `pool`.
pub fn value(pool: &[u8], mix: &mut Mix, version: u64, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&mix.next().to_le_bytes());
    let body = VALUE_BYTES - out.len();
    let at = (mix.next() % (pool.len() - body) as u64) as usize;
    out.extend_from_slice(pool.get(at..at + body).unwrap_or_default());
}

/// The pool values are cut from: random printable runs of 16 bytes, each repeated once.
pub fn value_pool(mix: &mut Mix) -> Vec<u8> {
    let mut pool = Vec::with_capacity(POOL_BYTES);
    while pool.len() < POOL_BYTES {
        let run: Vec<u8> = (0..POOL_RUN)
            .map(|_| b' ' + (mix.next() % 95) as u8)
            .collect();
        pool.extend_from_slice(&run);
        pool.extend_from_slice(&run);
    }
    pool
}
