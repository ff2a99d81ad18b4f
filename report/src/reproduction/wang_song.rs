//! Wang & Song: the DAR procedure's byte overhead per handover (three
//! ASCONF / ASCONF-ACK pairs, 768 bits in the paper) and the packets lost
//! in the handover, from the Koh & Kim runs (the same ADD-IP, SET-PRIMARY,
//! DELETE-IP procedure), mobile node's capture.

use super::published::{WANG_SONG_DAR, WANG_SONG_DAR_BYTES, WANG_SONG_LOSS};
use super::{mmm, stat_of, Data};
use crate::document::{Block, Section, Table};
use crate::figures::bars;
use std::collections::BTreeSet;

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
         old path and never acknowledged there, retransmitted) and all its retransmissions.",
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
            "lost in the switch (TSNs)",
            "retransmissions in the window",
            "published",
        ],
    );
    let mut bar = Vec::new();
    let mut totals = Vec::new();
    for (sweep, label) in [
        ("koh-kim-1", "Koh & Kim scenario 1 (all RTTs)"),
        ("koh-kim-2", "Koh & Kim scenario 2"),
    ] {
        let sw = super::koh_kim::switches(data, sweep, 5.0);
        let h = &data.handovers;
        let mut dars = Vec::new();
        let (mut before, mut lost, mut rtx) = (Vec::new(), Vec::new(), Vec::new());
        let mut seen = BTreeSet::new();
        for i in h.of_sweep(sweep) {
            if h.text("capture_side", i).as_deref() != Some("mn")
                || h.num("sender", i) != Some(1.0)
                || h.text("class", i).as_deref() != Some("planned")
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
            lost.extend(h.num("window_lost_in_switch", i));
            rtx.extend(h.num("window_retransmissions", i));
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
        totals.push((label, total, stat_of(&lost)));
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
        .filter_map(|(label, total, lost)| {
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
        "Agreement. {}. Wang & Song count 24-byte ASCONF and 8-byte ASCONF-ACK chunks. On \
         the wire an ASCONF also carries its serial number and an Address Parameter (the \
         sender's address, 8 bytes for IPv4) besides the request (an 8-byte header with the \
         correlation ID plus the 8-byte address): 32 bytes for one IPv4 request; Linux sends \
         each bindx / SET-PRIMARY as its own ASCONF, and its success ASCONF-ACK is the bare \
         8-byte chunk. Loss: SCTP loses no user message; DATA caught on the old path when it \
         goes down would count as lost in the switch and be retransmitted.",
        summary.join("; ")
    ));
    Ok(vec![s])
}
