//! Merging two captures in time order and pairing the packets both saw,
//! within a sliding window: a packet whose copy has not turned up at the
//! other point once the window has passed was not seen there. Memory is
//! bounded by the packets of one window, never by the captures.

use crate::clock::ClockEstimate;
use crate::observe::{Message, Observation, PacketKey};
use rustc_hash::FxHashMap;
use sctp_handover::capture::{CaptureError, ReadOutcome};
use std::collections::VecDeque;
use std::sync::mpsc::Receiver;

/// An observation with its time carried onto point A's clock.
#[derive(Debug, Clone)]
pub struct Stamped {
    pub obs: Observation,
    /// ns since the epoch on A's clock.
    pub corrected_ns: i64,
}

/// One capture's observations: a prefix already read (for the first
/// offset estimate), then the rest from its reader thread.
pub struct Source {
    path: std::path::PathBuf,
    prefix: VecDeque<Observation>,
    rx: Receiver<Message>,
    head: Option<Observation>,
    end: Option<Result<ReadOutcome, CaptureError>>,
}

impl Source {
    pub fn new(rx: Receiver<Message>, path: &std::path::Path) -> Self {
        Source {
            path: path.to_owned(),
            prefix: VecDeque::new(),
            rx,
            head: None,
            end: None,
        }
    }

    /// Reads up to `n` observations ahead into the prefix.
    pub fn read_prefix(&mut self, n: usize) -> &VecDeque<Observation> {
        while self.prefix.len() < n {
            match self.receive() {
                Some(obs) => self.prefix.push_back(obs),
                None => break,
            }
        }
        &self.prefix
    }

    fn receive(&mut self) -> Option<Observation> {
        if self.end.is_some() {
            return None;
        }
        match self.rx.recv() {
            Ok(Message::Packet(obs)) => Some(obs),
            Ok(Message::End(result)) => {
                self.end = Some(result);
                None
            }
            // The reader thread ended without a word: it panicked.
            Err(_) => {
                self.end = Some(Err(CaptureError::Read {
                    path: self.path.clone(),
                    reason: "the reader thread stopped".into(),
                }));
                None
            }
        }
    }

    fn peek(&mut self) -> Option<&Observation> {
        if self.head.is_none() {
            self.head = match self.prefix.pop_front() {
                Some(obs) => Some(obs),
                None => self.receive(),
            };
        }
        self.head.as_ref()
    }

    /// How the capture ended; call after the merge is exhausted.
    pub fn finish(mut self) -> Result<ReadOutcome, CaptureError> {
        while self.receive().is_some() {}
        self.end.unwrap_or_else(|| Ok(ReadOutcome::default()))
    }
}

/// Both captures merged in order of A-clock time.
pub struct Merged {
    pub sources: [Source; 2],
    clock: ClockEstimate,
}

impl Merged {
    pub fn new(sources: [Source; 2], clock: ClockEstimate) -> Self {
        Merged { sources, clock }
    }

    fn corrected(&self, obs: &Observation) -> i64 {
        if obs.point == 0 {
            obs.time.0
        } else {
            self.clock.b_to_a(obs.time.0)
        }
    }
}

impl Iterator for Merged {
    type Item = Stamped;

    fn next(&mut self) -> Option<Stamped> {
        let clock = self.clock;
        let [a, b] = &mut self.sources;
        let ta = a.peek().map(|o| o.time.0);
        let tb = b.peek().map(|o| clock.b_to_a(o.time.0));
        let from = match (ta, tb) {
            (Some(x), Some(y)) if x <= y => 0,
            (Some(_), Some(_)) => 1,
            (Some(_), None) => 0,
            (None, Some(_)) => 1,
            (None, None) => return None,
        };
        let obs = self.sources[from].head.take()?;
        let corrected_ns = self.corrected(&obs);
        Some(Stamped { obs, corrected_ns })
    }
}

/// What pairing tells its user.
pub trait PairHandler {
    /// Every observation, in merged time order, as it is read.
    fn observed(&mut self, _packet: &Stamped) {}
    /// Which of the earlier copies seen at the other point (oldest first)
    /// `arriving` is paired with; the default takes the latest.
    fn choose(&self, _arriving: &Stamped, candidates: &[&Stamped]) -> usize {
        candidates.len() - 1
    }
    /// The same packet seen at both points. `ambiguous`: other copies with
    /// the same identity were waiting (an identical retransmission), so
    /// the choice rested on [`PairHandler::choose`].
    fn paired(&mut self, earlier: Stamped, later: Stamped, ambiguous: bool);
    /// A packet the other point did not see within the window.
    fn unmatched(&mut self, packet: Stamped);
}

/// The sliding window of packets waiting for their copy.
pub struct Matcher {
    window_ns: i64,
    waiting: FxHashMap<PacketKey, Vec<Stamped>>,
    /// Arrival order, for expiry; entries already paired are skipped.
    queue: VecDeque<(i64, PacketKey, usize, u64)>,
    /// Most packets waiting at once (for the memory bound's record).
    pub peak_waiting: usize,
    waiting_now: usize,
}

impl Matcher {
    pub fn new(window_ns: i64) -> Self {
        Matcher {
            window_ns,
            waiting: FxHashMap::default(),
            queue: VecDeque::new(),
            peak_waiting: 0,
            waiting_now: 0,
        }
    }

    /// Runs the whole merge through the window.
    pub fn run(&mut self, merged: &mut Merged, handler: &mut dyn PairHandler) {
        for packet in merged.by_ref() {
            self.push(packet, handler);
        }
        self.expire(i64::MAX, handler);
    }

    fn push(&mut self, packet: Stamped, handler: &mut dyn PairHandler) {
        self.expire(packet.corrected_ns.saturating_sub(self.window_ns), handler);
        handler.observed(&packet);
        let point = packet.obs.point;
        let key = packet.obs.key;
        let list = self.waiting.entry(key).or_default();
        let candidates: Vec<usize> = (0..list.len())
            .filter(|&i| list[i].obs.point != point)
            .collect();
        if candidates.is_empty() {
            self.queue
                .push_back((packet.corrected_ns, key, point, packet.obs.frame));
            list.push(packet);
            self.waiting_now += 1;
            self.peak_waiting = self.peak_waiting.max(self.waiting_now);
            return;
        }
        let ambiguous = list.len() > 1;
        let refs: Vec<&Stamped> = candidates.iter().map(|&i| &list[i]).collect();
        let pick = handler.choose(&packet, &refs).min(candidates.len() - 1);
        let earlier = list.remove(candidates[pick]);
        self.waiting_now -= 1;
        if list.is_empty() {
            self.waiting.remove(&key);
        }
        handler.paired(earlier, packet, ambiguous);
    }

    /// Declares unseen every packet waiting since before `cutoff`.
    fn expire(&mut self, cutoff: i64, handler: &mut dyn PairHandler) {
        while let Some(&(t, key, point, frame)) = self.queue.front() {
            if t >= cutoff {
                break;
            }
            self.queue.pop_front();
            let Some(list) = self.waiting.get_mut(&key) else {
                continue;
            };
            if let Some(i) = list
                .iter()
                .position(|s| s.obs.point == point && s.obs.frame == frame)
            {
                let packet = list.remove(i);
                self.waiting_now -= 1;
                if list.is_empty() {
                    self.waiting.remove(&key);
                }
                handler.unmatched(packet);
            }
        }
    }
}
