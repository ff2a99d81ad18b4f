//! The analysis options of the Python API, in one list: each option's
//! keyword, flag, value name and help text (the analyzer's
//! [`OptionDoc`], which the command line's `analyze --help` renders too),
//! its kind, its default (read from [`Settings::default`], the analyzer's
//! settings and the command line's defaults; a choice's values from the
//! analyzer's names, [`CapturePoint::NAMES`]) and how it sets the
//! settings. `analyze_capture(**options)` checks keywords against it, and
//! `sctp_handover.ANALYSIS_OPTIONS` exports it, from which the cluster
//! runner builds its command line.
//!
//! What the list adds to the analyzer's (kinds, defaults, order) can still
//! differ from the command line's: python/tests compares it with
//! `sctp-handover analyze --help`.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use sctp_handover::handover::CapturePoint;
use sctp_handover::settings::{option, OptionDoc, Settings};
use std::path::PathBuf;

/// What the keyword arguments of one call ask for: the settings, and the
/// command-line-only parts (harness files, the capture filter).
pub struct Request {
    /// The analysis settings, as the command line's flags would set them.
    pub settings: Settings,
    /// Whether the harness's files beside a capture (events.jsonl, the
    /// capture side) are read (false: `no_harness_files=True`, as
    /// `--no-harness-files`).
    pub harness_files: bool,
    /// `no_pf=True` wins over any `pf_retrans`, as `--no-pf` does.
    pub no_pf: bool,
    /// A libpcap capture filter (`filter=`, `--filter`); None: every frame.
    pub filter: Option<String>,
}

impl Default for Request {
    fn default() -> Self {
        Request {
            settings: Settings::default(),
            harness_files: true,
            no_pf: false,
            filter: None,
        }
    }
}

/// An option's value type, as the cluster runner's argparse needs it.
#[derive(Clone, Copy)]
enum Kind {
    /// A switch (`--verify-checksum`): True or False.
    Flag,
    /// An integer.
    Int,
    /// An integer given once per value (`--udp-encap-port 9900 --udp-encap-port 9901`).
    IntList,
    /// A file path.
    Path,
    /// One of `choices`.
    Choice,
    /// Free text (the capture filter).
    Text,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Flag => "flag",
            Kind::Int => "int",
            Kind::IntList => "int_list",
            Kind::Path => "path",
            Kind::Choice => "choice",
            Kind::Text => "text",
        }
    }
}

/// A default value, converted to Python when the list is exported.
enum Value {
    Bool(bool),
    Int(u64),
    SignedInt(i64),
    Ints(Vec<u16>),
    Text(&'static str),
    Nothing,
}

struct Spec {
    /// Keyword, flag, value name and help text.
    doc: OptionDoc,
    kind: Kind,
    choices: &'static [&'static str],
    default: fn(&Settings) -> Value,
    set: fn(&mut Request, &Bound<'_, PyAny>) -> PyResult<()>,
}

/// The list, in the order of `sctp-handover analyze --help`
/// ([`sctp_handover::settings::OPTIONS`]).
const SPECS: &[Spec] = &[
    Spec {
        doc: option::VERIFY_CHECKSUM,
        kind: Kind::Flag,
        choices: &[],
        default: |s| Value::Bool(s.verify_checksum),
        set: |r, v| {
            r.settings.verify_checksum = v.extract()?;
            Ok(())
        },
    },
    Spec {
        doc: option::UDP_ENCAP_PORTS,
        kind: Kind::IntList,
        choices: &[],
        default: |s| Value::Ints(s.udp_encap_ports.clone()),
        set: |r, v| {
            r.settings.udp_encap_ports = v.extract()?;
            Ok(())
        },
    },
    Spec {
        doc: option::DUPLICATE_WINDOW_US,
        kind: Kind::Int,
        choices: &[],
        default: |s| Value::SignedInt(s.duplicate_window_us),
        set: |r, v| {
            r.settings.duplicate_window_us = v.extract()?;
            Ok(())
        },
    },
    Spec {
        doc: option::RTO_INITIAL_MS,
        kind: Kind::Int,
        choices: &[],
        default: |s| Value::SignedInt(s.rto_initial_ms),
        set: |r, v| {
            r.settings.rto_initial_ms = v.extract()?;
            Ok(())
        },
    },
    Spec {
        doc: option::RTO_MIN_MS,
        kind: Kind::Int,
        choices: &[],
        default: |s| Value::SignedInt(s.rto_min_ms),
        set: |r, v| {
            r.settings.rto_min_ms = v.extract()?;
            Ok(())
        },
    },
    Spec {
        doc: option::RTO_MAX_MS,
        kind: Kind::Int,
        choices: &[],
        default: |s| Value::SignedInt(s.rto_max_ms),
        set: |r, v| {
            r.settings.rto_max_ms = v.extract()?;
            Ok(())
        },
    },
    Spec {
        doc: option::PMR,
        kind: Kind::Int,
        choices: &[],
        default: |s| Value::Int(u64::from(s.pmr)),
        set: |r, v| {
            r.settings.pmr = v.extract()?;
            Ok(())
        },
    },
    Spec {
        doc: option::PF_RETRANS,
        kind: Kind::Int,
        choices: &[],
        default: |s| {
            s.pf_retrans
                .map_or(Value::Nothing, |n| Value::Int(u64::from(n)))
        },
        // None as well: no potentially-failed state (what no_pf says).
        set: |r, v| {
            r.settings.pf_retrans = v.extract::<Option<u32>>()?;
            Ok(())
        },
    },
    Spec {
        doc: option::NO_PF,
        kind: Kind::Flag,
        choices: &[],
        default: |s| Value::Bool(s.pf_retrans.is_none()),
        set: |r, v| {
            r.no_pf = v.extract()?;
            Ok(())
        },
    },
    Spec {
        doc: option::EVENTS,
        kind: Kind::Path,
        choices: &[],
        default: |_| Value::Nothing,
        set: |r, v| {
            r.settings.events = v.extract::<Option<PathBuf>>()?;
            Ok(())
        },
    },
    Spec {
        doc: option::CAPTURE_POINT,
        kind: Kind::Choice,
        choices: CapturePoint::NAMES,
        default: |s| Value::Text(s.capture_point.as_str()),
        set: |r, v| {
            let name: String = v.extract()?;
            r.settings.capture_point = name
                .parse()
                .map_err(|e| PyValueError::new_err(format!("capture_point: {e}")))?;
            Ok(())
        },
    },
    Spec {
        doc: option::NO_HARNESS_FILES,
        kind: Kind::Flag,
        choices: &[],
        default: |_| Value::Bool(false),
        set: |r, v| {
            r.harness_files = !v.extract::<bool>()?;
            Ok(())
        },
    },
    Spec {
        doc: option::MAX_ASSOCIATIONS,
        kind: Kind::Int,
        choices: &[],
        default: |s| Value::Int(s.max_associations as u64),
        set: |r, v| {
            r.settings.max_associations = v.extract()?;
            Ok(())
        },
    },
    Spec {
        doc: option::MAX_PATHS,
        kind: Kind::Int,
        choices: &[],
        default: |s| Value::Int(s.max_paths as u64),
        set: |r, v| {
            r.settings.max_paths = v.extract()?;
            Ok(())
        },
    },
    Spec {
        doc: option::MAX_ADDRESSES,
        kind: Kind::Int,
        choices: &[],
        default: |s| Value::Int(s.max_addresses as u64),
        set: |r, v| {
            r.settings.max_addresses = v.extract()?;
            Ok(())
        },
    },
    Spec {
        doc: option::TSN_WINDOW,
        kind: Kind::Int,
        choices: &[],
        default: |s| Value::Int(s.tsn_window as u64),
        set: |r, v| {
            r.settings.tsn_window = v.extract()?;
            Ok(())
        },
    },
    Spec {
        doc: option::MAX_EVENTS,
        kind: Kind::Int,
        choices: &[],
        default: |s| Value::Int(s.max_events as u64),
        set: |r, v| {
            r.settings.max_events = v.extract()?;
            Ok(())
        },
    },
    Spec {
        doc: option::FILTER,
        kind: Kind::Text,
        choices: &[],
        default: |_| Value::Nothing,
        set: |r, v| {
            r.filter = v.extract()?;
            Ok(())
        },
    },
    Spec {
        doc: option::MAX_REASSEMBLY,
        kind: Kind::Int,
        choices: &[],
        default: |s| Value::Int(s.max_reassembly as u64),
        set: |r, v| {
            r.settings.max_reassembly = v.extract()?;
            Ok(())
        },
    },
];

/// The keyword `harness_files=False`, the API's spelling before
/// `no_harness_files` (kept: scripts use it).
const HARNESS_FILES_ALIAS: &str = "harness_files";

/// Keyword arguments → what they ask for. Unknown keywords are a
/// TypeError, values of the wrong type a TypeError, bad values a
/// ValueError.
pub fn request_from(options: Option<&Bound<'_, pyo3::types::PyDict>>) -> PyResult<Request> {
    let mut request = Request::default();
    let Some(options) = options else {
        return Ok(request);
    };
    for (key, value) in options.iter() {
        let key: String = key.extract()?;
        if key == HARNESS_FILES_ALIAS {
            request.harness_files = value.extract()?;
            continue;
        }
        let spec = SPECS.iter().find(|s| s.doc.name == key).ok_or_else(|| {
            PyTypeError::new_err(format!(
                "unknown option {key:?} (see sctp_handover.ANALYSIS_OPTIONS)"
            ))
        })?;
        (spec.set)(&mut request, &value)?;
    }
    if request.no_pf {
        request.settings.pf_retrans = None;
    }
    Ok(request)
}

/// One analysis option, as `sctp_handover.ANALYSIS_OPTIONS` lists it.
#[pyclass(
    module = "sctp_handover._native",
    name = "AnalysisOption",
    frozen,
    get_all
)]
pub struct AnalysisOption {
    /// The keyword argument (`rto_min_ms`).
    name: &'static str,
    /// The command line's flag (`--rto-min-ms`).
    flag: &'static str,
    /// flag, int, int_list, path, choice or text.
    kind: &'static str,
    /// The value used when the option is not given.
    default: Py<PyAny>,
    /// The values a `choice` takes (empty for the other kinds).
    choices: Vec<&'static str>,
    /// The placeholder of the value in help texts (None: the flag's name).
    metavar: Option<&'static str>,
    /// What the option does (the words of `sctp-handover analyze --help`).
    help: &'static str,
}

#[pymethods]
impl AnalysisOption {
    fn __repr__(&self) -> String {
        format!("AnalysisOption(name={:?}, flag={:?})", self.name, self.flag)
    }
}

fn value_to_py(py: Python<'_>, value: Value) -> PyResult<Py<PyAny>> {
    Ok(match value {
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        Value::Int(n) => n.into_pyobject(py)?.into_any().unbind(),
        Value::SignedInt(n) => n.into_pyobject(py)?.into_any().unbind(),
        Value::Ints(ns) => PyList::new(py, ns)?.into_any().unbind(),
        Value::Text(t) => t.into_pyobject(py)?.into_any().unbind(),
        Value::Nothing => py.None(),
    })
}

/// The list as Python sees it: a tuple of [`AnalysisOption`].
pub fn exported<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
    let defaults = Settings::default();
    let mut out = Vec::with_capacity(SPECS.len());
    for spec in SPECS {
        out.push(Bound::new(
            py,
            AnalysisOption {
                name: spec.doc.name,
                flag: spec.doc.flag,
                kind: spec.kind.name(),
                default: value_to_py(py, (spec.default)(&defaults))?,
                choices: spec.choices.to_vec(),
                metavar: spec.doc.value_name,
                help: spec.doc.help,
            },
        )?);
    }
    PyTuple::new(py, out)
}
