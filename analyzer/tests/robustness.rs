//! Damaged input never panics and never loses a frame: real packets with
//! bytes flipped, lengths cut and headers overwritten, deterministically.

mod common;

use common::Rng;

use sctp_handover::analysis::{analyze_file, AnalysisOptions};

#[test]
fn mutated_captures_are_fully_accounted_without_panics() {
    let dir = common::tempdir("mutations");
    let mut rng = Rng(0x5c79_4a4d_0be1_1c0d);
    let options = AnalysisOptions {
        verify_checksum: true,
        ..AnalysisOptions::default()
    };
    for name in ["koh-kim-1", "koh-kim-1-ipv6", "bokor-failover"] {
        let frames = common::read_frames(&common::sample(name, "mn"));
        for round in 0..40 {
            let mut data: Vec<Vec<u8>> = frames.iter().map(|f| f.data.clone()).collect();
            for d in data.iter_mut() {
                match rng.below(6) {
                    // Flip a few bytes anywhere after the SLL2 header.
                    0 | 1 => {
                        for _ in 0..=rng.below(4) {
                            let i = 20 + rng.below(d.len().saturating_sub(20));
                            if i < d.len() {
                                d[i] ^= (rng.next() as u8) | 1;
                            }
                        }
                    }
                    // Cut the frame anywhere.
                    2 => {
                        let keep = rng.below(d.len() + 1);
                        d.truncate(keep);
                    }
                    // Overwrite a chunk or parameter length field.
                    3 if d.len() > 60 => {
                        let i = 40 + rng.below(d.len() - 42);
                        d[i] = rng.next() as u8;
                        d[i + 1] = rng.next() as u8;
                    }
                    _ => {}
                }
            }
            let path = dir.join(format!("{name}-{round}.pcap"));
            common::write_altered_sll2(&path, &frames, &data);
            let a = analyze_file(&path, &options).expect("still a capture");
            assert_eq!(a.frames, frames.len() as u64, "{name} round {round}");
            assert_eq!(a.accounting.total(), a.frames, "{name} round {round}");
            // The JSON document can always be produced.
            serde_json::to_string(&a).expect("serialisable");
        }
    }
}
