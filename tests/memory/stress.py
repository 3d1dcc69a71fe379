"""The worker-thread stress scenario, shared by every store that claims thread safety.

The mailbox thread keeps switching context over many keys and hands each freshly
obtained set to a pool; workers add, search, read and read foreign ids. The
outcome counts what a user would call a bug: failed operations, values of
another key in any result, and writes that did not land.
"""

import random
import threading
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from tests.memory.conftest import rows_of


@dataclass
class StressOutcome:
    operations: int
    failures: list[BaseException]
    leaks: list[str]
    lost_or_foreign_rows: dict[str, tuple[int, int]]  # key -> (stored, expected)


def stress(memory, job_id: str, threads: int, keys: int, rounds: int) -> StressOutcome:
    ltm = Mem0LongTermMemory(job_id, memory)
    names = [f"key-{n:02d}" for n in range(keys)]
    added: dict[str, list[str]] = defaultdict(list)
    added_lock = threading.Lock()
    leaks: list[str] = []

    def work(memory_set, key, n):
        if n % 4 in (0, 1):
            ids = memory_set.add([f"{key} note {n}"], {"n": n})
            with added_lock:
                added[key].extend(ids)
            return
        if n % 4 == 2:
            values = [item.value for item in memory_set.search(f"{key} note", limit=50)]
        else:
            values = [item.value for item in memory_set.get(limit=1000)]
            with added_lock:
                foreign = [i for k, ids in added.items() if k != key for i in ids[-3:]]
            values += [item.value for item in memory_set.get(foreign)]
        leaks.extend(v for v in values if not v.startswith(f"{key} "))

    rng = random.Random(7)
    with ThreadPoolExecutor(threads, thread_name_prefix="durable-worker") as pool:
        futures = []
        for n in range(rounds):
            for key in rng.sample(names, len(names)):
                ltm.switch_context(key, f"obs-{key}-{n}", False)  # the mailbox moves on
                futures.append(pool.submit(work, ltm.get_memory_set("notes"), key, n))
    expected = sum(1 for n in range(rounds) if n % 4 < 2)
    wrong_rows = {}
    for key in names:
        stored = rows_of(memory, key, job=job_id)
        mine = [value for value in stored if value.startswith(f"{key} ")]
        if len(mine) != expected or len(stored) != expected or len(added[key]) != expected:
            wrong_rows[key] = (len(stored), expected)
    return StressOutcome(
        operations=len(futures),
        failures=[f.exception() for f in futures if f.exception() is not None],
        leaks=leaks,
        lost_or_foreign_rows=wrong_rows,
    )
