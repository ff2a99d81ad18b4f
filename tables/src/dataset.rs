//! The output directory as a dataset: `OUT/<table>/part-<key>.<ext>`, one
//! part per input per table (readers take `OUT/<table>/` as one table),
//! and `OUT/_inputs/<key>.json`, the record that an input is complete.
//! Names starting with `_` or `.` are skipped by DuckDB, polars, pyarrow
//! and Spark, so neither the records nor unfinished parts look like data.

use crate::inputs::Input;
use crate::write::TableFormat;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where the completion records are (`OUT/_inputs/<key>.json`).
pub const DONE_DIR: &str = "_inputs";
/// Part files are `part-<key>.<ext>`.
const PART_PREFIX: &str = "part-";

/// The input key of a part file's path, None when the path is no part
/// (a hidden unfinished part, a stray file).
pub fn part_key(path: &Path) -> Option<&str> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_prefix(PART_PREFIX)?;
    Some(stem.split_once('.').map_or(stem, |(key, _)| key))
}

/// A stable key for an input: the same source path gives the same part
/// names on every run and every machine (so reruns replace, not add).
pub fn key(source: &str) -> String {
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(source.as_bytes()))
}

/// Whether an input belongs to shard `index` of `count` (0-based),
/// decided by its key: deterministic, independent of the other inputs.
pub fn in_shard(source: &str, index: u64, count: u64) -> bool {
    count <= 1 || xxhash_rust::xxh3::xxh3_64(source.as_bytes()) % count == index
}

/// What is recorded once all of an input's parts are in place.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Done {
    /// The input's path as found (the `source` column).
    pub source: String,
    /// Its size in bytes when analysed; None for standard input.
    pub size: Option<u64>,
    /// Its modification time then (epoch ns): with the size, what tells a
    /// rerun that the input changed.
    pub modified_ns: Option<i128>,
    /// Analysis options and table format the parts were written with.
    pub fingerprint: String,
    /// `ok`, `truncated`, `failed` or `skipped`, as the input's `files`
    /// row says.
    pub status: String,
    /// Why it failed, was cut short or skipped; None when `ok`.
    pub error: Option<String>,
    /// Associations found.
    pub associations: u64,
    /// Handovers (data path switches) found.
    pub handovers: u64,
    /// The version of sctp-handover that wrote the parts.
    pub tool_version: String,
}

/// An output directory of tables (`--out`) in one table format.
pub struct Dataset {
    /// The directory (`OUT`).
    pub root: PathBuf,
    /// The format every part is written in.
    pub format: TableFormat,
}

impl Dataset {
    /// The dataset at `root`, created if need be, without the temporaries
    /// of killed runs on this machine.
    pub fn open(root: &Path, format: TableFormat) -> anyhow::Result<Self> {
        let d = Self::attach(root, format)?;
        d.remove_abandoned_temporaries();
        Ok(d)
    }

    /// [`Dataset::open`] without the clean-up, which lists every part: for
    /// one task of a run whose driver opened the dataset (a cluster task
    /// writes one input; listing all parts per task would cost more than
    /// the task).
    pub fn attach(root: &Path, format: TableFormat) -> anyhow::Result<Self> {
        // Not a directory named `s3:` in the current one.
        if crate::inputs::is_url(root) {
            anyhow::bail!(
                "{}: the output dataset is {}",
                root.display(),
                crate::inputs::URL_HINT
            );
        }
        std::fs::create_dir_all(root.join(DONE_DIR)).map_err(|e| {
            anyhow::anyhow!("cannot create the output directory {}: {e}", root.display())
        })?;
        Ok(Dataset {
            root: root.to_owned(),
            format,
        })
    }

    /// The finished name of an input's part of `table`
    /// (`OUT/<table>/part-<key>.<ext>`).
    pub fn part(&self, table: &str, key: &str) -> PathBuf {
        self.root
            .join(table)
            .join(format!("{PART_PREFIX}{key}.{}", self.format.extension()))
    }

    fn done_path(&self, key: &str) -> PathBuf {
        self.root.join(DONE_DIR).join(format!("{key}.json"))
    }

    /// The record of a complete input, if it matches the file as it is now
    /// and the options of this run.
    pub fn completed(&self, input: &Input, fingerprint: &str) -> Option<Done> {
        let text = std::fs::read_to_string(self.done_path(&key(&input.source))).ok()?;
        let done: Done = serde_json::from_str(&text).ok()?;
        (done.source == input.source
            && done.size == input.size
            && done.modified_ns == input.modified_ns
            && done.fingerprint == fingerprint)
            .then_some(done)
    }

    /// Removes the record of input `key`, before its parts are replaced:
    /// a run killed while it replaces them then leaves the input to be
    /// redone, not marked complete over a mix of old and new parts.
    pub fn forget(&self, key: &str) -> std::io::Result<()> {
        match std::fs::remove_file(self.done_path(key)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// Records an input as complete (after all its parts were renamed
    /// into place), itself by write-then-rename.
    pub fn mark_done(&self, done: &Done) -> anyhow::Result<()> {
        let k = key(&done.source);
        let path = self.done_path(&k);
        let temp = self
            .root
            .join(DONE_DIR)
            .join(format!(".{k}.{}.tmp", std::process::id()));
        std::fs::write(&temp, serde_json::to_vec_pretty(done)?)?;
        std::fs::rename(&temp, &path)?;
        Ok(())
    }

    /// Removes the temporaries of runs that were killed on this machine
    /// (their process is gone); another machine's live run is left alone.
    fn remove_abandoned_temporaries(&self) {
        let Ok(dirs) = std::fs::read_dir(&self.root) else {
            return;
        };
        for dir in dirs.filter_map(Result::ok).map(|e| e.path()) {
            let Ok(files) = std::fs::read_dir(&dir) else {
                continue;
            };
            for f in files.filter_map(Result::ok).map(|e| e.path()) {
                if let Some(pid) = temporary_owner(&f) {
                    let alive = Path::new("/proc").join(pid.to_string()).exists();
                    if !alive || pid == std::process::id() {
                        let _ = std::fs::remove_file(&f);
                    }
                }
            }
        }
    }
}

/// `.NAME.PID.tmp` → PID.
fn temporary_owner(path: &Path) -> Option<u32> {
    let name = path.file_name()?.to_str()?;
    let inner = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    inner.rsplit_once('.')?.1.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_shards_are_stable() {
        assert_eq!(key("a/b.pcap"), key("a/b.pcap"));
        assert_ne!(key("a/b.pcap"), key("a/c.pcap"));
        let sources: Vec<String> = (0..100).map(|i| format!("dir/{i}.pcap")).collect();
        for s in &sources {
            let shards: Vec<u64> = (0..3).filter(|&i| in_shard(s, i, 3)).collect();
            assert_eq!(shards.len(), 1, "{s} in exactly one shard");
        }
        let first = sources.iter().filter(|s| in_shard(s, 0, 3)).count();
        assert!((15..=55).contains(&first), "roughly a third: {first}");
    }

    #[test]
    fn temporary_names() {
        assert_eq!(
            temporary_owner(Path::new("x/.part-ab.parquet.123.tmp")),
            Some(123)
        );
        assert_eq!(temporary_owner(Path::new("x/part-ab.parquet")), None);
        assert_eq!(part_key(Path::new("x/part-ab.parquet")), Some("ab"));
        assert_eq!(part_key(Path::new("x/part-ab.1.parquet")), Some("ab"));
        assert_eq!(
            temporary_owner(Path::new("x/.part-ab.1.parquet.123.tmp")),
            Some(123)
        );
        assert_eq!(part_key(Path::new("x/.part-ab.parquet.123.tmp")), None);
        assert_eq!(part_key(Path::new("x/notes.txt")), None);
    }
}
