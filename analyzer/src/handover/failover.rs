//! Failover: T3 expiries charged to a path, the failover details of a
//! switch (implied RTO, observed PMR, detection and failover time) and
//! the failover times these predict (with RTO backoff, with a fixed RTO).

use super::anchors::AnchorKind;
use super::mark::Mark;
use super::model::{Component, Expiry, Failover, Point, SpuriousExpiryRef, SwitchClass};
use super::state::{Direction, PathData};
use super::{HandoverConfig, HandoverEngine};
use crate::events::{AssocId, EndpointId, PathId};
use crate::time::{Nanos, Timestamp};
use crate::track::path::PathStatus;
use std::net::IpAddr;

/// T3 expiries remembered per direction for the failover series.
const EXPIRY_HISTORY: usize = 256;

/// How soon after the switch the HEARTBEAT whose unanswered predecessor
/// made the old path fail can leave: Linux counts the error when its
/// HEARTBEAT timer sends the next one (sctp_do_8_2_transport_strike from
/// SCTP_CMD_TRANSPORT_HB_SENT), moves the queued DATA in the same run and
/// sends it first (30 µs later in `eklund-tuning`, 34 µs in
/// `bokor-paper-return-rto1000`).
const HEARTBEAT_AFTER_SWITCH: Nanos = Nanos(1_000_000);

impl Direction {
    /// DATA on the failed path after its last expiry restarts its T3 timer
    /// (new DATA, or a retransmission sent on the failed path itself).
    pub(super) fn note_timer_restart(&mut self, path: PathId, mark: Mark) {
        if let Some((failed, e, _)) = self.expiries.back_mut() {
            if *failed == path && e.timer_restart.is_none() && mark.time >= e.time {
                e.timer_restart = Some(mark.point("DATA restarting the T3 timer"));
            }
        }
    }

    /// The expiries charged to the old path during its segment, and the
    /// original transmission of the first TSN that timed out.
    pub(super) fn charged_expiries(
        &self,
        old: PathId,
        old_data: &PathData,
    ) -> (Vec<Expiry>, Option<Point>) {
        let charged = || {
            self.expiries.iter().filter(|(p, e, _)| {
                *p == old
                    && old_data
                        .first_in_segment
                        .is_some_and(|f| e.frame >= f.frame)
            })
        };
        let expiries: Vec<Expiry> = charged().map(|(_, e, _)| e.clone()).collect();
        let first_unanswered = charged()
            .next()
            .and_then(|(_, _, first)| *first)
            .map(|first| first.point("first unanswered transmission"));
        (expiries, first_unanswered)
    }
}

impl HandoverEngine {
    /// The old path of a failover became potentially failed or inactive
    /// (`status`, at `error_count`) at an unanswered HEARTBEAT's count,
    /// right after the switch: that error, not the last expiry, is the one
    /// the sender moved at (see [`HEARTBEAT_AFTER_SWITCH`]), so the
    /// failover's count, state, observed PMR (or PFMR) and predictions are
    /// the transition's. Only while the handover is still held (its
    /// window open), and only when the analysis' thresholds say this
    /// error crossed one: a sender with a higher Path.Max.Retrans than
    /// `--pmr` is not seen here.
    pub(super) fn transition_after_switch(
        &mut self,
        association: AssocId,
        path: PathId,
        status: PathStatus,
        error_count: u32,
        at: Mark,
    ) {
        let HandoverEngine {
            config,
            associations,
            ..
        } = self;
        let Some(a) = associations.get_mut(association) else {
            return;
        };
        let from_heartbeat = a
            .heartbeats
            .last()
            .is_some_and(|h| h.path == path && h.frame == at.frame);
        if !from_heartbeat {
            return;
        }
        // The newest held failover from `path` within the window: only the
        // held failovers are walked, newest first, stopping once neither an
        // entry nor any older one can be in it (its latest switch time so
        // far is already too old; that holds when capture time goes back).
        let in_window = |switch_time: Timestamp| {
            (0..=HEARTBEAT_AFTER_SWITCH.0).contains(&at.time.since(switch_time).0)
        };
        let mut found = None;
        for (&index, &(switch_time, latest_so_far)) in a.held_failovers.iter().rev() {
            if at.time.since(latest_so_far) > HEARTBEAT_AFTER_SWITCH {
                break;
            }
            if !in_window(switch_time) {
                continue;
            }
            let slot = index.checked_sub(a.handed_on);
            let held = slot
                .and_then(|i| a.handovers.get(i))
                .and_then(Option::as_ref);
            if held.is_some_and(|h| h.from_path == path && h.switch_frame < at.frame) {
                found = slot;
                break;
            }
        }
        let Some(h) = found
            .and_then(|i| a.handovers.get_mut(i))
            .and_then(Option::as_mut)
        else {
            return;
        };
        let Some(f) = h.failover.as_mut() else {
            return;
        };
        let counted = f
            .observed_pmr
            .or(f.observed_pf_retrans)
            .map_or(0, |x| x + 1);
        if error_count <= counted {
            return;
        }
        let suffix = reason_suffix(f);
        let rto = rto_estimate(&f.expiries, f.first_unanswered).2;
        thresholds_seen(f, error_count.checked_sub(1), status, rto, config);
        if h.class == SwitchClass::Failover {
            if let Some(base) = h.class_reason.strip_suffix(suffix.as_str()) {
                h.class_reason = format!("{base}{}", reason_suffix(f));
            }
        }
    }

    /// An ADD-IP of `address` took effect: its peer's transport to it is
    /// new (for an address added again after a DELETE-IP, the tracker's
    /// Association::renew_transport), so the paths to it are active again
    /// without a `path_active` event (Linux notifies no change of a new
    /// transport). They still count as failed earlier in the association.
    pub(super) fn transport_renewed(&mut self, association: AssocId, address: IpAddr) {
        let Some(a) = self.associations.get_mut(association) else {
            return;
        };
        let to_it: Vec<PathId> = (0..a.paths.len())
            .filter(|&i| a.paths[i].1 == address)
            .filter_map(|i| PathId::try_from(i).ok())
            .collect();
        for p in to_it {
            if a.status(p) != PathStatus::Active {
                a.set_status(p, PathStatus::Active);
            }
        }
    }

    /// A timeout-driven retransmission (frame, time, TSN) of DATA last
    /// sent on `failed`, whose error counter it left at `error_count`: the
    /// start of a new expiry (as the tracker decided) or part of the
    /// latest one of that path.
    pub(super) fn record_expiry(
        &mut self,
        association: AssocId,
        sender: EndpointId,
        failed: PathId,
        (frame, time, tsn): (u64, Timestamp, u32),
        new_expiry: bool,
        error_count: u32,
    ) {
        let d = &mut self.assoc(association).directions[sender];
        let latest = d.expiries.iter_mut().rev().find(|(p, _, _)| *p == failed);
        match latest {
            Some((_, e, _)) if !new_expiry => {
                e.retransmissions += 1;
            }
            _ => {
                if d.expiries.len() == EXPIRY_HISTORY {
                    d.expiries.pop_front();
                }
                // Its original transmission, looked up now: the TSN history
                // keeps only what later switches still need.
                let first_transmission = d.tsn(tsn).map(|info| info.first);
                d.expiries.push_back((
                    failed,
                    Expiry {
                        frame,
                        time,
                        first_tsn: tsn,
                        retransmissions: 1,
                        timer_restart: None,
                        error_count,
                    },
                    first_transmission,
                ));
            }
        }
    }
}

/// What the tracker told of the old path by the switch: its inferred
/// state, and the error counters cleared and expiries found spurious in
/// the association (docs/metrics.md, "Spurious timeouts and counter
/// resets").
pub(super) struct Seen<'a> {
    pub(super) old_state: PathStatus,
    pub(super) clears: &'a [(PathId, Mark, &'static str)],
    pub(super) spurious: &'a [(PathId, u64, Mark)],
}

/// What the failover's class reason adds: the state the old path was
/// left in, and the resets and spurious expiries that lengthened it.
pub(super) fn reason_suffix(f: &Failover) -> String {
    let mut s = String::new();
    match f.old_path_state {
        // (Only when the sender moved right at the threshold: see
        // `observed_pf_retrans`.)
        PathStatus::PotentiallyFailed if f.observed_pf_retrans.is_some() => {
            s.push_str("; the old path potentially failed (RFC 7829), not inactive")
        }
        PathStatus::Inactive => s.push_str("; the old path inactive"),
        _ => {}
    }
    if !f.counter_resets.is_empty() {
        let frames: Vec<String> = f
            .counter_resets
            .iter()
            .map(|p| p.frame.map_or_else(|| "?".into(), |f| f.to_string()))
            .collect();
        s.push_str(&format!(
            "; its error counter was cleared in frame{} {} before the switch",
            if frames.len() == 1 { "" } else { "s" },
            frames.join(", ")
        ));
    }
    if !f.spurious_expiries.is_empty() {
        let list: Vec<String> = f
            .spurious_expiries
            .iter()
            .map(|x| format!("path {} frame {}", x.path, x.expiry_frame))
            .collect();
        s.push_str(&format!(
            "; spurious T3 expir{} ({})",
            if list.len() == 1 { "y" } else { "ies" },
            list.join(", ")
        ));
    }
    s
}

/// The failover details of a switch whose old path had expiries.
#[allow(clippy::too_many_arguments)]
pub(super) fn failover(
    expiries: &[Expiry],
    first_unanswered: Option<Point>,
    config: &HandoverConfig,
    switch: Mark,
    new_data: &PathData,
    first_new_data: Point,
    old: PathId,
    seen: Seen<'_>,
) -> Failover {
    let (first_expiry_after, implied, rto) = rto_estimate(expiries, first_unanswered);
    let intervals: Vec<Nanos> = expiries
        .windows(2)
        .map(|w| w[1].time.since(w[0].time))
        .collect();
    // The path went inactive when its error count exceeded PMR: the count
    // at the last expiry before the switch is PMR + 1. Expiries before a
    // clear (a SACK for DATA last sent on the path) do not count.
    // At the potentially-failed state the count is PFMR + 1 instead.
    // (An unanswered HEARTBEAT counted right after the switch may still
    // raise it: HandoverEngine::transition_after_switch.)
    let exceeded = expiries.last().and_then(|e| e.error_count.checked_sub(1));
    let first_expiry = expiries.first().map_or(switch.time, |e| e.time);
    let counter_resets = seen
        .clears
        .iter()
        .filter(|(p, m, _)| *p == old && m.time >= first_expiry && m.frame < switch.frame)
        .map(|(_, m, by)| {
            m.point(if *by == "sack" {
                "SACK clearing the error counter"
            } else {
                "HEARTBEAT ACK clearing the error counter"
            })
        })
        .collect();
    let spurious_expiries = seen
        .spurious
        .iter()
        .filter(|(_, _, m)| m.frame < switch.frame)
        .filter(|(_, expiry, _)| {
            first_unanswered
                .and_then(|p| p.frame)
                .is_none_or(|f| *expiry >= f)
        })
        .map(|(path, expiry, m)| SpuriousExpiryRef {
            path: *path,
            expiry_frame: *expiry,
            recognised: m.point("SACK reporting the retransmitted TSN twice"),
        })
        .collect();
    let link_down = config
        .anchors
        .iter()
        .rfind(|x| x.kind == AnchorKind::LinkDown && x.time <= switch.time)
        .map(|x| Point::anchor(x.time, "link_down event"));
    let start = link_down.or(first_unanswered);
    let first_alternate = new_data
        .first_in_segment
        .filter(|m| start.is_none_or(|s| m.time >= s.time))
        .map(|m| m.point("first DATA on the alternate path"))
        .unwrap_or(first_new_data);
    let mut f = Failover {
        expiries: expiries.to_vec(),
        first_unanswered,
        first_expiry_after_ms: first_expiry_after.map(Nanos::as_millis_f64),
        expiry_intervals_ms: intervals.iter().map(|n| n.as_millis_f64()).collect(),
        implied_rto_ms: implied.iter().map(|n| n.as_millis_f64()).collect(),
        rto_estimate_ms: rto.map(Nanos::as_millis_f64),
        observed_pmr: None,
        old_path_state: seen.old_state,
        observed_pf_retrans: None,
        counter_resets,
        spurious_expiries,
        detection: Component::from_points(
            start,
            Some(first_alternate),
            "no start of the failure known",
        ),
        failover_time: Component::from_points(
            start,
            Some(first_new_data),
            "no start of the failure known",
        ),
        predicted_backoff_ms: None,
        predicted_fixed_rto_ms: None,
    };
    thresholds_seen(&mut f, exceeded, seen.old_state, rto, config);
    f
}

/// The delay from the first unanswered transmission to the first expiry,
/// the implied RTO of each later expiry, and the RTO estimate: their
/// median (with one expiry, that first delay).
fn rto_estimate(
    expiries: &[Expiry],
    first_unanswered: Option<Point>,
) -> (Option<Nanos>, Vec<Nanos>, Option<Nanos>) {
    let first_expiry_after = first_unanswered
        .zip(expiries.first())
        .map(|(p, e)| e.time.since(p.time));
    let implied: Vec<Nanos> = expiries
        .windows(2)
        .filter_map(|w| w[0].timer_restart.map(|r| w[1].time.since(r.time)))
        .collect();
    let rto = if implied.is_empty() {
        first_expiry_after
    } else {
        let mut sorted = implied.clone();
        sorted.sort();
        Some(sorted[sorted.len() / 2])
    };
    (first_expiry_after, implied, rto)
}

/// What the error count the sender moved at (`exceeded` = that count − 1)
/// and the old path's state then say: the observed PMR, or the PFMR when
/// the sender moved right at the potentially-failed threshold, and the
/// predictions from the observed PMR and the RTO estimate.
fn thresholds_seen(
    f: &mut Failover,
    exceeded: Option<u32>,
    old_state: PathStatus,
    rto: Option<Nanos>,
    config: &HandoverConfig,
) {
    // At the potentially-failed state only when the sender moved right at
    // the threshold: a sender with the state off (or another PFMR) that
    // moved after more expiries shows its Path.Max.Retrans instead, while
    // the inferred state (by the thresholds given) is still reported.
    let at_pf = old_state == PathStatus::PotentiallyFailed
        && exceeded.is_some()
        && exceeded == config.pf_retrans;
    f.old_path_state = old_state;
    f.observed_pmr = exceeded.filter(|_| !at_pf);
    f.observed_pf_retrans = exceeded.filter(|_| at_pf);
    f.predicted_backoff_ms = match (rto, f.observed_pmr) {
        (Some(r), Some(pmr)) => Some(
            (0..pmr)
                .map(|i| {
                    let term = Nanos(r.0.saturating_mul(1i64 << i.min(30)));
                    config.rto_max.map_or(term, |m| term.min(m)).as_millis_f64()
                })
                .sum(),
        ),
        _ => None,
    };
    f.predicted_fixed_rto_ms = rto
        .zip(f.observed_pmr)
        .map(|(r, pmr)| r.as_millis_f64() * f64::from(pmr));
}

#[cfg(test)]
mod tests {
    use crate::handover::{HandoverConfig, SwitchClass};
    use crate::track::path::PathStatus;
    use crate::track::script::{self, Script};
    use crate::track::TrackConfig;
    use std::net::IpAddr;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("address literal")
    }

    #[test]
    fn a_heartbeat_counted_right_after_the_switch_gives_the_observed_pmr() {
        // eklund-tuning in miniature (Path.Max.Retrans 2, the state off):
        // DATA 500 to A1 times out twice (counts 1 and 2); the HEARTBEAT
        // timer then finds the HEARTBEAT of 2 s unanswered and sends the
        // next, the third error: Linux moves the queued DATA 501 to A2 in
        // the same run and sends it first, 30 µs before that HEARTBEAT.
        // The sender's Path.Max.Retrans is 2, not the last expiry's 1.
        let (a1, a2, c) = (ip("10.0.0.1"), ip("10.0.0.2"), ip("10.0.1.1"));
        let track = TrackConfig {
            path_max_retrans: 2,
            pf_retrans: None,
            ..TrackConfig::default()
        };
        let handover = HandoverConfig {
            pf_retrans: None,
            ..HandoverConfig::new()
        };
        let mut s = Script::new(track, handover);
        s.handshake(a1, &[a1, a2], c);
        s.send(10_000, 1, (c, a2), &[script::heartbeat(false, b"a2")]);
        s.send(10_100, 0, (a2, c), &[script::heartbeat(true, b"a2")]);
        s.send(20_000, 1, (c, a1), &[script::data(500)]);
        s.send(1_020_000, 1, (c, a1), &[script::data(500)]);
        s.send(2_000_000, 1, (c, a1), &[script::heartbeat(false, b"h1")]);
        s.send(3_020_000, 1, (c, a1), &[script::data(500)]);
        let switch = s.send(4_000_000, 1, (c, a2), &[script::data(501)]);
        let hb = s.send(4_000_030, 1, (c, a1), &[script::heartbeat(false, b"h2")]);
        let (events, handovers) = s.finish();
        assert!(events.iter().any(|e| e.frame == hb
            && matches!(
                e.kind,
                crate::events::EventKind::PathInactive { error_count: 3, .. }
            )));
        let [h] = &handovers[..] else {
            panic!("one handover: {handovers:?}");
        };
        assert_eq!((h.switch_frame, h.class), (switch, SwitchClass::Failover));
        let Some(f) = &h.failover else {
            panic!("a failover record");
        };
        assert_eq!(f.expiries.len(), 2);
        assert_eq!(f.expiries[1].error_count, 2);
        assert_eq!(f.observed_pmr, Some(2));
        assert_eq!(f.old_path_state, PathStatus::Inactive);
        assert_eq!(
            f.predicted_fixed_rto_ms
                .zip(f.rto_estimate_ms)
                .map(|(p, r)| p / r),
            Some(2.0)
        );
        assert!(
            h.class_reason.ends_with("; the old path inactive"),
            "{}",
            h.class_reason
        );
    }

    #[test]
    fn a_heartbeat_after_the_switch_counts_for_the_newest_held_failover_of_its_path_in_the_window()
    {
        // The eklund-tuning miniature's failover (from the path to A1),
        // placed as five held switches of one association, a HEARTBEAT to
        // A1 in frame 1000 at 10 s finding the path inactive at count 3:
        // 0: from A1, 5 ms before (outside the window), held;
        // 1: from A1, 0.5 ms before, held: the one the count is for;
        // 2: from A1, 0.2 ms before, handed on already;
        // 3: from A2, 0.1 ms before, held;
        // 4: from A1, 0.3 ms after (capture time went back), held.
        let (a1, a2, c) = (ip("10.0.0.1"), ip("10.0.0.2"), ip("10.0.1.1"));
        let track = TrackConfig {
            path_max_retrans: 2,
            pf_retrans: None,
            ..TrackConfig::default()
        };
        let config = HandoverConfig {
            pf_retrans: None,
            ..HandoverConfig::new()
        };
        let mut s = Script::new(track, config.clone());
        s.handshake(a1, &[a1, a2], c);
        s.send(10_000, 1, (c, a2), &[script::heartbeat(false, b"a2")]);
        s.send(10_100, 0, (a2, c), &[script::heartbeat(true, b"a2")]);
        s.send(20_000, 1, (c, a1), &[script::data(500)]);
        s.send(1_020_000, 1, (c, a1), &[script::data(500)]);
        s.send(3_020_000, 1, (c, a1), &[script::data(500)]);
        s.send(4_000_000, 1, (c, a2), &[script::data(501)]);
        let (_, handovers) = s.finish();
        let mut base = only(handovers);
        let Some(f) = base.failover.as_mut() else {
            panic!("a failover record");
        };
        // As if the switch's own expiries had shown count 1 only.
        f.observed_pmr = Some(0);
        let from_a1 = base.from_path;
        let from_a2 = base.to_path;
        let ten_s_us = 10_000_000;
        let switches = [
            (from_a1, ten_s_us - 5_000),
            (from_a1, ten_s_us - 500),
            (from_a1, ten_s_us - 200),
            (from_a2, ten_s_us - 100),
            (from_a1, ten_s_us + 300),
        ];
        let mut engine = super::HandoverEngine::new(config);
        let a = engine.assoc(0);
        for (index, &(from, us)) in switches.iter().enumerate() {
            let mut h = base.clone();
            h.from_path = from;
            h.switch_frame = 100 + index as u64;
            h.switch_time = Timestamp(us * 1000);
            let latest = a.held_failovers.values().next_back().map(|&(_, l)| l);
            let latest = latest.map_or(h.switch_time, |l| l.max(h.switch_time));
            a.held_failovers.insert(index, (h.switch_time, latest));
            a.handovers.push(Some(Box::new(h)));
        }
        a.directions[1].settled.push(2);
        let at = at(1000, 10_000);
        a.heartbeats.push(super::super::state::HeartbeatRecord {
            path: from_a1,
            frame: at.frame,
            time: at.time,
            ack: None,
            latest_time: at.time,
        });
        let (_, handed_on) = engine.take_part(0, &[]);
        assert_eq!(handed_on.len(), 1);
        engine.transition_after_switch(0, from_a1, PathStatus::Inactive, 3, at);
        let (_, held) = engine.finish();
        let observed: Vec<(u64, Option<u32>)> = held
            .iter()
            .map(|h| {
                (
                    h.switch_frame,
                    h.failover.as_ref().and_then(|f| f.observed_pmr),
                )
            })
            .collect();
        assert_eq!(
            observed,
            [
                (100, Some(0)),
                (101, Some(2)),
                (103, Some(0)),
                (104, Some(0))
            ]
        );
    }

    use super::super::anchors::{Anchor, AnchorKind};
    use super::super::model::{Expiry, Failover, Point};
    use super::super::state::{Direction, PathData};
    use super::super::switch::tests::{at, only, Feed, CN};
    use super::{failover, reason_suffix, Seen};
    use crate::events::{EventKind, PathId};
    use crate::time::{Nanos, Timestamp};

    const OLD: PathId = 0;
    const NEW: PathId = 1;

    /// An expiry in `frame` at `ms`, the error count after it, and the
    /// DATA that restarted its timer (ms).
    fn expiry(frame: u64, ms: i64, error_count: u32, restart: Option<i64>) -> Expiry {
        Expiry {
            frame,
            time: Timestamp(ms * 1_000_000),
            first_tsn: 500,
            retransmissions: 1,
            timer_restart: restart.map(|r| Point::anchor(Timestamp(r * 1_000_000), "restart")),
            error_count,
        }
    }

    /// The failover of a switch in frame 100 at `switch_ms`, the first
    /// unanswered transmission in frame 1 at 0 ms, with nothing else
    /// seen than the old path's `state`.
    fn failover_of(
        expiries: &[Expiry],
        switch_ms: i64,
        state: PathStatus,
        config: &HandoverConfig,
    ) -> Failover {
        let switch = at(100, switch_ms);
        let seen = Seen {
            old_state: state,
            clears: &[],
            spurious: &[],
        };
        failover(
            expiries,
            Some(at(1, 0).point("first unanswered transmission")),
            config,
            switch,
            &PathData::default(),
            switch.point("first new DATA on the new path"),
            OLD,
            seen,
        )
    }

    #[test]
    fn the_rto_estimate_is_the_median_of_the_implied_rtos_of_the_backed_off_runs() {
        // As honda-dad (RTO 200 → 400 → 800 ms): expiries at 200, 620,
        // 1460 and 3100 ms, each timer restarted by DATA 10 ms after the
        // expiry: implied RTOs 620 − 210 = 410, 1460 − 630 = 830,
        // 3100 − 1470 = 1630 ms; median 830 ms. Intervals 420, 840,
        // 1640 ms; the first expiry 200 ms after the first unanswered
        // transmission.
        let expiries = [
            expiry(10, 200, 1, Some(210)),
            expiry(20, 620, 2, Some(630)),
            expiry(30, 1460, 3, Some(1470)),
            expiry(40, 3100, 4, None),
        ];
        let f = failover_of(
            &expiries,
            3200,
            PathStatus::Inactive,
            &HandoverConfig::new(),
        );
        assert_eq!(f.implied_rto_ms, [410.0, 830.0, 1630.0]);
        assert_eq!(f.expiry_intervals_ms, [420.0, 840.0, 1640.0]);
        assert_eq!(f.rto_estimate_ms, Some(830.0));
        assert_eq!(f.first_expiry_after_ms, Some(200.0));
    }

    #[test]
    fn with_one_expiry_the_rto_estimate_is_its_delay_after_the_first_unanswered_transmission() {
        let f = failover_of(
            &[expiry(10, 1000, 1, None)],
            1100,
            PathStatus::Inactive,
            &HandoverConfig::new(),
        );
        assert!(f.implied_rto_ms.is_empty());
        assert_eq!(f.rto_estimate_ms, Some(1000.0));
    }

    #[test]
    fn the_observed_pmr_is_the_last_error_count_minus_one_and_predicts_the_failover_time() {
        // Fixed RTO 200 ms: expiries at 200, 400, 600 ms with counts 1,
        // 2, 3: observed PMR 2. Bokor's eq. (3): 200 + 400 = 600 ms;
        // eq. (4): 2 × 200 = 400 ms. With RTO.Max 300 ms the second term
        // is capped: 200 + 300 = 500 ms.
        let expiries = [
            expiry(10, 200, 1, Some(200)),
            expiry(20, 400, 2, Some(400)),
            expiry(30, 600, 3, None),
        ];
        let f = failover_of(&expiries, 610, PathStatus::Inactive, &HandoverConfig::new());
        assert_eq!(f.observed_pmr, Some(2));
        assert_eq!(f.observed_pf_retrans, None);
        assert_eq!(f.predicted_backoff_ms, Some(600.0));
        assert_eq!(f.predicted_fixed_rto_ms, Some(400.0));
        let capped = HandoverConfig {
            rto_max: Some(Nanos::from_millis(300)),
            ..HandoverConfig::new()
        };
        let f = failover_of(&expiries, 610, PathStatus::Inactive, &capped);
        assert_eq!(f.predicted_backoff_ms, Some(500.0));
        assert_eq!(reason_suffix(&f), "; the old path inactive");
    }

    #[test]
    fn a_pmr_of_five_with_rto_one_second_predicts_31_s_with_backoff_and_5_s_fixed() {
        // Bokor, Huszák and Jeney's defaults: RTO 1 s, PMR 5 (the sixth
        // expiry's count is 6): 1 + 2 + 4 + 8 + 16 = 31 s, 5 × 1 = 5 s.
        let expiries: Vec<Expiry> = (1..=6)
            .map(|k| expiry(10 * k, 1000 * k as i64, k as u32, Some(1000 * k as i64)))
            .collect();
        let f = failover_of(
            &expiries,
            6100,
            PathStatus::Inactive,
            &HandoverConfig::new(),
        );
        assert_eq!(f.rto_estimate_ms, Some(1000.0));
        assert_eq!(f.observed_pmr, Some(5));
        assert_eq!(f.predicted_backoff_ms, Some(31_000.0));
        assert_eq!(f.predicted_fixed_rto_ms, Some(5000.0));
    }

    #[test]
    fn at_the_potentially_failed_threshold_the_count_gives_the_pfmr_and_no_pmr() {
        // Linux's default PFMR 0: the sender moves at the first expiry
        // (count 1), the path potentially failed.
        let config = HandoverConfig {
            pf_retrans: Some(0),
            ..HandoverConfig::new()
        };
        let one = [expiry(10, 200, 1, None)];
        let f = failover_of(&one, 210, PathStatus::PotentiallyFailed, &config);
        assert_eq!((f.observed_pf_retrans, f.observed_pmr), (Some(0), None));
        assert_eq!(
            (f.predicted_backoff_ms, f.predicted_fixed_rto_ms),
            (None, None)
        );
        assert_eq!(
            reason_suffix(&f),
            "; the old path potentially failed (RFC 7829), not inactive"
        );
        // Inferred potentially failed, but the sender moved after more
        // expiries (its state off): the count is its Path.Max.Retrans.
        let two = [expiry(10, 200, 1, Some(200)), expiry(20, 400, 2, None)];
        let f = failover_of(&two, 410, PathStatus::PotentiallyFailed, &config);
        assert_eq!((f.observed_pf_retrans, f.observed_pmr), (None, Some(1)));
        assert_eq!(reason_suffix(&f), "");
    }

    #[test]
    fn detection_and_failover_time_start_at_the_link_down_event_else_at_the_first_unanswered_transmission(
    ) {
        // First unanswered transmission 0 ms, first DATA on the alternate
        // path 400 ms, the switch 700 ms; link_down at −80 ms.
        let alternate = PathData {
            first_in_segment: Some(at(50, 400)),
            ..PathData::default()
        };
        let run = |config: &HandoverConfig, alternate: &PathData| {
            let switch = at(100, 700);
            let seen = Seen {
                old_state: PathStatus::Inactive,
                clears: &[],
                spurious: &[],
            };
            failover(
                &[expiry(10, 200, 1, None)],
                Some(at(1, 0).point("first unanswered transmission")),
                config,
                switch,
                alternate,
                switch.point("first new DATA on the new path"),
                OLD,
                seen,
            )
        };
        let ms = |c: &super::super::model::Component| c.ms;
        let f = run(&HandoverConfig::new(), &alternate);
        assert_eq!(
            (ms(&f.detection), ms(&f.failover_time)),
            (Some(400.0), Some(700.0))
        );
        let with_link_down = HandoverConfig {
            anchors: vec![Anchor {
                time: Timestamp(-80_000_000),
                kind: AnchorKind::LinkDown,
                address: None,
                interface: None,
            }],
            ..HandoverConfig::new()
        };
        let f = run(&with_link_down, &alternate);
        assert_eq!(
            (ms(&f.detection), ms(&f.failover_time)),
            (Some(480.0), Some(780.0))
        );
        // DATA on the alternate path before the failure started is not
        // its detection: the switch is.
        let early = PathData {
            first_in_segment: Some(at(0, -100)),
            ..PathData::default()
        };
        let f = run(&HandoverConfig::new(), &early);
        assert_eq!(ms(&f.detection), Some(700.0));
    }

    #[test]
    fn the_old_paths_counter_resets_between_its_first_expiry_and_the_switch_are_listed() {
        let clears = [
            (OLD, at(5, 100), "sack"),           // before the first expiry
            (NEW, at(15, 300), "sack"),          // another path's
            (OLD, at(25, 500), "heartbeat_ack"), // listed
            (OLD, at(100, 900), "sack"),         // the switch's own frame
        ];
        let spurious = [
            (NEW, 0, at(12, 250)),   // an expiry before the first unanswered transmission
            (NEW, 30, at(35, 600)),  // listed
            (NEW, 40, at(101, 950)), // recognised after the switch
        ];
        let switch = at(100, 900);
        let seen = Seen {
            old_state: PathStatus::Inactive,
            clears: &clears,
            spurious: &spurious,
        };
        let f = failover(
            &[expiry(10, 200, 1, Some(200)), expiry(20, 400, 2, None)],
            Some(at(1, 0).point("first unanswered transmission")),
            &HandoverConfig::new(),
            switch,
            &PathData::default(),
            switch.point("first new DATA on the new path"),
            OLD,
            seen,
        );
        let frames: Vec<Option<u64>> = f.counter_resets.iter().map(|p| p.frame).collect();
        assert_eq!(frames, [Some(25)]);
        let spurious: Vec<u64> = f.spurious_expiries.iter().map(|x| x.expiry_frame).collect();
        assert_eq!(spurious, [30]);
        assert_eq!(
            reason_suffix(&f),
            "; the old path inactive; its error counter was cleared in frame 25 before the \
             switch; spurious T3 expiry (path 1 frame 30)"
        );
    }

    #[test]
    fn the_expiries_charged_are_the_old_paths_since_its_segment_began() {
        // The old path's segment began in frame 20 (at 100 ms).
        let mut d = Direction::default();
        d.expiries
            .push_back((OLD, expiry(10, 50, 1, None), Some(at(2, 10))));
        d.expiries
            .push_back((NEW, expiry(25, 150, 1, None), Some(at(3, 20))));
        d.expiries
            .push_back((OLD, expiry(30, 300, 1, None), Some(at(21, 110))));
        d.expiries
            .push_back((OLD, expiry(40, 700, 2, None), Some(at(22, 120))));
        let old = PathData {
            first_in_segment: Some(at(20, 100)),
            ..PathData::default()
        };
        let (charged, first_unanswered) = d.charged_expiries(OLD, &old);
        let frames: Vec<u64> = charged.iter().map(|e| e.frame).collect();
        assert_eq!(frames, [30, 40]);
        assert_eq!(first_unanswered.and_then(|p| p.frame), Some(21));
    }

    #[test]
    fn the_first_data_on_the_failed_path_after_its_latest_expiry_restarts_its_timer() {
        let mut d = Direction::default();
        d.expiries.push_back((OLD, expiry(10, 200, 1, None), None));
        // Another path's DATA, and DATA stamped before the expiry, do not.
        d.note_timer_restart(NEW, at(11, 210));
        d.note_timer_restart(OLD, at(12, 199));
        // The first after it does; a later one does not replace it.
        d.note_timer_restart(OLD, at(13, 230));
        d.note_timer_restart(OLD, at(14, 260));
        let restart = d.expiries.back().and_then(|(_, e, _)| e.timer_restart);
        assert_eq!(restart.and_then(|p| p.frame), Some(13));
    }

    /// Two expiries of C → A1 (counts 1 and 2), the switch to C → A2 at
    /// 3020 ms, then a HEARTBEAT on C → A1 `after_us` later at which the
    /// path is inferred inactive with count 3.
    fn heartbeat_after_the_switch(after_us: i64) -> Failover {
        let (mut f, [c_a1, c_a2, ..]) = Feed::two_homed(HandoverConfig::new());
        f.new_data(10_000, CN, c_a1, 500);
        f.retransmit(1_010_000, CN, c_a1, 500, Some((c_a1, true, 1)));
        f.retransmit(3_010_000, CN, c_a1, 500, Some((c_a1, true, 2)));
        f.new_data(3_020_000, CN, c_a2, 501);
        f.heartbeat(3_020_000 + after_us, CN, c_a1);
        f.event(EventKind::PathInactive {
            path: c_a1,
            error_count: 3,
        });
        let h = only(f.finish());
        h.failover.expect("a failover record")
    }

    #[test]
    fn an_unanswered_heartbeat_counted_within_1_ms_after_the_switch_is_the_error_the_sender_moved_at(
    ) {
        // 500 µs after: the count is the HEARTBEAT's, 3: PMR 2.
        let f = heartbeat_after_the_switch(500);
        assert_eq!(
            (f.observed_pmr, f.old_path_state),
            (Some(2), PathStatus::Inactive)
        );
        // 1.5 ms after: the last expiry's count, 2: PMR 1.
        let f = heartbeat_after_the_switch(1500);
        assert_eq!(
            (f.observed_pmr, f.old_path_state),
            (Some(1), PathStatus::Active)
        );
    }
}
