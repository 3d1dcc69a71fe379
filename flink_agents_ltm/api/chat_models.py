"""Chat and embedding models as resources an agent declares.

.. code-block:: python

    class MyAgent(Agent):
        @chat_model_setup
        def assistant():
            return ResourceDescriptor(OllamaChatModelSetup, model="qwen3:8b")

        @action(InputEvent)
        async def answer(event, ctx):
            reply = await ctx.chat([ChatMessage("user", event.input)], model="assistant",
                                   tools=[lookup_order])
            ctx.send_event(OutputEvent(reply.content))

A model object is built once per process and shared by every operator subtask
and worker thread in it, so implementations must be thread-safe (the clients in
``integrations`` hold one connection pool each, safe to share). When the last
operator using it closes, its :meth:`~BaseChatModelSetup.close` releases what it
holds.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar

from flink_agents_ltm.api.errors import FlinkAgentsLtmError
from flink_agents_ltm.api.tools import Tool, ToolCallError, ToolContext, tool

__all__ = [
    "BaseChatModelSetup",
    "BaseEmbeddingModelSetup",
    "ChatMessage",
    "ChatTurnsExceededError",
    "MessageRole",
    "ModelProviderError",
    "TokenUsage",
    "Tool",
    "ToolCall",
    "ToolCallError",
    "ToolContext",
    "after_system_messages",
    "tool",
]


class MessageRole(StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


@dataclass(frozen=True)
class ToolCall:
    """A model's request to call tool ``name``; ``id`` pairs it with its result
    (providers that have no ids get a generated one)."""

    id: str
    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True)
class TokenUsage:
    """The tokens a model call used, as the provider reported them."""

    prompt_tokens: int
    completion_tokens: int

    def __post_init__(self) -> None:
        for name in ("prompt_tokens", "completion_tokens"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"TokenUsage.{name} must be an int >= 0, got {value!r}")

    @classmethod
    def reported(cls, prompt_tokens: Any, completion_tokens: Any) -> TokenUsage | None:
        """What a provider's answer says, or ``None`` when it says nothing usable (a
        missing or malformed usage never fails a model call)."""
        try:
            return cls(prompt_tokens, completion_tokens)
        except ValueError:
            return None


@dataclass(frozen=True)
class ChatMessage:
    """One message of a conversation. A tool result names the call it answers
    in ``tool_call_id`` (and the tool in ``name``). An assistant's answer carries the
    call's ``usage`` when the provider reported it (the runtime counts it in the
    ``promptTokens`` / ``completionTokens`` metrics); it is not part of the conversation
    and does not take part in comparisons. ``structured`` is the validated value of an
    answer to ``ctx.chat(..., output_schema=...)`` (see
    :mod:`~flink_agents_ltm.api.structured_output`), ``None`` otherwise; it is not sent to
    models and does not take part in comparisons either."""

    role: MessageRole | str
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = field(default=())
    tool_call_id: str | None = None
    name: str | None = None
    usage: TokenUsage | None = field(default=None, compare=False)
    structured: Any = field(default=None, compare=False)

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "role", MessageRole(self.role))
        except ValueError:
            raise ValueError(f"unknown message role {self.role!r}; one of "
                             f"{', '.join(r.value for r in MessageRole)}") from None
        if not isinstance(self.content, str):
            raise TypeError(f"message content must be str, got {type(self.content).__name__}")
        object.__setattr__(self, "tool_calls", tuple(self.tool_calls))


def after_system_messages(messages: Sequence[ChatMessage]) -> int:
    """Where another system message goes in ``messages``: after the leading ones, so
    the instructions a conversation starts with stay together and come first."""
    index = 0
    while index < len(messages) and MessageRole(messages[index].role) is MessageRole.SYSTEM:
        index += 1
    return index


class ModelProviderError(FlinkAgentsLtmError, RuntimeError):
    """A model provider failed or answered something unusable; the message names the
    provider, the URL and the HTTP status when there was one."""

    def __init__(self, message: str, *, provider: str, url: str, status: int | None = None):
        super().__init__(message)
        self.provider = provider
        self.url = url
        self.status = status


class ChatTurnsExceededError(FlinkAgentsLtmError, RuntimeError):
    """``ctx.chat`` reached ``max_turns`` model calls and the model still asked for tools."""


class BaseChatModelSetup(ABC):
    """A chat model: one call, one answer. ``ctx.chat`` runs the tool loop around it.

    A model with native structured output sets ``supports_output_schema = True`` and
    accepts ``output_schema=`` in :meth:`chat`: it then asks its provider for content that
    is JSON of ``output_schema.json_schema`` (named ``output_schema.name``). ``ctx.chat``
    passes ``output_schema`` only to such models; it tells the others the schema in a
    system message with ``json_mode=True``, so models written before it keep working."""

    supports_output_schema: ClassVar[bool] = False

    @abstractmethod
    def chat(self, messages: Sequence[ChatMessage], tools: Sequence[Tool] | None = None, *,
             json_mode: bool = False) -> ChatMessage:
        """The assistant's answer to ``messages``: text, or ``tool_calls`` naming some of
        ``tools``. ``json_mode`` asks the provider for a JSON object as content. (A model
        that sets ``supports_output_schema`` takes ``output_schema: OutputSchema | None =
        None`` too.)"""

    def close(self) -> None:  # noqa: B027 (optional hook, nothing to release by default)
        """Release connections; the model is not called afterwards."""


class BaseEmbeddingModelSetup(ABC):
    """An embedding model. ``dimensions`` is the vector length when known up front
    (a vector store needs it); ``None`` lets users of the model probe it once."""

    dimensions: int | None = None

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order."""

    def close(self) -> None:  # noqa: B027 (optional hook, nothing to release by default)
        """Release connections; the model is not called afterwards."""
