"""Expiry on the embedded store: what the expiry condition costs a search, and how fast a sweep
deletes.

Long-term memory adds "not expired" to the filter of every read (see
``flink_agents_ltm.api.memory.expiry``). This bench fills one key's set of the embedded
default store (SQLite file, hashing embedder so that embedding costs next to nothing and the
store's part shows) with ``--rows`` items, half of them with a ttl, and measures, side by side
in one run:

- search p50 (``limit`` 10, through ``Mem0LongTermMemory.search``) with the expiry condition
  (now) and without it (as before expiry existed: the condition patched out), queries
  alternating; target: at most 5 % more at 50k rows;
- sweep throughput: the ttl'd half expired by a manual clock, then ``sweep_expired(limit=B)``
  until it returns less than ``B``, in items deleted per second, next to deleting as many
  items by id (``MemorySet.delete(ids)``, same batch size).

    python -m bench.memory_expiry [--rows 50000] [--queries 40] [--batch 1000]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flink_agents_ltm.api.memory import long_term_memory as api
from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory

FILL_BATCH = 1000
WORDS = ("tea", "coffee", "order", "refund", "parcel", "invoice", "delivery", "address",
         "billing", "account", "password", "upgrade", "plan", "discount", "support", "call")


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def text(n: int) -> str:
    return " ".join(WORDS[(n * k + k) % len(WORDS)] for k in range(1, 8)) + f" note {n}"


def fill(ltm: Mem0LongTermMemory, key: str, rows: int) -> list[str]:
    """``rows`` items; the odd ones live an hour. Returns the ids with a ttl."""
    ltm.switch_context(key, None, True)
    notes = ltm.get_memory_set("notes")
    with_ttl: list[str] = []
    for first in range(0, rows, FILL_BATCH):
        numbers = range(first, min(rows, first + FILL_BATCH))
        notes.add([text(n) for n in numbers if n % 2 == 0], ttl=None)
        with_ttl += notes.add([text(n) for n in numbers if n % 2 == 1], ttl=3600)
    return with_ttl


def without_expiry_condition(filters: Any, now: float) -> Any:
    return filters


def search_p50s(ltm: Mem0LongTermMemory, key: str, queries: int) -> tuple[float, float]:
    """Median ms of a search with and without the expiry condition, alternating."""
    ltm.switch_context(key, None, True)
    notes = ltm.get_memory_set("notes")
    real = api.with_visibility
    timings: dict[bool, list[float]] = {True: [], False: []}
    for q in range(queries * 2):
        with_condition = q % 2 == 0
        api.with_visibility = real if with_condition else without_expiry_condition  # type: ignore[assignment]
        try:
            started = time.perf_counter()
            hits = notes.search(f"{WORDS[q % len(WORDS)]} {WORDS[(q * 3) % len(WORDS)]}",
                                limit=10)
            timings[with_condition].append(time.perf_counter() - started)
        finally:
            api.with_visibility = real  # type: ignore[assignment]
        assert len(hits) == 10, len(hits)
    return (statistics.median(timings[True]) * 1000, statistics.median(timings[False]) * 1000)


def rate(work: Callable[[], int]) -> float:
    started = time.perf_counter()
    done = work()
    return done / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--queries", type=int, default=40, help="per variant")
    parser.add_argument("--batch", type=int, default=1000, help="sweep and delete batch")
    args = parser.parse_args()
    began = time.monotonic()
    with tempfile.TemporaryDirectory() as home:
        memory, release = acquire_memory(StoreSpec("bench-expiry", embedder="hashing",
                                                   base_dir=Path(home)))
        try:
            clock = Clock()
            ltm = Mem0LongTermMemory("bench-expiry", memory, clock=clock)
            print(f"filling {args.rows} rows ...", flush=True)
            fill(ltm, "customer-1", args.rows)
            ids_to_delete = fill(ltm, "customer-2", args.rows)
            with_condition, without = search_p50s(ltm, "customer-1", args.queries)

            clock.now += 3600  # every ttl'd item of both keys has expired
            # customer-2's expired items go by id first (the reference), then the sweep
            # takes customer-1's (the same number, the same batch size).
            ltm.switch_context("customer-2", None, True)
            notes = ltm.get_memory_set("notes")

            def delete_by_id() -> int:
                return sum(len(notes.delete(ids_to_delete[i:i + args.batch]))
                           for i in range(0, len(ids_to_delete), args.batch))

            def sweep() -> int:
                total = 0
                while (swept := ltm.sweep_expired(limit=args.batch)) > 0:
                    total += swept
                return total

            delete_rate = rate(delete_by_id)
            sweep_rate = rate(sweep)
        finally:
            release()

    print(f"\nexpiry on the embedded store, {args.rows} rows in the searched set, "
          f"{time.monotonic() - began:.0f} s in all")
    print(f"{'search p50 (ms)':<34}{'with expiry':>12}{'without':>10}{'ratio':>8}")
    print(f"{'  Mem0LongTermMemory.search, 10':<34}{with_condition:>12.2f}{without:>10.2f}"
          f"{with_condition / without:>8.3f}  (target <= 1.05)")
    print(f"{'deletes (items/s)':<34}{'sweep':>12}{'by id':>10}{'ratio':>8}")
    print(f"{f'  batches of {args.batch}':<34}{sweep_rate:>12.0f}{delete_rate:>10.0f}"
          f"{sweep_rate / delete_rate:>8.3f}")


if __name__ == "__main__":
    main()
