"""A chat model on an Ollama server: ``POST {base_url}/api/chat`` (not streamed), over
one pooled httpx2 client per model, retried (see
:mod:`~flink_agents_ltm.integrations.model_endpoint`).

Ollama gives tool calls no ids and their arguments as objects; this client
numbers the calls of one answer so results can be paired with them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import httpx2

from flink_agents_ltm.api.chat_models import (
    BaseChatModelSetup,
    ChatMessage,
    MessageRole,
    TokenUsage,
    Tool,
    ToolCall,
)
from flink_agents_ltm.api.structured_output import OutputSchema
from flink_agents_ltm.integrations.chat_models.openai import function_spec
from flink_agents_ltm.integrations.model_endpoint import ModelEndpoint, RetryingJsonClient


class OllamaChatModelSetup(BaseChatModelSetup):
    """``timeout_s`` bounds the wait for each answer, ``connect_timeout_s`` for each
    connection; ``max_retries`` more attempts follow HTTP 408/409/429/5xx, timeouts
    and failed connections (Retry-After honoured). ``transport`` replaces the
    network (``httpx2.MockTransport`` in tests). Structured output is native: the
    schema goes in ``format``."""

    supports_output_schema: ClassVar[bool] = True

    def __init__(self, model: str, base_url: str = "http://localhost:11434",
                 timeout_s: float = 120.0, options: Mapping[str, Any] | None = None,
                 think: bool | None = None, *, connect_timeout_s: float = 10.0,
                 max_retries: int = 2, transport: httpx2.BaseTransport | None = None):
        self.endpoint = ModelEndpoint("ollama", base_url, model, timeout_s,
                                      connect_timeout_s=connect_timeout_s,
                                      max_retries=max_retries)
        self.options = dict(options or {})
        self.think = think
        self._client = RetryingJsonClient(self.endpoint, transport)

    def chat(self, messages: Sequence[ChatMessage], tools: Sequence[Tool] | None = None, *,
             json_mode: bool = False, output_schema: OutputSchema | None = None
             ) -> ChatMessage:
        body: dict[str, Any] = {"model": self.endpoint.model, "stream": False,
                                "messages": [_message(m) for m in messages]}
        if tools:
            body["tools"] = [function_spec(t) for t in tools]
        if output_schema is not None:
            body["format"] = output_schema.json_schema
        elif json_mode:
            body["format"] = "json"
        if self.options:
            body["options"] = self.options
        if self.think is not None:
            body["think"] = self.think
        path = "/api/chat"
        answer = self._client.post(path, body)
        try:
            message = answer["message"]
            calls = tuple(ToolCall(f"call_{i}", c["function"]["name"],
                                   dict(c["function"].get("arguments") or {}))
                          for i, c in enumerate(message.get("tool_calls") or ()))
            return ChatMessage(MessageRole.ASSISTANT, message.get("content") or "", calls,
                               usage=TokenUsage.reported(answer.get("prompt_eval_count"),
                                                         answer.get("eval_count")))
        except (AttributeError, KeyError, TypeError, ValueError) as error:
            raise self.endpoint.malformed(self.endpoint.base_url + path, error, answer) from None

    def close(self) -> None:
        """Close the connection pool; later calls fail with a clear error."""
        self._client.close()


def _message(message: ChatMessage) -> dict[str, Any]:
    out: dict[str, Any] = {"role": str(message.role), "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [{"function": {"name": c.name, "arguments": dict(c.arguments)}}
                             for c in message.tool_calls]
    if message.role is MessageRole.TOOL and message.name:
        out["tool_name"] = message.name
    return out
