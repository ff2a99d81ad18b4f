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
            self.settle_if_done(w.index);
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

#[cfg(test)]
mod tests {
    //! The handover window (docs/metrics.md, "Handover window"), through
    //! the engine's input ([`Feed`]).
    use super::super::switch::tests::{Feed, CN};
    use crate::handover::{HandoverConfig, WindowEnd};

    #[test]
    fn the_window_ends_at_the_sack_whose_cumulative_ack_reaches_the_tsn_before_the_switch() {
        // koh-kim-2 in miniature: 500..504 on C → A1, the switch 505 on
        // C → A2; 503 and 504, lost on the old path, sent again on the new
        // one after the switch. The SACK for 503 (one duplicate reported)
        // leaves 504 in flight; the one for 504 ends the window
        // (until_tsn 504, the switch TSN − 1): 2 retransmissions, both
        // lost in the switch, 1 duplicate.
        let (mut f, [c_a1, c_a2, _, a2_c]) = Feed::two_homed(HandoverConfig::new());
        for k in 0..5 {
            f.new_data(10_000 * (k + 1), CN, c_a1, 500 + k as u32);
        }
        f.new_data(60_000, CN, c_a2, 505);
        f.retransmit(300_000, CN, c_a2, 503, None);
        f.retransmit(302_000, CN, c_a2, 504, None);
        f.sack(310_000, a2_c, CN, 503, 1);
        let end = f.sack(320_000, a2_c, CN, 504, 0);
        // After the end: not counted.
        f.sack(330_000, a2_c, CN, 505, 3);
        let [h] = &f.finish()[..] else {
            panic!("one handover");
        };
        let w = h.window;
        assert_eq!(w.until_tsn, 504);
        assert_eq!(
            (w.end_reason, w.end.and_then(|p| p.frame)),
            (WindowEnd::CumulativeAck, Some(end))
        );
        assert_eq!(
            (w.retransmissions, w.lost_in_switch, w.dup_tsns_reported),
            (2, 2, 1)
        );
        assert_eq!(w.retransmitted_after_ack, 0);
    }

    #[test]
    fn the_window_counts_from_the_last_new_data_on_the_old_path() {
        // 500 sent again before 501, the last new DATA on C → A1: not in
        // the window; sent again after it, before the switch: in it (on
        // its own path: not lost in the switch). No SACK: the capture
        // ends the window.
        let (mut f, [c_a1, c_a2, ..]) = Feed::two_homed(HandoverConfig::new());
        f.new_data(10_000, CN, c_a1, 500);
        f.retransmit(15_000, CN, c_a1, 500, None);
        f.new_data(20_000, CN, c_a1, 501);
        f.retransmit(25_000, CN, c_a1, 500, None);
        f.new_data(30_000, CN, c_a2, 502);
        let [h] = &f.finish()[..] else {
            panic!("one handover");
        };
        let w = h.window;
        assert_eq!(
            (w.end_reason, w.end.is_none()),
            (WindowEnd::CaptureEnd, true)
        );
        assert_eq!((w.retransmissions, w.lost_in_switch), (1, 0));
    }

    #[test]
    fn the_next_switch_of_the_direction_ends_the_window() {
        let (mut f, [c_a1, c_a2, ..]) = Feed::two_homed(HandoverConfig::new());
        f.new_data(10_000, CN, c_a1, 500);
        f.new_data(20_000, CN, c_a2, 501);
        let back = f.new_data(30_000, CN, c_a1, 502);
        let windows: Vec<(u32, WindowEnd, Option<u64>)> = f
            .finish()
            .iter()
            .map(|h| {
                (
                    h.window.until_tsn,
                    h.window.end_reason,
                    h.window.end.and_then(|p| p.frame),
                )
            })
            .collect();
        assert_eq!(
            windows,
            [
                (500, WindowEnd::NextSwitch, Some(back)),
                (501, WindowEnd::CaptureEnd, None),
            ]
        );
    }

    #[test]
    fn a_copy_of_an_acknowledged_tsn_in_the_window_is_a_retransmission_after_ack() {
        // The SACK for 501 (not yet 502, the TSN before the switch)
        // leaves the window open; 501 sent again: 1 retransmission, after
        // its acknowledgement, not lost.
        let (mut f, [c_a1, c_a2, _, a2_c]) = Feed::two_homed(HandoverConfig::new());
        f.new_data(10_000, CN, c_a1, 500);
        f.new_data(20_000, CN, c_a1, 501);
        f.new_data(30_000, CN, c_a1, 502);
        f.new_data(40_000, CN, c_a2, 503);
        f.sack(50_000, a2_c, CN, 501, 0);
        f.retransmit_acknowledged(60_000, CN, c_a2, 501);
        let [h] = &f.finish()[..] else {
            panic!("one handover");
        };
        let w = h.window;
        assert_eq!(w.end_reason, WindowEnd::CaptureEnd);
        assert_eq!(
            (
                w.retransmissions,
                w.retransmitted_after_ack,
                w.lost_in_switch
            ),
            (1, 1, 0)
        );
    }
}
