//! The Python bindings and the Dask engine (python/, docs/scale-out.md):
//! python/tests/test_python.py run with the interpreter of the project's
//! .venv, which `make python` fills and `make test` brings up to date
//! (`scripts/python.sh --no-ray`) before the tests run.

#[path = "../analyzer/tests/common/mod.rs"]
mod common;

use std::path::PathBuf;
use std::process::Command;

fn venv_python() -> PathBuf {
    let venv = std::env::var_os("SCTPHO_DOT_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| common::repo_root().join(".venv"));
    let python = venv.join("bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `make python` (make test does it)",
        python.display()
    );
    python
}

/// One test class of test_python.py, from the repository root.
fn unittest(class: &str) {
    let out = Command::new(venv_python())
        .args(["-m", "unittest", "-v", &format!("test_python.{class}")])
        .env("PYTHONPATH", common::repo_root().join("python/tests"))
        .env("SCTPHO_BIN", env!("CARGO_BIN_EXE_sctp-handover"))
        .current_dir(common::repo_root())
        .output()
        .expect("the .venv interpreter runs");
    let log = String::from_utf8_lossy(&out.stderr);
    println!("{log}");
    assert!(out.status.success(), "test_python.{class} failed:\n{log}");
}

/// analyze_capture, write_capture, list_inputs and the options against
/// `analyze --out`.
#[test]
fn python_api() {
    unittest("Api");
}

/// What pip installs: `__version__` (the crate's), py.typed and the
/// extension's stubs (stubtest, mypy --strict), the analysis options' one
/// list against `analyze --help`, the `sctp-handover-cluster` console
/// script's help, and `filter` / `--filter` on a sample capture.
#[test]
fn python_package() {
    unittest("Package");
}

/// `python -m sctp_handover.cluster --engine dask` writes the dataset of
/// `analyze --out`; a failed capture is a row, and a rerun skips.
#[test]
fn dask_cluster() {
    unittest("Dask");
}
