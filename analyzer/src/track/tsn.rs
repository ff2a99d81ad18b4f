//! Per-direction TSN accounting: new vs retransmitted DATA, acknowledgement
//! by SACK, Karn-valid RTT samples and fast-retransmit miss reports.
//! Memory is bounded by the window of unacknowledged TSNs.

use crate::events::PathId;
use crate::time::{Nanos, Timestamp};
use serde::Serialize;
use std::collections::VecDeque;

/// Largest window of unacknowledged TSNs kept by default; older ones are
/// forgotten (a capture that lacks the reverse direction never
/// acknowledges). See [`crate::track::limits::Limits::tsn_window`].
const MAX_WINDOW: usize = 1 << 20;
/// Iterations allowed for one gap block (a block spans at most 65535 TSNs).
const MAX_GAP_SPAN: u32 = 1 << 16;
/// RFC 9260 §7.2.4: the third miss indication triggers fast retransmit.
const FAST_RETRANSMIT_MISSES: u8 = 3;

/// `a > b` in 32-bit serial number arithmetic (RFC 1982, RFC 9260 §1.6).
pub fn serial_gt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

pub fn serial_le(a: u32, b: u32) -> bool {
    !serial_gt(a, b)
}

#[derive(Debug, Clone, Copy)]
struct TsnRecord {
    /// False for a TSN skipped over (never captured so far).
    seen: bool,
    first_time: Timestamp,
    last_time: Timestamp,
    last_frame: u64,
    last_path: PathId,
    transmissions: u16,
    /// Covered by a gap block (cumulatively acked TSNs leave the window).
    gap_acked: bool,
    miss_reports: u8,
}

impl TsnRecord {
    const UNSEEN: TsnRecord = TsnRecord {
        seen: false,
        first_time: Timestamp(0),
        last_time: Timestamp(0),
        last_frame: 0,
        last_path: 0,
        transmissions: 0,
        gap_acked: false,
        miss_reports: 0,
    };
}

/// How a DATA chunk was classified (docs/metrics.md, "New DATA" and
/// "Retransmission").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataClass {
    New,
    Retransmission {
        previous_frame: Option<u64>,
        /// When the TSN was last sent (on `previous_path`).
        previous_time: Option<Timestamp>,
        previous_path: Option<PathId>,
        already_acked: bool,
        fast: bool,
    },
}

/// Counters for one data direction, reported as they are.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct DirectionCounters {
    pub data_chunks: u64,
    pub new_chunks: u64,
    pub retransmitted_chunks: u64,
    pub retransmitted_after_ack: u64,
    pub fast_retransmissions: u64,
    /// Below the highest TSN but never captured before (capture loss or
    /// reordering): counted among the retransmissions.
    pub first_seen_below_highest: u64,
    pub user_data_bytes: u64,
    pub sacks: u64,
    pub gap_blocks: u64,
    pub dup_tsns_reported: u64,
    pub forward_tsns: u64,
    pub highest_tsn: Option<u32>,
    pub cumulative_tsn_ack: Option<u32>,
}

impl DirectionCounters {
    /// A direction that has carried nothing.
    pub const ZERO: DirectionCounters = DirectionCounters {
        data_chunks: 0,
        new_chunks: 0,
        retransmitted_chunks: 0,
        retransmitted_after_ack: 0,
        fast_retransmissions: 0,
        first_seen_below_highest: 0,
        user_data_bytes: 0,
        sacks: 0,
        gap_blocks: 0,
        dup_tsns_reported: 0,
        forward_tsns: 0,
        highest_tsn: None,
        cumulative_tsn_ack: None,
    };
}

/// A TSN newly acknowledged by a SACK, with its effective (last)
/// transmission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckedTsn {
    pub tsn: u32,
    pub last_frame: u64,
    pub last_time: Timestamp,
    pub path: PathId,
}

/// A Karn-valid RTT sample: the DATA was sent once and acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RttSample {
    pub path: PathId,
    pub tsn: u32,
    pub rtt: Nanos,
}

/// Result buffers of [`TsnLedger::on_sack`], see [`TsnLedger::swap_buffers`].
#[derive(Debug, Default)]
pub(crate) struct AckBuffers {
    paths: Vec<PathId>,
    acked: Vec<AckedTsn>,
}

#[derive(Debug, Default)]
pub struct TsnLedger {
    pub counters: DirectionCounters,
    /// TSN of `window[0]`.
    base: u32,
    window: VecDeque<TsnRecord>,
    /// Paths whose DATA the last SACK newly acknowledged (reused buffer).
    newly_acked_paths: Vec<PathId>,
    /// TSNs the last SACK newly acknowledged (reused buffer).
    newly_acked: Vec<AckedTsn>,
    /// The window's cap (0: [`MAX_WINDOW`]).
    max_window: usize,
    /// TSNs dropped from the window by the cap, not yet reported.
    forgotten: u64,
    /// Miss indications start here: every TSN below is past counting
    /// until it is sent again.
    miss_scan_from: Option<u32>,
    /// While a changeover of the sender's primary is active: the next TSN
    /// at the change (see [`TsnLedger::start_changeover`]).
    changeover: Option<u32>,
}

impl TsnLedger {
    /// Keeps at most `max` TSNs in the window (at least one).
    pub fn limit_window(&mut self, max: usize) {
        self.max_window = max.max(1);
    }

    fn window_cap(&self) -> usize {
        if self.max_window == 0 {
            MAX_WINDOW
        } else {
            self.max_window
        }
    }

    /// TSNs forgotten because of the window's cap since the last call.
    pub fn take_forgotten(&mut self) -> u64 {
        std::mem::take(&mut self.forgotten)
    }

    /// The sender's primary destination changed (a SET-PRIMARY it was
    /// asked for took effect). Linux then runs the split fast retransmit
    /// changeover-aware algorithm (SFR-CACC, net/sctp/outqueue.c, after
    /// Iyengar et al.; RFC 9260 has none): until the cumulative ack passes
    /// the next TSN at the change, a TSN sent before it gets no miss
    /// indication from a SACK that newly acknowledges nothing sent where
    /// it was last sent. DATA left on a cut old path is therefore
    /// retransmitted by its T3 timer, not fast (koh-kim-2: the kernel
    /// counts one T3 expiry and no fast retransmission).
    pub(crate) fn start_changeover(&mut self) {
        if let Some(highest) = self.counters.highest_tsn {
            self.changeover = Some(highest.wrapping_add(1));
        }
    }

    /// Transmissions of `tsn` seen so far, while it is in the window.
    pub(crate) fn transmissions(&self, tsn: u32) -> Option<u32> {
        self.index(tsn)
            .map(|i| u32::from(self.window[i].transmissions))
    }

    pub fn on_data(
        &mut self,
        tsn: u32,
        frame: u64,
        time: Timestamp,
        path: PathId,
        user_bytes: usize,
    ) -> DataClass {
        let c = &mut self.counters;
        c.data_chunks += 1;
        c.user_data_bytes += user_bytes as u64;
        let fresh = TsnRecord {
            seen: true,
            first_time: time,
            last_time: time,
            last_frame: frame,
            last_path: path,
            transmissions: 1,
            gap_acked: false,
            miss_reports: 0,
        };
        match c.highest_tsn {
            None => {
                c.highest_tsn = Some(tsn);
                c.new_chunks += 1;
                if self.window.is_empty() {
                    self.base = tsn;
                }
                self.push(tsn, fresh);
                DataClass::New
            }
            Some(highest) if serial_gt(tsn, highest) => {
                c.highest_tsn = Some(tsn);
                c.new_chunks += 1;
                self.push(tsn, fresh);
                DataClass::New
            }
            Some(_) => {
                c.retransmitted_chunks += 1;
                let cum_acked = c.cumulative_tsn_ack.is_some_and(|cum| serial_le(tsn, cum));
                let class = match self.index(tsn) {
                    Some(i) => {
                        let rec = &mut self.window[i];
                        let class = if rec.seen {
                            DataClass::Retransmission {
                                previous_frame: Some(rec.last_frame),
                                previous_time: Some(rec.last_time),
                                previous_path: Some(rec.last_path),
                                already_acked: cum_acked || rec.gap_acked,
                                fast: rec.miss_reports >= FAST_RETRANSMIT_MISSES,
                            }
                        } else {
                            self.counters.first_seen_below_highest += 1;
                            rec.first_time = time;
                            DataClass::Retransmission {
                                previous_frame: None,
                                previous_time: None,
                                previous_path: None,
                                already_acked: cum_acked || rec.gap_acked,
                                fast: false,
                            }
                        };
                        rec.seen = true;
                        rec.transmissions = rec.transmissions.saturating_add(1);
                        rec.last_frame = frame;
                        rec.last_time = time;
                        rec.last_path = path;
                        rec.miss_reports = 0;
                        // Its miss indications count again from zero: the
                        // scan for them must not start past it.
                        if self.miss_scan_from.is_some_and(|from| serial_gt(from, tsn)) {
                            self.miss_scan_from = Some(tsn);
                        }
                        class
                    }
                    None => DataClass::Retransmission {
                        previous_frame: None,
                        previous_time: None,
                        previous_path: None,
                        already_acked: cum_acked,
                        fast: false,
                    },
                };
                if let DataClass::Retransmission {
                    already_acked,
                    fast,
                    ..
                } = class
                {
                    if already_acked {
                        self.counters.retransmitted_after_ack += 1;
                    }
                    if fast {
                        self.counters.fast_retransmissions += 1;
                    }
                }
                class
            }
        }
    }

    /// Appends `tsn` (beyond the window's end), filling skipped TSNs.
    fn push(&mut self, tsn: u32, record: TsnRecord) {
        let end = self.base.wrapping_add(self.window.len() as u32);
        if serial_gt(end, tsn) {
            // Window was reset ahead of this TSN (e.g. by a SACK for data
            // not captured): nothing to record.
            return;
        }
        let skipped = tsn.wrapping_sub(end) as usize;
        let cap = self.window_cap();
        if skipped >= cap {
            self.forgotten += self.window.iter().filter(|r| r.seen).count() as u64;
            self.window.clear();
            self.base = tsn;
        } else if skipped > 0 {
            // (Guarded: extending by nothing is a call, and every DATA
            // comes here.)
            self.window
                .extend(std::iter::repeat_n(TsnRecord::UNSEEN, skipped));
        }
        crate::compact::push_back(&mut self.window, record);
        while self.window.len() > cap {
            if self.window.pop_front().is_some_and(|r| r.seen) {
                self.forgotten += 1;
            }
            self.base = self.base.wrapping_add(1);
        }
    }

    fn index(&self, tsn: u32) -> Option<usize> {
        let offset = tsn.wrapping_sub(self.base) as usize;
        (offset < self.window.len()).then_some(offset)
    }

    /// Applies a SACK (or the cumulative ack of a SHUTDOWN). Returns a
    /// Karn-valid RTT sample for the highest TSN this SACK newly
    /// acknowledged cumulatively, if that TSN was sent exactly once.
    pub fn on_sack(
        &mut self,
        cumulative: u32,
        gap_blocks: impl Iterator<Item = (u16, u16)>,
        time: Timestamp,
    ) -> Option<RttSample> {
        self.newly_acked_paths.clear();
        self.newly_acked.clear();
        let mut sample = None;
        let advances = self
            .counters
            .cumulative_tsn_ack
            .is_none_or(|old| serial_gt(cumulative, old));
        if advances {
            self.counters.cumulative_tsn_ack = Some(cumulative);
            while !self.window.is_empty() && serial_le(self.base, cumulative) {
                if let Some(rec) = self.window.pop_front() {
                    if rec.seen && !rec.gap_acked {
                        self.newly_acked.push(AckedTsn {
                            tsn: self.base,
                            last_frame: rec.last_frame,
                            last_time: rec.last_time,
                            path: rec.last_path,
                        });
                        if rec.transmissions == 1 {
                            sample = Some(RttSample {
                                path: rec.last_path,
                                tsn: self.base,
                                rtt: time.since(rec.first_time),
                            });
                        }
                        if !self.newly_acked_paths.contains(&rec.last_path) {
                            self.newly_acked_paths.push(rec.last_path);
                        }
                    }
                }
                self.base = self.base.wrapping_add(1);
            }
            if self.window.is_empty() && serial_gt(cumulative.wrapping_add(1), self.base) {
                self.base = cumulative.wrapping_add(1);
            }
        }
        let cum = self.counters.cumulative_tsn_ack.unwrap_or(cumulative);
        let mut highest_gap_end: Option<u32> = None;
        for (start, end) in gap_blocks {
            self.counters.gap_blocks += 1;
            if end < start {
                continue;
            }
            // Only the part of the block inside the window can change
            // anything: a block (or 65 535 of them) claiming far more costs
            // no more than the window.
            let span = (u32::from(end) - u32::from(start) + 1).min(MAX_GAP_SPAN);
            let first = cum.wrapping_add(u32::from(start));
            let from = (first.wrapping_sub(self.base) as i32).max(0) as usize;
            let to = ((first.wrapping_add(span - 1).wrapping_sub(self.base) as i32)
                .saturating_add(1)
                .max(0) as usize)
                .min(self.window.len());
            for i in from..to {
                let tsn = self.base.wrapping_add(i as u32);
                let rec = &mut self.window[i];
                if rec.seen && !rec.gap_acked {
                    rec.gap_acked = true;
                    self.newly_acked.push(AckedTsn {
                        tsn,
                        last_frame: rec.last_frame,
                        last_time: rec.last_time,
                        path: rec.last_path,
                    });
                    if !self.newly_acked_paths.contains(&rec.last_path) {
                        self.newly_acked_paths.push(rec.last_path);
                    }
                }
            }
            let block_end = cum.wrapping_add(u32::from(end));
            if highest_gap_end.is_none_or(|h| serial_gt(block_end, h)) {
                highest_gap_end = Some(block_end);
            }
        }
        // RFC 9260 §7.2.4: every TSN below the highest gap-acked one that is
        // still missing gets a miss indication. The scan starts after the
        // prefix of records past counting (gap acked, never seen, or at the
        // fast-retransmit threshold), so repeated SACKs over a large window
        // cost what changes, not the window each time; a record sent again
        // moves the start back to it (see `on_data`).
        if let Some(next) = self.changeover {
            if self
                .counters
                .cumulative_tsn_ack
                .is_some_and(|cum| serial_le(next, cum))
            {
                self.changeover = None;
            }
        }
        if let Some(limit) = highest_gap_end {
            let start = self
                .miss_scan_from
                .map_or(0, |t| (t.wrapping_sub(self.base) as i32).max(0) as usize);
            let mut prefix_done = true;
            for i in start..self.window.len() {
                let tsn = self.base.wrapping_add(i as u32);
                if serial_gt(tsn, limit) {
                    break;
                }
                let rec = &mut self.window[i];
                let cacc_skip = self.changeover.is_some_and(|next| serial_gt(next, tsn))
                    && !self.newly_acked_paths.contains(&rec.last_path);
                if rec.seen
                    && !rec.gap_acked
                    && rec.miss_reports < FAST_RETRANSMIT_MISSES
                    && !cacc_skip
                {
                    rec.miss_reports += 1;
                }
                let done = !rec.seen || rec.gap_acked || rec.miss_reports >= FAST_RETRANSMIT_MISSES;
                if prefix_done && done {
                    self.miss_scan_from = Some(tsn.wrapping_add(1));
                } else {
                    prefix_done = false;
                }
            }
        }
        sample
    }

    /// Swaps this ledger's result buffers (newly acknowledged TSNs and
    /// paths) with `buffers`: a tracker lends one pair to the ledger of the
    /// SACK at hand and takes it back, instead of every direction keeping
    /// its own.
    pub(crate) fn swap_buffers(&mut self, buffers: &mut AckBuffers) {
        std::mem::swap(&mut self.newly_acked_paths, &mut buffers.paths);
        std::mem::swap(&mut self.newly_acked, &mut buffers.acked);
    }

    /// Paths with DATA newly acknowledged by the last [`Self::on_sack`].
    pub fn newly_acked_paths(&self) -> &[PathId] {
        &self.newly_acked_paths
    }

    /// TSNs newly acknowledged by the last [`Self::on_sack`], in TSN order
    /// for the cumulative part, then gap blocks.
    pub fn newly_acked(&self) -> &[AckedTsn] {
        &self.newly_acked
    }

    pub fn on_sack_counters(&mut self, dup_tsns: u64) {
        self.counters.sacks += 1;
        self.counters.dup_tsns_reported += dup_tsns;
    }

    /// RFC 3758: the sender abandoned everything up to `new_cumulative`.
    pub fn on_forward_tsn(&mut self) {
        self.counters.forward_tsns += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: i64) -> Timestamp {
        Timestamp(ms * 1_000_000)
    }

    #[test]
    fn serial_arithmetic_wraps() {
        assert!(serial_gt(1, u32::MAX));
        assert!(!serial_gt(u32::MAX, 1));
        assert!(serial_le(5, 5));
    }

    #[test]
    fn new_retransmitted_and_karn() {
        let mut l = TsnLedger::default();
        assert_eq!(l.on_data(100, 1, t(0), 0, 10), DataClass::New);
        assert_eq!(l.on_data(101, 2, t(1), 0, 10), DataClass::New);
        assert_eq!(
            l.on_data(100, 3, t(300), 1, 10),
            DataClass::Retransmission {
                previous_frame: Some(1),
                previous_time: Some(t(0)),
                previous_path: Some(0),
                already_acked: false,
                fast: false
            }
        );
        // SACK cum 101: 100 was sent twice (no sample), 101 once.
        let s = l.on_sack(101, std::iter::empty(), t(51));
        assert_eq!(
            s,
            Some(RttSample {
                path: 0,
                tsn: 101,
                rtt: Nanos::from_millis(50)
            })
        );
        assert_eq!(l.newly_acked_paths(), &[1, 0]);
        // A copy of an acknowledged TSN.
        assert!(matches!(
            l.on_data(101, 4, t(60), 0, 10),
            DataClass::Retransmission {
                already_acked: true,
                ..
            }
        ));
        assert_eq!(l.counters.new_chunks, 2);
        assert_eq!(l.counters.retransmitted_chunks, 2);
        assert_eq!(l.counters.retransmitted_after_ack, 1);
    }

    #[test]
    fn gap_blocks_and_fast_retransmit() {
        let mut l = TsnLedger::default();
        for tsn in 1..=6 {
            l.on_data(tsn, u64::from(tsn), t(i64::from(tsn)), 0, 1);
        }
        // TSN 2 lost: three SACKs with cum 1 and gap 2-2 .. 2-4 (TSNs 3..5).
        for end in 2..=4u16 {
            l.on_sack(1, [(2u16, end)].into_iter(), t(10));
        }
        assert!(matches!(
            l.on_data(2, 7, t(11), 0, 1),
            DataClass::Retransmission {
                fast: true,
                already_acked: false,
                ..
            }
        ));
        // Gap-acked TSN 3 sent again counts as already acknowledged.
        assert!(matches!(
            l.on_data(3, 8, t(12), 0, 1),
            DataClass::Retransmission {
                already_acked: true,
                ..
            }
        ));
        assert_eq!(l.counters.gap_blocks, 3);
    }

    #[test]
    fn miss_indications_count_again_after_a_tsn_is_sent_again() {
        let mut l = TsnLedger::default();
        for tsn in 1..=8 {
            l.on_data(tsn, u64::from(tsn), t(i64::from(tsn)), 0, 1);
        }
        for end in 2..=4u16 {
            l.on_sack(1, [(2u16, end)].into_iter(), t(10));
        }
        assert!(matches!(
            l.on_data(2, 9, t(11), 0, 1),
            DataClass::Retransmission { fast: true, .. }
        ));
        // The copy is lost too: three more SACKs report it missing, and the
        // third copy is a fast retransmission again (the scan for miss
        // indications restarts at the TSN sent again).
        assert!(matches!(
            l.on_data(2, 10, t(12), 0, 1),
            DataClass::Retransmission { fast: false, .. }
        ));
        for end in 5..=7u16 {
            l.on_sack(1, [(2u16, end)].into_iter(), t(20));
        }
        assert!(matches!(
            l.on_data(2, 11, t(21), 0, 1),
            DataClass::Retransmission { fast: true, .. }
        ));
    }

    #[test]
    fn skipped_tsn_seen_later() {
        let mut l = TsnLedger::default();
        l.on_data(10, 1, t(0), 0, 1);
        l.on_data(12, 2, t(1), 0, 1);
        assert!(matches!(
            l.on_data(11, 3, t(2), 0, 1),
            DataClass::Retransmission {
                previous_frame: None,
                ..
            }
        ));
        assert_eq!(l.counters.first_seen_below_highest, 1);
    }
}
