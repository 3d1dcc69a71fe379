"""A job configured the way an Apache Flink Agents user configures one, or with our keys.

``python upstream_keys_job.py upstream``: the options live in the ``agent:`` section of
``$FLINK_CONF_DIR/config.yaml`` (upstream's place for them) under upstream's keys, and the
program names the vector store with ``LongTermMemoryOptions.Mem0.VECTOR_STORE``, as
upstream's long-term memory page does. ``ours``: the same options under our keys. Each
output line shows what the options did: the failing input's run was dropped (error
handling), and the long-term memory of a key is in the declared store, embedded by the
declared model (else its dimension would not fit), scoped by the job identifier.
"""

import sys

from pyflink.datastream import StreamExecutionEnvironment

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.api.resources import (
    ResourceDescriptor,
    ResourceType,
    embedding_model_setup,
    vector_store_setup,
)
from flink_agents_ltm.integrations.mem0.hashing_embedder import HashingEmbedding
from flink_agents_ltm.integrations.mem0.vector_store import Mem0VectorStore


class SmallHashing(HashingEmbedding):
    """64 dimensions: the store built for it refuses the default model's 384, so a job whose
    embedding-model option did not arrive fails."""

    def __init__(self, config=None):
        super().__init__(config)
        self.config.embedding_dims = 64


class NotesAgent(Agent):
    @embedding_model_setup
    def hashing():
        return ResourceDescriptor(SmallHashing)

    @vector_store_setup
    def memories():
        return ResourceDescriptor(Mem0VectorStore, embedding_model="hashing", provider="qdrant",
                                  config={"collection_name": "memories", "path": ":memory:"})

    @action(InputEvent)
    def remember(event, ctx):
        if event.input == "boom":
            raise RuntimeError("this input fails on purpose")
        ctx.long_term_memory.get_memory_set("notes").add(event.input)
        store = ctx.get_resource("memories", ResourceType.VECTOR_STORE)
        rows = store.get(filters={"agent_id": ctx.key}, limit=None)
        ctx.send_event(OutputEvent((ctx.key, sorted(
            (row.content, row.metadata["user_id"], row.metadata["run_id"]) for row in rows))))


def main(keys: str) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    config = agents_env.get_config()
    if keys == "upstream":
        config.set(LongTermMemoryOptions.Mem0.VECTOR_STORE, "memories")
    else:
        config.set(LongTermMemoryOptions.VECTOR_STORE, "memories")
    notes = env.from_collection(["alice likes tea", "boom", "bob likes coffee"])
    outputs = (agents_env.from_datastream(notes, key_selector=lambda note: note.split()[0])
               .apply(NotesAgent()).to_datastream())
    with outputs.execute_and_collect("upstream-keys") as results:
        for line in results:
            print(repr(line))


if __name__ == "__main__":
    main(sys.argv[1])
