//! The kernel SCTP socket API (include/uapi/linux/sctp.h) through libc.
//! Several option structs are `__attribute__((packed, aligned(4)))` there:
//! their layouts are reproduced with `repr(C, packed(4))` (a unit test pins
//! each size and the offsets that packing moves).

use std::io;
use std::mem::size_of;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

pub const IPPROTO_SCTP: libc::c_int = 132;
pub const SOL_SCTP: libc::c_int = 132;
const SCTP_RTOINFO: libc::c_int = 0;
const SCTP_NODELAY: libc::c_int = 3;
const SCTP_PEER_ADDR_PARAMS: libc::c_int = 9;
const SCTP_DELAYED_SACK: libc::c_int = 16;
/// spp_flags (include/uapi/linux/sctp.h): heartbeats on. The SACK delay
/// is set with SCTP_DELAYED_SACK instead.
const SPP_HB_ENABLE: u32 = 1 << 0;
const SCTP_SET_PEER_PRIMARY_ADDR: libc::c_int = 5;
const SCTP_PRIMARY_ADDR: libc::c_int = 6;
const SCTP_SOCKOPT_BINDX_ADD: libc::c_int = 100;
const SCTP_SOCKOPT_BINDX_REM: libc::c_int = 101;
const SCTP_STATUS: libc::c_int = 14;
const SCTP_GET_PEER_ADDR_INFO: libc::c_int = 15;
const SCTP_GET_PEER_ADDRS: libc::c_int = 108;
const SCTP_EVENT: libc::c_int = 127;
/// `enum sctp_sn_type`: SCTP_SN_TYPE_BASE (1 << 15) + 2.
const SCTP_PEER_ADDR_CHANGE: u16 = (1 << 15) + 2;
/// recvmsg(2) msg_flags: the message is a notification, not user data.
const MSG_NOTIFICATION: libc::c_int = 0x8000;

/// `struct sctp_prim` / `struct sctp_setpeerprim`: assoc id then a
/// sockaddr_storage, packed, aligned(4).
#[repr(C, packed(4))]
struct SctpPrim {
    assoc_id: i32,
    addr: libc::sockaddr_storage,
}

/// `struct sctp_rtoinfo` (no packing).
#[repr(C)]
struct RtoInfo {
    assoc_id: i32,
    initial: u32,
    max: u32,
    min: u32,
}

/// `struct sctp_paddrparams`: `__attribute__((packed, aligned(4)))` — no
/// padding between fields (spp_pathmtu sits at offset 138), then tail
/// padding to a multiple of 4: 156 bytes, which the kernel checks.
#[repr(C, packed)]
struct PeerAddrParams {
    assoc_id: i32,
    address: libc::sockaddr_storage,
    hb_interval: u32,
    path_max_rxt: u16,
    path_mtu: u32,
    sack_delay: u32,
    flags: u32,
    ipv6_flowlabel: u32,
    dscp: u8,
    _tail: [u8; 1],
}

/// `struct sctp_sack_info`.
#[repr(C)]
struct SackInfo {
    assoc_id: i32,
    delay: u32,
    freq: u32,
}

/// `struct sctp_event` (SCTP_EVENT, Linux 5.0+): 7 bytes of fields, 8
/// with padding.
#[repr(C)]
struct SctpEvent {
    assoc_id: i32,
    kind: u16,
    on: u8,
}

/// `struct sctp_paddrinfo`: packed, aligned(4) — the sockaddr_storage
/// (alignment 8) starts at offset 4, 152 bytes in all.
#[repr(C, packed(4))]
#[derive(Clone, Copy)]
struct PaddrInfo {
    assoc_id: i32,
    address: libc::sockaddr_storage,
    state: i32,
    cwnd: u32,
    /// transport->srtt as the kernel keeps it: in jiffies, unlike
    /// spinfo_rto which it converts to ms.
    srtt: u32,
    rto: u32,
    mtu: u32,
}

/// `struct sctp_status` (not packed itself; its last member is the packed
/// sctp_paddrinfo of the primary path).
#[repr(C)]
#[derive(Clone, Copy)]
struct Status {
    assoc_id: i32,
    state: i32,
    rwnd: u32,
    unackdata: u16,
    penddata: u16,
    instrms: u16,
    outstrms: u16,
    fragmentation_point: u32,
    primary: PaddrInfo,
}

/// `struct sctp_paddr_change` (SCTP_PEER_ADDR_CHANGE notification):
/// packed, aligned(4), 148 bytes.
#[repr(C, packed(4))]
struct PaddrChange {
    kind: u16,
    flags: u16,
    length: u32,
    address: libc::sockaddr_storage,
    state: i32,
    error: i32,
    assoc_id: i32,
}

/// The kernel's view of one peer address (SCTP_GET_PEER_ADDR_INFO).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerAddrInfo {
    pub address: SocketAddr,
    /// `enum sctp_spinfo_state`, see [`path_state_name`].
    pub state: i32,
    pub cwnd: u32,
    pub srtt_jiffies: u32,
    pub rto_ms: u32,
    pub mtu: u32,
}

/// The association's status (SCTP_STATUS) with its primary path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AssocStatus {
    /// `enum sctp_sstat_state`, see [`assoc_state_name`].
    pub state: i32,
    pub rwnd: u32,
    pub unackdata: u16,
    pub penddata: u16,
    pub primary: Option<PeerAddrInfo>,
}

/// An SCTP_PEER_ADDR_CHANGE notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddrChange {
    pub address: Option<SocketAddr>,
    /// `enum sctp_spc_state`, see [`addr_change_name`].
    pub state: i32,
    /// `enum sctp_sn_error`, see [`sn_error_name`].
    pub error: i32,
}

/// `enum sctp_spinfo_state` (transport state).
pub fn path_state_name(state: i32) -> &'static str {
    match state {
        0 => "inactive",
        1 => "potentially_failed",
        2 => "active",
        3 => "unconfirmed",
        0xffff => "unknown",
        _ => "other",
    }
}

/// `enum sctp_sstat_state` (association state).
pub fn assoc_state_name(state: i32) -> &'static str {
    match state {
        0 => "empty",
        1 => "closed",
        2 => "cookie_wait",
        3 => "cookie_echoed",
        4 => "established",
        5 => "shutdown_pending",
        6 => "shutdown_sent",
        7 => "shutdown_received",
        8 => "shutdown_ack_sent",
        _ => "other",
    }
}

/// `enum sctp_spc_state` (what happened to a peer address).
pub fn addr_change_name(state: i32) -> &'static str {
    match state {
        0 => "available",
        1 => "unreachable",
        2 => "removed",
        3 => "added",
        4 => "made_primary",
        5 => "confirmed",
        6 => "potentially_failed",
        _ => "other",
    }
}

/// `enum sctp_sn_error` (spc_error of an address change).
pub fn sn_error_name(error: i32) -> &'static str {
    match error {
        0 => "failed_threshold",
        1 => "received_sack",
        2 => "heartbeat_success",
        3 => "response_to_user_req",
        4 => "internal_error",
        5 => "shutdown_guard_expires",
        6 => "peer_faulty",
        _ => "other",
    }
}

/// Reads a sockaddr_in / sockaddr_in6 from the start of `b`; returns it
/// and its length.
pub fn read_sockaddr(b: &[u8]) -> Option<(SocketAddr, usize)> {
    let family = i32::from(u16::from_ne_bytes([*b.first()?, *b.get(1)?]));
    let port = u16::from_be_bytes([*b.get(2)?, *b.get(3)?]);
    if family == libc::AF_INET {
        let ip: [u8; 4] = b.get(4..8)?.try_into().ok()?;
        Some((SocketAddr::new(IpAddr::from(ip), port), 16))
    } else if family == libc::AF_INET6 {
        let ip: [u8; 16] = b.get(8..24)?.try_into().ok()?;
        Some((SocketAddr::new(IpAddr::from(ip), port), 28))
    } else {
        None
    }
}

fn storage_addr(ss: &libc::sockaddr_storage) -> Option<SocketAddr> {
    // SAFETY: sockaddr_storage is plain old data of this size.
    let bytes = unsafe {
        std::slice::from_raw_parts(
            (ss as *const libc::sockaddr_storage).cast::<u8>(),
            size_of::<libc::sockaddr_storage>(),
        )
    };
    read_sockaddr(bytes).map(|(a, _)| a)
}

/// Parses a notification read with MSG_NOTIFICATION; None unless it is a
/// complete SCTP_PEER_ADDR_CHANGE.
pub fn parse_addr_change(b: &[u8]) -> Option<AddrChange> {
    if b.len() < size_of::<PaddrChange>() {
        return None;
    }
    // SAFETY: b holds at least size_of::<PaddrChange>() bytes and the
    // struct is plain old data; read_unaligned copes with any alignment.
    let n: PaddrChange = unsafe { std::ptr::read_unaligned(b.as_ptr().cast()) };
    if n.kind != SCTP_PEER_ADDR_CHANGE {
        return None;
    }
    let address = n.address;
    Some(AddrChange {
        address: storage_addr(&address),
        state: n.state,
        error: n.error,
    })
}

impl PaddrInfo {
    fn to_info(self) -> Option<PeerAddrInfo> {
        let address = self.address;
        Some(PeerAddrInfo {
            address: storage_addr(&address)?,
            state: self.state,
            cwnd: self.cwnd,
            srtt_jiffies: self.srtt,
            rto_ms: self.rto,
            mtu: self.mtu,
        })
    }
}

pub struct SctpSocket {
    fd: OwnedFd,
}

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// Writes `addr` as a sockaddr_in / sockaddr_in6 into `out`; returns its length.
pub fn write_sockaddr(addr: SocketAddr, out: &mut Vec<u8>) -> usize {
    match addr {
        SocketAddr::V4(a) => {
            let sa = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_in is plain old data.
            let bytes = unsafe {
                std::slice::from_raw_parts(
                    (&sa as *const libc::sockaddr_in).cast::<u8>(),
                    size_of::<libc::sockaddr_in>(),
                )
            };
            out.extend_from_slice(bytes);
            bytes.len()
        }
        SocketAddr::V6(a) => {
            let sa = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: 0,
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: 0,
            };
            // SAFETY: sockaddr_in6 is plain old data.
            let bytes = unsafe {
                std::slice::from_raw_parts(
                    (&sa as *const libc::sockaddr_in6).cast::<u8>(),
                    size_of::<libc::sockaddr_in6>(),
                )
            };
            out.extend_from_slice(bytes);
            bytes.len()
        }
    }
}

fn storage(addr: SocketAddr) -> libc::sockaddr_storage {
    let mut bytes = Vec::new();
    write_sockaddr(addr, &mut bytes);
    // SAFETY: an all-zero sockaddr_storage is valid; we copy a shorter
    // sockaddr into its start.
    let mut ss: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    unsafe {
        std::ptr::copy_nonoverlapping(
            bytes.as_ptr(),
            (&mut ss as *mut libc::sockaddr_storage).cast::<u8>(),
            bytes.len(),
        );
    }
    ss
}

impl SctpSocket {
    /// A one-to-one style (SOCK_STREAM) SCTP socket.
    pub fn new(v6: bool) -> io::Result<Self> {
        let family = if v6 { libc::AF_INET6 } else { libc::AF_INET };
        // SAFETY: plain socket(2) call.
        let fd = check(unsafe { libc::socket(family, libc::SOCK_STREAM, IPPROTO_SCTP) })?;
        // SAFETY: fd was just returned by socket(2) and is owned here.
        Ok(SctpSocket {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    fn setsockopt_bytes(
        &self,
        level: libc::c_int,
        name: libc::c_int,
        value: &[u8],
    ) -> io::Result<()> {
        // SAFETY: value points to value.len() readable bytes.
        check(unsafe {
            libc::setsockopt(
                self.fd.as_raw_fd(),
                level,
                name,
                value.as_ptr().cast(),
                value.len() as libc::socklen_t,
            )
        })
        .map(|_| ())
    }

    /// getsockopt(2) into `buf` (which also carries the request); returns
    /// the length the kernel wrote.
    fn getsockopt_bytes(&self, name: libc::c_int, buf: &mut [u8]) -> io::Result<usize> {
        let mut len = buf.len() as libc::socklen_t;
        // SAFETY: buf is writable for len bytes; len is updated in place.
        check(unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                SOL_SCTP,
                name,
                buf.as_mut_ptr().cast(),
                &mut len,
            )
        })?;
        Ok(len as usize)
    }

    /// getsockopt(2) of a plain struct, `value` carrying the request.
    fn getsockopt<T: Copy>(&self, name: libc::c_int, value: &mut T) -> io::Result<()> {
        // SAFETY: T is a plain repr(C) struct: any bytes the kernel writes
        // into it are a valid value.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut((value as *mut T).cast::<u8>(), size_of::<T>())
        };
        let n = self.getsockopt_bytes(name, bytes)?;
        if n < size_of::<T>() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("getsockopt {name}: {n} bytes, expected {}", size_of::<T>()),
            ));
        }
        Ok(())
    }

    fn setsockopt<T>(&self, level: libc::c_int, name: libc::c_int, value: &T) -> io::Result<()> {
        // SAFETY: T is a plain repr(C) struct or integer.
        let bytes =
            unsafe { std::slice::from_raw_parts((value as *const T).cast::<u8>(), size_of::<T>()) };
        self.setsockopt_bytes(level, name, bytes)
    }

    pub fn set_reuseaddr(&self) -> io::Result<()> {
        self.setsockopt(libc::SOL_SOCKET, libc::SO_REUSEADDR, &1i32)
    }

    pub fn set_nodelay(&self) -> io::Result<()> {
        self.setsockopt(SOL_SCTP, SCTP_NODELAY, &1i32)
    }

    /// SCTP_RTOINFO for future associations of this socket (ms).
    pub fn set_rto(&self, initial: u32, min: u32, max: u32) -> io::Result<()> {
        let info = RtoInfo {
            assoc_id: 0,
            initial,
            max,
            min,
        };
        self.setsockopt(SOL_SCTP, SCTP_RTOINFO, &info)
    }

    /// SCTP_PEER_ADDR_PARAMS for every peer address: heartbeat interval
    /// (ms) and Path.Max.Retrans.
    pub fn set_path_params(&self, hb_interval: u32, path_max_retrans: u16) -> io::Result<()> {
        // SAFETY: an all-zero sockaddr_storage means "every address".
        let address: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
        let params = PeerAddrParams {
            assoc_id: 0,
            address,
            hb_interval,
            path_max_rxt: path_max_retrans,
            path_mtu: 0,
            sack_delay: 0,
            flags: SPP_HB_ENABLE,
            ipv6_flowlabel: 0,
            dscp: 0,
            _tail: [0],
        };
        self.setsockopt(SOL_SCTP, SCTP_PEER_ADDR_PARAMS, &params)
    }

    /// SCTP_DELAYED_SACK: the SACK delay (ms) and sack_freq (a SACK at the
    /// latest every `freq` packets; 2 is the RFC 9260 default, 1 switches
    /// delayed SACK off: Linux applies the delay first, then disables it).
    pub fn set_sack_delay(&self, delay: u32, freq: u32) -> io::Result<()> {
        let info = SackInfo {
            assoc_id: 0,
            delay,
            freq,
        };
        self.setsockopt(SOL_SCTP, SCTP_DELAYED_SACK, &info)
    }

    /// Calls `f` with `addr` as a sockaddr pointer and length.
    fn with_sockaddr(
        &self,
        addr: SocketAddr,
        f: impl FnOnce(libc::c_int, *const libc::sockaddr, libc::socklen_t) -> libc::c_int,
    ) -> io::Result<()> {
        let mut bytes = Vec::new();
        let len = write_sockaddr(addr, &mut bytes);
        check(f(
            self.fd.as_raw_fd(),
            bytes.as_ptr().cast(),
            len as libc::socklen_t,
        ))
        .map(|_| ())
    }

    pub fn bind(&self, addr: SocketAddr) -> io::Result<()> {
        // SAFETY: the pointer and length describe a valid sockaddr.
        self.with_sockaddr(addr, |fd, sa, len| unsafe { libc::bind(fd, sa, len) })
    }

    /// sctp_bindx(3): the kernel sends ADD-IP / DELETE-IP inside this call
    /// when the association exists and ADD-IP is enabled.
    pub fn bindx(&self, addrs: &[SocketAddr], add: bool) -> io::Result<()> {
        let mut bytes = Vec::new();
        for &a in addrs {
            write_sockaddr(a, &mut bytes);
        }
        let opt = if add {
            SCTP_SOCKOPT_BINDX_ADD
        } else {
            SCTP_SOCKOPT_BINDX_REM
        };
        self.setsockopt_bytes(SOL_SCTP, opt, &bytes)
    }

    pub fn connect(&self, addr: SocketAddr) -> io::Result<()> {
        // SAFETY: the pointer and length describe a valid sockaddr.
        self.with_sockaddr(addr, |fd, sa, len| unsafe { libc::connect(fd, sa, len) })
    }

    pub fn listen(&self) -> io::Result<()> {
        // SAFETY: plain listen(2).
        check(unsafe { libc::listen(self.fd.as_raw_fd(), 4) }).map(|_| ())
    }

    pub fn accept(&self) -> io::Result<SctpSocket> {
        // SAFETY: accept(2) without peer address.
        let fd = check(unsafe {
            libc::accept(
                self.fd.as_raw_fd(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        })?;
        // SAFETY: fd is a new descriptor owned here.
        Ok(SctpSocket {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// SCTP_SET_PEER_PRIMARY_ADDR: the kernel sends an ASCONF SET-PRIMARY
    /// for our own `local` address.
    pub fn set_peer_primary(&self, local: IpAddr, port: u16) -> io::Result<()> {
        self.set_prim(SCTP_SET_PEER_PRIMARY_ADDR, SocketAddr::new(local, port))
    }

    /// SCTP_PRIMARY_ADDR: send to this peer address by default.
    pub fn set_primary(&self, peer: IpAddr, port: u16) -> io::Result<()> {
        self.set_prim(SCTP_PRIMARY_ADDR, SocketAddr::new(peer, port))
    }

    /// Both options take the same packed `struct sctp_prim` layout.
    fn set_prim(&self, option: libc::c_int, addr: SocketAddr) -> io::Result<()> {
        let prim = SctpPrim {
            assoc_id: 0,
            addr: storage(addr),
        };
        self.setsockopt(SOL_SCTP, option, &prim)
    }

    /// SCTP_EVENT: deliver SCTP_PEER_ADDR_CHANGE notifications (read with
    /// [`SctpSocket::recvmsg`]). On a socket without an association it
    /// applies to the associations it will have.
    pub fn subscribe_addr_change(&self) -> io::Result<()> {
        let event = SctpEvent {
            assoc_id: 0,
            kind: SCTP_PEER_ADDR_CHANGE,
            on: 1,
        };
        self.setsockopt(SOL_SCTP, SCTP_EVENT, &event)
    }

    /// SCTP_GET_PEER_ADDRS: the peer's addresses in the association.
    pub fn peer_addrs(&self) -> io::Result<Vec<SocketAddr>> {
        // struct sctp_getaddrs: assoc id, count, then packed sockaddrs.
        let mut buf = vec![0u8; 8 + 16 * size_of::<libc::sockaddr_in6>()];
        let len = self.getsockopt_bytes(SCTP_GET_PEER_ADDRS, &mut buf)?;
        let count = u32::from_ne_bytes(buf[4..8].try_into().expect("4 bytes"));
        let mut out = Vec::new();
        let mut at = 8;
        while out.len() < count as usize && at < len.min(buf.len()) {
            let Some((a, n)) = read_sockaddr(&buf[at..]) else {
                break;
            };
            out.push(a);
            at += n;
        }
        Ok(out)
    }

    /// SCTP_GET_PEER_ADDR_INFO for one peer address.
    pub fn peer_addr_info(&self, peer: SocketAddr) -> io::Result<PeerAddrInfo> {
        let mut p = PaddrInfo {
            assoc_id: 0,
            address: storage(peer),
            state: 0,
            cwnd: 0,
            srtt: 0,
            rto: 0,
            mtu: 0,
        };
        self.getsockopt(SCTP_GET_PEER_ADDR_INFO, &mut p)?;
        Ok(PeerAddrInfo {
            address: peer,
            state: p.state,
            cwnd: p.cwnd,
            srtt_jiffies: p.srtt,
            rto_ms: p.rto,
            mtu: p.mtu,
        })
    }

    /// SCTP_STATUS of the socket's association.
    pub fn status(&self) -> io::Result<AssocStatus> {
        // SAFETY: an all-zero sctp_status is a valid request (assoc id 0).
        let mut s: Status = unsafe { std::mem::zeroed() };
        self.getsockopt(SCTP_STATUS, &mut s)?;
        Ok(AssocStatus {
            state: s.state,
            rwnd: s.rwnd,
            unackdata: s.unackdata,
            penddata: s.penddata,
            primary: s.primary.to_info(),
        })
    }

    pub fn send(&self, data: &[u8]) -> io::Result<usize> {
        // SAFETY: data is readable; MSG_NOSIGNAL avoids SIGPIPE on a dead
        // association.
        let n = unsafe {
            libc::send(
                self.fd.as_raw_fd(),
                data.as_ptr().cast(),
                data.len(),
                libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT,
            )
        };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }

    /// recvmsg(2): the length read and whether it is a notification
    /// (MSG_NOTIFICATION) rather than user data.
    pub fn recvmsg(&self, buf: &mut [u8]) -> io::Result<(usize, bool)> {
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        // SAFETY: an all-zero msghdr is valid (no name, no control data).
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        // SAFETY: msg describes one writable buffer that outlives the call.
        let n = unsafe { libc::recvmsg(self.fd.as_raw_fd(), &mut msg, 0) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok((n as usize, msg.msg_flags & MSG_NOTIFICATION != 0))
        }
    }

    pub fn set_recv_timeout_ms(&self, ms: u64) -> io::Result<()> {
        let tv = libc::timeval {
            tv_sec: (ms / 1000) as libc::time_t,
            tv_usec: ((ms % 1000) * 1000) as libc::suseconds_t,
        };
        self.setsockopt(libc::SOL_SOCKET, libc::SO_RCVTIMEO, &tv)
    }

    pub fn try_clone(&self) -> io::Result<SctpSocket> {
        Ok(SctpSocket {
            fd: self.fd.try_clone()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_layouts_match_the_uapi_header() {
        // sizeof(struct sctp_prim) is 4 + 128 = 132 with packed, aligned(4).
        assert_eq!(size_of::<SctpPrim>(), 132);
        // struct sctp_paddrparams: fields back to back, 155 bytes, padded
        // to 156 by aligned(4).
        assert_eq!(size_of::<PeerAddrParams>(), 156);
        assert_eq!(std::mem::offset_of!(PeerAddrParams, hb_interval), 132);
        assert_eq!(std::mem::offset_of!(PeerAddrParams, path_max_rxt), 136);
        assert_eq!(std::mem::offset_of!(PeerAddrParams, path_mtu), 138);
        assert_eq!(std::mem::offset_of!(PeerAddrParams, sack_delay), 142);
        assert_eq!(std::mem::offset_of!(PeerAddrParams, flags), 146);
        assert_eq!(std::mem::offset_of!(PeerAddrParams, dscp), 154);
        assert_eq!(size_of::<RtoInfo>(), 16);
        assert_eq!(size_of::<SackInfo>(), 12);
        // struct sctp_event: 4 + 2 + 1, padded to 8.
        assert_eq!(size_of::<SctpEvent>(), 8);
        // struct sctp_paddrinfo: 4 + 128 + 5 x 4 = 152, no padding after
        // the assoc id although sockaddr_storage is 8-aligned.
        assert_eq!(size_of::<PaddrInfo>(), 152);
        assert_eq!(std::mem::align_of::<PaddrInfo>(), 4);
        assert_eq!(std::mem::offset_of!(PaddrInfo, address), 4);
        assert_eq!(std::mem::offset_of!(PaddrInfo, state), 132);
        assert_eq!(std::mem::offset_of!(PaddrInfo, srtt), 140);
        assert_eq!(std::mem::offset_of!(PaddrInfo, rto), 144);
        // struct sctp_status: 24 bytes of fields, then the primary's
        // sctp_paddrinfo at offset 24: 176.
        assert_eq!(std::mem::offset_of!(Status, primary), 24);
        assert_eq!(size_of::<Status>(), 176);
        // struct sctp_paddr_change: 2 + 2 + 4 + 128 + 3 x 4 = 148.
        assert_eq!(size_of::<PaddrChange>(), 148);
        assert_eq!(std::mem::offset_of!(PaddrChange, address), 8);
        assert_eq!(std::mem::offset_of!(PaddrChange, state), 136);
        assert_eq!(std::mem::offset_of!(PaddrChange, error), 140);
        assert_eq!(std::mem::offset_of!(PaddrChange, assoc_id), 144);
        let mut v = Vec::new();
        assert_eq!(write_sockaddr("10.0.0.1:5000".parse().unwrap(), &mut v), 16);
        assert_eq!(&v[2..4], &5000u16.to_be_bytes());
        assert_eq!(&v[4..8], &[10, 0, 0, 1]);
        assert_eq!(write_sockaddr("[fd00::1]:7".parse().unwrap(), &mut v), 28);
        assert_eq!(
            read_sockaddr(&v[16..]),
            Some(("[fd00::1]:7".parse().unwrap(), 28))
        );
        assert_eq!(
            read_sockaddr(&v),
            Some(("10.0.0.1:5000".parse().unwrap(), 16))
        );
    }

    #[test]
    fn addr_change_notification_parses() {
        // An SCTP_ADDR_UNREACHABLE / SCTP_FAILED_THRESHOLD notification
        // for 198.51.100.101:5000, laid out as the kernel writes it.
        let mut b = vec![0u8; 148];
        b[0..2].copy_from_slice(&SCTP_PEER_ADDR_CHANGE.to_ne_bytes());
        b[4..8].copy_from_slice(&148u32.to_ne_bytes());
        let mut sa = Vec::new();
        write_sockaddr("198.51.100.101:5000".parse().unwrap(), &mut sa);
        b[8..8 + sa.len()].copy_from_slice(&sa);
        b[136..140].copy_from_slice(&1i32.to_ne_bytes());
        b[140..144].copy_from_slice(&0i32.to_ne_bytes());
        let n = parse_addr_change(&b).expect("parses");
        assert_eq!(n.address, Some("198.51.100.101:5000".parse().unwrap()));
        assert_eq!(addr_change_name(n.state), "unreachable");
        assert_eq!(sn_error_name(n.error), "failed_threshold");
        assert_eq!(parse_addr_change(&b[..100]), None, "truncated");
        b[0] ^= 1;
        assert_eq!(parse_addr_change(&b), None, "another notification type");
    }
}
