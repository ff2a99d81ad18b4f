//! What a per-capture section draws, collected while the capture streams:
//! every DATA chunk (decimated past a cap), the SACKs' cumulative TSN, the
//! heartbeat RTTs and the events of the associations worth drawing.
//!
//! Memory is bounded: per alive association at most [`MAX_POINTS`] points
//! per series, and at most `max_associations` finished associations kept.

use rustc_hash::FxHashMap;
use sctp_handover::analysis::{AssociationPart, AssociationReport, FileReport, ReportSink};
use sctp_handover::events::{AssocId, EndpointId, Event, EventKind, Observation, PathId};
use sctp_handover::handover::Handover;
use sctp_handover::time::Timestamp;
use std::net::IpAddr;

/// Points kept per series (new DATA, retransmissions, cumulative acks) of
/// one data direction; beyond it every other point is dropped and the
/// stride doubles, so a long association still draws its whole span.
pub const MAX_POINTS: usize = 4096;

/// One DATA chunk on the TSN-versus-time chart.
#[derive(Debug, Clone, Copy)]
pub struct DataPoint {
    /// The frame that carried the chunk (1-based).
    pub frame: u64,
    /// Its capture time.
    pub time: Timestamp,
    /// Its TSN.
    pub tsn: u32,
    /// The path it travelled on (its colour in the chart).
    pub path: PathId,
}

/// A SACK's cumulative TSN ack.
#[derive(Debug, Clone, Copy)]
pub struct AckPoint {
    /// The SACK's frame (1-based).
    pub frame: u64,
    /// Its capture time.
    pub time: Timestamp,
    /// Its cumulative TSN ack.
    pub tsn: u32,
}

/// A series that keeps every `stride`-th point once it is full.
#[derive(Debug, Clone)]
pub struct Decimated<T> {
    /// The points kept, in arrival order.
    pub points: Vec<T>,
    /// Points offered, kept or not.
    pub seen: u64,
    stride: u64,
}

impl<T> Default for Decimated<T> {
    fn default() -> Self {
        Decimated {
            points: Vec::new(),
            seen: 0,
            stride: 1,
        }
    }
}

impl<T> Decimated<T> {
    fn push(&mut self, point: T) {
        self.seen += 1;
        if (self.seen - 1) % self.stride != 0 {
            return;
        }
        if self.points.len() >= MAX_POINTS {
            let mut i = 0;
            self.points.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.stride *= 2;
            if (self.seen - 1) % self.stride != 0 {
                return;
            }
        }
        self.points.push(point);
    }

    /// Points dropped to stay under the cap.
    pub fn dropped(&self) -> u64 {
        self.seen - self.points.len() as u64
    }
}

/// One data direction (DATA from `sender`).
#[derive(Debug, Clone, Default)]
pub struct DirectionTrace {
    /// First transmissions of TSNs.
    pub new_data: Decimated<DataPoint>,
    /// DATA chunks whose TSN had been sent before.
    pub retransmissions: Decimated<DataPoint>,
    /// The cumulative TSN acks of the SACKs answering this direction.
    pub cumulative_acks: Decimated<AckPoint>,
}

impl DirectionTrace {
    /// Whether the direction sent no DATA.
    pub fn is_empty(&self) -> bool {
        self.new_data.seen == 0 && self.retransmissions.seen == 0
    }
    /// The TSN the chart counts from (the lowest drawn).
    pub fn base_tsn(&self) -> Option<u32> {
        let first = self
            .new_data
            .points
            .first()
            .or(self.retransmissions.points.first())?
            .tsn;
        // Relative TSNs are signed offsets from the first DATA seen
        // (wrap-safe), so retransmissions below it stay below it.
        let lowest = self
            .retransmissions
            .points
            .iter()
            .chain(&self.new_data.points)
            .map(|p| p.tsn.wrapping_sub(first) as i32)
            .min()
            .unwrap_or(0);
        Some(first.wrapping_add(lowest as u32))
    }
}

/// A path as the legend names it.
#[derive(Debug, Clone)]
pub struct PathLabel {
    /// The path's index in its association.
    pub id: PathId,
    /// Its source address.
    pub src: IpAddr,
    /// Its destination address.
    pub dst: IpAddr,
    /// The endpoint that sends on it (the owner of `src`).
    pub sender: EndpointId,
}

/// A heartbeat round trip, on the path it probed.
#[derive(Debug, Clone, Copy)]
pub struct RttSample {
    /// The HEARTBEAT ACK's frame (1-based).
    pub frame: u64,
    /// The matching HEARTBEAT's frame; None when it was not captured.
    pub request_frame: Option<u64>,
    /// The HEARTBEAT ACK's capture time.
    pub time: Timestamp,
    /// The path probed.
    pub path: PathId,
    /// The round-trip time, in milliseconds.
    pub rtt_ms: f64,
}

/// One finished association, ready to draw.
#[derive(Debug)]
pub struct AssociationTrace {
    /// The association's index in its capture.
    pub id: AssocId,
    /// Its endpoints' ports (endpoint 0, endpoint 1).
    pub ports: (u16, u16),
    /// The capture time of its first packet.
    pub first_time: Timestamp,
    /// The capture time of its last packet.
    pub last_time: Timestamp,
    /// Its paths, for the legends.
    pub paths: Vec<PathLabel>,
    /// Its two data directions, indexed by the DATA sender.
    pub directions: [DirectionTrace; 2],
    /// Its events, in frame order.
    pub events: Vec<Event>,
    /// Its data path switches, in switch order.
    pub handovers: Vec<Handover>,
    /// Its heartbeat round trips, in frame order.
    pub rtt: Vec<RttSample>,
}

/// Everything drawn for one capture.
#[derive(Debug)]
pub struct CaptureTrace {
    /// The input as the report names it.
    pub source: String,
    /// How the capture was read; None when it could not be analysed.
    pub file: Option<FileReport>,
    /// The capture's first frame: times are drawn relative to it.
    pub origin: Option<Timestamp>,
    /// Associations with DATA or handovers, those with handovers first, in
    /// id order within each kind; at most `max_associations`.
    pub associations: Vec<AssociationTrace>,
    /// Associations with DATA left out by the cap.
    pub omitted: u64,
}

/// The [`ReportSink`] that builds a [`CaptureTrace`].
pub struct TraceSink {
    max_associations: usize,
    /// Associations traced at once (their points are kept until they are
    /// finished); later ones are not traced while that many are alive.
    max_alive: usize,
    /// Associations not traced because `max_alive` were.
    pub untraced: u64,
    alive: FxHashMap<AssocId, [DirectionTrace; 2]>,
    /// Events and handovers handed on in parts by long associations still
    /// alive (a trace shows them whole).
    parts: FxHashMap<AssocId, (Vec<Event>, Vec<Handover>)>,
    kept: Vec<AssociationTrace>,
    omitted: u64,
    origin: Option<Timestamp>,
}

impl TraceSink {
    /// A sink that keeps at most `max_associations` finished associations.
    pub fn new(max_associations: usize) -> Self {
        TraceSink {
            max_associations,
            max_alive: (16 * max_associations).max(64),
            untraced: 0,
            alive: FxHashMap::default(),
            parts: FxHashMap::default(),
            kept: Vec::new(),
            omitted: 0,
            origin: None,
        }
    }

    /// The trace of the capture `source`, once the analysis is done
    /// (`file`: its report, None when it failed).
    pub fn finish(mut self, source: String, file: Option<FileReport>) -> CaptureTrace {
        self.kept.sort_by_key(|a| (a.handovers.is_empty(), a.id));
        CaptureTrace {
            source,
            file,
            origin: self.origin,
            associations: self.kept,
            omitted: self.omitted + self.untraced,
        }
    }

    /// The trace of a data direction, None when the association is not
    /// traced (memory stays bounded by `max_alive`).
    fn direction(
        &mut self,
        association: AssocId,
        sender: EndpointId,
    ) -> Option<&mut DirectionTrace> {
        if !self.alive.contains_key(&association) {
            if self.alive.len() >= self.max_alive {
                return None;
            }
            self.alive.insert(association, Default::default());
        }
        self.alive
            .get_mut(&association)
            .map(|d| &mut d[sender.min(1)])
    }
}

impl ReportSink for TraceSink {
    fn first_frame(&mut self, time: Timestamp) {
        self.origin = Some(time);
    }

    fn observe(&mut self, observation: &Observation) {
        match *observation {
            Observation::Data {
                frame,
                time,
                association,
                sender,
                path,
                tsn,
                new,
                ..
            } => {
                let Some(d) = self.direction(association, sender) else {
                    return;
                };
                let p = DataPoint {
                    frame,
                    time,
                    tsn,
                    path,
                };
                if new {
                    d.new_data.push(p);
                } else {
                    d.retransmissions.push(p);
                }
            }
            Observation::Sack {
                frame,
                time,
                association,
                data_sender,
                cumulative_tsn,
                ..
            } => {
                let Some(d) = self.direction(association, data_sender) else {
                    return;
                };
                // Only SACKs that move the cumulative ack are drawn.
                let moved = d
                    .cumulative_acks
                    .points
                    .last()
                    .is_none_or(|last| last.tsn != cumulative_tsn);
                if moved {
                    d.cumulative_acks.push(AckPoint {
                        frame,
                        time,
                        tsn: cumulative_tsn,
                    });
                }
            }
            Observation::Packet { .. } | Observation::Acked { .. } => {}
        }
    }

    fn part(&mut self, part: AssociationPart) {
        let (events, handovers) = self.parts.entry(part.association).or_default();
        events.extend(part.events);
        handovers.extend(part.handovers);
    }

    fn association(&mut self, mut report: AssociationReport) {
        if let Some((mut events, mut handovers)) = self.parts.remove(&report.association.id) {
            events.append(&mut report.events);
            handovers.append(&mut report.handovers);
            // Stable: events held back for their answers go back in place.
            events.sort_by_key(|e| e.frame);
            handovers.sort_by_key(|h| h.switch_frame);
            report.events = events;
            report.handovers = handovers;
        }
        let traced = self.alive.remove(&report.association.id);
        let carried_data = report
            .association
            .directions
            .iter()
            .any(|d| d.counters().data_chunks > 0);
        if traced.is_none() && carried_data {
            self.untraced += 1;
        }
        let directions = traced.unwrap_or_default();
        let has_data = directions.iter().any(|d| !d.is_empty());
        if !has_data && report.handovers.is_empty() {
            return;
        }
        let a = &report.association;
        let trace = AssociationTrace {
            id: a.id,
            ports: (a.endpoints[0].port, a.endpoints[1].port),
            first_time: a.first_time,
            last_time: a.last_time,
            paths: a
                .paths
                .iter()
                .map(|p| PathLabel {
                    id: p.id,
                    src: p.src,
                    dst: p.dst,
                    sender: p.sender,
                })
                .collect(),
            directions,
            rtt: report
                .events
                .iter()
                .filter_map(|e| match e.kind {
                    EventKind::HeartbeatAck {
                        path,
                        request_frame,
                        rtt_ms: Some(rtt_ms),
                        ..
                    } => Some(RttSample {
                        frame: e.frame,
                        request_frame,
                        time: e.time,
                        path,
                        rtt_ms,
                    }),
                    _ => None,
                })
                .collect(),
            events: report.events,
            handovers: report.handovers,
        };
        self.kept.push(trace);
        if self.kept.len() > self.max_associations {
            // Drop the least interesting: without handovers, newest id.
            let worst = self
                .kept
                .iter()
                .enumerate()
                .max_by_key(|(_, t)| (t.handovers.is_empty(), t.id))
                .map(|(i, _)| i);
            if let Some(i) = worst {
                self.kept.swap_remove(i);
                self.omitted += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_series_keeps_every_other_point_and_spans_the_whole_input() {
        let mut d = Decimated::default();
        for i in 0..(MAX_POINTS as u64 * 3) {
            d.push(i);
        }
        assert!(d.points.len() <= MAX_POINTS);
        assert_eq!(d.seen, MAX_POINTS as u64 * 3);
        assert_eq!(d.points[0], 0);
        // Evenly spaced after thinning: stride 4 once 3 × MAX_POINTS came.
        assert!(
            d.points.windows(2).all(|w| w[1] - w[0] == 4),
            "{:?}",
            &d.points[..4]
        );
        assert!(*d.points.last().unwrap_or(&0) >= MAX_POINTS as u64 * 3 - 4);
        assert_eq!(d.dropped(), d.seen - d.points.len() as u64);
    }

    #[test]
    fn relative_tsns_survive_the_wrap() {
        let mut d = DirectionTrace::default();
        let at = |tsn| DataPoint {
            frame: 1,
            time: Timestamp(0),
            tsn,
            path: 0,
        };
        d.new_data.push(at(u32::MAX - 1));
        d.new_data.push(at(3));
        d.retransmissions.push(at(u32::MAX - 3));
        // The lowest drawn TSN is the retransmission two below the first.
        assert_eq!(d.base_tsn(), Some(u32::MAX - 3));
    }
}
