//! Frames → SCTP datagrams: walks the link layer, IPv4/IPv6 (with
//! extension headers and fragment reassembly), optional UDP encapsulation
//! (RFC 6951) and ICMP errors that quote SCTP. Every frame ends in exactly
//! one [`Decoded`] outcome, which is what the accounting counts.

mod reassembly;

use crate::capture::{link_type, Frame};
use crate::time::Timestamp;
use crate::wire::{
    be32, ethernet, ethertype, icmp, ip_protocol, ipv4, ipv6, linux_sll, null, sctp, udp, Error,
};
use reassembly::{FragmentKey, Reassembler};
use std::net::IpAddr;

/// An SCTP packet found inside a frame.
#[derive(Debug, Clone, Copy)]
pub struct SctpDatagram<'a> {
    /// The IP source address of the datagram.
    pub src: IpAddr,
    /// The IP destination address of the datagram.
    pub dst: IpAddr,
    /// The SCTP packet: common header and chunks, as captured.
    pub bytes: &'a [u8],
    /// The capture (snaplen) cut the datagram short: trailing chunks missing.
    pub cut: bool,
    /// UDP ports when carried over UDP (RFC 6951).
    pub udp_encapsulation: Option<(u16, u16)>,
    /// Interface the frame was seen on where the link layer records it
    /// (SLL2's ifindex, else the pcapng interface id); used to recognise the
    /// same packet captured twice.
    pub interface_hint: Option<u32>,
    /// Assembled from IP fragments (the last one is this frame).
    pub reassembled: bool,
}

/// An ICMP/ICMPv6 error quoting the start of an SCTP packet. Not traffic:
/// it tells that a path was unreachable.
#[derive(Debug, Clone, Copy)]
pub struct IcmpQuote {
    /// The host or router that reported the error.
    pub reporter: IpAddr,
    /// The ICMP (or ICMPv6) type of the error.
    pub icmp_type: u8,
    /// The ICMP (or ICMPv6) code of the error.
    pub icmp_code: u8,
    /// The quoted packet's addresses and SCTP header fields.
    pub src: IpAddr,
    /// The quoted packet's IP destination address.
    pub dst: IpAddr,
    /// The quoted packet's SCTP source port.
    pub src_port: u16,
    /// The quoted packet's SCTP destination port.
    pub dst_port: u16,
    /// The quoted packet's verification tag.
    pub verification_tag: u32,
}

/// The outcome for one frame.
#[derive(Debug, Clone, Copy)]
pub enum Decoded<'a> {
    /// An SCTP packet (possibly reassembled, possibly cut by the snaplen).
    Sctp(SctpDatagram<'a>),
    /// An ICMP error quoting an SCTP packet.
    IcmpAboutSctp(IcmpQuote),
    /// A fragment of an SCTP datagram held for reassembly; the datagram is
    /// counted in the frame that completes it.
    Fragment,
    /// Anything else that is well formed.
    NotSctp,
    /// The snaplen cut the frame before the SCTP common header.
    Truncated(&'static str),
    /// The link or IP headers are invalid (the reason).
    Malformed(&'static str),
    /// The frame's link type is not one the decoder reads.
    UnsupportedLinkType(u32),
    /// A pcapng record numbered as a frame that holds no packet.
    NonPacketRecord,
}

/// Decoder options.
#[derive(Debug, Clone)]
pub struct DecodeOptions {
    /// UDP ports treated as SCTP encapsulation (RFC 6951 §5.1 default 9899).
    pub udp_encapsulation_ports: Vec<u16>,
    /// Fragmented datagrams in reassembly at once; past it the oldest is
    /// dropped unfinished (counted, see `Decoder::fragments_dropped`).
    pub max_reassembly: usize,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            udp_encapsulation_ports: vec![udp::SCTP_TUNNELING_PORT],
            max_reassembly: reassembly::MAX_PENDING,
        }
    }
}

/// Stateful only for fragment reassembly; everything else is a pure walk
/// over the frame's bytes.
pub struct Decoder {
    options: DecodeOptions,
    reassembler: Reassembler,
}

/// The network layer's view handed to the transport step.
struct Network<'a> {
    src: IpAddr,
    dst: IpAddr,
    protocol: u8,
    payload: &'a [u8],
    cut: bool,
    hint: Option<u32>,
    reassembled: bool,
}

enum LinkError {
    Unsupported(u32),
    Wire(Error),
}

fn fail<'a>(e: Error, cut: bool, what: &'static str) -> Decoded<'a> {
    match e {
        Error::Truncated if cut => Decoded::Truncated(what),
        Error::Truncated => Decoded::Malformed(what),
        Error::Malformed(why) => Decoded::Malformed(why),
    }
}

impl Decoder {
    /// A decoder with empty reassembly state.
    pub fn new(options: DecodeOptions) -> Self {
        Decoder {
            reassembler: Reassembler::new(options.max_reassembly),
            options,
        }
    }

    /// Datagrams dropped unfinished by the reassembly cap so far.
    pub fn fragments_dropped(&self) -> u64 {
        self.reassembler.dropped
    }

    /// Decodes one frame; fragments are held until their datagram is whole.
    pub fn decode<'a>(&'a mut self, frame: &Frame<'a>) -> Decoded<'a> {
        if frame.link_type == link_type::NON_PACKET_RECORD {
            return Decoded::NonPacketRecord;
        }
        let cut = frame.is_cut();
        let (kind, payload, hint) = match link_payload(frame) {
            Ok(Some(x)) => x,
            Ok(None) => return Decoded::NotSctp,
            Err(LinkError::Unsupported(t)) => return Decoded::UnsupportedLinkType(t),
            Err(LinkError::Wire(e)) => return fail(e, cut, "link-layer header truncated"),
        };
        let Decoder {
            options,
            reassembler,
        } = self;
        match kind {
            ethertype::IPV4 => {
                ipv4_layer(options, reassembler, payload, frame.timestamp, cut, hint)
            }
            ethertype::IPV6 => {
                ipv6_layer(options, reassembler, payload, frame.timestamp, cut, hint)
            }
            _ => Decoded::NotSctp,
        }
    }
}

/// Strips the link-layer header. Returns the EtherType of the payload (raw
/// IP links are mapped to the IPv4/IPv6 EtherTypes), the payload and an
/// interface hint.
/// What the link layer yields: the payload's EtherType, the payload, and
/// an interface hint.
type LinkPayload<'a> = (u16, &'a [u8], Option<u32>);

fn link_payload<'a>(frame: &Frame<'a>) -> Result<Option<LinkPayload<'a>>, LinkError> {
    let data = frame.data;
    let pcapng_hint = Some(frame.interface);
    match frame.link_type {
        link_type::ETHERNET => {
            let eth = ethernet::Frame::new_checked(data).map_err(LinkError::Wire)?;
            let (et, payload) = eth.payload().map_err(LinkError::Wire)?;
            Ok(Some((et, payload, pcapng_hint)))
        }
        link_type::LINUX_SLL => {
            let sll = linux_sll::SllPacket::new_checked(data).map_err(LinkError::Wire)?;
            let (et, _, payload) =
                ethernet::skip_vlan_tags(sll.protocol(), sll.payload()).map_err(LinkError::Wire)?;
            Ok(Some((et, payload, None)))
        }
        link_type::LINUX_SLL2 => {
            let sll = linux_sll::Sll2Packet::new_checked(data).map_err(LinkError::Wire)?;
            let (et, _, payload) =
                ethernet::skip_vlan_tags(sll.protocol(), sll.payload()).map_err(LinkError::Wire)?;
            Ok(Some((et, payload, Some(sll.interface_index()))))
        }
        link_type::RAW_12 | link_type::RAW_14 | link_type::RAW => match data.first() {
            Some(b) if b >> 4 == 4 => Ok(Some((ethertype::IPV4, data, pcapng_hint))),
            Some(b) if b >> 4 == 6 => Ok(Some((ethertype::IPV6, data, pcapng_hint))),
            Some(_) => Ok(None),
            None => Err(LinkError::Wire(Error::Truncated)),
        },
        link_type::IPV4 => Ok(Some((ethertype::IPV4, data, pcapng_hint))),
        link_type::IPV6 => Ok(Some((ethertype::IPV6, data, pcapng_hint))),
        link_type::NULL | link_type::LOOP => {
            let p = null::Packet::new_checked(data).map_err(LinkError::Wire)?;
            let family = p.family();
            if family == null::AF_INET {
                Ok(Some((ethertype::IPV4, p.payload(), pcapng_hint)))
            } else if null::AF_INET6_VALUES.contains(&family) {
                Ok(Some((ethertype::IPV6, p.payload(), pcapng_hint)))
            } else {
                Ok(None)
            }
        }
        other => Err(LinkError::Unsupported(other)),
    }
}

/// Only fragments of these protocols are worth holding for reassembly.
fn may_carry_sctp(protocol: u8) -> bool {
    protocol == ip_protocol::SCTP || protocol == ip_protocol::UDP
}

/// One IP fragment, as both IP versions describe it.
struct Fragment<'a> {
    key: FragmentKey,
    offset: usize,
    more: bool,
    payload: &'a [u8],
    time: Timestamp,
}

/// Holds a fragment; when it completes its datagram, decodes the datagram's
/// transport layer.
fn reassemble<'a>(
    options: &DecodeOptions,
    reassembler: &'a mut Reassembler,
    f: Fragment<'_>,
    hint: Option<u32>,
    frame_cut: bool,
) -> Decoded<'a> {
    let key = f.key;
    match reassembler.add(key, f.offset, f.more, f.payload, f.time) {
        Some(datagram) => transport(
            options,
            Network {
                src: key.src,
                dst: key.dst,
                protocol: key.protocol,
                payload: datagram,
                cut: false,
                hint,
                reassembled: true,
            },
            frame_cut,
        ),
        None => Decoded::Fragment,
    }
}

fn ipv4_layer<'a>(
    options: &DecodeOptions,
    reassembler: &'a mut Reassembler,
    bytes: &'a [u8],
    time: Timestamp,
    cut: bool,
    hint: Option<u32>,
) -> Decoded<'a> {
    let packet = match ipv4::Packet::new_checked(bytes) {
        Ok(p) => p,
        Err(e) => return fail(e, cut, "IPv4 header truncated"),
    };
    let (payload, ip_cut) = packet.payload();
    let src = IpAddr::V4(packet.src_addr());
    let dst = IpAddr::V4(packet.dst_addr());
    let protocol = packet.protocol();
    if packet.is_fragment() {
        if !may_carry_sctp(protocol) {
            return Decoded::NotSctp;
        }
        if ip_cut {
            return Decoded::Truncated(if cut {
                "IPv4 fragment cut by the snaplen"
            } else {
                "IPv4 fragment's total length runs past the frame"
            });
        }
        let key = FragmentKey {
            src,
            dst,
            ident: u32::from(packet.ident()),
            protocol,
        };
        let fragment = Fragment {
            key,
            offset: packet.fragment_offset(),
            more: packet.more_fragments(),
            payload,
            time,
        };
        return reassemble(options, reassembler, fragment, hint, cut);
    }
    // A total length past the end of a frame the snaplen did not cut (a
    // capture tool that trimmed the frame, or padding counted in the
    // length): decoded as far as it goes and counted as truncated, as
    // tshark dissects what is there (Wireshark's 3G-2G-HO.pcap).
    transport(
        options,
        Network {
            src,
            dst,
            protocol,
            payload,
            cut: ip_cut,
            hint,
            reassembled: false,
        },
        cut,
    )
}

fn ipv6_layer<'a>(
    options: &DecodeOptions,
    reassembler: &'a mut Reassembler,
    bytes: &'a [u8],
    time: Timestamp,
    cut: bool,
    hint: Option<u32>,
) -> Decoded<'a> {
    let packet = match ipv6::Packet::new_checked(bytes) {
        Ok(p) => p,
        Err(e) => return fail(e, cut, "IPv6 header truncated"),
    };
    let upper = match packet.upper_layer() {
        Ok(u) => u,
        Err(e) => return fail(e, cut, "IPv6 extension headers truncated"),
    };
    let (payload, ip_cut) = match packet.payload_from(upper.offset) {
        Ok(x) => x,
        Err(e) => return fail(e, cut, "IPv6 payload truncated"),
    };
    let src = IpAddr::V6(packet.src_addr());
    let dst = IpAddr::V6(packet.dst_addr());
    if let Some(fragment) = upper.fragment {
        if !may_carry_sctp(upper.protocol) {
            return Decoded::NotSctp;
        }
        if ip_cut {
            return Decoded::Truncated(if cut {
                "IPv6 fragment cut by the snaplen"
            } else {
                "IPv6 fragment's payload length runs past the frame"
            });
        }
        let key = FragmentKey {
            src,
            dst,
            ident: fragment.ident,
            protocol: upper.protocol,
        };
        let fragment = Fragment {
            key,
            offset: fragment.offset,
            more: fragment.more,
            payload,
            time,
        };
        return reassemble(options, reassembler, fragment, hint, cut);
    }
    transport(
        options,
        Network {
            src,
            dst,
            protocol: upper.protocol,
            payload,
            cut: ip_cut,
            hint,
            reassembled: false,
        },
        cut,
    )
}

fn sctp_datagram<'a>(
    net: &Network<'a>,
    bytes: &'a [u8],
    udp_encapsulation: Option<(u16, u16)>,
    frame_cut: bool,
) -> Decoded<'a> {
    if bytes.len() < sctp::HEADER_LEN {
        return fail(Error::Truncated, frame_cut, "SCTP common header truncated");
    }
    Decoded::Sctp(SctpDatagram {
        src: net.src,
        dst: net.dst,
        bytes,
        cut: net.cut,
        udp_encapsulation,
        interface_hint: net.hint,
        reassembled: net.reassembled,
    })
}

fn transport<'a>(options: &DecodeOptions, net: Network<'a>, frame_cut: bool) -> Decoded<'a> {
    match net.protocol {
        ip_protocol::SCTP => sctp_datagram(&net, net.payload, None, frame_cut),
        ip_protocol::UDP => {
            let Ok(datagram) = udp::Packet::new_checked(net.payload) else {
                return Decoded::NotSctp;
            };
            let ports = (datagram.src_port(), datagram.dst_port());
            let encapsulated = options
                .udp_encapsulation_ports
                .iter()
                .any(|&p| p == ports.0 || p == ports.1);
            if encapsulated {
                sctp_datagram(&net, datagram.payload(), Some(ports), frame_cut)
            } else {
                Decoded::NotSctp
            }
        }
        ip_protocol::ICMP if net.src.is_ipv4() => icmp_quote(&net, false),
        ip_protocol::ICMPV6 if net.src.is_ipv6() => icmp_quote(&net, true),
        _ => Decoded::NotSctp,
    }
}

/// Recognises an ICMP error whose quoted datagram is SCTP. RFC 792 quotes
/// at least 8 bytes of the transport header: enough for ports and tag.
fn icmp_quote<'a>(net: &Network<'a>, v6: bool) -> Decoded<'a> {
    let Ok(message) = icmp::Packet::new_checked(net.payload) else {
        return Decoded::NotSctp;
    };
    let is_error = if v6 {
        message.is_v6_error()
    } else {
        message.is_v4_error()
    };
    if !is_error {
        return Decoded::NotSctp;
    }
    let quoted = message.quoted();
    let inner = if v6 {
        ipv6::Packet::new_checked(quoted).ok().and_then(|p| {
            let upper = p.upper_layer().ok()?;
            Some((
                IpAddr::V6(p.src_addr()),
                IpAddr::V6(p.dst_addr()),
                upper.protocol,
                quoted.get(upper.offset..)?,
            ))
        })
    } else {
        ipv4::Packet::new_checked(quoted).ok().map(|p| {
            (
                IpAddr::V4(p.src_addr()),
                IpAddr::V4(p.dst_addr()),
                p.protocol(),
                &quoted[p.header_len()..],
            )
        })
    };
    match inner {
        Some((src, dst, ip_protocol::SCTP, header)) if header.len() >= 8 => {
            Decoded::IcmpAboutSctp(IcmpQuote {
                reporter: net.src,
                icmp_type: message.msg_type(),
                icmp_code: message.code(),
                src,
                dst,
                src_port: u16::from_be_bytes([header[0], header[1]]),
                dst_port: u16::from_be_bytes([header[2], header[3]]),
                verification_tag: be32(header, 4),
            })
        }
        _ => Decoded::NotSctp,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// IPv4 (no options) carrying an SCTP common header with no chunks.
    fn ipv4_sctp() -> Vec<u8> {
        let mut ip = vec![
            0x45, 0, 0, 32, 0, 0, 0x40, 0, 64, 132, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ];
        ip.extend_from_slice(&[0x0b, 0x59, 0x0b, 0x59, 0, 0, 0, 1, 0, 0, 0, 0]);
        ip
    }

    fn decode_one(link_type: u32, data: &[u8]) -> Option<(IpAddr, Option<u32>)> {
        let frame = Frame {
            number: 1,
            timestamp: Timestamp(0),
            link_type,
            interface: 0,
            original_len: data.len() as u32,
            data,
        };
        match Decoder::new(DecodeOptions::default()).decode(&frame) {
            Decoded::Sctp(dg) => Some((dg.src, dg.interface_hint)),
            _ => None,
        }
    }

    #[test]
    fn vlan_tag_behind_linux_cooked_headers() {
        let src = IpAddr::V4([10, 0, 0, 1].into());
        // SLL v1: packet type, ARPHRD, address length, address, protocol
        // 802.1Q; then the tag (TCI 10, inner EtherType IPv4).
        let mut sll = vec![0, 0, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0, 0x81, 0x00];
        sll.extend_from_slice(&[0x00, 0x0a, 0x08, 0x00]);
        sll.extend(ipv4_sctp());
        assert_eq!(decode_one(link_type::LINUX_SLL, &sll), Some((src, None)));
        // SLL2: protocol 802.1Q, reserved, ifindex 3, ARPHRD, packet type,
        // address length, address.
        let mut sll2 = vec![0x81, 0x00, 0, 0, 0, 0, 0, 3, 0, 1, 0, 6];
        sll2.extend_from_slice(&[1, 2, 3, 4, 5, 6, 0, 0, 0x00, 0x0a, 0x08, 0x00]);
        sll2.extend(ipv4_sctp());
        assert_eq!(
            decode_one(link_type::LINUX_SLL2, &sll2),
            Some((src, Some(3)))
        );
    }
}
