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
    // for the file it kept (the input's source is that file). The files
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
