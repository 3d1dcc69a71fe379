"""A vector store that cannot work fails the job when it starts (the operator opens its
resources), or already when the job is built on the client, never at the first write."""

import traceback

import pytest
from mem0.configs.embeddings.base import BaseEmbedderConfig

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent
from flink_agents_ltm.api.resources import (
    MissingResourceError,
    ResourceDescriptor,
    embedding_model_setup,
    vector_store_setup,
)
from flink_agents_ltm.api.vector_stores import Document
from flink_agents_ltm.integrations.mem0.hashing_embedder import HashingEmbedding
from flink_agents_ltm.integrations.mem0.vector_store import Mem0VectorStore
from flink_agents_ltm.runtime.resource_provider import (
    ResourceError,
    ResourceProvider,
    check_resources,
)

HASHING = ResourceDescriptor(HashingEmbedding)


def agent_declaring(store: ResourceDescriptor, embedder=HASHING):
    class KnowledgeAgent(Agent):
        @embedding_model_setup
        def embedder():
            return embedder

        @vector_store_setup
        def knowledge():
            return store

        @action(InputEvent)
        def ignore(event, ctx):
            pass

    return KnowledgeAgent()


def started(agent):
    """What the operator does when it opens."""
    provider = ResourceProvider(agent, lambda: None)
    try:
        provider.open()
    except BaseException:
        provider.close()
        raise
    return provider


def test_an_unknown_provider_is_refused_on_the_client_and_at_start(tmp_path):
    agent = agent_declaring(ResourceDescriptor(Mem0VectorStore, provider="qdrnt",
                                               embedding_model="embedder"))
    for check in (check_resources, started):
        with pytest.raises(ResourceError, match="building resource 'knowledge' .* unknown vector "
                                                "store provider 'qdrnt'; Mem0 supports: .*faiss.*"
                                                "pgvector.*qdrant"):
            check(agent)


def test_to_datastream_refuses_a_store_that_cannot_start_before_any_job_is_submitted():
    from pyflink.datastream import StreamExecutionEnvironment

    from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment

    env = StreamExecutionEnvironment.get_execution_environment()
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env)
    agent = agent_declaring(ResourceDescriptor(Mem0VectorStore, provider="qdrnt",
                                               embedding_model="embedder"))
    builder = agents_env.from_datastream(env.from_collection([1]), lambda x: x).apply(agent)
    with pytest.raises(ResourceError, match="unknown vector store provider 'qdrnt'"):
        builder.to_datastream()


def test_a_misspelt_config_key_is_refused_on_the_client(tmp_path):
    agent = agent_declaring(ResourceDescriptor(Mem0VectorStore, provider="qdrant",
                                               embedding_model="embedder",
                                               config={"pth": str(tmp_path)}))
    with pytest.raises(ResourceError, match="invalid config for vector store provider 'qdrant'"
                                            ".*Extra fields not allowed: pth"):
        check_resources(agent)


def test_a_missing_embedding_model_is_named_on_the_client_and_at_start(tmp_path):
    agent = agent_declaring(ResourceDescriptor(Mem0VectorStore, provider="faiss",
                                               embedding_model="embeddings",
                                               config={"path": str(tmp_path)}))
    for check in (check_resources, started):
        with pytest.raises(MissingResourceError, match=r"resource 'knowledge' of agent \S*"
                                                       "KnowledgeAgent names the embedding model "
                                                       "'embeddings' in its argument "
                                                       "'embedding_model', but no embedding "
                                                       "model named 'embeddings' is declared; "
                                                       r"declared: embedder \(embedding_model\)"):
            check(agent)


def test_a_store_without_embedding_model_or_dimensions_is_refused_at_start(tmp_path):
    agent = agent_declaring(ResourceDescriptor(Mem0VectorStore, provider="faiss",
                                               config={"path": str(tmp_path)}))
    with pytest.raises(ResourceError, match="needs embedding_model= .* or dimensions="):
        started(agent)


def test_an_embedding_model_that_is_not_one_is_refused_at_start(tmp_path):
    agent = agent_declaring(ResourceDescriptor(Mem0VectorStore, provider="faiss",
                                               embedding_model="embedder",
                                               config={"path": str(tmp_path)}),
                            embedder=ResourceDescriptor(dict, dims=3))
    with pytest.raises(ResourceError, match="embedding model 'embedder' is a dict, not a "
                                            "BaseEmbeddingModelSetup"):
        started(agent)


def test_dimensions_that_disagree_with_the_embedding_model_are_refused_at_start(tmp_path):
    agent = agent_declaring(ResourceDescriptor(Mem0VectorStore, provider="qdrant",
                                               embedding_model="embedder",
                                               config={"path": str(tmp_path),
                                                       "embedding_model_dims": 1536}))
    with pytest.raises(ResourceError, match="configured for 1536-dimensional vectors but "
                                            "embedding model 'embedder' produces 384"):
        started(agent)


@pytest.mark.parametrize("where", ["qdrant", "pgvector"])
def test_a_collection_of_another_dimension_fails_the_start_not_the_first_write(
        where, tmp_path, request):
    config = ({"path": str(tmp_path / "q")} if where == "qdrant"
              else dict(request.getfixturevalue("pgvector_database")))
    eight = ResourceDescriptor(HashingEmbedding, config=BaseEmbedderConfig(embedding_dims=8))
    store = ResourceDescriptor(Mem0VectorStore, provider=where, embedding_model="embedder",
                               config=config, collection="kb")
    first = started(agent_declaring(store, embedder=eight))
    first.get("knowledge").add(Document("written with 8 dimensions"))
    first.close()

    with pytest.raises(ResourceError, match="opening resource 'knowledge' .* collection 'kb' of "
                                            f"the {where} vector store holds 8-dimensional "
                                            "vectors but this store's vectors have 384"):
        started(agent_declaring(store))


def test_an_unreachable_server_fails_the_start_without_showing_its_password(pgvector_database):
    from tests.pgvector.server import free_port

    config = dict(pgvector_database, port=free_port(), password="s3cret-pw")
    agent = agent_declaring(ResourceDescriptor(Mem0VectorStore, provider="pgvector",
                                               embedding_model="embedder", config=config))
    with pytest.raises(ResourceError, match="opening resource 'knowledge'") as raised:
        started(agent)
    printed = "".join(traceback.format_exception(raised.value))
    assert "s3cret-pw" not in printed and "'password': '***'" in printed
