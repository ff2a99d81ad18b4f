//! The analysis settings as plain values (the command line's `analyze`
//! options, the Python bindings' keyword arguments) → the core's
//! [`AnalysisOptions`]: one mapping for every front end, so that the same
//! settings give the same options and the same dataset fingerprint.

use sctp_handover::analysis::AnalysisOptions;
use sctp_handover::handover::{anchors, CapturePoint};
use sctp_handover::time::Nanos;
use sctp_handover::track::limits::Limits;
use std::path::PathBuf;

/// Every analysis option but the capture filter (libpcap lives in the
/// `live` crate; the command line adds it).
#[derive(Debug, Clone)]
pub struct Settings {
    pub verify_checksum: bool,
    pub udp_encap_ports: Vec<u16>,
    pub duplicate_window_us: i64,
    pub rto_initial_ms: i64,
    pub rto_min_ms: i64,
    pub rto_max_ms: i64,
    pub pmr: u32,
    /// The potentially-failed threshold (RFC 7829); `None`: not inferred.
    pub pf_retrans: Option<u32>,
    pub events: Option<PathBuf>,
    pub capture_point: CapturePoint,
    pub max_associations: usize,
    pub max_paths: usize,
    pub max_addresses: usize,
    pub tsn_window: usize,
    pub max_events: usize,
    pub max_reassembly: usize,
}

impl Default for Settings {
    /// The command line's defaults.
    fn default() -> Self {
        let limits = Limits::default();
        Settings {
            verify_checksum: false,
            udp_encap_ports: Vec::new(),
            duplicate_window_us: 1000,
            rto_initial_ms: 1000,
            rto_min_ms: 1000,
            rto_max_ms: 60000,
            pmr: 5,
            pf_retrans: Some(0),
            events: None,
            capture_point: CapturePoint::Unknown,
            max_associations: limits.associations,
            max_paths: limits.paths,
            max_addresses: limits.addresses,
            tsn_window: limits.tsn_window,
            max_events: limits.events,
            max_reassembly: 64,
        }
    }
}

/// `mn`, `cn`, `middle`, `unknown` (the command line's `--capture-point`).
pub fn capture_point(name: &str) -> Option<CapturePoint> {
    Some(match name {
        "mn" => CapturePoint::Mn,
        "cn" => CapturePoint::Cn,
        "middle" => CapturePoint::Middle,
        "unknown" => CapturePoint::Unknown,
        _ => return None,
    })
}

impl Settings {
    /// The core's options; fails only when the events file cannot be read.
    pub fn options(&self) -> anyhow::Result<AnalysisOptions> {
        anyhow::ensure!(
            self.rto_min_ms <= self.rto_max_ms,
            "--rto-min-ms {} is above --rto-max-ms {} (RFC 9260 §6.3.1: RTO.Min ≤ RTO.Max)",
            self.rto_min_ms,
            self.rto_max_ms
        );
        let mut options = AnalysisOptions::default();
        options
            .decode
            .udp_encapsulation_ports
            .extend(&self.udp_encap_ports);
        options.verify_checksum = self.verify_checksum;
        options.duplicate_window = Nanos(self.duplicate_window_us.saturating_mul(1000));
        options.track.rto.initial = Nanos::from_millis(self.rto_initial_ms);
        options.track.rto.min = Nanos::from_millis(self.rto_min_ms);
        options.track.rto.max = Nanos::from_millis(self.rto_max_ms);
        options.track.path_max_retrans = self.pmr;
        options.track.pf_retrans = self.pf_retrans;
        options.track.limits = Limits {
            associations: self.max_associations,
            paths: self.max_paths,
            addresses: self.max_addresses,
            tsn_window: self.tsn_window,
            events: self.max_events,
        };
        options.decode.max_reassembly = self.max_reassembly;
        options.handover.rto_max = Some(options.track.rto.max);
        options.handover.capture_point = self.capture_point;
        if let Some(events) = &self.events {
            options.handover.anchors = anchors::load(events)?;
        }
        Ok(options)
    }
}
