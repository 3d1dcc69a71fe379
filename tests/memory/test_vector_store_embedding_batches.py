"""A vector store embeds its texts ``embedding_batch_size`` (32 unless set) per call to
the declared embedding model (README, "Vector stores"). The model is the OpenAI
embedding client talking to a scripted provider on 127.0.0.1, which records how many
texts each request carries; the store is embedded Qdrant in the test's folder."""

from flink_agents_ltm.api.resources import ResourceType
from flink_agents_ltm.api.vector_stores import Document
from flink_agents_ltm.integrations.embedding_models.openai import OpenAIEmbeddingModelSetup
from flink_agents_ltm.integrations.mem0.hashing_embedder import hashed_bag_of_words
from flink_agents_ltm.integrations.mem0.vector_store import Mem0VectorStore
from tests.chat.scripted_server import Request, ScriptedServer

DIMENSIONS = 384


def embeddings(request: Request) -> dict:
    return {"data": [{"index": i, "embedding": hashed_bag_of_words(text, DIMENSIONS)}
                     for i, text in enumerate(request.body["input"])]}


def test_a_vector_store_embeds_32_texts_per_call_unless_told_otherwise(tmp_path):
    with ScriptedServer(embeddings) as server:
        model = OpenAIEmbeddingModelSetup("m", server.url, api_key_env=None,
                                          dimensions=DIMENSIONS)
        store = Mem0VectorStore("qdrant", {"path": str(tmp_path / "qdrant")},
                                embedding_model="embedder")

        def declared(name: str, kind: ResourceType) -> OpenAIEmbeddingModelSetup:
            assert (name, kind) == ("embedder", ResourceType.EMBEDDING_MODEL)
            return model

        store.open(declared)
        try:
            store.add([Document(f"note number {i}", id=f"n{i}") for i in range(70)])
            found = store.query("note number 69", limit=1)
            assert store.size() == 70
        finally:
            store.close()
            model.close()
    assert [len(request.body["input"]) for request in server.requests] == [32, 32, 6, 1]
    assert [document.id for document in found] == ["n69"]
