//! SCTP TLV parameters (RFC 9260 §3.2.1) and the ones this tool decodes:
//! address parameters, heartbeat info, and the ASCONF request/response
//! parameters of RFC 5061 §4.2.

use super::{be16, be32, pad4, Error, Result};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

mod field {
    use crate::wire::Field;
    pub const TYPE: Field = 0..2;
    pub const LENGTH: Field = 2..4;
    pub const VALUE: usize = 4;
    /// ASCONF parameters: correlation id, then the nested parameter(s).
    pub const CORRELATION_ID: Field = 4..8;
    pub const ASCONF_NESTED: usize = 8;
}

/// Parameter types.
pub mod param_type {
    /// RFC 9260 §3.3.5: Heartbeat Info.
    pub const HEARTBEAT_INFO: u16 = 1;
    /// RFC 9260 §3.3.2.1: IPv4 / IPv6 address.
    pub const IPV4_ADDRESS: u16 = 5;
    /// RFC 9260 §3.3.2.1: IPv6 address.
    pub const IPV6_ADDRESS: u16 = 6;
    /// RFC 9260 §3.3.3.1: State Cookie.
    pub const STATE_COOKIE: u16 = 7;
    /// RFC 9260 §3.3.3.1: Unrecognized Parameter.
    pub const UNRECOGNIZED: u16 = 8;
    /// RFC 9260 §3.3.2.1: Cookie Preservative.
    pub const COOKIE_PRESERVATIVE: u16 = 9;
    /// RFC 9260 §3.3.2.1: Host Name Address (deprecated).
    pub const HOST_NAME: u16 = 11;
    /// RFC 9260 §3.3.2.1: Supported Address Types.
    pub const SUPPORTED_ADDRESS_TYPES: u16 = 12;
    /// RFC 6525 §4: stream reset parameters.
    pub const OUTGOING_SSN_RESET: u16 = 13;
    /// RFC 6525 §4.2: Incoming SSN Reset Request.
    pub const INCOMING_SSN_RESET: u16 = 14;
    /// RFC 6525 §4.4: Re-configuration Response.
    pub const RECONFIG_RESPONSE: u16 = 16;
    /// RFC 9260 appendix A: ECN Capable.
    pub const ECN_CAPABLE: u16 = 0x8000;
    /// RFC 4895 §3: AUTH parameters.
    pub const RANDOM: u16 = 0x8002;
    /// RFC 4895 §3.2: Chunk List.
    pub const CHUNK_LIST: u16 = 0x8003;
    /// RFC 4895 §3.3: Requested HMAC Algorithm.
    pub const HMAC_ALGO: u16 = 0x8004;
    /// RFC 4820 §3: Padding parameter.
    pub const PADDING: u16 = 0x8005;
    /// RFC 5061 §4.2.7: Supported Extensions.
    pub const SUPPORTED_EXTENSIONS: u16 = 0x8008;
    /// RFC 3758 §3.1: Forward-TSN-Supported.
    pub const FORWARD_TSN_SUPPORTED: u16 = 0xc000;
    /// RFC 5061 §4.2.1–4.2.6.
    pub const ADD_IP: u16 = 0xc001;
    /// RFC 5061 §4.2.2: Delete IP Address.
    pub const DELETE_IP: u16 = 0xc002;
    /// RFC 5061 §4.2.3: Error Cause Indication.
    pub const ERROR_CAUSE_INDICATION: u16 = 0xc003;
    /// RFC 5061 §4.2.4: Set Primary Address.
    pub const SET_PRIMARY: u16 = 0xc004;
    /// RFC 5061 §4.2.5: Success Indication.
    pub const SUCCESS_INDICATION: u16 = 0xc005;
    /// RFC 5061 §4.2.6: Adaptation Layer Indication.
    pub const ADAPTATION_LAYER: u16 = 0xc006;
}

/// One TLV parameter (RFC 9260 §3.2.1) over a byte buffer: type, length,
/// value.
#[derive(Debug, Clone, Copy)]
pub struct Param<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Param<T> {
    /// Checks the header and that the declared length fits the buffer.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let data = buffer.as_ref();
        if data.len() < field::VALUE {
            return Err(Error::Truncated);
        }
        let length = usize::from(be16(data, field::LENGTH.start));
        if length < field::VALUE {
            return Err(Error::Malformed("parameter length below 4"));
        }
        if data.len() < length {
            return Err(Error::Truncated);
        }
        Ok(Param { buffer })
    }
    /// The parameter type ([`param_type`]).
    pub fn param_type(&self) -> u16 {
        be16(self.buffer.as_ref(), field::TYPE.start)
    }
    /// Length as declared (header + value, without padding).
    pub fn length(&self) -> usize {
        usize::from(be16(self.buffer.as_ref(), field::LENGTH.start))
    }
}

impl<'a> Param<&'a [u8]> {
    /// The value: the bytes after the 4-byte header, up to the declared
    /// length.
    pub fn value(&self) -> &'a [u8] {
        &self.buffer[field::VALUE..self.length()]
    }

    /// Decodes an IPv4/IPv6 address parameter (RFC 9260 §3.3.2.1).
    pub fn address(&self) -> Result<IpAddr> {
        let v = self.value();
        match (self.param_type(), v.len()) {
            (param_type::IPV4_ADDRESS, 4) => Ok(IpAddr::V4(Ipv4Addr::new(v[0], v[1], v[2], v[3]))),
            (param_type::IPV6_ADDRESS, 16) => {
                let mut a = [0u8; 16];
                a.copy_from_slice(v);
                Ok(IpAddr::V6(Ipv6Addr::from(a)))
            }
            (param_type::IPV4_ADDRESS | param_type::IPV6_ADDRESS, _) => {
                Err(Error::Malformed("address parameter of the wrong length"))
            }
            _ => Err(Error::Malformed("not an address parameter")),
        }
    }

    /// The correlation id of an ASCONF / ASCONF-ACK parameter.
    pub fn correlation_id(&self) -> Result<u32> {
        if self.length() < field::ASCONF_NESTED {
            return Err(Error::Malformed(
                "ASCONF parameter shorter than its correlation id",
            ));
        }
        Ok(be32(self.buffer, field::CORRELATION_ID.start))
    }

    /// The parameters nested after an ASCONF parameter's correlation id.
    pub fn nested(&self) -> Params<'a> {
        let end = self.length();
        let start = field::ASCONF_NESTED.min(end);
        Params::new(&self.buffer[start..end])
    }
}

/// Iterator over a run of padded TLV parameters.
#[derive(Debug, Clone)]
pub struct Params<'a> {
    rest: &'a [u8],
}

impl<'a> Params<'a> {
    /// Iterates over the parameters packed in `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Params { rest: bytes }
    }
}

impl<'a> Iterator for Params<'a> {
    type Item = Result<Param<&'a [u8]>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        match Param::new_checked(self.rest) {
            Ok(p) => {
                let len = p.length();
                let (this, rest) = self.rest.split_at(pad4(len).min(self.rest.len()));
                self.rest = rest;
                Some(Param::new_checked(&this[..len]))
            }
            Err(e) => {
                self.rest = &[];
                Some(Err(e))
            }
        }
    }
}

/// What an ASCONF request parameter asks for (RFC 5061 §4.2.1–4.2.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AsconfOp {
    /// Add IP Address (RFC 5061 §4.2.1).
    AddIp,
    /// Delete IP Address (RFC 5061 §4.2.2).
    DeleteIp,
    /// Set Primary Address (RFC 5061 §4.2.4).
    SetPrimary,
}

impl AsconfOp {
    /// The request a parameter type asks for; None for any other type.
    pub fn from_param_type(t: u16) -> Option<Self> {
        match t {
            param_type::ADD_IP => Some(AsconfOp::AddIp),
            param_type::DELETE_IP => Some(AsconfOp::DeleteIp),
            param_type::SET_PRIMARY => Some(AsconfOp::SetPrimary),
            _ => None,
        }
    }
    /// The snake_case name used in the outputs.
    pub fn name(self) -> &'static str {
        match self {
            AsconfOp::AddIp => "add_ip",
            AsconfOp::DeleteIp => "delete_ip",
            AsconfOp::SetPrimary => "set_primary",
        }
    }
}

/// One decoded ASCONF request parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AsconfRequestRepr {
    /// What is asked.
    pub op: AsconfOp,
    /// The ASCONF-Request Correlation ID, which the answer quotes.
    pub correlation_id: u32,
    /// The address as written; `0.0.0.0` / `::` is the wildcard, which
    /// RFC 5061 §4.2.1 says means the packet's source address.
    pub address: IpAddr,
}

impl AsconfRequestRepr {
    /// Decodes a request parameter; None for a parameter that is not one.
    pub fn parse(param: &Param<&[u8]>) -> Result<Option<Self>> {
        let Some(op) = AsconfOp::from_param_type(param.param_type()) else {
            return Ok(None);
        };
        let correlation_id = param.correlation_id()?;
        let address = match param.nested().next() {
            Some(Ok(nested)) => nested.address()?,
            Some(Err(e)) => return Err(e),
            None => return Err(Error::Malformed("ASCONF parameter without an address")),
        };
        Ok(Some(AsconfRequestRepr {
            op,
            correlation_id,
            address,
        }))
    }

    /// Whether the address is the wildcard (0.0.0.0 or ::).
    pub fn is_wildcard(&self) -> bool {
        self.address.is_unspecified()
    }
}

/// One decoded ASCONF-ACK response parameter (RFC 5061 §4.2.5, §4.2.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AsconfResponseRepr {
    /// The correlation ID of the request answered.
    pub correlation_id: u32,
    /// `None` for a Success Indication, else the first error cause code.
    pub error_cause: Option<u16>,
}

impl AsconfResponseRepr {
    /// Decodes a response parameter; None for a parameter that is not one.
    pub fn parse(param: &Param<&[u8]>) -> Result<Option<Self>> {
        match param.param_type() {
            param_type::SUCCESS_INDICATION => Ok(Some(AsconfResponseRepr {
                correlation_id: param.correlation_id()?,
                error_cause: None,
            })),
            param_type::ERROR_CAUSE_INDICATION => {
                let correlation_id = param.correlation_id()?;
                // Error causes share the TLV layout of parameters.
                let cause = match param.nested().next() {
                    Some(Ok(c)) => c.param_type(),
                    Some(Err(e)) => return Err(e),
                    None => return Err(Error::Malformed("error cause indication without a cause")),
                };
                Ok(Some(AsconfResponseRepr {
                    correlation_id,
                    error_cause: Some(cause),
                }))
            }
            _ => Ok(None),
        }
    }
}

/// Error cause codes (RFC 9260 §3.3.10, RFC 5061 §5.1).
pub mod cause_code {
    /// RFC 9260 §3.3.10.8: Unrecognized Parameters.
    pub const UNRECOGNIZED_PARAMETERS: u16 = 8;
    /// RFC 5061 §5.1: Request to Delete Last Remaining IP Address.
    pub const DELETE_LAST_ADDRESS: u16 = 0x00a0;
    /// RFC 5061 §5.1: Operation Refused Due to Resource Shortage.
    pub const RESOURCE_SHORTAGE: u16 = 0x00a1;
    /// RFC 5061 §5.1: Request to Delete Source IP Address.
    pub const DELETE_SOURCE_ADDRESS: u16 = 0x00a2;
    /// RFC 5061 §5.1: Association Aborted Due to Illegal ASCONF-ACK.
    pub const ILLEGAL_ASCONF_ACK: u16 = 0x00a3;
    /// RFC 5061 §5.1: Request Refused - No Authorization.
    pub const NO_AUTHORIZATION: u16 = 0x00a4;

    /// The snake_case name of an error cause code, as the outputs show it.
    pub fn name(code: u16) -> &'static str {
        match code {
            1 => "invalid_stream_identifier",
            2 => "missing_mandatory_parameter",
            3 => "stale_cookie",
            4 => "out_of_resource",
            5 => "unresolvable_address",
            6 => "unrecognized_chunk_type",
            7 => "invalid_mandatory_parameter",
            UNRECOGNIZED_PARAMETERS => "unrecognized_parameters",
            9 => "no_user_data",
            10 => "cookie_received_while_shutting_down",
            11 => "restart_with_new_addresses",
            12 => "user_initiated_abort",
            13 => "protocol_violation",
            DELETE_LAST_ADDRESS => "delete_last_remaining_address",
            RESOURCE_SHORTAGE => "operation_refused_resource_shortage",
            DELETE_SOURCE_ADDRESS => "delete_source_address",
            ILLEGAL_ASCONF_ACK => "illegal_asconf_ack",
            NO_AUTHORIZATION => "request_refused_no_authorization",
            _ => "unknown",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_ip_with_ipv4_address() {
        // ADD IP, length 16, correlation id 7, IPv4 address 10.1.2.3
        let bytes = [
            0xc0, 0x01, 0x00, 0x10, 0x00, 0x00, 0x00, 0x07, 0x00, 0x05, 0x00, 0x08, 10, 1, 2, 3,
        ];
        let p = Param::new_checked(&bytes[..]).unwrap();
        let r = AsconfRequestRepr::parse(&p).unwrap().unwrap();
        assert_eq!(r.op, AsconfOp::AddIp);
        assert_eq!(r.correlation_id, 7);
        assert_eq!(r.address, IpAddr::V4(Ipv4Addr::new(10, 1, 2, 3)));
        assert!(!r.is_wildcard());
    }

    #[test]
    fn error_cause_indication() {
        // Error Cause Indication, corr id 2, cause 0x00a0 (delete last address)
        // wrapping an 8-byte copy of nothing in particular.
        let bytes = [
            0xc0, 0x03, 0x00, 0x10, 0x00, 0x00, 0x00, 0x02, 0x00, 0xa0, 0x00, 0x08, 0, 0, 0, 0,
        ];
        let p = Param::new_checked(&bytes[..]).unwrap();
        let r = AsconfResponseRepr::parse(&p).unwrap().unwrap();
        assert_eq!(r.correlation_id, 2);
        assert_eq!(r.error_cause, Some(cause_code::DELETE_LAST_ADDRESS));
    }

    #[test]
    fn padded_run_and_truncation() {
        // Host name "ab" (length 6, padded to 8), then IPv6 ::1 truncated.
        let bytes = [
            0x00, 0x0b, 0x00, 0x06, b'a', b'b', 0, 0, 0x00, 0x06, 0x00, 0x14, 0, 0,
        ];
        let mut it = Params::new(&bytes[..]);
        let first = it.next().unwrap().unwrap();
        assert_eq!(first.param_type(), param_type::HOST_NAME);
        assert_eq!(first.value(), b"ab");
        assert_eq!(it.next().unwrap().err(), Some(Error::Truncated));
        assert!(it.next().is_none());
    }

    #[test]
    fn bad_address_length() {
        let bytes = [0x00, 0x05, 0x00, 0x07, 1, 2, 3];
        let p = Param::new_checked(&bytes[..]).unwrap();
        assert!(matches!(p.address(), Err(Error::Malformed(_))));
    }
}
