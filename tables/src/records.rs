//! Analysis results → table rows: one function per table, each pushing its
//! columns in the order `schema` defines them.

use crate::rows::{AddressText, Rows};
use crate::schema;
use sctp_handover::analysis::{
    AssociationPart, AssociationReport, FileReport, ACCOUNTING_CATEGORIES,
};
use sctp_handover::events::{AssocId, Event, EventKind};
use sctp_handover::handover::{CapturePoint, Component, Handover, SwitchClass, COMPONENTS};
use sctp_handover::time::{Nanos, Timestamp};
use sctp_handover::track::rto::RttStats;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::net::IpAddr;

/// The rows of every table but `files`, for the associations of one input.
pub struct AssociationTables {
    /// The `associations` table's rows.
    pub associations: Rows,
    /// The `paths` table's rows.
    pub paths: Rows,
    /// The `asconf` table's rows.
    pub asconf: Rows,
    /// The `events` table's rows.
    pub events: Rows,
    /// The `handovers` table's rows.
    pub handovers: Rows,
    /// What the parts of associations still alive held, for their
    /// `associations` row ([`AssociationTables::add_part`]).
    carried: HashMap<AssocId, Carried>,
}

/// Counts of an association's parts handed on before it finished.
#[derive(Default, Clone, Copy)]
struct Carried {
    asconfs: u64,
    handovers: u64,
    failovers: u64,
}

impl Carried {
    fn of(events: &[Event], handovers: &[Handover]) -> Self {
        Carried {
            asconfs: events
                .iter()
                .filter(|e| matches!(e.kind, EventKind::Asconf { .. }))
                .count() as u64,
            handovers: handovers.len() as u64,
            failovers: handovers
                .iter()
                .filter(|h| h.class == SwitchClass::Failover)
                .count() as u64,
        }
    }

    fn add(&mut self, other: Carried) {
        self.asconfs += other.asconfs;
        self.handovers += other.handovers;
        self.failovers += other.failovers;
    }
}

impl Default for AssociationTables {
    fn default() -> Self {
        Self::new()
    }
}

impl AssociationTables {
    /// No rows yet.
    pub fn new() -> Self {
        AssociationTables {
            associations: Rows::new(&schema::ASSOCIATIONS),
            paths: Rows::new(&schema::PATHS),
            asconf: Rows::new(&schema::ASCONF),
            events: Rows::new(&schema::EVENTS),
            handovers: Rows::new(&schema::handovers()),
            carried: HashMap::new(),
        }
    }

    /// The names of the tables filled per association, in `schema::all()`
    /// order after `files`.
    pub const NAMES: [&'static str; 5] = ["associations", "paths", "asconf", "events", "handovers"];

    /// The tables with their names ([`Self::NAMES`]).
    pub fn by_name(&mut self) -> [(&'static str, &mut Rows); 5] {
        let [a, p, x, e, h] = Self::NAMES;
        [
            (a, &mut self.associations),
            (p, &mut self.paths),
            (x, &mut self.asconf),
            (e, &mut self.events),
            (h, &mut self.handovers),
        ]
    }

    /// Bytes the buffered rows of every table hold.
    pub fn bytes(&self) -> usize {
        self.associations.bytes()
            + self.paths.bytes()
            + self.asconf.bytes()
            + self.events.bytes()
            + self.handovers.bytes()
    }

    /// Adds one finished association; `capture_point` is the file's (each
    /// handover row carries it: the components depend on it).
    pub fn add(&mut self, r: &AssociationReport, capture_point: CapturePoint) {
        self.add_captured(r, capture_point, None);
    }

    /// [`AssociationTables::add`] for a live capture: `drops` holds, per
    /// handover in order, the drop spans it meets as text (None: none),
    /// for the `capture_drops*` columns ([`schema::HANDOVERS_CAPTURE_DROPS`]).
    pub fn add_live(
        &mut self,
        r: &AssociationReport,
        capture_point: CapturePoint,
        drops: &[Option<String>],
    ) {
        self.add_captured(r, capture_point, Some(drops));
    }

    fn add_captured(
        &mut self,
        r: &AssociationReport,
        capture_point: CapturePoint,
        drops: Option<&[Option<String>]>,
    ) {
        let id = r.association.id;
        let mut counts = self.carried.remove(&id).unwrap_or_default();
        counts.add(Carried::of(&r.events, &r.handovers));
        association_row(&mut self.associations, r, counts);
        path_rows(&mut self.paths, r);
        self.add_results(id, &r.events, &r.handovers, capture_point, drops);
    }

    /// Adds the rows of a part of a long association's results handed on
    /// before it finished; its `associations` and `paths` rows come with
    /// [`AssociationTables::add`].
    pub fn add_part(&mut self, part: &AssociationPart, capture_point: CapturePoint) {
        self.add_part_captured(part, capture_point, None);
    }

    /// [`AssociationTables::add_part`] for a live capture, with the drop
    /// spans each handover meets ([`AssociationTables::add_live`]).
    pub fn add_part_live(
        &mut self,
        part: &AssociationPart,
        capture_point: CapturePoint,
        drops: &[Option<String>],
    ) {
        self.add_part_captured(part, capture_point, Some(drops));
    }

    fn add_part_captured(
        &mut self,
        part: &AssociationPart,
        capture_point: CapturePoint,
        drops: Option<&[Option<String>]>,
    ) {
        self.carried
            .entry(part.association)
            .or_default()
            .add(Carried::of(&part.events, &part.handovers));
        self.add_results(
            part.association,
            &part.events,
            &part.handovers,
            capture_point,
            drops,
        );
    }

    fn add_results(
        &mut self,
        id: AssocId,
        events: &[Event],
        handovers: &[Handover],
        capture_point: CapturePoint,
        drops: Option<&[Option<String>]>,
    ) {
        asconf_rows(&mut self.asconf, id, events);
        event_rows(&mut self.events, id, events, handovers);
        for (i, h) in handovers.iter().enumerate() {
            // Live, a handover without an entry met no drop span.
            let dropped = drops.map(|d| d.get(i).and_then(Option::as_deref));
            handover_row(&mut self.handovers, h, id, capture_point, dropped);
        }
    }
}

fn t(v: Timestamp) -> Option<i64> {
    Some(v.0)
}

fn ms(v: Option<Nanos>) -> Option<f64> {
    v.map(Nanos::as_millis_f64)
}

fn rtt(rows: &mut Rows, s: &RttStats) {
    rows.u64(s.samples)
        .f64(ms(s.min))
        .f64(ms(s.mean()))
        .f64(ms(s.max));
}

/// How a file was handled, beside what its analysis says.
pub struct FileOutcome<'a> {
    /// `ok`, `truncated`, `failed` or `skipped` (the `status` column).
    pub status: &'a str,
    /// Why it failed, was cut short or skipped; None when `ok`.
    pub error: Option<String>,
    /// Its size; None when unknown (standard input, a live capture).
    pub size_bytes: Option<u64>,
    /// What its analysis found; None when it was not analysed (the
    /// analysis columns are then null).
    pub report: Option<&'a FileReport>,
    /// Wall-clock seconds its analysis took.
    pub seconds: f64,
}

/// Pushes the `files` table's row of one input.
pub fn file_row(rows: &mut Rows, o: &FileOutcome<'_>) {
    rows.text(o.status).str(o.error.clone()).u64(o.size_bytes);
    match o.report {
        Some(f) => {
            let a = &f.accounting;
            let link_types: Vec<String> = f.link_types.iter().map(u32::to_string).collect();
            rows.text(f.format.as_str())
                .bool(f.compressed)
                .text(link_types.join(","))
                .u64(f.frames);
            for (_, n) in a.categories() {
                rows.u64(n);
            }
            let first_problem = f.problems.first();
            rows.time(f.first_time.map(|x| x.0))
                .time(f.last_time.map(|x| x.0))
                .u64(f.time_order.regressions)
                .u64(f.problems.len() as u64)
                .u64(first_problem.map(|p| p.frame))
                .str(first_problem.map(|p| p.reason.clone()))
                .u64(f.checksum.verified.then_some(f.checksum.failures))
                .u64(f.associations)
                .u64(f.handovers)
                .text(f.capture_point.as_str())
                .str((!f.limits.is_empty()).then(|| f.limits.join("; ")));
        }
        None => {
            rows.str(None::<String>)
                .bool(None)
                .str(None::<String>)
                .u64(None);
            for _ in 0..ACCOUNTING_CATEGORIES {
                rows.u64(None);
            }
            rows.time(None)
                .time(None)
                .u64(None)
                .u64(None)
                .u64(None)
                .str(None::<String>)
                .u64(None)
                .u64(None)
                .u64(None)
                .str(None::<String>)
                .str(None::<String>);
        }
    }
    rows.f64(o.seconds).text(env!("CARGO_PKG_VERSION"));
    rows.end();
}

fn association_row(rows: &mut Rows, r: &AssociationReport, counts: Carried) {
    let a = &r.association;
    let start = match a.start {
        sctp_handover::track::assoc::Start::Init => "init",
        sctp_handover::track::assoc::Start::InitAck => "init_ack",
        sctp_handover::track::assoc::Start::MidStream => "mid_stream",
    };
    let mut text = AddressText::default();
    let mut addresses = |i: usize| -> String {
        let mut list = String::new();
        for (n, x) in a.endpoints[i].addresses.iter().enumerate() {
            if n > 0 {
                list.push(';');
            }
            list.push_str(text.of(x.address));
        }
        list
    };
    let d = &a.directions;
    rows.u64(u64::from(a.id))
        .text(start)
        .u64(a.first_frame)
        .time(t(a.first_time))
        .u64(a.last_frame)
        .time(t(a.last_time))
        .f64(a.last_time.since(a.first_time).as_millis_f64())
        .u64(a.established_frame)
        .str(a.end.map(|e| e.as_str()))
        .u64(a.end_frame)
        .u64(a.packets)
        .u64(u64::from(a.endpoints[0].port))
        .u64(u64::from(a.endpoints[1].port))
        .u64(a.endpoints[0].verification_tag.map(u64::from))
        .u64(a.endpoints[1].verification_tag.map(u64::from))
        .text(addresses(0))
        .text(addresses(1))
        .u64(a.paths.len() as u64)
        .u64(d[0].counters().new_chunks)
        .u64(d[1].counters().new_chunks)
        .u64(d[0].counters().retransmitted_chunks)
        .u64(d[1].counters().retransmitted_chunks)
        .u64(d[0].counters().user_data_bytes)
        .u64(d[1].counters().user_data_bytes)
        .u64(counts.asconfs)
        .u64(counts.handovers)
        .u64(counts.failovers)
        .u64(
            a.paths
                .iter()
                .map(|p| u64::from(p.inactive_transitions))
                .sum::<u64>(),
        );
    rows.end();
}

fn path_rows(rows: &mut Rows, r: &AssociationReport) {
    let a = &r.association;
    for p in &a.paths {
        rows.u64(u64::from(a.id))
            .u64(u64::from(p.id))
            .u64(p.sender as u64)
            .address(Some(p.src))
            .address(Some(p.dst))
            .u64(p.first_frame)
            .time(t(p.first_time))
            .u64(p.last_frame)
            .time(t(p.last_time))
            .u64(p.packets)
            .u64(p.bytes)
            .u64(p.data_new)
            .u64(p.data_retransmitted)
            .u64(p.data_retransmitted_after_ack)
            .u64(p.heartbeats_sent)
            .u64(p.heartbeats_acked)
            .u64(p.heartbeats_unanswered);
        rtt(rows, &p.hb_rtt);
        rtt(rows, &p.data_rtt);
        let measured = p.rto.srtt.is_some();
        rows.f64(ms(p.rto.srtt))
            .f64(ms(p.rto.rttvar))
            .f64(measured.then(|| p.rto.rto.as_millis_f64()))
            .u64(p.confirmed_frame)
            .time(p.confirmed_time.map(|x| x.0))
            .bool(p.active)
            .text(p.status().as_str())
            .u64(u64::from(p.error_count))
            .u64(u64::from(p.max_error_count))
            .u64(u64::from(p.inactive_transitions))
            .u64(u64::from(p.pf_transitions))
            .u64(p.icmp_errors);
        rows.end();
    }
}

/// An ASCONF's answer is in the same part as the ASCONF (a part holds an
/// outstanding ASCONF back until its answer came or cannot come).
fn asconf_rows(rows: &mut Rows, id: AssocId, events: &[Event]) {
    // ASCONF-ACKs by the frame of the ASCONF they answer.
    let acks: HashMap<u64, &Event> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::AsconfAck {
                request_frame: Some(f),
                ..
            } => Some((*f, e)),
            _ => None,
        })
        .collect();
    let id = u64::from(id);
    for e in events {
        let EventKind::Asconf {
            path,
            sender,
            serial,
            retransmission,
            transmission,
            first_frame,
            bytes,
            requests,
        } = &e.kind
        else {
            continue;
        };
        let ack = acks.get(&e.frame).copied();
        let (ack_frame, ack_time, rtt_ms, ack_bytes, repeated, results) =
            match ack.map(|a| (a, &a.kind)) {
                Some((
                    a,
                    EventKind::AsconfAck {
                        rtt_ms,
                        bytes,
                        repeated,
                        results,
                        ..
                    },
                )) => (
                    Some(a.frame),
                    Some(a.time.0),
                    *rtt_ms,
                    Some(*bytes as u64),
                    Some(*repeated),
                    Some(results),
                ),
                _ => (None, None, None, None, None, None),
            };
        let push =
            |rows: &mut Rows, request: Option<&sctp_handover::events::AsconfRequestEvent>| {
                let result = request.and_then(|q| {
                    results.and_then(|rs| rs.iter().find(|x| x.correlation_id == q.correlation_id))
                });
                rows.u64(id)
                    .u64(e.frame)
                    .time(t(e.time))
                    .u64(*sender as u64)
                    .u64(u64::from(*path))
                    .u64(u64::from(*serial))
                    .bool(*retransmission)
                    .u64(u64::from(*transmission))
                    .u64(*first_frame)
                    .u64(*bytes as u64)
                    .str(request.map(|q| q.op.name()))
                    .u64(request.map(|q| u64::from(q.correlation_id)))
                    .address(request.map(|q| q.address))
                    .bool(request.map(|q| q.wildcard))
                    .u64(ack_frame)
                    .time(ack_time)
                    .f64(rtt_ms)
                    .u64(ack_bytes)
                    .bool(repeated)
                    .str(result.map(|x| x.outcome.as_str()))
                    .str(result.and_then(|x| x.error_cause));
                rows.end();
            };
        if requests.is_empty() {
            push(rows, None);
        }
        for q in requests {
            push(rows, Some(q));
        }
    }
}

/// One events row; unset columns are null.
#[derive(Default)]
struct EventRow {
    endpoint: Option<u64>,
    path: Option<u64>,
    other_path: Option<u64>,
    address: Option<IpAddr>,
    request_frame: Option<u64>,
    rtt_ms: Option<f64>,
    serial: Option<u64>,
    tsn: Option<u64>,
    count: Option<u64>,
    detail: Option<Cow<'static, str>>,
}

fn push_event(rows: &mut Rows, assoc: u64, frame: u64, time: Timestamp, kind: &str, r: EventRow) {
    rows.u64(assoc)
        .u64(frame)
        .time(t(time))
        .text(kind)
        .u64(r.endpoint)
        .u64(r.path)
        .u64(r.other_path)
        .address(r.address)
        .u64(r.request_frame)
        .f64(r.rtt_ms)
        .u64(r.serial)
        .u64(r.tsn)
        .u64(r.count)
        .str(r.detail);
    rows.end();
}

/// A HEARTBEAT's answer is in the same part as the HEARTBEAT (as for
/// ASCONFs above); a handover's T3 expiries are merged with the events of
/// the part that holds the handover.
fn event_rows(rows: &mut Rows, id: AssocId, events: &[Event], handovers: &[Handover]) {
    let id = u64::from(id);
    let answered: HashSet<u64> = events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::HeartbeatAck {
                request_frame: Some(f),
                ..
            } => Some(f),
            _ => None,
        })
        .collect();
    // T3 expiries come from the handovers' failover analysis; they are
    // merged in frame order with the tracker's events.
    let mut expiries: Vec<(u64, Timestamp, EventRow)> = Vec::new();
    for h in handovers {
        if let Some(f) = &h.failover {
            for x in &f.expiries {
                expiries.push((
                    x.frame,
                    x.time,
                    EventRow {
                        endpoint: Some(h.sender as u64),
                        path: Some(u64::from(h.from_path)),
                        tsn: Some(u64::from(x.first_tsn)),
                        count: Some(x.retransmissions),
                        ..Default::default()
                    },
                ));
            }
        }
    }
    expiries.sort_by_key(|x| x.0);
    let mut pending = expiries.into_iter().peekable();
    for e in events {
        while let Some((frame, time, _)) = pending.peek() {
            if *frame > e.frame {
                break;
            }
            let (frame, time, row) = (
                *frame,
                *time,
                pending.next().map(|x| x.2).unwrap_or_default(),
            );
            push_event(rows, id, frame, time, "t3_expiry", row);
        }
        let (kind, row) = match &e.kind {
            EventKind::AssociationStart { how } => (
                "association_start",
                EventRow {
                    detail: Some((*how).into()),
                    ..Default::default()
                },
            ),
            EventKind::AssociationEnd { reason } => (
                "association_end",
                EventRow {
                    detail: Some(reason.as_str().into()),
                    ..Default::default()
                },
            ),
            EventKind::AddressLearned {
                endpoint,
                address,
                how,
            } => (
                "address_learned",
                EventRow {
                    endpoint: Some(*endpoint as u64),
                    address: Some(*address),
                    detail: Some(
                        match how {
                            sctp_handover::events::AddressSource::Init => "init",
                            sctp_handover::events::AddressSource::Observed => "observed",
                            sctp_handover::events::AddressSource::Asconf => "asconf",
                        }
                        .into(),
                    ),
                    ..Default::default()
                },
            ),
            EventKind::AddressDeleted { endpoint, address } => (
                "address_deleted",
                EventRow {
                    endpoint: Some(*endpoint as u64),
                    address: Some(*address),
                    ..Default::default()
                },
            ),
            EventKind::PathSeen { path, src, dst } => (
                "path_seen",
                EventRow {
                    path: Some(u64::from(*path)),
                    detail: Some(format!("{src} -> {dst}").into()),
                    ..Default::default()
                },
            ),
            EventKind::Heartbeat { path, .. } => {
                if answered.contains(&e.frame) {
                    continue;
                }
                (
                    "heartbeat",
                    EventRow {
                        path: Some(u64::from(*path)),
                        detail: Some("unanswered".into()),
                        ..Default::default()
                    },
                )
            }
            EventKind::HeartbeatAck {
                path,
                reply_path,
                request_frame,
                rtt_ms,
            } => (
                "heartbeat",
                EventRow {
                    path: Some(u64::from(*path)),
                    other_path: Some(u64::from(*reply_path)),
                    request_frame: *request_frame,
                    rtt_ms: *rtt_ms,
                    detail: Some(
                        if request_frame.is_some() {
                            "answered"
                        } else {
                            "ack without captured request"
                        }
                        .into(),
                    ),
                    ..Default::default()
                },
            ),
            EventKind::PathConfirmed { .. } => continue,
            EventKind::Asconf {
                path,
                sender,
                serial,
                retransmission,
                requests,
                ..
            } => {
                let ops: Vec<String> = requests
                    .iter()
                    .map(|q| format!("{} {}", q.op.name(), q.address))
                    .collect();
                (
                    "asconf",
                    EventRow {
                        endpoint: Some(*sender as u64),
                        path: Some(u64::from(*path)),
                        serial: Some(u64::from(*serial)),
                        count: Some(requests.len() as u64),
                        detail: Some(
                            format!(
                                "{}{}",
                                ops.join(", "),
                                if *retransmission {
                                    " (retransmission)"
                                } else {
                                    ""
                                }
                            )
                            .into(),
                        ),
                        ..Default::default()
                    },
                )
            }
            EventKind::AsconfAck {
                path,
                serial,
                request_frame,
                rtt_ms,
                results,
                ..
            } => {
                let res: Vec<String> = results
                    .iter()
                    .map(|x| format!("{} {}: {}", x.op.name(), x.address, x.outcome.as_str()))
                    .collect();
                (
                    "asconf_ack",
                    EventRow {
                        path: Some(u64::from(*path)),
                        serial: Some(u64::from(*serial)),
                        request_frame: *request_frame,
                        rtt_ms: *rtt_ms,
                        detail: Some(res.join(", ").into()),
                        ..Default::default()
                    },
                )
            }
            EventKind::PeerPrimarySet { requester, address } => (
                "peer_primary_set",
                EventRow {
                    endpoint: Some(*requester as u64),
                    address: Some(*address),
                    ..Default::default()
                },
            ),
            EventKind::DataPathChange {
                sender,
                from_path: Some(from),
                to_path,
                tsn,
            } => (
                "path_switch",
                EventRow {
                    endpoint: Some(*sender as u64),
                    path: Some(u64::from(*to_path)),
                    other_path: Some(u64::from(*from)),
                    tsn: Some(u64::from(*tsn)),
                    ..Default::default()
                },
            ),
            EventKind::DataPathChange {
                from_path: None, ..
            } => continue,
            EventKind::Retransmission { .. } => continue,
            EventKind::PathInactive { path, error_count } => (
                "path_inactive",
                EventRow {
                    path: Some(u64::from(*path)),
                    count: Some(u64::from(*error_count)),
                    ..Default::default()
                },
            ),
            EventKind::PathActive { path } => (
                "path_active",
                EventRow {
                    path: Some(u64::from(*path)),
                    ..Default::default()
                },
            ),
            EventKind::PathPotentiallyFailed { path, error_count } => (
                "path_potentially_failed",
                EventRow {
                    path: Some(u64::from(*path)),
                    count: Some(u64::from(*error_count)),
                    ..Default::default()
                },
            ),
            EventKind::ErrorCounterCleared {
                path,
                error_count,
                by,
            } => (
                "error_counter_cleared",
                EventRow {
                    path: Some(u64::from(*path)),
                    count: Some(u64::from(*error_count)),
                    detail: Some((*by).into()),
                    ..Default::default()
                },
            ),
            EventKind::SpuriousExpiry {
                sender,
                path,
                expiry_frame,
                tsn,
            } => (
                "spurious_expiry",
                EventRow {
                    endpoint: Some(*sender as u64),
                    path: Some(u64::from(*path)),
                    request_frame: Some(*expiry_frame),
                    tsn: Some(u64::from(*tsn)),
                    ..Default::default()
                },
            ),
            EventKind::IcmpError {
                path,
                reporter,
                icmp_type,
                icmp_code,
            } => (
                "icmp_error",
                EventRow {
                    path: path.map(u64::from),
                    address: Some(*reporter),
                    detail: Some(format!("type {icmp_type} code {icmp_code}").into()),
                    ..Default::default()
                },
            ),
        };
        push_event(rows, id, e.frame, e.time, kind, row);
    }
    for (frame, time, row) in pending {
        push_event(rows, id, frame, time, "t3_expiry", row);
    }
}

fn component(rows: &mut Rows, c: Option<&Component>) {
    match c {
        Some(c) => {
            rows.f64(c.ms)
                .u64(c.from.and_then(|p| p.frame))
                .u64(c.to.and_then(|p| p.frame))
                .str(c.missing.as_deref());
        }
        None => {
            rows.f64(None)
                .u64(None)
                .u64(None)
                .str(Some("not a failover / no recognition"));
        }
    }
}

/// `dropped`: None when not captured live (the `capture_drops*` columns
/// null), else the drop spans the handover meets (None: none).
fn handover_row(
    rows: &mut Rows,
    h: &Handover,
    association: u32,
    capture_point: CapturePoint,
    dropped: Option<Option<&str>>,
) {
    let f = h.failover.as_ref();
    rows.u64(u64::from(association))
        .u64(h.sender as u64)
        .u64(u64::from(h.from_path))
        .u64(u64::from(h.to_path))
        .address(Some(h.from_src))
        .address(Some(h.from_dst))
        .address(Some(h.to_src))
        .address(Some(h.to_dst))
        .text(h.class.as_str())
        .text(h.class_reason.as_str())
        .text(capture_point.as_str())
        .u64(h.switch_frame)
        .time(t(h.switch_time))
        .u64(u64::from(h.switch_tsn))
        .u64(u64::from(h.sequence_gap_tsn))
        .u64(h.asconf.len() as u64)
        .u64(h.dar_overhead_bytes as u64)
        .u64(h.addip_transmissions.map(u64::from))
        .u64(h.setprim_transmissions.map(u64::from))
        .u64(u64::from(h.window.until_tsn))
        .u64(h.window.end.and_then(|p| p.frame))
        .text(h.window.end_reason.as_str())
        .u64(h.window.retransmissions)
        .u64(h.window.retransmitted_after_ack)
        .u64(h.window.dup_tsns_reported)
        .u64(h.window.lost_in_switch)
        .u64(f.map(|x| x.expiries.len() as u64))
        .f64(f.and_then(|x| x.first_expiry_after_ms))
        .f64(f.and_then(|x| x.rto_estimate_ms))
        .u64(f.and_then(|x| x.observed_pmr.map(u64::from)))
        .str(f.map(|x| x.old_path_state.as_str()))
        .u64(f.and_then(|x| x.observed_pf_retrans.map(u64::from)))
        .u64(f.map(|x| x.counter_resets.len() as u64))
        .u64(f.map(|x| x.spurious_expiries.len() as u64))
        .f64(f.and_then(|x| x.predicted_backoff_ms))
        .f64(f.and_then(|x| x.predicted_fixed_rto_ms));
    // The schema's columns per component follow the same list.
    for c in COMPONENTS {
        component(rows, (c.get)(h));
    }
    rows.bool(dropped.map(|d| d.is_some()))
        .str(dropped.flatten());
    rows.end();
}
