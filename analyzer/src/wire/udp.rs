//! UDP header (RFC 768), used for SCTP-over-UDP encapsulation (RFC 6951).

use super::{be16, Error, Result};

mod field {
    use crate::wire::Field;
    pub const SRC_PORT: Field = 0..2;
    pub const DST_PORT: Field = 2..4;
    pub const LENGTH: Field = 4..6;
    pub const PAYLOAD: usize = 8;
}

/// RFC 6951 §5.1: IANA-assigned UDP port for SCTP encapsulation.
pub const SCTP_TUNNELING_PORT: u16 = 9899;

/// A UDP datagram over a byte buffer, read field by field.
#[derive(Debug, Clone, Copy)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps `buffer`, checking it holds the 8-byte header.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let len = buffer.as_ref().len();
        if len < field::PAYLOAD {
            return Err(Error::Truncated);
        }
        let packet = Packet { buffer };
        if usize::from(packet.length()) < field::PAYLOAD {
            return Err(Error::Malformed("UDP length below header length"));
        }
        Ok(packet)
    }
    /// The source port.
    pub fn src_port(&self) -> u16 {
        be16(self.buffer.as_ref(), field::SRC_PORT.start)
    }
    /// The destination port.
    pub fn dst_port(&self) -> u16 {
        be16(self.buffer.as_ref(), field::DST_PORT.start)
    }
    /// The length field in bytes (header and payload) as stated.
    pub fn length(&self) -> u16 {
        be16(self.buffer.as_ref(), field::LENGTH.start)
    }
}

impl<'a> Packet<&'a [u8]> {
    /// The payload, bounded by the length field and the buffer.
    pub fn payload(&self) -> &'a [u8] {
        let end = usize::from(self.length()).min(self.buffer.len());
        &self.buffer[field::PAYLOAD..end]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encapsulated_payload() {
        let bytes = [
            0x26, 0xab, 0x26, 0xab, 0x00, 0x0a, 0x00, 0x00, 0xaa, 0xbb, 0xcc,
        ];
        let p = Packet::new_checked(&bytes[..]).unwrap();
        assert_eq!(p.src_port(), SCTP_TUNNELING_PORT);
        assert_eq!(p.payload(), &[0xaa, 0xbb][..]);
        assert!(Packet::new_checked(&bytes[..7]).is_err());
    }
}
