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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fingerprint(u64);

#[derive(Debug, Clone, Copy)]
struct Seen {
    fingerprint: Fingerprint,
    time: Timestamp,
    interface: Option<u32>,
}

pub struct DuplicateDetector {
    window: Nanos,
    recent: [Option<Seen>; HISTORY],
    next: usize,
}

impl DuplicateDetector {
    pub fn new(window: Nanos) -> Self {
        DuplicateDetector {
            window,
            recent: [None; HISTORY],
            next: 0,
        }
    }

    /// True when `dg` is a copy of a packet seen within the window on a
    /// different interface (or where the link layer does not say which).
    pub fn is_duplicate(&mut self, dg: &SctpDatagram<'_>, time: Timestamp) -> bool {
        let fingerprint = fingerprint(dg);
        let duplicate = self.recent.iter().flatten().any(|s| {
            s.fingerprint == fingerprint
                && time.since(s.time).0.abs() <= self.window.0
                && (s.interface.is_none()
                    || dg.interface_hint.is_none()
                    || s.interface != dg.interface_hint)
        });
        if !duplicate {
            self.recent[self.next] = Some(Seen {
                fingerprint,
                time,
                interface: dg.interface_hint,
            });
            self.next = (self.next + 1) % HISTORY;
        }
        duplicate
    }
}

/// xxh3 over the addresses, the length, and the first bytes of the SCTP
/// packet (its header holds the CRC32c of the whole packet), gathered in
/// one stack buffer: every packet is fingerprinted, so this is on the hot
/// path (a byte-at-a-time FNV-1a here was a quarter of the analysis).
fn fingerprint(dg: &SctpDatagram<'_>) -> Fingerprint {
    let mut buf = [0u8; 16 + 16 + 4 + 12 + FINGERPRINT_BYTES];
    let mut n = 0;
    let mut feed = |bytes: &[u8]| {
        buf[n..n + bytes.len()].copy_from_slice(bytes);
        n += bytes.len();
    };
    for addr in [dg.src, dg.dst] {
        match addr {
            IpAddr::V4(a) => feed(&a.octets()),
            IpAddr::V6(a) => feed(&a.octets()),
        }
    }
    feed(&(dg.bytes.len() as u32).to_le_bytes());
    feed(&dg.bytes[..dg.bytes.len().min(12 + FINGERPRINT_BYTES)]);
    Fingerprint(xxhash_rust::xxh3::xxh3_64(&buf[..n]))
}
