//! Writes synthetic captures for measuring the analyzer's time and memory.
//! Deterministic: the same arguments (and seed) give the same bytes.
//!
//! ```text
//! gen_workload never-ending OUT.pcap [--associations 20000] [--seed 1] [--shared-ports]
//!     Associations that never end: each an INIT, INIT ACK, COOKIE ECHO,
//!     COOKIE ACK, one DATA and its SACK, with its own ports and tags, all
//!     within a few seconds (raw IPv4, nanosecond pcap). --shared-ports:
//!     all on ports 2905 <-> 2905 (as M3UA does), each between its own
//!     pair of addresses.
//!
//! gen_workload short OUT.pcap --megabytes 100 [--alive 200] [--seed 1]
//!                             [--template sample-captures/koh-kim-1/mn.pcap]
//!     Copies of the template's exchange (Koh & Kim: handshake, data, ADD-IP,
//!     SET-PRIMARY, DELETE-IP, SHUTDOWN COMPLETE) with shifted tags, ports
//!     and times until the file reaches the size, started at a steady rate
//!     so that about --alive associations are in the analyzer at once
//!     (counting the 10 s it keeps an ended association).
//! ```
//!
//! Then, for example:
//!
//! ```text
//! cargo build --release -p sctp-handover --examples
//! target/release/examples/gen_workload short /tmp/short100.pcap --megabytes 100
//! /usr/bin/time -v target/release/examples/stream /tmp/short100.pcap summary > /dev/null
//! ```

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

const LINKTYPE_IPV4: u32 = 228;
/// How long the analyzer keeps an ended association (TrackConfig default).
const END_LINGER_NS: i64 = 10_000_000_000;
/// Capture start of generated files: 2025-01-01T00:00:00Z.
const EPOCH_NS: i64 = 1_735_689_600_000_000_000;

/// xorshift64*: a fixed sequence from the seed.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// A non-zero 32-bit tag.
    fn tag(&mut self) -> u32 {
        loop {
            let t = self.next() as u32;
            if t != 0 {
                return t;
            }
        }
    }
}

struct PcapWriter {
    out: BufWriter<std::fs::File>,
    bytes: u64,
    frames: u64,
}

impl PcapWriter {
    fn create(path: &Path, link_type: u32) -> std::io::Result<Self> {
        let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
        out.write_all(&0xa1b2_3c4du32.to_le_bytes())?; // nanosecond pcap
        out.write_all(&2u16.to_le_bytes())?;
        out.write_all(&4u16.to_le_bytes())?;
        out.write_all(&0u32.to_le_bytes())?;
        out.write_all(&0u32.to_le_bytes())?;
        out.write_all(&262_144u32.to_le_bytes())?;
        out.write_all(&link_type.to_le_bytes())?;
        Ok(PcapWriter {
            out,
            bytes: 24,
            frames: 0,
        })
    }

    fn frame(&mut self, ts_ns: i64, data: &[u8]) -> std::io::Result<()> {
        let secs = ts_ns.div_euclid(1_000_000_000) as u32;
        let nanos = ts_ns.rem_euclid(1_000_000_000) as u32;
        for v in [secs, nanos, data.len() as u32, data.len() as u32] {
            self.out.write_all(&v.to_le_bytes())?;
        }
        self.out.write_all(data)?;
        self.bytes += 16 + data.len() as u64;
        self.frames += 1;
        Ok(())
    }
}

/// Writes the CRC32c of an SCTP packet into its common header.
fn seal_sctp(sctp: &mut [u8]) {
    sctp[8..12].fill(0);
    let crc = crc32c::crc32c(sctp);
    sctp[8..12].copy_from_slice(&crc.to_le_bytes());
}

fn ipv4_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header
        .chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// An IPv4 datagram carrying one SCTP packet made of `chunks`.
fn sctp_over_ipv4(
    src: [u8; 4],
    dst: [u8; 4],
    ports: (u16, u16),
    vtag: u32,
    chunks: &[Vec<u8>],
) -> Vec<u8> {
    let mut sctp = Vec::with_capacity(64);
    sctp.extend_from_slice(&ports.0.to_be_bytes());
    sctp.extend_from_slice(&ports.1.to_be_bytes());
    sctp.extend_from_slice(&vtag.to_be_bytes());
    sctp.extend_from_slice(&[0; 4]);
    for c in chunks {
        sctp.extend_from_slice(c);
        sctp.resize(sctp.len().next_multiple_of(4), 0);
    }
    seal_sctp(&mut sctp);
    let total = 20 + sctp.len();
    let mut ip = vec![
        0x45,
        0,
        (total >> 8) as u8,
        total as u8,
        0,
        0,
        0x40,
        0,
        64,
        132,
        0,
        0,
    ];
    ip.extend_from_slice(&src);
    ip.extend_from_slice(&dst);
    let sum = ipv4_checksum(&ip);
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    ip.extend_from_slice(&sctp);
    ip
}

fn chunk(kind: u8, flags: u8, value: &[u8]) -> Vec<u8> {
    let mut c = vec![kind, flags];
    c.extend_from_slice(&((4 + value.len()) as u16).to_be_bytes());
    c.extend_from_slice(value);
    c
}

fn init_value(tag: u32, tsn: u32, cookie: Option<&[u8]>) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&tag.to_be_bytes());
    v.extend_from_slice(&65_536u32.to_be_bytes()); // a_rwnd
    v.extend_from_slice(&10u16.to_be_bytes()); // outbound streams
    v.extend_from_slice(&10u16.to_be_bytes()); // inbound streams
    v.extend_from_slice(&tsn.to_be_bytes());
    if let Some(cookie) = cookie {
        v.extend_from_slice(&7u16.to_be_bytes()); // State Cookie
        v.extend_from_slice(&((4 + cookie.len()) as u16).to_be_bytes());
        v.extend_from_slice(cookie);
    }
    v
}

/// (a) `associations` handshakes with one DATA and SACK each, never ended.
fn never_ending(
    path: &Path,
    associations: u32,
    seed: u64,
    shared_ports: bool,
) -> std::io::Result<PcapWriter> {
    let mut rng = Rng::new(seed);
    let mut w = PcapWriter::create(path, LINKTYPE_IPV4)?;
    // 200 µs per association: 20 000 of them within 4 s.
    let step = 200_000i64;
    for i in 0..associations {
        let client = [10, 2, (i >> 8) as u8, i as u8];
        let (server, ports) = if shared_ports {
            ([10, 3, (i >> 8) as u8, i as u8], (2905, 2905))
        } else {
            let ports = (10_000 + (i % 50_000) as u16, 5_000 + (i / 50_000) as u16);
            ([10, 1, 0, 1], ports)
        };
        let back = (ports.1, ports.0);
        let (t0, t1) = (rng.tag(), rng.tag());
        let (tsn0, tsn1) = (rng.next() as u32, rng.next() as u32);
        let cookie = rng.next().to_be_bytes();
        let mut t = EPOCH_NS + i64::from(i) * step;
        let mut send = |w: &mut PcapWriter, ip: Vec<u8>| {
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
        data.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]); // stream, SSN, PPID
        data.extend_from_slice(b"ping");
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
) -> std::io::Result<(PcapWriter, u32)> {
    let t = read_template(template);
    let template_bytes: u64 = t.frames.iter().map(|(_, d)| 16 + d.len() as u64).sum();
    let target = megabytes * 1_000_000;
    let copies = target.div_ceil(template_bytes).max(1) as u32;
    // Each copy stays in the analyzer for its duration plus the linger.
    let spacing = (t.duration + END_LINGER_NS) / i64::from(alive.max(1));
    let mut rng = Rng::new(seed);
    let masks: Vec<u32> = (0..copies).map(|_| rng.tag()).collect();
    let mut w = PcapWriter::create(path, t.link_type)?;
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
        let port = 1024 + (k % 60_000) as u16;
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
        "usage: gen_workload never-ending OUT [--associations N] [--seed S] [--shared-ports]\n       gen_workload short OUT --megabytes M [--alive A] [--seed S] [--template PCAP]"
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
    let out = PathBuf::from(out);
    let started = std::time::Instant::now();
    let (w, what) = match mode.as_str() {
        "never-ending" => {
            let n = number("--associations", 20_000) as u32;
            let shared = args.iter().any(|a| a == "--shared-ports");
            (
                never_ending(&out, n, seed, shared)?,
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
            let mb = option("--megabytes").unwrap_or_else(|| usage());
            let mb: u64 = mb.parse().unwrap_or_else(|_| usage());
            let alive = number("--alive", 200) as u32;
            let (w, copies) = short(&out, &template, mb, alive, seed)?;
            (w, format!("{copies} associations, ~{alive} alive at once"))
        }
        _ => usage(),
    };
    let (bytes, frames) = (w.bytes, w.frames);
    w.out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    eprintln!(
        "{}: {frames} frames, {bytes} bytes, {what} ({:.1} s)",
        out.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
