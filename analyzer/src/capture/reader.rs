use super::modified_pcap::{self, ModifiedPcap};
use super::{CaptureError, Frame};
use crate::time::{Timestamp, NANOS_PER_SEC};
use flate2::read::MultiGzDecoder;
use pcap_parser::pcapng::Block;
use pcap_parser::traits::{PcapNGPacketBlock, PcapReaderIterator};
use pcap_parser::{PcapBlockOwned, PcapError};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Initial read buffer; grown when a single record does not fit.
const INITIAL_BUFFER: usize = 1 << 20;
/// A record larger than this is treated as corruption, not grown into.
const MAX_BUFFER: usize = 256 << 20;
/// pcapng Section Header Block type (the same in either byte order).
const PCAPNG_SHB_MAGIC: [u8; 4] = [0x0a, 0x0d, 0x0d, 0x0a];
/// Block type, block length and the trailing block length.
const MIN_BLOCK_LEN: u32 = 12;
/// gzip member magic (RFC 1952 §2.3.1).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// The container a capture was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaptureFormat {
    /// pcap with microsecond timestamps.
    Pcap,
    /// pcap with nanosecond timestamps.
    PcapNanosecond,
    /// pcapng.
    Pcapng,
}

crate::names::output_names!(CaptureFormat, "capture format" {
    Pcap => "pcap",
    PcapNanosecond => "pcap_nanosecond",
    Pcapng => "pcapng",
});

/// How reading ended. `warning` is set when the file ended early or a record
/// was corrupt: everything before it was still delivered.
#[derive(Debug, Clone, Default)]
pub struct ReadOutcome {
    /// Frames delivered to the callback, numbered 1 to `frames` (custom and
    /// systemd journal records included, as Wireshark numbers them).
    pub frames: u64,
    /// Why reading stopped early (truncated or corrupt tail); None when the
    /// file ended cleanly.
    pub warning: Option<String>,
    /// pcapng blocks that are not frames (section and interface headers,
    /// statistics, name resolution); not counted in `frames`.
    pub non_packet_blocks: u64,
}

#[derive(Debug, Clone, Copy)]
struct Interface {
    link_type: u32,
    /// Timestamp units per second (10^n or 2^n from `if_tsresol`).
    units_per_sec: u64,
    offset_secs: i64,
}

/// An open capture, read frame by frame through one reusable buffer.
pub struct CaptureReader {
    path: PathBuf,
    inner: Box<dyn PcapReaderIterator + Send>,
    /// The first error of the input's own reads (file, pipe, stream).
    source_error: FirstError,
    /// The first error of the bytes the parser reads: the source's, or
    /// the gzip decoder's (a cut or corrupt stream).
    decoded_error: FirstError,
    format: CaptureFormat,
    compressed: bool,
    legacy_link_type: u32,
    interfaces: Vec<Interface>,
    /// Byte order of the current pcapng section.
    big_endian: bool,
}

type Input = Box<dyn Read + Send>;

/// The text of the first I/O error a reader met. pcap-parser turns every
/// read error into a bare `PcapError::ReadError`; this keeps its cause, and
/// tells a failed read of the input (an error of the file or stream) from
/// a gzip stream that does not decode.
type FirstError = Arc<OnceLock<String>>;

/// A reader that records its first error in a [`FirstError`].
struct Recorded<R> {
    inner: R,
    error: FirstError,
}

impl<R: Read> Read for Recorded<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            match self.inner.read(buf) {
                // A signal arrived: no failure, read again (as `read_exact` does).
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let _ = self.error.set(e.to_string());
                    return Err(e);
                }
                done => return done,
            }
        }
    }
}

/// Opens a capture, looking through gzip compression, and checks its magic.
pub fn open(path: &Path) -> Result<CaptureReader, CaptureError> {
    let file = File::open(path).map_err(|source| CaptureError::Open {
        path: path.to_owned(),
        source,
    })?;
    from_reader(path, file)
}

/// Reads a capture from any byte stream (a pipe, bytes in memory) as
/// [`open`] reads a file: through gzip compression, magic checked. `path`
/// only names the input in messages and reports.
pub fn from_reader(
    path: &Path,
    input: impl Read + Send + 'static,
) -> Result<CaptureReader, CaptureError> {
    let source_error = FirstError::default();
    let mut raw = BufReader::new(Recorded {
        inner: input,
        error: source_error.clone(),
    });
    let head = raw
        .fill_buf()
        .map_err(|e| read_failed(path, e.to_string()))?;
    if head.is_empty() {
        return Err(CaptureError::Empty {
            path: path.to_owned(),
        });
    }
    let compressed = head.starts_with(&GZIP_MAGIC);
    let input: Input = if compressed {
        let mut unzipped = BufReader::new(MultiGzDecoder::new(raw));
        let head = unzipped.fill_buf().map_err(|e| match source_error.get() {
            Some(cause) => read_failed(path, cause.clone()),
            None => read_error(path, e),
        })?;
        if head.is_empty() {
            return Err(CaptureError::Empty {
                path: path.to_owned(),
            });
        }
        check_magic(path, head)?;
        if modified_pcap::is_modified(head) {
            Box::new(ModifiedPcap::new(unzipped))
        } else {
            Box::new(unzipped)
        }
    } else {
        check_magic(path, head)?;
        if modified_pcap::is_modified(head) {
            Box::new(ModifiedPcap::new(raw))
        } else {
            Box::new(raw)
        }
    };
    let decoded_error = FirstError::default();
    let input = Recorded {
        inner: input,
        error: decoded_error.clone(),
    };
    let inner = pcap_parser::create_reader(INITIAL_BUFFER, input).map_err(|e| match e {
        PcapError::HeaderNotRecognized => CaptureError::NotACapture {
            path: path.to_owned(),
            magic: "an unrecognised header".into(),
        },
        other => match source_error.get() {
            Some(cause) => read_failed(path, cause.clone()),
            None => CaptureError::Read {
                path: path.to_owned(),
                reason: format!("cannot read the file header: {other:?}"),
            },
        },
    })?;
    Ok(CaptureReader {
        path: path.to_owned(),
        inner,
        source_error,
        decoded_error,
        format: CaptureFormat::Pcap,
        compressed,
        legacy_link_type: 0,
        interfaces: Vec::new(),
        big_endian: false,
    })
}

fn read_error(path: &Path, e: std::io::Error) -> CaptureError {
    CaptureError::Read {
        path: path.to_owned(),
        reason: e.to_string(),
    }
}

/// The input's own read failed with `cause`.
fn read_failed(path: &Path, cause: String) -> CaptureError {
    CaptureError::ReadFailed {
        path: path.to_owned(),
        reason: cause,
    }
}

/// pcap magics in both byte orders (µs and ns) and the pcapng SHB type.
const CAPTURE_MAGICS: [[u8; 4]; 5] = [
    [0xd4, 0xc3, 0xb2, 0xa1],
    [0xa1, 0xb2, 0xc3, 0xd4],
    [0x4d, 0x3c, 0xb2, 0xa1],
    [0xa1, 0xb2, 0x3c, 0x4d],
    [0x0a, 0x0d, 0x0d, 0x0a],
];

fn has_capture_magic(head: &[u8]) -> bool {
    head.len() >= 4 && CAPTURE_MAGICS.iter().any(|m| head[..4] == m[..])
        || modified_pcap::is_modified(head)
}

/// What a file's first bytes say, for finding captures among other files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sniff {
    /// pcap or pcapng, possibly gzip-compressed.
    Capture,
    /// The input holds no bytes.
    Empty,
    /// Something else; the first bytes as hex.
    Other(String),
}

/// Reads at most the first few bytes (decompressing a gzip header's
/// first block) to tell captures from other files by magic number.
pub fn sniff(path: &Path) -> std::io::Result<Sniff> {
    sniff_reader(File::open(path)?)
}

/// [`sniff`] of the first bytes of a stream (an object in object storage,
/// whose head the Python bindings fetch when they list an archive).
pub fn sniff_reader(input: impl Read) -> std::io::Result<Sniff> {
    let mut raw = BufReader::new(input);
    let head = raw.fill_buf()?;
    if head.is_empty() {
        return Ok(Sniff::Empty);
    }
    if has_capture_magic(head) {
        return Ok(Sniff::Capture);
    }
    if head.starts_with(&GZIP_MAGIC) {
        let mut first = [0u8; 4];
        let mut unzipped = MultiGzDecoder::new(raw);
        if unzipped.read_exact(&mut first).is_ok() && has_capture_magic(&first) {
            return Ok(Sniff::Capture);
        }
        return Ok(Sniff::Other("gzip of something else".into()));
    }
    let shown: Vec<String> = head.iter().take(4).map(|b| format!("{b:02x}")).collect();
    Ok(Sniff::Other(shown.join(" ")))
}

fn check_magic(path: &Path, head: &[u8]) -> Result<(), CaptureError> {
    if has_capture_magic(head) {
        return Ok(());
    }
    let shown: Vec<String> = head.iter().take(4).map(|b| format!("{b:02x}")).collect();
    let text: String = head
        .iter()
        .take(16)
        .map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                b as char
            } else {
                '.'
            }
        })
        .collect();
    Err(CaptureError::NotACapture {
        path: path.to_owned(),
        magic: format!("bytes {} \"{}\"", shown.join(" "), text),
    })
}

impl CaptureReader {
    /// The input as given to [`open`] or [`from_reader`].
    pub fn path(&self) -> &Path {
        &self.path
    }
    /// Its container format.
    pub fn format(&self) -> CaptureFormat {
        self.format
    }
    /// Whether it was gzip-compressed.
    pub fn is_compressed(&self) -> bool {
        self.compressed
    }

    /// Streams every frame to `on_frame`. Returns when the file ends; a
    /// truncated or corrupt tail ends reading with a warning instead of an
    /// error, after every complete record has been delivered. A failed
    /// read of the input itself (an I/O error of the file, pipe or stream:
    /// the capture may be whole) is the error [`CaptureError::ReadFailed`],
    /// naming its cause.
    pub fn for_each_frame(
        &mut self,
        mut on_frame: impl FnMut(Frame<'_>),
    ) -> Result<ReadOutcome, CaptureError> {
        let mut outcome = ReadOutcome::default();
        let mut buffer_size = INITIAL_BUFFER;
        let mut last_ts = Timestamp::default();
        loop {
            let offset_before = self.inner.consumed();
            if let Some(len) = self.short_pcapng_block() {
                outcome.warning = Some(format!(
                    "record {} at byte offset {offset_before} is corrupt (pcapng block length {len}, \
                     less than the {MIN_BLOCK_LEN} bytes of any block); stopped reading there",
                    outcome.frames + 1,
                ));
                return Ok(outcome);
            }
            match self.inner.next() {
                Ok((len, block)) => {
                    match block {
                        PcapBlockOwned::LegacyHeader(header) => {
                            self.legacy_link_type = header.network.0 as u32;
                            self.format = if header.is_nanosecond_precision() {
                                CaptureFormat::PcapNanosecond
                            } else {
                                CaptureFormat::Pcap
                            };
                        }
                        PcapBlockOwned::Legacy(record) => {
                            let frac = i64::from(record.ts_usec);
                            let nanos = if self.format == CaptureFormat::PcapNanosecond {
                                frac
                            } else {
                                frac * 1000
                            };
                            last_ts = Timestamp::from_parts(i64::from(record.ts_sec), nanos);
                            outcome.frames += 1;
                            on_frame(Frame {
                                number: outcome.frames,
                                timestamp: last_ts,
                                link_type: self.legacy_link_type,
                                interface: 0,
                                original_len: record.origlen,
                                data: record.data,
                            });
                        }
                        PcapBlockOwned::NG(block) => {
                            self.format = CaptureFormat::Pcapng;
                            match block {
                                Block::SectionHeader(shb) => {
                                    self.big_endian = shb.big_endian();
                                    self.interfaces.clear();
                                    outcome.non_packet_blocks += 1;
                                }
                                Block::InterfaceDescription(idb) => {
                                    self.interfaces.push(Interface {
                                        link_type: idb.linktype.0 as u32,
                                        units_per_sec: idb.ts_resolution().unwrap_or(1_000_000),
                                        offset_secs: idb.ts_offset(),
                                    });
                                    outcome.non_packet_blocks += 1;
                                }
                                Block::EnhancedPacket(epb) => {
                                    let iface = self.interfaces.get(epb.if_id as usize).copied();
                                    let (link_type, ts) = match iface {
                                        Some(i) => {
                                            (i.link_type, pcapng_time(epb.ts_high, epb.ts_low, i))
                                        }
                                        // An EPB naming an interface that was never
                                        // described: deliver it with an impossible
                                        // link type so it is counted, not lost.
                                        None => (u32::MAX, last_ts),
                                    };
                                    last_ts = ts;
                                    outcome.frames += 1;
                                    on_frame(Frame {
                                        number: outcome.frames,
                                        timestamp: ts,
                                        link_type,
                                        interface: epb.if_id,
                                        original_len: epb.orig_len(),
                                        data: epb.packet_data(),
                                    });
                                }
                                Block::SimplePacket(spb) => {
                                    // SPBs carry no timestamp or interface id
                                    // (RFC pcapng §4.4): interface 0, previous time.
                                    let link_type =
                                        self.interfaces.first().map_or(u32::MAX, |i| i.link_type);
                                    outcome.frames += 1;
                                    on_frame(Frame {
                                        number: outcome.frames,
                                        timestamp: last_ts,
                                        link_type,
                                        interface: 0,
                                        original_len: spb.orig_len(),
                                        data: spb.packet_data(),
                                    });
                                }
                                Block::Custom(_) | Block::SystemdJournalExport(_) => {
                                    outcome.frames += 1;
                                    on_frame(Frame {
                                        number: outcome.frames,
                                        timestamp: last_ts,
                                        link_type: super::link_type::NON_PACKET_RECORD,
                                        interface: 0,
                                        original_len: 0,
                                        data: &[],
                                    });
                                }
                                _ => outcome.non_packet_blocks += 1,
                            }
                        }
                    }
                    // Without the shift `consume` makes each time half the
                    // buffer was read (moving up to 2 MiB, 5 % of the run):
                    // `refill` moves only the partial record left.
                    self.inner.consume_noshift(len);
                }
                Err(PcapError::Eof) => return Ok(outcome),
                Err(PcapError::Incomplete(_)) => {
                    if self.inner.refill().is_err() {
                        return self.read_failure(outcome, offset_before);
                    }
                }
                Err(PcapError::BufferTooSmall) => {
                    buffer_size *= 2;
                    if buffer_size > MAX_BUFFER || !self.inner.grow(buffer_size) {
                        outcome.warning = Some(format!(
                            "record {} at byte offset {offset_before} claims more than {} MiB; stopped reading there",
                            outcome.frames + 1,
                            MAX_BUFFER >> 20
                        ));
                        return Ok(outcome);
                    }
                    if self.inner.refill().is_err() {
                        return self.read_failure(outcome, offset_before);
                    }
                }
                Err(PcapError::UnexpectedEof) => {
                    let partial = self.inner.data().len();
                    outcome.warning = Some(format!(
                        "file is truncated: it ends inside record {} at byte offset {offset_before}{} ({partial} bytes of a partial record ignored)",
                        outcome.frames + 1,
                        if self.compressed { " of the decompressed data" } else { "" },
                    ));
                    return Ok(outcome);
                }
                Err(PcapError::ReadError) => return self.read_failure(outcome, offset_before),
                Err(e) => {
                    outcome.warning = Some(format!(
                        "record {} at byte offset {offset_before} is corrupt ({}); stopped reading there",
                        outcome.frames + 1,
                        describe(&e)
                    ));
                    return Ok(outcome);
                }
            }
        }
    }
}

impl CaptureReader {
    /// The length of the next pcapng block when it claims fewer bytes than
    /// a block's type, length and trailing length take. pcap-parser 0.17
    /// subtracts 12 from it unchecked for a Process Information Block: a
    /// panic with overflow checks; without them a block claiming nearly
    /// 4 GiB, the read buffer grown to MAX_BUFFER unless the input ends
    /// first (then misreported as a truncated file).
    fn short_pcapng_block(&self) -> Option<u32> {
        if self.format != CaptureFormat::Pcapng {
            return None;
        }
        let head = self.inner.data().get(..8)?;
        // A section header's length is in its own byte order, and its
        // parser checks it.
        if head[..4] == PCAPNG_SHB_MAGIC {
            return None;
        }
        let len: [u8; 4] = head[4..8].try_into().ok()?;
        let len = if self.big_endian {
            u32::from_be_bytes(len)
        } else {
            u32::from_le_bytes(len)
        };
        (len < MIN_BLOCK_LEN).then_some(len)
    }

    /// A read that failed after `outcome`'s records, at `offset`. The
    /// input's own read failing (EIO, a connection reset) is an error:
    /// the capture may be whole, only its reading failed, and a partial
    /// result must not pass for what it holds. flate2 reports a cut gzip
    /// stream as an I/O error too, and that one ends the file with a
    /// warning, as a truncated capture does, rather than losing what came
    /// before.
    fn read_failure(
        &self,
        mut outcome: ReadOutcome,
        offset: usize,
    ) -> Result<ReadOutcome, CaptureError> {
        let decompressed = if self.compressed {
            " of the decompressed data"
        } else {
            ""
        };
        if let Some(cause) = self.source_error.get() {
            return Err(read_failed(
                &self.path,
                format!(
                    "{cause} (after record {} at byte offset {offset}{decompressed})",
                    outcome.frames
                ),
            ));
        }
        let cause = self.decoded_error.get().map_or("", String::as_str);
        outcome.warning = Some(format!(
            "read error after record {} at byte offset {offset}{decompressed}{}; everything before it was analysed",
            outcome.frames,
            match (self.compressed, cause.is_empty()) {
                (true, true) => " (truncated or corrupt gzip stream?)".to_string(),
                (true, false) => format!(" (truncated or corrupt gzip stream: {cause})"),
                (false, true) => String::new(),
                (false, false) => format!(" ({cause})"),
            },
        ));
        Ok(outcome)
    }
}

fn describe(e: &PcapError<&[u8]>) -> String {
    match e {
        PcapError::NomError(_, kind) => format!("parse error: {kind:?}"),
        PcapError::OwnedNomError(_, kind) => format!("parse error: {kind:?}"),
        PcapError::HeaderNotRecognized => "header not recognised".into(),
        other => format!("{other:?}"),
    }
}

fn pcapng_time(high: u32, low: u32, iface: Interface) -> Timestamp {
    let units = (u64::from(high) << 32) | u64::from(low);
    let per_sec = iface.units_per_sec.max(1);
    let secs = (units / per_sec) as i64;
    let frac = u128::from(units % per_sec) * NANOS_PER_SEC as u128 / u128::from(per_sec);
    Timestamp::from_parts(secs.saturating_add(iface.offset_secs), frac as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A sample capture: 159 800 bytes, 24 of file header, then records;
    /// record 130 starts at byte 99 960 and runs past byte 100 000.
    fn sample() -> Vec<u8> {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../sample-captures/koh-kim-2/mn.pcap");
        std::fs::read(&path).expect("the sample capture")
    }

    /// The file's reads, failing with `error` once `limit` bytes were
    /// given (an EIO of the disk, a connection reset by an object store),
    /// or ending there when `error` is None (a truncated file).
    struct FailingAfter {
        file: File,
        left: usize,
        error: Option<std::io::Error>,
    }

    impl Read for FailingAfter {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.left == 0 {
                return match self.error.take() {
                    Some(e) => Err(e),
                    None => Ok(0),
                };
            }
            let n = buf.len().min(self.left);
            let n = self.file.read(&mut buf[..n])?;
            self.left -= n;
            Ok(n)
        }
    }

    fn failing_after(path: &Path, limit: usize, error: Option<std::io::Error>) -> FailingAfter {
        FailingAfter {
            file: File::open(path).expect("open"),
            left: limit,
            error,
        }
    }

    fn frames(reader: &mut CaptureReader) -> (u64, Result<ReadOutcome, CaptureError>) {
        let mut delivered = 0;
        let outcome = reader.for_each_frame(|_| delivered += 1);
        (delivered, outcome)
    }

    fn temp(name: &str, bytes: &[u8]) -> PathBuf {
        let path = std::env::temp_dir().join(format!("reader-{}-{name}", std::process::id()));
        std::fs::write(&path, bytes).expect("write");
        path
    }

    #[test]
    fn a_failed_read_of_the_file_is_an_error_naming_its_cause() {
        let path = temp("eio.pcap", &sample());
        let eio = std::io::Error::from_raw_os_error(5);
        let mut reader =
            from_reader(&path, failing_after(&path, 100_000, Some(eio))).expect("open");
        let (delivered, outcome) = frames(&mut reader);
        let error = outcome.expect_err("a failed read");
        assert!(error.is_read_failure(), "{error:?}");
        assert_eq!(
            error.to_string(),
            format!(
                "{}: read error: Input/output error (os error 5) (after record 129 at byte offset 99960)",
                path.display()
            )
        );
        // The records before it reached the caller, who drops them.
        assert_eq!(delivered, 129);
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_file_ending_inside_a_record_is_still_a_truncated_capture() {
        let path = temp("cut.pcap", &sample());
        let mut reader = from_reader(&path, failing_after(&path, 100_000, None)).expect("open");
        let (delivered, outcome) = frames(&mut reader);
        let outcome = outcome.expect("a truncated capture is read");
        assert_eq!((delivered, outcome.frames), (129, 129));
        assert_eq!(
            outcome.warning.as_deref(),
            Some(
                "file is truncated: it ends inside record 130 at byte offset 99960 \
                 (40 bytes of a partial record ignored)"
            )
        );
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_failed_read_at_the_start_is_a_read_failure() {
        let path = temp("eio-start.pcap", &sample());
        let eio = std::io::Error::from_raw_os_error(5);
        let error = from_reader(&path, failing_after(&path, 0, Some(eio)))
            .err()
            .expect("an error");
        assert!(error.is_read_failure(), "{error:?}");
        assert_eq!(
            error.to_string(),
            format!(
                "{}: read error: Input/output error (os error 5)",
                path.display()
            )
        );
        let _ = std::fs::remove_file(&path);
    }

    fn gzipped(bytes: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(bytes).expect("gzip");
        enc.finish().expect("gzip")
    }

    #[test]
    fn under_gzip_a_failed_read_is_an_error_and_a_cut_stream_a_warning_with_its_cause() {
        let zipped = gzipped(&sample());
        let path = temp("eio.pcap.gz", &zipped);
        let cut = zipped.len() * 2 / 3;
        let reset = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "connection reset");
        let mut reader = from_reader(&path, failing_after(&path, cut, Some(reset))).expect("open");
        let error = frames(&mut reader).1.expect_err("a failed read");
        assert!(error.is_read_failure(), "{error:?}");
        let text = error.to_string();
        assert!(
            text.starts_with(&format!(
                "{}: read error: connection reset (after record ",
                path.display()
            )),
            "{text}"
        );
        assert!(text.ends_with(" of the decompressed data)"), "{text}");

        // The stream simply ends there: a truncated gzip file, read up to
        // the cut as today, the decoder's words now given.
        let mut reader = from_reader(&path, failing_after(&path, cut, None)).expect("open");
        let (delivered, outcome) = frames(&mut reader);
        let outcome = outcome.expect("a cut gzip stream is read");
        let warning = outcome.warning.expect("a warning");
        assert!(delivered > 0 && delivered == outcome.frames);
        assert!(
            warning.contains(" of the decompressed data (truncated or corrupt gzip stream: "),
            "{warning}"
        );
        assert!(
            warning.ends_with("; everything before it was analysed"),
            "{warning}"
        );
        let _ = std::fs::remove_file(&path);
    }

    /// An interrupted read (a signal) is read again, not a failure.
    #[test]
    fn an_interrupted_read_is_retried() {
        struct Interrupting {
            data: std::io::Cursor<Vec<u8>>,
            calls: usize,
        }
        impl Read for Interrupting {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                self.calls += 1;
                if self.calls % 2 == 0 {
                    return Err(std::io::ErrorKind::Interrupted.into());
                }
                self.data.read(buf)
            }
        }
        let data = sample();
        let input = Interrupting {
            data: std::io::Cursor::new(data),
            calls: 0,
        };
        let mut reader = from_reader(Path::new("interrupted.pcap"), input).expect("open");
        let (delivered, outcome) = frames(&mut reader);
        let outcome = outcome.expect("read whole");
        assert_eq!((delivered, outcome.warning), (outcome.frames, None));
        let whole = open(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("../sample-captures/koh-kim-2/mn.pcap"),
        )
        .expect("open")
        .for_each_frame(|_| {})
        .expect("read")
        .frames;
        assert_eq!(delivered, whole);
    }
}
