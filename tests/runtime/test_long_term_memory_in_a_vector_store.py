"""A job whose agent keeps its long-term memory in a vector store resource of ours: a
Mem0VectorStore over FAISS, declared on the environment and named by
long-term-memory.vector-store."""

import pytest
from pyflink.common import Types

from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.api.resources import ResourceDescriptor, ResourceType
from flink_agents_ltm.integrations.mem0.hashing_embedder import HashingEmbedding
from flink_agents_ltm.integrations.mem0.vector_store import Mem0VectorStore
from runtime.store_memory_agents import StoredNotesAgent

pytestmark = pytest.mark.cluster


def faiss_store(folder):
    return ResourceDescriptor(Mem0VectorStore, provider="faiss", embedding_model="hashing",
                              config={"path": str(folder)}, collection="memories")


def test_an_agents_long_term_memory_lives_in_a_declared_vector_store(flink_env, tmp_path):
    env = flink_env()
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    agents_env.add_resource("memories", ResourceType.VECTOR_STORE, faiss_store(tmp_path))
    config = agents_env.get_config()
    config.set(LongTermMemoryOptions.VECTOR_STORE, "memories")
    config.set(LongTermMemoryOptions.EMBEDDING_MODEL_SETUP, "hashing")
    inputs = [("alice", 1, "alice drinks green tea"), ("bob", 1, "bob drinks black coffee"),
              ("alice", 2, "alice drinks oolong tea"), ("alice", 3, "alice drinks no coffee")]
    stream = env.from_collection(
        inputs, type_info=Types.TUPLE([Types.STRING(), Types.INT(), Types.STRING()]))
    out = agents_env.from_datastream(stream, key_selector=lambda r: r[0]).apply(
        StoredNotesAgent())
    results = sorted(out.to_datastream().execute_and_collect())

    assert [(key, n, found) for key, n, found, _ in results] == [
        ("alice", 1, ["alice drinks green tea"]),
        ("alice", 2, ["alice drinks green tea", "alice drinks oolong tea"]),
        ("alice", 3, ["alice drinks no coffee", "alice drinks oolong tea"]),
        ("bob", 1, ["bob drinks black coffee"])]
    assert max(size for *_, size in results) == 4  # the action's store is the memory's

    store = Mem0VectorStore("faiss", {"path": str(tmp_path)}, embedding_model="hashing",
                            collection="memories")
    store.open(lambda name, kind: HashingEmbedding())
    try:  # what the job left, read around Mem0: one row per note, scoped by key and set
        rows = sorted((d.metadata["agent_id"], d.metadata["run_id"], d.content)
                      for d in store.get(limit=None))
    finally:
        store.close()
    assert rows == [("alice", "notes", "alice drinks green tea"),
                    ("alice", "notes", "alice drinks no coffee"),
                    ("alice", "notes", "alice drinks oolong tea"),
                    ("bob", "notes", "bob drinks black coffee")]
