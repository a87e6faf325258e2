//! Decoders size every allocation by the input they were given, never by a count or length
//! read from it: a counting allocator records the largest request made while decoding.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use strata::codec::key;
use strata::codec::property::{self, PropertyReader};
use strata::model::{PartitionKey, RowKey};

/// Forwards to the system allocator and remembers, per thread, the largest request.
struct PeakAllocator;

thread_local! {
    static PEAK: Cell<usize> = const { Cell::new(0) };
    static COUNT: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded unchanged to `System`; the bookkeeping only reads sizes.
unsafe impl GlobalAlloc for PeakAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(layout.size())));
        let _ = COUNT.try_with(|count| count.set(count.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(new_size)));
        let _ = COUNT.try_with(|count| count.set(count.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: PeakAllocator = PeakAllocator;

/// Largest single allocation made by `f`.
fn peak_of(f: impl FnOnce()) -> usize {
    PEAK.with(|peak| peak.set(0));
    f();
    PEAK.with(Cell::get)
}

/// Number of allocations (and reallocations) made by `f`.
fn count_of(f: impl FnOnce()) -> usize {
    COUNT.with(|count| count.set(0));
    f();
    COUNT.with(Cell::get)
}

/// What an input of `len` bytes may justify: a few words per input byte, plus a constant for
/// the entity shell (its keys and an empty property vector).
fn allowed(len: usize) -> usize {
    64 * len + 256
}

#[test]
fn decode_allocation_is_bounded_by_input_length_not_claimed_counts() {
    let mut hostile: Vec<Vec<u8>> = vec![
        vec![1, 0, 0xFC, 0x01], // 252 properties claimed, none present
        vec![1, 0, 0xFC, 0x01, 1, b'A', 8, 0xFF, 0xFF, 0x03], // 64 KiB string claimed
        vec![1, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F], // 4 GiB name claimed
        vec![
            1, 0, 1, 1, b'A', 1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01,
        ],
    ];
    hostile.push([vec![1, 0, 0xFC, 0x01], vec![0; 40]].concat());
    for bytes in &hostile {
        let pk = PartitionKey::new("p").unwrap();
        let rk = RowKey::new("r").unwrap();
        let peak = peak_of(|| {
            let _ = property::decode(pk, rk, bytes);
            if let Ok(reader) = PropertyReader::new(bytes) {
                let _ = reader.get("A");
                let _ = reader.project(&["A"]);
            }
        });
        assert!(
            peak <= allowed(bytes.len()),
            "{bytes:?}: peak allocation {peak}"
        );
    }
}

#[test]
fn key_decode_allocation_is_bounded_by_input_length() {
    let bytes = b"\0\0\0\x01partition\0row";
    let peak = peak_of(|| {
        let _ = key::decode(bytes);
    });
    assert!(peak <= allowed(bytes.len()), "peak allocation {peak}");
}

#[test]
fn decoding_allocates_only_the_property_vector_and_long_values() {
    use strata::model::{Entity, PropertyName, Value};
    let mut entity = Entity::new(
        PartitionKey::new("customers").unwrap(),
        RowKey::new("000123").unwrap(),
    );
    entity
        .set(
            PropertyName::new("Email").unwrap(),
            Value::string("a@b.c").unwrap(),
        )
        .unwrap();
    entity
        .set(PropertyName::new("Age").unwrap(), Value::Int32(41))
        .unwrap();
    entity
        .set(
            PropertyName::new("A_name_of_exactly_24_chr").unwrap(),
            Value::Boolean(true),
        )
        .unwrap();
    let bytes = property::encode(&entity);
    let key = key::encode(7, entity.partition_key(), entity.row_key());
    // Short keys and names are held inline: the property vector and the one String value
    // are the only allocations.
    let mut decoded = None;
    let count = count_of(|| {
        let (_, pk, rk) = key::decode(&key).unwrap();
        decoded = Some(property::decode(pk, rk, &bytes).unwrap());
    });
    assert_eq!(decoded.as_ref(), Some(&entity));
    assert_eq!(count, 2);
    // A name longer than the inline capacity takes one allocation of its own.
    let mut long = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap());
    long.set(PropertyName::new("N".repeat(40)).unwrap(), Value::Int32(1))
        .unwrap();
    let bytes = property::encode(&long);
    let (pk, rk) = (long.partition_key().clone(), long.row_key().clone());
    let mut decoded = None;
    let count = count_of(|| decoded = Some(property::decode(pk, rk, &bytes).unwrap()));
    assert_eq!(decoded.as_ref(), Some(&long));
    assert_eq!(count, 2);
}
