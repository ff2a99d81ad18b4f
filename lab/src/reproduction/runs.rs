//! The failover runs of a sweep that Bokor's and Eklund's sections
//! compare against the equations: one switch per run, with the sender
//! parameters the run was made with and the correspondent kernel's view.

use super::truth::{self, Truth};
use super::Data;
use sctp_handover_harness_formats::Scenario;

/// One switch of the correspondent's DATA (endpoint 1) of a given class,
/// seen in the correspondent's capture, with its run's parameters and the
/// kernel's view.
#[derive(Debug, Clone)]
pub struct Run {
    pub run: String,
    pub rto_min: f64,
    pub rto_max: f64,
    pub pmr: f64,
    pub hb_interval: f64,
    /// One-way delay of the alternate path (the last MN interface).
    pub alt_delay: f64,
    /// The application's message interval (traffic.interval_ms).
    pub interval_ms: f64,
    pub row: usize,
    /// Bokor's DATA transmission interrupt as the receiver saw it: the
    /// data interrupt of the same switch in the mobile node's capture.
    pub mn_interrupt_ms: Option<f64>,
    pub truth: Truth,
}

/// Reads the sender parameters a run was made with from its scenario.toml
/// (the swept ones are also columns, the others are the scenario's):
/// RTO.Min, RTO.Max, Path.Max.Retrans, HB.Interval, the last MN
/// interface's one-way delay and the message interval.
pub(super) fn params(dir: &std::path::Path) -> Option<(f64, f64, f64, f64, f64, f64)> {
    let text = std::fs::read_to_string(dir.join("scenario.toml")).ok()?;
    let s = Scenario::from_toml(&text).ok()?;
    Some((
        f64::from(s.sctp.rto_min_ms),
        f64::from(s.sctp.rto_max_ms),
        f64::from(s.sctp.path_max_retrans),
        f64::from(s.sctp.hb_interval_ms),
        s.topology.mn_interfaces.last()?.delay_ms,
        s.traffic.interval_ms as f64,
    ))
}

/// The run (directory below the sweep) of row `i` of the handovers table
/// when it is a switch of the correspondent's DATA (endpoint 1) in the
/// correspondent's capture; None for any other row.
pub fn correspondent_switch_run(data: &Data, i: usize, sweep: &str) -> Option<String> {
    let h = &data.handovers;
    if h.text("capture_side", i).as_deref() != Some("cn") || h.num("sender", i) != Some(1.0) {
        return None;
    }
    h.text("source", i)
        .and_then(|s| super::rows::run_of(&s, sweep))
}

pub fn runs(data: &Data, sweep: &str, class: &str) -> Vec<Run> {
    let h = &data.handovers;
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for i in h.of_sweep(sweep) {
        if h.text("class", i).as_deref() != Some(class) {
            continue;
        }
        let Some(run) = correspondent_switch_run(data, i, sweep) else {
            continue;
        };
        let Some(dir) = data.run_dir(h, i, sweep) else {
            continue;
        };
        if !seen.insert(run.clone()) {
            continue;
        }
        let Some((rto_min, rto_max, pmr, hb_interval, alt_delay, interval_ms)) = params(&dir)
        else {
            continue;
        };
        let mn_interrupt_ms = h.text("source", i).and_then(|src| {
            let mn = format!("{}mn.pcap", src.strip_suffix("cn.pcap")?);
            (0..h.len)
                .find(|&j| {
                    h.text("source", j).as_deref() == Some(mn.as_str())
                        && h.num("sender", j) == Some(1.0)
                })
                .and_then(|j| h.num("data_interrupt_ms", j))
        });
        out.push(Run {
            run,
            mn_interrupt_ms,
            rto_min,
            rto_max,
            pmr,
            hb_interval,
            alt_delay,
            interval_ms,
            row: i,
            truth: truth::read(&dir).unwrap_or_default(),
        });
    }
    out
}
