//! Every flipped bit of an SST image is either reported as `Corruption` at an offset inside
//! the SST's extent, or leaves every returned entry unchanged: never a panic, never wrong data.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod engine_sst_support;

use std::sync::Arc;

use engine_sst_support::{Entry, SST_OFFSET, SlashPrefix, build, open_image, options};
use strata::engine::sst::{SstEntry, SstReader};
use strata::engine::{Compression, Error, Result, ValueKind};

fn sample_entries() -> Vec<Entry> {
    let mut entries = Vec::new();
    for i in 0..24u32 {
        let key = format!("p{}/key{i:03}", i % 3).into_bytes();
        entries.push((
            key.clone(),
            9,
            ValueKind::Put,
            format!("value-{i}-{i}-{i}").into_bytes(),
        ));
        entries.push((key, 4, ValueKind::Delete, Vec::new()));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    entries
}

/// Everything a reader can return: a full scan and a get of every key at two read points.
fn read_all(
    reader: &Arc<SstReader>,
    keys: &[Vec<u8>],
) -> Result<(Vec<SstEntry>, Vec<Option<SstEntry>>)> {
    reader.verify()?;
    let scan = reader.iter(&[]).collect::<Result<Vec<_>>>()?;
    let mut gets = Vec::new();
    for k in keys {
        gets.push(reader.get(k, 5)?);
        gets.push(reader.get(k, 100)?);
    }
    Ok((scan, gets))
}

fn assert_every_bit_flip_is_detected(compression: Compression) {
    let entries = sample_entries();
    let mut opts = options(120, 3, compression);
    opts.prefix_extractor = Some(Arc::new(SlashPrefix));
    let image = build(opts, &entries);
    let keys: Vec<Vec<u8>> = entries.iter().map(|e| e.0.clone()).collect();
    let clean = read_all(&open_image(&image, 1 << 16).unwrap(), &keys).unwrap();
    assert!(open_image(&image, 0).unwrap().data_blocks() > 3);
    let extent = SST_OFFSET..SST_OFFSET + image.len() as u64;
    let mut detected = 0;
    for bit in 0..image.len() * 8 {
        let mut bad = image.clone();
        bad[bit / 8] ^= 1 << (bit % 8);
        let outcome = open_image(&bad, 1 << 16).and_then(|r| read_all(&r, &keys));
        match outcome {
            Ok(read) => assert_eq!(read, clean, "bit {bit} changed returned data"),
            Err(Error::Corruption { offset, what }) => {
                assert!(
                    extent.contains(&offset),
                    "bit {bit}: offset {offset} outside ({what})"
                );
                detected += 1;
            }
            Err(other) => panic!("bit {bit}: not a corruption error: {other}"),
        }
    }
    // Every byte of the image is under a checksum.
    assert_eq!(detected, image.len() * 8);
}

#[test]
fn sst_flipped_bit_is_corruption_raw_blocks() {
    assert_every_bit_flip_is_detected(Compression::None);
}

#[test]
fn sst_flipped_bit_is_corruption_zstd_blocks() {
    assert_every_bit_flip_is_detected(Compression::Zstd(1));
}

#[test]
fn sst_flipped_bit_is_corruption_lz4_blocks() {
    assert_every_bit_flip_is_detected(Compression::Lz4);
}

#[test]
fn sst_truncated_image_is_corruption() {
    let image = build(options(120, 3, Compression::None), &sample_entries());
    for len in [0, 1, 79, 80, image.len() / 2, image.len() - 1] {
        let err = open_image(&image[..len], 0).unwrap_err();
        assert!(matches!(err, Error::Corruption { .. }), "len {len}: {err}");
    }
}
