"""A chat model that answers from a script: ``ctx.chat`` offline, without an API key.

.. code-block:: python

    from flink_agents_ltm.api.chat_models import ToolCall
    from flink_agents_ltm.integrations.chat_models.scripted import ScriptedChatModelSetup

    @chat_model_setup
    def assistant():
        return ResourceDescriptor(ScriptedChatModelSetup, answers=[
            {"tool_calls": [{"name": "order_status", "arguments": {"order_id": "7"}}]},
            "Your order is on its way.",
        ])

``answers`` is the script of one chat: the n-th answer replies to the n-th
model call of a ``ctx.chat`` (counted by the assistant messages already in the
conversation), so every chat, on any key or thread, follows the same script,
and a replay after recovery gets the same answers. An answer is the reply's
text, a :class:`ChatMessage`, or a mapping with ``content`` and/or
``tool_calls`` (each ``{"name": ..., "arguments": {...}}``, with an optional
``id``). For answers that depend on the conversation (say, quoting a tool's
result), pass ``respond=function`` instead: ``function(messages, tools)``
returns an answer in the same forms. It must be a module-level function, so
that the job can ship it to the TaskManagers.

Each answer reports its token usage as a real provider does (``ChatMessage.usage``, which
the runtime counts in its ``promptTokens`` / ``completionTokens`` metrics), counted in
words: the prompt's tokens are the words of every message's content, the completion's
the words of the answer's content plus one per tool call. An answer given as a
``ChatMessage`` that carries its own ``usage`` keeps it.

It takes ``output_schema`` as a model with native structured output does, and
answers from its script all the same: script the JSON text the schema wants (or
an answer that does not fit, to try what ``ctx.chat`` does then).

The model keeps no state, so it is safe on every worker thread. Use it to try
``ctx.chat`` with tools, to write tests of your agents, and in examples; it
understands nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from flink_agents_ltm.api.chat_models import (
    BaseChatModelSetup,
    ChatMessage,
    MessageRole,
    TokenUsage,
    Tool,
    ToolCall,
)
from flink_agents_ltm.api.errors import FlinkAgentsLtmError
from flink_agents_ltm.api.structured_output import OutputSchema

__all__ = ["Answer", "ScriptExhaustedError", "ScriptedChatModelSetup"]

Answer = str | ChatMessage | Mapping[str, Any]
Respond = Callable[[Sequence[ChatMessage], Sequence[Tool]], Answer]


class ScriptExhaustedError(FlinkAgentsLtmError, RuntimeError):
    """A chat asked the scripted model for more answers than the script has."""


class ScriptedChatModelSetup(BaseChatModelSetup):
    # Takes ``output_schema`` as a native model does, and answers from its script all the
    # same: the script says whether the answer fits.
    supports_output_schema: ClassVar[bool] = True

    def __init__(self, answers: Sequence[Answer] | None = None, respond: Respond | None = None):
        if (answers is None) == (respond is None):
            raise ValueError("ScriptedChatModelSetup takes either answers=[...] or "
                             "respond=function, not both and not neither")
        if respond is not None and not callable(respond):
            raise TypeError(f"respond must be a function(messages, tools), got "
                            f"{type(respond).__name__}")
        if answers is not None:
            if isinstance(answers, str | Mapping) or not isinstance(answers, Sequence):
                raise TypeError("answers must be a list of answers (one per model call of a "
                                f"chat), got {type(answers).__name__}")
            if not answers:
                raise ValueError("answers must not be empty: the first model call of every "
                                 "chat needs one")
            answers = tuple(to_message(a, turn) for turn, a in enumerate(answers))
        self.answers: tuple[ChatMessage, ...] | None = answers
        self.respond = respond

    def chat(self, messages: Sequence[ChatMessage], tools: Sequence[Tool] | None = None, *,
             json_mode: bool = False, output_schema: OutputSchema | None = None
             ) -> ChatMessage:
        turn = sum(1 for m in messages if m.role is MessageRole.ASSISTANT)
        if self.respond is not None:
            return with_usage(messages, to_message(
                self.respond(tuple(messages), tuple(tools or ())), turn))
        answers = self.answers or ()
        if turn >= len(answers):
            raise ScriptExhaustedError(
                f"the scripted chat model has {len(answers)} answer(s) and this chat "
                f"asks for answer {turn + 1}: end the script with an answer without "
                "tool_calls, or add answers")
        return with_usage(messages, answers[turn])


def with_usage(messages: Sequence[ChatMessage], reply: ChatMessage) -> ChatMessage:
    """``reply`` with its token usage in words (unless it has one)."""
    if reply.usage is not None:
        return reply
    prompt = sum(len(m.content.split()) for m in messages)
    completion = len(reply.content.split()) + len(reply.tool_calls)
    return dataclasses.replace(reply, usage=TokenUsage(prompt, completion))


def to_message(answer: Answer, turn: int) -> ChatMessage:
    """An answer as the assistant's message; tool calls without an id get
    ``call-<turn>-<index>``."""
    if isinstance(answer, ChatMessage):
        if answer.role is not MessageRole.ASSISTANT:
            raise ValueError(f"answer {turn + 1} is a {answer.role} message; a chat "
                             "model answers as the assistant")
        return answer
    if isinstance(answer, str):
        return ChatMessage(MessageRole.ASSISTANT, answer)
    if not isinstance(answer, Mapping):
        raise TypeError(f"answer {turn + 1} must be text, a ChatMessage or a mapping with "
                        f"content/tool_calls, got {type(answer).__name__}")
    unknown = set(answer) - {"content", "tool_calls"}
    if unknown:
        raise ValueError(f"answer {turn + 1} has unknown field(s) {sorted(unknown)}; an "
                         "answer has content and/or tool_calls")
    calls = []
    for index, call in enumerate(answer.get("tool_calls") or ()):
        if not isinstance(call, Mapping) or not isinstance(call.get("name"), str):
            raise ValueError(f"tool call {index + 1} of answer {turn + 1} must be a mapping "
                             f"with a name and arguments, got {call!r}")
        arguments = call.get("arguments") or {}
        if not isinstance(arguments, Mapping):
            raise ValueError(f"the arguments of tool call '{call['name']}' in answer "
                             f"{turn + 1} must be a mapping, got {arguments!r}")
        calls.append(ToolCall(str(call.get("id") or f"call-{turn}-{index}"), call["name"],
                              dict(arguments)))
    return ChatMessage(MessageRole.ASSISTANT, answer.get("content") or "", tuple(calls))
