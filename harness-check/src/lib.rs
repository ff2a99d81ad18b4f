//! Whether a replay harness run's script happened: every scripted action
//! is checked against the kernel's own view in the run's `events.jsonl`
//! (docs/harness.md, "Did the script happen?").
//!
//! An action the MN's driver performed can still fail to take effect at the
//! peer: in honda-dad / honda-nodad the MN never receives the ADD-IP's
//! ASCONF-ACK, so Linux holds back the SET-PRIMARY and DELETE-IP queued
//! behind it and the CN never sees them; the switch a capture then shows is
//! a failover, not the planned handover the scenario scripts. Such a run is
//! *invalid*: measured, but not a measurement of its scenario.
//!
//! This crate is pure (serde only): the harness writes the verdict into
//! meta.json after each run and `sctp-harness verify` re-checks run
//! directories; the tables crate computes it for runs whose meta.json
//! predates the check.

#![warn(missing_docs)]

use sctp_handover_harness_formats::{parse_log, Event as Line, Meta, Scenario};
use std::path::{Path, PathBuf};

/// How long after an action's syscall its effect may come. ASCONFs were
/// answered within 125 ms in every reproduction run (RTT up to 200 ms);
/// 2 s leaves room for one retransmission after the shipped scenarios'
/// RTO.max (1 s) and the queueing of an ASCONF behind the one before it,
/// while a much later change is no longer this action's doing.
pub const EFFECT_WINDOW_NS: i64 = 2_000_000_000;

/// The window in words, for the reasons.
const WINDOW_TEXT: &str = "2 s";

/// Why a run directory could not be checked at all (as opposed to a
/// [`Verdict`] on a run whose files could be read).
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// A file or directory of the run could not be read or listed.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// A line of events.jsonl is not an event the check understands.
    #[error("events.jsonl line {line}: {message}")]
    Line {
        /// Its number, from 1.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// The run's scenario.toml does not parse as a scenario.
    #[error("{}: {message}", path.display())]
    Scenario {
        /// The scenario file.
        path: PathBuf,
        /// The parser's complaint.
        message: String,
    },
    /// The run's meta.json is not a meta.json.
    #[error("{}: {message}", path.display())]
    Meta {
        /// The meta.json file.
        path: PathBuf,
        /// The parser's complaint.
        message: String,
    },
}

/// The outcome of the check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every scripted action took effect.
    Valid,
    /// At least one did not: one reason per such action.
    Invalid(Vec<String>),
    /// Nothing failed, but some actions cannot be checked from this log:
    /// it was written before the harness logged the kernel's view.
    Unchecked(Vec<String>),
}

impl Verdict {
    /// `Some(true)` valid, `Some(false)` invalid, `None` not checkable.
    pub fn valid(&self) -> Option<bool> {
        match self {
            Verdict::Valid => Some(true),
            Verdict::Invalid(_) => Some(false),
            Verdict::Unchecked(_) => None,
        }
    }

    /// Why the run is invalid (or could not be checked); empty when valid.
    pub fn reasons(&self) -> &[String] {
        match self {
            Verdict::Valid => &[],
            Verdict::Invalid(r) | Verdict::Unchecked(r) => r,
        }
    }

    /// The verdict meta.json records: `valid` (null when it could not be
    /// checked) and `invalid_reasons`; None for a run recorded before the
    /// harness checked.
    pub fn from_meta(meta: &Meta) -> Option<Verdict> {
        let reasons = meta.invalid_reasons.clone();
        Some(match meta.valid? {
            Some(true) => Verdict::Valid,
            Some(false) => Verdict::Invalid(reasons),
            None => Verdict::Unchecked(reasons),
        })
    }
}

/// One action of the scenario's timeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptedAction {
    /// When the MN's driver performs it: ms after the association came up
    /// (`assoc_up`, docs/harness.md).
    pub at_ms: u64,
    /// The scenario's action name (`bindx_add`, `link_down`, …).
    pub action: String,
    /// Its address, or its interface for the link and path actions.
    pub target: Option<String>,
}

/// What the check needs of the scenario.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Script {
    /// In timeline order (the MN's driver sorts by `at_ms`, stably).
    pub actions: Vec<ScriptedAction>,
    /// With auto-ASCONF the kernel sends ADD-IP / DELETE-IP for addresses
    /// configured / removed on an interface.
    pub auto_asconf: bool,
}

impl Script {
    /// From a scenario.toml, as recorded (not validated again).
    pub fn from_toml(text: &str) -> Result<Script, String> {
        Ok(Script::of(
            &Scenario::from_toml(text).map_err(|e| e.to_string())?,
        ))
    }

    /// What the check needs of a scenario.
    pub fn of(scenario: &Scenario) -> Script {
        let mut actions: Vec<ScriptedAction> = scenario
            .timeline
            .iter()
            .map(|a| ScriptedAction {
                at_ms: a.at_ms,
                action: a.kind.name().to_owned(),
                // The link and path actions by their interface.
                target: a.kind.address().or(a.kind.interface()).map(str::to_owned),
            })
            .collect();
        actions.sort_by_key(|a| a.at_ms);
        Script {
            actions,
            auto_asconf: scenario.sctp.auto_asconf,
        }
    }
}

/// The kind an action is logged as: `remove_address` is logged as
/// `addr_down` (the analyzer's anchor), the others under their own name.
fn logged_kind(action: &str) -> &str {
    match action {
        "remove_address" => "addr_down",
        other => other,
    }
}

/// The scenario's name of a logged action.
fn action_name(kind: &str) -> &str {
    match kind {
        "addr_down" => "remove_address",
        other => other,
    }
}

fn parse_lines(text: &str) -> Result<Vec<Line>, CheckError> {
    parse_log(text).map_err(|e| CheckError::Line {
        line: e.line,
        message: e.message,
    })
}

/// The log, sorted, with what the checks ask of it.
struct Log {
    lines: Vec<Line>,
    /// When the association came up (`assoc_up`'s time_after): the origin
    /// of the timeline's `at_ms` and of the `+T s` in the reasons.
    origin_ns: i64,
    /// Whether any `kernel_*` line is there: logs written before the
    /// harness logged the kernel's view have none.
    kernel_view: bool,
}

impl Log {
    fn new(lines: Vec<Line>) -> Log {
        let origin_ns = lines
            .iter()
            .find(|l| l.kind == "assoc_up")
            .map(|l| l.time_after_ns().unwrap_or(l.time_ns))
            .or_else(|| lines.first().map(|l| l.time_ns))
            .unwrap_or(0);
        let kernel_view = lines.iter().any(|l| l.kind.starts_with("kernel_"));
        Log {
            lines,
            origin_ns,
            kernel_view,
        }
    }

    fn relative(&self, ns: i64) -> String {
        format!("+{:.2} s", (ns - self.origin_ns) as f64 / 1e9)
    }

    /// The harness's action lines: its own (no `node`) with `time_after`
    /// (a syscall was timed; the `addr_up` / `addr_down` marks have none),
    /// but `assoc_up`. Any kind: an action added to the harness later is
    /// still matched to its scenario line, and checked for `ok`.
    fn actions(&self) -> impl Iterator<Item = (usize, &Line)> {
        self.lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.node.is_none() && l.time_after.is_some() && l.kind != "assoc_up")
    }

    /// The first line at or after `from` that `is` accepts.
    fn first_from(&self, from: i64, is: impl Fn(&Line) -> bool) -> Option<&Line> {
        self.lines.iter().find(|l| l.time_ns >= from && is(l))
    }

    fn addr_change<'a>(
        &'a self,
        from: i64,
        node: &'a str,
        address: &'a str,
        state: &'a str,
    ) -> Option<&'a Line> {
        self.first_from(from, |l| {
            l.kind == "kernel_addr_change"
                && l.node.as_deref() == Some(node)
                && l.address.as_deref() == Some(address)
                && l.state.as_deref() == Some(state)
        })
    }

    /// The node's primary per its last `kernel_status` sample at or before
    /// `at` (samples are written only when something changed).
    fn primary_at(&self, node: &str, at: i64) -> Option<&str> {
        self.lines
            .iter()
            .take_while(|l| l.time_ns <= at)
            .filter(|l| l.kind == "kernel_status" && l.node.as_deref() == Some(node))
            .last()
            .and_then(|l| l.primary.as_deref())
    }
}

/// An action line of the log, described for the reasons.
fn describe(log: &Log, l: &Line) -> String {
    let target = l
        .address
        .as_deref()
        .or(l.interface.as_deref())
        .map_or(String::new(), |t| format!(" {t}"));
    format!(
        "{}{target} at {}",
        action_name(&l.kind),
        log.relative(l.time_ns)
    )
}

/// What an action must change in a kernel, and where.
enum Effect<'a> {
    /// The peer (CN) kernel added the address (ADD-IP).
    PeerAdded(&'a str),
    /// The peer removed it (DELETE-IP).
    PeerRemoved(&'a str),
    /// The peer made it its primary (SET-PRIMARY).
    PeerPrimary(&'a str),
    /// The MN made the CN's address its own primary.
    OwnPrimary(&'a str),
}

/// Checks one effect; `Err` is the reason it is missing.
fn check_effect(log: &Log, at: i64, effect: &Effect<'_>) -> Result<(), String> {
    let deadline = at + EFFECT_WINDOW_NS;
    let in_window = |l: Option<&Line>| l.is_some_and(|l| l.time_ns <= deadline);
    let late = |l: Option<&Line>| match l {
        Some(l) => format!(" (it came at {})", log.relative(l.time_ns)),
        None => String::new(),
    };
    match effect {
        Effect::PeerAdded(a) => {
            let note = log.addr_change(at, "cn", a, "added");
            // The CN's 10 ms samples list each peer address the first time
            // they see it.
            let listed = log
                .lines
                .iter()
                .find(|l| {
                    l.kind == "kernel_paddr"
                        && l.node.as_deref() == Some("cn")
                        && l.address.as_deref() == Some(a)
                })
                .filter(|l| l.time_ns >= at);
            if in_window(note) || in_window(listed) {
                Ok(())
            } else {
                Err(format!(
                    "no SCTP_ADDR_ADDED at the cn within {WINDOW_TEXT}{}",
                    late(note)
                ))
            }
        }
        Effect::PeerRemoved(a) => {
            // Samples cannot show the address gone (they log changes of the
            // addresses there), so the notification is the evidence.
            let note = log.addr_change(at, "cn", a, "removed");
            if in_window(note) {
                Ok(())
            } else {
                Err(format!(
                    "no SCTP_ADDR_REMOVED at the cn within {WINDOW_TEXT}{}",
                    late(note)
                ))
            }
        }
        Effect::PeerPrimary(a) | Effect::OwnPrimary(a) => {
            let (node, what) = match effect {
                Effect::PeerPrimary(_) => ("cn", "the cn"),
                _ => ("mn", "the mn"),
            };
            let note = log.addr_change(at, node, a, "made_primary");
            let sampled = log.primary_at(node, at) == Some(a)
                || log
                    .first_from(at, |l| {
                        l.kind == "kernel_status"
                            && l.node.as_deref() == Some(node)
                            && l.primary.as_deref() == Some(a)
                    })
                    .is_some_and(|l| l.time_ns <= deadline);
            if in_window(note) || sampled {
                Ok(())
            } else {
                let stayed = log
                    .primary_at(node, deadline)
                    .map_or(String::new(), |p| format!(", its primary stayed {p}"));
                Err(format!(
                    "no SCTP_ADDR_MADE_PRIM at {what} within {WINDOW_TEXT}{stayed}{}",
                    late(note)
                ))
            }
        }
    }
}

/// Checks the actions of `events` (the text of events.jsonl) against
/// `script` (None: every action the log shows, as none can be missed).
pub fn check(events: &str, script: Option<&Script>) -> Result<Verdict, CheckError> {
    let log = Log::new(parse_lines(events)?);
    let auto_asconf = script.is_some_and(|s| s.auto_asconf);
    let mut invalid = Vec::new();
    let mut unchecked = Vec::new();

    // Each scripted action is matched to the first unused logged action of
    // the same kind and target, in order; one with no line never ran.
    let logged: Vec<(usize, &Line)> = log.actions().collect();
    let mut used = vec![false; logged.len()];
    let mut to_check: Vec<&Line> = Vec::new();
    match script {
        Some(script) => {
            for a in &script.actions {
                let kind = logged_kind(&a.action);
                let found = logged.iter().enumerate().position(|(j, (_, l))| {
                    !used[j]
                        && l.kind == kind
                        && (a.target.is_none()
                            || a.target.as_deref() == l.address.as_deref()
                            || a.target.as_deref() == l.interface.as_deref())
                });
                match found {
                    Some(j) => {
                        used[j] = true;
                        to_check.push(logged[j].1);
                    }
                    None => invalid.push(format!(
                        "{}{} due at +{:.2} s: not run (no line in events.jsonl)",
                        a.action,
                        a.target
                            .as_deref()
                            .map_or(String::new(), |t| format!(" {t}")),
                        a.at_ms as f64 / 1000.0
                    )),
                }
            }
        }
        None => to_check.extend(logged.iter().map(|(_, l)| *l)),
    }
    to_check.sort_by_key(|l| l.time_ns);

    for l in to_check {
        let what = describe(&log, l);
        if l.ok == Some(false) {
            invalid.push(format!(
                "{what}: the call failed: {}",
                l.error.as_deref().unwrap_or("no error given")
            ));
            continue;
        }
        let address = l.address.as_deref();
        let mut effects = Vec::new();
        match (l.kind.as_str(), address) {
            ("bindx_add", Some(a)) => effects.push(Effect::PeerAdded(a)),
            ("bindx_remove", Some(a)) => effects.push(Effect::PeerRemoved(a)),
            ("set_peer_primary", Some(a)) => effects.push(Effect::PeerPrimary(a)),
            ("set_primary", Some(a)) => effects.push(Effect::OwnPrimary(a)),
            ("add_address", Some(a)) => {
                // The driver logs `addr_up` once the address can be bound
                // (after DAD); without it the address never became usable.
                let up = log.first_from(l.time_ns, |m| {
                    m.kind == "addr_up" && m.address.as_deref() == Some(a)
                });
                if up.is_none() {
                    invalid.push(format!(
                        "{what}: the address never became usable (no addr_up)"
                    ));
                    continue;
                }
                if auto_asconf {
                    effects.push(Effect::PeerAdded(a));
                }
            }
            ("addr_down", Some(a)) if auto_asconf => effects.push(Effect::PeerRemoved(a)),
            // link_down / link_up / path_cut / path_restore and addresses
            // without auto-ASCONF: one rtnetlink request each, applied by the
            // kernel before it acknowledges it, so `ok: true` is the effect.
            // The path state changes that may follow are the outcome the
            // run measures, not the action: koh-kim-1's link goes down after
            // its address left the association, and no path changes.
            _ => {}
        }
        for e in effects {
            if !log.kernel_view {
                unchecked.push(format!(
                    "{what}: cannot be checked: no kernel view in events.jsonl \
                     (written before the harness logged it)"
                ));
                continue;
            }
            if let Err(reason) = check_effect(&log, l.time_ns, &e) {
                invalid.push(format!("{what}: {reason}"));
            }
        }
    }
    Ok(if !invalid.is_empty() {
        Verdict::Invalid(invalid)
    } else if !unchecked.is_empty() {
        Verdict::Unchecked(unchecked)
    } else {
        Verdict::Valid
    })
}

fn read(path: &Path) -> Result<String, CheckError> {
    std::fs::read_to_string(path).map_err(|source| CheckError::Read {
        path: path.to_owned(),
        source,
    })
}

/// Checks a run directory: its events.jsonl against its scenario.toml
/// (when there is none, against the actions the log shows).
pub fn check_run_dir(dir: &Path) -> Result<Verdict, CheckError> {
    let events = read(&dir.join("events.jsonl"))?;
    let scenario_path = dir.join("scenario.toml");
    let script = if scenario_path.is_file() {
        let text = read(&scenario_path)?;
        Some(
            Script::from_toml(&text).map_err(|message| CheckError::Scenario {
                path: scenario_path,
                message,
            })?,
        )
    } else {
        None
    };
    check(&events, script.as_ref())
}

/// The run directories at or below `dir` (those holding an events.jsonl),
/// sorted; a run directory's own subdirectories are not searched.
pub fn find_runs(dir: &Path) -> Result<Vec<PathBuf>, CheckError> {
    let mut out = Vec::new();
    walk_runs(dir, &mut out)?;
    Ok(out)
}

fn walk_runs(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), CheckError> {
    if dir.join("events.jsonl").is_file() {
        out.push(dir.to_owned());
        return Ok(());
    }
    let entries = std::fs::read_dir(dir).map_err(|source| CheckError::Read {
        path: dir.to_owned(),
        source,
    })?;
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        // Hidden folders (the harness's .harness-tmp) hold no runs.
        .filter(|p| {
            p.is_dir()
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    dirs.sort();
    for d in dirs {
        walk_runs(&d, out)?;
    }
    Ok(())
}

/// The verdict meta.json records, or, for a run whose meta.json predates
/// the check (no `valid`), the check made now.
pub fn run_verdict(dir: &Path) -> Result<Verdict, CheckError> {
    let meta_path = dir.join("meta.json");
    if meta_path.is_file() {
        let text = read(&meta_path)?;
        let meta = Meta::parse(&text).map_err(|e| CheckError::Meta {
            path: meta_path,
            message: e.to_string(),
        })?;
        if let Some(v) = Verdict::from_meta(&meta) {
            return Ok(v);
        }
    }
    check_run_dir(dir)
}

#[cfg(test)]
mod tests;
