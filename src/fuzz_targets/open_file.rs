//! Fuzz target `open_file`: a file of arbitrary bytes opened read-only never panics.

use std::sync::Arc;

use crate::engine::Engine;
use crate::engine::file::FaultyStorage;

/// Opens `data` as a database image read-only; if it opens, reads every key. Any outcome but
/// a panic (or an allocation the input does not justify) is fine.
pub fn open_file(data: &[u8]) {
    let storage = Arc::new(FaultyStorage::from_image(data.to_vec()));
    if let Ok(engine) = Engine::open_read_only_with_storage(storage) {
        let _ = engine.get(b"");
        if let Ok(iter) = engine.range(b"".as_slice()..b"\xff\xff\xff\xff".as_slice()) {
            for item in iter.take(10_000) {
                if item.is_err() {
                    break;
                }
            }
        }
    }
}
