//! Live capture through libpcap, decoupled from the analysis: one thread
//! per interface does nothing but drain libpcap's ring into the in-memory
//! queue ([`crate::queue`]), so the ring is handed back to the kernel at
//! once however long the analysis of a batch takes; the analysis takes the
//! frames from the queue in time order ([`crate::merge`]). Every frame
//! lost is counted by cause — the kernel's ring full, the interface, or
//! the queue's byte budget exhausted — with the time span it was lost in
//! ([`crate::drops`]).
//!
//! By default libpcap delivers in blocks (TPACKET_V3): frames are packed
//! one after another in the ring, so its size in bytes is what bounds a
//! burst, whatever the snaplen; a block is handed over when full or when
//! the packet-buffer timeout expires, which bounds how late a frame
//! reaches the analysis. Immediate mode (TPACKET_V2) hands over every
//! frame at once, but in fixed slots sized by the snaplen.

use crate::drops::{DropCause, DropLog};
use crate::merge::Merge;
use crate::queue::{Batch, Budget, FRAME_OVERHEAD};
use pcap::{Active, Capture, Precision};
use sctp_handover::analysis::FrameFilter;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How the interfaces are captured.
#[derive(Clone)]
pub struct CaptureConfig {
    /// Bytes kept of each frame (tcpdump's `-s`).
    pub snaplen: i32,
    /// The kernel's capture buffer per interface, in bytes (tcpdump's `-B`,
    /// which counts KiB): the size of libpcap's ring.
    pub buffer_bytes: usize,
    /// libpcap's immediate mode instead of the packet-buffer timeout.
    pub immediate: bool,
    /// The packet-buffer timeout (ms): a block is handed over at the latest
    /// this long after its first frame.
    pub timeout_ms: u32,
    /// The queue's byte budget, over all interfaces.
    pub queue_bytes: usize,
    /// The capture filter, applied in user space by each capture thread so
    /// that what it rejects is counted and never queued.
    pub filter: Option<Arc<dyn FrameFilter>>,
}

/// One interface's counts.
#[derive(Debug, Clone, Default)]
pub struct InterfaceStats {
    /// The interface's name as given (`-i`).
    pub name: String,
    /// Frames that reached the capture (libpcap's `ps_recv`), those the
    /// kernel then dropped included.
    pub received: u64,
    /// Dropped by the kernel: its capture buffer was full.
    pub dropped: u64,
    /// Dropped by the interface or its driver.
    pub if_dropped: u64,
    /// Dropped by the watch's queue: its byte budget was spent.
    pub queue_dropped: u64,
    /// Rejected by the capture filter (never queued).
    pub rejected: u64,
    /// Queued for the analysis.
    pub queued: u64,
    /// libpcap's error that ended this interface's capture early; None
    /// when it ran until stopped.
    pub error: Option<String>,
}

/// What one call of [`Live::pump`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pump {
    /// Frames given out, and frames the filter rejected meanwhile (both
    /// mean the interfaces are not idle); `caught_up`: nothing handed over
    /// is left to give out (what is printed can be flushed).
    Frames {
        /// Frames given out by this call.
        frames: usize,
        /// Frames the capture filter rejected since the last call.
        rejected: u64,
        /// Nothing handed over by the capture threads is left to give out.
        caught_up: bool,
    },
    /// Nothing came within the wait.
    Idle,
    /// Every capture has ended and every frame was given out.
    Ended,
}

/// A live capture on one or more interfaces: one capture thread each,
/// feeding a bounded queue whose frames [`Live::pump`] gives out in time
/// order.
pub struct Live {
    frames: Receiver<Batch>,
    merge: Merge,
    threads: Vec<JoinHandle<()>>,
    stats: Vec<Arc<Mutex<InterfaceStats>>>,
    stop: Arc<AtomicBool>,
    /// The frames lost so far, by cause, interface and time span (what
    /// marks the results they may have touched).
    pub drops: Arc<DropLog>,
    /// The queue's byte budget, shared by the capture threads that charge
    /// it and the batches that give it back.
    pub budget: Arc<Budget>,
}

/// Frames given out per [`Live::pump`] at most, so that a backlog does not
/// keep the caller from its own work (flushing, status, the stop flag).
const PUMP_FRAMES: usize = 8192;
/// Frames read from libpcap per call: one TPACKET_V3 block holds about a
/// thousand signalling frames; immediate mode's ring is read in as many.
const DISPATCH_FRAMES: usize = 1024;
/// A batch is handed over when it holds this much even if the ring still
/// has frames, so the analysis starts on a long burst early.
const BATCH_BYTES: usize = 1 << 20;
const BATCH_FRAMES: usize = 4096;
/// A batch is also handed over this long after it was started, so that a
/// ring that never empties does not hold the analysis back.
const BATCH_AGE: Duration = Duration::from_millis(2);
/// How long a capture thread waits in poll(2) when its ring is empty: the
/// stop flag is seen within it. With several interfaces shorter, because an
/// idle interface's watermark is what lets the others' frames go out.
const POLL_MS_ONE: i32 = 50;
const POLL_MS_SEVERAL: i32 = 10;
/// How late a frame may become visible after its time stamp beyond the
/// packet-buffer timeout (the kernel's retire timer runs on jiffies and in
/// a softirq that load can delay).
const VISIBLE_SLACK_NS: i64 = 10_000_000;
/// How long the last round after a stop may read a ring that keeps
/// filling.
const LAST_ROUND: Duration = Duration::from_millis(100);

/// libpcap's DLT values back to the LINKTYPE values files carry.
fn linktype_of(dlt: i32) -> u32 {
    match dlt {
        12 | 14 => 101, // DLT_RAW → LINKTYPE_RAW
        11 => 100,
        other => other as u32,
    }
}

/// What to tell someone who may not capture.
fn explain(interface: &str, e: &pcap::Error) -> String {
    let text = e.to_string();
    if text.contains("ermission") || text.contains("not permitted") {
        format!(
            "cannot capture on {interface}: {text}. Capturing needs CAP_NET_RAW and \
             CAP_NET_ADMIN: run as root, or grant them once with \
             `sudo setcap cap_net_raw,cap_net_admin=eip $(command -v sctp-handover)`"
        )
    } else {
        format!("cannot capture on {interface}: {text}")
    }
}

/// CLOCK_REALTIME now, in epoch ns: the clock captured frames are stamped
/// with, so drop spans compare with frame times.
pub fn wall_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

impl Live {
    /// Opens every interface (failing, with the interface named and the
    /// missing permission explained, before any frame is read), then
    /// starts one capture thread per interface.
    pub fn open(interfaces: &[String], config: &CaptureConfig) -> Result<Live, String> {
        let buffer = i32::try_from(config.buffer_bytes)
            .map_err(|_| format!("buffer size {} bytes is too large", config.buffer_bytes))?;
        let timeout = i32::try_from(config.timeout_ms.max(1)).unwrap_or(i32::MAX);
        let mut captures = Vec::new();
        for name in interfaces {
            let cap = Capture::from_device(name.as_str())
                .map_err(|e| explain(name, &e))?
                .immediate_mode(config.immediate)
                // libpcap's default timeout (0) would mean a TPACKET_V3
                // block is never handed over until full.
                .timeout(timeout)
                .buffer_size(buffer)
                .precision(Precision::Nano)
                .snaplen(config.snaplen)
                .open()
                .and_then(|c| c.setnonblock())
                .map_err(|e| explain(name, &e))?;
            captures.push((name.clone(), cap));
        }
        let (tx, rx) = channel::<Batch>();
        let stop = Arc::new(AtomicBool::new(false));
        let drops = Arc::new(DropLog::new());
        let budget = Budget::new(config.queue_bytes);
        // How far behind "now" frames may still turn up (the watermark).
        let lag_ns = if config.immediate {
            VISIBLE_SLACK_NS
        } else {
            i64::from(config.timeout_ms) * 1_000_000 + VISIBLE_SLACK_NS
        };
        let poll_ms = if captures.len() > 1 {
            POLL_MS_SEVERAL
        } else {
            POLL_MS_ONE
        };
        let mut threads = Vec::new();
        let mut stats = Vec::new();
        for (index, (name, cap)) in captures.into_iter().enumerate() {
            let slot = Arc::new(Mutex::new(InterfaceStats {
                name: name.clone(),
                ..Default::default()
            }));
            stats.push(slot.clone());
            let thread = CaptureThread {
                index,
                link_type: linktype_of(cap.get_datalink().0),
                cap,
                tx: tx.clone(),
                budget: budget.clone(),
                drops: drops.clone(),
                stop: stop.clone(),
                slot,
                filter: config.filter.clone(),
                lag_ns,
                poll_ms,
                several: interfaces.len() > 1,
            };
            let spawned = std::thread::Builder::new()
                .name(format!("capture {name}"))
                .spawn(move || thread.run())
                .map_err(|e| format!("cannot start the capture of {name}: {e}"))?;
            threads.push(spawned);
        }
        Ok(Live {
            frames: rx,
            merge: Merge::new(interfaces.len()),
            threads,
            stats,
            stop,
            drops,
            budget,
        })
    }

    /// Asks the captures to end: each reads what its ring still holds
    /// (waiting for the block in progress to be handed over), hands it on
    /// and ends; [`Live::pump`] then gives out the rest and says `Ended`.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    fn receive(&mut self, batch: Batch, rejected: &mut u64) {
        *rejected += batch.rejected;
        self.merge.push(batch);
    }

    fn give_out(&mut self, f: &mut impl FnMut(&Arc<Batch>, usize)) -> usize {
        let mut n = 0;
        while n < PUMP_FRAMES {
            let Some((batch, index)) = self.merge.pop() else {
                break;
            };
            f(&batch, index);
            n += 1;
        }
        n
    }

    /// Takes what the captures handed over and gives the frames that can
    /// go out (in time order across interfaces) to `f`, waiting up to
    /// `wait` when there is nothing.
    pub fn pump(&mut self, wait: Duration, mut f: impl FnMut(&Arc<Batch>, usize)) -> Pump {
        let mut rejected = 0;
        let mut gone = false;
        loop {
            match self.frames.try_recv() {
                Ok(b) => self.receive(b, &mut rejected),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    gone = true;
                    break;
                }
            }
        }
        let mut frames = self.give_out(&mut f);
        if frames == 0 && rejected == 0 {
            if gone || self.merge.finished() {
                self.merge.end_all();
                frames = self.give_out(&mut f);
                if frames == 0 {
                    return Pump::Ended;
                }
            } else {
                match self.frames.recv_timeout(wait) {
                    Ok(b) => {
                        self.receive(b, &mut rejected);
                        while let Ok(b) = self.frames.try_recv() {
                            self.receive(b, &mut rejected);
                        }
                        frames = self.give_out(&mut f);
                    }
                    Err(RecvTimeoutError::Timeout) => return Pump::Idle,
                    Err(RecvTimeoutError::Disconnected) => {
                        self.merge.end_all();
                        frames = self.give_out(&mut f);
                        if frames == 0 {
                            return Pump::Ended;
                        }
                    }
                }
            }
        }
        if frames == 0 && rejected == 0 {
            Pump::Idle
        } else {
            Pump::Frames {
                frames,
                rejected,
                caught_up: frames < PUMP_FRAMES && self.merge.is_empty(),
            }
        }
    }

    /// Waits for the capture threads (after [`Live::stop`]) and returns
    /// each interface's counts.
    pub fn finish(self) -> Vec<InterfaceStats> {
        self.stop.store(true, Ordering::Relaxed);
        drop(self.frames);
        for t in self.threads {
            let _ = t.join();
        }
        self.stats
            .iter()
            .map(|s| s.lock().map(|s| s.clone()).unwrap_or_default())
            .collect()
    }

    /// The counts so far (for the status line), without stopping.
    pub fn stats_so_far(&self) -> Vec<InterfaceStats> {
        self.stats
            .iter()
            .map(|s| s.lock().map(|s| s.clone()).unwrap_or_default())
            .collect()
    }

    /// The interfaces' names, in index order.
    pub fn names(&self) -> Vec<String> {
        self.stats_so_far().into_iter().map(|s| s.name).collect()
    }
}

/// libpcap's counters at the last look: they are 32-bit and wrap, so
/// totals are kept from their differences.
#[derive(Default)]
struct Counters {
    at_ns: i64,
    recv: u32,
    drop: u32,
    ifdrop: u32,
}

struct CaptureThread {
    index: usize,
    link_type: u32,
    cap: Capture<Active>,
    tx: Sender<Batch>,
    budget: Arc<Budget>,
    drops: Arc<DropLog>,
    stop: Arc<AtomicBool>,
    slot: Arc<Mutex<InterfaceStats>>,
    filter: Option<Arc<dyn FrameFilter>>,
    lag_ns: i64,
    poll_ms: i32,
    several: bool,
}

/// What one capture thread counts between hand-overs.
#[derive(Default)]
struct Tally {
    stats: InterfaceStats,
    /// Frames the queue refused since the last hand-over: (first stamp,
    /// last stamp, count).
    refused: Option<(i64, i64, u64)>,
    /// Rejected by the filter since the last hand-over.
    rejected: u64,
}

impl CaptureThread {
    fn run(mut self) {
        let mut matcher = self.filter.as_ref().map(|f| f.matcher());
        let mut filter_said = Vec::new();
        let mut tally = Tally::default();
        let mut counters = Counters {
            at_ns: wall_ns(),
            ..Default::default()
        };
        let mut batch = self.batch();
        let mut started = Instant::now();
        let mut deadline: Option<Instant> = None;
        let mut last_round = false;
        let mut error = None;
        loop {
            // Once stopped, the capture goes on until the block in progress
            // has had time to be handed over (so that frames captured
            // before the stop are analysed rather than lost with the
            // socket), and no longer, even if frames keep coming.
            // The last round reads what the ring holds then (within a
            // bound, should frames keep coming faster than it reads).
            if self.stop.load(Ordering::Relaxed) {
                let until = *deadline.get_or_insert_with(|| {
                    Instant::now() + Duration::from_nanos(self.lag_ns.max(0) as u64)
                });
                let now = Instant::now();
                if now >= until + LAST_ROUND {
                    break;
                }
                last_round = now >= until;
            }
            let budget = &self.budget;
            let read = self.cap.dispatch(Some(DISPATCH_FRAMES), |p| {
                // Nanosecond precision: tv_usec holds ns.
                let ts = p
                    .header
                    .ts
                    .tv_sec
                    .saturating_mul(1_000_000_000)
                    .saturating_add(p.header.ts.tv_usec);
                if let Some(m) = matcher.as_mut() {
                    let keep = m
                        .keep(batch.link_type, p.data, p.header.len)
                        .unwrap_or_else(|why| {
                            // Said once per link type, as a file's would be.
                            if !filter_said.contains(&batch.link_type) {
                                filter_said.push(batch.link_type);
                                eprintln!("sctp-handover: --filter: {why}");
                            }
                            false
                        });
                    if !keep {
                        tally.rejected += 1;
                        return;
                    }
                }
                let cost = p.data.len() + FRAME_OVERHEAD;
                if budget.try_charge(cost) {
                    batch.push_charged(ts, p.header.len, p.data, cost);
                } else {
                    let r = tally.refused.get_or_insert((ts, ts, 0));
                    r.0 = r.0.min(ts);
                    r.1 = r.1.max(ts);
                    r.2 += 1;
                }
            });
            let n = match read {
                Ok(n) => n,
                // Non-blocking: nothing to read.
                Err(pcap::Error::TimeoutExpired) => 0,
                Err(e) => {
                    error = Some(e.to_string());
                    break;
                }
            };
            if n > 0 {
                let due = batch.data_bytes() >= BATCH_BYTES
                    || batch.len() >= BATCH_FRAMES
                    || started.elapsed() >= BATCH_AGE;
                if due {
                    started = Instant::now();
                    let full = std::mem::replace(&mut batch, self.batch());
                    if !self.hand_over(full, &mut tally, &mut counters, None) {
                        return;
                    }
                }
                continue;
            }
            // The ring is empty: hand over what was read, with what is now
            // known of frames still to come.
            if !batch.is_empty() || tally.rejected > 0 || tally.refused.is_some() || self.several {
                let ready = std::mem::replace(&mut batch, self.batch());
                started = Instant::now();
                let watermark = wall_ns() - self.lag_ns;
                if !self.hand_over(ready, &mut tally, &mut counters, Some(watermark)) {
                    return;
                }
            } else {
                // Idle: still read the counters at every wake-up, so that a
                // drop span starts at most one wait before the drop rather
                // than at the last frame, maybe long ago.
                self.look(&mut tally, &mut counters);
                self.publish(&tally);
            }
            if last_round {
                break;
            }
            let timeout = match deadline {
                // Stopping: wake up for the last look at the deadline.
                Some(until) => {
                    let left = until.saturating_duration_since(Instant::now());
                    (left.as_millis() as i32).clamp(1, self.poll_ms)
                }
                None => self.poll_ms,
            };
            let mut fd = libc::pollfd {
                fd: self.cap.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // Wait for the ring (libpcap's own timeout may never expire on
            // an idle interface, which would hide the stop flag).
            // SAFETY: one valid pollfd for the duration of the call.
            unsafe { libc::poll(&mut fd, 1, timeout) };
        }
        let mut last = std::mem::replace(&mut batch, self.batch());
        last.last = true;
        self.hand_over(last, &mut tally, &mut counters, Some(i64::MAX));
        tally.stats.error = error;
        self.publish(&tally);
    }

    fn batch(&self) -> Batch {
        Batch::new(self.index, self.link_type, Some(self.budget.clone()))
    }

    /// Reads libpcap's counters and records what the kernel and the
    /// interface dropped since the last look, in the span between the two
    /// looks (they give counts, not times).
    fn look(&mut self, tally: &mut Tally, counters: &mut Counters) {
        let now = wall_ns();
        if let Ok(s) = self.cap.stats() {
            let recv = s.received.wrapping_sub(counters.recv);
            let drop = s.dropped.wrapping_sub(counters.drop);
            let ifdrop = s.if_dropped.wrapping_sub(counters.ifdrop);
            tally.stats.received += u64::from(recv);
            tally.stats.dropped += u64::from(drop);
            tally.stats.if_dropped += u64::from(ifdrop);
            let from = counters.at_ns;
            self.drops
                .record(DropCause::Kernel, self.index, from, now, u64::from(drop));
            self.drops.record(
                DropCause::Interface,
                self.index,
                from,
                now,
                u64::from(ifdrop),
            );
            counters.recv = s.received;
            counters.drop = s.dropped;
            counters.ifdrop = s.if_dropped;
        }
        counters.at_ns = now;
    }

    /// Sends a batch to the analysis after recording every drop that
    /// happened before its frames were read — so a result built on the
    /// frames after a drop never goes out before the drop is known.
    /// False when the analysis is gone.
    fn hand_over(
        &mut self,
        mut batch: Batch,
        tally: &mut Tally,
        counters: &mut Counters,
        watermark: Option<i64>,
    ) -> bool {
        self.look(tally, counters);
        if let Some((from, to, n)) = tally.refused.take() {
            tally.stats.queue_dropped += n;
            self.drops.record(DropCause::Queue, self.index, from, to, n);
        }
        tally.stats.queued += batch.len() as u64;
        tally.stats.rejected += tally.rejected;
        batch.rejected = std::mem::take(&mut tally.rejected);
        if let Some(w) = watermark {
            batch.watermark_ns = w;
        }
        self.publish(tally);
        self.tx.send(batch).is_ok()
    }

    fn publish(&self, tally: &Tally) {
        if let Ok(mut s) = self.slot.lock() {
            let name = std::mem::take(&mut s.name);
            *s = InterfaceStats {
                name,
                ..tally.stats.clone()
            };
        }
    }
}
