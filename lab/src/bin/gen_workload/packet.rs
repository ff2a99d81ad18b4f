//! A seeded random sequence and the bytes of IPv4/SCTP packets.

/// xorshift64*: a fixed sequence from the seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// A non-zero 32-bit tag.
    pub fn tag(&mut self) -> u32 {
        loop {
            let t = self.next() as u32;
            if t != 0 {
                return t;
            }
        }
    }
    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next() >> 11) * u128::from(n)) >> 53) as u64
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Exponentially distributed with the given mean.
    pub fn exp(&mut self, mean: f64) -> f64 {
        -(1.0 - self.unit()).ln() * mean
    }
}

/// Writes the CRC32c of an SCTP packet into its common header.
pub fn seal_sctp(sctp: &mut [u8]) {
    sctp[8..12].fill(0);
    let crc = crc32c::crc32c(sctp);
    sctp[8..12].copy_from_slice(&crc.to_le_bytes());
}

pub fn ipv4_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header
        .chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// An IPv4 datagram carrying one SCTP packet made of `chunks` (each a
/// whole chunk, padded here).
pub fn sctp_over_ipv4(
    src: [u8; 4],
    dst: [u8; 4],
    ports: (u16, u16),
    vtag: u32,
    chunks: &[Vec<u8>],
) -> Vec<u8> {
    let mut buf = Vec::with_capacity(96);
    let mut p = SctpPacket::begin(&mut buf, src, dst, 0, ports, vtag);
    for c in chunks {
        p.raw_chunk(c);
    }
    p.finish();
    buf
}

pub fn chunk(kind: u8, flags: u8, value: &[u8]) -> Vec<u8> {
    let mut c = vec![kind, flags];
    c.extend_from_slice(&((4 + value.len()) as u16).to_be_bytes());
    c.extend_from_slice(value);
    c
}

/// Builds an IPv4 datagram with one SCTP packet at the end of `buf`
/// (after whatever link-layer header it already holds).
pub struct SctpPacket<'a> {
    buf: &'a mut Vec<u8>,
    ip: usize,
    sctp: usize,
}

impl<'a> SctpPacket<'a> {
    pub fn begin(
        buf: &'a mut Vec<u8>,
        src: [u8; 4],
        dst: [u8; 4],
        ip_id: u16,
        ports: (u16, u16),
        vtag: u32,
    ) -> Self {
        let ip = buf.len();
        buf.extend_from_slice(&[0x45, 0, 0, 0]);
        buf.extend_from_slice(&ip_id.to_be_bytes());
        buf.extend_from_slice(&[0x40, 0, 64, 132, 0, 0]); // DF, TTL 64, SCTP
        buf.extend_from_slice(&src);
        buf.extend_from_slice(&dst);
        let sctp = buf.len();
        buf.extend_from_slice(&ports.0.to_be_bytes());
        buf.extend_from_slice(&ports.1.to_be_bytes());
        buf.extend_from_slice(&vtag.to_be_bytes());
        buf.extend_from_slice(&[0; 4]);
        SctpPacket { buf, ip, sctp }
    }

    /// A chunk whose value `value` appends; the length field excludes the
    /// final padding (RFC 9260 §3.2).
    pub fn chunk(&mut self, kind: u8, flags: u8, value: impl FnOnce(&mut Vec<u8>)) {
        let at = self.buf.len();
        self.buf.extend_from_slice(&[kind, flags, 0, 0]);
        value(self.buf);
        let len = (self.buf.len() - at) as u16;
        self.buf[at + 2..at + 4].copy_from_slice(&len.to_be_bytes());
        self.pad();
    }

    fn raw_chunk(&mut self, c: &[u8]) {
        self.buf.extend_from_slice(c);
        self.pad();
    }

    fn pad(&mut self) {
        let n = (self.buf.len() - self.sctp).next_multiple_of(4) + self.sctp;
        self.buf.resize(n, 0);
    }

    pub fn finish(self) {
        let total = (self.buf.len() - self.ip) as u16;
        self.buf[self.ip + 2..self.ip + 4].copy_from_slice(&total.to_be_bytes());
        let sum = ipv4_checksum(&self.buf[self.ip..self.ip + 20]);
        self.buf[self.ip + 10..self.ip + 12].copy_from_slice(&sum.to_be_bytes());
        seal_sctp(&mut self.buf[self.sctp..]);
    }
}

/// A parameter (type, value) inside a chunk's value, padded to 4 bytes.
/// Put a parameter whose length is not a multiple of 4 before the last
/// one: the chunk length counts inner padding, not the final one.
pub fn param(buf: &mut Vec<u8>, kind: u16, value: &[u8]) {
    buf.extend_from_slice(&kind.to_be_bytes());
    buf.extend_from_slice(&((4 + value.len()) as u16).to_be_bytes());
    buf.extend_from_slice(value);
    let padding = value.len().next_multiple_of(4) - value.len();
    buf.extend_from_slice(&[0; 3][..padding]);
}

pub fn init_value(tag: u32, tsn: u32, cookie: Option<&[u8]>) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&tag.to_be_bytes());
    v.extend_from_slice(&65_536u32.to_be_bytes()); // a_rwnd
    v.extend_from_slice(&10u16.to_be_bytes()); // outbound streams
    v.extend_from_slice(&10u16.to_be_bytes()); // inbound streams
    v.extend_from_slice(&tsn.to_be_bytes());
    if let Some(cookie) = cookie {
        param(&mut v, 7, cookie); // State Cookie
    }
    v
}
