//! IPv6 header (RFC 8200) and its extension-header chain.

use super::{be16, be32, Error, Result};
use std::net::Ipv6Addr;

mod field {
    use crate::wire::Field;
    pub const VERSION: usize = 0;
    pub const PAYLOAD_LEN: Field = 4..6;
    pub const NEXT_HEADER: usize = 6;
    pub const HOP_LIMIT: usize = 7;
    pub const SRC_ADDR: Field = 8..24;
    pub const DST_ADDR: Field = 24..40;
    pub const HEADER_LEN: usize = 40;
}

/// Extension header numbers (RFC 8200 §4, RFC 4302 for AH).
pub mod next_header {
    /// Hop-by-Hop Options.
    pub const HOP_BY_HOP: u8 = 0;
    /// Routing.
    pub const ROUTING: u8 = 43;
    /// Fragment.
    pub const FRAGMENT: u8 = 44;
    /// Encapsulating Security Payload (RFC 4303): opaque, the walk stops.
    pub const ESP: u8 = 50;
    /// Authentication Header (RFC 4302).
    pub const AUTH: u8 = 51;
    /// No Next Header.
    pub const NO_NEXT: u8 = 59;
    /// Destination Options.
    pub const DEST_OPTS: u8 = 60;
    /// Mobility (RFC 6275).
    pub const MOBILITY: u8 = 135;
}

/// More extension headers than this is treated as malformed.
const MAX_EXTENSION_HEADERS: usize = 16;

/// An IPv6 packet over a byte buffer, read field by field.
#[derive(Debug, Clone, Copy)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

/// The fragment header's fields (RFC 8200 §4.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FragmentInfo {
    /// The identification, shared by a datagram's fragments.
    pub ident: u32,
    /// The fragment's offset in bytes within the original datagram.
    pub offset: usize,
    /// The M flag: more fragments follow.
    pub more: bool,
}

/// Where the upper-layer header starts after walking the extension chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpperLayer {
    /// The upper-layer protocol number ([`crate::wire::ip_protocol`]).
    pub protocol: u8,
    /// Byte offset of the upper-layer header from the start of the packet.
    pub offset: usize,
    /// The fragment header's fields; None when the packet is not a fragment.
    pub fragment: Option<FragmentInfo>,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps `buffer`, checking it holds the fixed header.
    pub fn new_checked(buffer: T) -> Result<Self> {
        if buffer.as_ref().len() < field::HEADER_LEN {
            return Err(Error::Truncated);
        }
        let packet = Packet { buffer };
        if packet.version() != 6 {
            return Err(Error::Malformed("IPv6 version field is not 6"));
        }
        Ok(packet)
    }

    /// The version field (6 for a valid packet).
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VERSION] >> 4
    }
    /// The payload length in bytes (extension headers included) as stated.
    pub fn payload_len(&self) -> u16 {
        be16(self.buffer.as_ref(), field::PAYLOAD_LEN.start)
    }
    /// The first extension header or upper-layer protocol number.
    pub fn next_header(&self) -> u8 {
        self.buffer.as_ref()[field::NEXT_HEADER]
    }
    /// The hop limit.
    pub fn hop_limit(&self) -> u8 {
        self.buffer.as_ref()[field::HOP_LIMIT]
    }
    /// The source address.
    pub fn src_addr(&self) -> Ipv6Addr {
        addr(&self.buffer.as_ref()[field::SRC_ADDR])
    }
    /// The destination address.
    pub fn dst_addr(&self) -> Ipv6Addr {
        addr(&self.buffer.as_ref()[field::DST_ADDR])
    }

    /// Walks the extension-header chain to the upper-layer protocol.
    pub fn upper_layer(&self) -> Result<UpperLayer> {
        let data = self.buffer.as_ref();
        let mut protocol = self.next_header();
        let mut offset = field::HEADER_LEN;
        let mut fragment = None;
        for _ in 0..MAX_EXTENSION_HEADERS {
            match protocol {
                next_header::HOP_BY_HOP
                | next_header::ROUTING
                | next_header::DEST_OPTS
                | next_header::MOBILITY => {
                    if data.len() < offset + 2 {
                        return Err(Error::Truncated);
                    }
                    protocol = data[offset];
                    offset += (usize::from(data[offset + 1]) + 1) * 8;
                }
                next_header::AUTH => {
                    if data.len() < offset + 2 {
                        return Err(Error::Truncated);
                    }
                    protocol = data[offset];
                    offset += (usize::from(data[offset + 1]) + 2) * 4;
                }
                next_header::FRAGMENT => {
                    if data.len() < offset + 8 {
                        return Err(Error::Truncated);
                    }
                    let word = be16(data, offset + 2);
                    fragment = Some(FragmentInfo {
                        ident: be32(data, offset + 4),
                        offset: usize::from(word & 0xfff8),
                        more: word & 1 != 0,
                    });
                    protocol = data[offset];
                    offset += 8;
                }
                _ => {
                    if data.len() < offset {
                        return Err(Error::Truncated);
                    }
                    return Ok(UpperLayer {
                        protocol,
                        offset,
                        fragment,
                    });
                }
            }
        }
        Err(Error::Malformed("IPv6 extension-header chain too long"))
    }
}

impl<'a> Packet<&'a [u8]> {
    /// Bytes from `offset` to the end of the payload as captured, and whether
    /// the capture cut the datagram short.
    pub fn payload_from(&self, offset: usize) -> Result<(&'a [u8], bool)> {
        let end = field::HEADER_LEN + usize::from(self.payload_len());
        if offset > end {
            return Err(Error::Malformed(
                "IPv6 extension headers exceed payload length",
            ));
        }
        if self.buffer.len() < end {
            Ok((self.buffer.get(offset..).unwrap_or(&[]), true))
        } else {
            Ok((&self.buffer[offset..end], false))
        }
    }
}

fn addr(bytes: &[u8]) -> Ipv6Addr {
    let mut a = [0u8; 16];
    a.copy_from_slice(bytes);
    Ipv6Addr::from(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(next: u8, payload_len: u16) -> Vec<u8> {
        let mut v = vec![0x60, 0, 0, 0];
        v.extend_from_slice(&payload_len.to_be_bytes());
        v.push(next);
        v.push(64);
        v.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        v.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
        v
    }

    #[test]
    fn hop_by_hop_then_fragment_then_sctp() {
        let mut p = header(next_header::HOP_BY_HOP, 8 + 8 + 4);
        p.extend_from_slice(&[next_header::FRAGMENT, 0, 1, 4, 0, 0, 0, 0]);
        // offset 16 bytes (2 << 3), M = 1, ident 0xabcd0001
        p.extend_from_slice(&[132, 0, 0x00, 0x11, 0xab, 0xcd, 0x00, 0x01]);
        p.extend_from_slice(&[1, 2, 3, 4]);
        let packet = Packet::new_checked(&p[..]).unwrap();
        let upper = packet.upper_layer().unwrap();
        assert_eq!(upper.protocol, 132);
        assert_eq!(upper.offset, 56);
        assert_eq!(
            upper.fragment,
            Some(FragmentInfo {
                ident: 0xabcd_0001,
                offset: 16,
                more: true
            })
        );
        assert_eq!(packet.payload_from(56).unwrap(), (&[1, 2, 3, 4][..], false));
        assert_eq!(packet.src_addr().segments()[7], 1);
    }

    #[test]
    fn truncated_chain() {
        let mut p = header(next_header::ROUTING, 8);
        p.push(132);
        let packet = Packet::new_checked(&p[..]).unwrap();
        assert_eq!(packet.upper_layer(), Err(Error::Truncated));
        assert!(Packet::new_checked(&p[..39]).is_err());
    }
}
