//! AFL++ target `capture`: see [`sctp_handover_fuzz::capture`].
fn main() {
    afl::fuzz!(|data: &[u8]| sctp_handover_fuzz::capture(data));
}
