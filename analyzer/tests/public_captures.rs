//! Every capture in `../shared/public-captures` (real captures from public
//! projects, listed in its `INDEX.tsv` with tshark's frame counts) is read
//! without a panic, with every frame accounted for, and with as many SCTP
//! frames as tshark selects with `-Y sctp`.

mod common;

use sctp_handover::analysis::{analyze_file, Accounting, AnalysisOptions};
use sctp_handover::capture::{self, link_type, Frame};
use sctp_handover::decode::{DecodeOptions, Decoded, Decoder};
use sctp_handover::wire::{ethernet, ethertype, ip_protocol, ipv4, linux_sll, udp};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

struct Entry {
    file: String,
    frames: u64,
    sctp_frames: u64,
}

fn index(dir: &Path) -> Vec<Entry> {
    let text = std::fs::read_to_string(dir.join("INDEX.tsv")).expect("read INDEX.tsv");
    let mut lines = text.lines();
    let header: Vec<&str> = lines
        .next()
        .expect("INDEX.tsv header")
        .split('\t')
        .collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("INDEX.tsv has no column {name}"))
    };
    let (file, frames, sctp_frames) = (col("file"), col("frames"), col("sctp_frames"));
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let num = |i: usize| -> u64 {
                f[i].parse()
                    .unwrap_or_else(|_| panic!("INDEX.tsv: bad number {:?} in {l}", f[i]))
            };
            Entry {
                file: f[file].to_string(),
                frames: num(frames),
                sctp_frames: num(sctp_frames),
            }
        })
        .collect()
}

/// The frames tshark shows with an SCTP layer (`-Y sctp`), from our
/// accounting:
/// * every SCTP packet, whether complete, cut by the snaplen or with a
///   malformed chunk (tshark dissects the common header in all three);
/// * capture duplicates (tshark dissects each copy);
/// * ICMP errors quoting SCTP (tshark dissects the quoted SCTP header);
/// * the frame that completes an IP reassembly (counted as `sctp` by us;
///   the other fragments are `ip_fragments`, which tshark does not show as
///   SCTP);
///
/// plus the frames counted by [`sctp_only_for_tshark`].
fn tshark_sctp_frames(a: &Accounting) -> u64 {
    a.sctp
        + a.sctp_truncated
        + a.sctp_malformed
        + a.sctp_untracked
        + a.capture_duplicates
        + a.icmp_about_sctp
}

/// Frames tshark shows as SCTP that we deliberately do not analyse as SCTP
/// (definitional differences, not bugs):
/// * SCTP inside a GTP-U tunnel (UDP port 2152; a UE's own traffic, not the
///   transport network's associations): we count the frame `not_sctp`;
///   tshark dissects the inner packet.
fn sctp_only_for_tshark(path: &Path) -> Result<u64, String> {
    let mut reader = capture::open(path).map_err(|e| format!("open: {e}"))?;
    let mut decoder = Decoder::new(DecodeOptions::default());
    let mut extra = 0;
    reader
        .for_each_frame(|frame| {
            if !matches!(decoder.decode(&frame), Decoded::NotSctp) {
                return;
            }
            if let Some(inner) = gtp_u_payload(&frame) {
                let inner_frame = Frame {
                    link_type: link_type::RAW,
                    original_len: inner.len() as u32,
                    data: inner,
                    ..frame
                };
                let mut fresh = Decoder::new(DecodeOptions::default());
                if matches!(
                    fresh.decode(&inner_frame),
                    Decoded::Sctp(_) | Decoded::IcmpAboutSctp(_)
                ) {
                    extra += 1;
                }
            }
        })
        .map_err(|e| format!("read: {e}"))?;
    Ok(extra)
}

/// The packet a GTP-U T-PDU carries (TS 29.281 §5), over IPv4/UDP behind
/// Ethernet or a Linux cooked header.
fn gtp_u_payload<'a>(frame: &Frame<'a>) -> Option<&'a [u8]> {
    const GTP_U_PORT: u16 = 2152;
    let (et, ip) = match frame.link_type {
        link_type::ETHERNET => ethernet::Frame::new_checked(frame.data)
            .ok()?
            .payload()
            .ok()?,
        link_type::LINUX_SLL => {
            let sll = linux_sll::SllPacket::new_checked(frame.data).ok()?;
            (sll.protocol(), sll.payload())
        }
        link_type::LINUX_SLL2 => {
            let sll = linux_sll::Sll2Packet::new_checked(frame.data).ok()?;
            (sll.protocol(), sll.payload())
        }
        _ => return None,
    };
    if et != ethertype::IPV4 {
        return None;
    }
    let ip = ipv4::Packet::new_checked(ip).ok()?;
    if ip.protocol() != ip_protocol::UDP || ip.is_fragment() {
        return None;
    }
    let udp = udp::Packet::new_checked(ip.payload().0).ok()?;
    if udp.dst_port() != GTP_U_PORT && udp.src_port() != GTP_U_PORT {
        return None;
    }
    let gtp = udp.payload();
    // Version 1, protocol type GTP, message type T-PDU.
    if gtp.len() < 8 || gtp[0] >> 4 != 0x3 || gtp[1] != 0xff {
        return None;
    }
    let mut offset = 8;
    if gtp[0] & 0x07 != 0 {
        // Sequence number, N-PDU number, next extension header type.
        offset = 12;
        let mut next = *gtp.get(11)?;
        while next != 0 {
            let len = usize::from(*gtp.get(offset)?) * 4;
            if len == 0 {
                return None;
            }
            next = *gtp.get(offset + len - 1)?;
            offset += len;
        }
    }
    gtp.get(offset..)
}

fn check(path: &Path, entry: &Entry) -> Result<(), String> {
    let analysis = analyze_file(path, &AnalysisOptions::default())
        .map_err(|e| format!("analyze_file failed: {e}"))?;
    let report = &analysis.file;
    let a = &report.accounting;
    let mut wrong = Vec::new();
    if report.frames != entry.frames {
        wrong.push(format!(
            "frames {} (INDEX: {})",
            report.frames, entry.frames
        ));
    }
    if a.total() != report.frames {
        wrong.push(format!(
            "accounting adds up to {} of {} frames: {a:?}",
            a.total(),
            report.frames
        ));
    }
    let extra = sctp_only_for_tshark(path)?;
    let sctp = tshark_sctp_frames(a) + extra;
    if sctp != entry.sctp_frames {
        wrong.push(format!(
            "SCTP frames {sctp} (of which {extra} only for tshark; INDEX/tshark: {}): {a:?}",
            entry.sctp_frames
        ));
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(wrong.join("; "))
    }
}

#[test]
fn every_public_capture_is_read_and_accounted_like_tshark() {
    let Some(dir) = common::public_captures_if_present() else {
        return;
    };
    let entries = index(&dir);
    assert!(!entries.is_empty(), "INDEX.tsv lists no captures");
    // Panics are caught per file and reported below; keep the default hook
    // from printing each one as it happens.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut failures = Vec::new();
    for entry in &entries {
        let path = dir.join("files").join(&entry.file);
        let outcome = catch_unwind(AssertUnwindSafe(|| check(&path, entry)));
        let failure = match outcome {
            Ok(Ok(())) => continue,
            Ok(Err(why)) => why,
            Err(payload) => {
                let msg = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "non-string panic payload".into());
                format!("panicked: {msg}")
            }
        };
        failures.push(format!("{}: {failure}", entry.file));
    }
    std::panic::set_hook(hook);
    assert!(
        failures.is_empty(),
        "{} of {} public captures disagree:\n  {}",
        failures.len(),
        entries.len(),
        failures.join("\n  ")
    );
}

/// The endpoint pairs `tshark -q -z sctp,stat` lists: (source, source
/// port, destination, destination port).
fn tshark_sctp_stat(path: &Path) -> Vec<(std::net::IpAddr, u16, std::net::IpAddr, u16)> {
    let out = std::process::Command::new("tshark")
        .args(["-n", "-q", "-z", "sctp,stat", "-r"])
        .arg(path)
        .output()
        .expect("tshark runs (make setup installs it)");
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split('|').map(str::trim).collect();
            // |src|portA|dst|portB|DATA|… : 16 fields with the empty ends.
            if f.len() < 6 {
                return None;
            }
            Some((
                f[1].parse().ok()?,
                f[2].parse().ok()?,
                f[3].parse().ok()?,
                f[4].parse().ok()?,
            ))
        })
        .collect()
}

/// Every endpoint pair tshark's SCTP statistics list is a path of an
/// association we found, with the same ports — except pairs only seen
/// inside GTP-U tunnels or quoted by ICMP errors, which tshark counts and
/// we deliberately do not analyse as traffic (see `sctp_only_for_tshark`).
#[test]
fn every_association_tshark_lists_is_found() {
    let Some(dir) = common::public_captures_if_present() else {
        return;
    };
    let mut failures = Vec::new();
    let (mut checked, mut exempt) = (0, 0);
    for entry in index(&dir).iter().filter(|e| e.sctp_frames > 0) {
        let path = dir.join("files").join(&entry.file);
        let Ok(a) = analyze_file(&path, &AnalysisOptions::default()) else {
            failures.push(format!("{}: not analysed", entry.file));
            continue;
        };
        let ours: std::collections::HashSet<_> = a
            .associations
            .iter()
            .flat_map(|x| {
                let ports = (x.endpoints[0].port, x.endpoints[1].port);
                x.paths.iter().flat_map(move |p| {
                    [
                        (p.src, ports.0, p.dst, ports.1),
                        (p.src, ports.1, p.dst, ports.0),
                    ]
                })
            })
            .collect();
        let tunnelled =
            a.accounting.icmp_about_sctp > 0 || sctp_only_for_tshark(&path).is_ok_and(|n| n > 0);
        for pair in tshark_sctp_stat(&path) {
            checked += 1;
            if !ours.contains(&pair) {
                if tunnelled {
                    exempt += 1;
                } else {
                    failures.push(format!("{}: {pair:?} not found", entry.file));
                }
            }
        }
    }
    eprintln!("{checked} endpoint pairs, {exempt} only tunnelled or ICMP-quoted");
    assert!(checked > 100, "tshark listed only {checked} endpoint pairs");
    assert!(
        failures.is_empty(),
        "{} missing:\n  {}",
        failures.len(),
        failures.join("\n  ")
    );
}
