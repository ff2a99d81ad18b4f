//! Link availability recognition for a `return` switch: link_up → first
//! HEARTBEAT on the path → first DATA on it (Bokor).

use super::anchors::AnchorKind;
use super::mark::Mark;
use super::model::{Component, Point, Recognition};
use super::state::{HeartbeatRecord, PathData};
use super::HandoverConfig;
use crate::events::PathId;
use crate::time::Timestamp;

/// Link availability recognition of a switch back to `to`.
pub(super) fn recognition(
    config: &HandoverConfig,
    heartbeats: &[HeartbeatRecord],
    to: PathId,
    old_data: &PathData,
    new_data: &PathData,
    switch: Mark,
    first_new_data: Point,
) -> Recognition {
    let since = old_data
        .first_in_segment
        .map(|m| m.time)
        .unwrap_or(Timestamp(i64::MIN));
    let link_up = config
        .anchors
        .iter()
        .rfind(|x| x.kind == AnchorKind::LinkUp && x.time <= switch.time && x.time >= since)
        .map(|x| Point::anchor(x.time, "link_up event"));
    let hb_after = link_up.map_or(since, |p| p.time);
    // Those before the first whose latest time so far reaches `hb_after`
    // are all earlier: a binary search skips them rather than walk every
    // HEARTBEAT kept behind a switch that never settles.
    let first = heartbeats.partition_point(|h| h.latest_time < hb_after);
    let hb = heartbeats[first..]
        .iter()
        .find(|h| h.path == to && h.time >= hb_after && h.frame <= switch.frame)
        .map(|h| Point::frame(h.frame, h.time, "first HEARTBEAT on the path"));
    let data = new_data
        .first_in_segment
        .map(|m| m.point("first DATA on the path"))
        .or(Some(first_new_data));
    Recognition {
        link_up_to_heartbeat: Component::from_points(
            link_up,
            hb,
            "no link_up event (give --events) or no HEARTBEAT after it",
        ),
        heartbeat_to_data: Component::from_points(
            hb,
            data,
            "no HEARTBEAT on the path before DATA returned",
        ),
        link_up_to_data: Component::from_points(link_up, data, "no link_up event (give --events)"),
    }
}

#[cfg(test)]
mod tests {
    //! Link availability recognition (docs/metrics.md), from its own
    //! inputs.
    use super::super::anchors::{Anchor, AnchorKind};
    use super::super::model::Recognition;
    use super::super::state::{HeartbeatRecord, PathData};
    use super::super::switch::tests::at;
    use super::{recognition, HandoverConfig};
    use crate::events::PathId;
    use crate::time::Timestamp;

    const BACK: PathId = 0;
    const OTHER: PathId = 1;

    fn heartbeat(path: PathId, frame: u64, ms: i64) -> HeartbeatRecord {
        HeartbeatRecord {
            path,
            frame,
            time: Timestamp(ms * 1_000_000),
            ack: None,
            latest_time: Timestamp(ms * 1_000_000),
        }
    }

    fn link_up(ms: i64) -> Anchor {
        Anchor {
            time: Timestamp(ms * 1_000_000),
            kind: AnchorKind::LinkUp,
            address: None,
            interface: None,
        }
    }

    /// The segment the switch ends began at 100 ms (frame 10) on the
    /// path left; the first DATA back on `BACK` is the switch, frame 60
    /// at 700 ms. HEARTBEATs on `BACK` at 250, 400 and 500 ms, and on
    /// another path at 350 ms.
    fn recognise(anchors: Vec<Anchor>, heartbeats: &[HeartbeatRecord]) -> Recognition {
        let config = HandoverConfig {
            anchors,
            ..HandoverConfig::new()
        };
        let old = PathData {
            first_in_segment: Some(at(10, 100)),
            ..PathData::default()
        };
        let switch = at(60, 700);
        let new = PathData {
            first_in_segment: Some(switch),
            ..PathData::default()
        };
        let first_new = switch.point("first new DATA on the new path");
        recognition(&config, heartbeats, BACK, &old, &new, switch, first_new)
    }

    fn heartbeats() -> [HeartbeatRecord; 4] {
        [
            heartbeat(BACK, 25, 250),
            heartbeat(OTHER, 35, 350),
            heartbeat(BACK, 40, 400),
            heartbeat(BACK, 50, 500),
        ]
    }

    #[test]
    fn recognition_runs_from_link_up_to_the_first_heartbeat_after_it_to_the_first_data_back() {
        // link_up 300 ms (the one at 50 ms is before the segment) → the
        // HEARTBEAT at 400 ms: 100 ms; → DATA at 700 ms: 300 ms; in all
        // 400 ms.
        let r = recognise(vec![link_up(50), link_up(300)], &heartbeats());
        assert_eq!(r.link_up_to_heartbeat.ms, Some(100.0));
        assert_eq!(r.heartbeat_to_data.ms, Some(300.0));
        assert_eq!(r.link_up_to_data.ms, Some(400.0));
        assert_eq!(r.heartbeat_to_data.from.and_then(|p| p.frame), Some(40));
        // A link_up before the segment alone is not this return's.
        let r = recognise(vec![link_up(50)], &heartbeats());
        assert_eq!(
            (r.link_up_to_data.ms, r.heartbeat_to_data.ms),
            (None, Some(450.0))
        );
    }

    #[test]
    fn without_events_the_heartbeat_to_data_part_is_still_given() {
        // The first HEARTBEAT on the path in the segment, 250 ms → 700 ms.
        let r = recognise(Vec::new(), &heartbeats());
        assert_eq!(r.heartbeat_to_data.ms, Some(450.0));
        assert_eq!(
            (r.link_up_to_heartbeat.ms, r.link_up_to_data.ms),
            (None, None)
        );
        assert_eq!(
            r.link_up_to_data.missing.as_deref(),
            Some("no link_up event (give --events)")
        );
    }

    #[test]
    fn the_first_heartbeat_in_frame_order_counts_when_capture_time_goes_back() {
        // The HEARTBEAT on `BACK` at frame 25 is stamped 650 ms, those
        // after it earlier (the clock went back): it is still the first
        // after the segment began at 100 ms, 650 → 700 ms.
        let mut a = super::super::state::Association::default();
        for (path, frame, ms) in [
            (OTHER, 20, 50),
            (BACK, 25, 650),
            (OTHER, 30, 60),
            (OTHER, 32, 70),
            (BACK, 40, 400),
        ] {
            a.heartbeat(path, at(frame, ms));
        }
        let r = recognise(Vec::new(), &a.heartbeats);
        assert_eq!(r.heartbeat_to_data.from.and_then(|p| p.frame), Some(25));
        assert_eq!(r.heartbeat_to_data.ms, Some(50.0));
    }

    #[test]
    fn a_heartbeat_after_the_switch_is_not_the_recognition() {
        let r = recognise(vec![link_up(300)], &[heartbeat(BACK, 61, 710)]);
        assert_eq!(
            (r.link_up_to_heartbeat.ms, r.heartbeat_to_data.ms),
            (None, None)
        );
        assert_eq!(r.link_up_to_data.ms, Some(400.0));
    }
}
