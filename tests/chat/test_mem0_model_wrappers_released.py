"""A job that closed its long-term memory and its resources leaves none of its Mem0 model
wrappers behind, nor the chat and embedding models they wrap: a TaskManager running job
after job does not accumulate them. The models' provider is a scripted server on
127.0.0.1."""

import gc
import uuid
import weakref

from chat.scripted_server import ScriptedServer
from chat.test_mem0_model_providers import Provider, resource_provider
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.mem0.model_providers import as_mem0_provider

CONFIG = {LongTermMemoryOptions.CHAT_MODEL_SETUP.key: "extractor",
          LongTermMemoryOptions.EMBEDDING_MODEL_SETUP.key: "embedder",
          LongTermMemoryOptions.VECTOR_STORE.key: {"provider": "qdrant", "config": {
              "collection_name": "extracted", "path": ":memory:"}}}


def test_a_closed_jobs_model_wrappers_and_models_are_gone():
    with ScriptedServer(Provider()) as server:
        resources = resource_provider(server)
        ltm = Mem0LongTermMemory.from_config(f"job-{uuid.uuid4().hex}", CONFIG,
                                             resources=resources.for_long_term_memory)
        try:
            ltm.switch_context("customer-1")
            ltm.get_memory_set("prefs").add("please never call me, I read my email")
            models = {kind: resources.resolve(name, kind) for kind, name in
                      [("chat_model", "extractor"), ("embedding_model", "embedder")]}
            # While the job runs, each model has one wrapper, the one its Mem0 client uses.
            wrappers = {kind: as_mem0_provider(kind, model) for kind, model in models.items()}
            assert all(as_mem0_provider(kind, models[kind]) is wrapper
                       and wrapper.model is models[kind] for kind, wrapper in wrappers.items())
            alive = [weakref.ref(o) for o in (*models.values(), *wrappers.values())]
            del models, wrappers
        finally:
            ltm.close()
            resources.close()
        del ltm, resources
        gc.collect()

        assert [ref() for ref in alive] == [None] * 4
