//! The in-memory queue between the capture threads and the analysis: frames
//! copied out of libpcap's ring in batches (one allocation per batch, not
//! per frame), every queued byte charged to one shared budget. A frame that
//! does not fit the budget is dropped by the capture thread and counted;
//! it is never queued, so nothing downstream (analysis, `--write`) sees a
//! frame the other missed.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Bytes charged per frame besides its data: the batch's index entry.
pub const FRAME_OVERHEAD: usize = std::mem::size_of::<Meta>();

/// The bytes every batch still alive holds, against a limit. A batch
/// gives its bytes back when its last holder (analysis or writer) drops it.
#[derive(Debug)]
pub struct Budget {
    limit: usize,
    used: AtomicUsize,
    /// The most ever held at once, for the summary.
    peak: AtomicUsize,
}

impl Budget {
    /// A budget of `limit` bytes, none held, shared by the capture threads
    /// and the batches they fill.
    pub fn new(limit: usize) -> Arc<Budget> {
        Arc::new(Budget {
            limit,
            used: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        })
    }

    /// Takes `n` bytes if they fit under the limit.
    pub fn try_charge(&self, n: usize) -> bool {
        let before = self.used.fetch_add(n, Ordering::AcqRel);
        if before + n > self.limit {
            self.used.fetch_sub(n, Ordering::AcqRel);
            return false;
        }
        self.peak.fetch_max(before + n, Ordering::Relaxed);
        true
    }

    fn release(&self, n: usize) {
        self.used.fetch_sub(n, Ordering::AcqRel);
    }

    /// The bytes batches may hold at once (`watch --queue-size`).
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// The bytes the batches alive hold now.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }

    /// The most bytes held at once so far (the summary's queue peak).
    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }
}

/// Where one frame lies in its batch.
#[derive(Debug, Clone, Copy)]
struct Meta {
    ts_ns: i64,
    offset: u32,
    caplen: u32,
    original_len: u32,
}

/// One frame of a batch, borrowed.
#[derive(Debug, Clone, Copy)]
pub struct FrameRef<'a> {
    /// Index of its interface in the capture's list.
    pub interface: usize,
    /// Its LINKTYPE (the value a capture file would record).
    pub link_type: u32,
    /// When the kernel stamped it (epoch ns, CLOCK_REALTIME).
    pub ts_ns: i64,
    /// Its length on the wire (the captured bytes may be fewer: snap length).
    pub original_len: u32,
    /// The captured bytes.
    pub data: &'a [u8],
}

/// Frames of one interface in capture order, with what the capture thread
/// promises about the frames still to come.
#[derive(Debug)]
pub struct Batch {
    /// Index of the interface in the capture's list.
    pub interface: usize,
    /// The interface's LINKTYPE (every frame of a batch has it).
    pub link_type: u32,
    data: Vec<u8>,
    frames: Vec<Meta>,
    /// No later frame of this interface is stamped before this (epoch ns);
    /// what lets frames of several interfaces be merged in time order.
    pub watermark_ns: i64,
    /// Frames the capture filter rejected since the previous batch (they
    /// show the interface is busy, for `--idle-exit`).
    pub rejected: u64,
    /// The interface's capture has ended: no batch follows this one.
    pub last: bool,
    budget: Option<Arc<Budget>>,
    charged: usize,
}

impl Batch {
    /// An empty batch of one interface; its frames are charged to `budget`
    /// (None: not counted against any).
    pub fn new(interface: usize, link_type: u32, budget: Option<Arc<Budget>>) -> Batch {
        Batch {
            interface,
            link_type,
            data: Vec::new(),
            frames: Vec::new(),
            watermark_ns: i64::MIN,
            rejected: 0,
            last: false,
            budget,
            charged: 0,
        }
    }

    /// Appends a frame whose bytes the caller has charged to the budget
    /// (`charged` bytes, given back when the batch is dropped).
    pub fn push_charged(&mut self, ts_ns: i64, original_len: u32, data: &[u8], charged: usize) {
        let offset = self.data.len() as u32;
        self.data.extend_from_slice(data);
        self.frames.push(Meta {
            ts_ns,
            offset,
            caplen: data.len() as u32,
            original_len,
        });
        self.charged += charged;
    }

    /// Appends a frame if the budget has room for it; false (nothing
    /// appended) when it has not.
    pub fn push(&mut self, ts_ns: i64, original_len: u32, data: &[u8]) -> bool {
        let cost = data.len() + FRAME_OVERHEAD;
        if let Some(b) = &self.budget {
            if !b.try_charge(cost) {
                return false;
            }
        }
        self.push_charged(ts_ns, original_len, data, cost);
        true
    }

    /// Frames held.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// Whether it holds no frame (it may still carry a watermark or the
    /// end of its interface's capture).
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// Bytes of frame data held.
    pub fn data_bytes(&self) -> usize {
        self.data.len()
    }

    /// The time stamp of its `i`th frame (from 0).
    pub fn ts_ns(&self, i: usize) -> Option<i64> {
        self.frames.get(i).map(|m| m.ts_ns)
    }

    /// The time stamp of its last frame; None when empty.
    pub fn last_ts_ns(&self) -> Option<i64> {
        self.frames.last().map(|m| m.ts_ns)
    }

    /// Its `i`th frame (from 0).
    pub fn get(&self, i: usize) -> Option<FrameRef<'_>> {
        let m = self.frames.get(i)?;
        let start = m.offset as usize;
        let data = self.data.get(start..start + m.caplen as usize)?;
        Some(FrameRef {
            interface: self.interface,
            link_type: self.link_type,
            ts_ns: m.ts_ns,
            original_len: m.original_len,
            data,
        })
    }

    /// Its frames in capture order.
    pub fn iter(&self) -> impl Iterator<Item = FrameRef<'_>> {
        (0..self.len()).filter_map(|i| self.get(i))
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        if let Some(b) = &self.budget {
            b.release(self.charged);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_beyond_the_budget_are_refused_and_bytes_come_back_on_drop() {
        let budget = Budget::new(2 * (100 + FRAME_OVERHEAD));
        let mut a = Batch::new(0, 1, Some(budget.clone()));
        assert!(a.push(1, 100, &[1; 100]));
        assert!(a.push(2, 100, &[2; 100]));
        assert!(!a.push(3, 100, &[3; 100]), "the third does not fit");
        assert_eq!(a.len(), 2);
        assert_eq!(a.get(1).map(|f| (f.ts_ns, f.data[0])), Some((2, 2)));
        let mut b = Batch::new(0, 1, Some(budget.clone()));
        assert!(!b.push(4, 10, &[4; 10]));
        drop(a);
        assert_eq!(budget.used(), 0);
        assert!(b.push(5, 10, &[5; 10]));
        assert_eq!(budget.peak(), 2 * (100 + FRAME_OVERHEAD));
    }
}
