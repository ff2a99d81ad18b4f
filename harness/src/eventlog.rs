//! The ground-truth event log (events.jsonl): one JSON object per line,
//! times from CLOCK_REALTIME as epoch seconds with nine decimals — the same
//! clock and format as the capture timestamps. The format (the line types,
//! the epoch times) is the run files' crate's; docs/harness.md.

pub use sctp_handover_harness_formats::{epoch_string, Record};
use serde::Serialize;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// Nanoseconds since the epoch, from CLOCK_REALTIME.
pub fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

pub struct EventLog {
    file: Mutex<File>,
}

impl EventLog {
    pub fn append(path: &Path) -> std::io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(EventLog {
            file: Mutex::new(file),
        })
    }

    pub fn write(&self, record: &Record<'_>) {
        self.write_json(record);
    }

    /// Writes any record as one line (one write(2) on an O_APPEND file, so
    /// the MN and CN processes can share the log).
    pub fn write_json(&self, record: &impl Serialize) {
        let mut line = serde_json::to_string(record).unwrap_or_default();
        line.push('\n');
        if let Ok(mut f) = self.file.lock() {
            let _ = f.write_all(line.as_bytes());
            let _ = f.flush();
        }
    }

    /// Logs an instant (no syscall around it).
    pub fn mark(&self, kind: &str, interface: Option<&str>, address: Option<&str>, at_ns: i64) {
        self.write(&Record {
            time: epoch_string(at_ns),
            time_after: None,
            kind,
            interface,
            address,
            ok: true,
            error: None,
        });
    }
}
