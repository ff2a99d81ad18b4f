"""Archives and datasets in object storage: `s3://bucket/prefix` URLs (and
any other filesystem URL pyarrow or fsspec knows) wherever the package takes
an input path or a dataset root.

    sh.analyze_capture("s3://archive/koh-kim-1/mn.pcap")
    sh.write_capture("s3://archive/koh-kim-1/mn.pcap", "s3://results/D")
    sctp-handover-cluster --engine dask s3://archive/2026 --out s3://results/D

What happens (docs/scale-out.md, "Object storage"):

* Listing a prefix is the walk of `analyze` (the same names skipped, the
  same order, captures told by their magic numbers, sniffed by the Rust
  side from the first 64 KiB of each object); the harness's files of a run
  (meta.json, scenario.toml, events.jsonl) are fetched into a local mirror
  so that the scenario, the swept parameters and the ground-truth events
  are those `analyze` finds beside a local copy.
* A capture is read as it downloads, in 1 MiB reads, by the analyzer's
  streaming reader (the one `analyze -` reads standard input with): never
  downloaded whole to disk.
* A dataset in object storage gets exactly the objects of `analyze --out`:
  each input's parts are written to a local staging directory, uploaded,
  and then its `_inputs/<key>.json` record (an object store has no rename,
  but a PUT is atomic, and the record, uploaded last, is what makes the
  input complete); a rerun reads the record to skip the input.

Credentials, region and endpoint come from the standard environment
variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN,
AWS_REGION or AWS_DEFAULT_REGION, AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL),
overridden by explicit `storage_options` (the keyword arguments of
`pyarrow.fs.S3FileSystem`: access_key, secret_key, endpoint_override, …).
Errors name the URL and say which of a missing bucket, rejected
credentials or an unreachable endpoint it was (`StorageError`).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from . import _native

if TYPE_CHECKING:
    import pyarrow.fs

__all__ = ["StorageError", "is_url", "filesystem", "list_inputs", "open_dataset"]

#: `scheme://…`
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
#: The harness's files of a run that the analysis reads (inputs.rs,
#: harness_run; harness-check, check_run_dir): mirrored beside an object.
RUN_FILES = ("meta.json", "scenario.toml", "events.jsonl")
#: The first bytes of an object the Rust side sniffs (a gzip member's first
#: block, decompressed far enough to see the capture's magic number).
HEAD_BYTES = 64 << 10
#: Objects whose heads are fetched at once while listing (each a request).
LISTING_THREADS = 16
#: The dataset's record directory (tables/src/dataset.rs, DONE_DIR).
DONE_DIR = "_inputs"
#: A run's manifest in object storage is uploaded again, whole, at a row's
#: flush once this many seconds passed since the last upload (and at the
#: first row, and at the end): a driver killed mid-run loses at most the
#: rows of the last half minute (a local manifest is flushed per row).
MANIFEST_UPLOAD_SECONDS = 30.0
#: … and no more often than every this many times the last upload took.
MANIFEST_UPLOAD_SHARE = 10


class StorageError(OSError):
    """A filesystem URL that could not be used; the message names it."""


def is_url(path: Any) -> bool:
    """Whether `path` is a filesystem URL other than file:// (which is a
    local path)."""
    m = _SCHEME.match(os.fspath(path)) if isinstance(path, (str, os.PathLike)) else None
    return bool(m) and m.group(1).lower() != "file"  # type: ignore[union-attr]


def local_path(path: Any) -> str:
    """A local path, file:// URLs included, as a path."""
    text = str(os.fspath(path))
    return text[len("file://") :] if text.lower().startswith("file://") else text


def absolute(path: Any) -> str:
    """What a worker elsewhere can open: a URL as it is, a local path made
    absolute."""
    return os.fspath(path) if is_url(path) else os.path.abspath(local_path(path))


def join(root: str, *parts: str) -> str:
    """`root/part/…` for a URL or a local path."""
    if is_url(root):
        return "/".join([root.rstrip("/"), *parts])
    return os.path.join(root, *parts)


def _env(*names: str) -> Optional[str]:
    for n in names:
        v = os.environ.get(n)
        if v:
            return v
    return None


def _other(url: str, scheme: str, options: Mapping[str, Any]) -> Tuple["pyarrow.fs.FileSystem", str]:
    """pyarrow's filesystem for `scheme` (gs, hdfs, abfs), else fsspec's
    (which also takes `options`), and the path in it."""
    import pyarrow.fs as pafs

    if not options:
        try:
            fs, path = pafs.FileSystem.from_uri(url)
            return fs, path
        except Exception:  # noqa: BLE001 - a scheme pyarrow does not have
            pass
    try:
        from fsspec.core import url_to_fs  # type: ignore[import-untyped]
    except ImportError:
        raise StorageError(f"{url}: pyarrow has no filesystem for {scheme}:// and fsspec is not installed") from None
    ffs, path = url_to_fs(url, **options)
    return pafs.PyFileSystem(pafs.FSSpecHandler(ffs)), path


def _s3(options: Mapping[str, Any]) -> "pyarrow.fs.FileSystem":
    import pyarrow.fs as pafs

    kw: Dict[str, Any] = {}
    key, secret = _env("AWS_ACCESS_KEY_ID"), _env("AWS_SECRET_ACCESS_KEY")
    if key and secret:
        kw.update(access_key=key, secret_key=secret, session_token=_env("AWS_SESSION_TOKEN"))
    region = _env("AWS_REGION", "AWS_DEFAULT_REGION")
    if region:
        kw["region"] = region
    endpoint = _env("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
    if endpoint:
        m = _SCHEME.match(endpoint)
        kw["scheme"] = m.group(1) if m else "https"
        kw["endpoint_override"] = endpoint[m.end() :] if m else endpoint
    # A wrong endpoint or a dead server should fail in seconds, not after
    # the SDK's minutes of retries: three attempts, short timeouts.
    kw.update(
        connect_timeout=5.0,
        request_timeout=30.0,
        retry_strategy=pafs.AwsStandardS3RetryStrategy(max_attempts=3),
        # Small objects (a part, a record) in one PUT rather than a
        # multipart upload: fewer requests, and S3-compatible servers that
        # answer CompleteMultipartUpload in ways the SDK misreads (moto,
        # python/tests/test_storage.py) still work.
        allow_delayed_open=True,
    )
    options = dict(options)
    if "endpoint_override" in options:
        m = _SCHEME.match(str(options["endpoint_override"]))
        if m:
            options.setdefault("scheme", m.group(1))
            options["endpoint_override"] = str(options["endpoint_override"])[m.end() :]
    kw.update(options)
    if "retry_strategy" in options and isinstance(options["retry_strategy"], int):
        kw["retry_strategy"] = pafs.AwsStandardS3RetryStrategy(max_attempts=options["retry_strategy"])
    return pafs.S3FileSystem(**kw)


_cache: Dict[Tuple[str, str], "pyarrow.fs.FileSystem"] = {}
_cache_lock = threading.Lock()


def filesystem(url: str, options: Optional[Mapping[str, Any]] = None) -> Tuple["pyarrow.fs.FileSystem", str]:
    """The filesystem of `url` and the path in it (`bucket/key` for S3).
    s3:// is pyarrow's S3FileSystem (environment variables, then
    `options`); other schemes are pyarrow's own (gs://, hdfs://, abfs://)
    or, failing that, fsspec's (any fsspec protocol, `options` its
    arguments)."""
    m = _SCHEME.match(url)
    if not m:
        raise StorageError(f"{url}: not a URL")
    scheme = m.group(1).lower()
    options = dict(options or {})
    if scheme not in ("s3", "s3a"):
        return _other(url, scheme, options)
    path = url[m.end() :]
    env = "|".join(
        f"{n}={os.environ.get(n, '')}"
        for n in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
                  "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3")
    )
    cache_key = (scheme, repr(sorted(options.items(), key=lambda kv: kv[0])) + env)
    with _cache_lock:
        fs = _cache.get(cache_key)
    if fs is None:
        fs = _s3(options)
        with _cache_lock:
            _cache[cache_key] = fs
    return fs, path


def explain(url: str, e: BaseException, endpoint: Optional[str] = None) -> StorageError:
    """`e` (pyarrow's or fsspec's error) as a StorageError naming `url`
    and saying which of the usual causes it was."""
    text = str(e)
    upper = text.upper()
    if isinstance(e, StorageError):
        return e
    if "NO_SUCH_BUCKET" in upper or "NOSUCHBUCKET" in upper or re.search(r"BUCKET '[^']*' NOT FOUND", upper):
        bucket = url.split("://", 1)[-1].split("/", 1)[0]
        why = f"the bucket {bucket} does not exist"
    elif any(
        k in upper
        for k in ("INVALID_ACCESS_KEY_ID", "INVALIDACCESSKEYID", "SIGNATURE_DOES_NOT_MATCH",
                  "SIGNATUREDOESNOTMATCH", "ACCESS_DENIED", "ACCESSDENIED", "EXPIRED_TOKEN", "FORBIDDEN")
    ):
        why = (
            "access denied: the credentials were rejected (AWS_ACCESS_KEY_ID, "
            "AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN or the storage options)"
        )
    elif "NETWORK_CONNECTION" in upper or "CURLCODE" in upper or "COULD NOT CONNECT" in upper:
        where = endpoint or _env("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL") or "the storage service"
        why = f"cannot reach {where}"
    elif isinstance(e, FileNotFoundError):
        why = "no such object"
    else:
        why = "cannot use it"
    return StorageError(f"{url}: {why} ({type(e).__name__}: {text})")


def _endpoint(options: Optional[Mapping[str, Any]]) -> Optional[str]:
    return (options or {}).get("endpoint_override")


def _url_of(root_url: str, root_path: str, path: str) -> str:
    """The URL of `path` (a filesystem path under `root_path`, found by
    listing `root_url`)."""
    rel = path[len(root_path.rstrip("/")) :].lstrip("/")
    return root_url.rstrip("/") + "/" + rel if rel else root_url


def _components(rel: str) -> List[str]:
    return [c for c in rel.split("/") if c]


def _is_candidate(name: str) -> bool:
    # The walk's rule (inputs.rs, is_candidate) through the one function
    # that exposes it: no kind for a name that is no input.
    return _native.classify_found(name, b"") is not None


def _list_url(
    url: str, options: Optional[Mapping[str, Any]]
) -> Tuple[List[Dict[str, Any]], List[Tuple[str, str]]]:
    """The objects of one URL as `discover` finds files: the object itself
    (a capture, whatever it holds, as a file named on the command line), or
    every object under the prefix, walked."""
    import pyarrow.fs as pafs

    try:
        fs, path = filesystem(url, options)
        info = fs.get_file_info(path)
        if info.type == pafs.FileType.File:
            return [_entry(url, info, "capture", None, [])], []
        infos = [] if info.type == pafs.FileType.NotFound else fs.get_file_info(
            pafs.FileSelector(path, recursive=True, allow_not_found=True)
        )
    except Exception as e:  # noqa: BLE001 - a listing problem, as for a directory
        return [], [(url, str(explain(url, e, _endpoint(options))))]
    if info.type == pafs.FileType.NotFound and not infos:
        bucket = path.split("/", 1)[0]
        try:
            if fs.get_file_info(bucket).type == pafs.FileType.NotFound:
                return [], [(url, f"{url}: the bucket {bucket} does not exist")]
        except Exception as e:  # noqa: BLE001
            return [], [(url, str(explain(url, e, _endpoint(options))))]
        # As a path that does not exist: an input that fails, naming it.
        return [_entry(url, info, "capture", None, [])], []
    root = path.rstrip("/")
    files = []
    run_files: Dict[str, List[str]] = {}
    for i in infos:
        if i.type != pafs.FileType.File:
            continue
        rel = _components(i.path[len(root) :])
        if not rel or not all(_is_candidate(c) for c in rel[:-1]):
            continue
        if rel[-1] in RUN_FILES:
            run_files.setdefault(i.path.rsplit("/", 1)[0], []).append(i.path)
            continue
        if _is_candidate(rel[-1]):
            files.append((rel, i))
    # The walk's order: each directory's entries sorted by name.
    files.sort(key=lambda f: f[0])

    def head(i: "pyarrow.fs.FileInfo") -> Tuple[str, Optional[str]]:
        try:
            with fs.open_input_stream(i.path) as f:
                data = f.read(HEAD_BYTES)
        except Exception as e:  # noqa: BLE001
            return "unreadable", f"cannot read: {explain(_url_of(url, root, i.path), e)}"
        kind = _native.classify_found(i.base_name, data)
        return kind if kind is not None else ("not_capture", None)

    with ThreadPoolExecutor(LISTING_THREADS) as pool:
        kinds = list(pool.map(head, [i for _, i in files]))
    entries = []
    for (rel, i), (kind, reason) in zip(files, kinds):
        sidecars = sorted(run_files.get(i.path.rsplit("/", 1)[0], []))
        entries.append(
            _entry(_url_of(url, root, i.path), i, kind, reason, [_url_of(url, root, s) for s in sidecars])
        )
    return entries, []


def _entry(
    url: str, info: "pyarrow.fs.FileInfo", kind: str, reason: Optional[str], sidecars: List[str]
) -> Dict[str, Any]:
    return {
        "path": url,
        "source": url,
        "kind": kind,
        "reason": reason,
        "size": info.size if info.size is not None and info.size >= 0 else None,
        "modified_ns": info.mtime_ns,
        "sidecars": sidecars,
    }


def _mirror_path(mirror: str, url: str) -> str:
    """Where `url`'s harness files are mirrored under `mirror` (the same
    directory names, so a run's set and repetition directories are seen)."""
    return os.path.join(mirror, url.split("://", 1)[-1].lstrip("/"))


def _mirror(mirror: str, sidecars: Sequence[str], options: Optional[Mapping[str, Any]]) -> None:
    for url in sidecars:
        fs, path = filesystem(url, options)
        target = _mirror_path(mirror, url)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        try:
            with fs.open_input_stream(path) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
        except Exception as e:  # noqa: BLE001
            raise explain(url, e, _endpoint(options)) from e


def list_inputs(
    paths: Sequence[Any], storage_options: Optional[Mapping[str, Any]] = None
) -> Tuple[List[Dict[str, Any]], List[Tuple[str, str]], List[Tuple[str, str]]]:
    """`sctp_handover.list_inputs` with URLs among `paths`: (inputs, params,
    problems). A URL input's dict has its `size` and `modified_ns` as the
    listing gave them and `sidecars`, the URLs of its run's harness files."""
    texts = [os.fspath(p) for p in paths]
    if not any(is_url(p) for p in texts):
        inputs, params, trouble = _native.list_inputs([local_path(p) for p in texts])
        return list(inputs), list(params), list(trouble)
    found: List[Dict[str, Any]] = []
    problems: List[Tuple[str, str]] = []
    for p in texts:
        if is_url(p):
            entries, trouble = _list_url(p, storage_options)
            found.extend(entries)
            problems.extend(trouble)
        else:
            local, _, trouble = _native.list_inputs([local_path(p)])
            found.extend(dict(i, sidecars=None) for i in local)
            problems.extend(trouble)
    with tempfile.TemporaryDirectory(prefix="sctpho-mirror-") as mirror:
        rows = []
        for e in found:
            if e["sidecars"]:
                try:
                    _mirror(mirror, e["sidecars"], storage_options)
                except StorageError as err:
                    problems.append((e["source"], str(err)))
            where = _mirror_path(mirror, e["path"]) if is_url(e["path"]) else e["path"]
            rows.append((where, e["source"], e["kind"], e["reason"], e["size"], e["modified_ns"]))
        planned, params = _native.plan_inputs(rows)
    inputs = []
    for e, i in zip(found, planned):
        i = dict(i)
        i["path"] = e["path"]
        i["sidecars"] = e["sidecars"]
        inputs.append(i)
    return inputs, list(params), problems


class _Stream:
    """An object's bytes for the Rust reader (`read(n)`), opened at the
    first read so that a missing object or a refused request becomes the
    capture's error, naming the URL, as a missing file is."""

    def __init__(self, url: str, options: Optional[Mapping[str, Any]]) -> None:
        self.url, self.options = url, options
        self.file: Optional[Any] = None

    def read(self, n: int) -> bytes:
        try:
            if self.file is None:
                fs, path = filesystem(self.url, self.options)
                self.file = fs.open_input_stream(path)
            data: bytes = self.file.read(n)
            return data
        except Exception as e:  # noqa: BLE001
            raise explain(self.url, e, _endpoint(self.options)) from None

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


def _stat(url: str, options: Optional[Mapping[str, Any]]) -> Tuple[Optional[int], Optional[int]]:
    """(size, modified_ns) of an object; (None, None) when it cannot be
    told (the read then fails with the reason)."""
    import pyarrow.fs as pafs

    try:
        fs, path = filesystem(url, options)
        info = fs.get_file_info(path)
        if info.type == pafs.FileType.File:
            return info.size, info.mtime_ns
    except Exception:  # noqa: BLE001
        pass
    return None, None


def _run_files_beside(url: str, options: Optional[Mapping[str, Any]]) -> List[str]:
    """The harness files beside an object (asked by name: one request each,
    whatever the size of the prefix)."""
    import pyarrow.fs as pafs

    try:
        fs, path = filesystem(url, options)
        d = path.rsplit("/", 1)[0]
        infos = fs.get_file_info([f"{d}/{n}" for n in RUN_FILES])
    except Exception:  # noqa: BLE001 - then the read names the trouble
        return []
    return [url.rsplit("/", 1)[0] + "/" + i.base_name for i in infos if i.type == pafs.FileType.File]


@contextmanager
def opened_input(
    url: str,
    options: Optional[Mapping[str, Any]],
    *,
    kind: str = "capture",
    size: Optional[int] = None,
    modified_ns: Optional[int] = None,
    sidecars: Optional[Sequence[str]] = None,
) -> Iterator[Dict[str, Any]]:
    """The keyword arguments of the native analyze_capture/write_capture
    for an object: its stream, size, time, and a local path beside which
    its run's harness files are mirrored (removed afterwards)."""
    if size is None and modified_ns is None:
        size, modified_ns = _stat(url, options)
    if sidecars is None:
        sidecars = _run_files_beside(url, options)
    mirror = tempfile.mkdtemp(prefix="sctpho-mirror-")
    stream = _Stream(url, options) if kind == "capture" else None
    try:
        try:
            _mirror(mirror, sidecars, options)
        except StorageError:
            pass  # the run's files are extras; the capture is analysed without them
        yield {
            "path": _mirror_path(mirror, url),
            "source": url,
            "stream": stream,
            "size": size,
            "modified_ns": modified_ns,
        }
    finally:
        if stream is not None:
            stream.close()
        shutil.rmtree(mirror, ignore_errors=True)


def open_dataset(out_root: str, options: Optional[Mapping[str, Any]] = None) -> None:
    """Checks that a dataset in object storage can be written: the bucket
    exists and takes an object (written and removed under `_inputs/`). The
    parts are uploaded whole, so there are no temporaries to clean."""
    try:
        fs, path = filesystem(out_root, options)
        probe = f"{path.rstrip('/')}/{DONE_DIR}/.probe-{os.getpid()}"
        with fs.open_output_stream(probe) as f:
            f.write(b"")
        fs.delete_file(probe)
    except Exception as e:  # noqa: BLE001
        raise explain(out_root, e, _endpoint(options)) from e


def _upload(fs: "pyarrow.fs.FileSystem", local: str, path: str) -> None:
    with open(local, "rb") as src, fs.open_output_stream(path) as dst:
        shutil.copyfileobj(src, dst, 1 << 20)


def _delete_if_present(fs: "pyarrow.fs.FileSystem", path: str) -> None:
    try:
        fs.delete_file(path)
    except FileNotFoundError:
        pass


def write_remote(
    native_write: Any,
    out_root: str,
    key: str,
    force: bool,
    options: Optional[Mapping[str, Any]],
    source: str,
) -> Dict[str, Any]:
    """One input into the dataset at the URL `out_root`: `native_write(staging)`
    writes its parts and record into a local staging dataset (reusing the
    record fetched from `out_root` when current). Then the record of an
    earlier run is deleted, the parts are uploaded, stale continuation
    parts of an earlier run removed, and the new record uploaded last: a
    run killed in between leaves the input without a record (redone next
    time), never an old record over a mix of old and new parts. An upload
    that fails makes the row `failed` (no record: the next run does the
    input again); so does an input whose read failed (its parts say why,
    and the native side wrote no record)."""
    import pyarrow.fs as pafs

    staging = tempfile.mkdtemp(prefix="sctpho-staging-")
    try:
        fs, root = filesystem(out_root, options)
        root = root.rstrip("/")
        record = f"{DONE_DIR}/{key}.json"
        # Whether `out_root` may hold a record of the input: unknown under
        # `force` (not fetched), else whether one was fetched.
        earlier_record = force
        fetched: Optional[bytes] = None
        if not force:
            try:
                with fs.open_input_stream(f"{root}/{record}") as src:
                    data = src.read()
                os.makedirs(os.path.join(staging, DONE_DIR), exist_ok=True)
                with open(os.path.join(staging, record), "wb") as dst:
                    dst.write(data)
                earlier_record, fetched = True, data
            except FileNotFoundError:
                pass
            except Exception as e:  # noqa: BLE001
                return _failed_row(source, key, f"{source}: reading its record: {explain(out_root, e, _endpoint(options))}")
        row: Dict[str, Any] = dict(native_write(staging))
        if row.get("reused"):
            return row
        staged = {
            table: sorted(n for n in os.listdir(os.path.join(staging, table)) if _native.is_part(n))
            for table in sorted(os.listdir(staging))
            if table != DONE_DIR and os.path.isdir(os.path.join(staging, table))
        }
        # The native side removes the fetched copy of a record before it
        # writes the parts, and writes none for an input it could not
        # read; a copy still as fetched is no record of this run (an option
        # it refused before writing anything).
        staged_record = os.path.join(staging, record)
        has_record = os.path.exists(staged_record) and (fetched is None or _read(staged_record) != fetched)
        if not has_record and not any(staged.values()):
            return row  # nothing written (a bad option): the dataset is left as it is
        try:
            if earlier_record:
                _delete_if_present(fs, f"{root}/{record}")
            for table, parts in staged.items():
                for name in parts:
                    _upload(fs, os.path.join(staging, table, name), f"{root}/{table}/{name}")
                # As PartWriter::finish: files an earlier run wrote beyond
                # these (`part-<key>.<n>.<ext>`) are not this part's.
                first = f"part-{key}"
                ext = parts[0].rsplit(".", 1)[-1] if parts else ""
                n = len(parts)
                while ext:
                    stale = f"{root}/{table}/{first}.{n}.{ext}"
                    if fs.get_file_info(stale).type != pafs.FileType.File:
                        break
                    fs.delete_file(stale)
                    n += 1
            if has_record:
                _upload(fs, os.path.join(staging, record), f"{root}/{record}")
        except Exception as e:  # noqa: BLE001
            row.update(
                status="failed",
                error=f"{source}: writing tables: {explain(out_root, e, _endpoint(options))}",
            )
        return row
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _failed_row(source: str, key: str, error: str) -> Dict[str, Any]:
    return {
        "source": source,
        "key": key,
        "status": "failed",
        "error": error,
        "associations": 0,
        "handovers": 0,
        "bytes": 0,
        "reused": False,
        "seconds": 0.0,
    }


class Manifest:
    """A run's manifest being written (`open_manifest`): `write` a row,
    then `flush`."""

    def __init__(self, file: IO[str], upload: Optional[Callable[[], None]] = None, every: float = 0.0) -> None:
        self._file = file
        self._upload = upload
        self._every = every
        # The first flush uploads: a run killed early still leaves its rows.
        self._next_upload = 0.0
        self._warned = False

    def write(self, text: str) -> int:
        return self._file.write(text)

    def flush(self) -> None:
        """Flushes the file; a URL's manifest is uploaded whole again (an
        object store has no append) when its time has come."""
        self._file.flush()
        if self._upload is not None and time.monotonic() >= self._next_upload:
            started = time.monotonic()
            try:
                self._upload()
            except StorageError as e:
                # A copy on the way, not the run's result: tried again at
                # the next flush due, and at the end, where it fails the run.
                if not self._warned:
                    print(f"sctp-handover-cluster: warning: uploading the manifest: {e}", file=sys.stderr, flush=True)
                    self._warned = True
            took = time.monotonic() - started
            # A long run's manifest grows: uploading it no more often than
            # every MANIFEST_UPLOAD_SHARE times its upload took keeps the
            # driver's time spent uploading under 1/MANIFEST_UPLOAD_SHARE.
            self._next_upload = time.monotonic() + max(self._every, MANIFEST_UPLOAD_SHARE * took)


@contextmanager
def open_manifest(
    path: str, options: Optional[Mapping[str, Any]] = None, upload_seconds: float = MANIFEST_UPLOAD_SECONDS
) -> Iterator[Manifest]:
    """A run's manifest (`OUT/_runs/…jsonl`) for writing: the file itself,
    flushed with each row; or for a URL a local file uploaded at the first
    row's flush, then at a flush `upload_seconds` or more after the last
    upload, and when closed (also when the run ends with an error): a
    driver killed mid-run leaves the rows up to its last upload."""
    if not is_url(path):
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            yield Manifest(f)
        return
    fd, local = tempfile.mkstemp(prefix="sctpho-run-", suffix=".jsonl")

    def upload() -> None:
        fs, target = filesystem(path, options)
        try:
            _upload(fs, local, target)
        except Exception as e:  # noqa: BLE001
            raise explain(path, e, _endpoint(options)) from e

    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            try:
                yield Manifest(f, upload, upload_seconds)
            finally:
                f.flush()
                upload()
    finally:
        os.unlink(local)
