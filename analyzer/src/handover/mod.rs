//! Handover and failover analysis: detects every data path switch and
//! computes its latency components (docs/metrics.md, "Handover latency
//! components"). Consumes the tracker's events and observations as they
//! stream by; keeps bounded state per association and direction.

pub mod anchors;

use crate::events::{AssocId, EndpointId, Event, EventKind, EventSink, Observation, PathId};
use crate::time::{Nanos, Timestamp};
use crate::wire::sctp_param::AsconfOp;
use anchors::{Anchor, AnchorKind};
use serde::Serialize;
use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;

/// TSNs whose transmission/acknowledgement times are remembered per
/// direction for the total handover latency.
const TSN_HISTORY: usize = 1 << 16;
/// T3 expiries remembered per direction for the failover series.
const EXPIRY_HISTORY: usize = 256;

/// Where the capture was taken (`--capture-point`); recorded with the
/// results because several components depend on it (docs/metrics.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum CapturePoint {
    Mn,
    Cn,
    Middle,
    #[default]
    Unknown,
}

#[derive(Debug, Clone, Default)]
pub struct HandoverConfig {
    pub capture_point: CapturePoint,
    pub anchors: Vec<Anchor>,
    /// RTO.Max for the predicted failover time of eq. (3).
    pub rto_max: Option<Nanos>,
    /// Timeout-driven retransmissions closer together than this belong to
    /// one T3 expiry (a kernel sends an expiry's retransmissions as a burst
    /// over a tick or two). Keep it below RTO.Min.
    pub expiry_burst: Nanos,
}

impl HandoverConfig {
    pub fn new() -> Self {
        HandoverConfig {
            expiry_burst: Nanos::from_millis(100),
            ..Default::default()
        }
    }
}

/// One end of a measured interval: a frame of the capture, or an anchor
/// from the event log (no frame).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Point {
    pub frame: Option<u64>,
    pub time: Timestamp,
    pub what: &'static str,
}

impl Point {
    fn frame(frame: u64, time: Timestamp, what: &'static str) -> Self {
        Point {
            frame: Some(frame),
            time,
            what,
        }
    }
    fn anchor(time: Timestamp, what: &'static str) -> Self {
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
    pub ms: Option<f64>,
    #[serde(skip)]
    pub nanos: Option<Nanos>,
    pub from: Option<Point>,
    pub to: Option<Point>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

impl Component {
    fn between(from: Point, to: Point) -> Self {
        let d = to.time.since(from.time);
        Component {
            ms: Some(d.as_millis_f64()),
            nanos: Some(d),
            from: Some(from),
            to: Some(to),
            missing: None,
        }
    }
    fn missing(reason: impl Into<String>) -> Self {
        Component {
            ms: None,
            nanos: None,
            from: None,
            to: None,
            missing: Some(reason.into()),
        }
    }
    fn from_points(from: Option<Point>, to: Option<Point>, reason: impl Into<String>) -> Self {
        match (from, to) {
            (Some(f), Some(t)) => Component::between(f, t),
            _ => Component::missing(reason),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SwitchClass {
    Planned,
    Failover,
    Return,
    Other,
}

#[derive(Debug, Clone, Serialize)]
pub struct AsconfExchange {
    pub serial: u32,
    pub sender: EndpointId,
    pub ops: Vec<(AsconfOp, IpAddr)>,
    pub frame: u64,
    pub time: Timestamp,
    pub ack_frame: Option<u64>,
    pub ack_time: Option<Timestamp>,
    pub rtt_ms: Option<f64>,
    pub bytes: usize,
    pub ack_bytes: usize,
}

#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct HandoverWindow {
    pub retransmissions: u64,
    pub retransmitted_after_ack: u64,
    pub dup_tsns_reported: u64,
    /// Retransmissions of TSNs last sent on the old path and not
    /// acknowledged: lost in the switch.
    pub lost_in_switch: u64,
}

/// One T3 expiry charged to a path: the burst of timeout-driven
/// retransmissions of DATA last sent on it.
#[derive(Debug, Clone, Serialize)]
pub struct Expiry {
    pub frame: u64,
    pub time: Timestamp,
    pub first_tsn: u32,
    pub retransmissions: u64,
    /// The next DATA sent on the failed path after this expiry, which
    /// restarts its T3 timer (RFC 9260 §6.3.2 R1).
    pub timer_restart: Option<Point>,
    #[serde(skip)]
    last_time: Timestamp,
}

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
    /// Expiries before the switch minus one: the path goes inactive when
    /// its error count *exceeds* Path.Max.Retrans (RFC 9260 §8.2).
    pub observed_pmr: Option<u32>,
    /// Failure start (link_down event, else first unanswered transmission)
    /// → first DATA, new or retransmitted, on the alternate path.
    pub detection: Component,
    /// Failure start → first new DATA on the alternate path (the switch).
    pub failover_time: Component,
    /// Bokor eq. (3) with the observed PMR and RTO estimate:
    /// Σ_{i<PMR} RTO·2^i, each term capped at RTO.Max.
    pub predicted_eq3_ms: Option<f64>,
    /// Bokor eq. (4): PMR·RTO (RTO.Min = RTO.Max).
    pub predicted_eq4_ms: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Recognition {
    pub link_up_to_heartbeat: Component,
    pub heartbeat_to_data: Component,
    pub link_up_to_data: Component,
}

#[derive(Debug, Clone, Serialize)]
pub struct Handover {
    pub association: AssocId,
    pub sender: EndpointId,
    pub from_path: PathId,
    pub to_path: PathId,
    pub from_src: IpAddr,
    pub from_dst: IpAddr,
    pub to_src: IpAddr,
    pub to_dst: IpAddr,
    pub class: SwitchClass,
    pub switch_frame: u64,
    pub switch_time: Timestamp,
    pub switch_tsn: u32,
    pub data_interrupt: Component,
    pub new_data_gap: Component,
    /// The first TSN the receiver got only after the interruption (L+1).
    pub sequence_gap_tsn: u32,
    pub total_handover_latency: Component,
    pub network_disconnection: Component,
    pub transport_latency: Component,
    pub addip_sent: Component,
    pub setprim_sent: Component,
    pub sender_recovery: Component,
    pub path_confirmation: Component,
    pub asconf: Vec<AsconfExchange>,
    pub dar_overhead_bytes: usize,
    pub window: HandoverWindow,
    pub failover: Option<Failover>,
    pub recognition: Option<Recognition>,
}

#[derive(Debug, Clone, Copy)]
struct Mark {
    frame: u64,
    time: Timestamp,
}

impl Mark {
    fn point(self, what: &'static str) -> Point {
        Point::frame(self.frame, self.time, what)
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Counters {
    retransmissions: u64,
    after_ack: u64,
    dup_tsns: u64,
    lost: u64,
}

#[derive(Debug, Default, Clone)]
struct PathData {
    last_data: Option<Mark>,
    last_new: Option<Mark>,
    /// First DATA on this path since the current segment began.
    first_in_segment: Option<Mark>,
}

#[derive(Debug, Clone, Copy)]
struct TsnInfo {
    first: Mark,
    effective: Option<Mark>,
}

#[derive(Debug)]
struct Pending {
    index: usize,
    switch_tsn: u32,
    segment_first_tsn: u32,
    lowest_retransmitted: Option<u32>,
}

#[derive(Debug, Default)]
struct Direction {
    paths: Vec<PathData>,
    current: Option<PathId>,
    abandoned: Vec<PathId>,
    segment_first_tsn: Option<u32>,
    segment_lowest_retransmitted: Option<u32>,
    counters: Counters,
    /// Counters as they were at the last new DATA on the current path.
    at_last_new: Counters,
    tsn_base: u32,
    tsns: VecDeque<Option<TsnInfo>>,
    expiries: VecDeque<(PathId, Expiry)>,
    pending: Vec<Pending>,
}

impl Direction {
    fn path(&mut self, p: PathId) -> &mut PathData {
        let i = usize::from(p);
        if self.paths.len() <= i {
            self.paths.resize(i + 1, PathData::default());
        }
        &mut self.paths[i]
    }

    fn tsn(&self, tsn: u32) -> Option<&TsnInfo> {
        let i = tsn.wrapping_sub(self.tsn_base) as usize;
        self.tsns.get(i).and_then(|t| t.as_ref())
    }

    fn tsn_mut(&mut self, tsn: u32) -> Option<&mut TsnInfo> {
        let i = tsn.wrapping_sub(self.tsn_base) as usize;
        self.tsns.get_mut(i).and_then(|t| t.as_mut())
    }

    fn record_new(&mut self, tsn: u32, info: TsnInfo) {
        if self.tsns.is_empty() {
            self.tsn_base = tsn;
        }
        let end = self.tsn_base.wrapping_add(self.tsns.len() as u32);
        let skip = tsn.wrapping_sub(end) as usize;
        if skip >= TSN_HISTORY {
            self.tsns.clear();
            self.tsn_base = tsn;
        } else {
            self.tsns.extend(std::iter::repeat_n(None, skip));
        }
        self.tsns.push_back(Some(info));
        while self.tsns.len() > TSN_HISTORY {
            self.tsns.pop_front();
            self.tsn_base = self.tsn_base.wrapping_add(1);
        }
    }
}

#[derive(Debug, Clone)]
struct HeartbeatRecord {
    path: PathId,
    frame: u64,
    time: Timestamp,
    ack: Option<Mark>,
}

#[derive(Debug, Default)]
struct Association {
    paths: Vec<(IpAddr, IpAddr)>,
    directions: [Direction; 2],
    asconfs: Vec<AsconfExchange>,
    heartbeats: Vec<HeartbeatRecord>,
    /// (endpoint, source address) → first packet, and the last packet the
    /// endpoint sent from any other address before it.
    address_debut: HashMap<(EndpointId, IpAddr), (Mark, Option<Mark>)>,
    last_packet_from: HashMap<(EndpointId, IpAddr), Mark>,
    /// The endpoint whose address set changes by ASCONF.
    mobile: Option<EndpointId>,
}

/// Transport-layer latency = total handover latency − network-layer
/// disconnection, once both are known (the latter is fixed at the switch).
fn transport_latency(h: &Handover) -> Component {
    match (
        h.total_handover_latency.nanos,
        h.network_disconnection.nanos,
    ) {
        (Some(total), Some(net)) => {
            let d = Nanos(total.0 - net.0);
            Component {
                ms: Some(d.as_millis_f64()),
                nanos: Some(d),
                from: None,
                to: None,
                missing: None,
            }
        }
        _ => h.transport_latency.clone(),
    }
}

/// Streams events through, computing handovers; keeps the events the JSON
/// document lists.
pub struct HandoverEngine {
    config: HandoverConfig,
    associations: Vec<Association>,
    pub events: Vec<Event>,
    pub handovers: Vec<Handover>,
}

impl HandoverEngine {
    pub fn new(config: HandoverConfig) -> Self {
        HandoverEngine {
            config,
            associations: Vec::new(),
            events: Vec::new(),
            handovers: Vec::new(),
        }
    }

    fn assoc(&mut self, id: AssocId) -> &mut Association {
        let i = id as usize;
        if self.associations.len() <= i {
            self.associations.resize_with(i + 1, Association::default);
        }
        &mut self.associations[i]
    }

    /// Finishes: the events to keep and the handovers. A switch whose
    /// sequence gap was never acknowledged keeps the reason it started with.
    pub fn finish(self) -> (Vec<Event>, Vec<Handover>) {
        (self.events, self.handovers)
    }

    fn on_event(&mut self, e: &Event) {
        let id = e.association;
        match &e.kind {
            EventKind::PathSeen { path, src, dst } => {
                let a = self.assoc(id);
                let i = usize::from(*path);
                if a.paths.len() <= i {
                    a.paths.resize(i + 1, (*src, *dst));
                }
                a.paths[i] = (*src, *dst);
            }
            EventKind::Asconf {
                serial,
                sender,
                requests,
                bytes,
                ..
            } => {
                let a = self.assoc(id);
                if a.mobile.is_none()
                    && requests
                        .iter()
                        .any(|r| matches!(r.op, AsconfOp::AddIp | AsconfOp::DeleteIp))
                {
                    a.mobile = Some(*sender);
                }
                a.asconfs.push(AsconfExchange {
                    serial: *serial,
                    sender: *sender,
                    ops: requests.iter().map(|r| (r.op, r.address)).collect(),
                    frame: e.frame,
                    time: e.time,
                    ack_frame: None,
                    ack_time: None,
                    rtt_ms: None,
                    bytes: *bytes,
                    ack_bytes: 0,
                });
            }
            EventKind::AsconfAck {
                serial,
                request_frame: Some(req),
                rtt_ms,
                bytes,
                ..
            } => {
                let a = self.assoc(id);
                if let Some(x) = a
                    .asconfs
                    .iter_mut()
                    .rev()
                    .find(|x| x.serial == *serial && x.frame == *req)
                {
                    x.ack_frame = Some(e.frame);
                    x.ack_time = Some(e.time);
                    x.rtt_ms = *rtt_ms;
                    x.ack_bytes = *bytes;
                }
            }
            EventKind::Heartbeat { path, .. } => {
                let a = self.assoc(id);
                a.heartbeats.push(HeartbeatRecord {
                    path: *path,
                    frame: e.frame,
                    time: e.time,
                    ack: None,
                });
            }
            EventKind::HeartbeatAck {
                path,
                request_frame: Some(req),
                ..
            } => {
                let a = self.assoc(id);
                if let Some(h) = a
                    .heartbeats
                    .iter_mut()
                    .rev()
                    .find(|h| h.frame == *req && h.path == *path)
                {
                    h.ack = Some(Mark {
                        frame: e.frame,
                        time: e.time,
                    });
                }
            }
            EventKind::DataPathChange {
                sender,
                from_path,
                to_path,
                tsn,
            } => self.on_switch(e, *sender, *from_path, *to_path, *tsn),
            _ => {}
        }
    }

    fn on_observation(&mut self, o: &Observation) {
        match *o {
            Observation::Packet {
                frame,
                time,
                association,
                sender,
                src,
                ..
            } => {
                let a = self.assoc(association);
                let mark = Mark { frame, time };
                if !a.address_debut.contains_key(&(sender, src)) {
                    let before = a
                        .last_packet_from
                        .iter()
                        .filter(|((e, addr), _)| *e == sender && *addr != src)
                        .map(|(_, m)| *m)
                        .max_by_key(|m| m.frame);
                    a.address_debut.insert((sender, src), (mark, before));
                }
                a.last_packet_from.insert((sender, src), mark);
            }
            Observation::Data {
                frame,
                time,
                association,
                sender,
                path,
                tsn,
                new,
                already_acked,
                previous_path,
                timeout_of,
            } => {
                let mark = Mark { frame, time };
                let d = &mut self.assoc(association).directions[sender];
                if timeout_of.is_none() {
                    if let Some((failed, e)) = d.expiries.back_mut() {
                        if *failed == path && e.timer_restart.is_none() && time >= e.time {
                            e.timer_restart = Some(mark.point("DATA restarting the T3 timer"));
                        }
                    }
                }
                let p = d.path(path);
                p.last_data = Some(mark);
                p.first_in_segment.get_or_insert(mark);
                if new {
                    p.last_new = Some(mark);
                    if d.current == Some(path) || d.current.is_none() {
                        d.at_last_new = d.counters;
                    }
                    d.segment_first_tsn.get_or_insert(tsn);
                    d.record_new(
                        tsn,
                        TsnInfo {
                            first: mark,
                            effective: None,
                        },
                    );
                } else {
                    d.counters.retransmissions += 1;
                    if already_acked {
                        d.counters.after_ack += 1;
                    }
                    let lost =
                        !already_acked && previous_path.is_some() && previous_path != Some(path);
                    if lost {
                        d.counters.lost += 1;
                    }
                    let in_segment = d
                        .segment_first_tsn
                        .is_some_and(|first| tsn.wrapping_sub(first) as i32 >= 0);
                    if in_segment && !already_acked {
                        d.segment_lowest_retransmitted =
                            Some(d.segment_lowest_retransmitted.map_or(tsn, |l| {
                                if (tsn.wrapping_sub(l) as i32) < 0 {
                                    tsn
                                } else {
                                    l
                                }
                            }));
                    }
                    for p in &mut d.pending {
                        let below_switch = (tsn.wrapping_sub(p.switch_tsn) as i32) < 0;
                        let in_range = tsn.wrapping_sub(p.segment_first_tsn) as i32 >= 0;
                        if below_switch && in_range && !already_acked {
                            p.lowest_retransmitted =
                                Some(p.lowest_retransmitted.map_or(tsn, |l| {
                                    if (tsn.wrapping_sub(l) as i32) < 0 {
                                        tsn
                                    } else {
                                        l
                                    }
                                }));
                        }
                    }
                    if let Some(failed) = timeout_of {
                        let burst = self.config.expiry_burst;
                        let d = &mut self.associations[association as usize].directions[sender];
                        match d.expiries.back_mut() {
                            Some((p, e)) if *p == failed && time.since(e.last_time) <= burst => {
                                e.retransmissions += 1;
                                e.last_time = time;
                            }
                            _ => {
                                if d.expiries.len() == EXPIRY_HISTORY {
                                    d.expiries.pop_front();
                                }
                                d.expiries.push_back((
                                    failed,
                                    Expiry {
                                        frame,
                                        time,
                                        first_tsn: tsn,
                                        retransmissions: 1,
                                        timer_restart: None,
                                        last_time: time,
                                    },
                                ));
                            }
                        }
                    }
                }
            }
            Observation::Acked {
                association,
                data_sender,
                tsn,
                effective_frame,
                effective_time,
                ..
            } => {
                let d = &mut self.assoc(association).directions[data_sender];
                if let Some(t) = d.tsn_mut(tsn) {
                    t.effective = Some(Mark {
                        frame: effective_frame,
                        time: effective_time,
                    });
                }
                self.resolve_pending(association, data_sender);
            }
            Observation::Sack {
                association,
                data_sender,
                dup_tsns,
                ..
            } => {
                self.assoc(association).directions[data_sender]
                    .counters
                    .dup_tsns += u64::from(dup_tsns);
            }
        }
    }

    /// Total handover latency (Honda): effective transmission of L+1 minus
    /// that of L, once both are acknowledged.
    fn resolve_pending(&mut self, id: AssocId, sender: EndpointId) {
        let a = &mut self.associations[id as usize];
        let d = &mut a.directions[sender];
        let mut i = 0;
        while i < d.pending.len() {
            let p = &d.pending[i];
            let gap = p.lowest_retransmitted.unwrap_or(p.switch_tsn);
            let before = gap.wrapping_sub(1);
            let acked = |t: u32| d.tsn(t).and_then(|x| x.effective);
            // Every TSN up to the switch must be acknowledged before the
            // lowest lost one is known for sure.
            let switch_acked = acked(p.switch_tsn).is_some();
            match (acked(before), acked(gap), switch_acked) {
                (Some(l), Some(l1), true) => {
                    let h = &mut self.handovers[p.index];
                    h.sequence_gap_tsn = gap;
                    h.total_handover_latency = Component::between(
                        l.point("effective transmission of L"),
                        l1.point("effective transmission of L+1"),
                    );
                    h.transport_latency = transport_latency(h);
                    d.pending.remove(i);
                }
                (None, _, true) if d.tsn(before).is_none() => {
                    let h = &mut self.handovers[p.index];
                    h.sequence_gap_tsn = gap;
                    h.total_handover_latency =
                        Component::missing("TSN L (before the sequence gap) was not captured");
                    d.pending.remove(i);
                }
                _ => i += 1,
            }
        }
    }

    fn on_switch(
        &mut self,
        e: &Event,
        sender: EndpointId,
        from: Option<PathId>,
        to: PathId,
        tsn: u32,
    ) {
        let id = e.association;
        let Some(old) = from else {
            // First new DATA of the direction: a segment starts.
            let d = &mut self.assoc(id).directions[sender];
            d.current = Some(to);
            return;
        };
        let switch = Mark {
            frame: e.frame,
            time: e.time,
        };
        self.assoc(id);
        let HandoverEngine {
            config,
            associations,
            handovers,
            ..
        } = self;
        let config_rto_max = config.rto_max;
        let a = &mut associations[id as usize];
        let addr = |p: PathId, a: &Association| a.paths.get(usize::from(p)).copied();
        let (Some((old_src, old_dst)), Some((new_src, new_dst))) = (addr(old, a), addr(to, a))
        else {
            return;
        };
        let mobile = a.mobile;
        let d = &mut a.directions[sender];
        let old_data = d.path(old).clone();
        let new_data = d.path(to).clone();
        let window = HandoverWindow {
            retransmissions: d.counters.retransmissions - d.at_last_new.retransmissions,
            retransmitted_after_ack: d.counters.after_ack - d.at_last_new.after_ack,
            dup_tsns_reported: d.counters.dup_tsns - d.at_last_new.dup_tsns,
            lost_in_switch: d.counters.lost - d.at_last_new.lost,
        };
        let expiries: Vec<Expiry> = d
            .expiries
            .iter()
            .filter(|(p, e)| {
                *p == old
                    && old_data
                        .first_in_segment
                        .is_some_and(|f| e.frame >= f.frame)
            })
            .map(|(_, e)| e.clone())
            .collect();
        let first_unanswered = expiries
            .first()
            .and_then(|e| d.tsn(e.first_tsn))
            .map(|info| info.first.point("first unanswered transmission"));
        let returning = d.abandoned.contains(&to);
        let segment_first_tsn = d.segment_first_tsn.unwrap_or(tsn);
        let segment_lowest = d.segment_lowest_retransmitted;

        // Data interrupt: last DATA on the old path before the switch → the
        // first DATA on the new path since the old segment began.
        let last_old = old_data
            .last_data
            .map(|m| m.point("last DATA on the old path"));
        let first_new = new_data
            .first_in_segment
            .map(|m| m.point("first DATA on the new path"));
        let data_interrupt = Component::from_points(
            last_old,
            first_new,
            "no DATA on the old path before the switch",
        );
        let new_data_gap = Component::from_points(
            old_data
                .last_new
                .map(|m| m.point("last new DATA on the old path")),
            Some(switch.point("first new DATA on the new path")),
            "no new DATA on the old path",
        );

        // Which endpoint moves, and between which of its addresses.
        let (old_addr, new_addr) = match mobile {
            Some(m) if m == sender => (Some(old_src), Some(new_src)),
            Some(_) => (Some(old_dst), Some(new_dst)),
            None => (None, None),
        };
        let moved = old_addr != new_addr;

        let asconf_for = |op: AsconfOp, address: Option<IpAddr>| {
            a.asconfs
                .iter()
                .filter(|x| x.time <= switch.time || x.frame <= switch.frame)
                .rfind(|x| x.ops.iter().any(|(o, ad)| *o == op && Some(*ad) == address))
                .cloned()
        };
        let addip = asconf_for(AsconfOp::AddIp, new_addr);
        let setprim = asconf_for(AsconfOp::SetPrimary, new_addr);
        let planned = moved && (addip.is_some() || setprim.is_some())
            || a.asconfs.iter().any(|x| {
                x.frame < switch.frame
                    && x.ops.iter().any(|(o, ad)| {
                        matches!(o, AsconfOp::AddIp | AsconfOp::SetPrimary)
                            && (*ad == new_src || *ad == new_dst)
                    })
            });
        let class = if planned {
            SwitchClass::Planned
        } else if !expiries.is_empty() {
            SwitchClass::Failover
        } else if returning {
            SwitchClass::Return
        } else {
            SwitchClass::Other
        };

        let mut asconf: Vec<AsconfExchange> = a
            .asconfs
            .iter()
            .filter(|x| x.frame < switch.frame)
            .filter(|x| {
                x.ops
                    .iter()
                    .any(|(_, ad)| Some(*ad) == new_addr || Some(*ad) == old_addr)
            })
            .cloned()
            .collect();
        asconf.dedup_by_key(|x| (x.serial, x.sender));
        let dar_overhead_bytes = asconf.iter().map(|x| x.bytes + x.ack_bytes).sum();

        // Path confirmation: the last answered HEARTBEAT on the new path
        // before the switch.
        let path_confirmation = a
            .heartbeats
            .iter()
            .filter(|h| h.path == to && h.frame < switch.frame)
            .filter_map(|h| h.ack.map(|ack| (h, ack)))
            .next_back()
            .map(|(h, ack)| {
                Component::between(
                    Point::frame(h.frame, h.time, "HEARTBEAT on the new path"),
                    ack.point("HEARTBEAT ACK"),
                )
            })
            .unwrap_or_else(|| {
                Component::missing("no answered HEARTBEAT on the new path before the switch")
            });

        // Network-layer disconnection of the mobile endpoint.
        let debut = match (mobile, new_addr) {
            (Some(m), Some(n)) => a.address_debut.get(&(m, n)).copied(),
            _ => None,
        };
        let anchors = &config.anchors;
        let down = anchors
            .iter()
            .filter(|x| {
                matches!(x.kind, AnchorKind::LinkDown | AnchorKind::AddrDown)
                    && x.time <= switch.time
            })
            .rfind(|x| x.kind == AnchorKind::LinkDown || x.address == old_addr);
        let up = anchors.iter().rfind(|x| {
            x.kind == AnchorKind::AddrUp
                && x.address.is_some()
                && x.address == new_addr
                && x.time <= switch.time
        });
        let net_from = down
            .map(|x| {
                Point::anchor(
                    x.time,
                    if x.kind == AnchorKind::LinkDown {
                        "link_down event"
                    } else {
                        "addr_down event"
                    },
                )
            })
            .or_else(|| {
                debut
                    .and_then(|(_, before)| before)
                    .map(|m| m.point("last packet of the mobile endpoint from its old address"))
            });
        let net_to = up
            .map(|x| Point::anchor(x.time, "addr_up event"))
            .or_else(|| {
                debut.map(|(first, _)| {
                    first.point("first packet of the mobile endpoint from its new address")
                })
            });
        let network_disconnection = if mobile.is_none() {
            Component::missing("no endpoint changed its addresses by ASCONF")
        } else if !moved {
            Component::missing("the mobile endpoint's address did not change in this switch")
        } else {
            Component::from_points(
                net_from,
                net_to,
                "the mobile endpoint had not sent from both its old and its new address by this switch",
            )
        };

        let addip_sent = match (&addip, new_addr) {
            (Some(x), Some(n)) => match config.anchors.iter().rfind(|an| {
                an.kind == AnchorKind::AddrUp && an.address == Some(n) && an.time <= x.time
            }) {
                Some(an) => Component::between(
                    Point::anchor(an.time, "addr_up event"),
                    Point::frame(x.frame, x.time, "ASCONF ADD-IP"),
                ),
                None => Component::missing(format!("no addr_up event for {n} (give --events)")),
            },
            _ => Component::missing("no ASCONF ADD-IP for the new address"),
        };
        let addip_ack = addip.as_ref().and_then(|x| {
            Some(Point::frame(
                x.ack_frame?,
                x.ack_time?,
                "ASCONF-ACK for ADD-IP",
            ))
        });
        let setprim_sent = match (&setprim, addip_ack) {
            (Some(x), Some(ack)) => {
                Component::between(ack, Point::frame(x.frame, x.time, "ASCONF SET-PRIMARY"))
            }
            (None, _) => Component::missing("no ASCONF SET-PRIMARY for the new address"),
            (_, None) => Component::missing("ADD-IP for the new address not acknowledged"),
        };
        let first_new_data = switch.point("first new DATA on the new path");
        let sender_recovery = if mobile == Some(sender) {
            match addip_ack {
                Some(ack) => Component::between(ack, first_new_data),
                None => Component::missing("no acknowledged ADD-IP for the new address"),
            }
        } else {
            match &setprim {
                Some(x) => Component::between(
                    Point::frame(x.frame, x.time, "ASCONF SET-PRIMARY"),
                    first_new_data,
                ),
                None => Component::missing("no SET-PRIMARY for the new primary address"),
            }
        };

        let failover = (!expiries.is_empty()).then(|| {
            let first_expiry_after = first_unanswered.map(|p| expiries[0].time.since(p.time));
            let intervals: Vec<Nanos> = expiries
                .windows(2)
                .map(|w| w[1].time.since(w[0].time))
                .collect();
            let implied: Vec<Nanos> = expiries
                .windows(2)
                .filter_map(|w| w[0].timer_restart.map(|r| w[1].time.since(r.time)))
                .collect();
            let rto = if implied.is_empty() {
                first_expiry_after
            } else {
                let mut sorted = implied.clone();
                sorted.sort();
                Some(sorted[sorted.len() / 2])
            };
            let observed_pmr = (expiries.len() as u32).checked_sub(1);
            let link_down = config
                .anchors
                .iter()
                .rfind(|x| x.kind == AnchorKind::LinkDown && x.time <= switch.time)
                .map(|x| Point::anchor(x.time, "link_down event"));
            let start = link_down.or(first_unanswered);
            let first_alternate = new_data
                .first_in_segment
                .filter(|m| start.is_none_or(|s| m.time >= s.time))
                .map(|m| m.point("first DATA on the alternate path"))
                .unwrap_or(first_new_data);
            let predicted_eq3_ms = match (rto, observed_pmr) {
                (Some(r), Some(pmr)) => Some(
                    (0..pmr)
                        .map(|i| {
                            let term = Nanos(r.0.saturating_mul(1i64 << i.min(30)));
                            config_rto_max.map_or(term, |m| term.min(m)).as_millis_f64()
                        })
                        .sum(),
                ),
                _ => None,
            };
            Failover {
                expiries: expiries.clone(),
                first_unanswered,
                first_expiry_after_ms: first_expiry_after.map(Nanos::as_millis_f64),
                expiry_intervals_ms: intervals.iter().map(|n| n.as_millis_f64()).collect(),
                implied_rto_ms: implied.iter().map(|n| n.as_millis_f64()).collect(),
                rto_estimate_ms: rto.map(Nanos::as_millis_f64),
                observed_pmr,
                detection: Component::from_points(
                    start,
                    Some(first_alternate),
                    "no start of the failure known",
                ),
                failover_time: Component::from_points(
                    start,
                    Some(first_new_data),
                    "no start of the failure known",
                ),
                predicted_eq3_ms,
                predicted_eq4_ms: rto
                    .zip(observed_pmr)
                    .map(|(r, pmr)| r.as_millis_f64() * f64::from(pmr)),
            }
        });

        let recognition = (class == SwitchClass::Return).then(|| {
            let since = old_data
                .first_in_segment
                .map(|m| m.time)
                .unwrap_or(Timestamp(i64::MIN));
            let link_up = config
                .anchors
                .iter()
                .rfind(|x| x.kind == AnchorKind::LinkUp && x.time <= switch.time && x.time >= since)
                .map(|x| Point::anchor(x.time, "link_up event"));
            let hb_after = link_up.map_or(since, |p| p.time);
            let hb = a
                .heartbeats
                .iter()
                .find(|h| h.path == to && h.time >= hb_after && h.frame <= switch.frame)
                .map(|h| Point::frame(h.frame, h.time, "first HEARTBEAT on the path"));
            let data = new_data
                .first_in_segment
                .map(|m| m.point("first DATA on the path"))
                .or(Some(first_new_data));
            Recognition {
                link_up_to_heartbeat: Component::from_points(
                    link_up,
                    hb,
                    "no link_up event (give --events) or no HEARTBEAT after it",
                ),
                heartbeat_to_data: Component::from_points(
                    hb,
                    data,
                    "no HEARTBEAT on the path before DATA returned",
                ),
                link_up_to_data: Component::from_points(
                    link_up,
                    data,
                    "no link_up event (give --events)",
                ),
            }
        });

        let handover = Handover {
            association: id,
            sender,
            from_path: old,
            to_path: to,
            from_src: old_src,
            from_dst: old_dst,
            to_src: new_src,
            to_dst: new_dst,
            class,
            switch_frame: switch.frame,
            switch_time: switch.time,
            switch_tsn: tsn,
            data_interrupt,
            new_data_gap,
            sequence_gap_tsn: tsn,
            total_handover_latency: Component::missing(
                "the TSNs around the sequence gap were not both acknowledged in the capture",
            ),
            network_disconnection,
            transport_latency: Component::missing(
                "needs the total handover latency and the network-layer disconnection",
            ),
            addip_sent,
            setprim_sent,
            sender_recovery,
            path_confirmation,
            asconf,
            dar_overhead_bytes,
            window,
            failover,
            recognition,
        };
        let index = handovers.len();
        handovers.push(handover);
        let d = &mut associations[id as usize].directions[sender];
        d.pending.push(Pending {
            index,
            switch_tsn: tsn,
            segment_first_tsn,
            lowest_retransmitted: segment_lowest.filter(|l| (l.wrapping_sub(tsn) as i32) < 0),
        });
        // A new segment starts on the new path.
        if !d.abandoned.contains(&old) {
            d.abandoned.push(old);
        }
        d.current = Some(to);
        d.segment_first_tsn = Some(tsn);
        d.segment_lowest_retransmitted = None;
        d.at_last_new = d.counters;
        for p in &mut d.paths {
            p.first_in_segment = None;
        }
        d.path(to).first_in_segment = Some(switch);
        self.resolve_pending(id, sender);
    }
}

impl EventSink for HandoverEngine {
    fn emit(&mut self, event: Event) {
        self.on_event(&event);
        self.events.push(event);
    }

    fn observe(&mut self, observation: &Observation) {
        self.on_observation(observation);
    }
}
