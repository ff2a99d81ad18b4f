//! Tidy tables over capture archives: the batch layer of `sctp-handover`.
//!
//! Data flows one way: inputs (files found, with the harness's files beside
//! them) → the core analysis (`sctp_handover::analysis`) → rows
//! ([`records`]) → part files in a dataset ([`write`], [`dataset`]).
//! polars lives here and nowhere else in the workspace.

#![warn(missing_docs)]

pub mod batch;
pub mod dataset;
pub mod inputs;
pub mod points;
pub mod read;
pub mod records;
pub mod rows;
pub mod schema;
pub mod settings;
pub mod write;
