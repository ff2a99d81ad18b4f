//! Capture input: pcap (µs/ns, either byte order), pcapng (several
//! interfaces, per-interface `if_tsresol`/`if_tsoffset`), optionally gzip-
//! compressed. Streams the file through one reusable buffer and hands each
//! frame to a callback as a borrowed slice: no allocation per packet.

mod modified_pcap;
mod reader;

pub use reader::{
    from_reader, open, sniff, sniff_reader, CaptureFormat, CaptureReader, ReadOutcome, Sniff,
};

use crate::time::Timestamp;
use std::path::PathBuf;

/// libpcap link-layer header types (LINKTYPE_* values) the decoder handles.
pub mod link_type {
    /// BSD loopback: a 4-byte address family in host byte order.
    pub const NULL: u32 = 0;
    /// Ethernet II (with 802.1Q / QinQ tags).
    pub const ETHERNET: u32 = 1;
    /// DLT_RAW as numbered on most platforms, OpenBSD, and the LINKTYPE value.
    pub const RAW_12: u32 = 12;
    /// DLT_RAW as OpenBSD numbers it: a bare IPv4 or IPv6 packet.
    pub const RAW_14: u32 = 14;
    /// LINKTYPE_RAW: a bare IPv4 or IPv6 packet.
    pub const RAW: u32 = 101;
    /// OpenBSD loopback: a 4-byte address family in network byte order.
    pub const LOOP: u32 = 108;
    /// Linux "cooked" capture v1 (`-i any`).
    pub const LINUX_SLL: u32 = 113;
    /// A bare IPv4 packet.
    pub const IPV4: u32 = 228;
    /// A bare IPv6 packet.
    pub const IPV6: u32 = 229;
    /// Linux "cooked" capture v2 (`-i any`, libpcap 1.10+).
    pub const LINUX_SLL2: u32 = 276;
    /// Not a libpcap value: marks a pcapng record that Wireshark numbers as
    /// a frame but that carries no packet (custom and systemd journal
    /// blocks), so that our frame numbers match Wireshark's.
    pub const NON_PACKET_RECORD: u32 = 0xffff_fffe;
}

/// One captured frame, borrowed from the reader's buffer.
#[derive(Debug, Clone, Copy)]
pub struct Frame<'a> {
    /// 1-based, as Wireshark numbers frames.
    pub number: u64,
    /// The capture time (the interface's resolution and offset applied).
    pub timestamp: Timestamp,
    /// The frame's link type ([`link_type`]).
    pub link_type: u32,
    /// pcapng interface id (0 for pcap).
    pub interface: u32,
    /// Length on the wire; `data.len()` is the captured length.
    pub original_len: u32,
    /// The captured bytes, starting at the link-layer header.
    pub data: &'a [u8],
}

impl Frame<'_> {
    /// True when the snaplen cut the frame short.
    pub fn is_cut(&self) -> bool {
        (self.data.len() as u64) < u64::from(self.original_len)
    }
}

/// Why a capture could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// The file could not be opened.
    #[error("{path}: cannot open: {source}")]
    Open {
        /// The file as given.
        path: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The file holds no bytes.
    #[error("{path}: empty file, not a capture")]
    Empty {
        /// The file as given.
        path: PathBuf,
    },
    /// The first bytes are no pcap or pcapng magic number.
    #[error("{path}: not a pcap or pcapng capture (file starts with {magic})")]
    NotACapture {
        /// The file as given.
        path: PathBuf,
        /// How its first bytes look (hex, and as text).
        magic: String,
    },
    /// The capture's structure is broken (a bad header or block).
    #[error("{path}: read error: {reason}")]
    Read {
        /// The file as given.
        path: PathBuf,
        /// What is broken.
        reason: String,
    },
    /// The read of the file, pipe or stream itself failed (EIO, a
    /// connection reset by an object store), unlike a capture cut short
    /// or corrupt: not a fact about the capture, another attempt may read
    /// it whole ([`CaptureError::is_read_failure`]).
    #[error("{path}: read error: {reason}")]
    ReadFailed {
        /// The input as given.
        path: PathBuf,
        /// The operating system's or the stream's error.
        reason: String,
    },
}

impl CaptureError {
    /// Whether the input's bytes could not be read ([`CaptureError::ReadFailed`]):
    /// a dataset keeps no record of such an input, so the next run reads
    /// it again.
    pub fn is_read_failure(&self) -> bool {
        matches!(self, CaptureError::ReadFailed { .. })
    }
}
