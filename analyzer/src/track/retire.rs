//! Retirement: when an association is finished (ended and quiet for
//! `end_linger`, or idle for `idle_timeout`, both in capture time), it
//! leaves the tracker and every table that points at it.
//!
//! Deadlines live in a min-heap with lazy re-push: an entry is never later
//! than its association's actual deadline; when it comes due and the
//! association has seen packets since, it is pushed again with the new
//! deadline. Each retirement costs O(log n); nothing scans all associations.

use super::assoc::Association;
use super::index::{port_pair, remove_from};
use super::Tracker;
use crate::by_id::ById;
use crate::events::AssocId;
use crate::time::Timestamp;
use std::cmp::Reverse;
use std::ops::{Index, IndexMut};

/// A heap entry: (due time, association), earliest first.
pub(super) type Deadline = Reverse<(Timestamp, AssocId)>;

/// The alive associations by id (boxed: the table stays small, and
/// growing it moves pointers, not associations).
#[derive(Default)]
pub(super) struct Alive(ById<Association>);

impl Alive {
    pub(super) fn get(&self, id: AssocId) -> Option<&Association> {
        self.0.get(id)
    }
    fn insert(&mut self, a: Association) {
        self.0.insert(a.id, a);
    }
    fn remove(&mut self, id: AssocId) -> Option<Association> {
        self.0.remove(id)
    }
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }
}

impl Index<AssocId> for Alive {
    type Output = Association;
    #[inline]
    fn index(&self, id: AssocId) -> &Association {
        self.0.get(id).expect("association is alive")
    }
}

impl IndexMut<AssocId> for Alive {
    #[inline]
    fn index_mut(&mut self, id: AssocId) -> &mut Association {
        self.0.get_mut(id).expect("association is alive")
    }
}

/// Sizes of the tracker's tables (what memory is spent on); all zero once
/// every association is retired.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Footprint {
    /// Alive associations.
    pub associations: usize,
    /// Entries of the verification-tag table.
    pub tags: usize,
    /// Entries of the INIT table (INITs folded into one association).
    pub inits: usize,
    /// Open associations listed by port pair and address, summed over the
    /// addresses.
    pub open_addresses: usize,
    /// Open associations listed as having a verification tag still
    /// unknown.
    pub half_known: usize,
    /// Heap entries of alive associations (entries left by retired ones
    /// are purged once they outnumber these).
    pub deadlines: usize,
}

impl Tracker {
    /// Associations alive (created and not yet retired).
    pub fn alive(&self) -> usize {
        self.associations.len()
    }

    /// The frames of the HEARTBEATs and ASCONFs of an association that an
    /// answer could still match (the tracker's outstanding requests): the
    /// results that depend on those answers are not settled yet.
    pub fn open_requests(&self, id: AssocId, frames: &mut Vec<u64>) {
        frames.clear();
        if let Some(a) = self.associations.get(id) {
            frames.extend(a.pending_heartbeats.iter().map(|h| h.frame));
            frames.extend(a.pending_asconfs.iter().map(|x| x.frame));
        }
    }

    /// Entries in each table, for tests and diagnostics.
    pub fn footprint(&self) -> Footprint {
        Footprint {
            associations: self.associations.len(),
            tags: self.by_tag.len(),
            inits: self.by_init.len(),
            open_addresses: self.open_by_address.values().map(Vec::len).sum(),
            half_known: self.half_known.values().map(Vec::len).sum(),
            deadlines: self.deadlines.len() - self.stale_deadlines,
        }
    }

    /// Takes in a newly created association.
    pub(super) fn admit(&mut self, a: Association) {
        let id = a.id;
        let pp = port_pair(a.endpoints[0].port, a.endpoints[1].port);
        let due = a.first_time.0.saturating_add(self.config.idle_timeout.0);
        self.associations.insert(a);
        self.half_known.entry(pp).or_default().push(id);
        self.schedule(id, Timestamp(due));
    }

    pub(super) fn schedule(&mut self, id: AssocId, due: Timestamp) {
        self.associations[id].queued_deadlines += 1;
        self.deadlines.push(Reverse((due, id)));
    }

    /// When `a` is finished if no packet comes.
    pub(super) fn deadline(&self, a: &Association) -> Timestamp {
        let wait = if a.end.is_some() {
            self.config.end_linger
        } else {
            self.config.idle_timeout
        };
        Timestamp(a.last_time.0.saturating_add(wait.0))
    }

    /// The next association finished before `now` (capture time), removed
    /// from the tracker; call until `None`. Finished: ended with no packet
    /// for `end_linger`, or no packet for `idle_timeout`.
    pub fn retire_due(&mut self, now: Timestamp) -> Option<Association> {
        while let Some(&Reverse((due, id))) = self.deadlines.peek() {
            if due >= now {
                return None;
            }
            self.deadlines.pop();
            let Some(a) = self.associations.get(id) else {
                self.stale_deadlines = self.stale_deadlines.saturating_sub(1);
                continue;
            };
            let actual = self.deadline(a);
            self.associations[id].queued_deadlines -= 1;
            if actual < now {
                return Some(self.remove(id));
            }
            self.schedule(id, actual);
        }
        None
    }

    /// Retires every association still alive, in id order (end of file),
    /// one at a time: each leaves the tracker as the iterator hands it out,
    /// so they are never all held twice.
    pub fn retire_all(&mut self) -> impl Iterator<Item = Association> + '_ {
        self.deadlines.clear();
        self.stale_deadlines = 0;
        let mut ids: Vec<AssocId> = self.associations.0.ids().collect();
        ids.sort_unstable();
        ids.into_iter().map(move |id| {
            let a = self.remove(id);
            // Nothing is queued any more (the heap was cleared above).
            self.stale_deadlines = 0;
            a
        })
    }

    /// An association leaves the open tables (it ended or is retired).
    pub(super) fn close(&mut self, id: AssocId) {
        let a = &self.associations[id];
        let pp = port_pair(a.endpoints[0].port, a.endpoints[1].port);
        let addresses: Vec<_> = a
            .endpoints
            .iter()
            .flat_map(|e| e.addresses.iter().map(|i| i.address))
            .collect();
        for address in addresses {
            remove_from(&mut self.open_by_address, (pp, address), id);
        }
        remove_from(&mut self.half_known, pp, id);
    }

    /// Removes an association from every table.
    fn remove(&mut self, id: AssocId) -> Association {
        if self.associations[id].end.is_none() {
            self.close(id);
        }
        let a = self.associations.remove(id).expect("association is alive");
        for key in &a.tag_keys {
            if self
                .by_tag
                .get(key)
                .is_some_and(|&(owner, _, _)| owner == id)
            {
                self.by_tag.remove(key);
            }
        }
        for key in &a.init_keys {
            if self.by_init.get(key) == Some(&id) {
                self.by_init.remove(key);
            }
        }
        self.stale_deadlines += usize::from(a.queued_deadlines);
        // Entries of retired associations are skipped when they come due;
        // drop them in one pass once they outnumber the live ones.
        if self.stale_deadlines > 64 && self.stale_deadlines * 2 > self.deadlines.len() {
            let alive = &self.associations;
            self.deadlines
                .retain(|Reverse((_, id))| alive.get(*id).is_some());
            self.stale_deadlines = 0;
        }
        a
    }
}
