//! The two ways into the C plugin's analysis, without Wireshark: a
//! pre-scanned file and frames fed one by one give the same items; fed
//! frames that are not the pre-scanned file's (another file opened, the
//! file grown since) switch to frame-by-frame analysis without losing the
//! frames before.

#[path = "../../../../analyzer/tests/common/mod.rs"]
mod common;

use common::{read_frames, RawFrame};
use sctp_handover::time::Timestamp;
use sctpho_ffi::Analysis;
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

#[test]
fn prescan_and_frame_by_frame_give_the_same_items() {
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
                let kept: Vec<String> = d.iter().filter(|i| !is_look_ahead(i)).cloned().collect();
                (*f, kept)
            })
            .filter(|(_, d)| !d.is_empty())
            .collect();
        assert_eq!(shown, partial, "{}", path.display());
    }
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
