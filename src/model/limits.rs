//! Every limit of the data model (SPEC §2), in one place.
