//! The human-readable terminal summary.

use crate::analysis::FileAnalysis;
use crate::events::{AddressSource, EventKind};
use crate::time::{Nanos, Timestamp};
use crate::track::assoc::{Association, Start};
use crate::track::rto::RttStats;
use std::fmt::Write as _;
use std::io::Write;

fn ms(v: Option<Nanos>) -> String {
    v.map_or_else(|| "-".into(), |n| format!("{:.3}", n.as_millis_f64()))
}

fn rtt_cell(s: &RttStats) -> String {
    if s.samples == 0 {
        "-".into()
    } else {
        format!(
            "{}/{}/{} ({})",
            ms(s.min),
            ms(s.mean()),
            ms(s.max),
            s.samples
        )
    }
}

fn rel(t: Timestamp, origin: Option<Timestamp>) -> String {
    match origin {
        Some(o) => format!("{:.6}", t.since(o).as_secs_f64()),
        None => t.to_string(),
    }
}

pub fn write(out: &mut dyn Write, f: &FileAnalysis) -> std::io::Result<()> {
    let mut s = String::new();
    render(&mut s, f).expect("writing to a String cannot fail");
    out.write_all(s.as_bytes())
}

fn render(s: &mut String, f: &FileAnalysis) -> std::fmt::Result {
    let span = match (f.first_time, f.last_time) {
        (Some(a), Some(b)) => format!(", {:.3} s", b.since(a).as_secs_f64()),
        _ => String::new(),
    };
    writeln!(
        s,
        "{}  ({:?}{}, {} frames{})",
        f.path.display(),
        f.format,
        if f.compressed { ", gzip" } else { "" },
        f.frames,
        span
    )?;
    let a = &f.accounting;
    let mut parts = vec![format!("{} SCTP analysed", a.sctp)];
    for (n, label) in [
        (a.sctp_truncated, "SCTP cut by snaplen (partly analysed)"),
        (a.sctp_malformed, "SCTP with malformed chunks"),
        (a.capture_duplicates, "capture duplicates"),
        (a.icmp_about_sctp, "ICMP errors about SCTP"),
        (a.ip_fragments, "IP fragments"),
        (a.not_sctp, "not SCTP"),
        (a.truncated, "truncated"),
        (a.malformed, "malformed"),
        (a.unsupported_link_type, "unsupported link type"),
        (a.non_packet_records, "pcapng records without packets"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {label}"));
        }
    }
    writeln!(s, "  frames: {}", parts.join(", "))?;
    if let Some(w) = &f.warning {
        writeln!(s, "  warning: {w}")?;
    }
    for p in f.problems.iter().take(5) {
        writeln!(s, "  frame {}: {}", p.frame, p.reason)?;
    }
    if f.problems.len() > 5 {
        writeln!(
            s,
            "  … {} more problem frames (see --format json)",
            f.problems.len() - 5
        )?;
    }
    if f.time_order.regressions > 0 {
        writeln!(
            s,
            "  timestamps go backwards {} time(s), first at frame {}, by up to {}",
            f.time_order.regressions,
            f.time_order.first_regression_frame.unwrap_or(0),
            f.time_order.largest_regression
        )?;
    }
    if f.checksum.verified {
        writeln!(
            s,
            "  CRC32c: {} failure(s){}",
            f.checksum.failures,
            f.checksum
                .first_failure_frame
                .map_or(String::new(), |n| format!(", first at frame {n}"))
        )?;
    }
    let chunks: Vec<String> = f
        .counters
        .chunks
        .iter()
        .map(|(n, c)| format!("{n} {c}"))
        .collect();
    writeln!(s, "  chunks: {}", chunks.join(", "))?;
    for assoc in &f.associations {
        association(s, f, assoc)?;
    }
    handovers(s, f)?;
    Ok(())
}

fn cell(c: &crate::handover::Component) -> String {
    c.ms.map_or_else(|| "-".into(), |v| format!("{v:.3}"))
}

fn handovers(s: &mut String, f: &FileAnalysis) -> std::fmt::Result {
    if f.handovers.is_empty() {
        return Ok(());
    }
    writeln!(s)?;
    writeln!(
        s,
        "handovers (ms; capture point {:?}; '-' = not computable, see --format json for why)",
        f.capture_point
    )?;
    writeln!(
        s,
        "  {:>5} {:>3} {:>9} {:<8} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>4}",
        "assoc", "dir", "paths", "class", "frame", "interrupt", "total", "network", "transport", "ADDIP", "SETPRIM", "recovery", "failover", "rtx"
    )?;
    for h in &f.handovers {
        writeln!(
            s,
            "  {:>5} {:>3} {:>9} {:<8} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>4}",
            h.association,
            format!("{}>{}", h.sender, 1 - h.sender),
            format!("{}->{}", h.from_path, h.to_path),
            format!("{:?}", h.class).to_lowercase(),
            h.switch_frame,
            cell(&h.data_interrupt),
            cell(&h.total_handover_latency),
            cell(&h.network_disconnection),
            cell(&h.transport_latency),
            cell(&h.addip_sent),
            cell(&h.setprim_sent),
            cell(&h.sender_recovery),
            h.failover.as_ref().map_or_else(|| "-".into(), |x| cell(&x.failover_time)),
            h.window.retransmissions
        )?;
    }
    Ok(())
}

fn association(s: &mut String, f: &FileAnalysis, a: &Association) -> std::fmt::Result {
    let origin = f.first_time;
    let start = match a.start {
        Start::Init => "INIT",
        Start::InitAck => "INIT ACK (INIT not captured)",
        Start::MidStream => "mid-stream (no INIT captured)",
    };
    writeln!(s)?;
    writeln!(
        s,
        "association {}  ports {} <-> {}  from {} at frame {}{}, {} packets",
        a.id,
        a.endpoints[0].port,
        a.endpoints[1].port,
        start,
        a.first_frame,
        match (a.end, a.end_frame) {
            (Some(r), Some(fr)) => format!(", ended by {r} at frame {fr}"),
            _ => String::new(),
        },
        a.packets
    )?;
    for (i, e) in a.endpoints.iter().enumerate() {
        let addrs: Vec<String> = e
            .addresses
            .iter()
            .map(|ad| {
                let how: Vec<&str> = ad
                    .learned_from
                    .iter()
                    .map(|h| match h {
                        AddressSource::Init => "init",
                        AddressSource::Observed => "seen",
                        AddressSource::Asconf => "asconf",
                    })
                    .collect();
                let mut t = format!("{} [{}]", ad.address, how.join(","));
                if let Some(c) = ad.confirmed_frame {
                    let _ = write!(t, " confirmed@{c}");
                }
                if let Some(d) = ad.deleted_frame {
                    let _ = write!(t, " deleted@{d}");
                }
                t
            })
            .collect();
        writeln!(
            s,
            "  endpoint {i}: port {}, tag {}: {}",
            e.port,
            e.verification_tag
                .map_or_else(|| "?".into(), |t| format!("0x{t:08x}")),
            addrs.join("; ")
        )?;
    }
    writeln!(
        s,
        "  {:>4} {:<36} {:>6} {:>9} {:>11} {:>8} {:>28} {:>28} {:>8} {:>9} {:>8}",
        "path",
        "source -> destination",
        "pkts",
        "bytes",
        "DATA new/rt",
        "HB s/a",
        "HB RTT ms min/mean/max (n)",
        "DATA RTT ms min/mean/max (n)",
        "RTO ms",
        "confirmed",
        "state"
    )?;
    for p in &a.paths {
        writeln!(
            s,
            "  {:>4} {:<36} {:>6} {:>9} {:>11} {:>8} {:>28} {:>28} {:>8} {:>9} {:>8}",
            p.id,
            format!("{} -> {}", p.src, p.dst),
            p.packets,
            p.bytes,
            format!("{}/{}", p.data_new, p.data_retransmitted),
            format!("{}/{}", p.heartbeats_sent, p.heartbeats_acked),
            rtt_cell(&p.hb_rtt),
            rtt_cell(&p.data_rtt),
            ms(p.rto.srtt.map(|_| p.rto.rto)),
            p.confirmed_frame
                .map_or_else(|| "-".into(), |c| c.to_string()),
            if p.active { "active" } else { "inactive" }
        )?;
    }
    for d in &a.directions {
        let c = &d.counters;
        if c.data_chunks == 0 && c.sacks == 0 {
            continue;
        }
        writeln!(
            s,
            "  data {} -> {}: {} new, {} retransmitted ({} after ack, {} fast), {} SACKs, {} gap blocks, {} dup TSNs reported",
            d.sender,
            1 - d.sender,
            c.new_chunks,
            c.retransmitted_chunks,
            c.retransmitted_after_ack,
            c.fast_retransmissions,
            c.sacks,
            c.gap_blocks,
            c.dup_tsns_reported
        )?;
        let segs: Vec<String> = d
            .new_data_paths
            .iter()
            .map(|g| {
                format!(
                    "path {} frames {}-{} ({} chunks)",
                    g.path, g.first_frame, g.last_frame, g.new_chunks
                )
            })
            .collect();
        if !segs.is_empty() {
            writeln!(s, "    new DATA on: {}", segs.join(", "))?;
        }
    }
    for e in f.events.iter().filter(|e| e.association == a.id) {
        match &e.kind {
            EventKind::Asconf {
                serial,
                requests,
                sender,
                ..
            } => {
                let reqs: Vec<String> = requests
                    .iter()
                    .map(|r| format!("{} {} (corr {})", r.op.name(), r.address, r.correlation_id))
                    .collect();
                writeln!(
                    s,
                    "  frame {:>6} t={} ASCONF serial {} from endpoint {}: {}",
                    e.frame,
                    rel(e.time, origin),
                    serial,
                    sender,
                    reqs.join(", ")
                )?;
            }
            EventKind::AsconfAck {
                serial,
                request_frame,
                rtt_ms,
                results,
                ..
            } => {
                let res: Vec<String> = results
                    .iter()
                    .map(|r| {
                        format!(
                            "{} {}: {:?}{}",
                            r.op.name(),
                            r.address,
                            r.outcome,
                            r.error_cause.map_or(String::new(), |c| format!(" ({c})"))
                        )
                    })
                    .collect();
                writeln!(
                    s,
                    "  frame {:>6} t={} ASCONF-ACK serial {} for frame {} (RTT {} ms): {}",
                    e.frame,
                    rel(e.time, origin),
                    serial,
                    request_frame.map_or_else(|| "?".into(), |r| r.to_string()),
                    rtt_ms.map_or_else(|| "-".into(), |r| format!("{r:.3}")),
                    res.join(", ")
                )?;
            }
            EventKind::DataPathChange {
                sender,
                from_path: Some(from),
                to_path,
                tsn,
            } => {
                writeln!(
                    s,
                    "  frame {:>6} t={} new DATA from endpoint {} moves from path {} to path {} (TSN {})",
                    e.frame,
                    rel(e.time, origin),
                    sender,
                    from,
                    to_path,
                    tsn
                )?;
            }
            EventKind::PathInactive { path, error_count } => writeln!(
                s,
                "  frame {:>6} t={} path {} inferred inactive after {} consecutive errors",
                e.frame,
                rel(e.time, origin),
                path,
                error_count
            )?,
            _ => {}
        }
    }
    Ok(())
}
