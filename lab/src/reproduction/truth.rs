//! The kernel's own view of a run, read from the harness's events.jsonl
//! (docs/harness.md, "The kernel's own view"): when the correspondent's
//! kernel declared the cut path unreachable and available again, its error
//! counter and T3 expiries by then, and its RTO for the path at the cut.

use anyhow::Context;
use sctp_handover_harness_formats::{parse_log, Event};
use std::path::Path;

/// Epoch nanoseconds.
type Ns = i64;

/// The sampled kinds are polled every 10 ms; a change is visible up to one
/// period (and some scheduling slack) after it happened.
const SAMPLE_NS: Ns = 15_000_000;
/// The polling period of the sampled kinds.
const POLL_NS: Ns = 10_000_000;

/// What the correspondent's kernel said about a failover (and return) of
/// its primary path. Times in ms from the `link_down` (`link_up`) action.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Truth {
    /// The peer address the kernel declared unreachable.
    pub address: Option<String>,
    /// link_down → SCTP_PEER_ADDR_CHANGE ADDR_UNREACHABLE (as read).
    pub unreachable_ms: Option<f64>,
    /// The path's error counter (sctp_diag) last sampled by then.
    pub error_count: Option<u64>,
    /// T3-rtx expiries (all paths, /proc/net/sctp/snmp) between the cut
    /// and the notification.
    pub t3_expiries: Option<u64>,
    /// The kernel's RTO for the path, last sampled before the cut.
    pub rto_at_cut_ms: Option<u64>,
    /// The kernel's SRTT for the path, last sampled before the cut.
    pub srtt_at_cut_ms: Option<u64>,
    /// link_up → ADDR_AVAILABLE for the same address.
    pub available_ms: Option<f64>,
    /// The path's RTO (ms) in force at each T3-rtx expiry the kernel
    /// counted between the cut and ADDR_UNREACHABLE: for each increase of
    /// `t3_rtx_expireds`, the `rto_ms` of the path last sampled at least one
    /// poll (10 ms) before the sample that shows it (the timer that expired
    /// ran for that RTO).
    pub expiry_rtos_ms: Vec<u64>,
    /// When each of those expiries was seen: ms from the cut to the
    /// `kernel_mib` sample that shows the counter's rise (the expiry
    /// happened in the poll period before it).
    pub expiry_seen_ms: Vec<f64>,
    /// The `link_down` and `link_up` actions (epoch seconds).
    pub down_s: Option<f64>,
    pub up_s: Option<f64>,
}

impl Truth {
    /// How much longer than the RTO in force each T3 timer after the first
    /// ran, from the kernel's own counter: the time between two expiries
    /// seen minus the RTO of the second (ms; ± one 10 ms poll each).
    pub fn timer_overruns_ms(&self) -> Vec<f64> {
        self.expiry_seen_ms
            .windows(2)
            .zip(self.expiry_rtos_ms.iter().skip(1))
            .map(|(w, rto)| w[1] - w[0] - *rto as f64)
            .collect()
    }
}

/// The kernel's view of the run in `run_dir`; an events.jsonl that cannot
/// be read, or a line of it that is not an event, is an error naming it.
pub fn read(run_dir: &Path) -> anyhow::Result<Truth> {
    let path = run_dir.join("events.jsonl");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let events = parse_log(&text).with_context(|| format!("reading {}", path.display()))?;
    Ok(of_lines(&events))
}

/// The scripted actions of a run (kind, epoch seconds of the syscall), in
/// time order, from its events.jsonl (the harness's own lines); none when
/// the log cannot be read or a line of it is not an event.
pub fn actions(run_dir: &Path) -> Vec<(String, f64)> {
    let text = std::fs::read_to_string(run_dir.join("events.jsonl")).unwrap_or_default();
    parse_log(&text)
        .unwrap_or_default()
        .into_iter()
        .filter(|l| !l.is_kernel() && l.ok.is_some())
        .map(|l| (l.kind, l.time_ns as f64 / 1e9))
        .collect()
}

fn ms(d: Ns) -> f64 {
    d as f64 / 1e6
}

fn of_lines(lines: &[Event]) -> Truth {
    let mut t = Truth::default();
    let Some(down) = lines
        .iter()
        .find(|l| l.kind == "link_down")
        .map(|l| l.time_ns)
    else {
        return t;
    };
    let cn = |kind: &'static str| {
        lines
            .iter()
            .filter(move |l| l.node.as_deref() == Some("cn") && l.kind == kind)
    };
    let unreachable = cn("kernel_addr_change")
        .find(|l| l.time_ns > down && l.state.as_deref() == Some("unreachable"));
    // The cut path's address: the one declared unreachable, else the
    // primary the correspondent's kernel reported before the cut.
    let address = unreachable
        .and_then(|l| l.address.as_deref())
        .or_else(|| {
            cn("kernel_status")
                .rfind(|l| l.time_ns <= down)
                .and_then(|l| l.primary.as_deref())
        })
        .map(str::to_owned);
    if let Some(a) = &address {
        let before =
            cn("kernel_paddr").rfind(|l| l.time_ns <= down && l.address.as_deref() == Some(a));
        t.rto_at_cut_ms = before.and_then(|l| l.rto_ms);
        t.srtt_at_cut_ms = before.and_then(|l| l.srtt_ms);
    }
    if let Some(u) = unreachable {
        t.unreachable_ms = Some(ms(u.time_ns - down));
        t.error_count = cn("kernel_status")
            .filter(|l| {
                l.time_ns <= u.time_ns + SAMPLE_NS && l.primary.as_deref() == address.as_deref()
            })
            .filter_map(|l| l.primary_error_count)
            .next_back();
        let mib_at = |limit: Ns| {
            cn("kernel_mib")
                .filter(|l| l.time_ns <= limit)
                .filter_map(|l| l.t3_rtx_expireds)
                .next_back()
                .unwrap_or(0)
        };
        t.t3_expiries = Some(mib_at(u.time_ns + SAMPLE_NS).saturating_sub(mib_at(down)));
        let mut last = mib_at(down);
        for l in cn("kernel_mib").filter(|l| l.time_ns > down && l.time_ns <= u.time_ns + SAMPLE_NS)
        {
            let Some(now) = l.t3_rtx_expireds else {
                continue;
            };
            let rto = address.as_deref().and_then(|a| {
                // At least one poll (10 ms) before the sample that shows
                // the rise: within a poll the path's RTO can be read after
                // the expiry doubled it while the counter was read before.
                cn("kernel_paddr")
                    .filter(|p| p.time_ns < l.time_ns - POLL_NS && p.address.as_deref() == Some(a))
                    .filter_map(|p| p.rto_ms)
                    .next_back()
            });
            for _ in last..now {
                if let Some(r) = rto {
                    t.expiry_rtos_ms.push(r);
                    t.expiry_seen_ms.push(ms(l.time_ns - down));
                }
            }
            last = last.max(now);
        }
    }
    t.down_s = Some(down as f64 / 1e9);
    if let (Some(a), Some(up)) = (
        &address,
        lines
            .iter()
            .find(|l| l.kind == "link_up" && l.time_ns > down)
            .map(|l| l.time_ns),
    ) {
        t.available_ms = cn("kernel_addr_change")
            .find(|l| {
                l.time_ns > up
                    && l.state.as_deref() == Some("available")
                    && l.address.as_deref() == Some(a)
            })
            .map(|l| ms(l.time_ns - up));
        t.up_s = Some(up as f64 / 1e9);
    }
    t.address = address;
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failover_and_return_as_the_kernel_logged_them() {
        let log = r#"{"time":"100.000000000","node":"cn","kind":"kernel_status","primary":"10.0.0.1","primary_error_count":0}
{"time":"100.500000000","node":"cn","kind":"kernel_paddr","address":"10.0.0.1","rto_ms":200,"srtt_ms":10}
{"time":"100.600000000","node":"cn","kind":"kernel_mib","t3_rtx_expireds":1}
{"time":"101.000000000","kind":"link_down","interface":"eth1","ok":true}
{"time":"101.885000000","node":"cn","kind":"kernel_paddr","address":"10.0.0.1","rto_ms":400,"srtt_ms":10}
{"time":"101.890000000","node":"cn","kind":"kernel_mib","t3_rtx_expireds":4}
{"time":"101.890000000","node":"cn","kind":"kernel_status","primary":"10.0.0.1","primary_error_count":3}
{"time":"101.880000000","node":"cn","kind":"kernel_addr_change","address":"10.0.0.1","state":"unreachable"}
{"time":"102.500000000","kind":"link_up","interface":"eth1","ok":true}
{"time":"103.250000000","node":"cn","kind":"kernel_addr_change","address":"10.0.0.1","state":"available"}"#;
        let t = of_lines(&parse_log(log).expect("a log"));
        assert_eq!(t.address.as_deref(), Some("10.0.0.1"));
        assert_eq!(t.unreachable_ms, Some(880.0));
        assert_eq!(t.error_count, Some(3));
        assert_eq!(t.t3_expiries, Some(3));
        assert_eq!((t.rto_at_cut_ms, t.srtt_at_cut_ms), (Some(200), Some(10)));
        assert_eq!(t.available_ms, Some(750.0));
        // Three expiries after the cut, each ran for the 200 ms last
        // sampled before the counter rose.
        assert_eq!(t.expiry_rtos_ms, vec![200, 200, 200]);
        assert_eq!(t.expiry_seen_ms, vec![890.0, 890.0, 890.0]);
    }

    #[test]
    fn each_later_t3_timer_overruns_its_rto_by_the_timer_wheel_granularity() {
        // bokor-paper rto=800 r01 (RTO.min = RTO.max = 800 ms): the
        // correspondent's first three T3 expiries as its kernel logged
        // them; the counter rose 880 ms apart, so each later timer ran
        // RTO + 80 ms (a level-1 timer of 80 jiffies at HZ = 100).
        let log = r#"{"time":"1795687790.429021023","node":"cn","kind":"kernel_mib","t3_rtx_expireds":0}
{"time":"1795687790.430000000","node":"cn","kind":"kernel_status","primary":"198.51.100.101","primary_error_count":0}
{"time":"1795687790.431000000","node":"cn","kind":"kernel_paddr","address":"198.51.100.101","rto_ms":800,"srtt_ms":0}
{"time":"1795687791.414372959","kind":"link_down","interface":"eth1","ok":true}
{"time":"1795687792.309114719","node":"cn","kind":"kernel_mib","t3_rtx_expireds":1}
{"time":"1795687793.189137247","node":"cn","kind":"kernel_mib","t3_rtx_expireds":2}
{"time":"1795687794.069148767","node":"cn","kind":"kernel_mib","t3_rtx_expireds":3}
{"time":"1795687794.070000000","node":"cn","kind":"kernel_addr_change","address":"198.51.100.101","state":"unreachable"}"#;
        let t = of_lines(&parse_log(log).expect("a log"));
        assert_eq!(t.expiry_rtos_ms, vec![800, 800, 800]);
        let seen: Vec<f64> = t.expiry_seen_ms.iter().map(|x| x.round()).collect();
        assert_eq!(seen, vec![895.0, 1775.0, 2655.0]);
        let over: Vec<f64> = t.timer_overruns_ms().iter().map(|x| x.round()).collect();
        assert_eq!(over, vec![80.0, 80.0]);
    }
}
