"""Every module of ``bench/`` runs once with tiny sizes, as ``make bench`` runs it
(``python -m bench.<name>``, a process of its own): it exits 0 and prints its table. The
figures themselves are not checked (they are measurements, not behaviour); what is checked
is that a benchmark the README quotes can still be run. Benchmarks that need a pgvector
server get the session's (``pgvector_session``) through a 0600 file, never on argv."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PGVECTOR = "{pgvector}"  # replaced by the path of a VECTOR_STORE file of the session's server
JSON = "{json}"  # replaced by a path the bench writes its figures to (make bench-plots draws them)

# module: (tiny arguments, text of its table's header); the slowest first
BENCHES: dict[str, tuple[list[str], str]] = {
    "recovery_time": (["--modes", "thread"], "all tasks running"),
    "state_per_key": (["--keys", "6", "--baseline-keys", "3", "--agents", "note-taking"],
                      "bytes per key"),
    "runtime_per_event": (["--events", "128", "--durable-events", "64", "--modes", "thread",
                           "process", "--parallelism", "1", "--json", JSON], "trivial/plain"),
    "durable_async_throughput": (["--keys", "2", "--events-per-key", "2", "--json", JSON],
                                 "parking ev/s"),
    "action_state_store": (["--keys", "2", "--events-per-key", "2", "--rounds", "1",
                            "--store-calls", "5", "--pgvector-config", PGVECTOR],
                           "postgres/off"),
    "ltm_overhead": (["--ops", "2", "--embedder", "hashing"], "raw Mem0 (ms)"),
    "vector_store_overhead[qdrant]": (
        ["--store", "qdrant", "--rounds", "2", "--batch", "4", "--queries", "1",
         "--text-queries", "1"], "Mem0VectorStore"),
    "vector_store_overhead[faiss]": (
        ["--store", "faiss", "--rounds", "2", "--batch", "4", "--queries", "1",
         "--text-queries", "1"], "Mem0VectorStore"),
    "vector_store_overhead[pgvector]": (
        ["--store", "pgvector", "--pgvector-config", PGVECTOR, "--rounds", "2", "--batch", "4",
         "--queries", "1", "--text-queries", "1"], "Mem0VectorStore"),
    "batched_add": (["--rounds", "1", "--items", "3", "--embedder", "hashing",
                     "--pgvector-config", PGVECTOR, "--json", JSON], "single adds"),
    "java_bridge_overhead": (["--ops", "2"], "java ms"),
    # one Java job (the one-key LTM runs, two more, are skipped: JUnit covers Java's LTM)
    "java_agent_throughput": (["--keys", "2", "--events-per-key", "2", "--memory-events", "0",
                               "--json", JSON], "java ev/s"),
    "engine_per_event": (["--events", "64", "--repeat", "1"], "state reads"),
    "model_clients": (["--calls", "3"], "1 thread ms/call"),
    "mcp_tool_call": (["--calls", "3", "--rounds", "1"], "vs SDK"),
    "scoped_search": (["--sizes", "200", "400", "--queries", "2", "--qdrant-queries", "1",
                       "--pgvector-config", PGVECTOR, "--json", JSON], "pgvector now"),
    "embedded_key_scan": (["--rows", "1500", "--large-keys", "300", "--small-key-rows", "40",
                           "--queries", "2", "--json", JSON], "embedded/sqlite-vec"),
    "pgvector_key_search": (["--rows", "1500", "--keys", "10", "--large-keys", "300",
                             "--minilm-keys", "300", "--sentences", "40", "--queries", "2",
                             "--pgvector-config", PGVECTOR, "--json", JSON],
                            "client extra"),
    "coalesced_embedding": (["--rounds", "1", "--keys", "2"], "items/s, median of"),
    "footprint": (["--adds", "2", "--setups", "embedded+hashing"], "peak RSS MB"),
    "idempotent_add": (["--ops", "2", "--batch", "2", "--embedder", "hashing",
                        "--pgvector-config", PGVECTOR], "ours (ms/item)"),
    "minilm_runtimes": (["--runs", "1"], "per text in 32"),
    "memory_expiry": (["--rows", "40", "--queries", "2", "--batch", "10"], "with expiry"),
    "rerank_recall": (["--items", "60", "--queries", "6", "--json", JSON], "R@5 all"),
}
BRIDGE_CLASSES = ROOT / "java-bridge" / "target" / "classes"
AT_ONCE = 4  # benches run side by side: most of their time is waiting (JVMs, checkpoints)


def test_every_bench_module_has_a_smoke_run():
    modules = {p.stem for p in (ROOT / "bench").glob("*.py") if not p.stem.startswith("_")}
    assert modules == {name.split("[")[0] for name in BENCHES}


def _skip_reason(bench: str) -> str | None:
    if bench in ("java_bridge_overhead", "java_agent_throughput") and not BRIDGE_CLASSES.is_dir():
        return (f"{BRIDGE_CLASSES.relative_to(ROOT)} is missing: the Java bridge is not built "
                "(make test-java, or `cd java-bridge && mvn -o compile`)")
    return None


class BenchRuns:
    """Every bench started at once (``AT_ONCE`` at a time), each in a process of its own;
    a test waits for its own."""

    def __init__(self, folder: Path, pgvector_store: dict, benches: list[str]):
        self._folder = folder
        self._store = pgvector_store
        self._processes: list[subprocess.Popen] = []
        self._lock = threading.Lock()
        self._closed = False
        self._pool = ThreadPoolExecutor(AT_ONCE)
        self._runs = {bench: self._pool.submit(self._run, bench) for bench in benches
                      if _skip_reason(bench) is None}

    def _pgvector_file(self, bench: str) -> str:
        """A 0600 file holding the server's VECTOR_STORE, with a table of this bench's own."""
        store = copy.deepcopy(self._store)
        store["config"]["collection_name"] = f"bench_{uuid.uuid4().hex[:12]}"
        path = self._folder / f"{bench}.pgvector.json"
        path.touch(mode=0o600)
        path.write_text(json.dumps(store))
        return str(path)

    def _run(self, bench: str) -> tuple[int, str, str]:
        arguments, _ = BENCHES[bench]
        scratch = self._folder / bench
        scratch.mkdir(mode=0o700)
        arguments = [self._pgvector_file(bench) if a == PGVECTOR else
                     str(self.json_of(bench)) if a == JSON else a for a in arguments]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]), TQDM_DISABLE="1",
            TMPDIR=str(scratch))
        with self._lock:
            if self._closed:
                return -1, "", "not started: the session ended"
            process = subprocess.Popen(
                [sys.executable, "-m", f"bench.{bench.split('[')[0]}", *arguments], cwd=ROOT,
                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self._processes.append(process)
        try:
            out, err = process.communicate(timeout=900)
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
            err += "\n(killed after 900 s)"
        return process.returncode, out, err

    def json_of(self, bench: str) -> Path:
        return self._folder / bench / "figures.json"

    def result(self, bench: str) -> tuple[int, str, str]:
        return self._runs[bench].result()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for process in self._processes:
                if process.poll() is None:
                    process.kill()
        self._pool.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="module")
def bench_runs(request, pgvector_session, tmp_path_factory):
    selected = {item.callspec.params["bench"] for item in request.session.items
                if item.module is request.module and hasattr(item, "callspec")}
    runs = BenchRuns(tmp_path_factory.mktemp("benches"), pgvector_session[0],
                     [bench for bench in BENCHES if bench in selected])
    yield runs
    runs.close()


# The benches that run Flink jobs carry the suite's ``cluster`` mark (-m "not cluster" skips).
FLINK_JOBS = {"recovery_time", "state_per_key", "durable_async_throughput", "runtime_per_event",
              "java_agent_throughput"}


@pytest.mark.parametrize("bench", [
    pytest.param(bench, marks=[pytest.mark.cluster] if bench in FLINK_JOBS else [])
    for bench in BENCHES])
def test_a_bench_runs_with_tiny_sizes_and_prints_its_table(bench, bench_runs):
    reason = _skip_reason(bench)
    if reason:
        pytest.skip(reason)
    returncode, out, err = bench_runs.result(bench)
    assert returncode == 0, out[-3000:] + err[-3000:]
    assert BENCHES[bench][1] in out, out[-3000:]
    if JSON in BENCHES[bench][0]:  # the figures make bench-plots draws
        figures = json.loads(bench_runs.json_of(bench).read_text())
        assert figures["bench"] == bench.split("[")[0] and figures["series"], figures
        assert all(len(point) == 2 for points in figures["series"].values()
                   for point in points), figures


def test_a_sqlite_vec_that_dies_of_sigill_leaves_its_column_out_not_the_bench(tmp_path):
    """sqlite-vec runs in a process of its own: an extension built for instructions this CPU
    lacks (a SIGILL, as a bundled AVX-512 binary once gave) ends that process only."""
    fake = tmp_path / "fake" / "sqlite_vec"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        "import os, signal\n\n\ndef loadable_path():\n"
        "    os.kill(os.getpid(), signal.SIGILL)\n")
    env = dict(os.environ, TQDM_DISABLE="1", TMPDIR=str(tmp_path), PYTHONPATH=os.pathsep.join(
        [str(tmp_path / "fake"), str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    done = subprocess.run(
        [sys.executable, "-m", "bench.embedded_key_scan", "--rows", "300", "--large-keys",
         "100", "--small-key-rows", "40", "--queries", "1"], cwd=ROOT, env=env,
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "sqlite-vec left out: sqlite-vec's process died of SIGILL" in done.stdout, done.stdout
    assert "embedded/sqlite-vec" in done.stdout  # the embedded store's figures still print


def test_embedded_key_scan_ranks_the_same_rows_as_sqlite_vec_where_it_runs(tmp_path):
    """[dev] installs sqlite-vec: the comparison really runs (not just its fallback line) and
    both sides return the same top rows of the same key."""
    pytest.importorskip("sqlite_vec", reason="sqlite-vec is not installed (it is in [dev])")
    env = dict(os.environ, TQDM_DISABLE="1", TMPDIR=str(tmp_path), PYTHONPATH=os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    done = subprocess.run(
        [sys.executable, "-m", "bench.embedded_key_scan", "--rows", "400", "--large-keys",
         "200", "--small-key-rows", "40", "--queries", "2"], cwd=ROOT, env=env,
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    if "died of" in done.stdout:  # a CPU its build does not support: what the bench guards
        pytest.skip(next(line for line in done.stdout.splitlines() if "died of" in line))
    assert "sqlite-vec left out" not in done.stdout, done.stdout
    rows = {line.split()[0]: line.split() for line in done.stdout.splitlines()
            if line.strip() and line.split()[0] in ("200", "40")}
    assert set(rows) == {"200", "40"}, done.stdout
    assert all(row[-1] == "1.00" for row in rows.values()), done.stdout  # same top 60
