//! An input whose read fails (an I/O error of its file or stream: EIO, a
//! connection reset by an object store) is `failed` with the cause, and
//! its dataset keeps no record of it, so the next run reads it again; a
//! capture that ends inside a record stays `truncated` (tests/batch.rs).

#[path = "../../analyzer/tests/common/mod.rs"]
mod common;

use sctp_handover::analysis::AnalysisOptions;
use sctp_handover_tables::batch::{self, BatchConfig, Outcome};
use sctp_handover_tables::dataset::{self, Dataset, DONE_DIR};
use sctp_handover_tables::inputs::{self, InputKind, InputStream};
use sctp_handover_tables::write::TableFormat;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The file's bytes, failing with EIO once `left` bytes were given.
struct EioAfter {
    file: File,
    left: usize,
}

impl Read for EioAfter {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            return Err(std::io::Error::from_raw_os_error(5));
        }
        let n = buf.len().min(self.left);
        let n = self.file.read(&mut buf[..n])?;
        self.left -= n;
        Ok(n)
    }
}

fn config(out: &Path, force: bool) -> BatchConfig {
    BatchConfig {
        out: out.to_owned(),
        // CSV: the `files` row is read back as text.
        format: TableFormat::Csv,
        jobs: 1,
        force,
        shard: None,
        options: AnalysisOptions::default(),
        harness_files: true,
    }
}

/// One input into `out`: the capture at `path`, read from the file, or
/// through a read that fails with EIO after 100 000 bytes.
fn write(path: &Path, out: &Path, force: bool, failing: bool) -> Outcome {
    let mut input = inputs::input(path, InputKind::Capture);
    if failing {
        let file = File::open(path).expect("open");
        input.stream = Some(InputStream::new(
            path,
            EioAfter {
                file,
                left: 100_000,
            },
        ));
    }
    let config = config(out, force);
    let (planned, params) = batch::plan(vec![input], None);
    let dataset = Dataset::open(out, config.format).expect("dataset");
    batch::run_one(
        &planned[0],
        &params,
        &config,
        &dataset,
        &batch::fingerprint(&config),
    )
}

fn record(out: &Path, path: &Path) -> PathBuf {
    let key = dataset::key(&path.display().to_string());
    out.join(DONE_DIR).join(format!("{key}.json"))
}

/// The lines of the input's part of `table` (CSV: header first).
fn part_lines(out: &Path, path: &Path, table: &str) -> Vec<String> {
    let key = dataset::key(&path.display().to_string());
    let text =
        std::fs::read_to_string(out.join(table).join(format!("part-{key}.csv"))).expect("the part");
    text.lines().map(str::to_owned).collect()
}

#[test]
fn a_failed_read_is_failed_with_its_cause_and_leaves_no_record() {
    let path = common::repo_root().join("sample-captures/koh-kim-2/mn.pcap");
    let out = common::tempdir("read-failure");
    let cause = format!(
        "{}: read error: Input/output error (os error 5) (after record 129 at byte offset 99960)",
        path.display()
    );

    let failed = write(&path, &out, false, true);
    assert_eq!(
        (
            failed.status.as_str(),
            failed.error.as_deref(),
            failed.reused
        ),
        ("failed", Some(cause.as_str()), false)
    );
    assert_eq!((failed.associations, failed.handovers), (0, 0));
    assert!(
        !record(&out, &path).exists(),
        "no record of an unread input"
    );
    // The dataset's `files` row tells it; the other tables hold none of
    // the 129 records read before the failure.
    let files = part_lines(&out, &path, "files");
    assert_eq!(files.len(), 2, "{files:?}");
    assert!(files[1].contains(",failed,"), "{}", files[1]);
    assert!(files[1].contains(&cause), "{}", files[1]);
    assert_eq!(part_lines(&out, &path, "handovers").len(), 1);
    assert_eq!(part_lines(&out, &path, "events").len(), 1);

    // The next run reads it again (not reused), whole this time.
    let ok = write(&path, &out, false, false);
    assert_eq!(
        (
            ok.status.as_str(),
            ok.error,
            ok.reused,
            ok.associations,
            ok.handovers
        ),
        ("ok", None, false, 1, 2)
    );
    assert!(record(&out, &path).exists());
    let again = write(&path, &out, false, false);
    assert!(again.reused, "{again:?}");

    // A --force rerun whose read fails removes the earlier record before
    // its parts replace the earlier ones: the run after it redoes the
    // input rather than take the old record over the new parts.
    let forced = write(&path, &out, true, true);
    assert_eq!(forced.status, "failed");
    assert!(!record(&out, &path).exists());
    let redone = write(&path, &out, false, false);
    assert_eq!((redone.status.as_str(), redone.reused), ("ok", false));
    let _ = std::fs::remove_dir_all(&out);
}
