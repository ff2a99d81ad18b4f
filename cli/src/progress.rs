//! The batch's progress bar (indicatif) and its log lines: a bar on a
//! terminal only, and each failed, cut-short or skipped input named as it
//! happens.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use sctp_handover_tables::batch::{Outcome, Progress};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};

/// The batch's [`Progress`]: a bar of bytes read on a terminal (none when
/// quiet or not a terminal), and a log line per input that failed, was cut
/// short or skipped.
pub struct Bar {
    bar: Option<ProgressBar>,
    files: u64,
    done: AtomicU64,
    failed: AtomicU64,
}

impl Bar {
    /// A bar over `files` inputs of `bytes` bytes in all.
    pub fn new(files: u64, bytes: u64, quiet: bool) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::with_draw_target(Some(bytes), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} {binary_bytes_per_sec} ETA {eta} {msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar.enable_steady_tick(std::time::Duration::from_millis(200));
            bar
        });
        let b = Bar {
            bar,
            files,
            done: AtomicU64::new(0),
            failed: AtomicU64::new(0),
        };
        b.message();
        b
    }

    fn message(&self) {
        if let Some(bar) = &self.bar {
            let failed = self.failed.load(Ordering::Relaxed);
            bar.set_message(format!(
                "{}/{} files{}",
                self.done.load(Ordering::Relaxed),
                self.files,
                if failed > 0 {
                    format!(", {failed} failed")
                } else {
                    String::new()
                }
            ));
        }
    }

    fn log(&self, line: String) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }

    /// Clears the bar (the log lines stay).
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Progress for Bar {
    fn input_done(&self, o: &Outcome) {
        self.done.fetch_add(1, Ordering::Relaxed);
        let error = o.error.as_deref().unwrap_or("");
        match o.status.as_str() {
            "failed" => {
                self.failed.fetch_add(1, Ordering::Relaxed);
                self.log(format!("sctp-handover: error: {error}"));
            }
            "truncated" if !o.reused => {
                self.log(format!("sctp-handover: warning: {}: {error}", o.source))
            }
            "skipped" if !o.reused => {
                self.log(format!("sctp-handover: skipped {}: {error}", o.source))
            }
            _ => {}
        }
        if let Some(bar) = &self.bar {
            bar.inc(o.bytes);
        }
        self.message();
    }
}
