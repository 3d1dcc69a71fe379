"""One ``add`` of 100 items against 100 single adds, real embedding model, embedded and pgvector.

``MemorySet.add([...])`` embeds a list in one encoder batch and writes it in one store call
(one upsert); 100 single adds embed and write one item at a time. Both run inside an action
(replay-stable ids) on one key, through the plugin, on one shared ``mem0.Memory`` per store,
alternating round by round with a third side, 100 of Mem0's own ``add(infer=False)`` on the
same ``Memory`` (what a batch cost before: one Mem0 add per item); medians of the rounds.
Stores: the embedded default and a pgvector server that ``scripts/pgvector-server`` starts
for the run (or ``--pgvector-config FILE``). Target (issue 9): the batch at least 5x faster.

    python -m bench.batched_add [--rounds 5] [--items 100] [--embedder minilm|hashing]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from bench._results import add_json_argument, write_results
from bench.idempotent_add import pgvector_server
from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory


def seconds_per_side(spec: StoreSpec, rounds: int, items: int) -> dict[str, list[float]]:
    memory, release = acquire_memory(spec)
    try:
        ltm = Mem0LongTermMemory(spec.job_id, memory)
        memory.embedding_model.embed("warm up")
        times: dict[str, list[float]] = {"100 single adds": [], "one add of 100": [],
                                         "100 Mem0 adds": []}
        scope = {"user_id": "mem0-side", "agent_id": "customer-1", "run_id": "notes"}
        for round_no in range(rounds):
            for side in times:
                ltm.switch_context("customer-1", f"customer-1#{round_no}@{side}", False)
                notes = ltm.get_memory_set("notes")
                texts = [f"round {round_no} {side}: note {n} about order {n * 7 + round_no}"
                         for n in range(items)]
                started = time.perf_counter()
                if side == "one add of 100":
                    notes.add(texts)
                elif side == "100 Mem0 adds":
                    for text in texts:
                        memory.add([{"role": "user", "content": text}], infer=False, **scope)
                else:
                    for text in texts:
                        notes.add(text)
                times[side].append(time.perf_counter() - started)
            print(f"  {spec.job_id}: round {round_no + 1}/{rounds}", flush=True)
        return times
    finally:
        release()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--embedder", default="minilm", choices=["minilm", "hashing"])
    parser.add_argument("--pgvector-config", metavar="FILE",
                        help="a VECTOR_STORE JSON file (0600) instead of a server of our own")
    add_json_argument(parser)
    args = parser.parse_args()

    results = {}
    with tempfile.TemporaryDirectory() as home:
        results["embedded"] = seconds_per_side(
            StoreSpec("bench-batched-embedded", embedder=args.embedder, base_dir=Path(home)),
            args.rounds, args.items)
        with pgvector_server(args.pgvector_config) as store:
            store = {**store, "config": {**store["config"],
                                         "collection_name": f"batched_{int(time.time())}"}}
            results["pgvector"] = seconds_per_side(
                StoreSpec("bench-batched-pgvector", vector_store=store, embedder=args.embedder,
                          base_dir=Path(home)), args.rounds, args.items)

    print(f"\n{args.items} items on one key, {args.embedder}, median of {args.rounds} rounds")
    print(f"{'store':<10}{'Mem0 adds':>12}{'single adds':>14}{'one add':>10}"
          f"{'vs Mem0':>10}{'vs single':>11}")
    for store, times in results.items():
        mem0 = statistics.median(times["100 Mem0 adds"])
        singles = statistics.median(times["100 single adds"])
        batch = statistics.median(times["one add of 100"])
        print(f"{store:<10}{mem0 * 1000:>9.0f} ms{singles * 1000:>11.0f} ms"
              f"{batch * 1000:>7.0f} ms{mem0 / batch:>9.1f}x{singles / batch:>10.1f}x")
    print("target: one add at least 5x faster")
    write_results(args.json, bench="batched_add", kind="bar",
                  title=f"Storing {args.items} items on one key ({args.embedder})",
                  x_label="store", y_label="ms (median of rounds)", series={
                      label: [(store, statistics.median(times[label]) * 1000)
                              for store, times in results.items()]
                      for label in ("100 Mem0 adds", "100 single adds", "one add of 100")})


if __name__ == "__main__":
    main()
