//! Frames a live capture lost, by cause, with the time spans they were lost
//! in: what lets the outputs say which results may be incomplete instead of
//! only how many frames went missing.
//!
//! Times are epoch nanoseconds on CLOCK_REALTIME, the clock the kernel
//! stamps captured frames with, so a span compares directly with the
//! times of the frames a result rests on.

use std::sync::Mutex;

/// Why frames were lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DropCause {
    /// The kernel's capture buffer (libpcap's ring) was full.
    Kernel,
    /// The interface or its driver dropped them (libpcap's `ps_ifdrop`).
    Interface,
    /// The watch's own queue between capture and analysis was full.
    Queue,
}

impl DropCause {
    /// The cause as every output writes it (`kernel`, `interface`,
    /// `queue`): the `cause` of a `drops` line and of a mark.
    pub fn name(self) -> &'static str {
        match self {
            DropCause::Kernel => "kernel",
            DropCause::Interface => "interface",
            DropCause::Queue => "queue",
        }
    }
}

/// Frames lost for one cause on one interface between two instants (both
/// included). For the watch's queue these are the stamps of the first and
/// last frame it dropped; for the kernel and the interface, which only
/// give counts, the two moments between which the count grew.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DropSpan {
    /// What lost them.
    pub cause: DropCause,
    /// Index of the interface in the capture's list.
    pub interface: usize,
    /// The earliest instant a frame of the span may have been lost at.
    pub from_ns: i64,
    /// The latest such instant.
    pub to_ns: i64,
    /// Frames lost within the span so far.
    pub frames: u64,
}

impl DropSpan {
    /// Whether the span and the interval `[from_ns, to_ns]` share an instant.
    pub fn overlaps(&self, from_ns: i64, to_ns: i64) -> bool {
        self.from_ns <= to_ns && from_ns <= self.to_ns
    }
}

/// Drops closer than this to the previous span of the same cause and
/// interface extend it instead of starting a new one: a burst that
/// overflows a buffer loses frames in many small runs, which say nothing
/// more apart than together.
pub const MERGE_GAP_NS: i64 = 100_000_000;

/// Spans kept at most. Beyond it a new drop extends the latest span of its
/// cause and interface whatever the gap, so memory stays bounded on a link
/// that drops for days; spans only ever widen, so marking stays on the
/// safe side.
pub const MAX_SPANS: usize = 10_000;

/// Every span so far, shared by the capture threads (which record) and the
/// analysis (which marks results and reports).
#[derive(Debug, Default)]
pub struct DropLog {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    spans: Vec<DropSpan>,
    /// Bumped by every record, so a reader can tell whether anything is new.
    generation: u64,
}

impl DropLog {
    /// A log of no drops.
    pub fn new() -> DropLog {
        DropLog::default()
    }

    /// Records `frames` frames lost between `from_ns` and `to_ns`.
    pub fn record(
        &self,
        cause: DropCause,
        interface: usize,
        from_ns: i64,
        to_ns: i64,
        frames: u64,
    ) {
        if frames == 0 {
            return;
        }
        let (from_ns, to_ns) = (from_ns.min(to_ns), from_ns.max(to_ns));
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        inner.generation += 1;
        let full = inner.spans.len() >= MAX_SPANS;
        let previous = inner
            .spans
            .iter_mut()
            .rev()
            .find(|s| s.cause == cause && s.interface == interface);
        if let Some(p) = previous {
            if full || from_ns <= p.to_ns.saturating_add(MERGE_GAP_NS) {
                p.from_ns = p.from_ns.min(from_ns);
                p.to_ns = p.to_ns.max(to_ns);
                p.frames += frames;
                return;
            }
        }
        inner.spans.push(DropSpan {
            cause,
            interface,
            from_ns,
            to_ns,
            frames,
        });
    }

    /// Every span, in the order they started being recorded.
    pub fn spans(&self) -> Vec<DropSpan> {
        self.inner
            .lock()
            .map(|i| i.spans.clone())
            .unwrap_or_default()
    }

    /// The spans that share an instant with `[from_ns, to_ns]`.
    pub fn overlapping(&self, from_ns: i64, to_ns: i64) -> Vec<DropSpan> {
        self.inner
            .lock()
            .map(|i| {
                i.spans
                    .iter()
                    .filter(|s| s.overlaps(from_ns, to_ns))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Changes whenever a drop is recorded.
    pub fn generation(&self) -> u64 {
        self.inner.lock().map(|i| i.generation).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    #[test]
    fn close_drops_of_one_cause_make_one_span_and_causes_stay_apart() {
        let log = DropLog::new();
        log.record(DropCause::Queue, 0, 10 * MS, 12 * MS, 3);
        log.record(DropCause::Queue, 0, 50 * MS, 60 * MS, 2);
        log.record(DropCause::Kernel, 0, 55 * MS, 58 * MS, 7);
        log.record(DropCause::Queue, 1, 61 * MS, 61 * MS, 1);
        log.record(DropCause::Queue, 0, 500 * MS, 501 * MS, 4);
        log.record(DropCause::Kernel, 0, 70 * MS, 80 * MS, 0);
        let spans = log.spans();
        assert_eq!(spans.len(), 4, "{spans:?}");
        assert_eq!(
            (spans[0].from_ns, spans[0].to_ns, spans[0].frames),
            (10 * MS, 60 * MS, 5)
        );
        assert_eq!(spans[1].cause, DropCause::Kernel);
        assert_eq!(spans[2].interface, 1);
        assert_eq!(spans[3].from_ns, 500 * MS);
        assert_eq!(log.overlapping(57 * MS, 57 * MS).len(), 2);
        assert_eq!(log.overlapping(59 * MS, 59 * MS).len(), 1);
        assert_eq!(log.overlapping(61 * MS, 100 * MS).len(), 1);
        assert!(log.overlapping(100 * MS, 499 * MS).is_empty());
        assert_eq!(log.generation(), 5, "the empty record changes nothing");
    }

    #[test]
    fn spans_stop_growing_in_number_at_the_cap() {
        let log = DropLog::new();
        for i in 0..(MAX_SPANS as i64 + 10) {
            log.record(DropCause::Kernel, 0, i * 1000 * MS, i * 1000 * MS, 1);
        }
        let spans = log.spans();
        assert_eq!(spans.len(), MAX_SPANS);
        let last = spans.last().expect("spans");
        assert_eq!(last.frames, 11);
        assert_eq!(last.to_ns, (MAX_SPANS as i64 + 9) * 1000 * MS);
    }
}
