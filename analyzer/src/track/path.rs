//! Per-path state. A path is an ordered (source address, destination
//! address) pair inside an association (docs/metrics.md, "Path").

use super::rto::{RtoConfig, RtoEstimator, RttStats};
use crate::events::{EndpointId, PathId};
use crate::time::{Nanos, Timestamp};
use crate::wire::sctp_chunk::chunk_type;
use serde::{Serialize, Serializer};
use std::net::IpAddr;

/// A chunk counter: paths count in `u32` (saturating; a path would need
/// 4·10⁹ chunks of one type), files and associations in `u64`.
pub trait Counter: Copy + Default + Into<u64> {
    /// Counts one more (a `u32` saturates).
    fn increment(&mut self);
    /// Adds another counter's count (a `u32` saturates).
    fn add_counter(&mut self, other: Self);
}

impl Counter for u64 {
    #[inline]
    fn increment(&mut self) {
        *self += 1;
    }
    fn add_counter(&mut self, other: Self) {
        *self += other;
    }
}

impl Counter for u32 {
    #[inline]
    fn increment(&mut self) {
        *self = self.saturating_add(1);
    }
    fn add_counter(&mut self, other: Self) {
        *self = self.saturating_add(other);
    }
}

const SLOTS: usize = chunk_type::KNOWN.len() + 1;

/// The counter slot of every chunk type: its index in
/// [`chunk_type::KNOWN`], or the last slot for unknown types (a table,
/// not a search: every chunk of a capture is counted).
const SLOT_OF: [u8; 256] = {
    let mut table = [chunk_type::KNOWN.len() as u8; 256];
    let mut i = 0;
    while i < chunk_type::KNOWN.len() {
        table[chunk_type::KNOWN[i] as usize] = i as u8;
        i += 1;
    }
    table
};

/// Chunk counts by type: the known types in [`chunk_type::KNOWN`] order,
/// then one slot for every unknown type.
#[derive(Debug, Clone, Copy)]
pub struct ChunkCounts<C: Counter = u64>([C; SLOTS]);

/// A path's chunk counts (half the memory of a file's).
pub type PathChunkCounts = ChunkCounts<u32>;

impl<C: Counter> Default for ChunkCounts<C> {
    fn default() -> Self {
        ChunkCounts([C::default(); SLOTS])
    }
}

impl<C: Counter> ChunkCounts<C> {
    /// Counts one chunk of type `t`.
    #[inline]
    pub fn add(&mut self, t: u8) {
        self.0[usize::from(SLOT_OF[usize::from(t)])].increment();
    }
    /// Chunks of the known type `t`; 0 for a type not in
    /// [`chunk_type::KNOWN`] (those are counted together: [`Self::unknown`]).
    pub fn get(&self, t: u8) -> u64 {
        chunk_type::KNOWN
            .iter()
            .position(|&k| k == t)
            .map_or(0, |i| self.0[i].into())
    }
    /// Chunks of every type not in [`chunk_type::KNOWN`].
    pub fn unknown(&self) -> u64 {
        self.0[chunk_type::KNOWN.len()].into()
    }
    /// Chunks of every type.
    pub fn total(&self) -> u64 {
        self.0.iter().map(|&c| c.into()).sum()
    }
    /// Adds `other`'s counts, type by type.
    pub fn merge(&mut self, other: &ChunkCounts<C>) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            a.add_counter(*b);
        }
    }
    /// Non-zero counts as (name, count), in display order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        chunk_type::KNOWN
            .iter()
            .map(|&t| chunk_type::name(t))
            .chain(std::iter::once("unknown"))
            .zip(self.0.iter().map(|&c| c.into()))
            .filter(|(_, n)| *n > 0)
    }
}

impl<C: Counter> Serialize for ChunkCounts<C> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

/// State transitions inferred from consecutive errors on a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// The error count exceeded the potentially-failed threshold (RFC 7829
    /// §4 PFMR): the sender moves new DATA to another active path.
    BecamePotentiallyFailed(u32),
    /// The error count exceeded Path.Max.Retrans (RFC 9260 §8.2).
    BecameInactive(u32),
    /// A potentially failed or inactive path answered again.
    BecameActive,
}

/// The thresholds of the inferred path state: Path.Max.Retrans, and the
/// potentially-failed threshold (RFC 7829 PFMR; Linux's
/// `net.sctp.pf_retrans`, 0 by default with `pf_enable` 1), `None` when
/// the potentially-failed state is not in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Thresholds {
    /// Path.Max.Retrans (RFC 9260 §8.2, `--pmr`): the path is inactive
    /// when its error count exceeds it.
    pub path_max_retrans: u32,
    /// The potentially-failed threshold (RFC 7829 PFMR, `--pf-retrans`):
    /// the path is potentially failed when its error count exceeds it
    /// while below Path.Max.Retrans; `None` (`--no-pf`): not inferred.
    pub pf_retrans: Option<u32>,
}

/// The inferred state of a path (docs/metrics.md, "Inferred path state").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PathStatus {
    /// Its error count is within the thresholds (or it answered again).
    #[default]
    Active,
    /// Its error count exceeds the potentially-failed threshold but not
    /// Path.Max.Retrans (RFC 7829 §4): still active, its sender moves new
    /// DATA to another active path and keeps probing it.
    PotentiallyFailed,
    /// Its error count exceeds Path.Max.Retrans (RFC 9260 §8.2).
    Inactive,
}

crate::names::output_names!(PathStatus, "path state" {
    Active => "active",
    PotentiallyFailed => "potentially_failed",
    Inactive => "inactive",
});

/// What an acknowledgement did to a path: the error count it cleared
/// (when it was not zero) and the state transition.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cleared {
    /// The error count cleared; `None` when it was already zero.
    pub error_count: Option<u32>,
    /// The transition back to active; `None` when the path was active.
    pub transition: Option<Transition>,
}

/// One path of an association (docs/metrics.md, "Paths"): its traffic,
/// heartbeats, RTT samples and RTO, confirmation and inferred state.
#[derive(Debug, Clone, Serialize)]
pub struct PathState {
    /// Its index in the association's paths.
    pub id: PathId,
    /// The source address.
    pub src: IpAddr,
    /// The destination address.
    pub dst: IpAddr,
    /// The endpoint that sends on this path.
    pub sender: EndpointId,
    /// Its first packet.
    pub first_frame: u64,
    /// That packet's time.
    pub first_time: Timestamp,
    /// Its last packet so far.
    pub last_frame: u64,
    /// That packet's time.
    pub last_time: Timestamp,
    /// SCTP packets sent on it.
    pub packets: u64,
    /// SCTP bytes (common header and chunks) as carried on the wire.
    pub bytes: u64,
    /// Chunks sent on it, by type.
    pub chunks: PathChunkCounts,
    /// New DATA chunks sent on it (a TSN's first transmission).
    pub data_new: u64,
    /// Retransmitted DATA chunks sent on it.
    pub data_retransmitted: u64,
    /// Of those, retransmissions of TSNs already acknowledged.
    pub data_retransmitted_after_ack: u64,
    /// HEARTBEATs sent on it.
    pub heartbeats_sent: u64,
    /// Of those, the ones a HEARTBEAT ACK answered (on whatever path it
    /// came back).
    pub heartbeats_acked: u64,
    /// HEARTBEATs marked unanswered: a later HEARTBEAT went out on the path
    /// with this one still unanswered (an error of the path).
    pub heartbeats_unanswered: u64,
    /// HB RTT samples: HEARTBEAT → its HEARTBEAT ACK, on the path the
    /// HEARTBEAT probed.
    pub hb_rtt: RttStats,
    /// DATA RTT samples: first transmission → the SACK that advanced the
    /// cumulative TSN ack over it (Karn's rule, RFC 9260 §6.3.1 C5).
    pub data_rtt: RttStats,
    /// SRTT, RTTVAR and RTO from both kinds of samples (RFC 9260 §6.3.1
    /// C1–C3).
    pub rto: RtoEstimator,
    /// First HEARTBEAT ACK answering a HEARTBEAT sent on this path.
    pub confirmed_frame: Option<u64>,
    /// That HEARTBEAT ACK's time; `None` while unconfirmed.
    pub confirmed_time: Option<Timestamp>,
    /// Its destination awaits confirmation (RFC 9260 §5.4; see
    /// [`super::assoc::AddressInfo::unconfirmed`]): errors are counted
    /// but change no state.
    pub unconfirmed: bool,
    /// Not inactive (a potentially failed path is still active).
    pub active: bool,
    /// Inferred potentially failed (RFC 7829 §4; still `active`).
    pub potentially_failed: bool,
    /// The error counter as the sender keeps it: it stops at the count
    /// that made the path inactive (see [`PathState::record_error`]).
    pub error_count: u32,
    /// The most errors counted since a clear, an inactive path's included.
    pub max_error_count: u32,
    /// Errors since the last clear, counting on past inactivity: the
    /// inactive state here is inferred from the Path.Max.Retrans given to
    /// the analysis, so a sender with a higher one goes on counting to its
    /// own, and its failover's expiries must show that count (the observed
    /// PMR, docs/metrics.md).
    #[serde(skip)]
    pub errors_since_clear: u32,
    /// Times the path became inactive (RFC 9260 §8.2).
    pub inactive_transitions: u32,
    /// Times the path became potentially failed (RFC 7829).
    pub pf_transitions: u32,
    /// ICMP errors quoting a packet sent on this path.
    pub icmp_errors: u64,
    /// T3 expiries recognised on this path (charged to its error counter
    /// or not), and the first retransmission of the latest.
    pub t3_expiries: u32,
    #[serde(skip)]
    last_expiry: Option<Timestamp>,
    /// The frame of the latest expiry's first retransmission.
    #[serde(skip)]
    pub(crate) last_expiry_frame: u64,
    /// The last two times the error counter was cleared (a HEARTBEAT ACK,
    /// or a SACK for DATA last sent here, which also restarts the T3 timer).
    #[serde(skip)]
    last_clear: Option<Timestamp>,
    /// The clear before `last_clear`.
    #[serde(skip)]
    previous_clear: Option<Timestamp>,
}

/// How late a T3 timer may fire after its deadline: one tick of a HZ = 100
/// kernel and some processing.
const T3_SLACK: Nanos = Nanos(15_000_000);

impl PathState {
    /// A path first seen at `frame`, with no traffic counted yet and the
    /// RTO at RTO.Initial.
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
            unconfirmed: false,
            active: true,
            potentially_failed: false,
            error_count: 0,
            max_error_count: 0,
            errors_since_clear: 0,
            inactive_transitions: 0,
            pf_transitions: 0,
            icmp_errors: 0,
            t3_expiries: 0,
            last_expiry: None,
            last_expiry_frame: frame,
            last_clear: None,
            previous_clear: None,
        }
    }

    /// A timeout-driven retransmission at `time` of DATA last sent here at
    /// `sent`; returns whether it is the first of a new T3 expiry, and the
    /// state transition. RFC 9260 §6.3.3 E1/§8.2 raise the error counter
    /// once per T3-rtx expiry, and an expiry marks every TSN outstanding on
    /// the path for retransmission: a TSN belongs to the first expiry of
    /// its path after it was last sent. So a retransmission starts a new
    /// expiry only when the path had none since `sent`; the expiry's other
    /// TSNs, however late the congestion window lets them out (several
    /// packets, sometimes hundreds of milliseconds later, after a SACK that
    /// cleared the counter), are the expiry already counted.
    ///
    /// An expiry is seen at its first retransmission, which the congestion
    /// window can hold back past a SACK that clears the counter (a SACK for
    /// a TSN last sent here by the retransmission of another path's
    /// expiry). When the expiry must have come before that clear — the T3
    /// timer covering `sent` ran at most `rto_max` from `sent` or from the
    /// last clear before (an acknowledgement restarts it), and that
    /// deadline (plus a timer tick) is before the clear — the clear undid
    /// it and it is not charged. With the RFC's 60 s RTO.Max this never
    /// applies; it needs the sender's RTO.Max.
    pub fn record_timeout(
        &mut self,
        (frame, time): (u64, Timestamp),
        sent: Option<Timestamp>,
        rto_max: Nanos,
        thresholds: Thresholds,
    ) -> (bool, Option<Transition>) {
        let new_expiry = match (sent, self.last_expiry) {
            (Some(sent), Some(last)) => last <= sent,
            _ => true,
        };
        if !new_expiry {
            return (false, None);
        }
        self.last_expiry = Some(time);
        self.last_expiry_frame = frame;
        self.t3_expiries += 1;
        let before_clear = match (sent, self.last_clear) {
            (Some(sent), Some(cleared)) if sent < cleared => {
                let started = self.previous_clear.map_or(sent, |p| p.max(sent));
                started
                    .0
                    .saturating_add(rto_max.0)
                    .saturating_add(T3_SLACK.0)
                    < cleared.0
            }
            _ => false,
        };
        if before_clear {
            return (true, None);
        }
        (true, self.record_error(thresholds))
    }

    /// The sender's transport to this destination was freed by a DELETE-IP
    /// and a new one made by an ADD-IP (Linux's sctp_assoc_rm_peer, then
    /// sctp_assoc_add_peer): the error counter and the state start afresh,
    /// with no clear remembered. What the path carried stays counted.
    pub(crate) fn renew_transport(&mut self) {
        self.error_count = 0;
        self.errors_since_clear = 0;
        self.active = true;
        self.potentially_failed = false;
        self.last_clear = None;
        self.previous_clear = None;
    }

    /// The inferred state.
    pub fn status(&self) -> PathStatus {
        match (self.active, self.potentially_failed) {
            (false, _) => PathStatus::Inactive,
            (true, true) => PathStatus::PotentiallyFailed,
            (true, false) => PathStatus::Active,
        }
    }

    /// An unanswered HEARTBEAT or a T3 expiry of DATA last sent here
    /// (RFC 9260 §8.2 error counter), with the thresholds of Linux's
    /// sctp_do_8_2_transport_strike: an active path whose count exceeds
    /// PFMR while still *below* Path.Max.Retrans becomes potentially
    /// failed (RFC 7829 §4), and any path not inactive whose count exceeds
    /// Path.Max.Retrans becomes inactive. So a count equal to
    /// Path.Max.Retrans changes nothing, and a PFMR at or above
    /// Path.Max.Retrans − 1 never applies (RFC 7829 §4 turns the state
    /// off only at or above Path.Max.Retrans; Linux needs room for one
    /// count between the two).
    /// A path to an unconfirmed address counts the error and stays as it
    /// is: Linux's sctp_do_8_2_transport_strike raises an UNCONFIRMED
    /// transport's error count, enters PF only from ACTIVE, and
    /// sctp_assoc_control_transport leaves an UNCONFIRMED transport
    /// UNCONFIRMED on SCTP_TRANSPORT_DOWN, without a notification. An
    /// inactive path counts nothing more: the same function raises no
    /// INACTIVE transport's count, which stays at the count that made it
    /// inactive until an acknowledgement clears it (the kernel's samples
    /// in bokor-paper-return-rto1000: 6 with Path.Max.Retrans 5, through
    /// the unanswered HEARTBEATs that follow).
    pub fn record_error(&mut self, thresholds: Thresholds) -> Option<Transition> {
        self.errors_since_clear = self.errors_since_clear.saturating_add(1);
        self.max_error_count = self.max_error_count.max(self.errors_since_clear);
        if !self.active {
            return None;
        }
        self.error_count += 1;
        if self.unconfirmed {
            return None;
        }
        if self.active && self.error_count > thresholds.path_max_retrans {
            self.active = false;
            self.potentially_failed = false;
            self.inactive_transitions += 1;
            return Some(Transition::BecameInactive(self.error_count));
        }
        let past_pf = thresholds
            .pf_retrans
            .is_some_and(|pf| self.error_count > pf);
        let below_pmr = self.error_count < thresholds.path_max_retrans;
        if self.active && !self.potentially_failed && past_pf && below_pmr {
            self.potentially_failed = true;
            self.pf_transitions += 1;
            return Some(Transition::BecamePotentiallyFailed(self.error_count));
        }
        None
    }

    /// A HEARTBEAT ACK for this path, or a SACK newly acknowledging DATA
    /// sent on it, clears the error counter (RFC 9260 §8.3) and makes a
    /// potentially failed or inactive path active (RFC 7829 §4).
    pub fn record_success(&mut self, time: Timestamp) -> Cleared {
        let before = std::mem::replace(&mut self.error_count, 0);
        self.errors_since_clear = 0;
        if self.last_clear != Some(time) {
            self.previous_clear = self.last_clear;
            self.last_clear = Some(time);
        }
        let transition = if !self.active || self.potentially_failed {
            self.active = true;
            self.potentially_failed = false;
            Some(Transition::BecameActive)
        } else {
            None
        };
        Cleared {
            error_count: (before > 0).then_some(before),
            transition,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    #[test]
    fn chunk_counts() {
        let mut c: ChunkCounts = ChunkCounts::default();
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
        let pmr1 = Thresholds {
            path_max_retrans: 1,
            pf_retrans: None,
        };
        assert_eq!(p.record_error(pmr1), None);
        assert_eq!(p.record_error(pmr1), Some(Transition::BecameInactive(2)));
        // Inactive: Linux counts no more errors.
        assert_eq!(p.record_error(pmr1), None);
        assert_eq!(p.error_count, 2);
        assert_eq!(
            p.record_success(Timestamp(0)),
            Cleared {
                error_count: Some(2),
                transition: Some(Transition::BecameActive)
            }
        );
        // The most errors since a clear counts the inactive path's too.
        assert_eq!(p.max_error_count, 3);
        assert_eq!(p.record_success(Timestamp(0)), Cleared::default());
    }

    #[test]
    fn potentially_failed_before_inactive() {
        // Linux's defaults: pf_enable 1, pf_retrans 0, Path.Max.Retrans 5.
        let a = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let mut p = PathState::new(0, a, a, 0, 1, Timestamp(0), RtoConfig::default());
        let linux = Thresholds {
            path_max_retrans: 5,
            pf_retrans: Some(0),
        };
        assert_eq!(
            p.record_error(linux),
            Some(Transition::BecamePotentiallyFailed(1))
        );
        assert_eq!(p.status(), PathStatus::PotentiallyFailed);
        for _ in 2..=5 {
            assert_eq!(p.record_error(linux), None);
        }
        assert_eq!(p.record_error(linux), Some(Transition::BecameInactive(6)));
        assert_eq!(p.status(), PathStatus::Inactive);
        assert_eq!((p.pf_transitions, p.inactive_transitions), (1, 1));
        // PFMR at or above PMR: no PF state (RFC 7829 §4).
        let mut q = PathState::new(0, a, a, 0, 1, Timestamp(0), RtoConfig::default());
        let off = Thresholds {
            path_max_retrans: 1,
            pf_retrans: Some(1),
        };
        assert_eq!(q.record_error(off), None);
        assert_eq!(q.record_error(off), Some(Transition::BecameInactive(2)));
        assert_eq!(q.pf_transitions, 0);
    }

    #[test]
    fn a_count_equal_to_path_max_retrans_is_not_potentially_failed() {
        // Linux's sctp_do_8_2_transport_strike: PF needs pf_retrans <
        // error_count < pathmaxrxt, inactive error_count > pathmaxrxt. With
        // Path.Max.Retrans 1 and pf_retrans 0 the first error leaves the
        // path active (1 is not below 1), the second makes it inactive.
        let a = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let mut p = PathState::new(0, a, a, 0, 1, Timestamp(0), RtoConfig::default());
        let pmr1 = Thresholds {
            path_max_retrans: 1,
            pf_retrans: Some(0),
        };
        assert_eq!(p.record_error(pmr1), None);
        assert_eq!(p.status(), PathStatus::Active);
        assert_eq!(p.record_error(pmr1), Some(Transition::BecameInactive(2)));
        assert_eq!((p.pf_transitions, p.inactive_transitions), (0, 1));
        // pf_retrans = Path.Max.Retrans − 1: the count that passes it is
        // Path.Max.Retrans itself, never potentially failed either.
        let mut q = PathState::new(0, a, a, 0, 1, Timestamp(0), RtoConfig::default());
        let pmr2 = Thresholds {
            path_max_retrans: 2,
            pf_retrans: Some(1),
        };
        assert_eq!(q.record_error(pmr2), None);
        assert_eq!(q.record_error(pmr2), None);
        assert_eq!(q.status(), PathStatus::Active);
        assert_eq!(q.record_error(pmr2), Some(Transition::BecameInactive(3)));
        assert_eq!(q.pf_transitions, 0);
        // One below that, the state is entered right after PFMR.
        let mut r = PathState::new(0, a, a, 0, 1, Timestamp(0), RtoConfig::default());
        let pmr3 = Thresholds {
            path_max_retrans: 3,
            pf_retrans: Some(1),
        };
        assert_eq!(r.record_error(pmr3), None);
        assert_eq!(
            r.record_error(pmr3),
            Some(Transition::BecamePotentiallyFailed(2))
        );
        assert_eq!(r.record_error(pmr3), None);
        assert_eq!(r.record_error(pmr3), Some(Transition::BecameInactive(4)));
    }

    #[test]
    fn errors_past_the_inferred_inactive_state_still_count_since_the_clear() {
        // A sender with Path.Max.Retrans 8 analysed with 5: the path is
        // inferred inactive at the 6th error and its counter stops there
        // (as Linux's would at its own threshold), while the errors since
        // the clear go on to the sender's 9 (its observed PMR 8).
        let a = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let mut p = PathState::new(0, a, a, 0, 1, Timestamp(0), RtoConfig::default());
        let analysis = Thresholds {
            path_max_retrans: 5,
            pf_retrans: None,
        };
        let transitions: Vec<_> = (0..9).filter_map(|_| p.record_error(analysis)).collect();
        assert_eq!(transitions, vec![Transition::BecameInactive(6)]);
        assert_eq!(
            (p.error_count, p.errors_since_clear, p.max_error_count),
            (6, 9, 9)
        );
        let cleared = p.record_success(Timestamp(1));
        assert_eq!(cleared.error_count, Some(6));
        assert_eq!((p.error_count, p.errors_since_clear), (0, 0));
    }

    #[test]
    fn an_unconfirmed_path_counts_errors_and_keeps_its_state() {
        // Linux's sctp_do_8_2_transport_strike: an UNCONFIRMED transport's
        // error count rises, but it never becomes PF or INACTIVE.
        let a = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let mut p = PathState::new(0, a, a, 0, 1, Timestamp(0), RtoConfig::default());
        p.unconfirmed = true;
        let linux = Thresholds {
            path_max_retrans: 2,
            pf_retrans: Some(0),
        };
        for _ in 0..5 {
            assert_eq!(p.record_error(linux), None);
        }
        assert_eq!((p.error_count, p.status()), (5, PathStatus::Active));
        assert_eq!((p.pf_transitions, p.inactive_transitions), (0, 0));
        // Confirmed (a HEARTBEAT ACK clears the counter): as any path.
        p.unconfirmed = false;
        assert_eq!(
            p.record_success(Timestamp(0)),
            Cleared {
                error_count: Some(5),
                transition: None
            }
        );
        assert_eq!(
            p.record_error(linux),
            Some(Transition::BecamePotentiallyFailed(1))
        );
    }

    #[test]
    fn one_error_per_expiry() {
        let pmr = |n| Thresholds {
            path_max_retrans: n,
            pf_retrans: None,
        };
        let a = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let mut p = PathState::new(0, a, a, 0, 1, Timestamp(0), RtoConfig::default());
        let rto_max = Nanos::from_millis(60_000);
        let ms = |m: i64| Timestamp(m * 1_000_000);
        // One expiry at 1000 ms whose TSNs (sent up to 900 ms) leave over
        // 300 ms, while the window lets them out: one error.
        assert_eq!(
            p.record_timeout((0, ms(1000)), Some(ms(700)), rto_max, pmr(1)),
            (true, None)
        );
        assert_eq!(
            p.record_timeout((0, ms(1000)), Some(ms(750)), rto_max, pmr(1)),
            (false, None)
        );
        assert_eq!(
            p.record_timeout((0, ms(1050)), Some(ms(800)), rto_max, pmr(1)),
            (false, None)
        );
        // A SACK in the middle clears the counter; the rest is the expiry
        // already counted.
        p.record_success(ms(1060));
        assert_eq!(
            p.record_timeout((0, ms(1300)), Some(ms(900)), rto_max, pmr(1)),
            (false, None)
        );
        assert_eq!((p.error_count, p.t3_expiries), (0, 1));
        // The next expiries: of TSNs sent after the previous one (its own
        // retransmission included).
        assert_eq!(
            p.record_timeout((0, ms(1400)), Some(ms(1000)), rto_max, pmr(1)),
            (true, None)
        );
        assert_eq!(
            p.record_timeout((0, ms(1800)), Some(ms(1400)), rto_max, pmr(1)),
            (true, Some(Transition::BecameInactive(2)))
        );
        assert_eq!(p.t3_expiries, 3);
    }

    #[test]
    fn an_expiry_held_back_past_a_clear_is_not_charged() {
        let pmr = |n| Thresholds {
            path_max_retrans: n,
            pf_retrans: None,
        };
        // bokor-failover, RTO.min = RTO.max = 200 ms: TSNs sent on the path
        // at 348 ms time out at 550 ms (the kernel's error count goes to
        // 2), but the packet that expiry sends carries another path's TSN;
        // its own retransmissions leave at 587 ms, right after a SACK at
        // 587 ms cleared the counter (the kernel's count: 0).
        let a = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let mut p = PathState::new(0, a, a, 0, 1, Timestamp(0), RtoConfig::default());
        let ms = |m: i64| Timestamp(m * 1_000_000);
        let rto_max = Nanos::from_millis(200);
        p.record_success(ms(97));
        assert_eq!(
            p.record_timeout((0, ms(307)), Some(ms(0)), rto_max, pmr(2)),
            (true, None)
        );
        assert_eq!(p.error_count, 1);
        p.record_success(ms(587));
        assert_eq!(
            p.record_timeout((0, ms(587)), Some(ms(348)), rto_max, pmr(2)),
            (true, None)
        );
        assert_eq!(p.error_count, 0, "it timed out before the clear");
        // The next ones count: 797, 1008 and the third, 1217 ms.
        p.record_timeout((0, ms(797)), Some(ms(587)), rto_max, pmr(2));
        p.record_timeout((0, ms(1008)), Some(ms(797)), rto_max, pmr(2));
        assert_eq!(
            p.record_timeout((0, ms(1217)), Some(ms(1008)), rto_max, pmr(2)),
            (true, Some(Transition::BecameInactive(3)))
        );
        assert_eq!(p.t3_expiries, 5);
        // A TSN of an earlier expiry held back until after the last one
        // is not another expiry.
        assert_eq!(
            p.record_timeout((0, ms(1437)), Some(ms(589)), rto_max, pmr(2)),
            (false, None)
        );
        // Without the sender's RTO.Max the held-back expiry counts.
        let mut q = PathState::new(0, a, a, 0, 1, Timestamp(0), RtoConfig::default());
        q.record_success(ms(97));
        q.record_success(ms(587));
        q.record_timeout(
            (0, ms(587)),
            Some(ms(348)),
            Nanos::from_millis(60_000),
            pmr(2),
        );
        assert_eq!(q.error_count, 1);
        // Nor does the rule apply when an acknowledgement after the send
        // may have restarted the timer.
        let mut r = PathState::new(0, a, a, 0, 1, Timestamp(0), RtoConfig::default());
        r.record_success(ms(500));
        r.record_success(ms(587));
        r.record_timeout((0, ms(700)), Some(ms(348)), rto_max, pmr(2));
        assert_eq!(r.error_count, 1);
    }
}
