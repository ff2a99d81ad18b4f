//! AFL++ target `pipeline`: see [`sctp_handover_fuzz::pipeline`].
fn main() {
    afl::fuzz!(|data: &[u8]| sctp_handover_fuzz::pipeline(data));
}
