//! Byte encodings of the data model: the order-preserving engine key and the compact binary
//! EDM property codec. Decoders are total: arbitrary bytes give `Ok` or a [`CodecError`].

mod cursor;
mod error;
pub mod format;
pub mod key;
pub mod property;
mod varint;

pub use error::{CodecError, Result};
