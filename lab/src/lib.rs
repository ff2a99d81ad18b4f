//! The lab around the product: code that checks the analyzer against the
//! seed papers and measures it, and that no user of the analyzer needs.
//!
//! - [`reproduction`]: the reproduction report of `make reproduce`
//!   (binary `sctp-handover-lab`, docs/reproduction.md): the seeds'
//!   experiments replayed on the kernel by the harness, analysed in batch
//!   and set beside the published values.
//! - The workload generator of `make bench` (binary `gen_workload`,
//!   `src/bin/gen_workload/`, docs/performance.md).
//!
//! The reproduction draws with the report crate's public building blocks
//! (document model, figures, statistics, HTML and Markdown renderers);
//! they are bound here at the crate root under the names the report crate
//! gives them, so `crate::document` in the reproduction is the report's
//! `document` module.
//!
//! The public surface is what the binary `sctp-handover-lab` calls; the
//! paper sections, their statistics and readers are private to the crate.

#![warn(missing_docs)]

pub(crate) use sctp_handover_report::{document, figures, html, markdown, stats};

pub mod reproduction;
