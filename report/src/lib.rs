//! Comparison reports over captures and the batch tables: self-contained
//! HTML with plotters figures, and the same figures and tables as files.
//!
//! Data flows one way: captures → the core analysis → traces ([`trace`])
//! and the batch tables (`sctp_handover_tables`) → statistics ([`stats`],
//! polars) → figures ([`figures`]) → the document ([`document`]) → HTML
//! ([`html`]) or Markdown ([`markdown`]). It sits after the tables in the
//! workspace's data flow (docs/architecture.md): `sctp-handover report`
//! ([`build::build`]) and the paper reproduction (`sctp-handover-lab`,
//! which draws with the public document, figures and statistics) use it.

#![warn(missing_docs)]

pub mod build;
pub mod components;
pub mod document;
pub mod figures;
pub mod html;
pub mod markdown;
pub mod points;
pub mod stats;
pub mod trace;

pub use build::{Built, ReportConfig, SweepRequest};
pub use document::{Block, Document, Excluded, Section, Table};
pub use figures::Figure;
pub use stats::{Group, GroupBy, Stat};
pub use trace::{CaptureTrace, TraceSink};
