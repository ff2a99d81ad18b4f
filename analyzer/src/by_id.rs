//! A table of alive associations by id, for the per-packet lookups of the
//! tracker and the handover engine.
//!
//! A packet's handlers look its association up many times (address and
//! path, each chunk, each observation of the engine), nearly always the
//! same one in a row, so the last id found is remembered beside its slot:
//! a repeat costs one comparison instead of a hash probe. Entries live in
//! slots reused after removal, so memory follows the most associations
//! alive at once, not all those seen.

use crate::events::AssocId;
use rustc_hash::FxHashMap;

pub(crate) struct ById<T> {
    slot_of: FxHashMap<AssocId, u32>,
    slots: Vec<Option<Box<T>>>,
    free: Vec<u32>,
    /// The last id found and its slot (none once it left).
    last_found: Option<(AssocId, u32)>,
}

impl<T> Default for ById<T> {
    fn default() -> Self {
        ById {
            slot_of: FxHashMap::default(),
            slots: Vec::new(),
            free: Vec::new(),
            last_found: None,
        }
    }
}

impl<T> ById<T> {
    #[inline]
    fn slot(&self, id: AssocId) -> Option<u32> {
        if let Some((last, slot)) = self.last_found {
            if last == id {
                return Some(slot);
            }
        }
        self.slot_of.get(&id).copied()
    }

    #[inline]
    pub(crate) fn get(&self, id: AssocId) -> Option<&T> {
        let slot = self.slot(id)?;
        self.slots[slot as usize].as_deref()
    }

    #[inline]
    pub(crate) fn get_mut(&mut self, id: AssocId) -> Option<&mut T> {
        let slot = self.slot(id)?;
        self.last_found = Some((id, slot));
        self.slots[slot as usize].as_deref_mut()
    }

    /// Inserts (or replaces) the entry of `id`.
    // Out of line: once per association, while the lookups around it run
    // for every packet and stay small enough to inline.
    #[cold]
    #[inline(never)]
    pub(crate) fn insert(&mut self, id: AssocId, value: T) -> &mut T {
        let slot = match self.slot_of.get(&id) {
            Some(&slot) => slot,
            None => {
                // Free slots past the end were given back (`remove`).
                let reused = std::iter::from_fn(|| self.free.pop())
                    .find(|&s| (s as usize) < self.slots.len());
                let slot = reused.unwrap_or_else(|| {
                    self.slots.push(None);
                    // Ids are u32 (the tracker stops creating associations
                    // at 2^32), so there are never more slots than that.
                    u32::try_from(self.slots.len() - 1).expect("fewer than 2^32 slots")
                });
                self.slot_of.insert(id, slot);
                slot
            }
        };
        self.last_found = Some((id, slot));
        self.slots[slot as usize].insert(Box::new(value))
    }

    /// The entry of `id`, created with `T::default()` when missing.
    #[inline]
    pub(crate) fn get_or_default(&mut self, id: AssocId) -> &mut T
    where
        T: Default,
    {
        let Some(slot) = self.slot(id) else {
            return self.insert(id, T::default());
        };
        self.last_found = Some((id, slot));
        match &mut self.slots[slot as usize] {
            Some(t) => t,
            None => unreachable!("an id's slot holds its entry"),
        }
    }

    pub(crate) fn remove(&mut self, id: AssocId) -> Option<T> {
        let slot = self.slot_of.remove(&id)?;
        if self.last_found.is_some_and(|(last, _)| last == id) {
            self.last_found = None;
        }
        self.free.push(slot);
        // Trailing free slots are given back: their entries in `free`,
        // now past the end, are skipped when popped. (`free` only grows
        // by removals, and the slots only when `free` is empty, so none
        // of them can come to name an occupied slot.)
        let taken = self.slots[slot as usize].take().map(|t| *t);
        while matches!(self.slots.last(), Some(None)) {
            self.slots.pop();
        }
        taken
    }

    pub(crate) fn len(&self) -> usize {
        self.slot_of.len()
    }

    /// The ids present, in no particular order.
    pub(crate) fn ids(&self) -> impl Iterator<Item = AssocId> + '_ {
        self.slot_of.keys().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::ById;

    #[test]
    fn lookups_follow_inserts_and_removals() {
        let mut t = ById::<u64>::default();
        t.insert(7, 70);
        t.insert(9, 90);
        assert_eq!(t.get(7), Some(&70));
        *t.get_mut(9).unwrap() += 1;
        assert_eq!(t.get(9), Some(&91));
        assert_eq!(t.remove(9), Some(91));
        // The memo of the last id must not outlive its entry.
        assert_eq!(t.get(9), None);
        assert_eq!(t.get_mut(9), None);
        t.insert(11, 110);
        assert_eq!(t.get(11), Some(&110));
        assert_eq!(t.get(7), Some(&70));
        assert_eq!(*t.get_or_default(12), 0);
        assert_eq!(t.len(), 3);
        let mut ids: Vec<_> = t.ids().collect();
        ids.sort_unstable();
        assert_eq!(ids, [7, 11, 12]);
    }

    #[test]
    fn slots_shrink_with_the_entries_alive() {
        let mut t = ById::<u8>::default();
        for id in 0..1000 {
            t.insert(id, 1);
        }
        for id in 0..1000 {
            assert_eq!(t.remove(id), Some(1));
        }
        assert_eq!(t.len(), 0);
        assert!(t.slots.is_empty(), "{} slots left", t.slots.len());
        // Again, removed in another order, and refilled: every entry is
        // its own, and the slots never outnumber the peak alive.
        for round in 0..3u8 {
            for id in 0..1000 {
                t.insert(id, round);
            }
            assert_eq!(t.slots.len(), 1000);
            for id in (1..1000).rev().step_by(2) {
                t.remove(id);
            }
            for id in 1000..1500 {
                t.insert(id, round);
            }
            assert_eq!(t.slots.len(), 1000);
            for id in (0..1000).step_by(2).chain(1000..1500) {
                assert_eq!(t.get(id), Some(&round));
                assert_eq!(t.remove(id), Some(round));
            }
            assert!(t.slots.is_empty() && t.len() == 0);
        }
    }
}
