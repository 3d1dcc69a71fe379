"""One large key's search on the embedded store, next to sqlite-vec's C scan of the same rows.

A store of ``--rows`` rows (random 384-dimensional vectors): keys of ``--large-keys`` rows
each, the rest in keys of ``--small-key-rows`` rows, inserted in random order through the
store's own ``insert``. For each large key and one small key, over ``--queries`` random
query vectors (median):

- ``embedded``: ``EmbeddedVectorStore.search`` as Mem0 calls it (top_k 60, the
  job/key/set filter), wall time and this process's CPU time;
- ``sqlite-vec``: ``vec_distance_cosine`` over the same rows of the same file
  (``SELECT id ... WHERE <the key> ORDER BY vec_distance_cosine(vector, ?) LIMIT 60``),
  in a process of its own, so that a CPU the extension was not built for (SIGILL) ends
  that process and not the bench; the column is left out, with the reason, when
  ``sqlite-vec`` is not installed (it is no dependency of the project: ``pip install
  sqlite-vec``) or cannot be loaded;
- ``ratio``: embedded / sqlite-vec (target: <= 1.5 for the 50,000-row key), and
  ``agree``: the share of sqlite-vec's top 60 that the embedded store returned too.

On a machine that other work shares, wall times swing; the CPU times are the steadier
comparison.

    python -m bench.embedded_key_scan [--rows 500000] [--large-keys 5000 50000]
        [--small-key-rows 100] [--queries 15] [--json FILE]
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import importlib.util
import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np

from bench._results import add_json_argument, write_results
from flink_agents_ltm.integrations.mem0.providers.embedded.store import EmbeddedVectorStore

DIMS = 384
TOP_K = 60
BATCH = 5000
COLLECTION = "bench"
SQLITE_VEC_SQL = ("SELECT id FROM vectors WHERE collection = ? AND user_id = ? AND agent_id = ? "
                  "AND run_id = ? ORDER BY vec_distance_cosine(vector, ?) LIMIT ?")


def scope(key: str) -> dict[str, str]:
    return {"user_id": "bench-job", "agent_id": key, "run_id": "notes"}


def key_sizes(rows: int, large: list[int], small_rows: int) -> dict[str, int]:
    """Key name -> rows: the large keys, then small keys for the rest of ``rows``."""
    sizes = {f"large-{n}-{size}": size for n, size in enumerate(large)}
    rest = rows - sum(large)
    if rest < small_rows:
        raise SystemExit(f"--rows {rows} leaves no room for a small key next to {large}")
    for n in range(rest // small_rows):
        sizes[f"small-{n}"] = small_rows + (rest % small_rows if n == 0 else 0)
    return sizes


def fill(store: EmbeddedVectorStore, sizes: dict[str, int], rng: np.random.Generator) -> None:
    keys = np.repeat(np.arange(len(sizes)), list(sizes.values()))
    rng.shuffle(keys)  # rows of all keys interleaved, as a job writes them
    names = list(sizes)
    for first in range(0, len(keys), BATCH):
        batch = keys[first:first + BATCH]
        vectors = rng.standard_normal((len(batch), DIMS)).astype(np.float32)
        store.insert(vectors, [{**scope(names[k]), "data": f"note {first + n}", "hash": "-",
                                "created_at": "2026-01-01T00:00:00+00:00", "role": "user"}
                               for n, k in enumerate(batch)],
                     [str(uuid.uuid4()) for _ in batch])


def timed_embedded(store: EmbeddedVectorStore, key: str, queries: np.ndarray, rows: int
                   ) -> tuple[float, float, list[list[str]]]:
    """Median wall and CPU ms of the store's search for ``key``, and each query's hit ids."""
    store.search("q", queries[0].tolist(), TOP_K, scope(key))  # warm the page cache
    walls, cpus, found = [], [], []
    for query in queries:
        vector = query.tolist()
        started, cpu = time.perf_counter(), time.process_time()
        hits = store.search("q", vector, TOP_K, scope(key))
        walls.append(time.perf_counter() - started)
        cpus.append(time.process_time() - cpu)
        assert len(hits) == min(TOP_K, rows), len(hits)
        assert {hit.payload["agent_id"] for hit in hits} == {key}
        found.append([hit.id for hit in hits])
    return statistics.median(walls) * 1000, statistics.median(cpus) * 1000, found


# ---------------------------------------------------------------- sqlite-vec, in its own process

class _CtypesSqlite:
    """The few calls the worker needs, on the C library when Python's ``sqlite3`` was built
    without extension loading (pyenv's default)."""

    def __init__(self, path: str):
        name = ctypes.util.find_library("sqlite3") or "libsqlite3.so.0"
        lib = self.lib = ctypes.CDLL(name)
        p, i, c = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p
        for fn, res, args in [
                ("sqlite3_open_v2", i, [c, ctypes.POINTER(p), i, c]),
                ("sqlite3_enable_load_extension", i, [p, i]),
                ("sqlite3_load_extension", i, [p, c, c, ctypes.POINTER(c)]),
                ("sqlite3_prepare_v2", i, [p, c, i, ctypes.POINTER(p), p]),
                ("sqlite3_bind_text", i, [p, i, c, i, p]),
                ("sqlite3_bind_blob", i, [p, i, c, i, p]),
                ("sqlite3_bind_int", i, [p, i, i]), ("sqlite3_step", i, [p]),
                ("sqlite3_reset", i, [p]), ("sqlite3_column_text", c, [p, i]),
                ("sqlite3_errmsg", c, [p])]:
            getattr(lib, fn).restype, getattr(lib, fn).argtypes = res, args
        self.db = p()
        if lib.sqlite3_open_v2(path.encode(), ctypes.byref(self.db), 2, None):  # READWRITE
            raise RuntimeError(f"cannot open {path} through {name}")
        self.statements: dict[str, Any] = {}

    def load(self, extension: str) -> None:
        error = ctypes.c_char_p()
        self.lib.sqlite3_enable_load_extension(self.db, 1)
        if self.lib.sqlite3_load_extension(self.db, extension.encode(), None,
                                           ctypes.byref(error)):
            raise RuntimeError((error.value or b"?").decode())

    def first_column(self, sql: str, params: tuple) -> list[str]:
        lib, transient = self.lib, ctypes.c_void_p(-1)
        statement = self.statements.get(sql)
        if statement is None:
            statement = self.statements[sql] = ctypes.c_void_p()
            if lib.sqlite3_prepare_v2(self.db, sql.encode(), -1, ctypes.byref(statement), None):
                raise RuntimeError(lib.sqlite3_errmsg(self.db).decode())
        lib.sqlite3_reset(statement)
        for n, value in enumerate(params, 1):
            if isinstance(value, bytes):
                lib.sqlite3_bind_blob(statement, n, value, len(value), transient)
            elif isinstance(value, int):
                lib.sqlite3_bind_int(statement, n, value)
            else:
                lib.sqlite3_bind_text(statement, n, value.encode(), -1, transient)
        out = []
        while (code := lib.sqlite3_step(statement)) == 100:  # SQLITE_ROW
            out.append(lib.sqlite3_column_text(statement, 0).decode())
        if code != 101:  # SQLITE_DONE
            raise RuntimeError(lib.sqlite3_errmsg(self.db).decode())
        return out


class _PythonSqlite:
    def __init__(self, path: str):
        self.conn = sqlite3.connect(path)

    def load(self, extension: str) -> None:
        self.conn.enable_load_extension(True)
        self.conn.load_extension(extension)

    def first_column(self, sql: str, params: tuple) -> list[str]:
        return [row[0] for row in self.conn.execute(sql, params)]


def sqlite_vec_worker() -> None:
    """Read a job from stdin, print each key's median wall/CPU ms and top ids as JSON."""
    job = json.load(sys.stdin)
    import sqlite_vec  # only here: the bench runs without it

    db: _CtypesSqlite | _PythonSqlite
    if hasattr(sqlite3.Connection, "enable_load_extension"):
        db = _PythonSqlite(job["path"])
    else:
        db = _CtypesSqlite(job["path"])
    db.load(sqlite_vec.loadable_path())
    queries = [bytes.fromhex(query) for query in job["queries"]]
    results = {}
    for key in job["keys"]:
        params = (job["collection"], *scope(key).values())
        db.first_column(SQLITE_VEC_SQL, (*params, queries[0], TOP_K))  # warm
        walls, cpus, found = [], [], []
        for query in queries:
            started, cpu = time.perf_counter(), time.process_time()
            ids = db.first_column(SQLITE_VEC_SQL, (*params, query, TOP_K))
            walls.append(time.perf_counter() - started)
            cpus.append(time.process_time() - cpu)
            found.append(ids)
        results[key] = {"wall": statistics.median(walls) * 1000,
                        "cpu": statistics.median(cpus) * 1000, "ids": found}
    print(json.dumps(results))


def run_sqlite_vec(path: Path, keys: list[str], queries: np.ndarray
                   ) -> tuple[dict[str, Any] | None, str]:
    """The worker's results, or ``None`` and the one-line reason the column is left out."""
    if importlib.util.find_spec("sqlite_vec") is None:  # not imported here: see the module
        return None, "sqlite-vec is not installed (pip install sqlite-vec)"
    unit = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    job = {"path": str(path), "collection": COLLECTION, "keys": keys,
           "queries": [q.astype("<f4").tobytes().hex() for q in unit]}
    done = subprocess.run([sys.executable, "-m", "bench.embedded_key_scan",
                           "--sqlite-vec-worker"], input=json.dumps(job), text=True,
                          capture_output=True, cwd=Path(__file__).resolve().parents[1],
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [
                              str(Path(__file__).resolve().parents[1]),
                              os.environ.get("PYTHONPATH")]))))
    if done.returncode < 0:
        name = signal.Signals(-done.returncode).name
        return None, f"sqlite-vec's process died of {name} (an instruction this CPU lacks?)"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        return None, f"sqlite-vec could not run here: {last}"
    return json.loads(done.stdout), ""


def agreement(ours: list[list[str]], theirs: list[list[str]]) -> float:
    return statistics.mean(len(set(a) & set(b)) / max(1, len(b)) for a, b in zip(
        ours, theirs, strict=True))


def main() -> None:
    if sys.argv[1:] == ["--sqlite-vec-worker"]:
        sqlite_vec_worker()
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=500_000, help="rows in the store")
    parser.add_argument("--large-keys", type=int, nargs="+", default=[5000, 50000],
                        help="rows of each large key")
    parser.add_argument("--small-key-rows", type=int, default=100,
                        help="rows of each of the other keys")
    parser.add_argument("--queries", type=int, default=15, help="per key and store")
    add_json_argument(parser)
    args = parser.parse_args()

    rng = np.random.default_rng(7)
    sizes = key_sizes(args.rows, args.large_keys, args.small_key_rows)
    measured = [key for key in sizes if key.startswith("large-")] + ["small-0"]
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as home:
        path = Path(home) / "vectors.sqlite3"
        store = EmbeddedVectorStore(str(path), DIMS, collection_name=COLLECTION)
        began = time.monotonic()
        print(f"filling {args.rows} rows ({len(sizes)} keys) ...", flush=True)
        fill(store, sizes, rng)
        filled = time.monotonic() - began
        queries = rng.standard_normal((args.queries, DIMS)).astype(np.float32)
        for key in measured:
            wall, cpu, found = timed_embedded(store, key, queries, sizes[key])
            results[key] = {"embedded": (wall, cpu), "ids": found}
            print(f"  {sizes[key]}-row key: embedded {wall:.1f} ms ({cpu:.1f} ms CPU)",
                  flush=True)
        store.close()
        theirs, reason = run_sqlite_vec(path, measured, queries)
        megabytes = path.stat().st_size / 1e6

    load = os.getloadavg()
    print(f"\none key's search, top_k={TOP_K}, {args.rows} rows in {len(sizes)} keys "
          f"({megabytes:.0f} MB file, filled in {filled:.0f} s), median of {args.queries} "
          f"queries; load average {load[0]:.1f}, {os.cpu_count()} cores")
    if theirs is None:
        print(f"sqlite-vec left out: {reason}")
    print(f"{'key rows':>9}{'embedded ms':>13}{'(CPU)':>8}{'sqlite-vec ms':>15}{'(CPU)':>8}"
          f"{'embedded/sqlite-vec':>21}{'(CPU)':>7}{'agree':>7}")
    for key in measured:
        wall, cpu = results[key]["embedded"]
        line = f"{sizes[key]:>9}{wall:>13.1f}{cpu:>8.1f}"
        if theirs is not None:
            other = theirs[key]
            line += (f"{other['wall']:>15.1f}{other['cpu']:>8.1f}"
                     f"{wall / other['wall']:>20.2f}x{cpu / max(other['cpu'], 1e-3):>6.2f}x"
                     f"{agreement(results[key]['ids'], other['ids']):>7.2f}")
        print(line)
    largest = max(measured, key=sizes.__getitem__)
    if theirs is not None:
        other = theirs[largest]
        print(f"\nat the {sizes[largest]}-row key, embedded / sqlite-vec: "
              f"{results[largest]['embedded'][0] / other['wall']:.2f}x wall, "
              f"{results[largest]['embedded'][1] / max(other['cpu'], 1e-3):.2f}x CPU "
              "(target <= 1.5)")
    order = sorted(measured, key=sizes.__getitem__)
    series = {"embedded store": [(sizes[k], results[k]["embedded"][0]) for k in order]}
    if theirs is not None:
        series["sqlite-vec (same rows)"] = [(sizes[k], theirs[k]["wall"]) for k in order]
    write_results(args.json, bench="embedded_key_scan", series=series,
                  title=f"One key's search on the embedded store ({args.rows} rows)",
                  x_label="rows of the key", y_label="p50 ms per search",
                  note="" if theirs is not None else f"sqlite-vec left out: {reason}")


if __name__ == "__main__":
    main()
