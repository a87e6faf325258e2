//! Extent allocator against a page-bitmap model: no overlaps, first fit, `end()`, rebuild.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use proptest::prelude::*;
use strata::engine::Error;
use strata::engine::file::{DATA_START, Extent, ExtentAllocator, PAGE_SIZE};

/// The model: one bool per page after the superblock area.
#[derive(Default)]
struct Model {
    used: Vec<bool>,
}

impl Model {
    fn page(offset: u64) -> usize {
        ((offset - DATA_START) / PAGE_SIZE) as usize
    }
    /// First fit: the lowest run of `pages` free pages (possibly running past the end).
    fn allocate(&mut self, pages: usize) -> Extent {
        let mut start = 0;
        loop {
            let fits = (start..start + pages).all(|p| !self.used.get(p).copied().unwrap_or(false));
            if fits {
                break;
            }
            start += 1;
        }
        if self.used.len() < start + pages {
            self.used.resize(start + pages, false);
        }
        for p in start..start + pages {
            self.used[p] = true;
        }
        Extent {
            offset: DATA_START + start as u64 * PAGE_SIZE,
            len: pages as u64 * PAGE_SIZE,
        }
    }
    fn free(&mut self, e: Extent) {
        for p in Self::page(e.offset)..Self::page(e.end()) {
            self.used[p] = false;
        }
    }
    fn end(&self) -> u64 {
        let last = self.used.iter().rposition(|&u| u).map_or(0, |p| p + 1);
        DATA_START + last as u64 * PAGE_SIZE
    }
    fn free_bytes(&self) -> u64 {
        let last = self.used.iter().rposition(|&u| u).map_or(0, |p| p + 1);
        self.used[..last].iter().filter(|&&u| !u).count() as u64 * PAGE_SIZE
    }
}

#[derive(Debug, Clone)]
enum Op {
    Allocate(u64),
    Free(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (1u64..6 * PAGE_SIZE).prop_map(Op::Allocate),
        any::<usize>().prop_map(Op::Free),
    ]
}

proptest! {
    #[test]
    fn allocator_matches_first_fit_model(ops in prop::collection::vec(op(), 1..200)) {
        let mut alloc = ExtentAllocator::default();
        let mut model = Model::default();
        let mut live: Vec<Extent> = Vec::new();
        for op in ops {
            match op {
                Op::Allocate(len) => {
                    let e = alloc.allocate(len);
                    let m = model.allocate(len.div_ceil(PAGE_SIZE) as usize);
                    prop_assert_eq!(e, m);
                    prop_assert!(e.len >= len && e.len - len < PAGE_SIZE);
                    prop_assert!(live.iter().all(|l| l.end() <= e.offset || e.end() <= l.offset));
                    live.push(e);
                }
                Op::Free(i) if !live.is_empty() => {
                    let e = live.swap_remove(i % live.len());
                    prop_assert!(alloc.is_allocated(e));
                    alloc.free(e);
                    model.free(e);
                    prop_assert!(!alloc.is_allocated(e));
                }
                Op::Free(_) => {}
            }
            prop_assert_eq!(alloc.end(), model.end());
            prop_assert_eq!(alloc.free_bytes(), model.free_bytes());
        }
        // Rebuilding from the live extents gives the same free set and end.
        let rebuilt = ExtentAllocator::rebuild(&live).unwrap();
        prop_assert_eq!(rebuilt.end(), alloc.end());
        prop_assert_eq!(rebuilt.free_extents().collect::<Vec<_>>(), alloc.free_extents().collect::<Vec<_>>());
    }
}

#[test]
fn allocator_freeing_the_tail_lowers_end() {
    let mut a = ExtentAllocator::default();
    let x = a.allocate(4096);
    let y = a.allocate(10_000);
    let z = a.allocate(1);
    assert_eq!(a.end(), DATA_START + 5 * PAGE_SIZE);
    a.free(y);
    assert_eq!(a.free_bytes(), 3 * PAGE_SIZE);
    a.free(z);
    // y and z merge and fall off the tail.
    assert_eq!(a.end(), x.end());
    assert_eq!(a.free_bytes(), 0);
    a.free(x);
    assert_eq!(a.end(), DATA_START);
}

#[test]
fn allocator_zero_length_gets_one_page() {
    let mut a = ExtentAllocator::default();
    assert_eq!(
        a.allocate(0),
        Extent {
            offset: DATA_START,
            len: PAGE_SIZE
        }
    );
}

#[test]
fn allocator_rebuild_overlap_is_corruption_with_offset() {
    let used = [
        Extent {
            offset: DATA_START,
            len: 3 * PAGE_SIZE,
        },
        Extent {
            offset: DATA_START + 2 * PAGE_SIZE,
            len: PAGE_SIZE,
        },
    ];
    match ExtentAllocator::rebuild(&used) {
        Err(Error::Corruption { offset, .. }) => assert_eq!(offset, DATA_START + 2 * PAGE_SIZE),
        other => panic!("expected corruption, got {other:?}"),
    }
}

#[test]
fn allocator_rebuild_misaligned_or_superblock_extent_is_corruption() {
    for bad in [
        Extent {
            offset: 0,
            len: PAGE_SIZE,
        },
        Extent {
            offset: DATA_START + 1,
            len: PAGE_SIZE,
        },
        Extent {
            offset: DATA_START,
            len: 100,
        },
        Extent {
            offset: DATA_START,
            len: 0,
        },
        Extent {
            offset: u64::MAX - PAGE_SIZE + 1,
            len: PAGE_SIZE * 2,
        },
    ] {
        assert!(
            matches!(
                ExtentAllocator::rebuild(&[bad]),
                Err(Error::Corruption { .. })
            ),
            "{bad:?}"
        );
    }
}

#[test]
fn allocator_rebuild_leaves_gaps_free_for_first_fit() {
    let used = [
        Extent {
            offset: DATA_START + 4 * PAGE_SIZE,
            len: PAGE_SIZE,
        },
        Extent {
            offset: DATA_START + PAGE_SIZE,
            len: PAGE_SIZE,
        },
    ];
    let mut a = ExtentAllocator::rebuild(&used).unwrap();
    assert_eq!(a.free_bytes(), 3 * PAGE_SIZE);
    assert_eq!(a.allocate(1).offset, DATA_START);
    assert_eq!(a.allocate(2 * PAGE_SIZE).offset, DATA_START + 2 * PAGE_SIZE);
    assert_eq!(a.allocate(1).offset, DATA_START + 5 * PAGE_SIZE);
}
