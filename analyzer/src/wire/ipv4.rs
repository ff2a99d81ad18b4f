//! IPv4 header (RFC 791), options skipped via IHL.

use super::{be16, Error, Result};
use std::net::Ipv4Addr;

mod field {
    use crate::wire::Field;
    pub const VER_IHL: usize = 0;
    pub const TOTAL_LEN: Field = 2..4;
    pub const IDENT: Field = 4..6;
    pub const FLAGS_FRAG: Field = 6..8;
    pub const TTL: usize = 8;
    pub const PROTOCOL: usize = 9;
    pub const SRC_ADDR: Field = 12..16;
    pub const DST_ADDR: Field = 16..20;
    pub const MIN_HEADER_LEN: usize = 20;
}

/// "More fragments" flag in the flags/fragment-offset word (RFC 791 §3.1).
const MORE_FRAGMENTS: u16 = 0x2000;
const FRAGMENT_OFFSET_MASK: u16 = 0x1fff;

/// An IPv4 packet over a byte buffer, read field by field.
#[derive(Debug, Clone, Copy)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Checks version, header length and total length against the buffer.
    /// A buffer longer than the total length (Ethernet padding) is allowed.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let data = buffer.as_ref();
        if data.len() < field::MIN_HEADER_LEN {
            return Err(Error::Truncated);
        }
        let packet = Packet { buffer };
        if packet.version() != 4 {
            return Err(Error::Malformed("IPv4 version field is not 4"));
        }
        let header_len = packet.header_len();
        if header_len < field::MIN_HEADER_LEN {
            return Err(Error::Malformed("IPv4 header length below 20 bytes"));
        }
        if usize::from(packet.total_len()) < header_len {
            return Err(Error::Malformed("IPv4 total length below header length"));
        }
        if packet.buffer.as_ref().len() < header_len {
            return Err(Error::Truncated);
        }
        Ok(packet)
    }

    /// The version field (4 for a valid packet).
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VER_IHL] >> 4
    }
    /// The header length in bytes (IHL × 4).
    pub fn header_len(&self) -> usize {
        usize::from(self.buffer.as_ref()[field::VER_IHL] & 0x0f) * 4
    }
    /// The total length in bytes (header and payload) as stated.
    pub fn total_len(&self) -> u16 {
        be16(self.buffer.as_ref(), field::TOTAL_LEN.start)
    }
    /// The identification field, shared by a datagram's fragments.
    pub fn ident(&self) -> u16 {
        be16(self.buffer.as_ref(), field::IDENT.start)
    }
    /// The More Fragments flag.
    pub fn more_fragments(&self) -> bool {
        be16(self.buffer.as_ref(), field::FLAGS_FRAG.start) & MORE_FRAGMENTS != 0
    }
    /// Fragment offset in bytes.
    pub fn fragment_offset(&self) -> usize {
        usize::from(be16(self.buffer.as_ref(), field::FLAGS_FRAG.start) & FRAGMENT_OFFSET_MASK) * 8
    }
    /// Whether this is a fragment (More Fragments set or a non-zero offset).
    pub fn is_fragment(&self) -> bool {
        self.more_fragments() || self.fragment_offset() != 0
    }
    /// The time to live.
    pub fn ttl(&self) -> u8 {
        self.buffer.as_ref()[field::TTL]
    }
    /// The protocol number of the payload ([`crate::wire::ip_protocol`]).
    pub fn protocol(&self) -> u8 {
        self.buffer.as_ref()[field::PROTOCOL]
    }
    /// The source address.
    pub fn src_addr(&self) -> Ipv4Addr {
        let d = &self.buffer.as_ref()[field::SRC_ADDR];
        Ipv4Addr::new(d[0], d[1], d[2], d[3])
    }
    /// The destination address.
    pub fn dst_addr(&self) -> Ipv4Addr {
        let d = &self.buffer.as_ref()[field::DST_ADDR];
        Ipv4Addr::new(d[0], d[1], d[2], d[3])
    }
}

impl<'a> Packet<&'a [u8]> {
    /// The payload as captured: up to the total length, or less when the
    /// capture was cut short. The second value says whether it was cut.
    pub fn payload(&self) -> (&'a [u8], bool) {
        let end = usize::from(self.total_len());
        let start = self.header_len();
        if self.buffer.len() < end {
            (&self.buffer[start..], true)
        } else {
            (&self.buffer[start..end], false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // 24-byte header (one 4-byte option), 4 bytes of payload, 2 bytes of
    // Ethernet padding after the datagram.
    const WITH_OPTION: [u8; 30] = [
        0x46, 0x00, 0x00, 0x1c, 0x12, 0x34, 0x20, 0x03, 0x40, 0x84, 0x00, 0x00, 10, 0, 0, 1, 10, 0,
        0, 2, 0x01, 0x01, 0x00, 0x00, 0xde, 0xad, 0xbe, 0xef, 0xff, 0xff,
    ];

    #[test]
    fn options_and_fragment_fields() {
        let p = Packet::new_checked(&WITH_OPTION[..]).unwrap();
        assert_eq!(p.header_len(), 24);
        assert_eq!(p.protocol(), 132);
        assert_eq!(p.src_addr(), Ipv4Addr::new(10, 0, 0, 1));
        assert_eq!(p.dst_addr(), Ipv4Addr::new(10, 0, 0, 2));
        assert_eq!(p.ident(), 0x1234);
        assert!(p.more_fragments());
        assert_eq!(p.fragment_offset(), 24);
        assert_eq!(p.payload(), (&[0xde, 0xad, 0xbe, 0xef][..], false));
    }

    #[test]
    fn cut_payload_and_bad_headers() {
        let p = Packet::new_checked(&WITH_OPTION[..26]).unwrap();
        assert_eq!(p.payload(), (&[0xde, 0xad][..], true));
        assert_eq!(
            Packet::new_checked(&WITH_OPTION[..19]).err(),
            Some(Error::Truncated)
        );
        let mut v6 = WITH_OPTION;
        v6[0] = 0x66;
        assert!(matches!(
            Packet::new_checked(&v6[..]),
            Err(Error::Malformed(_))
        ));
    }
}
