//! Queries: the `$filter` language of the Table service (SPEC §6), its typed evaluation, and
//! the planner that turns a filter into the narrowest key range.
//!
//! - [`Filter::parse`] reads the whole grammar: `eq ne gt ge lt le`, `and`/`or`/`not` (binding
//!   `not` > `and` > `or`), parentheses, and every literal form (`'it''s'`, `42`, `42L`,
//!   `1.5`/`1e10`/`2D`/`NaN`/`INF`/`-INF`, `true`/`false`, `datetime'...'` (seconds optional;
//!   UTC when it names no zone), `guid'...'`, `X'0A1B'`/`binary'0A1B'`). Operators and
//!   keywords are lowercase and property names case-sensitive, as the service requires ("all
//!   parts of the filter string are case-sensitive"); the literal prefixes `datetime`, `guid`
//!   and `binary` are not, `X` is. A literal may stand on either side (`5 lt Age` is
//!   `Age gt 5`). A bare property is a Boolean condition (`IsActive` is `IsActive eq true`)
//!   and a bare `true`/`false` a constant one ([`Expr::Const`]: `$filter=false` matches
//!   nothing). Errors carry the byte offset of the bad token.
//! - [`Filter::matches`] evaluates against any [`EntitySource`]: a decoded [`Entity`], an
//!   [`EncodedEntity`] read in place (decoding only the properties compared), or a
//!   [`TableRow`] for `query_tables`. The typed rules are in the docs of `eval` (here
//!   repeated): a type mismatch or a missing property makes a comparison false (even `ne`);
//!   an Int32 literal never matches an Int64 property nor the reverse; Doubles follow IEEE
//!   (NaN matches only `ne`); strings order by code point; Booleans `false < true`; Guids by
//!   textual order; Binary bytewise.
//! - [`Plan::new`] picks the [`KeyScope`] (point, RowKey range, partition, PartitionKey range,
//!   table, or empty) and the residual filter still to evaluate on each row; constants are
//!   folded first, so `false` reads no key and `true` leaves no residual.
//!
//! [`Entity`]: crate::model::Entity

mod ast;
mod error;
mod eval;
mod filter;
mod interval;
mod lexer;
pub mod limits;
mod parser;
mod plan;
mod prefilter;
mod source;

pub use ast::{CompareOp, Comparison, Expr, Field, Literal};
pub use error::{QueryError, Result, SyntaxError};
pub use filter::Filter;
pub use plan::{KeyScope, Plan, QueryKind};
pub use prefilter::{Prefilter, Verdict};
pub use source::{EncodedEntity, EntitySource, TABLE_NAME_PROPERTY, TableRow};
