//! The check on real events.jsonl lines: excerpts of the committed runs
//! (reports/reproduction/runs, sample-captures), the kernel_mib lines and
//! the MN's kernel lines left out where the check does not read them.

use super::*;

/// reports/reproduction/runs/koh-kim-1/koh-kim-1/delay=5/r01: ADD-IP,
/// SET-PRIMARY and DELETE-IP each acknowledged by the CN's kernel within
/// 6 ms, then the old link goes down (the CN's lines only).
const KOH_KIM_1: &str = r#"{"time":"1795445748.035504794","time_after":"1795445748.068860058","kind":"assoc_up","ok":true}
{"time":"1795445748.119709594","node":"cn","kind":"kernel_status","state":"established","primary":"198.51.100.101","primary_state":"active","rto_ms":200,"srtt_ms":20,"cwnd":4380,"unacked":0,"pending":0,"primary_error_count":0,"overall_error_count":0}
{"time":"1795445748.120256922","node":"cn","kind":"kernel_paddr","address":"198.51.100.101","state":"active","rto_ms":200,"srtt_ms":20,"cwnd":4380}
{"time":"1795445748.890964122","time_after":"1795445748.891259290","kind":"add_address","interface":"eth2","address":"198.51.100.102","ok":true}
{"time":"1795445748.891478426","kind":"addr_up","interface":"eth2","address":"198.51.100.102","ok":true}
{"time":"1795445749.106176410","time_after":"1795445749.106320282","kind":"bindx_add","address":"198.51.100.102","ok":true}
{"time":"1795445749.116790170","node":"cn","kind":"kernel_addr_change","address":"198.51.100.102","state":"added","spc_error":"failed_threshold"}
{"time":"1795445749.123365786","node":"cn","kind":"kernel_paddr","address":"198.51.100.102","state":"unconfirmed","rto_ms":1000,"srtt_ms":0,"cwnd":4380}
{"time":"1795445749.128774554","node":"cn","kind":"kernel_addr_change","address":"198.51.100.102","state":"confirmed","spc_error":"heartbeat_success"}
{"time":"1795445749.130294938","node":"cn","kind":"kernel_paddr","address":"198.51.100.102","state":"active","rto_ms":200,"srtt_ms":20,"cwnd":4380}
{"time":"1795445749.589778074","time_after":"1795445749.589888922","kind":"set_peer_primary","address":"198.51.100.102","ok":true}
{"time":"1795445749.595435418","node":"cn","kind":"kernel_addr_change","address":"198.51.100.102","state":"made_primary","spc_error":"failed_threshold"}
{"time":"1795445749.611896730","node":"cn","kind":"kernel_status","state":"established","primary":"198.51.100.102","primary_state":"active","rto_ms":200,"srtt_ms":20,"cwnd":4380,"unacked":1,"pending":0,"primary_error_count":0,"overall_error_count":0}
{"time":"1795445750.090024858","time_after":"1795445750.090498714","kind":"bindx_remove","address":"198.51.100.101","ok":true}
{"time":"1795445750.096041882","node":"cn","kind":"kernel_addr_change","address":"198.51.100.101","state":"removed","spc_error":"failed_threshold"}
{"time":"1795445750.601081242","time_after":"1795445750.601274010","kind":"link_down","interface":"eth1","ok":true}
{"time":"1795445751.635273882","kind":"traffic_end","ok":true}
{"time":"1795445751.649782938","node":"cn","kind":"kernel_status","state":"shutdown_ack_sent","primary":"198.51.100.102","primary_state":"active","rto_ms":200,"srtt_ms":30,"cwnd":4380,"unacked":0,"pending":0,"primary_error_count":0,"overall_error_count":0}"#;

/// reports/reproduction/runs/honda/honda-nodad/default/r01 (the CN's lines,
/// kernel_paddr left out): the CN adds 2001:db8::102, but SET-PRIMARY and
/// DELETE-IP never arrive; 2001:db8::101 fails over instead.
const HONDA_NODAD: &str = r#"{"time":"1795446965.620728213","time_after":"1795446965.641735061","kind":"assoc_up","ok":true}
{"time":"1795446965.644984725","node":"cn","kind":"kernel_status","state":"established","primary":"2001:db8::101","primary_state":"active","rto_ms":1000,"srtt_ms":0,"cwnd":4380,"unacked":1,"pending":0,"primary_error_count":0,"overall_error_count":0}
{"time":"1795446966.642413461","time_after":"1795446966.642626197","kind":"addr_down","interface":"wlan0","address":"2001:db8::101","ok":true}
{"time":"1795446966.642700437","time_after":"1795446966.642826389","kind":"add_address","interface":"wlan0","address":"2001:db8::102","ok":true}
{"time":"1795446966.642911381","kind":"addr_up","interface":"wlan0","address":"2001:db8::102","ok":true}
{"time":"1795446966.642972053","time_after":"1795446966.643070869","kind":"bindx_add","address":"2001:db8::102","ok":true}
{"time":"1795446966.643112853","time_after":"1795446966.643144085","kind":"set_peer_primary","address":"2001:db8::102","ok":true}
{"time":"1795446966.643187349","time_after":"1795446966.643218069","kind":"bindx_remove","address":"2001:db8::101","ok":true}
{"time":"1795446966.649161877","node":"cn","kind":"kernel_addr_change","address":"2001:db8::102","state":"added","spc_error":"failed_threshold"}
{"time":"1795446966.658726293","node":"cn","kind":"kernel_addr_change","address":"2001:db8::102","state":"confirmed","spc_error":"heartbeat_success"}
{"time":"1795446966.856187029","node":"cn","kind":"kernel_status","state":"established","primary":"2001:db8::101","primary_state":"active","rto_ms":400,"srtt_ms":10,"cwnd":1500,"unacked":4,"pending":0,"primary_error_count":1,"overall_error_count":1}
{"time":"1795446966.905325205","node":"cn","kind":"kernel_status","state":"established","primary":"2001:db8::101","primary_state":"active","rto_ms":400,"srtt_ms":10,"cwnd":1500,"unacked":2,"pending":0,"primary_error_count":1,"overall_error_count":0}
{"time":"1795446967.295116693","node":"cn","kind":"kernel_status","state":"established","primary":"2001:db8::101","primary_state":"active","rto_ms":800,"srtt_ms":10,"cwnd":1500,"unacked":2,"pending":0,"primary_error_count":2,"overall_error_count":1}
{"time":"1795446967.355084181","node":"cn","kind":"kernel_status","state":"established","primary":"2001:db8::101","primary_state":"active","rto_ms":800,"srtt_ms":10,"cwnd":1500,"unacked":2,"pending":0,"primary_error_count":2,"overall_error_count":0}
{"time":"1795446968.168742549","node":"cn","kind":"kernel_addr_change","address":"2001:db8::101","state":"unreachable","spc_error":"failed_threshold"}
{"time":"1795446968.170060693","node":"cn","kind":"kernel_status","state":"established","primary":"2001:db8::101","primary_state":"inactive","rto_ms":1600,"srtt_ms":10,"cwnd":1500,"unacked":2,"pending":0,"primary_error_count":3,"overall_error_count":1}
{"time":"1795446968.208884373","node":"cn","kind":"kernel_status","state":"established","primary":"2001:db8::101","primary_state":"inactive","rto_ms":1600,"srtt_ms":10,"cwnd":1500,"unacked":7,"pending":0,"primary_error_count":3,"overall_error_count":0}
{"time":"1795446970.649895317","kind":"traffic_end","ok":true}
{"time":"1795446970.665430933","node":"cn","kind":"kernel_status","state":"shutdown_ack_sent","primary":"2001:db8::101","primary_state":"inactive","rto_ms":1600,"srtt_ms":10,"cwnd":6000,"unacked":0,"pending":0,"primary_error_count":3,"overall_error_count":0}"#;

/// sample-captures/koh-kim-1/events.jsonl: written before the harness
/// logged the kernel's view.
const SAMPLE_KOH_KIM_1: &str = r#"{"time":"1795343547.228277768","time_after":"1795343547.248754440","kind":"assoc_up","ok":true}
{"time":"1795343548.049098248","time_after":"1795343548.049327368","kind":"add_address","interface":"eth2","address":"198.51.100.102","ok":true}
{"time":"1795343548.049419272","kind":"addr_up","interface":"eth2","address":"198.51.100.102","ok":true}
{"time":"1795343548.249082376","time_after":"1795343548.249133832","kind":"bindx_add","address":"198.51.100.102","ok":true}
{"time":"1795343548.749086984","time_after":"1795343548.749143304","kind":"set_peer_primary","address":"198.51.100.102","ok":true}
{"time":"1795343549.249126152","time_after":"1795343549.249230344","kind":"bindx_remove","address":"198.51.100.101","ok":true}
{"time":"1795343549.749091848","time_after":"1795343549.749284104","kind":"link_down","interface":"eth1","ok":true}
{"time":"1795343550.751319048","kind":"traffic_end","ok":true}"#;

/// sample-captures/bokor-failover/events.jsonl (no kernel view either).
const SAMPLE_BOKOR_FAILOVER: &str = r#"{"time":"1795343500.046652840","time_after":"1795343500.067078824","kind":"assoc_up","ok":true}
{"time":"1795343501.067308968","time_after":"1795343501.067480232","kind":"link_down","interface":"eth1","ok":true}
{"time":"1795343504.104367272","kind":"traffic_end","ok":true}"#;

fn script(toml: &str) -> Script {
    Script::from_toml(toml).expect("a shipped scenario")
}

fn koh_kim_1() -> Script {
    script(include_str!("../../harness/scenarios/koh-kim-1.toml"))
}

fn without(events: &str, drop: impl Fn(&str) -> bool) -> String {
    events
        .lines()
        .filter(|l| !drop(l))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_action_of_koh_kim_1_took_effect_at_the_cn() {
    assert_eq!(
        check(KOH_KIM_1, Some(&koh_kim_1())).expect("parses"),
        Verdict::Valid
    );
}

#[test]
fn honda_nodad_is_invalid_for_its_set_primary_and_delete_ip() {
    let s = script(include_str!("../../harness/scenarios/honda-nodad.toml"));
    let v = check(HONDA_NODAD, Some(&s)).expect("parses");
    assert_eq!(
        v,
        Verdict::Invalid(vec![
            "set_peer_primary 2001:db8::102 at +1.00 s: no SCTP_ADDR_MADE_PRIM at the cn \
             within 2 s, its primary stayed 2001:db8::101"
                .into(),
            "bindx_remove 2001:db8::101 at +1.00 s: no SCTP_ADDR_REMOVED at the cn within 2 s"
                .into(),
        ])
    );
    assert_eq!(v.valid(), Some(false));
}

#[test]
fn samples_stand_in_for_missed_notifications_except_for_a_removal() {
    // Without the notifications, the CN's kernel_paddr (the new address
    // listed) and kernel_status (the new primary) still show ADD-IP and
    // SET-PRIMARY; nothing sampled can show an address gone.
    let events = without(KOH_KIM_1, |l| l.contains("kernel_addr_change"));
    assert_eq!(
        check(&events, Some(&koh_kim_1())).expect("parses"),
        Verdict::Invalid(vec![
            "bindx_remove 198.51.100.101 at +2.02 s: no SCTP_ADDR_REMOVED at the cn within 2 s"
                .into()
        ])
    );
}

#[test]
fn a_primary_seen_only_after_the_window_does_not_count() {
    // The made_primary notification and the sample right after it dropped:
    // the next sample naming 198.51.100.102 comes at +3.58 s, 2.06 s after
    // the SET-PRIMARY call.
    let events = without(KOH_KIM_1, |l| {
        l.contains("made_primary") || l.contains("1795445749.611896730")
    });
    assert_eq!(
        check(&events, Some(&koh_kim_1())).expect("parses"),
        Verdict::Invalid(vec![
            "set_peer_primary 198.51.100.102 at +1.52 s: no SCTP_ADDR_MADE_PRIM at the cn \
             within 2 s, its primary stayed 198.51.100.101"
                .into()
        ])
    );
}

#[test]
fn a_log_without_the_kernel_view_cannot_be_checked_for_asconf() {
    let v = check(SAMPLE_KOH_KIM_1, Some(&koh_kim_1())).expect("parses");
    let Verdict::Unchecked(notes) = &v else {
        panic!("expected unchecked, got {v:?}");
    };
    assert_eq!(notes.len(), 3, "{notes:?}");
    assert!(notes[0].starts_with("bindx_add 198.51.100.102 at +1.00 s: cannot be checked"));
    assert_eq!(v.valid(), None);
    // Link actions need no kernel view: bokor-failover's is checked.
    let bokor = script(include_str!("../../harness/scenarios/bokor-failover.toml"));
    assert_eq!(
        check(SAMPLE_BOKOR_FAILOVER, Some(&bokor)).expect("parses"),
        Verdict::Valid
    );
}

#[test]
fn a_failed_or_missing_action_makes_the_run_invalid() {
    let bokor = script(include_str!("../../harness/scenarios/bokor-failover.toml"));
    let failed = SAMPLE_BOKOR_FAILOVER.replace(
        r#""interface":"eth1","ok":true}"#,
        r#""interface":"eth1","ok":false,"error":"Operation not permitted (os error 1)"}"#,
    );
    assert_eq!(
        check(&failed, Some(&bokor)).expect("parses"),
        Verdict::Invalid(vec![
            "link_down eth1 at +1.00 s: the call failed: Operation not permitted (os error 1)"
                .into()
        ])
    );
    let cut = without(KOH_KIM_1, |l| l.contains(r#""kind":"link_down""#));
    assert_eq!(
        check(&cut, Some(&koh_kim_1())).expect("parses"),
        Verdict::Invalid(vec![
            "link_down eth1 due at +2.50 s: not run (no line in events.jsonl)".into()
        ])
    );
    // Without a scenario, the actions the log shows are checked.
    assert_eq!(check(&cut, None).expect("parses"), Verdict::Valid);
}

#[test]
fn a_broken_line_is_an_error_naming_it() {
    let broken = format!("{SAMPLE_BOKOR_FAILOVER}\n{{\"time\":\"17953435");
    let e = check(&broken, None).expect_err("truncated JSON");
    assert!(e.to_string().starts_with("events.jsonl line 4: "), "{e}");
    let e = check(r#"{"time":"1.2.3","kind":"assoc_up"}"#, None).expect_err("bad time");
    assert!(e.to_string().contains("bad time"), "{e}");
}

#[test]
fn meta_json_records_the_verdict() {
    let meta = Meta::parse(
        r#"{"ok": true, "valid": false, "invalid_reasons": ["set_peer_primary 2001:db8::102 at +1.00 s: no SCTP_ADDR_MADE_PRIM at the cn within 2 s"]}"#,
    )
    .expect("JSON");
    assert_eq!(
        Verdict::from_meta(&meta),
        Some(Verdict::Invalid(vec![
            "set_peer_primary 2001:db8::102 at +1.00 s: no SCTP_ADDR_MADE_PRIM at the cn within 2 s"
                .into()
        ]))
    );
    let old = Meta::parse(r#"{"ok": true}"#).expect("JSON");
    assert_eq!(Verdict::from_meta(&old), None, "written before the check");
}

#[test]
fn the_committed_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    // The reproduction runs have the kernel's view: only Honda's fail.
    let runs = find_runs(&root.join("reports/reproduction/runs")).expect("listed");
    assert!(runs.len() > 50, "{} runs", runs.len());
    for dir in &runs {
        let v = check_run_dir(dir).expect("checkable");
        let honda = dir.to_string_lossy().contains("/honda/");
        assert_eq!(v.valid(), Some(!honda), "{}: {v:?}", dir.display());
        if honda {
            let kinds: Vec<&str> = v
                .reasons()
                .iter()
                .filter_map(|r| r.split(' ').next())
                .collect();
            assert_eq!(
                kinds,
                ["set_peer_primary", "bindx_remove"],
                "{}",
                dir.display()
            );
        }
    }
    // The samples: honda's are never valid, koh-kim-1's never invalid
    // (unchecked while their logs lack the kernel view).
    for (name, never) in [
        ("honda-dad", Some(true)),
        ("honda-nodad", Some(true)),
        ("koh-kim-1", Some(false)),
        ("bokor-failover", Some(false)),
    ] {
        let dir = root.join("sample-captures").join(name);
        let v = check_run_dir(&dir).expect("checkable");
        assert_ne!(v.valid(), never, "{name}: {v:?}");
    }
}
