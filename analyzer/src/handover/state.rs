//! Per-association and per-direction bookkeeping (paths, segments, TSN
//! history, counters, exchanges) and how the tracker's observations update it.

use super::mark::Mark;
use super::model::{AsconfExchange, Expiry, Handover};
use super::tsn_history::{TsnHistory, TsnInfo};
use super::HandoverEngine;
use crate::events::{AssocId, EndpointId, Event, Observation, PathId};
use crate::time::Timestamp;
use crate::track::path::PathStatus;
use crate::wire::serial::serial_lt;
use std::collections::{BTreeMap, VecDeque};
use std::net::IpAddr;
use std::ops::{Index, IndexMut};

/// TSNs whose transmission/acknowledgement times are remembered per
/// direction for the total handover latency, at most: only those a switch
/// may still ask about are kept (`Direction::lowest_needed`), so the
/// history is usually as short as the data in flight; this bounds it
/// when acknowledgements are not captured.
const TSN_HISTORY: usize = 1 << 16;

/// The newest TSNs of a direction always kept (4 096 to 8 192 of them:
/// the history is pruned each time it doubles), acknowledged or not: a T3
/// expiry looks up the original transmission of the TSN it retransmits,
/// which the capture may have seen acknowledged already (the SACK was lost
/// after the capture point).
const TSN_RECENT: u32 = 4096;

#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Counters {
    pub(super) retransmissions: u64,
    pub(super) after_ack: u64,
    pub(super) dup_tsns: u64,
    pub(super) lost: u64,
}

impl Counters {
    const ZERO: Counters = Counters {
        retransmissions: 0,
        after_ack: 0,
        dup_tsns: 0,
        lost: 0,
    };
}

#[derive(Debug, Default, Clone)]
pub(super) struct PathData {
    pub(super) last_data: Option<Mark>,
    pub(super) last_new: Option<Mark>,
    /// First DATA on this path since the current segment began.
    pub(super) first_in_segment: Option<Mark>,
    /// DATA chunks on this path since the current segment began.
    pub(super) in_segment: u32,
}

#[derive(Debug, Default)]
pub(super) struct Direction {
    pub(super) paths: Vec<PathData>,
    pub(super) current: Option<PathId>,
    pub(super) abandoned: Vec<PathId>,
    /// Paths this direction left by a failover.
    pub(super) failed: Vec<PathId>,
    pub(super) segment_first_tsn: Option<u32>,
    /// Frame where the current segment began: the direction's first new
    /// DATA, then each switch. A handover's ASCONF exchanges are those of
    /// its own segment.
    pub(super) segment_start_frame: u64,
    pub(super) segment_lowest_retransmitted: Option<u32>,
    pub(super) counters: Counters,
    /// Counters as they were at the last new DATA on the current path.
    pub(super) at_last_new: Counters,
    tsns: TsnHistory,
    /// No TSN of the history below this one is still waiting for its
    /// acknowledgement.
    first_unacked: u32,
    /// TSNs recorded since the history was last pruned, and how many must
    /// be before it is pruned again (none while pruning frees room).
    since_prune: u32,
    prune_wait: u32,
    /// T3 expiries by the path charged, with the original transmission
    /// of the TSN that timed out.
    pub(super) expiries: VecDeque<(PathId, Expiry, Option<Mark>)>,
    /// Switches still waiting for their total latency, in slot order.
    pub(super) pending: Vec<Pending>,
    /// Switches whose handover window is still open, in slot order.
    pub(super) windows: Vec<OpenWindow>,
    /// Switches (by slot) that settled since the last part — window closed
    /// and total latency resolved — and so are what the next part hands
    /// on: a part then costs what settled, not every switch held behind
    /// one that never settles (a capture without its SACKs).
    pub(super) settled: Vec<usize>,
}

/// A switch still waiting for its total handover latency (`latency.rs`
/// settles it).
#[derive(Debug)]
pub(super) struct Pending {
    pub(super) index: usize,
    pub(super) switch_tsn: u32,
    pub(super) segment_first_tsn: u32,
    pub(super) lowest_retransmitted: Option<u32>,
}

/// A switch whose window is still open (`window.rs` opens and closes it).
#[derive(Debug)]
pub(super) struct OpenWindow {
    /// The handover's slot, counted from the association's first switch.
    pub(super) index: usize,
    /// The direction's counters where the window began (its last new DATA
    /// on the old path).
    pub(super) start: Counters,
    pub(super) until_tsn: u32,
}

impl Direction {
    /// A direction that has carried nothing (what a missing one reads as).
    const EMPTY: Direction = Direction {
        paths: Vec::new(),
        current: None,
        abandoned: Vec::new(),
        failed: Vec::new(),
        segment_first_tsn: None,
        segment_start_frame: 0,
        segment_lowest_retransmitted: None,
        counters: Counters::ZERO,
        at_last_new: Counters::ZERO,
        tsns: TsnHistory::EMPTY,
        first_unacked: 0,
        since_prune: 0,
        prune_wait: 0,
        expiries: VecDeque::new(),
        pending: Vec::new(),
        windows: Vec::new(),
        settled: Vec::new(),
    };

    /// The switch at slot `index` left `pending` or `windows`: it settles
    /// (goes to `settled`) once it is in neither — its total latency
    /// resolved and its window closed, in whichever order.
    pub(super) fn settle_if_done(&mut self, index: usize) {
        let waiting = self
            .pending
            .binary_search_by_key(&index, |p| p.index)
            .is_ok()
            || self
                .windows
                .binary_search_by_key(&index, |w| w.index)
                .is_ok();
        if !waiting {
            self.settled.push(index);
        }
    }

    pub(super) fn path(&mut self, p: PathId) -> &mut PathData {
        let i = usize::from(p);
        if self.paths.len() <= i {
            crate::compact::reserve_for(&mut self.paths, i + 1);
            self.paths.resize(i + 1, PathData::default());
        }
        &mut self.paths[i]
    }

    pub(super) fn tsn(&self, tsn: u32) -> Option<TsnInfo> {
        self.tsns.get(tsn)
    }

    /// The lowest TSN a switch may still ask about: total handover
    /// latency needs, for each switch still waiting and for the next one,
    /// the TSN of its sequence gap (L+1: its lowest retransmitted TSN, or
    /// its switch TSN; a later retransmission can lower it to any TSN not
    /// yet acknowledged) and the one before it (L); a T3 expiry, the TSN it
    /// retransmits (not yet acknowledged, or among the `TSN_RECENT`).
    fn lowest_needed(&mut self) -> u32 {
        let end = self.tsns.end();
        let mut cursor = self.first_unacked;
        if serial_lt(cursor, self.tsns.base()) {
            cursor = self.tsns.base();
        }
        // A TSN not in the history (never seen as new DATA) answers the
        // same whether it is forgotten or not; an acknowledged one can no
        // longer become a gap.
        while serial_lt(cursor, end) && !self.tsns.waits_for_ack(cursor) {
            cursor = cursor.wrapping_add(1);
        }
        self.first_unacked = cursor;
        let mut lowest = cursor;
        let gaps = self
            .pending
            .iter()
            .flat_map(|p| [Some(p.switch_tsn), p.lowest_retransmitted]);
        let recent = end.wrapping_sub(TSN_RECENT);
        for gap in gaps
            .chain([self.segment_lowest_retransmitted, Some(recent)])
            .flatten()
        {
            if serial_lt(gap, lowest) {
                lowest = gap;
            }
        }
        lowest.wrapping_sub(1)
    }

    pub(super) fn record_new(&mut self, tsn: u32, first: Mark) {
        if self.tsns.is_empty() {
            self.tsns.reset(tsn);
            self.first_unacked = tsn;
        } else if self.tsns.len() >= 2 * TSN_RECENT as usize && self.since_prune >= self.prune_wait
        {
            // Forget what no switch can ask about any more, once the
            // history holds twice the recent TSNs (the scan's cost is
            // shared by the TSNs recorded since). When that frees little
            // (a switch waits for ever: a capture without the SACKs), wait
            // for `TSN_RECENT` more before trying again.
            let held = self.tsns.len();
            let lowest = self.lowest_needed();
            while serial_lt(self.tsns.base(), lowest) && !self.tsns.is_empty() {
                self.tsns.pop_front();
            }
            let freed = held - self.tsns.len();
            self.prune_wait = if freed >= TSN_RECENT as usize / 2 {
                0
            } else {
                TSN_RECENT
            };
            self.since_prune = 0;
            if self.tsns.is_empty() {
                self.tsns.reset(tsn);
            }
        }
        self.since_prune = self.since_prune.saturating_add(1);
        let skip = tsn.wrapping_sub(self.tsns.end()) as usize;
        if skip >= TSN_HISTORY {
            self.tsns.reset(tsn);
            self.first_unacked = tsn;
        } else {
            // Drop what falls out of the window before adding, so that the
            // deque never holds (nor allocates room for) more than
            // TSN_HISTORY entries.
            let keep = TSN_HISTORY - 1 - skip;
            while self.tsns.len() > keep {
                self.tsns.pop_front();
            }
            if skip > 0 {
                // (Guarded: extending by nothing is a call, and every new
                // DATA comes here.)
                self.tsns.skip(skip);
            }
        }
        self.tsns.push(first);
    }
}

static EMPTY_DIRECTION: Direction = Direction::EMPTY;

/// The two data directions of an association (by sending endpoint), each
/// allocated when first written: many associations carry DATA one way
/// only, or none. Reading one never written gives an empty direction.
#[derive(Debug, Default)]
pub(super) struct Directions([Option<Box<Direction>>; 2]);

impl Directions {
    /// The earliest frame where a direction carrying DATA began its
    /// current segment: nothing before it can belong to a later handover.
    pub(super) fn segments_begin(&self) -> Option<u64> {
        self.0
            .iter()
            .flatten()
            .filter(|d| d.current.is_some())
            .map(|d| d.segment_start_frame)
            .min()
    }
}

impl Index<EndpointId> for Directions {
    type Output = Direction;
    fn index(&self, sender: EndpointId) -> &Direction {
        self.0[sender].as_deref().unwrap_or(&EMPTY_DIRECTION)
    }
}

impl IndexMut<EndpointId> for Directions {
    #[inline]
    fn index_mut(&mut self, sender: EndpointId) -> &mut Direction {
        self.0[sender].get_or_insert_with(Box::default)
    }
}

#[derive(Debug, Clone)]
pub(super) struct HeartbeatRecord {
    pub(super) path: PathId,
    pub(super) frame: u64,
    pub(super) time: Timestamp,
    pub(super) ack: Option<Mark>,
    /// The latest time of this HEARTBEAT and every one recorded before it
    /// (capture time can go back): non-decreasing along the list, so a
    /// binary search finds where HEARTBEATs at or after a time can begin.
    /// Pruning keeps it an upper bound, which is all that search needs.
    pub(super) latest_time: Timestamp,
}

/// One endpoint's packets from one source address.
#[derive(Debug, Clone)]
struct Source {
    endpoint: EndpointId,
    address: IpAddr,
    /// Its first packet from this address.
    first: Mark,
    /// The last packet the endpoint sent from any other address before it.
    before: Option<Mark>,
    /// Its last packet from this address so far.
    last: Mark,
}

/// The source addresses of an association's packets: a short list (an
/// endpoint has one or a few addresses), scanned rather than hashed.
#[derive(Debug, Default)]
pub(super) struct Sources(Vec<Source>);

impl Sources {
    fn packet(&mut self, endpoint: EndpointId, address: IpAddr, mark: Mark) {
        if let Some(s) = self
            .0
            .iter_mut()
            .find(|s| s.endpoint == endpoint && s.address == address)
        {
            s.last = mark;
            return;
        }
        let before = self
            .0
            .iter()
            .filter(|s| s.endpoint == endpoint)
            .map(|s| s.last)
            .max_by_key(|m| m.frame);
        crate::compact::push(
            &mut self.0,
            Source {
                endpoint,
                address,
                first: mark,
                before,
                last: mark,
            },
        );
    }

    /// The first packet of `endpoint` from `address`, and the last packet
    /// it sent from any other address before that.
    pub(super) fn debut(
        &self,
        endpoint: EndpointId,
        address: IpAddr,
    ) -> Option<(Mark, Option<Mark>)> {
        self.0
            .iter()
            .find(|s| s.endpoint == endpoint && s.address == address)
            .map(|s| (s.first, s.before))
    }
}

#[derive(Debug, Default)]
pub(super) struct Association {
    pub(super) paths: Vec<(IpAddr, IpAddr)>,
    pub(super) directions: Directions,
    pub(super) asconfs: Vec<AsconfExchange>,
    pub(super) heartbeats: Vec<HeartbeatRecord>,
    /// The frame of the latest answered HEARTBEAT on each path, by path
    /// id: a switch's path confirmation looks it up rather than walk back
    /// over every HEARTBEAT kept behind a switch that never settles
    /// (pruning always keeps it).
    pub(super) latest_answered_heartbeat: Vec<Option<u64>>,
    /// Every (endpoint, source address) its packets came from.
    pub(super) sources: Sources,
    /// What the tracker told of its paths' health, allocated by the first
    /// such event (most associations never have one).
    pub(super) health: Option<Box<PathHealth>>,
    /// The endpoint whose address set changes by ASCONF.
    pub(super) mobile: Option<EndpointId>,
    /// This association's events, in emission (frame) order.
    pub(super) events: Vec<Event>,
    /// Its data path switches from the first not yet handed on, in switch
    /// order; pending total latencies refer to them by index counted from
    /// the association's first switch (`handed_on` slots have left). A
    /// slot is empty once its handover was handed on while an earlier one
    /// still waits for its total latency (which may never come: a capture
    /// without the SACKs).
    pub(super) handovers: Vec<Option<Box<Handover>>>,
    /// Handovers already handed on in parts ([`HandoverEngine::take_part`]).
    pub(super) handed_on: usize,
    /// The held switches with a failover record, by index (as pending
    /// total latencies count them): the lookup of a heartbeat-driven
    /// path-state change walks these, not every slot kept behind a switch
    /// that never settles. Each maps to its switch time and the latest
    /// switch time of it and every older entry inserted before it (an
    /// upper bound once entries leave: the walk stops below the window).
    pub(super) held_failovers: BTreeMap<usize, (Timestamp, Timestamp)>,
    /// Events held back at the last part (their answers could still
    /// come): the next part is due `part_events` events later.
    pub(super) held_back: usize,
}

/// The tracker's word on an association's paths: their inferred states,
/// which failed at some time, and the error counters cleared and expiries
/// found spurious (for the failover records; pruned with the exchanges).
#[derive(Debug, Default)]
pub(super) struct PathHealth {
    /// Paths inferred potentially failed or inactive at some time (RFC
    /// 7829, RFC 9260 §8.2).
    failed: Vec<PathId>,
    /// The inferred state of each path now, by path id.
    status: Vec<PathStatus>,
    /// (path, when, by what).
    pub(super) clears: Vec<(PathId, Mark, &'static str)>,
    /// (path, the expiry's first retransmission's frame, when recognised).
    pub(super) spurious: Vec<(PathId, u64, Mark)>,
}

impl Association {
    /// Records a HEARTBEAT, in frame order.
    pub(super) fn heartbeat(&mut self, path: PathId, at: Mark) {
        let latest_time = self
            .heartbeats
            .last()
            .map_or(at.time, |h| h.latest_time.max(at.time));
        self.heartbeats.push(HeartbeatRecord {
            path,
            frame: at.frame,
            time: at.time,
            ack: None,
            latest_time,
        });
    }

    /// Pairs an answer on `path` with the HEARTBEAT of frame `request`.
    pub(super) fn heartbeat_answered(&mut self, path: PathId, request: u64, ack: Mark) {
        // In frame order: found by a binary search, however old.
        let from = self.heartbeats.partition_point(|h| h.frame < request);
        let to = self.heartbeats.partition_point(|h| h.frame <= request);
        let Some(h) = self.heartbeats[from..to]
            .iter_mut()
            .rev()
            .find(|h| h.path == path)
        else {
            return;
        };
        h.ack = Some(ack);
        let slot = usize::from(path);
        if self.latest_answered_heartbeat.len() <= slot {
            self.latest_answered_heartbeat.resize(slot + 1, None);
        }
        let latest = &mut self.latest_answered_heartbeat[slot];
        *latest = (*latest).max(Some(request));
    }

    fn health_mut(&mut self) -> &mut PathHealth {
        self.health.get_or_insert_with(Box::default)
    }

    /// A path's inferred state changed; a path ever potentially failed or
    /// inactive has failed in this association.
    pub(super) fn set_status(&mut self, path: PathId, status: PathStatus) {
        let h = self.health_mut();
        let i = usize::from(path);
        if h.status.len() <= i {
            crate::compact::reserve_for(&mut h.status, i + 1);
            h.status.resize(i + 1, PathStatus::Active);
        }
        h.status[i] = status;
        if status != PathStatus::Active && !h.failed.contains(&path) {
            crate::compact::push(&mut h.failed, path);
        }
    }

    pub(super) fn status(&self, path: PathId) -> PathStatus {
        self.health
            .as_ref()
            .and_then(|h| h.status.get(usize::from(path)).copied())
            .unwrap_or_default()
    }

    /// The path was inferred potentially failed or inactive at some time.
    pub(super) fn has_failed(&self, path: PathId) -> bool {
        self.health
            .as_ref()
            .is_some_and(|h| h.failed.contains(&path))
    }

    pub(super) fn note_clear(&mut self, path: PathId, mark: Mark, by: &'static str) {
        crate::compact::push(&mut self.health_mut().clears, (path, mark, by));
    }

    pub(super) fn note_spurious(&mut self, path: PathId, expiry_frame: u64, mark: Mark) {
        crate::compact::push(&mut self.health_mut().spurious, (path, expiry_frame, mark));
    }

    /// Forgets the clears and spurious expiries before `begin` (where every
    /// direction's current segment began).
    pub(super) fn prune_health(&mut self, begin: u64) {
        // Both lists are in frame order (recorded as their events come):
        // only their front leaves, so a switch behind one that never
        // settles does not walk every clear kept after it.
        if let Some(h) = self.health.as_mut() {
            let stale = h.clears.partition_point(|(_, m, _)| m.frame < begin);
            if stale > 0 {
                h.clears.drain(..stale);
            }
            let stale = h.spurious.partition_point(|(_, _, m)| m.frame < begin);
            if stale > 0 {
                h.spurious.drain(..stale);
            }
        }
    }
}

impl HandoverEngine {
    #[inline]
    pub(super) fn assoc(&mut self, id: AssocId) -> &mut Association {
        self.associations.get_or_default(id)
    }

    pub(super) fn on_observation(&mut self, o: &Observation) {
        match *o {
            Observation::Packet {
                frame,
                time,
                association,
                sender,
                src,
                ..
            } => {
                let mark = Mark { frame, time };
                self.assoc(association).sources.packet(sender, src, mark);
            }
            Observation::Data {
                frame,
                time,
                association,
                sender,
                path,
                tsn,
                new,
                already_acked,
                previous_path,
                timeout_of,
                new_expiry,
                error_count,
            } => {
                let mark = Mark { frame, time };
                let d = &mut self.assoc(association).directions[sender];
                if timeout_of.is_none() {
                    d.note_timer_restart(path, mark);
                }
                let p = d.path(path);
                p.last_data = Some(mark);
                p.first_in_segment.get_or_insert(mark);
                p.in_segment = p.in_segment.saturating_add(1);
                if new {
                    p.last_new = Some(mark);
                    if d.current == Some(path) || d.current.is_none() {
                        d.at_last_new = d.counters;
                    }
                    d.segment_first_tsn.get_or_insert(tsn);
                    d.record_new(tsn, mark);
                } else {
                    d.counters.retransmissions += 1;
                    if already_acked {
                        d.counters.after_ack += 1;
                    }
                    let lost =
                        !already_acked && previous_path.is_some() && previous_path != Some(path);
                    if lost {
                        d.counters.lost += 1;
                    }
                    d.note_retransmission(tsn, already_acked);
                    if let Some(failed) = timeout_of {
                        let errors = error_count.unwrap_or_default();
                        self.record_expiry(
                            association,
                            sender,
                            failed,
                            (frame, time, tsn),
                            new_expiry,
                            errors,
                        );
                        // A retransmission sent on the failed path itself
                        // (Linux alternates its retransmission path) starts
                        // its T3 timer again: the restart of this expiry.
                        self.assoc(association).directions[sender].note_timer_restart(path, mark);
                    }
                }
            }
            Observation::Acked {
                association,
                data_sender,
                tsn,
                effective_frame,
                effective_time,
                ..
            } => {
                let d = &mut self.assoc(association).directions[data_sender];
                d.tsns.acknowledge(
                    tsn,
                    Mark {
                        frame: effective_frame,
                        time: effective_time,
                    },
                );
                self.resolve_pending(association, data_sender);
            }
            Observation::Sack {
                frame,
                time,
                association,
                data_sender,
                cumulative_tsn,
                dup_tsns,
            } => {
                let Association {
                    directions,
                    handovers,
                    handed_on,
                    ..
                } = self.assoc(association);
                let d = &mut directions[data_sender];
                d.counters.dup_tsns += u64::from(dup_tsns);
                d.cumulative_ack(handovers, *handed_on, cumulative_tsn, Mark { frame, time });
            }
        }
    }
}
