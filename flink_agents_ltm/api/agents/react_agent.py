"""A built-in ReAct agent: a chat model that calls tools until it can answer, as one action.

.. code-block:: python

    class Triage(BaseModel):
        urgent: bool
        team: str

    agent = ReActAgent(
        chat_model=ResourceDescriptor(OpenAIChatModelSetup, model="gpt-4o-mini"),
        prompt=Prompt.from_messages([ChatMessage("system", "You triage for {shop}."),
                                     ChatMessage("user", "{text}")]),
        output_schema=Triage,
        tools=[order_status],
        memory=True,
    )
    out = agents_env.from_datastream(stream, key_selector=...).apply(agent).to_datastream()

"ReAct" here means the model's own tool calling (no Thought/Action text to
parse): the agent's one action hands the input to ``ctx.chat``, whose loop
runs the model and the tools as durable calls. So a ReAct agent has the
guarantees of a hand-written action: after a failure, recorded model answers and
tool results are replayed, not asked again, and with
``agents.action-state.store`` on, a call that completed after the last
checkpoint is not repeated either.

The input of each record becomes the conversation:

* a primitive (``str``, number, ``bool``, ``None``) is the user's message, or the
  prompt's ``{input}`` when there is a prompt;
* a dict, a PyFlink ``Row`` or an object with attributes (a dataclass, a pydantic
  model) gives the prompt's values by name (a prompt is then required); every
  placeholder must be among them.

A text prompt is the user's message; a prompt of messages keeps its roles. The
agent emits one ``OutputEvent`` per input: the validated value when there is an
``output_schema`` (an instance of the model class, or a dict), the answer's text
otherwise.

``tools`` holds tools (a ``Tool`` or a function, wrapped with ``@tool``) and names of
declared MCP servers (``ResourceType.MCP_SERVER``, the ``mcp`` extra): each name stands for
every tool of that server, looked up when the action runs (a server's tools live in the
process that opened it), so a tool the server adds after a refresh is offered too.

``chat_model`` is a :class:`~flink_agents_ltm.api.resources.ResourceDescriptor`
(declared on the agent) or the name of a chat model declared on the environment;
``prompt`` a :class:`~flink_agents_ltm.api.prompts.Prompt` or the name of a declared
prompt. ``memory=True`` (or the name of a memory set; ``True`` means ``"react"``)
uses the key's long-term memory: before the first model call the agent searches
the set with the user's message and tells the model what it found (at most
``recall_limit`` items, in a system message); after the answer it adds
``"<message> -> <answer>"`` to the set. Both are durable calls, so a replay neither
searches again nor writes twice.

Unlike agents written as classes, a ReAct agent is configured per instance: its
actions and resources are those of the instance (``agent.actions()``,
``agent.resources()``).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flink_agents_ltm.api.agent import Action, Agent
from flink_agents_ltm.api.chat_models import ChatMessage, MessageRole, after_system_messages
from flink_agents_ltm.api.events import Event, InputEvent, OutputEvent
from flink_agents_ltm.api.memory.long_term_memory import MemorySet
from flink_agents_ltm.api.prompts import Prompt, prompt_descriptor
from flink_agents_ltm.api.resources import ResourceDescriptor, ResourceType
from flink_agents_ltm.api.runner_context import RunnerContext
from flink_agents_ltm.api.structured_output import OutputSchema
from flink_agents_ltm.api.tools import Tool, tool

__all__ = ["ReActAgent"]

CHAT_MODEL = "react_chat_model"
"""The name the chat model given as a descriptor is declared under."""
PROMPT = "react_prompt"
"""The name the prompt given as a ``Prompt`` is declared under."""
DEFAULT_MEMORY_SET = "react"
_PRIMITIVES = (str, int, float, bool, type(None))
_MAX_QUERY_CHARS = 1000


@dataclass(frozen=True)
class _Settings:
    """What the agent's action needs (pickled with the agent to the TaskManagers)."""

    chat_model: str
    prompt: str | None
    output_schema: Any
    tools: tuple[Tool, ...]
    memory_set: str | None
    recall_limit: int
    max_turns: int
    output_retries: int
    tool_servers: tuple[str, ...] = ()  # declared MCP servers whose tools are offered too


class ReActAgent(Agent):
    """A chat model with tools, a prompt and an optional output schema, as an agent."""

    def __init__(self, *, chat_model: ResourceDescriptor | str,
                 prompt: Prompt | str | None = None, output_schema: Any = None,
                 tools: Sequence[Tool | Callable[..., Any] | str] = (),
                 memory: bool | str = False, recall_limit: int = 5, max_turns: int = 8,
                 output_retries: int = 1):
        self._resources: dict[str, tuple[ResourceType, ResourceDescriptor]] = {}
        if isinstance(chat_model, ResourceDescriptor):
            self._resources[CHAT_MODEL] = (ResourceType.CHAT_MODEL, chat_model)
            model_name = CHAT_MODEL
        elif isinstance(chat_model, str) and chat_model.strip():
            model_name = chat_model
        else:
            raise TypeError("ReActAgent(chat_model=) is a ResourceDescriptor of a chat model "
                            f"or the name of a declared one, got {chat_model!r}")
        prompt_name: str | None
        if isinstance(prompt, Prompt):
            self._resources[PROMPT] = (ResourceType.PROMPT, prompt_descriptor(prompt, PROMPT))
            prompt_name = PROMPT
        elif prompt is None or (isinstance(prompt, str) and prompt.strip()):
            prompt_name = prompt
        else:
            raise TypeError("ReActAgent(prompt=) is a Prompt or the name of a declared one, "
                            f"got {prompt!r}")
        if output_schema is not None:
            OutputSchema(output_schema)  # refused now, not at the first input
        if isinstance(tools, str | Tool) or not isinstance(tools, Sequence):
            raise TypeError("ReActAgent(tools=) is a list of tools (Tool or functions) and "
                            "names of declared MCP servers")
        servers = tuple(t for t in tools if isinstance(t, str))
        if any(not name.strip() for name in servers) or len(set(servers)) != len(servers):
            raise ValueError(f"ReActAgent(tools=) names MCP servers by non-empty, distinct "
                             f"names, got {list(servers)}")
        wrapped = tuple(t if isinstance(t, Tool) else tool(t) for t in tools
                        if not isinstance(t, str))
        names = [t.name for t in wrapped]
        if len(set(names)) != len(names):
            raise ValueError(f"ReActAgent got two tools of one name: {names}")
        if memory is True:
            memory_set: str | None = DEFAULT_MEMORY_SET
        elif memory is False or memory is None:
            memory_set = None
        elif isinstance(memory, str) and memory.strip():
            memory_set = memory
        else:
            raise TypeError("ReActAgent(memory=) is True, False or the name of a memory set, "
                            f"got {memory!r}")
        for name, value, least in (("recall_limit", recall_limit, 1),
                                   ("max_turns", max_turns, 1),
                                   ("output_retries", output_retries, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"ReActAgent({name}=) must be an int >= {least}, "
                                 f"got {value!r}")
        self._settings = _Settings(model_name, prompt_name, output_schema, wrapped,
                                   memory_set, recall_limit, max_turns, output_retries,
                                   servers)

    def actions(self) -> list[Action]:  # type: ignore[override]  # per instance
        return [Action("react", functools.partial(react, self._settings), (InputEvent,))]

    def resources(  # type: ignore[override]  # per instance
            self) -> dict[str, tuple[ResourceType, ResourceDescriptor]]:
        return dict(self._resources)

    def actions_for(self, event: Event) -> list[Action]:  # type: ignore[override]
        return [a for a in self.actions() if isinstance(event, a.listens_to)]

    def __repr__(self) -> str:
        s = self._settings
        return (f"ReActAgent(chat_model={s.chat_model!r}, prompt={s.prompt!r}, tools="
                f"{[t.name for t in s.tools] + list(s.tool_servers)}, memory="
                f"{s.memory_set!r})")


async def react(settings: _Settings, event: InputEvent, ctx: RunnerContext) -> None:
    """The agent's action: the input as a conversation, ``ctx.chat``, one output."""
    messages = _conversation(settings, event.input, ctx)
    query = next((m.content for m in reversed(messages) if m.role is MessageRole.USER), "")
    query = query[:_MAX_QUERY_CHARS]
    memory_set = None
    if settings.memory_set is not None and query.strip():
        memory_set = ctx.long_term_memory.get_memory_set(settings.memory_set)
        recalled = await ctx.durable_execute_async(recall, memory_set, query,
                                                   settings.recall_limit)
        if recalled:
            note = "What you remember of this conversation partner:\n" + "\n".join(
                f"- {value}" for value in recalled)
            messages.insert(after_system_messages(messages), ChatMessage(MessageRole.SYSTEM, note))
    reply = await ctx.chat(messages, model=settings.chat_model, tools=_tools(settings, ctx),
                           max_turns=settings.max_turns, output_schema=settings.output_schema,
                           output_retries=settings.output_retries)
    if memory_set is not None:
        await ctx.durable_execute_async(memory_set.add, f"{query} -> {reply.content}")
    ctx.send_event(OutputEvent(reply.content if settings.output_schema is None
                               else reply.structured))


def _tools(settings: _Settings, ctx: RunnerContext) -> list[Tool]:
    """The agent's own tools and every tool of its MCP servers (one name once: an MCP tool
    of the same name as another tool is an error naming both)."""
    tools = list(settings.tools)
    for server in settings.tool_servers:
        tools.extend(ctx.get_resource(server, ResourceType.MCP_SERVER).tools())
    names = [t.name for t in tools]
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:
        raise ValueError(f"ReActAgent offers two tools named {', '.join(map(repr, clash))} "
                         f"(its own and MCP servers {list(settings.tool_servers)}); rename one")
    return tools


def recall(memory_set: MemorySet, query: str, limit: int) -> list[str]:
    """The values of the items of ``memory_set`` most like ``query`` (a worker's call)."""
    return [item.value for item in memory_set.search(query, limit=limit)]


def _conversation(settings: _Settings, value: Any, ctx: RunnerContext) -> list[ChatMessage]:
    prompt: Prompt | None = None
    if settings.prompt is not None:
        found = ctx.get_resource(settings.prompt, ResourceType.PROMPT)
        if not isinstance(found, Prompt):
            raise TypeError(f"prompt '{settings.prompt}' is a {type(found).__name__}, "
                            "not a Prompt")
        prompt = found
    if isinstance(value, _PRIMITIVES):
        text = "" if value is None else str(value)
        if prompt is None:
            return [ChatMessage(MessageRole.USER, text)]
        return prompt.format_messages({"input": text}, role=MessageRole.USER)
    values = _values_of(value)
    if prompt is None:
        raise TypeError(f"a ReActAgent without a prompt takes str, number or bool inputs, got "
                        f"a {type(value).__name__}: give it a prompt whose placeholders name "
                        "the input's fields")
    return prompt.format_messages(values, role=MessageRole.USER)


def _values_of(value: Any) -> Mapping[str, Any]:
    """A record's fields by name: a mapping, a PyFlink Row, a dataclass, a pydantic model,
    or any object's attributes."""
    if isinstance(value, Mapping):
        return value
    as_dict = getattr(value, "as_dict", None)  # pyflink.common.Row
    if callable(as_dict):
        return dict(as_dict(recursive=True))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    model_dump = getattr(value, "model_dump", None)  # pydantic
    if callable(model_dump):
        return dict(model_dump())
    if hasattr(value, "__dict__"):
        return dict(vars(value))
    raise TypeError(f"a ReActAgent cannot read fields from a {type(value).__name__} input; "
                    "give it a str, a dict, a Row or an object with attributes")
