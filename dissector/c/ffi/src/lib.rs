//! The C plugin's engine: runs the analyzer over a capture file once and
//! turns its events into per-frame annotation items — the same `sctpho.*`
//! fields, in the same order, as the Lua plugin (dissector/sctpho.lua).
//! The C side only adds the items to the tree.

use sctp_handover::analysis::{analyze_file_with, AnalysisOptions};
use sctp_handover::events::{AsconfOutcome, Event, EventKind, EventSink, Observation};
use sctp_handover::handover::{HandoverEngine, SwitchClass};
use sctp_handover::wire::sctp_param::AsconfOp;
use std::collections::{HashMap, HashSet};
use std::ffi::{c_char, CStr, CString};
use std::net::IpAddr;
use std::path::Path;

/// What an item is; the C side maps `field` to its registered hf id.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    Uint = 0,
    Double = 1,
    String = 2,
    /// An expert note (`field` names the expert info).
    Expert = 3,
    /// Text appended to the Info column.
    Info = 4,
}

/// Field and expert names in the order of the C plugin's `field_names`
/// and `expert_names` tables: an item carries the index.
pub const FIELDS: [&str; 21] = [
    "sctpho.assoc",
    "sctpho.path",
    "sctpho.path.src",
    "sctpho.path.dst",
    "sctpho.direction",
    "sctpho.event",
    "sctpho.asconf.serial",
    "sctpho.asconf.ack_frame",
    "sctpho.asconf.request_frame",
    "sctpho.asconf.rtt",
    "sctpho.asconf.result",
    "sctpho.hb.ack_frame",
    "sctpho.hb.request_frame",
    "sctpho.hb.rtt",
    "sctpho.hb.path",
    "sctpho.switch.from_path",
    "sctpho.switch.to_path",
    "sctpho.switch.kind",
    "sctpho.switch.interrupt",
    "sctpho.switch.last_old_frame",
    "sctpho.switch.first_new_frame",
];
pub const EXPERTS: [&str; 5] = [
    "sctpho.expert.switch",
    "sctpho.expert.no_ack",
    "sctpho.expert.ack_error",
    "sctpho.expert.unconfirmed",
    "sctpho.expert.duplicate",
];

#[repr(C)]
pub struct Item {
    /// Index into FIELDS (or EXPERTS for expert items).
    pub field: u32,
    pub kind: ItemKind,
    pub uint: u64,
    pub double: f64,
    pub string: *const c_char,
}

/// Items as built, before the C strings are fixed in place.
#[derive(Debug, Clone)]
enum Value {
    Uint(u64),
    Double(f64),
    Str(String),
    Expert(String),
    Info(String),
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

#[derive(Debug, Default, Clone)]
struct Frame {
    base: Option<Base>,
    events: Vec<&'static str>,
    asconf: Vec<(&'static str, Value)>,
    hb: Vec<(&'static str, Value)>,
    switch: Vec<(&'static str, Value)>,
    expert: Vec<(&'static str, Value)>,
}

impl Frame {
    fn event(&mut self, e: &'static str) {
        if !self.events.contains(&e) {
            self.events.push(e);
        }
    }
}

/// Collects per-frame annotations while the analyzer streams.
struct Builder {
    engine: HandoverEngine,
    frames: HashMap<u64, Frame>,
    handshake: HashMap<u32, HashSet<IpAddr>>,
    confirmed: HashMap<u32, HashSet<IpAddr>>,
    /// ASCONFs not yet acknowledged: (association, sender, serial) → frame.
    open_asconfs: HashMap<(u32, usize, u32), u64>,
}

fn addr(a: IpAddr) -> String {
    a.to_string()
}

impl Builder {
    fn frame(&mut self, f: u64) -> &mut Frame {
        self.frames.entry(f).or_default()
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
                    fr.hb.push(("sctpho.hb.request_frame", Value::Uint(*req)));
                    fr.hb.push(("sctpho.hb.rtt", Value::Double(*rtt)));
                    fr.hb
                        .push(("sctpho.hb.path", Value::Uint(u64::from(*path))));
                    self.frame(*req)
                        .hb
                        .insert(0, ("sctpho.hb.ack_frame", Value::Uint(f)));
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
                    .push(("sctpho.asconf.serial", Value::Uint(u64::from(*serial))));
                self.open_asconfs
                    .insert((event.association, *sender, *serial), f);
            }
            EventKind::AsconfAck {
                serial,
                request_frame,
                rtt_ms,
                results,
                ..
            } => {
                let fr = self.frame(f);
                fr.event("asconf_ack");
                fr.asconf
                    .push(("sctpho.asconf.serial", Value::Uint(u64::from(*serial))));
                if let (Some(req), Some(rtt)) = (request_frame, rtt_ms) {
                    fr.asconf
                        .push(("sctpho.asconf.request_frame", Value::Uint(*req)));
                    fr.asconf.push(("sctpho.asconf.rtt", Value::Double(*rtt)));
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
                            "sctpho.asconf.result",
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
                                "sctpho.expert.ack_error",
                                Value::Expert(format!(
                                    "ASCONF-ACK reports an error for {} {}: {}",
                                    r.op.name(),
                                    addr(r.address),
                                    r.error_cause.unwrap_or("unknown")
                                )),
                            ));
                        }
                    }
                    self.open_asconfs.retain(|_, v| *v != *req);
                    let ack = f;
                    let reqf = self.frame(*req);
                    let at = reqf
                        .asconf
                        .iter()
                        .position(|(n, _)| *n == "sctpho.asconf.serial")
                        .map_or(0, |i| i + 1);
                    reqf.asconf
                        .insert(at, ("sctpho.asconf.ack_frame", Value::Uint(ack)));
                }
            }
            EventKind::Retransmission {
                already_acked, tsn, ..
            } => {
                let fr = self.frame(f);
                fr.event("retransmission");
                if *already_acked {
                    fr.event("duplicate");
                    fr.expert.push((
                        "sctpho.expert.duplicate",
                        Value::Expert(format!("duplicate: TSN {tsn} was already acknowledged")),
                    ));
                }
            }
            EventKind::DataPathChange {
                from_path: Some(_), ..
            } => {
                self.engine.emit(event.clone());
                let h = self.engine.last_handover().cloned();
                if let Some(h) = h {
                    let kind = format!("{:?}", h.class).to_lowercase();
                    let fr = self.frame(f);
                    fr.event("path_switch");
                    if h.class == SwitchClass::Failover {
                        fr.event("failover");
                    }
                    fr.switch.push((
                        "sctpho.switch.from_path",
                        Value::Uint(u64::from(h.from_path)),
                    ));
                    fr.switch
                        .push(("sctpho.switch.to_path", Value::Uint(u64::from(h.to_path))));
                    fr.switch
                        .push(("sctpho.switch.kind", Value::Str(kind.clone())));
                    if let Some(ms) = h.data_interrupt.ms {
                        fr.switch
                            .push(("sctpho.switch.interrupt", Value::Double(ms)));
                    }
                    if let Some(p) = h.data_interrupt.from.and_then(|p| p.frame) {
                        fr.switch
                            .push(("sctpho.switch.last_old_frame", Value::Uint(p)));
                    }
                    if let Some(p) = h.data_interrupt.to.and_then(|p| p.frame) {
                        fr.switch
                            .push(("sctpho.switch.first_new_frame", Value::Uint(p)));
                    }
                    fr.switch.push((
                        "",
                        Value::Info(format!(
                            " [{kind} path switch {}->{}]",
                            h.from_path, h.to_path
                        )),
                    ));
                    fr.expert.push((
                        "sctpho.expert.switch",
                        Value::Expert(format!(
                            "{kind} path switch from path {} to path {}",
                            h.from_path, h.to_path
                        )),
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
                self.frame(frame).base = Some(Base {
                    association,
                    path,
                    src,
                    dst,
                    sender,
                });
            }
            Observation::Data {
                frame, association, ..
            } => {
                let Some(ip) = self.frames.get(&frame).and_then(|f| f.base).map(|b| b.dst) else {
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
                        "sctpho.expert.unconfirmed",
                        Value::Expert(format!(
                            "DATA to {dst}, an address not yet confirmed by a HEARTBEAT ACK"
                        )),
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

/// One analysed capture: per frame, its items with C strings kept alive.
pub struct Analysis {
    frames: HashMap<u64, Vec<Item>>,
    _strings: Vec<CString>,
}

fn build(path: &Path) -> Option<Analysis> {
    let options = AnalysisOptions::default();
    let mut builder = Builder {
        engine: HandoverEngine::new(options.handover.clone()),
        frames: HashMap::new(),
        handshake: HashMap::new(),
        confirmed: HashMap::new(),
        open_asconfs: HashMap::new(),
    };
    analyze_file_with(path, &options, &mut builder).ok()?;
    for (_, f) in std::mem::take(&mut builder.open_asconfs) {
        builder.frame(f).expert.push((
            "sctpho.expert.no_ack",
            Value::Expert("ASCONF without ASCONF-ACK by the end of the capture".into()),
        ));
    }
    // Repeated strings (addresses, directions, event names) are stored once.
    let mut strings: Vec<CString> = Vec::new();
    let mut interned: HashMap<String, usize> = HashMap::new();
    let mut intern = |s: &str| -> *const c_char {
        let i = *interned.entry(s.to_string()).or_insert_with(|| {
            strings.push(CString::new(s.replace('\0', " ")).unwrap_or_default());
            strings.len() - 1
        });
        strings[i].as_ptr()
    };
    let index =
        |field: &str, table: &[&str]| table.iter().position(|f| *f == field).unwrap_or(0) as u32;
    let mut frames = HashMap::with_capacity(builder.frames.len());
    let mut address_cache: HashMap<IpAddr, *const c_char> = HashMap::new();
    let directions = [intern("0>1"), intern("1>0")];
    for (number, f) in builder.frames {
        let mut items = Vec::with_capacity(f.events.len() + 9);
        if let Some(b) = f.base {
            let mut address =
                |a: IpAddr| *address_cache.entry(a).or_insert_with(|| intern(&addr(a)));
            let (src, dst) = (address(b.src), address(b.dst));
            let uint = |field: u32, v: u64| Item {
                field,
                kind: ItemKind::Uint,
                uint: v,
                double: 0.0,
                string: std::ptr::null(),
            };
            let string = |field: u32, p: *const c_char| Item {
                field,
                kind: ItemKind::String,
                uint: 0,
                double: 0.0,
                string: p,
            };
            items.push(uint(0, u64::from(b.association)));
            items.push(uint(1, u64::from(b.path)));
            items.push(string(2, src));
            items.push(string(3, dst));
            items.push(string(4, directions[b.sender.min(1)]));
        }
        let events = f
            .events
            .iter()
            .map(|e| ("sctpho.event", Value::Str((*e).to_string())));
        for (field, value) in events
            .chain(f.asconf)
            .chain(f.hb)
            .chain(f.switch)
            .chain(f.expert)
        {
            let (kind, field, uint, double, string) = match value {
                Value::Uint(u) => (
                    ItemKind::Uint,
                    index(field, &FIELDS),
                    u,
                    0.0,
                    std::ptr::null(),
                ),
                Value::Double(d) => (
                    ItemKind::Double,
                    index(field, &FIELDS),
                    0,
                    d,
                    std::ptr::null(),
                ),
                Value::Str(s) => (ItemKind::String, index(field, &FIELDS), 0, 0.0, intern(&s)),
                Value::Expert(s) => (ItemKind::Expert, index(field, &EXPERTS), 0, 0.0, intern(&s)),
                Value::Info(s) => (ItemKind::Info, 0, 0, 0.0, intern(&s)),
            };
            items.push(Item {
                field,
                kind,
                uint,
                double,
                string,
            });
        }
        frames.insert(number, items);
    }
    Some(Analysis {
        frames,
        _strings: strings,
    })
}

/// Analyses `path`; null when it cannot be read as a capture.
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
    match std::panic::catch_unwind(|| build(Path::new(p))) {
        Ok(Some(a)) => Box::into_raw(Box::new(a)),
        _ => std::ptr::null_mut(),
    }
}

/// The items of `frame` (count in `*count`); null when it has none.
///
/// # Safety
/// `analysis` must come from [`sctpho_analyze_file`] and not be freed;
/// `count` must be valid for a write.
#[no_mangle]
pub unsafe extern "C" fn sctpho_frame_items(
    analysis: *const Analysis,
    frame: u64,
    count: *mut usize,
) -> *const Item {
    // SAFETY: per the contract above.
    let (Some(a), Some(count)) = (unsafe { analysis.as_ref() }, unsafe { count.as_mut() }) else {
        return std::ptr::null();
    };
    match a.frames.get(&frame) {
        Some(items) => {
            *count = items.len();
            items.as_ptr()
        }
        None => {
            *count = 0;
            std::ptr::null()
        }
    }
}

/// Frees an analysis.
///
/// # Safety
/// `analysis` must come from [`sctpho_analyze_file`], freed at most once.
#[no_mangle]
pub unsafe extern "C" fn sctpho_free(analysis: *mut Analysis) {
    if !analysis.is_null() {
        // SAFETY: allocated by Box in sctpho_analyze_file.
        drop(unsafe { Box::from_raw(analysis) });
    }
}
