//! The Statistics text of the C tier (`tshark -z sctpho`, Statistics →
//! SCTP Handover): the same text as the Lua tier's `Core:summary`
//! (dissector/sctpho_core.lua), built from the analyzer's events while they
//! stream by: per association its ports, paths with their inferred state
//! changes, and ASCONF exchanges; then every data path switch.

use sctp_handover::events::AsconfRequestEvent;
use sctp_handover::handover::Handover;
use std::fmt::Write;
use std::net::IpAddr;

/// A path as first seen (ids are handed out in that order).
#[derive(Debug, Clone)]
pub(crate) struct PathSummary {
    pub src: IpAddr,
    pub dst: IpAddr,
    /// The endpoint that sent its first packet.
    sender: usize,
    /// The inferred states entered (`potentially_failed`, `inactive`,
    /// `active`) and their frames, in order.
    changes: Vec<(&'static str, u64)>,
    clears: u32,
    spurious: u32,
}

/// One ASCONF exchange: a serial of a sender, with its copies sent again
/// (as the Lua tier groups them: a copy joins the latest exchange of its
/// sender and serial).
#[derive(Debug, Clone)]
struct AsconfSummary {
    frame: u64,
    serial: u32,
    sender: usize,
    requests: Vec<(&'static str, IpAddr)>,
    transmissions: u32,
    last_frame: u64,
    ack_frame: Option<u64>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct AssociationSummary {
    /// Endpoint 0's and endpoint 1's ports (from the tracker, at the
    /// association's first frame).
    pub ports: Option<[u16; 2]>,
    first_frame: u64,
    pub paths: Vec<PathSummary>,
    asconfs: Vec<AsconfSummary>,
}

#[derive(Debug, Clone)]
struct SwitchSummary {
    association: u32,
    sender: usize,
    from_path: u16,
    to_path: u16,
    kind: &'static str,
    frame: u64,
    last_old: Option<u64>,
    first_new: Option<u64>,
    interrupt_ms: Option<f64>,
}

/// What the summary lists, gathered as the analysis goes.
#[derive(Debug, Default)]
pub(crate) struct Summary {
    /// By association id (dense, in order of creation).
    pub associations: Vec<AssociationSummary>,
    switches: Vec<SwitchSummary>,
}

impl Summary {
    /// A packet of `association` on `path` (sent by `sender`): a new
    /// association or path is noted. True for a new association.
    pub fn packet(
        &mut self,
        association: u32,
        frame: u64,
        path: u16,
        sender: usize,
        src: IpAddr,
        dst: IpAddr,
    ) -> bool {
        let a = association as usize;
        let new = self.associations.len() <= a;
        if new {
            self.associations
                .resize_with(a + 1, AssociationSummary::default);
            self.associations[a].first_frame = frame;
        }
        let paths = &mut self.associations[a].paths;
        if paths.len() == usize::from(path) {
            paths.push(PathSummary {
                src,
                dst,
                sender,
                changes: Vec::new(),
                clears: 0,
                spurious: 0,
            });
        }
        new
    }

    fn path(&mut self, association: u32, path: u16) -> Option<&mut PathSummary> {
        self.associations
            .get_mut(association as usize)?
            .paths
            .get_mut(usize::from(path))
    }

    /// The inferred state `state` entered by the path at `frame`.
    pub fn state(&mut self, association: u32, path: u16, state: &'static str, frame: u64) {
        if let Some(p) = self.path(association, path) {
            p.changes.push((state, frame));
        }
    }

    /// The path's error counter was cleared (from a non-zero count).
    pub fn cleared(&mut self, association: u32, path: u16) {
        if let Some(p) = self.path(association, path) {
            p.clears += 1;
        }
    }

    /// A T3 expiry of the path turned out spurious.
    pub fn spurious(&mut self, association: u32, path: u16) {
        if let Some(p) = self.path(association, path) {
            p.spurious += 1;
        }
    }

    /// An ASCONF at `frame`: a new exchange, or a copy sent again joining
    /// the latest exchange of its sender and serial.
    pub fn asconf(
        &mut self,
        association: u32,
        frame: u64,
        sender: usize,
        serial: u32,
        transmission: u32,
        requests: &[AsconfRequestEvent],
    ) {
        let Some(a) = self.associations.get_mut(association as usize) else {
            return;
        };
        let joined = (transmission > 1)
            .then(|| {
                a.asconfs
                    .iter_mut()
                    .rev()
                    .find(|x| x.serial == serial && x.sender == sender)
            })
            .flatten();
        match joined {
            Some(x) => {
                x.transmissions = transmission;
                x.last_frame = frame;
            }
            None => a.asconfs.push(AsconfSummary {
                frame,
                serial,
                sender,
                requests: requests.iter().map(|r| (r.op.name(), r.address)).collect(),
                transmissions: transmission,
                last_frame: frame,
                ack_frame: None,
            }),
        }
    }

    /// The ASCONF-ACK at `frame` answering the transmission of `serial` at
    /// `request_frame`.
    pub fn asconf_ack(&mut self, association: u32, serial: u32, request_frame: u64, frame: u64) {
        let Some(a) = self.associations.get_mut(association as usize) else {
            return;
        };
        if let Some(x) = a
            .asconfs
            .iter_mut()
            .rev()
            .find(|x| x.serial == serial && x.last_frame == request_frame)
        {
            x.ack_frame = Some(frame);
        }
    }

    /// A data path switch of kind `kind`.
    pub fn switch(&mut self, h: &Handover, kind: &'static str) {
        self.switches.push(SwitchSummary {
            association: h.association,
            sender: h.sender,
            from_path: h.from_path,
            to_path: h.to_path,
            kind,
            frame: h.switch_frame,
            last_old: h.data_interrupt.from.and_then(|p| p.frame),
            first_new: h.data_interrupt.to.and_then(|p| p.frame),
            interrupt_ms: h.data_interrupt.ms,
        });
    }

    /// The text, line for line the Lua tier's `Core:summary` (no newline
    /// at the end).
    pub fn text(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) -> std::fmt::Result {
        write!(
            out,
            "SCTP Handover: {} association(s), {} data path switch(es)",
            self.associations.len(),
            self.switches.len()
        )?;
        for (id, a) in self.associations.iter().enumerate() {
            let [p0, p1] = a.ports.unwrap_or_default();
            write!(
                out,
                "\n\nassociation {id}  ports {p0} <-> {p1}  (first frame {})",
                a.first_frame
            )?;
            for (pid, p) in a.paths.iter().enumerate() {
                write!(
                    out,
                    "\n  path {pid}  {} -> {}  (sent by endpoint {})",
                    p.src, p.dst, p.sender
                )?;
                if !p.changes.is_empty() || p.clears > 0 || p.spurious > 0 {
                    let changes = if p.changes.is_empty() {
                        "active throughout".to_string()
                    } else {
                        p.changes
                            .iter()
                            .map(|(state, frame)| format!("{state} (frame {frame})"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    };
                    write!(
                        out,
                        "\n    state: {changes}; error counter cleared {} time(s); {} spurious T3 expir{}",
                        p.clears,
                        p.spurious,
                        if p.spurious == 1 { "y" } else { "ies" }
                    )?;
                }
            }
            for x in &a.asconfs {
                let ops: Vec<String> = x
                    .requests
                    .iter()
                    .map(|(op, address)| format!("{op} {address}"))
                    .collect();
                let sent = if x.transmissions > 1 {
                    format!(
                        ", sent {} times (last frame {})",
                        x.transmissions, x.last_frame
                    )
                } else {
                    String::new()
                };
                let ack = x
                    .ack_frame
                    .map_or("none".to_string(), |f| format!("frame {f}"));
                write!(
                    out,
                    "\n  ASCONF frame {} serial {} from endpoint {}: {}{sent} -> ACK {ack}",
                    x.frame,
                    x.serial,
                    x.sender,
                    ops.join(", ")
                )?;
            }
        }
        if !self.switches.is_empty() {
            write!(
                out,
                "\n\n{:<6} {:<4} {:<9} {:<9} {:>7} {:>9} {:>9} {:>12}",
                "assoc", "dir", "paths", "kind", "frame", "last old", "first new", "interrupt ms"
            )?;
            let frame = |f: Option<u64>| f.map_or("-".to_string(), |f| f.to_string());
            for s in &self.switches {
                write!(
                    out,
                    "\n{:<6} {:<4} {:<9} {:<9} {:>7} {:>9} {:>9} {:>12}",
                    s.association,
                    format!("{}>{}", s.sender, 1 - s.sender.min(1)),
                    format!("{}->{}", s.from_path, s.to_path),
                    s.kind,
                    s.frame,
                    frame(s.last_old),
                    frame(s.first_new),
                    s.interrupt_ms
                        .map_or("-".to_string(), |ms| format!("{ms:.3}"))
                )?;
            }
        }
        Ok(())
    }
}
