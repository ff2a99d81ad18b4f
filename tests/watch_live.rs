//! `sctp-handover watch -i lo --write` on a real interface: the Koh & Kim exchange
//! replayed in real time over loopback (each SCTP packet in UDP, RFC 6951,
//! from its own 127.0.0.x address, so that paths stay apart), captured by
//! `watch` and by `tcpdump` at once; the handovers `watch` prints live are
//! those `analyze` finds in tcpdump's file and in the file watch kept. Needs CAP_NET_RAW (CI runs as
//! root).

#[path = "../analyzer/tests/common/mod.rs"]
mod common;

use serde_json::Value;
use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const PORT: u16 = 9899;

/// (data interrupt, new-data gap, total) in ms of each handover record.
fn figures(v: &Value) -> (f64, f64, f64) {
    let ms = |k: &str| v[k]["ms"].as_f64().unwrap_or(f64::NAN);
    (
        ms("data_interrupt"),
        ms("new_data_gap"),
        ms("total_handover_latency"),
    )
}

#[test]
fn live_handovers_equal_the_offline_analysis_of_the_same_packets() {
    let dir = common::tempdir("watch-live");
    let pcap = dir.join("lo.pcap");
    let mut tcpdump = Command::new("tcpdump")
        .args([
            "-i",
            "lo",
            "--immediate-mode",
            "--time-stamp-precision=nano",
            "-s",
            "2048",
            "-w",
        ])
        .arg(&pcap)
        .arg(format!("udp port {PORT}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("tcpdump runs (make setup installs it)");
    let watch = Command::new(env!("CARGO_BIN_EXE_sctp-handover"))
        .args([
            "watch",
            "-i",
            "lo",
            "--format",
            "jsonl",
            "--idle-exit",
            "3",
            "--filter",
        ])
        .arg(format!("udp port {PORT}"))
        .arg("--write")
        .arg(dir.join("kept.pcapng"))
        .arg("--out")
        .arg(dir.join("live-tables"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("watch starts");
    std::thread::sleep(Duration::from_millis(1500));

    // Replay: every SCTP packet of the sample, at its own pace, from a
    // socket bound to the loopback address standing for its source.
    let frames = common::read_frames(&common::sample("koh-kim-1", "mn"));
    let mut sockets: HashMap<[u8; 4], (UdpSocket, Ipv4Addr)> = HashMap::new();
    let start = Instant::now();
    let t0 = frames[0].ts_ns;
    let mut sent = 0;
    for f in &frames {
        // LINUX_SLL2 (20 bytes), then IPv4 carrying SCTP.
        let ip = &f.data[20..];
        if ip.len() < 20 || ip[0] >> 4 != 4 || ip[9] != 132 {
            continue;
        }
        let ihl = usize::from(ip[0] & 0x0f) * 4;
        let (src, dst): ([u8; 4], [u8; 4]) = (
            ip[12..16].try_into().expect("4 bytes"),
            ip[16..20].try_into().expect("4 bytes"),
        );
        for a in [src, dst] {
            let n = sockets.len() as u8;
            sockets.entry(a).or_insert_with(|| {
                let lo = Ipv4Addr::new(127, 0, 0, 10 + n);
                let s = UdpSocket::bind(SocketAddrV4::new(lo, PORT)).expect("bind on loopback");
                (s, lo)
            });
        }
        let due = Duration::from_nanos((f.ts_ns - t0) as u64);
        if let Some(wait) = due.checked_sub(start.elapsed()) {
            std::thread::sleep(wait);
        }
        let to = SocketAddrV4::new(sockets[&dst].1, PORT);
        sockets[&src].0.send_to(&ip[ihl..], to).expect("send");
        sent += 1;
    }
    let out = watch
        .wait_with_output()
        .expect("watch ends after --idle-exit");
    let _ = Command::new("kill")
        .args(["-INT", &tcpdump.id().to_string()])
        .status();
    let _ = tcpdump.wait();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("lo: "),
        "libpcap's counts are reported: {stderr}"
    );

    let live: Vec<(f64, f64, f64)> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "handover")
        .map(|v| figures(&v["handover"]))
        .collect();
    let offline = Command::new(env!("CARGO_BIN_EXE_sctp-handover"))
        .args(["analyze", "--format", "json"])
        .arg(&pcap)
        .output()
        .expect("analyze runs");
    let offline: Vec<(f64, f64, f64)> = String::from_utf8_lossy(&offline.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["record"] == "handover")
        .map(|v| figures(&v))
        .collect();
    assert_eq!(sent, 164, "the sample's SCTP packets");
    // Two switches as in the file (sample-captures/README.md); the live
    // figures are those of tcpdump's copy of the same packets.
    assert_eq!(live.len(), 2, "{stdout}\n{stderr}");
    assert_eq!(live, offline, "{stdout}");
    // What watch kept (--write) analyses to the same handovers.
    let kept = Command::new(env!("CARGO_BIN_EXE_sctp-handover"))
        .args(["analyze", "--format", "json", "--filter"])
        .arg(format!("udp port {PORT}"))
        .arg(dir.join("kept.pcapng"))
        .output()
        .expect("analyze runs");
    let kept: Vec<(f64, f64, f64)> = String::from_utf8_lossy(&kept.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["record"] == "handover")
        .map(|v| figures(&v))
        .collect();
    assert_eq!(kept, live);

    // --out: the tables of the live run are those `analyze --out` writes
    // for the file it kept (the input's source is that file), but for the
    // handovers table's drop marks (known live only). The files
    // row differs where the live run saw more than the file holds: the
    // frames --filter rejected (counted live, never kept), hence `frames`
    // and `frames_filtered_out`; and `analysis_seconds`.
    let tables = dir.join("file-tables");
    let a = Command::new(env!("CARGO_BIN_EXE_sctp-handover"))
        .args(["analyze", "-q", "--out"])
        .arg(&tables)
        .arg(dir.join("kept.pcapng"))
        .output()
        .expect("analyze runs");
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    for name in common::TABLES {
        let (mut w, mut x) = (
            common::read_table(&dir.join("live-tables"), name),
            common::read_table(&tables, name),
        );
        assert_eq!(w.len(), x.len(), "{name}");
        assert!(!w.is_empty(), "{name}");
        if name == "handovers" {
            // Live, the watch marks handovers that met a drop span; none
            // did here. A file says nothing of drops: null.
            for row in w.iter_mut() {
                let o = row.as_object_mut().expect("row");
                assert_eq!(o.remove("capture_drops_overlap"), Some(Value::Bool(false)));
                assert_eq!(o.remove("capture_drops"), Some(Value::Null));
            }
            for row in x.iter_mut() {
                let o = row.as_object_mut().expect("row");
                assert_eq!(o.remove("capture_drops_overlap"), Some(Value::Null));
                assert_eq!(o.remove("capture_drops"), Some(Value::Null));
            }
        }
        if name == "files" {
            let (lw, lx) = (&mut w[0], &mut x[0]);
            let n = |v: &Value, k: &str| v[k].as_u64().expect("a count");
            assert_eq!(
                n(lw, "frames") - n(lw, "frames_filtered_out"),
                n(lx, "frames"),
                "the frames kept"
            );
            assert_eq!(n(lx, "frames_filtered_out"), 0);
            for k in ["frames", "frames_filtered_out", "analysis_seconds"] {
                lw.as_object_mut().expect("row").remove(k);
                lx.as_object_mut().expect("row").remove(k);
            }
        }
        assert_eq!(w, x, "{name}");
    }
}

/// A network namespace of the test's own holding a veth pair (`shb0` ↔
/// `shb1`), deleted with it: frames replayed into one end never leave it.
struct Netns(String);

impl Netns {
    fn new(tag: &str) -> Netns {
        let name = format!("sctpho-test-{}-{tag}", std::process::id());
        let ns = Netns(name);
        let ok = Command::new("ip")
            .args(["netns", "add", &ns.0])
            .status()
            .expect("ip runs (make setup installs iproute2)");
        assert!(ok.success(), "ip netns add {} (needs root)", ns.0);
        // No IPv6 autoconfiguration: the replay is all that crosses the
        // link, so the counts add up to what tcpreplay sent.
        for args in [
            &[
                "sysctl",
                "-qw",
                "net.ipv6.conf.all.disable_ipv6=1",
                "net.ipv6.conf.default.disable_ipv6=1",
            ][..],
            &[
                "ip", "link", "add", "shb0", "type", "veth", "peer", "name", "shb1",
            ],
            &["ip", "link", "set", "shb0", "up"],
            &["ip", "link", "set", "shb1", "up"],
        ] {
            let ok = ns.exec(args[0]).args(&args[1..]).status().expect("runs");
            assert!(ok.success(), "{args:?} in {}", ns.0);
        }
        ns
    }

    fn exec(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.0]).arg(program);
        c
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

/// Waits until `path` (a process's standard error) holds `text`.
fn wait_for_text(path: &std::path::Path, text: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !std::fs::read_to_string(path).is_ok_and(|s| s.contains(text)) {
        assert!(
            Instant::now() < deadline,
            "no `{text}` in {}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The number before `suffix` in `text` ("… 12 by the watch's queue").
fn count_before(text: &str, suffix: &str) -> u64 {
    let (head, _) = text
        .split_once(suffix)
        .unwrap_or_else(|| panic!("no `{suffix}` in {text}"));
    head.rsplit(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no number before `{suffix}` in {text}"))
}

/// Drops by watch's own queue are counted, never silent, and mark what
/// they touch — through the real capture path: the Koh & Kim exchange
/// replayed by tcpreplay into a veth pair in a private network namespace,
/// with a burst of 3000 junk frames between the two handovers that a
/// deliberately tiny queue (32 KiB) cannot hold. Two watches capture it
/// at once (JSON lines with --out, and text). Every frame sent is either
/// analysed or counted as dropped by the queue; the drop is reported as it
/// happens and in the summary with its time span; the second handover,
/// whose span contains the burst, is marked in every output (switch and
/// handover lines, the association, the handovers table's column), the
/// first is not.
#[test]
fn queue_drops_are_counted_never_silent_and_mark_the_handovers_they_touch() {
    let dir = common::tempdir("watch-queue-drops");
    let sample = common::sample("koh-kim-1", "mn");
    // Where the burst goes: after the first handover's window has closed,
    // before the second's last DATA on the old path.
    let analysed = Command::new(env!("CARGO_BIN_EXE_sctp-handover"))
        .args(["analyze", "--format", "json"])
        .arg(&sample)
        .output()
        .expect("analyze runs");
    let handovers: Vec<Value> = String::from_utf8_lossy(&analysed.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["record"] == "handover")
        .collect();
    assert_eq!(handovers.len(), 2);
    let after = handovers[0]["window"]["end"]["frame"]
        .as_u64()
        .expect("the first window ends at a frame");
    let before = handovers[1]["data_interrupt"]["from"]["frame"]
        .as_u64()
        .expect("the second interrupt starts at a frame");
    assert!(after < before);

    // The sample as Ethernet frames, the burst after frame `after`, and
    // what follows 300 ms later so that the queue has emptied by then.
    const JUNK: usize = 3000;
    const GAP_NS: i64 = 300_000_000;
    let mut frames: Vec<(i64, Vec<u8>)> = Vec::new();
    for (i, f) in common::read_frames(&sample).iter().enumerate() {
        let number = i as u64 + 1;
        let (ip, _) = common::sll2_to_ip(f);
        let shift = if number > after { GAP_NS } else { 0 };
        frames.push((f.ts_ns + shift, common::ethernet(&ip, &[])));
        if number == after {
            for k in 0..JUNK {
                // UDP 192.0.2.1:7 → 192.0.2.2:9 (discard), 300 bytes: not
                // SCTP, only there to fill the queue.
                let mut ip = vec![
                    0x45, 0, 0x01, 0x2c, 0, 0, 0, 0, 64, 17, 0, 0, 192, 0, 2, 1, 192, 0, 2, 2,
                ];
                ip.extend_from_slice(&[0, 7, 0, 9, 0x01, 0x18, 0, 0]);
                ip.resize(300, k as u8);
                let t = f.ts_ns + GAP_NS / 6 + k as i64 * 1000;
                frames.push((t, common::ethernet(&ip, &[])));
            }
        }
    }
    let replay = dir.join("replay.pcap");
    common::write_frames(&replay, 1, true, false, &frames);

    let ns = Netns::new("queue");
    let tables = dir.join("tables");
    let watch = |name: &str, extra: &[&str]| {
        let err = dir.join(format!("{name}.err"));
        let child = ns
            .exec(env!("CARGO_BIN_EXE_sctp-handover"))
            .args([
                "watch",
                "-i",
                "shb1",
                "--queue-size",
                "32",
                "-B",
                "4096",
                "--idle-exit",
                "1.5",
                "--quiet",
            ])
            .args(extra)
            .stdout(std::fs::File::create(dir.join(format!("{name}.out"))).expect("out"))
            .stderr(std::fs::File::create(&err).expect("err"))
            .spawn()
            .expect("watch starts");
        wait_for_text(&err, "capturing on");
        child
    };
    let table_dir = tables.to_string_lossy().into_owned();
    let json_watch = watch(
        "jsonl",
        &[
            "--format",
            "jsonl",
            "--out",
            &table_dir,
            "--table-format",
            "jsonl",
        ],
    );
    let text_watch = watch("text", &[]);
    let sent = ns
        .exec("tcpreplay")
        .args(["-i", "shb0"])
        .arg(&replay)
        .output()
        .expect("tcpreplay runs (make setup installs it)");
    let report = String::from_utf8_lossy(&sent.stdout).into_owned();
    assert!(sent.status.success(), "{report}");
    let sent: u64 = report
        .split_once("Successful packets:")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("tcpreplay's count: {report}"));
    assert_eq!(sent as usize, frames.len(), "{report}");
    for (name, mut child) in [("jsonl", json_watch), ("text", text_watch)] {
        let status = child.wait().expect("watch ends after --idle-exit");
        let err = std::fs::read_to_string(dir.join(format!("{name}.err"))).expect("stderr");
        assert!(status.success(), "{name}: {err}");
        // Never silent: every frame sent was analysed or counted.
        let analysed = count_before(&err, " frames (");
        let queue = count_before(&err, " by the watch's queue");
        let kernel = count_before(&err, " dropped by the kernel");
        assert!(queue > 0, "{name}: the tiny queue overflowed: {err}");
        assert_eq!(kernel, 0, "{name}: {err}");
        assert_eq!(analysed + queue, sent, "{name}: {err}");
        assert!(
            err.contains(&format!(
                "dropped by the watch's queue: {queue} frames in 1 span"
            )),
            "{name}: {err}"
        );
        assert!(err.contains("1 handover met a drop span"), "{name}: {err}");
    }

    // JSON lines: the drop as it happened, then the marks.
    let out = std::fs::read_to_string(dir.join("jsonl.out")).expect("stdout");
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let of = |kind: &str| -> Vec<&Value> { lines.iter().filter(|v| v["type"] == kind).collect() };
    let drops = of("drops");
    let last = drops.last().expect("a drops line");
    assert_eq!(last["cause"], "queue");
    assert_eq!(last["interface"], "shb1");
    let queue = count_before(
        &std::fs::read_to_string(dir.join("jsonl.err")).expect("stderr"),
        " by the watch's queue",
    );
    assert_eq!(last["frames"], queue);
    let ns_of = |v: &Value| -> i128 {
        let s = v.as_str().expect("a time");
        let (a, b) = s.split_once('.').expect("seconds.nanoseconds");
        a.parse::<i128>().expect("s") * 1_000_000_000 + b.parse::<i128>().expect("ns")
    };
    let switches = of("switch");
    assert_eq!(switches.len(), 2, "{out}");
    // The span lies between the two switches, as the burst did.
    assert!(ns_of(&switches[0]["handover"]["switch_time"]) < ns_of(&last["from"]));
    assert!(ns_of(&last["to"]) < ns_of(&switches[1]["handover"]["switch_time"]));
    let marks = |v: &Value| v["capture_drops"].as_array().expect("capture_drops").len();
    assert_eq!(marks(switches[0]), 0, "{out}");
    assert_eq!(marks(switches[1]), 1, "{out}");
    let full = of("handover");
    assert_eq!(full.len(), 2, "{out}");
    assert_eq!(marks(full[0]), 0, "{out}");
    assert_eq!(marks(full[1]), 1, "{out}");
    assert_eq!(full[1]["capture_drops"][0]["cause"], "queue");
    assert_eq!(full[1]["capture_drops"][0]["frames"], queue);
    let association = of("association");
    assert_eq!(association.len(), 1, "{out}");
    assert_eq!(marks(association[0]), 1, "{out}");

    // --out: the handovers table's column.
    let rows: Vec<Value> = std::fs::read_dir(tables.join("handovers"))
        .expect("handovers table")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".jsonl"))
        .flat_map(|e| {
            std::fs::read_to_string(e.path())
                .expect("part")
                .lines()
                .map(|l| serde_json::from_str::<Value>(l).expect("row"))
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(rows.len(), 2);
    let by_switch = |v: &Value| v["switch_frame"].as_u64();
    let mut rows = rows;
    rows.sort_by_key(by_switch);
    assert_eq!(rows[0]["capture_drops_overlap"], false);
    assert_eq!(rows[0]["capture_drops"], Value::Null);
    assert_eq!(rows[1]["capture_drops_overlap"], true);
    let text = rows[1]["capture_drops"].as_str().expect("the spans");
    assert!(
        text.starts_with(&format!("queue shb1 {queue} frames ")),
        "{text}"
    );

    // Text: the same marks on the lines (this watch dropped its own count).
    let out = std::fs::read_to_string(dir.join("text.out")).expect("stdout");
    let queue = count_before(
        &std::fs::read_to_string(dir.join("text.err")).expect("stderr"),
        " by the watch's queue",
    );
    let marked = |what: &str| -> Vec<bool> {
        out.lines()
            .filter(|l| l.contains(what))
            .map(|l| l.contains("[capture drops overlap: queue shb1 "))
            .collect()
    };
    assert_eq!(marked(" SWITCH "), vec![false, true], "{out}");
    assert_eq!(marked(" HANDOVER "), vec![false, true], "{out}");
    assert_eq!(marked(" finished: "), vec![true], "{out}");
    assert!(
        out.lines().any(|l| l.contains(&format!(
            " DROPS queue shb1: {queue} frames lost by the watch's queue from "
        ))),
        "{out}"
    );
}
