//! Errors of the codec layer.

/// Bytes that are not a valid encoding, with the offset where decoding failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {}
