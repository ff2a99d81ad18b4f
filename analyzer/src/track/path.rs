//! Per-path state. A path is an ordered (source address, destination
//! address) pair inside an association (docs/metrics.md, "Path").

use super::rto::{RtoConfig, RtoEstimator, RttStats};
use crate::events::{EndpointId, PathId};
use crate::time::{Nanos, Timestamp};
use crate::wire::sctp_chunk::chunk_type;
use serde::{Serialize, Serializer};
use std::net::IpAddr;

/// Chunk counts by type: the known types in [`chunk_type::KNOWN`] order,
/// then one slot for every unknown type.
#[derive(Debug, Clone, Copy)]
pub struct ChunkCounts([u64; chunk_type::KNOWN.len() + 1]);

impl Default for ChunkCounts {
    fn default() -> Self {
        ChunkCounts([0; chunk_type::KNOWN.len() + 1])
    }
}

impl ChunkCounts {
    #[inline]
    pub fn add(&mut self, t: u8) {
        let slot = chunk_type::KNOWN
            .iter()
            .position(|&k| k == t)
            .unwrap_or(chunk_type::KNOWN.len());
        self.0[slot] += 1;
    }
    pub fn get(&self, t: u8) -> u64 {
        chunk_type::KNOWN
            .iter()
            .position(|&k| k == t)
            .map_or(0, |i| self.0[i])
    }
    pub fn unknown(&self) -> u64 {
        self.0[chunk_type::KNOWN.len()]
    }
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
    pub fn merge(&mut self, other: &ChunkCounts) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a += b;
        }
    }
    /// Non-zero counts as (name, count), in display order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        chunk_type::KNOWN
            .iter()
            .map(|&t| chunk_type::name(t))
            .chain(std::iter::once("unknown"))
            .zip(self.0.iter().copied())
            .filter(|(_, n)| *n > 0)
    }
}

impl Serialize for ChunkCounts {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

/// State transitions inferred from consecutive errors on a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    BecameInactive(u32),
    BecameActive,
}

#[derive(Debug, Clone, Serialize)]
pub struct PathState {
    pub id: PathId,
    pub src: IpAddr,
    pub dst: IpAddr,
    /// The endpoint that sends on this path.
    pub sender: EndpointId,
    pub first_frame: u64,
    pub first_time: Timestamp,
    pub last_frame: u64,
    pub last_time: Timestamp,
    pub packets: u64,
    /// SCTP bytes (common header and chunks) as carried on the wire.
    pub bytes: u64,
    pub chunks: ChunkCounts,
    pub data_new: u64,
    pub data_retransmitted: u64,
    pub data_retransmitted_after_ack: u64,
    pub heartbeats_sent: u64,
    pub heartbeats_acked: u64,
    pub heartbeats_unanswered: u64,
    pub hb_rtt: RttStats,
    pub data_rtt: RttStats,
    pub rto: RtoEstimator,
    /// First HEARTBEAT ACK answering a HEARTBEAT sent on this path.
    pub confirmed_frame: Option<u64>,
    pub confirmed_time: Option<Timestamp>,
    pub active: bool,
    pub error_count: u32,
    pub max_error_count: u32,
    pub inactive_transitions: u32,
    pub icmp_errors: u64,
    /// The last timeout-driven retransmission charged to this path: the
    /// ones that follow within the expiry burst are the same T3 expiry.
    #[serde(skip)]
    last_timeout: Option<Timestamp>,
}

impl PathState {
    pub fn new(
        id: PathId,
        src: IpAddr,
        dst: IpAddr,
        sender: EndpointId,
        frame: u64,
        time: Timestamp,
        rto: RtoConfig,
    ) -> Self {
        PathState {
            id,
            src,
            dst,
            sender,
            first_frame: frame,
            first_time: time,
            last_frame: frame,
            last_time: time,
            packets: 0,
            bytes: 0,
            chunks: ChunkCounts::default(),
            data_new: 0,
            data_retransmitted: 0,
            data_retransmitted_after_ack: 0,
            heartbeats_sent: 0,
            heartbeats_acked: 0,
            heartbeats_unanswered: 0,
            hb_rtt: RttStats::default(),
            data_rtt: RttStats::default(),
            rto: RtoEstimator::new(rto),
            confirmed_frame: None,
            confirmed_time: None,
            active: true,
            error_count: 0,
            max_error_count: 0,
            inactive_transitions: 0,
            icmp_errors: 0,
            last_timeout: None,
        }
    }

    /// A timeout-driven retransmission of DATA last sent here. RFC 9260
    /// §6.3.3 E1/§8.2 raise the error counter once per T3-rtx expiry, and an
    /// expiry's retransmissions leave as a burst (several packets, spread
    /// while the congestion window lets them out): only the first
    /// retransmission more than `burst` after the previous one charged to
    /// this path counts. The burst is not cut by a counter reset in between
    /// (a SACK for another of its TSNs): it is still the expiry already
    /// counted.
    pub fn record_timeout(
        &mut self,
        time: Timestamp,
        burst: Nanos,
        path_max_retrans: u32,
    ) -> Option<Transition> {
        let same_expiry = self.last_timeout.is_some_and(|t| time.since(t) <= burst);
        self.last_timeout = Some(time);
        if same_expiry {
            return None;
        }
        self.record_error(path_max_retrans)
    }

    /// An unanswered HEARTBEAT or a T3 expiry of DATA last sent here
    /// (RFC 9260 §8.2 error counter).
    pub fn record_error(&mut self, path_max_retrans: u32) -> Option<Transition> {
        self.error_count += 1;
        self.max_error_count = self.max_error_count.max(self.error_count);
        if self.active && self.error_count > path_max_retrans {
            self.active = false;
            self.inactive_transitions += 1;
            return Some(Transition::BecameInactive(self.error_count));
        }
        None
    }

    /// A HEARTBEAT ACK for this path, or a SACK newly acknowledging DATA
    /// sent on it, clears the error counter (RFC 9260 §8.3).
    pub fn record_success(&mut self) -> Option<Transition> {
        self.error_count = 0;
        if !self.active {
            self.active = true;
            return Some(Transition::BecameActive);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    #[test]
    fn chunk_counts() {
        let mut c = ChunkCounts::default();
        c.add(chunk_type::DATA);
        c.add(chunk_type::DATA);
        c.add(chunk_type::ASCONF);
        c.add(0x55);
        assert_eq!(c.get(chunk_type::DATA), 2);
        assert_eq!(c.unknown(), 1);
        assert_eq!(c.total(), 4);
        let names: Vec<_> = c.iter().collect();
        assert_eq!(names, vec![("data", 2), ("asconf", 1), ("unknown", 1)]);
    }

    #[test]
    fn error_counter_transitions() {
        let a = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let mut p = PathState::new(0, a, a, 0, 1, Timestamp(0), RtoConfig::default());
        assert_eq!(p.record_error(1), None);
        assert_eq!(p.record_error(1), Some(Transition::BecameInactive(2)));
        assert_eq!(p.record_error(1), None);
        assert_eq!(p.record_success(), Some(Transition::BecameActive));
        assert_eq!(p.max_error_count, 3);
    }

    #[test]
    fn one_error_per_expiry_burst() {
        let a = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let mut p = PathState::new(0, a, a, 0, 1, Timestamp(0), RtoConfig::default());
        let burst = Nanos::from_millis(100);
        let ms = |m: i64| Timestamp(m * 1_000_000);
        // One expiry whose retransmissions leave over 50 ms: one error.
        assert_eq!(p.record_timeout(ms(1000), burst, 1), None);
        assert_eq!(p.record_timeout(ms(1000), burst, 1), None);
        assert_eq!(p.record_timeout(ms(1050), burst, 1), None);
        assert_eq!(p.error_count, 1);
        // A SACK in the middle of the burst clears the counter; the rest of
        // the burst is the expiry already counted.
        p.record_success();
        assert_eq!(p.record_timeout(ms(1100), burst, 1), None);
        assert_eq!(p.error_count, 0);
        // The next expiries, an RTO apart.
        assert_eq!(p.record_timeout(ms(1400), burst, 1), None);
        assert_eq!(
            p.record_timeout(ms(1800), burst, 1),
            Some(Transition::BecameInactive(2))
        );
    }
}
