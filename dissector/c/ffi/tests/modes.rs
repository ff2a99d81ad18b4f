//! The two ways into the C plugin's analysis, without Wireshark: a
//! pre-scanned file and frames fed one by one give the same items; fed
//! frames that are not the pre-scanned file's (another file opened, the
//! file grown since) switch to frame-by-frame analysis without losing the
//! frames before.

#[path = "../../../../analyzer/tests/common/mod.rs"]
mod common;

use common::{read_frames, RawFrame};
use sctp_handover::analysis::{analyze_file, AnalysisOptions};
use sctp_handover::events::EventKind;
use sctp_handover::handover::COMPONENTS;
use sctp_handover::time::Timestamp;
use sctpho_ffi::{registered_fields, Analysis, ThresholdsIn, COMPONENT_PREFIX, EXPERTS};
use std::path::Path;

fn feed_all(a: &mut Analysis, frames: &[RawFrame]) {
    for (i, f) in frames.iter().enumerate() {
        a.feed(
            i as u64 + 1,
            Timestamp(f.ts_ns),
            f.link_type,
            0,
            f.original_len,
            &f.data,
        );
    }
}

/// Every frame's items, as text.
fn all_items(a: &mut Analysis, frames: u64, complete: bool) -> Vec<(u64, Vec<String>)> {
    (1..=frames)
        .map(|f| (f, a.describe(f, complete)))
        .filter(|(_, d)| !d.is_empty())
        .collect()
}

fn is_look_ahead(item: &str) -> bool {
    item.starts_with("sctpho.asconf.ack_frame=")
        || item.starts_with("sctpho.hb.ack_frame=")
        || item.starts_with("sctpho.expert.no_ack:")
}

fn is_component(item: &str) -> bool {
    item.starts_with(COMPONENT_PREFIX)
}

#[test]
fn prescan_and_frame_by_frame_give_the_same_items() {
    let mut later_seen = 0;
    for path in common::all_samples() {
        let frames = read_frames(&path);
        let n = frames.len() as u64;
        let mut pre = Analysis::prescan(&path).expect("readable");
        assert!(pre.is_prescanned());
        feed_all(&mut pre, &frames);
        assert!(pre.is_prescanned(), "{}: the same file", path.display());
        let want = all_items(&mut pre, n, false);
        assert!(!want.is_empty());
        let mut inc = Analysis::incremental();
        feed_all(&mut inc, &frames);
        assert_eq!(all_items(&mut inc, n, true), want, "{}", path.display());
        // Each frame as Wireshark's first pass shows it, right after it is
        // fed: everything but the look-ahead.
        let mut first_pass = Analysis::incremental();
        let mut shown = Vec::new();
        for (i, f) in frames.iter().enumerate() {
            let number = i as u64 + 1;
            first_pass.feed(
                number,
                Timestamp(f.ts_ns),
                f.link_type,
                0,
                f.original_len,
                &f.data,
            );
            let d = first_pass.describe(number, false);
            if !d.is_empty() {
                shown.push((number, d));
            }
        }
        let partial: Vec<(u64, Vec<String>)> = want
            .iter()
            .map(|(f, d)| {
                let kept: Vec<String> = d
                    .iter()
                    .filter(|i| !is_look_ahead(i) && !is_component(i))
                    .cloned()
                    .collect();
                (*f, kept)
            })
            .filter(|(_, d)| !d.is_empty())
            .collect();
        let (shown_components, shown): (Vec<_>, Vec<_>) = shown
            .into_iter()
            .map(|(f, d)| {
                let (c, rest): (Vec<String>, Vec<String>) =
                    d.into_iter().partition(|i| is_component(i));
                ((f, c), (f, rest))
            })
            .unzip();
        assert_eq!(shown, partial, "{}", path.display());
        // A switch's components as built at the switch: the settled ones
        // but those known only later (the total handover latency once the
        // TSNs around the gap are acknowledged, and the transport-layer
        // latency from it), never another value.
        for (f, components) in shown_components {
            let settled = &want.iter().find(|(w, _)| *w == f).expect("frame").1;
            for c in &components {
                assert!(settled.contains(c), "{} {f}: {c}", path.display());
            }
            let later: Vec<&String> = settled
                .iter()
                .filter(|i| is_component(i) && !components.contains(i))
                .collect();
            for c in later {
                assert!(
                    c.starts_with("sctpho.component.total_handover_latency=")
                        || c.starts_with("sctpho.component.transport_latency="),
                    "{} {f}: {c} only once settled",
                    path.display()
                );
                later_seen += 1;
            }
        }
    }
    // (koh-kim-1's planned switches: the total latency is known a SACK
    // after the switch.)
    assert!(later_seen > 0);
}

/// A switch frame's `sctpho.component.*` items are the analyzer's
/// handover's components through each descriptor's accessor, exactly (a
/// component with no value has no item), pre-scanned and frame by frame
/// once the capture has been read; no other frame has any.
#[test]
fn component_items_are_the_analyzers_handovers() {
    let mut values = 0;
    for path in common::all_samples() {
        let name = path.display();
        let handovers = analyze_file(&path, &AnalysisOptions::default())
            .expect("analysable")
            .handovers;
        assert!(!handovers.is_empty(), "{name}");
        let frames = read_frames(&path);
        let n = frames.len() as u64;
        let mut pre = Analysis::prescan(&path).expect("readable");
        let mut inc = Analysis::incremental();
        feed_all(&mut inc, &frames);
        for a in [&mut pre, &mut inc] {
            let mut with_components = Vec::new();
            for f in 1..=n {
                let items: Vec<String> = a
                    .describe(f, true)
                    .into_iter()
                    .filter(|i| is_component(i))
                    .collect();
                if !items.is_empty() {
                    with_components.push((f, items));
                }
            }
            let want: Vec<(u64, Vec<String>)> = handovers
                .iter()
                .map(|h| {
                    let items = COMPONENTS
                        .iter()
                        .filter_map(|c| {
                            c.value(h)
                                .map(|v| format!("{COMPONENT_PREFIX}{}={v}", c.name))
                        })
                        .collect();
                    (h.switch_frame, items)
                })
                .collect();
            assert_eq!(with_components, want, "{name}");
            values += want.iter().map(|(_, i)| i.len()).sum::<usize>();
        }
    }
    assert!(values > 200, "{values}");
}

/// One two-homed association, raw IPv4: B sends TSN 5000 on its path 0
/// and 5001 on its path 1 — a switch whose SACKs are not in the capture,
/// so its total handover latency never settles — then A sends one DATA
/// more than `switches`, alternating between its two paths, each SACKed
/// 1 ms later (every DATA after the first a switch). Returns the frames.
fn write_unsettled_switch(path: &Path, switches: u32) -> Vec<(i64, Vec<u8>)> {
    fn packet(src: [u8; 4], dst: [u8; 4], ports: (u16, u16), tag: u32, chunk: &[u8]) -> Vec<u8> {
        let mut sctp = Vec::new();
        sctp.extend_from_slice(&ports.0.to_be_bytes());
        sctp.extend_from_slice(&ports.1.to_be_bytes());
        sctp.extend_from_slice(&tag.to_be_bytes());
        sctp.extend_from_slice(&[0; 4]);
        sctp.extend_from_slice(chunk);
        while sctp.len() % 4 != 0 {
            sctp.push(0);
        }
        let crc = sctp_handover::wire::sctp::Packet::new_checked(&sctp[..])
            .expect("an SCTP header")
            .compute_checksum();
        sctp[8..12].copy_from_slice(&crc.to_le_bytes());
        let mut ip = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 132, 0, 0];
        ip[2..4].copy_from_slice(&(20 + sctp.len() as u16).to_be_bytes());
        ip.extend_from_slice(&src);
        ip.extend_from_slice(&dst);
        let sum: u32 = ip
            .chunks(2)
            .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
            .sum();
        let sum = (sum & 0xffff) + (sum >> 16);
        let sum = !((sum & 0xffff) + (sum >> 16)) as u16;
        ip[10..12].copy_from_slice(&sum.to_be_bytes());
        ip.extend_from_slice(&sctp);
        ip
    }
    fn chunk(kind: u8, flags: u8, body: &[u8]) -> Vec<u8> {
        let mut c = vec![kind, flags];
        c.extend_from_slice(&(4 + body.len() as u16).to_be_bytes());
        c.extend_from_slice(body);
        c
    }
    let init = |tag: u32, tsn: u32, addresses: [[u8; 4]; 2], cookie: bool| {
        let mut body = Vec::new();
        for v in [tag, 65_536] {
            body.extend_from_slice(&v.to_be_bytes());
        }
        body.extend_from_slice(&[0, 1, 0, 1]);
        body.extend_from_slice(&tsn.to_be_bytes());
        for a in addresses {
            // IPv4 Address parameter (RFC 9260 §3.3.2.1).
            body.extend_from_slice(&[0, 5, 0, 8]);
            body.extend_from_slice(&a);
        }
        if cookie {
            // State Cookie parameter (RFC 9260 §3.3.3.1).
            body.extend_from_slice(&[0, 7, 0, 12]);
            body.extend_from_slice(b"cookie00");
        }
        chunk(if cookie { 2 } else { 1 }, 0, &body)
    };
    let data = |tsn: u32, ssn: u16| {
        let mut body = tsn.to_be_bytes().to_vec();
        body.extend_from_slice(&[0, 0]);
        body.extend_from_slice(&ssn.to_be_bytes());
        body.extend_from_slice(&[0; 4]);
        body.extend_from_slice(&[b'x'; 100]);
        chunk(0, 3, &body)
    };
    let sack = |cumulative: u32| {
        let mut body = cumulative.to_be_bytes().to_vec();
        body.extend_from_slice(&65_536u32.to_be_bytes());
        body.extend_from_slice(&[0; 4]);
        chunk(3, 0, &body)
    };
    let a = [[10, 0, 0, 1], [10, 0, 1, 1]];
    let b = [[10, 0, 0, 2], [10, 0, 1, 2]];
    let (ab, ba) = ((5000, 6000), (6000, 5000));
    let (tag_a, tag_b) = (0x1111_1111, 0x2222_2222);
    let mut packets = vec![
        packet(a[0], b[0], ab, 0, &init(tag_a, 1000, a, false)),
        packet(b[0], a[0], ba, tag_a, &init(tag_b, 5000, b, true)),
        packet(a[0], b[0], ab, tag_b, &chunk(10, 0, b"cookie00")),
        packet(b[0], a[0], ba, tag_a, &chunk(11, 0, &[])),
        packet(b[0], a[0], ba, tag_a, &data(5000, 0)),
        packet(b[1], a[1], ba, tag_a, &data(5001, 1)),
    ];
    for k in 0..=switches {
        let p = (k % 2) as usize;
        packets.push(packet(a[p], b[p], ab, tag_b, &data(1000 + k, k as u16)));
        packets.push(packet(b[p], a[p], ba, tag_a, &sack(1000 + k)));
    }
    let frames: Vec<(i64, Vec<u8>)> = packets
        .into_iter()
        .enumerate()
        .map(|(i, p)| (1_735_689_600_000_000_000 + i as i64 * 1_000_000, p))
        .collect();
    // LINKTYPE_IPV4.
    common::write_frames(path, 228, true, false, &frames);
    frames
}

/// A switch that never settles (its SACKs not captured) holds back none
/// after it: each later switch frame shows its total handover latency (2
/// ms: its DATA 2 ms after the one before) as soon as its SACK is fed,
/// the first none, and all as the analyzer reports them. (Its settling
/// was once found by walking every switch after the first at each SACK.)
#[test]
fn a_switch_that_never_settles_holds_back_none_after_it() {
    let dir = common::tempdir("ffi-unsettled");
    let path = dir.join("unsettled.pcap");
    let switches = 300;
    let frames = write_unsettled_switch(&path, switches);
    let handovers = analyze_file(&path, &AnalysisOptions::default())
        .expect("analysable")
        .handovers;
    assert_eq!(handovers.len(), switches as usize + 1);
    let total = |items: &[String]| -> Option<String> {
        let key = format!("{COMPONENT_PREFIX}total_handover_latency=");
        items
            .iter()
            .find_map(|i| i.strip_prefix(&key).map(str::to_string))
    };
    let mut a = Analysis::incremental();
    for (i, (ts, data)) in frames.iter().enumerate() {
        let number = i as u64 + 1;
        a.feed(number, Timestamp(*ts), 228, 0, data.len() as u32, data);
        // A SACK of A's DATA: frames 8, 10, ...; the switches 9, 11, ...
        if number >= 10 && number % 2 == 0 {
            let shown = total(&a.describe(number - 1, false));
            assert_eq!(shown.as_deref(), Some("2"), "frame {}", number - 1);
        }
    }
    assert_eq!(total(&a.describe(6, true)), None);
    let mut pre = Analysis::prescan(&path).expect("readable");
    for h in &handovers {
        let want = h.total_handover_latency.ms.map(|ms| ms.to_string());
        assert_eq!(total(&a.describe(h.switch_frame, true)), want);
        assert_eq!(total(&pre.describe(h.switch_frame, true)), want);
    }
    assert_eq!(handovers[0].switch_frame, 6);
    assert_eq!(handovers[0].total_handover_latency.ms, None);
    assert_eq!(handovers[1].total_handover_latency.ms, Some(2.0));
}

/// The ASCONF items are the analyzer's events, not derived again: every
/// ASCONF carries its retransmission flag, transmission number and first
/// frame, with the retransmission note on copies sent again; an
/// ASCONF-ACK to a serial answered before is marked repeated.
#[test]
fn asconf_items_are_the_analyzers_events() {
    let mut resent = 0;
    for path in common::all_samples() {
        let name = path.display();
        let events = analyze_file(&path, &AnalysisOptions::default())
            .expect("analysable")
            .events;
        let mut a = Analysis::prescan(&path).expect("readable");
        for e in &events {
            let items = a.describe(e.frame, true);
            let has = |item: &str| items.iter().any(|i| i == item);
            match &e.kind {
                EventKind::Asconf {
                    serial,
                    retransmission,
                    transmission,
                    first_frame,
                    ..
                } => {
                    assert!(
                        has(&format!("sctpho.asconf.retransmission={retransmission}")),
                        "{name} {}: {items:?}",
                        e.frame
                    );
                    assert!(has(&format!("sctpho.asconf.transmission={transmission}")));
                    let first = items
                        .iter()
                        .find_map(|i| i.strip_prefix("sctpho.asconf.first_frame="))
                        .map(|f| f.parse::<u64>().expect("frame"));
                    assert_eq!(first, *first_frame, "{name} {}", e.frame);
                    let first_sent = match first_frame {
                        Some(f) => format!("first sent in frame {f}"),
                        None => "first transmission not known".to_string(),
                    };
                    let note = format!(
                        "sctpho.expert.asconf_retransmission: ASCONF retransmission {transmission} \
                         of serial {serial} ({first_sent})"
                    );
                    assert_eq!(has(&note), *retransmission, "{name} {}: {items:?}", e.frame);
                    resent += usize::from(*retransmission);
                }
                EventKind::AsconfAck { repeated, .. } => {
                    assert_eq!(
                        has("sctpho.asconf.repeated=true"),
                        *repeated,
                        "{name} {}: {items:?}",
                        e.frame
                    );
                }
                _ => {}
            }
        }
    }
    assert!(resent > 0, "the samples have ASCONFs sent again");
}

/// A serial sent again and never answered is warned about once, on its
/// last transmission (the request an answer would match), as the Lua tier
/// does: honda-nodad's ADD-IP, sent six times, without its ASCONF-ACKs.
#[test]
fn an_unanswered_serial_is_warned_about_on_its_last_transmission() {
    let dir = common::tempdir("ffi-unanswered");
    let src = common::sample("honda-nodad", "cn");
    let events = analyze_file(&src, &AnalysisOptions::default())
        .expect("analysable")
        .events;
    let frames_of = |ack: bool| -> Vec<u64> {
        events
            .iter()
            .filter(|e| match e.kind {
                EventKind::AsconfAck { .. } => ack,
                EventKind::Asconf { .. } => !ack,
                _ => false,
            })
            .map(|e| e.frame)
            .collect()
    };
    let (asconfs, acks) = (frames_of(false), frames_of(true));
    assert_eq!(asconfs.len(), 6);
    let path = dir.join("no-ack.pcap");
    common::write_without(&path, &src, &acks);
    let mut a = Analysis::prescan(&path).expect("readable");
    // The ASCONFs' frame numbers once the ACKs before each are gone.
    let renumbered: Vec<u64> = asconfs
        .iter()
        .map(|f| f - acks.iter().filter(|k| *k < f).count() as u64)
        .collect();
    let warned: Vec<u64> = renumbered
        .iter()
        .copied()
        .filter(|&f| {
            a.describe(f, true)
                .iter()
                .any(|i| i.starts_with("sctpho.expert.no_ack:"))
        })
        .collect();
    assert_eq!(warned, renumbered[5..].to_vec());
}

/// The unanswered-ASCONF warnings are the tracker's
/// (`Association::unanswered_asconfs`), pre-scanned or fed frame by frame:
/// on every sample with all its ASCONF-ACKs cut out, and with only the
/// answers to copies of an already answered serial cut out — honda-nodad's
/// ADD-IP, answered, then sent five times more: no warning, the request was
/// answered (a copy after the answer was warned about before).
#[test]
fn the_unanswered_asconf_warnings_are_the_trackers() {
    let dir = common::tempdir("ffi-unanswered-tracker");
    let mut totals = Vec::new();
    for (name, path) in common::samples_with_asconf_acks_cut(&dir) {
        let tracker: u64 = analyze_file(&path, &AnalysisOptions::default())
            .expect("analysable")
            .associations
            .iter()
            .map(|a| a.unanswered_asconfs())
            .sum();
        let frames = read_frames(&path);
        let n = frames.len() as u64;
        let warned = |a: &mut Analysis| -> u64 {
            (1..=n)
                .map(|f| {
                    a.describe(f, true)
                        .iter()
                        .filter(|i| i.starts_with("sctpho.expert.no_ack:"))
                        .count() as u64
                })
                .sum()
        };
        let mut pre = Analysis::prescan(&path).expect("readable");
        assert_eq!(warned(&mut pre), tracker, "{name}: pre-scanned");
        let mut inc = Analysis::incremental();
        feed_all(&mut inc, &frames);
        assert_eq!(warned(&mut inc), tracker, "{name}: frame by frame");
        totals.push((name, tracker));
    }
    let total = |name: &str| totals.iter().find(|(n, _)| n == name).map(|(_, t)| *t);
    // Checked by hand: honda-nodad's one ADD-IP serial, all answers cut:
    // one unanswered request; only the five repeated answers cut: none.
    assert_eq!(total("honda-nodad-cn-all"), Some(1));
    assert_eq!(total("honda-nodad-cn-repeated"), Some(0));
    assert!(totals.len() > 10, "{totals:?}");
}

/// An association that left the tracker (here idle: 400 s without a
/// packet) leaves the engine too, and its frames keep their items, the
/// unanswered-ASCONF warning included (honda-nodad without its
/// ASCONF-ACKs: one).
#[test]
fn an_association_that_left_the_tracker_leaves_the_engine_and_keeps_its_items() {
    let dir = common::tempdir("ffi-left");
    let src = common::sample("honda-nodad", "cn");
    let acks = common::asconf_ack_frames(
        &analyze_file(&src, &AnalysisOptions::default())
            .expect("analysable")
            .events,
        false,
    );
    let path = dir.join("no-ack.pcap");
    common::write_without(&path, &src, &acks);
    let frames = read_frames(&path);
    let n = frames.len() as u64;
    let mut a = Analysis::incremental();
    feed_all(&mut a, &frames);
    let items = all_items(&mut a, n, true);
    let warnings = |items: &[(u64, Vec<String>)]| {
        items
            .iter()
            .flat_map(|(_, d)| d)
            .filter(|i| i.starts_with("sctpho.expert.no_ack:"))
            .count()
    };
    assert_eq!(warnings(&items), 1);
    assert_eq!(a.associations_alive(), 1);
    // A frame 400 s after the last, its link-layer header only (no
    // packet): the association leaves the tracker before it.
    let last = frames.last().expect("frames");
    let header = &last.data[..20];
    a.feed(
        n + 1,
        Timestamp(last.ts_ns + 400_000_000_000),
        last.link_type,
        0,
        header.len() as u32,
        header,
    );
    assert_eq!(a.associations_alive(), 0);
    assert_eq!(all_items(&mut a, n, true), items);
}

#[test]
fn frames_of_another_file_are_analysed_frame_by_frame() {
    let scanned = common::sample("bokor-failover", "mn");
    let other = common::sample("koh-kim-1", "mn");
    let frames = read_frames(&other);
    let n = frames.len() as u64;
    let mut a = Analysis::prescan(&scanned).expect("readable");
    feed_all(&mut a, &frames);
    assert!(!a.is_prescanned());
    let mut want = Analysis::prescan(&other).expect("readable");
    assert_eq!(all_items(&mut a, n, true), all_items(&mut want, n, true));
}

#[test]
fn a_file_grown_since_the_prescan_is_analysed_to_its_end() {
    let dir = common::tempdir("ffi-grown");
    let full = common::sample("koh-kim-1", "mn");
    let frames = read_frames(&full);
    let n = frames.len() as u64;
    // The pre-scan saw the first 100 frames; Wireshark reads all of them.
    let head = dir.join("head.pcap");
    let data: Vec<Vec<u8>> = frames[..100].iter().map(|f| f.data.clone()).collect();
    common::write_altered_sll2(&head, &frames[..100], &data);
    let mut a = Analysis::prescan(&head).expect("readable");
    feed_all(&mut a, &frames);
    assert!(!a.is_prescanned());
    let mut want = Analysis::prescan(&full).expect("readable");
    assert_eq!(all_items(&mut a, n, true), all_items(&mut want, n, true));
    assert!(Analysis::prescan(Path::new("/nonexistent.pcap")).is_none());
}

/// The thresholds of a sample's own sender (its meta.json).
fn own_thresholds(capture: &Path) -> ThresholdsIn {
    let meta = capture.with_file_name("meta.json");
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(meta).expect("meta.json")).expect("JSON");
    let sctp = &meta["sctp"];
    ThresholdsIn {
        path_max_retrans: sctp["path_max_retrans"].as_u64().expect("pmr") as u32,
        pf_retrans: if sctp["pf_enable"] == true {
            sctp["pf_retrans"].as_i64().unwrap_or(0)
        } else {
            -1
        },
        rto_max_ms: sctp["rto_max_ms"].as_u64().expect("rto_max_ms") as u32,
    }
}

/// The inferred path state's items are the analyzer's events, with the
/// analyzer's default thresholds and with each sample's own: every
/// path_potentially_failed, path_inactive, path_active,
/// error_counter_cleared and spurious_expiry on its frame, with its
/// expert info naming the path (addresses), the error count and the
/// threshold passed or the expiry's frame, and sctpho.path.state /
/// sctpho.path.state_path for each transition; no other frame has them.
#[test]
fn path_state_items_are_the_analyzers_events() {
    let mut seen = std::collections::BTreeMap::<&str, usize>::new();
    for capture in common::all_samples() {
        let name = capture.display().to_string();
        for t in [ThresholdsIn::default(), own_thresholds(&capture)] {
            let options = t.options();
            let analysis = analyze_file(&capture, &options).expect("analysable");
            let mut a = Analysis::prescan_with(&capture, &options).expect("readable");
            // Per frame, the items the events call for, in order.
            let mut want: std::collections::BTreeMap<u64, Vec<String>> = Default::default();
            let mut state = std::collections::HashMap::new();
            for e in &analysis.events {
                let label = |path: u16| {
                    let p = &analysis.associations[e.association as usize].paths[usize::from(path)];
                    format!("path {path} ({} -> {})", p.src, p.dst)
                };
                let (kind, path, text, entered) = match &e.kind {
                    EventKind::PathPotentiallyFailed { path, error_count } => (
                        "potentially_failed",
                        *path,
                        format!(
                            "{} potentially failed: error count {error_count} exceeds PFMR {}",
                            label(*path),
                            t.pf_retrans
                        ),
                        Some("potentially_failed"),
                    ),
                    EventKind::PathInactive { path, error_count } => (
                        "inactive",
                        *path,
                        format!(
                            "{} inactive: error count {error_count} exceeds Path.Max.Retrans {}",
                            label(*path),
                            t.path_max_retrans
                        ),
                        Some("inactive"),
                    ),
                    EventKind::PathActive { path } => (
                        "active",
                        *path,
                        format!(
                            "{} active again (was {})",
                            label(*path),
                            state.get(&(e.association, *path)).copied().unwrap_or("?")
                        ),
                        Some("active"),
                    ),
                    EventKind::ErrorCounterCleared {
                        path,
                        error_count,
                        by,
                    } => (
                        "counter_cleared",
                        *path,
                        format!(
                            "{} error counter cleared from {error_count} by a {}",
                            label(*path),
                            if *by == "sack" {
                                "SACK"
                            } else {
                                "HEARTBEAT ACK"
                            }
                        ),
                        None,
                    ),
                    EventKind::SpuriousExpiry {
                        path,
                        expiry_frame,
                        tsn,
                        ..
                    } => (
                        "spurious_expiry",
                        *path,
                        format!(
                            "spurious T3 expiry of {} in frame {expiry_frame}: TSN {tsn} was \
                             reported as a duplicate",
                            label(*path)
                        ),
                        None,
                    ),
                    _ => continue,
                };
                *seen.entry(kind).or_default() += 1;
                if let Some(s) = entered {
                    state.insert(
                        (e.association, path),
                        if s == "inactive" {
                            "inactive"
                        } else {
                            "potentially failed"
                        },
                    );
                }
                let items = want.entry(e.frame).or_default();
                if let Some(s) = entered {
                    items.push(format!("sctpho.path.state={s}"));
                    items.push(format!("sctpho.path.state_path={path}"));
                }
                items.push(format!("sctpho.expert.{kind}: {text}"));
            }
            let is_path_state = |i: &String| {
                i.starts_with("sctpho.path.state")
                    || [
                        "potentially_failed",
                        "inactive",
                        "active",
                        "counter_cleared",
                        "spurious_expiry",
                    ]
                    .iter()
                    .any(|k| i.starts_with(&format!("sctpho.expert.{k}:")))
            };
            let got: std::collections::BTreeMap<u64, Vec<String>> = a
                .frames()
                .into_iter()
                .filter_map(|f| {
                    let items: Vec<String> = a
                        .describe(f, true)
                        .into_iter()
                        .filter(is_path_state)
                        .collect();
                    (!items.is_empty()).then_some((f, items))
                })
                .collect();
            // (The items come by field group: states before expert infos.)
            let grouped: std::collections::BTreeMap<u64, Vec<String>> = want
                .into_iter()
                .map(|(f, items)| {
                    let (mut states, experts): (Vec<String>, Vec<String>) = items
                        .into_iter()
                        .partition(|i| i.starts_with("sctpho.path."));
                    states.extend(experts);
                    (f, states)
                })
                .collect();
            assert_eq!(got, grouped, "{name} {t:?}");
        }
    }
    for kind in [
        "potentially_failed",
        "inactive",
        "active",
        "counter_cleared",
        "spurious_expiry",
    ] {
        assert!(seen.get(kind).is_some_and(|n| *n > 0), "{kind}: {seen:?}");
    }
}

/// The fields and expert infos are described once (src/fields.rs): the
/// C plugin registers them from the library at run time and the Lua tier
/// from its generated table (tests/lua_fields.rs), so neither source names
/// one of its own (but the expert info the C side's "unconfirmed_note"
/// preference turns off), and dissector/tests/fields.txt names only
/// described fields.
#[test]
fn fields_and_experts_are_described_once() {
    let dir = common::repo_root().join("dissector");
    let c = std::fs::read_to_string(dir.join("c/sctpho_plugin.c")).expect("plugin source");
    let lua = std::fs::read_to_string(dir.join("sctpho.lua")).expect("Lua plugin");
    for d in registered_fields() {
        let name = format!("\"{}\"", d.abbrev.to_string_lossy());
        assert!(!c.contains(&name), "sctpho_plugin.c names {name}");
        assert!(!lua.contains(&name), "sctpho.lua names {name}");
    }
    for d in &EXPERTS {
        let name = format!("\"{}\"", d.abbrev.to_string_lossy());
        let allowed = usize::from(name == "\"sctpho.expert.unconfirmed\"");
        assert_eq!(
            c.matches(&name).count(),
            allowed,
            "sctpho_plugin.c names {name}"
        );
        assert!(!lua.contains(&name), "sctpho.lua names {name}");
    }
    let described: Vec<String> = registered_fields()
        .iter()
        .map(|d| d.abbrev.to_string_lossy().into_owned())
        .collect();
    for f in common::plugin_fields() {
        assert!(
            f == "frame.number" || described.contains(&f),
            "fields.txt: {f}"
        );
    }
}
