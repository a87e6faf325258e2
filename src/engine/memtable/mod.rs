//! The in-memory sorted write buffer.
