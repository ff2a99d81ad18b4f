//! Handover and failover analysis: detects every data path switch and
//! computes its latency components (docs/metrics.md, "Handover latency
//! components"). Consumes the tracker's events and observations as they
//! stream by; keeps bounded state per association and direction.

pub mod anchors;
mod failover;
mod latency;
mod model;
mod recognition;
mod state;
mod switch;

use crate::events::{Event, EventKind, EventSink, Observation};
use crate::time::Nanos;
use crate::wire::sctp_param::AsconfOp;
use anchors::Anchor;
use serde::Serialize;
use state::{Association, HeartbeatRecord, Mark};

pub use model::{
    AsconfExchange, Component, Expiry, Failover, Handover, HandoverWindow, Point, Recognition,
    SwitchClass,
};

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
