//! libpcap for sctp-handover: capture filters in libpcap's syntax, live
//! capture decoupled from the analysis, following growing captures. Kept
//! out of the core library so that only what needs libpcap links it.
//!
//! Its modules are its public surface, one concept each, used by the CLI's
//! `watch`: [`interfaces`] (capture threads, one per interface) → [`queue`]
//! (the bounded queue to the analysis, counting what it drops) →
//! [`merge`] (frames of several interfaces in time order); [`follow`]
//! (captures still being written), [`filter`] (libpcap filters),
//! [`drops`] (what was lost, by cause and time span) and [`write`](mod@write)
//! (keeping what was seen as pcapng).

#![warn(missing_docs)]

pub mod drops;
pub mod filter;
pub mod follow;
pub mod interfaces;
pub mod merge;
pub mod queue;
pub mod write;
