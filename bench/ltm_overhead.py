"""Plugin overhead against raw Mem0 calls on the same store, median per operation.

Both sides use one ``mem0.Memory`` (the embedded default: MiniLM + the SQLite
store) and one key; raw and plugin calls alternate so that load and store
growth hit both alike. Target: add and search within 5 % of raw Mem0.

    python -m bench.ltm_overhead [--ops 200] [--embedder minilm|hashing]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory

TOPICS = ["tea", "parcel", "invoice", "dog", "refund", "password", "delivery", "discount"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=200, help="operations per side and kind")
    parser.add_argument("--embedder", default="minilm", choices=["minilm", "hashing"])
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as home:
        memory, release = acquire_memory(
            StoreSpec("bench-job", embedder=args.embedder, base_dir=Path(home)))
        ltm = Mem0LongTermMemory("bench-job", memory)
        ltm.switch_context("customer-1", "obs", True)
        memory_set = ltm.get_memory_set("notes")
        scope = {"user_id": "bench-job", "agent_id": "customer-1", "run_id": "notes"}

        def raw_add(text):
            memory.add([{"role": "user", "content": text}], **scope, infer=False)

        def raw_search(text):
            memory.search(text, top_k=5, filters=scope, threshold=0.0)

        timings: dict[str, list[float]] = {k: [] for k in ("raw add", "plugin add",
                                                          "raw search", "plugin search")}

        def timed(name, fn, text):
            started = time.perf_counter()
            fn(text)
            timings[name].append(time.perf_counter() - started)

        for warmup in range(5):
            raw_add(f"warm up {warmup}")
        print(f"{args.ops} operations per side, embedder {args.embedder} ...", flush=True)
        for n in range(args.ops):
            text = f"customer note {n} about the {TOPICS[n % len(TOPICS)]}"
            first, second = (("raw", "plugin") if n % 2 else ("plugin", "raw"))
            for side in (first, second):
                timed(f"{side} add", raw_add if side == "raw" else memory_set.add, text)
            query = f"what about the {TOPICS[n % len(TOPICS)]}"
            for side in (first, second):
                timed(f"{side} search", raw_search if side == "raw" else
                      (lambda q: memory_set.search(q, limit=5)), query)
            if (n + 1) % 50 == 0:
                print(f"  {n + 1}/{args.ops}", flush=True)
        ltm.close()
        release()

    print(f"\n{'operation':<10}{'raw Mem0 (ms)':>16}{'plugin (ms)':>14}{'ratio':>9}")
    for op in ("add", "search"):
        raw = statistics.median(timings[f"raw {op}"]) * 1000
        plugin = statistics.median(timings[f"plugin {op}"]) * 1000
        print(f"{op:<10}{raw:>16.2f}{plugin:>14.2f}{plugin / raw:>9.3f}")
    print("\ntarget: ratio <= 1.05 for add and search")


if __name__ == "__main__":
    main()
