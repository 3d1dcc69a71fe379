"""A chat model on any OpenAI-compatible server, or Azure OpenAI, through the
official ``openai`` SDK: ``POST {base_url}/chat/completions``.

.. code-block:: python

    @chat_model_setup
    def assistant():
        return ResourceDescriptor(OpenAIChatModelSetup, model="gpt-4o-mini",
                                  base_url="https://api.openai.com/v1",
                                  api_key_env="OPENAI_API_KEY")

vLLM, llama.cpp, LM Studio and Ollama's ``/v1`` speak the same protocol; pass
``api_key_env=None`` when the server wants no key. For Azure OpenAI pass
``azure_api_version=`` and your resource's endpoint as ``base_url``; ``model``
is then the deployment name.

One SDK client (one connection pool) per model object, shared by the worker
threads that call it; :meth:`close` closes it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import httpx2
import openai
from openai.types.chat import (
    ChatCompletionMessageFunctionToolCall,
    ChatCompletionMessageToolCallUnion,
)

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

if TYPE_CHECKING:
    from openai._legacy_response import LegacyAPIResponse

__all__ = ["OpenAIChatModelSetup", "OpenAIConnection", "function_spec", "openai_endpoint"]

R = TypeVar("R")

OPENAI_URL = "https://api.openai.com/v1"


def openai_endpoint(model: str, base_url: str, api_key_env: str | None, timeout_s: float,
                    connect_timeout_s: float, max_retries: int,
                    azure_api_version: str | None) -> ModelEndpoint:
    """The endpoint of an OpenAI model resource, refusing an Azure setup without a key
    or with OpenAI's own URL."""
    if azure_api_version is None:
        return ModelEndpoint("openai", base_url, model, timeout_s, api_key_env,
                             connect_timeout_s, max_retries)
    if api_key_env is None or base_url.rstrip("/") == OPENAI_URL:
        raise ValueError("azure-openai: give base_url= your Azure OpenAI endpoint and "
                         "api_key_env= the variable holding its key (e.g. AZURE_OPENAI_API_KEY)")
    return ModelEndpoint("azure-openai", base_url, model, timeout_s, api_key_env,
                         connect_timeout_s, max_retries)


class OpenAIConnection:
    """The SDK client of one model resource (one connection pool, thread-safe), with
    its timeouts, retries and key or none."""

    def __init__(self, endpoint: ModelEndpoint, azure_api_version: str | None,
                 transport: httpx2.BaseTransport | None):
        self.endpoint = endpoint
        http_client = openai.DefaultHttpxClient(transport=transport) \
            if transport is not None else None
        common: dict[str, Any] = {"timeout": endpoint.timeout,
                                  "max_retries": endpoint.max_retries,
                                  "http_client": http_client}
        self._client: openai.OpenAI
        if azure_api_version is not None:
            self._client = openai.AzureOpenAI(azure_endpoint=endpoint.base_url,
                                              api_version=azure_api_version,
                                              api_key=endpoint.api_key, **common)
        else:
            # Without a key the SDK would fall back to OPENAI_API_KEY (and refuses ""):
            # give it a key function that yields none and omit the header on each request.
            self._client = openai.OpenAI(base_url=endpoint.base_url,
                                         api_key=endpoint.api_key or _no_key, **common)
        self._headers: dict[str, Any] = {} if endpoint.api_key else \
            {"Authorization": openai.Omit()}

    @property
    def client(self) -> openai.OpenAI:
        return self._client

    def call(self, create: Callable[..., LegacyAPIResponse[R]], **body: Any
             ) -> tuple[dict[str, Any], LegacyAPIResponse[R]]:
        """Run a ``with_raw_response`` SDK call; the JSON object answered and the raw
        response to parse. Failures become :class:`ModelProviderError`."""
        if self._client.is_closed():
            raise self.endpoint.closed_error()
        try:
            raw = create(**body, extra_headers=self._headers)
        except openai.APIStatusError as error:
            failure = self.endpoint.status_error(error.response)
        except openai.APIConnectionError as error:
            raise self.endpoint.transport_error(str(error.request.url), error.__cause__) \
                from error.__cause__
        else:
            return self.endpoint.json_object(raw.http_response), raw
        # Raised here, out of the handler, so that the SDK's error (its text may echo the
        # key) is not even the suppressed context of ours.
        raise failure

    def close(self) -> None:
        self._client.close()


def _no_key() -> str:
    return ""


def function_spec(tool: Tool) -> dict[str, Any]:
    """A tool as OpenAI (and Ollama) describe functions to the model."""
    return {"type": "function", "function": {"name": tool.name, "description": tool.description,
                                             "parameters": dict(tool.parameters)}}


class OpenAIChatModelSetup(BaseChatModelSetup):
    """``timeout_s`` bounds the wait for each answer, ``connect_timeout_s`` for each
    connection; ``max_retries`` more attempts follow HTTP 408/409/429/5xx, timeouts
    and failed connections (Retry-After honoured). ``transport`` replaces the
    network (``httpx2.MockTransport`` in tests). Structured output is native:
    ``response_format: {"type": "json_schema", ...}``."""

    supports_output_schema: ClassVar[bool] = True

    def __init__(self, model: str, base_url: str = OPENAI_URL,
                 api_key_env: str | None = "OPENAI_API_KEY", timeout_s: float = 60.0,
                 temperature: float | None = None, max_tokens: int | None = None, *,
                 connect_timeout_s: float = 10.0, max_retries: int = 2,
                 azure_api_version: str | None = None,
                 transport: httpx2.BaseTransport | None = None):
        self.endpoint = openai_endpoint(model, base_url, api_key_env, timeout_s,
                                        connect_timeout_s, max_retries, azure_api_version)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self._connection = OpenAIConnection(self.endpoint, azure_api_version, transport)

    def chat(self, messages: Sequence[ChatMessage], tools: Sequence[Tool] | None = None, *,
             json_mode: bool = False, output_schema: OutputSchema | None = None
             ) -> ChatMessage:
        body: dict[str, Any] = {"model": self.endpoint.model,
                                "messages": [_message(m) for m in messages]}
        if tools:
            body["tools"] = [function_spec(t) for t in tools]
        if output_schema is not None:
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": output_schema.name, "schema": output_schema.json_schema}}
        elif json_mode:
            body["response_format"] = {"type": "json_object"}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        connection = self._connection
        answer, raw = connection.call(connection.client.chat.completions.with_raw_response.create,
                                      **body)
        try:
            message = raw.parse().choices[0].message
            calls = tuple(_tool_call(c) for c in message.tool_calls or ())
            usage = getattr(raw.parse(), "usage", None)
            return ChatMessage(MessageRole.ASSISTANT, message.content or "", calls,
                               usage=TokenUsage.reported(
                                   getattr(usage, "prompt_tokens", None),
                                   getattr(usage, "completion_tokens", None)))
        except (AttributeError, IndexError, KeyError, TypeError, ValueError) as error:
            raise self.endpoint.malformed(str(raw.http_response.request.url), error,
                                          answer) from None

    def close(self) -> None:
        """Close the connection pool; later calls fail with a clear error."""
        self._connection.close()


def _tool_call(call: ChatCompletionMessageToolCallUnion) -> ToolCall:
    if not isinstance(call, ChatCompletionMessageFunctionToolCall):
        raise ValueError(f"a tool call of type {call.type!r}; only functions were offered")
    return ToolCall(call.id, call.function.name, json.loads(call.function.arguments or "{}"))


def _message(message: ChatMessage) -> dict[str, Any]:
    out: dict[str, Any] = {"role": str(message.role), "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [{"id": c.id, "type": "function",
                              "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                             for c in message.tool_calls]
    if message.role is MessageRole.TOOL:
        out["tool_call_id"] = message.tool_call_id
    return out
