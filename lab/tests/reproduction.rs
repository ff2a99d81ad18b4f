//! The committed reproduction report (reports/reproduction/, written by
//! `make reproduce`) is what its committed copy of tables and ground truth
//! gives: `sctp-handover-lab reproduction` redraws it from that copy and every
//! file must come out byte for byte the same; then
//! lab/tests/check_reproduction.py recomputes numbers of every section from
//! the committed CSV tables and events.jsonl on its own. No harness run.

#[path = "../../analyzer/tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn files(dir: &Path, base: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("readable").flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, base, out);
        } else {
            out.push(p.strip_prefix(base).expect("below base").to_path_buf());
        }
    }
}

fn copy_tree(from: &Path, to: &Path) {
    let mut all = Vec::new();
    files(from, from, &mut all);
    for rel in all {
        let dest = to.join(&rel);
        std::fs::create_dir_all(dest.parent().expect("parent")).expect("mkdir");
        std::fs::copy(from.join(&rel), dest).expect("copy");
    }
}

#[test]
fn the_committed_reproduction_report_is_what_its_copy_gives() {
    let committed = common::repo_root().join("reports/reproduction");
    assert!(
        committed.join("provenance.txt").is_file(),
        "reports/reproduction/ is committed (make reproduce writes it)"
    );
    let tmp = std::env::temp_dir().join(format!("sctp-repro-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).expect("tmp");
    for d in ["tables", "runs"] {
        copy_tree(&committed.join(d), &tmp.join(d));
    }
    for f in ["sweeps.txt", "provenance.txt"] {
        std::fs::copy(committed.join(f), tmp.join(f)).expect("copy");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_sctp-handover-lab"))
        .arg("reproduction")
        .arg(&tmp)
        .output()
        .expect("binary runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut drawn = vec![PathBuf::from("index.html"), PathBuf::from("README.md")];
    let mut assets = Vec::new();
    files(&tmp.join("assets"), &tmp, &mut assets);
    assert!(assets.len() > 20, "figures and tables written: {assets:?}");
    drawn.extend(assets);
    let mut committed_assets = Vec::new();
    files(&committed.join("assets"), &committed, &mut committed_assets);
    assert_eq!(
        committed_assets.len() + 2,
        drawn.len(),
        "the same assets as committed"
    );
    for rel in &drawn {
        let new = std::fs::read(tmp.join(rel)).expect("drawn");
        let old = std::fs::read(committed.join(rel))
            .unwrap_or_else(|_| panic!("{} is committed", rel.display()));
        assert!(
            new == old,
            "{} differs from the committed file: rerun `sctp-handover-lab \
             reproduction reports/reproduction` (or make reproduce) and commit",
            rel.display()
        );
    }
    let _ = std::fs::remove_dir_all(&tmp);

    let check = common::python()
        .arg(common::repo_root().join("lab/tests/check_reproduction.py"))
        .arg(&committed)
        .output()
        .expect("python3 runs");
    let verdict = String::from_utf8_lossy(&check.stdout);
    assert!(
        check.status.success(),
        "check_reproduction.py: {verdict}{}",
        String::from_utf8_lossy(&check.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(&verdict).expect("JSON verdict");
    assert!(v["checked"].as_u64().unwrap_or(0) >= 40, "{verdict}");
}
