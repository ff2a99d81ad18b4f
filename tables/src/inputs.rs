//! Finding the inputs: paths given on the command line, directories walked
//! recursively, captures told from other files by their magic numbers; and
//! what the replay harness left beside each capture (scenario, swept
//! parameters, repetition, ground-truth events, whether the run's script
//! took effect).

use sctp_handover::capture::{self, sniff, CaptureError, CaptureReader, Sniff};
use sctp_handover::handover::CapturePoint;
use sctp_handover_harness_check::{check_run_dir, Verdict};
use sctp_handover_harness_formats::{Meta, Scenario};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Files the harness writes beside its captures: not inputs of their own.
const HARNESS_FILES: [&str; 10] = [
    "meta.json",
    "events.jsonl",
    "scenario.toml",
    "guest.log",
    "mn-stats.json",
    "cn-stats.json",
    "tcpdump-mn.log",
    "tcpdump-cn.log",
    // replay --watch
    "watch.jsonl",
    "watch.log",
];

/// What an input found on the command line or in a directory is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputKind {
    /// A capture by its magic number, or a file named on the command line
    /// (whatever it holds: its error belongs in the results).
    Capture,
    /// Found in a directory, not a capture: listed, not analysed.
    NotCapture(String),
    /// Found in a directory, could not even be opened.
    Unreadable(String),
}

/// One input of a batch run: a file (or standard input) and what is
/// known of it before its analysis.
#[derive(Debug, Clone)]
pub struct Input {
    /// Where to read it (`-` for standard input).
    pub path: PathBuf,
    /// The path as found, for messages and the `source` column.
    pub source: String,
    /// Its size in bytes; None when unknown (standard input).
    pub size: Option<u64>,
    /// Modification time (ns since the epoch), for resuming.
    pub modified_ns: Option<i128>,
    /// Whether it is analysed, only listed, or unreadable.
    pub kind: InputKind,
    /// The harness run it belongs to, when the harness's files lie beside it.
    pub run: Option<HarnessRun>,
    /// The bytes of the capture, when they come from a stream rather
    /// than from `path` (the Python bindings reading an object from
    /// object storage as it downloads; `path` then only names it and
    /// finds the harness files mirrored beside it).
    pub stream: Option<InputStream>,
}

/// A capture's byte stream, read once by the input's one analysis.
#[derive(Clone)]
pub struct InputStream {
    /// What the capture's errors and report name (its URL).
    name: PathBuf,
    reader: Arc<Mutex<Option<Box<dyn Read + Send>>>>,
}

impl InputStream {
    /// The stream `reader` of the capture `name` (what its errors and
    /// report call it).
    pub fn new(name: impl Into<PathBuf>, reader: impl Read + Send + 'static) -> Self {
        InputStream {
            name: name.into(),
            reader: Arc::new(Mutex::new(Some(Box::new(reader)))),
        }
    }

    /// The reader, the first time only.
    fn take(&self) -> Option<Box<dyn Read + Send>> {
        self.reader.lock().ok().and_then(|mut r| r.take())
    }
}

impl std::fmt::Debug for InputStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InputStream")
    }
}

/// What the replay harness says about the run a capture belongs to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HarnessRun {
    /// The scenario of the run (meta.json's `scenario`, else scenario.toml's name).
    pub scenario: Option<String>,
    /// `rNN` of the run directory.
    pub repetition: Option<u64>,
    /// `mn` or `cn` (the capture's file stem).
    pub side: Option<String>,
    /// Swept parameters from the directory `name=value,name=value`.
    pub params: Vec<(String, String)>,
    /// The harness's ground-truth event log beside the capture.
    pub events: Option<PathBuf>,
    /// Whether the run's scripted actions took effect (meta.json `valid`,
    /// or checked from events.jsonl for a run recorded before the harness
    /// checked it); None when it cannot be told.
    pub valid: Option<bool>,
    /// Why not (`; `-separated, one per action), or why it cannot be
    /// told; None when valid.
    pub invalid_reason: Option<String>,
}

/// Where finding inputs went wrong without stopping the rest.
#[derive(Debug, Clone)]
pub struct WalkProblem {
    /// The file or directory.
    pub path: PathBuf,
    /// What went wrong, in words.
    pub reason: String,
}

/// The argument that names standard input, as tcpdump's and tshark's
/// `-r -` (a file named `-` is `./-`).
pub const STDIN: &str = "-";

/// Whether `path` is [`STDIN`].
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == STDIN
}

/// The input read from standard input: a capture (its magic is checked
/// when it is read) named `-`, with no size, time or harness run of its own.
pub fn stdin_input() -> Input {
    Input {
        path: PathBuf::from(STDIN),
        source: STDIN.to_owned(),
        size: None,
        modified_ns: None,
        kind: InputKind::Capture,
        run: None,
        stream: None,
    }
}

impl Input {
    /// Standard input: read once, as it streams (never resumed from a
    /// dataset, whose record of an earlier `-` says nothing of this one).
    pub fn is_stdin(&self) -> bool {
        is_stdin(&self.path)
    }
}

/// Opens an input's capture: standard input for `-` (not seekable: the
/// magic is sniffed from a buffered reader, gzip looked through as for a
/// file), the file otherwise.
pub fn open_capture(input: &Input) -> Result<CaptureReader, CaptureError> {
    if let Some(stream) = &input.stream {
        match stream.take() {
            Some(reader) => capture::from_reader(&stream.name, reader),
            None => Err(CaptureError::Open {
                path: stream.name.clone(),
                source: std::io::Error::other("its stream was already read"),
            }),
        }
    } else if input.is_stdin() {
        capture::from_reader(&input.path, std::io::stdin())
    } else {
        capture::open(&input.path)
    }
}

/// Every input under `paths`, in a deterministic order: each argument in
/// the order given, directory entries sorted by name; `-` is standard
/// input ([`stdin_input`]).
pub fn discover(paths: &[PathBuf]) -> (Vec<Input>, Vec<WalkProblem>) {
    let mut inputs = Vec::new();
    let mut problems = Vec::new();
    for p in paths {
        if is_stdin(p) {
            inputs.push(stdin_input());
        } else if is_url(p) {
            inputs.push(input(p, InputKind::Unreadable(URL_HINT.into())));
        } else if p.is_dir() {
            walk(p, &mut inputs, &mut problems);
        } else {
            inputs.push(input(p, InputKind::Capture));
        }
    }
    (inputs, problems)
}

fn walk(dir: &Path, inputs: &mut Vec<Input>, problems: &mut Vec<WalkProblem>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            problems.push(WalkProblem {
                path: dir.to_owned(),
                reason: format!("cannot list the directory: {e}"),
            });
            return;
        }
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !is_candidate(&name) {
            continue;
        }
        // Symbolic links are followed for files only, so a link cannot
        // make the walk loop.
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            walk(&path, inputs, problems);
            continue;
        }
        if !path.is_file() {
            continue;
        }
        inputs.push(input(&path, found_kind(&name, sniff(&path))));
    }
}

/// What the command line says of an `s3://…` (or other `scheme://`)
/// argument: it reads local files and standard input; the Python package
/// reads object storage (docs/scale-out.md, "Object storage").
pub const URL_HINT: &str = "a URL: sctp-handover reads local files and standard input; archives \
     and datasets in object storage (s3://…) are read and written by the Python package \
     (sctp-handover-cluster, sctp_handover.analyze_capture; docs/scale-out.md, \"Object storage\"), \
     or pipe one object in: `aws s3 cp URL - | sctp-handover analyze -`";

/// Whether `path` is a URL (`scheme://…`, file:// aside), which no local
/// path of an archive looks like.
pub fn is_url(path: &Path) -> bool {
    let text = path.to_string_lossy();
    let Some((scheme, _)) = text.split_once("://") else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        && !scheme.eq_ignore_ascii_case("file")
}

/// Whether a name met in a directory may be an input: hidden files and
/// folders (.git, a dataset's temporaries) and the harness's own files
/// are not. (Also the listing of an archive in object storage.)
pub fn is_candidate(name: &str) -> bool {
    !(name.starts_with('.') || HARNESS_FILES.contains(&name))
}

/// The kind of a file named `name` met in a directory, from the sniff of
/// its first bytes.
pub fn found_kind(name: &str, sniffed: std::io::Result<Sniff>) -> InputKind {
    match sniffed {
        Ok(Sniff::Capture) => InputKind::Capture,
        Ok(Sniff::Empty) if looks_like_capture_name(name) => InputKind::Capture,
        Ok(Sniff::Empty) => InputKind::NotCapture("empty file".into()),
        Ok(Sniff::Other(_)) if looks_like_capture_name(name) => InputKind::Capture,
        Ok(Sniff::Other(head)) => {
            InputKind::NotCapture(format!("not a pcap or pcapng capture (starts with {head})"))
        }
        Err(e) => InputKind::Unreadable(format!("cannot read: {e}")),
    }
}

/// Names that promise a capture: such a file is analysed (and reported
/// as damaged) even when its magic number is wrong.
fn looks_like_capture_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    [".pcap", ".pcapng", ".cap", ".ntar", ".dmp"]
        .iter()
        .any(|ext| name.ends_with(ext))
}

/// The input at `path`, as `discover` describes it (`source` is the path
/// as given).
pub fn input(path: &Path, kind: InputKind) -> Input {
    let meta = std::fs::metadata(path).ok();
    let modified_ns = meta
        .as_ref()
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as i128);
    let run = (kind == InputKind::Capture)
        .then(|| harness_run(path))
        .flatten();
    Input {
        path: path.to_owned(),
        source: path.display().to_string(),
        size: meta.map(|m| m.len()),
        modified_ns,
        kind,
        run,
        stream: None,
    }
}

/// The harness's run beside `capture`: `OUT/<scenario>/<set>/rNN/{mn,cn}.pcap`
/// with meta.json and scenario.toml. None when neither file is there.
pub fn harness_run(capture: &Path) -> Option<HarnessRun> {
    let dir = capture.parent()?;
    let meta_json = std::fs::read_to_string(dir.join("meta.json")).ok();
    let scenario_toml = std::fs::read_to_string(dir.join("scenario.toml")).ok();
    if meta_json.is_none() && scenario_toml.is_none() {
        return None;
    }
    // A meta.json that does not parse counts as absent: the verdict is
    // then checked from events.jsonl, the name taken from scenario.toml.
    let meta = meta_json.as_deref().and_then(|m| Meta::parse(m).ok());
    let scenario = meta.as_ref().and_then(|m| m.scenario.clone()).or_else(|| {
        scenario_toml
            .as_deref()
            .and_then(|t| Scenario::from_toml(t).ok())
            .map(|s| s.name)
    });
    let dir_name = |d: &Path| d.file_name().map(|n| n.to_string_lossy().into_owned());
    let repetition =
        dir_name(dir).and_then(|n| n.strip_prefix('r').and_then(|d| d.parse::<u64>().ok()));
    // The set directory names the swept parameters, `default` none.
    let params = match (repetition, dir.parent().and_then(dir_name)) {
        (Some(_), Some(set)) if set != "default" => parse_set(&set),
        _ => Vec::new(),
    };
    let side = capture
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| CapturePoint::of_harness_capture(s).is_some());
    let events = Some(dir.join("events.jsonl")).filter(|p| p.is_file());
    let (valid, invalid_reason) = run_validity(dir, meta.as_ref(), events.is_some());
    Some(HarnessRun {
        scenario,
        repetition,
        side,
        params,
        events,
        valid,
        invalid_reason,
    })
}

/// `(run_valid, run_invalid_reason)` of the run in `dir`: what its
/// meta.json records, else the harness's check of its events.jsonl (the
/// same function the harness runs), else unknown.
fn run_validity(
    dir: &Path,
    meta: Option<&Meta>,
    has_events: bool,
) -> (Option<bool>, Option<String>) {
    let recorded = meta.and_then(Verdict::from_meta);
    let verdict = match recorded {
        Some(v) => v,
        None if has_events => match check_run_dir(dir) {
            Ok(v) => v,
            Err(e) => return (None, Some(format!("the check could not be made: {e}"))),
        },
        None => return (None, None),
    };
    let reason = (!verdict.reasons().is_empty()).then(|| verdict.reasons().join("; "));
    (verdict.valid(), reason)
}

/// `rto=200,pmr=2` → [("rto", "200"), ("pmr", "2")]; anything else → none.
fn parse_set(set: &str) -> Vec<(String, String)> {
    let pairs: Option<Vec<(String, String)>> = set
        .split(',')
        .map(|kv| {
            kv.split_once('=')
                .filter(|(k, _)| !k.is_empty())
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
        })
        .collect();
    pairs.unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_directories() {
        assert_eq!(
            parse_set("rto=200,pmr=2"),
            vec![("rto".into(), "200".into()), ("pmr".into(), "2".into())]
        );
        assert!(parse_set("default").is_empty());
        assert!(parse_set("rto=200,oops").is_empty());
    }

    #[test]
    fn a_run_is_valid_by_its_meta_json_or_by_the_check_of_its_events() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        // Honda's SET-PRIMARY and DELETE-IP never reached the CN's kernel
        // (the harness's verdict in meta.json).
        let honda = harness_run(
            &root.join("reports/reproduction/runs/honda/honda-nodad/default/r01/mn.pcap"),
        )
        .expect("a harness run");
        assert_eq!(honda.valid, Some(false));
        // The reason as the harness wrote it; the action times move from
        // one `make reproduce` to the next (the script's +1.0x s), the
        // reason's words do not.
        let reason = honda.invalid_reason.unwrap_or_default();
        let (set_primary, remove) = reason.split_once("; ").unwrap_or_default();
        assert!(
            set_primary.starts_with("set_peer_primary 2001:db8::102 at +1.0")
                && set_primary.ends_with(
                    " s: no SCTP_ADDR_MADE_PRIM at the cn within 2 s, its primary stayed \
                     2001:db8::101"
                ),
            "{reason}"
        );
        assert!(
            remove.starts_with("bindx_remove 2001:db8::101 at +1.0")
                && remove.ends_with(" s: no SCTP_ADDR_REMOVED at the cn within 2 s"),
            "{reason}"
        );
        let koh = harness_run(
            &root.join("reports/reproduction/runs/koh-kim-1/koh-kim-1/delay=5/r01/cn.pcap"),
        )
        .expect("a harness run");
        assert_eq!((koh.valid, koh.invalid_reason), (Some(true), None));
        // A log without the kernel's view cannot show an ASCONF arrived.
        let sample = harness_run(&root.join("sample-captures/koh-kim-1/mn.pcap")).expect("run");
        assert_eq!(sample.valid, None);
        assert!(sample
            .invalid_reason
            .is_some_and(|r| r.contains("cannot be checked")));
        // meta.json's verdict is taken as recorded.
        let dir = std::env::temp_dir().join(format!("tables-run-valid-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(
            dir.join("meta.json"),
            r#"{"scenario": "x", "ok": true, "valid": false, "invalid_reasons": ["a", "b"]}"#,
        )
        .expect("meta");
        let run = harness_run(&dir.join("mn.pcap")).expect("run");
        assert_eq!(
            (run.valid, run.invalid_reason.as_deref()),
            (Some(false), Some("a; b"))
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn urls() {
        assert!(is_url(Path::new("s3://bucket/x.pcap")));
        assert!(is_url(Path::new("gs://b/p/")));
        assert!(!is_url(Path::new("file:///tmp/x.pcap")));
        assert!(!is_url(Path::new("dir/x.pcap")));
        assert!(!is_url(Path::new("odd:name/x://y")));
    }

    #[test]
    fn capture_names() {
        assert!(looks_like_capture_name("a.PCAP"));
        assert!(looks_like_capture_name("a.pcapng.gz"));
        assert!(!looks_like_capture_name("notes.txt"));
    }
}
