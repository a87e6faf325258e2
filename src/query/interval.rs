//! Intervals of key strings and boxes of (PartitionKey, RowKey) intervals: the lattice the
//! planner computes in. Keys order by code point (UTF-8 byte order), like the engine keys.

use std::cmp::Ordering;
use std::ops::Bound;

use super::ast::CompareOp;

/// A set of strings `{ s | lower ≤ s ≤ upper }` with either end open, closed or unbounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Interval<'f> {
    pub(super) lower: Bound<&'f str>,
    pub(super) upper: Bound<&'f str>,
}

impl<'f> Interval<'f> {
    pub(super) const FULL: Self = Self {
        lower: Bound::Unbounded,
        upper: Bound::Unbounded,
    };

    /// The strings `s` with `s op value`; `ne` gives the full interval (its set has a hole,
    /// which an interval cannot express, so it is widened).
    pub(super) const fn of(op: CompareOp, value: &'f str) -> Self {
        let (lower, upper) = match op {
            CompareOp::Eq => (Bound::Included(value), Bound::Included(value)),
            CompareOp::Ne => (Bound::Unbounded, Bound::Unbounded),
            CompareOp::Gt => (Bound::Excluded(value), Bound::Unbounded),
            CompareOp::Ge => (Bound::Included(value), Bound::Unbounded),
            CompareOp::Lt => (Bound::Unbounded, Bound::Excluded(value)),
            CompareOp::Le => (Bound::Unbounded, Bound::Included(value)),
        };
        Self { lower, upper }
    }

    /// Whether no string lies in the interval.
    pub(super) fn is_empty(&self) -> bool {
        match (self.lower, self.upper) {
            // Nothing sorts before the empty string.
            (_, Bound::Excluded("")) => true,
            (Bound::Included(low), Bound::Included(high)) => low > high,
            (Bound::Included(low) | Bound::Excluded(low), Bound::Excluded(high))
            | (Bound::Excluded(low), Bound::Included(high)) => low >= high,
            _ => false,
        }
    }

    /// The single string of the interval, if its bounds say it holds exactly one.
    pub(super) fn point(&self) -> Option<&'f str> {
        match (self.lower, self.upper) {
            (Bound::Included(low), Bound::Included(high)) if low == high => Some(low),
            _ => None,
        }
    }

    pub(super) const fn is_full(&self) -> bool {
        matches!(
            (self.lower, self.upper),
            (Bound::Unbounded, Bound::Unbounded)
        )
    }

    /// Whether `value` lies in the interval.
    pub(super) fn contains(&self, value: &str) -> bool {
        let above = match self.lower {
            Bound::Included(low) => value >= low,
            Bound::Excluded(low) => value > low,
            Bound::Unbounded => true,
        };
        let below = match self.upper {
            Bound::Included(high) => value <= high,
            Bound::Excluded(high) => value < high,
            Bound::Unbounded => true,
        };
        above && below
    }

    pub(super) fn intersect(self, other: Self) -> Self {
        Self {
            lower: tighter(self.lower, other.lower, Ordering::Greater),
            upper: tighter(self.upper, other.upper, Ordering::Less),
        }
    }

    /// The smallest interval holding both.
    pub(super) fn hull(self, other: Self) -> Self {
        Self {
            lower: looser(self.lower, other.lower, Ordering::Less),
            upper: looser(self.upper, other.upper, Ordering::Greater),
        }
    }
}

/// Of two bounds on the same side, the one admitting less. `wins` is the ordering of a
/// value that makes its bound the tighter one (`Greater` for lower bounds).
fn tighter<'f>(a: Bound<&'f str>, b: Bound<&'f str>, wins: Ordering) -> Bound<&'f str> {
    match (a, b) {
        (Bound::Unbounded, other) | (other, Bound::Unbounded) => other,
        (Bound::Included(x) | Bound::Excluded(x), Bound::Included(y) | Bound::Excluded(y)) => {
            let ordering = x.cmp(y);
            if ordering == wins {
                a
            } else if ordering == wins.reverse() {
                b
            } else if matches!(a, Bound::Excluded(_)) {
                a
            } else {
                b
            }
        }
    }
}

/// Of two bounds on the same side, the one admitting more; `wins` as in [`tighter`] but for
/// the looser value (`Less` for lower bounds).
fn looser<'f>(a: Bound<&'f str>, b: Bound<&'f str>, wins: Ordering) -> Bound<&'f str> {
    match (a, b) {
        (Bound::Unbounded, _) | (_, Bound::Unbounded) => Bound::Unbounded,
        (Bound::Included(x) | Bound::Excluded(x), Bound::Included(y) | Bound::Excluded(y)) => {
            let ordering = x.cmp(y);
            if ordering == wins {
                a
            } else if ordering == wins.reverse() {
                b
            } else if matches!(a, Bound::Included(_)) {
                a
            } else {
                b
            }
        }
    }
}

/// A set of rows known to hold every match: `PartitionKey ∈ pk` and `RowKey ∈ rk`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct KeyBox<'f> {
    pub(super) pk: Interval<'f>,
    pub(super) rk: Interval<'f>,
}

/// A [`KeyBox`] or the empty set (`None`).
pub(super) type Region<'f> = Option<KeyBox<'f>>;

impl<'f> KeyBox<'f> {
    pub(super) const FULL: Self = Self {
        pk: Interval::FULL,
        rk: Interval::FULL,
    };

    /// The box, or `None` when one side is empty.
    pub(super) fn non_empty(self) -> Region<'f> {
        (!self.pk.is_empty() && !self.rk.is_empty()).then_some(self)
    }
}

/// Rows in both regions (exact).
pub(super) fn intersect<'f>(a: Region<'f>, b: Region<'f>) -> Region<'f> {
    let (a, b) = (a?, b?);
    KeyBox {
        pk: a.pk.intersect(b.pk),
        rk: a.rk.intersect(b.rk),
    }
    .non_empty()
}

/// A box holding both regions (a superset of their union).
pub(super) fn hull<'f>(a: Region<'f>, b: Region<'f>) -> Region<'f> {
    match (a, b) {
        (None, other) | (other, None) => other,
        (Some(a), Some(b)) => Some(KeyBox {
            pk: a.pk.hull(b.pk),
            rk: a.rk.hull(b.rk),
        }),
    }
}
