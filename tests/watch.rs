//! `sctp-handover watch --follow`: a capture read while it is written —
//! in pieces, with a record torn across two writes, and rotated into a
//! second file — gives the handovers the finished file gives.

#[path = "../analyzer/tests/common/mod.rs"]
mod common;

use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sctp-handover"))
}

/// `analyze --format json`'s handover records: (switch frame, data
/// interrupt in ms, total handover latency in ms).
fn analysed(path: &Path) -> Vec<(u64, f64, f64)> {
    let out = bin()
        .args(["analyze", "--format", "json"])
        .arg(path)
        .output()
        .expect("binary runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["record"] == "handover")
        .map(|v| {
            (
                v["switch_frame"].as_u64().unwrap_or(0),
                v["data_interrupt"]["ms"].as_f64().unwrap_or(f64::NAN),
                v["total_handover_latency"]["ms"]
                    .as_f64()
                    .unwrap_or(f64::NAN),
            )
        })
        .collect()
}

/// The `handover` lines of `watch --format jsonl`, in the same shape, with
/// the file each came from.
fn watched(stdout: &str) -> Vec<(String, u64, f64, f64)> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "handover")
        .map(|v| {
            let h = &v["handover"];
            (
                v["source"].as_str().unwrap_or("").to_string(),
                h["switch_frame"].as_u64().unwrap_or(0),
                h["data_interrupt"]["ms"].as_f64().unwrap_or(f64::NAN),
                h["total_handover_latency"]["ms"]
                    .as_f64()
                    .unwrap_or(f64::NAN),
            )
        })
        .collect()
}

fn watch(target: &Path) -> std::process::Child {
    bin()
        .args(["watch", "--format", "jsonl", "--idle-exit", "2", "--follow"])
        .arg(target)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("watch starts")
}

#[test]
fn a_capture_written_in_pieces_with_a_torn_record_gives_the_file_s_handovers() {
    let dir = common::tempdir("watch-pieces");
    let sample = common::sample("koh-kim-1", "mn");
    let bytes = std::fs::read(&sample).expect("sample");
    let expected = analysed(&sample);
    assert_eq!(expected.len(), 2);
    let path = dir.join("growing.pcap");
    let mut file = std::fs::File::create(&path).expect("create");
    let child = watch(&path);
    // Pieces of 4000 bytes cut records anywhere (a record torn across two
    // writes, the global header itself split), written 50 ms apart.
    for piece in bytes.chunks(4000) {
        file.write_all(piece).expect("write");
        file.flush().expect("flush");
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child
        .wait_with_output()
        .expect("watch ends after --idle-exit");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        !stderr.contains("truncated") && !stderr.contains("warning"),
        "{stderr}"
    );
    let got: Vec<(u64, f64, f64)> = watched(&stdout)
        .into_iter()
        .map(|(_, f, d, t)| (f, d, t))
        .collect();
    assert_eq!(got, expected, "{stdout}");
    // The switch is reported as it happens, before the association ends.
    let switch = stdout.find("\"type\":\"switch\"").expect("a switch line");
    let end = stdout.find("\"association_end\"").expect("an end line");
    assert!(switch < end);
}

#[test]
fn a_rotated_capture_is_followed_into_the_next_file() {
    let dir = common::tempdir("watch-rotation");
    let rot = dir.join("rot");
    std::fs::create_dir_all(&rot).expect("dir");
    let sample = common::sample("koh-kim-1", "mn");
    let frames = common::read_frames(&sample);
    let expected = analysed(&sample);
    // tcpdump -C: `cap` holds frames 1..=120, `cap1` the rest.
    let split = 120;
    let write = |path: &Path, part: &[common::RawFrame]| {
        let pf: Vec<common::PcapFrame<'_>> = part
            .iter()
            .map(|f| common::PcapFrame {
                ts_ns: f.ts_ns,
                data: &f.data,
                original_len: f.original_len,
            })
            .collect();
        common::write_pcap(path, frames[0].link_type, false, false, &pf);
    };
    let child = watch(&rot);
    std::thread::sleep(Duration::from_millis(300));
    write(&rot.join("cap"), &frames[..split]);
    std::thread::sleep(Duration::from_millis(500));
    write(&rot.join("cap1"), &frames[split..]);
    let out = child
        .wait_with_output()
        .expect("watch ends after --idle-exit");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = watched(&stdout);
    assert_eq!(got.len(), expected.len(), "{stdout}");
    for ((source, frame, interrupt, total), (e_frame, e_interrupt, e_total)) in
        got.iter().zip(&expected)
    {
        // Frame numbers are the file's own, as Wireshark shows them.
        let in_first = *e_frame <= split as u64;
        assert_eq!(source.ends_with("cap"), in_first, "{source}");
        let offset = if in_first { 0 } else { split as u64 };
        assert_eq!(*frame + offset, *e_frame);
        assert!((interrupt - e_interrupt).abs() < 1e-9 && (total - e_total).abs() < 1e-9);
    }
}
