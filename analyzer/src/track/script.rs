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

#[cfg(test)]
mod tests {
    //! DELETE-IPs against Linux's sctp_assoc_rm_peer: the deleted
    //! destination's transmitted chunks move to the active path after the
    //! deletion (the first transport when the primary or the active path
    //! was deleted), again at every deletion.
    use super::{Script, DELETE_IP};
    use crate::handover::HandoverConfig;
    use crate::track::{script, TrackConfig};
    use std::net::IpAddr;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("an address literal")
    }

    /// A1 (the primary), A2, A3 of endpoint 0, and C of endpoint 1, whose
    /// paths to A2 and A3 are confirmed with error count 1 each (one
    /// HEARTBEAT unanswered); returns the script and the time after.
    fn three_addresses() -> (Script, [IpAddr; 4], i64) {
        let (a1, a2, a3, c) = (
            ip("10.0.0.1"),
            ip("10.0.0.2"),
            ip("10.0.0.3"),
            ip("10.0.1.1"),
        );
        let mut s = Script::new(
            TrackConfig {
                pf_retrans: None,
                ..TrackConfig::default()
            },
            HandoverConfig::new(),
        );
        s.handshake(a1, &[a1, a2, a3], c);
        let mut us = 10_000;
        for (to, tag) in [(a2, b'2'), (a3, b'3')] {
            s.send(us, 1, (c, to), &[script::heartbeat(false, &[tag, 0])]);
            s.send(us + 100, 0, (to, c), &[script::heartbeat(true, &[tag, 0])]);
            for k in 1..=2 {
                let at = us + 1000 * i64::from(k);
                s.send(at, 1, (c, to), &[script::heartbeat(false, &[tag, k])]);
            }
            us += 10_000;
        }
        (s, [a1, a2, a3, c], us)
    }

    /// The error counts of C's paths to `to`, in order.
    fn error_counts(s: &Script, to: &[IpAddr]) -> Vec<u32> {
        let a = s.tracker.association(0).expect("the association");
        to.iter()
            .map(|&d| {
                a.paths
                    .iter()
                    .find(|p| p.sender == 1 && p.dst == d)
                    .map(|p| p.error_count)
                    .expect("a path to the address")
            })
            .collect()
    }

    #[test]
    fn a_deleted_primary_moves_its_data_to_the_first_transport_not_the_active_path() {
        // New DATA went to A3 (as after a failover) while A1 is still the
        // primary: deleting A1 makes A2 (the first transport) primary and
        // active, and DATA 500 moves there; the SACK for 501 clears A2 (500)
        // and A3 (501). Before: only A3, A2 kept 1 (H14 x4).
        let (mut s, [a1, a2, a3, c], us) = three_addresses();
        s.send(us, 1, (c, a1), &[script::data(500)]);
        s.send(us + 50, 1, (c, a3), &[script::data(501)]);
        s.send(
            us + 100,
            0,
            (a3, c),
            &[script::asconf(1, a3, &[(DELETE_IP, a1)])],
        );
        s.send(us + 200, 1, (c, a3), &[script::asconf_ack(1)]);
        assert_eq!(error_counts(&s, &[a2, a3]), [1, 1]);
        s.send(us + 500, 0, (a3, c), &[script::sack(501)]);
        assert_eq!(error_counts(&s, &[a2, a3]), [0, 0]);
    }

    #[test]
    fn a_second_deletion_moves_the_data_again() {
        // DATA 500 to A1; DELETE A1 moves it to A2 (first transport), then
        // DELETE A2 moves it to A3: the SACK clears A3. Before: the freed
        // C -> A2 was cleared, A3 kept 1 (H14 x1).
        let (mut s, [a1, a2, a3, c], us) = three_addresses();
        s.send(us, 1, (c, a1), &[script::data(500)]);
        s.send(
            us + 100,
            0,
            (a2, c),
            &[script::asconf(1, a2, &[(DELETE_IP, a1)])],
        );
        s.send(us + 200, 1, (c, a2), &[script::asconf_ack(1)]);
        s.send(
            us + 300,
            0,
            (a3, c),
            &[script::asconf(2, a3, &[(DELETE_IP, a2)])],
        );
        s.send(us + 400, 1, (c, a3), &[script::asconf_ack(2)]);
        s.send(us + 500, 0, (a3, c), &[script::sack(500)]);
        assert_eq!(error_counts(&s, &[a2, a3]), [1, 0]);
    }

    #[test]
    fn a_deletion_of_another_address_moves_its_data_to_the_active_path_the_first_deletion_chose() {
        // DATA 500 and 501 to A1, 500 again to A3 after a T3 expiry; DELETE
        // A1 makes A2 primary and active (501 moves there), then DELETE A3
        // moves 500 to A2 too: the SACK for 500 clears A2, not A3's or the
        // deleted A1's path. Before: the path to A1 (H14 x5).
        let (mut s, [a1, a2, a3, c], us) = three_addresses();
        s.send(us, 1, (c, a1), &[script::data(500)]);
        s.send(us + 10, 1, (c, a1), &[script::data(501)]);
        let us = us + 1_000_000;
        s.send(us, 1, (c, a3), &[script::data(500)]);
        s.send(
            us + 100,
            0,
            (a2, c),
            &[script::asconf(1, a2, &[(DELETE_IP, a1)])],
        );
        s.send(us + 200, 1, (c, a2), &[script::asconf_ack(1)]);
        s.send(
            us + 300,
            0,
            (a2, c),
            &[script::asconf(2, a2, &[(DELETE_IP, a3)])],
        );
        s.send(us + 400, 1, (c, a2), &[script::asconf_ack(2)]);
        assert_eq!(error_counts(&s, &[a1, a2, a3]), [1, 1, 1]);
        s.send(us + 500, 0, (a2, c), &[script::sack(500)]);
        assert_eq!(error_counts(&s, &[a1, a2, a3]), [1, 0, 1]);
    }

    #[test]
    fn path_max_retrans_0_makes_the_first_expiry_inactive_never_potentially_failed() {
        // Linux's sctp_do_8_2_transport_strike: inactive once error_count
        // > pathmaxrxt, PF only while pf_retrans < error_count <
        // pathmaxrxt: with Path.Max.Retrans 0 the first T3 expiry (500 sent
        // again after 1 s) makes the path inactive, with count 1.
        use crate::events::EventKind;
        let (a1, c) = (ip("10.0.0.1"), ip("10.0.1.1"));
        let mut s = Script::new(
            TrackConfig {
                path_max_retrans: 0,
                pf_retrans: Some(0),
                ..TrackConfig::default()
            },
            HandoverConfig::new(),
        );
        s.handshake(a1, &[a1], c);
        s.send(10_000, 1, (c, a1), &[script::data(500)]);
        let expiry = s.send(1_010_000, 1, (c, a1), &[script::data(500)]);
        let (events, _) = s.finish();
        let states: Vec<(u64, &str, u32)> = events
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::PathPotentiallyFailed { error_count, .. } => {
                    Some((e.frame, "pf", error_count))
                }
                EventKind::PathInactive { error_count, .. } => {
                    Some((e.frame, "inactive", error_count))
                }
                _ => None,
            })
            .collect();
        assert_eq!(states, [(expiry, "inactive", 1)]);
    }
}
