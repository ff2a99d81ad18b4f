"""The cluster runner on real multi-process clusters over 127.0.0.1, and its
batches, held against the command line.

Each engine's cluster is started as the separate processes a real one is
made of — a Ray head and a Ray worker node (`ray start`), a Dask scheduler
and a Dask worker process (`dask scheduler`, `dask worker`), a Spark
standalone master and worker (pyspark's `spark-class`) — all on the loopback
address and free ports, then `python -m sctp_handover.cluster --address`
runs the sample captures through it and the dataset is compared table by
table with `sctp-handover analyze --out`. Every process started here is in
its own session and is killed with its group at the end, also on failure.

Run from the repository root by tests/python.rs (`make test`):

    SCTPHO_BIN=…/sctp-handover PYTHONPATH=python/tests .venv/bin/python -m unittest -v test_clusters
"""

import glob
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
import compare  # noqa: E402

import sctp_handover as sh  # noqa: E402
from sctp_handover import cluster as runner  # noqa: E402

SAMPLE = "sample-captures/koh-kim-1/mn.pcap"
BIN = os.path.dirname(sys.executable)
#: How long a cluster may take to come up on this loaded 2-core machine
#: (Ray's head alone took 10–15 s here, a Spark master and worker 15–20 s).
START_TIMEOUT_S = 180


def cli(*args):
    bin_ = os.environ.get("SCTPHO_BIN", "sctp-handover")
    return subprocess.run([bin_, *args], capture_output=True, text=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def manifest_rows(out):
    """The rows of the latest run manifest of a dataset, and the driver's
    process id (in the manifest's name: `<time>-<engine>-<pid>.jsonl`)."""
    latest = max(glob.glob(os.path.join(out, "_runs", "*.jsonl")), key=os.path.getmtime)
    with open(latest) as f:
        rows = [json.loads(line) for line in f]
    return rows, int(os.path.basename(latest).rsplit("-", 1)[1].split(".")[0])


class Processes:
    """Processes started in their own sessions (a cluster's daemons fork
    their own children: the whole group is what is stopped)."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.started = []

    def start(self, name, argv, env=None):
        log = open(os.path.join(self.tmp, f"{name}.log"), "wb")
        p = subprocess.Popen(
            argv, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True, cwd=self.tmp
        )
        log.close()
        self.started.append((name, p))
        return p

    def log(self, name):
        with open(os.path.join(self.tmp, f"{name}.log"), errors="replace") as f:
            return f.read()

    def stop(self, name=None):
        """SIGTERM to each group (the last started first: workers before
        their head), SIGKILL to what is left after 5 s (Ray's `start
        --block` takes longer than that to end its children)."""
        targets = [(n, p) for n, p in self.started if name is None or n == name]
        for _, p in reversed(targets):
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 5
        for _, p in targets:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            try:  # the group's other members, whether or not the leader ended
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
        self.started = [(n, p) for n, p in self.started if (n, p) not in targets]


def wait_until(what, ready, procs, timeout=START_TIMEOUT_S):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for name, p in procs.started:
            if p.poll() is not None:
                raise AssertionError(f"{what}: {name} exited ({p.returncode}):\n{procs.log(name)[-3000:]}")
        if ready():
            return
        time.sleep(0.5)
    logs = "\n".join(f"--- {n}\n{procs.log(n)[-2000:]}" for n, _ in procs.started)
    raise AssertionError(f"{what}: not up after {timeout} s\n{logs}")


class Cluster(unittest.TestCase):
    """The command line's dataset of sample-captures and sample-sweeps (44
    captures, 2 READMEs), and a directory for the cluster's processes."""

    INPUTS = ("sample-captures", "sample-sweeps")

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="sctpho-cl-")
        cls.cli_out = os.path.join(cls.tmp, "cli")
        r = cli("analyze", *cls.INPUTS, "--out", cls.cli_out, "-q")
        assert r.returncode == 0, r.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.procs = Processes(self.tmp)
        self.addCleanup(self.procs.stop)  # also when the test fails

    def run_cluster(self, engine, address, out, *extra, env=None):
        r = subprocess.run(
            [sys.executable, "-m", "sctp_handover.cluster", "--engine", engine, "--address", address,
             *self.INPUTS, "--out", out, "-q", *extra],
            capture_output=True, text=True, env=env, timeout=600,
        )
        return r

    def assert_equals_analyze_out(self, r, out):
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        # 20 sample captures (10 scenarios, both sides), 24 sweep captures;
        # the 2 skipped are the READMEs.
        self.assertIn("46 inputs: 44 ok, 2 skipped", r.stdout, r.stdout + r.stderr)
        self.assertEqual(compare.differences(self.cli_out, out), [])
        rows, driver = manifest_rows(out)
        self.assertEqual(len(rows), 46)
        # The tasks ran in the cluster's worker processes, not the driver.
        pids = {int(row["worker"].rsplit(":", 1)[1]) for row in rows}
        self.assertNotIn(driver, pids)
        return pids


class Ray(Cluster):
    def test_head_and_worker_node_processes(self):
        port = free_port()
        # A short temporary directory: Ray's sockets live there (a socket's
        # path has at most 107 bytes).
        ray_tmp = tempfile.mkdtemp(prefix="ray", dir="/tmp")
        self.addCleanup(shutil.rmtree, ray_tmp, True)
        # The cluster's own token (Ray's token authentication), so that
        # neither ~/.ray/auth_token nor its absence changes the test: the
        # head, the worker node, `ray status` and the driver all carry it.
        token = os.path.join(ray_tmp, "auth_token")
        with open(token, "w") as f:
            f.write(secrets.token_hex(32))
        env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="token", RAY_AUTH_TOKEN_PATH=token)
        ray = os.path.join(BIN, "ray")
        common = ["--block", "--node-ip-address", "127.0.0.1", "--num-cpus", "1", "--disable-usage-stats"]
        self.procs.start(
            "ray-head",
            [ray, "start", "--head", "--port", str(port), "--include-dashboard", "false",
             "--temp-dir", ray_tmp, *common],
            env,
        )
        address = f"127.0.0.1:{port}"

        def nodes():
            r = subprocess.run([ray, "status", "--address", address], capture_output=True, text=True, env=env)
            active = r.stdout.split("Active:", 1)[-1].split("Pending:", 1)[0]
            return active.count("node_") if r.returncode == 0 else 0

        wait_until("ray head", lambda: nodes() >= 1, self.procs)
        self.procs.start("ray-worker", [ray, "start", "--address", address, *common], env)
        wait_until("ray worker node", lambda: nodes() >= 2, self.procs)

        out = os.path.join(self.tmp, "ray")
        r = self.run_cluster("ray", address, out, env=env)
        pids = self.assert_equals_analyze_out(r, out)
        # One CPU on each node, 8 batches (46 inputs cut for 2 workers,
        # 4 batches each): both nodes' worker processes ran some.
        self.assertIn("in 8 tasks", r.stdout)
        self.assertGreaterEqual(len(pids), 2, pids)

        # The runner's job keeps its worker processes at the priority of
        # the processes that start them (Ray's default lowers it by 15 nice
        # levels: the tasks then lose the CPU to anything else at the usual
        # priority; docs/scale-out.md, "Ray's rate, looked into"). A task of a
        # job with the runner's runtime environment, on this cluster: Ray
        # passed the setting to the worker process, and the worker runs at
        # the niceness of this process, which started the head and the
        # worker node (the niceness tells the fix apart when this process
        # runs below nice 5: from 5 up Ray's +15 is capped at 19; the
        # setting passed on is checked at any niceness).
        self.assertEqual(runner.ray_runtime_env(), {"env_vars": {"RAY_worker_niceness": "0"}})
        probe = (
            "import json, os, sys, ray\n"
            "from sctp_handover import cluster\n"
            "ray.init(address=sys.argv[1], logging_level='ERROR', runtime_env=cluster.ray_runtime_env())\n"
            "f = ray.remote(num_cpus=1)(lambda: (os.environ.get('RAY_worker_niceness'), os.getpriority(os.PRIO_PROCESS, 0)))\n"
            "print(json.dumps(ray.get(f.remote(), timeout=120)))\n"
        )
        r = subprocess.run([sys.executable, "-c", probe, address], capture_output=True, text=True, env=env, timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(json.loads(r.stdout.splitlines()[-1]), ["0", os.getpriority(os.PRIO_PROCESS, 0)])


class Dask(Cluster):
    def start_cluster(self):
        port = free_port()
        address = f"tcp://127.0.0.1:{port}"
        self.procs.start(
            "dask-scheduler",
            [os.path.join(BIN, "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port),
             "--no-dashboard"],
        )
        self.start_workers(address)
        return address

    def start_workers(self, address):
        # Two worker processes of one thread (one analysis per core), as
        # docs/scale-out.md tells for a real cluster.
        self.procs.start(
            "dask-worker",
            [os.path.join(BIN, "dask"), "worker", address, "--host", "127.0.0.1", "--nworkers", "2",
             "--nthreads", "1", "--no-dashboard", "--local-directory", self.tmp],
        )
        from dask.distributed import Client

        def ready():
            try:
                with Client(address, timeout=5) as c:
                    return len(c.scheduler_info()["workers"]) >= 2
            except OSError:
                return False

        wait_until("dask scheduler and 2 workers", ready, self.procs)

    def test_scheduler_and_worker_processes_over_tcp(self):
        address = self.start_cluster()
        out = os.path.join(self.tmp, "dask")
        r = self.run_cluster("dask", address, out)
        pids = self.assert_equals_analyze_out(r, out)
        self.assertGreaterEqual(len(pids), 2, pids)

    def test_interrupted_batches_resume_per_input(self):
        """The driver and the workers killed while batches of 3 run: each
        input a batch finished before the kill has its record and is `done`
        on the rerun, the others are analysed then, and the dataset is the
        command line's."""
        address = self.start_cluster()
        out = os.path.join(self.tmp, "dask-killed")
        driver = subprocess.Popen(
            [sys.executable, "-m", "sctp_handover.cluster", "--engine", "dask", "--address", address,
             *self.INPUTS, "--out", out, "-q", "--batch-files", "3"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
        try:
            # As soon as the first batch's rows are in the manifest.
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and driver.poll() is None:
                runs = glob.glob(os.path.join(out, "_runs", "*.jsonl"))
                if runs and os.path.getsize(runs[0]) > 0:
                    break
                time.sleep(0.01)
            self.procs.stop("dask-worker")
        finally:
            os.killpg(driver.pid, signal.SIGKILL)
            driver.wait()
        records = len(glob.glob(os.path.join(out, "_inputs", "*.json")))
        # 3 or more (the first batch), fewer than all 46.
        self.assertGreaterEqual(records, 3)
        self.assertLess(records, 46, "the run ended before it was killed")

        self.start_workers(address)
        r = self.run_cluster("dask", address, out, "--batch-files", "3")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        rows, _ = manifest_rows(out)
        reused = [row for row in rows if row["reused"]]
        self.assertEqual(len(rows), 46)
        self.assertEqual(len(reused), records, r.stdout)
        self.assertEqual(compare.differences(self.cli_out, out), [])

    def test_shard_of_analyze_then_batches_of_the_rest(self):
        """`analyze --out --shard 1/2` on one machine, then a batched run
        over the whole archive into the same dataset: the shard's inputs are
        `done`, one by one, the others analysed (a local Dask cluster)."""
        out = os.path.join(self.tmp, "sharded")
        r = cli("analyze", *self.INPUTS, "--out", out, "-q", "--shard", "1/2")
        self.assertEqual(r.returncode, 0, r.stderr)
        shard = {os.path.basename(p) for p in glob.glob(os.path.join(out, "_inputs", "*.json"))}
        self.assertTrue(0 < len(shard) < 46, len(shard))
        r = subprocess.run(
            [sys.executable, "-m", "sctp_handover.cluster", "--engine", "dask", *self.INPUTS, "--out", out,
             "-q", "--workers", "2", "--batch-files", "10"],
            capture_output=True, text=True, timeout=600,
        )
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn(" in 5 tasks ", r.stdout)
        rows, _ = manifest_rows(out)
        self.assertEqual({f"{row['key']}.json" for row in rows if row["reused"]}, shard)
        self.assertEqual(len(rows), 46)
        self.assertEqual(compare.differences(self.cli_out, out), [])

    def test_bad_inputs_in_a_batch_do_not_stop_the_others(self):
        inputs = os.path.join(self.tmp, "mixed")
        os.makedirs(inputs)
        # In listing order (sorted): a.pcap, b-broken.pcap, c-empty.pcap,
        # d.pcap: one batch (--batch-files 4).
        shutil.copy(SAMPLE, os.path.join(inputs, "a.pcap"))
        with open(os.path.join(inputs, "b-broken.pcap"), "wb") as f:
            f.write(b"\x0a\x0d\x0d\x0a" + bytes(range(64)))  # a pcapng magic, then noise
        open(os.path.join(inputs, "c-empty.pcap"), "wb").close()
        shutil.copy("sample-captures/koh-kim-2/cn.pcap", os.path.join(inputs, "d.pcap"))
        address = self.start_cluster()
        out = os.path.join(self.tmp, "mixed-out")
        r = subprocess.run(
            [sys.executable, "-m", "sctp_handover.cluster", "--engine", "dask", "--address", address,
             inputs, "--out", out, "--batch-files", "4"],
            capture_output=True, text=True, timeout=600,
        )
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)  # as `analyze`: 1 when one failed
        self.assertIn("4 inputs (", r.stdout)
        self.assertIn(" in 1 tasks on dask", r.stdout)
        rows, _ = manifest_rows(out)
        status = {os.path.basename(row["source"]): row["status"] for row in rows}
        self.assertEqual(status, {"a.pcap": "ok", "b-broken.pcap": "failed", "c-empty.pcap": "failed",
                                  "d.pcap": "ok"})
        # One worker process ran the whole batch.
        self.assertEqual(len({row["worker"] for row in rows}), 1)
        self.assertEqual(len(glob.glob(os.path.join(out, "_inputs", "*.json"))), 4)
        r2 = cli("analyze", inputs, "--out", os.path.join(self.tmp, "mixed-cli"), "-q")
        self.assertEqual(r2.returncode, 1, r2.stderr)
        self.assertEqual(compare.differences(os.path.join(self.tmp, "mixed-cli"), out), [])


class Spark(Cluster):
    def test_standalone_master_and_worker_processes(self):
        import pyspark

        spark_home = os.path.dirname(pyspark.__file__)
        port, master_ui, worker_ui = free_port(), free_port(), free_port()
        env = dict(
            os.environ,
            SPARK_HOME=spark_home,
            SPARK_LOCAL_IP="127.0.0.1",
            SPARK_LOG_DIR=self.tmp,
            # The master's REST submission server would take port 6066.
            SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false",
        )
        spark_class = os.path.join(spark_home, "bin", "spark-class")
        self.procs.start(
            "spark-master",
            [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
             "--webui-port", str(master_ui)],
            env,
        )
        address = f"spark://127.0.0.1:{port}"
        self.procs.start(
            "spark-worker",
            [spark_class, "org.apache.spark.deploy.worker.Worker", address, "--host", "127.0.0.1",
             "--cores", "2", "--memory", "2g", "--webui-port", str(worker_ui),
             "--work-dir", os.path.join(self.tmp, "spark-work")],
            env,
        )
        wait_until(
            "spark master and worker",
            lambda: "Successfully registered with master" in self.procs.log("spark-worker"),
            self.procs,
        )
        out = os.path.join(self.tmp, "spark")
        r = self.run_cluster("spark", address, out, env=env)
        self.assert_equals_analyze_out(r, out)


class Batches(unittest.TestCase):
    """How the runner cuts a run into tasks, and one task's inputs."""

    def items(self, sizes):
        return [{"key": f"k{i}", "source": f"s{i}", "size": s} for i, s in enumerate(sizes)]

    def test_by_count_bytes_and_workers(self):
        lens = lambda bs: [len(b) for b in bs]  # noqa: E731
        # 10 000 small inputs on 2 workers: 50 tasks of 200 (the default).
        self.assertEqual(lens(runner.batches(self.items([1000] * 10_000), None, 64 << 20, 2)), [200] * 50)
        # Bytes first: 30 MB inputs, 64 MB a batch: the third input ends it.
        self.assertEqual(lens(runner.batches(self.items([30 << 20] * 7), 200, 64 << 20, 1)), [3, 3, 1])
        # An input larger than --batch-bytes is a batch alone.
        self.assertEqual(lens(runner.batches(self.items([100, 1 << 30, 100]), 200, 64 << 20, 1)), [2, 1])
        # A small run: 4 batches per worker (46 inputs, 2 workers: 6 a
        # batch), unless --batch-files is given.
        self.assertEqual(lens(runner.batches(self.items([10] * 46), None, 64 << 20, 2)), [6] * 7 + [4])
        self.assertEqual(lens(runner.batches(self.items([10] * 46), 200, 64 << 20, 2)), [46])
        self.assertEqual(runner.batches([], 200, 64 << 20, 2), [])
        # Order and membership kept: every input once, in listing order.
        items = self.items([5] * 23)
        self.assertEqual([i for b in runner.batches(items, 4, 1 << 20, 1) for i in b], items)

    def test_batch_options(self):
        self.assertEqual(runner._byte_size("64M"), 64 << 20)
        self.assertEqual(runner._byte_size("1g"), 1 << 30)
        self.assertEqual(runner._byte_size("512KB"), 512 << 10)
        self.assertEqual(runner._byte_size("1000"), 1000)
        for bad in ("0", "-1M", "M", "ten"):
            with self.assertRaises(Exception, msg=bad):
                runner._byte_size(bad)
        args = runner.parser().parse_args(["--engine", "dask", "--out", "D", "x"])
        self.assertEqual((args.batch_files, args.batch_bytes), (None, 64 << 20))

    def test_a_failing_input_is_its_row_the_batch_goes_on(self):
        tmp = tempfile.mkdtemp(prefix="sctpho-batch-")
        self.addCleanup(shutil.rmtree, tmp, True)
        shutil.copy(SAMPLE, os.path.join(tmp, "a.pcap"))
        shutil.copy(SAMPLE, os.path.join(tmp, "c.pcap"))
        out = os.path.join(tmp, "out")
        sh.open_dataset(out)
        items, _ = runner.plan([os.path.join(tmp, "a.pcap"), os.path.join(tmp, "c.pcap")], out, "parquet",
                               False, {})
        missing = dict(items[0], path=os.path.join(tmp, "gone.pcap"), source="gone.pcap",
                       key=sh.part_key("gone.pcap"))
        # An item the analysis cannot take at all (an option of the wrong
        # type): still a row, and the input after it is analysed.
        wrong = dict(items[0], source="wrong.pcap", key=sh.part_key("wrong.pcap"), options={"pmr": "two"})
        rows = runner._batch_task([items[0], missing, wrong, items[1]])
        self.assertEqual([r["status"] for r in rows], ["ok", "failed", "failed", "ok"])
        self.assertIn("gone.pcap", rows[1]["error"])
        # (write_capture's error for an argument of the wrong type does
        # not name the input; the row's source does.)
        self.assertEqual(rows[2]["source"], "wrong.pcap")
        self.assertIn("TypeError", rows[2]["error"])
        self.assertEqual([r["handovers"] for r in rows], [2, 0, 0, 2])


if __name__ == "__main__":
    unittest.main()
