"""Every implementation of the long-term-memory contract, built the same way for tests.

An :class:`Implementation` is a fresh, empty memory plus a way to read what its
store holds *around* the memory (so a test can see what really reached the
store) and to record which core calls ran (so a test can prove a refused
operation never reached it). The contract tests run over all of them.
"""

from __future__ import annotations

import copy
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from flink_agents_ltm.api.memory.long_term_memory import BaseLongTermMemory, MemoryLimits
from flink_agents_ltm.api.resources import ResourceType
from flink_agents_ltm.integrations.mem0.hashing_embedder import HashingEmbedding
from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory
from flink_agents_ltm.integrations.mem0.scope import mem0_id
from flink_agents_ltm.integrations.mem0.vector_store import Mem0VectorStore
from flink_agents_ltm.runtime.memory.in_memory_long_term_memory import InMemoryLongTermMemory

CORE = ("_add", "_get", "_search", "_update", "_delete", "_erase_key")


@dataclass
class Implementation:
    name: str
    ltm: BaseLongTermMemory
    raw_values: Callable[[str, str], list[str]]  # (key, set name) -> values in the store
    core_calls: list[str] = field(default_factory=list)
    reopen: Callable[[], BaseLongTermMemory] | None = None  # a new memory on the same store
    open_job: Callable[[str], BaseLongTermMemory] | None = None  # another job, same store

    def record_core_calls(self) -> None:
        for name in CORE:
            real = getattr(self.ltm, name)

            def recorded(*args, _real=real, _name=name, **kwargs):
                self.core_calls.append(_name)
                return _real(*args, **kwargs)

            setattr(self.ltm, name, recorded)


def _in_memory(job: str, limits: MemoryLimits | None) -> Iterator[Implementation]:
    ltm = InMemoryLongTermMemory(job, limits=limits)

    def raw(key: str, set_name: str) -> list[str]:
        return sorted(row.value for row in ltm._sets.get((job, key, set_name), {}).values())

    def open_job(other_job: str) -> BaseLongTermMemory:
        other = InMemoryLongTermMemory(other_job)
        other._sets, other._lock = ltm._sets, ltm._lock
        return other

    yield Implementation("in-memory", ltm, raw, open_job=open_job)


def _mem0(job: str, limits: MemoryLimits | None, vector_store: dict
          ) -> Iterator[Implementation]:
    memory, release = acquire_memory(StoreSpec(job_id=job, embedder="hashing",
                                               vector_store=vector_store))
    opened = [Mem0LongTermMemory(job, memory, limits=limits)]

    def raw(key: str, set_name: str) -> list[str]:
        found = memory.get_all(filters={"user_id": mem0_id(job), "agent_id": mem0_id(key),
                                        "run_id": mem0_id(set_name)}, top_k=100_000)
        return sorted(row["memory"] for row in found["results"])

    def reopen() -> BaseLongTermMemory:
        opened.append(Mem0LongTermMemory(job, memory, limits=limits))
        return opened[-1]

    def open_job(other_job: str) -> BaseLongTermMemory:
        return Mem0LongTermMemory(other_job, memory)

    try:
        yield Implementation("mem0", opened[0], raw, reopen=reopen, open_job=open_job)
    finally:
        release()


def _mem0_on_our_store(job: str, limits: MemoryLimits | None) -> Iterator[Implementation]:
    """Mem0 whose vector store is one of ours (a declared resource, as the runtime opens
    it): a Mem0VectorStore over embedded Qdrant, embedding with the hashing model."""
    embedder = HashingEmbedding()

    def get_resource(name: str, resource_type: ResourceType) -> HashingEmbedding:
        assert (name, resource_type) == ("embedder", ResourceType.EMBEDDING_MODEL)
        return embedder

    store = Mem0VectorStore("qdrant", {"path": ":memory:"}, embedding_model="embedder",
                            collection=f"c{uuid.uuid4().hex[:12]}")
    store.open(get_resource)
    memory, release = acquire_memory(StoreSpec(job_id=job, embedder="hashing",
                                               vector_store=store))
    opened = [Mem0LongTermMemory(job, memory, limits=limits)]

    def raw(key: str, set_name: str) -> list[str]:
        found = store.get(filters={"user_id": mem0_id(job), "agent_id": mem0_id(key),
                                   "run_id": mem0_id(set_name)}, limit=None)
        return sorted(document.content for document in found)

    def reopen() -> BaseLongTermMemory:
        opened.append(Mem0LongTermMemory(job, memory, limits=limits))
        return opened[-1]

    def open_job(other_job: str) -> BaseLongTermMemory:
        return Mem0LongTermMemory(other_job, memory)

    try:
        yield Implementation("mem0-on-our-store", opened[0], raw, reopen=reopen,
                             open_job=open_job)
    finally:
        release()
        store.close()


def qdrant_in_memory() -> dict:
    return {"provider": "qdrant",
            "config": {"collection_name": f"c{uuid.uuid4().hex}", "path": ":memory:"}}


@contextmanager
def implementation(name: str, job: str = "test-job", limits: MemoryLimits | None = None,
                   pgvector: dict | None = None) -> Iterator[Implementation]:
    if name == "in-memory":
        yield from _context(_in_memory(job, limits))
    elif name == "mem0-qdrant":
        yield from _context(_mem0(job, limits, qdrant_in_memory()))
    elif name == "mem0-embedded":
        folder = tempfile.mkdtemp(prefix="contract-")
        try:
            yield from _context(_mem0(job, limits, {
                "provider": "flink_agents_embedded",
                "config": {"path": f"{folder}/vectors.sqlite3"}}))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    elif name == "mem0-pgvector":
        store = copy.deepcopy(pgvector)
        store["config"]["collection_name"] = f"t_{uuid.uuid4().hex[:12]}"
        yield from _context(_mem0(job, limits, store))
    elif name == "mem0-on-our-store":
        yield from _context(_mem0_on_our_store(job, limits))
    else:
        raise ValueError(name)


def _context(generator: Iterator[Implementation]) -> Iterator[Implementation]:
    try:
        yield next(generator)
    finally:
        generator.close()


NAMES = ("in-memory", "mem0-embedded", "mem0-qdrant", "mem0-pgvector", "mem0-on-our-store")
