//! Outputs: the terminal summary, JSON lines (schema 2, streamed) and the
//! schema 1 JSON document (kept until every caller moves to JSON lines).

pub mod json;
pub mod jsonl;
pub mod summary;
