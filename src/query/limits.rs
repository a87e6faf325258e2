//! Limits of the `$filter` language as this engine accepts it.

/// Deepest nesting of parentheses and `not` accepted. The parser and the evaluator recurse
/// once per level, so this bounds their stack use whatever the input; `and`/`or` chains are
/// flattened and do not count.
pub const MAX_NESTING: usize = 128;

/// Longest `$filter` text accepted, in bytes (the service caps a whole request URL far below
/// this; the bound keeps a hostile filter from costing more than linear work to reject).
pub const MAX_FILTER_BYTES: usize = 64 * 1024;

/// Characters of offending input quoted in an error message.
pub const ERROR_EXCERPT_CHARS: usize = 32;
