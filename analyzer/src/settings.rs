//! The analysis settings as plain values (the command line's `analyze`
//! options, the Python bindings' keyword arguments) → the core's
//! [`AnalysisOptions`]: one mapping for every front end, so that the same
//! settings give the same options and the same dataset fingerprint.

use crate::analysis::AnalysisOptions;
use crate::handover::{anchors, CapturePoint};
use crate::time::Nanos;
use crate::track::limits::Limits;
use std::path::PathBuf;

/// Every analysis option but the capture filter (libpcap lives in the
/// `live` crate; the command line adds it).
#[derive(Debug, Clone)]
pub struct Settings {
    /// Check every SCTP packet's CRC32c (`--verify-checksum`).
    pub verify_checksum: bool,
    /// UDP ports carrying SCTP besides 9899 (RFC 6951; `--udp-encap-port`).
    pub udp_encap_ports: Vec<u16>,
    /// Copies of one packet closer than this are capture duplicates (µs).
    pub duplicate_window_us: i64,
    /// RTO.Initial of the per-path RTO estimate (RFC 9260 §6.3.1; ms).
    pub rto_initial_ms: i64,
    /// RTO.Min (ms).
    pub rto_min_ms: i64,
    /// RTO.Max (ms); also caps the terms of the predicted backed-off
    /// failover time.
    pub rto_max_ms: i64,
    /// Path.Max.Retrans used to infer inactive paths (RFC 9260 §8.2).
    pub pmr: u32,
    /// The potentially-failed threshold (RFC 7829); `None`: not inferred.
    pub pf_retrans: Option<u32>,
    /// Ground-truth events anchoring the components packets cannot show
    /// (`--events`).
    pub events: Option<PathBuf>,
    /// Where the capture was taken (`--capture-point`).
    pub capture_point: CapturePoint,
    /// Associations alive at once ([`Limits::associations`]).
    pub max_associations: usize,
    /// Paths of one association ([`Limits::paths`]).
    pub max_paths: usize,
    /// Addresses of one endpoint ([`Limits::addresses`]).
    pub max_addresses: usize,
    /// Outstanding TSNs remembered per data direction
    /// ([`Limits::tsn_window`]).
    pub tsn_window: usize,
    /// Events of one association held at once ([`Limits::events`]).
    pub max_events: usize,
    /// Fragmented IP datagrams in reassembly at once.
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

impl Settings {
    /// The core's options; fails when RTO.Min is above RTO.Max or the
    /// events file cannot be read.
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
