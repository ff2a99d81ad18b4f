//! Eklund (2015), Paper I: failover time of low-intensity traffic with the
//! default 200 ms SACK delay, a small one and none (runs with a spurious
//! timeout or an error counter reset counted apart); Paper II: the RFC's
//! RTO.min / PMR against tuned values, RTO.max capping the back-off.

use super::prediction::{self, predicted_backoff_ms};
use super::published::{EKLUND, EKLUND_SLOW_START, EKLUND_TUNING};
use super::runs::{runs, Run};
use super::verdict::{Kind, Verdict};
use super::{mmm, setup_table, stat_of, Data};
use crate::document::{Block, Section, Table};
use crate::figures::bars;
use crate::figures::svg::num;
use crate::stats::Stat;

/// The SACK delay of a run as swept (`200`, `40`, `off`).
/// Numbers as written ("200", not "200.0": a column read as text from
/// parts where it was a number keeps the decimal).
fn sack_delay(data: &Data, r: &Run) -> String {
    match data.handovers.text("param_sack_delay", r.row) {
        Some(t) => t
            .parse::<f64>()
            .map_or(t, |v| crate::figures::svg::num(Some(v))),
        None => "?".into(),
    }
}

/// Sweep order: numbers from the largest down, then `off`.
fn order(k: &str) -> (u8, i64) {
    match k.parse::<f64>() {
        Ok(v) => (0, -(v as i64)),
        Err(_) => (1, 0),
    }
}

pub fn sections(data: &Data) -> anyhow::Result<Vec<Section>> {
    let mut s = Section::new(
        "eklund",
        "4. Eklund: failover of low-intensity traffic against the SACK delay",
        2,
    );
    s.text(format!("Published: {} — {}.", EKLUND.value, EKLUND.source));
    s.blocks.push(setup_table(
        "eklund-setup",
        "Eklund: the thesis's parameters beside this reproduction's",
        &[
            ("network", "an emulated network (Paper I's exact link parameters are not in the thesis text)", "netem: primary 10 ms each way, alternate 40 ms each way"),
            ("traffic", "low-intensity telephony signalling", "one 200-byte message every 100 ms, correspondent → mobile node"),
            ("SACK delay", "200 ms (default), small, off", "200 ms, 40 ms (4 ticks at HZ = 100), off (sack_freq 1)"),
            ("RTO", "reduced RTO.min, RTO.max kept", "RTO.min 100 ms, RTO.max 60 s (Paper I); RFC 1 s / 60 s / PMR 5 against tuned values (Paper II)"),
            ("kernel", "FreeBSD / Linux of the time (per paper)", "Linux 6.1, HZ = 100, pf_enable = 0"),
        ],
    ));
    s.text(
        "Measured: the correspondent's capture (the sender), failover time = link down → first \
         new DATA on the alternate path; the kernel's RTO and SRTT for the primary just \
         before the cut show the mechanism Eklund describes (a delayed SACK inflates the \
         measured RTT, so the RTO, so every T3 expiry before the failover).",
    );
    data.describe(&mut s, "eklund");
    let runs = runs(data, "eklund", "failover");
    let mut keys: Vec<String> = runs.iter().map(|r| sack_delay(data, r)).collect();
    keys.sort_by_key(|k| order(k));
    keys.dedup();
    let mut t = Table::new(
        "eklund-table",
        "Failover against the SACK delay (ms)",
        &[
            "SACK delay",
            "n",
            "failover time mean (min–max)",
            "kernel: link down → ADDR_UNREACHABLE mean (min–max)",
            "kernel: RTO at the cut mean (min–max)",
            "kernel: SRTT at the cut mean (min–max)",
            "analyzer: T3 expiries mean (min–max)",
            "runs with a spurious expiry / a counter reset",
            "failover time, undisturbed runs only, mean (min–max)",
        ],
    );
    let mut bars_data: Vec<(String, Stat)> = Vec::new();
    let mut means = Vec::new();
    let mut clean_means: Vec<(String, Option<f64>)> = Vec::new();
    for k in &keys {
        let v: Vec<&Run> = runs.iter().filter(|r| &sack_delay(data, r) == k).collect();
        let col = |c: &str| {
            stat_of(
                &v.iter()
                    .filter_map(|r| data.handovers.num(c, r.row))
                    .collect::<Vec<_>>(),
            )
        };
        let kt = |f: &dyn Fn(&super::truth::Truth) -> Option<f64>| {
            stat_of(&v.iter().filter_map(|r| f(&r.truth)).collect::<Vec<_>>())
        };
        let fail = col("failover_time_ms");
        let disturbed = |c: &str| {
            v.iter()
                .filter(|r| data.handovers.num(c, r.row).unwrap_or(0.0) > 0.0)
                .count()
        };
        let clean = stat_of(
            &v.iter()
                .filter(|r| !prediction::of(data, r).disturbed())
                .filter_map(|r| data.handovers.num("failover_time_ms", r.row))
                .collect::<Vec<_>>(),
        );
        let label = if k == "off" {
            "off (sack_freq 1)".to_string()
        } else {
            format!("{k} ms")
        };
        t.row(vec![
            label.clone(),
            v.len().to_string(),
            mmm(&fail, 1),
            mmm(&kt(&|t| t.unreachable_ms), 1),
            mmm(&kt(&|t| t.rto_at_cut_ms.map(|x| x as f64)), 0),
            mmm(&kt(&|t| t.srtt_at_cut_ms.map(|x| x as f64)), 0),
            mmm(&col("failover_expiries"), 1),
            format!(
                "{} / {}",
                disturbed("failover_spurious_expiries"),
                disturbed("failover_counter_resets")
            ),
            mmm(&clean, 1),
        ]);
        means.push((k.clone(), fail.mean));
        clean_means.push((k.clone(), clean.mean));
        bars_data.push((label, fail));
    }
    if let Some(mut f) = bars::figure(&bars_data, "Failover time", "ms", "eklund-failover".into())?
    {
        f.title = "Eklund on Linux: failover time of low-intensity traffic by SACK delay".into();
        s.blocks.push(Block::Figure(f));
    }
    s.blocks.push(Block::Table(t));
    let of = |k: &str| means.iter().find(|(x, _)| x == k).and_then(|(_, m)| *m);
    let pct = |k: &str| Some((of(k)? / of("off")? - 1.0) * 100.0);
    let refs: Vec<&Run> = runs.iter().collect();
    let (pt, summary) = prediction::table(
        data,
        &refs,
        "eklund-kernel-rto-table",
        "Eklund runs: failover predicted from the configured and from the kernel's RTO (ms)",
    );
    s.text(summary.sentence());
    s.blocks.push(Block::Table(pt));
    let disturbed_200 = runs
        .iter()
        .filter(|r| sack_delay(data, r) == "200" && prediction::of(data, r).disturbed())
        .count();
    let n_200 = runs.iter().filter(|r| sack_delay(data, r) == "200").count();
    let longer = pct("200").is_some_and(|p| p > 60.0);
    data.verdict(Verdict {
        paper: "Eklund",
        claim: "Paper I: for low-intensity traffic the failover time may be more than 60 % longer with the default 200 ms SACK delay than without; a small SACK delay removes most of it".into(),
        published: "> 60 % longer at 200 ms; small delay: most of the penalty gone".into(),
        measured: format!(
            "200 ms: {} % longer than off; 40 ms: {} % longer ({} ms against {} ms, means)",
            pct("200").map_or("–".into(), |p| format!("{p:.0}")),
            pct("40").map_or("–".into(), |p| format!("{p:.0}")),
            num(of("200").map(|x| x.round())),
            num(of("off").map(|x| x.round()))
        ),
        kind: if longer { Kind::Reproduced } else { Kind::Differs },
        evidence: format!(
            "tolerance: the direction and the 60 % bound (Eklund gives a bound, not a value). \
             The kernel's RTO at the cut is higher with the delayed SACK (table). \
             {disturbed_200} of {n_200} runs at 200 ms had a spurious T3 expiry or an error \
             counter cleared during the failover (flagged in the tables above) and needed \
             more T3 expiries than PMR + 1: their longer failover is not the RTO at the cut \
             alone, and no undisturbed 200 ms run is left to compare"
        ),
        section: "4",
    });
    let _ = clean_means;
    let mut out = vec![s];
    out.push(tuning(data)?);
    Ok(out)
}

fn tuning(data: &Data) -> anyhow::Result<Section> {
    let mut s = Section::new(
        "eklund-tuning",
        "4a. Paper II: RTO.min, PMR and a capped back-off against the RFC's defaults",
        3,
    );
    s.text(format!(
        "Published: {} — {}.",
        EKLUND_TUNING.value, EKLUND_TUNING.source
    ));
    s.text(
        "The same low-intensity traffic without delayed SACK: the RFC's RTO.min 1 s, RTO.max \
         60 s, PMR 5 against RTO.min 100 ms with PMR 2, 3, 5, and with RTO.max 60 s or 1 s. \
         Linux has no relaxed back-off (the RTO doubles at every expiry); RTO.max 1 s caps the \
         doubling instead, the nearest setting the kernel offers.",
    );
    data.describe(&mut s, "eklund-tuning");
    let runs = runs(data, "eklund-tuning", "failover");
    let mut keys: Vec<(i64, i64, i64)> = runs
        .iter()
        .map(|r| (-(r.rto_min as i64), -(r.rto_max as i64), r.pmr as i64))
        .collect();
    keys.sort();
    keys.dedup();
    let mut t = Table::new(
        "eklund-tuning-table",
        "Failover against RTO.min, RTO.max and PMR (ms)",
        &[
            "RTO.min (ms)",
            "RTO.max (ms)",
            "PMR",
            "n",
            "failover time mean (min–max)",
            "kernel: link down → ADDR_UNREACHABLE mean (min–max)",
            "kernel: error count at unreachable",
            "kernel: T3 expiries by then",
            "eq. (3'), Linux",
            "reduction against the RFC's defaults",
        ],
    );
    let base = stat_of(
        &runs
            .iter()
            .filter(|r| r.rto_min >= 1000.0 && r.pmr >= 5.0)
            .filter_map(|r| r.truth.unreachable_ms)
            .collect::<Vec<_>>(),
    );
    let mut bars_data = Vec::new();
    let mut best: Option<(f64, String)> = None;
    for (mn, mx, p) in &keys {
        let v: Vec<&Run> = runs
            .iter()
            .filter(|r| (-(r.rto_min as i64), -(r.rto_max as i64), r.pmr as i64) == (*mn, *mx, *p))
            .collect();
        let k = stat_of(
            &v.iter()
                .filter_map(|r| r.truth.unreachable_ms)
                .collect::<Vec<_>>(),
        );
        let f = stat_of(
            &v.iter()
                .filter_map(|r| data.handovers.num("failover_time_ms", r.row))
                .collect::<Vec<_>>(),
        );
        let red = match (k.mean, base.mean) {
            (Some(a), Some(b)) if b > 0.0 => Some((1.0 - a / b) * 100.0),
            _ => None,
        };
        let label = format!("RTO.min {} / RTO.max {} / PMR {}", -mn, -mx, p);
        if let Some(r) = red {
            if r > 0.0 && best.as_ref().is_none_or(|(b, _)| r > *b) {
                best = Some((r, label.clone()));
            }
        }
        let first = v[0];
        t.row(vec![
            (-mn).to_string(),
            (-mx).to_string(),
            p.to_string(),
            v.len().to_string(),
            mmm(&f, 1),
            mmm(&k, 1),
            distinct(&v, &|t| t.error_count),
            distinct(&v, &|t| t.t3_expiries),
            num(Some(predicted_backoff_ms(
                first.rto_min,
                first.rto_max,
                first.pmr,
                true,
            ))),
            red.map_or("–".into(), |r| format!("{r:.1} %")),
        ]);
        bars_data.push((label, k));
    }
    if let Some(mut f) = bars::figure(
        &bars_data,
        "Link down → ADDR_UNREACHABLE",
        "ms",
        "eklund-tuning".into(),
    )? {
        f.title = "Eklund Paper II on Linux: failover by RTO.min / RTO.max / PMR".into();
        s.blocks.push(Block::Figure(f));
    }
    s.blocks.push(Block::Table(t));
    let short: Vec<&Run> = runs
        .iter()
        .filter(
            |r| matches!((r.truth.error_count, r.truth.t3_expiries), (Some(c), Some(t)) if t < c),
        )
        .collect();
    if !short.is_empty() {
        s.text(format!(
            "In {} run(s) the kernel's error counter reached PMR + 1 with fewer T3 expiries \
             counted by then (the columns above; each run's events.jsonl): the counter also \
             rose without a T3 expiry, which RFC 9260 §8.3 leaves to unanswered HEARTBEATs \
             (HB.Interval is 500 ms in this scenario), so eq. (3') overestimates those \
             failovers.",
            short.len()
        ));
    }
    data.verdict(Verdict {
        paper: "Eklund",
        claim: "Paper II: tuning PMR and RTO.min (RTO.max kept) and relaxing the back-off shortens failover".into(),
        published: "recommendations; no single reduction is printed in the thesis text".into(),
        measured: format!(
            "RFC defaults {} ms to ADDR_UNREACHABLE; the largest reduction {}",
            mmm(&base, 0),
            best.map_or("–".into(), |(r, l)| format!("{r:.1} % ({l})"))
        ),
        kind: Kind::NotComparable,
        evidence: "the direction is as Eklund describes, but the thesis summary gives no \
                   failover times to compare with, and Linux offers no relaxed back-off (a \
                   lower RTO.max only caps the doubling)"
            .into(),
        section: "4a",
    });
    data.verdict(Verdict {
        paper: "Eklund",
        claim: "slow start after a path switch lengthens message transfer (up to 75 %); handover of media sessions (Papers IV, V)".into(),
        published: EKLUND_SLOW_START.value.into(),
        measured: "–".into(),
        kind: Kind::NotComparable,
        evidence: "the harness's traffic is one message at a time at a fixed interval, which \
                   never fills the congestion window, so slow start cannot delay it; an ideal \
                   startup scheme is not in the kernel. The kernel logs the cwnd falling to \
                   one MTU at each T3 expiry (kernel_paddr), but no transfer is long enough \
                   for it to matter"
            .into(),
        section: "4a",
    });
    Ok(s)
}

/// The distinct values of a kernel count over some runs ("6" or "4, 6").
fn distinct(v: &[&Run], f: &dyn Fn(&super::truth::Truth) -> Option<u64>) -> String {
    let mut x: Vec<String> = v
        .iter()
        .map(|r| f(&r.truth).map_or("–".into(), |n| n.to_string()))
        .collect();
    x.sort();
    x.dedup();
    x.join(", ")
}
