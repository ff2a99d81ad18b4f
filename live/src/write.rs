//! Keeping what a live capture saw (`watch --write FILE.pcapng`): pcapng,
//! one interface description per captured interface (each with its own
//! link type), nanosecond timestamps, every frame as captured, so that
//! analysing the file afterwards gives what the live run gave. Written by
//! a thread of its own ([`WriterThread`]) from the queued batches, in the
//! order the analysis took the frames, so neither the capture nor the
//! analysis waits for the disk.

use crate::queue::Batch;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;

/// A pcapng file being written.
pub struct PcapngWriter {
    out: BufWriter<File>,
    /// The interface ids written so far, by the capture's interface index.
    described: Vec<Option<u32>>,
    next_id: u32,
}

fn block(out: &mut impl Write, kind: u32, body: &[u8]) -> std::io::Result<()> {
    let padded = body.len().div_ceil(4) * 4;
    let len = (12 + padded) as u32;
    out.write_all(&kind.to_le_bytes())?;
    out.write_all(&len.to_le_bytes())?;
    out.write_all(body)?;
    out.write_all(&[0u8; 3][..padded - body.len()])?;
    out.write_all(&len.to_le_bytes())
}

impl PcapngWriter {
    /// Creates (or truncates) `path` and writes the section header.
    pub fn create(path: &Path) -> std::io::Result<Self> {
        // Large writes: one system call per MiB rather than per 8 KiB.
        let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
        // Section header: byte-order magic, version 1.0, unknown length.
        let mut shb = Vec::with_capacity(16);
        shb.extend_from_slice(&0x1a2b_3c4du32.to_le_bytes());
        shb.extend_from_slice(&1u16.to_le_bytes());
        shb.extend_from_slice(&0u16.to_le_bytes());
        shb.extend_from_slice(&(-1i64).to_le_bytes());
        block(&mut out, 0x0a0d_0d0a, &shb)?;
        Ok(PcapngWriter {
            out,
            described: Vec::new(),
            next_id: 0,
        })
    }

    /// Writes one frame of capture interface `interface` (described on
    /// first use with `link_type` and nanosecond resolution).
    pub fn frame(
        &mut self,
        interface: usize,
        link_type: u32,
        ts_ns: i64,
        original_len: u32,
        data: &[u8],
    ) -> std::io::Result<()> {
        if self.described.len() <= interface {
            self.described.resize(interface + 1, None);
        }
        let id = match self.described[interface] {
            Some(id) => id,
            None => {
                let mut idb = Vec::with_capacity(20);
                idb.extend_from_slice(&(link_type as u16).to_le_bytes());
                idb.extend_from_slice(&0u16.to_le_bytes());
                idb.extend_from_slice(&262_144u32.to_le_bytes());
                // if_tsresol = 9 (nanoseconds), then opt_endofopt.
                idb.extend_from_slice(&9u16.to_le_bytes());
                idb.extend_from_slice(&1u16.to_le_bytes());
                idb.extend_from_slice(&[9, 0, 0, 0]);
                idb.extend_from_slice(&[0, 0, 0, 0]);
                block(&mut self.out, 1, &idb)?;
                let id = self.next_id;
                self.next_id += 1;
                self.described[interface] = Some(id);
                id
            }
        };
        // Written straight into the buffer: no allocation per frame.
        let ts = ts_ns.max(0) as u64;
        let padded = data.len().div_ceil(4) * 4;
        let len = (12 + 20 + padded) as u32;
        let o = &mut self.out;
        o.write_all(&6u32.to_le_bytes())?;
        o.write_all(&len.to_le_bytes())?;
        o.write_all(&id.to_le_bytes())?;
        o.write_all(&((ts >> 32) as u32).to_le_bytes())?;
        o.write_all(&(ts as u32).to_le_bytes())?;
        o.write_all(&(data.len() as u32).to_le_bytes())?;
        o.write_all(&original_len.to_le_bytes())?;
        o.write_all(data)?;
        o.write_all(&[0u8; 3][..padded - data.len()])?;
        o.write_all(&len.to_le_bytes())
    }

    /// Writes out what is buffered; the file is then complete.
    pub fn finish(mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Consecutive frames of one batch.
struct Run {
    batch: Arc<Batch>,
    start: usize,
    end: usize,
}

/// Runs handed to the writer at once.
const RUNS_PER_SEND: usize = 64;

/// A [`PcapngWriter`] on a thread of its own, fed the frames the analysis
/// took, in its order. The batches stay charged to the queue's budget
/// until written, so a writer that falls behind makes the queue drop (and
/// count) rather than memory grow.
pub struct WriterThread {
    tx: Option<Sender<Vec<Run>>>,
    pending: Vec<Run>,
    thread: Option<JoinHandle<std::io::Result<()>>>,
}

impl WriterThread {
    /// Creates the file now (so that an error is reported before the
    /// capture starts) and starts the thread.
    pub fn create(path: &Path) -> std::io::Result<Self> {
        let mut w = PcapngWriter::create(path)?;
        let (tx, rx) = channel::<Vec<Run>>();
        let thread = std::thread::Builder::new()
            .name("write".into())
            .spawn(move || {
                for runs in rx {
                    for r in runs {
                        for f in (r.start..r.end).filter_map(|i| r.batch.get(i)) {
                            w.frame(f.interface, f.link_type, f.ts_ns, f.original_len, f.data)?;
                        }
                    }
                }
                w.finish()
            })?;
        Ok(WriterThread {
            tx: Some(tx),
            pending: Vec::new(),
            thread: Some(thread),
        })
    }

    /// Queues frame `index` of `batch`. False when the writer has stopped
    /// (its error comes with [`WriterThread::finish`]).
    pub fn frame(&mut self, batch: &Arc<Batch>, index: usize) -> bool {
        if let Some(r) = self.pending.last_mut() {
            if Arc::ptr_eq(&r.batch, batch) && r.end == index {
                r.end += 1;
                return true;
            }
        }
        self.pending.push(Run {
            batch: batch.clone(),
            start: index,
            end: index + 1,
        });
        if self.pending.len() >= RUNS_PER_SEND {
            return self.flush();
        }
        true
    }

    /// Hands the queued frames to the thread.
    pub fn flush(&mut self) -> bool {
        if self.pending.is_empty() {
            return true;
        }
        let runs = std::mem::take(&mut self.pending);
        self.tx.as_ref().is_some_and(|tx| tx.send(runs).is_ok())
    }

    /// Writes the rest, completes the file and returns the first error.
    pub fn finish(mut self) -> std::io::Result<()> {
        self.flush();
        drop(self.tx.take());
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(std::io::Error::other("the --write thread panicked")),
            None => Ok(()),
        }
    }
}
