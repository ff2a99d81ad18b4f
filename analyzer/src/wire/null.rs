//! BSD loopback encapsulation (DLT_NULL 0 in host byte order, DLT_LOOP 108
//! in network byte order): a 4-byte address family before the IP packet.

use super::{be32, le32, Error, Result};

mod field {
    use crate::wire::Field;
    pub const FAMILY: Field = 0..4;
    pub const PAYLOAD: usize = 4;
}

/// Address family values that mean IPv4 / IPv6 on the BSDs, macOS and Linux.
pub const AF_INET: u32 = 2;
/// The address family values that mean IPv6: Linux, the BSDs (24), FreeBSD
/// (28) and macOS (30) number AF_INET6 differently.
pub const AF_INET6_VALUES: [u32; 4] = [10, 24, 28, 30];

/// A BSD loopback (DLT_NULL / LOOP) header over a byte buffer.
#[derive(Debug, Clone, Copy)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps `buffer`, checking it holds the 4-byte address family.
    pub fn new_checked(buffer: T) -> Result<Self> {
        if buffer.as_ref().len() < field::PAYLOAD {
            return Err(Error::Truncated);
        }
        Ok(Packet { buffer })
    }

    /// The family as written by the capturing host. DLT_NULL stores it in
    /// the capturing host's byte order, so both orders are tried: the one
    /// whose value is small is right.
    pub fn family(&self) -> u32 {
        let data = self.buffer.as_ref();
        let le = le32(data, field::FAMILY.start);
        if le <= 0xffff {
            le
        } else {
            be32(data, field::FAMILY.start)
        }
    }
}

impl<'a> Packet<&'a [u8]> {
    /// The bytes after the header.
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer[field::PAYLOAD..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_byte_orders() {
        let le = [2, 0, 0, 0, 0x45];
        let be = [0, 0, 0, 30, 0x60];
        assert_eq!(Packet::new_checked(&le[..]).unwrap().family(), AF_INET);
        assert_eq!(Packet::new_checked(&be[..]).unwrap().family(), 30);
        assert_eq!(Packet::new_checked(&be[..]).unwrap().payload(), &[0x60][..]);
    }
}
