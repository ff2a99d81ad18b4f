//! sctp-handover: reconstructs SCTP associations, paths and handovers from
//! packet captures.
//!
//! Data flows one way through the modules:
//! [`capture`] (file bytes → frames) → [`decode`] (frames → SCTP packets) →
//! [`wire`] (packets → chunks) → [`track`] (chunks → association/path state
//! and [`events`]) → [`output`] (summaries, JSON).

pub mod analysis;
pub mod capture;
mod compact;
pub mod decode;
pub mod events;
pub mod handover;
pub mod output;
pub mod time;
pub mod track;
pub mod wire;
