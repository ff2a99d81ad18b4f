//! The C plugin's engine: runs the analyzer over the capture and turns its
//! events into per-frame annotation items — the same `sctpho.*` fields, in
//! the same order, as the Lua plugin (dissector/sctpho.lua), both tiers
//! registering them from one list of descriptors ([`registered_fields`]:
//! [`FIELDS`] and one field per latency component of the analyzer's
//! [`COMPONENTS`]; [`EXPERTS`]) — and into the Statistics text the Lua
//! tier prints ([`Analysis::summary`]). The C side only registers what it
//! is given, hands frames over and adds the items to the tree.
//!
//! A switch frame's `sctpho.component.*` fields are its handover's
//! components as the analyzer reports them: set when the switch is seen,
//! then replaced by the settled handover once the engine hands it on (a
//! total handover latency is known only when the TSNs around the gap are
//! acknowledged), so a re-dissection or a pre-scanned file shows them all;
//! a component with no value has no field.
//!
//! Two ways in, one pipeline ([`FrameAnalyzer`]): the capture file named on
//! Wireshark's command line is read once by the analyzer's own reader at
//! the first packet (pre-scan: look-ahead fields complete in a single
//! pass), or, when there is no such file (a pipe, File → Open, a live
//! capture) or it is not the one Wireshark reads, Wireshark's frames are
//! fed one by one as it first dissects them (incremental: a request's
//! look-ahead fields are back-filled when its answer arrives, and show on
//! re-dissection, e.g. `tshark -2`).

#![warn(missing_docs)]

mod fields;
mod summary;

pub use fields::{
    component_field, lua_table, registered_fields, sctpho_experts, sctpho_fields, sctpho_version,
    Expert, ExpertDescriptor, ExpertGroup, ExpertInfo, ExpertSeverity, Field, FieldDescriptor,
    FieldDisplay, FieldInfo, FieldType, FrameRole, RegisteredField, COMPONENT_PREFIX, EXPERTS,
    FIELDS,
};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use sctp_handover::analysis::{AnalysisOptions, FrameAnalyzer, FrameOutcome};
use sctp_handover::capture::{self, link_type};
use sctp_handover::events::{AsconfOutcome, AssocId, Event, EventKind, EventSink, Observation};
use sctp_handover::handover::{Handover, HandoverEngine, SwitchClass, COMPONENTS};
use sctp_handover::time::{Nanos, Timestamp};
use sctp_handover::track::assoc::Association;
use sctp_handover::track::path::{PathStatus, Thresholds};
use sctp_handover::wire::sctp_param::AsconfOp;
use std::ffi::{c_char, CStr, CString};
use std::net::IpAddr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use summary::Summary;

/// What an item is; the C side maps `field` to its registered hf id.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    /// An unsigned integer field (`uint`).
    Uint = 0,
    /// A floating-point field (`double`).
    Double = 1,
    /// A string field (`string`).
    String = 2,
    /// An expert note (`field` names the expert info).
    Expert = 3,
    /// Text appended to the Info column.
    Info = 4,
    /// A boolean field (`uint` 0 or 1).
    Bool = 5,
}

/// The text of the warning on an ASCONF never answered.
const NO_ACK: &str = "ASCONF without ASCONF-ACK by the end of the capture";

/// The note on an ASCONF sent again, as the Lua tier words it
/// (`Core.retransmission_note`): `first_frame` is unknown for a serial
/// older than its sender's latest.
fn retransmission_note(transmission: u32, serial: u32, first_frame: Option<u64>) -> String {
    let first = match first_frame {
        Some(f) => format!("first sent in frame {f}"),
        None => "first transmission not known".to_string(),
    };
    format!("ASCONF retransmission {transmission} of serial {serial} ({first})")
}

/// One annotation of a frame, as the C side adds it to the tree (see
/// `sctpho_item` in sctpho.h): which value is set depends on `kind`.
#[repr(C)]
pub struct Item {
    /// A field's index in [`registered_fields`] (a [`Field`], or a latency
    /// component's [`component_field`]), or for expert items an
    /// [`Expert`]'s in [`EXPERTS`], as the C side registered them.
    pub field: u32,
    /// What the item is, and so which value below it carries.
    pub kind: ItemKind,
    /// The value of a [`ItemKind::Uint`] or [`ItemKind::Bool`] item.
    pub uint: u64,
    /// The value of a [`ItemKind::Double`] item.
    pub double: f64,
    /// The NUL-terminated text of a [`ItemKind::String`], [`ItemKind::Expert`]
    /// or [`ItemKind::Info`] item (null otherwise), valid until the next call
    /// for items.
    pub string: *const c_char,
}

/// Items as built, before the C strings are fixed in place.
#[derive(Debug, Clone)]
enum Value {
    Uint(u64),
    Bool(bool),
    Double(f64),
    Str(String),
}

/// The packet's association, path, addresses and sending endpoint.
#[derive(Debug, Clone, Copy)]
struct Base {
    association: u32,
    path: u16,
    src: IpAddr,
    dst: IpAddr,
    sender: usize,
}

/// A frame's annotations beyond its [`Base`] (few frames have any).
#[derive(Debug, Default, Clone)]
struct Frame {
    events: Vec<&'static str>,
    asconf: Vec<(Field, Value)>,
    hb: Vec<(Field, Value)>,
    switch: Vec<(Field, Value)>,
    /// The switch's latency components with a value: (index in
    /// `COMPONENTS`, value), from its handover as built at the switch,
    /// then as settled ([`Builder::settled`]).
    components: Vec<(usize, f64)>,
    /// Text appended to the Info column.
    info: Vec<String>,
    /// `sctpho.path.state` and `sctpho.path.state_path` of each inferred
    /// path state entered here.
    state: Vec<(Field, Value)>,
    expert: Vec<(Expert, String)>,
    /// Requests sent last here that the tracker counted unanswered when
    /// their association left it (an alive association's are asked of the
    /// tracker when the frame is shown).
    unanswered: u32,
}

/// What a frame without annotations reads as.
static NO_ANNOTATIONS: Frame = Frame {
    events: Vec::new(),
    asconf: Vec::new(),
    hb: Vec::new(),
    switch: Vec::new(),
    components: Vec::new(),
    info: Vec::new(),
    state: Vec::new(),
    expert: Vec::new(),
    unanswered: 0,
};

impl Frame {
    fn event(&mut self, e: &'static str) {
        if !self.events.contains(&e) {
            self.events.push(e);
        }
    }

    /// The latency components of the switch's handover `h`, each through
    /// its descriptor; one with no value gets no field (absent, not 0).
    fn set_components(&mut self, h: &Handover) {
        self.components.clear();
        self.components.extend(
            COMPONENTS
                .iter()
                .enumerate()
                .filter_map(|(i, c)| c.value(h).map(|ms| (i, ms))),
        );
    }
}

/// Collects per-frame annotations while the analyzer streams.
struct Builder {
    engine: HandoverEngine,
    /// Every SCTP frame's association and path, in frame order: asked for
    /// every frame in order, so a vector read in sequence (`cursor`: where
    /// the last lookup ended) rather than a hash table missing the cache
    /// each time; SCTP frames only, however many others the file has.
    bases: Vec<(u64, Base)>,
    cursor: std::cell::Cell<usize>,
    frames: HashMap<u64, Frame>,
    handshake: HashMap<u32, HashSet<IpAddr>>,
    confirmed: HashMap<u32, HashSet<IpAddr>>,
    /// Every association and path (both numbered densely in creation
    /// order; the path-state texts name the paths' addresses), and what
    /// the Statistics text lists of them.
    summary: Summary,
    /// Associations first seen in the frame under analysis: their ports
    /// are read from the tracker after it.
    new_associations: Vec<u32>,
    /// Paths inferred potentially failed or inactive now (a transition
    /// back to active says which it was).
    failed: HashMap<(u32, u16), PathStatus>,
    /// The thresholds the path-state texts name: Path.Max.Retrans, PFMR.
    thresholds: Thresholds,
    /// Associations with switches whose handovers the engine has not
    /// handed on yet (total latency or handover window still open), and
    /// how many: their components may still change.
    unsettled: HashMap<AssocId, usize>,
    /// Of those, the ones a SACK or a switch in the frame under analysis
    /// may have settled.
    touched: Vec<AssocId>,
}

fn addr(a: IpAddr) -> String {
    a.to_string()
}

/// What the expert info of a path-state event says, as the Lua tier
/// words it (sctpho_core.lua: `path_label`, `Core:path_error`,
/// `Core:path_success`, `Core:spurious`).
fn path_state_text(label: &str, kind: &EventKind, t: Thresholds, was: PathStatus) -> String {
    match *kind {
        EventKind::PathPotentiallyFailed { error_count, .. } => format!(
            "{label} potentially failed: error count {error_count} exceeds PFMR {}",
            t.pf_retrans.unwrap_or_default()
        ),
        EventKind::PathInactive { error_count, .. } => format!(
            "{label} {}: error count {error_count} exceeds Path.Max.Retrans {}",
            PathStatus::Inactive.as_str(),
            t.path_max_retrans
        ),
        EventKind::PathActive { .. } => format!(
            "{label} {} again (was {})",
            PathStatus::Active.as_str(),
            match was {
                PathStatus::Inactive => was.as_str(),
                // Prose, as the Lua tier words it (the output name has an
                // underscore).
                _ => "potentially failed",
            }
        ),
        EventKind::ErrorCounterCleared {
            error_count, by, ..
        } => format!(
            "{label} error counter cleared from {error_count} by a {}",
            if by == "sack" { "SACK" } else { "HEARTBEAT ACK" }
        ),
        EventKind::SpuriousExpiry {
            expiry_frame, tsn, ..
        } => format!(
            "spurious T3 expiry of {label} in frame {expiry_frame}: TSN {tsn} was reported as a duplicate"
        ),
        _ => String::new(),
    }
}

impl Builder {
    fn base(&self, f: u64) -> Option<Base> {
        let at = self.cursor.get();
        // Frames are asked for in order: the last one's place or the next.
        let i = match self.bases.get(at..at + 2) {
            Some([(a, _), _]) if *a == f => at,
            Some([_, (b, _)]) if *b == f => at + 1,
            // Between two SCTP frames: not one.
            Some([(a, _), (b, _)]) if *a < f && f < *b => return None,
            _ => self.bases.partition_point(|(n, _)| *n < f),
        };
        self.cursor.set(i.min(self.bases.len().saturating_sub(2)));
        self.bases.get(i).filter(|(n, _)| *n == f).map(|(_, b)| *b)
    }

    fn set_base(&mut self, f: u64, base: Base) {
        match self.bases.last() {
            Some((last, _)) if *last >= f => {
                let i = self.bases.partition_point(|(n, _)| *n < f);
                match self.bases.get_mut(i) {
                    Some(entry) if entry.0 == f => entry.1 = base,
                    _ => self.bases.insert(i, (f, base)),
                }
            }
            _ => self.bases.push((f, base)),
        }
    }

    fn frame(&mut self, f: u64) -> &mut Frame {
        self.frames.entry(f).or_default()
    }

    /// "path 1 (192.0.2.1 -> 198.51.100.2)"
    fn path_label(&self, association: u32, path: u16) -> String {
        match self
            .summary
            .associations
            .get(association as usize)
            .and_then(|a| a.paths.get(usize::from(path)))
        {
            Some(p) => format!("path {path} ({} -> {})", p.src, p.dst),
            None => format!("path {path}"),
        }
    }

    /// A path-state event (docs/metrics.md, "Inferred path state"): its
    /// event name, the state entered (`sctpho.path.state`) and its expert
    /// info, on the frame where it happened.
    fn path_state(&mut self, event: &Event, path: u16) {
        let (name, state, expert) = match event.kind {
            EventKind::PathPotentiallyFailed { .. } => (
                "path_potentially_failed",
                Some(PathStatus::PotentiallyFailed),
                Expert::PotentiallyFailed,
            ),
            EventKind::PathInactive { .. } => (
                "path_inactive",
                Some(PathStatus::Inactive),
                Expert::Inactive,
            ),
            EventKind::PathActive { .. } => {
                ("path_active", Some(PathStatus::Active), Expert::Active)
            }
            EventKind::ErrorCounterCleared { .. } => {
                ("error_counter_cleared", None, Expert::CounterCleared)
            }
            EventKind::SpuriousExpiry { .. } => ("spurious_expiry", None, Expert::SpuriousExpiry),
            _ => return,
        };
        let key = (event.association, path);
        let was = self.failed.get(&key).copied().unwrap_or_default();
        match state {
            Some(PathStatus::Active) => {
                self.failed.remove(&key);
            }
            Some(s) => {
                self.failed.insert(key, s);
            }
            None => {}
        }
        match (state, &event.kind) {
            (Some(s), _) => self
                .summary
                .state(event.association, path, s.as_str(), event.frame),
            (None, EventKind::ErrorCounterCleared { .. }) => {
                self.summary.cleared(event.association, path)
            }
            (None, _) => self.summary.spurious(event.association, path),
        }
        let label = self.path_label(event.association, path);
        let text = path_state_text(&label, &event.kind, self.thresholds, was);
        let fr = self.frame(event.frame);
        fr.event(name);
        if let Some(s) = state {
            fr.state
                .push((Field::PathState, Value::Str(s.as_str().to_string())));
            fr.state
                .push((Field::PathStatePath, Value::Uint(u64::from(path))));
        }
        fr.expert.push((expert, text));
    }
}

impl Builder {
    /// Handovers of association `id` the engine handed on, settled: their
    /// components replace those their switch frames got when built.
    fn settled(&mut self, id: AssocId, handovers: Vec<Handover>) {
        for h in &handovers {
            self.frame(h.switch_frame).set_components(h);
        }
        if let Some(n) = self.unsettled.get_mut(&id) {
            *n = n.saturating_sub(handovers.len());
            if *n == 0 {
                self.unsettled.remove(&id);
            }
        }
    }

    /// The handovers of association `id` settled by now (the engine's
    /// events are not kept: the annotations came from them already).
    fn take_settled(&mut self, id: AssocId) {
        let (_, handovers) = self.engine.take_part(id, &[]);
        self.settled(id, handovers);
    }

    /// Association `a` left the tracker (ended or idle, or the end of the
    /// file): its handovers, as the analyzer's pipeline hands them on then,
    /// and the requests the tracker counted unanswered, on their frames.
    /// What was kept for it to annotate later frames goes: memory stays
    /// bounded by the associations alive (the per-frame answers, kept for
    /// Wireshark's re-dissection, are sized by the file).
    fn left(&mut self, a: &Association) {
        let id = a.id;
        let (_, handovers) = self.engine.retire(id);
        self.settled(id, handovers);
        self.unsettled.remove(&id);
        self.handshake.remove(&id);
        self.confirmed.remove(&id);
        for path in 0..a.paths.len() {
            if let Ok(path) = u16::try_from(path) {
                self.failed.remove(&(id, path));
            }
        }
        for frame in a.unanswered_asconf_frames() {
            self.frame(frame).unanswered += 1;
        }
    }

    /// After each frame: takes the handovers settled by it, so that each
    /// switch frame shows the components the analyzer reports (a total
    /// handover latency is known only once the TSNs around the gap are
    /// acknowledged), as the analyzer's pipeline takes them.
    fn settle(&mut self) {
        if let Some(id) = self.engine.part_due() {
            self.take_settled(id);
        }
        let mut touched = std::mem::take(&mut self.touched);
        touched.sort_unstable();
        touched.dedup();
        for id in touched.drain(..) {
            if self.unsettled.contains_key(&id) {
                self.take_settled(id);
            }
        }
        self.touched = touched;
    }
}

impl EventSink for Builder {
    fn emit(&mut self, event: Event) {
        let f = event.frame;
        match &event.kind {
            EventKind::Heartbeat { .. } => self.frame(f).event("heartbeat"),
            EventKind::HeartbeatAck {
                path,
                request_frame,
                rtt_ms,
                ..
            } => {
                self.frame(f).event("heartbeat_ack");
                if let (Some(req), Some(rtt)) = (request_frame, rtt_ms) {
                    let fr = self.frame(f);
                    fr.hb.push((Field::HbRequestFrame, Value::Uint(*req)));
                    fr.hb.push((Field::HbRtt, Value::Double(*rtt)));
                    fr.hb.push((Field::HbPath, Value::Uint(u64::from(*path))));
                    self.frame(*req)
                        .hb
                        .insert(0, (Field::HbAckFrame, Value::Uint(f)));
                }
            }
            EventKind::PathConfirmed { address, .. } => {
                self.confirmed
                    .entry(event.association)
                    .or_default()
                    .insert(*address);
            }
            EventKind::Asconf {
                serial,
                sender,
                requests,
                retransmission,
                transmission,
                first_frame,
                ..
            } => {
                let fr = self.frame(f);
                for r in requests {
                    fr.event(match r.op {
                        AsconfOp::AddIp => "asconf_add_ip",
                        AsconfOp::DeleteIp => "asconf_del_ip",
                        AsconfOp::SetPrimary => "asconf_set_primary",
                    });
                }
                fr.asconf
                    .push((Field::AsconfSerial, Value::Uint(u64::from(*serial))));
                fr.asconf
                    .push((Field::AsconfRetransmission, Value::Bool(*retransmission)));
                fr.asconf.push((
                    Field::AsconfTransmission,
                    Value::Uint(u64::from(*transmission)),
                ));
                if let Some(first) = first_frame {
                    fr.asconf
                        .push((Field::AsconfFirstFrame, Value::Uint(*first)));
                }
                if *retransmission {
                    fr.expert.push((
                        Expert::AsconfRetransmission,
                        retransmission_note(*transmission, *serial, *first_frame),
                    ));
                }
                self.summary.asconf(
                    event.association,
                    f,
                    *sender,
                    *serial,
                    *transmission,
                    requests,
                );
            }
            EventKind::AsconfAck {
                serial,
                request_frame,
                rtt_ms,
                repeated,
                results,
                ..
            } => {
                let fr = self.frame(f);
                fr.event("asconf_ack");
                fr.asconf
                    .push((Field::AsconfSerial, Value::Uint(u64::from(*serial))));
                if let (Some(req), Some(rtt)) = (request_frame, rtt_ms) {
                    fr.asconf
                        .push((Field::AsconfRequestFrame, Value::Uint(*req)));
                    fr.asconf.push((Field::AsconfRtt, Value::Double(*rtt)));
                    if *repeated {
                        fr.asconf.push((Field::AsconfRepeated, Value::Bool(true)));
                    }
                    for r in results {
                        let outcome = match r.outcome {
                            AsconfOutcome::Success => "success".to_string(),
                            AsconfOutcome::ImpliedSuccess => "implied_success".to_string(),
                            AsconfOutcome::NotProcessed => "not_processed".to_string(),
                            AsconfOutcome::Error => {
                                format!("error {}", r.error_cause.unwrap_or("unknown"))
                            }
                        };
                        fr.asconf.push((
                            Field::AsconfResult,
                            Value::Str(format!(
                                "{} {} {}: {}",
                                r.correlation_id,
                                r.op.name(),
                                addr(r.address),
                                outcome
                            )),
                        ));
                        if r.outcome == AsconfOutcome::Error {
                            fr.expert.push((
                                Expert::AckError,
                                format!(
                                    "ASCONF-ACK reports an error for {} {}: {}",
                                    r.op.name(),
                                    addr(r.address),
                                    r.error_cause.unwrap_or("unknown")
                                ),
                            ));
                        }
                    }
                    self.summary.asconf_ack(event.association, *serial, *req, f);
                    let ack = f;
                    let reqf = self.frame(*req);
                    let at = reqf
                        .asconf
                        .iter()
                        .position(|(n, _)| *n == Field::AsconfSerial)
                        .map_or(0, |i| i + 1);
                    reqf.asconf
                        .insert(at, (Field::AsconfAckFrame, Value::Uint(ack)));
                }
            }
            EventKind::PathPotentiallyFailed { path, .. }
            | EventKind::PathInactive { path, .. }
            | EventKind::PathActive { path }
            | EventKind::ErrorCounterCleared { path, .. }
            | EventKind::SpuriousExpiry { path, .. } => {
                let path = *path;
                self.path_state(&event, path);
            }
            EventKind::Retransmission {
                already_acked, tsn, ..
            } => {
                let fr = self.frame(f);
                fr.event("retransmission");
                if *already_acked {
                    fr.event("duplicate");
                    fr.expert.push((
                        Expert::Duplicate,
                        format!("duplicate: TSN {tsn} was already acknowledged"),
                    ));
                }
            }
            EventKind::DataPathChange {
                from_path: Some(_), ..
            } => {
                self.engine.emit(event.clone());
                let h = self.engine.last_handover().cloned();
                if let Some(h) = h.as_ref().filter(|h| h.switch_frame == f) {
                    // Built now; settled later (this switch may have
                    // settled the one before it).
                    *self.unsettled.entry(event.association).or_default() += 1;
                    self.touched.push(event.association);
                    self.frame(f).set_components(h);
                }
                if let Some(h) = h {
                    let kind = h.class.as_str();
                    self.summary.switch(&h, kind);
                    let fr = self.frame(f);
                    fr.event("path_switch");
                    if h.class == SwitchClass::Failover {
                        fr.event("failover");
                    }
                    fr.switch
                        .push((Field::SwitchFromPath, Value::Uint(u64::from(h.from_path))));
                    fr.switch
                        .push((Field::SwitchToPath, Value::Uint(u64::from(h.to_path))));
                    fr.switch.push((Field::SwitchKind, Value::Str(kind.into())));
                    if let Some(ms) = h.data_interrupt.ms {
                        fr.switch.push((Field::SwitchInterrupt, Value::Double(ms)));
                    }
                    if let Some(p) = h.data_interrupt.from.and_then(|p| p.frame) {
                        fr.switch.push((Field::SwitchLastOldFrame, Value::Uint(p)));
                    }
                    if let Some(p) = h.data_interrupt.to.and_then(|p| p.frame) {
                        fr.switch.push((Field::SwitchFirstNewFrame, Value::Uint(p)));
                    }
                    fr.info.push(format!(
                        " [{kind} path switch {}->{}]",
                        h.from_path, h.to_path
                    ));
                    // A failover seen by the receiver says so, as the Lua
                    // tier does: the old path's silence against its pace.
                    let why = h
                        .receiver_silence
                        .map(|s| format!(" ({})", s.summary()))
                        .unwrap_or_default();
                    fr.expert.push((
                        Expert::Switch,
                        format!(
                            "{kind} path switch from path {} to path {}{why}",
                            h.from_path, h.to_path
                        ),
                    ));
                }
                return;
            }
            _ => {}
        }
        self.engine.emit(event);
    }

    fn observe(&mut self, o: &Observation) {
        self.engine.observe(o);
        if let Observation::Sack { association, .. } = *o {
            if self.unsettled.contains_key(&association) {
                self.touched.push(association);
            }
        }
        match *o {
            Observation::Packet {
                frame,
                association,
                sender,
                path,
                src,
                dst,
                handshake,
                ..
            } => {
                if handshake {
                    let h = self.handshake.entry(association).or_default();
                    h.insert(src);
                    h.insert(dst);
                }
                // A new association or path (ids are handed out in order).
                if self
                    .summary
                    .packet(association, frame, path, sender, src, dst)
                {
                    self.new_associations.push(association);
                }
                self.set_base(
                    frame,
                    Base {
                        association,
                        path,
                        src,
                        dst,
                        sender,
                    },
                );
            }
            Observation::Data {
                frame, association, ..
            } => {
                let Some(ip) = self.base(frame).map(|b| b.dst) else {
                    return;
                };
                let in_handshake = self
                    .handshake
                    .get(&association)
                    .is_some_and(|h| h.contains(&ip));
                let confirmed = self
                    .confirmed
                    .get(&association)
                    .is_some_and(|c| c.contains(&ip));
                if !in_handshake && !confirmed {
                    let dst = addr(ip);
                    self.frame(frame).expert.push((
                        Expert::Unconfirmed,
                        format!("DATA to {dst}, an address not yet confirmed by a HEARTBEAT ACK"),
                    ));
                }
            }
            Observation::Sack {
                frame, dup_tsns, ..
            } if dup_tsns > 0 => {
                self.frame(frame).event("duplicate_report");
            }
            _ => {}
        }
    }
}

impl Builder {
    fn new(options: &AnalysisOptions) -> Self {
        Builder {
            engine: HandoverEngine::new(sctp_handover::handover::HandoverConfig {
                pf_retrans: options.track.pf_retrans,
                ..options.handover.clone()
            }),
            bases: Vec::new(),
            cursor: std::cell::Cell::new(0),
            frames: HashMap::default(),
            handshake: HashMap::default(),
            confirmed: HashMap::default(),
            summary: Summary::default(),
            new_associations: Vec::new(),
            failed: HashMap::default(),
            thresholds: options.track.thresholds(),
            unsettled: HashMap::default(),
            touched: Vec::new(),
        }
    }

    /// Notes on frames the analyzer could not fully decode as SCTP (frames
    /// that may not be SCTP at all, e.g. a bad IP header, get none).
    fn outcome(&mut self, frame: u64, outcome: FrameOutcome) {
        let text = match outcome {
            FrameOutcome::SctpMalformed(why) => format!("malformed SCTP: {why}"),
            FrameOutcome::Malformed(why) if why.starts_with("SCTP") => {
                format!("malformed SCTP: {why}")
            }
            FrameOutcome::SctpTruncated => {
                "SCTP packet cut short by the capture's snaplen: chunks past the cut not analysed"
                    .to_string()
            }
            FrameOutcome::Truncated(why) if why.starts_with("SCTP") => {
                format!("SCTP packet cut short by the capture's snaplen: {why}")
            }
            _ => return,
        };
        self.frame(frame).expert.push((Expert::Malformed, text));
    }
}

/// Per captured frame of the pre-scanned file: its captured length and
/// time, to recognise the same frame when Wireshark dissects it.
#[derive(Debug, Clone, Copy)]
struct Fingerprint {
    /// `u32::MAX` for a record that holds no packet.
    len: u32,
    time: i64,
}

const NOT_A_PACKET: u32 = u32::MAX;

/// Wireshark and the analyzer's reader may round odd timestamp resolutions
/// differently.
const TIME_SLACK_NS: u64 = 1_000;

/// A frame as the C side hands it over (see `sctpho_frame` in sctpho.h).
#[repr(C)]
pub struct FrameIn {
    /// Wireshark's frame number (1-based).
    pub number: u64,
    /// The capture time's whole seconds since the Unix epoch.
    pub sec: i64,
    /// The capture time's nanoseconds within the second.
    pub nsec: i32,
    /// A pcap LINKTYPE_* value; [`LINK_NON_PACKET`] for a record that holds
    /// no packet, [`LINK_UNKNOWN`] for an encapsulation without one.
    pub link_type: u32,
    /// The pcapng interface id (0 for pcap).
    pub interface: u32,
    /// The frame's length on the wire, in bytes.
    pub original_len: u32,
    /// The captured bytes, from the link-layer header (`len` of them).
    pub data: *const u8,
    /// How many bytes were captured.
    pub len: usize,
}

/// The thresholds of the inferred path state, as the C side's preferences
/// give them (see `sctpho_thresholds` in sctpho.h): the analyzer's
/// `--pmr`, `--pf-retrans` / `--no-pf` and `--rto-max-ms`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThresholdsIn {
    /// Path.Max.Retrans: errors past it make a path inactive (`--pmr`).
    pub path_max_retrans: u32,
    /// Negative: the potentially-failed state is not inferred.
    pub pf_retrans: i64,
    /// RTO.Max in milliseconds (`--rto-max-ms`).
    pub rto_max_ms: u32,
}

impl Default for ThresholdsIn {
    /// The analyzer's defaults.
    fn default() -> Self {
        let track = AnalysisOptions::default().track;
        ThresholdsIn {
            path_max_retrans: track.path_max_retrans,
            pf_retrans: track.pf_retrans.map_or(-1, i64::from),
            rto_max_ms: u32::try_from(track.rto.max.0 / 1_000_000).unwrap_or(u32::MAX),
        }
    }
}

impl ThresholdsIn {
    /// The analyzer's options with these thresholds. RTO.Min and the
    /// initial RTO are lowered to RTO.Max when above it (they do not
    /// change the inferred state; the RTO estimator needs min <= max).
    pub fn options(&self) -> AnalysisOptions {
        let mut options = AnalysisOptions::default();
        let t = &mut options.track;
        t.path_max_retrans = self.path_max_retrans;
        t.pf_retrans = u32::try_from(self.pf_retrans).ok();
        t.rto.max = Nanos::from_millis(i64::from(self.rto_max_ms));
        t.rto.min = t.rto.min.min(t.rto.max);
        t.rto.initial = t.rto.initial.min(t.rto.max);
        options
    }
}

/// The `link_type` of a record that holds no packet (`SCTPHO_LINK_NON_PACKET`).
pub const LINK_NON_PACKET: u32 = link_type::NON_PACKET_RECORD;
/// The `link_type` of an encapsulation with no pcap link type the analyzer
/// decodes (`SCTPHO_LINK_UNKNOWN`).
pub const LINK_UNKNOWN: u32 = u32::MAX;

/// The link types the analyzer decodes (the C side maps Wireshark's
/// encapsulations onto them).
pub const LINK_TYPES: [u32; 10] = [
    link_type::NULL,
    link_type::ETHERNET,
    link_type::RAW_12,
    link_type::RAW_14,
    link_type::RAW,
    link_type::LOOP,
    link_type::LINUX_SLL,
    link_type::IPV4,
    link_type::IPV6,
    link_type::LINUX_SLL2,
];

/// One capture under analysis, and the items of the frame asked last.
pub struct Analysis {
    analyzer: FrameAnalyzer,
    builder: Builder,
    /// Associations that left the tracker at the frame under analysis.
    retired: Vec<Association>,
    /// The options it was made with (a restart keeps them).
    options: AnalysisOptions,
    /// The file pre-scanned and its frames (`None`: incremental).
    prescan: Option<(PathBuf, Vec<Fingerprint>)>,
    /// The last frame handed over; earlier numbers are not taken again.
    last_fed: u64,
    last_time: Timestamp,
    /// The analyzer panicked: no more frames are analysed.
    broken: bool,
    items: Vec<Item>,
    /// Strings that repeat (event names, field values), kept.
    strings: HashMap<String, CString>,
    /// Addresses as text, kept (asked for every frame: no formatting then).
    addresses: HashMap<IpAddr, CString>,
    /// Strings of the frame asked last.
    scratch: Vec<CString>,
    /// The Statistics text asked last.
    summary: CString,
}

fn c_string(s: &str) -> CString {
    CString::new(s.replace('\0', " ")).unwrap_or_default()
}

impl Analysis {
    /// An empty analysis fed frame by frame ([`Analysis::feed`]), with the
    /// analyzer's default options.
    pub fn incremental() -> Self {
        Analysis::incremental_with(&AnalysisOptions::default())
    }

    /// An empty analysis fed frame by frame, with `options`.
    pub fn incremental_with(options: &AnalysisOptions) -> Self {
        Analysis {
            analyzer: FrameAnalyzer::new(options),
            builder: Builder::new(options),
            retired: Vec::new(),
            options: options.clone(),
            prescan: None,
            last_fed: 0,
            last_time: Timestamp::default(),
            broken: false,
            items: Vec::new(),
            strings: HashMap::default(),
            addresses: HashMap::default(),
            scratch: Vec::new(),
            summary: CString::default(),
        }
    }

    /// The whole capture file at `path`, analysed now with the analyzer's
    /// default options; `None` when it cannot be read as a capture.
    pub fn prescan(path: &Path) -> Option<Self> {
        Analysis::prescan_with(path, &AnalysisOptions::default())
    }

    /// The whole capture file at `path`, analysed now with `options`.
    pub fn prescan_with(path: &Path, options: &AnalysisOptions) -> Option<Self> {
        let mut a = Analysis::incremental_with(options);
        let mut fingerprints = Vec::new();
        let mut reader = capture::open(path).ok()?;
        reader
            .for_each_frame(|f| {
                fingerprints.push(Fingerprint {
                    len: if f.link_type == link_type::NON_PACKET_RECORD {
                        NOT_A_PACKET
                    } else {
                        f.data.len() as u32
                    },
                    time: f.timestamp.0,
                });
                a.step(&f);
            })
            .ok()?;
        // The end of the file: every association still alive is over.
        for assoc in a.analyzer.finish() {
            a.builder.left(&assoc);
        }
        a.last_fed = 0;
        a.prescan = Some((path.to_owned(), fingerprints));
        Some(a)
    }

    /// True while the annotations come from the pre-scanned file.
    pub fn is_prescanned(&self) -> bool {
        self.prescan.is_some()
    }

    fn step(&mut self, f: &capture::Frame<'_>) {
        self.last_fed = f.number;
        self.last_time = f.timestamp;
        let outcome = self
            .analyzer
            .frame_retiring(f, &mut self.builder, &mut self.retired);
        for a in self.retired.drain(..) {
            self.builder.left(&a);
        }
        self.builder.outcome(f.number, outcome);
        self.builder.settle();
        for id in self.builder.new_associations.drain(..) {
            let ports = self
                .analyzer
                .association(id)
                .map(|a| [a.endpoints[0].port, a.endpoints[1].port]);
            if let Some(a) = self.builder.summary.associations.get_mut(id as usize) {
                a.ports = ports;
            }
        }
    }

    /// The Statistics text (`tshark -z sctpho`): the same as the Lua
    /// tier's, over the frames analysed so far.
    pub fn summary(&self) -> String {
        self.builder.summary.text()
    }

    /// A frame as Wireshark first dissects it, in capture order. Checks it
    /// against the pre-scanned file; when it is not that file's frame, the
    /// file's frames before it are analysed again and the analysis goes on
    /// incrementally from this one.
    pub fn feed(
        &mut self,
        number: u64,
        time: Timestamp,
        link: u32,
        interface: u32,
        original_len: u32,
        data: &[u8],
    ) {
        if self.broken || number <= self.last_fed {
            return;
        }
        let non_packet = link == LINK_NON_PACKET;
        if let Some((path, frames)) = &self.prescan {
            let same =
                frames
                    .get((number - 1) as usize)
                    .is_some_and(|f| match (f.len, non_packet) {
                        (NOT_A_PACKET, np) => np,
                        (_, true) => false,
                        (len, false) => {
                            len as usize == data.len() && f.time.abs_diff(time.0) <= TIME_SLACK_NS
                        }
                    });
            if same {
                self.last_fed = number;
                return;
            }
            let path = path.clone();
            self.restart(&path, number);
            if self.broken {
                return;
            }
        }
        let frame = capture::Frame {
            number,
            // The analyzer's reader gives a non-packet record the time of
            // the packet before it.
            timestamp: if non_packet { self.last_time } else { time },
            link_type: link,
            interface,
            original_len,
            data,
        };
        let run = catch_unwind(AssertUnwindSafe(|| self.step(&frame)));
        if run.is_err() {
            self.broken = true;
            self.builder.frame(number).expert.push((
                Expert::Malformed,
                "the analyzer failed on this frame; later frames are not annotated".into(),
            ));
        }
    }

    /// Incremental from `number` on: the pre-scanned file's frames before
    /// it (which matched Wireshark's) are analysed again.
    fn restart(&mut self, path: &Path, number: u64) {
        let mut fresh = Analysis::incremental_with(&self.options);
        if let Ok(mut reader) = capture::open(path) {
            let _ = reader.for_each_frame(|f| {
                if f.number < number && !fresh.broken {
                    fresh.broken = catch_unwind(AssertUnwindSafe(|| fresh.step(&f))).is_err();
                }
            });
        }
        fresh.last_fed = number - 1;
        fresh.strings = std::mem::take(&mut self.strings);
        *self = fresh;
    }

    /// The items of `frame`, valid until the next call. `complete`: the
    /// capture has been read to its end (or as far as it goes, for a live
    /// capture), so requests still unanswered get their warning; always so
    /// for a pre-scanned file.
    pub fn items(&mut self, frame: u64, complete: bool) -> &[Item] {
        self.items.clear();
        self.scratch.clear();
        let complete = complete || self.prescan.is_some();
        let base = self.builder.base(frame);
        let annotations = self.builder.frames.get(&frame);
        if base.is_none() && annotations.is_none() {
            return &self.items;
        }
        let f = annotations.unwrap_or(&NO_ANNOTATIONS);
        let strings = &mut self.strings;
        let scratch = &mut self.scratch;
        let mut kept = |s: &str| -> *const c_char {
            if let Some(c) = strings.get(s) {
                return c.as_ptr();
            }
            let c = c_string(s);
            let p = c.as_ptr();
            strings.insert(s.to_string(), c);
            p
        };
        let mut once = |s: &str| -> *const c_char {
            let c = c_string(s);
            let p = c.as_ptr();
            scratch.push(c);
            p
        };
        let item =
            |field: u32, kind: ItemKind, uint: u64, double: f64, string: *const c_char| Item {
                field,
                kind,
                uint,
                double,
                string,
            };
        let null = std::ptr::null();
        let addresses = &mut self.addresses;
        let mut address = |a: IpAddr| -> *const c_char {
            addresses
                .entry(a)
                .or_insert_with(|| c_string(&addr(a)))
                .as_ptr()
        };
        let field = |f: Field| f as u32;
        if let Some(b) = base {
            self.items.extend([
                item(
                    field(Field::Assoc),
                    ItemKind::Uint,
                    u64::from(b.association),
                    0.0,
                    null,
                ),
                item(
                    field(Field::Path),
                    ItemKind::Uint,
                    u64::from(b.path),
                    0.0,
                    null,
                ),
                item(
                    field(Field::PathSrc),
                    ItemKind::String,
                    0,
                    0.0,
                    address(b.src),
                ),
                item(
                    field(Field::PathDst),
                    ItemKind::String,
                    0,
                    0.0,
                    address(b.dst),
                ),
                item(
                    field(Field::Direction),
                    ItemKind::String,
                    0,
                    0.0,
                    kept(["0>1", "1>0"][b.sender.min(1)]),
                ),
            ]);
        }
        for e in &f.events {
            self.items
                .push(item(field(Field::Event), ItemKind::String, 0, 0.0, kept(e)));
        }
        let mut value_item = |at: u32, value: &Value| match value {
            Value::Uint(u) => item(at, ItemKind::Uint, *u, 0.0, null),
            Value::Bool(b) => item(at, ItemKind::Bool, u64::from(*b), 0.0, null),
            Value::Double(d) => item(at, ItemKind::Double, 0, *d, null),
            Value::Str(s) => item(at, ItemKind::String, 0, 0.0, kept(s)),
        };
        for (which, value) in f.asconf.iter().chain(&f.hb).chain(&f.switch) {
            let at = field(*which);
            self.items.push(value_item(at, value));
        }
        for &(component, ms) in &f.components {
            self.items.push(item(
                component_field(component),
                ItemKind::Double,
                0,
                ms,
                null,
            ));
        }
        for text in &f.info {
            self.items.push(item(0, ItemKind::Info, 0, 0.0, once(text)));
        }
        for (which, value) in &f.state {
            let at = field(*which);
            self.items.push(value_item(at, value));
        }
        // The tracker's unanswered requests sent last in this frame: those
        // of an association that left it, and those of one still alive.
        let unanswered = if complete && !f.asconf.is_empty() {
            let alive = base
                .and_then(|b| self.analyzer.association(b.association))
                .map_or(0, |a| {
                    a.unanswered_asconf_frames()
                        .filter(|&sent| sent == frame)
                        .count()
                });
            f.unanswered as usize + alive
        } else {
            0
        };
        let no_ack = std::iter::repeat_n((Expert::NoAck, NO_ACK), unanswered);
        for (which, text) in f.expert.iter().map(|(e, t)| (*e, t.as_str())).chain(no_ack) {
            self.items
                .push(item(which as u32, ItemKind::Expert, 0, 0.0, once(text)));
        }
        &self.items
    }

    /// The items of `frame` as text (`field=value`, `expert field: text`,
    /// `info: text`), for tests.
    pub fn describe(&mut self, frame: u64, complete: bool) -> Vec<String> {
        self.items(frame, complete)
            .iter()
            .map(|i| {
                // SAFETY: string items point into this analysis, alive here.
                let text = || {
                    unsafe { CStr::from_ptr(i.string) }
                        .to_string_lossy()
                        .into_owned()
                };
                let field = || {
                    registered_fields()
                        .get(i.field as usize)
                        .map_or("?".into(), |d| d.abbrev.to_string_lossy())
                };
                match i.kind {
                    ItemKind::Uint => format!("{}={}", field(), i.uint),
                    ItemKind::Bool => format!("{}={}", field(), i.uint != 0),
                    ItemKind::Double => format!("{}={}", field(), i.double),
                    ItemKind::String => format!("{}={}", field(), text()),
                    ItemKind::Expert => format!(
                        "{}: {}",
                        EXPERTS
                            .get(i.field as usize)
                            .map_or("?".into(), |d| d.abbrev.to_string_lossy()),
                        text()
                    ),
                    ItemKind::Info => format!("info: {}", text()),
                }
            })
            .collect()
    }

    /// Every frame with items.
    pub fn frames(&self) -> Vec<u64> {
        let with_base = self.builder.bases.iter().map(|(f, _)| *f);
        let mut v: Vec<u64> = with_base
            .chain(self.builder.frames.keys().copied())
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Associations whose handover state the engine still holds: those
    /// still in the tracker, not every one the capture had (for tests and
    /// measurements).
    pub fn associations_alive(&self) -> usize {
        self.builder.engine.alive()
    }

    /// How the frames so far were classified.
    pub fn accounting(&self) -> &sctp_handover::analysis::Accounting {
        self.analyzer.accounting()
    }
}

/// The first frame of the capture file at `path`, read from the file's
/// first MiB only: its captured length (`usize::MAX` for a record that
/// holds no packet) and time; `None` when there is none there.
pub fn first_frame(path: &Path) -> Option<(usize, Timestamp)> {
    use std::io::Read;
    let file = std::fs::File::open(path).ok()?;
    let mut reader = capture::from_reader(path, file.take(1 << 20)).ok()?;
    let mut first = None;
    // The cut at 1 MiB ends reading with a warning, not an error.
    let _ = reader.for_each_frame(|f| {
        if first.is_none() {
            let len = if f.link_type == link_type::NON_PACKET_RECORD {
                usize::MAX
            } else {
                f.data.len()
            };
            first = Some((len, f.timestamp));
        }
    });
    first
}

/// The first frame of the capture file at `path` (see [`first_frame`]):
/// nonzero and `*len`, `*time_ns` set when there is one.
///
/// # Safety
/// `path` must be a valid NUL-terminated string; `len` and `time_ns` valid
/// for writes.
#[no_mangle]
pub unsafe extern "C" fn sctpho_first_frame(
    path: *const c_char,
    len: *mut usize,
    time_ns: *mut i64,
) -> i32 {
    if path.is_null() {
        return 0;
    }
    // SAFETY: the caller passes a NUL-terminated string.
    let Ok(p) = unsafe { CStr::from_ptr(path) }.to_str() else {
        return 0;
    };
    // SAFETY: per the contract above.
    let (Some(len), Some(time_ns)) = (unsafe { len.as_mut() }, unsafe { time_ns.as_mut() }) else {
        return 0;
    };
    match catch_unwind(|| first_frame(Path::new(p))) {
        Ok(Some((l, t))) => {
            *len = l;
            *time_ns = t.0;
            1
        }
        _ => 0,
    }
}

/// Analyses the capture file at `path` now (the pre-scan); null when it
/// cannot be read as a capture.
///
/// # Safety
/// `path` must be a valid NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn sctpho_analyze_file(path: *const c_char) -> *mut Analysis {
    if path.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: the caller passes a NUL-terminated string.
    let Ok(p) = unsafe { CStr::from_ptr(path) }.to_str() else {
        return std::ptr::null_mut();
    };
    match catch_unwind(|| Analysis::prescan(Path::new(p))) {
        Ok(Some(a)) => Box::into_raw(Box::new(a)),
        _ => std::ptr::null_mut(),
    }
}

/// An empty analysis, fed with [`sctpho_feed`].
#[no_mangle]
pub extern "C" fn sctpho_incremental() -> *mut Analysis {
    Box::into_raw(Box::new(Analysis::incremental()))
}

/// The analyzer's default thresholds, in `*out`.
///
/// # Safety
/// `out` must be valid for a write (or null: nothing is written).
#[no_mangle]
pub unsafe extern "C" fn sctpho_default_thresholds(out: *mut ThresholdsIn) {
    // SAFETY: per the contract above.
    if let Some(out) = unsafe { out.as_mut() } {
        *out = ThresholdsIn::default();
    }
}

/// The thresholds at `t` (the defaults when null).
///
/// # Safety
/// `t` must be null or valid for a read.
unsafe fn thresholds_at(t: *const ThresholdsIn) -> ThresholdsIn {
    // SAFETY: per the contract above.
    unsafe { t.as_ref() }.copied().unwrap_or_default()
}

/// [`sctpho_analyze_file`] with the thresholds at `t` (defaults when null).
///
/// # Safety
/// `path` must be a valid NUL-terminated string; `t` null or valid.
#[no_mangle]
pub unsafe extern "C" fn sctpho_analyze_file_with(
    path: *const c_char,
    t: *const ThresholdsIn,
) -> *mut Analysis {
    if path.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: per the contract above.
    let thresholds = unsafe { thresholds_at(t) };
    // SAFETY: the caller passes a NUL-terminated string.
    let Ok(p) = unsafe { CStr::from_ptr(path) }.to_str() else {
        return std::ptr::null_mut();
    };
    match catch_unwind(|| Analysis::prescan_with(Path::new(p), &thresholds.options())) {
        Ok(Some(a)) => Box::into_raw(Box::new(a)),
        _ => std::ptr::null_mut(),
    }
}

/// [`sctpho_incremental`] with the thresholds at `t` (defaults when null).
///
/// # Safety
/// `t` must be null or valid for a read.
#[no_mangle]
pub unsafe extern "C" fn sctpho_incremental_with(t: *const ThresholdsIn) -> *mut Analysis {
    // SAFETY: per the contract above.
    let options = unsafe { thresholds_at(t) }.options();
    Box::into_raw(Box::new(Analysis::incremental_with(&options)))
}

/// The link types the analyzer decodes (`*count` of them).
///
/// # Safety
/// `count` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn sctpho_link_types(count: *mut usize) -> *const u32 {
    // SAFETY: per the contract above.
    if let Some(c) = unsafe { count.as_mut() } {
        *c = LINK_TYPES.len();
    }
    LINK_TYPES.as_ptr()
}

/// A frame as Wireshark first dissects it (see [`Analysis::feed`]).
///
/// # Safety
/// `analysis` must come from this library and not be freed; `frame` must
/// be valid, its `data` readable for `len` bytes (or null with `len` 0).
#[no_mangle]
pub unsafe extern "C" fn sctpho_feed(analysis: *mut Analysis, frame: *const FrameIn) {
    // SAFETY: per the contract above.
    let (Some(a), Some(f)) = (unsafe { analysis.as_mut() }, unsafe { frame.as_ref() }) else {
        return;
    };
    let data: &[u8] = if f.data.is_null() || f.len == 0 {
        &[]
    } else {
        // SAFETY: per the contract above.
        unsafe { std::slice::from_raw_parts(f.data, f.len) }
    };
    let time = Timestamp::from_parts(f.sec, i64::from(f.nsec));
    a.feed(
        f.number,
        time,
        f.link_type,
        f.interface,
        f.original_len,
        data,
    );
}

/// The items of `frame` (count in `*count`); null when it has none. Valid
/// until the next call with this analysis. `complete`: nonzero once the
/// capture has been read (Wireshark re-dissects a frame it has seen).
///
/// # Safety
/// `analysis` must come from this library and not be freed; `count` must
/// be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn sctpho_frame_items(
    analysis: *mut Analysis,
    frame: u64,
    complete: i32,
    count: *mut usize,
) -> *const Item {
    // SAFETY: per the contract above.
    let (Some(a), Some(count)) = (unsafe { analysis.as_mut() }, unsafe { count.as_mut() }) else {
        return std::ptr::null();
    };
    *count = 0;
    let Ok(items) = catch_unwind(AssertUnwindSafe(|| {
        let items = a.items(frame, complete != 0);
        (items.as_ptr(), items.len())
    })) else {
        return std::ptr::null();
    };
    if items.1 == 0 {
        return std::ptr::null();
    }
    *count = items.1;
    items.0
}

/// The Statistics text of the analysis (see [`Analysis::summary`]), valid
/// until the next call with this analysis; null when `analysis` is null.
///
/// # Safety
/// `analysis` must come from this library and not be freed (or be null).
#[no_mangle]
pub unsafe extern "C" fn sctpho_summary(analysis: *mut Analysis) -> *const c_char {
    // SAFETY: per the contract above.
    let Some(a) = (unsafe { analysis.as_mut() }) else {
        return std::ptr::null();
    };
    let Ok(text) = catch_unwind(AssertUnwindSafe(|| a.summary())) else {
        return std::ptr::null();
    };
    a.summary = c_string(&text);
    a.summary.as_ptr()
}

/// Frees an analysis.
///
/// # Safety
/// `analysis` must come from this library, freed at most once.
#[no_mangle]
pub unsafe extern "C" fn sctpho_free(analysis: *mut Analysis) {
    if !analysis.is_null() {
        // SAFETY: allocated by Box in this library.
        drop(unsafe { Box::from_raw(analysis) });
    }
}
