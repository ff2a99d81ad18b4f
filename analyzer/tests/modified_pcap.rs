//! The "modified" pcap format of patched libpcap builds (magic 0xa1b2cd34,
//! 24-byte record headers), written by the real `editcap -F modpcap` from
//! sample captures: analysed exactly as the classic file it came from, as
//! tshark reads both.

mod common;

use sctp_handover::analysis::{analyze_file, AnalysisOptions};
use std::process::Command;

#[test]
fn a_modified_pcap_gives_what_its_classic_original_gives() {
    let dir = std::env::temp_dir().join(format!("sctp-modpcap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for (name, side) in [
        ("koh-kim-1", "mn"),
        ("bokor-failover", "cn"),
        ("honda-dad", "mn"),
    ] {
        let original = common::sample(name, side);
        let modified = dir.join(format!("{name}-{side}.pcap"));
        let status = Command::new("editcap")
            .args(["-F", "modpcap"])
            .arg(&original)
            .arg(&modified)
            .status()
            .expect("editcap runs (make setup installs tshark)");
        assert!(
            status.success(),
            "editcap -F modpcap {}",
            original.display()
        );
        let head = std::fs::read(&modified).expect("the modified file");
        assert_eq!(head[..4], [0x34, 0xcd, 0xb2, 0xa1], "editcap wrote modpcap");

        let options = AnalysisOptions::default();
        let want = analyze_file(&original, &options).expect("the original");
        let got = analyze_file(&modified, &options).expect("the modified file");
        assert_eq!(got.file.frames, want.file.frames, "{name} {side}");
        assert!(got.file.problems.is_empty(), "{:?}", got.file.problems);
        assert_eq!(
            json(&got.events),
            json(&want.events),
            "{name} {side}: events"
        );
        assert_eq!(
            json(&got.handovers),
            json(&want.handovers),
            "{name} {side}: handovers"
        );
        assert!(!want.handovers.is_empty(), "{name} {side} has a handover");
    }
    let _ = std::fs::remove_dir_all(dir);
}

fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("serialisable")
}
