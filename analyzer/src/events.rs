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

/// One happening in one association, at the frame that showed it.
#[derive(Debug, Clone, Serialize)]
pub struct Event {
    /// The capture's frame number (1-based, as Wireshark numbers frames).
    pub frame: u64,
    /// The capture time of that frame.
    pub time: Timestamp,
    /// The association it happened in.
    pub association: AssocId,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
}

/// Where events go: a `Vec` collects them, other sinks may stream them.
///
/// `observe` carries the high-volume, per-chunk facts (every packet, DATA
/// chunk and acknowledged TSN) that metrics need but that are not worth
/// storing; sinks that do not compute metrics ignore them.
pub trait EventSink {
    /// Takes one event record.
    fn emit(&mut self, event: Event);
    /// Takes one per-packet or per-chunk fact; ignored unless overridden.
    fn observe(&mut self, _observation: &Observation) {}
}

/// Per-packet and per-chunk facts for metric engines (never stored).
#[derive(Debug, Clone, Copy)]
pub enum Observation {
    /// Any SCTP packet of an association.
    Packet {
        /// The capture's frame number (1-based).
        frame: u64,
        /// The capture time of the frame.
        time: Timestamp,
        /// The association the packet belongs to.
        association: AssocId,
        /// The endpoint that sent the packet.
        sender: EndpointId,
        /// The path (source and destination address pair) it travelled on.
        path: PathId,
        /// Its IP source address.
        src: IpAddr,
        /// Its IP destination address.
        dst: IpAddr,
        /// The packet carries INIT or INIT ACK: its addresses are used in
        /// the handshake (implicitly confirmed, RFC 9260 §5.4).
        handshake: bool,
    },
    /// A DATA or I-DATA chunk.
    Data {
        /// The capture's frame number (1-based).
        frame: u64,
        /// The capture time of the frame.
        time: Timestamp,
        /// The association the chunk belongs to.
        association: AssocId,
        /// The endpoint that sent the chunk.
        sender: EndpointId,
        /// The path the chunk travelled on.
        path: PathId,
        /// The chunk's TSN.
        tsn: u32,
        /// The TSN is beyond every TSN the sender had sent before (a first
        /// transmission); false for a retransmission.
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
        /// The frame of the SACK.
        frame: u64,
        /// The capture time of the SACK.
        time: Timestamp,
        /// The association of the SACK.
        association: AssocId,
        /// The endpoint that sent the DATA (the receiver of the SACK).
        data_sender: EndpointId,
        /// The TSN newly acknowledged.
        tsn: u32,
        /// The frame of the TSN's last transmission before this SACK.
        effective_frame: u64,
        /// The capture time of that transmission (the RTT sample starts there).
        effective_time: Timestamp,
        /// The path of that last transmission.
        path: PathId,
    },
    /// A SACK, with its cumulative TSN ack and the number of duplicate
    /// TSNs it reports.
    Sack {
        /// The frame of the SACK.
        frame: u64,
        /// The capture time of the SACK.
        time: Timestamp,
        /// The association of the SACK.
        association: AssocId,
        /// The endpoint whose DATA the SACK acknowledges.
        data_sender: EndpointId,
        /// The SACK's cumulative TSN ack.
        cumulative_tsn: u32,
        /// The number of duplicate TSNs the SACK reports.
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

/// How an endpoint's address became known to the analysis.
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

/// What the analysis concluded about one ASCONF request (RFC 5061 §5.3),
/// from the ASCONF-ACK's response parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AsconfOutcome {
    /// A Success Indication names the correlation id.
    Success,
    /// No response parameter, and no error before it (RFC 5061 §5.3 A7/A8).
    ImpliedSuccess,
    /// An Error Cause parameter names the correlation id: the request failed.
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

/// Why a sender sent a DATA chunk again, as the analysis infers it from the
/// sender's capture (docs/metrics.md, "DATA: new, retransmitted,
/// acknowledged" and "Inferred path state").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetransmissionReason {
    /// A timeout-class copy: neither fast nor of an acknowledged TSN, and
    /// its previous transmission was captured — the TSN's T3-rtx timer
    /// expired (RFC 9260 §6.3.3), or another retransmission of the same
    /// class that a capture cannot tell from it: Linux's immediate
    /// retransmission after an ASCONF-ACK that moved a single-homed
    /// sender's source address (sctp_transport_immediate_rtx) and after an
    /// ICMP "fragmentation needed" are both SCTP_RTXR_T3_RTX in the kernel
    /// and counted among its T3 retransmissions.
    T3Expiry,
    /// Three or more SACKs had reported it missing (RFC 9260 §7.2.4), as
    /// seen at the capture point: at a router between the sender and the
    /// receiver a SACK the sender never got, or a copy lost before the
    /// router, can make a later timeout copy look fast (docs/points.md).
    FastRetransmit,
    /// Neither can be told: its previous transmission was not captured, or
    /// it had been acknowledged.
    Unknown,
}

crate::names::output_names!(RetransmissionReason, "retransmission reason" {
    T3Expiry => "t3_expiry",
    FastRetransmit => "fast_retransmit",
    Unknown => "unknown",
});

impl EventKind {
    /// Why a [`EventKind::Retransmission`] was sent; None for other events.
    /// The tracker's own rule for a timeout-driven copy (the copies it
    /// charges to a T3 expiry of `previous_path`).
    pub fn retransmission_reason(&self) -> Option<RetransmissionReason> {
        match *self {
            EventKind::Retransmission { fast: true, .. } => {
                Some(RetransmissionReason::FastRetransmit)
            }
            EventKind::Retransmission {
                previous_path: Some(_),
                already_acked: false,
                ..
            } => Some(RetransmissionReason::T3Expiry),
            EventKind::Retransmission { .. } => Some(RetransmissionReason::Unknown),
            _ => None,
        }
    }
}

/// One request parameter of an ASCONF (RFC 5061 §4.2).
#[derive(Debug, Clone, Serialize)]
pub struct AsconfRequestEvent {
    /// What is asked: add, delete or set-primary.
    pub op: AsconfOp,
    /// The request's ASCONF-Request Correlation ID, which its answer quotes.
    pub correlation_id: u32,
    /// The address the request is about; the wildcard is replaced by the
    /// ASCONF's source address (RFC 5061 §4.2.1).
    pub address: IpAddr,
    /// The request named the wildcard address (0.0.0.0 or ::), so `address`
    /// is the packet's source address.
    pub wildcard: bool,
}

/// The outcome of one ASCONF request, read from its ASCONF-ACK.
#[derive(Debug, Clone, Serialize)]
pub struct AsconfResultEvent {
    /// What had been asked: add, delete or set-primary.
    pub op: AsconfOp,
    /// The correlation ID the answer quotes.
    pub correlation_id: u32,
    /// The address the request was about (as in its [`AsconfRequestEvent`]).
    pub address: IpAddr,
    /// Whether the request succeeded.
    pub outcome: AsconfOutcome,
    /// The name of the Error Cause, for a failed request; None otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_cause: Option<&'static str>,
}

/// What happened, with the details of each kind; serialised with an
/// `event` tag holding the snake_case name of the variant.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EventKind {
    /// The association was first seen.
    AssociationStart {
        /// "init", "init_ack" (INIT not captured) or "mid_stream".
        how: &'static str,
    },
    /// The association ended (or was replaced by a new one).
    AssociationEnd {
        /// How it ended (a new INIT between the same endpoints and ports:
        /// superseded, by a restart or port reuse).
        reason: AssociationEndReason,
    },
    /// An endpoint's address became known.
    AddressLearned {
        /// The endpoint that owns the address.
        endpoint: EndpointId,
        /// The address.
        address: IpAddr,
        /// Where it was learned from.
        how: AddressSource,
    },
    /// An ASCONF DELETE-IP removed an endpoint's address (acknowledged).
    AddressDeleted {
        /// The endpoint that owned the address.
        endpoint: EndpointId,
        /// The address deleted.
        address: IpAddr,
    },
    /// A new path (source/destination address pair) carried its first packet.
    PathSeen {
        /// The new path's index in the association.
        path: PathId,
        /// Its source address.
        src: IpAddr,
        /// Its destination address.
        dst: IpAddr,
    },
    /// A HEARTBEAT was sent on a path.
    Heartbeat {
        /// The path probed.
        path: PathId,
        /// The previous HEARTBEAT on this path got no HEARTBEAT ACK.
        previous_unanswered: bool,
    },
    /// A HEARTBEAT ACK arrived.
    HeartbeatAck {
        /// The path the matching HEARTBEAT probed (the RTT belongs to it).
        path: PathId,
        /// The path this HEARTBEAT ACK travelled on.
        reply_path: PathId,
        /// The frame of the matching HEARTBEAT; None when it was not captured.
        request_frame: Option<u64>,
        /// The round-trip time in milliseconds from that HEARTBEAT; None when
        /// it was not captured.
        rtt_ms: Option<f64>,
    },
    /// A path's destination address was confirmed by a HEARTBEAT ACK
    /// (RFC 9260 §5.4).
    PathConfirmed {
        /// The path whose probe was answered.
        path: PathId,
        /// The destination address confirmed.
        address: IpAddr,
    },
    /// An ASCONF chunk (RFC 5061 §4.1.1).
    Asconf {
        /// The path the ASCONF travelled on.
        path: PathId,
        /// The endpoint that sent it.
        sender: EndpointId,
        /// Its serial number.
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
        /// Its requests, in the order of the chunk.
        requests: Vec<AsconfRequestEvent>,
    },
    /// An ASCONF-ACK chunk (RFC 5061 §4.1.2).
    AsconfAck {
        /// The path the ASCONF-ACK travelled on.
        path: PathId,
        /// The serial it answers.
        serial: u32,
        /// Chunk length on the wire, in bytes.
        bytes: usize,
        /// The last transmission of the serial before this answer (its
        /// round trip is measured from it: Karn's rule).
        request_frame: Option<u64>,
        /// The round-trip time in milliseconds from that transmission; None when
        /// it was not captured.
        rtt_ms: Option<f64>,
        /// The serial had been answered before: this answers a copy sent
        /// again; its results took effect with the first answer.
        repeated: bool,
        /// The outcome of each request of the answered ASCONF.
        results: Vec<AsconfResultEvent>,
    },
    /// A SET-PRIMARY from `requester` was acknowledged: the peer now sends
    /// to `address` (RFC 5061 §4.2.4).
    PeerPrimarySet {
        /// The endpoint that sent the SET-PRIMARY.
        requester: EndpointId,
        /// The address the peer now sends to.
        address: IpAddr,
    },
    /// New DATA (TSN beyond all seen) moved to another path.
    DataPathChange {
        /// The endpoint sending the DATA.
        sender: EndpointId,
        /// The path its previous new DATA took; None for its first DATA.
        from_path: Option<PathId>,
        /// The path the new DATA takes now.
        to_path: PathId,
        /// The first TSN sent on the new path.
        tsn: u32,
    },
    /// A DATA chunk whose TSN had been sent before.
    Retransmission {
        /// The endpoint sending the DATA.
        sender: EndpointId,
        /// The path this copy travels on.
        path: PathId,
        /// The TSN sent again.
        tsn: u32,
        /// The frame of the TSN's previous transmission, when captured.
        previous_frame: Option<u64>,
        /// The path of the TSN's previous transmission, when captured.
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
        /// The path that became potentially failed.
        path: PathId,
        /// Its error counter at the transition (T3 expiries and unanswered
        /// HEARTBEATs since it was last cleared).
        error_count: u32,
    },
    /// The path's error count exceeded Path.Max.Retrans (RFC 9260 §8.2): it
    /// is inactive and its sender stops using it.
    PathInactive {
        /// The path that became inactive.
        path: PathId,
        /// Its error counter at the transition.
        error_count: u32,
    },
    /// An acknowledgement cleared a non-zero error counter (RFC 9260
    /// §8.3): `by` is "sack" (DATA last sent on the path newly
    /// acknowledged) or "heartbeat_ack".
    ErrorCounterCleared {
        /// The path whose counter was cleared.
        path: PathId,
        /// The count before it was cleared.
        error_count: u32,
        /// What cleared it: "sack" or "heartbeat_ack".
        by: &'static str,
    },
    /// A T3 expiry of `path` turned out spurious: the receiver reported a
    /// TSN it retransmitted as a duplicate, so the first transmission had
    /// arrived (docs/metrics.md, "Spurious timeouts").
    SpuriousExpiry {
        /// The endpoint that retransmitted.
        sender: EndpointId,
        /// The path whose T3 timer expired.
        path: PathId,
        /// The frame of the expiry's first retransmission.
        expiry_frame: u64,
        /// The TSN reported twice.
        tsn: u32,
    },
    /// A potentially failed or inactive path became active again (its error
    /// counter was cleared by an acknowledgement).
    PathActive {
        /// The path that became active.
        path: PathId,
    },
    /// An ICMP error quoting one of the association's packets.
    IcmpError {
        /// The path of the quoted packet; None when its address pair is no path
        /// of the association.
        path: Option<PathId>,
        /// The address of the router or host that sent the ICMP error.
        reporter: IpAddr,
        /// The ICMP type (of ICMPv4 or ICMPv6, as the quoting packet was).
        icmp_type: u8,
        /// The ICMP code.
        icmp_code: u8,
    },
}

/// How an association ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssociationEndReason {
    /// An ABORT chunk (RFC 9260 §9.1).
    Abort,
    /// A SHUTDOWN COMPLETE chunk (RFC 9260 §9.2).
    ShutdownComplete,
    /// A new INIT between the same endpoints and ports (restart or port
    /// reuse, RFC 9260 §5.2).
    Superseded,
}

crate::names::output_names!(AssociationEndReason, "association end" {
    Abort => "abort",
    ShutdownComplete => "shutdown_complete",
    Superseded => "superseded",
});
