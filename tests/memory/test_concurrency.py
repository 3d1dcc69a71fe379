"""Many worker threads on many keys while the mailbox thread keeps switching context.

Runs on the embedded on-disk Qdrant, the store that loses writes and raises
under concurrent calls when left unprotected.
"""

import random
import threading
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor

from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory
from flink_agents_ltm.runtime.memory.mem0_long_term_memory import Mem0LongTermMemory
from tests.memory.conftest import rows_of

THREADS, KEYS, ROUNDS = 16, 32, 70


def test_many_worker_threads_on_many_keys_never_see_each_others_items(tmp_path):
    memory, release = acquire_memory(StoreSpec("stress-job", embedder="hashing", base_dir=tmp_path))
    ltm = Mem0LongTermMemory("stress-job", memory)
    keys = [f"key-{n:02d}" for n in range(KEYS)]
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
    try:
        with ThreadPoolExecutor(THREADS, thread_name_prefix="durable-worker") as pool:
            futures = []
            for n in range(ROUNDS):
                for key in rng.sample(keys, len(keys)):
                    ltm.switch_context(key, f"obs-{key}-{n}", False)  # the mailbox moves on
                    futures.append(pool.submit(work, ltm.get_memory_set("notes"), key, n))
            failures = [f.exception() for f in futures if f.exception() is not None]
        assert failures == []
        assert leaks == []
        for key in keys:
            stored = rows_of(memory, key, job="stress-job")
            assert len(stored) == len(added[key]) == sum(1 for n in range(ROUNDS) if n % 4 < 2)
            assert all(value.startswith(f"{key} ") for value in stored)
    finally:
        ltm.close()
        release()
