//! Writes synthetic captures for measuring the analyzer's time and memory.
//! Deterministic: the same arguments (and seed) give the same bytes.
//! Every mode takes `--format pcap` (nanosecond pcap, the default) or
//! `--format pcapng` (one interface, nanosecond resolution).
//!
//! ```text
//! gen_workload never-ending OUT [--associations 20000] [--seed 1] [--shared-ports]
//!     Associations that never end: each an INIT, INIT ACK, COOKIE ECHO,
//!     COOKIE ACK, one DATA and its SACK, with its own ports and tags, all
//!     within a few seconds (raw IPv4). --shared-ports: all on ports
//!     2905 <-> 2905 (as M3UA does), each between its own pair of addresses.
//!
//! gen_workload short OUT --megabytes 100 [--alive 200] [--seed 1]
//!                        [--template sample-captures/koh-kim-1/mn.pcap]
//!     Copies of the template's exchange (Koh & Kim: handshake, data, ADD-IP,
//!     SET-PRIMARY, DELETE-IP, SHUTDOWN COMPLETE) with shifted tags, ports
//!     and times until the file reaches the size, started at a steady rate
//!     so that about --alive associations are in the analyzer at once
//!     (counting the 10 s it keeps an ended association).
//!
//! gen_workload long OUT --megabytes 100 [--associations 4] [--rate 50] [--seed 1]
//!     A few long associations between two multihomed core nodes (Ethernet,
//!     IPv4), simulated endpoint by endpoint until the file reaches the
//!     size: signalling-sized DATA both ways (--rate messages per second per
//!     direction per association), delayed SACKs, HEARTBEATs on the idle
//!     paths, and in turn ASCONF renumberings (ADD-IP, SET-PRIMARY with a
//!     planned DATA switch, DELETE-IP) and network outages (T3 timeouts,
//!     retransmissions on the alternate path, failover and return). See
//!     long.rs for the model.
//! ```
//!
//! OUT may be a named pipe (`mkfifo`) that the analyzer reads as it is
//! written: `make bench` measures memory over 16 GB that way, without the
//! disk space.
//!
//! Then, for example:
//!
//! ```text
//! cargo build --release -p sctp-handover --examples -p sctp-handover-lab --bin gen_workload
//! target/release/gen_workload long /tmp/long100.pcap --megabytes 100
//! /usr/bin/time -v target/release/examples/stream /tmp/long100.pcap summary > /dev/null
//! ```

mod long;
mod packet;
mod writer;

use packet::{chunk, init_value, sctp_over_ipv4, seal_sctp, Rng};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use writer::{CaptureWriter, Format};

const LINKTYPE_IPV4: u32 = 228;
/// How long the analyzer keeps an ended association (TrackConfig default).
const END_LINGER_NS: i64 = 10_000_000_000;
/// Capture start of generated files: 2025-01-01T00:00:00Z.
const EPOCH_NS: i64 = 1_735_689_600_000_000_000;

/// (a) `associations` handshakes with one DATA and SACK each, never ended.
fn never_ending(
    path: &Path,
    associations: u32,
    seed: u64,
    shared_ports: bool,
    format: Format,
) -> std::io::Result<CaptureWriter> {
    let mut rng = Rng::new(seed);
    let mut w = CaptureWriter::create(path, format, LINKTYPE_IPV4)?;
    // 200 µs per association: 20 000 of them within 4 s.
    let step = 200_000i64;
    for i in 0..associations {
        let client = [10, 2, (i >> 8) as u8, i as u8];
        let (server, ports) = if shared_ports {
            ([10, 3, (i >> 8) as u8, i as u8], (2905, 2905))
        } else {
            // Ports no Wireshark dissector is registered for (opaque data).
            let ports = (40_000 + (i % 25_000) as u16, 5_000 + (i / 25_000) as u16);
            ([10, 1, 0, 1], ports)
        };
        let back = (ports.1, ports.0);
        let (t0, t1) = (rng.tag(), rng.tag());
        let (tsn0, tsn1) = (rng.next() as u32, rng.next() as u32);
        let cookie = rng.next().to_be_bytes();
        let mut t = EPOCH_NS + i64::from(i) * step;
        let mut send = |w: &mut CaptureWriter, ip: Vec<u8>| {
            t += 20_000;
            w.frame(t, &ip)
        };
        let init = chunk(1, 0, &init_value(t0, tsn0, None));
        send(&mut w, sctp_over_ipv4(client, server, ports, 0, &[init]))?;
        let init_ack = chunk(2, 0, &init_value(t1, tsn1, Some(&cookie)));
        send(
            &mut w,
            sctp_over_ipv4(server, client, back, t0, &[init_ack]),
        )?;
        let echo = chunk(10, 0, &cookie);
        send(&mut w, sctp_over_ipv4(client, server, ports, t1, &[echo]))?;
        let ack = chunk(11, 0, &[]);
        send(&mut w, sctp_over_ipv4(server, client, back, t0, &[ack]))?;
        let mut data = Vec::new();
        data.extend_from_slice(&tsn0.to_be_bytes());
        data.extend_from_slice(&[0, 0, 0, 0]); // stream, SSN
        if shared_ports {
            // PPID 3 and an M3UA ASP Up, which tshark decodes on port 2905.
            data.extend_from_slice(&3u32.to_be_bytes());
            data.extend_from_slice(&[1, 0, 3, 1, 0, 0, 0, 8]);
        } else {
            data.extend_from_slice(&0u32.to_be_bytes());
            data.extend_from_slice(b"ping");
        }
        let data = chunk(0, 0x03, &data);
        send(&mut w, sctp_over_ipv4(client, server, ports, t1, &[data]))?;
        let mut sack = Vec::new();
        sack.extend_from_slice(&tsn0.to_be_bytes());
        sack.extend_from_slice(&65_536u32.to_be_bytes());
        sack.extend_from_slice(&[0, 0, 0, 0]);
        let sack = chunk(3, 0, &sack);
        send(&mut w, sctp_over_ipv4(server, client, back, t0, &[sack]))?;
    }
    Ok(w)
}

struct Template {
    link_type: u32,
    /// (time since the first frame, bytes)
    frames: Vec<(i64, Vec<u8>)>,
    duration: i64,
}

fn read_template(path: &Path) -> Template {
    let mut reader = sctp_handover::capture::open(path).expect("template capture");
    let mut frames = Vec::new();
    let mut link_type = None;
    let mut first = None;
    reader
        .for_each_frame(|f| {
            let t0 = *first.get_or_insert(f.timestamp.0);
            assert_eq!(*link_type.get_or_insert(f.link_type), f.link_type);
            assert_eq!(
                f.data.len() as u32,
                f.original_len,
                "template frames are whole"
            );
            frames.push((f.timestamp.0 - t0, f.data.to_vec()));
        })
        .expect("readable template");
    let duration = frames.last().map_or(0, |f| f.0);
    Template {
        link_type: link_type.expect("template has frames"),
        frames,
        duration,
    }
}

/// Where the IP packet starts in a frame of the template's link type.
fn ip_offset(link_type: u32) -> usize {
    match link_type {
        276 => 20, // Linux cooked v2
        113 => 16, // Linux cooked v1
        1 => 14,   // Ethernet without VLAN tags
        228 | 229 | 101 => 0,
        other => panic!("template link type {other} not handled"),
    }
}

/// The SCTP packet inside an IP packet, if any (IPv4, or IPv6 without
/// extension headers).
fn sctp_range(ip: &[u8]) -> Option<std::ops::Range<usize>> {
    match ip.first()? >> 4 {
        4 if ip.len() >= 20 && ip[9] == 132 => Some(usize::from(ip[0] & 0x0f) * 4..ip.len()),
        6 if ip.len() >= 40 && ip[6] == 132 => Some(40..ip.len()),
        _ => None,
    }
}

/// Copy `k` of a template frame: SCTP tags XOR `mask`, both ports `port`.
fn rewrite(frame: &mut [u8], link_type: u32, mask: u32, port: u16) {
    let ip = &mut frame[ip_offset(link_type)..];
    let Some(range) = sctp_range(ip) else {
        return;
    };
    let sctp = &mut ip[range];
    if sctp.len() < 12 {
        return;
    }
    let flip = |b: &mut [u8]| {
        let t = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        if t != 0 {
            b.copy_from_slice(&(t ^ mask).to_be_bytes());
        }
    };
    sctp[0..2].copy_from_slice(&port.to_be_bytes());
    sctp[2..4].copy_from_slice(&port.to_be_bytes());
    flip(&mut sctp[4..8]);
    let mut at = 12;
    while at + 4 <= sctp.len() {
        let kind = sctp[at];
        let len = usize::from(u16::from_be_bytes([sctp[at + 2], sctp[at + 3]]));
        if len < 4 || at + len > sctp.len() {
            break;
        }
        if matches!(kind, 1 | 2) && len >= 8 {
            flip(&mut sctp[at + 4..at + 8]); // Initiate Tag
        }
        at += len.next_multiple_of(4);
    }
    seal_sctp(sctp);
}

/// (b) Copies of the template until the file reaches `megabytes`.
fn short(
    path: &Path,
    template: &Path,
    megabytes: u64,
    alive: u32,
    seed: u64,
    format: Format,
) -> std::io::Result<(CaptureWriter, u32)> {
    let t = read_template(template);
    let record = |len: usize| match format {
        Format::Pcap => 16 + len as u64,
        Format::Pcapng => 32 + len.next_multiple_of(4) as u64,
    };
    let template_bytes: u64 = t.frames.iter().map(|(_, d)| record(d.len())).sum();
    let target = megabytes * 1_000_000;
    let copies = target.div_ceil(template_bytes).max(1) as u32;
    // Each copy stays in the analyzer for its duration plus the linger.
    let spacing = (t.duration + END_LINGER_NS) / i64::from(alive.max(1));
    let mut rng = Rng::new(seed);
    let masks: Vec<u32> = (0..copies).map(|_| rng.tag()).collect();
    let mut w = CaptureWriter::create(path, format, t.link_type)?;
    // Merge the copies in time order: (time, copy, frame index).
    let mut next: BinaryHeap<Reverse<(i64, u32, usize)>> = BinaryHeap::new();
    let start = |k: u32| EPOCH_NS + i64::from(k) * spacing;
    let mut started = 0u32;
    let mut frame = Vec::new();
    loop {
        // Start every copy whose first frame is not later than the next one.
        while started < copies
            && next
                .peek()
                .is_none_or(|Reverse((at, _, _))| start(started) <= *at)
        {
            next.push(Reverse((start(started), started, 0)));
            started += 1;
        }
        let Some(Reverse((at, k, i))) = next.pop() else {
            break;
        };
        frame.clear();
        frame.extend_from_slice(&t.frames[i].1);
        // Ports no Wireshark dissector is registered for (opaque data).
        let port = 40_000 + (k % 25_000) as u16;
        rewrite(&mut frame, t.link_type, masks[k as usize], port);
        w.frame(at, &frame)?;
        if let Some(f) = t.frames.get(i + 1) {
            next.push(Reverse((start(k) + f.0, k, i + 1)));
        }
    }
    Ok((w, copies))
}

fn usage() -> ! {
    eprintln!(
        "usage: gen_workload never-ending OUT [--associations N] [--seed S] [--shared-ports] [--format pcap|pcapng]\n       gen_workload short OUT --megabytes M [--alive A] [--seed S] [--template PCAP] [--format pcap|pcapng]\n       gen_workload long OUT --megabytes M [--associations N] [--rate R] [--seed S] [--format pcap|pcapng]"
    );
    std::process::exit(2)
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(mode), Some(out)) = (args.first(), args.get(1)) else {
        usage()
    };
    let option = |name: &str| -> Option<&str> {
        args.iter().position(|a| a == name).map(|i| {
            args.get(i + 1)
                .map(String::as_str)
                .unwrap_or_else(|| usage())
        })
    };
    let number = |name: &str, default: u64| -> u64 {
        option(name).map_or(default, |v| v.parse().unwrap_or_else(|_| usage()))
    };
    let seed = number("--seed", 1);
    let format = option("--format").map_or(Format::Pcap, |f| {
        Format::parse(f).unwrap_or_else(|| usage())
    });
    let megabytes = || -> u64 {
        let mb = option("--megabytes").unwrap_or_else(|| usage());
        mb.parse().unwrap_or_else(|_| usage())
    };
    let out = PathBuf::from(out);
    let started = std::time::Instant::now();
    let (w, what) = match mode.as_str() {
        "never-ending" => {
            let n = number("--associations", 20_000) as u32;
            let shared = args.iter().any(|a| a == "--shared-ports");
            (
                never_ending(&out, n, seed, shared, format)?,
                format!("{n} associations"),
            )
        }
        "short" => {
            let template = option("--template").map_or_else(
                || {
                    Path::new(env!("CARGO_MANIFEST_DIR"))
                        .join("../sample-captures/koh-kim-1/mn.pcap")
                },
                PathBuf::from,
            );
            let alive = number("--alive", 200) as u32;
            let (w, copies) = short(&out, &template, megabytes(), alive, seed, format)?;
            (w, format!("{copies} associations, ~{alive} alive at once"))
        }
        "long" => {
            let associations = number("--associations", 4) as u32;
            let rate: f64 =
                option("--rate").map_or(50.0, |v| v.parse().unwrap_or_else(|_| usage()));
            let mut w = CaptureWriter::create(&out, format, long::LINKTYPE_ETHERNET)?;
            let options = long::Options {
                associations,
                rate,
                target_bytes: megabytes() * 1_000_000,
                start_ns: EPOCH_NS,
            };
            let stats = long::generate(&mut w, Rng::new(seed), &options)?;
            (
                w,
                format!(
                    "{associations} associations, {} renumberings, {} outages",
                    stats.renumberings, stats.outages
                ),
            )
        }
        _ => usage(),
    };
    let (bytes, frames) = w.finish()?;
    eprintln!(
        "{}: {frames} frames, {bytes} bytes, {what} ({:.1} s)",
        out.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
