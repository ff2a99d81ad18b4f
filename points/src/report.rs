//! Pass 2: every packet paired on the corrected clock; one-way delays,
//! losses and retransmissions streamed to a sink, per-path summaries and
//! the association match returned.

use crate::assoc::{match_associations, AssociationMatch, AssociationTable};
use crate::clock::{ClockEstimate, Direction};
use crate::observe::Observation;
use crate::pairing::{PairHandler, Stamped};
use crate::{Directions, PathKey};
use rustc_hash::FxHashMap;
use sctp_handover::capture::ReadOutcome;
use sctp_handover::events::RetransmissionReason;
use sctp_handover::wire::sctp_chunk::chunk_type;
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};
use std::net::IpAddr;

/// Identical copies of a packet (a retransmission made of the same
/// chunks) are told apart by the delay they would imply: a copy is taken
/// for the one that arrived if it implies no less than the path's least
/// one-way delay minus this much.
const FLOOR_TOLERANCE_NS: f64 = 1_000_000.0;

/// One packet seen at both points: its one-way delay on the corrected
/// clock.
#[derive(Debug, Clone, Serialize)]
pub struct OwdSample {
    /// When the sender's point saw it, on point A's clock (ns since the
    /// epoch).
    pub sent_ns: i64,
    /// The packet's IP source address.
    pub src: IpAddr,
    /// The packet's IP destination address.
    pub dst: IpAddr,
    /// Which way between the points it travelled.
    pub direction: Direction,
    /// The one-way delay: receiver's capture time (on A's clock, corrected)
    /// minus sender's, in ns.
    pub owd_ns: i64,
    /// The packet's frame in the sender's point's capture.
    pub sender_frame: u64,
    /// The packet's frame in the receiver's point's capture.
    pub receiver_frame: u64,
    /// Its chunks, e.g. `SACK+DATA(21)`.
    pub chunks: String,
    /// Identical copies were waiting: paired by the delay floor.
    pub ambiguous: bool,
    /// The two capture times on each point's own clock (ns since the
    /// epoch): differences of these are free of the offset estimate, which
    /// the two-sided handover records rely on (docs/points.md).
    #[serde(skip)]
    pub sender_time_ns: i64,
    /// When the receiver's point saw it, on that point's own clock.
    #[serde(skip)]
    pub receiver_time_ns: i64,
    /// It carries DATA or I-DATA chunks.
    #[serde(skip)]
    pub carries_data: bool,
    /// Its verification tag: packets with one tag belong to one
    /// association and travel one way (RFC 9260 §8.5).
    #[serde(skip)]
    pub verification_tag: u32,
}

/// Which point missed a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LossKind {
    /// Seen where it was sent, never where it was going: lost on the way.
    NotSeenAtReceiver,
    /// Seen where it was going, never where it came from: the sender's
    /// capture missed it (or it was sent by something between the points).
    NotSeenAtSender,
}

/// A packet only one point saw.
#[derive(Debug, Clone, Serialize)]
pub struct Loss {
    /// Which point did not see it.
    pub kind: LossKind,
    /// On point A's clock.
    pub time_ns: i64,
    /// The name of the point that saw it.
    pub seen_at: String,
    /// Its frame in that point's capture.
    pub frame: u64,
    /// Its IP source address.
    pub src: IpAddr,
    /// Its IP destination address.
    pub dst: IpAddr,
    /// Which way between the points it was going.
    pub direction: Direction,
    /// Its chunks, e.g. `SACK+DATA(21)`.
    pub chunks: String,
    /// The TSNs of its DATA chunks (empty when it carries none).
    pub data_tsns: Vec<u32>,
    /// When the point that saw it did, on that point's own clock.
    #[serde(skip)]
    pub point_time_ns: i64,
    /// Its verification tag (the association and direction it belongs to).
    #[serde(skip)]
    pub verification_tag: u32,
}

/// A DATA chunk sent again (seen at its sender's point), and whether an
/// earlier transmission reached the other point: if one did, the
/// retransmission was spurious.
#[derive(Debug, Clone, Serialize)]
pub struct Retransmission {
    /// On point A's clock.
    pub sent_ns: i64,
    /// Its frame in the sender's point's capture.
    pub frame: u64,
    /// Its IP source address.
    pub src: IpAddr,
    /// Its IP destination address.
    pub dst: IpAddr,
    /// Which way between the points it was going.
    pub direction: Direction,
    /// The TSN sent again.
    pub tsn: u32,
    /// 2 for the first retransmission.
    pub transmission: u32,
    /// An earlier transmission arrived at the other point.
    pub spurious: bool,
    /// Why the sender sent it again, as the analysis of the sender's
    /// point's capture infers it (`t3_expiry`, `fast_retransmit`,
    /// `unknown`: the analyzer's [`RetransmissionReason`]).
    pub reason: RetransmissionReason,
    /// When the first earlier transmission to arrive did (A's clock).
    pub earlier_arrived_ns: Option<i64>,
    /// This retransmission itself arrived.
    pub arrived: bool,
    /// This retransmission and the TSN's first transmission seen (its
    /// original) on the sender's point's own clock, and the original's
    /// frame: the two-sided records time retransmission waits from these.
    #[serde(skip)]
    pub sender_time_ns: i64,
    /// The original's frame in the sender's point's capture.
    #[serde(skip)]
    pub original_frame: u64,
    /// When the sender's point saw the original, on its own clock.
    #[serde(skip)]
    pub original_sender_time_ns: i64,
}

/// Where the samples and records go as they are found.
pub trait PointsSink {
    /// One packet seen at both points.
    fn owd(&mut self, _sample: &OwdSample) {}
    /// One packet seen at one point only.
    fn loss(&mut self, _loss: &Loss) {}
    /// One retransmission seen at its sender's point.
    fn retransmission(&mut self, _r: &Retransmission) {}
}

/// A sink that keeps nothing (summary only).
impl PointsSink for () {}

/// One path in one direction.
#[derive(Debug, Clone, Serialize)]
pub struct PathSummary {
    /// The path's source address.
    pub src: IpAddr,
    /// The path's destination address.
    pub dst: IpAddr,
    /// Which way between the points its packets travel.
    pub direction: Direction,
    /// Point names: sender → receiver.
    pub from: String,
    /// The receiving point's name.
    pub to: String,
    /// Packets seen at both points.
    pub paired: u64,
    /// The smallest one-way delay, in ns; None when none was paired.
    pub owd_min_ns: Option<i64>,
    /// The mean one-way delay, in ns; None when none was paired.
    pub owd_mean_ns: Option<f64>,
    /// The largest one-way delay, in ns; None when none was paired.
    pub owd_max_ns: Option<i64>,
    /// A-clock time of the first and last packet sent on the path.
    pub first_ns: Option<i64>,
    /// A-clock time of the last packet sent on the path; None when none was.
    pub last_ns: Option<i64>,
    /// Packets sent on the path that the receiver's point never saw.
    pub not_seen_at_receiver: u64,
    /// Packets that arrived on the path that the sender's point never saw.
    pub not_seen_at_sender: u64,
    /// DATA retransmissions sent on the path.
    pub retransmissions: u64,
    /// Of those, the retransmissions whose earlier transmission had arrived.
    pub spurious_retransmissions: u64,
    /// The retransmissions by why the sender sent them (the names of
    /// [`RetransmissionReason`]; a reason none had is left out).
    pub retransmissions_by_reason: BTreeMap<&'static str, u64>,
}

/// One capture point and how its capture was read.
#[derive(Debug, Clone, Serialize)]
pub struct PointSummary {
    /// The point's name.
    pub name: String,
    /// Its capture file.
    pub path: String,
    /// Frames read from it.
    pub frames: u64,
    /// SCTP packets observed in it.
    pub sctp_packets: u64,
    /// Why reading stopped early (truncated or corrupt tail); None when the
    /// capture ended cleanly.
    pub warning: Option<String>,
}

/// Everything but the streamed samples and records.
#[derive(Debug, Clone, Serialize)]
pub struct PointsReport {
    /// Each point, in `--point` order.
    pub points: Vec<PointSummary>,
    /// The estimated offset and drift of B's clock against A's.
    pub clock: ClockEstimate,
    /// The associations and which points saw them.
    pub associations: Vec<AssociationMatch>,
    /// Each path and direction.
    pub paths: Vec<PathSummary>,
    /// Packets seen at both points.
    pub paired: u64,
    /// Paired among identical copies by the delay floor.
    pub ambiguous_pairs: u64,
    /// Packets seen at their sender's point only.
    pub not_seen_at_receiver: u64,
    /// Packets seen at their receiver's point only.
    pub not_seen_at_sender: u64,
    /// Packets whose direction could not be told (a tag never paired).
    pub direction_unknown: u64,
    /// DATA retransmissions seen at their sender's point.
    pub retransmissions: u64,
    /// Of those, the retransmissions whose earlier transmission had arrived.
    pub spurious_retransmissions: u64,
    /// The pairing window used ([`crate::PointsOptions::window_ns`]).
    pub window_ns: i64,
    /// Most packets waiting for their copy at once: the memory bound.
    pub peak_waiting: usize,
}

#[derive(Debug, Default)]
struct PathAcc {
    paired: u64,
    owd_min: Option<i64>,
    owd_max: Option<i64>,
    owd_sum: f64,
    first: Option<i64>,
    last: Option<i64>,
    not_seen_at_receiver: u64,
    not_seen_at_sender: u64,
    retransmissions: u64,
    spurious: u64,
    by_reason: BTreeMap<&'static str, u64>,
}

impl PathAcc {
    fn sent(&mut self, t: i64) {
        self.first = Some(self.first.map_or(t, |f| f.min(t)));
        self.last = Some(self.last.map_or(t, |l| l.max(t)));
    }
}

/// One transmission of a TSN at its sender's point.
#[derive(Debug, Clone)]
struct Transmission {
    sent_ns: i64,
    /// On the sender's point's own clock.
    own_ns: i64,
    frame: u64,
    path: PathKey,
    /// For a retransmission: why, as the tracker at the sender's point
    /// classed it; None when it classed the chunk new.
    reason: Option<RetransmissionReason>,
    /// None until pairing resolves it; then the arrival time or None.
    outcome: Option<Option<i64>>,
}

#[derive(Debug, Default)]
struct TsnRecord {
    transmissions: Vec<Transmission>,
    /// The receiver's cumulative ack has passed it: no more transmissions.
    acked: bool,
}

impl TsnRecord {
    fn resolved(&self) -> bool {
        self.transmissions.iter().all(|t| t.outcome.is_some())
    }
}

/// The DATA of one direction of one association (by its ports).
#[derive(Debug, Default)]
struct Flow {
    /// TSNs in order of first transmission, for the cumulative ack.
    order: VecDeque<u32>,
    records: FxHashMap<u32, TsnRecord>,
}

type FlowKey = (u16, u16, Direction);

/// RFC 1982 serial comparison on 32-bit TSNs (RFC 9260 §1.6).
fn tsn_le(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) <= 0
}

pub(crate) struct Reporter<'s> {
    names: [String; 2],
    clock: ClockEstimate,
    directions: Directions,
    floors: FxHashMap<(PathKey, Direction), f64>,
    sink: &'s mut dyn PointsSink,
    paths: BTreeMap<(PathKey, Direction), PathAcc>,
    flows: FxHashMap<FlowKey, Flow>,
    tables: [AssociationTable; 2],
    observed: [u64; 2],
    paired: u64,
    ambiguous: u64,
    not_seen_at_receiver: u64,
    not_seen_at_sender: u64,
    direction_unknown: u64,
    retransmissions: u64,
    spurious: u64,
}

impl<'s> Reporter<'s> {
    pub(crate) fn new(
        names: [String; 2],
        clock: ClockEstimate,
        directions: Directions,
        floors: FxHashMap<(PathKey, Direction), f64>,
        sink: &'s mut dyn PointsSink,
    ) -> Self {
        Reporter {
            names,
            clock,
            directions,
            floors,
            sink,
            paths: BTreeMap::new(),
            flows: FxHashMap::default(),
            tables: Default::default(),
            observed: [0; 2],
            paired: 0,
            ambiguous: 0,
            not_seen_at_receiver: 0,
            not_seen_at_sender: 0,
            direction_unknown: 0,
            retransmissions: 0,
            spurious: 0,
        }
    }

    fn flow_key(obs: &Observation, d: Direction) -> FlowKey {
        (obs.key.src_port, obs.key.dst_port, d)
    }

    /// A transmission's fate is known: record it, and finish the TSN if
    /// nothing more can happen to it.
    fn resolve(&mut self, send: &Stamped, d: Direction, arrived: Option<i64>) {
        if send.obs.chunks.data_tsns.is_empty() {
            return;
        }
        let key = Self::flow_key(&send.obs, d);
        let mut done = Vec::new();
        if let Some(flow) = self.flows.get_mut(&key) {
            for &tsn in &send.obs.chunks.data_tsns {
                let Some(record) = flow.records.get_mut(&tsn) else {
                    continue;
                };
                if let Some(t) = record
                    .transmissions
                    .iter_mut()
                    .find(|t| t.frame == send.obs.frame)
                {
                    t.outcome = Some(arrived);
                }
                if record.acked && record.resolved() {
                    done.push(tsn);
                }
            }
        }
        self.finish_done(key, d, &done);
    }

    fn finish_done(&mut self, key: FlowKey, d: Direction, done: &[u32]) {
        let mut records = Vec::new();
        if let Some(flow) = self.flows.get_mut(&key) {
            for tsn in done {
                if let Some(r) = flow.records.remove(tsn) {
                    records.push((*tsn, r));
                }
            }
        }
        for (tsn, r) in records {
            self.finish_tsn(d, tsn, r);
        }
    }

    fn finish_tsn(&mut self, d: Direction, tsn: u32, mut record: TsnRecord) {
        record.transmissions.sort_by_key(|t| t.sent_ns);
        let (original_frame, original_sender_time_ns) = record
            .transmissions
            .first()
            .map_or((0, 0), |t| (t.frame, t.own_ns));
        let mut earliest_arrival: Option<i64> = None;
        for (i, t) in record.transmissions.iter().enumerate() {
            if i > 0 {
                let spurious = earliest_arrival.is_some();
                let r = Retransmission {
                    sent_ns: t.sent_ns,
                    frame: t.frame,
                    src: t.path.0,
                    dst: t.path.1,
                    direction: d,
                    tsn,
                    transmission: u32::try_from(i + 1).unwrap_or(u32::MAX),
                    spurious,
                    // The tracker classed it new (it forgot the TSN, or the
                    // copies came out of order): no reason it can give.
                    reason: t.reason.unwrap_or(RetransmissionReason::Unknown),
                    earlier_arrived_ns: earliest_arrival,
                    arrived: matches!(t.outcome, Some(Some(_))),
                    sender_time_ns: t.own_ns,
                    original_frame,
                    original_sender_time_ns,
                };
                self.retransmissions += 1;
                self.spurious += u64::from(spurious);
                let acc = self.paths.entry((t.path, d)).or_default();
                acc.retransmissions += 1;
                acc.spurious += u64::from(spurious);
                *acc.by_reason.entry(r.reason.as_str()).or_default() += 1;
                self.sink.retransmission(&r);
            }
            if let Some(Some(arrival)) = t.outcome {
                earliest_arrival = Some(earliest_arrival.map_or(arrival, |e| e.min(arrival)));
            }
        }
    }

    fn data_sent(&mut self, packet: &Stamped, d: Direction) {
        let key = Self::flow_key(&packet.obs, d);
        let flow = self.flows.entry(key).or_default();
        for &tsn in &packet.obs.chunks.data_tsns {
            let record = flow.records.entry(tsn).or_insert_with(|| {
                flow.order.push_back(tsn);
                TsnRecord::default()
            });
            record.transmissions.push(Transmission {
                sent_ns: packet.corrected_ns,
                own_ns: packet.obs.time.0,
                frame: packet.obs.frame,
                path: (packet.obs.key.src, packet.obs.key.dst),
                reason: packet.obs.retransmission_reason(tsn),
                outcome: None,
            });
        }
    }

    /// A SACK reached the data sender's point: every TSN up to its
    /// cumulative ack is done being sent.
    fn cumulative_ack(&mut self, sack: &Stamped, sack_direction: Direction, cum: u32) {
        let d = sack_direction.reverse();
        let key = (sack.obs.key.dst_port, sack.obs.key.src_port, d);
        let mut done = Vec::new();
        if let Some(flow) = self.flows.get_mut(&key) {
            while let Some(&tsn) = flow.order.front() {
                if !tsn_le(tsn, cum) {
                    break;
                }
                flow.order.pop_front();
                if let Some(r) = flow.records.get_mut(&tsn) {
                    r.acked = true;
                    if r.resolved() {
                        done.push(tsn);
                    }
                }
            }
        }
        self.finish_done(key, d, &done);
    }

    pub(crate) fn finish(
        mut self,
        outcomes: [ReadOutcome; 2],
        peak_waiting: usize,
        window_ns: i64,
    ) -> PointsReport {
        let flows: Vec<(FlowKey, Flow)> = self.flows.drain().collect();
        for ((_, _, d), mut flow) in flows {
            let mut tsns: Vec<u32> = flow.records.keys().copied().collect();
            tsns.sort_unstable();
            for tsn in tsns {
                if let Some(r) = flow.records.remove(&tsn) {
                    self.finish_tsn(d, tsn, r);
                }
            }
        }
        let paths = self
            .paths
            .iter()
            .map(|(&((src, dst), d), acc)| PathSummary {
                src,
                dst,
                direction: d,
                from: self.names[d.sender()].clone(),
                to: self.names[d.receiver()].clone(),
                paired: acc.paired,
                owd_min_ns: acc.owd_min,
                owd_mean_ns: (acc.paired > 0).then(|| acc.owd_sum / acc.paired as f64),
                owd_max_ns: acc.owd_max,
                first_ns: acc.first,
                last_ns: acc.last,
                not_seen_at_receiver: acc.not_seen_at_receiver,
                not_seen_at_sender: acc.not_seen_at_sender,
                retransmissions: acc.retransmissions,
                spurious_retransmissions: acc.spurious,
                retransmissions_by_reason: acc.by_reason.clone(),
            })
            .collect();
        let [oa, ob] = outcomes;
        let points = [oa, ob]
            .into_iter()
            .enumerate()
            .map(|(i, o)| PointSummary {
                name: self.names[i].clone(),
                path: String::new(),
                frames: o.frames,
                sctp_packets: self.observed[i],
                warning: o.warning,
            })
            .collect();
        PointsReport {
            points,
            clock: self.clock,
            associations: match_associations(&self.tables),
            paths,
            paired: self.paired,
            ambiguous_pairs: self.ambiguous,
            not_seen_at_receiver: self.not_seen_at_receiver,
            not_seen_at_sender: self.not_seen_at_sender,
            direction_unknown: self.direction_unknown,
            retransmissions: self.retransmissions,
            spurious_retransmissions: self.spurious,
            window_ns,
            peak_waiting,
        }
    }
}

impl PairHandler for Reporter<'_> {
    fn observed(&mut self, packet: &Stamped) {
        let point = packet.obs.point;
        self.observed[point] += 1;
        self.tables[point].observe(&packet.obs);
        let Some(d) = self.directions.of(&packet.obs) else {
            return;
        };
        if point == d.sender() && !packet.obs.chunks.data_tsns.is_empty() {
            self.data_sent(packet, d);
        }
        if point == d.receiver()
            && (packet.obs.chunks.has(chunk_type::SACK)
                || packet.obs.chunks.has(chunk_type::NR_SACK))
        {
            if let Some(cum) = packet.obs.chunks.cumulative_tsn_ack {
                self.cumulative_ack(packet, d, cum);
            }
        }
    }

    fn choose(&self, arriving: &Stamped, candidates: &[&Stamped]) -> usize {
        let Some(d) = self.directions.of(&arriving.obs) else {
            return candidates.len() - 1;
        };
        if arriving.obs.point != d.receiver() {
            // The send seen after its arrival: the clock is off; the
            // latest copy is the nearest.
            return candidates.len() - 1;
        }
        let path = (arriving.obs.key.src, arriving.obs.key.dst);
        let floor = self.floors.get(&(path, d)).copied().unwrap_or(0.0);
        // The latest send that implies no less than the floor.
        candidates
            .iter()
            .rposition(|c| {
                (arriving.corrected_ns - c.corrected_ns) as f64 >= floor - FLOOR_TOLERANCE_NS
            })
            .unwrap_or(0)
    }

    fn paired(&mut self, earlier: Stamped, later: Stamped, ambiguous: bool) {
        let d = self
            .directions
            .of(&earlier.obs)
            .unwrap_or(if earlier.obs.point == 0 {
                Direction::AToB
            } else {
                Direction::BToA
            });
        let (send, recv) = if earlier.obs.point == d.sender() {
            (earlier, later)
        } else {
            (later, earlier)
        };
        let owd = recv.corrected_ns - send.corrected_ns;
        self.paired += 1;
        self.ambiguous += u64::from(ambiguous);
        let path = (send.obs.key.src, send.obs.key.dst);
        let acc = self.paths.entry((path, d)).or_default();
        acc.paired += 1;
        acc.owd_min = Some(acc.owd_min.map_or(owd, |m| m.min(owd)));
        acc.owd_max = Some(acc.owd_max.map_or(owd, |m| m.max(owd)));
        acc.owd_sum += owd as f64;
        acc.sent(send.corrected_ns);
        self.sink.owd(&OwdSample {
            sent_ns: send.corrected_ns,
            src: path.0,
            dst: path.1,
            direction: d,
            owd_ns: owd,
            sender_frame: send.obs.frame,
            receiver_frame: recv.obs.frame,
            chunks: send.obs.chunks.label(),
            ambiguous,
            sender_time_ns: send.obs.time.0,
            receiver_time_ns: recv.obs.time.0,
            carries_data: !send.obs.chunks.data_tsns.is_empty(),
            verification_tag: send.obs.key.verification_tag,
        });
        self.resolve(&send, d, Some(recv.corrected_ns));
    }

    fn unmatched(&mut self, packet: Stamped) {
        let Some(d) = self.directions.of(&packet.obs) else {
            self.direction_unknown += 1;
            return;
        };
        let at_sender = packet.obs.point == d.sender();
        let kind = if at_sender {
            self.not_seen_at_receiver += 1;
            LossKind::NotSeenAtReceiver
        } else {
            self.not_seen_at_sender += 1;
            LossKind::NotSeenAtSender
        };
        let path = (packet.obs.key.src, packet.obs.key.dst);
        let acc = self.paths.entry((path, d)).or_default();
        if at_sender {
            acc.not_seen_at_receiver += 1;
            acc.sent(packet.corrected_ns);
        } else {
            acc.not_seen_at_sender += 1;
        }
        self.sink.loss(&Loss {
            kind,
            time_ns: packet.corrected_ns,
            seen_at: self.names[packet.obs.point].clone(),
            frame: packet.obs.frame,
            src: path.0,
            dst: path.1,
            direction: d,
            chunks: packet.obs.chunks.label(),
            data_tsns: packet.obs.chunks.data_tsns.clone(),
            point_time_ns: packet.obs.time.0,
            verification_tag: packet.obs.key.verification_tag,
        });
        if at_sender {
            self.resolve(&packet, d, None);
        }
    }
}
