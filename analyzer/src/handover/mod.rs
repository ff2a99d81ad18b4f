//! Handover and failover analysis: detects every data path switch and
//! computes its latency components (docs/metrics.md, "Handover latency
//! components"). Consumes the tracker's events and observations as they
//! stream by; keeps bounded state per association and direction.

pub mod anchors;
mod descriptors;
mod failover;
mod latency;
mod mark;
mod model;
mod recognition;
mod state;
mod switch;
mod tsn_history;
mod window;

use crate::by_id::ById;
use crate::events::{AddressSource, AssocId, Event, EventKind, EventSink, Observation};
use crate::time::Nanos;
use crate::track::limits::Hit;
use crate::track::path::PathStatus;
use crate::wire::sctp_param::AsconfOp;
use anchors::Anchor;
use mark::Mark;
use state::Association;

pub use descriptors::{ComponentDescriptor, ComponentGroup, COMPONENTS};
pub use model::{
    AsconfExchange, CapturePoint, Component, Expiry, Failover, Handover, HandoverWindow, Point,
    ReceiverSilence, Recognition, SpuriousExpiryRef, SwitchClass, WindowEnd, RECEIVER_FAILOVER,
};

/// The handover engine's settings (the analysis options that bear on
/// handovers).
#[derive(Debug, Clone)]
pub struct HandoverConfig {
    /// Where the capture was taken (`--capture-point`; docs/metrics.md,
    /// "Capture point"): decides whether the receiver-silence rule applies.
    pub capture_point: CapturePoint,
    /// The ground-truth anchors of `--events` (link and address up/down),
    /// in the capture's time.
    pub anchors: Vec<Anchor>,
    /// RTO.Max for the failover time predicted with RTO backoff
    /// ([`Failover::predicted_backoff_ms`]).
    pub rto_max: Option<Nanos>,
    /// The tracker's potentially-failed threshold
    /// ([`crate::track::TrackConfig::pf_retrans`]): a failover that came
    /// exactly at it is read as one at the potentially-failed state.
    pub pf_retrans: Option<u32>,
    /// Events kept per association until it is retired
    /// ([`crate::track::limits::Limits::events`]); beyond it they still
    /// drive the metrics but are not kept.
    pub max_events: usize,
    /// Events an association holds before the settled part of its results
    /// is handed on ([`PART_EVENTS`]; tests lower it to hand every
    /// association on in many parts).
    pub part_events: usize,
}

impl Default for HandoverConfig {
    fn default() -> Self {
        HandoverConfig {
            capture_point: CapturePoint::default(),
            anchors: Vec::new(),
            rto_max: None,
            pf_retrans: crate::track::TrackConfig::default().pf_retrans,
            max_events: crate::track::limits::Limits::default().events,
            part_events: PART_EVENTS,
        }
    }
}

impl HandoverConfig {
    /// The defaults: capture point unknown, no anchors, no RTO.Max, the
    /// tracker's default potentially-failed threshold and event cap.
    pub fn new() -> Self {
        HandoverConfig::default()
    }
}

/// Streams events through, computing handovers. Keeps, per association,
/// its events and handovers until the association is retired
/// ([`HandoverEngine::retire`]), so retiring costs O(that association).
pub struct HandoverEngine {
    config: HandoverConfig,
    /// Boxed: the table stays small, and growing it moves pointers.
    associations: ById<Association>,
    /// The most recent data path switch, as built when its
    /// `DataPathChange` event went through (for callers that annotate
    /// frames as they stream; prefer [`HandoverEngine::last_handover`]).
    /// A copy of the most recent handover, for per-packet consumers (the
    /// C plugin); components resolved later are not updated in it.
    latest: Option<Handover>,
    /// Events not kept because an association reached `max_events`.
    events_dropped: Hit,
    /// An association holding `part_events` more events than it held back
    /// at its last part ([`HandoverEngine::part_due`]).
    part_due: Option<AssocId>,
}

/// Events an association holds before the settled part of its results is
/// handed on ([`HandoverEngine::take_part`]): what a long association keeps
/// stays bounded instead of growing with its age.
pub const PART_EVENTS: usize = 256;

impl HandoverEngine {
    /// Events not kept by the `max_events` cap.
    pub fn events_dropped(&self) -> Hit {
        self.events_dropped
    }

    /// An engine with no associations yet.
    pub fn new(config: HandoverConfig) -> Self {
        HandoverEngine {
            config,
            associations: ById::default(),
            latest: None,
            events_dropped: Hit::default(),
            part_due: None,
        }
    }

    /// The association, if any, whose held events reached
    /// [`HandoverConfig::part_events`] since it was last asked (then ask
    /// [`HandoverEngine::take_part`]).
    pub fn part_due(&mut self) -> Option<AssocId> {
        self.part_due.take()
    }

    /// Takes the settled part of an association's results, in the order
    /// [`HandoverEngine::retire`] would give them: every event held except
    /// the HEARTBEATs and ASCONFs sent in `open` frames (the tracker's
    /// outstanding requests, [`crate::track::Tracker::open_requests`]:
    /// their answers, which the outputs pair with them, may still come),
    /// and the handovers settled since the last part (total latency
    /// resolved, handover window closed), in switch order. What stays is
    /// handed on later, in the next part or by [`HandoverEngine::retire`].
    /// Costs what it hands on: a switch that never settles holds back
    /// none of those after it.
    pub fn take_part(&mut self, id: AssocId, open: &[u64]) -> (Vec<Event>, Vec<Handover>) {
        let Some(a) = self.associations.get_mut(id) else {
            return (Vec::new(), Vec::new());
        };
        let is_open = |e: &Event| {
            matches!(
                e.kind,
                EventKind::Heartbeat { .. } | EventKind::Asconf { .. }
            ) && open.contains(&e.frame)
        };
        let mut events = Vec::with_capacity(a.events.len());
        let mut kept = Vec::new();
        // The events after a held one in its frame stay with it, so that
        // every frame's events keep their order across parts.
        let mut held_frame = None;
        for e in a.events.drain(..) {
            if is_open(&e) {
                held_frame = Some(e.frame);
            }
            if held_frame == Some(e.frame) {
                kept.push(e);
            } else {
                events.push(e);
            }
        }
        a.events = kept;
        a.held_back = a.events.len();
        // Only the switches that settled since the last part: a scan of
        // every slot would walk, at every part, all the switches held
        // behind one that never settles (its SACKs not captured).
        let mut settled = Vec::new();
        for sender in [0, 1] {
            // (Read first: writing a direction never written allocates it.)
            if !a.directions[sender].settled.is_empty() {
                settled.append(&mut a.directions[sender].settled);
            }
        }
        settled.sort_unstable();
        let mut handovers = Vec::with_capacity(settled.len());
        for index in settled {
            a.held_failovers.remove(&index);
            let slot = index
                .checked_sub(a.handed_on)
                .and_then(|i| a.handovers.get_mut(i));
            handovers.extend(slot.and_then(Option::take).map(|h| *h));
        }
        let gone = a.handovers.iter().take_while(|h| h.is_none()).count();
        a.handovers.drain(..gone);
        a.handed_on += gone;
        (events, handovers)
    }

    /// The handover built by the last `DataPathChange` that was a switch.
    pub fn last_handover(&self) -> Option<&Handover> {
        self.latest.as_ref()
    }

    /// Associations with state in the engine.
    pub fn alive(&self) -> usize {
        self.associations.len()
    }

    /// Drops an association's state and returns its events (emission
    /// order, which is frame order) and handovers (switch order). A switch
    /// whose sequence gap was never acknowledged keeps the reason its total
    /// latency started with, as at the end of a file.
    pub fn retire(&mut self, id: AssocId) -> (Vec<Event>, Vec<Handover>) {
        match self.associations.remove(id) {
            Some(mut a) => {
                window::close_all(&mut a);
                let handovers = a.handovers.into_iter().flatten().map(|h| *h).collect();
                (a.events, handovers)
            }
            None => (Vec::new(), Vec::new()),
        }
    }

    /// Finishes: every association's events (by frame, then association)
    /// and handovers (by switch frame, then association).
    pub fn finish(mut self) -> (Vec<Event>, Vec<Handover>) {
        let mut ids: Vec<AssocId> = self.associations.ids().collect();
        ids.sort_unstable();
        let mut events = Vec::new();
        let mut handovers = Vec::new();
        for id in ids {
            let (e, h) = self.retire(id);
            events.extend(e);
            handovers.extend(h);
        }
        events.sort_by_key(|e| e.frame);
        handovers.sort_by_key(|h| h.switch_frame);
        (events, handovers)
    }

    fn on_event(&mut self, e: &Event) {
        let id = e.association;
        match &e.kind {
            EventKind::PathSeen { path, src, dst } => {
                let a = self.assoc(id);
                let i = usize::from(*path);
                if a.paths.len() <= i {
                    crate::compact::reserve_for(&mut a.paths, i + 1);
                    a.paths.resize(i + 1, (*src, *dst));
                }
                a.paths[i] = (*src, *dst);
            }
            EventKind::Asconf {
                serial,
                sender,
                requests,
                bytes,
                retransmission,
                transmission,
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
                // A copy sent again joins its serial's exchange (the
                // latest of that sender and serial still held).
                let earlier = a
                    .asconfs
                    .iter_mut()
                    .rev()
                    .find(|x| x.serial == *serial && x.sender == *sender)
                    .filter(|_| *retransmission);
                if let Some(x) = earlier {
                    x.transmissions = *transmission;
                    x.last_frame = e.frame;
                    x.last_time = e.time;
                    x.bytes += *bytes;
                } else {
                    a.asconfs.push(AsconfExchange {
                        serial: *serial,
                        sender: *sender,
                        ops: requests.iter().map(|r| (r.op, r.address)).collect(),
                        frame: e.frame,
                        time: e.time,
                        transmissions: *transmission,
                        last_frame: e.frame,
                        last_time: e.time,
                        ack_frame: None,
                        ack_time: None,
                        rtt_ms: None,
                        bytes: *bytes,
                        ack_bytes: 0,
                    });
                }
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
                    .find(|x| x.serial == *serial && x.last_frame == *req)
                {
                    x.ack_frame = Some(e.frame);
                    x.ack_time = Some(e.time);
                    x.rtt_ms = *rtt_ms;
                    x.ack_bytes += *bytes;
                }
            }
            EventKind::Heartbeat { path, .. } => {
                let at = Mark {
                    frame: e.frame,
                    time: e.time,
                };
                self.assoc(id).heartbeat(*path, at);
            }
            EventKind::HeartbeatAck {
                path,
                request_frame: Some(req),
                ..
            } => {
                let ack = Mark {
                    frame: e.frame,
                    time: e.time,
                };
                self.assoc(id).heartbeat_answered(*path, *req, ack);
            }
            EventKind::PathInactive { path, error_count } => {
                self.assoc(id).set_status(*path, PathStatus::Inactive);
                let at = Mark {
                    frame: e.frame,
                    time: e.time,
                };
                self.transition_after_switch(id, *path, PathStatus::Inactive, *error_count, at);
            }
            EventKind::PathPotentiallyFailed { path, error_count } => {
                self.assoc(id)
                    .set_status(*path, PathStatus::PotentiallyFailed);
                let at = Mark {
                    frame: e.frame,
                    time: e.time,
                };
                let status = PathStatus::PotentiallyFailed;
                self.transition_after_switch(id, *path, status, *error_count, at);
            }
            EventKind::AddressLearned {
                address,
                how: AddressSource::Asconf,
                ..
            } => self.transport_renewed(id, *address),
            EventKind::PathActive { path } => {
                self.assoc(id).set_status(*path, PathStatus::Active);
            }
            EventKind::ErrorCounterCleared { path, by, .. } => {
                let mark = Mark {
                    frame: e.frame,
                    time: e.time,
                };
                self.assoc(id).note_clear(*path, mark, by);
            }
            EventKind::SpuriousExpiry {
                path, expiry_frame, ..
            } => {
                let mark = Mark {
                    frame: e.frame,
                    time: e.time,
                };
                self.assoc(id).note_spurious(*path, *expiry_frame, mark);
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
        let (max, part_events) = (self.config.max_events, self.config.part_events);
        let (frame, id) = (event.frame, event.association);
        let a = self.assoc(id);
        if a.events.len() < max {
            crate::compact::push(&mut a.events, event);
            // Also at half the cap (parts are taken between frames, and a
            // frame brings a few events): what is settled leaves, and the
            // cap drops only what a part could not take.
            if a.events.len() >= a.held_back.saturating_add(part_events)
                || a.events.len() >= max / 2
            {
                self.part_due = Some(id);
            }
        } else {
            self.events_dropped.record(frame, 1);
        }
    }

    fn observe(&mut self, observation: &Observation) {
        self.on_observation(observation);
    }
}
