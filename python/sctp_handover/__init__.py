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
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _native, storage

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
    "analyze_points",
    "analyze_points_arrow",
    "write_capture",
    "list_inputs",
    "check_options",
    "open_dataset",
    "part_key",
    "StorageError",
]

StorageError = storage.StorageError

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


def analyze_capture_arrow(
    path: StrPath, *, storage_options: Optional[Mapping[str, Any]] = None, **options: Any
) -> Dict[str, _native.ArrowTable]:
    """The six tables of one capture as objects with `__arrow_c_stream__`
    (the Arrow PyCapsule interface): give them to `pyarrow.table`,
    `polars.DataFrame`, `duckdb` … without a copy. `path` may be a URL
    (`s3://bucket/key`: read as it downloads; sctp_handover.storage)."""
    if storage.is_url(path):
        with storage.opened_input(os.fspath(path), storage_options) as remote:
            return dict(_native.analyze_capture(**remote, **options))
    return dict(_native.analyze_capture(storage.local_path(path), **options))


def analyze_capture(
    path: StrPath, *, storage_options: Optional[Mapping[str, Any]] = None, **options: Any
) -> Dict[str, "pyarrow.Table"]:
    """The six tables of one capture (files, associations, paths, asconf,
    events, handovers) as `pyarrow.Table`s, with the columns and types of
    `analyze --out`. Buffers are shared with the Rust side, not copied.

    A capture that cannot be analysed is no exception: its `files` row says
    `failed` and why, and the other tables are empty. Unknown or bad
    options raise TypeError or ValueError."""
    import pyarrow as pa

    tables = analyze_capture_arrow(path, storage_options=storage_options, **options)
    return {name: pa.table(t) for name, t in tables.items()}


def analyze_points_arrow(
    points: Mapping[str, StrPath], **options: Any
) -> Dict[str, _native.ArrowTable]:
    """`analyze_points`' tables as objects with `__arrow_c_stream__`."""
    for path in points.values():
        if storage.is_url(path):
            # Each capture is read several times (docs/points.md).
            raise ValueError(f"{os.fspath(path)}: a capture point must be a local file")
    local = {name: storage.local_path(path) for name, path in points.items()}
    return dict(_native.analyze_points(local, **options))


def analyze_points(points: Mapping[str, StrPath], **options: Any) -> Dict[str, "pyarrow.Table"]:
    """Two capture points of the same traffic, `{"mn": path, "cn": path}`
    (the first point's clock is the reference), as `sctp-handover analyze
    --point mn=… --point cn=… --out` pairs them (the same Rust code): the
    `points` (clock offset, drift, counts), `owd` (one row per packet seen
    at both points) and `handovers_two_sided` tables (one row per handover
    both saw and one per handover seen at one point only, `seen_at`
    naming it) as `pyarrow.Table`s (docs/points.md). `options` are the
    analysis options of `analyze_capture`, applied to both captures.
    Other than two points, one name twice or a URL raise ValueError; a
    capture that cannot be read, RuntimeError."""
    import pyarrow as pa

    return {name: pa.table(t) for name, t in analyze_points_arrow(points, **options).items()}


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
    storage_options: Optional[Mapping[str, Any]] = None,
    listed: Optional[Mapping[str, Any]] = None,
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
    or none, as `analyze --parquet-compression`.

    `path` and `out_root` may be URLs (`s3://bucket/key`, any pyarrow or
    fsspec filesystem; `storage_options` their options, the environment's
    AWS_* variables otherwise): the capture is read as it downloads, the
    parts are uploaded and the record last (sctp_handover.storage).
    `listed` is what the run's listing said of a URL input (size,
    modified_ns, sidecars), so that a task asks nothing again."""
    try:
        native_params = None if params is None else [tuple(p) for p in params]

        def write(root: str, remote: Dict[str, Any]) -> Dict[str, Any]:
            listed_source = remote.pop("source", None)
            return dict(
                _native.write_capture(
                    remote.pop("path"),
                    root,
                    source=listed_source if source is None else source,
                    kind=kind,
                    reason=reason,
                    params=native_params,
                    table_format=table_format,
                    parquet_compression=parquet_compression,
                    force=force,
                    **remote,
                    **options,
                )
            )

        def into(root: StrPath, remote: Dict[str, Any]) -> Dict[str, Any]:
            if not storage.is_url(root):
                return write(storage.local_path(root), remote)
            src = source if source is not None else remote.get("source") or os.fspath(path)
            return storage.write_remote(
                lambda staging: write(staging, dict(remote)),
                os.fspath(root),
                part_key(src),
                force,
                storage_options,
                src,
            )

        if storage.is_url(path):
            given = dict(listed or {})
            with storage.opened_input(
                os.fspath(path),
                storage_options,
                kind=kind,
                size=given.get("size"),
                modified_ns=given.get("modified_ns"),
                sidecars=given.get("sidecars"),
            ) as remote:
                return into(out_root, remote)
        return into(out_root, {"path": storage.local_path(path)})
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
    storage_options: Optional[Mapping[str, Any]] = None,
) -> Tuple[List[Dict[str, Any]], List[Tuple[str, str]], List[Tuple[str, str]]]:
    """The inputs under `paths` as `analyze` finds them: (inputs, params,
    problems). `inputs` is a list of dicts (path, source, kind, reason,
    size, modified_ns, key; `sidecars` for URLs), `params` the run's
    parameter columns as (name, type) pairs, `problems` the (path, reason)
    of directories that could not be listed. A path may be a URL
    (`s3://bucket/prefix`: its objects walked as a directory is)."""
    return storage.list_inputs(paths, storage_options)


def open_dataset(
    out_root: StrPath,
    table_format: str = "parquet",
    storage_options: Optional[Mapping[str, Any]] = None,
) -> None:
    """Creates the dataset's directory and removes the temporaries that
    killed runs on this machine left, as `analyze --out` does at its start;
    a driver calls it once before its tasks (write_capture does not). For
    a URL: checks that the bucket exists and takes objects (StorageError,
    naming the URL, when not)."""
    if storage.is_url(out_root):
        storage.open_dataset(os.fspath(out_root), storage_options)
        return
    _native.open_dataset(storage.local_path(out_root), table_format)


def check_options(**options: Any) -> None:
    """Raises TypeError/ValueError for an unknown or bad option."""
    _native.check_options(**options)


def part_key(source: str) -> str:
    """The key of an input's part files (`part-<key>.<ext>`)."""
    return _native.part_key(source)
