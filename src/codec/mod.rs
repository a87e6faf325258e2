//! Byte encodings of the data model: the order-preserving engine key and the compact binary
//! EDM property codec. Decoders are total: arbitrary bytes give `Ok` or a [`CodecError`].

mod error;
pub mod key;
pub mod property;

pub use error::CodecError;
