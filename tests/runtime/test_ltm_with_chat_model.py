"""Long-term memory on model resources, through the operator: the chat model and the
embedding model are resources named in the LTM options, served by a scripted
provider on 127.0.0.1; Mem0 runs infer=True and each key keeps what the model
extracted from its own input."""

import json
import re

import pytest
from chat.scripted_server import ScriptedServer, openai_reply
from pyflink.common import Types

from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.api.resources import ResourceDescriptor, ResourceType
from flink_agents_ltm.integrations.chat_models.openai import OpenAIChatModelSetup
from flink_agents_ltm.integrations.embedding_models.ollama import OllamaEmbeddingModelSetup
from flink_agents_ltm.integrations.mem0.hashing_embedder import hashed_bag_of_words
from runtime.agents_for_tests import IN_MEMORY_QDRANT
from runtime.chat_agents_for_tests import ExtractingAgent

pytestmark = pytest.mark.cluster

DIMS = 64
INPUTS = [("customer-a", "hello, I really like tea in the morning"),
          ("customer-b", "note that I like coffee, black")]


def provider(request):
    """Embeds with hashed words; extracts 'Likes <thing>' from the newest message."""
    if request.path == "/api/embed":
        return {"embeddings": [hashed_bag_of_words(t, DIMS) for t in request.body["input"]]}
    prompt = request.body["messages"][-1]["content"]
    thing = re.findall(r"like (\w+)", prompt)[-1]
    return openai_reply(json.dumps({"memory": [{"id": "0", "text": f"Likes {thing}"}]}))


@pytest.fixture(scope="module")
def extracted(flink_env):
    with ScriptedServer(provider) as server:
        env = flink_env()
        agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
        agents_env.add_resource("extractor", ResourceType.CHAT_MODEL, ResourceDescriptor(
            OpenAIChatModelSetup, model="extractor", base_url=server.url, api_key_env=None))
        agents_env.add_resource("embedder", ResourceType.EMBEDDING_MODEL, ResourceDescriptor(
            OllamaEmbeddingModelSetup, model="embedder", base_url=server.url, dimensions=DIMS))
        config = agents_env.get_config()
        config.set(LongTermMemoryOptions.CHAT_MODEL_SETUP, "extractor")
        config.set(LongTermMemoryOptions.EMBEDDING_MODEL_SETUP, "embedder")
        config.set(LongTermMemoryOptions.VECTOR_STORE, IN_MEMORY_QDRANT)
        stream = env.from_collection(INPUTS, type_info=Types.TUPLE([Types.STRING(),
                                                                    Types.STRING()]))
        out = agents_env.from_datastream(stream, key_selector=lambda r: r[0])
        results = list(out.apply(ExtractingAgent()).to_datastream().execute_and_collect())
    return results, server.requests


def test_each_key_stores_what_the_chat_model_extracted_from_its_own_input(extracted):
    results, _ = extracted
    assert sorted(results) == [("customer-a", ["Likes tea"]), ("customer-b", ["Likes coffee"])]


def test_the_chat_model_was_asked_for_json_once_per_add(extracted):
    _, requests = extracted
    chats = [r for r in requests if r.path == "/chat/completions"]
    assert len(chats) == len(INPUTS)
    assert all(r.body["response_format"] == {"type": "json_object"} for r in chats)
