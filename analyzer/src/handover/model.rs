//! The public results: handovers, their latency components and the points
//! they rest on, failover and link availability recognition details.

use crate::events::{AssocId, EndpointId, PathId};
use crate::names::output_names;
use crate::time::{Nanos, Timestamp};
use crate::track::path::PathStatus;
use crate::wire::sctp_param::AsconfOp;
use serde::Serialize;
use std::net::IpAddr;

/// One end of a measured interval: a frame of the capture, or an anchor
/// from the event log (no frame).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Point {
    /// The frame's number in the capture (1-based, as Wireshark numbers
    /// it); `None` for an anchor from the event log.
    pub frame: Option<u64>,
    /// When the frame was captured, or the anchor's time.
    pub time: Timestamp,
    /// What the point is, in words (`"ASCONF ADD-IP"`, `"addr_up event"`).
    pub what: &'static str,
}

impl Point {
    pub(super) fn frame(frame: u64, time: Timestamp, what: &'static str) -> Self {
        Point {
            frame: Some(frame),
            time,
            what,
        }
    }
    pub(super) fn anchor(time: Timestamp, what: &'static str) -> Self {
        Point {
            frame: None,
            time,
            what,
        }
    }
}

/// A latency component: its value with the two points it rests on, or
/// null with the reason it cannot be computed. Never guessed.
#[derive(Debug, Clone, Serialize)]
pub struct Component {
    /// `to` − `from` in milliseconds (signed); `None` when it cannot be
    /// computed (`missing` says why).
    pub ms: Option<f64>,
    /// The same value in nanoseconds, exact (not in the JSON output).
    #[serde(skip)]
    pub nanos: Option<Nanos>,
    /// The point the interval starts at; `None` when missing.
    pub from: Option<Point>,
    /// The point the interval ends at; `None` when missing.
    pub to: Option<Point>,
    /// Why the component cannot be computed; `None` when it has a value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

impl Component {
    pub(super) fn between(from: Point, to: Point) -> Self {
        let d = to.time.since(from.time);
        Component {
            ms: Some(d.as_millis_f64()),
            nanos: Some(d),
            from: Some(from),
            to: Some(to),
            missing: None,
        }
    }
    pub(super) fn missing(reason: impl Into<String>) -> Self {
        Component {
            ms: None,
            nanos: None,
            from: None,
            to: None,
            missing: Some(reason.into()),
        }
    }
    pub(super) fn from_points(
        from: Option<Point>,
        to: Option<Point>,
        reason: impl Into<String>,
    ) -> Self {
        match (from, to) {
            (Some(f), Some(t)) => Component::between(f, t),
            _ => Component::missing(reason),
        }
    }
}

/// What a data path switch was (docs/metrics.md, "Data path switch").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwitchClass {
    /// An ASCONF ADD-IP or SET-PRIMARY for the new path preceded it.
    Planned,
    /// The old path timed out (T3 expiries), or fell silent as a
    /// receiver sees it.
    Failover,
    /// Back to a path that failed, or that carried new DATA before.
    Return,
    /// None of these.
    Other,
}

output_names!(SwitchClass, "switch class" {
    Planned => "planned",
    Failover => "failover",
    Return => "return",
    Other => "other",
});

/// Where the capture was taken (`--capture-point`); recorded with the
/// results because several components depend on it (docs/metrics.md,
/// "Capture point"). A harness capture's file name (`mn.pcap`, `cn.pcap`)
/// is its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CapturePoint {
    /// At the mobile node.
    Mn,
    /// At the correspondent node.
    Cn,
    /// On the way between them.
    Middle,
    /// Not said.
    #[default]
    Unknown,
}

output_names!(CapturePoint, "capture point" {
    Mn => "mn",
    Cn => "cn",
    Middle => "middle",
    Unknown => "unknown",
});

impl CapturePoint {
    /// The capture point a harness capture's file stem names (`mn`, `cn`:
    /// docs/harness.md); `None` for any other name.
    pub fn of_harness_capture(stem: &str) -> Option<CapturePoint> {
        match stem.parse() {
            Ok(p @ (CapturePoint::Mn | CapturePoint::Cn)) => Some(p),
            _ => None,
        }
    }
}

/// One ASCONF request (one serial of one sender) with every transmission
/// of it and its answer (docs/metrics.md, "ASCONF exchanges").
#[derive(Debug, Clone, Serialize)]
pub struct AsconfExchange {
    /// The ASCONF's serial number (RFC 5061 §5.1).
    pub serial: u32,
    /// The endpoint that sent the request.
    pub sender: EndpointId,
    /// The request's parameters (ADD-IP, DELETE-IP, SET-PRIMARY) with the
    /// address each names (the wildcard already replaced by the ASCONF's
    /// source address).
    pub ops: Vec<(AsconfOp, IpAddr)>,
    /// The first transmission.
    pub frame: u64,
    /// The first transmission's time.
    pub time: Timestamp,
    /// Transmissions of the serial (1 when it was never sent again).
    pub transmissions: u32,
    /// The last transmission so far.
    pub last_frame: u64,
    /// The last transmission's time.
    pub last_time: Timestamp,
    /// The latest ASCONF-ACK for the serial: the one after its last
    /// transmission, when captured.
    pub ack_frame: Option<u64>,
    /// That ASCONF-ACK's time; `None` when none was captured.
    pub ack_time: Option<Timestamp>,
    /// The ASCONF RTT in milliseconds, from the last transmission before
    /// the ASCONF-ACK (Karn's rule); `None` without an ASCONF-ACK.
    pub rtt_ms: Option<f64>,
    /// Chunk bytes of every transmission of the ASCONF.
    pub bytes: usize,
    /// Chunk bytes of every ASCONF-ACK answering it.
    pub ack_bytes: usize,
}

/// What ended a handover's window (docs/metrics.md, "Handover window").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WindowEnd {
    /// A SACK's cumulative TSN ack reached the highest TSN sent before the
    /// switch: everything in flight at the switch had arrived.
    CumulativeAck,
    /// The direction switched paths again first.
    NextSwitch,
    /// The capture (or the association) ended first.
    #[default]
    CaptureEnd,
}

output_names!(WindowEnd, "window end" {
    CumulativeAck => "cumulative_ack",
    NextSwitch => "next_switch",
    CaptureEnd => "capture_end",
});

/// The handover window: from the last new DATA on the old path until the
/// receiver's cumulative TSN ack passes the highest TSN sent before the
/// switch (what was in flight when the path changed, retransmissions
/// after the switch included).
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct HandoverWindow {
    /// The highest TSN sent before the switch (the switch TSN − 1).
    pub until_tsn: u32,
    /// The frame that ended the window (the SACK, or the next switch's
    /// DATA); null when the capture ended first.
    pub end: Option<Point>,
    /// What ended the window.
    pub end_reason: WindowEnd,
    /// The direction's DATA retransmissions in the window, on any path.
    pub retransmissions: u64,
    /// Of those, retransmissions of TSNs already acknowledged.
    pub retransmitted_after_ack: u64,
    /// Duplicate TSNs the receiver's SACKs reported in the window (SACK
    /// duplicate-TSN reports).
    pub dup_tsns_reported: u64,
    /// Retransmissions of TSNs last sent on the old path and not
    /// acknowledged: lost in the switch.
    pub lost_in_switch: u64,
}

/// One T3 expiry charged to a path: the burst of timeout-driven
/// retransmissions of DATA last sent on it.
#[derive(Debug, Clone, Serialize)]
pub struct Expiry {
    /// The expiry's first timeout-driven retransmission.
    pub frame: u64,
    /// That retransmission's time.
    pub time: Timestamp,
    /// The TSN that retransmission carries.
    pub first_tsn: u32,
    /// The retransmissions of the TSNs the expiry marked, wherever sent.
    pub retransmissions: u64,
    /// The next DATA sent on the failed path after this expiry, which
    /// restarts its T3 timer (RFC 9260 §6.3.2 R1).
    pub timer_restart: Option<Point>,
    /// The failed path's error counter after this expiry (docs/metrics.md,
    /// "Inferred path state"): its expiries and unanswered HEARTBEATs since
    /// it was last cleared.
    pub error_count: u32,
}

/// A spurious T3 expiry (docs/metrics.md, "Spurious timeouts and counter
/// resets").
#[derive(Debug, Clone, Serialize)]
pub struct SpuriousExpiryRef {
    /// The path the expiry was charged to.
    pub path: PathId,
    /// The expiry's first retransmission.
    pub expiry_frame: u64,
    /// The SACK that showed it spurious.
    pub recognised: Point,
}

/// The failover details of a switch whose old path had T3 expiries during
/// its segment (docs/metrics.md, "Failover").
#[derive(Debug, Clone, Serialize)]
pub struct Failover {
    /// T3 expiries charged to the failed path before the switch.
    pub expiries: Vec<Expiry>,
    /// Original transmission of the first TSN that timed out.
    pub first_unanswered: Option<Point>,
    /// First unanswered transmission → first expiry.
    pub first_expiry_after_ms: Option<f64>,
    /// Intervals between consecutive expiries.
    pub expiry_intervals_ms: Vec<f64>,
    /// From the second expiry on: its time minus the previous expiry's
    /// timer restart — the RTO each T3 run lasted.
    pub implied_rto_ms: Vec<f64>,
    /// Median of `implied_rto_ms` (with a single expiry: the delay from the
    /// first unanswered transmission, which can include an earlier restart).
    pub rto_estimate_ms: Option<f64>,
    /// The error count at the last expiry before the switch (or at the
    /// unanswered HEARTBEAT counted right after it that made the path
    /// fail) minus one: the path goes inactive when its error count
    /// *exceeds* Path.Max.Retrans (RFC 9260 §8.2).
    pub observed_pmr: Option<u32>,
    /// The old path's inferred state at the switch: `potentially_failed`
    /// when the sender moved at the potentially-failed threshold (RFC
    /// 7829; Linux's default), `inactive` past Path.Max.Retrans.
    pub old_path_state: PathStatus,
    /// At `potentially_failed`: the error count at the last expiry minus
    /// one, the PFMR the sender used (`observed_pmr` is then null).
    pub observed_pf_retrans: Option<u32>,
    /// Acknowledgements that cleared the old path's error counter between
    /// its first expiry and the switch: each makes the count start again,
    /// so the failover takes more expiries than Path.Max.Retrans + 1.
    pub counter_resets: Vec<Point>,
    /// T3 expiries of this association later shown spurious (a TSN they
    /// retransmitted reported received twice) before the switch.
    pub spurious_expiries: Vec<SpuriousExpiryRef>,
    /// Failure start (link_down event, else first unanswered transmission)
    /// → first DATA, new or retransmitted, on the alternate path.
    pub detection: Component,
    /// Failure start → first new DATA on the alternate path (the switch).
    pub failover_time: Component,
    /// The failover time predicted with the RTO doubled at each expiry,
    /// from the observed PMR and RTO estimate: Σ_{i<PMR} RTO·2^i, each
    /// term capped at RTO.Max (docs/metrics.md, Failover).
    pub predicted_backoff_ms: Option<f64>,
    /// The failover time predicted with a fixed RTO (RTO.Min = RTO.Max):
    /// PMR·RTO (docs/metrics.md, Failover).
    pub predicted_fixed_rto_ms: Option<f64>,
}

/// Link availability recognition of a `return` switch (docs/metrics.md,
/// "Link availability recognition", after Bokor).
#[derive(Debug, Clone, Serialize)]
pub struct Recognition {
    /// The `link_up` event (the latest before the switch, after the path
    /// was abandoned) → the first HEARTBEAT on the path after it.
    pub link_up_to_heartbeat: Component,
    /// That HEARTBEAT → the first DATA on the path; given without
    /// `--events` too.
    pub heartbeat_to_data: Component,
    /// The `link_up` event → the first DATA on the path.
    pub link_up_to_data: Component,
}

/// How a failover seen by the receiver's capture starts its class reason.
pub const RECEIVER_FAILOVER: &str = "seen by the receiver";

/// The old path's silence before a switch, against its DATA pace: a
/// failover as the receiver's capture shows it (docs/metrics.md, "Data
/// path switch").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReceiverSilence {
    /// From the old path's last DATA to the new path's first.
    pub silence: Nanos,
    /// The old path's mean DATA interval in its segment.
    pub interval: Nanos,
    /// The DATA chunks that interval is the mean over.
    pub data: u32,
}

impl ReceiverSilence {
    /// "seen by the receiver: the old path fell silent for 450.168 ms,
    /// 4.5x its mean DATA interval" (the start of the switch's
    /// `class_reason`).
    pub fn summary(&self) -> String {
        format!(
            "{}: the old path fell silent for {:.3} ms, {:.1}x its mean DATA interval",
            RECEIVER_FAILOVER,
            self.silence.as_millis_f64(),
            self.silence.as_millis_f64() / self.interval.as_millis_f64(),
        )
    }
}

/// One data path switch of one direction with its latency components
/// (docs/metrics.md, "Handover latency components"), handed to the
/// outputs once its window has ended.
#[derive(Debug, Clone, Serialize)]
pub struct Handover {
    /// The association the switch belongs to.
    pub association: AssocId,
    /// The data sender of the direction that switched.
    pub sender: EndpointId,
    /// The old path: the one that carried the previous new DATA.
    pub from_path: PathId,
    /// The new path: the one the switch frame's new DATA travels on.
    pub to_path: PathId,
    /// The old path's source address.
    pub from_src: IpAddr,
    /// The old path's destination address.
    pub from_dst: IpAddr,
    /// The new path's source address.
    pub to_src: IpAddr,
    /// The new path's destination address.
    pub to_dst: IpAddr,
    /// What the switch was (docs/metrics.md, "Data path switch").
    pub class: SwitchClass,
    /// Why the switch got its class, in words (what it rests on).
    pub class_reason: String,
    /// For a failover seen by the receiver (no T3 expiry in the capture):
    /// the old path's silence that makes it one (the Wireshark plugin's
    /// expert info words it; not in the JSON output, `class_reason` says it).
    #[serde(skip)]
    pub receiver_silence: Option<ReceiverSilence>,
    /// The switch frame: the first new DATA on the new path.
    pub switch_frame: u64,
    /// The switch frame's time.
    pub switch_time: Timestamp,
    /// The switch frame's TSN: the first new DATA on the new path.
    pub switch_tsn: u32,
    /// Data interrupt (Koh & Kim's handover latency, Bokor's DATA
    /// transmission interrupt): the last DATA, new or retransmitted, on
    /// the old path before the switch → the first DATA on the new path
    /// since new DATA began on the old one; negative when the paths
    /// overlapped.
    pub data_interrupt: Component,
    /// New-data gap: last new DATA on the old path → the switch frame.
    pub new_data_gap: Component,
    /// The first TSN the receiver got only after the interruption (L+1).
    pub sequence_gap_tsn: u32,
    /// Total handover latency (Honda, receiver-side sequence
    /// discontinuity): the effective transmission of L+1 minus that of L;
    /// null until L, L+1 and the switch TSN are all acknowledged.
    pub total_handover_latency: Component,
    /// Network-layer disconnection: the `link_down` (or old address's
    /// `addr_down`) event, else the mobile endpoint's last packet from its
    /// old address → the `addr_up` event for the new address, else its
    /// first packet from the new one.
    pub network_disconnection: Component,
    /// Transport-layer latency: total handover latency − network-layer
    /// disconnection.
    pub transport_latency: Component,
    /// Transmissions of the ADD-IP request `addip_sent` is timed from
    /// (from its first); null without one.
    pub addip_transmissions: Option<u32>,
    /// ADDIP sent time: the `addr_up` event for the new address → the
    /// first transmission of the ASCONF carrying ADD-IP for it; null
    /// without an `addr_up` event (not inferred).
    pub addip_sent: Component,
    /// Transmissions of the SET-PRIMARY request `setprim_sent` is timed
    /// from (from its first); null without one.
    pub setprim_transmissions: Option<u32>,
    /// SETPRIM sent time: the ASCONF-ACK that acknowledged the ADD-IP →
    /// the first transmission of the ASCONF carrying SET-PRIMARY for the
    /// new address.
    pub setprim_sent: Component,
    /// Sender sequence recovery time: the ASCONF-ACK for the ADD-IP (a
    /// mobile data sender) or the SET-PRIMARY ASCONF (otherwise) → the
    /// switch frame.
    pub sender_recovery: Component,
    /// Path confirmation time: the last answered HEARTBEAT on the new
    /// path before the switch → its HEARTBEAT ACK.
    pub path_confirmation: Component,
    /// The ASCONF exchanges of the segment the switch ends about the
    /// mobile endpoint's old or new address, one per serial.
    pub asconf: Vec<AsconfExchange>,
    /// DAR overhead: the chunk bytes of those ASCONFs and ASCONF-ACKs,
    /// every transmission and every answer.
    pub dar_overhead_bytes: usize,
    /// The handover window and what it counts.
    pub window: HandoverWindow,
    /// The failover details when the old path had T3 expiries in its
    /// segment; `None` otherwise.
    pub failover: Option<Failover>,
    /// Link availability recognition, for a `return` switch only.
    pub recognition: Option<Recognition>,
}
