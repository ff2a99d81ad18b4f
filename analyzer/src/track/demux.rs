//! Demultiplexing: which association, sending endpoint and path a packet belongs to.

use super::assoc::{Association, Start};
use super::path::PathState;
use super::Tracker;
use crate::decode::SctpDatagram;
use crate::events::{AddressSource, AssocId, EndpointId, Event, EventKind, EventSink, PathId};
use crate::time::Timestamp;
use crate::wire::sctp::Packet as SctpPacket;
use crate::wire::sctp_chunk::{chunk_type, Chunk, InitChunk, FLAG_T};

/// Key of the verification-tag table: a packet from `src_port` to
/// `dst_port` carrying `tag` belongs to (association, sending endpoint).
pub(super) type TagKey = (u16, u16, u32);

fn port_pair(a: u16, b: u16) -> (u16, u16) {
    (a.min(b), a.max(b))
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
    pub(super) fn touch(
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
}
