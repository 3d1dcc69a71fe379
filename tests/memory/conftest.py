"""Long-term memory over real Mem0 and real embedded stores.

``ltm`` uses the deterministic hashing embedder and a store of its own, so each
test starts empty and runs in milliseconds: every test using it runs twice, on
the embedded default (SQLite) and on an in-memory Qdrant collection. Tests about
the default (MiniLM, on-disk store) build it with ``from_config``.
``RecordingMemory`` forwards every call to the real ``mem0.Memory`` and
records its name: how tests prove that a refused operation never reached Mem0.
"""

import threading
import uuid

import pytest

from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory
from flink_agents_ltm.integrations.mem0.scope import mem0_id
from tests.memory.contracts import NAMES, implementation

MEM0_CALLS = ("add", "get", "get_all", "search", "delete", "delete_all", "update", "history")


class RecordingMemory:
    def __init__(self, memory):
        self._memory = memory
        self.calls: list[str] = []

    def __getattr__(self, name):
        attribute = getattr(self._memory, name)
        if name not in MEM0_CALLS:
            return attribute

        def recorded(*args, **kwargs):
            self.calls.append(name)
            return attribute(*args, **kwargs)

        return recorded


@pytest.fixture(params=["embedded", "qdrant"])
def mem0_memory(request, tmp_path):
    qdrant = {"provider": "qdrant",
              "config": {"collection_name": f"c{uuid.uuid4().hex}", "path": ":memory:"}}
    spec = StoreSpec(job_id="test-job", embedder="hashing", base_dir=tmp_path,
                     vector_store=qdrant if request.param == "qdrant" else None)
    memory, release = acquire_memory(spec)
    yield memory
    release()


@pytest.fixture
def recording_memory(mem0_memory):
    return RecordingMemory(mem0_memory)


@pytest.fixture
def ltm(recording_memory):
    """A long-term memory whose mailbox thread is the test's thread."""
    return Mem0LongTermMemory(job_id="test-job", memory=recording_memory)


def rows_of(memory, key, set_name="notes", job="test-job"):
    """What Mem0 itself holds for one key and set, read around the plugin."""
    found = memory.get_all(filters={"user_id": job, "agent_id": mem0_id(key), "run_id": set_name},
                           top_k=1000)
    return sorted(row["memory"] for row in found["results"])


def unwrapped(memory):
    """The Mem0 memory's own vector store, under a lock wrapper if it has one."""
    return getattr(memory.vector_store, "inner", memory.vector_store)


def run_on_worker(fn):
    """Run ``fn`` on another thread (like durable_execute_async) and return or raise its result."""
    outcome = {}

    def target():
        try:
            outcome["value"] = fn()
        except BaseException as error:  # noqa: BLE001 - re-raised on the caller's thread
            outcome["error"] = error

    worker = threading.Thread(target=target, name="durable-worker")
    worker.start()
    worker.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


@pytest.fixture(params=NAMES)
def impl(request):
    """A fresh, empty memory of every implementation of the contract in turn (the contract
    tests' subject); pgvector on the session's server."""
    pgvector = (request.getfixturevalue("pgvector_session")[0]
                if request.param == "mem0-pgvector" else None)
    with implementation(request.param, pgvector=pgvector) as found:
        yield found
