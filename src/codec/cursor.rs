//! A bounds-checked reader over untrusted bytes that tracks its offset for error reports.

use super::error::{CodecError, Result};
use super::varint::{self, VarintError};

/// Reads fields front to back; every read checks the remaining length first, so no read can
/// panic and every error names the offset of the field that failed.
#[derive(Debug, Clone)]
pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `bytes`.
    pub(crate) const fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, pos: 0 }
    }

    /// A cursor over `bytes` that starts at `pos` (clamped to the end).
    pub(crate) fn at(bytes: &'a [u8], pos: usize) -> Self {
        Self {
            bytes,
            pos: pos.min(bytes.len()),
        }
    }

    /// The bytes read since offset `start`.
    pub(crate) fn since(&self, start: usize) -> &'a [u8] {
        self.bytes.get(start..self.pos).unwrap_or_default()
    }

    /// Offset of the next byte to read.
    pub(crate) const fn offset(&self) -> usize {
        self.pos
    }

    /// Bytes not yet read.
    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.pos)
    }

    /// Fails with [`CodecError::TrailingBytes`] unless every byte was read.
    pub(crate) fn finish(&self) -> Result<()> {
        match self.remaining() {
            0 => Ok(()),
            len => Err(CodecError::TrailingBytes {
                offset: self.pos,
                len,
            }),
        }
    }

    /// The next `len` bytes.
    #[inline]
    pub(crate) fn take(&mut self, len: usize) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(len);
        match end.and_then(|end| self.bytes.get(self.pos..end)) {
            Some(slice) => {
                self.pos += len;
                Ok(slice)
            }
            None => Err(CodecError::Truncated {
                offset: self.pos,
                needed: len.saturating_sub(self.remaining()),
            }),
        }
    }

    /// The next `N` bytes as an array.
    #[inline]
    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let slice = self.take(N)?;
        let mut out = [0u8; N];
        out.copy_from_slice(slice);
        Ok(out)
    }

    /// The next byte.
    #[inline]
    pub(crate) fn byte(&mut self) -> Result<u8> {
        let [byte] = self.array::<1>()?;
        Ok(byte)
    }

    /// The next shortest-form LEB128 varint.
    #[inline]
    pub(crate) fn varint(&mut self) -> Result<u64> {
        let rest = self.bytes.get(self.pos..).unwrap_or_default();
        match varint::get(rest) {
            Ok((value, len)) => {
                self.pos += len;
                Ok(value)
            }
            Err(VarintError::Truncated) => Err(CodecError::Truncated {
                offset: self.pos + rest.len(),
                needed: 1,
            }),
            Err(VarintError::Malformed) => Err(CodecError::BadVarint { offset: self.pos }),
        }
    }

    /// A varint length followed by that many bytes; the length is checked against the
    /// remaining input before anything is sliced or allocated.
    #[inline]
    pub(crate) fn length_prefixed(&mut self) -> Result<&'a [u8]> {
        let offset = self.pos;
        let len = self.varint()?;
        let remaining = self.remaining();
        match usize::try_from(len) {
            Ok(len) if len <= remaining => self.take(len),
            _ => Err(CodecError::LengthTooLarge {
                offset,
                len,
                remaining,
            }),
        }
    }
}
