"""Many worker threads on many keys while the mailbox thread keeps switching context.

Runs on the stores of one process: the embedded default (SQLite), which is
thread-safe (every thread reads and writes through a connection of its own, so
calls of different threads run at the same time), and embedded Qdrant on disk,
which loses writes and raises under concurrent calls when left unprotected, so
long-term memory lets one call at a time into it.
"""

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory
from flink_agents_ltm.integrations.mem0.serialized_store import SerializedVectorStore
from tests.memory.conftest import unwrapped
from tests.memory.stress import stress

STORE_CALLS = ("insert", "search", "keyword_search", "get", "list", "update", "delete")


class CallsInside:
    """Counts the calls inside a real store at once: wraps its methods, only to observe."""

    def __init__(self, store):
        self.inside = 0
        self.most = 0
        self._lock = threading.Lock()
        for name in STORE_CALLS:
            setattr(store, name, self._observed(getattr(store, name)))

    def _observed(self, method):
        def call(*args, **kwargs):
            with self._lock:
                self.inside += 1
                self.most = max(self.most, self.inside)
            try:
                return method(*args, **kwargs)
            finally:
                with self._lock:
                    self.inside -= 1

        return call


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


def test_on_embedded_qdrant_many_worker_threads_lose_nothing_and_enter_the_store_one_at_a_time(
        tmp_path):
    qdrant = {"provider": "qdrant", "config": {"path": str(tmp_path / "qdrant"),
                                               "on_disk": True}}
    memory, release = acquire_memory(StoreSpec("stress-job", embedder="hashing",
                                               vector_store=qdrant, base_dir=tmp_path))
    try:
        calls = CallsInside(unwrapped(memory))
        outcome = stress(memory, "stress-job", threads=16, keys=16, rounds=12)
    finally:
        release()
    assert outcome.operations == 16 * 12
    assert outcome.failures == []
    assert outcome.leaks == []
    assert outcome.lost_or_foreign_rows == {}
    assert calls.most == 1


def test_unguarded_embedded_qdrant_fails_under_8_threads_which_is_why_it_is_guarded(tmp_path):
    """The reason for the guard, measured on Qdrant's own store: concurrent inserts raise
    (its on-disk storage is one SQLite connection) and leave the collection unreadable."""
    qdrant = {"provider": "qdrant", "config": {"path": str(tmp_path / "qdrant"),
                                               "on_disk": True}}
    memory, release = acquire_memory(StoreSpec("raw-job", embedder="hashing",
                                               vector_store=qdrant, base_dir=tmp_path))
    raw = unwrapped(memory)
    errors: list[str] = []

    def insert(n):
        try:
            raw.insert([[0.1] * 384], [{"user_id": "raw-job", "agent_id": f"k{n}"}],
                       [str(uuid.uuid4())])
        except Exception as error:  # noqa: BLE001 - whatever it raises is counted
            errors.append(type(error).__name__)

    try:
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(insert, range(400)))
        assert errors
    finally:
        release()


def test_on_the_embedded_default_a_thread_searches_while_another_is_inside_the_store(
        tmp_path):
    """Not serialized: a search of one thread completes while another thread's search is
    held inside the store (if calls were serialized, the second would wait for ever)."""
    memory, release = acquire_memory(StoreSpec("job", embedder="hashing", base_dir=tmp_path))
    ltm = Mem0LongTermMemory("job", memory)
    assert not isinstance(memory.vector_store, SerializedVectorStore)
    store = memory.vector_store
    real_search = store.search
    inside, leave = threading.Event(), threading.Event()

    def search_held_inside(*args, **kwargs):
        found = real_search(*args, **kwargs)
        if threading.current_thread().name.startswith("held"):
            inside.set()
            leave.wait(60)
        return found

    store.search = search_held_inside
    try:
        ltm.switch_context("alice", "obs-a", False)
        alice = ltm.get_memory_set("notes")
        alice.add("alice drinks green tea")
        ltm.switch_context("bob", "obs-b", False)
        bob = ltm.get_memory_set("notes")
        bob.add("bob drinks black coffee")
        with ThreadPoolExecutor(1, thread_name_prefix="held") as held, \
                ThreadPoolExecutor(1, thread_name_prefix="free") as free:
            alice_search = held.submit(alice.search, "tea")
            assert inside.wait(60)
            bob_search = free.submit(bob.search, "coffee")
            assert [i.value for i in bob_search.result(timeout=60)] == [
                "bob drinks black coffee"]
            assert not alice_search.done()  # still held inside the store
            leave.set()
            assert [i.value for i in alice_search.result(timeout=60)] == [
                "alice drinks green tea"]
    finally:
        leave.set()
        release()
