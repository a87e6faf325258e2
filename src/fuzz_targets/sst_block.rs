//! Fuzz target `sst_block`: SST data-block decoding is total over arbitrary bytes.

use crate::engine::Compression;
use crate::engine::sst::{decode_block, encode_block};

/// Decodes `data` as a stored data block: it must never panic, and whatever decodes must
/// survive a re-encode (raw, zstd and LZ4, any restart interval) with the same entries.
///
/// # Panics
/// When a decoded block does not round-trip: that is the bug the fuzzer looks for.
pub fn sst_block(data: &[u8]) {
    let Ok(entries) = decode_block(data) else {
        return;
    };
    let interval = usize::from(data.first().copied().unwrap_or(0) % 17);
    for compression in [Compression::None, Compression::Zstd(1), Compression::Lz4] {
        let again = decode_block(&encode_block(&entries, interval, compression));
        assert!(
            again.as_ref().is_ok_and(|e| *e == entries),
            "sst block re-encode mismatch"
        );
    }
}
