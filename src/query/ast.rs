//! The parsed form of a `$filter`: comparisons of one property with one pre-resolved literal
//! and Boolean constants, combined by `and`, `or` and `not`.

use std::cmp::Ordering;
use std::fmt::{self, Write as _};

use crate::model::{DateTime, Guid};

/// A boolean expression over one entity.
///
/// `And` and `Or` hold at least two operands and the parser flattens chains of the same
/// operator, so the depth of an expression is bounded by the nesting of parentheses and
/// `not` in the text, never by the number of terms.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// True when every operand is (evaluated left to right, stops at the first false).
    And(Vec<Expr>),
    /// True when any operand is (evaluated left to right, stops at the first true).
    Or(Vec<Expr>),
    /// True when the operand is false: a missing property makes a comparison false, so
    /// `not (Age eq 1)` matches an entity without `Age`.
    Not(Box<Expr>),
    /// One comparison.
    Compare(Comparison),
    /// A bare `true` or `false` standing as a whole condition (`$filter=false`,
    /// `PartitionKey eq 'a' and true`): the service accepts these, matching every row or none.
    Const(bool),
}

/// `field op literal`. A literal written on the left (`5 lt Age`) is stored mirrored
/// (`Age gt 5`).
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The property compared.
    pub field: Field,
    /// The operator.
    pub op: CompareOp,
    /// The constant, already converted to its EDM type.
    pub literal: Literal,
}

/// What a comparison reads from the entity.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Field {
    /// The `PartitionKey` (an `Edm.String`).
    PartitionKey,
    /// The `RowKey` (an `Edm.String`).
    RowKey,
    /// The server-managed `Timestamp` (an `Edm.DateTime`).
    Timestamp,
    /// A custom property, by its case-sensitive name (also `TableName` of a table row).
    Property(Box<str>),
}

impl Field {
    /// The field named `name` in a filter (the system names are case-sensitive).
    #[must_use]
    pub fn from_name(name: &str) -> Self {
        match name {
            "PartitionKey" => Self::PartitionKey,
            "RowKey" => Self::RowKey,
            "Timestamp" => Self::Timestamp,
            other => Self::Property(other.into()),
        }
    }

    /// The name as written in a filter.
    #[must_use]
    pub fn name(&self) -> &str {
        match self {
            Self::PartitionKey => "PartitionKey",
            Self::RowKey => "RowKey",
            Self::Timestamp => "Timestamp",
            Self::Property(name) => name,
        }
    }
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompareOp {
    /// `eq`
    Eq,
    /// `ne`
    Ne,
    /// `gt`
    Gt,
    /// `ge`
    Ge,
    /// `lt`
    Lt,
    /// `le`
    Le,
}

impl CompareOp {
    /// Every operator.
    pub const ALL: [Self; 6] = [Self::Eq, Self::Ne, Self::Gt, Self::Ge, Self::Lt, Self::Le];

    /// The operator spelled `word` (lowercase only, as the service requires).
    #[must_use]
    pub fn from_word(word: &str) -> Option<Self> {
        Some(match word {
            "eq" => Self::Eq,
            "ne" => Self::Ne,
            "gt" => Self::Gt,
            "ge" => Self::Ge,
            "lt" => Self::Lt,
            "le" => Self::Le,
            _ => return None,
        })
    }

    /// The operator's spelling.
    #[must_use]
    pub const fn word(self) -> &'static str {
        match self {
            Self::Eq => "eq",
            Self::Ne => "ne",
            Self::Gt => "gt",
            Self::Ge => "ge",
            Self::Lt => "lt",
            Self::Le => "le",
        }
    }

    /// The operator with its operands swapped: `a op b` iff `b op.mirrored() a`.
    #[must_use]
    pub const fn mirrored(self) -> Self {
        match self {
            Self::Eq => Self::Eq,
            Self::Ne => Self::Ne,
            Self::Gt => Self::Lt,
            Self::Ge => Self::Le,
            Self::Lt => Self::Gt,
            Self::Le => Self::Ge,
        }
    }

    /// The complement over a total order: `!(a op b)` iff `a op.negated() b`. Only valid for
    /// totally ordered values that are present (keys), not for NaN or missing properties.
    #[must_use]
    pub const fn negated(self) -> Self {
        match self {
            Self::Eq => Self::Ne,
            Self::Ne => Self::Eq,
            Self::Gt => Self::Le,
            Self::Ge => Self::Lt,
            Self::Lt => Self::Ge,
            Self::Le => Self::Gt,
        }
    }

    /// Whether `ordering` (of the property against the literal) satisfies the operator.
    #[inline]
    #[must_use]
    pub const fn accepts(self, ordering: Ordering) -> bool {
        match self {
            Self::Eq => matches!(ordering, Ordering::Equal),
            Self::Ne => !matches!(ordering, Ordering::Equal),
            Self::Gt => matches!(ordering, Ordering::Greater),
            Self::Ge => !matches!(ordering, Ordering::Less),
            Self::Lt => matches!(ordering, Ordering::Less),
            Self::Le => !matches!(ordering, Ordering::Greater),
        }
    }
}

/// A constant of a filter, converted to its EDM type when the filter is parsed.
#[derive(Debug, Clone)]
pub enum Literal {
    /// `'text'` (a doubled quote stands for one quote).
    String(Box<str>),
    /// `123`, `-5`: an integer without suffix is an `Edm.Int32`.
    Int32(i32),
    /// `123L`: an `Edm.Int64`.
    Int64(i64),
    /// `1.5`, `1e10`, `2.0`, `2D`, `NaN`, `INF`, `-INF`: an `Edm.Double`.
    Double(f64),
    /// `true`, `false`.
    Boolean(bool),
    /// `datetime'2024-01-01T00:00:00Z'`.
    DateTime(DateTime),
    /// `guid'00112233-4455-6677-8899-aabbccddeeff'`.
    Guid(Guid),
    /// `X'0A1B'` or `binary'0A1B'`.
    Binary(Box<[u8]>),
}

/// Exact equality: Doubles compare by bit pattern, so a parsed-and-printed filter equals the
/// original even with NaN.
impl PartialEq for Literal {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::String(a), Self::String(b)) => a == b,
            (Self::Int32(a), Self::Int32(b)) => a == b,
            (Self::Int64(a), Self::Int64(b)) => a == b,
            (Self::Double(a), Self::Double(b)) => a.to_bits() == b.to_bits(),
            (Self::Boolean(a), Self::Boolean(b)) => a == b,
            (Self::DateTime(a), Self::DateTime(b)) => a == b,
            (Self::Guid(a), Self::Guid(b)) => a == b,
            (Self::Binary(a), Self::Binary(b)) => a == b,
            _ => false,
        }
    }
}

/// Prints the literal in a form the parser reads back to an equal literal.
impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::String(text) => {
                f.write_char('\'')?;
                for (index, part) in text.split('\'').enumerate() {
                    if index > 0 {
                        f.write_str("''")?;
                    }
                    f.write_str(part)?;
                }
                f.write_char('\'')
            }
            Self::Int32(number) => write!(f, "{number}"),
            Self::Int64(number) => write!(f, "{number}L"),
            Self::Double(number) if number.is_nan() => f.write_str("NaN"),
            Self::Double(number) if number.is_infinite() => {
                f.write_str(if *number > 0.0 { "INF" } else { "-INF" })
            }
            // `{:?}` is the shortest text that parses back to the same bits, and always has a
            // '.' or an exponent, so it reads back as a Double (not an Int32).
            Self::Double(number) => write!(f, "{number:?}"),
            Self::Boolean(flag) => write!(f, "{flag}"),
            Self::DateTime(instant) => write!(f, "datetime'{instant}'"),
            Self::Guid(guid) => write!(f, "guid'{guid}'"),
            Self::Binary(bytes) => {
                f.write_str("X'")?;
                for byte in bytes.iter() {
                    write!(f, "{byte:02X}")?;
                }
                f.write_char('\'')
            }
        }
    }
}

impl fmt::Display for Comparison {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {}",
            self.field.name(),
            self.op.word(),
            self.literal
        )
    }
}

/// Prints the expression as `$filter` text that parses back to an equivalent expression
/// (nested operators get parentheses; `not` always gets them).
impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Compare(comparison) => write!(f, "{comparison}"),
            Self::Const(flag) => write!(f, "{flag}"),
            Self::Not(inner) => write!(f, "not ({inner})"),
            Self::And(operands) => write_joined(f, operands, " and "),
            Self::Or(operands) => write_joined(f, operands, " or "),
        }
    }
}

fn write_joined(f: &mut fmt::Formatter<'_>, operands: &[Expr], separator: &str) -> fmt::Result {
    for (index, operand) in operands.iter().enumerate() {
        if index > 0 {
            f.write_str(separator)?;
        }
        if matches!(operand, Expr::And(_) | Expr::Or(_)) {
            write!(f, "({operand})")?;
        } else {
            write!(f, "{operand}")?;
        }
    }
    Ok(())
}
