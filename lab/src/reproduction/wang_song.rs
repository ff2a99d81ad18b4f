//! Wang & Song: the DAR procedure's byte overhead per handover (three
//! ASCONF / ASCONF-ACK pairs, 768 bits in the paper) and the packets lost
//! in the handover, from the Koh & Kim runs (the same ADD-IP, SET-PRIMARY,
//! DELETE-IP procedure), mobile node's capture.

use super::published::{WANG_SONG_DAR, WANG_SONG_DAR_BYTES, WANG_SONG_LOSS, WANG_SONG_RATE};
use super::verdict::{Kind, Verdict};
use super::{mmm, stat_of, Data};
use crate::document::{Block, Section, Table};
use crate::figures::bars;
use crate::figures::svg::num;
use std::collections::{BTreeMap, BTreeSet};

/// One run's ASCONF traffic: chunk bytes of every ASCONF (retransmissions
/// included) and of every ASCONF-ACK, from the asconf table (one row per
/// request parameter: the chunk is counted once per frame and serial).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dar {
    pub asconfs: usize,
    pub requests: usize,
    pub asconf_bytes: f64,
    pub ack_bytes: f64,
}

pub fn dar(data: &Data, source: &str) -> Dar {
    let a = &data.asconf;
    let mut d = Dar::default();
    let mut chunks = BTreeSet::new();
    let mut acks = BTreeSet::new();
    for i in 0..a.len {
        if a.text("source", i).as_deref() != Some(source) {
            continue;
        }
        d.requests += usize::from(a.text("op", i).is_some());
        let (Some(frame), Some(serial)) = (a.num("frame", i), a.num("serial", i)) else {
            continue;
        };
        if chunks.insert((frame as u64, serial as u64)) {
            d.asconfs += 1;
            d.asconf_bytes += a.num("bytes", i).unwrap_or(0.0);
        }
        if let Some(ack) = a.num("ack_frame", i) {
            if acks.insert((ack as u64, serial as u64)) {
                d.ack_bytes += a.num("ack_bytes", i).unwrap_or(0.0);
            }
        }
    }
    d
}

pub fn sections(data: &Data) -> anyhow::Result<Vec<Section>> {
    let mut s = Section::new(
        "wang-song",
        "5. Wang & Song: DAR overhead and packet loss per handover",
        2,
    );
    s.text(format!(
        "Published: {} — {}. {} — {}.",
        WANG_SONG_DAR.value, WANG_SONG_DAR.source, WANG_SONG_LOSS.value, WANG_SONG_LOSS.source
    ));
    s.text(
        "Measured on the Koh & Kim runs (section 1: ADD-IP, SET-PRIMARY, DELETE-IP per \
         handover), mobile node's capture. DAR overhead per run = the chunk bytes of every \
         ASCONF (retransmissions included) plus every ASCONF-ACK, from the asconf table \
         (`bytes`, `ack_bytes`; one row per request parameter, so each chunk is counted once \
         per frame and serial). The handovers table's `dar_overhead_bytes` counts only the \
         exchanges before the switch (ADD-IP and SET-PRIMARY; DELETE-IP comes after it) and \
         is shown beside. Loss: the handover's `window_lost_in_switch` (TSNs last sent on the \
         old path and never acknowledged there, retransmitted) and all its retransmissions, \
         from the correspondent's capture of the same run (the sender: what it sent into \
         the old path never reaches the mobile node's capture).",
    );
    let mut t = Table::new(
        "wang-song-table",
        "DAR overhead (bytes) and loss per handover (CN → MN DATA, MN capture)",
        &[
            "runs",
            "n",
            "ASCONF chunks",
            "requests",
            "ASCONF bytes",
            "ASCONF-ACK bytes",
            "DAR total bytes (bits)",
            "dar_overhead_bytes (before the switch)",
            "lost in the switch (TSNs, CN capture)",
            "retransmissions in the window (CN capture)",
            "published",
        ],
    );
    let mut bar = Vec::new();
    let mut totals = Vec::new();
    for (sweep, label) in [
        (
            "koh-kim-1-lan",
            "Koh & Kim scenario 1, LAN and RTT sweep (koh-kim-1-lan)",
        ),
        (
            "koh-kim-1",
            "Koh & Kim scenario 1, messages every 50 ms (koh-kim-1)",
        ),
        (
            "koh-kim-2-lan",
            "Koh & Kim scenario 2, SET-PRIMARY delay swept (koh-kim-2-lan)",
        ),
        (
            "koh-kim-2",
            "Koh & Kim scenario 2, messages every 50 ms (koh-kim-2)",
        ),
    ] {
        let scenario2 = sweep.starts_with("koh-kim-2");
        let sw = super::koh_kim::switches_of(data, sweep, 5.0, (!scenario2).then_some("planned"));
        let h = &data.handovers;
        let mut dars = Vec::new();
        let (mut before, mut lost, mut rtx) = (Vec::new(), Vec::new(), Vec::new());
        let mut seen = BTreeSet::new();
        for i in h.of_sweep(sweep) {
            if h.text("capture_side", i).as_deref() != Some("mn")
                || h.num("sender", i) != Some(1.0)
                || (!scenario2 && h.text("class", i).as_deref() != Some("planned"))
            {
                continue;
            }
            let Some(source) = h.text("source", i) else {
                continue;
            };
            if !seen.insert(source.clone()) {
                continue;
            }
            dars.push(dar(data, &source));
            before.extend(h.num("dar_overhead_bytes", i));
            // Loss at the sender: the correspondent's capture of the same
            // run (what it sent into the old path never reaches the MN).
            let cn = source
                .strip_suffix("mn.pcap")
                .map(|p| format!("{p}cn.pcap"));
            if let Some(j) =
                (0..h.len).find(|&j| h.text("source", j) == cn && h.num("sender", j) == Some(1.0))
            {
                lost.extend(h.num("window_lost_in_switch", j));
                rtx.extend(h.num("window_retransmissions", j));
            }
        }
        let f = |g: &dyn Fn(&Dar) -> f64| stat_of(&dars.iter().map(g).collect::<Vec<_>>());
        let total = f(&|d| d.asconf_bytes + d.ack_bytes);
        t.row(vec![
            label.into(),
            dars.len().max(sw.len()).to_string(),
            mmm(&f(&|d| d.asconfs as f64), 1),
            mmm(&f(&|d| d.requests as f64), 1),
            mmm(&f(&|d| d.asconf_bytes), 1),
            mmm(&f(&|d| d.ack_bytes), 1),
            format!(
                "{} ({})",
                mmm(&total, 1),
                total
                    .mean
                    .map_or("–".into(), |m| format!("{:.0} bits", m * 8.0))
            ),
            mmm(&stat_of(&before), 1),
            mmm(&stat_of(&lost), 1),
            mmm(&stat_of(&rtx), 1),
            "96 bytes (768 bits); 0 lost".into(),
        ]);
        bar.push((label.to_string(), total));
        totals.push((label, total, stat_of(&lost), stat_of(&rtx)));
    }
    bar.push((
        "Wang & Song eq. (27)".into(),
        stat_of(&[WANG_SONG_DAR_BYTES]),
    ));
    if let Some(mut f) = bars::figure(
        &bar,
        "DAR overhead per handover",
        "bytes",
        "wang-song-dar".into(),
    )? {
        f.title = "Wang & Song: DAR overhead per handover, measured against eq. (27)".into();
        s.blocks.push(Block::Figure(f));
    }
    s.blocks.push(Block::Table(t));
    let summary: Vec<String> = totals
        .iter()
        .filter_map(|(label, total, lost, _)| {
            Some(format!(
                "{label}: {:.0} bytes ({:.0} bits, {:+.0} % against 768 bits), {:.1} TSNs lost \
                 in the switch",
                total.mean?,
                total.mean? * 8.0,
                (total.mean? / WANG_SONG_DAR_BYTES - 1.0) * 100.0,
                lost.mean?
            ))
        })
        .collect();
    s.text(format!(
        "{}. Wang & Song count 24-byte ASCONF and 8-byte ASCONF-ACK chunks. On the wire an \
         ASCONF also carries its serial number and an Address Parameter (the sender's \
         address, 8 bytes for IPv4) besides the request (an 8-byte header with the \
         correlation ID plus the 8-byte address): 32 bytes for one IPv4 request; Linux sends \
         each bindx / SET-PRIMARY as its own ASCONF, and its success ASCONF-ACK is the bare \
         8-byte chunk. Loss: a TSN lost in the switch is one last sent on the old path and \
         never acknowledged there; SCTP retransmits it, so no user message is lost.",
        summary.join("; ")
    ));
    let dar_all = stat_of(
        &totals
            .iter()
            .filter_map(|(_, t, _, _)| t.mean)
            .collect::<Vec<_>>(),
    );
    data.verdict(Verdict {
        paper: "Wang & Song",
        claim: "DAR = up to three ASCONF / ASCONF-ACK pairs, 768 bits (96 bytes) per handover"
            .into(),
        published: "96 bytes (768 bits)".into(),
        measured: format!(
            "{} bytes per handover (means of the four setups)",
            mmm(&dar_all, 0)
        ),
        kind: Kind::Differs,
        evidence: "three pairs, as Wang & Song count, but each Linux ASCONF carries its \
                   serial number and an Address Parameter beside the request (32 bytes for \
                   one IPv4 request against their 24) and each ASCONF-ACK 8 bytes: 3 × (32 + \
                   8) = 120 bytes (asconf table, bytes and ack_bytes)"
            .into(),
        section: "5",
    });
    let loss: Vec<String> = totals
        .iter()
        .map(|(label, _, lost, rtx)| {
            format!(
                "{label}: {} lost, {} retransmitted",
                mmm(lost, 1),
                mmm(rtx, 1)
            )
        })
        .collect();
    let any_lost = totals
        .iter()
        .any(|(_, _, l, _)| l.max.is_some_and(|m| m > 0.0));
    data.verdict(Verdict {
        paper: "Wang & Song",
        claim: "an mSCTP handover loses no packets".into(),
        published: "0 per handover".into(),
        measured: loss.join("; "),
        kind: if any_lost {
            Kind::Differs
        } else {
            Kind::Reproduced
        },
        evidence: "make before break (scenario 1) loses nothing; when the old link goes down \
                   before SET-PRIMARY (scenario 2), the DATA the correspondent sent into it \
                   is lost in the switch and retransmitted on the new path (the analyzer's \
                   window_lost_in_switch, window_retransmissions of the correspondent's \
                   capture)"
            .into(),
        section: "5",
    });
    let r = rate(data)?;
    Ok(vec![s, r])
}

/// One handoff rate's values: data interrupts (MN), TSNs lost in each
/// switch (CN), throughputs (kB/s, CN), switches counted.
type RatePoint = (Vec<f64>, Vec<f64>, Vec<f64>, usize);

/// Section 5a: handoff delay, loss and throughput against the handoff rate.
fn rate(data: &Data) -> anyhow::Result<Section> {
    let mut r = Section::new(
        "wang-song-rate",
        "5a. Handoff delay, throughput and loss against the handoff rate",
        3,
    );
    r.text(format!(
        "Published: {} — {}.",
        WANG_SONG_RATE.value, WANG_SONG_RATE.source
    ));
    r.text(
        "Wang & Song model a mobile node crossing cells at a given rate over radio links \
         (MIP against mSCTP). Here the rate is the number of DAR procedures a second \
         (ADD-IP, SET-PRIMARY 20 ms later, DELETE-IP 20 ms after that), back and forth \
         between two wired 10 ms-RTT paths that both stay up: the handoffs are make before \
         break, with no radio loss and no movement. Handoff delay = the data interrupt of each \
         switch of the correspondent's DATA (MN capture); loss = TSNs lost in the switch \
         (CN capture); throughput = new DATA bytes the correspondent sent over the \
         association's life (associations table, user_data_bytes_1 / duration_ms).",
    );
    data.describe(&mut r, "wang-song");
    let h = &data.handovers;
    let mut by_rate: BTreeMap<i64, RatePoint> = BTreeMap::new();
    for i in h.of_sweep("wang-song") {
        let Some(rate) = h.num("param_handoff_rate", i) else {
            continue;
        };
        if h.num("sender", i) != Some(1.0) {
            continue;
        }
        let e = by_rate.entry((rate * 10.0).round() as i64).or_default();
        match h.text("capture_side", i).as_deref() {
            Some("mn") => {
                e.0.extend(h.num("data_interrupt_ms", i));
                e.3 += 1;
            }
            Some("cn") => e.1.extend(h.num("window_lost_in_switch", i)),
            _ => {}
        }
    }
    let a = &data.associations;
    for i in a.of_sweep("wang-song") {
        let (Some(rate), Some(bytes), Some(ms)) = (
            a.num("param_handoff_rate", i),
            a.num("user_data_bytes_1", i),
            a.num("duration_ms", i),
        ) else {
            continue;
        };
        if a.text("capture_side", i).as_deref() == Some("cn") && ms > 0.0 {
            by_rate
                .entry((rate * 10.0).round() as i64)
                .or_default()
                .2
                .push(bytes / ms);
        }
    }
    let mut t = Table::new(
        "wang-song-rate-table",
        "Handoff delay, loss and throughput against the handoff rate",
        &[
            "handoffs per second",
            "handoffs (CN → MN switches)",
            "handoff delay (data interrupt, ms) mean (min–max)",
            "lost in the switch per handoff (TSNs, CN capture)",
            "throughput CN → MN (kB/s) mean (min–max)",
        ],
    );
    let mut delay_pts = Vec::new();
    for (k, (d, l, tp, n)) in &by_rate {
        let x = *k as f64 / 10.0;
        let ds = stat_of(d);
        t.row(vec![
            num(Some(x)),
            n.to_string(),
            mmm(&ds, 1),
            if l.is_empty() {
                "–".into()
            } else {
                format!("{:.2}", l.iter().sum::<f64>() / l.len() as f64)
            },
            mmm(&stat_of(tp), 2),
        ]);
        delay_pts.push((x, ds));
    }
    if let Some(f) = crate::figures::sweep::figure(
        crate::figures::sweep::SweepSpec {
            title:
                "Wang & Song on Linux: handoff delay against the handoff rate (make before break)",
            x_label: "handoffs per second",
            y_label: "data interrupt per handoff (ms)",
            name: "wang-song-rate".into(),
        },
        &[crate::figures::sweep::Series {
            name: "handoff delay (CN → MN data interrupt)".into(),
            points: delay_pts.clone(),
        }],
        &[],
    )? {
        r.blocks.push(Block::Figure(f));
    }
    r.blocks.push(Block::Table(t));
    let lost_any = by_rate.values().any(|v| v.1.iter().any(|x| *x > 0.0));
    data.verdict(Verdict {
        paper: "Wang & Song",
        claim: "handoff delay, throughput and loss against the handoff rate".into(),
        published: "analytical curves (MIP against mSCTP over radio links)".into(),
        measured: if by_rate.is_empty() {
            "– (no runs)".into()
        } else {
            format!(
                "handoff delay {} ms at {} handoffs/s; {} lost",
                delay_pts
                    .iter()
                    .map(|(_, s)| s.mean.map_or("–".into(), |m| format!("{m:.1}")))
                    .collect::<Vec<_>>()
                    .join(" / "),
                delay_pts
                    .iter()
                    .map(|(x, _)| num(Some(*x)))
                    .collect::<Vec<_>>()
                    .join(" / "),
                if lost_any { "some TSNs" } else { "no TSN" }
            )
        },
        kind: Kind::NotComparable,
        evidence: "their curves come from a mobility and radio-loss model; here both paths \
                   stay up and lossless, so only the per-handoff cost over the rate is \
                   measured (the table), not the model's"
            .into(),
        section: "5a",
    });
    Ok(r)
}
