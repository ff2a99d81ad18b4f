//! Tidy event records: what the tracker saw, one record per happening,
//! each carrying the frame number and absolute time so a user can jump to
//! it in Wireshark. Metrics and outputs consume these; nothing flows back.

use crate::time::Timestamp;
use crate::wire::sctp_param::AsconfOp;
use serde::Serialize;
use std::net::IpAddr;

/// Index of an association within one capture file (0-based).
pub type AssocId = u32;
/// Index of a path within its association (0-based).
pub type PathId = u16;
/// Index of an endpoint within its association: 0 is the INIT sender (or,
/// mid-stream, the sender of the first packet seen), 1 the other.
pub type EndpointId = usize;

#[derive(Debug, Clone, Serialize)]
pub struct Event {
    pub frame: u64,
    pub time: Timestamp,
    pub association: AssocId,
    #[serde(flatten)]
    pub kind: EventKind,
}

/// Where events go: a `Vec` collects them, other sinks may stream them.
///
/// `observe` carries the high-volume, per-chunk facts (every packet, DATA
/// chunk and acknowledged TSN) that metrics need but that are not worth
/// storing; sinks that do not compute metrics ignore them.
pub trait EventSink {
    fn emit(&mut self, event: Event);
    fn observe(&mut self, _observation: &Observation) {}
}

/// Per-packet and per-chunk facts for metric engines (never stored).
#[derive(Debug, Clone, Copy)]
pub enum Observation {
    /// Any SCTP packet of an association.
    Packet {
        frame: u64,
        time: Timestamp,
        association: AssocId,
        sender: EndpointId,
        path: PathId,
        src: IpAddr,
        dst: IpAddr,
        /// The packet carries INIT or INIT ACK: its addresses are used in
        /// the handshake (implicitly confirmed, RFC 9260 §5.4).
        handshake: bool,
    },
    /// A DATA or I-DATA chunk.
    Data {
        frame: u64,
        time: Timestamp,
        association: AssocId,
        sender: EndpointId,
        path: PathId,
        tsn: u32,
        new: bool,
        /// For retransmissions: the TSN had been acknowledged before.
        already_acked: bool,
        /// For retransmissions: the path the TSN was last sent on, if seen.
        previous_path: Option<PathId>,
        /// For retransmissions: a timeout-driven copy (neither fast nor of
        /// an acknowledged TSN) of DATA last sent on `previous_path`.
        timeout_of: Option<PathId>,
        /// For timeout-driven copies: the first retransmission of a new T3
        /// expiry of `timeout_of` (the path had none since the TSN was last
        /// sent), not a later one of an expiry already seen.
        new_expiry: bool,
        /// For timeout-driven copies: the error counter of `timeout_of`
        /// after this copy (its T3 expiries and unanswered HEARTBEATs since
        /// it was last cleared; docs/metrics.md, "Inferred path state").
        error_count: Option<u32>,
    },
    /// A TSN newly covered by a SACK (cumulatively or by a gap block).
    /// Its effective transmission is its last transmission before now.
    Acked {
        frame: u64,
        time: Timestamp,
        association: AssocId,
        data_sender: EndpointId,
        tsn: u32,
        effective_frame: u64,
        effective_time: Timestamp,
        path: PathId,
    },
    /// A SACK, with its cumulative TSN ack and the number of duplicate
    /// TSNs it reports.
    Sack {
        frame: u64,
        time: Timestamp,
        association: AssocId,
        data_sender: EndpointId,
        cumulative_tsn: u32,
        dup_tsns: u16,
    },
}

impl EventSink for Vec<Event> {
    fn emit(&mut self, event: Event) {
        self.push(event);
    }
}

/// A sink that drops everything (for callers that only want the state).
pub struct Discard;

impl EventSink for Discard {
    fn emit(&mut self, _: Event) {}
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AddressSource {
    /// An address parameter of INIT / INIT ACK (RFC 9260 §3.3.2.1).
    Init,
    /// Seen as a source or destination address of the association's packets.
    Observed,
    /// Added by an ASCONF ADD-IP acknowledged as successful (RFC 5061).
    Asconf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AsconfOutcome {
    /// A Success Indication names the correlation id.
    Success,
    /// No response parameter, and no error before it (RFC 5061 §5.3 A7/A8).
    ImpliedSuccess,
    Error,
    /// After a failed request and without a Success Indication: RFC 5061
    /// §5.3 says such requests were not processed.
    NotProcessed,
}

crate::names::output_names!(AsconfOutcome, "ASCONF outcome" {
    Success => "success",
    ImpliedSuccess => "implied_success",
    Error => "error",
    NotProcessed => "not_processed",
});

#[derive(Debug, Clone, Serialize)]
pub struct AsconfRequestEvent {
    pub op: AsconfOp,
    pub correlation_id: u32,
    /// The address the request is about; the wildcard is replaced by the
    /// ASCONF's source address (RFC 5061 §4.2.1).
    pub address: IpAddr,
    pub wildcard: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct AsconfResultEvent {
    pub op: AsconfOp,
    pub correlation_id: u32,
    pub address: IpAddr,
    pub outcome: AsconfOutcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_cause: Option<&'static str>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EventKind {
    AssociationStart {
        /// "init", "init_ack" (INIT not captured) or "mid_stream".
        how: &'static str,
    },
    AssociationEnd {
        /// "abort", "shutdown_complete" or "superseded" (a new INIT between
        /// the same endpoints and ports: restart or port reuse).
        reason: &'static str,
    },
    AddressLearned {
        endpoint: EndpointId,
        address: IpAddr,
        how: AddressSource,
    },
    AddressDeleted {
        endpoint: EndpointId,
        address: IpAddr,
    },
    PathSeen {
        path: PathId,
        src: IpAddr,
        dst: IpAddr,
    },
    Heartbeat {
        path: PathId,
        /// The previous HEARTBEAT on this path got no HEARTBEAT ACK.
        previous_unanswered: bool,
    },
    HeartbeatAck {
        /// The path the matching HEARTBEAT probed (the RTT belongs to it).
        path: PathId,
        /// The path this HEARTBEAT ACK travelled on.
        reply_path: PathId,
        request_frame: Option<u64>,
        rtt_ms: Option<f64>,
    },
    PathConfirmed {
        path: PathId,
        address: IpAddr,
    },
    Asconf {
        path: PathId,
        sender: EndpointId,
        serial: u32,
        /// The sender had sent this serial before (RFC 5061 §5.1: an
        /// ASCONF sent again keeps its serial), answered or not.
        retransmission: bool,
        /// Which transmission of the serial this is (1 for the first).
        transmission: u32,
        /// The frame of the serial's first transmission, when captured.
        first_frame: Option<u64>,
        /// Chunk length on the wire (for the DAR byte overhead).
        bytes: usize,
        requests: Vec<AsconfRequestEvent>,
    },
    AsconfAck {
        path: PathId,
        serial: u32,
        bytes: usize,
        /// The last transmission of the serial before this answer (its
        /// round trip is measured from it: Karn's rule).
        request_frame: Option<u64>,
        rtt_ms: Option<f64>,
        /// The serial had been answered before: this answers a copy sent
        /// again; its results took effect with the first answer.
        repeated: bool,
        results: Vec<AsconfResultEvent>,
    },
    /// A SET-PRIMARY from `requester` was acknowledged: the peer now sends
    /// to `address` (RFC 5061 §4.2.4).
    PeerPrimarySet {
        requester: EndpointId,
        address: IpAddr,
    },
    /// New DATA (TSN beyond all seen) moved to another path.
    DataPathChange {
        sender: EndpointId,
        from_path: Option<PathId>,
        to_path: PathId,
        tsn: u32,
    },
    Retransmission {
        sender: EndpointId,
        path: PathId,
        tsn: u32,
        previous_frame: Option<u64>,
        previous_path: Option<PathId>,
        /// Acknowledged (cumulatively or by a gap block) before this copy.
        already_acked: bool,
        /// Three or more SACKs had reported it missing: fast retransmit.
        fast: bool,
        /// A timeout-driven copy that starts a new T3 expiry of
        /// `previous_path` (docs/metrics.md, "Inferred path state").
        t3_expiry: bool,
    },
    /// The path's error count exceeded the potentially-failed threshold
    /// (RFC 7829 §4): its sender moves new DATA to another active path.
    PathPotentiallyFailed {
        path: PathId,
        error_count: u32,
    },
    PathInactive {
        path: PathId,
        error_count: u32,
    },
    /// An acknowledgement cleared a non-zero error counter (RFC 9260
    /// §8.3): `by` is "sack" (DATA last sent on the path newly
    /// acknowledged) or "heartbeat_ack".
    ErrorCounterCleared {
        path: PathId,
        /// The count before it was cleared.
        error_count: u32,
        by: &'static str,
    },
    /// A T3 expiry of `path` turned out spurious: the receiver reported a
    /// TSN it retransmitted as a duplicate, so the first transmission had
    /// arrived (docs/metrics.md, "Spurious timeouts").
    SpuriousExpiry {
        sender: EndpointId,
        path: PathId,
        /// The frame of the expiry's first retransmission.
        expiry_frame: u64,
        /// The TSN reported twice.
        tsn: u32,
    },
    PathActive {
        path: PathId,
    },
    IcmpError {
        path: Option<PathId>,
        reporter: IpAddr,
        icmp_type: u8,
        icmp_code: u8,
    },
}
