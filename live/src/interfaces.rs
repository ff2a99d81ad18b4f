//! Live capture through libpcap: one thread per interface (immediate mode,
//! non-blocking, waiting in poll(2) so that a stop is seen within 50 ms;
//! nanosecond timestamps where the platform gives them), frames handed to
//! the analysis over a channel in arrival order, the kernel's drop counts
//! kept for the end.

use crate::follow::Stop;
use pcap::{Capture, Precision};
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// One captured frame (owned: it crosses threads).
pub struct LiveFrame {
    pub interface: usize,
    pub link_type: u32,
    pub ts_ns: i64,
    pub original_len: u32,
    pub data: Vec<u8>,
}

/// The kernel's view of one interface's capture at the end.
#[derive(Debug, Clone, Default)]
pub struct InterfaceStats {
    pub name: String,
    pub received: u32,
    /// Dropped by the kernel: the capture buffer was full.
    pub dropped: u32,
    /// Dropped by the interface or its driver.
    pub if_dropped: u32,
    pub error: Option<String>,
}

pub struct Live {
    pub frames: Receiver<LiveFrame>,
    threads: Vec<JoinHandle<()>>,
    stats: Vec<Arc<Mutex<InterfaceStats>>>,
}

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

impl Live {
    /// Starts capturing on every interface, keeping at most `snaplen`
    /// bytes of each frame; fails (naming the interface and the missing
    /// permission) before any frame is read.
    pub fn open(interfaces: &[String], snaplen: i32, stop: Stop) -> Result<Live, String> {
        let (tx, rx) = sync_channel::<LiveFrame>(16_384);
        let mut captures = Vec::new();
        for name in interfaces {
            let cap = Capture::from_device(name.as_str())
                .map_err(|e| explain(name, &e))?
                .immediate_mode(true)
                .precision(Precision::Nano)
                .snaplen(snaplen)
                .open()
                .and_then(|c| c.setnonblock())
                .map_err(|e| explain(name, &e))?;
            captures.push((name.clone(), cap));
        }
        let mut threads = Vec::new();
        let mut stats = Vec::new();
        for (index, (name, mut cap)) in captures.into_iter().enumerate() {
            let tx = tx.clone();
            let stop = stop.clone();
            let link_type = linktype_of(cap.get_datalink().0);
            let slot = Arc::new(Mutex::new(InterfaceStats {
                name: name.clone(),
                ..Default::default()
            }));
            stats.push(slot.clone());
            threads.push(std::thread::spawn(move || {
                let mut error = None;
                while !stop.flag.load(Ordering::Relaxed) {
                    match cap.next_packet() {
                        Ok(p) => {
                            let ts = &p.header.ts;
                            let frame = LiveFrame {
                                interface: index,
                                link_type,
                                // Nanosecond precision: tv_usec holds ns.
                                ts_ns: ts.tv_sec * 1_000_000_000 + ts.tv_usec,
                                original_len: p.header.len,
                                data: p.data.to_vec(),
                            };
                            if tx.send(frame).is_err() {
                                break;
                            }
                        }
                        // Nothing to read: wait on the capture's descriptor
                        // (libpcap's own timeout may never expire on an
                        // idle interface, which would hide the stop flag).
                        Err(pcap::Error::TimeoutExpired) => {
                            let mut fd = libc::pollfd {
                                fd: cap.as_raw_fd(),
                                events: libc::POLLIN,
                                revents: 0,
                            };
                            // SAFETY: one valid pollfd for the duration of the call.
                            unsafe { libc::poll(&mut fd, 1, 50) };
                        }
                        Err(e) => {
                            error = Some(e.to_string());
                            break;
                        }
                    }
                }
                if let Ok(mut s) = slot.lock() {
                    if let Ok(st) = cap.stats() {
                        s.received = st.received;
                        s.dropped = st.dropped;
                        s.if_dropped = st.if_dropped;
                    }
                    s.error = error;
                }
            }));
        }
        Ok(Live {
            frames: rx,
            threads,
            stats,
        })
    }

    /// Waits for the capture threads (after the stop flag is set) and
    /// returns each interface's counts.
    pub fn finish(self) -> Vec<InterfaceStats> {
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
}
