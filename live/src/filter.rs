//! Capture filters in libpcap's syntax (`--filter 'sctp port 3868'`),
//! compiled by libpcap for each link type a file holds and run with
//! `pcap_offline_filter` on every frame with its captured and original
//! lengths — what `tcpdump -r FILE EXPR` does.

use pcap::{BpfInstruction, BpfProgram, Capture, Linktype};
use sctp_handover::analysis::{FrameFilter, FrameMatcher};
use std::collections::HashMap;

/// A checked filter expression; each analysed file gets its own matcher.
#[derive(Debug, Clone)]
pub struct BpfFilter {
    expression: String,
}

/// A filter expression libpcap does not compile.
#[derive(Debug)]
pub struct FilterError {
    /// The expression as given.
    pub expression: String,
    /// libpcap's message (`unknown port 'banana'`).
    pub reason: String,
}

impl std::fmt::Display for FilterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "filter `{}`: {}", self.expression, self.reason)
    }
}

impl std::error::Error for FilterError {}

/// libpcap opens handles by DLT value; files carry LINKTYPE values, equal
/// to it except a few historical ones (libpcap's `linktype_to_dlt`).
fn dlt_of(link_type: u32) -> u32 {
    match link_type {
        100 => 11, // LINKTYPE_ATM_RFC1483 → DLT_ATM_RFC1483
        101 => 12, // LINKTYPE_RAW → DLT_RAW
        other => other,
    }
}

fn compile(expression: &str, link_type: u32) -> Result<BpfProgram, String> {
    let link = i32::try_from(dlt_of(link_type)).map_err(|_| format!("link type {link_type}"))?;
    let dead = Capture::dead(Linktype(link)).map_err(|e| e.to_string())?;
    dead.compile(expression, true).map_err(|e| {
        // libpcap's message, without the binding's prefix.
        e.to_string()
            .trim_start_matches("libpcap error: ")
            .to_string()
    })
}

impl BpfFilter {
    /// Checks the expression (compiled for Ethernet, as tcpdump would for
    /// an Ethernet capture), before any file is read.
    pub fn new(expression: &str) -> Result<Self, FilterError> {
        compile(expression, 1).map_err(|reason| FilterError {
            expression: expression.to_string(),
            reason,
        })?;
        Ok(BpfFilter {
            expression: expression.to_string(),
        })
    }

    /// The expression as given.
    pub fn expression(&self) -> &str {
        &self.expression
    }
}

impl FrameFilter for BpfFilter {
    fn matcher(&self) -> Box<dyn FrameMatcher> {
        Box::new(Matcher {
            expression: self.expression.clone(),
            programs: HashMap::new(),
        })
    }
}

/// Programs compiled per link type, as frames of each type come.
struct Matcher {
    expression: String,
    programs: HashMap<u32, Result<BpfProgram, String>>,
}

/// `struct bpf_program` as libpcap declares it.
#[repr(C)]
struct RawProgram {
    bf_len: libc::c_uint,
    bf_insns: *const BpfInstruction,
}

/// `struct pcap_pkthdr` as libpcap declares it.
#[repr(C)]
struct RawHeader {
    ts: libc::timeval,
    caplen: u32,
    len: u32,
}

extern "C" {
    // libpcap, linked by the `pcap` crate. The binding's own
    // `BpfProgram::filter` passes the captured length as the original one,
    // which changes `len`/`greater`/`less` on snaplen-cut frames; this
    // passes both, as tcpdump does.
    fn pcap_offline_filter(
        program: *const RawProgram,
        header: *const RawHeader,
        packet: *const u8,
    ) -> libc::c_int;
}

impl FrameMatcher for Matcher {
    fn keep(&mut self, link_type: u32, data: &[u8], original_len: u32) -> Result<bool, String> {
        let expression = &self.expression;
        let program = self
            .programs
            .entry(link_type)
            .or_insert_with(|| compile(expression, link_type))
            .as_ref()
            .map_err(|why| {
                format!("filter `{expression}` cannot apply to link type {link_type}: {why}")
            })?;
        let instructions = program.get_instructions();
        let raw = RawProgram {
            bf_len: instructions.len() as libc::c_uint,
            bf_insns: instructions.as_ptr(),
        };
        let header = RawHeader {
            ts: libc::timeval {
                tv_sec: 0,
                tv_usec: 0,
            },
            caplen: data.len() as u32,
            // As recorded, even when a broken writer put a length below the
            // captured one (libpcap and tcpdump use it as is).
            len: original_len,
        };
        // SAFETY: `raw` points at the instructions `program` owns (alive
        // for this call); header and packet are valid for the call and
        // `caplen` is the packet's length, which libpcap does not read past.
        let verdict = unsafe { pcap_offline_filter(&raw, &header, data.as_ptr()) };
        Ok(verdict > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_expressions_are_named_with_libpcap_s_reason() {
        let e = BpfFilter::new("sctp port banana").expect_err("not a filter");
        let text = e.to_string();
        assert!(text.starts_with("filter `sctp port banana`: "), "{text}");
        assert!(text.len() > "filter `sctp port banana`: ".len(), "{text}");
    }

    #[test]
    fn frames_are_matched_by_their_link_type() {
        let f = BpfFilter::new("sctp").expect("valid");
        let mut m = f.matcher();
        // Raw IPv4 (LINKTYPE_RAW 101): a minimal IPv4 header, protocol 132.
        let mut ip = vec![
            0x45, 0, 0, 32, 0, 0, 0, 0, 64, 132, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ];
        ip.extend_from_slice(&[0; 12]);
        assert_eq!(m.keep(101, &ip, ip.len() as u32), Ok(true));
        ip[9] = 6; // TCP
        assert_eq!(m.keep(101, &ip, ip.len() as u32), Ok(false));
        // `greater` sees the original length of a cut frame, as tcpdump.
        let g = BpfFilter::new("greater 1000").expect("valid");
        let mut m = g.matcher();
        assert_eq!(m.keep(101, &ip, 1500), Ok(true));
        assert_eq!(m.keep(101, &ip, ip.len() as u32), Ok(false));
    }
}
