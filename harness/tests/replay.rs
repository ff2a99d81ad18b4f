//! End to end: one shipped scenario on the real kernel SCTP stack inside
//! User-Mode Linux, checked with tshark and with the analyzer against the
//! run's own ground-truth log.

use sctp_handover::analysis::{analyze_file, AnalysisOptions};
use sctp_handover::events::EventKind;
use sctp_handover::time::Timestamp;
use std::path::Path;
use std::process::Command;

fn ts(s: &str) -> Timestamp {
    let (secs, frac) = s.split_once('.').expect("decimal time");
    Timestamp::from_parts(secs.parse().expect("secs"), frac.parse().expect("nanos"))
}

#[test]
fn koh_kim_1_replays_on_the_kernel_and_is_analysed() {
    let out = std::env::temp_dir().join(format!("sctp-harness-e2e-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/koh-kim-1.toml");
    let status = Command::new(env!("CARGO_BIN_EXE_sctp-harness"))
        .arg("replay")
        .arg(&scenario)
        .arg("--out")
        .arg(&out)
        .args(["--timeout-s", "60"])
        .status()
        .expect("sctp-harness runs");
    let run = out.join("koh-kim-1/default/r01");
    assert!(
        status.success(),
        "replay failed: {}",
        std::fs::read_to_string(run.join("guest.log")).unwrap_or_default()
    );
    for f in [
        "mn.pcap",
        "cn.pcap",
        "events.jsonl",
        "scenario.toml",
        "meta.json",
    ] {
        assert!(run.join(f).exists(), "{f} written");
    }
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("meta.json")).expect("meta"))
            .expect("JSON");
    assert_eq!(meta["ok"], true);
    assert_eq!(meta["tcpdump_dropped"]["mn"], 0);
    // ADD-IP, SET-PRIMARY and DELETE-IP all reached the CN's kernel.
    assert_eq!(meta["valid"], true, "{}", meta["invalid_reasons"]);
    assert_eq!(meta["invalid_reasons"], serde_json::json!([]));
    let verify = Command::new(env!("CARGO_BIN_EXE_sctp-harness"))
        .arg("verify")
        .arg(&run)
        .output()
        .expect("sctp-harness verify runs");
    assert!(verify.status.success());
    assert_eq!(
        String::from_utf8_lossy(&verify.stdout),
        format!("{}: valid\n", run.display())
    );

    // tshark: three ASCONFs and three ASCONF-ACKs, and a HEARTBEAT to the
    // added address answered by a HEARTBEAT ACK.
    let mn = run.join("mn.pcap");
    let t = Command::new("tshark")
        .arg("-r")
        .arg(&mn)
        .args(["-T", "fields", "-e", "sctp.chunk_type"])
        .output()
        .expect("tshark runs");
    let text = String::from_utf8(t.stdout).expect("utf-8");
    let count = |ty: &str| {
        text.lines()
            .flat_map(|l| l.split(','))
            .filter(|c| *c == ty)
            .count()
    };
    assert_eq!((count("193"), count("128")), (3, 3), "ASCONF / ASCONF-ACK");
    assert!(
        count("4") >= 1 && count("5") >= 1,
        "HEARTBEAT / HEARTBEAT ACK"
    );

    // The analyzer: every ASCONF matched to its ACK, and each ASCONF's
    // capture time inside the logged setsockopt() window.
    let a = analyze_file(&mn, &AnalysisOptions::default()).expect("analysable");
    let acks: Vec<_> = a
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::AsconfAck { request_frame, .. } => Some(request_frame.is_some()),
            _ => None,
        })
        .collect();
    assert_eq!(acks, vec![true, true, true]);
    let log = std::fs::read_to_string(run.join("events.jsonl")).expect("events");
    let windows: Vec<(Timestamp, Timestamp)> = log
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("JSON line"))
        .filter(|v| {
            matches!(
                v["kind"].as_str(),
                Some("bindx_add" | "set_peer_primary" | "bindx_remove")
            )
        })
        .map(|v| {
            (
                ts(v["time"].as_str().expect("time")),
                ts(v["time_after"].as_str().expect("after")),
            )
        })
        .collect();
    let asconf_times: Vec<Timestamp> = a
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Asconf { .. }))
        .map(|e| e.time)
        .collect();
    assert_eq!(asconf_times.len(), windows.len());
    for (t, (before, after)) in asconf_times.iter().zip(&windows) {
        assert!(
            before <= t && t <= after,
            "ASCONF at {t} outside [{before}, {after}]"
        );
    }
    let _ = std::fs::remove_dir_all(&out);
}
