//! The parsing limit for `make bench`: iterates the records of a capture
//! and does nothing else (no decoding, no analysis).
//!
//! ```text
//! iterate CAPTURE [parser|reader]
//! ```
//!
//! * `parser` (default): pcap-parser's streaming reader over the file, as
//!   the analyzer creates it (same crate, same 1 MiB buffer), adding up the
//!   captured lengths of pcap records and pcapng packet blocks.
//! * `reader`: the analyzer's own capture reader
//!   (`sctp_handover::capture`), which adds timestamps, link types and
//!   frame numbering on top of pcap-parser.
//!
//! Prints `FRAMES BYTES` (frames, captured bytes) on one line.

use pcap_parser::pcapng::Block;
use pcap_parser::traits::PcapNGPacketBlock;
use pcap_parser::{PcapBlockOwned, PcapError};
use std::path::{Path, PathBuf};

fn parser(path: &Path) -> (u64, u64) {
    let file = std::fs::File::open(path).expect("open capture");
    let mut reader = pcap_parser::create_reader(1 << 20, file).expect("pcap or pcapng");
    let (mut frames, mut bytes) = (0u64, 0u64);
    loop {
        match reader.next() {
            Ok((len, block)) => {
                let data = match block {
                    PcapBlockOwned::Legacy(r) => Some(r.data.len()),
                    PcapBlockOwned::NG(Block::EnhancedPacket(b)) => Some(b.packet_data().len()),
                    PcapBlockOwned::NG(Block::SimplePacket(b)) => Some(b.packet_data().len()),
                    _ => None,
                };
                if let Some(n) = data {
                    frames += 1;
                    bytes += n as u64;
                }
                reader.consume_noshift(len); // as the capture reader does
            }
            Err(PcapError::Eof) => break,
            Err(PcapError::Incomplete(_)) => reader.refill().expect("refill"),
            Err(e) => panic!("{}: {e:?} after {frames} frames", path.display()),
        }
    }
    (frames, bytes)
}

fn reader(path: &Path) -> (u64, u64) {
    let mut r = sctp_handover::capture::open(path).expect("open capture");
    let mut bytes = 0u64;
    let outcome = r
        .for_each_frame(|f| bytes += f.data.len() as u64)
        .expect("readable capture");
    (outcome.frames, bytes)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next().map(PathBuf::from) else {
        eprintln!("usage: iterate CAPTURE [parser|reader]");
        std::process::exit(2);
    };
    let (frames, bytes) = match args.next().as_deref() {
        None | Some("parser") => parser(&path),
        Some("reader") => reader(&path),
        Some(other) => {
            eprintln!("iterate: unknown mode {other:?} (parser, reader)");
            std::process::exit(2);
        }
    };
    println!("{frames} {bytes}");
}
