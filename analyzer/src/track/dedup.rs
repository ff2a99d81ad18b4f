//! Recognises the same packet captured twice (Linux `any` captures see a
//! packet once per interface it crosses, 0 s apart). Such copies are
//! counted as capture duplicates, never as retransmissions.

use super::{fnv1a, FNV_OFFSET};
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

/// FNV-1a over the addresses, the length, and the first bytes of the SCTP
/// packet (its header holds the CRC32c of the whole packet).
fn fingerprint(dg: &SctpDatagram<'_>) -> Fingerprint {
    let mut h = FNV_OFFSET;
    let mut feed = |bytes: &[u8]| h = fnv1a(h, bytes);
    for addr in [dg.src, dg.dst] {
        match addr {
            IpAddr::V4(a) => feed(&a.octets()),
            IpAddr::V6(a) => feed(&a.octets()),
        }
    }
    feed(&(dg.bytes.len() as u32).to_le_bytes());
    feed(&dg.bytes[..dg.bytes.len().min(12 + FINGERPRINT_BYTES)]);
    Fingerprint(h)
}
