//! The Wireshark fields and expert infos of both plugin tiers, defined
//! once: the C plugin registers its `hf[]` and `ei[]` from
//! [`sctpho_fields`] / [`sctpho_experts`] at run time (as Wireshark's
//! falco_bridge plugin registers the fields its plugins describe), and the
//! Lua tier's table (dissector/sctpho_fields.lua) is generated from the
//! same lists by [`lua_table`] (checked by tests/lua_fields.rs). Items
//! handed to the C side carry a field's index in [`registered_fields`] (a
//! [`Field`], or a latency component's [`component_field`]) or an
//! [`Expert`].
//!
//! The fixed fields are [`FIELDS`]; after them come the latency
//! components' fields, one per entry of the analyzer's
//! [`COMPONENTS`] (`sctpho.component.<name>`), built from those
//! descriptors when first asked for: a component added to the analyzer is
//! a field of both tiers with no change here.

use sctp_handover::handover::{ComponentDescriptor, COMPONENTS};
use std::ffi::{c_char, CStr, CString};
use std::sync::OnceLock;

/// A field's Wireshark type (`FT_*`); the display base follows from it
/// ([`FieldType::display`]).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// `FT_UINT16`.
    Uint16 = 0,
    /// `FT_UINT32`.
    Uint32 = 1,
    /// `FT_DOUBLE`.
    Double = 2,
    /// `FT_STRING`.
    String = 3,
    /// `FT_BOOLEAN`.
    Boolean = 4,
    /// A frame number (`FT_FRAMENUM`): a link in the packet details.
    FrameNum = 5,
}

/// A field's display base (`BASE_*`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldDisplay {
    /// `BASE_NONE`.
    None = 0,
    /// `BASE_DEC`.
    Dec = 1,
}

impl FieldType {
    /// Decimal for the integers, none for the rest (Wireshark refuses
    /// another base for a string, boolean of no bitmask, double or frame
    /// number).
    pub const fn display(self) -> FieldDisplay {
        match self {
            FieldType::Uint16 | FieldType::Uint32 => FieldDisplay::Dec,
            _ => FieldDisplay::None,
        }
    }

    /// The name the Lua tier's `ProtoField` constructor has.
    pub const fn lua_name(self) -> &'static str {
        match self {
            FieldType::Uint16 => "uint16",
            FieldType::Uint32 => "uint32",
            FieldType::Double => "double",
            FieldType::String => "string",
            FieldType::Boolean => "bool",
            FieldType::FrameNum => "framenum",
        }
    }
}

/// What a frame-number field points at (`FT_FRAMENUM_*`: Wireshark draws
/// the request / response arrows in the packet list).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameRole {
    /// `FT_FRAMENUM_NONE`: a plain link.
    None = 0,
    /// `FT_FRAMENUM_REQUEST`: the frame this one answers.
    Request = 1,
    /// `FT_FRAMENUM_RESPONSE`: the frame that answers this one.
    Response = 2,
}

/// Every field, in the order of [`FIELDS`].
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    /// `sctpho.assoc`: Association.
    Assoc,
    /// `sctpho.path`: Path.
    Path,
    /// `sctpho.path.src`: Path source.
    PathSrc,
    /// `sctpho.path.dst`: Path destination.
    PathDst,
    /// `sctpho.direction`: Direction (sending endpoint > receiving).
    Direction,
    /// `sctpho.event`: Event.
    Event,
    /// `sctpho.asconf.serial`: ASCONF serial number.
    AsconfSerial,
    /// `sctpho.asconf.ack_frame`: ASCONF-ACK in frame.
    AsconfAckFrame,
    /// `sctpho.asconf.request_frame`: ASCONF in frame.
    AsconfRequestFrame,
    /// `sctpho.asconf.rtt`: ASCONF round trip (ms).
    AsconfRtt,
    /// `sctpho.asconf.result`: ASCONF result (correlation id, request, outcome).
    AsconfResult,
    /// `sctpho.asconf.retransmission`: ASCONF retransmission (serial sent before).
    AsconfRetransmission,
    /// `sctpho.asconf.transmission`: ASCONF transmission of the serial (1: first).
    AsconfTransmission,
    /// `sctpho.asconf.first_frame`: First transmission of the serial in frame.
    AsconfFirstFrame,
    /// `sctpho.asconf.repeated`: ASCONF-ACK repeated (serial answered before).
    AsconfRepeated,
    /// `sctpho.hb.ack_frame`: HEARTBEAT ACK in frame.
    HbAckFrame,
    /// `sctpho.hb.request_frame`: HEARTBEAT in frame.
    HbRequestFrame,
    /// `sctpho.hb.rtt`: Heartbeat RTT of the probed path (ms).
    HbRtt,
    /// `sctpho.hb.path`: Probed path.
    HbPath,
    /// `sctpho.switch.from_path`: Switched from path.
    SwitchFromPath,
    /// `sctpho.switch.to_path`: Switched to path.
    SwitchToPath,
    /// `sctpho.switch.kind`: Switch kind.
    SwitchKind,
    /// `sctpho.switch.interrupt`: Data interrupt (ms).
    SwitchInterrupt,
    /// `sctpho.switch.last_old_frame`: Last DATA on the old path.
    SwitchLastOldFrame,
    /// `sctpho.switch.first_new_frame`: First DATA on the new path.
    SwitchFirstNewFrame,
    /// `sctpho.path.state`: Inferred path state entered (potentially_failed, inactive, active).
    PathState,
    /// `sctpho.path.state_path`: Path whose inferred state changed.
    PathStatePath,
}

/// One field: its filter name, its name in the packet details, its type
/// and what it means (Wireshark's blurb, shown in the status bar and by
/// `tshark -G fields`).
#[derive(Debug, Clone, Copy)]
pub struct FieldDescriptor {
    /// The field it describes (its index in [`FIELDS`]).
    pub field: Field,
    /// The display-filter name (`sctpho.assoc`).
    pub abbrev: &'static CStr,
    /// The name in the packet details.
    pub name: &'static CStr,
    /// The Wireshark type.
    pub kind: FieldType,
    /// What a frame-number field points at ([`FrameRole::None`] for the
    /// other types).
    pub role: FrameRole,
    /// What the value means.
    pub blurb: &'static CStr,
}

impl Field {
    /// Its entry in [`FIELDS`].
    pub fn descriptor(self) -> &'static FieldDescriptor {
        &FIELDS[self as usize]
    }

    /// Its display-filter name (`sctpho.assoc`).
    pub fn abbrev(self) -> &'static str {
        text(self.descriptor().abbrev)
    }
}

const fn field(
    field: Field,
    abbrev: &'static CStr,
    name: &'static CStr,
    kind: FieldType,
    blurb: &'static CStr,
) -> FieldDescriptor {
    FieldDescriptor {
        field,
        abbrev,
        name,
        kind,
        role: FrameRole::None,
        blurb,
    }
}

const fn frame(
    field: Field,
    abbrev: &'static CStr,
    name: &'static CStr,
    role: FrameRole,
    blurb: &'static CStr,
) -> FieldDescriptor {
    FieldDescriptor {
        field,
        abbrev,
        name,
        kind: FieldType::FrameNum,
        role,
        blurb,
    }
}

use FieldType::{Boolean, Double, String as Str, Uint16, Uint32};

/// The fields, indexed by [`Field`] (checked by a test).
pub const FIELDS: [FieldDescriptor; 27] = [
    field(
        Field::Assoc,
        c"sctpho.assoc",
        c"Association",
        Uint32,
        c"The association the packet belongs to: the analyzer's association id (0, 1, ... in the order associations start in the capture)",
    ),
    field(
        Field::Path,
        c"sctpho.path",
        c"Path",
        Uint16,
        c"The path the packet travelled on: the association's path id (0, 1, ... in the order source-destination address pairs are first seen)",
    ),
    field(
        Field::PathSrc,
        c"sctpho.path.src",
        c"Path source",
        Str,
        c"The path's source address",
    ),
    field(
        Field::PathDst,
        c"sctpho.path.dst",
        c"Path destination",
        Str,
        c"The path's destination address",
    ),
    field(
        Field::Direction,
        c"sctpho.direction",
        c"Direction (sending endpoint > receiving)",
        Str,
        c"Which of the association's two endpoints (numbered 0 and 1 by the analyzer) sent the packet to which: 0>1 or 1>0",
    ),
    field(
        Field::Event,
        c"sctpho.event",
        c"Event",
        Str,
        c"What the packet does for the handover analysis (asconf_add_ip, asconf_ack, heartbeat, path_switch, failover, retransmission, path_inactive, ...); one per event",
    ),
    field(
        Field::AsconfSerial,
        c"sctpho.asconf.serial",
        c"ASCONF serial number",
        Uint32,
        c"The serial number of the ASCONF or ASCONF-ACK (RFC 5061 section 5.1)",
    ),
    frame(
        Field::AsconfAckFrame,
        c"sctpho.asconf.ack_frame",
        c"ASCONF-ACK in frame",
        FrameRole::Response,
        c"The frame of the ASCONF-ACK that answers this ASCONF",
    ),
    frame(
        Field::AsconfRequestFrame,
        c"sctpho.asconf.request_frame",
        c"ASCONF in frame",
        FrameRole::Request,
        c"The frame of the ASCONF this ASCONF-ACK answers: the serial's last transmission before it (Karn's rule)",
    ),
    field(
        Field::AsconfRtt,
        c"sctpho.asconf.rtt",
        c"ASCONF round trip (ms)",
        Double,
        c"Milliseconds from the ASCONF (its last transmission) to this ASCONF-ACK",
    ),
    field(
        Field::AsconfResult,
        c"sctpho.asconf.result",
        c"ASCONF result (correlation id, request, outcome)",
        Str,
        c"One request of the answered ASCONF and its outcome: success, implied_success, not_processed or error CAUSE (RFC 5061 section 5.3)",
    ),
    field(
        Field::AsconfRetransmission,
        c"sctpho.asconf.retransmission",
        c"ASCONF retransmission (serial sent before)",
        Boolean,
        c"True when the sender had sent this serial before (an ASCONF sent again keeps its serial, RFC 5061 section 5.1)",
    ),
    field(
        Field::AsconfTransmission,
        c"sctpho.asconf.transmission",
        c"ASCONF transmission of the serial (1: first)",
        Uint32,
        c"Which transmission of the serial this ASCONF is, 1 for the first",
    ),
    frame(
        Field::AsconfFirstFrame,
        c"sctpho.asconf.first_frame",
        c"First transmission of the serial in frame",
        FrameRole::None,
        c"The frame of the serial's first transmission (absent when it is not in the capture)",
    ),
    field(
        Field::AsconfRepeated,
        c"sctpho.asconf.repeated",
        c"ASCONF-ACK repeated (serial answered before)",
        Boolean,
        c"True when this ASCONF-ACK answers a serial answered before (a copy sent again): its results took effect with the first answer",
    ),
    frame(
        Field::HbAckFrame,
        c"sctpho.hb.ack_frame",
        c"HEARTBEAT ACK in frame",
        FrameRole::Response,
        c"The frame of the HEARTBEAT ACK that answers this HEARTBEAT",
    ),
    frame(
        Field::HbRequestFrame,
        c"sctpho.hb.request_frame",
        c"HEARTBEAT in frame",
        FrameRole::Request,
        c"The frame of the HEARTBEAT this HEARTBEAT ACK answers",
    ),
    field(
        Field::HbRtt,
        c"sctpho.hb.rtt",
        c"Heartbeat RTT of the probed path (ms)",
        Double,
        c"Milliseconds from the HEARTBEAT to this HEARTBEAT ACK: a round trip of the path the HEARTBEAT probed",
    ),
    field(
        Field::HbPath,
        c"sctpho.hb.path",
        c"Probed path",
        Uint16,
        c"The path the answered HEARTBEAT probed (the round trip belongs to it, whichever path the ACK took)",
    ),
    field(
        Field::SwitchFromPath,
        c"sctpho.switch.from_path",
        c"Switched from path",
        Uint16,
        c"The path new DATA of this direction left at this packet",
    ),
    field(
        Field::SwitchToPath,
        c"sctpho.switch.to_path",
        c"Switched to path",
        Uint16,
        c"The path new DATA of this direction moved to at this packet",
    ),
    field(
        Field::SwitchKind,
        c"sctpho.switch.kind",
        c"Switch kind",
        Str,
        c"Why the data path switched: planned, failover, return or other (docs/metrics.md, Data path switch)",
    ),
    field(
        Field::SwitchInterrupt,
        c"sctpho.switch.interrupt",
        c"Data interrupt (ms)",
        Double,
        c"Milliseconds from the last DATA on the old path to the first DATA on the new path",
    ),
    frame(
        Field::SwitchLastOldFrame,
        c"sctpho.switch.last_old_frame",
        c"Last DATA on the old path",
        FrameRole::None,
        c"The frame of the last DATA this direction sent on the old path before the switch",
    ),
    frame(
        Field::SwitchFirstNewFrame,
        c"sctpho.switch.first_new_frame",
        c"First DATA on the new path",
        FrameRole::None,
        c"The frame of the first DATA this direction sent on the new path",
    ),
    field(
        Field::PathState,
        c"sctpho.path.state",
        c"Inferred path state entered (potentially_failed, inactive, active)",
        Str,
        c"The state the sender's path entered at this packet, inferred from its T3 expiries and unanswered HEARTBEATs (RFC 9260 section 8.2, RFC 7829)",
    ),
    field(
        Field::PathStatePath,
        c"sctpho.path.state_path",
        c"Path whose inferred state changed",
        Uint16,
        c"The path whose inferred state changed at this packet",
    ),
];

/// The filter-name prefix of the latency components' fields
/// (`sctpho.component.data_interrupt`).
pub const COMPONENT_PREFIX: &str = "sctpho.component.";

/// A field as both tiers register it, whichever list it comes from: a
/// fixed one of [`FIELDS`] or a latency component's.
#[derive(Debug, Clone, Copy)]
pub struct RegisteredField {
    /// The display-filter name.
    pub abbrev: &'static CStr,
    /// The name in the packet details.
    pub name: &'static CStr,
    /// The Wireshark type.
    pub kind: FieldType,
    /// What a frame-number field points at.
    pub role: FrameRole,
    /// What the value means.
    pub blurb: &'static CStr,
    /// The latency component whose value it carries (`None`: a fixed
    /// field).
    pub component: Option<&'static ComponentDescriptor>,
}

impl RegisteredField {
    /// Its display-filter name as text.
    pub fn abbrev(&self) -> &'static str {
        text(self.abbrev)
    }
}

/// The text of a latency component's field (owned: made from the
/// descriptor at run time).
struct ComponentText {
    abbrev: CString,
    name: CString,
    blurb: CString,
}

/// `s` with its first letter upper-case ("data interrupt": "Data
/// interrupt"; "ADDIP sent" unchanged).
fn capitalized(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A C string of descriptor text (which has no NUL; one would be dropped).
fn c_text(s: String) -> CString {
    CString::new(s.replace('\0', "")).unwrap_or_default()
}

impl ComponentText {
    fn of(c: &ComponentDescriptor) -> Self {
        ComponentText {
            abbrev: c_text(format!("{COMPONENT_PREFIX}{}", c.name)),
            // ("Latency component: ": `sctpho.switch.interrupt` is named
            // "Data interrupt (ms)" already.)
            name: c_text(format!("Latency component: {} ({})", c.label, c.unit)),
            blurb: c_text(format!(
                "{} in {}: {}; absent when the analyzer has no value for it (docs/metrics.md)",
                capitalized(c.label),
                c.unit,
                c.description
            )),
        }
    }
}

/// The latency components' texts, in [`COMPONENTS`] order.
fn component_texts() -> &'static [ComponentText] {
    static TEXTS: OnceLock<Vec<ComponentText>> = OnceLock::new();
    TEXTS.get_or_init(|| COMPONENTS.iter().map(ComponentText::of).collect())
}

/// Every field both tiers register, in the order of the C side's array
/// (an item's `field` indexes it): [`FIELDS`], then one field per
/// latency component in [`COMPONENTS`] order (a double in the
/// component's unit, on the switch frame).
pub fn registered_fields() -> &'static [RegisteredField] {
    static ALL: OnceLock<Vec<RegisteredField>> = OnceLock::new();
    ALL.get_or_init(|| {
        let fixed = FIELDS.iter().map(|d| RegisteredField {
            abbrev: d.abbrev,
            name: d.name,
            kind: d.kind,
            role: d.role,
            blurb: d.blurb,
            component: None,
        });
        let components = COMPONENTS
            .iter()
            .zip(component_texts())
            .map(|(c, t)| RegisteredField {
                abbrev: t.abbrev.as_c_str(),
                name: t.name.as_c_str(),
                kind: FieldType::Double,
                role: FrameRole::None,
                blurb: t.blurb.as_c_str(),
                component: Some(c),
            });
        fixed.chain(components).collect()
    })
}

/// The index in [`registered_fields`] (an item's `field`) of the field of
/// the latency component at `index` in [`COMPONENTS`].
pub fn component_field(index: usize) -> u32 {
    (FIELDS.len() + index) as u32
}

/// An expert info's group (`PI_*`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpertGroup {
    /// `PI_SEQUENCE`: about the order of packets or retransmissions.
    Sequence = 0,
    /// `PI_RESPONSE_CODE`: about a request's answer.
    ResponseCode = 1,
    /// `PI_MALFORMED`: input that could not be decoded.
    Malformed = 2,
}

/// An expert info's severity (`PI_*`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpertSeverity {
    /// `PI_CHAT`: the usual course of events.
    Chat = 0,
    /// `PI_NOTE`: worth a look.
    Note = 1,
    /// `PI_WARN`: something went wrong.
    Warn = 2,
}

impl ExpertGroup {
    /// The key of Wireshark Lua's `expert.group` table.
    pub const fn lua_name(self) -> &'static str {
        match self {
            ExpertGroup::Sequence => "SEQUENCE",
            ExpertGroup::ResponseCode => "RESPONSE_CODE",
            ExpertGroup::Malformed => "MALFORMED",
        }
    }
}

impl ExpertSeverity {
    /// The key of Wireshark Lua's `expert.severity` table.
    pub const fn lua_name(self) -> &'static str {
        match self {
            ExpertSeverity::Chat => "CHAT",
            ExpertSeverity::Note => "NOTE",
            ExpertSeverity::Warn => "WARN",
        }
    }
}

/// Every expert info, in the order of [`EXPERTS`].
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Expert {
    /// `sctpho.expert.switch`: Data path switch.
    Switch,
    /// `sctpho.expert.no_ack`: ASCONF without ASCONF-ACK.
    NoAck,
    /// `sctpho.expert.ack_error`: ASCONF-ACK error cause.
    AckError,
    /// `sctpho.expert.unconfirmed`: DATA to an unconfirmed address.
    Unconfirmed,
    /// `sctpho.expert.duplicate`: Duplicate TSN.
    Duplicate,
    /// `sctpho.expert.malformed`: Input the plugin could not decode.
    Malformed,
    /// `sctpho.expert.asconf_retransmission`: ASCONF retransmission.
    AsconfRetransmission,
    /// `sctpho.expert.potentially_failed`: Path inferred potentially failed.
    PotentiallyFailed,
    /// `sctpho.expert.inactive`: Path inferred inactive.
    Inactive,
    /// `sctpho.expert.active`: Path active again.
    Active,
    /// `sctpho.expert.counter_cleared`: Path error counter cleared.
    CounterCleared,
    /// `sctpho.expert.spurious_expiry`: Spurious T3 expiry.
    SpuriousExpiry,
}

/// One expert info: its filter name, its summary (the text of the expert
/// info's entry in the Expert Information dialog), group and severity.
#[derive(Debug, Clone, Copy)]
pub struct ExpertDescriptor {
    /// The expert info it describes (its index in [`EXPERTS`]).
    pub expert: Expert,
    /// The display-filter name (`sctpho.expert.switch`).
    pub abbrev: &'static CStr,
    /// The text of its entry in the Expert Information dialog.
    pub summary: &'static CStr,
    /// Its group.
    pub group: ExpertGroup,
    /// Its severity.
    pub severity: ExpertSeverity,
}

impl Expert {
    /// Its entry in [`EXPERTS`].
    pub fn descriptor(self) -> &'static ExpertDescriptor {
        &EXPERTS[self as usize]
    }

    /// Its display-filter name (`sctpho.expert.switch`).
    pub fn abbrev(self) -> &'static str {
        text(self.descriptor().abbrev)
    }
}

const fn expert(
    expert: Expert,
    abbrev: &'static CStr,
    summary: &'static CStr,
    group: ExpertGroup,
    severity: ExpertSeverity,
) -> ExpertDescriptor {
    ExpertDescriptor {
        expert,
        abbrev,
        summary,
        group,
        severity,
    }
}

use ExpertGroup::{Malformed, ResponseCode, Sequence};
use ExpertSeverity::{Chat, Note, Warn};

/// The expert infos, indexed by [`Expert`] (checked by a test).
pub const EXPERTS: [ExpertDescriptor; 12] = [
    expert(
        Expert::Switch,
        c"sctpho.expert.switch",
        c"Data path switch",
        Sequence,
        Note,
    ),
    expert(
        Expert::NoAck,
        c"sctpho.expert.no_ack",
        c"ASCONF without ASCONF-ACK",
        Sequence,
        Warn,
    ),
    expert(
        Expert::AckError,
        c"sctpho.expert.ack_error",
        c"ASCONF-ACK error cause",
        ResponseCode,
        Warn,
    ),
    expert(
        Expert::Unconfirmed,
        c"sctpho.expert.unconfirmed",
        c"DATA to an unconfirmed address",
        Sequence,
        Note,
    ),
    expert(
        Expert::Duplicate,
        c"sctpho.expert.duplicate",
        c"Duplicate TSN",
        Sequence,
        Note,
    ),
    expert(
        Expert::Malformed,
        c"sctpho.expert.malformed",
        c"Input the plugin could not decode",
        Malformed,
        Note,
    ),
    expert(
        Expert::AsconfRetransmission,
        c"sctpho.expert.asconf_retransmission",
        c"ASCONF retransmission",
        Sequence,
        Note,
    ),
    expert(
        Expert::PotentiallyFailed,
        c"sctpho.expert.potentially_failed",
        c"Path inferred potentially failed",
        Sequence,
        Warn,
    ),
    expert(
        Expert::Inactive,
        c"sctpho.expert.inactive",
        c"Path inferred inactive",
        Sequence,
        Warn,
    ),
    expert(
        Expert::Active,
        c"sctpho.expert.active",
        c"Path active again",
        Sequence,
        Note,
    ),
    expert(
        Expert::CounterCleared,
        c"sctpho.expert.counter_cleared",
        c"Path error counter cleared",
        Sequence,
        Chat,
    ),
    expert(
        Expert::SpuriousExpiry,
        c"sctpho.expert.spurious_expiry",
        c"Spurious T3 expiry",
        Sequence,
        Note,
    ),
];

/// A descriptor's text (UTF-8: the literals above are ASCII, the
/// components' texts are the analyzer's).
fn text(s: &'static CStr) -> &'static str {
    s.to_str().unwrap_or("")
}

/// A field as the C side registers it (see `sctpho_field_info` in
/// sctpho.h).
#[repr(C)]
#[derive(Debug)]
pub struct FieldInfo {
    /// The display-filter name, NUL-terminated.
    pub abbrev: *const c_char,
    /// The name in the packet details, NUL-terminated.
    pub name: *const c_char,
    /// What the value means, NUL-terminated.
    pub blurb: *const c_char,
    /// The Wireshark type.
    pub kind: FieldType,
    /// The display base ([`FieldType::display`]).
    pub display: FieldDisplay,
    /// What a frame-number field points at.
    pub role: FrameRole,
}

/// An expert info as the C side registers it (see `sctpho_expert_info` in
/// sctpho.h).
#[repr(C)]
#[derive(Debug)]
pub struct ExpertInfo {
    /// The display-filter name, NUL-terminated.
    pub abbrev: *const c_char,
    /// The Expert Information dialog's text, NUL-terminated.
    pub summary: *const c_char,
    /// Its group.
    pub group: ExpertGroup,
    /// Its severity.
    pub severity: ExpertSeverity,
}

// SAFETY: the pointers are to 'static strings (literals, or the component
// texts of a static `OnceLock`), never written.
unsafe impl Send for FieldInfo {}
// SAFETY: as above.
unsafe impl Sync for FieldInfo {}
// SAFETY: as above.
unsafe impl Sync for ExpertInfo {}

/// The C side's field array, made from [`registered_fields`] when first
/// asked for.
fn c_fields() -> &'static [FieldInfo] {
    static C_FIELDS: OnceLock<Vec<FieldInfo>> = OnceLock::new();
    C_FIELDS.get_or_init(|| {
        registered_fields()
            .iter()
            .map(|d| FieldInfo {
                abbrev: d.abbrev.as_ptr(),
                name: d.name.as_ptr(),
                blurb: d.blurb.as_ptr(),
                kind: d.kind,
                display: d.kind.display(),
                role: d.role,
            })
            .collect()
    })
}

const fn c_experts() -> [ExpertInfo; EXPERTS.len()] {
    const EMPTY: ExpertInfo = ExpertInfo {
        abbrev: std::ptr::null(),
        summary: std::ptr::null(),
        group: ExpertGroup::Sequence,
        severity: ExpertSeverity::Note,
    };
    let mut out = [EMPTY; EXPERTS.len()];
    let mut i = 0;
    while i < EXPERTS.len() {
        let d = &EXPERTS[i];
        out[i] = ExpertInfo {
            abbrev: d.abbrev.as_ptr(),
            summary: d.summary.as_ptr(),
            group: d.group,
            severity: d.severity,
        };
        i += 1;
    }
    out
}

static C_EXPERTS: [ExpertInfo; EXPERTS.len()] = c_experts();

/// The fields (`*count` of them: [`registered_fields`]), for the C
/// plugin's `hf[]`: an item's `field` indexes this array.
///
/// # Safety
/// `count` must be valid for a write (or null).
#[no_mangle]
pub unsafe extern "C" fn sctpho_fields(count: *mut usize) -> *const FieldInfo {
    // SAFETY: per the contract above.
    let fields = c_fields();
    if let Some(c) = unsafe { count.as_mut() } {
        *c = fields.len();
    }
    fields.as_ptr()
}

/// The expert infos (`*count` of them), for the C plugin's `ei[]`: an
/// expert item's `field` indexes this array.
///
/// # Safety
/// `count` must be valid for a write (or null).
#[no_mangle]
pub unsafe extern "C" fn sctpho_experts(count: *mut usize) -> *const ExpertInfo {
    // SAFETY: per the contract above.
    if let Some(c) = unsafe { count.as_mut() } {
        *c = C_EXPERTS.len();
    }
    C_EXPERTS.as_ptr()
}

/// This crate's version (Cargo's), for the C plugin's `plugin_version`.
#[no_mangle]
pub extern "C" fn sctpho_version() -> *const c_char {
    const VERSION: &CStr =
        match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
            Ok(v) => v,
            Err(_) => c"unknown",
        };
    VERSION.as_ptr()
}

/// A Lua string literal of `s`.
fn lua_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The key of a field in the Lua tier's table `F`: its filter name after
/// `sctpho.`, dots as underscores (`sctpho.asconf.ack_frame`:
/// `asconf_ack_frame`).
pub fn lua_key(abbrev: &str) -> String {
    abbrev
        .strip_prefix("sctpho.expert.")
        .or_else(|| abbrev.strip_prefix("sctpho."))
        .unwrap_or(abbrev)
        .replace('.', "_")
}

/// The Lua tier's field and expert table (dissector/sctpho_fields.lua).
pub fn lua_table() -> String {
    let mut out = String::from(
        "-- The SCTP Handover plugin's fields and expert infos, generated from\n\
         -- dissector/c/ffi/src/fields.rs and the analyzer's latency components\n\
         -- (analyzer/src/handover/descriptors.rs; the C tier registers the same\n\
         -- at run time): do not edit. Regenerate with\n\
         --   SCTPHO_WRITE_FIELDS=1 cargo test -p sctpho-ffi --test lua_fields\n\
         -- type: the ProtoField constructor; frametype: a key of Wireshark's\n\
         -- frametype table (nil: none).\n\
         return {\n  fields = {\n",
    );
    for d in registered_fields() {
        let abbrev = text(d.abbrev);
        let role = match d.role {
            FrameRole::None => String::new(),
            FrameRole::Request => ", frametype = \"REQUEST\"".into(),
            FrameRole::Response => ", frametype = \"RESPONSE\"".into(),
        };
        out.push_str(&format!(
            "    {{ key = {}, abbrev = {}, name = {}, type = {}{role},\n      blurb = {} }},\n",
            lua_string(&lua_key(abbrev)),
            lua_string(abbrev),
            lua_string(text(d.name)),
            lua_string(d.kind.lua_name()),
            lua_string(text(d.blurb)),
        ));
    }
    out.push_str("  },\n  experts = {\n");
    for d in &EXPERTS {
        let abbrev = text(d.abbrev);
        out.push_str(&format!(
            "    {{ key = {}, abbrev = {}, summary = {}, group = {}, severity = {} }},\n",
            lua_string(&lua_key(abbrev)),
            lua_string(abbrev),
            lua_string(text(d.summary)),
            lua_string(d.group.lua_name()),
            lua_string(d.severity.lua_name()),
        ));
    }
    out.push_str("  },\n}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors_are_indexed_by_their_enums() {
        for (i, d) in FIELDS.iter().enumerate() {
            assert_eq!(d.field as usize, i, "{:?}", d.abbrev);
        }
        for (i, d) in EXPERTS.iter().enumerate() {
            assert_eq!(d.expert as usize, i, "{:?}", d.abbrev);
        }
        assert_eq!(Field::PathStatePath.abbrev(), "sctpho.path.state_path");
        assert_eq!(
            Expert::SpuriousExpiry.abbrev(),
            "sctpho.expert.spurious_expiry"
        );
    }

    #[test]
    fn names_are_unique_ascii_and_described() {
        let mut seen = std::collections::HashSet::new();
        for d in &FIELDS {
            for s in [d.abbrev, d.name, d.blurb] {
                assert!(!s.is_empty() && s.to_str().is_ok_and(|t| t.is_ascii()));
            }
        }
        for d in registered_fields() {
            for s in [d.abbrev, d.name, d.blurb] {
                assert!(!s.is_empty() && s.to_str().is_ok());
            }
            // What Wireshark takes as a filter name.
            assert!(d
                .abbrev()
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'.'));
            assert!(text(d.abbrev).starts_with("sctpho."));
            assert!(seen.insert(text(d.abbrev)), "{:?} twice", d.abbrev);
            assert!(seen.insert(text(d.name)), "{:?} twice", d.name);
        }
        for d in &EXPERTS {
            assert!(text(d.abbrev).starts_with("sctpho.expert."));
            assert!(seen.insert(text(d.abbrev)), "{:?} twice", d.abbrev);
        }
    }

    #[test]
    fn the_c_arrays_follow_the_descriptors() {
        let mut n = 0;
        // SAFETY: n is valid for a write.
        let p = unsafe { sctpho_fields(&mut n) };
        assert_eq!(n, 27 + COMPONENTS.len());
        // SAFETY: the library returns n fields.
        let fields = unsafe { std::slice::from_raw_parts(p, n) };
        // SAFETY: pointers to the 'static literals.
        let abbrev = unsafe { CStr::from_ptr(fields[7].abbrev) };
        assert_eq!(abbrev, c"sctpho.asconf.ack_frame");
        assert_eq!(fields[7].role, FrameRole::Response);
        assert_eq!(fields[1].display, FieldDisplay::Dec);
        // After the fixed fields, the components' in the descriptors'
        // order: the data interrupt first, the recognition's last.
        // SAFETY: pointers to the 'static texts.
        let (abbrev, name, blurb) = unsafe {
            (
                CStr::from_ptr(fields[27].abbrev),
                CStr::from_ptr(fields[27].name),
                CStr::from_ptr(fields[27].blurb),
            )
        };
        assert_eq!(abbrev, c"sctpho.component.data_interrupt");
        assert_eq!(name, c"Latency component: data interrupt (ms)");
        assert_eq!(
            blurb.to_str().ok(),
            Some("Data interrupt in ms: last DATA on the old path before the switch \u{2192} first DATA, new or retransmitted, on the new path (negative: make-before-break); absent when the analyzer has no value for it (docs/metrics.md)")
        );
        assert_eq!(fields[27].kind, FieldType::Double);
        assert_eq!(fields[27].display, FieldDisplay::None);
        // SAFETY: as above.
        let last = unsafe { CStr::from_ptr(fields[n - 1].abbrev) };
        assert_eq!(last, c"sctpho.component.recognition_link_up_to_data");
        // SAFETY: n is valid for a write.
        let p = unsafe { sctpho_experts(&mut n) };
        assert_eq!(n, 12);
        // SAFETY: the library returns n experts.
        let experts = unsafe { std::slice::from_raw_parts(p, n) };
        assert_eq!(experts[10].severity, ExpertSeverity::Chat);
        // SAFETY: a 'static literal.
        let version = unsafe { CStr::from_ptr(sctpho_version()) };
        assert_eq!(version.to_str().ok(), Some(env!("CARGO_PKG_VERSION")));
    }

    #[test]
    fn one_component_field_per_descriptor_at_its_index() {
        let all = registered_fields();
        assert_eq!(all.len(), FIELDS.len() + COMPONENTS.len());
        for (i, c) in COMPONENTS.iter().enumerate() {
            let f = &all[component_field(i) as usize];
            assert_eq!(f.abbrev(), format!("sctpho.component.{}", c.name));
            assert_eq!(f.component.map(|d| d.name), Some(c.name));
            assert_eq!(f.kind, FieldType::Double);
        }
        assert!(all[..FIELDS.len()].iter().all(|f| f.component.is_none()));
        assert_eq!(
            capitalized("link up \u{2192} DATA"),
            "Link up \u{2192} DATA"
        );
        assert_eq!(capitalized("ADDIP sent"), "ADDIP sent");
    }

    #[test]
    fn lua_keys() {
        assert_eq!(lua_key("sctpho.asconf.ack_frame"), "asconf_ack_frame");
        assert_eq!(lua_key("sctpho.expert.no_ack"), "no_ack");
        assert_eq!(lua_key("sctpho.assoc"), "assoc");
        assert_eq!(
            lua_key("sctpho.component.failover_time"),
            "component_failover_time"
        );
    }
}
