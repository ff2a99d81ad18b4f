//! The kernel SCTP socket API (include/uapi/linux/sctp.h) through libc.
//! Several option structs are `__attribute__((packed, aligned(4)))` there:
//! their layouts are reproduced with `repr(C, packed(4))`.

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

    /// SCTP_DELAYED_SACK: the SACK delay (ms); every second packet is
    /// still acknowledged at once (sack_freq 2, the RFC 9260 default).
    pub fn set_sack_delay(&self, delay: u32) -> io::Result<()> {
        let info = SackInfo {
            assoc_id: 0,
            delay,
            freq: 2,
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

    pub fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: buf is writable for its length.
        let n = unsafe { libc::recv(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
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
        let mut v = Vec::new();
        assert_eq!(write_sockaddr("10.0.0.1:5000".parse().unwrap(), &mut v), 16);
        assert_eq!(&v[2..4], &5000u16.to_be_bytes());
        assert_eq!(&v[4..8], &[10, 0, 0, 1]);
        assert_eq!(write_sockaddr("[fd00::1]:7".parse().unwrap(), &mut v), 28);
    }
}
