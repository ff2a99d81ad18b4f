//! Recognises the same packet captured twice (Linux `any` captures see a
//! packet once per interface it crosses, 0 s apart). Such copies are
//! counted as capture duplicates, never as retransmissions.

use crate::decode::SctpDatagram;
use crate::time::{Nanos, Timestamp};
use std::net::IpAddr;

/// How many recent packets are remembered.
const HISTORY: usize = 16;
/// Bytes of chunk data included in the fingerprint beyond the header.
const FINGERPRINT_BYTES: usize = 48;

#[derive(Debug, Clone, Copy)]
struct Seen {
    time: Timestamp,
    interface: Option<u32>,
}

pub struct DuplicateDetector {
    window: Nanos,
    /// The recent packets' fingerprints, apart from the rest of what was
    /// seen: every packet is compared with all of them, nearly always in
    /// vain, and a plain array of integers is compared in a few vector
    /// instructions.
    fingerprints: [u64; HISTORY],
    seen: [Seen; HISTORY],
    /// Slots filled so far (the others hold no packet).
    filled: usize,
    next: usize,
}

impl DuplicateDetector {
    pub fn new(window: Nanos) -> Self {
        DuplicateDetector {
            window,
            fingerprints: [0; HISTORY],
            seen: [Seen {
                time: Timestamp::default(),
                interface: None,
            }; HISTORY],
            filled: 0,
            next: 0,
        }
    }

    /// True when `dg` is a copy of a packet seen within the window on a
    /// different interface (or where the link layer does not say which).
    pub fn is_duplicate(&mut self, dg: &SctpDatagram<'_>, time: Timestamp) -> bool {
        let fingerprint = fingerprint(dg);
        let duplicate = self
            .fingerprints
            .iter()
            .fold(false, |any, &f| any | (f == fingerprint))
            && self.fingerprints[..self.filled]
                .iter()
                .zip(&self.seen)
                .any(|(&f, s)| {
                    f == fingerprint
                        && time.since(s.time).0.abs() <= self.window.0
                        && (s.interface.is_none()
                            || dg.interface_hint.is_none()
                            || s.interface != dg.interface_hint)
                });
        if !duplicate {
            self.fingerprints[self.next] = fingerprint;
            self.seen[self.next] = Seen {
                time,
                interface: dg.interface_hint,
            };
            self.next = (self.next + 1) % HISTORY;
            self.filled = (self.filled + 1).min(HISTORY);
        }
        duplicate
    }
}

/// xxh3 over the first bytes of the SCTP packet (its header holds the
/// CRC32c of the whole packet), seeded with the addresses and the length.
/// Every packet is fingerprinted, so this is on the hot path: the bytes are
/// hashed where they lie (gathering them in a buffer first cost more than
/// the hash; a byte-at-a-time FNV-1a before that was a quarter of the
/// analysis).
fn fingerprint(dg: &SctpDatagram<'_>) -> u64 {
    let len = dg.bytes.len();
    let addresses = match (dg.src, dg.dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => (u64::from(u32::from(s)) << 32) | u64::from(u32::from(d)),
        (src, dst) => {
            let mut both = [0u8; 32];
            both[..16].copy_from_slice(&v6_octets(src));
            both[16..].copy_from_slice(&v6_octets(dst));
            xxhash_rust::xxh3::xxh3_64(&both)
        }
    };
    // The length is mixed in by an odd multiplier (one-to-one). Two
    // packets whose address and length bits happen to give the same seed
    // still differ in the bytes hashed: a different length changes the
    // SCTP checksum among them, or their number below 60 bytes.
    let seed = addresses ^ (len as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let head = &dg.bytes[..len.min(12 + FINGERPRINT_BYTES)];
    xxhash_rust::xxh3::xxh3_64_with_seed(head, seed)
}

fn v6_octets(address: IpAddr) -> [u8; 16] {
    match address {
        IpAddr::V4(a) => a.to_ipv6_mapped().octets(),
        IpAddr::V6(a) => a.octets(),
    }
}
