//! The bytes of the WAL tail's last, partly written page, kept in memory so a durable append
//! can write whole pages past the page cache (`Storage::write_pages_durable`) without reading
//! the page back first.

use crate::engine::file::PAGE_SIZE;

/// Largest run of pages a durable append writes directly; a bigger group takes the buffered
/// synced write, so the aligned buffer stays small.
pub const DIRECT_MAX_LEN: usize = 256 << 10;

const PAGE: usize = PAGE_SIZE as usize;

/// The segment's bytes from the start of the tail's page up to the tail, in a page-aligned
/// buffer with room for the frames of the next append.
#[derive(Debug, Default)]
pub struct TailPage {
    /// Backing store; the image starts at `start`, the first page-aligned address inside it.
    buf: Vec<u8>,
    start: usize,
    /// Bytes of the image: always less than a page.
    len: usize,
}

impl TailPage {
    /// Replaces the image with `bytes` (the segment's bytes before a resumed tail).
    pub fn set(&mut self, bytes: &[u8]) {
        self.reserve(bytes.len());
        self.len = bytes.len();
        if let Some(dst) = self.buf.get_mut(self.start..self.start + bytes.len()) {
            dst.copy_from_slice(bytes);
        }
    }

    /// The image followed by `frames`, zero-padded to whole pages, page-aligned in memory.
    pub fn pages_with(&mut self, frames: &[u8]) -> &[u8] {
        let used = self.len + frames.len();
        let padded = used.div_ceil(PAGE) * PAGE;
        self.reserve(padded);
        let start = self.start;
        if let Some(dst) = self.buf.get_mut(start + self.len..start + used) {
            dst.copy_from_slice(frames);
        }
        if let Some(pad) = self.buf.get_mut(start + used..start + padded) {
            pad.fill(0);
        }
        self.buf.get(start..start + padded).unwrap_or_default()
    }

    /// Records that `frames` were written at the tail, which now ends at segment offset
    /// `new_pos`: the image becomes the last `new_pos % PAGE` bytes of image + frames.
    pub fn advance(&mut self, frames: &[u8], new_pos: u64) {
        let keep = usize::try_from(new_pos % PAGE_SIZE).unwrap_or(0);
        if keep <= frames.len() {
            let from = frames.len() - keep;
            self.set(frames.get(from..).unwrap_or_default());
            return;
        }
        // The image keeps its own last `keep - frames.len()` bytes, then all of `frames`.
        let old = keep - frames.len();
        let start = self.start;
        let drop = self.len.saturating_sub(old);
        self.buf.copy_within(start + drop..start + self.len, start);
        self.len = old.min(self.len);
        self.reserve(keep);
        if let Some(dst) = self
            .buf
            .get_mut(start + self.len..start + self.len + frames.len())
        {
            dst.copy_from_slice(frames);
        }
        self.len += frames.len();
    }

    /// Makes room for `bytes` bytes from the aligned start, keeping the image.
    fn reserve(&mut self, bytes: usize) {
        if self.start + bytes <= self.buf.len() {
            return;
        }
        let mut buf = vec![0u8; bytes.max(PAGE) + PAGE];
        let start = buf.as_ptr().align_offset(PAGE);
        let len = self.len;
        if let (Some(dst), Some(src)) = (
            buf.get_mut(start..start + len),
            self.buf.get(self.start..self.start + len),
        ) {
            dst.copy_from_slice(src);
        }
        self.buf = buf;
        self.start = start;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::indexing_slicing)]

    use super::*;

    #[test]
    fn pages_hold_the_tail_page_then_the_frames_then_zeroes() {
        let mut tail = TailPage::default();
        let mut segment = Vec::new();
        for n in 0..200usize {
            let frames = vec![n as u8; 1 + (n * 1031) % 9000];
            let page_start = segment.len() / PAGE * PAGE;
            let pages = tail.pages_with(&frames).to_vec();
            segment.extend_from_slice(&frames);
            assert_eq!(
                pages.len(),
                (segment.len() - page_start).div_ceil(PAGE) * PAGE
            );
            assert_eq!(&pages[..segment.len() - page_start], &segment[page_start..]);
            assert!(pages[segment.len() - page_start..].iter().all(|&b| b == 0));
            tail.advance(&frames, segment.len() as u64);
        }
    }

    #[test]
    fn pages_are_page_aligned_in_memory_as_direct_io_requires() {
        let mut tail = TailPage::default();
        let mut pos = 0u64;
        for len in [1, PAGE - 1, PAGE, 3 * PAGE + 5, 100 * PAGE] {
            let frames = vec![7u8; len];
            assert_eq!(tail.pages_with(&frames).as_ptr().align_offset(PAGE), 0);
            pos += len as u64;
            tail.advance(&frames, pos);
        }
    }
}
