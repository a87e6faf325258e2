//! `Edm.DateTime`: UTC instants at 100 ns resolution.

/// A UTC instant counted in 100 ns ticks since 0001-01-01T00:00:00Z (the .NET epoch), limited to
/// the service's range 1601-01-01T00:00:00Z ..= 9999-12-31T23:59:59.9999999Z.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DateTime {
    ticks: i64,
}

impl DateTime {
    /// The instant `ticks` 100 ns units after 0001-01-01T00:00:00Z, without a range check.
    /// Only for values already validated (e.g. the codec after its own check).
    pub(crate) const fn from_ticks_unchecked(ticks: i64) -> Self {
        Self { ticks }
    }

    /// 100 ns ticks since 0001-01-01T00:00:00Z.
    #[must_use]
    pub const fn ticks(self) -> i64 {
        self.ticks
    }
}
