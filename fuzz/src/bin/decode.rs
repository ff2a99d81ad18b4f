//! AFL++ target `decode`: see [`sctp_handover_fuzz::decode`].
fn main() {
    afl::fuzz!(|data: &[u8]| sctp_handover_fuzz::decode(data));
}
