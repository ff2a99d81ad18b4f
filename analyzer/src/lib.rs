//! sctp-handover: reconstructs SCTP associations, paths and handovers from
//! packet captures.
//!
//! Data flows one way through the modules:
//! [`capture`] (file bytes → frames) → [`decode`] (frames → SCTP packets) →
//! [`wire`] (packets → chunks) → [`track`] (chunks → association/path state
//! and [`events`]) → [`output`] (summaries, JSON).

pub mod analysis;
mod by_id;
pub mod capture;
mod compact;
pub mod decode;
pub mod events;
pub mod handover;
pub mod output;
pub mod time;
pub mod track;
pub mod wire;

/// Raised whenever a change alters what the analysis reports for the same
/// input (a value, a class, a column): `analyze --out` reuses an input's
/// finished parts only when they were written by the same revision, so a
/// dataset is never a mix of old and new results. 2: receiver-side
/// failover, `class_reason`, handovers list their own segment's ASCONFs.
/// 3: ASCONFs sent again are retransmissions whether or not answered (one
/// exchange per serial), the handover window runs to the cumulative ack,
/// failover before an ADD-IP-only "planned", `return` to a failed path.
/// 4: a fast retransmission as Linux's SFR-CACC allows after SET-PRIMARY,
/// an IP length past the frame analysed as truncated, an address added
/// again unconfirmed.
pub const RESULTS_REVISION: u32 = 4;
