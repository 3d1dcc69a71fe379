"""Many worker threads on many keys while the mailbox thread keeps switching context.

Runs on the embedded on-disk Qdrant, the store that loses writes and raises
under concurrent calls when left unprotected.
"""

from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory
from tests.memory.stress import stress


def test_many_worker_threads_on_many_keys_never_see_each_others_items(tmp_path):
    memory, release = acquire_memory(StoreSpec("stress-job", embedder="hashing", base_dir=tmp_path))
    try:
        outcome = stress(memory, "stress-job", threads=16, keys=32, rounds=70)
    finally:
        release()
    assert outcome.operations == 32 * 70
    assert outcome.failures == []
    assert outcome.leaks == []
    assert outcome.lost_or_foreign_rows == {}
