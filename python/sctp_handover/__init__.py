"""sctp_handover: the analysis of `sctp-handover analyze` as Arrow tables.

The same Rust code as the command line (no second implementation): the
tables have the schemas of `analyze --out` (docs/tables.md), and
`write_capture` writes exactly the part files `analyze --out` writes, so a
dataset can be filled by the command line, by a Ray/Dask/Spark job
(`python -m sctp_handover.cluster`) or by both.

    import sctp_handover as sh
    t = sh.analyze_capture("sample-captures/koh-kim-1/mn.pcap", rto_min_ms=200)
    t["handovers"].to_pandas()

Options (keyword arguments) are the command line's analysis options with
`-` written `_`: verify_checksum, udp_encap_ports (list), duplicate_window_us,
rto_initial_ms, rto_min_ms, rto_max_ms, pmr, pf_retrans (None: no
potentially-failed state), events (path), capture_point
("mn", "cn", "middle", "unknown"), max_associations, max_paths,
max_addresses, tsn_window, max_events, max_reassembly, harness_files
(False = --no-harness-files). The capture filter (--filter) is the command
line's only.
"""

from __future__ import annotations

import os
from typing import Any, Dict

from . import _native

__all__ = [
    "TABLES",
    "VERSION",
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
#: The version of the Rust core (the `tool_version` of the dataset records).
VERSION = _native.VERSION


def analyze_capture_arrow(path: "os.PathLike[str] | str", **options: Any) -> Dict[str, Any]:
    """The six tables of one capture as objects with `__arrow_c_stream__`
    (the Arrow PyCapsule interface): give them to `pyarrow.table`,
    `polars.DataFrame`, `duckdb` … without a copy."""
    return dict(_native.analyze_capture(os.fspath(path), **options))


def analyze_capture(path: "os.PathLike[str] | str", **options: Any) -> Dict[str, "pyarrow.Table"]:
    """The six tables of one capture (files, associations, paths, asconf,
    events, handovers) as `pyarrow.Table`s, with the columns and types of
    `analyze --out`. Buffers are shared with the Rust side, not copied.

    A capture that cannot be analysed is no exception: its `files` row says
    `failed` and why, and the other tables are empty. Unknown or bad
    options raise TypeError or ValueError."""
    import pyarrow as pa

    return {name: pa.table(t) for name, t in analyze_capture_arrow(path, **options).items()}


def write_capture(
    path: "os.PathLike[str] | str",
    out_root: "os.PathLike[str] | str",
    *,
    source: "str | None" = None,
    kind: str = "capture",
    reason: "str | None" = None,
    params: "list[tuple[str, str]] | None" = None,
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


def list_inputs(paths):
    """The inputs under `paths` as `analyze` finds them: (inputs, params,
    problems). `inputs` is a list of dicts (path, source, kind, reason,
    size, key), `params` the run's parameter columns as (name, type)
    pairs, `problems` the (path, reason) of directories that could not be
    listed."""
    inputs, params, problems = _native.list_inputs([os.fspath(p) for p in paths])
    return list(inputs), list(params), list(problems)


def open_dataset(out_root: "os.PathLike[str] | str", table_format: str = "parquet") -> None:
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
