"""Archive analysis on a cluster: batches of captures as tasks, on Ray, Dask or Spark.

    sctp-handover-cluster --engine dask sample-captures --out D
    sctp-handover-cluster --engine ray archive/ --out /shared/D --address ray://head:10001
    python -m sctp_handover.cluster …    (the same)

The driver lists the inputs (directories walked as `analyze` walks them,
`--manifest FILE` adds a list of paths), fans them out in batches (a task
analyses up to `--batch-files` inputs or `--batch-bytes` bytes, one after
the other, so that the engine's cost per task is shared), and each task
writes each of its inputs' part files straight into the dataset (the
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
from sctp_handover import storage

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
            storage_options=item.get("storage_options"),
            listed=item.get("listed"),
            **item["options"],
        )
    except BaseException as e:  # noqa: BLE001 - a task must return its row
        row = _failed(item, f"{item['source']}: {type(e).__name__}: {e}")
    row["worker"] = f"{os.uname().nodename}:{os.getpid()}"
    return row


def _batch_task(batch: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """A batch of inputs: runs on a worker, one input after the other, each
    through `_task` (its parts and its `_inputs` record written before the
    next starts, so an interrupted batch keeps the inputs it finished). A
    bad input is that input's `failed` row; the others go on."""
    return [_task(item) for item in batch]


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
    storage_options: Optional[Dict[str, Any]] = None,
) -> Tuple[List[Dict[str, Any]], List[Tuple[str, str]]]:
    """The task items of a run (one per input, in listing order) and the
    problems met listing them. Paths and `out` may be URLs (s3://…)."""
    inputs, params, problems = sctp_handover.list_inputs(paths, storage_options)
    out_abs = storage.absolute(out)
    items: List[Row] = []
    for i in inputs:
        items.append(
            {
                # The worker opens the absolute path; `source` stays the
                # path as found, as the command line records it.
                "path": storage.absolute(i["path"]),
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
                "storage_options": storage_options,
                # What the listing said of a URL input: not asked again.
                "listed": {k: i[k] for k in ("size", "modified_ns", "sidecars")} if storage.is_url(i["path"]) else None,
            }
        )
    return items, problems


#: Defaults of --batch-files and --batch-bytes: a task takes inputs until it
#: has this many, or this many bytes. The engines cost about 10 ms per task
#: (scheduling, serialisation, result collection; docs/scale-out.md) and a
#: small capture 5–10 ms to analyse and write, so 200 of them make the
#: engine's share about 1 %. The bytes bound keeps batches of larger
#: captures small enough to spread over the workers: 64 MB is 50–100 ms of
#: analysis at the release build's rate (about 1 GB/s a core), a few times
#: the engine's cost.
BATCH_FILES = 200
BATCH_BYTES = 64 * 1024 * 1024

#: Batches per worker at least, when --batch-files is not given: a run with
#: fewer than BATCH_FILES × this × workers inputs is cut into smaller
#: batches, so that every worker gets work and one slow batch does not hold
#: the end of the run alone.
BATCHES_PER_WORKER = 4


def batches(
    items: List[Row], batch_files: Optional[int], batch_bytes: int, workers: int = 1
) -> List[List[Row]]:
    """The task items cut into batches, in listing order: a batch ends when
    it holds `batch_files` inputs or `batch_bytes` bytes (so a capture
    larger than `batch_bytes` is a batch alone). `batch_files` None:
    BATCH_FILES, or fewer for a small run (BATCHES_PER_WORKER batches per
    worker)."""
    if batch_files is None:
        share = -(-len(items) // max(1, workers * BATCHES_PER_WORKER))  # ceil
        batch_files = min(BATCH_FILES, share)
    files = max(1, batch_files)
    out: List[List[Row]] = []
    batch: List[Row] = []
    size = 0
    for item in items:
        batch.append(item)
        size += item.get("size") or 0
        if len(batch) >= files or size >= batch_bytes:
            out.append(batch)
            batch, size = [], 0
    if batch:
        out.append(batch)
    return out


def _failed_batch(batch: List[Row], e: BaseException) -> List[Row]:
    """The rows of a batch whose task died with its worker (killed, out of
    memory) after the engine's retries: each input `failed` with the
    engine's error. Those the task finished before it died have their
    records and are `done` on the next run; the others are analysed again."""
    return [_failed(item, f"{item['source']}: the task failed: {type(e).__name__}: {e}") for item in batch]


# --- engines: each yields None once its cluster is up, then maps
# _batch_task over the batches and yields each input's row as the batch
# tasks end ---


def run_dask(batches: List[List[Row]], address: Optional[str], workers: int) -> Iterator[Optional[Row]]:
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
        # A batch's key: its first input's key and its length (unique: an
        # input is in one batch).
        keys = [f"captures-{b[0]['key']}-{len(b)}" for b in batches]
        futures = client.map(_batch_task, batches, pure=False, key=keys)
        by_key = {f.key: batch for f, batch in zip(futures, batches)}
        for f in as_completed(futures):
            try:
                rows = f.result()
            except Exception as e:  # a worker that died (KilledWorker, …)
                rows = _failed_batch(by_key[f.key], e)
            f.release()
            yield from rows
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


#: Ray's setting of its workers' priority (`worker_niceness` of Ray's
#: config, read by each worker process from this environment variable).
RAY_WORKER_NICENESS = "RAY_worker_niceness"


def ray_runtime_env() -> Dict[str, Any]:
    """The runtime environment of the run's Ray job: its worker processes at
    the priority of the processes that start them. Ray's default
    `worker_niceness` (15, applied by each worker with nice(2) as it starts,
    so that Ray's own daemons keep the CPU) puts the tasks 15 nice levels
    below the command line's and Dask's and Spark's workers, so wherever they
    compete by nice value (processes of one cgroup, kernels without
    autogroups) a task gets a sliver of a busy core (docs/scale-out.md,
    "Ray's rate, looked into"). As the job's environment it holds on a
    cluster started by `ray start` too (Ray's job manager does the same for
    the drivers it starts); RAY_worker_niceness set for the driver is passed
    on instead."""
    return {"env_vars": {RAY_WORKER_NICENESS: os.environ.get(RAY_WORKER_NICENESS, "0")}}


def run_ray(batches: List[List[Row]], address: Optional[str], workers: int) -> Iterator[Optional[Row]]:
    import ray

    if address:
        ray.init(address=address, logging_level="ERROR", runtime_env=ray_runtime_env())
    else:
        # A local cluster's raylet starts the workers with its environment:
        # the setting goes there rather than into a runtime environment,
        # whose workers Ray would start afresh for the job instead of using
        # those it started with the cluster (2–3 s more before the first
        # task on this loaded machine).
        env_vars: Dict[str, str] = ray_runtime_env()["env_vars"]
        saved = {k: os.environ.get(k) for k in env_vars}
        os.environ.update(env_vars)
        try:
            ray.init(num_cpus=workers, include_dashboard=False, logging_level="ERROR")
        finally:  # the driver's own environment as it was
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    try:
        yield None  # the cluster is up
        # One CPU per task: a task analyses one input at a time.
        task = ray.remote(num_cpus=1, max_retries=1)(_batch_task)
        pending = {task.remote(batch): batch for batch in batches}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
            for ref in done:
                batch = pending.pop(ref)
                try:
                    rows = ray.get(ref)
                except Exception as e:  # a worker that died
                    rows = _failed_batch(batch, e)
                yield from rows
    finally:
        ray.shutdown()


def run_spark(batches: List[List[Row]], address: Optional[str], workers: int) -> Iterator[Optional[Row]]:
    from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

    # The executors' Python: this interpreter unless told otherwise (the
    # same path on every node, as the package must be: docs/scale-out.md).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(address or f"local[{workers}]")
        .appName("sctp-handover")
        .config("spark.task.cpus", "1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        yield None  # the cluster is up
        sc = spark.sparkContext

        # One job of one partition per batch, submitted from driver threads:
        # Spark runs concurrent jobs on its free cores, and each batch's
        # rows come back as its job ends (one job over every batch would
        # give them all at its end; toLocalIterator runs one partition at a
        # time).
        def job(batch: List[Row]) -> List[Row]:
            rows: List[Row] = sc.parallelize([batch], 1).map(_batch_task).collect()[0]
            return rows

        slots = max(1, sc.defaultParallelism)
        with ThreadPoolExecutor(max_workers=slots) as pool:
            running: Dict[Future[List[Row]], List[Row]] = {pool.submit(job, b): b for b in batches}
            while running:
                done, _ = wait(list(running), return_when=FIRST_COMPLETED)
                for fut in done:
                    batch = running.pop(fut)
                    try:
                        rows = fut.result()
                    except Exception as e:  # the job failed after Spark's retries
                        rows = _failed_batch(batch, e)
                    yield from rows
    finally:
        spark.stop()


Runner = Callable[[List[List[Row]], Optional[str], int], Iterator[Optional[Row]]]
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


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text}: must be 1 or more")
    return value


def _byte_size(text: str) -> int:
    """A size: bytes, or a number with K, M or G (powers of 1024)."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    t = text.strip().upper().removesuffix("B")
    scale = units.get(t[-1:], 1)
    try:
        value = int(t[:-1] if scale > 1 else t) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text}: not a size (e.g. 67108864, 64M, 1G)") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text}: must be 1 byte or more")
    return value


def _storage_option(text: str) -> Tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{text}: expected KEY=VALUE")
    return key, {"true": True, "false": False}.get(value.lower(), value)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Analyse a capture archive on Ray, Dask or Spark into the dataset of "
        "`sctp-handover analyze --out` (batches of captures per task). Also run as "
        "`python -m sctp_handover.cluster`.",
        epilog="Exit status: 0 every input was analysed and written; 1 some inputs failed "
        "(each a `failed` row in the dataset and the run's manifest, OUT/_runs/), or a "
        "directory could not be listed; 2 usage or option error, nothing was analysed.",
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="captures or directories (walked); s3://bucket/prefix URLs too")
    p.add_argument("--version", action="version", version=f"%(prog)s {sctp_handover.__version__}")
    p.add_argument("--engine", choices=ENGINES, required=True, help="where the tasks run")
    p.add_argument("--out", required=True, metavar="DIR", help="the dataset: a directory (shared storage on a cluster) or a URL, s3://bucket/prefix")
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
    p.add_argument(
        "--batch-files", type=_positive, metavar="N",
        help=f"a task takes up to N inputs (default: {BATCH_FILES}, or fewer when the run is small, "
        f"so that each of --workers gets {BATCHES_PER_WORKER} tasks)",
    )
    p.add_argument(
        "--batch-bytes", type=_byte_size, default=BATCH_BYTES, metavar="SIZE",
        help="… or inputs until their sizes add up to SIZE (bytes, or with K, M, G: "
        "powers of 1024; default: 64M)",
    )
    p.add_argument("--manifest", action="append", default=[], metavar="FILE",
                   help="a file listing input paths, one a line (# comments)")
    p.add_argument("--storage-option", dest="storage_options", action="append", default=[],
                   type=_storage_option, metavar="KEY=VALUE",
                   help="an option of the filesystem of s3:// (and other URL) inputs and --out "
                   "(pyarrow.fs.S3FileSystem's: endpoint_override=http://HOST:PORT, region=…); "
                   "credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY otherwise")
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
    args.storage_options = dict(args.storage_options)
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
        sctp_handover.open_dataset(args.out, args.table_format, args.storage_options)
    except (RuntimeError, OSError) as e:
        _error(str(e))
        return 2
    items, problems = plan(
        paths, args.out, args.table_format, args.force, options, args.parquet_compression,
        args.storage_options,
    )
    for path, reason in problems:
        _error(f"{path}: {reason}")
    total = len(items)
    total_bytes = sum(i["size"] or 0 for i in items)
    where = args.address or f"local, {args.workers} workers"
    tasks_of = batches(items, args.batch_files, args.batch_bytes, args.workers)
    print(
        f"{total} inputs ({total_bytes / 1e6:.1f} MB) in {len(tasks_of)} tasks on {args.engine} ({where}) "
        f"→ {args.out}",
        flush=True,
    )

    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    manifest_path = storage.join(args.out, "_runs", f"{stamp}-{args.engine}-{os.getpid()}.jsonl")
    counts: Dict[str, int] = {}
    analysed_bytes = 0
    failed = 0  # this run's and those already recorded as failed
    engine_started = time.monotonic()
    tasks_started = engine_started
    with storage.open_manifest(manifest_path, args.storage_options) as manifest:
        rows: Iterable[Optional[Row]] = RUNNERS[args.engine](tasks_of, args.address, args.workers) if items else []
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
