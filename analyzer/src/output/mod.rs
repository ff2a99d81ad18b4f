//! Outputs: the terminal summary and JSON lines (schema 2, streamed as
//! associations finish).

#![warn(missing_docs)]

pub mod jsonl;
pub mod summary;
