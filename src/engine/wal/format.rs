//! Byte-layout constants of the WAL frame. `docs/FORMAT.md` ("Write-ahead log") draws it.

/// Bytes of a frame header; the payload follows.
pub const HEADER_LEN: usize = 25;

/// Field offsets inside the header (all little-endian).
pub mod field {
    /// `u32` CRC32 over the segment id (`u64`) and header bytes `4..25` plus the payload.
    pub const CRC: usize = 0;
    /// `u32` payload length.
    pub const LEN: usize = 4;
    /// `u32` low 32 bits of the segment id, so a frame left by an earlier segment in a reused
    /// extent is recognised as foreign (a clean end) rather than as a damaged frame of ours.
    pub const SEGMENT: usize = 8;
    /// `u32` segment-relative offset up to which the segment was known durable when the frame
    /// was written (saturating); tells a torn tail from a damaged, already-synced frame.
    pub const SYNCED: usize = 12;
    /// `u64` sequence number of the record (0 for a seal).
    pub const SEQ: usize = 16;
    /// `u8` frame kind (see [`super::KIND_RECORD`], [`super::KIND_SEAL`]).
    pub const KIND: usize = 24;
}

/// Frame kind of a record: the payload is one encoded write batch.
pub const KIND_RECORD: u8 = 1;

/// Frame kind of a seal: the segment ends here (its payload is empty). Every segment but the
/// last ends with one, so a damaged frame in an earlier segment cannot pass for its end.
pub const KIND_SEAL: u8 = 2;

/// Largest payload one frame carries.
pub const MAX_PAYLOAD_LEN: usize = u32::MAX as usize - HEADER_LEN;

/// Bytes of zeroes a durable append writes ahead of the tail when it reaches past the last
/// ones (see `WalWriter`): about 4,000 single-entity frames, so the cost is spread thin and a
/// segment left early wastes little.
pub const PREWRITE_LEN: u64 = 1 << 20;
