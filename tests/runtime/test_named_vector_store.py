"""The long-term memory's vector store may be the name of a declared resource (design 004, PR 2):
a Mem0 store config, or a vector store of ours that Mem0 then keeps its memories in."""

from concurrent.futures import ThreadPoolExecutor

import pytest

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent
from flink_agents_ltm.api.filters import conjuncts, field_names, parse_filter
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions, MailboxThreadError
from flink_agents_ltm.api.resources import (
    MissingResourceError,
    ResourceDescriptor,
    ResourceType,
    embedding_model_setup,
    vector_store_setup,
)
from flink_agents_ltm.api.vector_stores import DimensionMismatchError, Document
from flink_agents_ltm.integrations.mem0.hashing_embedder import HashingEmbedding
from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.mem0.vector_store import Mem0VectorStore
from flink_agents_ltm.runtime.mailbox import MailboxThreadCheck
from flink_agents_ltm.runtime.resource_provider import ResourceProvider


class StoreAgent(Agent):
    @vector_store_setup
    def team_store():
        return ResourceDescriptor(provider="qdrant",
                                  config={"collection_name": "named_store", "path": ":memory:"})

    @embedding_model_setup
    def hashing():
        return ResourceDescriptor(HashingEmbedding)

    @action(InputEvent)
    def ignore(event, ctx):
        pass


def build(store_name):
    resources = ResourceProvider(StoreAgent(), mailbox_check=lambda: None)
    return Mem0LongTermMemory.from_config(
        "named-store-job",
        {LongTermMemoryOptions.VECTOR_STORE.key: store_name,
         LongTermMemoryOptions.EMBEDDING_MODEL_SETUP.key: "hashing"},
        resources=resources.for_long_term_memory)


def test_the_vector_store_may_be_a_declared_resource_named_in_the_config():
    ltm = build("team_store")
    try:
        assert ltm.memory.config.vector_store.config.collection_name == "named_store"
        ltm.switch_context("k1", "obs-1", False)
        notes = ltm.get_memory_set("notes")
        notes.add("kept in the declared store")
        assert [item.value for item in notes.get()] == ["kept in the declared store"]
    finally:
        ltm.close()


def test_a_vector_store_name_that_is_not_declared_is_named_in_the_error():
    with pytest.raises(MissingResourceError, match="no vector store named 'other_store'.*"
                                                   "declared: team_store"):
        build("other_store")


class KnowledgeAgent(Agent):
    @embedding_model_setup
    def hashing():
        return ResourceDescriptor(HashingEmbedding)

    @vector_store_setup
    def knowledge():
        return ResourceDescriptor(Mem0VectorStore, provider="qdrant", embedding_model="hashing",
                                  config={"path": ":memory:"}, collection="faq")

    @action(InputEvent)
    def ignore(event, ctx):
        pass


def test_an_action_gets_the_declared_store_and_worker_threads_may_use_it():
    resources = ResourceProvider(KnowledgeAgent(), MailboxThreadCheck())
    resources.open()
    try:
        store = resources.get("knowledge", ResourceType.VECTOR_STORE)
        assert isinstance(store, Mem0VectorStore) and store.size() == 0  # opened at start
        with pytest.raises(MissingResourceError, match="no embedding model named 'knowledge'"):
            resources.get("knowledge", ResourceType.EMBEDDING_MODEL)

        def on_a_worker(i):  # what a durable_execute_async call does with the store
            store.add(Document(f"answer number {i}", {"n": i}, f"a{i}"))
            return [d.id for d in store.query(f"answer number {i}", limit=1,
                                              filters={"n": i})]

        with ThreadPoolExecutor(4) as pool:
            assert list(pool.map(on_a_worker, range(16))) == [[f"a{i}"] for i in range(16)]
        with ThreadPoolExecutor(1) as pool, pytest.raises(MailboxThreadError):
            pool.submit(resources.get, "knowledge").result()  # lookups stay on the mailbox
    finally:
        resources.close()
    with pytest.raises(RuntimeError, match="not open"):
        store.size()  # the last operator closed it


class MemoryStoreAgent(Agent):
    """Long-term memory in a store of ours; the store holds 384-dimensional vectors
    (``knowledge``, embedded by ``hashing``) or 8 (``narrow``, vectors given)."""

    @embedding_model_setup
    def hashing():
        return ResourceDescriptor(HashingEmbedding)

    @vector_store_setup
    def knowledge():
        return ResourceDescriptor(Mem0VectorStore, provider="qdrant", embedding_model="hashing",
                                  config={"path": ":memory:"}, collection="memories")

    @vector_store_setup
    def narrow():
        return ResourceDescriptor(Mem0VectorStore, provider="qdrant",
                                  config={"path": ":memory:", "embedding_model_dims": 8})

    @action(InputEvent)
    def ignore(event, ctx):
        pass


def memory_on(resources, store_name):
    return Mem0LongTermMemory.from_config(
        "store-job",
        {LongTermMemoryOptions.VECTOR_STORE.key: store_name,
         LongTermMemoryOptions.EMBEDDING_MODEL_SETUP.key: "hashing"},
        resources=resources.for_long_term_memory)


def test_long_term_memory_lives_in_a_declared_vector_store_of_ours():
    resources = ResourceProvider(MemoryStoreAgent(), lambda: None)
    resources.open()
    try:
        store = resources.get("knowledge", ResourceType.VECTOR_STORE)
        ltm, other = memory_on(resources, "knowledge"), memory_on(resources, "knowledge")
        assert ltm.memory is other.memory  # one Mem0 per store object
        assert ltm.memory.vector_store.store is store
        ltm.switch_context("k1", "obs-1", False)
        [item] = ltm.get_memory_set("notes").add("kept in our store", {"topic": "tea"})
        [document] = store.get(item)
        assert (document.content, document.metadata["agent_id"], document.metadata["run_id"],
                document.metadata["topic"]) == ("kept in our store", "k1", "notes", "tea")
        asked = []
        query = store.query
        store.query = lambda *a, **kw: asked.append(kw["filters"]) or query(*a, **kw)
        assert [i.value for i in ltm.get_memory_set("notes").search(
            "our store", filters={"topic": {"gte": "t"}, "NOT": [{"n": "*"}]})] == [
            "kept in our store"]
        del store.query
        got = conjuncts(asked[0])
        assert got[-3:-1] == conjuncts(parse_filter(  # the store got all of it,
            {"topic": {"gte": "t"}, "NOT": [{"n": "*"}]}))
        assert field_names(got[-1]) == {"expires_at"}  # and the expiry condition
        ltm.close()
        other.close()
        assert store.size() == 1  # the memory gave Mem0 back; the store stays the provider's
    finally:
        resources.close()
    with pytest.raises(RuntimeError, match="not open"):
        store.size()


def test_a_declared_store_of_another_dimension_is_refused_when_the_memory_is_built():
    resources = ResourceProvider(MemoryStoreAgent(), lambda: None)
    resources.open()
    try:
        with pytest.raises(DimensionMismatchError, match="holds 8-dimensional vectors but "
                                                         "long-term memory's embedding model "
                                                         "produces 384"):
            memory_on(resources, "narrow")
    finally:
        resources.close()
