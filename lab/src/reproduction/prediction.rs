//! Bokor's eq. (3)/(4), as printed and as Linux counts, evaluated with the
//! RTO the correspondent's kernel had at each T3 expiry (its 10 ms
//! `kernel_paddr` samples) beside the configured RTO, the residual per
//! run, and the runs whose failover the analyzer saw disturbed (a
//! spurious T3 expiry, an error counter cleared) flagged and counted
//! apart.

use super::runs::Run;
use super::{mmm, stat_of, Data};
use crate::document::Table;
use crate::figures::svg::num;
use crate::stats::Stat;

/// Tolerance of "predicted from the kernel's RTO", per T3 timer: one
/// message interval (after the cut and after each expiry the path's timer
/// starts again only with the next new DATA sent on it) plus one 10 ms
/// tick; a failover of PMR + 1 timers may be late by PMR + 1 of these, and
/// early by one tick.
pub const TICK_MS: f64 = 10.0;

/// Bokor's eq. (3) as printed: Σ_{i<PMR} RTO·2^i, each term capped at
/// RTO.Max; with `linux` the kernel's count: the path goes inactive at the
/// (PMR+1)-th expiry, so the sum runs to i = PMR.
pub fn predicted_backoff_ms(rto: f64, rto_max: f64, pmr: f64, linux: bool) -> f64 {
    let terms = pmr as i32 + i32::from(linux);
    (0..terms).map(|i| (rto * 2f64.powi(i)).min(rto_max)).sum()
}

/// Eq. (4), RTO.min = RTO.max: PMR · RTO; Linux: (PMR + 1) · RTO.
pub fn predicted_fixed_rto_ms(rto: f64, pmr: f64, linux: bool) -> f64 {
    (pmr + f64::from(u8::from(linux))) * rto
}

/// One run's prediction.
pub struct Predicted {
    /// The sum of the first PMR + 1 expiries' RTOs, when the kernel logged
    /// that many.
    pub kernel_ms: Option<f64>,
    /// Configured: eq. (3') with the configured RTO.min (eq. (4') when
    /// RTO.min = RTO.max).
    pub configured_ms: f64,
    pub residual_ms: Option<f64>,
    /// The analyzer's flags on this failover.
    pub spurious: u64,
    pub resets: u64,
}

impl Predicted {
    pub fn disturbed(&self) -> bool {
        self.spurious > 0 || self.resets > 0
    }
}

pub fn of(data: &Data, r: &Run) -> Predicted {
    let need = r.pmr as usize + 1;
    let kernel_ms = (r.truth.expiry_rtos_ms.len() >= need)
        .then(|| r.truth.expiry_rtos_ms[..need].iter().sum::<u64>() as f64);
    let flag = |c: &str| data.handovers.num(c, r.row).unwrap_or(0.0) as u64;
    Predicted {
        kernel_ms,
        configured_ms: predicted_backoff_ms(r.rto_min, r.rto_max, r.pmr, true),
        residual_ms: r.truth.unreachable_ms.zip(kernel_ms).map(|(u, k)| u - k),
        spurious: flag("failover_spurious_expiries"),
        resets: flag("failover_counter_resets"),
    }
}

/// What a set of runs gives: residual statistics of the undisturbed runs,
/// how many of them are within the tolerance, how many were disturbed.
pub struct Summary {
    pub clean: usize,
    pub disturbed: usize,
    pub within: usize,
    pub residual: Stat,
    pub residual_configured: Stat,
    pub tolerance_ms: f64,
}

impl Summary {
    pub fn sentence(&self) -> String {
        format!(
            "Predicted from the kernel's own RTO at each expiry, {} of {} undisturbed runs \
             reached ADDR_UNREACHABLE between one tick early and PMR + 1 times {} ms late \
             (one message interval plus one 10 ms tick per timer); residual (kernel − \
             prediction) {} ms, against {} ms from the configured RTO. {} run(s) with a \
             spurious T3 expiry or an error counter cleared by a SACK during the failover are \
             flagged and not in these numbers.",
            self.within,
            self.clean,
            num(Some(self.tolerance_ms)),
            mmm(&self.residual, 0),
            mmm(&self.residual_configured, 0),
            self.disturbed
        )
    }
}

/// The per-run table and its summary.
pub fn table(data: &Data, runs: &[&Run], name: &str, title: &str) -> (Table, Summary) {
    let mut t = Table::new(
        name,
        title,
        &[
            "run",
            "PMR",
            "RTO.min / RTO.max (ms)",
            "kernel: RTO at each expiry (ms)",
            "predicted, configured RTO (ms)",
            "predicted, kernel's RTO (ms)",
            "kernel: link down → ADDR_UNREACHABLE (ms)",
            "residual, kernel's RTO (ms)",
            "residual per expiry (ms)",
            "kernel: each later timer's run − its RTO (ms)",
            "tolerance: (PMR + 1) × (message interval + tick) (ms)",
            "analyzer: spurious expiries",
            "analyzer: counter resets",
            "flag",
        ],
    );
    let (mut res, mut res_conf) = (Vec::new(), Vec::new());
    let (mut clean, mut disturbed, mut within) = (0, 0, 0);
    let mut tolerance_ms: f64 = 0.0;
    for r in runs {
        let p = of(data, r);
        let tol = (r.pmr + 1.0) * (r.interval_ms + TICK_MS);
        tolerance_ms = tolerance_ms.max(r.interval_ms + TICK_MS);
        let ok = |x: f64| (-TICK_MS..=tol).contains(&x);
        if p.disturbed() {
            disturbed += 1;
        } else if let Some(x) = p.residual_ms {
            clean += 1;
            res.push(x);
            if let Some(u) = r.truth.unreachable_ms {
                res_conf.push(u - p.configured_ms);
            }
            if ok(x) {
                within += 1;
            }
        }
        t.row(vec![
            r.run.clone(),
            num(Some(r.pmr)),
            format!("{} / {}", num(Some(r.rto_min)), num(Some(r.rto_max))),
            r.truth
                .expiry_rtos_ms
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(" "),
            num(Some(p.configured_ms)),
            num(p.kernel_ms),
            num(r.truth.unreachable_ms.map(|x| (x * 10.0).round() / 10.0)),
            num(p.residual_ms.map(|x| (x * 10.0).round() / 10.0)),
            num(p.residual_ms.map(|x| (x / (r.pmr + 1.0)).round())),
            r.truth
                .timer_overruns_ms()
                .iter()
                .map(|x| format!("{x:.0}"))
                .collect::<Vec<_>>()
                .join(" "),
            num(Some(tol)),
            p.spurious.to_string(),
            p.resets.to_string(),
            if p.disturbed() {
                "disturbed (not in the statistics)".into()
            } else if p.residual_ms.is_none() {
                "fewer expiries logged than PMR + 1".into()
            } else if p.residual_ms.is_some_and(ok) {
                "within".into()
            } else {
                "outside".into()
            },
        ]);
    }
    (
        t,
        Summary {
            clean,
            disturbed,
            within,
            residual: stat_of(&res),
            residual_configured: stat_of(&res_conf),
            tolerance_ms,
        },
    )
}

/// Linux's timer wheel at HZ = 100 (kernel/time/timer.c, LVL_START and
/// LVL_GRAN with LVL_CLK_SHIFT 3): a timer due in fewer than 63 jiffies
/// expires on its jiffy, one due in 63–503 jiffies on the next 8-jiffy
/// boundary after its due time, one due in 504–4031 jiffies on the next
/// 64-jiffy boundary. As (RTO from, RTO below, granularity), in ms.
pub const TIMER_WHEEL_LEVELS_MS: [(f64, f64, f64); 3] = [
    (0.0, 630.0, 10.0),
    (630.0, 5040.0, 80.0),
    (5040.0, 40320.0, 640.0),
];

/// The T3 timers after the first whose RTO falls in one timer-wheel
/// level: how much longer than that RTO each ran.
pub struct Overrun {
    /// The level's RTO range, from and below (ms), and its granularity.
    pub rto_from_ms: f64,
    pub rto_below_ms: f64,
    pub granularity_ms: f64,
    pub stat: Stat,
    /// Each timer's run − its RTO (ms).
    pub values: Vec<f64>,
}

/// The kernel's T3 timers after the first, by timer-wheel level of the
/// RTO they ran for: how much longer than that RTO each ran (from the
/// kernel's own counter; `Truth::timer_overruns_ms`).
pub fn overrun_table(runs: &[&Run], name: &str) -> (Table, Vec<Overrun>) {
    let mut t = Table::new(
        name,
        "T3 timers after the first: run time − RTO by the RTO's timer-wheel level (ms; the kernel's T3 counter, ± one 10 ms poll each)",
        &[
            "RTO in force (ms)",
            "timer-wheel granularity at HZ = 100 (ms)",
            "timers",
            "run − RTO mean (min–max)",
        ],
    );
    let mut out = Vec::new();
    for (lo, hi, gran) in TIMER_WHEEL_LEVELS_MS {
        let values: Vec<f64> = runs
            .iter()
            .flat_map(|r| {
                r.truth
                    .timer_overruns_ms()
                    .into_iter()
                    .zip(r.truth.expiry_rtos_ms.iter().skip(1))
                    .filter(|(_, rto)| (lo..hi).contains(&(**rto as f64)))
                    .map(|(x, _)| x)
                    .collect::<Vec<_>>()
            })
            .collect();
        let stat = stat_of(&values);
        if stat.n == 0 {
            continue;
        }
        t.row(vec![
            format!("{}–{}", num(Some(lo)), num(Some(hi))),
            num(Some(gran)),
            stat.n.to_string(),
            mmm(&stat, 0),
        ]);
        out.push(Overrun {
            rto_from_ms: lo,
            rto_below_ms: hi,
            granularity_ms: gran,
            stat,
            values,
        });
    }
    (t, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equations_as_printed_and_as_linux_counts() {
        // PMR 2, RTO 200 ms: eq. (4) 400 ms, Linux 600 ms of T3 timer.
        assert_eq!(predicted_fixed_rto_ms(200.0, 2.0, false), 400.0);
        assert_eq!(predicted_fixed_rto_ms(200.0, 2.0, true), 600.0);
        // Eq. (3) with doubling: 200 + 400 (printed), + 800 (Linux).
        assert_eq!(predicted_backoff_ms(200.0, 60000.0, 2.0, false), 600.0);
        assert_eq!(predicted_backoff_ms(200.0, 60000.0, 2.0, true), 1400.0);
        // Capped at RTO.Max: 100 + 200 + 400 + 400.
        assert_eq!(predicted_backoff_ms(100.0, 400.0, 3.0, true), 1100.0);
        // RTO.min = RTO.max makes eq. (3) eq. (4).
        assert_eq!(
            predicted_backoff_ms(200.0, 200.0, 2.0, true),
            predicted_fixed_rto_ms(200.0, 2.0, true)
        );
    }
}
