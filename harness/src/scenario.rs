//! The scenario format (TOML): topology, SCTP parameters, traffic and a
//! timeline of actions, with its rules and the `--set` overrides. Defined
//! in the run files' crate (`sctp-handover-harness-formats`), which the
//! check, the tables and the lab read it with; docs/harness.md.

pub use sctp_handover_harness_formats::{ActionKind, Interface, Scenario};
