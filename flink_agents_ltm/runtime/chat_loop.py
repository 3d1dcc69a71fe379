"""``ctx.chat``: the model/tool loop, run as child steps of the calling action.

Each model call is a durable async call (worker pool; the mailbox goes on with
other keys while the model thinks), named after the model (``chat model 'x'``).
Each tool call is a durable call too (``tool 'y'``): on the worker pool for a
plain tool, inline on the mailbox thread for a tool that takes ``ctx`` (it
reads keyed memory, which lives there). All of them are recorded in the
caller's action state in call order, so a replay after
recovery gets the recorded model answers and tool results instead of calling
again (unless ``agents.action-state.retained`` is off).

The children share one :class:`ChatScope` per ``ctx.chat`` call: read-through
stores over the caller's sensory and short-term memory
(:mod:`~flink_agents_ltm.runtime.read_through_memory`). The scope keeps the
children's writes local, for the children of the same chat to see; the caller's
pending writes become durable only when the caller itself completes.

A replayed tool call returns its recorded result without running, so its
writes to the chat scope are not redone; they were never visible outside the
chat, and a tool that needs them should return what it wrote.

Model mistakes (an unknown tool, arguments that do not fit) go back to the
model as the tool's result so that it can correct itself; a tool that raises
fails the action, like any durable call.

With an output schema, the final answer is validated here, after its durable
call: an answer that does not fit goes back to the model (a user message saying
what is wrong) up to ``output_retries`` times, then fails the action with
:class:`~flink_agents_ltm.api.structured_output.StructuredOutputError`. A replay
gets the recorded answers and validates them again, so it takes the same path
without calling the model. A model without native structured output gets the
schema in a system message and ``json_mode``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from flink_agents_ltm.api.chat_models import (
    ChatMessage,
    ChatTurnsExceededError,
    MessageRole,
    ToolCall,
    after_system_messages,
)
from flink_agents_ltm.api.runner_context import MemoryObject
from flink_agents_ltm.api.structured_output import (
    OutputSchema,
    OutputSchemaMismatch,
    StructuredOutputError,
)
from flink_agents_ltm.api.tools import Tool, ToolCallError, ToolCallTimeoutError, ToolContext
from flink_agents_ltm.runtime.durable import (
    DurableCall,
    DurableCallError,
    DurableCallTimeoutError,
)
from flink_agents_ltm.runtime.keyed_memory import KeyedMemoryObject
from flink_agents_ltm.runtime.read_through_memory import ReadThroughMemoryStore

if TYPE_CHECKING:
    from flink_agents_ltm.api.chat_models import BaseChatModelSetup


class ChatCaller(Protocol):
    """What a chat loop needs of the action that runs it (the runner context is one);
    named here so that the loop and the context do not import each other."""

    sensory_store: Any
    short_term_store: Any

    @property
    def key(self) -> Any: ...

    @property
    def action_name(self) -> str: ...

    def check_mailbox(self, what: str) -> None: ...

    def model_answered(self, model: str, call: DurableCall, reply: ChatMessage) -> None: ...

    def durable_execute_named(self, name: str, fn: Callable[..., Any], *args: Any,
                              **kwargs: Any) -> Any: ...


class ChatScope:
    """The memories the children of one chat call share."""

    def __init__(self, sensory: Any, short_term: Any):
        self.sensory = sensory
        self.short_term = short_term


class ChatLoop:
    def __init__(self, ctx: ChatCaller, messages: Sequence[ChatMessage],
                 model_name: str, model: BaseChatModelSetup, tools: Sequence[Tool],
                 max_turns: int, *, output_schema: OutputSchema | None = None,
                 output_retries: int = 1):
        self._ctx = ctx
        self._history = list(messages)
        self._schema = output_schema
        self._output_retries = output_retries
        self._model_kwargs: dict[str, Any] = {}
        if output_schema is not None:
            if getattr(model, "supports_output_schema", False):
                self._model_kwargs = {"output_schema": output_schema}
            else:
                self._model_kwargs = {"json_mode": True}
                self._history.insert(after_system_messages(self._history), ChatMessage(
                    MessageRole.SYSTEM, output_schema.instruction()))
        self._model_name = model_name
        self._model = model
        self._tools = tuple(tools)
        self._by_name = {t.name: t for t in tools}
        self._max_turns = max_turns

    def _open_scope(self) -> ChatScope:
        return ChatScope(ReadThroughMemoryStore(self._ctx.sensory_store),
                         ReadThroughMemoryStore(self._ctx.short_term_store))

    async def run(self) -> ChatMessage:
        scope = self._open_scope()
        turns, retries = 0, 0
        while turns < self._max_turns:
            call = DurableCall(self._model.chat, (tuple(self._history), self._tools),
                               dict(self._model_kwargs),
                               name=f"chat model '{self._model_name}'")
            reply = await call
            self._ctx.model_answered(self._model_name, call, reply)
            self._history.append(reply)
            if not reply.tool_calls:
                if self._schema is None:
                    return reply
                try:
                    return replace(reply, structured=self._schema.parse(reply.content))
                except OutputSchemaMismatch as problem:
                    if retries >= self._output_retries:
                        raise self._invalid(reply, problem, retries) from None
                    retries += 1
                    self._history.append(ChatMessage(MessageRole.USER,
                                                     self._schema.correction(problem)))
                    continue
            turns += 1
            for call in reply.tool_calls:
                content = await self._call_tool(call, scope)
                self._history.append(ChatMessage(MessageRole.TOOL, content,
                                                 tool_call_id=call.id, name=call.name))
        raise ChatTurnsExceededError(
            f"chat model '{self._model_name}' still asked for tools after max_turns="
            f"{self._max_turns} model calls (action '{self._ctx.action_name}', key "
            f"{self._ctx.key!r}); raise max_turns or give the model fewer reasons to loop")

    def _invalid(self, reply: ChatMessage, problem: OutputSchemaMismatch,
                 retries: int) -> StructuredOutputError:
        assert self._schema is not None
        return StructuredOutputError(
            f"chat model '{self._model_name}' answered no valid '{self._schema.name}' after "
            f"{retries + 1} attempt(s) (action '{self._ctx.action_name}', key "
            f"{self._ctx.key!r}): {problem}; raise output_retries, or simplify the schema "
            "or the prompt", model=self._model_name, schema=self._schema.name,
            raw_answer=reply.content)

    async def _call_tool(self, call: ToolCall, scope: ChatScope) -> str:
        tool = self._by_name.get(call.name)
        if tool is None:
            known = ", ".join(self._by_name) or "none"
            return f"error: there is no tool named '{call.name}'; tools: {known}"
        problem = tool.argument_error(call.arguments)
        if problem is not None:
            return f"error: {problem}"
        try:
            name = f"tool '{call.name}'"
            if tool.wants_context:
                context = _ScopedToolContext(self._ctx, scope)
                return self._ctx.durable_execute_named(name, tool.invoke, call.arguments,
                                                       context)
            return await DurableCall(tool.invoke, (call.arguments,), {}, name=name)
        except DurableCallError as error:
            raise ToolCallError(
                f"tool '{call.name}'{_of(tool)} called by chat model '{self._model_name}' "
                f"failed: {type(error.__cause__).__name__}: {error.__cause__}"
            ) from error.__cause__
        except DurableCallTimeoutError as error:
            raise ToolCallTimeoutError(
                f"tool '{call.name}'{_of(tool)} called by chat model '{self._model_name}' "
                f"timed out: {error}") from error


def _of(tool: Tool) -> str:
    """`` of MCP server 'orders'`` for a tool that says where it comes from."""
    return f" of {tool.origin}" if tool.origin else ""


class _ScopedToolContext(ToolContext):
    """A tool's view of the caller: the chat scope's memories (mailbox thread only)."""

    def __init__(self, ctx: ChatCaller, scope: ChatScope):
        self._ctx = ctx
        self._sensory = KeyedMemoryObject(scope.sensory)
        self._short_term = KeyedMemoryObject(scope.short_term)

    @property
    def key(self) -> Any:
        return self._ctx.key

    @property
    def sensory_memory(self) -> MemoryObject:
        self._ctx.check_mailbox("sensory_memory (in a tool)")
        return self._sensory

    @property
    def short_term_memory(self) -> MemoryObject:
        self._ctx.check_mailbox("short_term_memory (in a tool)")
        return self._short_term
