//! A minimal rtnetlink client: the few requests the timeline makes at
//! precisely logged times (spawning `ip` inside UML costs ~60 ms).
//! A socket is bound to the network namespace it was created in, so the
//! driver opens one per namespace up front.

use std::io;
use std::mem::size_of;
use std::net::IpAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const RTM_NEWLINK: u16 = 16;
const RTM_NEWADDR: u16 = 20;
const RTM_DELADDR: u16 = 21;
const NLM_F_REQUEST: u16 = 0x1;
const NLM_F_ACK: u16 = 0x4;
const NLM_F_EXCL: u16 = 0x200;
const NLM_F_CREATE: u16 = 0x400;
const NLMSG_ERROR: u16 = 2;
const IFLA_MASTER: u16 = 10;
const IFA_ADDRESS: u16 = 1;
const IFA_LOCAL: u16 = 2;
/// IFA_F_NODAD (include/uapi/linux/if_addr.h).
pub const IFA_F_NODAD: u8 = 0x02;

pub struct Netlink {
    fd: OwnedFd,
    seq: u32,
}

fn align4(n: usize) -> usize {
    (n + 3) & !3
}

fn push_attr(buf: &mut Vec<u8>, kind: u16, value: &[u8]) {
    let len = 4 + value.len();
    buf.extend_from_slice(&(len as u16).to_ne_bytes());
    buf.extend_from_slice(&kind.to_ne_bytes());
    buf.extend_from_slice(value);
    buf.resize(align4(buf.len()), 0);
}

impl Netlink {
    /// Opens a NETLINK_ROUTE socket in the current thread's namespace.
    pub fn open() -> io::Result<Self> {
        // SAFETY: plain socket(2).
        let fd = unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                libc::NETLINK_ROUTE,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is new and owned here.
        Ok(Netlink {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            seq: 1,
        })
    }

    /// Opens a socket inside the named namespace (/run/netns/NAME) by
    /// switching a short-lived thread into it.
    pub fn open_in(netns: &str) -> io::Result<Self> {
        let path = format!("/run/netns/{netns}");
        std::thread::scope(|s| {
            s.spawn(|| {
                let ns = std::fs::File::open(&path)?;
                // SAFETY: setns on this thread only.
                if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } < 0 {
                    return Err(io::Error::last_os_error());
                }
                Netlink::open()
            })
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("netlink thread panicked")))
        })
    }

    fn request(&mut self, msg_type: u16, flags: u16, body: &[u8]) -> io::Result<()> {
        self.seq += 1;
        let mut msg = Vec::with_capacity(16 + body.len());
        msg.extend_from_slice(&((16 + body.len()) as u32).to_ne_bytes());
        msg.extend_from_slice(&msg_type.to_ne_bytes());
        msg.extend_from_slice(&(flags | NLM_F_REQUEST | NLM_F_ACK).to_ne_bytes());
        msg.extend_from_slice(&self.seq.to_ne_bytes());
        msg.extend_from_slice(&0u32.to_ne_bytes());
        msg.extend_from_slice(body);
        // SAFETY: zeroed sockaddr_nl addressed to the kernel (pid 0).
        let mut kernel: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        kernel.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        let sent = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                msg.as_ptr().cast(),
                msg.len(),
                0,
                (&kernel as *const libc::sockaddr_nl).cast(),
                size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        };
        if sent < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut reply = [0u8; 4096];
        // SAFETY: reply is writable.
        let n = unsafe {
            libc::recv(
                self.fd.as_raw_fd(),
                reply.as_mut_ptr().cast(),
                reply.len(),
                0,
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = n as usize;
        if n >= 20 && u16::from_ne_bytes([reply[4], reply[5]]) == NLMSG_ERROR {
            let code = i32::from_ne_bytes([reply[16], reply[17], reply[18], reply[19]]);
            if code != 0 {
                return Err(io::Error::from_raw_os_error(-code));
            }
        }
        Ok(())
    }

    /// `ip link set dev IFINDEX master MASTER` (0 = nomaster).
    pub fn set_master(&mut self, ifindex: u32, master: u32) -> io::Result<()> {
        let mut body = Vec::new();
        // struct ifinfomsg: family, pad, type, index, flags, change.
        body.extend_from_slice(&[libc::AF_UNSPEC as u8, 0]);
        body.extend_from_slice(&0u16.to_ne_bytes());
        body.extend_from_slice(&(ifindex as i32).to_ne_bytes());
        body.extend_from_slice(&0u32.to_ne_bytes());
        body.extend_from_slice(&0u32.to_ne_bytes());
        push_attr(&mut body, IFLA_MASTER, &master.to_ne_bytes());
        self.request(RTM_NEWLINK, 0, &body)
    }

    /// `ip link set dev IFINDEX up|down`.
    pub fn set_up(&mut self, ifindex: u32, up: bool) -> io::Result<()> {
        const IFF_UP: u32 = 1;
        let mut body = Vec::new();
        body.extend_from_slice(&[libc::AF_UNSPEC as u8, 0]);
        body.extend_from_slice(&0u16.to_ne_bytes());
        body.extend_from_slice(&(ifindex as i32).to_ne_bytes());
        body.extend_from_slice(&(if up { IFF_UP } else { 0 }).to_ne_bytes());
        body.extend_from_slice(&IFF_UP.to_ne_bytes());
        self.request(RTM_NEWLINK, 0, &body)
    }

    /// `ip addr add|del ADDR/PREFIX dev IFINDEX [nodad]`.
    pub fn address(
        &mut self,
        add: bool,
        ifindex: u32,
        addr: IpAddr,
        prefix: u8,
        flags: u8,
    ) -> io::Result<()> {
        let (family, bytes): (u8, Vec<u8>) = match addr {
            IpAddr::V4(a) => (libc::AF_INET as u8, a.octets().to_vec()),
            IpAddr::V6(a) => (libc::AF_INET6 as u8, a.octets().to_vec()),
        };
        let mut body = vec![family, prefix, flags, 0];
        body.extend_from_slice(&ifindex.to_ne_bytes());
        push_attr(&mut body, IFA_LOCAL, &bytes);
        push_attr(&mut body, IFA_ADDRESS, &bytes);
        if add {
            self.request(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, &body)
        } else {
            self.request(RTM_DELADDR, 0, &body)
        }
    }
}

/// if_nametoindex(3) inside the named namespace.
pub fn ifindex_in(netns: &str, name: &str) -> io::Result<u32> {
    let path = format!("/run/netns/{netns}");
    let name = std::ffi::CString::new(name).map_err(io::Error::other)?;
    std::thread::scope(|s| {
        s.spawn(|| {
            let ns = std::fs::File::open(&path)?;
            // SAFETY: setns on this thread only.
            if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: name is a valid C string.
            match unsafe { libc::if_nametoindex(name.as_ptr()) } {
                0 => Err(io::Error::last_os_error()),
                i => Ok(i),
            }
        })
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("ifindex thread panicked")))
    })
}

/// NETLINK_SOCK_DIAG (include/uapi/linux/sock_diag.h, inet_diag.h).
const NETLINK_SOCK_DIAG: libc::c_int = 4;
const SOCK_DIAG_BY_FAMILY: u16 = 20;
const NLM_F_DUMP: u16 = 0x300;
const NLMSG_DONE: u16 = 3;
/// inet_diag attribute carrying the protocol's info struct.
const INET_DIAG_INFO: u16 = 2;
/// `struct inet_diag_msg`: family, state, timer, retrans, the 48-byte
/// socket id, then five u32.
const INET_DIAG_MSG_LEN: usize = 72;
/// TCP_ESTABLISHED..TCP_CLOSING without TCP_LISTEN (bit 10): associations
/// only, not listening endpoints.
const DIAG_STATES: u32 = 0xffff & !(1 << 10);

/// `struct sctp_info` (include/uapi/linux/sctp.h), what sctp_diag reports
/// for an association; the fields before `p_error` matter here.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct SctpInfo {
    pub tag: u32,
    pub state: u32,
    pub rwnd: u32,
    pub unackdata: u16,
    pub penddata: u16,
    pub instrms: u16,
    pub outstrms: u16,
    pub fragmentation_point: u32,
    pub inqueue: u32,
    pub outqueue: u32,
    /// asoc->overall_error_count.
    pub overall_error: u32,
    pub max_burst: u32,
    pub maxseg: u32,
    pub peer_rwnd: u32,
    pub peer_tag: u32,
    pub peer_capable: u8,
    pub peer_sack: u8,
    pub reserved1: u16,
    pub counters: [u64; 14],
    pub p_address: libc::sockaddr_storage,
    pub p_state: i32,
    pub p_cwnd: u32,
    pub p_srtt: u32,
    pub p_rto: u32,
    pub p_hbinterval: u32,
    pub p_pathmaxrxt: u32,
    pub p_sackdelay: u32,
    pub p_sackfreq: u32,
    pub p_ssthresh: u32,
    pub p_partial_bytes_acked: u32,
    pub p_flight_size: u32,
    /// The primary path's error counter (transport->error_count).
    pub p_error: u16,
    pub reserved2: u16,
    pub s_autoclose: u32,
    pub s_adaptation_ind: u32,
    pub s_pd_point: u32,
    pub s_flags: [u8; 4],
    pub s_type: u32,
    pub reserved3: u32,
}

/// A sock_diag client for SCTP associations in this namespace.
pub struct SctpDiag {
    fd: OwnedFd,
    family: u8,
    seq: u32,
}

impl SctpDiag {
    /// Opens a NETLINK_SOCK_DIAG socket for associations of `v6` or IPv4
    /// sockets (needs the sctp_diag module).
    pub fn open(v6: bool) -> io::Result<Self> {
        // SAFETY: plain socket(2).
        let fd = unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                NETLINK_SOCK_DIAG,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let family = (if v6 { libc::AF_INET6 } else { libc::AF_INET }) as u8;
        // SAFETY: fd is new and owned here.
        Ok(SctpDiag {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            family,
            seq: 1,
        })
    }

    /// The `struct sctp_info` of every association in the namespace.
    pub fn associations(&mut self) -> io::Result<Vec<SctpInfo>> {
        self.seq += 1;
        // nlmsghdr, then struct inet_diag_req_v2: family, protocol,
        // ext (bit INET_DIAG_INFO - 1), pad, states, a zero socket id.
        let mut msg = Vec::with_capacity(16 + 56);
        msg.extend_from_slice(&(16u32 + 56).to_ne_bytes());
        msg.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
        msg.extend_from_slice(&(NLM_F_REQUEST | NLM_F_DUMP).to_ne_bytes());
        msg.extend_from_slice(&self.seq.to_ne_bytes());
        msg.extend_from_slice(&0u32.to_ne_bytes());
        msg.extend_from_slice(&[
            self.family,
            crate::sctp_sys::IPPROTO_SCTP as u8,
            1 << (INET_DIAG_INFO - 1),
            0,
        ]);
        msg.extend_from_slice(&DIAG_STATES.to_ne_bytes());
        msg.resize(16 + 56, 0);
        // SAFETY: msg is readable; the socket's default peer is the kernel.
        if unsafe { libc::send(self.fd.as_raw_fd(), msg.as_ptr().cast(), msg.len(), 0) } < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut out = Vec::new();
        let mut buf = vec![0u8; 32768];
        loop {
            // SAFETY: buf is writable.
            let n =
                unsafe { libc::recv(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
            if n < 0 {
                return Err(io::Error::last_os_error());
            }
            let mut at = 0;
            let n = n as usize;
            while at + 16 <= n {
                let len = u32::from_ne_bytes(buf[at..at + 4].try_into().expect("4")) as usize;
                let kind = u16::from_ne_bytes([buf[at + 4], buf[at + 5]]);
                if len < 16 || at + len > n {
                    return Err(io::Error::other("bad sock_diag message"));
                }
                match kind {
                    NLMSG_DONE => return Ok(out),
                    NLMSG_ERROR => {
                        let code = i32::from_ne_bytes(buf[at + 16..at + 20].try_into().expect("4"));
                        return Err(io::Error::from_raw_os_error(-code));
                    }
                    SOCK_DIAG_BY_FAMILY => {
                        if let Some(info) = info_attr(&buf[at + 16..at + len]) {
                            out.push(info);
                        }
                    }
                    _ => {}
                }
                at += align4(len);
            }
        }
    }
}

/// The INET_DIAG_INFO attribute of one inet_diag_msg, as `struct sctp_info`.
fn info_attr(body: &[u8]) -> Option<SctpInfo> {
    let mut at = INET_DIAG_MSG_LEN;
    while at + 4 <= body.len() {
        let len = usize::from(u16::from_ne_bytes([body[at], body[at + 1]]));
        let kind = u16::from_ne_bytes([body[at + 2], body[at + 3]]);
        if len < 4 || at + len > body.len() {
            return None;
        }
        if kind == INET_DIAG_INFO && len - 4 >= size_of::<SctpInfo>() {
            // SAFETY: the attribute holds a whole struct sctp_info (plain
            // old data); read_unaligned copes with its alignment.
            return Some(unsafe { std::ptr::read_unaligned(body[at + 4..].as_ptr().cast()) });
        }
        at += align4(len);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sctp_info_layout_matches_the_uapi_header() {
        assert_eq!(size_of::<SctpInfo>(), 368);
        assert_eq!(std::mem::offset_of!(SctpInfo, overall_error), 32);
        assert_eq!(std::mem::offset_of!(SctpInfo, counters), 56);
        assert_eq!(std::mem::offset_of!(SctpInfo, p_address), 168);
        assert_eq!(std::mem::offset_of!(SctpInfo, p_state), 296);
        assert_eq!(std::mem::offset_of!(SctpInfo, p_error), 340);
        assert_eq!(std::mem::offset_of!(SctpInfo, s_autoclose), 344);
    }

    #[test]
    fn info_attribute_found_after_padding() {
        let mut body = vec![0u8; INET_DIAG_MSG_LEN];
        // An 8-byte pad attribute (as nla_reserve_64bit adds), then INFO.
        push_attr(&mut body, 8, &[0; 4]);
        let mut info = vec![0u8; size_of::<SctpInfo>()];
        info[0..4].copy_from_slice(&7u32.to_ne_bytes());
        info[340..342].copy_from_slice(&3u16.to_ne_bytes());
        push_attr(&mut body, INET_DIAG_INFO, &info);
        let i = info_attr(&body).expect("found");
        assert_eq!((i.tag, i.p_error), (7, 3));
        assert!(info_attr(&body[..INET_DIAG_MSG_LEN + 8]).is_none());
    }
}
