//! Failover: T3 expiries charged to a path, the failover details of a
//! switch (implied RTO, observed PMR, detection and failover time) and
//! Bokor's predictions.

use super::anchors::AnchorKind;
use super::model::{Component, Expiry, Failover, Point, SpuriousExpiryRef};
use super::state::{Direction, Mark, PathData};
use super::{HandoverConfig, HandoverEngine};
use crate::events::{AssocId, EndpointId, PathId};
use crate::time::{Nanos, Timestamp};
use crate::track::path::PathStatus;

/// T3 expiries remembered per direction for the failover series.
const EXPIRY_HISTORY: usize = 256;

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
    let first_expiry_after = first_unanswered.map(|p| expiries[0].time.since(p.time));
    let intervals: Vec<Nanos> = expiries
        .windows(2)
        .map(|w| w[1].time.since(w[0].time))
        .collect();
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
    // The path went inactive when its error count exceeded PMR: the count
    // at the last expiry before the switch is PMR + 1. Expiries before a
    // clear (a SACK for DATA last sent on the path) do not count.
    // At the potentially-failed state the count is PFMR + 1 instead.
    let exceeded = expiries.last().and_then(|e| e.error_count.checked_sub(1));
    // At the potentially-failed state only when the sender moved right at
    // the threshold: a sender with the state off (or another PFMR) that
    // moved after more expiries shows its Path.Max.Retrans instead, while
    // the inferred state (by the thresholds given) is still reported.
    let at_pf = seen.old_state == PathStatus::PotentiallyFailed
        && exceeded.is_some()
        && exceeded == config.pf_retrans;
    let observed_pmr = exceeded.filter(|_| !at_pf);
    let observed_pf_retrans = exceeded.filter(|_| at_pf);
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
    let predicted_eq3_ms = match (rto, observed_pmr) {
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
    Failover {
        expiries: expiries.to_vec(),
        first_unanswered,
        first_expiry_after_ms: first_expiry_after.map(Nanos::as_millis_f64),
        expiry_intervals_ms: intervals.iter().map(|n| n.as_millis_f64()).collect(),
        implied_rto_ms: implied.iter().map(|n| n.as_millis_f64()).collect(),
        rto_estimate_ms: rto.map(Nanos::as_millis_f64),
        observed_pmr,
        old_path_state: seen.old_state,
        observed_pf_retrans,
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
        predicted_eq3_ms,
        predicted_eq4_ms: rto
            .zip(observed_pmr)
            .map(|(r, pmr)| r.as_millis_f64() * f64::from(pmr)),
    }
}
