//! The analysis settings, defined in the analyzer
//! ([`sctp_handover::settings`]) and re-exported here for the front ends
//! that took them from the tables crate.

use sctp_handover::handover::CapturePoint;
pub use sctp_handover::settings::Settings;

/// `mn`, `cn`, `middle`, `unknown` (the command line's `--capture-point`):
/// [`CapturePoint`]'s names.
pub fn capture_point(name: &str) -> Option<CapturePoint> {
    name.parse().ok()
}
