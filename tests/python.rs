//! The Python bindings and the engines (python/, docs/scale-out.md):
//! python/tests/test_python.py and test_clusters.py run with the
//! interpreter of the project's .venv, which `make python` fills and `make
//! test` brings up to date (`scripts/python.sh`) before the tests run.

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
    unittest_of("test_python", class);
}

/// One test class of a module of python/tests, from the repository root.
fn unittest_of(module: &str, class: &str) {
    // The class's temporary files, those of the processes it kills too
    // (their cleanup never runs), go with this directory; not Ray's, whose
    // socket paths (at most 107 bytes) are made under TMPDIR.
    let tmp = common::tempdir(&format!("python-{class}"));
    let mut command = Command::new(venv_python());
    if class != "Ray" {
        command.env("TMPDIR", &*tmp);
    }
    let out = command
        .args(["-m", "unittest", "-v", &format!("{module}.{class}")])
        .env("PYTHONPATH", common::repo_root().join("python/tests"))
        .env("SCTPHO_BIN", env!("CARGO_BIN_EXE_sctp-handover"))
        .current_dir(common::repo_root())
        .output()
        .expect("the .venv interpreter runs");
    let log = String::from_utf8_lossy(&out.stderr);
    println!("{log}");
    assert!(out.status.success(), "{module}.{class} failed:\n{log}");
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

/// A Ray head and a Ray worker node (`ray start`, separate processes on
/// 127.0.0.1) run `cluster --engine ray --address` into the dataset of
/// `analyze --out`, tasks on both nodes.
#[test]
fn ray_multi_process_cluster() {
    unittest_of("test_clusters", "Ray");
}

/// A `dask scheduler` and `dask worker` processes over TCP on 127.0.0.1:
/// the dataset of `analyze --out`; a run killed with its workers while
/// batches run resumes per input; bad inputs in a batch are their rows.
#[test]
fn dask_multi_process_cluster() {
    unittest_of("test_clusters", "Dask");
}

/// A Spark standalone master and worker (pyspark's `spark-class`, JDK 17)
/// on 127.0.0.1: `cluster --engine spark --address spark://…` writes the
/// dataset of `analyze --out`.
#[test]
fn spark_standalone_cluster() {
    unittest_of("test_clusters", "Spark");
}

/// How a run is cut into batch tasks (`--batch-files`, `--batch-bytes`),
/// and a failing input in a batch is its row while the others go on.
#[test]
fn cluster_batches() {
    unittest_of("test_clusters", "Batches");
}

/// An archive in a local S3 server (moto on 127.0.0.1, started by the
/// test) analysed by the package and by `--engine dask` into a dataset in
/// the same server: the tables of `analyze --out` on a local copy; a
/// missing bucket, an unreachable endpoint and bad credentials are errors
/// naming the URL; the extension reads a capture from a Python stream;
/// the command line's error for a URL points to the package.
#[test]
fn s3_storage() {
    unittest_of("test_storage", "Stream");
    unittest_of("test_storage", "S3");
    unittest_of("test_storage", "S3Credentials");
}
