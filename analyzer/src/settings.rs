//! The analysis settings as plain values (the command line's `analyze`
//! options, the Python bindings' keyword arguments) → the core's
//! [`AnalysisOptions`]: one mapping for every front end, so that the same
//! settings give the same options and the same dataset fingerprint. What
//! each option is called and what it does is defined once too
//! ([`option`], [`OPTIONS`]): the command line's help and the Python
//! package's `ANALYSIS_OPTIONS` render it.

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

/// How an analysis option is named and explained to users, whichever front
/// end shows it: `sctp-handover analyze --help` (clap takes the flag, value
/// name and help from here) and the Python keyword arguments
/// (`sctp_handover.ANALYSIS_OPTIONS`, the cluster runner's `--help`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionDoc {
    /// The Python keyword argument (`rto_min_ms`): the flag without its
    /// dashes, `-` written `_` (a repeated flag's keyword in the plural).
    pub name: &'static str,
    /// The command line's flag (`--rto-min-ms`).
    pub flag: &'static str,
    /// The placeholder of the value in help texts; None: a switch, or the
    /// keyword in capitals (clap's default).
    pub value_name: Option<&'static str>,
    /// What the option does: without a final full stop, as clap shows a
    /// one-sentence doc comment.
    pub help: &'static str,
}

impl OptionDoc {
    /// The flag without its leading `--` (clap's `long`).
    pub fn long(&self) -> &'static str {
        self.flag.trim_start_matches('-')
    }
}

/// Each analysis option's [`OptionDoc`], by the name of its keyword.
pub mod option {
    use super::OptionDoc;

    const fn doc(
        name: &'static str,
        flag: &'static str,
        value_name: Option<&'static str>,
        help: &'static str,
    ) -> OptionDoc {
        OptionDoc {
            name,
            flag,
            value_name,
            help,
        }
    }

    /// The `--verify-checksum` option: its flag, keyword and help text.
    pub const VERIFY_CHECKSUM: OptionDoc = doc(
        "verify_checksum",
        "--verify-checksum",
        None,
        "Check every SCTP packet's CRC32c and count failures",
    );
    /// The `--udp-encap-port` option: its flag, keyword and help text.
    pub const UDP_ENCAP_PORTS: OptionDoc = doc(
        "udp_encap_ports",
        "--udp-encap-port",
        Some("PORT"),
        "Extra UDP port carrying SCTP (RFC 6951); 9899 is always included",
    );
    /// The `--duplicate-window-us` option: its flag, keyword and help text.
    pub const DUPLICATE_WINDOW_US: OptionDoc = doc(
        "duplicate_window_us",
        "--duplicate-window-us",
        Some("MICROSECONDS"),
        "Copies of one packet closer than this are capture duplicates (µs)",
    );
    /// The `--rto-initial-ms` option: its flag, keyword and help text.
    pub const RTO_INITIAL_MS: OptionDoc = doc(
        "rto_initial_ms",
        "--rto-initial-ms",
        None,
        "RTO.Initial for the per-path RTO estimate (ms)",
    );
    /// The `--rto-min-ms` option: its flag, keyword and help text.
    pub const RTO_MIN_MS: OptionDoc = doc(
        "rto_min_ms",
        "--rto-min-ms",
        None,
        "RTO.Min for the per-path RTO estimate (ms)",
    );
    /// The `--rto-max-ms` option: its flag, keyword and help text.
    pub const RTO_MAX_MS: OptionDoc = doc(
        "rto_max_ms",
        "--rto-max-ms",
        None,
        "RTO.Max for the per-path RTO estimate (ms)",
    );
    /// The `--pmr` option: its flag, keyword and help text.
    pub const PMR: OptionDoc = doc(
        "pmr",
        "--pmr",
        None,
        "Path.Max.Retrans used to infer inactive paths",
    );
    /// The `--pf-retrans` option: its flag, keyword and help text.
    pub const PF_RETRANS: OptionDoc = doc(
        "pf_retrans",
        "--pf-retrans",
        Some("N"),
        "The potentially-failed threshold (RFC 7829 PFMR; Linux's net.sctp.pf_retrans) used to \
         infer potentially failed paths",
    );
    /// The `--no-pf` option: its flag, keyword and help text.
    pub const NO_PF: OptionDoc = doc(
        "no_pf",
        "--no-pf",
        None,
        "Infer no potentially failed state (a sender with it off, as Linux with \
         net.sctp.pf_enable = 0)",
    );
    /// The `--events` option: its flag, keyword and help text.
    pub const EVENTS: OptionDoc = doc(
        "events",
        "--events",
        Some("FILE"),
        "Ground-truth events (JSON lines or CSV: time, kind ∈ link_down, link_up, addr_up, \
         addr_down, address, interface), e.g. the harness's events.jsonl; anchors the \
         components packets cannot show. Without it, a harness run's events.jsonl beside a \
         capture is used",
    );
    /// The `--capture-point` option: its flag, keyword and help text.
    pub const CAPTURE_POINT: OptionDoc = doc(
        "capture_point",
        "--capture-point",
        None,
        "Where the capture was taken; recorded with the handover results. Without it, a \
         harness capture named mn.pcap / cn.pcap says",
    );
    /// The `--no-harness-files` option: its flag, keyword and help text.
    pub const NO_HARNESS_FILES: OptionDoc = doc(
        "no_harness_files",
        "--no-harness-files",
        None,
        "Ignore the harness's files beside captures (events.jsonl, the capture side); \
         scenario and parameters are still recorded",
    );
    /// The `--max-associations` option: its flag, keyword and help text.
    pub const MAX_ASSOCIATIONS: OptionDoc = doc(
        "max_associations",
        "--max-associations",
        Some("N"),
        "Associations alive at once; past it, packets of further ones are counted as not \
         tracked and the file reports the limit reached",
    );
    /// The `--max-paths` option: its flag, keyword and help text.
    pub const MAX_PATHS: OptionDoc = doc(
        "max_paths",
        "--max-paths",
        Some("N"),
        "Paths (address pairs) of one association",
    );
    /// The `--max-addresses` option: its flag, keyword and help text.
    pub const MAX_ADDRESSES: OptionDoc = doc(
        "max_addresses",
        "--max-addresses",
        Some("N"),
        "Addresses of one endpoint",
    );
    /// The `--tsn-window` option: its flag, keyword and help text.
    pub const TSN_WINDOW: OptionDoc = doc(
        "tsn_window",
        "--tsn-window",
        Some("N"),
        "Outstanding TSNs remembered per data direction",
    );
    /// The `--max-events` option: its flag, keyword and help text.
    pub const MAX_EVENTS: OptionDoc = doc(
        "max_events",
        "--max-events",
        Some("N"),
        "Events of one association held at once until they are written (a long association \
         writes them in parts of 256)",
    );
    /// The `--filter` option: its flag, keyword and help text.
    pub const FILTER: OptionDoc = doc(
        "filter",
        "--filter",
        Some("EXPR"),
        "Analyse only the frames this capture filter accepts (libpcap syntax, as `tcpdump -r \
         FILE EXPR`); the others are counted as filtered out",
    );
    /// The `--max-reassembly` option: its flag, keyword and help text.
    pub const MAX_REASSEMBLY: OptionDoc = doc(
        "max_reassembly",
        "--max-reassembly",
        Some("N"),
        "Fragmented IP datagrams in reassembly at once",
    );
}

/// Every analysis option, in the order `sctp-handover analyze --help` and
/// `ANALYSIS_OPTIONS` list them: the [`Settings`], the switch that turns the
/// potentially-failed inference off (`--no-pf`), the harness files' switch
/// and the capture filter (both outside [`Settings`]: the front ends apply
/// them).
pub const OPTIONS: [OptionDoc; 19] = [
    option::VERIFY_CHECKSUM,
    option::UDP_ENCAP_PORTS,
    option::DUPLICATE_WINDOW_US,
    option::RTO_INITIAL_MS,
    option::RTO_MIN_MS,
    option::RTO_MAX_MS,
    option::PMR,
    option::PF_RETRANS,
    option::NO_PF,
    option::EVENTS,
    option::CAPTURE_POINT,
    option::NO_HARNESS_FILES,
    option::MAX_ASSOCIATIONS,
    option::MAX_PATHS,
    option::MAX_ADDRESSES,
    option::TSN_WINDOW,
    option::MAX_EVENTS,
    option::FILTER,
    option::MAX_REASSEMBLY,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The keyword is the flag's name (`-` written `_`; the repeated
    /// `--udp-encap-port`'s in the plural), and every help text is one
    /// sentence as clap shows it.
    #[test]
    fn each_keyword_is_its_flags_name_and_each_help_is_clap_shaped() {
        let mut names: Vec<&str> = OPTIONS.iter().map(|o| o.name).collect();
        for o in OPTIONS {
            let keyword = o.long().replace('-', "_");
            assert!(
                o.name == keyword || o.name == format!("{keyword}s"),
                "{}: {}",
                o.flag,
                o.name
            );
            assert!(o.flag.starts_with("--"), "{}", o.flag);
            assert!(
                !o.help.ends_with('.') && !o.help.contains("  "),
                "{}",
                o.flag
            );
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), OPTIONS.len());
        assert_eq!(option::UDP_ENCAP_PORTS.long(), "udp-encap-port");
    }
}
