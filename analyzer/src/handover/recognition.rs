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
    let hb = heartbeats
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
