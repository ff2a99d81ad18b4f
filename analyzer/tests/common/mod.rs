//! Test helpers: read a real capture's frames and write them back in other
//! encapsulations and file formats (the variants a demanding user brings).
#![allow(dead_code)]

use sctp_handover::capture;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

pub fn repo_root() -> PathBuf {
    // The crates including this file sit at different depths.
    let mut d = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    while !d.join("sample-captures").is_dir() {
        assert!(d.pop(), "no sample-captures/ above the crate");
    }
    d
}

/// The six tables of a dataset (docs/tables.md), as the tests expect them.
pub const TABLES: [&str; 6] = [
    "files",
    "associations",
    "paths",
    "asconf",
    "events",
    "handovers",
];

/// The interpreter with pyarrow: `$SCTPHO_PYTHON` (the Makefile points it
/// at the project's virtual environment), else `python3`.
pub fn python() -> Command {
    Command::new(std::env::var("SCTPHO_PYTHON").unwrap_or_else(|_| "python3".into()))
}

/// One table of a dataset (`analyze --out`) as JSON rows, read back by
/// pyarrow through tests/read_tables.py: another reader than ours.
pub fn read_table(dataset: &Path, name: &str) -> Vec<serde_json::Value> {
    let out = python()
        .arg(repo_root().join("tests/read_tables.py"))
        .arg(dataset)
        .arg(name)
        .output()
        .expect("python3 runs (make setup installs pyarrow)");
    assert!(
        out.status.success(),
        "read_tables.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON row"))
        .collect()
}

/// The plugins' fields the tiers are compared on (dissector/tests/fields.txt).
pub fn plugin_fields() -> Vec<String> {
    std::fs::read_to_string(repo_root().join("dissector/tests/fields.txt"))
        .expect("fields.txt")
        .lines()
        .map(str::to_string)
        .collect()
}

/// The `-e` columns of a comparison: the plugin's fields, then the expert
/// messages (`|`-separated).
pub fn plugin_columns() -> Vec<String> {
    let mut f = plugin_fields();
    f.push("_ws.expert.message".into());
    f
}

/// tshark's arguments after `extra` for a `-T fields` run over the plugin's
/// packets with [`plugin_columns`] (Wireshark's own SCTP TSN analysis off:
/// its notes differ between one pass and two).
pub fn plugin_fields_args(extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    a.extend(
        [
            "-o",
            "sctp.tsn_analysis:FALSE",
            "-Y",
            "sctpho",
            "-T",
            "fields",
            "-E",
            "occurrence=a",
            "-E",
            "aggregator=|",
        ]
        .map(String::from),
    );
    for f in plugin_columns() {
        a.push("-e".into());
        a.push(f);
    }
    a
}

pub fn sample(name: &str, side: &str) -> PathBuf {
    repo_root()
        .join("sample-captures")
        .join(name)
        .join(format!("{side}.pcap"))
}

/// `shared/public-captures` beside the repository clone, or None when it
/// is absent: the test is then skipped with one line naming the folder. On
/// CI (`CI=true`), where the folder is always there, its absence fails.
pub fn public_captures_if_present() -> Option<PathBuf> {
    let dir = repo_root().join("../shared/public-captures");
    if dir.join("INDEX.tsv").is_file() {
        return Some(dir);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "public captures not found: expected {}/INDEX.tsv (CI=true: not skipped)",
        dir.display()
    );
    eprintln!(
        "skipped: public captures not found in {} (the shared directory \
         `shared/public-captures` beside the repository clone)",
        dir.display()
    );
    None
}

/// Whether the public captures are beside the clone, said without a
/// line (the functions that read them print the skip line): tests whose
/// minimum counts assume them use the samples' own minimum otherwise.
pub fn public_captures_present() -> bool {
    repo_root()
        .join("../shared/public-captures/INDEX.tsv")
        .is_file()
}

/// Every capture INDEX.tsv lists in the public captures; none (with the
/// line saying they were skipped) when the folder is absent outside CI.
pub fn public_capture_files() -> Vec<PathBuf> {
    let Some(dir) = public_captures_if_present() else {
        return Vec::new();
    };
    let index = std::fs::read_to_string(dir.join("INDEX.tsv")).expect("read INDEX.tsv");
    index
        .lines()
        .skip(1)
        .filter_map(|l| l.split('\t').next())
        .filter(|f| !f.is_empty())
        .map(|f| dir.join("files").join(f))
        .collect()
}

/// Every (scenario, side) capture shipped in sample-captures/.
pub fn all_samples() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(repo_root().join("sample-captures"))
        .expect("sample-captures/ exists")
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| e.path())
        .collect();
    dirs.sort();
    for d in dirs {
        for side in ["mn", "cn"] {
            let p = d.join(format!("{side}.pcap"));
            if p.exists() {
                out.push(p);
            }
        }
    }
    assert!(!out.is_empty(), "no sample captures found");
    out
}

/// The sample captures, then every public capture.
pub fn samples_and_public_captures() -> Vec<PathBuf> {
    let mut all = all_samples();
    all.extend(public_capture_files());
    all
}

#[derive(Clone)]
pub struct RawFrame {
    pub ts_ns: i64,
    pub link_type: u32,
    pub data: Vec<u8>,
    pub original_len: u32,
}

pub fn read_frames(path: &Path) -> Vec<RawFrame> {
    let mut reader = capture::open(path).expect("readable capture");
    let mut frames = Vec::new();
    reader
        .for_each_frame(|f| {
            frames.push(RawFrame {
                ts_ns: f.timestamp.0,
                link_type: f.link_type,
                data: f.data.to_vec(),
                original_len: f.original_len,
            })
        })
        .expect("complete read");
    frames
}

/// The IP packet inside an SLL2 frame (the harness's link type), with the
/// SLL2 interface index.
pub fn sll2_to_ip(frame: &RawFrame) -> (Vec<u8>, u32) {
    assert_eq!(frame.link_type, 276, "sample captures are SLL2");
    let ifindex = u32::from_be_bytes([frame.data[4], frame.data[5], frame.data[6], frame.data[7]]);
    (frame.data[20..].to_vec(), ifindex)
}

pub fn ethertype_of(ip: &[u8]) -> u16 {
    if ip[0] >> 4 == 6 {
        0x86dd
    } else {
        0x0800
    }
}

/// Ethernet II with the given VLAN tags (TPID, VID), outermost first.
pub fn ethernet(ip: &[u8], tags: &[(u16, u16)]) -> Vec<u8> {
    let mut v = vec![0x02, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0x02];
    for (tpid, vid) in tags {
        v.extend_from_slice(&tpid.to_be_bytes());
        v.extend_from_slice(&vid.to_be_bytes());
    }
    v.extend_from_slice(&ethertype_of(ip).to_be_bytes());
    v.extend_from_slice(ip);
    v
}

pub fn sll1(ip: &[u8]) -> Vec<u8> {
    let mut v = vec![0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0];
    v.extend_from_slice(&ethertype_of(ip).to_be_bytes());
    v.extend_from_slice(ip);
    v
}

pub fn sll2(ip: &[u8], ifindex: u32) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&ethertype_of(ip).to_be_bytes());
    v.extend_from_slice(&[0, 0]);
    v.extend_from_slice(&ifindex.to_be_bytes());
    v.extend_from_slice(&[0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0]);
    v.extend_from_slice(ip);
    v
}

/// BSD loopback header in little-endian host order (DLT_NULL).
pub fn null_loopback(ip: &[u8]) -> Vec<u8> {
    let family: u32 = if ip[0] >> 4 == 6 { 30 } else { 2 };
    let mut v = family.to_le_bytes().to_vec();
    v.extend_from_slice(ip);
    v
}

pub struct PcapFrame<'a> {
    pub ts_ns: i64,
    pub data: &'a [u8],
    pub original_len: u32,
}

/// A classic pcap file in either byte order and µs or ns resolution.
pub fn write_pcap(
    path: &Path,
    link_type: u32,
    nanos: bool,
    big_endian: bool,
    frames: &[PcapFrame<'_>],
) {
    let mut out = Vec::new();
    let u32b = |v: u32| {
        if big_endian {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    let u16b = |v: u16| {
        if big_endian {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    out.extend_from_slice(&u32b(if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 }));
    out.extend_from_slice(&u16b(2));
    out.extend_from_slice(&u16b(4));
    out.extend_from_slice(&u32b(0));
    out.extend_from_slice(&u32b(0));
    out.extend_from_slice(&u32b(262_144));
    out.extend_from_slice(&u32b(link_type));
    for f in frames {
        let secs = f.ts_ns.div_euclid(1_000_000_000) as u32;
        let frac = f.ts_ns.rem_euclid(1_000_000_000) as u32;
        out.extend_from_slice(&u32b(secs));
        out.extend_from_slice(&u32b(if nanos { frac } else { frac / 1000 }));
        out.extend_from_slice(&u32b(f.data.len() as u32));
        out.extend_from_slice(&u32b(f.original_len));
        out.extend_from_slice(f.data);
    }
    std::fs::write(path, out).expect("write pcap");
}

/// Writes (timestamp ns, bytes) frames as a classic pcap of `link_type`.
pub fn write_frames(
    path: &Path,
    link_type: u32,
    nanos: bool,
    big_endian: bool,
    frames: &[(i64, Vec<u8>)],
) {
    let pf: Vec<PcapFrame<'_>> = frames
        .iter()
        .map(|(t, d)| PcapFrame {
            ts_ns: *t,
            data: d,
            original_len: d.len() as u32,
        })
        .collect();
    write_pcap(path, link_type, nanos, big_endian, &pf);
}

/// One record of a sample's ground-truth `events.jsonl`.
pub struct Truth {
    pub kind: String,
    pub time: sctp_handover::time::Timestamp,
    pub time_after: Option<sctp_handover::time::Timestamp>,
}

pub fn ground_truth(name: &str) -> Vec<Truth> {
    use sctp_handover::handover::anchors::parse_time;
    let path = repo_root()
        .join("sample-captures")
        .join(name)
        .join("events.jsonl");
    let text = std::fs::read_to_string(&path).expect("events.jsonl");
    text.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("JSON line");
            Truth {
                kind: v["kind"].as_str().expect("kind").to_string(),
                time: parse_time(v["time"].as_str().expect("time")).expect("time"),
                time_after: v["time_after"].as_str().and_then(parse_time),
            }
        })
        .collect()
}

/// Writes `frames` (SLL2, from a sample) with their bytes replaced by
/// `data`, keeping each frame's timestamp and original length: a cut frame
/// then looks cut by the snaplen.
pub fn write_altered_sll2(path: &Path, frames: &[RawFrame], data: &[Vec<u8>]) {
    let pf: Vec<PcapFrame<'_>> = frames
        .iter()
        .zip(data)
        .map(|(f, d)| PcapFrame {
            ts_ns: f.ts_ns,
            data: d,
            original_len: f.original_len,
        })
        .collect();
    write_pcap(path, 276, false, false, &pf);
}

/// A pcapng file: one SHB, the given interfaces (link type, if_tsresol),
/// then EPBs naming their interface.
pub fn write_pcapng(path: &Path, interfaces: &[(u16, u8)], frames: &[(u32, PcapFrame<'_>)]) {
    let mut out = Vec::new();
    let block = |out: &mut Vec<u8>, kind: u32, body: &[u8]| {
        let len = 12 + ((body.len() + 3) & !3);
        out.extend_from_slice(&kind.to_le_bytes());
        out.extend_from_slice(&(len as u32).to_le_bytes());
        out.extend_from_slice(body);
        out.resize(out.len() + ((4 - body.len() % 4) % 4), 0);
        out.extend_from_slice(&(len as u32).to_le_bytes());
    };
    let mut shb = Vec::new();
    shb.extend_from_slice(&0x1a2b_3c4du32.to_le_bytes());
    shb.extend_from_slice(&1u16.to_le_bytes());
    shb.extend_from_slice(&0u16.to_le_bytes());
    shb.extend_from_slice(&(-1i64).to_le_bytes());
    block(&mut out, 0x0a0d_0d0a, &shb);
    // A block type no specification defines, which readers must skip.
    block(&mut out, 0x0000_0123, &[1, 2, 3, 4]);
    for (link, tsresol) in interfaces {
        let mut idb = Vec::new();
        idb.extend_from_slice(&link.to_le_bytes());
        idb.extend_from_slice(&0u16.to_le_bytes());
        idb.extend_from_slice(&262_144u32.to_le_bytes());
        // if_tsresol option (code 9, length 1), then opt_endofopt.
        idb.extend_from_slice(&9u16.to_le_bytes());
        idb.extend_from_slice(&1u16.to_le_bytes());
        idb.extend_from_slice(&[*tsresol, 0, 0, 0]);
        idb.extend_from_slice(&[0, 0, 0, 0]);
        block(&mut out, 1, &idb);
    }
    for (iface, f) in frames {
        let units_per_sec = 10u64.pow(u32::from(interfaces[*iface as usize].1));
        let ts = (f.ts_ns as u128 * units_per_sec as u128 / 1_000_000_000) as u64;
        let mut epb = Vec::new();
        epb.extend_from_slice(&iface.to_le_bytes());
        epb.extend_from_slice(&((ts >> 32) as u32).to_le_bytes());
        epb.extend_from_slice(&(ts as u32).to_le_bytes());
        epb.extend_from_slice(&(f.data.len() as u32).to_le_bytes());
        epb.extend_from_slice(&f.original_len.to_le_bytes());
        epb.extend_from_slice(f.data);
        epb.resize((epb.len() + 3) & !3, 0);
        block(&mut out, 6, &epb);
    }
    std::fs::write(path, out).expect("write pcapng");
}

pub fn gzip(src: &Path, dst: &Path) {
    let data = std::fs::read(src).expect("read");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(&data).expect("gzip");
    std::fs::write(dst, enc.finish().expect("gzip")).expect("write gz");
}

/// A test's scratch directory, removed with everything in it when the
/// value is dropped (also when the test fails): a test run leaves nothing
/// behind in the temporary directory. Use it as a `Path`.
pub struct Scratch {
    dir: PathBuf,
    _removed_when_dropped: Option<tempfile::TempDir>,
}

impl Scratch {
    /// A directory the user asked to keep (e.g. crafted files to look at).
    pub fn kept(dir: PathBuf) -> Scratch {
        std::fs::create_dir_all(&dir).expect("output dir");
        Scratch {
            dir,
            _removed_when_dropped: None,
        }
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.dir
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.dir
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.dir.as_os_str()
    }
}

pub fn tempdir(name: &str) -> Scratch {
    let removed = tempfile::Builder::new()
        .prefix(&format!("sctp-handover-test-{name}-"))
        .tempdir()
        .expect("temp dir");
    Scratch {
        dir: removed.path().to_path_buf(),
        _removed_when_dropped: Some(removed),
    }
}

/// A scratch directory for the life of this test process, for what a
/// `static` holds (never dropped, so never removed by a `Scratch`): named
/// by the process id, and the directories of test processes that no
/// longer run are removed when one is made.
pub fn process_dir(name: &str) -> PathBuf {
    const PREFIX: &str = "sctp-handover-process-";
    let tmp = std::env::temp_dir();
    for entry in std::fs::read_dir(&tmp).into_iter().flatten().flatten() {
        let file_name = entry.file_name();
        let pid = file_name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok());
        if let Some(pid) = pid {
            if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
    let d = tmp.join(format!("{PREFIX}{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// Runs tshark and returns its stdout; tshark is part of the project's
/// setup (make setup), so its absence is a failure, not a skip.
pub fn tshark(args: &[&str]) -> String {
    let out = Command::new("tshark")
        .args(args)
        .output()
        .expect("tshark is installed (run `make setup`)");
    assert!(
        out.status.success(),
        "tshark {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// `src` (a sample, SLL2) without the frames numbered in `drop` (1-based).
pub fn write_without(path: &Path, src: &Path, drop: &[u64]) {
    let frames: Vec<RawFrame> = read_frames(src)
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !drop.contains(&(*i as u64 + 1)))
        .map(|(_, f)| f)
        .collect();
    let data: Vec<Vec<u8>> = frames.iter().map(|f| f.data.clone()).collect();
    write_altered_sll2(path, &frames, &data);
}

/// A broken variant of a sample capture, for the plugin tiers.
pub struct Hostile {
    pub name: String,
    pub path: PathBuf,
    /// Frames whose first SCTP chunk claims more bytes than the packet
    /// holds (frames that are not cut: malformed SCTP).
    pub overrun: Vec<u64>,
}

/// The SCTP packet's offset in an SLL2 frame holding IPv4 (None otherwise).
fn sctp_offset_ipv4_sll2(d: &[u8]) -> Option<usize> {
    let ip = d.get(20..)?;
    if ip.len() < 20 || ip[0] >> 4 != 4 || ip[9] != 132 {
        return None;
    }
    let off = 20 + usize::from(ip[0] & 0x0f) * 4;
    (d.len() >= off + 16).then_some(off)
}

/// Broken variants of the sample `name`/`side` (SLL2, IPv4) written in
/// `dir`: the file cut in the middle of a record, random byte flips in
/// every frame, every frame cut to a 64/96/128-byte snaplen, and the first
/// chunk of every second SCTP packet claiming more bytes than the packet.
pub fn hostile_captures(dir: &Path, name: &str, side: &str) -> Vec<Hostile> {
    let src = sample(name, side);
    let frames = read_frames(&src);
    let mut out = Vec::new();
    let mut add = |n: &str, data: Option<Vec<Vec<u8>>>, overrun: Vec<u64>| {
        let path = dir.join(format!("{name}-{side}-{n}.pcap"));
        match data {
            Some(d) => write_altered_sll2(&path, &frames, &d),
            None => {
                let bytes = std::fs::read(&src).expect("read sample");
                std::fs::write(&path, &bytes[..bytes.len() * 2 / 3]).expect("write");
            }
        }
        out.push(Hostile {
            name: n.to_string(),
            path,
            overrun,
        });
    };
    add("truncated-file", None, Vec::new());

    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let flipped = frames
        .iter()
        .map(|f| {
            let mut d = f.data.clone();
            if d.len() > 20 {
                for _ in 0..1 + next() % 3 {
                    let i = 20 + (next() as usize) % (d.len() - 20);
                    d[i] ^= 1 << (next() % 8);
                }
            }
            d
        })
        .collect();
    add("byte-flips", Some(flipped), Vec::new());

    for snaplen in [64, 96, 128] {
        let cut = frames
            .iter()
            .map(|f| f.data[..f.data.len().min(snaplen)].to_vec())
            .collect();
        add(&format!("snaplen-{snaplen}"), Some(cut), Vec::new());
    }

    let mut overrun = Vec::new();
    let mut sctp_seen = 0;
    let data = frames
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let mut d = f.data.clone();
            if let Some(off) = sctp_offset_ipv4_sll2(&d) {
                sctp_seen += 1;
                if sctp_seen % 2 == 0 {
                    let claimed = (d.len() - off - 12 + 8) as u16;
                    d[off + 14..off + 16].copy_from_slice(&claimed.to_be_bytes());
                    overrun.push(i as u64 + 1);
                }
            }
            d
        })
        .collect();
    assert!(!overrun.is_empty(), "{name}/{side}: no IPv4 SCTP frames");
    add("chunk-overrun", Some(data), overrun);
    out
}

/// The plugins' look-ahead fields: known once the answer has been read, so
/// missing from a single pass over a pipe.
pub const LOOK_AHEAD: [&str; 2] = ["sctpho.asconf.ack_frame", "sctpho.hb.ack_frame"];
/// The plugins' warning on an ASCONF never answered (also look-ahead).
pub const NO_ACK: &str = "ASCONF without ASCONF-ACK by the end of the capture";

/// `tshark -T fields` output of a plugin (columns `names`, the last one
/// `_ws.expert.message` aggregated with `|`) as a single pass over a pipe
/// shows it: without the look-ahead fields and the unanswered-ASCONF
/// warning.
pub fn without_look_ahead(out: &str, names: &[String]) -> String {
    assert_eq!(names.last().map(String::as_str), Some("_ws.expert.message"));
    let blank: Vec<usize> = LOOK_AHEAD
        .iter()
        .map(|f| names.iter().position(|n| n == f).expect("look-ahead field"))
        .collect();
    out.lines()
        .map(|l| {
            let mut cols: Vec<String> = l.split('\t').map(str::to_string).collect();
            for &i in &blank {
                cols[i].clear();
            }
            let last = cols.len() - 1;
            cols[last] = cols[last]
                .split('|')
                .filter(|m| *m != NO_ACK)
                .collect::<Vec<_>>()
                .join("|");
            cols.join("\t") + "\n"
        })
        .collect()
}

/// The frames `tshark -V` printed (each starts "Frame N: ...").
pub fn frames_in(verbose: &str) -> std::collections::BTreeSet<u64> {
    verbose
        .lines()
        .filter_map(|l| l.strip_prefix("Frame ")?.split(':').next()?.parse().ok())
        .collect()
}

/// xorshift64*: a fixed sequence from the seed, so failures reproduce.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// The frames of the ASCONF-ACKs among `events` (only the answers to
/// repeated requests when `repeated_only`): cut out of a capture, they
/// leave its requests unanswered.
pub fn asconf_ack_frames(events: &[sctp_handover::events::Event], repeated_only: bool) -> Vec<u64> {
    events
        .iter()
        .filter(|e| match e.kind {
            sctp_handover::events::EventKind::AsconfAck { repeated, .. } => {
                repeated || !repeated_only
            }
            _ => false,
        })
        .map(|e| e.frame)
        .collect()
}

/// Every sample with ASCONF-ACKs cut out, written into `dir`: all its
/// ASCONF-ACKs (`<scenario>-<side>-all`), and only the answers to
/// repeated requests (`<scenario>-<side>-repeated`); samples without
/// such answers are left out. (name, path), in sample order.
pub fn samples_with_asconf_acks_cut(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for src in all_samples() {
        let events = sctp_handover::analysis::analyze_file(
            &src,
            &sctp_handover::analysis::AnalysisOptions::default(),
        )
        .expect("analysable")
        .events;
        for (cut, drop) in [
            ("all", asconf_ack_frames(&events, false)),
            ("repeated", asconf_ack_frames(&events, true)),
        ] {
            if drop.is_empty() {
                continue;
            }
            let name = format!(
                "{}-{}-{cut}",
                src.parent()
                    .and_then(Path::file_name)
                    .map_or_else(|| "capture".into(), |n| n.to_string_lossy().into_owned()),
                src.file_stem()
                    .map_or_else(|| "side".into(), |n| n.to_string_lossy().into_owned())
            );
            let path = dir.join(format!("{name}.pcap"));
            write_without(&path, &src, &drop);
            out.push((name, path));
        }
    }
    out
}
