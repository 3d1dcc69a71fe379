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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from flink_agents_ltm.api.chat_models import (
    ChatMessage,
    ChatTurnsExceededError,
    MessageRole,
    ToolCall,
)
from flink_agents_ltm.api.runner_context import MemoryObject
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
    from flink_agents_ltm.runtime.runner_context_impl import RunnerContextImpl


class ChatScope:
    """The memories the children of one chat call share."""

    def __init__(self, sensory: Any, short_term: Any):
        self.sensory = sensory
        self.short_term = short_term


class ChatLoop:
    def __init__(self, ctx: RunnerContextImpl, messages: Sequence[ChatMessage],
                 model_name: str, model: BaseChatModelSetup, tools: Sequence[Tool],
                 max_turns: int):
        self._ctx = ctx
        self._history = list(messages)
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
        for _ in range(self._max_turns):
            call = DurableCall(self._model.chat, (tuple(self._history), self._tools), {},
                               name=f"chat model '{self._model_name}'")
            reply = await call
            self._ctx.model_answered(self._model_name, call, reply)
            self._history.append(reply)
            if not reply.tool_calls:
                return reply
            for call in reply.tool_calls:
                content = await self._call_tool(call, scope)
                self._history.append(ChatMessage(MessageRole.TOOL, content,
                                                 tool_call_id=call.id, name=call.name))
        raise ChatTurnsExceededError(
            f"chat model '{self._model_name}' still asked for tools after max_turns="
            f"{self._max_turns} model calls (action '{self._ctx.action_name}', key "
            f"{self._ctx.key!r}); raise max_turns or give the model fewer reasons to loop")

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

    def __init__(self, ctx: RunnerContextImpl, scope: ChatScope):
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
