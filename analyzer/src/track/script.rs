//! Unit-test scripts: SCTP packets built from their RFC 9260 / RFC 5061
//! wire formats, fed to a real [`Tracker`] with the [`HandoverEngine`] as
//! its sink, as a capture would. For exchanges no shipped capture shows
//! (a DELETE-IP of the active path's address, an address added again,
//! one endpoint's ADD-IP of an address already in use).

use super::{TrackConfig, Tracker};
use crate::decode::SctpDatagram;
use crate::events::{EndpointId, Event};
use crate::handover::{Handover, HandoverConfig, HandoverEngine};
use crate::time::Timestamp;
use std::net::IpAddr;

/// A chunk: type, flags, value (padded to 4 bytes).
fn chunk(kind: u8, flags: u8, value: &[u8]) -> Vec<u8> {
    let len = (4 + value.len()) as u16;
    let mut c = vec![kind, flags];
    c.extend_from_slice(&len.to_be_bytes());
    c.extend_from_slice(value);
    while c.len() % 4 != 0 {
        c.push(0);
    }
    c
}

/// A TLV parameter (RFC 9260 §3.2.1), padded.
fn param(kind: u16, value: &[u8]) -> Vec<u8> {
    let len = (4 + value.len()) as u16;
    let mut p = kind.to_be_bytes().to_vec();
    p.extend_from_slice(&len.to_be_bytes());
    p.extend_from_slice(value);
    while p.len() % 4 != 0 {
        p.push(0);
    }
    p
}

/// An IPv4 or IPv6 Address parameter (RFC 9260 §3.3.2.1).
fn address(a: IpAddr) -> Vec<u8> {
    match a {
        IpAddr::V4(v4) => param(5, &v4.octets()),
        IpAddr::V6(v6) => param(6, &v6.octets()),
    }
}

/// INIT (or INIT ACK with `ack`): initiate tag, initial TSN, the listed
/// addresses (and a State Cookie in an INIT ACK).
pub(crate) fn init(ack: bool, tag: u32, tsn: u32, listed: &[IpAddr]) -> Vec<u8> {
    let mut v = tag.to_be_bytes().to_vec();
    v.extend_from_slice(&65535u32.to_be_bytes());
    v.extend_from_slice(&[0, 10, 0, 10]);
    v.extend_from_slice(&tsn.to_be_bytes());
    for a in listed {
        v.extend(address(*a));
    }
    if ack {
        v.extend(param(7, b"cookie"));
    }
    chunk(if ack { 2 } else { 1 }, 0, &v)
}

/// DATA (beginning and end of a message) with TSN `tsn`.
pub(crate) fn data(tsn: u32) -> Vec<u8> {
    let mut v = tsn.to_be_bytes().to_vec();
    v.extend_from_slice(&[0; 8]);
    v.extend_from_slice(b"data");
    chunk(0, 3, &v)
}

/// SACK with a cumulative TSN ack and no gap blocks.
pub(crate) fn sack(cumulative: u32) -> Vec<u8> {
    let mut v = cumulative.to_be_bytes().to_vec();
    v.extend_from_slice(&65535u32.to_be_bytes());
    v.extend_from_slice(&[0; 4]);
    chunk(3, 0, &v)
}

/// HEARTBEAT (or HEARTBEAT ACK with `ack`) carrying `info`.
pub(crate) fn heartbeat(ack: bool, info: &[u8]) -> Vec<u8> {
    chunk(if ack { 5 } else { 4 }, 0, &param(1, info))
}

/// ASCONF requests (RFC 5061 §4.2.1–4.2.4).
pub(crate) const ADD_IP: u16 = 0xc001;
pub(crate) const DELETE_IP: u16 = 0xc002;

/// ASCONF: serial, the sender's lookup address, (request, address) pairs
/// with correlation ids 1, 2, …
pub(crate) fn asconf(serial: u32, lookup: IpAddr, requests: &[(u16, IpAddr)]) -> Vec<u8> {
    let mut v = serial.to_be_bytes().to_vec();
    v.extend(address(lookup));
    for (i, (op, a)) in requests.iter().enumerate() {
        let mut r = (i as u32 + 1).to_be_bytes().to_vec();
        r.extend(address(*a));
        v.extend(param(*op, &r));
    }
    chunk(0xc1, 0, &v)
}

/// ASCONF-ACK with no parameters: every request succeeded (RFC 5061 §5.3).
pub(crate) fn asconf_ack(serial: u32) -> Vec<u8> {
    chunk(0x80, 0, &serial.to_be_bytes())
}

/// A capture being replayed: endpoint 0 sends from port 5000 with
/// Initiate Tag [`Script::TAGS`]`[0]`, endpoint 1 from 5001.
pub(crate) struct Script {
    pub(crate) tracker: Tracker,
    pub(crate) engine: HandoverEngine,
    frame: u64,
}

impl Script {
    pub(crate) const TAGS: [u32; 2] = [0x1111_1111, 0x2222_2222];
    const PORTS: [u16; 2] = [5000, 5001];

    pub(crate) fn new(track: TrackConfig, handover: HandoverConfig) -> Self {
        Script {
            tracker: Tracker::new(track),
            engine: HandoverEngine::new(handover),
            frame: 0,
        }
    }

    /// One packet from endpoint `from` at `us` µs; returns its frame.
    /// An INIT carries verification tag 0, every other packet its peer's
    /// tag.
    pub(crate) fn send(
        &mut self,
        us: i64,
        from: EndpointId,
        (src, dst): (IpAddr, IpAddr),
        chunks: &[Vec<u8>],
    ) -> u64 {
        self.frame += 1;
        let tag = if chunks.first().and_then(|c| c.first()) == Some(&1) {
            0
        } else {
            Self::TAGS[1 - from]
        };
        let mut bytes = Self::PORTS[from].to_be_bytes().to_vec();
        bytes.extend_from_slice(&Self::PORTS[1 - from].to_be_bytes());
        bytes.extend_from_slice(&tag.to_be_bytes());
        bytes.extend_from_slice(&[0; 4]);
        for c in chunks {
            bytes.extend_from_slice(c);
        }
        let dg = SctpDatagram {
            src,
            dst,
            bytes: &bytes,
            cut: false,
            udp_encapsulation: None,
            interface_hint: None,
            reassembled: false,
        };
        self.tracker
            .packet(self.frame, Timestamp(us * 1000), &dg, &mut self.engine);
        self.frame
    }

    /// The handshake from endpoint 0 at `mn` (listing `listed`) to
    /// endpoint 1 at `cn`, at 0 and 1 ms.
    pub(crate) fn handshake(&mut self, mn: IpAddr, listed: &[IpAddr], cn: IpAddr) {
        self.send(0, 0, (mn, cn), &[init(false, Self::TAGS[0], 100, listed)]);
        self.send(1000, 1, (cn, mn), &[init(true, Self::TAGS[1], 500, &[])]);
    }

    /// The events and the handovers, every window closed at the end.
    pub(crate) fn finish(self) -> (Vec<Event>, Vec<Handover>) {
        self.engine.finish()
    }
}
