//! Associations matched across capture points by their verification tags
//! (RFC 9260 §8.5: each endpoint's tag is carried by every packet sent to
//! it), with the ports and address sets each point saw, addresses added by
//! ASCONF (RFC 5061 §4.2.1) included.

use crate::observe::Observation;
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::collections::BTreeSet;
use std::net::IpAddr;

/// What one point knows about the endpoint a tag belongs to.
#[derive(Debug, Clone, Default)]
struct TagSide {
    /// The endpoint's port (destination of packets carrying the tag).
    port: Option<u16>,
    /// Its addresses: destinations of packets carrying the tag, sources of
    /// packets it sent (when its peer's tag is known), addresses it listed
    /// in INIT / INIT ACK or added by ASCONF.
    addresses: BTreeSet<IpAddr>,
    /// The port packets carrying the tag come from (the peer's port).
    peer_port: Option<u16>,
    /// Sources of packets carrying the tag, and addresses the sender of
    /// such packets announced: the peer's addresses.
    peer_addresses: BTreeSet<IpAddr>,
    /// The peer's tag, when INIT / INIT ACK linked them.
    peer_tag: Option<u32>,
    packets: u64,
}

/// One point's associations, as tags and what each tag's side showed.
#[derive(Debug, Default)]
pub struct AssociationTable {
    tags: FxHashMap<u32, TagSide>,
}

impl AssociationTable {
    pub fn observe(&mut self, obs: &Observation) {
        let k = &obs.key;
        let c = &obs.chunks;
        if k.verification_tag == 0 {
            // INIT: the tag it announces is its sender's.
            if let Some(own) = c.initiate_tag {
                let side = self.tags.entry(own).or_default();
                side.port = Some(k.src_port);
                side.peer_port = Some(k.dst_port);
                side.addresses.insert(k.src);
                side.addresses.extend(c.announced_addresses.iter().copied());
                side.peer_addresses.insert(k.dst);
            }
            return;
        }
        if c.tag_reflected {
            // The tag is the sender's own.
            let side = self.tags.entry(k.verification_tag).or_default();
            side.port = Some(k.src_port);
            side.addresses.insert(k.src);
            return;
        }
        let side = self.tags.entry(k.verification_tag).or_default();
        side.packets += 1;
        side.port = Some(k.dst_port);
        side.peer_port = Some(k.src_port);
        side.addresses.insert(k.dst);
        side.peer_addresses.insert(k.src);
        side.peer_addresses
            .extend(c.announced_addresses.iter().copied());
        if let (Some(peer), true) = (c.initiate_tag, c.has(INIT_ACK)) {
            side.peer_tag = Some(peer);
            let p = self.tags.entry(peer).or_default();
            p.peer_tag = Some(k.verification_tag);
            p.port = Some(k.src_port);
            p.addresses.insert(k.src);
        }
    }

    /// Tags grouped into associations: linked by INIT / INIT ACK, else by
    /// opposite ports (each tag's port is the other's peer port).
    fn associations(&self) -> Vec<(u32, Option<u32>)> {
        let mut tags: Vec<u32> = self.tags.keys().copied().collect();
        tags.sort_unstable();
        let mut used = BTreeSet::new();
        let mut out = Vec::new();
        for &t in &tags {
            if used.contains(&t) {
                continue;
            }
            let side = &self.tags[&t];
            let peer = side.peer_tag.filter(|p| !used.contains(p)).or_else(|| {
                tags.iter().copied().find(|&u| {
                    u != t
                        && !used.contains(&u)
                        && self.tags[&u].peer_tag.is_none()
                        && side.peer_tag.is_none()
                        && self.tags[&u].port.is_some()
                        && self.tags[&u].port == side.peer_port
                        && self.tags[&u].peer_port == side.port
                })
            });
            used.insert(t);
            if let Some(p) = peer {
                used.insert(p);
            }
            out.push((t, peer));
        }
        out
    }

    fn side(&self, tag: u32, peer: Option<u32>) -> SideSeen {
        let mut seen = SideSeen::default();
        if let Some(s) = self.tags.get(&tag) {
            seen.port = s.port;
            seen.addresses.extend(s.addresses.iter().copied());
        }
        if let Some(p) = peer.and_then(|p| self.tags.get(&p)) {
            seen.port = seen.port.or(p.peer_port);
            seen.addresses.extend(p.peer_addresses.iter().copied());
        }
        seen
    }
}

const INIT_ACK: u8 = sctp_handover::wire::sctp_chunk::chunk_type::INIT_ACK;

/// What one point saw of one endpoint.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SideSeen {
    /// The endpoint's SCTP port; None when no packet of it showed one yet.
    pub port: Option<u16>,
    /// The endpoint's addresses seen at this point: as its packets' sources,
    /// its peer's packets' destinations, or announced in its chunks.
    pub addresses: BTreeSet<IpAddr>,
}

/// One endpoint of an association as each point saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EndpointMatch {
    /// The endpoint's verification tag.
    pub tag: u32,
    /// Per point (in `--point` order): port and addresses; `None` when
    /// that point did not see the association.
    pub at: Vec<Option<SideSeen>>,
}

/// An association and the points that saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AssociationMatch {
    /// Its two endpoints, by verification tag.
    pub endpoints: Vec<EndpointMatch>,
    /// Indices of the points that saw it.
    pub seen_at: Vec<usize>,
    /// The ports differ between points (a NAT on the way).
    pub ports_differ: bool,
}

/// Matches the associations of both points by their tag pairs.
pub fn match_associations(tables: &[AssociationTable; 2]) -> Vec<AssociationMatch> {
    let mut keys: BTreeSet<(u32, Option<u32>)> = BTreeSet::new();
    for t in tables {
        for (a, b) in t.associations() {
            keys.insert(match b {
                Some(b) if b < a => (b, Some(a)),
                _ => (a, b),
            });
        }
    }
    // A half association (one tag) also seen whole elsewhere is that one.
    let whole: BTreeSet<u32> = keys
        .iter()
        .filter_map(|&(a, b)| b.map(|b| [a, b]))
        .flatten()
        .collect();
    keys.retain(|&(a, b)| b.is_some() || !whole.contains(&a));
    keys.into_iter()
        .map(|(a, b)| {
            let mut endpoints = Vec::new();
            for (tag, peer) in [(Some(a), b), (b, Some(a))] {
                let Some(tag) = tag else { continue };
                let at = tables
                    .iter()
                    .map(|t| {
                        (t.tags.contains_key(&tag) || peer.is_some_and(|p| t.tags.contains_key(&p)))
                            .then(|| t.side(tag, peer))
                    })
                    .collect();
                endpoints.push(EndpointMatch { tag, at });
            }
            let seen_at: Vec<usize> = (0..tables.len())
                .filter(|&i| endpoints.iter().any(|e| e.at[i].is_some()))
                .collect();
            let ports_differ = endpoints.iter().any(|e| {
                let ports: BTreeSet<u16> = e.at.iter().flatten().filter_map(|s| s.port).collect();
                ports.len() > 1
            });
            AssociationMatch {
                endpoints,
                seen_at,
                ports_differ,
            }
        })
        .collect()
}
