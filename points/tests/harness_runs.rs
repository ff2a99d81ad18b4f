//! The two capture points of real harness runs (sample-captures/: the
//! mobile node's and the correspondent's captures of one run, Linux 6.1
//! SCTP in User-Mode Linux, both written from one clock): the offset must
//! come out as zero, a known offset and drift added to one capture must
//! come back, the ASCONF's one-way delay must be the netem delay of its
//! path, and the DATA sent into koh-kim-2's dead path must be found lost
//! there.

mod common;
use common::{link_delays, run_dir};
use sctp_handover_points::{
    analyze_points, Direction, Loss, LossKind, OwdSample, PointInput, PointsOptions, PointsReport,
    PointsSink, Retransmission,
};
use std::net::IpAddr;
use std::path::{Path, PathBuf};

/// Every committed sample run (each folder holds mn.pcap and cn.pcap).
const RUNS: [&str; 10] = [
    "bokor-failover",
    "bokor-failover-pf",
    "bokor-return",
    "eklund-sack-delay",
    "honda-dad",
    "honda-nodad",
    "koh-kim-1",
    "koh-kim-1-ack-lost",
    "koh-kim-1-ipv6",
    "koh-kim-2",
];

#[derive(Default)]
struct Keep {
    owd: Vec<OwdSample>,
    losses: Vec<Loss>,
    retransmissions: Vec<Retransmission>,
}

impl PointsSink for Keep {
    fn owd(&mut self, s: &OwdSample) {
        self.owd.push(s.clone());
    }
    fn loss(&mut self, l: &Loss) {
        self.losses.push(l.clone());
    }
    fn retransmission(&mut self, r: &Retransmission) {
        self.retransmissions.push(r.clone());
    }
}

fn analyze(mn: &Path, cn: &Path) -> (PointsReport, Keep) {
    let inputs = [
        PointInput {
            name: "mn".into(),
            path: mn.to_owned(),
        },
        PointInput {
            name: "cn".into(),
            path: cn.to_owned(),
        },
    ];
    let mut keep = Keep::default();
    let report = analyze_points(&inputs, &PointsOptions::default(), &mut keep)
        .unwrap_or_else(|e| panic!("{}: {e}", mn.display()));
    (report, keep)
}

fn analyze_run(name: &str) -> (PointsReport, Keep) {
    let dir = run_dir(name);
    analyze(&dir.join("mn.pcap"), &dir.join("cn.pcap"))
}

/// (a) One clock: the offset is zero within 100 µs on every sample run,
/// and the drift within 6 ppm: these runs last about 4 s, over which the
/// least one-way delay wanders by a few µs (bokor-failover's 90 ms path
/// the most: −5.4 ppm; the others within ±3 ppm); the uncertainty is half the fastest path's
/// round trip, i.e. its netem delay (RTT ≈ 2 × delay_ms, docs/harness.md).
#[test]
fn one_clock_gives_zero_offset_on_every_run() {
    for name in RUNS {
        let (r, _) = analyze_run(name);
        let c = r.clock;
        println!(
            "{name}: offset {:.0} ns ± {:.0} ns, drift {:.3} ppm, {} packets",
            c.offset_ns, c.offset_uncertainty_ns, c.drift_ppm, c.samples
        );
        assert!(c.offset_ns.abs() < 100_000.0, "{name}: {c:?}");
        assert!(c.drift_ppm.abs() < 6.0, "{name}: {c:?}");
        let fastest = link_delays(name)
            .values()
            .copied()
            .fold(f64::INFINITY, f64::min);
        assert!(
            (c.offset_uncertainty_ns / 1e6 - fastest).abs() < 0.1,
            "{name}: uncertainty {} ms, fastest link {fastest} ms",
            c.offset_uncertainty_ns / 1e6
        );
        assert_eq!(r.direction_unknown, 0, "{name}");
        // Both captures agree on the association and its endpoints'
        // addresses, ADD-IP's included.
        assert_eq!(r.associations.len(), 1, "{name}: {:?}", r.associations);
        assert_eq!(r.associations[0].seen_at, vec![0, 1], "{name}");
    }
}

/// Rewrites a microsecond pcap as a nanosecond pcap whose clock reads
/// `offset_ns + drift_ppm × (t − first)` more than the original's: the
/// drift `editcap` cannot apply (its `-t` shifts every packet by the same
/// amount). Test-only: the product reads captures through the analyzer.
fn write_skewed(src: &Path, dst: &Path, offset_ns: i64, drift_ppm: f64) {
    let bytes = std::fs::read(src).expect("read capture");
    assert_eq!(
        &bytes[..4],
        &[0xd4, 0xc3, 0xb2, 0xa1],
        "little-endian µs pcap"
    );
    let mut out = Vec::with_capacity(bytes.len());
    out.extend_from_slice(&[0x4d, 0x3c, 0xb2, 0xa1]);
    out.extend_from_slice(&bytes[4..24]);
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
    let mut at = 24;
    let mut first: Option<i64> = None;
    while at + 16 <= bytes.len() {
        let t = i64::from(u32_at(at)) * 1_000_000_000 + i64::from(u32_at(at + 4)) * 1_000;
        let len = u32_at(at + 8) as usize;
        let t0 = *first.get_or_insert(t);
        let shifted = t + offset_ns + ((t - t0) as f64 * drift_ppm * 1e-6).round() as i64;
        out.extend_from_slice(&((shifted / 1_000_000_000) as u32).to_le_bytes());
        out.extend_from_slice(&((shifted % 1_000_000_000) as u32).to_le_bytes());
        out.extend_from_slice(&bytes[at + 8..at + 16 + len]);
        at += 16 + len;
    }
    std::fs::write(dst, out).expect("write skewed capture");
}

/// (b) The CN's capture moved 30 minutes and 250 ms ahead and made to run
/// 50 ppm fast: both come back, within 100 µs and 5 ppm.
#[test]
fn known_offset_and_drift_are_recovered() {
    let offset_ns: i64 = 1_800_250_000_000;
    let drift_ppm = 50.0;
    for name in ["koh-kim-1", "koh-kim-2", "bokor-return", "honda-dad"] {
        let dir = run_dir(name);
        let scratch = tempfile::tempdir().expect("scratch dir");
        let skewed = scratch.path().join(format!("{name}-cn-skewed.pcap"));
        write_skewed(&dir.join("cn.pcap"), &skewed, offset_ns, drift_ppm);
        let (r, keep) = analyze(&dir.join("mn.pcap"), &skewed);
        let (plain, plain_keep) = analyze_run(name);
        let c = r.clock;
        // The true offset at the estimate's reference time: the shift
        // plus the drift accumulated since the CN's first packet.
        let cn_first = first_packet_ns(&dir.join("cn.pcap"));
        let truth = offset_ns as f64 + (c.reference_ns - cn_first) as f64 * drift_ppm * 1e-6;
        println!(
            "{name}: offset error {:.0} ns, drift {:.3} ppm",
            c.offset_ns - truth,
            c.drift_ppm
        );
        assert!(
            (c.offset_ns - truth).abs() < 100_000.0,
            "{name}: {c:?}, truth {truth}"
        );
        assert!((c.drift_ppm - drift_ppm).abs() < 5.0, "{name}: {c:?}");
        // Corrected, the skewed pair tells the same story as the original.
        assert_eq!(r.paired, plain.paired, "{name}");
        assert_eq!(keep.losses.len(), plain_keep.losses.len(), "{name}");
        assert_eq!(
            keep.retransmissions.len(),
            plain_keep.retransmissions.len(),
            "{name}"
        );
    }
}

fn first_packet_ns(path: &Path) -> i64 {
    let bytes = std::fs::read(path).expect("read capture");
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
    i64::from(u32_at(24)) * 1_000_000_000 + i64::from(u32_at(28)) * 1_000
}

/// (b') `editcap -t` moves the CN's capture 0.75 s back: the offset comes
/// back within 100 µs. Skips (with a line) where editcap is not installed.
#[test]
fn editcap_shift_is_recovered() {
    let dir = run_dir("koh-kim-1");
    let scratch = tempfile::tempdir().expect("scratch dir");
    let shifted = scratch.path().join("koh-kim-1-cn-editcap.pcap");
    let status = std::process::Command::new("editcap")
        .args(["-t", "-0.75"])
        .arg(dir.join("cn.pcap"))
        .arg(&shifted)
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => panic!("editcap failed: {s}"),
        Err(e) => {
            println!("skipped: editcap not runnable ({e})");
            return;
        }
    }
    let (r, _) = analyze(&dir.join("mn.pcap"), &shifted);
    assert!(
        (r.clock.offset_ns + 750_000_000.0).abs() < 100_000.0,
        "{:?}",
        r.clock
    );
    assert!(r.clock.drift_ppm.abs() < 5.0, "{:?}", r.clock);
}

/// (c) Every ASCONF seen at both points took the netem delay of the link
/// it was sent on, within 1 ms.
#[test]
fn asconf_one_way_delay_is_the_netem_delay() {
    for name in [
        "koh-kim-1",
        "koh-kim-1-ipv6",
        "koh-kim-1-ack-lost",
        "koh-kim-2",
        "honda-dad",
        "honda-nodad",
    ] {
        let delays = link_delays(name);
        let (_, keep) = analyze_run(name);
        let asconfs: Vec<&OwdSample> = keep
            .owd
            .iter()
            .filter(|s| s.chunks.starts_with("ASCONF(") && s.direction == Direction::AToB)
            .collect();
        assert!(!asconfs.is_empty(), "{name}: no ASCONF seen at both points");
        for s in asconfs {
            let netem_ms = delays[&s.src];
            let owd_ms = s.owd_ns as f64 / 1e6;
            println!(
                "{name}: {} from {}: {owd_ms:.3} ms (netem {netem_ms} ms)",
                s.chunks, s.src
            );
            assert!((owd_ms - netem_ms).abs() < 1.0, "{name}: {s:?}");
        }
    }
}

/// (d) koh-kim-2: the MN's old link is cut 15 ms after ADD-IP; the CN
/// still sends two DATA chunks to the old address (CN frames 63 and 66,
/// `tshark -r cn.pcap`), which the MN never sees, and retransmits both to
/// the new address (CN frames 80 and 82), where they arrive: neither
/// retransmission is spurious. Nothing else is lost.
#[test]
fn koh_kim_2_losses_are_on_the_dead_path() {
    let (r, keep) = analyze_run("koh-kim-2");
    let old: IpAddr = "198.51.100.101".parse().expect("ip");
    let new: IpAddr = "198.51.100.102".parse().expect("ip");
    let cn: IpAddr = "198.51.100.100".parse().expect("ip");
    // events.jsonl: link_down of eth1.
    let link_down_ns: i64 = 1_795_343_554_885_226_980;
    let lost: Vec<(u64, &str)> = keep
        .losses
        .iter()
        .map(|l| (l.frame, l.chunks.as_str()))
        .collect();
    assert_eq!(lost.len(), 2, "{:?}", keep.losses);
    for l in &keep.losses {
        assert_eq!(l.kind, LossKind::NotSeenAtReceiver);
        assert_eq!(l.seen_at, "cn");
        assert_eq!((l.src, l.dst), (cn, old));
        assert_eq!(l.direction, Direction::BToA);
        assert!(l.time_ns > link_down_ns, "{l:?}");
        assert_eq!(l.data_tsns.len(), 1);
    }
    assert_eq!(keep.losses[0].frame, 63);
    assert_eq!(keep.losses[1].frame, 66);
    let lost_tsns: Vec<u32> = keep.losses.iter().map(|l| l.data_tsns[0]).collect();
    assert_eq!(lost_tsns[1], lost_tsns[0].wrapping_add(1));
    let rtx: Vec<(u64, u32, bool, bool)> = keep
        .retransmissions
        .iter()
        .map(|x| (x.frame, x.tsn, x.spurious, x.arrived))
        .collect();
    assert_eq!(
        rtx,
        vec![
            (80, lost_tsns[0], false, true),
            (82, lost_tsns[1], false, true)
        ]
    );
    assert!(keep
        .retransmissions
        .iter()
        .all(|x| (x.src, x.dst) == (cn, new) && x.direction == Direction::BToA));
    let dead = r
        .paths
        .iter()
        .find(|p| (p.src, p.dst) == (cn, old))
        .expect("the old path");
    assert_eq!((dead.not_seen_at_receiver, dead.from.as_str()), (2, "cn"));
    assert_eq!(r.not_seen_at_sender, 0);
    // The MN's end of the association holds both addresses at both
    // points, the new one learnt from ADD-IP and traffic.
    let mn_end = r.associations[0]
        .endpoints
        .iter()
        .find(|e| e.at[0].as_ref().is_some_and(|s| s.addresses.contains(&new)))
        .expect("the MN's endpoint");
    for seen in mn_end.at.iter().flatten() {
        assert!(seen.addresses.contains(&old) && seen.addresses.contains(&new));
    }
    // Memory: only the packets of one window ever waited.
    assert!(r.peak_waiting <= 16, "{}", r.peak_waiting);
}

/// The `time` and `time_after` of the first `kind` event in a run's
/// events.jsonl (harness ground truth, on the captures' clock).
fn event_window(name: &str, kind: &str) -> (i64, i64) {
    let text = std::fs::read_to_string(run_dir(name).join("events.jsonl")).expect("events");
    let ns = |v: &serde_json::Value| -> i64 {
        let s = v.as_str().expect("time text");
        let (secs, frac) = s.split_once('.').expect("seconds.nanoseconds");
        secs.parse::<i64>().expect("secs") * 1_000_000_000 + frac.parse::<i64>().expect("nanos")
    };
    text.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("json line"))
        .find(|e| e["kind"] == kind)
        .map(|e| (ns(&e["time"]), ns(&e["time_after"])))
        .unwrap_or_else(|| panic!("{name}: no {kind} event"))
}

/// (e) koh-kim-1-ack-lost: eth1's link is detached in both directions
/// from `path_cut` to `path_restore` (events.jsonl). Every packet lost is
/// on eth1's path (MN address 198.51.100.101), was sent while the link was
/// detached, and both directions lose some (4 CN→MN, the ADD-IP's
/// ASCONF-ACK among them; 3 MN→CN); no packet sent on that path while it
/// was detached arrived. Of the 6 retransmissions only the MN's T3
/// retransmission of the DATA that had already arrived before the cut is
/// spurious (the README's "shown spurious by a duplicate-TSN report").
#[test]
fn koh_kim_1_ack_lost_drops_are_on_the_cut_link() {
    let name = "koh-kim-1-ack-lost";
    let (cut, _) = event_window(name, "path_cut");
    let (_, restored) = event_window(name, "path_restore");
    let old: IpAddr = "198.51.100.101".parse().expect("ip");
    let (r, keep) = analyze_run(name);
    let on_old = |src: IpAddr, dst: IpAddr| src == old || dst == old;
    for l in &keep.losses {
        assert_eq!(l.kind, LossKind::NotSeenAtReceiver, "{l:?}");
        assert!(on_old(l.src, l.dst), "{l:?}");
        assert!(l.time_ns > cut && l.time_ns < restored, "{l:?}");
    }
    let count = |d: Direction| keep.losses.iter().filter(|l| l.direction == d).count();
    assert_eq!((count(Direction::BToA), count(Direction::AToB)), (4, 3));
    assert!(keep
        .losses
        .iter()
        .any(|l| l.chunks == "ASCONF_ACK" && l.seen_at == "cn"));
    let delivered_during_cut: Vec<&OwdSample> = keep
        .owd
        .iter()
        .filter(|s| on_old(s.src, s.dst) && s.sent_ns > cut && s.sent_ns < restored)
        .collect();
    assert!(delivered_during_cut.is_empty(), "{delivered_during_cut:?}");
    let spurious: Vec<(u64, &str)> = keep
        .retransmissions
        .iter()
        .filter(|x| x.spurious)
        .map(|x| {
            (
                x.frame,
                if x.direction == Direction::AToB {
                    "mn"
                } else {
                    "cn"
                },
            )
        })
        .collect();
    assert_eq!(spurious, vec![(75, "mn")]);
    assert_eq!(r.retransmissions, 6);
    // The one spurious retransmission's original arrived before the cut.
    let s = keep
        .retransmissions
        .iter()
        .find(|x| x.spurious)
        .expect("spurious");
    assert!(s.earlier_arrived_ns.is_some_and(|t| t < cut), "{s:?}");
}

/// Every `rNN` run folder below `dir` holding both captures, sorted.
fn runs_below(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.join("mn.pcap").is_file() && p.join("cn.pcap").is_file() {
            out.push(p);
        } else if p.is_dir() {
            runs_below(&p, out);
        }
    }
}

/// (f) The first repetition (`r01`) of every run `make reproduce` wrote
/// (reproduce-output/, gitignored: skipped with a line where absent): one
/// clock, so the offset is zero within 100 µs (measured: all 371 runs
/// within 27 µs), every packet's direction is known and nothing was seen
/// at a receiver without its sender's capture seeing it; on the runs of
/// 30 s and more the drift is within 5 ppm (measured: 2.5 ppm).
#[test]
fn reproduce_output_runs_agree_on_one_clock() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../reproduce-output/runs");
    let mut runs = Vec::new();
    runs_below(&root, &mut runs);
    runs.retain(|r| r.file_name().is_some_and(|n| n == "r01"));
    if runs.is_empty() {
        println!(
            "skipped: no runs in {} (make reproduce writes them)",
            root.display()
        );
        return;
    }
    for run in &runs {
        let (r, _) = analyze(&run.join("mn.pcap"), &run.join("cn.pcap"));
        let c = r.clock;
        let what = run.display();
        assert!(c.offset_ns.abs() < 100_000.0, "{what}: {c:?}");
        if c.span_s >= 30.0 {
            assert!(c.drift_ppm.abs() < 5.0, "{what}: {c:?}");
        }
        assert_eq!(r.direction_unknown, 0, "{what}");
        assert_eq!(r.not_seen_at_sender, 0, "{what}");
    }
    println!("{} runs checked", runs.len());
}

/// The kernel's own count of a node's T3-rtx expiries and fast
/// retransmissions over the run: its last `kernel_mib` line (the counters
/// only grow, and a line is written when one changes; docs/harness.md).
fn kernel_retransmit_counters(name: &str, node: &str) -> (u64, u64) {
    let text = std::fs::read_to_string(run_dir(name).join("events.jsonl")).expect("events");
    let mut last: Option<(String, u64, u64)> = None;
    for line in text.lines() {
        let e: serde_json::Value = serde_json::from_str(line).expect("json line");
        if e["kind"] != "kernel_mib" || e["node"] != node {
            continue;
        }
        let time = e["time"].as_str().expect("time").to_owned();
        let count = |k: &str| e[k].as_u64().unwrap_or_else(|| panic!("{k} in {e}"));
        // Lines are not in time order (two processes append): the latest.
        if last.as_ref().is_none_or(|(t, _, _)| *t < time) {
            last = Some((time, count("t3_rtx_expireds"), count("fast_retransmits")));
        }
    }
    let (_, t3, fast) = last.unwrap_or_else(|| panic!("{name}: no kernel_mib of {node}"));
    (t3, fast)
}

/// (f) Why each retransmission was sent, as the analyzer's tracker
/// infers it at the sender's point, against the kernels' counters
/// (`kernel_mib` in events.jsonl). koh-kim-1-ack-lost: the MN's kernel
/// counts one T3 expiry and no fast retransmit, and its three copies (MN
/// frames 75, 77, 78, sent within 3 ms of each other) are that expiry's;
/// the CN's counts one fast retransmit and no T3 expiry, and its three
/// copies (CN frames 82, 84, 85) are fast (Linux sends one packet on the
/// fast retransmit and the rest of the TSNs it marked with the next
/// flush). bokor-failover-pf: the CN's kernel counts one T3 expiry and no
/// fast retransmit; its five copies (CN frames 55–59) leave in two packets
/// of the cwnd it allows. The older samples log no kernel counters:
/// koh-kim-2's two copies (CN frames 80 and 82) leave 211 ms after their
/// originals (the 200 ms minimum RTO on the guest's 10 ms tick) with no
/// SACK reporting them missing three times — T3; bokor-failover's 14 are
/// all T3 (its CN's only path to the MN's other address, RTO doubling).
#[test]
fn retransmission_reasons_agree_with_the_kernel() {
    use sctp_handover::events::RetransmissionReason::{FastRetransmit, T3Expiry};
    let reasons = |keep: &Keep, sender: Direction| {
        let mut v: Vec<(u64, &'static str)> = keep
            .retransmissions
            .iter()
            .filter(|x| x.direction == sender)
            .map(|x| (x.frame, x.reason.as_str()))
            .collect();
        v.sort_unstable();
        v
    };
    let t3 = T3Expiry.as_str();
    let fast = FastRetransmit.as_str();

    let (r, keep) = analyze_run("koh-kim-1-ack-lost");
    assert_eq!(
        kernel_retransmit_counters("koh-kim-1-ack-lost", "mn"),
        (1, 0)
    );
    assert_eq!(
        kernel_retransmit_counters("koh-kim-1-ack-lost", "cn"),
        (0, 1)
    );
    assert_eq!(
        reasons(&keep, Direction::AToB),
        vec![(75, t3), (77, t3), (78, t3)]
    );
    assert_eq!(
        reasons(&keep, Direction::BToA),
        vec![(82, fast), (84, fast), (85, fast)]
    );
    let by_reason = |from: &str| {
        r.paths
            .iter()
            .filter(|p| p.from == from && p.retransmissions > 0)
            .map(|p| p.retransmissions_by_reason.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(by_reason("mn"), vec![[(t3, 3)].into_iter().collect()]);
    assert_eq!(by_reason("cn"), vec![[(fast, 3)].into_iter().collect()]);

    let (_, keep) = analyze_run("bokor-failover-pf");
    assert_eq!(
        kernel_retransmit_counters("bokor-failover-pf", "cn"),
        (1, 0)
    );
    assert_eq!(
        kernel_retransmit_counters("bokor-failover-pf", "mn"),
        (0, 0)
    );
    assert_eq!(
        reasons(&keep, Direction::BToA),
        (55..=59).map(|f| (f, t3)).collect::<Vec<_>>()
    );
    assert!(reasons(&keep, Direction::AToB).is_empty());

    let (_, keep) = analyze_run("koh-kim-2");
    assert_eq!(reasons(&keep, Direction::BToA), vec![(80, t3), (82, t3)]);

    let (_, keep) = analyze_run("bokor-failover");
    let all = reasons(&keep, Direction::BToA);
    assert_eq!(all.len(), 14);
    assert!(all.iter().all(|&(_, why)| why == t3), "{all:?}");
}
