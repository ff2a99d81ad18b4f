//! A direction's recent TSNs: when each was first sent and which
//! transmission of it was acknowledged (its effective transmission), for
//! the total handover latency and the T3 expiries.
//!
//! Most TSNs are sent once and acknowledged as sent, so a TSN takes 16
//! bytes (its first transmission, with its state in the frame number's top
//! bits); the effective transmission of a retransmitted TSN is kept beside,
//! by TSN. A direction with traffic holds 4 096 to 8 192 TSNs here
//! (`state::TSN_RECENT`, more while acknowledgements are missing): 128 KiB
//! at most instead of the 320 KiB of a record with both transmissions.

use super::mark::Mark;
use crate::time::Timestamp;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// What is known of a TSN of the history.
#[derive(Debug, Clone, Copy)]
pub(super) struct TsnInfo {
    pub(super) first: Mark,
    /// The transmission its acknowledgement acknowledged, once acknowledged.
    pub(super) effective: Option<Mark>,
}

/// A TSN's slot: its first transmission's frame, tagged with its state in
/// the top two bits (a capture has fewer than 2^62 frames), and time.
#[derive(Debug, Clone, Copy)]
struct Slot {
    tagged_frame: u64,
    time: Timestamp,
}

const STATE_SHIFT: u32 = 62;
const FRAME_MASK: u64 = (1 << STATE_SHIFT) - 1;
/// Below the highest TSN but never seen as new DATA.
const NEVER_SEEN: u64 = 0;
const NOT_ACKED: u64 = 1;
/// Acknowledged, its effective transmission being its first one.
const ACKED_FIRST: u64 = 2;
/// Acknowledged, its effective transmission in `effective_later`.
const ACKED_LATER: u64 = 3;

impl Slot {
    const NEVER_SEEN: Slot = Slot {
        tagged_frame: NEVER_SEEN << STATE_SHIFT,
        time: Timestamp(0),
    };

    fn state(self) -> u64 {
        self.tagged_frame >> STATE_SHIFT
    }

    fn first(self) -> Mark {
        Mark {
            frame: self.tagged_frame & FRAME_MASK,
            time: self.time,
        }
    }

    fn with_state(self, state: u64) -> Slot {
        Slot {
            tagged_frame: (self.tagged_frame & FRAME_MASK) | (state << STATE_SHIFT),
            time: self.time,
        }
    }
}

#[derive(Debug, Default)]
pub(super) struct TsnHistory {
    /// TSN of `slots[0]`.
    base: u32,
    slots: VecDeque<Slot>,
    /// Effective transmissions other than the first, by TSN (retransmitted
    /// TSNs of the history only).
    effective_later: FxHashMap<u32, Mark>,
}

impl TsnHistory {
    pub(super) const EMPTY: TsnHistory = TsnHistory {
        base: 0,
        slots: VecDeque::new(),
        effective_later: FxHashMap::with_hasher(rustc_hash::FxBuildHasher),
    };

    pub(super) fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    pub(super) fn len(&self) -> usize {
        self.slots.len()
    }

    /// The lowest TSN held.
    pub(super) fn base(&self) -> u32 {
        self.base
    }

    /// The TSN after the highest held.
    pub(super) fn end(&self) -> u32 {
        self.base.wrapping_add(self.slots.len() as u32)
    }

    fn slot(&self, tsn: u32) -> Option<Slot> {
        let i = tsn.wrapping_sub(self.base) as usize;
        self.slots.get(i).copied()
    }

    /// A TSN seen as new DATA and still held.
    pub(super) fn get(&self, tsn: u32) -> Option<TsnInfo> {
        let slot = self.slot(tsn)?;
        let effective = match slot.state() {
            NEVER_SEEN => return None,
            NOT_ACKED => None,
            ACKED_FIRST => Some(slot.first()),
            _ => self.effective_later.get(&tsn).copied(),
        };
        Some(TsnInfo {
            first: slot.first(),
            effective,
        })
    }

    /// Whether `tsn` is held, seen as new DATA and not acknowledged.
    pub(super) fn waits_for_ack(&self, tsn: u32) -> bool {
        self.slot(tsn).is_some_and(|s| s.state() == NOT_ACKED)
    }

    /// Records the transmission `effective` as the one acknowledged of
    /// `tsn`, if `tsn` is held and was seen as new DATA.
    pub(super) fn acknowledge(&mut self, tsn: u32, effective: Mark) {
        let i = tsn.wrapping_sub(self.base) as usize;
        let Some(slot) = self.slots.get_mut(i) else {
            return;
        };
        let state = slot.state();
        if state == NEVER_SEEN {
            return;
        }
        let first = slot.first();
        if effective.frame == first.frame && effective.time == first.time {
            *slot = slot.with_state(ACKED_FIRST);
            // (Guarded: nearly every TSN comes here, and the map is
            // nearly always empty.)
            if state == ACKED_LATER {
                self.effective_later.remove(&tsn);
            }
        } else {
            *slot = slot.with_state(ACKED_LATER);
            self.effective_later.insert(tsn, effective);
        }
    }

    /// Forgets the lowest TSN held.
    pub(super) fn pop_front(&mut self) {
        if let Some(slot) = self.slots.pop_front() {
            if slot.state() == ACKED_LATER {
                self.effective_later.remove(&self.base);
            }
            self.base = self.base.wrapping_add(1);
        }
    }

    /// Forgets every TSN; the next one recorded is `base`.
    pub(super) fn reset(&mut self, base: u32) {
        self.slots.clear();
        self.effective_later.clear();
        self.base = base;
    }

    /// Appends `count` TSNs never seen (skipped over by the one recorded
    /// next).
    pub(super) fn skip(&mut self, count: usize) {
        self.slots
            .extend(std::iter::repeat_n(Slot::NEVER_SEEN, count));
    }

    /// Appends the next TSN, first sent at `first`, not acknowledged.
    pub(super) fn push(&mut self, first: Mark) {
        // Frames are counted from 1 by the capture reader and `watch`.
        debug_assert!(first.frame <= FRAME_MASK, "frame number above 2^62");
        let slot = Slot {
            tagged_frame: (first.frame & FRAME_MASK) | (NOT_ACKED << STATE_SHIFT),
            time: first.time,
        };
        crate::compact::push_back(&mut self.slots, slot);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(frame: u64, time: i64) -> Mark {
        Mark {
            frame,
            time: Timestamp(time),
        }
    }

    #[test]
    fn a_tsn_acknowledged_as_first_sent_or_as_retransmitted() {
        let mut h = TsnHistory::EMPTY;
        h.reset(u32::MAX - 1);
        h.push(mark(10, 100));
        h.skip(1);
        h.push(mark(12, 120));
        assert_eq!(h.end(), 1, "TSNs wrap");
        assert!(h.waits_for_ack(u32::MAX - 1));
        assert!(h.get(u32::MAX).is_none(), "skipped: never seen");
        assert!(!h.waits_for_ack(u32::MAX));

        h.acknowledge(u32::MAX - 1, mark(10, 100));
        let info = h.get(u32::MAX - 1).expect("held");
        assert_eq!(info.effective.map(|m| m.frame), Some(10));
        assert!(!h.waits_for_ack(u32::MAX - 1));

        h.acknowledge(0, mark(30, 300));
        let info = h.get(0).expect("held");
        assert_eq!((info.first.frame, info.first.time), (12, Timestamp(120)));
        let effective = info.effective.expect("acknowledged");
        assert_eq!((effective.frame, effective.time), (30, Timestamp(300)));

        // Acknowledged again as first sent: the later one is forgotten.
        h.acknowledge(0, mark(12, 120));
        assert_eq!(
            h.get(0).and_then(|i| i.effective).map(|m| m.frame),
            Some(12)
        );
        assert!(h.effective_later.is_empty());

        h.acknowledge(0, mark(31, 310));
        h.acknowledge(u32::MAX, mark(5, 5));
        assert!(h.get(u32::MAX).is_none(), "never seen stays so");
        h.pop_front();
        h.pop_front();
        assert_eq!(h.base(), 0);
        assert_eq!(h.effective_later.len(), 1);
        h.pop_front();
        assert!(h.is_empty() && h.effective_later.is_empty());
        assert!(h.get(0).is_none());
    }

    #[test]
    fn a_slot_is_sixteen_bytes() {
        assert_eq!(std::mem::size_of::<Slot>(), 16);
    }
}
