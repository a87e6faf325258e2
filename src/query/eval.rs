//! Typed evaluation of a filter against one row, with the service's rules.
//!
//! - A comparison of a property with a literal of another EDM type is false, whatever the
//!   operator (also `ne`); so is a comparison on a property the row does not have. There is
//!   no numeric promotion: `Int64Prop eq 5` is false, `Int64Prop eq 5L` may be true (the
//!   service documents that "the constant value must be of the same data type as the
//!   property").
//! - Strings (keys included) compare ordinally by code point (UTF-8 byte order, the order of
//!   the engine keys, so the planner and the evaluator agree on every range).
//! - Doubles compare as IEEE 754: NaN is unordered, so every operator but `ne` is false with
//!   a NaN on either side, and `-0.0 eq 0.0`.
//! - Booleans order `false < true`; DateTimes by ticks; Guids by their bytes in textual order
//!   (the order of the hyphenated lowercase text); Binary bytewise (lexicographic).

use std::cmp::Ordering;

use super::ast::{CompareOp, Comparison, Expr, Field, Literal};
use super::source::EntitySource;
use crate::codec::CodecError;
use crate::codec::property::ValueRef;

/// Evaluates `expr` against `row`.
pub(super) fn eval<S: EntitySource + ?Sized>(expr: &Expr, row: &S) -> Result<bool, CodecError> {
    Ok(match expr {
        Expr::Compare(comparison) => compare(comparison, row)?,
        Expr::Const(flag) => *flag,
        Expr::And(operands) => {
            for operand in operands {
                if !eval(operand, row)? {
                    return Ok(false);
                }
            }
            true
        }
        Expr::Or(operands) => {
            for operand in operands {
                if eval(operand, row)? {
                    return Ok(true);
                }
            }
            false
        }
        Expr::Not(operand) => !eval(operand, row)?,
    })
}

#[inline]
fn compare<S: EntitySource + ?Sized>(comparison: &Comparison, row: &S) -> Result<bool, CodecError> {
    let op = comparison.op;
    let literal = &comparison.literal;
    Ok(match &comparison.field {
        Field::PartitionKey => row.has_keys() && compare_str(row.partition_key(), op, literal),
        Field::RowKey => row.has_keys() && compare_str(row.row_key(), op, literal),
        Field::Timestamp => match (row.timestamp(), literal) {
            (Some(stamp), Literal::DateTime(wanted)) => op.accepts(stamp.cmp(wanted)),
            _ => false,
        },
        Field::Property(name) => match row.property(name)? {
            Some(value) => compare_value(value, op, literal),
            None => false,
        },
    })
}

#[inline]
fn compare_str(value: &str, op: CompareOp, literal: &Literal) -> bool {
    match literal {
        Literal::String(wanted) => compare_bytes(value.as_bytes(), op, wanted.as_bytes()),
        _ => false,
    }
}

/// `a op b` for byte strings in lexicographic order (code-point order for UTF-8). Short
/// strings, the usual property value and key, are compared in line rather than by a call to
/// `memcmp`: the filter runs on every row a scan examines.
#[inline]
fn compare_bytes(a: &[u8], op: CompareOp, b: &[u8]) -> bool {
    if op == CompareOp::Eq {
        return same_bytes(a, b);
    }
    if op == CompareOp::Ne {
        return !same_bytes(a, b);
    }
    op.accepts(order_bytes(a, b))
}

/// `a == b`, in line for short slices.
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    const SHORT: usize = 16;
    if a.len() != b.len() {
        return false;
    }
    if a.len() > SHORT {
        return a == b;
    }
    a.iter().zip(b).fold(true, |same, (x, y)| same & (x == y))
}

/// The lexicographic order of `a` and `b`, in line for short slices.
#[inline]
fn order_bytes(a: &[u8], b: &[u8]) -> Ordering {
    const SHORT: usize = 16;
    if a.len() > SHORT || b.len() > SHORT {
        return a.cmp(b);
    }
    match a.iter().zip(b).find(|(x, y)| x != y) {
        Some((x, y)) => x.cmp(y),
        None => a.len().cmp(&b.len()),
    }
}

/// `value op literal`, false when their types differ.
#[inline]
fn compare_value(value: ValueRef<'_>, op: CompareOp, literal: &Literal) -> bool {
    let ordering = match (value, literal) {
        (ValueRef::String(a), Literal::String(b)) => {
            return compare_bytes(a.as_bytes(), op, b.as_bytes());
        }
        (ValueRef::Int32(a), Literal::Int32(b)) => a.cmp(b),
        (ValueRef::Int64(a), Literal::Int64(b)) => a.cmp(b),
        (ValueRef::Double(a), Literal::Double(b)) => match a.partial_cmp(b) {
            Some(ordering) => ordering,
            None => return op == CompareOp::Ne,
        },
        (ValueRef::Boolean(a), Literal::Boolean(b)) => a.cmp(b),
        (ValueRef::DateTime(a), Literal::DateTime(b)) => a.cmp(b),
        (ValueRef::Guid(a), Literal::Guid(b)) => a.cmp(b),
        (ValueRef::Binary(a), Literal::Binary(b)) => a.cmp(b),
        _ => return false,
    };
    op.accepts(ordering)
}

#[cfg(test)]
mod tests {
    use super::{CompareOp, compare_bytes};

    #[test]
    fn byte_comparisons_agree_with_the_ordinal_string_order() {
        let samples = [
            "",
            "a",
            "b",
            "ab",
            "g1",
            "g10",
            "g2",
            "\u{e9}",
            "e\u{301}",
            "0123456789abcdef",
            "0123456789abcdeg",
            "0123456789abcdef0",
            "0123456789abcdef0123456789",
            "0123456789abcdef0123456789x",
        ];
        let ops = [
            CompareOp::Eq,
            CompareOp::Ne,
            CompareOp::Gt,
            CompareOp::Ge,
            CompareOp::Lt,
            CompareOp::Le,
        ];
        for a in samples {
            for b in samples {
                for op in ops {
                    assert_eq!(
                        compare_bytes(a.as_bytes(), op, b.as_bytes()),
                        op.accepts(a.cmp(b)),
                        "{a:?} {op:?} {b:?}"
                    );
                }
            }
        }
    }
}
