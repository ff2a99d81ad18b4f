//! Tidy tables over capture archives: the batch layer of `sctp-handover`.
//!
//! Data flows one way: inputs (files found, with the harness's files beside
//! them) → the core analysis (`sctp_handover::analysis`) → rows
//! ([`records`]) → part files in a dataset ([`write`](mod@write), [`dataset`]).
//!
//! Its modules are its public surface, each one concept that the CLI, the
//! Python bindings, the points, report and lab crates use by name:
//! [`schema`] (the tables' columns, defined once) and [`rows`],
//! [`records`] (analysis results → rows), [`write`](mod@write) and [`dataset`] (part
//! files and the dataset's records of complete inputs), [`inputs`]
//! (finding inputs and the harness's files beside them), [`batch`] (the
//! parallel, resumable run), [`points`] (the tables of two capture
//! points), [`read`] (a dataset read back) and [`settings`] (the
//! analyzer's settings, re-exported). polars is linked here and by the
//! crates that read tables back (report, lab, python), never by the
//! analyzer, so a user of the core library does not build it.

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
