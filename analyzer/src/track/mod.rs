//! Association and path reconstruction: SCTP packets in, association/path
//! state and [`crate::events`] out.

mod asconf;
pub mod assoc;
mod data;
pub mod dedup;
mod demux;
mod heartbeat;
mod icmp;
mod index;
mod init;
pub mod limits;
pub mod path;
mod retire;
pub mod rto;
#[cfg(test)]
pub(crate) mod script;
pub mod tsn;

use crate::decode::SctpDatagram;
use crate::events::{
    AddressSource, AssocId, AssociationEndReason, EndpointId, Event, EventKind, EventSink,
    Observation, PathId,
};
use crate::time::{Nanos, Timestamp};
use crate::wire::sctp::Packet as SctpPacket;
use crate::wire::sctp_chunk::{
    chunk_type, AsconfAckChunk, AsconfChunk, Chunk, DataChunk, HeartbeatChunk, IDataChunk,
    InitChunk, SackChunk, ShutdownChunk,
};
use crate::wire::Error as WireError;
use assoc::Association;
use index::{HalfKnown, InitIndex, OpenByAddress, TagIndex};
use path::{ChunkCounts, Transition};
pub use retire::Footprint;
use retire::{Alive, Deadline};
use rto::RtoConfig;
use rustc_hash::FxHashMap;
use std::collections::BinaryHeap;
use std::net::IpAddr;

/// The tracker's settings: the RTO parameters and thresholds of the
/// inferred path state, when an association is finished, caps on state.
#[derive(Debug, Clone, Copy)]
pub struct TrackConfig {
    /// RTO.Initial / RTO.Min / RTO.Max and the smoothing of the RTO
    /// computed from the RTT samples (RFC 9260 §6.3.1).
    pub rto: RtoConfig,
    /// Path.Max.Retrans for the inferred active/inactive state (RFC 9260
    /// §16 default 5).
    pub path_max_retrans: u32,
    /// The potentially-failed threshold (RFC 7829 PFMR) for the inferred
    /// potentially failed state; `None`: the state is not inferred. Default
    /// 0, Linux's (`net.sctp.pf_enable` 1, `pf_retrans` 0).
    pub pf_retrans: Option<u32>,
    /// An association that ended (SHUTDOWN COMPLETE, ABORT, superseded) is
    /// finished once no packet of it came for this long (capture time), so
    /// that late retransmissions still map to it. Default 10 s.
    pub end_linger: Nanos,
    /// An association without any packet for longer than this (capture
    /// time) is finished; a later packet with its tags starts a new,
    /// mid-stream association. Default 300 s.
    pub idle_timeout: Nanos,
    /// Caps on tracked state.
    pub limits: limits::Limits,
}

impl TrackConfig {
    /// The thresholds of the inferred path state.
    pub fn thresholds(&self) -> path::Thresholds {
        path::Thresholds {
            path_max_retrans: self.path_max_retrans,
            pf_retrans: self.pf_retrans,
        }
    }
}

impl Default for TrackConfig {
    fn default() -> Self {
        TrackConfig {
            rto: RtoConfig::default(),
            path_max_retrans: 5,
            pf_retrans: Some(0),
            end_linger: Nanos::from_millis(10_000),
            idle_timeout: Nanos::from_millis(300_000),
            limits: limits::Limits::default(),
        }
    }
}

/// Counters over all associations of a capture.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct TrackCounters {
    /// Chunks decoded, by chunk type.
    pub chunks: ChunkCounts,
    /// Chunks that could not be decoded (bad length or fields).
    pub malformed_chunks: u64,
    /// HEARTBEAT ACKs whose info matches no outstanding HEARTBEAT of the
    /// peer (its request not captured, or already answered).
    pub heartbeat_acks_unmatched: u64,
    /// ASCONF-ACKs whose serial matches no outstanding ASCONF of the peer.
    pub asconf_acks_unmatched: u64,
    /// ICMP errors whose quoted SCTP header (ports, verification tag)
    /// matched a tracked association.
    pub icmp_errors_matched: u64,
    /// ICMP errors quoting an SCTP header of no tracked association.
    pub icmp_errors_unmatched: u64,
    /// Caps on tracked state that were reached.
    pub limits: limits::LimitHits,
}

/// What the tracker made of one SCTP packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketVerdict {
    /// Every chunk was decoded and applied.
    Analysed,
    /// At least one chunk could not be decoded; the chunks before it were
    /// still applied.
    Malformed(&'static str),
    /// Not tracked: a cap on tracked state was reached
    /// ([`TrackConfig::limits`]).
    Untracked,
}

/// Association and path state for the associations alive in a capture.
///
/// Memory is bounded by the associations alive: a finished association
/// (see [`TrackConfig::end_linger`] and [`TrackConfig::idle_timeout`]) is
/// handed out by [`Tracker::retire_due`] and leaves every table. All
/// per-packet lookups are hash lookups; nothing scans all associations.
pub struct Tracker {
    config: TrackConfig,
    /// Alive associations by id (ids are unique and increasing in a file).
    associations: Alive,
    next_id: AssocId,
    /// The lookup indexes (`index.rs` says what each holds).
    by_tag: TagIndex,
    by_init: InitIndex,
    open_by_address: OpenByAddress,
    half_known: HalfKnown,
    /// Retirement deadlines (min-heap, lazily re-pushed).
    deadlines: BinaryHeap<Deadline>,
    /// Heap entries of associations already retired.
    stale_deadlines: usize,
    /// Counters over every association of the capture so far.
    pub counters: TrackCounters,
    /// Result buffers lent to the ledger of the SACK at hand.
    ack_buffers: tsn::AckBuffers,
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

impl Tracker {
    /// A tracker with no associations yet.
    pub fn new(config: TrackConfig) -> Self {
        Tracker {
            config,
            associations: Alive::default(),
            next_id: 0,
            by_tag: FxHashMap::default(),
            by_init: FxHashMap::default(),
            open_by_address: FxHashMap::default(),
            half_known: FxHashMap::default(),
            deadlines: BinaryHeap::new(),
            stale_deadlines: 0,
            counters: TrackCounters::default(),
            ack_buffers: tsn::AckBuffers::default(),
        }
    }

    /// Associations created so far in this file (the next id).
    pub fn created(&self) -> u64 {
        u64::from(self.next_id)
    }

    /// An alive association.
    pub fn association(&self, id: AssocId) -> Option<&Association> {
        self.associations.get(id)
    }

    /// Records an address of `endpoint`; returns true when it is new (or
    /// comes back after a deletion). Keeps the open-address index.
    fn learn(
        &mut self,
        id: AssocId,
        endpoint: EndpointId,
        address: IpAddr,
        how: AddressSource,
        frame: u64,
    ) -> bool {
        let a = &mut self.associations[id];
        let before = a.endpoints[endpoint].addresses.len();
        if before >= self.config.limits.addresses && !a.endpoints[endpoint].has(address) {
            self.counters.limits.addresses.record(frame, 1);
            return false;
        }
        let learned = a.endpoints[endpoint].learn(address, how, frame);
        let new_here = a.endpoints[endpoint].addresses.len() > before;
        if new_here && a.end.is_none() && !a.endpoints[1 - endpoint].has(address) {
            let pp = index::port_pair(a.endpoints[0].port, a.endpoints[1].port);
            let list = self.open_by_address.entry((pp, address)).or_default();
            crate::compact::push(list, id);
        }
        learned
    }

    /// Ends an association (once): it leaves the tables of open
    /// associations and will be retired after [`TrackConfig::end_linger`].
    /// Returns false when it had ended already.
    fn end(&mut self, id: AssocId, reason: AssociationEndReason, frame: u64) -> bool {
        let a = &mut self.associations[id];
        if a.end.is_some() {
            return false;
        }
        a.end = Some(reason);
        a.end_frame = Some(frame);
        // Its deadline moves earlier: the linger runs from its last packet.
        let due = self.deadline(&self.associations[id]);
        self.close(id);
        self.schedule(id, due);
        true
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
        let Some((assoc, sender)) = self.locate(&packet, first.as_ref(), dg, frame, time, sink)
        else {
            self.counters.limits.associations.record(frame, 1);
            return PacketVerdict::Untracked;
        };
        let Some(path) = self.touch(assoc, sender, dg, frame, time, sink) else {
            self.counters.limits.paths.record(frame, 1);
            return PacketVerdict::Untracked;
        };
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
        for item in packet.chunks() {
            let chunk = match item {
                Ok((_, c)) => c,
                Err(e) => {
                    // A chunk cut by the snaplen is expected in a cut
                    // packet; anything else is malformed.
                    if !(dg.cut && e == WireError::Truncated) {
                        self.counters.malformed_chunks += 1;
                        self.associations[assoc].malformed_chunks += 1;
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
            self.associations[assoc].paths[usize::from(path)]
                .chunks
                .add(t);
            if let Err(why) = self.chunk(&ctx, &chunk, sink) {
                self.counters.malformed_chunks += 1;
                self.associations[assoc].malformed_chunks += 1;
                verdict = PacketVerdict::Malformed(why);
            }
        }
        verdict
    }

    fn assoc(&mut self, ctx: &Ctx) -> &mut Association {
        &mut self.associations[ctx.assoc]
    }

    /// An acknowledgement's effect on a path: the error count it cleared
    /// (`by` names the chunk), then its state transition.
    fn cleared(
        &self,
        ctx: &Ctx,
        path: PathId,
        c: path::Cleared,
        by: &'static str,
        sink: &mut dyn EventSink,
    ) {
        if let Some(error_count) = c.error_count {
            sink.emit(ctx.event(EventKind::ErrorCounterCleared {
                path,
                error_count,
                by,
            }));
        }
        self.transition(ctx, path, c.transition, sink);
    }

    fn transition(&self, ctx: &Ctx, path: PathId, t: Option<Transition>, sink: &mut dyn EventSink) {
        match t {
            Some(Transition::BecameInactive(error_count)) => {
                sink.emit(ctx.event(EventKind::PathInactive { path, error_count }))
            }
            Some(Transition::BecamePotentiallyFailed(error_count)) => {
                sink.emit(ctx.event(EventKind::PathPotentiallyFailed { path, error_count }))
            }
            Some(Transition::BecameActive) => sink.emit(ctx.event(EventKind::PathActive { path })),
            None => {}
        }
    }

    /// Dispatches one chunk.
    fn chunk(
        &mut self,
        ctx: &Ctx,
        chunk: &Chunk<&[u8]>,
        sink: &mut dyn EventSink,
    ) -> Result<(), &'static str> {
        let malformed = |e: WireError| match e {
            WireError::Truncated => "chunk shorter than its fields",
            WireError::Malformed(why) => why,
        };
        match chunk.chunk_type() {
            chunk_type::DATA => {
                let d = DataChunk::new_checked(chunk).map_err(malformed)?;
                self.data(ctx, d.tsn(), d.user_data().len(), sink);
            }
            chunk_type::I_DATA => {
                let d = IDataChunk::new_checked(chunk).map_err(malformed)?;
                self.data(ctx, d.tsn(), d.user_data().len(), sink);
            }
            chunk_type::SACK | chunk_type::NR_SACK => {
                let s = SackChunk::new_checked(chunk).map_err(malformed)?;
                self.sack(
                    ctx,
                    s.cumulative_tsn_ack(),
                    s.gap_blocks(),
                    // (The duplicates are read only when there are any.)
                    (s.dup_tsn_count(), || s.dup_tsns()),
                    sink,
                );
            }
            chunk_type::SHUTDOWN => {
                let s = ShutdownChunk::new_checked(chunk).map_err(malformed)?;
                self.sack(
                    ctx,
                    s.cumulative_tsn_ack(),
                    std::iter::empty(),
                    (0, std::iter::empty),
                    sink,
                );
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
                // SFR-CACC's primary is the handshake's until a SET-PRIMARY
                // or DELETE-IP this ASCONF-ACK acknowledges changes it
                // (TsnLedger::seed_primary; its sender's DATA).
                let window = self.config.limits.tsn_window;
                let sender = ctx.sender;
                let a = self.assoc(ctx);
                let handshake_primary = a.handshake_primary(sender);
                a.directions[sender]
                    .ledger(window)
                    .seed_primary(handshake_primary);
                self.asconf_ack(ctx, &c, chunk.length(), sink)?;
            }
            chunk_type::FORWARD_TSN | chunk_type::I_FORWARD_TSN => {
                let sender = ctx.sender;
                let window = self.config.limits.tsn_window;
                self.assoc(ctx).directions[sender]
                    .ledger(window)
                    .on_forward_tsn();
            }
            chunk_type::ABORT | chunk_type::SHUTDOWN_COMPLETE => {
                let reason = if chunk.chunk_type() == chunk_type::ABORT {
                    AssociationEndReason::Abort
                } else {
                    AssociationEndReason::ShutdownComplete
                };
                if self.end(ctx.assoc, reason, ctx.frame) {
                    sink.emit(ctx.event(EventKind::AssociationEnd { reason }));
                }
            }
            _ => {}
        }
        Ok(())
    }
}
