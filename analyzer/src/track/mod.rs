//! Association and path reconstruction: SCTP packets in, association/path
//! state and [`crate::events`] out.

pub mod assoc;
pub mod dedup;
pub mod path;
pub mod rto;
pub mod tsn;

use crate::decode::{IcmpQuote, SctpDatagram};
use crate::events::{
    AddressSource, AsconfOutcome, AsconfRequestEvent, AsconfResultEvent, AssocId, EndpointId,
    Event, EventKind, EventSink, Observation, PathId,
};
use crate::time::Timestamp;
use crate::wire::sctp::Packet as SctpPacket;
use crate::wire::sctp_chunk::{
    chunk_type, AsconfAckChunk, AsconfChunk, Chunk, DataChunk, HeartbeatChunk, IDataChunk,
    InitChunk, SackChunk, ShutdownChunk, FLAG_T,
};
use crate::wire::sctp_param::{
    cause_code, param_type, AsconfOp, AsconfRequestRepr, AsconfResponseRepr,
};
use crate::wire::Error as WireError;
use assoc::{Association, DataSegment, PendingAsconf, PendingHeartbeat, Start};
use path::{ChunkCounts, PathState, Transition};
use rto::RtoConfig;
use std::collections::HashMap;
use std::net::IpAddr;
use tsn::DataClass;

/// Outstanding HEARTBEATs / ASCONFs remembered per association for
/// matching; the oldest is forgotten beyond this.
const MAX_PENDING_HEARTBEATS: usize = 256;
const MAX_PENDING_ASCONFS: usize = 64;

#[derive(Debug, Clone, Copy)]
pub struct TrackConfig {
    pub rto: RtoConfig,
    /// Path.Max.Retrans for the inferred active/inactive state (RFC 9260
    /// §16 default 5).
    pub path_max_retrans: u32,
}

impl Default for TrackConfig {
    fn default() -> Self {
        TrackConfig {
            rto: RtoConfig::default(),
            path_max_retrans: 5,
        }
    }
}

/// Counters over all associations of a capture.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct TrackCounters {
    pub chunks: ChunkCounts,
    /// Chunks that could not be decoded (bad length or fields).
    pub malformed_chunks: u64,
    pub heartbeat_acks_unmatched: u64,
    pub asconf_acks_unmatched: u64,
    pub icmp_errors_matched: u64,
    pub icmp_errors_unmatched: u64,
}

/// What the tracker made of one SCTP packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketVerdict {
    Analysed,
    /// At least one chunk could not be decoded; the chunks before it were
    /// still applied.
    Malformed(&'static str),
}

/// Key of the verification-tag table: a packet from `src_port` to
/// `dst_port` carrying `tag` belongs to (association, sending endpoint).
type TagKey = (u16, u16, u32);

pub struct Tracker {
    config: TrackConfig,
    pub associations: Vec<Association>,
    by_tag: HashMap<TagKey, (AssocId, EndpointId)>,
    /// INITs seen, by (src port, dst port, initiate tag), to fold INIT
    /// retransmissions into one association.
    by_init: HashMap<TagKey, AssocId>,
    /// Associations by unordered port pair, newest last.
    by_ports: HashMap<(u16, u16), Vec<AssocId>>,
    pub counters: TrackCounters,
}

/// The per-packet context handed to chunk handlers.
#[derive(Clone, Copy)]
struct Ctx {
    frame: u64,
    time: Timestamp,
    assoc: AssocId,
    sender: EndpointId,
    path: PathId,
    src: IpAddr,
}

impl Ctx {
    fn receiver(&self) -> EndpointId {
        1 - self.sender
    }
    fn event(&self, kind: EventKind) -> Event {
        Event {
            frame: self.frame,
            time: self.time,
            association: self.assoc,
            kind,
        }
    }
}

fn port_pair(a: u16, b: u16) -> (u16, u16) {
    (a.min(b), a.max(b))
}

/// FNV-1a offset basis: start a hash with it, then feed [`fnv1a`].
pub(crate) const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// Continues an FNV-1a hash over `bytes` (cheap, and good enough to tell
/// heartbeat infos and packet copies apart).
pub(crate) fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn hash_bytes(bytes: &[u8]) -> u64 {
    fnv1a(FNV_OFFSET, bytes) ^ (bytes.len() as u64).rotate_left(32)
}

impl Tracker {
    pub fn new(config: TrackConfig) -> Self {
        Tracker {
            config,
            associations: Vec::new(),
            by_tag: HashMap::new(),
            by_init: HashMap::new(),
            by_ports: HashMap::new(),
            counters: TrackCounters::default(),
        }
    }

    /// Applies one SCTP packet.
    pub fn packet(
        &mut self,
        frame: u64,
        time: Timestamp,
        dg: &SctpDatagram<'_>,
        sink: &mut dyn EventSink,
    ) -> PacketVerdict {
        let Ok(packet) = SctpPacket::new_checked(dg.bytes) else {
            return PacketVerdict::Malformed("SCTP common header truncated");
        };
        let first = packet.chunks().next().and_then(|c| c.ok()).map(|(_, c)| c);
        let (assoc, sender) = self.locate(&packet, first.as_ref(), dg, frame, time, sink);
        let path = self.touch(assoc, sender, dg, frame, time, sink);
        sink.observe(&Observation::Packet {
            frame,
            time,
            association: assoc,
            sender,
            path,
            src: dg.src,
            dst: dg.dst,
            handshake: first
                .as_ref()
                .is_some_and(|c| matches!(c.chunk_type(), chunk_type::INIT | chunk_type::INIT_ACK)),
        });
        let ctx = Ctx {
            frame,
            time,
            assoc,
            sender,
            path,
            src: dg.src,
        };
        let mut verdict = PacketVerdict::Analysed;
        let mut errors_charged: u64 = 0;
        for item in packet.chunks() {
            let chunk = match item {
                Ok((_, c)) => c,
                Err(e) => {
                    // A chunk cut by the snaplen is expected in a cut
                    // packet; anything else is malformed.
                    if !(dg.cut && e == WireError::Truncated) {
                        self.counters.malformed_chunks += 1;
                        verdict = PacketVerdict::Malformed(match e {
                            WireError::Truncated => "chunk length runs past the packet",
                            WireError::Malformed(why) => why,
                        });
                    }
                    break;
                }
            };
            let t = chunk.chunk_type();
            self.counters.chunks.add(t);
            self.associations[assoc as usize].paths[usize::from(path)]
                .chunks
                .add(t);
            if let Err(why) = self.chunk(&ctx, &chunk, &mut errors_charged, sink) {
                self.counters.malformed_chunks += 1;
                verdict = PacketVerdict::Malformed(why);
            }
        }
        verdict
    }

    /// Finds (or creates) the association and the sending endpoint.
    fn locate(
        &mut self,
        packet: &SctpPacket<&[u8]>,
        first: Option<&Chunk<&[u8]>>,
        dg: &SctpDatagram<'_>,
        frame: u64,
        time: Timestamp,
        sink: &mut dyn EventSink,
    ) -> (AssocId, EndpointId) {
        let (sport, dport, vtag) = (
            packet.src_port(),
            packet.dst_port(),
            packet.verification_tag(),
        );
        let first_type = first.map(|c| c.chunk_type());
        let initiate_tag = first
            .filter(|c| matches!(c.chunk_type(), chunk_type::INIT | chunk_type::INIT_ACK))
            .and_then(|c| InitChunk::new_checked(c).ok())
            .map(|i| i.initiate_tag());

        if let (Some(chunk_type::INIT), Some(tag)) = (first_type, initiate_tag) {
            if let Some(&id) = self.by_init.get(&(sport, dport, tag)) {
                return (id, 0);
            }
            self.supersede(sport, dport, dg, frame, time, sink);
            let id = self.create(Start::Init, [sport, dport], frame, time, sink);
            self.by_init.insert((sport, dport, tag), id);
            self.set_tag(id, 0, tag);
            return (id, 0);
        }
        if let (Some(chunk_type::INIT_ACK), Some(tag)) = (first_type, initiate_tag) {
            if let Some(&(id, sender)) = self.by_tag.get(&(sport, dport, vtag)) {
                self.set_tag(id, sender, tag);
                return (id, sender);
            }
            // INIT not captured: the INIT ACK's receiver is the initiator.
            let id = self.create(Start::InitAck, [dport, sport], frame, time, sink);
            self.set_tag(id, 0, vtag);
            self.set_tag(id, 1, tag);
            return (id, 1);
        }
        let reflected = matches!(
            first_type,
            Some(chunk_type::ABORT | chunk_type::SHUTDOWN_COMPLETE)
        ) && first.is_some_and(|c| c.flags() & FLAG_T != 0);
        if reflected {
            // RFC 9260 §8.5.1: the tag is the sender's own, i.e. the one
            // carried by packets sent *to* the sender.
            if let Some(&(id, to_sender)) = self.by_tag.get(&(dport, sport, vtag)) {
                return (id, 1 - to_sender);
            }
        } else if let Some(&(id, sender)) = self.by_tag.get(&(sport, dport, vtag)) {
            return (id, sender);
        }
        // A half-known association whose tag for this direction is unknown.
        let candidates = self
            .by_ports
            .get(&port_pair(sport, dport))
            .cloned()
            .unwrap_or_default();
        for &id in candidates.iter().rev() {
            let a = &self.associations[id as usize];
            if a.end.is_some() {
                continue;
            }
            for sender in [0usize, 1] {
                let receiver = 1 - sender;
                let ports_match =
                    a.endpoints[sender].port == sport && a.endpoints[receiver].port == dport;
                let unknown = if reflected {
                    a.endpoints[sender].verification_tag.is_none()
                } else {
                    a.endpoints[receiver].verification_tag.is_none()
                };
                let addresses_match = (a.endpoints[sender].addresses.is_empty()
                    || a.endpoints[sender].has(dg.src))
                    || a.endpoints[receiver].has(dg.dst);
                if ports_match && unknown && addresses_match {
                    if reflected {
                        self.set_tag(id, sender, vtag);
                    } else {
                        self.set_tag(id, receiver, vtag);
                    }
                    return (id, sender);
                }
            }
        }
        let id = self.create(Start::MidStream, [sport, dport], frame, time, sink);
        if reflected {
            self.set_tag(id, 0, vtag);
        } else {
            self.set_tag(id, 1, vtag);
        }
        (id, 0)
    }

    /// Records the tag that packets sent to `endpoint` carry.
    fn set_tag(&mut self, id: AssocId, endpoint: EndpointId, tag: u32) {
        let a = &mut self.associations[id as usize];
        a.endpoints[endpoint].verification_tag = Some(tag);
        let to = a.endpoints[endpoint].port;
        let from = a.endpoints[1 - endpoint].port;
        self.by_tag.insert((from, to, tag), (id, 1 - endpoint));
    }

    fn create(
        &mut self,
        start: Start,
        ports: [u16; 2],
        frame: u64,
        time: Timestamp,
        sink: &mut dyn EventSink,
    ) -> AssocId {
        let id = self.associations.len() as AssocId;
        self.associations
            .push(Association::new(id, start, ports, frame, time));
        self.by_ports
            .entry(port_pair(ports[0], ports[1]))
            .or_default()
            .push(id);
        let how = match start {
            Start::Init => "init",
            Start::InitAck => "init_ack",
            Start::MidStream => "mid_stream",
        };
        sink.emit(Event {
            frame,
            time,
            association: id,
            kind: EventKind::AssociationStart { how },
        });
        id
    }

    /// A new INIT between endpoints that already share an open association
    /// on these ports ends it (restart or port reuse).
    fn supersede(
        &mut self,
        sport: u16,
        dport: u16,
        dg: &SctpDatagram<'_>,
        frame: u64,
        time: Timestamp,
        sink: &mut dyn EventSink,
    ) {
        let Some(ids) = self.by_ports.get(&port_pair(sport, dport)) else {
            return;
        };
        for &id in ids {
            let a = &mut self.associations[id as usize];
            let same_ports = {
                let p = a.ports();
                (p[0] == sport && p[1] == dport) || (p[0] == dport && p[1] == sport)
            };
            if a.end.is_none() && same_ports && (a.involves(dg.src) || a.involves(dg.dst)) {
                a.end = Some("superseded");
                a.end_frame = Some(frame);
                sink.emit(Event {
                    frame,
                    time,
                    association: id,
                    kind: EventKind::AssociationEnd {
                        reason: "superseded",
                    },
                });
            }
        }
    }

    /// Updates endpoint addresses and the path; returns the path id.
    fn touch(
        &mut self,
        id: AssocId,
        sender: EndpointId,
        dg: &SctpDatagram<'_>,
        frame: u64,
        time: Timestamp,
        sink: &mut dyn EventSink,
    ) -> PathId {
        let rto = self.config.rto;
        let a = &mut self.associations[id as usize];
        a.packets += 1;
        a.last_frame = frame;
        a.last_time = time;
        for (endpoint, address) in [(sender, dg.src), (1 - sender, dg.dst)] {
            if a.endpoints[endpoint].learn(address, AddressSource::Observed, frame) {
                sink.emit(Event {
                    frame,
                    time,
                    association: id,
                    kind: EventKind::AddressLearned {
                        endpoint,
                        address,
                        how: AddressSource::Observed,
                    },
                });
            }
        }
        let path = match a.path(dg.src, dg.dst) {
            Some(p) => p,
            None => {
                let p = a.paths.len() as PathId;
                a.paths
                    .push(PathState::new(p, dg.src, dg.dst, sender, frame, time, rto));
                a.path_index.insert((dg.src, dg.dst), p);
                sink.emit(Event {
                    frame,
                    time,
                    association: id,
                    kind: EventKind::PathSeen {
                        path: p,
                        src: dg.src,
                        dst: dg.dst,
                    },
                });
                p
            }
        };
        let ps = &mut a.paths[usize::from(path)];
        ps.packets += 1;
        ps.bytes += dg.bytes.len() as u64;
        ps.last_frame = frame;
        ps.last_time = time;
        path
    }

    fn assoc(&mut self, ctx: &Ctx) -> &mut Association {
        &mut self.associations[ctx.assoc as usize]
    }

    fn transition(&self, ctx: &Ctx, path: PathId, t: Option<Transition>, sink: &mut dyn EventSink) {
        match t {
            Some(Transition::BecameInactive(error_count)) => {
                sink.emit(ctx.event(EventKind::PathInactive { path, error_count }))
            }
            Some(Transition::BecameActive) => sink.emit(ctx.event(EventKind::PathActive { path })),
            None => {}
        }
    }

    /// Dispatches one chunk. `errors_charged` is a bit set of paths whose
    /// error counter this packet already raised (one timeout per packet).
    fn chunk(
        &mut self,
        ctx: &Ctx,
        chunk: &Chunk<&[u8]>,
        errors_charged: &mut u64,
        sink: &mut dyn EventSink,
    ) -> Result<(), &'static str> {
        let malformed = |e: WireError| match e {
            WireError::Truncated => "chunk shorter than its fields",
            WireError::Malformed(why) => why,
        };
        match chunk.chunk_type() {
            chunk_type::DATA => {
                let d = DataChunk::new_checked(chunk).map_err(malformed)?;
                self.data(ctx, d.tsn(), d.user_data().len(), errors_charged, sink);
            }
            chunk_type::I_DATA => {
                let d = IDataChunk::new_checked(chunk).map_err(malformed)?;
                self.data(ctx, d.tsn(), d.user_data().len(), errors_charged, sink);
            }
            chunk_type::SACK | chunk_type::NR_SACK => {
                let s = SackChunk::new_checked(chunk).map_err(malformed)?;
                self.sack(
                    ctx,
                    s.cumulative_tsn_ack(),
                    s.gap_blocks(),
                    s.dup_tsn_count(),
                    sink,
                );
            }
            chunk_type::SHUTDOWN => {
                let s = ShutdownChunk::new_checked(chunk).map_err(malformed)?;
                self.sack(ctx, s.cumulative_tsn_ack(), std::iter::empty(), 0, sink);
            }
            chunk_type::INIT | chunk_type::INIT_ACK => {
                let i = InitChunk::new_checked(chunk).map_err(malformed)?;
                self.init(ctx, &i, sink)?;
            }
            chunk_type::COOKIE_ACK => {
                let a = self.assoc(ctx);
                a.established_frame.get_or_insert(ctx.frame);
            }
            chunk_type::HEARTBEAT => {
                let h = HeartbeatChunk::new_checked(chunk).map_err(malformed)?;
                let info = h.info().map_err(malformed)?;
                self.heartbeat(ctx, info, sink);
            }
            chunk_type::HEARTBEAT_ACK => {
                let h = HeartbeatChunk::new_checked(chunk).map_err(malformed)?;
                let info = h.info().map_err(malformed)?;
                self.heartbeat_ack(ctx, info, sink);
            }
            chunk_type::ASCONF => {
                let c = AsconfChunk::new_checked(chunk).map_err(malformed)?;
                self.asconf(ctx, &c, chunk.length(), sink)?;
            }
            chunk_type::ASCONF_ACK => {
                let c = AsconfAckChunk::new_checked(chunk).map_err(malformed)?;
                self.asconf_ack(ctx, &c, chunk.length(), sink)?;
            }
            chunk_type::FORWARD_TSN | chunk_type::I_FORWARD_TSN => {
                let sender = ctx.sender;
                self.assoc(ctx).directions[sender].ledger.on_forward_tsn();
            }
            chunk_type::ABORT | chunk_type::SHUTDOWN_COMPLETE => {
                let reason = if chunk.chunk_type() == chunk_type::ABORT {
                    "abort"
                } else {
                    "shutdown_complete"
                };
                let a = self.assoc(ctx);
                if a.end.is_none() {
                    a.end = Some(reason);
                    a.end_frame = Some(ctx.frame);
                    sink.emit(ctx.event(EventKind::AssociationEnd { reason }));
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn data(
        &mut self,
        ctx: &Ctx,
        tsn: u32,
        user_bytes: usize,
        errors_charged: &mut u64,
        sink: &mut dyn EventSink,
    ) {
        let pmr = self.config.path_max_retrans;
        let a = &mut self.associations[ctx.assoc as usize];
        let dir = &mut a.directions[ctx.sender];
        let class = dir
            .ledger
            .on_data(tsn, ctx.frame, ctx.time, ctx.path, user_bytes);
        dir.counters = dir.ledger.counters;
        let (new, already_acked, previous, timeout_of) = match class {
            DataClass::New => (true, false, None, None),
            DataClass::Retransmission {
                previous_path,
                already_acked,
                fast,
                ..
            } => (
                false,
                already_acked,
                previous_path,
                previous_path.filter(|_| !fast && !already_acked),
            ),
        };
        sink.observe(&Observation::Data {
            frame: ctx.frame,
            time: ctx.time,
            association: ctx.assoc,
            sender: ctx.sender,
            path: ctx.path,
            tsn,
            new,
            already_acked,
            previous_path: previous,
            timeout_of,
        });
        match class {
            DataClass::New => {
                a.paths[usize::from(ctx.path)].data_new += 1;
                let previous = dir.new_data_paths.last().map(|s| s.path);
                match dir.new_data_paths.last_mut() {
                    Some(seg) if seg.path == ctx.path => {
                        seg.last_frame = ctx.frame;
                        seg.last_time = ctx.time;
                        seg.new_chunks += 1;
                    }
                    _ => {
                        dir.new_data_paths.push(DataSegment {
                            path: ctx.path,
                            first_frame: ctx.frame,
                            first_time: ctx.time,
                            last_frame: ctx.frame,
                            last_time: ctx.time,
                            new_chunks: 1,
                        });
                        sink.emit(ctx.event(EventKind::DataPathChange {
                            sender: ctx.sender,
                            from_path: previous,
                            to_path: ctx.path,
                            tsn,
                        }));
                    }
                }
            }
            DataClass::Retransmission {
                previous_frame,
                previous_path,
                already_acked,
                fast,
            } => {
                let p = &mut a.paths[usize::from(ctx.path)];
                p.data_retransmitted += 1;
                if already_acked {
                    p.data_retransmitted_after_ack += 1;
                }
                sink.emit(ctx.event(EventKind::Retransmission {
                    sender: ctx.sender,
                    path: ctx.path,
                    tsn,
                    previous_frame,
                    previous_path,
                    already_acked,
                    fast,
                }));
                // A timeout-driven retransmission charges the path the TSN
                // was last sent on, once per packet (one T3 expiry).
                if let (Some(pp), false, false) = (previous_path, fast, already_acked) {
                    let bit = 1u64 << (pp % 64);
                    if *errors_charged & bit == 0 {
                        *errors_charged |= bit;
                        let t = a.paths[usize::from(pp)].record_error(pmr);
                        self.transition(ctx, pp, t, sink);
                    }
                }
            }
        }
    }

    fn sack(
        &mut self,
        ctx: &Ctx,
        cumulative: u32,
        gaps: impl Iterator<Item = (u16, u16)>,
        dup_tsns: u16,
        sink: &mut dyn EventSink,
    ) {
        // A SACK from `sender` acknowledges the peer's DATA.
        let data_sender = ctx.receiver();
        let a = &mut self.associations[ctx.assoc as usize];
        let dir = &mut a.directions[data_sender];
        dir.ledger.on_sack_counters(u64::from(dup_tsns));
        let sample = dir.ledger.on_sack(cumulative, gaps, ctx.time);
        dir.counters = dir.ledger.counters;
        sink.observe(&Observation::Sack {
            frame: ctx.frame,
            time: ctx.time,
            association: ctx.assoc,
            data_sender,
            dup_tsns,
        });
        for acked in dir.ledger.newly_acked() {
            sink.observe(&Observation::Acked {
                frame: ctx.frame,
                time: ctx.time,
                association: ctx.assoc,
                data_sender,
                tsn: acked.tsn,
                effective_frame: acked.last_frame,
                effective_time: acked.last_time,
                path: acked.path,
            });
        }
        if let Some(s) = sample {
            let p = &mut a.paths[usize::from(s.path)];
            p.data_rtt.add(s.rtt);
            p.rto.update(s.rtt);
        }
        let mut transitions: [(PathId, Option<Transition>); 8] = [(0, None); 8];
        for (slot, &path) in transitions
            .iter_mut()
            .zip(a.directions[data_sender].ledger.newly_acked_paths())
        {
            *slot = (path, a.paths[usize::from(path)].record_success());
        }
        for (path, t) in transitions {
            self.transition(ctx, path, t, sink);
        }
    }

    fn init(
        &mut self,
        ctx: &Ctx,
        init: &InitChunk<'_>,
        sink: &mut dyn EventSink,
    ) -> Result<(), &'static str> {
        let a = &mut self.associations[ctx.assoc as usize];
        for param in init.params() {
            let Ok(param) = param else {
                return Err("INIT parameter length runs past the chunk");
            };
            match param.param_type() {
                param_type::IPV4_ADDRESS | param_type::IPV6_ADDRESS => {
                    let Ok(address) = param.address() else {
                        return Err("INIT address parameter of the wrong length");
                    };
                    if a.endpoints[ctx.sender].learn(address, AddressSource::Init, ctx.frame) {
                        sink.emit(ctx.event(EventKind::AddressLearned {
                            endpoint: ctx.sender,
                            address,
                            how: AddressSource::Init,
                        }));
                    }
                }
                param_type::SUPPORTED_EXTENSIONS => {
                    a.endpoints[ctx.sender].supported_extensions =
                        param.value().iter().map(|&t| chunk_type::name(t)).collect();
                }
                _ => {}
            }
        }
        // RFC 9260 §5.1.2: without address parameters the source address is
        // the endpoint's only address (learned as observed already).
        Ok(())
    }

    fn heartbeat(&mut self, ctx: &Ctx, info: &[u8], sink: &mut dyn EventSink) {
        let pmr = self.config.path_max_retrans;
        let a = &mut self.associations[ctx.assoc as usize];
        let unanswered = a
            .pending_heartbeats
            .iter()
            .position(|h| h.path == ctx.path && h.sender == ctx.sender);
        let previous_unanswered = unanswered.is_some();
        let mut transition = None;
        if let Some(i) = unanswered {
            a.pending_heartbeats.remove(i);
            let p = &mut a.paths[usize::from(ctx.path)];
            p.heartbeats_unanswered += 1;
            transition = p.record_error(pmr);
        }
        if a.pending_heartbeats.len() == MAX_PENDING_HEARTBEATS {
            a.pending_heartbeats.remove(0);
        }
        a.pending_heartbeats.push(PendingHeartbeat {
            info_hash: hash_bytes(info),
            sender: ctx.sender,
            frame: ctx.frame,
            time: ctx.time,
            path: ctx.path,
        });
        a.paths[usize::from(ctx.path)].heartbeats_sent += 1;
        sink.emit(ctx.event(EventKind::Heartbeat {
            path: ctx.path,
            previous_unanswered,
        }));
        self.transition(ctx, ctx.path, transition, sink);
    }

    fn heartbeat_ack(&mut self, ctx: &Ctx, info: &[u8], sink: &mut dyn EventSink) {
        let hash = hash_bytes(info);
        let a = &mut self.associations[ctx.assoc as usize];
        let found = a
            .pending_heartbeats
            .iter()
            .rposition(|h| h.info_hash == hash && h.sender == ctx.receiver());
        let Some(i) = found else {
            self.counters.heartbeat_acks_unmatched += 1;
            sink.emit(ctx.event(EventKind::HeartbeatAck {
                path: ctx.path,
                reply_path: ctx.path,
                request_frame: None,
                rtt_ms: None,
            }));
            return;
        };
        let hb = a.pending_heartbeats.remove(i);
        let rtt = ctx.time.since(hb.time);
        let p = &mut a.paths[usize::from(hb.path)];
        p.heartbeats_acked += 1;
        p.hb_rtt.add(rtt);
        p.rto.update(rtt);
        let first_confirmation = p.confirmed_frame.is_none();
        if first_confirmation {
            p.confirmed_frame = Some(ctx.frame);
            p.confirmed_time = Some(ctx.time);
        }
        let probed = p.dst;
        let transition = p.record_success();
        // The probed address belongs to the endpoint answering (`sender`).
        let mut newly_confirmed = false;
        if let Some(info) = a.endpoints[ctx.sender].address_mut(probed) {
            if info.confirmed_frame.is_none() {
                info.confirmed_frame = Some(ctx.frame);
                newly_confirmed = true;
            }
        }
        sink.emit(ctx.event(EventKind::HeartbeatAck {
            path: hb.path,
            reply_path: ctx.path,
            request_frame: Some(hb.frame),
            rtt_ms: Some(rtt.as_millis_f64()),
        }));
        if newly_confirmed {
            sink.emit(ctx.event(EventKind::PathConfirmed {
                path: hb.path,
                address: probed,
            }));
        }
        self.transition(ctx, hb.path, transition, sink);
    }

    fn asconf(
        &mut self,
        ctx: &Ctx,
        chunk: &AsconfChunk<'_>,
        bytes: usize,
        sink: &mut dyn EventSink,
    ) -> Result<(), &'static str> {
        let mut requests = Vec::new();
        for param in chunk.requests() {
            let Ok(param) = param else {
                return Err("ASCONF parameter length runs past the chunk");
            };
            match AsconfRequestRepr::parse(&param) {
                Ok(Some(r)) => requests.push(AsconfRequestEvent {
                    op: r.op,
                    correlation_id: r.correlation_id,
                    address: if r.is_wildcard() { ctx.src } else { r.address },
                    wildcard: r.is_wildcard(),
                }),
                Ok(None) => {}
                Err(_) => return Err("ASCONF request parameter malformed"),
            }
        }
        let serial = chunk.serial();
        let a = &mut self.associations[ctx.assoc as usize];
        let existing = a
            .pending_asconfs
            .iter()
            .position(|p| p.serial == serial && p.sender == ctx.sender);
        let retransmission = existing.is_some();
        if let Some(i) = existing {
            a.pending_asconfs.remove(i);
        }
        if a.pending_asconfs.len() == MAX_PENDING_ASCONFS {
            a.pending_asconfs.remove(0);
        }
        a.pending_asconfs.push(PendingAsconf {
            serial,
            sender: ctx.sender,
            frame: ctx.frame,
            time: ctx.time,
            requests: requests.clone(),
        });
        sink.emit(ctx.event(EventKind::Asconf {
            path: ctx.path,
            sender: ctx.sender,
            serial,
            retransmission,
            bytes,
            requests,
        }));
        Ok(())
    }

    fn asconf_ack(
        &mut self,
        ctx: &Ctx,
        chunk: &AsconfAckChunk<'_>,
        bytes: usize,
        sink: &mut dyn EventSink,
    ) -> Result<(), &'static str> {
        let serial = chunk.serial();
        let mut responses: Vec<AsconfResponseRepr> = Vec::new();
        for param in chunk.responses() {
            let Ok(param) = param else {
                return Err("ASCONF-ACK parameter length runs past the chunk");
            };
            match AsconfResponseRepr::parse(&param) {
                Ok(Some(r)) => responses.push(r),
                Ok(None) => {}
                Err(_) => return Err("ASCONF-ACK response parameter malformed"),
            }
        }
        let requester = ctx.receiver();
        let a = &mut self.associations[ctx.assoc as usize];
        let found = a
            .pending_asconfs
            .iter()
            .position(|p| p.serial == serial && p.sender == requester);
        let Some(i) = found else {
            self.counters.asconf_acks_unmatched += 1;
            sink.emit(ctx.event(EventKind::AsconfAck {
                path: ctx.path,
                serial,
                bytes,
                request_frame: None,
                rtt_ms: None,
                results: Vec::new(),
            }));
            return Ok(());
        };
        let request = a.pending_asconfs.remove(i);
        let results = asconf_results(&request.requests, &responses);
        let mut follow_ups = Vec::new();
        for r in &results {
            if !matches!(
                r.outcome,
                AsconfOutcome::Success | AsconfOutcome::ImpliedSuccess
            ) {
                continue;
            }
            match r.op {
                AsconfOp::AddIp => {
                    if a.endpoints[requester].learn(r.address, AddressSource::Asconf, ctx.frame) {
                        follow_ups.push(EventKind::AddressLearned {
                            endpoint: requester,
                            address: r.address,
                            how: AddressSource::Asconf,
                        });
                    }
                }
                AsconfOp::DeleteIp => {
                    if let Some(info) = a.endpoints[requester].address_mut(r.address) {
                        info.deleted_frame = Some(ctx.frame);
                    }
                    follow_ups.push(EventKind::AddressDeleted {
                        endpoint: requester,
                        address: r.address,
                    });
                }
                AsconfOp::SetPrimary => {
                    a.endpoints[ctx.sender].primary_destination = Some(r.address);
                    follow_ups.push(EventKind::PeerPrimarySet {
                        requester,
                        address: r.address,
                    });
                }
            }
        }
        sink.emit(ctx.event(EventKind::AsconfAck {
            path: ctx.path,
            serial,
            bytes,
            request_frame: Some(request.frame),
            rtt_ms: Some(ctx.time.since(request.time).as_millis_f64()),
            results,
        }));
        for kind in follow_ups {
            sink.emit(ctx.event(kind));
        }
        Ok(())
    }

    /// An ICMP error quoting one of our packets: counted on its path.
    pub fn icmp(&mut self, frame: u64, time: Timestamp, q: &IcmpQuote, sink: &mut dyn EventSink) {
        let located = self
            .by_tag
            .get(&(q.src_port, q.dst_port, q.verification_tag))
            .copied();
        let Some((id, _)) = located else {
            self.counters.icmp_errors_unmatched += 1;
            return;
        };
        self.counters.icmp_errors_matched += 1;
        let a = &mut self.associations[id as usize];
        let path = a.path(q.src, q.dst);
        if let Some(p) = path {
            a.paths[usize::from(p)].icmp_errors += 1;
        }
        sink.emit(Event {
            frame,
            time,
            association: id,
            kind: EventKind::IcmpError {
                path,
                reporter: q.reporter,
                icmp_type: q.icmp_type,
                icmp_code: q.icmp_code,
            },
        });
    }
}

/// RFC 5061 §5.3 rules for reading an ASCONF-ACK: explicit Success
/// Indications; an error for its correlation id; requests with no response
/// are successful if they come before the first error and not processed
/// after it.
fn asconf_results(
    requests: &[AsconfRequestEvent],
    responses: &[AsconfResponseRepr],
) -> Vec<AsconfResultEvent> {
    let mut seen_error = false;
    requests
        .iter()
        .map(|req| {
            let response = responses
                .iter()
                .find(|r| r.correlation_id == req.correlation_id);
            let (outcome, error_cause) = match response {
                Some(AsconfResponseRepr {
                    error_cause: None, ..
                }) => (AsconfOutcome::Success, None),
                Some(AsconfResponseRepr {
                    error_cause: Some(code),
                    ..
                }) => {
                    seen_error = true;
                    (AsconfOutcome::Error, Some(cause_code::name(*code)))
                }
                None if seen_error => (AsconfOutcome::NotProcessed, None),
                None => (AsconfOutcome::ImpliedSuccess, None),
            };
            AsconfResultEvent {
                op: req.op,
                correlation_id: req.correlation_id,
                address: req.address,
                outcome,
                error_cause,
            }
        })
        .collect()
}
