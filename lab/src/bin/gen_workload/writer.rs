//! pcap (nanosecond, little-endian) and pcapng (one section, one interface
//! with nanosecond `if_tsresol`, Enhanced Packet Blocks) writers.

use std::io::{BufWriter, Write};
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Pcap,
    Pcapng,
}

impl Format {
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "pcap" => Some(Format::Pcap),
            "pcapng" => Some(Format::Pcapng),
            _ => None,
        }
    }
}

pub struct CaptureWriter {
    out: BufWriter<std::fs::File>,
    format: Format,
    /// Bytes written so far (file size).
    pub bytes: u64,
    pub frames: u64,
}

const SNAPLEN: u32 = 262_144;

impl CaptureWriter {
    pub fn create(path: &Path, format: Format, link_type: u32) -> std::io::Result<Self> {
        let out = BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
        let mut w = CaptureWriter {
            out,
            format,
            bytes: 0,
            frames: 0,
        };
        match format {
            Format::Pcap => {
                w.put(&0xa1b2_3c4du32.to_le_bytes())?; // nanosecond pcap
                w.put(&2u16.to_le_bytes())?;
                w.put(&4u16.to_le_bytes())?;
                w.put(&0u32.to_le_bytes())?; // thiszone
                w.put(&0u32.to_le_bytes())?; // sigfigs
                w.put(&SNAPLEN.to_le_bytes())?;
                w.put(&link_type.to_le_bytes())?;
            }
            Format::Pcapng => {
                // Section Header Block without options.
                w.put(&0x0a0d_0d0au32.to_le_bytes())?;
                w.put(&28u32.to_le_bytes())?;
                w.put(&0x1a2b_3c4du32.to_le_bytes())?;
                w.put(&1u16.to_le_bytes())?;
                w.put(&0u16.to_le_bytes())?;
                w.put(&(-1i64).to_le_bytes())?; // section length unknown
                w.put(&28u32.to_le_bytes())?;
                // Interface Description Block: if_tsresol = 9 (ns), end of options.
                w.put(&1u32.to_le_bytes())?;
                w.put(&32u32.to_le_bytes())?;
                w.put(&(link_type as u16).to_le_bytes())?;
                w.put(&0u16.to_le_bytes())?;
                w.put(&SNAPLEN.to_le_bytes())?;
                w.put(&9u16.to_le_bytes())?;
                w.put(&1u16.to_le_bytes())?;
                w.put(&[9, 0, 0, 0])?;
                w.put(&0u32.to_le_bytes())?; // opt_endofopt
                w.put(&32u32.to_le_bytes())?;
            }
        }
        Ok(w)
    }

    fn put(&mut self, b: &[u8]) -> std::io::Result<()> {
        self.bytes += b.len() as u64;
        self.out.write_all(b)
    }

    /// One frame captured whole at `ts_ns` (nanoseconds since the epoch).
    pub fn frame(&mut self, ts_ns: i64, data: &[u8]) -> std::io::Result<()> {
        let len = data.len() as u32;
        self.frames += 1;
        match self.format {
            Format::Pcap => {
                let secs = ts_ns.div_euclid(1_000_000_000) as u32;
                let nanos = ts_ns.rem_euclid(1_000_000_000) as u32;
                for v in [secs, nanos, len, len] {
                    self.put(&v.to_le_bytes())?;
                }
                self.put(data)
            }
            Format::Pcapng => {
                let padded = data.len().next_multiple_of(4);
                let total = 32 + padded as u32;
                let ts = ts_ns as u64;
                for v in [6, total, 0, (ts >> 32) as u32, ts as u32, len, len] {
                    self.put(&v.to_le_bytes())?;
                }
                self.put(data)?;
                self.put(&[0u8; 3][..padded - data.len()])?;
                self.put(&total.to_le_bytes())
            }
        }
    }

    /// Flushes and syncs the file (a regular file: OUT may be a named pipe,
    /// for captures larger than the disk); returns (bytes, frames).
    pub fn finish(self) -> std::io::Result<(u64, u64)> {
        let (bytes, frames) = (self.bytes, self.frames);
        let file = self.out.into_inner().map_err(|e| e.into_error())?;
        if file.metadata()?.is_file() {
            file.sync_all()?;
        }
        Ok((bytes, frames))
    }
}
