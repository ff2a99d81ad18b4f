//! Linux "cooked" capture headers: SLL (DLT_LINUX_SLL, 113) and SLL2
//! (DLT_LINUX_SLL2, 276), written by `tcpdump -i any`.

use super::{be16, be32, Error, Result};

/// SLL v1 header (16 bytes): packet type, ARPHRD type, address length,
/// 8 address bytes, protocol.
mod field_v1 {
    use crate::wire::Field;
    pub const PACKET_TYPE: Field = 0..2;
    pub const HATYPE: Field = 2..4;
    pub const PROTOCOL: Field = 14..16;
    pub const PAYLOAD: usize = 16;
}

/// SLL v2 header (20 bytes): protocol, reserved, interface index, ARPHRD
/// type, packet type, address length, 8 address bytes.
mod field_v2 {
    use crate::wire::Field;
    pub const PROTOCOL: Field = 0..2;
    pub const INTERFACE_INDEX: Field = 4..8;
    pub const HATYPE: Field = 8..10;
    pub const PACKET_TYPE: usize = 10;
    pub const PAYLOAD: usize = 20;
}

/// `sll_pkttype` value for a packet this host sent (linux/if_packet.h).
pub const PACKET_OUTGOING: u16 = 4;

/// A Linux cooked capture v1 header over a byte buffer.
#[derive(Debug, Clone, Copy)]
pub struct SllPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> SllPacket<T> {
    /// Wraps `buffer`, checking it holds the 16-byte header.
    pub fn new_checked(buffer: T) -> Result<Self> {
        if buffer.as_ref().len() < field_v1::PAYLOAD {
            return Err(Error::Truncated);
        }
        Ok(SllPacket { buffer })
    }
    /// `sll_pkttype`: to us, broadcast, multicast, to another host, or sent
    /// by us ([`PACKET_OUTGOING`]).
    pub fn packet_type(&self) -> u16 {
        be16(self.buffer.as_ref(), field_v1::PACKET_TYPE.start)
    }
    /// The ARPHRD_* type of the interface.
    pub fn hatype(&self) -> u16 {
        be16(self.buffer.as_ref(), field_v1::HATYPE.start)
    }
    /// The EtherType of the payload.
    pub fn protocol(&self) -> u16 {
        be16(self.buffer.as_ref(), field_v1::PROTOCOL.start)
    }
}

impl<'a> SllPacket<&'a [u8]> {
    /// The bytes after the header.
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer[field_v1::PAYLOAD..]
    }
}

/// A Linux cooked capture v2 header over a byte buffer.
#[derive(Debug, Clone, Copy)]
pub struct Sll2Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Sll2Packet<T> {
    /// Wraps `buffer`, checking it holds the 20-byte header.
    pub fn new_checked(buffer: T) -> Result<Self> {
        if buffer.as_ref().len() < field_v2::PAYLOAD {
            return Err(Error::Truncated);
        }
        Ok(Sll2Packet { buffer })
    }
    /// The EtherType of the payload.
    pub fn protocol(&self) -> u16 {
        be16(self.buffer.as_ref(), field_v2::PROTOCOL.start)
    }
    /// The index of the interface the packet was captured on.
    pub fn interface_index(&self) -> u32 {
        be32(self.buffer.as_ref(), field_v2::INTERFACE_INDEX.start)
    }
    /// The ARPHRD_* type of the interface.
    pub fn hatype(&self) -> u16 {
        be16(self.buffer.as_ref(), field_v2::HATYPE.start)
    }
    /// `sll_pkttype`, as in [`SllPacket::packet_type`].
    pub fn packet_type(&self) -> u8 {
        self.buffer.as_ref()[field_v2::PACKET_TYPE]
    }
}

impl<'a> Sll2Packet<&'a [u8]> {
    /// The bytes after the header.
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer[field_v2::PAYLOAD..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sll2_fields() {
        let bytes = [
            0x08, 0x00, 0, 0, 0, 0, 0, 3, 0x00, 0x01, 4, 6, 1, 2, 3, 4, 5, 6, 0, 0, 0x45,
        ];
        let p = Sll2Packet::new_checked(&bytes[..]).unwrap();
        assert_eq!(p.protocol(), 0x0800);
        assert_eq!(p.interface_index(), 3);
        assert_eq!(p.packet_type(), 4);
        assert_eq!(p.payload(), &[0x45][..]);
        assert!(Sll2Packet::new_checked(&bytes[..19]).is_err());
    }

    #[test]
    fn sll_fields() {
        let bytes = [0, 4, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0, 0x86, 0xdd, 0x60];
        let p = SllPacket::new_checked(&bytes[..]).unwrap();
        assert_eq!(p.packet_type(), PACKET_OUTGOING);
        assert_eq!(p.protocol(), 0x86dd);
        assert_eq!(p.payload(), &[0x60][..]);
    }
}
