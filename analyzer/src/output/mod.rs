//! Outputs: the terminal summary and the versioned JSON document.

pub mod json;
pub mod summary;
