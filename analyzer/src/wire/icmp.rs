//! ICMP (RFC 792) and ICMPv6 (RFC 4443) error messages, which quote the
//! start of the datagram that caused them.

use super::{Error, Result};

mod field {
    pub const TYPE: usize = 0;
    pub const CODE: usize = 1;
    /// Type, code, checksum and the 4-byte "unused/MTU/pointer" word.
    pub const QUOTE: usize = 8;
}

/// ICMPv4 error types that carry a quoted datagram.
pub mod v4_type {
    /// Destination Unreachable (RFC 792).
    pub const DEST_UNREACHABLE: u8 = 3;
    /// Source Quench (RFC 792, deprecated by RFC 6633).
    pub const SOURCE_QUENCH: u8 = 4;
    /// Time Exceeded (RFC 792).
    pub const TIME_EXCEEDED: u8 = 11;
    /// Parameter Problem (RFC 792).
    pub const PARAMETER_PROBLEM: u8 = 12;
}

/// ICMPv6 error types (RFC 4443 §3): all values below 128.
pub const V6_ERROR_MAX: u8 = 127;

/// An ICMP or ICMPv6 message over a byte buffer, read field by field.
#[derive(Debug, Clone, Copy)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps `buffer`, checking it holds the 8-byte header before the quote.
    pub fn new_checked(buffer: T) -> Result<Self> {
        if buffer.as_ref().len() < field::QUOTE {
            return Err(Error::Truncated);
        }
        Ok(Packet { buffer })
    }
    /// The message type.
    pub fn msg_type(&self) -> u8 {
        self.buffer.as_ref()[field::TYPE]
    }
    /// The message code.
    pub fn code(&self) -> u8 {
        self.buffer.as_ref()[field::CODE]
    }
    /// Whether this is an ICMPv4 error that quotes a datagram.
    pub fn is_v4_error(&self) -> bool {
        matches!(
            self.msg_type(),
            v4_type::DEST_UNREACHABLE
                | v4_type::SOURCE_QUENCH
                | v4_type::TIME_EXCEEDED
                | v4_type::PARAMETER_PROBLEM
        )
    }
    /// Whether this is an ICMPv6 error that quotes a datagram.
    pub fn is_v6_error(&self) -> bool {
        self.msg_type() <= V6_ERROR_MAX
    }
}

impl<'a> Packet<&'a [u8]> {
    /// The quoted datagram (an IP header and the start of its payload).
    pub fn quoted(&self) -> &'a [u8] {
        &self.buffer[field::QUOTE..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreachable_quote() {
        let bytes = [3, 1, 0, 0, 0, 0, 0, 0, 0x45];
        let p = Packet::new_checked(&bytes[..]).unwrap();
        assert!(p.is_v4_error());
        assert_eq!(p.code(), 1);
        assert_eq!(p.quoted(), &[0x45][..]);
        assert_eq!(
            Packet::new_checked(&bytes[..7]).err(),
            Some(Error::Truncated)
        );
    }
}
