"""Archives and datasets in object storage, against a local S3-compatible
server (moto, started here on 127.0.0.1; never the internet).

Run from the repository root by tests/python.rs (`make test`):

    SCTPHO_BIN=…/sctp-handover PYTHONPATH=python/tests .venv/bin/python -m unittest -v test_storage

Without moto installed (python/requirements.txt pins it; `make python`
installs it) the tests skip with a printed line, and fail under CI=true.
"""

import contextlib
import io
import os
import json
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import unittest

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs

sys.path.insert(0, os.path.dirname(__file__))
import compare  # noqa: E402

import sctp_handover as sh  # noqa: E402

try:
    import moto.server  # noqa: F401

    MOTO = None
except ImportError as e:  # pragma: no cover - depends on the venv
    MOTO = f"moto is not installed ({e}): pip install -r python/requirements.txt"
    if os.environ.get("CI") == "true":
        raise
    print(f"test_storage: skipped: {MOTO}", file=sys.stderr)

BUCKET = "archive"


def cli(*args):
    return subprocess.run([os.environ.get("SCTPHO_BIN", "sctp-handover"), *args], capture_output=True, text=True)


def cluster(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "sctp_handover.cluster", *args], capture_output=True, text=True, env=env
    )


def driver(*args, env):
    """The cluster runner in this process (the error cases end before an
    engine starts): (exit status, stdout, stderr)."""
    from sctp_handover import cluster as runner

    out, err = io.StringIO(), io.StringIO()
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = runner.main(list(args))
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return status, out.getvalue(), err.getvalue()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_moto(env=None):
    """A moto server on a free loopback port: (process, endpoint URL)."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=dict(os.environ, **(env or {})),
    )
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return proc, f"http://127.0.0.1:{port}"
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("the moto server did not start")
            time.sleep(0.05)


def big_capture(copies=9, gap_s=1000):
    """A capture larger than one read of the stream (1 MiB): the records of
    sample-captures/koh-kim-2/mn.pcap `copies` times, each copy `gap_s`
    seconds after the last (1 438 008 bytes; `sctp-handover analyze`
    finds 9 associations, 18 handovers)."""
    with open("sample-captures/koh-kim-2/mn.pcap", "rb") as f:
        data = f.read()
    header, records, off = data[:24], [], 24
    while off + 16 <= len(data):
        sec, usec, incl, orig = struct.unpack("<IIII", data[off : off + 16])
        records.append((sec, usec, incl, orig, data[off + 16 : off + 16 + incl]))
        off += 16 + incl
    out = [header]
    for c in range(copies):
        for sec, usec, incl, orig, body in records:
            out.append(struct.pack("<IIII", sec + c * gap_s, usec, incl, orig) + body)
    return b"".join(out)


def s3fs(endpoint):
    """A filesystem of the moto server at `endpoint` that may create buckets."""
    return pafs.S3FileSystem(
        access_key="testing", secret_key="testing", region="us-east-1",
        endpoint_override=endpoint.removeprefix("http://"), scheme="http",
        allow_bucket_creation=True, allow_delayed_open=True,
    )


@contextlib.contextmanager
def stream_class(cls):
    """`cls` as the stream that storage hands the extension an object's
    bytes through (sctp_handover.storage._Stream), for the block."""
    from sctp_handover import storage

    saved = storage._Stream
    storage._Stream = cls
    try:
        yield
    finally:
        storage._Stream = saved


def upload_tree(fs, local, prefix):
    for dirpath, _, files in os.walk(local):
        for f in files:
            rel = os.path.relpath(os.path.join(dirpath, f), local)
            with open(os.path.join(dirpath, f), "rb") as src, fs.open_output_stream(f"{prefix}/{rel}") as dst:
                dst.write(src.read())


def table(fs, root, name):
    """A table of a dataset (local or in the server) with `source` made
    relative to the archive and the wall time left out, rows sorted."""
    t = ds.dataset(f"{root}/{name}", format="parquet", filesystem=fs).to_table()
    t = t.drop_columns([c for c in t.column_names if c in compare.VARYING])
    return t


def normalised(t, prefix):
    src = [s.removeprefix(prefix) for s in t.column("source").to_pylist()]
    t = t.set_column(t.column_names.index("source"), "source", pa.array(src, type=t.schema.field("source").type))
    for i, f in enumerate(t.schema):
        if pa.types.is_timestamp(f.type):
            t = t.set_column(i, f.name, t.column(i).cast(pa.int64()))
    return t.schema, sorted((tuple(r.items()) for r in t.to_pylist()), key=repr)


@unittest.skipIf(MOTO is not None, MOTO or "")
class S3(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="sctpho-s3-")
        cls.server, cls.endpoint = start_moto()
        # Any key is accepted by this server (moto checks none unless told).
        cls.env = dict(
            os.environ,
            AWS_ACCESS_KEY_ID="testing",
            AWS_SECRET_ACCESS_KEY="testing",
            AWS_REGION="us-east-1",
            AWS_ENDPOINT_URL=cls.endpoint,
        )
        os.environ.update({k: cls.env[k] for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_ENDPOINT_URL")})
        cls.fs = s3fs(cls.endpoint)
        cls.fs.create_dir(BUCKET)
        # The archive: the sample captures (with their harness files) and a
        # file that is no capture.
        cls.local = os.path.join(cls.tmp, "copy")
        shutil.copytree("sample-captures", cls.local)
        upload_tree(cls.fs, cls.local, f"{BUCKET}/samples")
        cls.cli_out = os.path.join(cls.tmp, "cli")
        r = cli("analyze", cls.local, "--out", cls.cli_out, "-q")
        assert r.returncode == 0, r.stderr

    @classmethod
    def tearDownClass(cls):
        cls.server.terminate()
        cls.server.wait()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def assert_same_dataset(self, out_prefix):
        """The dataset at s3://archive/<out_prefix> holds the tables of
        `analyze --out` on the local copy: the same part files (by each
        input's key) and the same rows, `source` aside."""
        local = pafs.LocalFileSystem()
        counts = {}
        for name in compare.TABLES:
            want = sorted(compare.parts(self.cli_out, name))
            got = sorted(
                i.base_name for i in self.fs.get_file_info(pafs.FileSelector(f"{BUCKET}/{out_prefix}/{name}"))
            )
            # part-<key>: the key of the same capture's source in each run.
            sources = table(local, self.cli_out, "files").column("source").to_pylist()
            mapped = sorted(
                p.replace(sh.part_key(s), sh.part_key(f"s3://{BUCKET}/samples" + s.removeprefix(self.local)))
                for p in want for s in sources if sh.part_key(s) in p
            )
            self.assertEqual(got, mapped, name)
            a = normalised(table(local, self.cli_out, name), self.local)
            b = normalised(table(self.fs, f"{BUCKET}/{out_prefix}", name), f"s3://{BUCKET}/samples")
            self.assertEqual(a[0], b[0], f"{name}: schema")
            self.assertEqual(a[1], b[1], f"{name}: rows")
            counts[name] = len(a[1])
        return counts

    def test_cluster_archive_in_s3_to_dataset_in_s3(self):
        out = f"s3://{BUCKET}/D"
        r = cluster("--engine", "dask", "--workers", "1", f"s3://{BUCKET}/samples", "--out", out, "-q", env=self.env)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("21 inputs (", r.stdout)
        counts = self.assert_same_dataset("D")
        # What `analyze sample-captures` prints: 21 inputs (one skipped,
        # README.md), 20 associations, 30 handovers.
        self.assertEqual((counts["files"], counts["associations"], counts["handovers"]), (21, 20, 30))
        runs = self.fs.get_file_info(pafs.FileSelector(f"{BUCKET}/D/_runs"))
        self.assertEqual(len(runs), 1)
        # A rerun finds every input complete (its record in the server).
        r = cluster("--engine", "dask", "--workers", "1", f"s3://{BUCKET}/samples", "--out", out, "-q", env=self.env)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("21 inputs: 21 done", r.stdout)

    def test_api_reads_an_object_as_the_file(self):
        url = f"s3://{BUCKET}/samples/koh-kim-1/mn.pcap"
        remote = sh.analyze_capture(url)
        local = sh.analyze_capture(os.path.join(self.local, "koh-kim-1/mn.pcap"))
        for name in sh.TABLES:
            a = normalised(local[name].drop_columns(list(compare.VARYING & set(local[name].column_names))), self.local)
            b = normalised(remote[name].drop_columns(list(compare.VARYING & set(remote[name].column_names))), f"s3://{BUCKET}/samples")
            self.assertEqual(a, b, name)
        self.assertEqual(remote["files"].column("scenario").to_pylist(), ["koh-kim-1"])
        self.assertEqual(remote["handovers"].num_rows, 2)
        # Explicit options win over the environment (whose endpoint is dead here).
        saved = os.environ["AWS_ENDPOINT_URL"]
        os.environ["AWS_ENDPOINT_URL"] = f"http://127.0.0.1:{free_port()}"
        try:
            given = sh.analyze_capture(url, storage_options={"endpoint_override": self.endpoint})
        finally:
            os.environ["AWS_ENDPOINT_URL"] = saved
        self.assertEqual(given["files"].column("status").to_pylist(), ["ok"])
        self.assertEqual(given["handovers"].num_rows, 2)
        row = sh.write_capture(url, f"s3://{BUCKET}/W")
        self.assertEqual((row["status"], row["reused"], row["handovers"]), ("ok", False, 2), row)
        again = sh.write_capture(url, f"s3://{BUCKET}/W")
        self.assertEqual((again["status"], again["reused"]), ("ok", True), again)
        key = sh.part_key(url)
        names = {i.base_name for i in self.fs.get_file_info(pafs.FileSelector(f"{BUCKET}/W", recursive=True))}
        self.assertTrue({f"part-{key}.parquet", f"{key}.json"} <= names, names)

    def test_a_read_error_mid_object_fails_the_input_naming_the_url_and_the_cause(self):
        """The store goes away while an object is read (its server stopped
        after the first 1 MiB): the input is `failed`, the error names the
        URL and the cause, the dataset keeps no record of it, and the next
        run reads it again, whole. A capture that ends inside a record
        stays `truncated` (tests/batch.rs)."""
        from sctp_handover import storage

        url = "s3://flaky/big.pcap"
        big = big_capture()
        out = os.path.join(self.tmp, "flaky")
        server, endpoint = start_moto()
        try:
            fs = s3fs(endpoint)
            fs.create_dir("flaky")
            with fs.open_output_stream("flaky/big.pcap") as f:
                f.write(big)

            class StoreStopsAfterTheFirstRead(storage._Stream):
                def read(self, n):
                    data = super().read(n)
                    if server.poll() is None:
                        server.terminate()
                        server.wait()
                    return data

            with stream_class(StoreStopsAfterTheFirstRead):
                row = sh.write_capture(url, out, storage_options={"endpoint_override": endpoint})
        finally:
            if server.poll() is None:
                server.terminate()
                server.wait()
        self.assertEqual((row["status"], row["reused"], row["associations"]), ("failed", False, 0), row)
        error = row["error"]
        self.assertTrue(error.startswith(f"{url}: read error: StorageError: {url}: cannot reach {endpoint} ("), error)
        self.assertTrue(error.endswith("(after record 1253 at byte offset 1047616)"), error)
        key = sh.part_key(url)
        self.assertFalse(os.path.exists(os.path.join(out, "_inputs", f"{key}.json")))
        files = ds.dataset(os.path.join(out, "files"), format="parquet").to_table()
        self.assertEqual(files.column("status").to_pylist(), ["failed"])
        self.assertEqual(files.column("error").to_pylist(), [error])
        self.assertEqual(ds.dataset(os.path.join(out, "handovers"), format="parquet").to_table().num_rows, 0)

        # The store is back (a new server with the same object): read again.
        server, endpoint = start_moto()
        try:
            fs = s3fs(endpoint)
            fs.create_dir("flaky")
            with fs.open_output_stream("flaky/big.pcap") as f:
                f.write(big)
            again = sh.write_capture(url, out, storage_options={"endpoint_override": endpoint})
        finally:
            server.terminate()
            server.wait()
        self.assertEqual(
            (again["status"], again["reused"], again["associations"], again["handovers"]), ("ok", False, 9, 18), again
        )
        self.assertTrue(os.path.exists(os.path.join(out, "_inputs", f"{key}.json")))

    def test_a_read_error_into_a_dataset_in_the_store_uploads_no_record(self):
        """As above into a dataset in the store: the parts tell the failure,
        no `_inputs/<key>.json` is uploaded, and the next run redoes it."""
        from sctp_handover import storage

        self.fs.create_dir(f"{BUCKET}/big")
        with self.fs.open_output_stream(f"{BUCKET}/big/big.pcap") as f:
            f.write(big_capture())
        url, out = f"s3://{BUCKET}/big/big.pcap", f"s3://{BUCKET}/E"

        class ResetAfterTheFirstRead(storage._Stream):
            reads = 0

            def read(self, n):
                ResetAfterTheFirstRead.reads += 1
                if ResetAfterTheFirstRead.reads > 1:
                    raise storage.StorageError(f"{self.url}: cannot reach {self.url} (OSError: connection reset by peer)")
                return super().read(n)

        with stream_class(ResetAfterTheFirstRead):
            row = sh.write_capture(url, out)
        self.assertEqual((row["status"], row["reused"]), ("failed", False), row)
        self.assertEqual(
            row["error"],
            f"{url}: read error: StorageError: {url}: cannot reach {url} (OSError: connection reset by peer) "
            "(after record 1253 at byte offset 1047616)",
        )
        key = sh.part_key(url)
        record = f"{BUCKET}/E/_inputs/{key}.json"
        self.assertEqual(self.fs.get_file_info(record).type, pafs.FileType.NotFound)
        files = table(self.fs, f"{BUCKET}/E", "files")
        self.assertEqual(files.column("status").to_pylist(), ["failed"])
        again = sh.write_capture(url, out)
        self.assertEqual((again["status"], again["reused"], again["handovers"]), ("ok", False, 18), again)
        self.assertEqual(self.fs.get_file_info(record).type, pafs.FileType.File)

    def test_a_killed_force_rerun_leaves_no_record_over_mixed_parts(self):
        """A `force` rerun killed after its first part upload: the record
        of the earlier run was deleted before it, so the next run redoes
        the input rather than skip it over a mix of old and new parts."""
        url, out = f"s3://{BUCKET}/samples/koh-kim-1/mn.pcap", f"s3://{BUCKET}/F"
        # `force` with no record there yet deletes nothing, fails nothing.
        first = sh.write_capture(url, out, force=True)
        self.assertEqual((first["status"], first["reused"]), ("ok", False), first)
        record = f"{BUCKET}/F/_inputs/{sh.part_key(url)}.json"
        self.assertEqual(self.fs.get_file_info(record).type, pafs.FileType.File)
        killed = subprocess.run(
            [sys.executable, "-c", f"""
import os, signal
import sctp_handover as sh
from sctp_handover import storage
upload = storage._upload
def upload_then_die(*args):
    upload(*args)
    os.kill(os.getpid(), signal.SIGKILL)
storage._upload = upload_then_die
sh.write_capture({url!r}, {out!r}, force=True)
"""],
            env=self.env, capture_output=True, text=True,
        )
        self.assertEqual(killed.returncode, -signal.SIGKILL, killed.stderr)
        self.assertEqual(self.fs.get_file_info(record).type, pafs.FileType.NotFound)
        again = sh.write_capture(url, out)
        self.assertEqual((again["status"], again["reused"], again["handovers"]), ("ok", False, 2), again)
        self.assertEqual(self.fs.get_file_info(record).type, pafs.FileType.File)

    def test_a_killed_driver_leaves_its_manifest_in_the_store(self):
        """The manifest of a run whose `--out` is a URL is uploaded at its
        first row and then every MANIFEST_UPLOAD_SECONDS: a driver killed
        mid-run leaves the rows up to the last upload."""

        def killed_after_two_rows(url, upload_seconds, share=10):
            r = subprocess.run(
                [sys.executable, "-c", f"""
import json, os, signal
from sctp_handover import storage
storage.MANIFEST_UPLOAD_SHARE = {share!r}
with storage.open_manifest({url!r}, upload_seconds={upload_seconds!r}) as m:
    for n in (1, 2):
        m.write(json.dumps({{"row": n}}) + "\\n")
        m.flush()
    os.kill(os.getpid(), signal.SIGKILL)
"""],
                env=self.env, capture_output=True, text=True,
            )
            self.assertEqual(r.returncode, -signal.SIGKILL, r.stderr)
            with self.fs.open_input_stream(url.removeprefix("s3://")) as f:
                return [json.loads(line) for line in f.read().decode().splitlines()]

        # The defaults: the first row at once, the second not 30 s later.
        from sctp_handover import storage

        self.assertEqual((storage.MANIFEST_UPLOAD_SECONDS, storage.MANIFEST_UPLOAD_SHARE), (30.0, 10))
        self.assertEqual(killed_after_two_rows(f"s3://{BUCKET}/M/_runs/a.jsonl", 30.0), [{"row": 1}])
        # Uploaded at every flush: every row.
        self.assertEqual(
            killed_after_two_rows(f"s3://{BUCKET}/M/_runs/b.jsonl", 0.0, share=0), [{"row": 1}, {"row": 2}]
        )

    def test_a_missing_object_is_a_failed_row_naming_it(self):
        url = f"s3://{BUCKET}/samples/nothing.pcap"
        t = sh.analyze_capture(url)
        self.assertEqual(t["files"].column("status").to_pylist(), ["failed"])
        error = t["files"].column("error").to_pylist()[0]
        self.assertIn(url, error)
        self.assertIn("no such object", error)

    def test_a_missing_bucket_is_an_error_naming_the_url(self):
        out = os.path.join(self.tmp, "nobucket")
        status, stdout, stderr = driver("--engine", "dask", "s3://no-such-bucket/x", "--out", out, env=self.env)
        self.assertEqual(status, 1, stdout + stderr)
        self.assertIn("s3://no-such-bucket/x: the bucket no-such-bucket does not exist", stderr)
        status, stdout, stderr = driver(
            "--engine", "dask", "sample-captures/koh-kim-1", "--out", "s3://no-such-bucket/D", env=self.env
        )
        self.assertEqual(status, 2, stdout + stderr)
        self.assertIn("s3://no-such-bucket/D: the bucket no-such-bucket does not exist", stderr)

    def test_an_unreachable_endpoint_is_an_error_naming_it(self):
        env = dict(self.env, AWS_ENDPOINT_URL=f"http://127.0.0.1:{free_port()}")
        started = time.monotonic()
        status, stdout, stderr = driver(
            "--engine", "dask", f"s3://{BUCKET}/samples", "--out", os.path.join(self.tmp, "x"), env=env
        )
        self.assertEqual(status, 1, stdout + stderr)
        self.assertIn(f"s3://{BUCKET}/samples: cannot reach {env['AWS_ENDPOINT_URL']}", stderr)
        self.assertLess(time.monotonic() - started, 30)


class Stream(unittest.TestCase):
    """The extension reads a capture from a Python readable object as it
    goes (what an S3 object's stream is handed to), not from a path."""

    def test_a_capture_is_read_from_a_stream_in_reads_of_one_mib(self):
        from sctp_handover import _native

        path = "sample-captures/koh-kim-1/mn.pcap"
        with open(path, "rb") as f:
            data = f.read()
        reads = []

        class Recording(io.BytesIO):
            def read(self, n=-1):
                chunk = super().read(n)
                reads.append((n, len(chunk)))
                return chunk

        # `path` finds the harness's files beside the capture; the bytes
        # come from the stream.
        t = _native.analyze_capture(path, source="stream:mn.pcap", stream=Recording(data), size=len(data))
        files = pa.table(t["files"])
        self.assertEqual(files.column("status").to_pylist(), ["ok"])
        self.assertEqual(files.column("source").to_pylist(), ["stream:mn.pcap"])
        self.assertEqual(len(t["handovers"]), 2)
        # 1 MiB asked each time: the whole capture (under 1 MiB), then the end.
        self.assertEqual(reads, [(1 << 20, len(data)), (1 << 20, 0)])
        local = sh.analyze_capture(path)
        for name in sh.TABLES:
            a = pa.table(t[name])
            self.assertEqual(
                a.drop_columns(["source", *compare.VARYING & set(a.column_names)]),
                local[name].drop_columns(["source", *compare.VARYING & set(a.column_names)]),
                name,
            )

    def test_the_command_line_points_to_the_package_for_urls(self):
        r = cli("analyze", "s3://bucket/x.pcap")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("s3://bucket/x.pcap: a URL: sctp-handover reads local files and standard input", r.stderr)
        self.assertIn("Python package (sctp-handover-cluster", r.stderr)
        with tempfile.TemporaryDirectory() as d:
            r = subprocess.run(
                [os.environ.get("SCTPHO_BIN", "sctp-handover"), "analyze", os.path.abspath("sample-captures/koh-kim-1/mn.pcap"),
                 "--out", "s3://bucket/D"],
                capture_output=True, text=True, cwd=d,
            )
            self.assertNotEqual(r.returncode, 0, r.stderr)
            self.assertIn("s3://bucket/D: the output dataset is a URL", r.stderr)
            self.assertEqual(os.listdir(d), [])  # no directory named `s3:`


@unittest.skipIf(MOTO is not None, MOTO or "")
class S3Credentials(unittest.TestCase):
    """A server that checks keys (moto's IAM authentication from the first
    request on): no key it has issued is right."""

    def test_bad_credentials_are_an_error_naming_the_url(self):
        server, endpoint = start_moto({"INITIAL_NO_AUTH_ACTION_COUNT": "0"})
        try:
            env = dict(
                os.environ,
                AWS_ACCESS_KEY_ID="AKIAWRONGWRONGWRONG0",
                AWS_SECRET_ACCESS_KEY="wrong",
                AWS_REGION="us-east-1",
                AWS_ENDPOINT_URL=endpoint,
            )
            status, stdout, stderr = driver("--engine", "dask", "s3://secured/", "--out", "s3://secured/D", env=env)
            self.assertEqual(status, 2, stdout + stderr)
            self.assertIn("s3://secured/D: access denied: the credentials were rejected", stderr)
            with tempfile.TemporaryDirectory() as out:
                status, stdout, stderr = driver("--engine", "dask", "s3://secured/", "--out", out, env=env)
            self.assertEqual(status, 1, stdout + stderr)
            self.assertIn("s3://secured/: access denied: the credentials were rejected", stderr)
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    unittest.main()
