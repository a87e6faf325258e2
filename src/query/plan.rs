//! The planner: from a filter, the narrowest key range that holds every match, and what is
//! left to evaluate on each row of that range.
//!
//! Each sub-expression is mapped to a [`KeyBox`] (a PartitionKey interval × a RowKey interval)
//! that holds every row it can match: a key comparison with a string gives its interval
//! (`ne` widens to everything), a key comparison with another type matches nothing, any other
//! comparison gives everything; `and` intersects (exact), `or` takes the hull (a superset),
//! and `not` is pushed inward by De Morgan down to the key comparisons, which it flips (exact,
//! since keys are always present, totally ordered strings). The box of the whole filter then
//! becomes a [`KeyScope`]; the scope is always a superset of the matching keys. Boolean
//! constants are folded first: `false` plans to [`KeyScope::Empty`] (nothing is read),
//! `true` to the whole table with no residual, and a constant operand drops out of its chain.

use std::ops::Bound;

use super::Filter;
use super::ast::{CompareOp, Comparison, Expr, Field, Literal};
use super::interval::{Interval, KeyBox, Region, hull, intersect};

/// The contiguous key range a query must read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyScope {
    /// One entity: `PartitionKey eq` and `RowKey eq`.
    Point {
        /// The PartitionKey.
        pk: String,
        /// The RowKey.
        rk: String,
    },
    /// A RowKey range within one partition.
    RowRange {
        /// The PartitionKey.
        pk: String,
        /// The lower RowKey bound.
        start: Bound<String>,
        /// The upper RowKey bound.
        end: Bound<String>,
    },
    /// One whole partition.
    Partition {
        /// The PartitionKey.
        pk: String,
    },
    /// The partitions whose PartitionKey lies in a range (every RowKey).
    PartitionRange {
        /// The lower PartitionKey bound.
        start: Bound<String>,
        /// The upper PartitionKey bound.
        end: Bound<String>,
    },
    /// The whole table.
    Table,
    /// Nothing can match (a contradiction such as `PartitionKey eq 'a' and PartitionKey eq
    /// 'b'`): no key needs reading.
    Empty,
}

impl KeyScope {
    /// Whether the row with these keys lies in the scope.
    #[must_use]
    pub fn contains(&self, pk: &str, rk: &str) -> bool {
        match self {
            Self::Point { pk: p, rk: r } => p == pk && r == rk,
            Self::RowRange { pk: p, start, end } => p == pk && in_bounds(rk, start, end),
            Self::Partition { pk: p } => p == pk,
            Self::PartitionRange { start, end } => in_bounds(pk, start, end),
            Self::Table => true,
            Self::Empty => false,
        }
    }
}

fn in_bounds(value: &str, start: &Bound<String>, end: &Bound<String>) -> bool {
    Interval {
        lower: start.as_ref().map(String::as_str),
        upper: end.as_ref().map(String::as_str),
    }
    .contains(value)
}

/// The query kinds of SPEC §6, best to worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum QueryKind {
    /// At most one key is read ([`KeyScope::Point`], and [`KeyScope::Empty`] which reads none).
    Point,
    /// A RowKey range of one partition.
    Range,
    /// One whole partition.
    PartitionScan,
    /// A PartitionKey range or the whole table.
    TableScan,
}

/// How to execute a filter: read the keys of `scope` in order, and keep the rows on which
/// `residual` (if any) holds.
///
/// ```
/// use std::ops::Bound;
/// use strata::query::{Filter, KeyScope, Plan, QueryKind};
///
/// let filter = Filter::parse("PartitionKey eq 'p' and RowKey ge 'a' and RowKey lt 'b' and Age gt 30")?;
/// let plan = Plan::new(Some(&filter));
/// assert_eq!(plan.scope, KeyScope::RowRange {
///     pk: "p".into(),
///     start: Bound::Included("a".into()),
///     end: Bound::Excluded("b".into()),
/// });
/// assert_eq!(plan.kind(), QueryKind::Range);
/// assert_eq!(plan.residual.unwrap().to_string(), "Age gt 30");
/// # Ok::<(), strata::query::QueryError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The key range holding every match.
    pub scope: KeyScope,
    /// What remains to check on each row of the scope; `None` when every row matches.
    pub residual: Option<Filter>,
}

impl Plan {
    /// Plans `filter` (`None`: every entity of the table).
    #[must_use]
    pub fn new(filter: Option<&Filter>) -> Self {
        let Some(filter) = filter else {
            return Self {
                scope: KeyScope::Table,
                residual: None,
            };
        };
        let folded;
        let mut expr = filter.expr();
        if has_const(expr) {
            folded = fold(expr.clone());
            match folded {
                Expr::Const(true) => return Self::new(None),
                Expr::Const(false) => {
                    return Self {
                        scope: KeyScope::Empty,
                        residual: None,
                    };
                }
                _ => expr = &folded,
            }
        }
        let Some(region) = region_of(expr, false) else {
            return Self {
                scope: KeyScope::Empty,
                residual: None,
            };
        };
        let pk_point = region.pk.point();
        let mut conjuncts = Vec::new();
        collect_conjuncts(expr, &mut conjuncts);
        // A plain key comparison is implied by the scope when the scope captures its key
        // exactly: the scope's PartitionKey range is always the region's; its RowKey range
        // only when the partition is a single one.
        let residual: Vec<Expr> = conjuncts
            .iter()
            .filter(|conjunct| match plain_key_comparison(conjunct) {
                Some(Field::PartitionKey) => false,
                Some(Field::RowKey) => pk_point.is_none(),
                _ => true,
            })
            .map(|conjunct| (*conjunct).clone())
            .collect();
        let residual = match residual.len() {
            0 => None,
            1 => residual.into_iter().next().map(Filter::from_expr),
            _ => Some(Filter::from_expr(Expr::And(residual))),
        };
        Self {
            scope: scope_of(&region),
            residual,
        }
    }

    /// The kind of query this plan executes.
    #[must_use]
    pub const fn kind(&self) -> QueryKind {
        match self.scope {
            KeyScope::Point { .. } | KeyScope::Empty => QueryKind::Point,
            KeyScope::RowRange { .. } => QueryKind::Range,
            KeyScope::Partition { .. } => QueryKind::PartitionScan,
            KeyScope::PartitionRange { .. } | KeyScope::Table => QueryKind::TableScan,
        }
    }
}

/// Whether `expr` holds a Boolean constant anywhere.
fn has_const(expr: &Expr) -> bool {
    match expr {
        Expr::Const(_) => true,
        Expr::Compare(_) => false,
        Expr::Not(inner) => has_const(inner),
        Expr::And(operands) | Expr::Or(operands) => operands.iter().any(has_const),
    }
}

/// `expr` with its constants folded away: either a single [`Expr::Const`] or an expression
/// holding none, so the scope and the residual never carry a constant.
fn fold(expr: Expr) -> Expr {
    match expr {
        Expr::Not(inner) => match fold(*inner) {
            Expr::Const(flag) => Expr::Const(!flag),
            other => Expr::Not(Box::new(other)),
        },
        Expr::And(operands) => fold_chain(operands, false, Expr::And),
        Expr::Or(operands) => fold_chain(operands, true, Expr::Or),
        leaf @ (Expr::Compare(_) | Expr::Const(_)) => leaf,
    }
}

/// Folds the operands of an `and` (`absorbing = false`) or an `or` (`absorbing = true`): the
/// absorbing constant decides the whole chain, the other one drops out.
fn fold_chain(operands: Vec<Expr>, absorbing: bool, rebuild: fn(Vec<Expr>) -> Expr) -> Expr {
    let mut kept = Vec::with_capacity(operands.len());
    for operand in operands {
        match fold(operand) {
            Expr::Const(flag) if flag == absorbing => return Expr::Const(absorbing),
            Expr::Const(_) => {}
            other => kept.push(other),
        }
    }
    match kept.len() {
        0 => Expr::Const(!absorbing),
        1 => kept.pop().unwrap_or(Expr::Const(!absorbing)),
        _ => rebuild(kept),
    }
}

/// The operands of `expr` as one flat conjunction (through parenthesised `and`s).
fn collect_conjuncts<'e>(expr: &'e Expr, out: &mut Vec<&'e Expr>) {
    match expr {
        Expr::And(operands) => {
            for operand in operands {
                collect_conjuncts(operand, out);
            }
        }
        other => out.push(other),
    }
}

/// The key of `expr` if it is a comparison of a key with a string by an operator whose set
/// is an interval (not `ne`).
fn plain_key_comparison(expr: &Expr) -> Option<&Field> {
    match expr {
        Expr::Compare(Comparison {
            field: field @ (Field::PartitionKey | Field::RowKey),
            op,
            literal: Literal::String(_),
        }) if *op != CompareOp::Ne => Some(field),
        _ => None,
    }
}

/// A region holding every row on which `expr` (negated if `negated`) can be true.
fn region_of(expr: &Expr, negated: bool) -> Region<'_> {
    match expr {
        Expr::Not(inner) => region_of(inner, !negated),
        Expr::And(operands) | Expr::Or(operands) => {
            // `and` intersects; a negated `and` is an `or` of negations (De Morgan).
            let conjunction = matches!(expr, Expr::And(_)) != negated;
            let mut regions = operands.iter().map(|operand| region_of(operand, negated));
            if conjunction {
                regions.try_fold(KeyBox::FULL, |acc, region| intersect(Some(acc), region))
            } else {
                regions.fold(None, hull)
            }
        }
        Expr::Compare(comparison) => comparison_region(comparison, negated),
        // Folded away before planning; still exact here: all rows or none.
        Expr::Const(flag) => (*flag != negated).then_some(KeyBox::FULL),
    }
}

fn comparison_region(comparison: &Comparison, negated: bool) -> Region<'_> {
    let is_pk = match comparison.field {
        Field::PartitionKey => true,
        Field::RowKey => false,
        Field::Timestamp | Field::Property(_) => return Some(KeyBox::FULL),
    };
    let Literal::String(value) = &comparison.literal else {
        // A key never equals a non-string: the comparison is false on every row, its
        // negation true on every row.
        return negated.then_some(KeyBox::FULL);
    };
    let op = if negated {
        comparison.op.negated()
    } else {
        comparison.op
    };
    let interval = Interval::of(op, value);
    let region = if is_pk {
        KeyBox {
            pk: interval,
            rk: Interval::FULL,
        }
    } else {
        KeyBox {
            pk: Interval::FULL,
            rk: interval,
        }
    };
    region.non_empty()
}

fn scope_of(region: &KeyBox<'_>) -> KeyScope {
    let owned = |bound: Bound<&str>| bound.map(str::to_owned);
    match region.pk.point() {
        Some(pk) => {
            let pk = pk.to_owned();
            if let Some(rk) = region.rk.point() {
                KeyScope::Point {
                    pk,
                    rk: rk.to_owned(),
                }
            } else if region.rk.is_full() {
                KeyScope::Partition { pk }
            } else {
                KeyScope::RowRange {
                    pk,
                    start: owned(region.rk.lower),
                    end: owned(region.rk.upper),
                }
            }
        }
        None if region.pk.is_full() => KeyScope::Table,
        None => KeyScope::PartitionRange {
            start: owned(region.pk.lower),
            end: owned(region.pk.upper),
        },
    }
}
