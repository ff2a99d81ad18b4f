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

/// `watch --follow mn.pcap --out D` on a harness run whose capture is
/// written in pieces while it is watched writes, when the watch ends, the
/// tables `analyze mn.pcap --out D2` writes for the finished file: read
/// back with pyarrow, equal cell by cell in every table, provenance
/// (source, scenario, repetition, capture side) included. The one column
/// that differs is `files.analysis_seconds`: how long the input took,
/// which for a watch is the whole watch (waiting for the writer and the
/// --idle-exit included).
#[test]
fn watch_out_writes_the_tables_analyze_out_writes() {
    for scenario in ["koh-kim-1", "bokor-failover"] {
        let dir = common::tempdir(&format!("watch-out-{scenario}"));
        let run = dir.join("run").join(scenario).join("default").join("r01");
        std::fs::create_dir_all(&run).expect("run dir");
        let sample_dir = common::sample(scenario, "mn")
            .parent()
            .expect("sample dir")
            .to_path_buf();
        // The harness's files beside the capture: scenario, repetition and
        // capture side for the provenance, events.jsonl for the anchors.
        for f in ["meta.json", "scenario.toml", "events.jsonl"] {
            std::fs::copy(sample_dir.join(f), run.join(f)).expect("copy");
        }
        let capture = run.join("mn.pcap");
        let bytes = std::fs::read(sample_dir.join("mn.pcap")).expect("sample");
        let mut file = std::fs::File::create(&capture).expect("create");
        let (d1, d2) = (dir.join("watched"), dir.join("analysed"));
        let child = bin()
            .args(["watch", "--format", "jsonl", "--idle-exit", "1.5", "--out"])
            .arg(&d1)
            .arg("--follow")
            .arg(&capture)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("watch starts");
        for piece in bytes.chunks(16_000) {
            file.write_all(piece).expect("write");
            file.flush().expect("flush");
            std::thread::sleep(Duration::from_millis(30));
        }
        let out = child.wait_with_output().expect("watch ends");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let a = bin()
            .args(["analyze", "-q", "--out"])
            .arg(&d2)
            .arg(&capture)
            .output()
            .expect("analyze runs");
        assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
        for name in common::TABLES {
            let (mut w, mut x) = (common::read_table(&d1, name), common::read_table(&d2, name));
            // A failover has no ASCONF.
            let empty = scenario == "bokor-failover" && name == "asconf";
            assert_eq!(w.is_empty(), empty, "{scenario}: {name} rows");
            if name == "files" {
                assert_eq!(w[0]["scenario"], scenario);
                assert_eq!(w[0]["capture_side"], "mn");
                for row in w.iter_mut().chain(x.iter_mut()) {
                    let seconds = row
                        .as_object_mut()
                        .and_then(|o| o.remove("analysis_seconds"));
                    assert!(seconds.is_some_and(|s| s.is_number()), "{row}");
                }
            }
            assert_eq!(w.len(), x.len(), "{scenario}: {name} rows");
            for (i, (rw, rx)) in w.iter().zip(&x).enumerate() {
                let (ow, ox) = (rw.as_object().expect("row"), rx.as_object().expect("row"));
                assert_eq!(
                    ow.keys().collect::<Vec<_>>(),
                    ox.keys().collect::<Vec<_>>(),
                    "{scenario}: {name} columns"
                );
                for (column, value) in ow {
                    assert_eq!(
                        value, &ox[column],
                        "{scenario}: {name} row {i} column {column}"
                    );
                }
            }
        }
        // The input is recorded complete, as analyze records it.
        let done = |d: &Path| -> Value {
            let f = std::fs::read_dir(d.join("_inputs"))
                .expect("_inputs")
                .filter_map(Result::ok)
                .find(|e| e.file_name().to_string_lossy().ends_with(".json"))
                .expect("a record");
            serde_json::from_str(&std::fs::read_to_string(f.path()).expect("read")).expect("JSON")
        };
        assert_eq!(done(&d1), done(&d2), "{scenario}: the input's record");
    }
}
