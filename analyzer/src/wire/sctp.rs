//! SCTP common header (RFC 9260 §3.1), the chunk list, and the CRC32c
//! checksum (RFC 9260 Appendix A).

use super::sctp_chunk::Chunk;
use super::{be16, be32, Error, Result};

mod field {
    use crate::wire::Field;
    pub const SRC_PORT: Field = 0..2;
    pub const DST_PORT: Field = 2..4;
    pub const VERIFICATION_TAG: Field = 4..8;
    pub const CHECKSUM: Field = 8..12;
    pub const CHUNKS: usize = 12;
}

/// Length of the SCTP common header.
pub const HEADER_LEN: usize = field::CHUNKS;

/// An SCTP packet (RFC 9260 §3.1) over a byte buffer, read field by field.
#[derive(Debug, Clone, Copy)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps `buffer`, checking it holds the 12-byte common header.
    pub fn new_checked(buffer: T) -> Result<Self> {
        if buffer.as_ref().len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        Ok(Packet { buffer })
    }
    /// The source port.
    pub fn src_port(&self) -> u16 {
        be16(self.buffer.as_ref(), field::SRC_PORT.start)
    }
    /// The destination port.
    pub fn dst_port(&self) -> u16 {
        be16(self.buffer.as_ref(), field::DST_PORT.start)
    }
    /// The verification tag.
    pub fn verification_tag(&self) -> u32 {
        be32(self.buffer.as_ref(), field::VERIFICATION_TAG.start)
    }
    /// The checksum as stored (CRC32c, transmitted little-endian-reflected;
    /// compared against [`crc32c`] in the same byte order).
    pub fn checksum(&self) -> u32 {
        let d = &self.buffer.as_ref()[field::CHECKSUM];
        u32::from_le_bytes([d[0], d[1], d[2], d[3]])
    }
    /// Computes the CRC32c over the packet with the checksum field zeroed.
    pub fn compute_checksum(&self) -> u32 {
        let data = self.buffer.as_ref();
        let crc = crc32c::crc32c(&data[..field::CHECKSUM.start]);
        let crc = crc32c::crc32c_append(crc, &[0; 4]);
        crc32c::crc32c_append(crc, &data[field::CHUNKS..])
    }
    /// Whether the stored CRC32c matches the packet's bytes.
    pub fn verify_checksum(&self) -> bool {
        self.checksum() == self.compute_checksum()
    }
}

impl<'a> Packet<&'a [u8]> {
    /// The bytes after the common header: the chunks.
    pub fn chunk_bytes(&self) -> &'a [u8] {
        &self.buffer[field::CHUNKS..]
    }
    /// Iterates the bundled chunks. A chunk whose length runs past the end of
    /// the buffer is yielded once as `Err(Truncated)`, then iteration stops.
    pub fn chunks(&self) -> Chunks<'a> {
        Chunks {
            rest: self.chunk_bytes(),
            offset: field::CHUNKS,
        }
    }
}

/// Iterator over the chunks of a packet; yields each chunk with its byte
/// offset from the start of the SCTP header.
#[derive(Debug, Clone)]
pub struct Chunks<'a> {
    rest: &'a [u8],
    offset: usize,
}

impl<'a> Iterator for Chunks<'a> {
    type Item = Result<(usize, Chunk<&'a [u8]>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        match Chunk::new_checked(self.rest) {
            Ok(chunk) => {
                let padded = chunk.padded_len().min(self.rest.len());
                let offset = self.offset;
                let (this, rest) = self.rest.split_at(padded);
                self.rest = rest;
                self.offset += padded;
                // Re-borrow only the chunk's own bytes so accessors cannot
                // read into the next chunk.
                match Chunk::new_checked(this) {
                    Ok(c) => Some(Ok((offset, c))),
                    Err(e) => Some(Err(e)),
                }
            }
            Err(e) => {
                self.rest = &[];
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::sctp_chunk::chunk_type;

    /// INIT from port 5000 to 7, tag 0, with a valid CRC32c, followed by a
    /// COOKIE-ACK (bundling is not legal with INIT, but the iterator must
    /// still walk both).
    const PACKET: [u8; 36] = [
        0x13, 0x88, 0x00, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // header
        0x01, 0x00, 0x00, 0x14, 0x11, 0x22, 0x33, 0x44, 0x00, 0x01, 0x00, 0x00, // INIT
        0x00, 0x0a, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01, // INIT cont.
        0x0b, 0x00, 0x00, 0x04, // COOKIE-ACK
    ];

    #[test]
    fn header_and_chunks() {
        let p = Packet::new_checked(&PACKET[..]).unwrap();
        assert_eq!(p.src_port(), 5000);
        assert_eq!(p.dst_port(), 7);
        assert_eq!(p.verification_tag(), 0);
        let chunks: Vec<_> = p.chunks().map(|c| c.unwrap()).collect();
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[0].0, 12);
        assert_eq!(chunks[0].1.chunk_type(), chunk_type::INIT);
        assert_eq!(chunks[1].0, 32);
        assert_eq!(chunks[1].1.chunk_type(), chunk_type::COOKIE_ACK);
    }

    #[test]
    fn checksum_round_trip() {
        let mut bytes = PACKET;
        let crc = Packet::new_checked(&bytes[..]).unwrap().compute_checksum();
        bytes[8..12].copy_from_slice(&crc.to_le_bytes());
        assert!(Packet::new_checked(&bytes[..]).unwrap().verify_checksum());
        bytes[20] ^= 1;
        assert!(!Packet::new_checked(&bytes[..]).unwrap().verify_checksum());
    }

    #[test]
    fn truncated_chunk_stops_iteration() {
        let p = Packet::new_checked(&PACKET[..30]).unwrap();
        let items: Vec<_> = p.chunks().collect();
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].as_ref().err(), Some(&Error::Truncated));
    }
}
