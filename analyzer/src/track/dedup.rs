//! Recognises the same packet captured twice (Linux `any` captures see a
//! packet once per interface it crosses, 0 s apart). Such copies are
//! counted as capture duplicates, never as retransmissions.

use crate::decode::SctpDatagram;
use crate::time::{Nanos, Timestamp};
use std::net::IpAddr;

/// How many recent packets are remembered.
const HISTORY: usize = 16;
/// Bytes of chunk data compared beyond the common header.
const COMPARED_CHUNK_BYTES: usize = 48;
/// The SCTP common header (RFC 9260 §3.1): ports, verification tag and
/// the CRC32c of the whole packet.
const COMMON_HEADER: usize = 12;
/// The 60 first bytes of SCTP that the definition compares (docs/metrics.md).
const COMPARED: usize = COMMON_HEADER + COMPARED_CHUNK_BYTES;

/// What a recent packet is compared on: both addresses, its length, its
/// first bytes (the header's checksum covers the rest), and when and where
/// it was seen.
#[derive(Debug, Clone, Copy)]
struct Seen {
    time: Timestamp,
    interface: Option<u32>,
    src: IpAddr,
    dst: IpAddr,
    len: usize,
    head: [u8; COMPARED],
}

impl Seen {
    fn is_copy_of(&self, dg: &SctpDatagram<'_>) -> bool {
        let n = self.len.min(COMPARED);
        self.len == dg.bytes.len()
            && self.src == dg.src
            && self.dst == dg.dst
            && self.head[..n] == dg.bytes[..n]
    }
}

/// Recognises capture duplicates (docs/metrics.md, "Capture duplicate"):
/// a packet with the same addresses, length and first 60 bytes of SCTP as
/// one of the last few seen within the window on another interface.
pub struct DuplicateDetector {
    window: Nanos,
    /// The recent packets' keys (verification tag, checksum and length),
    /// apart from the rest of what was seen: every packet is compared with
    /// all of them, nearly always in vain, and a plain array of integers is
    /// compared in a few vector instructions. Only a packet whose key
    /// matches is compared byte by byte.
    keys: [u32; HISTORY],
    seen: [Seen; HISTORY],
    /// Slots filled so far (the others hold no packet).
    filled: usize,
    next: usize,
}

impl DuplicateDetector {
    /// A detector that remembers no packet yet; copies count as duplicates
    /// when they come at most `window` apart (either way).
    pub fn new(window: Nanos) -> Self {
        let nothing = Seen {
            time: Timestamp::default(),
            interface: None,
            src: IpAddr::from([0u8; 4]),
            dst: IpAddr::from([0u8; 4]),
            len: 0,
            head: [0; COMPARED],
        };
        DuplicateDetector {
            window,
            keys: [0; HISTORY],
            seen: [nothing; HISTORY],
            filled: 0,
            next: 0,
        }
    }

    /// True when `dg` is a copy of a packet seen within the window on a
    /// different interface (or where the link layer does not say which).
    pub fn is_duplicate(&mut self, dg: &SctpDatagram<'_>, time: Timestamp) -> bool {
        let key = key(dg.bytes);
        let duplicate = self.keys.iter().fold(false, |any, &k| any | (k == key))
            && self.keys[..self.filled]
                .iter()
                .zip(&self.seen)
                .any(|(&k, s)| {
                    k == key
                        // unsigned: times from a file can be i64::MIN apart
                        && time.since(s.time).0.unsigned_abs() <= self.window.0.unsigned_abs()
                        && (s.interface.is_none()
                            || dg.interface_hint.is_none()
                            || s.interface != dg.interface_hint)
                        && s.is_copy_of(dg)
                });
        if !duplicate {
            self.keys[self.next] = key;
            let slot = &mut self.seen[self.next];
            slot.time = time;
            slot.interface = dg.interface_hint;
            slot.src = dg.src;
            slot.dst = dg.dst;
            slot.len = dg.bytes.len();
            match dg.bytes.first_chunk::<COMPARED>() {
                // Nearly every packet: a copy of known size, inlined.
                Some(head) => slot.head = *head,
                None => slot.head[..dg.bytes.len()].copy_from_slice(dg.bytes),
            }
            self.next = (self.next + 1) % HISTORY;
            self.filled = (self.filled + 1).min(HISTORY);
        }
        duplicate
    }
}

/// The verification tag and checksum (RFC 9260 §3.1) with the length
/// folded in: two copies of a packet have the same key, and two different
/// packets rarely do (the checksum covers the whole packet, unless the
/// sender left it to its network card: then the byte comparison decides).
/// Every packet is keyed and compared with every key, so this is on the
/// hot path: 32-bit keys compare four to a vector instruction, and a hash
/// of the first 60 bytes before them was 7 % of a run.
fn key(bytes: &[u8]) -> u32 {
    let word = |at: usize| {
        bytes
            .get(at..at + 4)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map_or(0, u32::from_le_bytes)
    };
    word(8) ^ word(4).rotate_left(16) ^ bytes.len() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn datagram<'a>(bytes: &'a [u8], src: [u8; 4], interface: Option<u32>) -> SctpDatagram<'a> {
        SctpDatagram {
            src: IpAddr::from(src),
            dst: IpAddr::from([10, 0, 0, 2]),
            bytes,
            cut: false,
            udp_encapsulation: None,
            interface_hint: interface,
            reassembled: false,
        }
    }

    /// A SACK-sized packet whose checksum was left to the network card
    /// (zero), differing from its neighbours only in its chunk bytes.
    fn packet(cumulative_tsn: u8) -> Vec<u8> {
        let mut p = vec![0u8; 28];
        p[..4].copy_from_slice(&[0x0b, 0x59, 0x0b, 0x59]);
        p[4..8].copy_from_slice(&[1, 2, 3, 4]);
        p[12] = 3; // SACK
        p[19] = cumulative_tsn;
        p
    }

    #[test]
    fn a_copy_on_another_interface_within_the_window_is_a_duplicate() {
        let mut d = DuplicateDetector::new(Nanos(1_000_000));
        let p = packet(7);
        let t = Timestamp(5_000_000_000);
        assert!(!d.is_duplicate(&datagram(&p, [10, 0, 0, 1], Some(1)), t));
        assert!(d.is_duplicate(&datagram(&p, [10, 0, 0, 1], Some(2)), t));
        // Not on the interface it was first seen on, nor after the window.
        assert!(!d.is_duplicate(&datagram(&p, [10, 0, 0, 1], Some(1)), t));
        let later = Timestamp(t.0 + 2_000_000);
        assert!(!d.is_duplicate(&datagram(&p, [10, 0, 0, 1], Some(3)), later));
    }

    #[test]
    fn same_key_but_other_bytes_or_addresses_is_not_a_duplicate() {
        let mut d = DuplicateDetector::new(Nanos(1_000_000));
        let t = Timestamp(5_000_000_000);
        let (a, b) = (packet(7), packet(8));
        assert_eq!(
            key(&a),
            key(&b),
            "zero checksums: the key cannot tell them apart"
        );
        assert!(!d.is_duplicate(&datagram(&a, [10, 0, 0, 1], None), t));
        assert!(!d.is_duplicate(&datagram(&b, [10, 0, 0, 1], None), t));
        assert!(!d.is_duplicate(&datagram(&a, [10, 0, 0, 9], None), t));
        assert!(d.is_duplicate(&datagram(&b, [10, 0, 0, 1], None), t));
        // A byte past the compared head is covered by the checksum only.
        let mut long = vec![0u8; 100];
        long[4..8].copy_from_slice(&[1, 2, 3, 4]);
        let mut other = long.clone();
        other[99] = 1;
        assert!(!d.is_duplicate(&datagram(&long, [10, 0, 0, 1], None), t));
        assert!(d.is_duplicate(&datagram(&other, [10, 0, 0, 1], None), t));
        // Times as far apart as a file can make them are outside any window.
        let p = packet(9);
        assert!(!d.is_duplicate(&datagram(&p, [10, 0, 0, 1], None), Timestamp(i64::MAX)));
        assert!(!d.is_duplicate(&datagram(&p, [10, 0, 0, 1], None), Timestamp(i64::MIN)));
        // A shorter packet (cut below the common header) is compared too.
        let tiny = [1u8, 2, 3];
        assert!(!d.is_duplicate(&datagram(&tiny, [10, 0, 0, 1], None), t));
        assert!(d.is_duplicate(&datagram(&tiny, [10, 0, 0, 1], None), t));
    }
}
