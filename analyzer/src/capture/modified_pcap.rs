//! The "modified" pcap format of patched libpcap builds (Alexey
//! Kuznetsov's, on some Linux distributions in the 2000s; Wireshark's
//! `modpcap`, `editcap -F modpcap`): the classic file header with magic
//! 0xa1b2cd34, and a record header of 24 bytes — the classic 16 (seconds,
//! microseconds, captured and original length) followed by the interface
//! index (4), protocol (2), packet type (1) and padding (1). tshark reads
//! it, so the analyzer does: the stream is rewritten on the fly into the
//! classic format, which the pcap reader then reads (the extra fields are
//! not used).

use std::io::{self, Read};

/// The modified format's magic as it appears in little- and big-endian
/// files.
pub(super) const MAGICS: [[u8; 4]; 2] = [[0x34, 0xcd, 0xb2, 0xa1], [0xa1, 0xb2, 0xcd, 0x34]];
/// The classic microsecond magic in the same two byte orders.
const CLASSIC: [[u8; 4]; 2] = [[0xd4, 0xc3, 0xb2, 0xa1], [0xa1, 0xb2, 0xc3, 0xd4]];
const FILE_HEADER_LEN: usize = 24;
const RECORD_HEADER_LEN: usize = 24;
const CLASSIC_RECORD_HEADER_LEN: usize = 16;

pub(super) fn is_modified(head: &[u8]) -> bool {
    head.len() >= 4 && MAGICS.iter().any(|m| head[..4] == m[..])
}

enum State {
    FileHeader,
    RecordHeader,
    /// Bytes of the current record's data still to pass on.
    Body(u64),
    /// A record header cut short by the end of the input: what there was
    /// has been passed on, and the classic reader reports the truncation.
    Ended,
}

/// Reads a modified pcap stream as a classic one.
pub(super) struct ModifiedPcap<R> {
    inner: R,
    big_endian: bool,
    state: State,
    pending: Vec<u8>,
    at: usize,
}

impl<R: Read> ModifiedPcap<R> {
    pub(super) fn new(inner: R) -> Self {
        ModifiedPcap {
            inner,
            big_endian: false,
            state: State::FileHeader,
            pending: Vec::with_capacity(FILE_HEADER_LEN),
            at: 0,
        }
    }

    /// Reads as much of `buf` as the input holds (less only at its end).
    fn read_full(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut n = 0;
        while n < buf.len() {
            match self.inner.read(&mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(n)
    }
}

impl<R: Read> Read for ModifiedPcap<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.at < self.pending.len() {
                let n = (self.pending.len() - self.at).min(buf.len());
                buf[..n].copy_from_slice(&self.pending[self.at..self.at + n]);
                self.at += n;
                return Ok(n);
            }
            self.pending.clear();
            self.at = 0;
            match self.state {
                State::FileHeader => {
                    let mut header = [0u8; FILE_HEADER_LEN];
                    let n = self.read_full(&mut header)?;
                    self.big_endian = header[..4] == MAGICS[1];
                    if n >= 4 {
                        header[..4].copy_from_slice(&CLASSIC[usize::from(self.big_endian)]);
                    }
                    self.pending.extend_from_slice(&header[..n]);
                    self.state = if n == FILE_HEADER_LEN {
                        State::RecordHeader
                    } else {
                        State::Ended
                    };
                }
                State::RecordHeader => {
                    let mut header = [0u8; RECORD_HEADER_LEN];
                    let n = self.read_full(&mut header)?;
                    if n == 0 {
                        return Ok(0);
                    }
                    if n < RECORD_HEADER_LEN {
                        self.pending
                            .extend_from_slice(&header[..n.min(CLASSIC_RECORD_HEADER_LEN)]);
                        self.state = State::Ended;
                        continue;
                    }
                    let captured = [header[8], header[9], header[10], header[11]];
                    let captured = if self.big_endian {
                        u32::from_be_bytes(captured)
                    } else {
                        u32::from_le_bytes(captured)
                    };
                    self.pending
                        .extend_from_slice(&header[..CLASSIC_RECORD_HEADER_LEN]);
                    self.state = State::Body(u64::from(captured));
                }
                State::Body(0) => self.state = State::RecordHeader,
                State::Body(left) => {
                    let want = usize::try_from(left).unwrap_or(usize::MAX).min(buf.len());
                    let n = self.inner.read(&mut buf[..want])?;
                    if n == 0 {
                        self.state = State::Ended;
                        return Ok(0);
                    }
                    self.state = State::Body(left - n as u64);
                    return Ok(n);
                }
                State::Ended => return Ok(0),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_lose_their_eight_extra_header_bytes() {
        // File header (little-endian, modified magic), one record of 3
        // bytes with the 8 extra bytes, then a record header cut short.
        let mut file = vec![0x34, 0xcd, 0xb2, 0xa1];
        file.extend_from_slice(&[2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0]);
        let record = [1u32, 2, 3, 3];
        for v in record {
            file.extend_from_slice(&v.to_le_bytes());
        }
        file.extend_from_slice(&[9, 0, 0, 0, 8, 0, 4, 0]);
        file.extend_from_slice(b"abc");
        file.extend_from_slice(&[7, 7, 7]);
        let mut out = Vec::new();
        ModifiedPcap::new(&file[..])
            .read_to_end(&mut out)
            .expect("in memory");
        let mut want = vec![0xd4, 0xc3, 0xb2, 0xa1];
        want.extend_from_slice(&file[4..24]);
        for v in record {
            want.extend_from_slice(&v.to_le_bytes());
        }
        want.extend_from_slice(b"abc");
        want.extend_from_slice(&[7, 7, 7]);
        assert_eq!(out, want);
    }
}
