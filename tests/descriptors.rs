//! One source of meaning: every output lists the latency components, the
//! switch classes and the other named values the analyzer's descriptors
//! define (`sctp_handover::handover::COMPONENTS`, each output enum's
//! `NAMES`), and no other. Adding a component to the descriptors shows it
//! in the `handovers` table, the report, the summary and `watch`; an output
//! that kept a list of its own fails here.
//!
//! On the sample captures: bokor-failover has failovers (the failover
//! components), bokor-return a return with its link availability
//! recognition, koh-kim-1 planned handovers with ASCONF timings.

#[path = "../analyzer/tests/common/mod.rs"]
mod common;

use sctp_handover::analysis::Accounting;
use sctp_handover::capture::CaptureFormat;
use sctp_handover::events::AsconfOutcome;
use sctp_handover::events::AssociationEndReason;
use sctp_handover::handover::{
    CapturePoint, ComponentDescriptor, ComponentGroup, Handover, SwitchClass, WindowEnd, COMPONENTS,
};
use sctp_handover::settings::Settings;
use sctp_handover::track::path::PathStatus;
use sctp_handover_tables::schema;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

const SCENARIOS: [&str; 3] = ["bokor-failover", "bokor-return", "koh-kim-1"];

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sctp-handover"))
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("sctp-handover runs");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

fn captures() -> Vec<PathBuf> {
    SCENARIOS
        .iter()
        .flat_map(|s| ["mn", "cn"].map(|side| common::sample(s, side)))
        .collect()
}

fn tempdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sctpho-descriptors-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// The backquoted names in a column's documentation (`` `planned`, … ``).
fn quoted(doc: &str) -> Vec<&str> {
    doc.split('`').skip(1).step_by(2).collect()
}

fn column_doc(columns: &[schema::Col], name: &str) -> &'static str {
    columns
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no column {name}"))
        .doc
}

/// The handovers of a capture analysed as `analyze` does for a harness
/// run (its events.jsonl, its side as the capture point).
fn handovers_of(capture: &Path) -> Vec<Handover> {
    let side = capture
        .file_stem()
        .and_then(|s| s.to_str())
        .and_then(CapturePoint::of_harness_capture)
        .expect("a harness capture");
    let settings = Settings {
        events: Some(capture.with_file_name("events.jsonl")),
        capture_point: side,
        ..Settings::default()
    };
    let options = settings.options().expect("settings");
    sctp_handover::analysis::analyze_file(capture, &options)
        .expect("analysable")
        .handovers
}

fn at<'v>(v: &'v Value, path: &str) -> &'v Value {
    path.split('.').fold(v, |v, field| &v[field])
}

#[test]
fn the_tables_list_the_descriptors_components_classes_and_names() {
    let columns = schema::handover_columns();
    let fixed = schema::HANDOVERS_FIXED.len();
    let per_component: Vec<String> = COMPONENTS
        .iter()
        .flat_map(|c| {
            ["_ms", "_from_frame", "_to_frame", "_missing"].map(|s| format!("{}{s}", c.name))
        })
        .collect();
    let drops = schema::HANDOVERS_CAPTURE_DROPS.len();
    let listed: Vec<&str> = columns[fixed..columns.len() - drops]
        .iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(listed, per_component);
    let last: Vec<&str> = columns[columns.len() - drops..]
        .iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(last, ["capture_drops_overlap", "capture_drops"]);
    // No fixed column is a component under another name.
    for f in schema::HANDOVERS_FIXED {
        assert!(
            !f.name.ends_with("_from_frame") && !f.name.ends_with("_missing"),
            "{} looks like a component's column",
            f.name
        );
    }
    let handovers = schema::HANDOVERS_FIXED;
    assert_eq!(quoted(column_doc(handovers, "class")), SwitchClass::NAMES);
    assert_eq!(
        quoted(column_doc(handovers, "capture_point")),
        CapturePoint::NAMES
    );
    assert_eq!(
        quoted(column_doc(schema::FILES.columns, "capture_point")),
        CapturePoint::NAMES
    );
    assert_eq!(
        quoted(column_doc(handovers, "window_end_reason")),
        WindowEnd::NAMES
    );
    assert_eq!(
        quoted(column_doc(schema::ASCONF.columns, "outcome")),
        AsconfOutcome::NAMES
    );
    assert_eq!(
        quoted(column_doc(schema::FILES.columns, "format")),
        CaptureFormat::NAMES
    );
    let frames: Vec<&str> = schema::FILES
        .columns
        .iter()
        .filter_map(|c| c.name.strip_prefix("frames_"))
        .collect();
    let categories: Vec<&str> = Accounting::default()
        .categories()
        .iter()
        .map(|(n, _)| *n)
        .collect();
    assert_eq!(frames, categories);
}

/// Each component is where its descriptor says: the accessor's component
/// is the one at `json_path` in the JSON record, and the table's four
/// columns of `name` hold that component (a swap of two fields, all
/// milliseconds, would pass every count but not this).
#[test]
fn each_component_is_in_the_json_and_the_tables_where_its_descriptor_says() {
    let dir = tempdir("tables");
    let mut cmd = bin();
    cmd.args(["analyze", "-q", "--table-format", "jsonl", "--out"])
        .arg(&dir)
        .args(captures());
    run(&mut cmd);
    let rows = read_jsonl_table(&dir, "handovers");
    let mut present: BTreeSet<&str> = BTreeSet::new();
    let mut compared = 0;
    for capture in captures() {
        let source = capture
            .strip_prefix(common::repo_root())
            .unwrap_or(&capture);
        let handovers = handovers_of(&capture);
        assert!(!handovers.is_empty(), "{}: no handover", capture.display());
        for h in &handovers {
            let json = serde_json::to_value(h).expect("serialisable");
            let row = rows
                .iter()
                .find(|r| {
                    Path::new(r["source"].as_str().unwrap_or_default()).ends_with(source)
                        && r["association"] == h.association
                        && r["switch_frame"] == h.switch_frame
                })
                .unwrap_or_else(|| {
                    panic!("{}: no row for frame {}", source.display(), h.switch_frame)
                });
            assert_eq!(row["class"], h.class.as_str());
            assert_eq!(json["class"], h.class.as_str());
            for d in COMPONENTS {
                let cell = |suffix: &str| &row[format!("{}{suffix}", d.name).as_str()];
                match (d.get)(h) {
                    Some(c) => {
                        present.insert(d.group.as_str());
                        assert_eq!(
                            at(&json, d.json_path),
                            &serde_json::to_value(c).expect("serialisable"),
                            "{}",
                            d.name
                        );
                        assert_eq!(cell("_ms").as_f64(), c.ms, "{}", d.name);
                        assert_eq!(
                            cell("_from_frame").as_u64(),
                            c.from.and_then(|p| p.frame),
                            "{}",
                            d.name
                        );
                        assert_eq!(
                            cell("_to_frame").as_u64(),
                            c.to.and_then(|p| p.frame),
                            "{}",
                            d.name
                        );
                        assert_eq!(cell("_missing").as_str(), c.missing.as_deref());
                        compared += 1;
                    }
                    None => {
                        assert_eq!(at(&json, d.json_path), &Value::Null, "{}", d.name);
                        assert_eq!(cell("_ms"), &Value::Null, "{}", d.name);
                    }
                }
            }
        }
    }
    assert_eq!(
        present,
        ComponentGroup::NAMES.iter().copied().collect(),
        "the captures cover every group"
    );
    assert!(compared > 50, "{compared} components compared");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `analyze --out` and `watch --out` write each table with the schema's
/// columns, in its order, and no other: a watch that added a column of its
/// own (as its drop marks once were) would give a dataset two schemas for
/// one table. CSV, whose header lists every column even when null.
#[test]
fn analyze_and_watch_write_the_schemas_columns_and_no_other() {
    let capture = common::sample("bokor-failover", "mn");
    let analyzed = tempdir("schema-analyze");
    run(bin()
        .args(["analyze", "-q", "--table-format", "csv", "--out"])
        .arg(&analyzed)
        .arg(&capture));
    let watched = tempdir("schema-watch");
    run(bin()
        .args([
            "watch",
            "-q",
            "--idle-exit",
            "0.3",
            "--table-format",
            "csv",
            "--out",
        ])
        .arg(&watched)
        .arg("--follow")
        .arg(&capture));
    for (dataset, command) in [(&analyzed, "analyze"), (&watched, "watch")] {
        for table in schema::all() {
            let header = csv_header(dataset, table.name);
            let expected: Vec<&str> = schema::PROVENANCE
                .iter()
                .chain(table.columns)
                .map(|c| c.name)
                .collect();
            assert_eq!(header, expected, "{command}: {}", table.name);
        }
    }
    // Not captured live: no drop log, the drop marks are null.
    let rows = std::fs::read_to_string(csv_part(&watched, "handovers")).expect("part");
    let rows: Vec<&str> = rows.lines().skip(1).collect();
    assert_eq!(rows.len(), handovers_of(&capture).len());
    for row in rows {
        assert!(row.ends_with(",,"), "{row}");
    }
    let _ = std::fs::remove_dir_all(&analyzed);
    let _ = std::fs::remove_dir_all(&watched);
}

/// The one CSV part of a table (one input).
fn csv_part(dataset: &Path, table: &str) -> PathBuf {
    let parts: Vec<PathBuf> = std::fs::read_dir(dataset.join(table))
        .expect("table directory")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        .collect();
    assert_eq!(parts.len(), 1, "{}: {parts:?}", table);
    parts[0].clone()
}

fn csv_header(dataset: &Path, table: &str) -> Vec<String> {
    let text = std::fs::read_to_string(csv_part(dataset, table)).expect("part");
    let header = text.lines().next().expect("a header");
    // No column name holds a comma or a quote.
    header.split(',').map(str::to_string).collect()
}

fn read_jsonl_table(dataset: &Path, table: &str) -> Vec<Value> {
    let mut rows = Vec::new();
    let dir = dataset.join(table);
    for entry in std::fs::read_dir(&dir).expect("table directory") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "jsonl") {
            let text = std::fs::read_to_string(&path).expect("part");
            rows.extend(
                text.lines()
                    .map(|l| serde_json::from_str::<Value>(l).expect("JSON row")),
            );
        }
    }
    rows
}

/// The summary's handover table: its component headings are the
/// descriptors' (`summary_heading`), in their order, and its classes are
/// `SwitchClass`'s names.
#[test]
fn the_summary_lists_the_descriptors_components() {
    let headings: Vec<&str> = COMPONENTS
        .iter()
        .filter_map(|c| c.summary_heading)
        .collect();
    assert!(!headings.is_empty());
    for capture in captures() {
        let text = run(bin().args(["analyze", "-q"]).arg(&capture));
        let mut lines = text
            .lines()
            .skip_while(|l| !l.starts_with("handovers (ms;"));
        lines.next().expect("a handover table");
        let header: Vec<&str> = lines
            .next()
            .expect("its header")
            .split_whitespace()
            .collect();
        // assoc dir paths class frame, the components, rtx lost window end.
        assert_eq!(header[..5], ["assoc", "dir", "paths", "class", "frame"]);
        assert_eq!(
            header[5..header.len() - 4],
            headings[..],
            "{}",
            capture.display()
        );
        assert_eq!(header[header.len() - 4..], ["rtx", "lost", "window", "end"]);
        let mut rows = 0;
        for row in lines.take_while(|l| !l.is_empty()) {
            let cells: Vec<&str> = row.split_whitespace().collect();
            assert!(SwitchClass::NAMES.contains(&cells[3]), "{row}");
            rows += 1;
        }
        assert!(rows > 0, "{}", capture.display());
    }
}

/// `watch`'s line for a handover: the components of the descriptors marked
/// for it (a failover's only for a failover), by their labels, in order.
#[test]
fn watch_lists_the_descriptors_components() {
    let mut seen_failover = false;
    for capture in captures() {
        let text = run(bin()
            .args(["watch", "-q", "--idle-exit", "0.3", "--follow"])
            .arg(&capture));
        let handovers = handovers_of(&capture);
        let lines: Vec<&str> = text.lines().filter(|l| l.contains(" SWITCH ")).collect();
        assert_eq!(
            lines.len(),
            handovers.len(),
            "{}\n{text}",
            capture.display()
        );
        for (line, h) in lines.iter().zip(&handovers) {
            let class = format!("[{}]: ", h.class.as_str());
            let (_, components) = line
                .split_once(&class)
                .unwrap_or_else(|| panic!("{line}: no {class}"));
            let labels: Vec<&str> = components
                .split(", ")
                .map(|c| {
                    // "<label> 12.345 ms", or "<label> –" when not computable.
                    let c = c.strip_suffix(" ms").unwrap_or(c);
                    c.rfind(' ').map_or(c, |i| &c[..i])
                })
                .collect();
            let expected: Vec<&str> = COMPONENTS
                .iter()
                .filter(|c| c.in_watch_line && (c.get)(h).is_some())
                .map(|c| c.label)
                .collect();
            assert_eq!(labels, expected, "{line}");
            seen_failover |= h.failover.is_some();
        }
    }
    assert!(seen_failover, "a failover's line was checked");
}

/// The report: the component table beneath each handover's time line and
/// the comparisons name the descriptors' components (in time line order)
/// and no others.
#[test]
fn the_report_lists_the_descriptors_components() {
    let dir = tempdir("report");
    let html = dir.join("r.html");
    let assets = dir.join("assets");
    let mut cmd = bin();
    cmd.args(["report", "-q", "--by", "scenario", "-o"])
        .arg(&html)
        .arg("--assets")
        .arg(&assets)
        .args(SCENARIOS.map(|s| common::repo_root().join("sample-captures").join(s)));
    run(&mut cmd);
    let by_column: BTreeMap<String, &ComponentDescriptor> = COMPONENTS
        .iter()
        .map(|c| (format!("{}_ms", c.name), c))
        .collect();
    let mut shown: BTreeSet<&str> = BTreeSet::new();
    let mut tables = 0;
    let mut compared: BTreeSet<String> = BTreeSet::new();
    for entry in std::fs::read_dir(&assets).expect("assets") {
        let name = entry
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        if name.ends_with("-components.csv") {
            tables += 1;
            let text = std::fs::read_to_string(assets.join(&name)).expect("csv");
            let mut timeline = Vec::new();
            for line in text.lines().skip(1) {
                let fields: Vec<&str> = line.split(',').collect();
                let d = by_column
                    .get(fields[1])
                    .unwrap_or_else(|| panic!("{name}: {} is no descriptor's", fields[1]));
                assert_eq!(fields[0], d.label, "{name}");
                shown.insert(d.name);
                timeline.push(d.timeline);
            }
            assert!(
                timeline.windows(2).all(|w| w[0] < w[1]),
                "{name}: time line order"
            );
        } else if let Some(stem) = name
            .strip_prefix("comparison-")
            .and_then(|n| n.strip_suffix("-bars.csv"))
        {
            compared.insert(stem.to_string());
        }
    }
    assert!(tables > 0, "no component tables in {}", assets.display());
    let all: BTreeSet<&str> = COMPONENTS.iter().map(|c| c.name).collect();
    assert_eq!(shown, all, "every component shown beneath some time line");
    let counts: BTreeSet<String> = sctp_handover_report::components::COUNTS
        .iter()
        .map(|(c, _, _)| c.to_string())
        .collect();
    for c in &counts {
        assert!(
            schema::HANDOVERS_FIXED.iter().any(|f| f.name == c),
            "{c}: not a handovers column"
        );
    }
    let expected: BTreeSet<String> = all.iter().map(|c| c.to_string()).chain(counts).collect();
    assert_eq!(compared, expected);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Both Wireshark plugin tiers register the fields of
/// dissector/sctpho_fields.lua (the Lua tier reads it; it is generated
/// from the FFI's list the C tier registers at run time, held to that list
/// by `cargo test -p sctpho-ffi --test lua_fields`, and to what tshark
/// shows for both tiers by its `c_plugin` test): one double field
/// `sctpho.component.<name>` per component, named by its label and unit,
/// in the descriptors' order, and no other component field.
#[test]
fn the_wireshark_plugins_have_a_field_per_component() {
    let table = std::fs::read_to_string(common::repo_root().join("dissector/sctpho_fields.lua"))
        .expect("dissector/sctpho_fields.lua");
    let fields: Vec<(&str, &str, &str)> = table
        .lines()
        .filter_map(|l| {
            let value = |key: &str| {
                let at = l.find(&format!("{key} = \""))? + key.len() + 4;
                l[at..].split('"').next()
            };
            let abbrev = value("abbrev")?.strip_prefix("sctpho.component.")?;
            Some((abbrev, value("name")?, value("type")?))
        })
        .collect();
    let want: Vec<(String, String, &str)> = COMPONENTS
        .iter()
        .map(|c| {
            let name = format!("Latency component: {} ({})", c.label, c.unit);
            (c.name.to_string(), name, "double")
        })
        .collect();
    let have: Vec<(String, String, &str)> = fields
        .iter()
        .map(|(a, n, t)| (a.to_string(), n.to_string(), *t))
        .collect();
    assert_eq!(
        have, want,
        "dissector/sctpho_fields.lua: regenerate it with SCTPHO_WRITE_FIELDS=1 cargo test -p sctpho-ffi --test lua_fields"
    );
    // (Checked by hand: the table's data interrupt line.)
    assert!(table.contains(
        "{ key = \"component_data_interrupt\", abbrev = \"sctpho.component.data_interrupt\", name = \"Latency component: data interrupt (ms)\", type = \"double\","
    ));
}

/// The tables' named columns hold only their enum's names, the names the
/// schema documents: on every sample capture, the handovers'
/// `failover_old_path_state` and the paths' `state` only `PathStatus`'s,
/// the associations' `end` only `AssociationEndReason`'s, and the events'
/// `event` only the kinds its column lists.
#[test]
fn the_tables_named_columns_hold_only_their_enums_names() {
    let dir = tempdir("names");
    let mut cmd = bin();
    cmd.args(["analyze", "-q", "--table-format", "jsonl", "--out"])
        .arg(&dir)
        .arg(common::repo_root().join("sample-captures"));
    run(&mut cmd);
    let held = |table: &str, column: &str| -> BTreeSet<String> {
        read_jsonl_table(&dir, table)
            .iter()
            .filter_map(|r| r[column].as_str().map(str::to_string))
            .collect()
    };
    let set =
        |names: &[&str]| -> BTreeSet<String> { names.iter().map(|n| n.to_string()).collect() };
    let documented = |columns: &[schema::Col], name: &str| set(&quoted(column_doc(columns, name)));

    let states = set(PathStatus::NAMES);
    assert_eq!(
        documented(schema::HANDOVERS_FIXED, "failover_old_path_state"),
        states
    );
    assert_eq!(documented(schema::PATHS.columns, "state"), states);
    let old_states = held("handovers", "failover_old_path_state");
    assert!(old_states.is_subset(&states), "{old_states:?}");
    // bokor-failover-pf fails over at the potentially-failed state.
    assert!(old_states.contains("potentially_failed"), "{old_states:?}");
    let path_states = held("paths", "state");
    assert_eq!(path_states, states, "the samples end in every state");

    let ends = set(AssociationEndReason::NAMES);
    assert_eq!(documented(schema::ASSOCIATIONS.columns, "end"), ends);
    let held_ends = held("associations", "end");
    assert!(held_ends.is_subset(&ends), "{held_ends:?}");
    assert!(held_ends.contains("shutdown_complete"), "{held_ends:?}");

    let kinds = documented(schema::EVENTS.columns, "event");
    let held_kinds = held("events", "event");
    assert!(
        held_kinds.is_subset(&kinds),
        "{:?}",
        held_kinds.difference(&kinds)
    );
    assert!(held_kinds.len() >= 16, "{held_kinds:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// docs/json-schema.md lists the components of a handover's JSON record:
/// the top-level ones in the row whose meaning is "COMPONENTs", the nested
/// ones in their object's row (`failover`, `recognition`). Those names are
/// the descriptors' `json_path`s, and no other.
#[test]
fn the_json_schema_lists_the_descriptors_components() {
    let doc = std::fs::read_to_string(common::repo_root().join("docs/json-schema.md"))
        .expect("docs/json-schema.md");
    let row = |first: &str| -> &str {
        doc.lines()
            .find(|l| l.starts_with(&format!("| `{first}`")))
            .unwrap_or_else(|| panic!("no row for `{first}` in docs/json-schema.md"))
    };
    let top_row = doc
        .lines()
        .find(|l| l.starts_with("| `") && l.trim_end().ends_with("| COMPONENTs |"))
        .expect("a row of top-level COMPONENTs");
    let top: BTreeSet<&str> = quoted(top_row).into_iter().collect();
    let want_top: BTreeSet<&str> = COMPONENTS
        .iter()
        .map(|c| c.json_path)
        .filter(|p| !p.contains('.'))
        .collect();
    assert_eq!(top, want_top);
    for c in COMPONENTS.iter().filter(|c| c.json_path.contains('.')) {
        let (object, field) = c.json_path.split_once('.').expect("a dot");
        let meaning = row(object).split('|').nth(2).expect("a meaning cell");
        assert!(
            meaning.contains("(COMPONENTs)") && quoted(meaning).contains(&field),
            "{}: not listed in the `{object}` row",
            c.json_path
        );
    }
    // The recognition row holds components only.
    let recognition: BTreeSet<&str> = quoted(row("recognition").split('|').nth(2).unwrap_or(""))
        .into_iter()
        .collect();
    let want_recognition: BTreeSet<&str> = COMPONENTS
        .iter()
        .filter_map(|c| c.json_path.strip_prefix("recognition."))
        .collect();
    assert_eq!(recognition, want_recognition);
}
