//! Following a capture that is still being written (`tcpdump -w`), file by
//! file through a rotation directory (`tcpdump -G`/`-C`): a reader that
//! waits for more bytes at the end of the file instead of ending, so a
//! half-written record is waited for, not reported as damage.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the end of a file is looked at again.
const POLL: Duration = Duration::from_millis(50);

/// When following stops.
#[derive(Clone)]
pub struct Stop {
    /// Set by Ctrl-C / SIGTERM.
    pub flag: Arc<AtomicBool>,
    /// No new byte in any file for this long (`--idle-exit`).
    pub idle: Option<Duration>,
}

impl Stop {
    /// Whether to end now, the last new data having come at `last_data`.
    pub fn reached(&self, last_data: Instant) -> bool {
        self.flag.load(Ordering::Relaxed) || self.idle.is_some_and(|d| last_data.elapsed() >= d)
    }
}

/// The files of a rotation directory in the order tcpdump writes them:
/// by modification time, then name (`-C` appends 1, 2, … to the name).
pub fn rotation(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<(std::time::SystemTime, String, PathBuf)> = std::fs::read_dir(dir)
        .map(|r| {
            r.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .filter(|p| {
                    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                    !name.starts_with('.')
                })
                .map(|p| {
                    let m = std::fs::metadata(&p)
                        .and_then(|m| m.modified())
                        .unwrap_or(std::time::UNIX_EPOCH);
                    let name = p.to_string_lossy().into_owned();
                    (m, name, p)
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort_by_key(|f| (f.0, natural(&f.1)));
    files.into_iter().map(|(_, _, p)| p).collect()
}

/// A name with its trailing number split off, so `f9` sorts before `f10`.
fn natural(name: &str) -> (String, u64) {
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (stem, n) = name.split_at(name.len() - digits);
    (stem.to_string(), n.parse().unwrap_or(0))
}

/// Reads a file as it grows. Ends (returns 0) when following stops, or,
/// in a rotation directory, when a later file exists and this one has no
/// more bytes.
pub struct FollowReader {
    file: File,
    path: PathBuf,
    dir: Option<PathBuf>,
    stop: Stop,
    last_data: Instant,
}

impl FollowReader {
    /// Opens `path` to follow; `dir`: the rotation directory it lies in,
    /// whose later file takes over when this one stops growing (None: a
    /// single file). Reading ends when `stop` says so.
    pub fn new(path: &Path, dir: Option<&Path>, stop: Stop) -> std::io::Result<Self> {
        Ok(FollowReader {
            file: File::open(path)?,
            path: path.to_owned(),
            dir: dir.map(Path::to_owned),
            stop,
            last_data: Instant::now(),
        })
    }

    fn rotated(&self) -> bool {
        let Some(dir) = &self.dir else {
            return false;
        };
        let files = rotation(dir);
        files
            .iter()
            .position(|p| p == &self.path)
            .is_some_and(|i| i + 1 < files.len())
    }
}

impl Read for FollowReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let n = self.file.read(buf)?;
            if n > 0 {
                self.last_data = Instant::now();
                return Ok(n);
            }
            if self.stop.reached(self.last_data) {
                return Ok(0);
            }
            if self.rotated() {
                // The writer moved on; read once more in case it wrote
                // its last bytes after our read.
                return self.file.read(buf);
            }
            std::thread::sleep(POLL);
        }
    }
}

/// Waits for a file to appear (a rotation directory's first file, or the
/// file tcpdump has not created yet); None when following stops first.
pub fn wait_for(path: &Path, dir: bool, stop: &Stop) -> Option<PathBuf> {
    let since = Instant::now();
    loop {
        if dir {
            if let Some(first) = rotation(path).into_iter().next() {
                return Some(first);
            }
        } else if path.is_file() {
            return Some(path.to_owned());
        }
        if stop.reached(since) {
            return None;
        }
        std::thread::sleep(POLL);
    }
}

/// The file after `current` in a rotation directory, waiting for it.
pub fn next_after(dir: &Path, current: &Path, stop: &Stop) -> Option<PathBuf> {
    let since = Instant::now();
    loop {
        let files = rotation(dir);
        if let Some(i) = files.iter().position(|p| p == current) {
            if let Some(next) = files.get(i + 1) {
                return Some(next.clone());
            }
        }
        if stop.reached(since) {
            return None;
        }
        std::thread::sleep(POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotated_names_sort_as_tcpdump_writes_them() {
        assert!(natural("cap9") < natural("cap10"));
        assert!(natural("cap") < natural("cap1"));
    }
}
