//! The handover window (docs/metrics.md, "Handover window"): the
//! retransmissions, duplicates and losses a switch caused are counted from
//! the last new DATA on the old path until everything in flight at the
//! switch has arrived — the receiver's cumulative TSN ack passes the
//! highest TSN sent before the switch — not only until the switch frame:
//! a T3 retransmission of DATA lost on the old path comes after it.

use super::latency::waiting;
use super::mark::Mark;
use super::model::{Handover, Point, WindowEnd};
use super::state::{Association, Counters, Direction, OpenWindow};
use crate::wire::serial::serial_le;

impl Direction {
    /// Opens the window of the switch in slot `index` (its counters start
    /// at the last new DATA on the old path), closing the one before it.
    pub(super) fn open_window(
        &mut self,
        handovers: &mut [Option<Box<Handover>>],
        handed_on: usize,
        index: usize,
        switch: Mark,
        switch_tsn: u32,
    ) {
        let end = switch.point("next switch");
        self.close_windows(
            handovers,
            handed_on,
            |_| true,
            Some(end),
            WindowEnd::NextSwitch,
        );
        let until_tsn = switch_tsn.wrapping_sub(1);
        if let Some(h) = waiting(handovers, handed_on, index) {
            h.window = self.window_now(self.at_last_new, until_tsn);
        }
        self.windows.push(OpenWindow {
            index,
            start: self.at_last_new,
            until_tsn,
        });
    }

    /// A SACK with `cumulative_tsn`: closes the windows it completes.
    pub(super) fn cumulative_ack(
        &mut self,
        handovers: &mut [Option<Box<Handover>>],
        handed_on: usize,
        cumulative_tsn: u32,
        sack: Mark,
    ) {
        if self.windows.is_empty() {
            return;
        }
        self.close_windows(
            handovers,
            handed_on,
            |w| serial_le(w.until_tsn, cumulative_tsn),
            Some(sack.point("SACK acknowledging every TSN sent before the switch")),
            WindowEnd::CumulativeAck,
        );
    }

    fn window_now(&self, start: Counters, until_tsn: u32) -> super::model::HandoverWindow {
        let c = self.counters;
        super::model::HandoverWindow {
            until_tsn,
            end: None,
            end_reason: WindowEnd::CaptureEnd,
            retransmissions: c.retransmissions - start.retransmissions,
            retransmitted_after_ack: c.after_ack - start.after_ack,
            dup_tsns_reported: c.dup_tsns - start.dup_tsns,
            lost_in_switch: c.lost - start.lost,
        }
    }

    fn close_windows(
        &mut self,
        handovers: &mut [Option<Box<Handover>>],
        handed_on: usize,
        done: impl Fn(&OpenWindow) -> bool,
        end: Option<Point>,
        reason: WindowEnd,
    ) {
        let mut i = 0;
        while i < self.windows.len() {
            if !done(&self.windows[i]) {
                i += 1;
                continue;
            }
            let w = self.windows.remove(i);
            if let Some(h) = waiting(handovers, handed_on, w.index) {
                h.window = self.window_now(w.start, w.until_tsn);
                h.window.end = end;
                h.window.end_reason = reason;
            }
        }
    }
}

/// Closes every open window of an association that ends (at the end of
/// the capture or when it is retired).
pub(super) fn close_all(a: &mut Association) {
    let Association {
        directions,
        handovers,
        handed_on,
        ..
    } = a;
    for sender in 0..2 {
        // (Read first: writing a direction never written allocates it.)
        if !directions[sender].windows.is_empty() {
            let d = &mut directions[sender];
            d.close_windows(handovers, *handed_on, |_| true, None, WindowEnd::CaptureEnd);
        }
    }
}
