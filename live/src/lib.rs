//! libpcap for sctp-handover: capture filters in libpcap's syntax. Kept out
//! of the core library so that only what needs libpcap links it.

pub mod filter;
pub mod follow;
pub mod interfaces;
pub mod write;
