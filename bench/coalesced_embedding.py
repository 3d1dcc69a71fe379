"""32 keys each adding one item at the same moment: coalesced embedding against one encode per call.

Each round, 32 worker threads (durable calls of 32 keys) call ``MemorySet.add`` with one
item at once, through the plugin, with the real MiniLM on the embedded default store.
``coalesced`` is the project's embedder (one encoder batch for whatever is waiting);
``one by one`` encodes each call alone under a lock, as the embedder did before (same
model, same thread count); ``one by one, torch default threads`` adds torch's default
intra-op thread count. Items per second, median over rounds, sides alternating.

    python -m bench.coalesced_embedding [--rounds 3] [--keys 32]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path

from flink_agents_ltm.integrations.mem0.local_embedder import LocalMiniLmEmbedding, shared_batcher
from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory


class OneByOneEmbedding(LocalMiniLmEmbedding):
    """Every call encodes alone, serialized by a lock: the embedder before coalescing."""

    _lock = threading.Lock()

    def __init__(self):
        super().__init__()
        self._encode = shared_batcher()._encode_batch

    def embed(self, text, memory_action=None):
        with self._lock:
            return self._encode([text])[0]


def items_per_second(ltm: Mem0LongTermMemory, keys: int, round_no: int) -> float:
    sets = []
    for key in range(keys):
        ltm.switch_context(f"customer-{key}", f"obs-{round_no}", True)
        sets.append(ltm.get_memory_set("notes"))
    start = threading.Barrier(keys + 1)
    errors: list[BaseException] = []

    def add(index: int) -> None:
        start.wait()
        try:
            sets[index].add(f"round {round_no}: customer {index} asks where order "
                            f"{index * 7 + round_no} is")
        except BaseException as error:  # noqa: BLE001 - reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=add, args=(i,)) for i in range(keys)]
    for thread in threads:
        thread.start()
    began = time.perf_counter()
    start.wait()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    if errors:
        raise errors[0]
    return keys / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keys", type=int, default=32)
    args = parser.parse_args()

    import torch

    default_threads = torch.get_num_threads()
    with tempfile.TemporaryDirectory() as home:
        memory, release = acquire_memory(StoreSpec("bench-job", base_dir=Path(home)))
        ltm = Mem0LongTermMemory("bench-job", memory)
        coalesced = memory.embedding_model
        one_by_one = OneByOneEmbedding()
        coalesced.embed("warm up")
        results: dict[str, list[float]] = {"coalesced": [], "one by one": [],
                                           "one by one, torch default threads": []}
        for round_no in range(args.rounds):
            for side in results:
                memory.embedding_model = coalesced if side == "coalesced" else one_by_one
                threads = default_threads if "default" in side else 1
                torch.set_num_threads(threads)
                results[side].append(items_per_second(ltm, args.keys, round_no))
            print(f"  round {round_no + 1}/{args.rounds}", flush=True)
        release()

    base = statistics.median(results["one by one"])
    print(f"\n{args.keys} keys adding one item each at once (items/s, median of "
          f"{args.rounds} rounds; torch default threads here: {default_threads})")
    for side, values in results.items():
        median = statistics.median(values)
        print(f"{side:<36}{median:>8.1f}  {median / base:>5.2f}x")
    print("target: coalesced >= 3x one by one")


if __name__ == "__main__":
    main()
