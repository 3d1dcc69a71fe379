"""Mem0 on our chat and embedding models (design doc 004): resources named in the
long-term memory options reach Mem0 as providers, and infer=True stores what the
chat model extracted. The provider is a scripted server on 127.0.0.1."""

import json
import uuid

import pytest

from chat.scripted_server import Reply, ScriptedServer, openai_reply
from flink_agents_ltm.api.agent import Agent
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.api.resources import ResourceDescriptor, ResourceType
from flink_agents_ltm.integrations.chat_models.openai import OpenAIChatModelSetup
from flink_agents_ltm.integrations.embedding_models.ollama import OllamaEmbeddingModelSetup
from flink_agents_ltm.integrations.mem0.hashing_embedder import hashed_bag_of_words
from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.mem0.model_providers import as_mem0_provider
from flink_agents_ltm.runtime.mailbox import MailboxThreadCheck
from flink_agents_ltm.runtime.resource_provider import ResourceProvider

DIMS = 64
EXTRACTED = "Prefers to be contacted by email"


class Provider:
    """Answers extraction prompts with one fact and embeds with hashed words."""

    def __init__(self, chat_status=200):
        self.chat_status = chat_status

    def __call__(self, request):
        if request.path == "/api/embed":
            return {"embeddings": [hashed_bag_of_words(t, DIMS) for t in request.body["input"]]}
        answer = {"memory": [{"id": "0", "text": EXTRACTED, "attributed_to": "user"}]}
        return Reply(self.chat_status, openai_reply(json.dumps(answer)))


class NoDeclarations(Agent):
    pass


def resource_provider(server):
    descriptors = {
        "extractor": (ResourceType.CHAT_MODEL, ResourceDescriptor(
            OpenAIChatModelSetup, model="extractor", base_url=server.url, api_key_env=None)),
        "embedder": (ResourceType.EMBEDDING_MODEL, ResourceDescriptor(
            OllamaEmbeddingModelSetup, model="embedder", base_url=server.url)),
    }
    return ResourceProvider(NoDeclarations(), MailboxThreadCheck(), descriptors)


def long_term_memory(server, **options):
    config = {LongTermMemoryOptions.CHAT_MODEL_SETUP.key: "extractor",
              LongTermMemoryOptions.EMBEDDING_MODEL_SETUP.key: "embedder",
              LongTermMemoryOptions.VECTOR_STORE.key: {"provider": "qdrant", "config": {
                  "collection_name": "extracted", "path": ":memory:"}}, **options}
    ltm = Mem0LongTermMemory.from_config(f"job-{uuid.uuid4().hex}", config,
                                         resources=resource_provider(server).for_long_term_memory)
    ltm.switch_context("customer-1")
    return ltm


@pytest.fixture
def provider_server():
    with ScriptedServer(Provider()) as server:
        yield server


def test_infer_stores_what_the_chat_model_extracted(provider_server):
    ltm = long_term_memory(provider_server)
    try:
        prefs = ltm.get_memory_set("prefs")
        prefs.add("please never call me, I read my email every morning")
        assert [item.value for item in prefs.get()] == [EXTRACTED]
        assert prefs.search("email contact", limit=1)[0].value == EXTRACTED
    finally:
        ltm.close()
    chats = [r for r in provider_server.requests if r.path == "/chat/completions"]
    assert len(chats) == 1
    assert chats[0].body["response_format"] == {"type": "json_object"}
    assert "I read my email every morning" in chats[0].body["messages"][-1]["content"]


def test_the_embedding_length_is_probed_once_when_not_declared(provider_server):
    ltm = long_term_memory(provider_server, **{LongTermMemoryOptions.INFER.key: False})
    try:
        ltm.get_memory_set("prefs").add("stored as given")
        assert [i.value for i in ltm.get_memory_set("prefs").get()] == ["stored as given"]
    finally:
        ltm.close()
    embeds = [r.body["input"] for r in provider_server.requests if r.path == "/api/embed"]
    assert embeds[0] == ["dimension probe"]
    assert embeds.count(["dimension probe"]) == 1
    assert not [r for r in provider_server.requests if r.path == "/chat/completions"]


def test_one_resource_is_one_mem0_provider_so_subtasks_share_one_mem0_client(provider_server):
    resources = resource_provider(provider_server)
    first = as_mem0_provider("chat_model", resources.for_long_term_memory("chat_model",
                                                                          "extractor"))
    assert first is as_mem0_provider("chat_model",
                                     resources.for_long_term_memory("chat_model", "extractor"))
    assert first.model is resources.resolve("extractor")


def test_a_failing_chat_model_fails_the_add_naming_the_provider_and_stores_nothing():
    with ScriptedServer(Provider(chat_status=500)) as server:
        ltm = long_term_memory(server)
        try:
            prefs = ltm.get_memory_set("prefs")
            with pytest.raises(Exception, match=r"openai model 'extractor' at .*/chat/"
                                                r"completions: HTTP 500"):
                prefs.add("I like email")
            assert prefs.get() == []
        finally:
            ltm.close()


def test_mem0_factories_build_the_providers_around_our_models(provider_server):
    from mem0.utils.factory import EmbedderFactory, LlmFactory

    chat = OpenAIChatModelSetup("extractor", provider_server.url, api_key_env=None)
    llm = LlmFactory.create("flink_agents_chat_model", {"model": chat})
    answer = llm.generate_response([{"role": "user", "content": "hi"}],
                                   response_format={"type": "json_object"})
    assert json.loads(answer)["memory"][0]["text"] == EXTRACTED
    embedder = EmbedderFactory.create("flink_agents_embedding_model", {
        "model": OllamaEmbeddingModelSetup("e", provider_server.url, dimensions=DIMS)}, None)
    assert embedder.config.embedding_dims == DIMS
    assert embedder.embed("email", "search") == hashed_bag_of_words("email", DIMS)
