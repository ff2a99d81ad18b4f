//! Outputs: the terminal summary and JSON lines (schema 2, streamed as
//! associations finish).

pub mod jsonl;
pub mod summary;
