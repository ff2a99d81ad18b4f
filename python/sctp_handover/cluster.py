"""Archive analysis on a cluster: one capture per task, on Ray, Dask or Spark.

    sctp-handover-cluster --engine dask sample-captures --out D
    sctp-handover-cluster --engine ray archive/ --out /shared/D --address ray://head:10001
    python -m sctp_handover.cluster …    (the same)

The driver lists the inputs (directories walked as `analyze` walks them,
`--manifest FILE` adds a list of paths), fans them out one per task, and
each task writes that input's part files straight into the dataset (the
layout and part names of `sctp-handover analyze --out`, docs/tables.md), so
the command line and every engine write the same dataset, reruns skip the
inputs already complete, and a killed job loses only the tasks that were
running. A bad capture is a `failed` row in the dataset and in the run's
manifest (`OUT/_runs/`), never a failed job. Without `--address` the engine
runs locally on this machine's cores (`--workers`). The analysis options
(`--rto-min-ms`, `--filter`, …) are those of `sctp-handover analyze`, from
the list the Rust side exports (sctp_handover.ANALYSIS_OPTIONS). See
docs/python.md and docs/scale-out.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

import sctp_handover

ENGINES = ("ray", "dask", "spark")

#: A task item, or a manifest row.
Row = Dict[str, Any]


def _task(item: Dict[str, Any]) -> Dict[str, Any]:
    """One input: runs on a worker. Never raises (write_capture does not);
    anything else going wrong is still a row."""
    try:
        row = sctp_handover.write_capture(
            item["path"],
            item["out"],
            source=item["source"],
            kind=item["kind"],
            reason=item["reason"],
            params=item["params"],
            table_format=item["table_format"],
            parquet_compression=item["parquet_compression"],
            force=item["force"],
            **item["options"],
        )
    except BaseException as e:  # noqa: BLE001 - a task must return its row
        row = _failed(item, f"{item['source']}: {type(e).__name__}: {e}")
    row["worker"] = f"{os.uname().nodename}:{os.getpid()}"
    return row


def _failed(item: Dict[str, Any], error: str) -> Dict[str, Any]:
    return {
        "source": item["source"],
        "key": item["key"],
        "status": "failed",
        "error": error,
        "associations": 0,
        "handovers": 0,
        "bytes": item.get("size") or 0,
        "reused": False,
        "seconds": 0.0,
    }


def read_manifest(path: str) -> List[str]:
    """A manifest: one input path a line; blank lines and `#` comments are
    skipped. Relative paths are taken from the current directory, like the
    command line's."""
    out: List[str] = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                out.append(line)
    return out


def plan(
    paths: List[str],
    out: str,
    table_format: str,
    force: bool,
    options: Dict[str, Any],
    parquet_compression: str = "snappy",
) -> Tuple[List[Dict[str, Any]], List[Tuple[str, str]]]:
    """The task items of a run (one per input, in listing order) and the
    problems met listing them."""
    inputs, params, problems = sctp_handover.list_inputs(paths)
    out_abs = os.path.abspath(out)
    items: List[Row] = []
    for i in inputs:
        items.append(
            {
                # The worker opens the absolute path; `source` stays the
                # path as found, as the command line records it.
                "path": os.path.abspath(i["path"]),
                "source": i["source"],
                "key": i["key"],
                "kind": i["kind"],
                "reason": i["reason"],
                "size": i["size"],
                "params": [tuple(p) for p in params],
                "out": out_abs,
                "table_format": table_format,
                "parquet_compression": parquet_compression,
                "force": force,
                "options": options,
            }
        )
    return items, problems


# --- engines: each yields None once its cluster is up, then maps _task over
# the items and yields the rows as the tasks end ---


def run_dask(items: List[Row], address: Optional[str], workers: int) -> Iterator[Optional[Row]]:
    import logging

    from dask.distributed import Client, LocalCluster, as_completed

    if address:
        client = Client(address)
        cluster = None
    else:
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        )
        client = Client(cluster)
    try:
        yield None  # the cluster is up
        futures = client.map(_task, items, pure=False, key=[f"capture-{i['key']}" for i in items])
        by_key = {f.key: item for f, item in zip(futures, items)}
        for f in as_completed(futures):
            try:
                yield f.result()
            except Exception as e:  # a worker that died (KilledWorker, …)
                item = by_key[f.key]
                yield _failed(item, f"{item['source']}: the task failed: {type(e).__name__}: {e}")
            f.release()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def run_ray(items: List[Row], address: Optional[str], workers: int) -> Iterator[Optional[Row]]:
    import ray

    if address:
        ray.init(address=address, logging_level="ERROR")
    else:
        ray.init(num_cpus=workers, include_dashboard=False, logging_level="ERROR")
    try:
        yield None  # the cluster is up
        # One CPU per task: a task is one single-threaded analysis.
        task = ray.remote(num_cpus=1, max_retries=1)(_task)
        pending = {task.remote(item): item for item in items}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=min(len(pending), 16), timeout=1.0)
            for ref in done:
                item = pending.pop(ref)
                try:
                    yield ray.get(ref)
                except Exception as e:  # a worker that died
                    yield _failed(item, f"{item['source']}: the task failed: {type(e).__name__}: {e}")
    finally:
        ray.shutdown()


def run_spark(items: List[Row], address: Optional[str], workers: int) -> Iterator[Optional[Row]]:
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(address or f"local[{workers}]")
        .appName("sctp-handover")
        .config("spark.task.cpus", "1")
        .getOrCreate()
    )
    try:
        yield None  # the cluster is up
        # One partition per input: one capture per task.
        rdd = spark.sparkContext.parallelize(items, max(1, len(items))).map(_task)
        yield from rdd.toLocalIterator()
    finally:
        spark.stop()


Runner = Callable[[List[Row], Optional[str], int], Iterator[Optional[Row]]]
RUNNERS: Dict[str, Runner] = {"ray": run_ray, "dask": run_dask, "spark": run_spark}


PROG = "sctp-handover-cluster"


def _option_help(option: "sctp_handover.AnalysisOption") -> str:
    """The option's help text, with its default as `analyze --help` shows
    it (argparse expands `%` sequences: doubled)."""
    text = option.help
    if option.kind in ("int", "choice") and option.default is not None:
        text += f" (default: {option.default})"
    return text.replace("%", "%%")


def add_analysis_options(parser: argparse.ArgumentParser) -> None:
    """The analysis options of `sctp-handover analyze`, from the list the
    Rust side exports (sctp_handover.ANALYSIS_OPTIONS): the same flags,
    help texts and defaults. Not given, an option is left to the Rust
    side's default (its value here is None)."""
    group = parser.add_argument_group("analysis options (as `sctp-handover analyze`)")
    for option in sctp_handover.ANALYSIS_OPTIONS:
        common: Dict[str, Any] = {"dest": option.name, "help": _option_help(option)}
        if option.kind == "flag":
            group.add_argument(option.flag, action="store_true", default=None, **common)
        elif option.kind == "int_list":
            group.add_argument(option.flag, type=int, action="append", metavar=option.metavar, **common)
        elif option.kind == "int":
            group.add_argument(option.flag, type=int, metavar=option.metavar, **common)
        elif option.kind == "choice":
            group.add_argument(option.flag, choices=option.choices, **common)
        elif option.kind in ("path", "text"):
            group.add_argument(option.flag, metavar=option.metavar, **common)
        else:  # a kind this runner does not know: the lists disagree
            raise ValueError(f"analysis option {option.flag}: unknown kind {option.kind!r}")


def options_from(args: argparse.Namespace) -> Dict[str, Any]:
    """The analysis options given on the command line, as keyword
    arguments of write_capture (those not given are left out, so that the
    Rust side's defaults, the command line's, apply)."""
    options = {}
    for option in sctp_handover.ANALYSIS_OPTIONS:
        value = getattr(args, option.name)
        if value is None:
            continue
        if option.kind == "path":
            # The workers open it, from another directory.
            value = os.path.abspath(value)
        options[option.name] = value
    return options


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Analyse a capture archive on Ray, Dask or Spark into the dataset of "
        "`sctp-handover analyze --out` (one capture per task). Also run as "
        "`python -m sctp_handover.cluster`.",
        epilog="Exit status: 0 every input was analysed and written; 1 some inputs failed "
        "(each a `failed` row in the dataset and the run's manifest, OUT/_runs/), or a "
        "directory could not be listed; 2 usage or option error, nothing was analysed.",
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="captures or directories (walked)")
    p.add_argument("--version", action="version", version=f"%(prog)s {sctp_handover.__version__}")
    p.add_argument("--engine", choices=ENGINES, required=True, help="where the tasks run")
    p.add_argument("--out", required=True, metavar="DIR", help="the dataset (shared storage on a cluster)")
    p.add_argument(
        "--address",
        metavar="CLUSTER",
        help="the cluster: ray://HOST:10001 or auto (Ray), tcp://HOST:8786 (Dask scheduler), "
        "spark://HOST:7077 or yarn (Spark). Without it: a local cluster on this machine",
    )
    p.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1, metavar="N",
        help="local mode: tasks at once (default: all cores)",
    )
    p.add_argument("--manifest", action="append", default=[], metavar="FILE",
                   help="a file listing input paths, one a line (# comments)")
    p.add_argument("--table-format", choices=("parquet", "csv", "jsonl"), default="parquet",
                   help="the tables' file format (as `analyze`; default: parquet)")
    p.add_argument("--parquet-compression", choices=("snappy", "zstd", "lz4", "none"), default="snappy",
                   help="compression of the Parquet tables' pages (as `analyze`; default: snappy)")
    p.add_argument("--force", action="store_true", help="analyse inputs already complete in --out again")
    p.add_argument("-q", "--quiet", action="store_true", help="no line per input")
    add_analysis_options(p)
    return p


def _error(text: str) -> None:
    print(f"{PROG}: error: {text}", file=sys.stderr)


def _line(n: int, total: int, row: Row) -> str:
    status = "done" if row.get("reused") else row["status"]
    text = f"[{n}/{total}] {status:9} {row['source']}"
    if row["status"] in ("ok", "truncated") and not row.get("reused"):
        text += f"  {row['associations']} assoc, {row['handovers']} handovers, {row['seconds']:.2f} s"
    if row.get("error") and row["status"] != "ok":
        text += f"  ({row['error']})"
    return text


def main(argv: Optional[List[str]] = None) -> int:
    args = parser().parse_args(argv)
    paths = list(args.paths)
    for m in args.manifest:
        paths.extend(read_manifest(m))
    if not paths:
        _error("no inputs (PATH... or --manifest FILE)")
        return 2
    module = {"ray": "ray", "dask": "distributed", "spark": "pyspark"}[args.engine]
    try:
        __import__(module)
    except ImportError:
        extra = " and a JDK (17 or later)" if args.engine == "spark" else ""
        _error(
            f"--engine {args.engine} needs the Python package {module}{extra} "
            f"(pip install './python[{args.engine}]'; make python installs Dask and Ray; docs/python.md)"
        )
        return 2
    options = options_from(args)
    try:
        sctp_handover.check_options(**options)
    except (TypeError, ValueError) as e:
        _error(str(e))
        return 2

    started = time.monotonic()
    try:
        sctp_handover.open_dataset(args.out, args.table_format)
    except RuntimeError as e:
        _error(str(e))
        return 2
    items, problems = plan(
        paths, args.out, args.table_format, args.force, options, args.parquet_compression
    )
    for path, reason in problems:
        _error(f"{path}: {reason}")
    total = len(items)
    total_bytes = sum(i["size"] or 0 for i in items)
    where = args.address or f"local, {args.workers} workers"
    print(f"{total} inputs ({total_bytes / 1e6:.1f} MB) on {args.engine} ({where}) → {args.out}", flush=True)

    runs = os.path.join(args.out, "_runs")
    os.makedirs(runs, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    manifest_path = os.path.join(runs, f"{stamp}-{args.engine}-{os.getpid()}.jsonl")
    counts: Dict[str, int] = {}
    analysed_bytes = 0
    failed = 0  # this run's and those already recorded as failed
    engine_started = time.monotonic()
    tasks_started = engine_started
    with open(manifest_path, "w", encoding="utf-8") as manifest:
        rows: Iterable[Optional[Row]] = RUNNERS[args.engine](items, args.address, args.workers) if items else []
        n = 0
        for row in rows:
            if row is None:
                tasks_started = time.monotonic()
                continue
            n += 1
            manifest.write(json.dumps(row, sort_keys=True) + "\n")
            manifest.flush()
            status = "done" if row.get("reused") else row["status"]
            counts[status] = counts.get(status, 0) + 1
            if row["status"] == "failed":
                failed += 1
            if not row.get("reused"):
                analysed_bytes += row.get("bytes") or 0
            if not args.quiet or row["status"] == "failed":
                print(_line(n, total, row), flush=True)
    ended = time.monotonic()
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    if failed > counts.get("failed", 0):
        summary += f" ({failed - counts.get('failed', 0)} of them failed)"
    tasks = ended - tasks_started
    rate = f"{analysed_bytes / 1e6 / tasks:.1f} MB/s, {n / tasks:.1f} inputs/s" if tasks > 0 else "-"
    print(
        f"{total} inputs: {summary or 'none'}; {ended - started:.1f} s in all: "
        f"{tasks_started - engine_started:.1f} s starting {args.engine}, {tasks:.1f} s of tasks ({rate}); "
        f"manifest {manifest_path}",
        flush=True,
    )
    # As `analyze`: 1 while an input is failed, on the rerun too.
    return 1 if failed or problems else 0


if __name__ == "__main__":
    sys.exit(main())
