//! sctp-handover: reconstructs SCTP associations, paths and handovers from
//! packet captures.
//!
//! Data flows one way through the modules:
//! [`capture`] (file bytes → frames) → [`decode`] (frames → SCTP packets) →
//! [`wire`] (packets → chunks) → [`track`] (chunks → association/path state
//! and [`events`]) → [`handover`] (events → handover records) →
//! [`analysis`] (the pipeline, handing settled records to a sink) →
//! [`output`] (summaries, JSON). docs/architecture.md draws it.
//!
//! The meaning every output renders is defined here once: the latency
//! components ([`handover::COMPONENTS`]), the names of the output enums
//! (`as_str` / `FromStr`, e.g. [`handover::SwitchClass`]), the frame
//! categories ([`analysis::Accounting::categories`]) and the analysis
//! settings of the front ends ([`settings::Settings`]).

#![warn(missing_docs)]

pub mod analysis;
mod by_id;
pub mod capture;
mod compact;
pub mod decode;
pub mod events;
pub mod handover;
mod names;
pub mod output;
pub mod settings;
pub mod time;
pub mod track;
pub mod wire;

pub use names::UnknownName;

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
/// again unconfirmed. 5: miss indications as Linux counts them (HTNA, fast
/// recovery, one fast retransmission per TSN, SFR-CACC rules 3.1 d/f and
/// 3.2 with DELETE-IP), an ADD-IP alone no longer makes a receiver's
/// switch whose old path fell silent planned; address confirmation (no
/// potentially failed or inactive path to an address never confirmed, no
/// `path_confirmed` for the handshake's addresses), and an inactive path
/// counts no more errors.
/// 6: a failover's expiries count the errors since the last reset past the
/// inactive state inferred from `--pmr` (the observed PMR is the sender's,
/// not capped at `--pmr`).
/// 7: paths and failovers as Linux (issue #28): potentially failed only
/// below Path.Max.Retrans, the DELETE-IP successor from the peer's list of
/// addresses, an address added again a new transport and one added while
/// in use unchanged, the observed PMR from an unanswered HEARTBEAT counted
/// right after the switch, and the receiver-silence rule not applied in
/// the sender's own capture; and the TSN ledger as Linux: stale SACKs
/// (cumulative ack below the one seen) discarded and counted, reneged gap
/// acknowledgements cleared, the SFR-CACC primary the handshake's through
/// a failover, and a T3 expiry's reset of its TSNs' miss indications.
/// 8: DELETE-IP as Linux's sctp_assoc_rm_peer (issue #28): a deleted
/// primary's first transport becomes the active path its TSNs move to, and
/// TSNs move again at every later deletion of their destination; a SACK
/// exactly 2^31 below the cumulative ack seen is stale.
/// 9: a T3 expiry also resets the miss indications of a TSN that SFR-CACC
/// had set aside and a later SACK counted above the last one the miss scan
/// had reached (Linux's sctp_retransmit_mark marks every TSN of the
/// transport); fast retransmissions can differ on such inputs.
pub const RESULTS_REVISION: u32 = 9;
