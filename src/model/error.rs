//! Errors of the model layer.

/// A violated rule of the data model, naming the rule and the offending input.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {}
