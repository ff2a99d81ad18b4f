"""The Python bindings and the Dask engine, held against the command line.

Run from the repository root by tests/python.rs (`make test`), with the
interpreter of .venv (`make python`) and $SCTPHO_BIN, the command line:

    SCTPHO_BIN=…/sctp-handover .venv/bin/python -m unittest python/tests/test_python.py
"""

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, os.path.dirname(__file__))
import compare  # noqa: E402

import sctp_handover as sh  # noqa: E402

SAMPLE = "sample-captures/koh-kim-1/mn.pcap"


def cli(*args):
    bin_ = os.environ.get("SCTPHO_BIN", "sctp-handover")
    return subprocess.run([bin_, *args], capture_output=True, text=True)


def cluster(*args):
    return subprocess.run(
        [sys.executable, "-m", "sctp_handover.cluster", *args], capture_output=True, text=True
    )


def without_wall_time(t):
    return t.drop_columns([c for c in t.column_names if c in compare.VARYING])


class Common(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="sctpho-py-")
        cls.cli_out = os.path.join(cls.tmp, "cli")
        r = cli("analyze", "sample-captures", "--out", cls.cli_out, "-q")
        assert r.returncode == 0, r.stderr
        # With sample-sweeps: the run's parameter columns (param_rto,
        # param_pmr) in every part.
        cls.cli_all = os.path.join(cls.tmp, "cli-all")
        r = cli("analyze", "sample-captures", "sample-sweeps", "--out", cls.cli_all, "-q")
        assert r.returncode == 0, r.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)


class Api(Common):
    def test_tables_are_those_of_analyze_out(self):
        tables = sh.analyze_capture(SAMPLE)
        self.assertEqual(tuple(tables), sh.TABLES)
        key = sh.part_key(SAMPLE)
        for name, t in tables.items():
            self.assertIsInstance(t, pa.Table)
            part = pq.read_table(os.path.join(self.cli_out, name, f"part-{key}.parquet"))
            self.assertEqual(t.schema.names, part.schema.names, name)
            self.assertEqual(t.schema, part.schema, name)
            self.assertEqual(without_wall_time(t), without_wall_time(part), name)
        self.assertGreater(tables["associations"].num_rows, 0)
        self.assertGreater(tables["handovers"].num_rows, 0)
        self.assertEqual(tables["files"].column("status").to_pylist(), ["ok"])
        self.assertEqual(tables["files"].column("scenario").to_pylist(), ["koh-kim-1"])
        self.assertEqual(tables["files"].column("capture_side").to_pylist(), ["mn"])

    def test_arrow_pycapsule_stream(self):
        raw = sh.analyze_capture_arrow(SAMPLE)
        t = raw["paths"]
        self.assertTrue(hasattr(t, "__arrow_c_stream__"))
        reader = pa.RecordBatchReader.from_stream(t)
        read = reader.read_all()
        self.assertEqual(read.num_rows, len(t))
        self.assertEqual(read.column_names, t.column_names)
        # A stream can be taken again (each capsule is a new stream over
        # the same buffers), and one never taken is released cleanly.
        self.assertEqual(pa.table(t), read)
        t.__arrow_c_stream__()

    def test_options_mirror_the_command_line(self):
        r = cli("analyze", SAMPLE, "--out", os.path.join(self.tmp, "rto"), "-q", "--rto-min-ms", "200", "--pmr", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        t = sh.analyze_capture(SAMPLE, rto_min_ms=200, pmr=2)
        key = sh.part_key(SAMPLE)
        for name in sh.TABLES:
            part = pq.read_table(os.path.join(self.tmp, "rto", name, f"part-{key}.parquet"))
            self.assertEqual(without_wall_time(t[name]), without_wall_time(part), name)
        with self.assertRaises(TypeError):
            sh.analyze_capture(SAMPLE, rto_min=200)
        with self.assertRaises(ValueError):
            sh.check_options(capture_point="left")
        sh.check_options(capture_point="cn", harness_files=False, udp_encap_ports=[9900])

    def test_bad_capture_is_a_row_not_an_exception(self):
        bad = os.path.join(self.tmp, "bad.pcap")
        with open(bad, "wb") as f:
            f.write(b"\xd4\xc3\xb2\xa1" + b"\x00" * 7)  # a pcap magic, then a broken header
        t = sh.analyze_capture(bad)
        self.assertEqual(t["files"].column("status").to_pylist(), ["failed"])
        self.assertTrue(t["files"].column("error")[0].as_py())
        self.assertEqual(t["associations"].num_rows, 0)

        out = os.path.join(self.tmp, "bad-out")
        row = sh.write_capture(bad, out)
        self.assertEqual(row["status"], "failed")
        self.assertTrue(row["error"])
        self.assertFalse(row["reused"])
        with open(os.path.join(out, "_inputs", f"{row['key']}.json")) as f:
            self.assertEqual(json.load(f)["status"], "failed")
        # Nothing that exists is no exception either, nor a bad option.
        row = sh.write_capture(os.path.join(self.tmp, "missing.pcap"), out)
        self.assertEqual(row["status"], "failed")
        row = sh.write_capture(SAMPLE, out, rto_min=1)
        self.assertEqual(row["status"], "failed")
        self.assertIn("rto_min", row["error"])

    def test_write_capture_writes_the_parts_of_analyze_out(self):
        out = os.path.join(self.tmp, "one")
        row = sh.write_capture(SAMPLE, out)
        self.assertEqual(row["status"], "ok")
        self.assertEqual(row["key"], sh.part_key(SAMPLE))
        self.assertFalse(row["reused"])
        for name in sh.TABLES:
            mine = os.path.join(out, name, f"part-{row['key']}.parquet")
            theirs = os.path.join(self.cli_out, name, f"part-{row['key']}.parquet")
            self.assertEqual(
                without_wall_time(pq.read_table(mine)), without_wall_time(pq.read_table(theirs)), name
            )
        # The same input again: already complete, not analysed again …
        again = sh.write_capture(SAMPLE, out)
        self.assertTrue(again["reused"])
        self.assertEqual(again["associations"], row["associations"])
        # … unless the options changed.
        self.assertFalse(sh.write_capture(SAMPLE, out, pmr=3)["reused"])
        # The command line's dataset counts as done too (same fingerprint).
        self.assertTrue(sh.write_capture(SAMPLE, self.cli_out)["reused"])

    def test_write_capture_parquet_compression(self):
        out = os.path.join(self.tmp, "zstd")
        row = sh.write_capture(SAMPLE, out, parquet_compression="zstd")
        self.assertEqual(row["status"], "ok")
        path = os.path.join(out, "events", f"part-{row['key']}.parquet")
        meta = pq.ParquetFile(path).metadata
        self.assertEqual(meta.row_group(0).column(0).compression, "ZSTD")
        theirs = os.path.join(self.cli_out, "events", f"part-{row['key']}.parquet")
        self.assertEqual(pq.ParquetFile(theirs).metadata.row_group(0).column(0).compression, "SNAPPY")
        self.assertEqual(pq.read_table(path), pq.read_table(theirs))
        # Another codec is another setting: the parts are written again.
        self.assertTrue(sh.write_capture(SAMPLE, out, parquet_compression="zstd")["reused"])
        self.assertFalse(sh.write_capture(SAMPLE, out)["reused"])
        self.assertEqual(pq.ParquetFile(path).metadata.row_group(0).column(0).compression, "SNAPPY")
        bad = sh.write_capture(SAMPLE, out, parquet_compression="brotli")
        self.assertEqual(bad["status"], "failed")
        self.assertIn("expected snappy, zstd, lz4 or none", bad["error"])

    def test_write_capture_with_the_run_parameters(self):
        inputs, params, _ = sh.list_inputs(["sample-captures", "sample-sweeps"])
        first = next(i for i in inputs if i["source"].startswith("sample-sweeps/") and i["kind"] == "capture")
        out = os.path.join(self.tmp, "sweep")
        row = sh.write_capture(first["path"], out, source=first["source"], params=[list(p) for p in params])
        self.assertEqual(row["status"], "ok", row)
        name = f"part-{row['key']}.parquet"
        for table in sh.TABLES:
            self.assertEqual(
                without_wall_time(pq.read_table(os.path.join(out, table, name))),
                without_wall_time(pq.read_table(os.path.join(self.cli_all, table, name))),
                table,
            )
        row = sh.write_capture(first["path"], out, params=[("rto", "complex")])
        self.assertEqual(row["status"], "failed")
        row = sh.write_capture(first["path"], out, params=42)
        self.assertEqual(row["status"], "failed")

    def test_list_inputs_is_the_walk_of_analyze(self):
        inputs, params, problems = sh.list_inputs(["sample-sweeps"])
        self.assertEqual(problems, [])
        self.assertEqual(sorted(p for p, _ in params), ["pmr", "rto"])
        self.assertTrue(all(t == "number" for _, t in params))
        captures = [i for i in inputs if i["kind"] == "capture"]
        self.assertEqual(len(captures), 24)
        self.assertTrue(all(i["source"].startswith("sample-sweeps/") for i in inputs))
        others = [i for i in inputs if i["kind"] != "capture"]
        self.assertTrue(all(i["reason"] for i in others))


class Dask(Common):
    def test_dask_run_equals_analyze_out(self):
        out = os.path.join(self.tmp, "dask")
        # sample-sweeps: the parameter columns (param_rto, param_pmr) of
        # the run, the same in every task's parts.
        r = cluster("--engine", "dask", "sample-captures", "sample-sweeps", "--out", out, "--workers", "2", "-q")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(compare.differences(self.cli_all, out), [])
        # 20 sample captures (10 scenarios, both sides), 24 sweep captures;
        # the 2 skipped are sample-captures/README.md and sample-sweeps/README.md.
        self.assertIn("44 ok, 2 skipped", r.stdout)
        self.assertIn("param_rto", pq.read_schema(glob.glob(os.path.join(out, "handovers", "*"))[0]).names)

    def test_failed_capture_job_finishes_and_rerun_skips(self):
        inputs = os.path.join(self.tmp, "mixed")
        os.makedirs(inputs)
        shutil.copy(SAMPLE, os.path.join(inputs, "good.pcap"))
        with open(os.path.join(inputs, "broken.pcap"), "wb") as f:
            f.write(b"\x0a\x0d\x0d\x0a" + os.urandom(64))  # a pcapng magic, then noise
        with open(os.path.join(inputs, "notes.txt"), "w") as f:
            f.write("not a capture\n")
        listing = os.path.join(self.tmp, "inputs.txt")
        with open(listing, "w") as f:
            f.write(f"# the archive\n{inputs}\n")
        out = os.path.join(self.tmp, "mixed-out")

        r = cluster("--engine", "dask", "--manifest", listing, "--out", out, "--workers", "2")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)  # as `analyze`: 2 when one failed
        self.assertIn("1 failed", r.stdout)
        self.assertIn("1 ok", r.stdout)
        self.assertIn("1 skipped", r.stdout)
        (manifest,) = glob.glob(os.path.join(out, "_runs", "*.jsonl"))
        with open(manifest) as f:
            rows = {os.path.basename(row["source"]): row for row in map(json.loads, f)}
        self.assertEqual(rows["broken.pcap"]["status"], "failed")
        self.assertIn("broken.pcap", rows["broken.pcap"]["error"])
        self.assertEqual(rows["good.pcap"]["status"], "ok")
        files = pq.read_table(os.path.join(out, "files")).to_pylist()
        self.assertEqual({os.path.basename(f["source"]): f["status"] for f in files},
                         {"good.pcap": "ok", "broken.pcap": "failed", "notes.txt": "skipped"})

        r = cluster("--engine", "dask", "--manifest", listing, "--out", out, "--workers", "2")
        self.assertIn("3 done (1 of them failed)", r.stdout, r.stdout + r.stderr)
        self.assertEqual(r.returncode, 2)
        runs = glob.glob(os.path.join(out, "_runs", "*.jsonl"))
        self.assertEqual(len(runs), 2)
        latest = max(runs, key=os.path.getmtime)
        with open(latest) as f:
            self.assertTrue(all(row["reused"] for row in map(json.loads, f)))


if __name__ == "__main__":
    unittest.main()
