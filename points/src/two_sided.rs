//! The two-sided handover record (issue 32, second slice): one handover
//! seen at the data sender's and at the receiver's capture point, put
//! together from each point's own handover record (the analyzer's) and the
//! packet pairs of the frames those records rest on. docs/metrics.md
//! ("Two capture points") defines every quantity; [`PARTS`] names the
//! interrupt's parts once for every output.
//!
//! The two records of one handover are matched by identity, not by time:
//! the DATA the receiver's record rests on was sent in exactly one of the
//! sender's handovers (the switch times of the two points may lie seconds
//! apart: a receiver's switch is the first DATA to arrive on the new path,
//! often the sender's first retransmission there, long before the sender
//! stops sending new DATA on the old path).
//!
//! Only the frames the per-point records name are kept from the pairing
//! pass (`FramesOfInterest`, `Collect`), with the first DATA sent after
//! each receiver's last old-path DATA: a few per handover, never the
//! captures' packets.

use crate::clock::ClockEstimate;
use crate::report::{Loss, LossKind, OwdSample, PointsReport, PointsSink, Retransmission};
use rustc_hash::{FxHashMap, FxHashSet};
use sctp_handover::events::AssocId;
use sctp_handover::handover::{AsconfExchange, Handover, SwitchClass};
use sctp_handover::wire::sctp_param::AsconfOp;
use serde::Serialize;
use std::net::IpAddr;

/// The frames of both points' handover records that the two-sided records
/// rest on: the data interrupt's ends, the switch, every ASCONF exchange's
/// first and last transmission and its ASCONF-ACK.
#[derive(Debug, Default)]
pub(crate) struct FramesOfInterest {
    frames: [FxHashSet<u64>; 2],
    /// Each handover's last DATA on the old path (its data interrupt's
    /// start): where it was sent, the next DATA sent after it is looked
    /// for ([`Correspondence::next_data`]).
    old_path_ends: [FxHashSet<u64>; 2],
}

impl FramesOfInterest {
    pub fn of(handovers: [&[Handover]; 2]) -> Self {
        let mut out = FramesOfInterest::default();
        for (point, list) in handovers.iter().enumerate() {
            let set = &mut out.frames[point];
            for h in list.iter() {
                set.insert(h.switch_frame);
                for c in [&h.data_interrupt.from, &h.data_interrupt.to] {
                    if let Some(f) = c.as_ref().and_then(|p| p.frame) {
                        set.insert(f);
                    }
                }
                if let Some(f) = h.data_interrupt.from.as_ref().and_then(|p| p.frame) {
                    out.old_path_ends[point].insert(f);
                }
                for x in &h.asconf {
                    set.insert(x.frame);
                    set.insert(x.last_frame);
                    if let Some(f) = x.ack_frame {
                        set.insert(f);
                    }
                }
            }
        }
        out
    }

    fn contains(&self, point: usize, frame: u64) -> bool {
        self.frames[point].contains(&frame)
    }
}

/// A packet of interest seen at both points.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Crossing {
    /// The point that sent it (0 or 1).
    pub sender_point: usize,
    pub sender_frame: u64,
    pub receiver_frame: u64,
    pub src: IpAddr,
    pub dst: IpAddr,
    /// Both ends on point A's clock (ns since the epoch).
    pub sent_ns: i64,
    pub received_ns: i64,
    /// Both ends on their own point's clock.
    pub sender_time_ns: i64,
    pub receiver_time_ns: i64,
}

impl Crossing {
    pub fn one_way_delay_ns(&self) -> i64 {
        self.received_ns - self.sent_ns
    }
}

/// A DATA packet seen at its sender's point, and whether the other point
/// saw it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SentData {
    pub frame: u64,
    /// On the sender's point's own clock.
    pub time_ns: i64,
    /// On point A's clock.
    pub sent_ns: i64,
    /// Seen at the other point (captured there: not necessarily delivered).
    pub arrived: bool,
}

/// A DATA retransmission among the frames of interest.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Resent {
    /// No earlier transmission of any TSN sent again in it arrived at the
    /// other point: the retransmission was needed.
    pub needed: bool,
    /// The earliest first transmission seen (the original) of those TSNs,
    /// on the sender's point's own clock, and its frame.
    pub original_time_ns: i64,
    pub original_frame: u64,
}

/// What pairing found about the frames of interest.
#[derive(Debug, Default)]
pub(crate) struct Correspondence {
    /// By (point, frame), for the frame at either end.
    pairs: FxHashMap<(usize, u64), Crossing>,
    /// Sent at this (point, frame) and never seen at the other point.
    lost: FxHashSet<(usize, u64)>,
    /// By (sender point, frame) of a DATA retransmission.
    retransmissions: FxHashMap<(usize, u64), Resent>,
    /// (sender point, frame) of a DATA packet that is some handover's last
    /// DATA on the old path at the receiver → the first DATA packet the
    /// sender's point sent after it with the same verification tag (same
    /// association and direction).
    next_data: FxHashMap<(usize, u64), SentData>,
}

impl Correspondence {
    pub fn crossing(&self, point: usize, frame: u64) -> Option<&Crossing> {
        self.pairs.get(&(point, frame))
    }
}

/// Looking for the first DATA a point sent after one of its frames.
#[derive(Debug)]
struct Watch {
    point: usize,
    after: u64,
    verification_tag: u32,
    next: Option<SentData>,
}

/// A [`PointsSink`] that keeps the pairs, losses and retransmissions of the
/// frames of interest, and the DATA sent next after each receiver's last
/// old-path DATA, and hands everything on to `inner`.
pub(crate) struct Collect<'a> {
    interest: &'a FramesOfInterest,
    /// The pairing window: a packet is reported (paired or unseen) at most
    /// this long after it was sent.
    window_ns: i64,
    found: Correspondence,
    watching: Vec<Watch>,
    inner: &'a mut dyn PointsSink,
}

impl<'a> Collect<'a> {
    pub fn new(
        interest: &'a FramesOfInterest,
        window_ns: i64,
        inner: &'a mut dyn PointsSink,
    ) -> Self {
        Collect {
            interest,
            window_ns,
            found: Correspondence::default(),
            watching: Vec::new(),
            inner,
        }
    }

    /// What was found, once the pairing has ended.
    pub fn finish(mut self) -> Correspondence {
        for w in self.watching.drain(..) {
            if let Some(next) = w.next {
                self.found.next_data.insert((w.point, w.after), next);
            }
        }
        self.found
    }

    /// A DATA packet sent at `point`, reported by the pairing. Reports do
    /// not come in frame order (a packet is reported when its copy arrives
    /// or when the window has passed), so each watch keeps the lowest frame
    /// after its own; it is settled once a packet sent more than a window
    /// after that frame is reported, since every earlier one has been.
    fn data_sent(&mut self, point: usize, verification_tag: u32, data: SentData) {
        let mut i = 0;
        while i < self.watching.len() {
            let w = &mut self.watching[i];
            if w.point == point
                && w.verification_tag == verification_tag
                && data.frame > w.after
                && w.next.is_none_or(|n| data.frame < n.frame)
            {
                w.next = Some(data);
            }
            match w.next {
                Some(next) if data.sent_ns > next.sent_ns.saturating_add(self.window_ns) => {
                    let w = self.watching.swap_remove(i);
                    self.found.next_data.insert((w.point, w.after), next);
                }
                _ => i += 1,
            }
        }
    }
}

impl PointsSink for Collect<'_> {
    fn owd(&mut self, s: &OwdSample) {
        let (from, to) = (s.direction.sender(), s.direction.receiver());
        if self.interest.contains(from, s.sender_frame)
            || self.interest.contains(to, s.receiver_frame)
        {
            let c = Crossing {
                sender_point: from,
                sender_frame: s.sender_frame,
                receiver_frame: s.receiver_frame,
                src: s.src,
                dst: s.dst,
                sent_ns: s.sent_ns,
                received_ns: s.sent_ns + s.owd_ns,
                sender_time_ns: s.sender_time_ns,
                receiver_time_ns: s.receiver_time_ns,
            };
            self.found.pairs.insert((from, s.sender_frame), c);
            self.found.pairs.insert((to, s.receiver_frame), c);
        }
        if self.interest.old_path_ends[to].contains(&s.receiver_frame) {
            self.watching.push(Watch {
                point: from,
                after: s.sender_frame,
                verification_tag: s.verification_tag,
                next: None,
            });
        }
        if s.carries_data {
            self.data_sent(
                from,
                s.verification_tag,
                SentData {
                    frame: s.sender_frame,
                    time_ns: s.sender_time_ns,
                    sent_ns: s.sent_ns,
                    arrived: true,
                },
            );
        }
        self.inner.owd(s);
    }

    fn loss(&mut self, l: &Loss) {
        if l.kind == LossKind::NotSeenAtReceiver {
            let point = l.direction.sender();
            if self.interest.contains(point, l.frame) {
                self.found.lost.insert((point, l.frame));
            }
            if !l.data_tsns.is_empty() {
                self.data_sent(
                    point,
                    l.verification_tag,
                    SentData {
                        frame: l.frame,
                        time_ns: l.point_time_ns,
                        sent_ns: l.time_ns,
                        arrived: false,
                    },
                );
            }
        }
        self.inner.loss(l);
    }

    fn retransmission(&mut self, r: &Retransmission) {
        let point = r.direction.sender();
        if self.interest.contains(point, r.frame) {
            let this = Resent {
                needed: !r.spurious,
                original_time_ns: r.original_sender_time_ns,
                original_frame: r.original_frame,
            };
            self.found
                .retransmissions
                .entry((point, r.frame))
                .and_modify(|e| {
                    e.needed &= this.needed;
                    if this.original_time_ns < e.original_time_ns {
                        e.original_time_ns = this.original_time_ns;
                        e.original_frame = this.original_frame;
                    }
                })
                .or_insert(this);
        }
        self.inner.retransmission(r);
    }
}

/// A handover's data interrupt as one point saw it, in three parts that add
/// up to it exactly (docs/metrics.md, "Two capture points"); the parts are
/// null together, with `missing` saying why, when the interrupt is no wait
/// to split (negative: the paths overlapped) or cannot be traced.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SideInterrupt {
    /// The point's name.
    pub point: String,
    /// The analyzer's data interrupt at this point, on its own clock
    /// (null: the analyzer could not compute it; `missing` says why).
    pub interrupt_ns: Option<i64>,
    /// The frame of its last DATA on the old path at this point; None when
    /// the analyzer found none.
    pub from_frame: Option<u64>,
    /// The frame of its first DATA on the new path at this point; None when
    /// the analyzer found none.
    pub to_frame: Option<u64>,
    /// At the receiver, the one-way delay of its first DATA on the new
    /// path minus that of its last on the old path (negative when the new
    /// path is the faster); 0 at the sender, whose capture sees no travel.
    pub one_way_delay_ns: Option<i64>,
    /// Sender time that DATA lost on the way cost (≥ 0). At the receiver:
    /// from the first DATA its sender sent after the receiver's last
    /// old-path DATA, when that DATA never reached the receiver's point,
    /// until its first new-path DATA was sent. At the sender: the
    /// retransmission wait of its first new-path DATA when that was a
    /// needed retransmission, from its TSN's original transmission (or the
    /// last old-path DATA, when that was later).
    pub loss_ns: Option<i64>,
    /// The rest (≥ 0): the sender's own time, pacing, processing, timers
    /// that fired with nothing lost.
    pub endpoint_ns: Option<i64>,
    /// Why the parts are null; None when they are computed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

/// One part of a side's interrupt, described once for every output (the
/// `handovers_two_sided` table's columns, the JSON record, the summary).
#[derive(Debug, Clone, Copy)]
pub struct PartDescriptor {
    /// Stem of its columns (`<side>_<name>_ms`).
    pub name: &'static str,
    /// Its name in text (summary lines, figure legends).
    pub label: &'static str,
    /// What it measures, as the table's column documentation says it.
    pub description: &'static str,
    /// Its value in a side's interrupt, in ns.
    pub get: fn(&SideInterrupt) -> Option<i64>,
}

/// The interrupt and its parts, in docs/metrics.md's order: the three parts
/// add up to the interrupt.
pub const PARTS: &[PartDescriptor] = &[
    PartDescriptor {
        name: "interrupt",
        label: "data interrupt",
        description: "the analyzer's data interrupt at this point: last DATA on the old path → first DATA on the new path, on the point's own clock",
        get: |s| s.interrupt_ns,
    },
    PartDescriptor {
        name: "one_way_delay",
        label: "one-way delay",
        description: "at the receiver, the one-way delay of its first DATA on the new path minus that of its last on the old path (negative: the new path is faster); 0 at the sender",
        get: |s| s.one_way_delay_ns,
    },
    PartDescriptor {
        name: "loss",
        label: "loss",
        description: "sender time lost DATA cost (≥ 0): at the receiver, from the sender's first DATA after the receiver's last old-path DATA, when it never arrived, to the first new-path DATA; at the sender, a needed retransmission's wait from its TSN's original",
        get: |s| s.loss_ns,
    },
    PartDescriptor {
        name: "endpoint",
        label: "endpoint",
        description: "the rest (≥ 0): the data sender's own time, pacing, processing and timers with nothing lost",
        get: |s| s.endpoint_ns,
    },
];

/// The ASCONF that moved a handover, seen where it was sent and where it
/// arrived.
#[derive(Debug, Clone, Serialize)]
pub struct TwoSidedAsconf {
    /// The point of the endpoint that sent the ASCONF.
    pub requester_point: String,
    /// The ASCONF's serial number.
    pub serial: u32,
    /// Its requests, e.g. `set_primary 198.51.100.102`.
    pub requests: String,
    /// How often the requester's point saw it sent (1: once).
    pub transmissions: u32,
    /// Its first transmission (A's clock).
    pub sent_ns: i64,
    /// The source address of the first copy to arrive at the peer.
    pub src: IpAddr,
    /// The destination address of that copy.
    pub dst: IpAddr,
    /// When that copy was sent (A's clock).
    pub delivered_sent_ns: i64,
    /// When that copy arrived at the peer's point (A's clock).
    pub received_ns: i64,
    /// That copy's one-way delay, in ns.
    pub one_way_delay_ns: i64,
    /// At the peer's point, on its clock: the copy its ASCONF-ACK answers
    /// → the ASCONF-ACK (null: no ASCONF-ACK after it was captured).
    pub peer_processing_ns: Option<i64>,
    /// The ASCONF-ACK's arrival at the requester (A's clock); null when it
    /// was lost (or not captured).
    pub ack_received_ns: Option<i64>,
    /// The ASCONF-ACK's one-way delay, in ns; null as `ack_received_ns`.
    pub ack_one_way_delay_ns: Option<i64>,
    /// When the peer is the data sender: the ASCONF's first arrival → the
    /// peer's first new DATA on the new path (the switch), on the peer's
    /// clock.
    pub peer_to_first_new_data_ns: Option<i64>,
}

/// One handover seen at both points.
#[derive(Debug, Clone, Serialize)]
pub struct TwoSidedHandover {
    /// The name of the point at the data sender.
    pub sender_point: String,
    /// The name of the point at the data receiver.
    pub receiver_point: String,
    /// The association's id in the sender's point's own analysis.
    pub sender_association: AssocId,
    /// The association's id in the receiver's point's own analysis.
    pub receiver_association: AssocId,
    /// The old path's source address.
    pub from_src: IpAddr,
    /// The old path's destination address.
    pub from_dst: IpAddr,
    /// The new path's source address.
    pub to_src: IpAddr,
    /// The new path's destination address.
    pub to_dst: IpAddr,
    /// The switch's class in the sender's point's analysis.
    pub sender_class: SwitchClass,
    /// The switch's class in the receiver's point's analysis.
    pub receiver_class: SwitchClass,
    /// The switch frame in the sender's point's capture.
    pub sender_switch_frame: u64,
    /// The switch frame in the receiver's point's capture.
    pub receiver_switch_frame: u64,
    /// The sender's switch frame's time on A's clock.
    pub sender_switch_ns: i64,
    /// The receiver's switch frame's time on A's clock.
    pub receiver_switch_ns: i64,
    /// The ASCONF that moved the handover; None when none did.
    pub asconf: Option<TwoSidedAsconf>,
    /// The data interrupt at the sender's point, in parts.
    pub sender: SideInterrupt,
    /// The data interrupt at the receiver's point, in parts.
    pub receiver: SideInterrupt,
}

fn to_a(clock: &ClockEstimate, point: usize, own_ns: i64) -> i64 {
    if point == 0 {
        own_ns
    } else {
        clock.b_to_a(own_ns)
    }
}

fn ms(ns: i64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

/// The point that sends on a path (from the pairing's path summaries).
fn sender_point_of(report: &PointsReport, src: IpAddr, dst: IpAddr) -> Option<usize> {
    report
        .paths
        .iter()
        .find(|p| p.src == src && p.dst == dst)
        .map(|p| p.direction.sender())
}

/// The point where a handover's DATA was sent, from either of its paths.
fn data_sender_point(report: &PointsReport, h: &Handover) -> Option<usize> {
    sender_point_of(report, h.from_src, h.from_dst)
        .or_else(|| sender_point_of(report, h.to_src, h.to_dst))
}

/// The request that moved the handover's DATA: for a mobile data sender
/// (it sent the ASCONFs) its ADD-IP for the new address, whose ASCONF-ACK
/// lets it send from there; for its peer the SET-PRIMARY for the new
/// address, else the ADD-IP (as the analyzer's sender sequence recovery
/// and class rules, docs/metrics.md).
fn moving_request(h: &Handover) -> Option<&AsconfExchange> {
    let new = [h.to_src, h.to_dst];
    let asks = |x: &AsconfExchange, op: AsconfOp| {
        x.ops
            .iter()
            .any(|(o, a)| *o == op && (new.contains(a) || a.is_unspecified()))
    };
    let latest = |op: AsconfOp| h.asconf.iter().rev().find(|x| asks(x, op));
    let mobile_sender = h.asconf.first().is_some_and(|x| x.sender == h.sender);
    if mobile_sender {
        latest(AsconfOp::AddIp)
    } else {
        latest(AsconfOp::SetPrimary).or_else(|| latest(AsconfOp::AddIp))
    }
}

fn requests(x: &AsconfExchange) -> String {
    x.ops
        .iter()
        .map(|(op, a)| format!("{} {a}", op.name()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One side's interrupt in parts (one-way delay, loss, endpoint).
struct Parts {
    one_way_delay_ns: i64,
    loss_ns: i64,
    endpoint_ns: i64,
}

impl SideInterrupt {
    fn of(point: &str, h: &Handover) -> Self {
        SideInterrupt {
            point: point.to_owned(),
            interrupt_ns: h.data_interrupt.nanos.map(|n| n.0),
            from_frame: h.data_interrupt.from.and_then(|p| p.frame),
            to_frame: h.data_interrupt.to.and_then(|p| p.frame),
            ..SideInterrupt::default()
        }
    }

    fn set(&mut self, parts: Result<Parts, String>) {
        match parts {
            Ok(p) => {
                self.one_way_delay_ns = Some(p.one_way_delay_ns);
                self.loss_ns = Some(p.loss_ns);
                self.endpoint_ns = Some(p.endpoint_ns);
            }
            Err(why) => self.missing = Some(why),
        }
    }

    /// The analyzer's interrupt and its two frames, or why there are none.
    fn interval(&self, h: &Handover) -> Result<(i64, u64, u64), String> {
        let interrupt = self.interrupt_ns.ok_or_else(|| {
            h.data_interrupt
                .missing
                .clone()
                .unwrap_or_else(|| "no data interrupt".into())
        })?;
        match (self.from_frame, self.to_frame) {
            (Some(x), Some(y)) => Ok((interrupt, x, y)),
            _ => Err("the data interrupt rests on no frame".into()),
        }
    }
}

struct Context<'a> {
    names: &'a [String; 2],
    clock: &'a ClockEstimate,
    found: &'a Correspondence,
}

impl Context<'_> {
    fn asconf(&self, hs: &Handover, s: usize, hr: &Handover, r: usize) -> Option<TwoSidedAsconf> {
        let x_s = moving_request(hs)?;
        let x_r = hr.asconf.iter().find(|x| x.serial == x_s.serial)?;
        // Which point the ASCONF was sent from: the one whose copy of its
        // first frame is the sending end of a pair (or was lost there).
        let from_s = match self.found.crossing(s, x_s.frame) {
            Some(c) => c.sender_point == s,
            None => self.found.lost.contains(&(s, x_s.frame)),
        };
        let (rq, pe, x_rq, x_pe) = if from_s {
            (s, r, x_s, x_r)
        } else {
            (r, s, x_r, x_s)
        };
        // The first copy the peer saw, and where it was sent.
        let arrival = self.found.crossing(pe, x_pe.frame)?;
        if arrival.sender_point != rq {
            return None;
        }
        let peer_processing_ns = match (x_pe.ack_time, x_pe.ack_frame) {
            (Some(t), Some(_)) => Some(t.since(x_pe.last_time).0),
            _ => None,
        };
        let ack = x_pe
            .ack_frame
            .and_then(|f| self.found.crossing(pe, f))
            .filter(|c| c.sender_point == pe);
        let peer_to_first_new_data_ns = (pe == s).then(|| hs.switch_time.since(x_pe.time).0);
        Some(TwoSidedAsconf {
            requester_point: self.names[rq].clone(),
            serial: x_rq.serial,
            requests: requests(x_rq),
            transmissions: x_rq.transmissions,
            sent_ns: to_a(self.clock, rq, x_rq.time.0),
            src: arrival.src,
            dst: arrival.dst,
            delivered_sent_ns: arrival.sent_ns,
            received_ns: arrival.received_ns,
            one_way_delay_ns: arrival.one_way_delay_ns(),
            peer_processing_ns,
            ack_received_ns: ack.map(|c| c.received_ns),
            ack_one_way_delay_ns: ack.map(|c| c.one_way_delay_ns()),
            peer_to_first_new_data_ns,
        })
    }

    /// The sender's side, with X′ and Y′ its last DATA on the old path and
    /// first on the new one: its interrupt s(Y′) − s(X′) is loss as far as
    /// Y′ is a needed retransmission waiting since its TSN's original
    /// transmission O (from the later of s(O) and s(X′)), the rest
    /// endpoint. A negative interrupt (Y′ sent before X′: the paths
    /// overlapped) is no wait and is not split.
    fn sender_side(&self, hs: &Handover, s: usize) -> SideInterrupt {
        let mut side = SideInterrupt::of(&self.names[s], hs);
        let parts = side.interval(hs).and_then(|(interrupt, x, y)| {
            let name = &self.names[s];
            if interrupt < 0 {
                return Err(format!(
                    "the sender sent DATA on the new path ({name} frame {y}) {} before its last DATA on the old path ({name} frame {x}): the paths overlapped, no wait to split",
                    ms(-interrupt)
                ));
            }
            let (Some(sent_x), Some(sent_y)) = (
                hs.data_interrupt.from.map(|p| p.time.0),
                hs.data_interrupt.to.map(|p| p.time.0),
            ) else {
                return Err("the data interrupt rests on no frame".into());
            };
            let loss = match self.found.retransmissions.get(&(s, y)) {
                Some(r) if r.needed => sent_y - sent_x.max(r.original_time_ns),
                _ => 0,
            };
            if !(0..=interrupt).contains(&loss) {
                return Err(format!(
                    "the retransmission wait ({}) does not fit in the interrupt: capture times out of order",
                    ms(loss)
                ));
            }
            Ok(Parts {
                one_way_delay_ns: 0,
                loss_ns: loss,
                endpoint_ns: interrupt - loss,
            })
        });
        side.set(parts);
        side
    }

    /// The receiver's side, with X and Y its last DATA on the old path and
    /// first on the new one, s(·) and r(·) their times at the sender's and
    /// the receiver's point (each on its own clock), and N the first DATA
    /// the sender sent after X:
    /// r(Y) − r(X) = [(r(Y) − s(Y)) − (r(X) − s(X))]   one-way delay
    ///             + [s(Y) − s(N)]                     loss, when N never arrived (else 0)
    ///             + [s(N) − s(X)]                     endpoint (all of s(Y) − s(X) when N arrived)
    /// exactly. Had N arrived, the receiver's wait would have ended with it.
    fn receiver_side(&self, hr: &Handover, r: usize, s: usize) -> SideInterrupt {
        let mut side = SideInterrupt::of(&self.names[r], hr);
        let parts = side.interval(hr).and_then(|(interrupt, x, y)| {
            let (rn, sn) = (&self.names[r], &self.names[s]);
            let sent = |f: u64, what: &str| {
                self.found
                    .crossing(r, f)
                    .filter(|c| c.sender_point == s)
                    .ok_or_else(|| format!("its {what} ({rn} frame {f}) was not seen at {sn}"))
            };
            let cx = sent(x, "last DATA on the old path")?;
            let cy = sent(y, "first DATA on the new path")?;
            let one_way = (cy.receiver_time_ns - cy.sender_time_ns)
                - (cx.receiver_time_ns - cx.sender_time_ns);
            let gap = cy.sender_time_ns - cx.sender_time_ns;
            if gap < 0 {
                return Err(format!(
                    "{sn} sent the receiver's first DATA on the new path ({sn} frame {}) {} before its last on the old path ({sn} frame {}): the paths overlapped, no wait to split",
                    cy.sender_frame,
                    ms(-gap),
                    cx.sender_frame
                ));
            }
            if one_way + gap != interrupt {
                return Err(format!(
                    "the receiver's interrupt ({interrupt} ns) does not rest on the frames paired (sum {} ns)",
                    one_way + gap
                ));
            }
            let next = self
                .found
                .next_data
                .get(&(s, cx.sender_frame))
                .filter(|n| n.frame < cy.sender_frame);
            let loss = match next {
                Some(n) if !n.arrived => cy.sender_time_ns - n.time_ns,
                _ => 0,
            };
            if !(0..=gap).contains(&loss) {
                return Err(format!(
                    "{sn}'s DATA after the receiver's last on the old path is out of order in its capture"
                ));
            }
            Ok(Parts {
                one_way_delay_ns: one_way,
                loss_ns: loss,
                endpoint_ns: gap - loss,
            })
        });
        side.set(parts);
        side
    }
}

/// When a handover's DATA began on its new path at its point, on its own
/// clock: its first DATA there, new or retransmitted (the data
/// interrupt's end), else its switch.
fn new_path_start_ns(h: &Handover) -> i64 {
    h.data_interrupt
        .to
        .map_or(h.switch_time.0, |p| p.time.0.min(h.switch_time.0))
}

/// The frames that trace a receiver's handover to the sender's, in this
/// order (the first the sender was seen sending decides), each with
/// whether it travelled on the new path.
fn identity_frames(h: &Handover) -> Vec<(&'static str, u64, bool)> {
    let mut out: Vec<(&'static str, u64, bool)> = Vec::with_capacity(3);
    let mut add = |what, frame: Option<u64>, new_path| {
        if let Some(f) = frame {
            if out.iter().all(|&(_, g, _)| g != f) {
                out.push((what, f, new_path));
            }
        }
    };
    add(
        "first DATA on the new path",
        h.data_interrupt.to.and_then(|p| p.frame),
        true,
    );
    add("switch", Some(h.switch_frame), true);
    add(
        "last DATA on the old path",
        h.data_interrupt.from.and_then(|p| p.frame),
        false,
    );
    out
}

fn paths(h: &Handover) -> (IpAddr, IpAddr, IpAddr, IpAddr) {
    (h.from_src, h.from_dst, h.to_src, h.to_dst)
}

/// The handover of the sender's point (`list`, `at_sender[i]`: its DATA is
/// sent there) a DATA packet it sent (`c`) belongs to. Sent on the new
/// path: the latest handover to that path whose DATA had begun there by
/// then. Sent on the old path: the earliest handover away from that path
/// after it. Either way no other handover of the same association and
/// direction may lie between (the DATA had moved on).
fn sent_in(
    list: &[Handover],
    at_sender: &[bool],
    c: &Crossing,
    new_path: bool,
    sn: &str,
) -> Result<usize, String> {
    let t = c.sender_time_ns;
    let senders = || (0..list.len()).filter(|&i| at_sender[i]);
    let found = if new_path {
        senders()
            .filter(|&i| {
                let h = &list[i];
                (h.to_src, h.to_dst) == (c.src, c.dst) && new_path_start_ns(h) <= t
            })
            .max_by_key(|&i| new_path_start_ns(&list[i]))
    } else {
        senders()
            .filter(|&i| {
                let h = &list[i];
                (h.from_src, h.from_dst) == (c.src, c.dst) && h.switch_time.0 >= t
            })
            .min_by_key(|&i| list[i].switch_time.0)
    };
    let Some(j) = found else {
        return Err(if new_path {
            format!(
                "{sn}'s analysis has no handover to {} → {} begun by then",
                c.src, c.dst
            )
        } else {
            format!(
                "{sn}'s analysis has no handover away from {} → {} after it",
                c.src, c.dst
            )
        });
    };
    let h = &list[j];
    let between = senders().find(|&i| {
        let o = &list[i];
        if i == j || (o.association, o.sender) != (h.association, h.sender) {
            return false;
        }
        if new_path {
            let start = new_path_start_ns(o);
            start > new_path_start_ns(h) && start <= t
        } else {
            o.switch_time.0 >= t && o.switch_time.0 < h.switch_time.0
        }
    });
    match between {
        Some(i) if new_path => Err(format!(
            "by then {sn}'s DATA had moved on from its handover at {sn} frame {} (to its handover at {sn} frame {})",
            h.switch_frame, list[i].switch_frame
        )),
        Some(i) => Err(format!(
            "{sn}'s handover at {sn} frame {} came between it and {sn}'s handover at {sn} frame {} away from {} → {}",
            list[i].switch_frame, h.switch_frame, c.src, c.dst
        )),
        None => Ok(j),
    }
}

/// The records of two points' handovers: one per handover both points
/// saw, and every other handover of either point as one-sided.
#[derive(Debug, Clone, Default)]
pub struct TwoSided {
    /// The handovers both points saw.
    pub records: Vec<TwoSidedHandover>,
    /// The handovers only one point's analysis found, with why.
    pub one_sided: Vec<OneSidedHandover>,
}

/// Puts each receiver's handover with the sender's handover its DATA was
/// sent in: the first of its first DATA on the new path, its switch and
/// its last DATA on the old path that the sender's point was seen sending
/// (`sent_in`). They must have the same old and new path, and each
/// sender's handover takes one receiver's (the earliest). No time window:
/// a failover's two switches lie up to the whole failover time apart.
/// Every handover of each point is in exactly one two-sided or one-sided
/// record.
pub(crate) fn two_sided(
    names: &[String; 2],
    report: &PointsReport,
    handovers: [&[Handover]; 2],
    found: &Correspondence,
) -> TwoSided {
    let clock = &report.clock;
    let ctx = Context {
        names,
        clock,
        found,
    };
    let data_sender: [Vec<Option<usize>>; 2] = [0, 1].map(|p| {
        handovers[p]
            .iter()
            .map(|h| data_sender_point(report, h))
            .collect()
    });
    let at_sender: [Vec<bool>; 2] =
        [0, 1].map(|p| data_sender[p].iter().map(|&d| d == Some(p)).collect());
    let mut receivers: Vec<(usize, usize)> = (0..2)
        .flat_map(|r| {
            data_sender[r]
                .iter()
                .enumerate()
                .filter(move |(_, &d)| d == Some(1 - r))
                .map(move |(i, _)| (r, i))
        })
        .collect();
    receivers.sort_by_key(|&(r, i)| to_a(clock, r, handovers[r][i].switch_time.0));

    // (sender point, index) → the receiver's handover index holding it.
    let mut held: FxHashMap<(usize, usize), usize> = FxHashMap::default();
    let mut held_receivers: FxHashSet<(usize, usize)> = FxHashSet::default();
    // Why a handover is one-sided, by (point, index).
    let mut reasons: FxHashMap<(usize, usize), String> = FxHashMap::default();
    let mut out = TwoSided::default();
    for (r, i) in receivers {
        let s = 1 - r;
        let (rn, sn) = (&names[r], &names[s]);
        let hr = &handovers[r][i];
        let frames = identity_frames(hr);
        let traced = frames.iter().find_map(|&(what, f, new_path)| {
            found
                .crossing(r, f)
                .filter(|c| c.sender_point == s)
                .map(|c| (what, f, new_path, c))
        });
        let Some((what, rf, new_path, c)) = traced else {
            let listed: Vec<String> = frames
                .iter()
                .map(|(what, f, _)| format!("{what}, {rn} frame {f}"))
                .collect();
            reasons.insert(
                (r, i),
                format!(
                    "none of the DATA it rests on ({}) was seen at {sn}, where it was sent",
                    listed.join("; ")
                ),
            );
            continue;
        };
        let sf = c.sender_frame;
        let j = match sent_in(handovers[s], &at_sender[s], c, new_path, sn) {
            Ok(j) => j,
            Err(why) => {
                reasons.insert(
                    (r, i),
                    format!("its {what} ({rn} frame {rf}) is {sn} frame {sf}: {why}"),
                );
                continue;
            }
        };
        let hs = &handovers[s][j];
        if paths(hs) != paths(hr) {
            reasons.insert(
                (r, i),
                format!(
                    "its {what} ({rn} frame {rf}) is {sn} frame {sf}, sent in {sn}'s handover at {sn} frame {} from {} → {} to {} → {}: other paths",
                    hs.switch_frame, hs.from_src, hs.from_dst, hs.to_src, hs.to_dst
                ),
            );
            reasons.entry((s, j)).or_insert_with(|| {
                format!(
                    "{rn}'s handover at {rn} frame {} traces to it ({sn} frame {sf}) but has other paths ({} → {} to {} → {})",
                    hr.switch_frame, hr.from_src, hr.from_dst, hr.to_src, hr.to_dst
                )
            });
            continue;
        }
        if let Some(&k) = held.get(&(s, j)) {
            reasons.insert(
                (r, i),
                format!(
                    "its {what} ({rn} frame {rf}) is {sn} frame {sf}, sent in {sn}'s handover at {sn} frame {}, which {rn}'s handover at {rn} frame {} already holds",
                    hs.switch_frame, handovers[r][k].switch_frame
                ),
            );
            continue;
        }
        held.insert((s, j), i);
        held_receivers.insert((r, i));
        let sender = ctx.sender_side(hs, s);
        let receiver = ctx.receiver_side(hr, r, s);
        out.records.push(TwoSidedHandover {
            sender_point: names[s].clone(),
            receiver_point: names[r].clone(),
            sender_association: hs.association,
            receiver_association: hr.association,
            from_src: hs.from_src,
            from_dst: hs.from_dst,
            to_src: hs.to_src,
            to_dst: hs.to_dst,
            sender_class: hs.class,
            receiver_class: hr.class,
            sender_switch_frame: hs.switch_frame,
            receiver_switch_frame: hr.switch_frame,
            sender_switch_ns: to_a(clock, s, hs.switch_time.0),
            receiver_switch_ns: to_a(clock, r, hr.switch_time.0),
            asconf: ctx.asconf(hs, s, hr, r),
            sender,
            receiver,
        });
    }
    out.records.sort_by_key(|t| t.sender_switch_ns);

    for p in 0..2 {
        let other = 1 - p;
        let (pn, on) = (&names[p], &names[other]);
        for (i, h) in handovers[p].iter().enumerate() {
            if held.contains_key(&(p, i)) || held_receivers.contains(&(p, i)) {
                continue;
            }
            let reason = match data_sender[p][i] {
                None => "no packet of its paths was seen at both points, so which point sent its DATA is unknown".to_owned(),
                Some(_) => match reasons.remove(&(p, i)) {
                    Some(why) => why,
                    // Only a sender's handover is left without a reason.
                    None => {
                        let fate = h
                            .data_interrupt
                            .to
                            .and_then(|t| t.frame)
                            .map(|f| match found.crossing(p, f).filter(|c| c.sender_point == p) {
                                Some(c) => format!(
                                    "; its first DATA on the new path ({pn} frame {f}) arrived as {on} frame {}",
                                    c.receiver_frame
                                ),
                                None if found.lost.contains(&(p, f)) => format!(
                                    "; its first DATA on the new path ({pn} frame {f}) was not seen at {on}"
                                ),
                                None => String::new(),
                            })
                            .unwrap_or_default();
                        format!(
                            "no handover of {on}'s analysis traces to this one (by the DATA it rests on, as {pn} sent it){fate}"
                        )
                    }
                },
            };
            out.one_sided.push(OneSidedHandover {
                point: pn.clone(),
                other_point: on.clone(),
                at_data_sender: data_sender[p][i].map(|s| s == p),
                association: h.association,
                from_src: h.from_src,
                from_dst: h.from_dst,
                to_src: h.to_src,
                to_dst: h.to_dst,
                class: h.class,
                switch_frame: h.switch_frame,
                switch_ns: to_a(clock, p, h.switch_time.0),
                interrupt_ns: h.data_interrupt.nanos.map(|n| n.0),
                reason,
            });
        }
    }
    out.one_sided.sort_by_key(|o| o.switch_ns);
    out
}

/// Pairs the two points ([`crate::analyze_points`]) and puts each
/// handover both points' analyses found together: the pairing's samples
/// and records still stream to `sink`; the summary and the two-sided and
/// one-sided records are returned.
pub fn analyze_two_sided(
    inputs: &[crate::PointInput],
    options: &crate::PointsOptions,
    handovers: [&[Handover]; 2],
    sink: &mut dyn PointsSink,
) -> Result<(PointsReport, TwoSided), crate::PointsError> {
    if inputs.len() != 2 {
        return Err(crate::PointsError::PointCount(inputs.len()));
    }
    let interest = FramesOfInterest::of(handovers);
    let mut collect = Collect::new(&interest, options.window_ns, sink);
    let report = crate::analyze_points(inputs, options, &mut collect)?;
    let found = collect.finish();
    let names = [inputs[0].name.clone(), inputs[1].name.clone()];
    let records = two_sided(&names, &report, handovers, &found);
    Ok((report, records))
}

/// A handover one point's analysis found and no two-sided record holds,
/// with the reason: the other point's capture began later or ended
/// earlier, its analysis found no handover resting on the same DATA, or
/// found one with other paths. Reported, never dropped: every handover of
/// each point is in exactly one two-sided or one-sided record.
#[derive(Debug, Clone, Serialize)]
pub struct OneSidedHandover {
    /// The name of the point that saw it.
    pub point: String,
    /// The name of the point that did not.
    pub other_point: String,
    /// Whether `point` is where the DATA that moved was sent (`true`) or
    /// received (`false`), from the direction its paths' packets travel
    /// between the points; null when the pairing saw none of them.
    pub at_data_sender: Option<bool>,
    /// The association's id in `point`'s analysis.
    pub association: AssocId,
    /// The old path's source address.
    pub from_src: IpAddr,
    /// The old path's destination address.
    pub from_dst: IpAddr,
    /// The new path's source address.
    pub to_src: IpAddr,
    /// The new path's destination address.
    pub to_dst: IpAddr,
    /// The switch's class in `point`'s analysis.
    pub class: SwitchClass,
    /// The switch frame in `point`'s capture.
    pub switch_frame: u64,
    /// The switch frame's time on the first point's clock.
    pub switch_ns: i64,
    /// The analyzer's data interrupt at `point`, on its own clock.
    pub interrupt_ns: Option<i64>,
    /// Why no two-sided record holds it: what was looked for and not found.
    pub reason: String,
}
