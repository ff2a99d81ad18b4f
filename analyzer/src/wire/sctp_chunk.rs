//! SCTP chunks: the generic chunk header (RFC 9260 §3.2) and typed views
//! for the chunks whose contents the tracker reads.

use super::sctp_param::{param_type, Param, Params};
use super::{be16, be32, pad4, Error, Result};

mod field {
    use crate::wire::Field;
    pub const TYPE: usize = 0;
    pub const FLAGS: usize = 1;
    pub const LENGTH: Field = 2..4;
    pub const VALUE: usize = 4;
}

/// Length of the generic chunk header.
pub const HEADER_LEN: usize = field::VALUE;

/// Chunk type codes.
pub mod chunk_type {
    /// RFC 9260 §3.3.
    pub const DATA: u8 = 0;
    /// Initiation (RFC 9260 §3.3.2).
    pub const INIT: u8 = 1;
    /// Initiation Acknowledgement (RFC 9260 §3.3.3).
    pub const INIT_ACK: u8 = 2;
    /// Selective Acknowledgement (RFC 9260 §3.3.4).
    pub const SACK: u8 = 3;
    /// Heartbeat Request (RFC 9260 §3.3.5).
    pub const HEARTBEAT: u8 = 4;
    /// Heartbeat Acknowledgement (RFC 9260 §3.3.6).
    pub const HEARTBEAT_ACK: u8 = 5;
    /// Abort (RFC 9260 §3.3.7).
    pub const ABORT: u8 = 6;
    /// Shutdown (RFC 9260 §3.3.8).
    pub const SHUTDOWN: u8 = 7;
    /// Shutdown Acknowledgement (RFC 9260 §3.3.9).
    pub const SHUTDOWN_ACK: u8 = 8;
    /// Operation Error (RFC 9260 §3.3.10).
    pub const ERROR: u8 = 9;
    /// State Cookie (RFC 9260 §3.3.11).
    pub const COOKIE_ECHO: u8 = 10;
    /// Cookie Acknowledgement (RFC 9260 §3.3.12).
    pub const COOKIE_ACK: u8 = 11;
    /// Explicit Congestion Notification Echo (RFC 9260 appendix A).
    pub const ECNE: u8 = 12;
    /// Congestion Window Reduced (RFC 9260 appendix A).
    pub const CWR: u8 = 13;
    /// Shutdown Complete (RFC 9260 §3.3.13).
    pub const SHUTDOWN_COMPLETE: u8 = 14;
    /// RFC 4895 §4.1.
    pub const AUTH: u8 = 15;
    /// draft-tuexen-tsvwg-sctp-multipath: NR-SACK.
    pub const NR_SACK: u8 = 16;
    /// RFC 8260 §2.1.
    pub const I_DATA: u8 = 64;
    /// RFC 5061 §4.1.2: ASCONF-ACK.
    pub const ASCONF_ACK: u8 = 0x80;
    /// RFC 6525 §3.1.
    pub const RE_CONFIG: u8 = 0x82;
    /// RFC 4820 §3.
    pub const PAD: u8 = 0x84;
    /// RFC 3758 §3.2.
    pub const FORWARD_TSN: u8 = 0xc0;
    /// RFC 5061 §4.1.1: ASCONF.
    pub const ASCONF: u8 = 0xc1;
    /// RFC 8260 §2.3.
    pub const I_FORWARD_TSN: u8 = 0xc2;

    /// Short lower-case names, matching docs/metrics.md and the JSON schema.
    pub fn name(t: u8) -> &'static str {
        match t {
            DATA => "data",
            INIT => "init",
            INIT_ACK => "init_ack",
            SACK => "sack",
            HEARTBEAT => "heartbeat",
            HEARTBEAT_ACK => "heartbeat_ack",
            ABORT => "abort",
            SHUTDOWN => "shutdown",
            SHUTDOWN_ACK => "shutdown_ack",
            ERROR => "error",
            COOKIE_ECHO => "cookie_echo",
            COOKIE_ACK => "cookie_ack",
            ECNE => "ecne",
            CWR => "cwr",
            SHUTDOWN_COMPLETE => "shutdown_complete",
            AUTH => "auth",
            NR_SACK => "nr_sack",
            I_DATA => "i_data",
            ASCONF_ACK => "asconf_ack",
            RE_CONFIG => "re_config",
            PAD => "pad",
            FORWARD_TSN => "forward_tsn",
            ASCONF => "asconf",
            I_FORWARD_TSN => "i_forward_tsn",
            _ => "unknown",
        }
    }

    /// Every chunk type this tool knows, in display order.
    pub const KNOWN: [u8; 24] = [
        DATA,
        I_DATA,
        SACK,
        NR_SACK,
        INIT,
        INIT_ACK,
        COOKIE_ECHO,
        COOKIE_ACK,
        HEARTBEAT,
        HEARTBEAT_ACK,
        ASCONF,
        ASCONF_ACK,
        ABORT,
        SHUTDOWN,
        SHUTDOWN_ACK,
        SHUTDOWN_COMPLETE,
        ERROR,
        ECNE,
        CWR,
        AUTH,
        FORWARD_TSN,
        I_FORWARD_TSN,
        RE_CONFIG,
        PAD,
    ];
}

/// RFC 9260 §3.3.7 / §3.3.13: the T bit of ABORT and SHUTDOWN COMPLETE says
/// the verification tag is the sender's own ("reflected").
pub const FLAG_T: u8 = 0x01;

/// One chunk (RFC 9260 §3.2) over a byte buffer: type, flags, length,
/// value.
#[derive(Debug, Clone, Copy)]
pub struct Chunk<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Chunk<T> {
    /// Checks the header and that the chunk's declared length fits.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let data = buffer.as_ref();
        if data.len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        let length = usize::from(be16(data, field::LENGTH.start));
        if length < HEADER_LEN {
            return Err(Error::Malformed("chunk length below 4"));
        }
        if data.len() < length {
            return Err(Error::Truncated);
        }
        Ok(Chunk { buffer })
    }
    /// The chunk type ([`chunk_type`]).
    pub fn chunk_type(&self) -> u8 {
        self.buffer.as_ref()[field::TYPE]
    }
    /// The chunk flags (their meaning depends on the type).
    pub fn flags(&self) -> u8 {
        self.buffer.as_ref()[field::FLAGS]
    }
    /// Length as declared (header + value, without padding).
    pub fn length(&self) -> usize {
        usize::from(be16(self.buffer.as_ref(), field::LENGTH.start))
    }
    /// The length rounded up to the 4-byte boundary: where the next chunk
    /// starts.
    pub fn padded_len(&self) -> usize {
        pad4(self.length())
    }
}

impl<'a> Chunk<&'a [u8]> {
    /// The value: the bytes after the 4-byte header, up to the declared
    /// length.
    pub fn value(&self) -> &'a [u8] {
        &self.buffer[field::VALUE..self.length()]
    }
    /// The chunk's bytes from the type field to the declared length.
    pub fn bytes(&self) -> &'a [u8] {
        &self.buffer[..self.length()]
    }
}

/// A function, not an inline comparison, so that a minimum of 0 does not
/// trip the "useless comparison" lint.
fn shorter_than(value: &[u8], min: usize) -> bool {
    value.len() < min
}

macro_rules! fixed_view {
    ($(#[$m:meta])* $name:ident, $min:expr) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy)]
        pub struct $name<'a> {
            value: &'a [u8],
            flags: u8,
        }

        impl<'a> $name<'a> {
            /// Builds the view over a chunk, rejecting a value shorter than
            /// the fixed part.
            pub fn new_checked(chunk: &Chunk<&'a [u8]>) -> Result<Self> {
                let value = chunk.value();
                if shorter_than(value, $min) {
                    return Err(Error::Malformed(concat!(stringify!($name), " shorter than its fixed fields")));
                }
                Ok($name { value, flags: chunk.flags() })
            }
            /// The chunk flags of the viewed chunk.
            pub fn flags(&self) -> u8 {
                self.flags
            }
        }
    };
}

fixed_view!(
    /// DATA (RFC 9260 §3.3.1): TSN, stream id, SSN, PPID, user data.
    DataChunk,
    12
);

impl<'a> DataChunk<'a> {
    /// The Transmission Sequence Number.
    pub fn tsn(&self) -> u32 {
        be32(self.value, 0)
    }
    /// The stream identifier.
    pub fn stream_id(&self) -> u16 {
        be16(self.value, 4)
    }
    /// The stream sequence number.
    pub fn stream_seq(&self) -> u16 {
        be16(self.value, 6)
    }
    /// The payload protocol identifier.
    pub fn ppid(&self) -> u32 {
        be32(self.value, 8)
    }
    /// The user data after the fixed fields.
    pub fn user_data(&self) -> &'a [u8] {
        &self.value[12..]
    }
}

fixed_view!(
    /// I-DATA (RFC 8260 §2.1): TSN, stream id, MID, PPID or FSN, user data.
    IDataChunk,
    16
);

impl<'a> IDataChunk<'a> {
    /// The Transmission Sequence Number.
    pub fn tsn(&self) -> u32 {
        be32(self.value, 0)
    }
    /// The stream identifier.
    pub fn stream_id(&self) -> u16 {
        be16(self.value, 4)
    }
    /// The message identifier.
    pub fn message_id(&self) -> u32 {
        be32(self.value, 8)
    }
    /// The user data after the fixed fields.
    pub fn user_data(&self) -> &'a [u8] {
        &self.value[16..]
    }
}

/// SACK (RFC 9260 §3.3.4) and NR-SACK, which adds non-renegable gap blocks.
#[derive(Debug, Clone, Copy)]
pub struct SackChunk<'a> {
    value: &'a [u8],
    nr: bool,
}

impl<'a> SackChunk<'a> {
    /// Builds the view over a chunk, rejecting one whose declared gap and
    /// duplicate lists do not fit.
    pub fn new_checked(chunk: &Chunk<&'a [u8]>) -> Result<Self> {
        let value = chunk.value();
        let nr = chunk.chunk_type() == chunk_type::NR_SACK;
        let fixed = if nr { 16 } else { 12 };
        if value.len() < fixed {
            return Err(Error::Malformed("SACK shorter than its fixed fields"));
        }
        let sack = SackChunk { value, nr };
        let needed = fixed
            + 4 * (usize::from(sack.gap_block_count()) + usize::from(sack.nr_gap_block_count()))
            + 4 * usize::from(sack.dup_tsn_count());
        if value.len() < needed {
            return Err(Error::Malformed(
                "SACK shorter than its gap and duplicate lists",
            ));
        }
        Ok(sack)
    }
    /// The cumulative TSN ack: every TSN up to it was received.
    pub fn cumulative_tsn_ack(&self) -> u32 {
        be32(self.value, 0)
    }
    /// The advertised receiver window credit, in bytes.
    pub fn a_rwnd(&self) -> u32 {
        be32(self.value, 4)
    }
    /// The number of (renegable) gap ack blocks.
    pub fn gap_block_count(&self) -> u16 {
        be16(self.value, 8)
    }
    /// The number of non-renegable gap ack blocks (0 for a SACK).
    pub fn nr_gap_block_count(&self) -> u16 {
        if self.nr {
            be16(self.value, 10)
        } else {
            0
        }
    }
    /// The number of duplicate TSNs reported.
    pub fn dup_tsn_count(&self) -> u16 {
        if self.nr {
            be16(self.value, 12)
        } else {
            be16(self.value, 10)
        }
    }
    fn lists_start(&self) -> usize {
        if self.nr {
            16
        } else {
            12
        }
    }
    /// Gap ack blocks as (start, end) offsets from the cumulative TSN ack,
    /// renegable and (for NR-SACK) non-renegable alike.
    pub fn gap_blocks(&self) -> impl Iterator<Item = (u16, u16)> + 'a {
        let start = self.lists_start();
        let count = usize::from(self.gap_block_count()) + usize::from(self.nr_gap_block_count());
        let value = self.value;
        (0..count).map(move |i| (be16(value, start + 4 * i), be16(value, start + 4 * i + 2)))
    }
    /// The duplicate TSNs reported (TSNs received more than once).
    pub fn dup_tsns(&self) -> impl Iterator<Item = u32> + 'a {
        let start = self.lists_start()
            + 4 * (usize::from(self.gap_block_count()) + usize::from(self.nr_gap_block_count()));
        let value = self.value;
        (0..usize::from(self.dup_tsn_count())).map(move |i| be32(value, start + 4 * i))
    }
}

fixed_view!(
    /// INIT and INIT ACK (RFC 9260 §3.3.2, §3.3.3).
    InitChunk,
    16
);

impl<'a> InitChunk<'a> {
    /// The initiate tag: the verification tag the sender expects.
    pub fn initiate_tag(&self) -> u32 {
        be32(self.value, 0)
    }
    /// The advertised receiver window credit, in bytes.
    pub fn a_rwnd(&self) -> u32 {
        be32(self.value, 4)
    }
    /// The number of outbound streams the sender wants.
    pub fn outbound_streams(&self) -> u16 {
        be16(self.value, 8)
    }
    /// The largest number of inbound streams the sender allows.
    pub fn inbound_streams(&self) -> u16 {
        be16(self.value, 10)
    }
    /// The TSN of the sender's first DATA.
    pub fn initial_tsn(&self) -> u32 {
        be32(self.value, 12)
    }
    /// The optional and variable-length parameters.
    pub fn params(&self) -> Params<'a> {
        Params::new(&self.value[16..])
    }
}

fixed_view!(
    /// HEARTBEAT and HEARTBEAT ACK (RFC 9260 §3.3.5, §3.3.6).
    HeartbeatChunk,
    0
);

impl<'a> HeartbeatChunk<'a> {
    /// The Heartbeat Info parameter's value: opaque bytes the receiver echoes.
    pub fn info(&self) -> Result<&'a [u8]> {
        for p in Params::new(self.value) {
            let p = p?;
            if p.param_type() == param_type::HEARTBEAT_INFO {
                return Ok(p.value());
            }
        }
        Err(Error::Malformed("heartbeat without Heartbeat Info"))
    }
}

fixed_view!(
    /// ASCONF (RFC 5061 §4.1.1): serial number, address parameter, requests.
    AsconfChunk,
    4
);

impl<'a> AsconfChunk<'a> {
    /// The serial number, which the ASCONF-ACK quotes.
    pub fn serial(&self) -> u32 {
        be32(self.value, 0)
    }
    /// The Address Parameter that identifies the sender's association.
    pub fn lookup_address(&self) -> Result<Param<&'a [u8]>> {
        match Params::new(&self.value[4..]).next() {
            Some(p) => p,
            None => Err(Error::Malformed("ASCONF without an address parameter")),
        }
    }
    /// The request parameters after the address parameter.
    pub fn requests(&self) -> Params<'a> {
        let mut params = Params::new(&self.value[4..]);
        if let Some(Ok(first)) = params.clone().next() {
            if matches!(
                first.param_type(),
                param_type::IPV4_ADDRESS | param_type::IPV6_ADDRESS
            ) {
                params.next();
            }
        }
        params
    }
}

fixed_view!(
    /// ASCONF-ACK (RFC 5061 §4.1.2): serial number, responses.
    AsconfAckChunk,
    4
);

impl<'a> AsconfAckChunk<'a> {
    /// The serial number of the ASCONF answered.
    pub fn serial(&self) -> u32 {
        be32(self.value, 0)
    }
    /// The response parameters (Success Indication, Error Cause Indication),
    /// one per request that gets an explicit answer.
    pub fn responses(&self) -> Params<'a> {
        Params::new(&self.value[4..])
    }
}

fixed_view!(
    /// FORWARD TSN (RFC 3758 §3.2) and I-FORWARD-TSN (RFC 8260 §2.3).
    ForwardTsnChunk,
    4
);

impl ForwardTsnChunk<'_> {
    /// The new cumulative TSN: the receiver is to treat every TSN up to it as
    /// received.
    pub fn new_cumulative_tsn(&self) -> u32 {
        be32(self.value, 0)
    }
}

fixed_view!(
    /// SHUTDOWN (RFC 9260 §3.3.8).
    ShutdownChunk,
    4
);

impl ShutdownChunk<'_> {
    /// The cumulative TSN ack: every TSN up to it was received.
    pub fn cumulative_tsn_ack(&self) -> u32 {
        be32(self.value, 0)
    }
}

/// Parses the error causes of ABORT / ERROR chunks (same TLV layout).
pub fn error_causes<'a>(chunk: &Chunk<&'a [u8]>) -> Params<'a> {
    Params::new(chunk.value())
}

/// Bytes a parameter occupies including its padding.
pub fn padded_param_len(p: &Param<&[u8]>) -> usize {
    pad4(p.length())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::sctp_param::{AsconfOp, AsconfRequestRepr, AsconfResponseRepr};
    use std::net::{IpAddr, Ipv4Addr};

    #[test]
    fn data_chunk_fields() {
        let bytes = [
            0x00, 0x03, 0x00, 0x14, 0x00, 0x00, 0x01, 0x00, 0x00, 0x02, 0x00, 0x05, 0x00, 0x00,
            0x00, 0x33, b'h', b'e', b'y', b'!',
        ];
        let chunk = Chunk::new_checked(&bytes[..]).unwrap();
        assert_eq!(chunk.chunk_type(), chunk_type::DATA);
        let data = DataChunk::new_checked(&chunk).unwrap();
        assert_eq!(data.tsn(), 256);
        assert_eq!(data.stream_id(), 2);
        assert_eq!(data.stream_seq(), 5);
        assert_eq!(data.ppid(), 0x33);
        assert_eq!(data.user_data(), b"hey!");
        assert_eq!(data.flags(), 3);
    }

    #[test]
    fn sack_with_gaps_and_dups() {
        let bytes = [
            0x03, 0x00, 0x00, 0x1c, 0x00, 0x00, 0x00, 0x0a, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,
            0x00, 0x02, 0x00, 0x02, 0x00, 0x03, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x08,
        ];
        let chunk = Chunk::new_checked(&bytes[..]).unwrap();
        let sack = SackChunk::new_checked(&chunk).unwrap();
        assert_eq!(sack.cumulative_tsn_ack(), 10);
        assert_eq!(sack.a_rwnd(), 65536);
        assert_eq!(sack.gap_blocks().collect::<Vec<_>>(), vec![(2, 3)]);
        assert_eq!(sack.dup_tsns().collect::<Vec<_>>(), vec![9, 8]);
    }

    #[test]
    fn sack_lying_about_its_lists_is_malformed() {
        let bytes = [
            0x03, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x0a, 0x00, 0x01, 0x00, 0x00, 0x00, 0x05,
            0x00, 0x00,
        ];
        let chunk = Chunk::new_checked(&bytes[..]).unwrap();
        assert!(matches!(
            SackChunk::new_checked(&chunk),
            Err(Error::Malformed(_))
        ));
    }

    #[test]
    fn asconf_add_ip_and_ack() {
        // ASCONF serial 1, address param 10.0.0.1, ADD IP corr 5 for 10.0.1.1
        let asconf = [
            0xc1, 0x00, 0x00, 0x1c, 0x00, 0x00, 0x00, 0x01, 0x00, 0x05, 0x00, 0x08, 10, 0, 0, 1,
            0xc0, 0x01, 0x00, 0x10, 0x00, 0x00, 0x00, 0x05, 0x00, 0x05, 0x00, 0x08, 10, 0, 1, 1,
        ];
        // length field says 0x1c = 28 but there are 32 bytes: fix it
        let mut asconf = asconf;
        asconf[3] = 32;
        let chunk = Chunk::new_checked(&asconf[..]).unwrap();
        let view = AsconfChunk::new_checked(&chunk).unwrap();
        assert_eq!(view.serial(), 1);
        assert_eq!(
            view.lookup_address().unwrap().address().unwrap(),
            IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1))
        );
        let reqs: Vec<_> = view
            .requests()
            .map(|p| AsconfRequestRepr::parse(&p.unwrap()).unwrap().unwrap())
            .collect();
        assert_eq!(reqs.len(), 1);
        assert_eq!(reqs[0].op, AsconfOp::AddIp);
        assert_eq!(reqs[0].address, IpAddr::V4(Ipv4Addr::new(10, 0, 1, 1)));

        let ack = [
            0x80, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x01, 0xc0, 0x05, 0x00, 0x08, 0, 0, 0, 5,
        ];
        let chunk = Chunk::new_checked(&ack[..]).unwrap();
        let view = AsconfAckChunk::new_checked(&chunk).unwrap();
        assert_eq!(view.serial(), 1);
        let resp = AsconfResponseRepr::parse(&view.responses().next().unwrap().unwrap())
            .unwrap()
            .unwrap();
        assert_eq!(
            resp,
            AsconfResponseRepr {
                correlation_id: 5,
                error_cause: None
            }
        );
    }

    #[test]
    fn heartbeat_info() {
        let bytes = [
            0x04, 0x00, 0x00, 0x0c, 0x00, 0x01, 0x00, 0x08, 0xde, 0xad, 0xbe, 0xef,
        ];
        let chunk = Chunk::new_checked(&bytes[..]).unwrap();
        let hb = HeartbeatChunk::new_checked(&chunk).unwrap();
        assert_eq!(hb.info().unwrap(), &[0xde, 0xad, 0xbe, 0xef][..]);
    }

    #[test]
    fn chunk_length_checks() {
        assert_eq!(
            Chunk::new_checked(&[0u8, 0, 0][..]).err(),
            Some(Error::Truncated)
        );
        assert!(matches!(
            Chunk::new_checked(&[0u8, 0, 0, 2][..]).err(),
            Some(Error::Malformed(_))
        ));
        assert_eq!(
            Chunk::new_checked(&[0u8, 0, 0, 8, 1][..]).err(),
            Some(Error::Truncated)
        );
    }
}
