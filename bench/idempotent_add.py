"""Add throughput with replay-stable ids (our path) against plain Mem0 ``add(infer=False)``.

Our ``MemorySet.add`` inside an action mints ids from the action's binding and writes them
as an upsert (Qdrant's insert; ``INSERT ... ON CONFLICT`` on pgvector), embedding a batch
in one call; Mem0's own ``Memory.add(messages, infer=False)`` gives each message a random
id, embeds and inserts one message at a time. Both sides share one ``mem0.Memory`` per
store and alternate, so load and table growth hit them alike. Stores: the embedded
default (MiniLM, SQLite) and a pgvector server that ``scripts/pgvector-server``
starts for the run (or ``--pgvector-config FILE``, a VECTOR_STORE JSON file). Target:
single-item adds no more than 5 % slower than Mem0's.

    python -m bench.idempotent_add [--ops 200] [--batch 8] [--embedder minilm|hashing]
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory
from flink_agents_ltm.integrations.mem0.scope import mem0_id

ROOT = Path(__file__).resolve().parents[1]
TOPICS = ["tea", "parcel", "invoice", "dog", "refund", "delivery", "discount", "address"]
ADDS_PER_ACTION = 20  # a fresh action (observation id) every so many adds, as inputs arrive


@contextmanager
def pgvector_server(config_file: str | None) -> Iterator[dict]:
    """A VECTOR_STORE value: from ``config_file``, else a server of our own for the run."""
    if config_file:
        yield json.loads(Path(config_file).read_text())
        return
    script = str(ROOT / "scripts" / "pgvector-server")
    folder = Path(tempfile.mkdtemp(prefix="bench-pgvector-", dir="/tmp"))
    folder.chmod(0o755)  # when run as root, postgres runs as another user who must enter it
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    try:
        subprocess.run([script, "start", "--dir", str(folder / "server"), "--port", str(port)],
                       check=True, capture_output=True)
        settings = folder / "store.json"
        subprocess.run([script, "status", "--dir", str(folder / "server"), "--output",
                        str(settings)], check=True, capture_output=True)
        yield json.loads(settings.read_text())
    finally:
        subprocess.run([script, "stop", "--dir", str(folder / "server")], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


def measure(spec: StoreSpec, ops: int, batch: int) -> dict[tuple[str, int], float]:
    """Median milliseconds per item of each side, for single adds and ``batch``-item adds."""
    memory, release = acquire_memory(spec)
    ltm = Mem0LongTermMemory(spec.job_id, memory)
    scope = {"user_id": mem0_id(spec.job_id), "agent_id": "customer-1", "run_id": "notes"}
    action = [0]

    def bound():
        action[0] += 1
        ltm.switch_context("customer-1", f"customer-1#{action[0]}@0", False)
        return ltm.get_memory_set("notes")

    memory_set = bound()

    def ours(texts: list[str]) -> None:
        memory_set.add(texts)

    def mem0(texts: list[str]) -> None:
        memory.add([{"role": "user", "content": t} for t in texts], **scope, infer=False)

    sides: dict[str, Callable[[list[str]], None]] = {"mem0": mem0, "ours": ours}
    timings: dict[tuple[str, int], list[float]] = {(s, n): [] for s in sides for n in (1, batch)}
    for warm_up in range(5):
        for side in sides.values():
            side([f"warm up {warm_up}"])
    try:
        for size in (1, batch):  # one size after the other: a batch must not slow the next add
            for n in range(ops):
                if n % ADDS_PER_ACTION == 0:
                    ltm.end_action(f"customer-1#{action[0]}@0", True)
                    memory_set = bound()
                texts = [f"customer note {n}.{i} about the {TOPICS[(n + i) % len(TOPICS)]}"
                         for i in range(size)]
                for side in (("mem0", "ours") if n % 2 else ("ours", "mem0")):
                    started = time.perf_counter()
                    sides[side](texts)
                    timings[(side, size)].append((time.perf_counter() - started) / size)
                if (n + 1) % 50 == 0:
                    print(f"    {size} item(s) per add: {n + 1}/{ops}", flush=True)
    finally:
        ltm.close()
        release()
    return {k: statistics.median(v) * 1000 for k, v in timings.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=200, help="adds per side, size and store")
    parser.add_argument("--batch", type=int, default=8, help="items per batched add")
    parser.add_argument("--embedder", default="minilm", choices=["minilm", "hashing"])
    parser.add_argument("--pgvector-config", metavar="FILE",
                        help="VECTOR_STORE JSON of an existing pgvector server (default: "
                             "start one with scripts/pgvector-server for the run)")
    args = parser.parse_args()

    results: dict[str, dict[tuple[str, int], float]] = {}
    with tempfile.TemporaryDirectory() as home:
        print(f"embedded store, {args.ops} adds per side and size, embedder {args.embedder}",
              flush=True)
        results["embedded"] = measure(StoreSpec("bench-idempotent", embedder=args.embedder,
                                                base_dir=Path(home)), args.ops, args.batch)
        with pgvector_server(args.pgvector_config) as store:
            store["config"]["collection_name"] = f"bench_{uuid.uuid4().hex[:10]}"
            print(f"pgvector, {args.ops} adds per side and size", flush=True)
            results["pgvector"] = measure(StoreSpec("bench-idempotent", vector_store=store,
                                                    embedder=args.embedder, base_dir=Path(home)),
                                          args.ops, args.batch)

    print(f"\n{'store':<10}{'items/add':>10}{'Mem0 add (ms/item)':>20}{'ours (ms/item)':>16}"
          f"{'ratio':>8}")
    for store, timings in results.items():
        for size in (1, args.batch):
            mem0, ours = timings[("mem0", size)], timings[("ours", size)]
            print(f"{store:<10}{size:>10}{mem0:>20.2f}{ours:>16.2f}{ours / mem0:>8.3f}")
    print("\ntarget: ratio <= 1.05 for single-item adds")


if __name__ == "__main__":
    main()
