//! The Lua tier's field table (dissector/sctpho_fields.lua) is generated
//! from the descriptors the C tier registers (src/fields.rs): this test
//! fails when the committed file is stale, and rewrites it when
//! `SCTPHO_WRITE_FIELDS=1` is set.

use std::path::PathBuf;

fn committed() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sctpho_fields.lua")
}

#[test]
fn the_lua_field_table_is_generated_from_the_descriptors() {
    let want = sctpho_ffi::lua_table();
    let path = committed();
    if std::env::var_os("SCTPHO_WRITE_FIELDS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &want).expect("write dissector/sctpho_fields.lua");
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{} is stale: regenerate it with SCTPHO_WRITE_FIELDS=1 cargo test -p sctpho-ffi --test lua_fields",
        path.display()
    );
    // What the table holds, checked by hand against src/fields.rs.
    assert!(want.contains(
        "    { key = \"asconf_ack_frame\", abbrev = \"sctpho.asconf.ack_frame\", name = \"ASCONF-ACK in frame\", type = \"framenum\", frametype = \"RESPONSE\",\n"
    ));
    assert!(want.contains(
        "    { key = \"counter_cleared\", abbrev = \"sctpho.expert.counter_cleared\", summary = \"Path error counter cleared\", group = \"SEQUENCE\", severity = \"CHAT\" },\n"
    ));
    assert!(want.contains(
        "    { key = \"component_failover_time\", abbrev = \"sctpho.component.failover_time\", name = \"Latency component: failover time (ms)\", type = \"double\",\n"
    ));
    // The fixed fields, one per latency component, the expert infos.
    let components = sctp_handover::handover::COMPONENTS.len();
    assert_eq!(components, 14);
    assert_eq!(
        want.matches("abbrev = \"sctpho.").count(),
        27 + components + 12
    );
    assert_eq!(
        want.matches("abbrev = \"sctpho.component.").count(),
        components
    );
}
