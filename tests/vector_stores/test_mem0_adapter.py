"""The other direction: a real ``mem0.Memory`` keeps its memories in one of our vector
stores (on embedded Qdrant, pgvector and FAISS), scoped by user, agent and run."""

import pytest
from mem0 import Memory
from mem0.configs.base import MemoryConfig
from mem0.embeddings.configs import EmbedderConfig
from mem0.llms.configs import LlmConfig

import flink_agents_ltm.integrations.mem0.memory_factory  # noqa: F401  (registers providers)
from flink_agents_ltm.api.vector_stores import DimensionMismatchError
from flink_agents_ltm.integrations.mem0.resource_store import (
    FlinkAgentsMem0VectorStore,
    mem0_vector_store_config,
)


@pytest.fixture
def memory(store, tmp_path):
    config = MemoryConfig(history_db_path=str(tmp_path / "history.db"))
    config.vector_store = mem0_vector_store_config(store, dimensions=384)
    config.embedder = EmbedderConfig.model_construct(provider="flink_agents_hashing",
                                                     config={"embedding_dims": 384})
    config.llm = LlmConfig.model_construct(provider="flink_agents_none", config={"model": "none"})
    memory = Memory(config)
    yield memory
    memory.close()


def remember(memory, text, agent, run="prefs", **metadata):
    added = memory.add(text, user_id="job", agent_id=agent, run_id=run, infer=False,
                       metadata=metadata or None)
    return added["results"][0]["id"]


def texts(answer):
    return sorted(item["memory"] for item in answer["results"])


def test_memory_writes_go_to_our_store_as_documents(memory, store):
    assert isinstance(memory.vector_store, FlinkAgentsMem0VectorStore)
    memory_id = remember(memory, "alice drinks green tea", "alice", topic="drinks")
    [document] = store.get(memory_id)
    assert document.content == "alice drinks green tea"
    assert (document.metadata["user_id"], document.metadata["agent_id"],
            document.metadata["run_id"], document.metadata["topic"]) == (
        "job", "alice", "prefs", "drinks")


def test_get_all_and_search_stay_inside_their_scope(memory):
    remember(memory, "alice drinks green tea", "alice")
    remember(memory, "alice owns a dog", "alice", run="pets")
    remember(memory, "bob drinks green tea too", "bob")
    assert texts(memory.get_all(filters={"user_id": "job", "agent_id": "alice"})) == [
        "alice drinks green tea", "alice owns a dog"]
    assert texts(memory.get_all(filters={"agent_id": "alice", "run_id": "pets"})) == [
        "alice owns a dog"]
    found = memory.search("green tea", filters={"user_id": "job", "agent_id": "bob"}, top_k=5)
    assert texts(found) == ["bob drinks green tea too"]
    assert found["results"][0]["score"] > 0


def test_mem0s_enhanced_filters_reach_the_store_intact(memory):
    remember(memory, "tea in 2019", "alice", year=2019, tag="Old")
    remember(memory, "tea in 2023", "alice", year=2023, tag="new")
    remember(memory, "tea by bob", "bob", year=2023, tag="new")
    search = lambda filters: texts(memory.search(  # noqa: E731
        "tea", filters={"user_id": "job", **filters}, top_k=10))
    assert search({"year": {"gte": 2020}}) == ["tea by bob", "tea in 2023"]
    assert search({"OR": [{"agent_id": "bob"}, {"tag": {"icontains": "OLD"}}]}) == [
        "tea by bob", "tea in 2019"]
    assert search({"agent_id": "alice", "NOT": [{"year": 2019}]}) == ["tea in 2023"]


def test_update_get_history_and_delete_through_mem0(memory, store):
    memory_id = remember(memory, "alice drinks green tea", "alice")
    memory.update(memory_id, "alice drinks oolong now")
    assert memory.get(memory_id)["memory"] == "alice drinks oolong now"
    assert store.get(memory_id)[0].content == "alice drinks oolong now"
    assert [h["event"] for h in memory.history(memory_id)] == ["ADD", "UPDATE"]
    memory.delete(memory_id)
    assert memory.get(memory_id) is None and store.size() == 0


def test_an_insert_rewrites_the_rows_whose_ids_are_stored_and_adds_the_others(memory, store):
    """Long-term memory writes again under the same ids when Flink replays an action."""
    known = remember(memory, "alice drinks green tea", "alice")
    fresh = "0b7ad7b4-1b4f-4f43-9a47-1f5a3e2d9c11"
    vector = list(store.embed(["oolong"])[0])
    memory.vector_store.insert([vector, vector], [{"data": "alice drinks oolong", "n": 1},
                                                  {"data": "bob drinks coffee", "n": 2}],
                               [known, fresh])
    assert sorted((d.id, d.content, d.metadata.get("n")) for d in store.get()) == sorted(
        [(known, "alice drinks oolong", 1), (fresh, "bob drinks coffee", 2)])
    hits = store.query(vector=vector, limit=2)  # the vector was rewritten too
    assert {d.id for d in hits} == {known, fresh} and min(d.score for d in hits) > 0.99


def test_delete_all_of_one_scope_leaves_the_others(memory, store):
    for i in range(5):
        remember(memory, f"alice note {i}", "alice")
    keep = remember(memory, "bob note", "bob")
    memory.delete_all(user_id="job", agent_id="alice")
    assert [d.id for d in store.get()] == [keep]


def test_mem0s_entity_store_gets_a_collection_of_its_own(memory, store):
    entities = memory.entity_store
    assert entities.collection_name == f"{store.collection}_entities"
    assert f"{store.collection}_entities" in store.list_collections()
    assert entities.store is store


def test_a_store_of_another_dimension_is_refused_before_mem0_is_built(store):
    with pytest.raises(DimensionMismatchError, match="holds 384-dimensional vectors but "
                                                     "long-term memory's embedding model "
                                                     "produces 768"):
        mem0_vector_store_config(store, dimensions=768)
