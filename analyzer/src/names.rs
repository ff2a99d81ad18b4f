//! The names of the outputs' enums, defined once: each enum's variants
//! with the name every output writes for them (JSON lines, tables,
//! summary, report, watch, the Wireshark plugins), and the parser of those
//! names for the front ends that take them as options.

/// A name that is not one of an enum's (the enums `output_names!` defines
/// names for), as a front end's option gave it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{given}` (expected {})", .known.join(", "))]
pub struct UnknownName {
    /// What was named (e.g. "capture point").
    pub what: &'static str,
    /// The name given.
    pub given: String,
    /// The names known.
    pub known: &'static [&'static str],
}

/// Writes `as_str`, the list of every variant (`ALL`) and of their names
/// (`NAMES`), `FromStr`, `Display` and `Serialize` (as the name) for an
/// enum of unit variants, from one table of variant ⇒ name: the outputs
/// render the enum through these, so a name is defined once.
macro_rules! output_names {
    ($ty:ident, $what:literal { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $ty {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$ty] = &[$($ty::$variant),+];
            /// Every variant's name, in the order of [`Self::ALL`].
            pub const NAMES: &'static [&'static str] = &[$($name),+];

            /// The name every output writes.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $name),+
                }
            }
        }

        impl std::str::FromStr for $ty {
            type Err = $crate::names::UnknownName;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($name => Ok($ty::$variant),)+
                    _ => Err($crate::names::UnknownName {
                        what: $what,
                        given: s.to_owned(),
                        known: Self::NAMES,
                    }),
                }
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
    };
}
pub(crate) use output_names;

#[cfg(test)]
mod tests {
    use crate::capture::CaptureFormat;
    use crate::events::AssociationEndReason;
    use crate::events::{AsconfOutcome, RetransmissionReason};
    use crate::handover::{CapturePoint, ComponentGroup, SwitchClass, WindowEnd};
    use crate::track::path::PathStatus;

    /// Each name parses back to its variant, is what JSON writes, and is
    /// what `Display` writes.
    fn round_trips<T>(all: &[T], names: &[&str])
    where
        T: Copy + PartialEq + std::fmt::Debug + std::fmt::Display + serde::Serialize,
        T: std::str::FromStr<Err = super::UnknownName>,
    {
        assert_eq!(all.len(), names.len());
        for (v, name) in all.iter().zip(names) {
            assert_eq!(name.parse::<T>(), Ok(*v));
            assert_eq!(v.to_string(), *name);
            assert_eq!(
                serde_json::to_string(v).expect("serialisable"),
                format!("\"{name}\"")
            );
        }
    }

    #[test]
    fn every_name_round_trips() {
        round_trips(SwitchClass::ALL, SwitchClass::NAMES);
        round_trips(CapturePoint::ALL, CapturePoint::NAMES);
        round_trips(WindowEnd::ALL, WindowEnd::NAMES);
        round_trips(AsconfOutcome::ALL, AsconfOutcome::NAMES);
        round_trips(CaptureFormat::ALL, CaptureFormat::NAMES);
        round_trips(ComponentGroup::ALL, ComponentGroup::NAMES);
        round_trips(RetransmissionReason::ALL, RetransmissionReason::NAMES);
        round_trips(PathStatus::ALL, PathStatus::NAMES);
        round_trips(AssociationEndReason::ALL, AssociationEndReason::NAMES);
        assert_eq!(
            SwitchClass::NAMES,
            ["planned", "failover", "return", "other"]
        );
        assert_eq!(CapturePoint::NAMES, ["mn", "cn", "middle", "unknown"]);
        // The names the tables' schema (tables/src/schema.rs) documents.
        assert_eq!(
            PathStatus::NAMES,
            ["active", "potentially_failed", "inactive"]
        );
        assert_eq!(
            AssociationEndReason::NAMES,
            ["abort", "shutdown_complete", "superseded"]
        );
    }

    #[test]
    fn an_unknown_name_says_which_are_known() {
        let e = "sideways".parse::<CapturePoint>().expect_err("not a name");
        assert_eq!(
            e.to_string(),
            "unknown capture point `sideways` (expected mn, cn, middle, unknown)"
        );
        assert!(
            "Failover".parse::<SwitchClass>().is_err(),
            "names are lower case"
        );
    }
}
