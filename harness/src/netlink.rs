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
