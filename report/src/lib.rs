//! Comparison reports over captures and the batch tables: self-contained
//! HTML with plotters figures, and the same figures and tables as files.
//!
//! Data flows one way: captures → the core analysis → traces ([`trace`])
//! and the batch tables (`sctp_handover_tables`) → statistics ([`stats`],
//! polars) → figures ([`figures`]) → the document ([`html`]).

pub mod build;
pub mod components;
pub mod document;
pub mod figures;
pub mod html;
pub mod markdown;
pub mod stats;
pub mod trace;
