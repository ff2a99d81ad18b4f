//! Wire formats: checked, zero-copy views over borrowed bytes.
//!
//! Every format follows the smoltcp pattern: a `Packet<T: AsRef<[u8]>>`
//! (or `Chunk`, `Param`, …) whose `new_checked` constructor rejects
//! truncated input, a `field` module of byte ranges, one accessor per field,
//! and, where a decoded meaning is useful, a plain `Repr`.

pub mod ethernet;
pub mod icmp;
pub mod ipv4;
pub mod ipv6;
pub mod linux_sll;
pub mod null;
pub mod sctp;
pub mod sctp_chunk;
pub mod sctp_param;
pub mod serial;
pub mod udp;

use std::fmt;

/// Why a view could not be built over some bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// Fewer bytes than the header or a length field requires.
    Truncated,
    /// A field holds a value the format does not allow (the reason says which).
    Malformed(&'static str),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Truncated => f.write_str("truncated"),
            Error::Malformed(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for Error {}

/// The result of reading a header from bytes.
pub type Result<T> = core::result::Result<T, Error>;

/// A byte range inside a header, as used by every `field` module.
pub type Field = core::ops::Range<usize>;

#[inline]
pub(crate) fn be16(data: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([data[at], data[at + 1]])
}

#[inline]
pub(crate) fn be32(data: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]])
}

#[inline]
pub(crate) fn le32(data: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]])
}

/// Rounds a TLV length up to the 4-byte boundary SCTP pads to (RFC 9260 §3.2).
#[inline]
pub(crate) fn pad4(len: usize) -> usize {
    (len + 3) & !3
}

/// IANA protocol numbers the decoder cares about.
pub mod ip_protocol {
    /// Internet Control Message Protocol (RFC 792).
    pub const ICMP: u8 = 1;
    /// User Datagram Protocol (RFC 768).
    pub const UDP: u8 = 17;
    /// ICMP for IPv6 (RFC 4443).
    pub const ICMPV6: u8 = 58;
    /// RFC 9260 §1: SCTP runs directly over IP with protocol number 132.
    pub const SCTP: u8 = 132;
}

/// EtherType values (IEEE 802.3 / IANA).
pub mod ethertype {
    /// IPv4.
    pub const IPV4: u16 = 0x0800;
    /// IPv6.
    pub const IPV6: u16 = 0x86dd;
    /// IEEE 802.1Q customer VLAN tag.
    pub const VLAN: u16 = 0x8100;
    /// IEEE 802.1ad service VLAN tag (QinQ outer tag).
    pub const QINQ: u16 = 0x88a8;
    /// Pre-standard QinQ outer tag still seen in the field.
    pub const QINQ_LEGACY: u16 = 0x9100;
}
