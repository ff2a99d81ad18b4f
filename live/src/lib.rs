//! libpcap for sctp-handover: capture filters in libpcap's syntax, live
//! capture decoupled from the analysis, following growing captures. Kept
//! out of the core library so that only what needs libpcap links it.

#![warn(missing_docs)]

pub mod drops;
pub mod filter;
pub mod follow;
pub mod interfaces;
pub mod merge;
pub mod queue;
pub mod write;
