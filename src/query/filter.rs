//! [`Filter`]: a parsed `$filter`, ready to evaluate.

use std::fmt;

use super::ast::{Comparison, Expr, Field};
use super::error::Result;
use super::source::EntitySource;
use super::{eval, parser};
use crate::codec::CodecError;

/// A parsed `$filter` expression. Literals are converted to their EDM values once, at parse
/// time, so evaluation neither parses nor allocates.
///
/// ```
/// use strata::model::{Entity, PartitionKey, PropertyName, RowKey, Value};
/// use strata::query::Filter;
///
/// let filter = Filter::parse("Name eq 'O''Brien' and (Age ge 18 or not (Minor eq true))")?;
/// let mut entity = Entity::new(PartitionKey::new("p")?, RowKey::new("r")?);
/// entity.set(PropertyName::new("Name")?, Value::string("O'Brien")?)?;
/// entity.set(PropertyName::new("Age")?, Value::Int32(42))?;
/// assert!(filter.matches(&entity)?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    expr: Expr,
}

impl Filter {
    /// Parses `$filter` text (already URL-decoded).
    ///
    /// # Errors
    /// A [`QueryError`](super::QueryError) naming the byte offset of the first bad token.
    pub fn parse(text: &str) -> Result<Self> {
        parser::parse(text).map(Self::from_expr)
    }

    /// A filter of an expression built in code.
    #[must_use]
    pub const fn from_expr(expr: Expr) -> Self {
        Self { expr }
    }

    /// The expression.
    #[must_use]
    pub const fn expr(&self) -> &Expr {
        &self.expr
    }

    /// Whether `row` satisfies the filter (typed rules in the module docs of `query`).
    ///
    /// # Errors
    /// The [`CodecError`] of a corrupt property the filter had to read.
    #[inline]
    pub fn matches<S: EntitySource + ?Sized>(&self, row: &S) -> Result<bool, CodecError> {
        eval::eval(&self.expr, row)
    }

    /// Every distinct field the filter reads, in order of first use.
    #[must_use]
    pub fn fields(&self) -> Vec<&Field> {
        let mut out: Vec<&Field> = Vec::new();
        collect_fields(&self.expr, &mut out);
        out
    }
}

fn collect_fields<'e>(expr: &'e Expr, out: &mut Vec<&'e Field>) {
    match expr {
        Expr::Compare(Comparison { field, .. }) => {
            if !out.contains(&field) {
                out.push(field);
            }
        }
        Expr::Const(_) => {}
        Expr::Not(inner) => collect_fields(inner, out),
        Expr::And(operands) | Expr::Or(operands) => {
            for operand in operands {
                collect_fields(operand, out);
            }
        }
    }
}

/// The filter as `$filter` text that parses back to an equal filter.
impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.expr)
    }
}

impl std::str::FromStr for Filter {
    type Err = super::QueryError;

    fn from_str(text: &str) -> Result<Self> {
        Self::parse(text)
    }
}
