//! Demultiplexing: which association, sending endpoint and path a packet belongs to.

use super::assoc::{Association, Start};
use super::index::{port_pair, remove_from};
use super::path::PathState;
use super::Tracker;
use crate::decode::SctpDatagram;
use crate::events::AssociationEndReason;
use crate::events::{AddressSource, AssocId, EndpointId, Event, EventKind, EventSink, PathId};
use crate::time::Timestamp;
use crate::wire::sctp::Packet as SctpPacket;
use crate::wire::sctp_chunk::{chunk_type, Chunk, InitChunk, FLAG_T};
use std::net::IpAddr;

/// The endpoint that sent a packet from `src` to `dst`, by the addresses
/// each endpoint is known to have: the one that has the source address
/// (and not both), else the peer of the one that has the destination
/// address (and not both); None when the addresses do not tell.
fn sender_by_addresses(a: &Association, src: IpAddr, dst: IpAddr) -> Option<EndpointId> {
    let owner = |address: IpAddr| match (a.endpoints[0].has(address), a.endpoints[1].has(address)) {
        (true, false) => Some(0),
        (false, true) => Some(1),
        _ => None,
    };
    owner(src).or_else(|| owner(dst).map(|receiver| 1 - receiver))
}

impl Tracker {
    /// Finds (or creates) the association and the sending endpoint.
    pub(super) fn locate(
        &mut self,
        packet: &SctpPacket<&[u8]>,
        first: Option<&Chunk<&[u8]>>,
        dg: &SctpDatagram<'_>,
        frame: u64,
        time: Timestamp,
        sink: &mut dyn EventSink,
    ) -> Option<(AssocId, EndpointId)> {
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
                return Some((id, 0));
            }
            self.supersede(sport, dport, dg, frame, time, sink);
            let id = self.create(Start::Init, [sport, dport], frame, time, sink)?;
            self.by_init.insert((sport, dport, tag), id);
            crate::compact::push(&mut self.associations[id].init_keys, (sport, dport, tag));
            self.set_tag(id, 0, tag);
            return Some((id, 0));
        }
        if let (Some(chunk_type::INIT_ACK), Some(tag)) = (first_type, initiate_tag) {
            if let Some(&(id, found, sure)) = self.by_tag.get(&(sport, dport, vtag)) {
                let sender = if sure {
                    found
                } else {
                    self.sender_on_equal_ports(id, found, false, (sport, dport), vtag, dg)
                };
                self.set_tag(id, sender, tag);
                return Some((id, sender));
            }
            // INIT not captured: the INIT ACK's receiver is the initiator.
            let id = self.create(Start::InitAck, [dport, sport], frame, time, sink)?;
            self.set_tag(id, 0, vtag);
            self.set_tag(id, 1, tag);
            return Some((id, 1));
        }
        let reflected = matches!(
            first_type,
            Some(chunk_type::ABORT | chunk_type::SHUTDOWN_COMPLETE)
        ) && first.is_some_and(|c| c.flags() & FLAG_T != 0);
        if reflected {
            // RFC 9260 §8.5.1: the tag is the sender's own, i.e. the one
            // carried by packets sent *to* the sender.
            if let Some(&(id, to_sender, sure)) = self.by_tag.get(&(dport, sport, vtag)) {
                let found = 1 - to_sender;
                let sender = if sure {
                    found
                } else {
                    self.sender_on_equal_ports(id, found, true, (sport, dport), vtag, dg)
                };
                return Some((id, sender));
            }
        } else if let Some(&(id, found, sure)) = self.by_tag.get(&(sport, dport, vtag)) {
            // (Most packets: the key alone tells the direction.)
            let sender = if sure {
                found
            } else {
                self.sender_on_equal_ports(id, found, false, (sport, dport), vtag, dg)
            };
            return Some((id, sender));
        }
        // A half-known association whose tag for this direction is unknown.
        if let Some((id, sender)) = self.half_known_match(sport, dport, reflected, dg) {
            if reflected {
                self.set_tag(id, sender, vtag);
            } else {
                self.set_tag(id, 1 - sender, vtag);
            }
            return Some((id, sender));
        }
        let id = self.create(Start::MidStream, [sport, dport], frame, time, sink)?;
        if reflected {
            self.set_tag(id, 0, vtag);
        } else {
            self.set_tag(id, 1, vtag);
        }
        Some((id, 0))
    }

    /// The sending endpoint of a packet whose tag-table entry named
    /// `found`, when the table cannot tell the directions apart.
    ///
    /// A tag-table key is (source port, destination port, tag): with the
    /// same port on both sides, a packet one way and a packet the other way
    /// carrying the same tag have the same key. Both endpoints then use the
    /// same tag (their Initiate Tags are equal, which RFC 9260 §5.3.1 leaves
    /// to chance: each is random) or the tag of one of them is still
    /// unknown (mid-stream, before the first packet the other way). Then
    /// only the addresses tell the directions apart: the endpoint that has
    /// the packet's source address sent it; failing that (a source address
    /// never seen, as after an unannounced handover of a multihomed peer),
    /// the endpoint that has its destination address received it; with
    /// neither address known to exactly one endpoint, endpoint 0 sent it
    /// (like the first packet of a mid-stream association: docs/metrics.md).
    #[inline]
    fn sender_on_equal_ports(
        &mut self,
        id: AssocId,
        found: EndpointId,
        reflected: bool,
        (sport, dport): (u16, u16),
        vtag: u32,
        dg: &SctpDatagram<'_>,
    ) -> EndpointId {
        // (Every packet comes here: the common case stays inline.)
        if sport != dport {
            return found;
        }
        self.sender_by_tag_and_addresses(id, found, reflected, vtag, dg)
    }

    /// [`Tracker::sender_on_equal_ports`] when the ports are equal.
    fn sender_by_tag_and_addresses(
        &mut self,
        id: AssocId,
        found: EndpointId,
        reflected: bool,
        vtag: u32,
        dg: &SctpDatagram<'_>,
    ) -> EndpointId {
        let a = &self.associations[id];
        let other = 1 - found;
        // The tag a packet sent by `other` would carry: its peer's tag, or
        // with the T bit its own (RFC 9260 §8.5.1).
        let tag_for_other = if reflected {
            a.endpoints[other].verification_tag
        } else {
            a.endpoints[found].verification_tag
        };
        if tag_for_other.is_some_and(|t| t != vtag) {
            // The tags differ: the table's answer is the only one possible.
            return found;
        }
        let sender = sender_by_addresses(a, dg.src, dg.dst).unwrap_or(0);
        if sender == other && tag_for_other.is_none() {
            // The first packet the other way supplies that direction's tag,
            // as a tag-table miss would have through the half-known table.
            let endpoint = if reflected { other } else { found };
            self.set_tag(id, endpoint, vtag);
        }
        sender
    }

    /// The newest open association on these ports whose tag for this
    /// direction is unknown and whose addresses fit, with the sender.
    fn half_known_match(
        &self,
        sport: u16,
        dport: u16,
        reflected: bool,
        dg: &SctpDatagram<'_>,
    ) -> Option<(AssocId, EndpointId)> {
        let candidates = self.half_known.get(&port_pair(sport, dport))?;
        for &id in candidates.iter().rev() {
            let a = &self.associations[id];
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
                    return Some((id, sender));
                }
            }
        }
        None
    }

    /// Records the tag that packets sent to `endpoint` carry.
    fn set_tag(&mut self, id: AssocId, endpoint: EndpointId, tag: u32) {
        let a = &mut self.associations[id];
        a.endpoints[endpoint].verification_tag = Some(tag);
        let to = a.endpoints[endpoint].port;
        let from = a.endpoints[1 - endpoint].port;
        let key = (from, to, tag);
        if !a.tag_keys.contains(&key) {
            crate::compact::push(&mut a.tag_keys, key);
        }
        if a.endpoints.iter().all(|e| e.verification_tag.is_some()) {
            let pp = port_pair(from, to);
            remove_from(&mut self.half_known, pp, id);
        }
        // A key tells the direction by itself when the ports differ, or the
        // other endpoint's tag is known and different (then no packet the
        // other way can carry this key): see `sender_on_equal_ports`.
        let other = a.endpoints[1 - endpoint].verification_tag;
        let sure = from != to || other.is_some_and(|o| o != tag);
        self.by_tag.insert(key, (id, 1 - endpoint, sure));
        if let Some(o) = other {
            // The other endpoint's key may now tell its direction too.
            if let Some(entry) = self.by_tag.get_mut(&(to, from, o)) {
                if entry.0 == id {
                    entry.2 = from != to || o != tag;
                }
            }
        }
    }

    fn create(
        &mut self,
        start: Start,
        ports: [u16; 2],
        frame: u64,
        time: Timestamp,
        sink: &mut dyn EventSink,
    ) -> Option<AssocId> {
        // Beyond the cap (or 2^32 associations in one file) the packet is
        // not tracked; the caller counts it.
        if self.alive() >= self.config.limits.associations {
            return None;
        }
        let id = self.next_id;
        self.next_id = self.next_id.checked_add(1)?;
        self.admit(Association::new(id, start, ports, frame, time));
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
        Some(id)
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
        // Open associations on these ports that involve either address
        // (deleted addresses included), oldest first.
        let pp = port_pair(sport, dport);
        let mut ids: Vec<AssocId> = [dg.src, dg.dst]
            .iter()
            .filter_map(|&address| self.open_by_address.get(&(pp, address)))
            .flatten()
            .copied()
            .collect();
        ids.sort_unstable();
        ids.dedup();
        for id in ids {
            if self.end(id, AssociationEndReason::Superseded, frame) {
                sink.emit(Event {
                    frame,
                    time,
                    association: id,
                    kind: EventKind::AssociationEnd {
                        reason: AssociationEndReason::Superseded,
                    },
                });
            }
        }
    }

    /// Updates endpoint addresses and the path; returns the path id.
    pub(super) fn touch(
        &mut self,
        id: AssocId,
        sender: EndpointId,
        dg: &SctpDatagram<'_>,
        frame: u64,
        time: Timestamp,
        sink: &mut dyn EventSink,
    ) -> Option<PathId> {
        let (rto, max_paths) = (self.config.rto, self.config.limits.paths);
        let a = &mut self.associations[id];
        a.packets += 1;
        a.last_frame = frame;
        a.last_time = time;
        // The sender's last path again: its addresses are known (learning
        // them would change nothing) and the path needs no lookup.
        if let Some(last) = a.last_path[sender] {
            let ps = &mut a.paths[usize::from(last)];
            if ps.src == dg.src && ps.dst == dg.dst {
                ps.packets += 1;
                ps.bytes += dg.bytes.len() as u64;
                ps.last_frame = frame;
                ps.last_time = time;
                return Some(last);
            }
        }
        for (endpoint, address) in [(sender, dg.src), (1 - sender, dg.dst)] {
            if self.learn(id, endpoint, address, AddressSource::Observed, frame) {
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
        let a = &mut self.associations[id];
        let path = match a.path(dg.src, dg.dst) {
            Some(p) => p,
            None => {
                let p = PathId::try_from(a.paths.len())
                    .ok()
                    .filter(|_| a.paths.len() < max_paths)?;
                a.add_path(PathState::new(p, dg.src, dg.dst, sender, frame, time, rto));
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
        if a.endpoints[sender].has(dg.src) && a.endpoints[1 - sender].has(dg.dst) {
            a.last_path[sender] = Some(path);
        }
        let ps = &mut a.paths[usize::from(path)];
        ps.packets += 1;
        ps.bytes += dg.bytes.len() as u64;
        ps.last_frame = frame;
        ps.last_time = time;
        Some(path)
    }
}
