"""A chat model on Anthropic's Messages API through the official ``anthropic`` SDK:
``POST {base_url}/v1/messages``.

.. code-block:: python

    @chat_model_setup
    def assistant():
        return ResourceDescriptor(AnthropicChatModelSetup, model="claude-sonnet-4-5",
                                  api_key_env="ANTHROPIC_API_KEY")

Our messages map onto Anthropic's content blocks: system messages become the
``system`` prompt; an assistant's tool calls become ``tool_use`` blocks and
tool results ``tool_result`` blocks of the next user turn (consecutive messages
of one role are merged into one turn, as the API wants). Anthropic has no JSON
mode: ``json_mode`` asks for a JSON object in the system prompt. Structured output
(``output_schema``) is a forced tool use: the schema is offered as one more tool,
whose input is the answer, and the model must use a tool (that one alone when the
chat offers no other tools); its input comes back as the answer's JSON content.

One SDK client (one connection pool) per model object, shared by the worker
threads that call it; :meth:`close` closes it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, ClassVar

import anthropic
import httpx2
from anthropic.types import Message

from flink_agents_ltm.api.chat_models import (
    BaseChatModelSetup,
    ChatMessage,
    MessageRole,
    TokenUsage,
    Tool,
    ToolCall,
)
from flink_agents_ltm.api.structured_output import OutputSchema
from flink_agents_ltm.integrations.model_endpoint import ModelEndpoint

__all__ = ["AnthropicChatModelSetup"]

JSON_INSTRUCTION = "Answer with one JSON object and nothing else."


class AnthropicChatModelSetup(BaseChatModelSetup):
    """``max_tokens`` caps each answer (the API requires a cap). ``timeout_s`` bounds
    the wait for each answer, ``connect_timeout_s`` for each connection;
    ``max_retries`` more attempts follow HTTP 408/409/429/5xx, timeouts and failed
    connections (Retry-After honoured). ``api_key_env=None`` sends no key (a
    compatible local server). ``transport`` replaces the network
    (``httpx2.MockTransport`` in tests)."""

    supports_output_schema: ClassVar[bool] = True

    def __init__(self, model: str, base_url: str = "https://api.anthropic.com",
                 api_key_env: str | None = "ANTHROPIC_API_KEY", timeout_s: float = 60.0,
                 max_tokens: int = 4096, temperature: float | None = None, *,
                 connect_timeout_s: float = 10.0, max_retries: int = 2,
                 transport: httpx2.BaseTransport | None = None):
        self.endpoint = ModelEndpoint("anthropic", base_url, model, timeout_s, api_key_env,
                                      connect_timeout_s, max_retries)
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ValueError(f"anthropic: max_tokens must be a positive int, got {max_tokens!r}")
        self.max_tokens = max_tokens
        self.temperature = temperature
        http_client = anthropic.DefaultHttpxClient(transport=transport) \
            if transport is not None else None
        # An explicit key (even an empty one) keeps the SDK from looking for credentials
        # in the environment or on disk; without a key each request leaves the header out.
        self._client = anthropic.Anthropic(
            base_url=self.endpoint.base_url, api_key=self.endpoint.api_key or "",
            timeout=self.endpoint.timeout, max_retries=self.endpoint.max_retries,
            http_client=http_client)
        self._headers: dict[str, Any] = {} if self.endpoint.api_key else \
            {"Authorization": anthropic.Omit()}

    def chat(self, messages: Sequence[ChatMessage], tools: Sequence[Tool] | None = None, *,
             json_mode: bool = False, output_schema: OutputSchema | None = None
             ) -> ChatMessage:
        system = [m.content for m in messages if m.role is MessageRole.SYSTEM]
        if json_mode and output_schema is None:
            system.append(JSON_INSTRUCTION)
        body: dict[str, Any] = {"model": self.endpoint.model, "max_tokens": self.max_tokens,
                                "messages": _turns(messages)}
        if system:
            body["system"] = "\n\n".join(system)
        if tools:
            body["tools"] = [{"name": t.name, "description": t.description,
                              "input_schema": dict(t.parameters)} for t in tools]
        answer_tool, wrapped = None, False
        if output_schema is not None:
            answer_tool = _answer_tool_name(output_schema, tools or ())
            wrapped = output_schema.json_schema.get("type") != "object"
            body.setdefault("tools", []).append({
                "name": answer_tool, "input_schema": _object_schema(output_schema.json_schema),
                "description": "Give the final answer: its input is the answer."})
            body["tool_choice"] = {"type": "any"} if tools else \
                {"type": "tool", "name": answer_tool}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self._client.is_closed():
            raise self.endpoint.closed_error()
        try:
            raw = self._client.messages.with_raw_response.create(
                **body, extra_headers=self._headers)
        except anthropic.APIStatusError as error:
            failure = self.endpoint.status_error(error.response)
        except anthropic.APIConnectionError as error:
            raise self.endpoint.transport_error(str(error.request.url), error.__cause__) \
                from error.__cause__
        else:
            return self._reply(raw, answer_tool, wrapped)
        raise failure  # out of the handler: the SDK's error may echo the key

    def _reply(self, raw: anthropic.APIResponse[Message], answer_tool: str | None = None,
               wrapped: bool = False) -> ChatMessage:
        answer = self.endpoint.json_object(raw.http_response)
        try:
            text: list[str] = []
            calls: list[ToolCall] = []
            for block in raw.parse().content:
                if block.type == "text":
                    text.append(block.text)
                elif block.type == "tool_use" and block.name == answer_tool:
                    # The structured answer: final, whatever else the model asked for
                    # (a tool_use left without its result would break the next turn).
                    value = block.input.get("answer") if wrapped else block.input
                    text, calls = [json.dumps(value)], []
                    break
                elif block.type == "tool_use":
                    calls.append(ToolCall(block.id, block.name, dict(block.input)))
            usage = getattr(raw.parse(), "usage", None)
            return ChatMessage(MessageRole.ASSISTANT, "".join(text), tuple(calls),
                               usage=TokenUsage.reported(
                                   getattr(usage, "input_tokens", None),
                                   getattr(usage, "output_tokens", None)))
        except (AttributeError, KeyError, TypeError, ValueError) as error:
            raise self.endpoint.malformed(str(raw.http_response.request.url), error,
                                          answer) from None

    def close(self) -> None:
        """Close the connection pool; later calls fail with a clear error."""
        self._client.close()


def _answer_tool_name(schema: OutputSchema, tools: Sequence[Tool]) -> str:
    """The answer tool's name: the schema's, unless a real tool has it."""
    taken = {t.name for t in tools}
    name = schema.name
    while name in taken:
        name = f"{name}_answer"
    return name


def _object_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's input is an object: a schema of anything else is wrapped in one (as
    ``answer``, unwrapped from the reply)."""
    if schema.get("type") == "object":
        return schema
    return {"type": "object", "properties": {"answer": schema}, "required": ["answer"]}


def _turns(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role is MessageRole.SYSTEM:
            continue
        role = "assistant" if message.role is MessageRole.ASSISTANT else "user"
        blocks = _blocks(message)
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return turns


def _blocks(message: ChatMessage) -> list[dict[str, Any]]:
    if message.role is MessageRole.TOOL:
        return [{"type": "tool_result", "tool_use_id": message.tool_call_id,
                 "content": message.content}]
    blocks: list[dict[str, Any]] = []
    if message.content or not message.tool_calls:
        blocks.append({"type": "text", "text": message.content})
    blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": dict(c.arguments)}
               for c in message.tool_calls]
    return blocks
