//! `Edm.Guid`.

/// A GUID held as its 16 bytes in the textual (big-endian, RFC 4122) order, so that
/// `00112233-4455-6677-8899-aabbccddeeff` is bytes `00 11 22 .. ff`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Guid(pub [u8; 16]);
