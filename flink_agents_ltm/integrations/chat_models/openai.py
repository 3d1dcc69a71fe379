"""A chat model on any OpenAI-compatible server: ``POST {base_url}/chat/completions``.

.. code-block:: python

    @chat_model_setup
    def assistant():
        return ResourceDescriptor(OpenAIChatModelSetup, model="gpt-4o-mini",
                                  base_url="https://api.openai.com/v1",
                                  api_key_env="OPENAI_API_KEY")

vLLM, llama.cpp, LM Studio and Ollama's ``/v1`` speak the same protocol; pass
``api_key_env=None`` when the server wants no key.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from flink_agents_ltm.api.chat_models import (
    BaseChatModelSetup,
    ChatMessage,
    MessageRole,
    Tool,
    ToolCall,
)
from flink_agents_ltm.integrations.model_endpoint import ModelEndpoint


class OpenAIChatModelSetup(BaseChatModelSetup):
    def __init__(self, model: str, base_url: str = "https://api.openai.com/v1",
                 api_key_env: str | None = "OPENAI_API_KEY", timeout_s: float = 60.0,
                 temperature: float | None = None, max_tokens: int | None = None):
        self.endpoint = ModelEndpoint("openai", base_url, model, timeout_s, api_key_env)
        self.temperature = temperature
        self.max_tokens = max_tokens

    def chat(self, messages: Sequence[ChatMessage], tools: Sequence[Tool] | None = None, *,
             json_mode: bool = False) -> ChatMessage:
        body: dict[str, Any] = {"model": self.endpoint.model,
                                "messages": [_message(m) for m in messages]}
        if tools:
            body["tools"] = [function_spec(t) for t in tools]
        if json_mode:
            body["response_format"] = {"type": "json_object"}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        path = "/chat/completions"
        answer = self.endpoint.post(path, body)
        try:
            message = answer["choices"][0]["message"]
            calls = tuple(ToolCall(c["id"], c["function"]["name"],
                                   json.loads(c["function"]["arguments"] or "{}"))
                          for c in message.get("tool_calls") or ())
            return ChatMessage(MessageRole.ASSISTANT, message.get("content") or "", calls)
        except (KeyError, IndexError, TypeError, ValueError) as error:
            raise self.endpoint.error(
                f"malformed reply ({type(error).__name__}: {error}): {answer!r:.500}",
                self.endpoint.base_url + path, 200) from None


def function_spec(tool: Tool) -> dict[str, Any]:
    """A tool as OpenAI (and Ollama) describe functions to the model."""
    return {"type": "function", "function": {"name": tool.name, "description": tool.description,
                                             "parameters": dict(tool.parameters)}}


def _message(message: ChatMessage) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role.value, "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [{"id": c.id, "type": "function",
                              "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                             for c in message.tool_calls]
    if message.role is MessageRole.TOOL:
        out["tool_call_id"] = message.tool_call_id
    return out
