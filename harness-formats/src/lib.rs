//! The files a replay harness run leaves beside its captures
//! (`OUT/<scenario>/<group>/rNN/`, docs/harness.md), defined once:
//!
//! - `scenario.toml`: the scenario replayed, after `--set` ([`Scenario`]);
//! - `meta.json`: how the run went and whether its script took effect
//!   ([`Meta`]);
//! - `events.jsonl`: the ground truth, one [`Event`] a line, times as
//!   exact epoch nanoseconds ([`parse_epoch`], [`epoch_string`]).
//!
//! The harness writes them; the harness check (`sctp-handover-harness-check`),
//! the tables' provenance columns, the analyzer's `--events` anchors and
//! the lab read them with these types. Pure data: serde only (TOML behind
//! the default `toml` feature, which the analyzer leaves out).

#![warn(missing_docs)]

mod events;
mod meta;
mod scenario;

pub use events::{epoch_string, parse_epoch, parse_log, Event, LineError, Record};
pub use meta::{Meta, TcpdumpDropped};
#[cfg(feature = "toml")]
pub use scenario::ScenarioError;
pub use scenario::{
    Action, ActionKind, Interface, InvalidScenario, Scenario, SctpParams, Topology, Traffic,
};

#[cfg(all(test, feature = "toml"))]
mod committed_runs {
    /// Every shipped scenario loads and follows the rules.
    #[test]
    fn every_shipped_scenario_loads() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../harness/scenarios");
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .expect("listed")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .map(|p| {
                super::Scenario::load(&p)
                    .unwrap_or_else(|e| panic!("{e:#?}"))
                    .name
            })
            .collect();
        names.sort();
        assert!(names.len() >= 10, "{names:?}");
        assert!(names.iter().any(|n| n == "koh-kim-1"), "{names:?}");
    }

    use super::*;
    use std::path::{Path, PathBuf};

    fn run_dirs(dir: &Path, out: &mut Vec<PathBuf>) {
        if dir.join("events.jsonl").is_file() {
            out.push(dir.to_owned());
            return;
        }
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
            .expect("listed")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        for d in dirs {
            run_dirs(&d, out);
        }
    }

    /// Every run committed to the repository (the reproduction's and the
    /// samples' and sample sweeps') reads with these types; the reproduction's meta.json,
    /// written by the current harness, is written back as the harness
    /// wrote it (the samples' predate `valid`, `pf_retrans`, …).
    #[test]
    fn every_committed_run_reads_and_meta_json_writes_back() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut runs = Vec::new();
        run_dirs(&root.join("reports/reproduction/runs"), &mut runs);
        let reproduction = runs.len();
        run_dirs(&root.join("sample-captures"), &mut runs);
        run_dirs(&root.join("sample-sweeps"), &mut runs);
        let (mut metas, mut scenarios, mut events, mut lines) = (0, 0, 0, 0);
        for (i, dir) in runs.iter().enumerate() {
            let text = std::fs::read_to_string(dir.join("events.jsonl")).expect("events");
            events += parse_log(&text)
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .len();
            lines += text.lines().filter(|l| !l.trim().is_empty()).count();
            if let Ok(text) = std::fs::read_to_string(dir.join("scenario.toml")) {
                let s =
                    Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
                s.validate()
                    .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
                scenarios += 1;
            }
            if let Ok(text) = std::fs::read_to_string(dir.join("meta.json")) {
                let meta = Meta::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
                // serde_json reads a float to within one ulp, not always
                // to the f64 written (no `float_roundtrip`): the guest's
                // run time may differ in its last digit.
                let timeless = |t: &str| -> String {
                    t.lines()
                        .filter(|l| !l.trim_start().starts_with("\"guest_seconds\""))
                        .collect()
                };
                if i < reproduction {
                    let written = meta.to_json().expect("JSON");
                    assert_eq!(timeless(&written), timeless(&text), "{}", dir.display());
                }
                metas += 1;
            }
        }
        // Every run has its three files and every line of every log is an
        // event (none skipped); the run counts are those committed (371
        // reproduction runs, 10 samples, 12 sample sweep runs).
        assert_eq!(
            (reproduction, runs.len(), scenarios, metas, events),
            (371, 393, 393, 393, lines)
        );
        assert!(events > 10_000, "{events} events");
    }
}
