"""The Python bindings and the Dask engine, held against the command line.

Run from the repository root by tests/python.rs (`make test`), with the
interpreter of .venv (`make python`) and $SCTPHO_BIN, the command line:

    SCTPHO_BIN=…/sctp-handover PYTHONPATH=python/tests .venv/bin/python -m unittest -v test_python
"""

import glob
import importlib.metadata
import importlib.resources
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
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


#: The console script pip installed beside this interpreter.
CLUSTER_SCRIPT = os.path.join(os.path.dirname(sys.executable), "sctp-handover-cluster")


def words(text):
    """Text with its line breaks and runs of spaces made single spaces (the
    help formatters wrap lines where they like)."""
    return " ".join(text.split())


def clap_options(help_text):
    """The options of a clap `--help` (long form): flag → (value name or
    None, help text without the default and possible values, default or
    None), in their order."""
    options = {}
    flag = None
    for line in help_text.splitlines():
        m = re.match(r"^ {2}(?:-\w, | {4})(--[\w-]+)(?: <([^>]+)>)?", line)
        if m:
            flag = m.group(1)
            options[flag] = [m.group(2), [], None]
            continue
        if flag is None or not line.startswith(" " * 10):
            if line and not line.startswith(" "):
                flag = None  # a new section (Exit status: …)
            continue
        text = line.strip()
        default = re.fullmatch(r"\[default: (.*)\]", text)
        if default:
            options[flag][2] = default.group(1)
        elif text.startswith("[possible values:") or text == "Possible values:":
            options[flag][1].append("\0")  # the help text ends here
        else:
            options[flag][1].append(text)
    return {
        flag: (value, words(" ".join(lines).split("\0")[0]), default)
        for flag, (value, lines, default) in options.items()
    }


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

    def test_analyze_points_gives_the_tables_of_analyze_point_out(self):
        # The same pair of points through the command line and the API:
        # the same three tables, and koh-kim-2's values (docs/points.md):
        # 167 packets seen at both points, the CN's two DATA lost on the
        # MN's cut link, two handovers both points saw, none one-sided.
        mn, cn = "sample-captures/koh-kim-2/mn.pcap", "sample-captures/koh-kim-2/cn.pcap"
        out = os.path.join(self.tmp, "points")
        r = cli("analyze", "-q", "--point", f"mn={mn}", "--point", f"cn={cn}", "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        tables = sh.analyze_points({"mn": mn, "cn": cn})
        self.assertEqual(list(tables), ["points", "owd", "handovers_two_sided"])
        key = sh.part_key(f"{mn}+{cn}")
        for name, t in tables.items():
            self.assertIsInstance(t, pa.Table)
            part = pq.read_table(os.path.join(out, name, f"part-{key}.parquet"))
            self.assertEqual(t.schema, part.schema, name)
            self.assertEqual(without_wall_time(t), without_wall_time(part), name)
        # Times are ns timestamps (datetime has µs): the other columns.
        def rows(name, columns):
            return tables[name].select(columns).to_pylist()

        points = rows("points", ["point_a", "point_b", "paired", "not_seen_at_receiver", "offset_ms"])
        self.assertEqual(len(points), 1)
        self.assertEqual((points[0]["point_a"], points[0]["point_b"]), ("mn", "cn"))
        self.assertEqual(points[0]["paired"], 167)
        self.assertEqual(points[0]["not_seen_at_receiver"], 2)
        self.assertLess(abs(points[0]["offset_ms"]), 0.1)
        self.assertEqual(tables["owd"].num_rows, 167)
        two = rows(
            "handovers_two_sided",
            ["seen_at", "sender_point", "sender_switch_frame", "receiver_switch_frame", "receiver_interrupt_ms", "receiver_loss_ms"],
        )
        self.assertEqual([row["seen_at"] for row in two], ["both", "both"])
        cn_to_mn = next(row for row in two if row["sender_point"] == "cn")
        self.assertEqual((cn_to_mn["sender_switch_frame"], cn_to_mn["receiver_switch_frame"]), (71, 81))
        self.assertAlmostEqual(cn_to_mn["receiver_interrupt_ms"], 150.098, places=6)
        self.assertAlmostEqual(cn_to_mn["receiver_loss_ms"], 100.069, places=6)
        # Refused as the command line refuses them.
        with self.assertRaises(ValueError):
            sh.analyze_points({"mn": mn})
        with self.assertRaises(ValueError):
            sh.analyze_points({"mn": mn, "cn": cn, "router": cn})
        with self.assertRaises(RuntimeError):
            sh.analyze_points({"mn": mn, "cn": os.path.join(self.tmp, "absent.pcap")})

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


class Package(Common):
    """What pip installs: version, types and stubs, the analysis options'
    one list, the console script, `filter`/`--filter`."""

    def test_version_is_the_crate_version(self):
        with open("python/Cargo.toml", encoding="utf-8") as f:
            crate = re.search(r'^version = "([^"]+)"', f.read(), re.M).group(1)
        self.assertEqual(sh.__version__, crate)
        self.assertEqual(sh.VERSION, crate)  # the older name
        # pyproject.toml's version is dynamic: the wheel's metadata says the same.
        self.assertEqual(importlib.metadata.version("sctp-handover"), crate)

    def test_typed_package_with_stubs(self):
        package = importlib.resources.files("sctp_handover")
        self.assertTrue(package.joinpath("py.typed").is_file())
        self.assertTrue(package.joinpath("_native.pyi").is_file())

    def mypy(self, *args):
        return subprocess.run(
            [sys.executable, "-m", "mypy", "--config-file", "python/pyproject.toml", "--no-incremental", *args],
            capture_output=True,
            text=True,
        )

    def test_stubs_match_the_extension(self):
        # stubtest: every public name of the built extension is in the
        # stub and every stub name in the extension, with the same
        # parameters (pyo3's __text_signature__).
        r = subprocess.run(
            [sys.executable, "-m", "mypy.stubtest", "--mypy-config-file", os.path.abspath("python/pyproject.toml"), "sctp_handover._native"],
            capture_output=True,
            text=True,
            cwd=self.tmp,  # the installed package, not python/ beside the tests
        )
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("Success: no issues found in 1 module", r.stdout)
        # The package's own code, typed against the stubs.
        r = self.mypy("--strict", "python/sctp_handover")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        # A user's code is checked against them: a wrong argument type and
        # a name the extension does not have are errors.
        user = os.path.join(self.tmp, "user.py")
        with open(user, "w") as f:
            f.write(textwrap.dedent("""\
                import sctp_handover as sh
                from sctp_handover import _native
                key: str = sh.part_key("a.pcap")
                rows: int = len(sh.analyze_capture_arrow("a.pcap")["paths"])
                defaults = {o.name: o.default for o in sh.ANALYSIS_OPTIONS}
                sh.part_key(3)
                _native.analyse_capture("a.pcap")
            """))
        r = self.mypy("--strict", user)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        errors = [line.split(": error: ")[1] for line in r.stdout.splitlines() if ": error: " in line]
        self.assertEqual(
            errors,
            [
                'Argument 1 to "part_key" has incompatible type "int"; expected "str"  [arg-type]',
                'Module has no attribute "analyse_capture"; maybe "analyze_capture"?  [attr-defined]',
            ],
            r.stdout,
        )

    def test_options_are_those_of_analyze(self):
        # The Python list (python/src/options.rs) against the command
        # line's: both render the analyzer's option descriptions
        # (sctp_handover::settings::option), so this holds what each adds
        # (order, kinds, defaults) and that both render them: the same
        # flags in the same order, help texts, value names and defaults.
        r = cli("analyze", "--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        theirs = clap_options(r.stdout)
        flags = list(theirs)
        first = flags.index("--verify-checksum")
        analysis = [f for f in flags[first:] if f not in ("--help", "--version")]  # clap's own
        self.assertEqual([o.flag for o in sh.ANALYSIS_OPTIONS], analysis)
        self.assertEqual(len(sh.ANALYSIS_OPTIONS), 19)
        for o in sh.ANALYSIS_OPTIONS:
            value, help_text, default = theirs[o.flag]
            self.assertEqual(o.help, help_text, o.flag)
            if o.kind == "flag":
                self.assertIsNone(value, o.flag)
                self.assertIs(o.default, False, o.flag)
            else:
                self.assertEqual(o.metavar or o.name.upper(), value, o.flag)
            if o.kind in ("int", "choice"):
                self.assertEqual(str(o.default), default, o.flag)
            else:
                self.assertIsNone(default, o.flag)
            self.assertEqual(o.name, o.flag[2:].replace("-", "_") + ("s" if o.kind == "int_list" else ""))
        # Concrete values, by hand from `analyze --help`.
        by_name = {o.name: o for o in sh.ANALYSIS_OPTIONS}
        self.assertEqual(by_name["rto_max_ms"].default, 60000)
        self.assertEqual(by_name["capture_point"].choices, ["mn", "cn", "middle", "unknown"])
        self.assertEqual(by_name["udp_encap_ports"].default, [])
        self.assertIsNone(by_name["filter"].default)
        self.assertEqual(by_name["filter"].kind, "text")
        # Every keyword is accepted, an unknown one is not.
        for o in sh.ANALYSIS_OPTIONS:
            sh.check_options(**{o.name: o.default})
        with self.assertRaisesRegex(TypeError, "unknown option"):
            sh.check_options(rto_min=1)

    def test_console_script_help_lists_every_option(self):
        env = dict(os.environ, COLUMNS="2000")  # one line per option: no wrapping inside words
        script = subprocess.run([CLUSTER_SCRIPT, "--help"], capture_output=True, text=True, env=env)
        self.assertEqual(script.returncode, 0, script.stderr)
        self.assertTrue(script.stdout.startswith("usage: sctp-handover-cluster "), script.stdout)
        module = subprocess.run(
            [sys.executable, "-m", "sctp_handover.cluster", "--help"], capture_output=True, text=True, env=env
        )
        self.assertEqual(module.stdout, script.stdout)
        # argparse: `  --flag VALUE  help`, the help on the next line
        # (indented) when the flag and its value are long.
        lines = {}
        flag = None
        for line in script.stdout.splitlines():
            m = re.match(r"^  (--[\w-]+)(?: (\S+))?(?:  +(.*))?$", line)
            if m:
                flag = m.group(1)
                lines[flag] = (m.group(2), m.group(3) or "")
            elif flag and line.startswith(" " * 24):
                lines[flag] = (lines[flag][0], words(lines[flag][1] + " " + line))
            else:
                flag = None
        for o in sh.ANALYSIS_OPTIONS:
            self.assertIn(o.flag, lines, o.flag)
            value, help_text = lines[o.flag]
            if o.kind in ("int", "choice"):
                self.assertEqual(help_text, f"{o.help} (default: {o.default})", o.flag)
            else:
                self.assertEqual(help_text, o.help, o.flag)
        self.assertEqual(lines["--filter"], ("EXPR", by_flag("--filter").help))
        self.assertEqual(lines["--capture-point"][0], "{mn,cn,middle,unknown}")
        r = subprocess.run([CLUSTER_SCRIPT, "--version"], capture_output=True, text=True)
        self.assertEqual(r.stdout, f"sctp-handover-cluster {sh.__version__}\n")

    def test_filter(self):
        # tcpdump -nr sample-captures/koh-kim-1/mn.pcap 'sctp and host
        # 198.51.100.101' | wc -l: 87 of the 197 frames (164 are SCTP).
        expr = "sctp and host 198.51.100.101"
        files = sh.analyze_capture(SAMPLE, filter=expr)["files"].to_pylist()[0]
        self.assertEqual((files["frames"], files["frames_sctp"], files["frames_filtered_out"]), (197, 87, 110))
        files = sh.analyze_capture(SAMPLE)["files"].to_pylist()[0]
        self.assertEqual((files["frames_sctp"], files["frames_filtered_out"]), (164, 0))
        with self.assertRaisesRegex(ValueError, "filter `sctp and nonsense`"):
            sh.analyze_capture(SAMPLE, filter="sctp and nonsense")

    def test_console_script_filter_equals_analyze(self):
        expr = "sctp and host 198.51.100.101"
        theirs = os.path.join(self.tmp, "filter-cli")
        r = cli("analyze", SAMPLE, "--out", theirs, "-q", "--filter", expr)
        self.assertEqual(r.returncode, 0, r.stderr)
        mine = os.path.join(self.tmp, "filter-cluster")
        r = subprocess.run(
            [CLUSTER_SCRIPT, "--engine", "dask", SAMPLE, "--out", mine, "--workers", "1", "--filter", expr],
            capture_output=True,
            text=True,
        )
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("1 inputs: 1 ok", r.stdout)
        self.assertEqual(compare.differences(theirs, mine), [])
        files = pq.read_table(os.path.join(mine, "files")).to_pylist()
        self.assertEqual([(f["frames_sctp"], f["frames_filtered_out"]) for f in files], [(87, 110)])
        # The same filter is the same setting as the command line's (the
        # dataset's fingerprint): its parts are complete; another is not.
        self.assertTrue(sh.write_capture(SAMPLE, theirs, filter=expr)["reused"])
        self.assertFalse(sh.write_capture(SAMPLE, theirs, filter="sctp")["reused"])
        # A filter libpcap refuses is a usage error, before any task.
        r = subprocess.run(
            [CLUSTER_SCRIPT, "--engine", "dask", SAMPLE, "--out", mine, "--filter", "sctp and nonsense"],
            capture_output=True,
            text=True,
        )
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertTrue(r.stderr.startswith("sctp-handover-cluster: error: filter `sctp and nonsense`: "), r.stderr)


def by_flag(flag):
    return next(o for o in sh.ANALYSIS_OPTIONS if o.flag == flag)


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
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)  # as `analyze`: 1 when one failed
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
        self.assertEqual(r.returncode, 1)
        runs = glob.glob(os.path.join(out, "_runs", "*.jsonl"))
        self.assertEqual(len(runs), 2)
        latest = max(runs, key=os.path.getmtime)
        with open(latest) as f:
            self.assertTrue(all(row["reused"] for row in map(json.loads, f)))


if __name__ == "__main__":
    unittest.main()
