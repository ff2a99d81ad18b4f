//! IPv4/IPv6 fragment reassembly for datagrams that may carry SCTP.
//! Bounded: at most `DecodeOptions::max_reassembly` datagrams in progress
//! (default [`MAX_PENDING`]), each dropped [`TIMEOUT`] after its first
//! fragment (capture time).

use crate::time::{Nanos, Timestamp};
use std::net::IpAddr;

/// Datagrams reassembled concurrently before the oldest is dropped.
pub const MAX_PENDING: usize = 64;
/// Linux's default `ipfrag_time` (30 s).
const TIMEOUT: Nanos = Nanos(30_000_000_000);
/// Largest datagram IPv4/IPv6 (without jumbograms) can describe.
const MAX_DATAGRAM: usize = 65_535;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FragmentKey {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub ident: u32,
    pub protocol: u8,
}

struct Pending {
    key: FragmentKey,
    started: Timestamp,
    pieces: Vec<(usize, Vec<u8>)>,
    total: Option<usize>,
}

pub struct Reassembler {
    pending: Vec<Pending>,
    assembled: Vec<u8>,
    max_pending: usize,
    /// Datagrams dropped unfinished because `max_pending` were in progress.
    pub dropped: u64,
}

impl Default for Reassembler {
    fn default() -> Self {
        Reassembler::new(MAX_PENDING)
    }
}

impl Reassembler {
    pub fn new(max_pending: usize) -> Self {
        Reassembler {
            pending: Vec::new(),
            assembled: Vec::new(),
            max_pending: max_pending.max(1),
            dropped: 0,
        }
    }

    /// Adds one fragment; returns the whole datagram payload when this
    /// fragment completes it.
    pub fn add(
        &mut self,
        key: FragmentKey,
        offset: usize,
        more: bool,
        data: &[u8],
        time: Timestamp,
    ) -> Option<&[u8]> {
        self.pending
            .retain(|p| time.since(p.started) <= TIMEOUT && p.started.since(time) <= TIMEOUT);
        if offset + data.len() > MAX_DATAGRAM {
            return None;
        }
        let index = match self.pending.iter().position(|p| p.key == key) {
            Some(i) => i,
            None => {
                if self.pending.len() >= self.max_pending {
                    self.pending.remove(0);
                    self.dropped += 1;
                }
                self.pending.push(Pending {
                    key,
                    started: time,
                    pieces: Vec::new(),
                    total: None,
                });
                self.pending.len() - 1
            }
        };
        let entry = &mut self.pending[index];
        entry.pieces.push((offset, data.to_vec()));
        if !more {
            entry.total = Some(offset + data.len());
        }
        let total = entry.total?;
        entry.pieces.sort_by_key(|(o, _)| *o);
        let mut covered = 0;
        for (o, d) in &entry.pieces {
            if *o > covered {
                return None;
            }
            covered = covered.max(o + d.len());
        }
        if covered < total {
            return None;
        }
        let entry = self.pending.remove(index);
        self.assembled.clear();
        self.assembled.resize(total, 0);
        for (o, d) in &entry.pieces {
            let end = (o + d.len()).min(total);
            if *o < end {
                self.assembled[*o..end].copy_from_slice(&d[..end - o]);
            }
        }
        Some(&self.assembled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn key(ident: u32) -> FragmentKey {
        FragmentKey {
            src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
            dst: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
            ident,
            protocol: 132,
        }
    }

    #[test]
    fn out_of_order_fragments() {
        let mut r = Reassembler::default();
        assert!(r.add(key(1), 8, false, &[9, 10], Timestamp(0)).is_none());
        assert!(r.add(key(2), 0, true, &[0; 8], Timestamp(1)).is_none());
        let whole = r
            .add(key(1), 0, true, &[1, 2, 3, 4, 5, 6, 7, 8], Timestamp(2))
            .unwrap();
        assert_eq!(whole, &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10][..]);
    }

    #[test]
    fn stale_fragments_expire() {
        let mut r = Reassembler::default();
        assert!(r.add(key(1), 0, true, &[0; 8], Timestamp(0)).is_none());
        let later = Timestamp(31_000_000_000);
        assert!(r.add(key(1), 8, false, &[1], later).is_none());
    }
}
