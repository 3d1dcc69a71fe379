"""Our chat and embedding models as Mem0 providers (design doc 004).

``LongTermMemoryOptions.CHAT_MODEL_SETUP`` / ``EMBEDDING_MODEL_SETUP`` name
declared resources; :func:`as_mem0_provider` turns the built resource into what
Mem0 calls: a :class:`FlinkAgentsLLM` (an ``LLMBase``) around a
:class:`BaseChatModelSetup`, a :class:`FlinkAgentsEmbedder` (an
``EmbeddingBase``) around a :class:`BaseEmbeddingModelSetup`. Mem0's own
providers pass through unchanged. One wrapper per resource object: Mem0 clients
are shared per process by the identity of their providers (memory_factory). The
wrappers are held weakly: a wrapper lives as long as a Mem0 client uses it (it holds
its model), so a job that closed its memory leaves neither wrapper nor model behind.

Both are registered in Mem0's factories too (``flink_agents_chat_model``,
``flink_agents_embedding_model``), with the model object as ``config.model``.
Mem0 calls them from worker threads; our models are thread-safe.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from flink_agents_ltm.api.chat_models import (
    BaseChatModelSetup,
    BaseEmbeddingModelSetup,
    ChatMessage,
    MessageRole,
)
from flink_agents_ltm.integrations.mem0.environment import import_mem0

import_mem0()
from mem0.configs.embeddings.base import BaseEmbedderConfig  # noqa: E402
from mem0.configs.llms.base import BaseLlmConfig  # noqa: E402
from mem0.embeddings.base import EmbeddingBase  # noqa: E402
from mem0.llms.base import LLMBase  # noqa: E402
from mem0.utils.factory import EmbedderFactory, LlmFactory  # noqa: E402

__all__ = ["FlinkAgentsEmbedder", "FlinkAgentsLLM", "as_mem0_provider"]

_JSON_FORMATS = frozenset({"json_object", "json_schema"})
_PROBE = "dimension probe"


class FlinkAgentsLLM(LLMBase):
    """Mem0's LLM, answered by our chat model (``config.model``)."""

    def __init__(self, config: BaseLlmConfig | None = None):
        super().__init__(config)
        self.model: BaseChatModelSetup = self.config.model
        if not isinstance(self.model, BaseChatModelSetup):
            raise TypeError("FlinkAgentsLLM needs a BaseChatModelSetup as config.model, got "
                            f"{type(self.model).__name__}")

    def generate_response(self, messages, tools=None, tool_choice="auto", response_format=None,
                          **kwargs) -> str:
        if tools:
            raise NotImplementedError("Mem0 asked for tool calls (graph memory); the "
                                      "flink-agents chat model adapter serves plain and JSON "
                                      "answers only")
        json_mode = isinstance(response_format, dict) and \
            response_format.get("type") in _JSON_FORMATS
        history = [ChatMessage(MessageRole(m["role"]), m.get("content") or "") for m in messages]
        return self.model.chat(history, json_mode=json_mode).content


class FlinkAgentsEmbedder(EmbeddingBase):
    """Mem0's embedder, answered by our embedding model (``config.model``). Its vector
    length comes from the model's ``dimensions``, else from one probe call."""

    def __init__(self, config: BaseEmbedderConfig | None = None):
        super().__init__(config)
        self.model: BaseEmbeddingModelSetup = self.config.model
        if not isinstance(self.model, BaseEmbeddingModelSetup):
            raise TypeError("FlinkAgentsEmbedder needs a BaseEmbeddingModelSetup as "
                            f"config.model, got {type(self.model).__name__}")
        if not self.config.embedding_dims:
            self.config.embedding_dims = self.model.dimensions or len(
                self.model.embed([_PROBE])[0])

    def embed(self, text, memory_action=None) -> list[float]:
        return self.model.embed([text])[0]

    def embed_batch(self, texts, memory_action="add") -> list[list[float]]:
        return self.model.embed(list(texts))


LlmFactory.register_provider("flink_agents_chat_model",
                             f"{__name__}.FlinkAgentsLLM", BaseLlmConfig)
EmbedderFactory.provider_to_class["flink_agents_embedding_model"] = \
    f"{__name__}.FlinkAgentsEmbedder"

# id(model) -> its wrapper, while anything uses the wrapper (which keeps the model, and so
# its id, alive).
_wrappers: weakref.WeakValueDictionary[int, FlinkAgentsLLM | FlinkAgentsEmbedder] = (
    weakref.WeakValueDictionary())
_lock = threading.Lock()


def as_mem0_provider(kind: str, resource: Any) -> Any:
    """What Mem0 should use for the declared resource of ``kind`` ("chat_model",
    "embedding_model", "vector_store")."""
    if isinstance(resource, BaseChatModelSetup):
        build = lambda: FlinkAgentsLLM(BaseLlmConfig(model=resource))  # noqa: E731
    elif isinstance(resource, BaseEmbeddingModelSetup):
        build = lambda: FlinkAgentsEmbedder(BaseEmbedderConfig(model=resource))  # noqa: E731
    else:
        expected = {"chat_model": (LLMBase, "BaseChatModelSetup"),
                    "embedding_model": (EmbeddingBase, "BaseEmbeddingModelSetup")}.get(kind)
        if expected is not None and not isinstance(resource, expected[0]):
            raise TypeError(f"the {kind.replace('_', ' ')} resource is a "
                            f"{type(resource).__name__}; long-term memory needs a "
                            f"{expected[1]} or a Mem0 {expected[0].__name__}")
        return resource
    with _lock:
        wrapper = _wrappers.get(id(resource))
        if wrapper is None or wrapper.model is not resource:
            wrapper = build()
            _wrappers[id(resource)] = wrapper
        return wrapper
