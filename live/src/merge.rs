//! Frames of several interfaces in time order. Each capture thread hands
//! over its frames in batches, in its own order, with a watermark: no
//! later frame of that interface is stamped before it. A frame is given out
//! once no interface can still deliver an earlier one — its own batches
//! are ahead, its watermark has passed, or its capture has ended. With one
//! interface, frames go out as they come.
//!
//! Why: with libpcap's buffered delivery (TPACKET_V3) a frame reaches user
//! space when its block is handed over, up to the block timeout after it
//! was captured, so arrival order across interfaces is only
//! block-by-block; merging restores the order a capture file of all the
//! interfaces would have.

use crate::queue::Batch;
use std::collections::VecDeque;
use std::sync::Arc;

#[derive(Default)]
struct Lane {
    batches: VecDeque<Arc<Batch>>,
    /// The next frame of the front batch.
    next: usize,
    watermark: i64,
    done: bool,
}

impl Lane {
    fn head(&self) -> Option<i64> {
        self.batches.front().and_then(|b| b.ts_ns(self.next))
    }
}

/// The batches of every interface not given out yet, one lane each.
pub struct Merge {
    lanes: Vec<Lane>,
}

impl Merge {
    /// Lanes for `interfaces` interfaces (at least one), none of which has
    /// said anything of its time yet.
    pub fn new(interfaces: usize) -> Merge {
        Merge {
            lanes: (0..interfaces.max(1))
                .map(|_| Lane {
                    watermark: i64::MIN,
                    ..Default::default()
                })
                .collect(),
        }
    }

    /// Takes a batch of one interface (empty ones carry only a watermark
    /// or the end).
    pub fn push(&mut self, batch: Batch) {
        let Some(lane) = self.lanes.get_mut(batch.interface) else {
            return;
        };
        lane.watermark = lane.watermark.max(batch.watermark_ns);
        if let Some(t) = batch.last_ts_ns() {
            lane.watermark = lane.watermark.max(t);
        }
        lane.done |= batch.last;
        if !batch.is_empty() {
            lane.batches.push_back(Arc::new(batch));
        }
    }

    /// Every capture is gone (its thread ended without saying so): what
    /// is left goes out without waiting.
    pub fn end_all(&mut self) {
        for lane in &mut self.lanes {
            lane.done = true;
        }
    }

    /// Whether every interface's capture has ended and every frame was
    /// given out.
    pub fn finished(&self) -> bool {
        self.lanes.iter().all(|l| l.done && l.batches.is_empty())
    }

    /// Whether no frame is held at all (every one handed over was given
    /// out).
    pub fn is_empty(&self) -> bool {
        self.lanes.iter().all(|l| l.batches.is_empty())
    }

    /// The next frame in time order, if it can be given out now: its batch
    /// and its index in it.
    pub fn pop(&mut self) -> Option<(Arc<Batch>, usize)> {
        let (best, ts) = self
            .lanes
            .iter()
            .enumerate()
            .filter_map(|(i, l)| l.head().map(|t| (i, t)))
            .min_by_key(|&(i, t)| (t, i))?;
        if self.lanes.len() > 1 {
            let waiting = self
                .lanes
                .iter()
                .any(|l| l.batches.is_empty() && !l.done && l.watermark < ts);
            if waiting {
                return None;
            }
        }
        let lane = &mut self.lanes[best];
        let batch = lane.batches.front()?.clone();
        let index = lane.next;
        lane.next += 1;
        if lane.next >= batch.len() {
            lane.batches.pop_front();
            lane.next = 0;
        }
        Some((batch, index))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(interface: usize, stamps: &[i64], watermark: i64, last: bool) -> Batch {
        let mut b = Batch::new(interface, 1, None);
        for &t in stamps {
            b.push(t, 1, &[interface as u8]);
        }
        b.watermark_ns = watermark;
        b.last = last;
        b
    }

    fn drain(m: &mut Merge) -> Vec<(usize, i64)> {
        std::iter::from_fn(|| m.pop())
            .map(|(b, i)| (b.interface, b.ts_ns(i).unwrap_or(-1)))
            .collect()
    }

    #[test]
    fn one_interface_goes_out_as_it_comes() {
        let mut m = Merge::new(1);
        m.push(batch(0, &[5, 3, 9], 0, false));
        assert_eq!(drain(&mut m), vec![(0, 5), (0, 3), (0, 9)]);
        assert!(!m.finished());
        m.push(batch(0, &[], 0, true));
        assert!(m.finished());
    }

    #[test]
    fn interfaces_are_merged_in_time_order_once_no_earlier_frame_can_come() {
        let mut m = Merge::new(2);
        m.push(batch(0, &[10, 20, 30], 0, false));
        // Interface 1 has said nothing yet: nothing is safe.
        assert_eq!(drain(&mut m), vec![]);
        m.push(batch(1, &[15], 15, false));
        // 10 and 15 are safe; 20 waits for interface 1's watermark.
        assert_eq!(drain(&mut m), vec![(0, 10), (1, 15)]);
        m.push(batch(1, &[], 25, false));
        assert_eq!(drain(&mut m), vec![(0, 20)]);
        m.push(batch(1, &[26], 26, true));
        assert_eq!(drain(&mut m), vec![(1, 26), (0, 30)]);
        assert!(!m.finished());
        m.push(batch(0, &[], 0, true));
        assert!(m.finished());
    }
}
