//! The compact binary EDM property codec.
