"""sctp_handover: the analysis of `sctp-handover analyze` as Arrow tables.

The same Rust code as the command line (no second implementation): the
tables have the schemas of `analyze --out` (docs/tables.md), and
`write_capture` writes exactly the part files `analyze --out` writes, so a
dataset can be filled by the command line, by a Ray/Dask/Spark job
(`sctp-handover-cluster`, or `python -m sctp_handover.cluster`) or by both.

    import sctp_handover as sh
    t = sh.analyze_capture("sample-captures/koh-kim-1/mn.pcap", rto_min_ms=200)
    t["handovers"].to_pandas()

Options (keyword arguments) are the command line's analysis options with
`-` written `_` (`rto_min_ms=200` is `--rto-min-ms 200`, `no_pf=True` is
`--no-pf`, `filter="sctp port 9"` is `--filter`). `ANALYSIS_OPTIONS` lists
them with their types, defaults and help texts; the cluster runner's
command line is built from it. Two older spellings stay accepted:
`pf_retrans=None` (as `no_pf=True`) and `harness_files=False` (as
`no_harness_files=True`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _native

if TYPE_CHECKING:
    import pyarrow

__all__ = [
    "ANALYSIS_OPTIONS",
    "AnalysisOption",
    "TABLES",
    "VERSION",
    "__version__",
    "analyze_capture",
    "analyze_capture_arrow",
    "write_capture",
    "list_inputs",
    "check_options",
    "open_dataset",
    "part_key",
]

#: The tables, in the order `analyze --out` documents them.
TABLES = tuple(_native.TABLES)
#: The package's version, which is its Rust crate's (python/Cargo.toml).
__version__: str = _native.__version__
#: The same, by its older name.
VERSION = __version__
#: The analysis options (keyword arguments of `analyze_capture`,
#: `write_capture` and `check_options`; the cluster runner's flags), in
#: the order of `sctp-handover analyze --help`.
ANALYSIS_OPTIONS: Tuple["AnalysisOption", ...] = _native.ANALYSIS_OPTIONS
AnalysisOption = _native.AnalysisOption

StrPath = Union["os.PathLike[str]", str]


def analyze_capture_arrow(path: StrPath, **options: Any) -> Dict[str, _native.ArrowTable]:
    """The six tables of one capture as objects with `__arrow_c_stream__`
    (the Arrow PyCapsule interface): give them to `pyarrow.table`,
    `polars.DataFrame`, `duckdb` … without a copy."""
    return dict(_native.analyze_capture(os.fspath(path), **options))


def analyze_capture(path: StrPath, **options: Any) -> Dict[str, "pyarrow.Table"]:
    """The six tables of one capture (files, associations, paths, asconf,
    events, handovers) as `pyarrow.Table`s, with the columns and types of
    `analyze --out`. Buffers are shared with the Rust side, not copied.

    A capture that cannot be analysed is no exception: its `files` row says
    `failed` and why, and the other tables are empty. Unknown or bad
    options raise TypeError or ValueError."""
    import pyarrow as pa

    return {name: pa.table(t) for name, t in analyze_capture_arrow(path, **options).items()}


def write_capture(
    path: StrPath,
    out_root: StrPath,
    *,
    source: Optional[str] = None,
    kind: str = "capture",
    reason: Optional[str] = None,
    params: Optional[Sequence[Sequence[str]]] = None,
    table_format: str = "parquet",
    parquet_compression: str = "snappy",
    force: bool = False,
    **options: Any,
) -> Dict[str, Any]:
    """Analyses one input and writes its part files into the dataset at
    `out_root`, as `analyze --out` does (`<table>/part-<key>.<ext>`, then
    `_inputs/<key>.json`); returns its manifest row: source, key, status
    (ok, truncated, failed, skipped), error, associations, handovers,
    bytes, reused (already complete with the same options: not analysed
    again), seconds.

    Never raises for a bad input, a bad option or a failed write: the row
    says `failed` and why. `source` is the path as the run found it (the
    `source` column and the part key; default `path`); `kind`, `reason` and
    `params` come from `list_inputs` so that every task of a run writes the
    same parameter columns. `parquet_compression` is snappy, zstd, lz4
    or none, as `analyze --parquet-compression`."""
    try:
        return dict(
            _native.write_capture(
                os.fspath(path),
                os.fspath(out_root),
                source=source,
                kind=kind,
                reason=reason,
                params=None if params is None else [tuple(p) for p in params],
                table_format=table_format,
                parquet_compression=parquet_compression,
                force=force,
                **options,
            )
        )
    except Exception as e:  # arguments of the wrong type: still a row
        source = source if source is not None else os.fspath(path)
        return {
            "source": source,
            "key": part_key(source),
            "status": "failed",
            "error": f"{source}: {type(e).__name__}: {e}",
            "associations": 0,
            "handovers": 0,
            "bytes": 0,
            "reused": False,
            "seconds": 0.0,
        }


def list_inputs(
    paths: Sequence[StrPath],
) -> Tuple[List[Dict[str, Any]], List[Tuple[str, str]], List[Tuple[str, str]]]:
    """The inputs under `paths` as `analyze` finds them: (inputs, params,
    problems). `inputs` is a list of dicts (path, source, kind, reason,
    size, key), `params` the run's parameter columns as (name, type)
    pairs, `problems` the (path, reason) of directories that could not be
    listed."""
    inputs, params, problems = _native.list_inputs([os.fspath(p) for p in paths])
    return list(inputs), list(params), list(problems)


def open_dataset(out_root: StrPath, table_format: str = "parquet") -> None:
    """Creates the dataset's directory and removes the temporaries that
    killed runs on this machine left, as `analyze --out` does at its start;
    a driver calls it once before its tasks (write_capture does not)."""
    _native.open_dataset(os.fspath(out_root), table_format)


def check_options(**options: Any) -> None:
    """Raises TypeError/ValueError for an unknown or bad option."""
    _native.check_options(**options)


def part_key(source: str) -> str:
    """The key of an input's part files (`part-<key>.<ext>`)."""
    return _native.part_key(source)
