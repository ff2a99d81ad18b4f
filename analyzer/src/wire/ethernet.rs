//! Ethernet II frames with any number of 802.1Q / 802.1ad VLAN tags.

use super::{be16, ethertype, Error, Result};

mod field {
    use crate::wire::Field;
    pub const DESTINATION: Field = 0..6;
    pub const SOURCE: Field = 6..12;
    pub const ETHERTYPE: Field = 12..14;
    pub const PAYLOAD: usize = 14;
    /// A VLAN tag is 4 bytes: TCI (2) and the inner EtherType (2).
    pub const VLAN_TAG_LEN: usize = 4;
}

/// Upper bound on stacked VLAN tags; more than this is treated as malformed.
const MAX_VLAN_TAGS: usize = 4;

/// An Ethernet II frame over a byte buffer, read field by field.
#[derive(Debug, Clone, Copy)]
pub struct Frame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Frame<T> {
    /// Wraps `buffer`, checking it holds the 14-byte header.
    pub fn new_checked(buffer: T) -> Result<Self> {
        if buffer.as_ref().len() < field::PAYLOAD {
            return Err(Error::Truncated);
        }
        Ok(Frame { buffer })
    }

    /// The destination MAC address.
    pub fn destination(&self) -> [u8; 6] {
        let mut mac = [0; 6];
        mac.copy_from_slice(&self.buffer.as_ref()[field::DESTINATION]);
        mac
    }

    /// The source MAC address.
    pub fn source(&self) -> [u8; 6] {
        let mut mac = [0; 6];
        mac.copy_from_slice(&self.buffer.as_ref()[field::SOURCE]);
        mac
    }

    /// The outermost EtherType (may be a VLAN TPID).
    pub fn ethertype(&self) -> u16 {
        be16(self.buffer.as_ref(), field::ETHERTYPE.start)
    }

    /// Skips VLAN tags and returns `(inner ethertype, number of tags, payload offset)`.
    pub fn inner(&self) -> Result<(u16, usize, usize)> {
        let data = self.buffer.as_ref();
        let (ethertype, tags, rest) = skip_vlan_tags(self.ethertype(), &data[field::PAYLOAD..])?;
        Ok((ethertype, tags, data.len() - rest.len()))
    }
}

/// Skips the VLAN tags (802.1Q / 802.1ad) at the start of `payload`, whose
/// EtherType is `ethertype`: returns `(inner ethertype, number of tags,
/// payload after the tags)`. Also used behind Linux cooked headers, whose
/// protocol field can be a VLAN TPID with the tag in the payload.
pub fn skip_vlan_tags(mut ethertype: u16, mut payload: &[u8]) -> Result<(u16, usize, &[u8])> {
    let mut tags = 0;
    while matches!(
        ethertype,
        ethertype::VLAN | ethertype::QINQ | ethertype::QINQ_LEGACY
    ) {
        if tags == MAX_VLAN_TAGS {
            return Err(Error::Malformed("too many stacked VLAN tags"));
        }
        if payload.len() < field::VLAN_TAG_LEN {
            return Err(Error::Truncated);
        }
        ethertype = be16(payload, 2);
        payload = &payload[field::VLAN_TAG_LEN..];
        tags += 1;
    }
    Ok((ethertype, tags, payload))
}

impl<'a> Frame<&'a [u8]> {
    /// The network-layer payload after all VLAN tags, with its EtherType.
    pub fn payload(&self) -> Result<(u16, &'a [u8])> {
        let (ethertype, _, offset) = self.inner()?;
        Ok((ethertype, &self.buffer[offset..]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untagged_ipv4() {
        let bytes = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0x08, 0x00, 0x45, 0x00];
        let frame = Frame::new_checked(&bytes[..]).unwrap();
        assert_eq!(frame.source(), [6, 7, 8, 9, 10, 11]);
        assert_eq!(frame.payload().unwrap(), (0x0800, &[0x45, 0x00][..]));
    }

    #[test]
    fn qinq_then_dot1q() {
        let bytes = [
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x88, 0xa8, 0x00, 0x64, 0x81, 0x00, 0x00, 0x0a,
            0x86, 0xdd, 0x60,
        ];
        let frame = Frame::new_checked(&bytes[..]).unwrap();
        assert_eq!(frame.inner().unwrap(), (0x86dd, 2, 22));
        assert_eq!(frame.payload().unwrap().1, &[0x60][..]);
    }

    #[test]
    fn truncated_tag_is_rejected() {
        let bytes = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x81, 0x00, 0x00];
        let frame = Frame::new_checked(&bytes[..]).unwrap();
        assert_eq!(frame.inner(), Err(Error::Truncated));
        assert!(Frame::new_checked(&bytes[..13]).is_err());
    }

    #[test]
    fn vlan_tags_skipped_without_an_ethernet_header() {
        let payload = [0x00, 0x0a, 0x08, 0x00, 0x45];
        assert_eq!(
            skip_vlan_tags(0x8100, &payload[..]),
            Ok((0x0800, 1, &[0x45][..]))
        );
        assert_eq!(
            skip_vlan_tags(0x0800, &payload[..]),
            Ok((0x0800, 0, &payload[..]))
        );
        assert_eq!(skip_vlan_tags(0x8100, &payload[..3]), Err(Error::Truncated));
    }
}
