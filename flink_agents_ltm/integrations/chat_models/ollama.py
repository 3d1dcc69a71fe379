"""A chat model on an Ollama server: ``POST {base_url}/api/chat`` (not streamed).

Ollama gives tool calls no ids and their arguments as objects; this client
numbers the calls of one answer so results can be paired with them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from flink_agents_ltm.api.chat_models import (
    BaseChatModelSetup,
    ChatMessage,
    MessageRole,
    Tool,
    ToolCall,
)
from flink_agents_ltm.integrations.chat_models.openai import function_spec
from flink_agents_ltm.integrations.model_endpoint import ModelEndpoint


class OllamaChatModelSetup(BaseChatModelSetup):
    def __init__(self, model: str, base_url: str = "http://localhost:11434",
                 timeout_s: float = 120.0, options: Mapping[str, Any] | None = None,
                 think: bool | None = None):
        self.endpoint = ModelEndpoint("ollama", base_url, model, timeout_s)
        self.options = dict(options or {})
        self.think = think

    def chat(self, messages: Sequence[ChatMessage], tools: Sequence[Tool] | None = None, *,
             json_mode: bool = False) -> ChatMessage:
        body: dict[str, Any] = {"model": self.endpoint.model, "stream": False,
                                "messages": [_message(m) for m in messages]}
        if tools:
            body["tools"] = [function_spec(t) for t in tools]
        if json_mode:
            body["format"] = "json"
        if self.options:
            body["options"] = self.options
        if self.think is not None:
            body["think"] = self.think
        path = "/api/chat"
        answer = self.endpoint.post(path, body)
        try:
            message = answer["message"]
            calls = tuple(ToolCall(f"call_{i}", c["function"]["name"],
                                   dict(c["function"].get("arguments") or {}))
                          for i, c in enumerate(message.get("tool_calls") or ()))
            return ChatMessage(MessageRole.ASSISTANT, message.get("content") or "", calls)
        except (KeyError, TypeError, ValueError) as error:
            raise self.endpoint.error(
                f"malformed reply ({type(error).__name__}: {error}): {answer!r:.500}",
                self.endpoint.base_url + path, 200) from None


def _message(message: ChatMessage) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role.value, "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [{"function": {"name": c.name, "arguments": dict(c.arguments)}}
                             for c in message.tool_calls]
    if message.role is MessageRole.TOOL and message.name:
        out["tool_name"] = message.name
    return out
