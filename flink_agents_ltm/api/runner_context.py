"""What an action sees: the ``ctx`` it is called with.

Threading rules (the operator's processing thread is its *mailbox thread*):

* ``sensory_memory``, ``short_term_memory``, ``get_resource``, ``send_event``
  and ``durable_execute`` belong to the mailbox thread; calling them from a
  worker raises ``MailboxThreadError``.
* ``long_term_memory.get_memory_set`` is mailbox-only too, but the set it
  returns is bound to this action's key and may be used on any thread, which
  is what ``durable_execute_async`` callables should do.
* ``durable_execute_async(fn, *args)`` runs ``fn`` on a worker. Await it only
  from an ``async def`` action; other awaitables (``asyncio.sleep``, ...) are
  not supported inside actions.
* ``chat(messages, model=..., tools=[...])`` is awaited like a durable call;
  call it on the mailbox thread (it resolves the model there). It takes a
  prompt too (``prompt="triage", values={...}``) and an ``output_schema``.
* ``run_subagent(agent, event)`` is awaited too: another agent's actions run inside
  this one, on the same key, in a memory scope of their own.

Sensory memory lives for one input's run; short-term memory lives for the key.
Both hold any picklable value under dotted paths (``"profile.name"``). Writes
become durable when the action completes and are dropped if it fails.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from flink_agents_ltm.api.events import Event
from flink_agents_ltm.api.memory.long_term_memory import BaseLongTermMemory
from flink_agents_ltm.api.memory_object import MemoryObject
from flink_agents_ltm.api.metric_group import MetricGroup
from flink_agents_ltm.api.resources import ResourceType

if TYPE_CHECKING:
    from flink_agents_ltm.api.agent import Agent
    from flink_agents_ltm.api.chat_models import ChatMessage
    from flink_agents_ltm.api.prompts import Prompt
    from flink_agents_ltm.api.tools import Tool

__all__ = ["CALL_AGAIN", "MemoryObject", "RunnerContext"]


class _CallAgain:
    """The answer of a reconciler that found no trace of the call's side effect."""

    _instance: _CallAgain | None = None

    def __new__(cls) -> _CallAgain:  # one value, also after unpickling
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __reduce__(self) -> str:
        return "CALL_AGAIN"

    def __repr__(self) -> str:
        return "CALL_AGAIN"


CALL_AGAIN = _CallAgain()
"""What ``reconciler()`` returns to say "the side effect did not happen: call again"."""


class RunnerContext(ABC):
    @property
    @abstractmethod
    def key(self) -> Any:
        """The Flink key of the input being processed."""

    @property
    @abstractmethod
    def action_name(self) -> str: ...

    @abstractmethod
    def send_event(self, event: Event) -> None:
        """Queue an event for this key's run (an ``OutputEvent`` is emitted)."""

    @property
    @abstractmethod
    def sensory_memory(self) -> MemoryObject: ...

    @property
    @abstractmethod
    def short_term_memory(self) -> MemoryObject: ...

    @property
    @abstractmethod
    def long_term_memory(self) -> BaseLongTermMemory: ...

    @property
    def agent_metric_group(self) -> MetricGroup | None:
        """The agent's metric group (the operator's ``flink_agents`` group), shared by every
        action: counters, meters, gauges and histograms the action creates by name (see
        :mod:`flink_agents_ltm.api.metric_group`). ``None`` where no metrics are kept."""
        return None

    @property
    def action_metric_group(self) -> MetricGroup | None:
        """This action's own metric group (``action.<action name>`` of the agent group);
        the runtime counts ``ctx.chat``'s tokens and model latency under its
        ``model.<chat model>`` sub-group. ``None`` where no metrics are kept."""
        return None

    @abstractmethod
    def get_resource(self, name: str, resource_type: ResourceType | None = None) -> Any:
        """The declared resource ``name``, built once per operator."""

    @abstractmethod
    def durable_execute(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run ``fn`` inline and record its result; a replay returns the record."""

    @abstractmethod
    def durable_execute_async(
        self, fn: Callable[..., Any], *args: Any,
        reconciler: Callable[[], Any] | None = None, **kwargs: Any
    ) -> Awaitable[Any]:
        """Run ``fn`` on the worker pool; await the result. While it runs, the
        operator processes other keys. Recorded like ``durable_execute``.

        ``reconciler`` (with ``agents.action-state.store`` on): when a replay finds the
        call started but its result never recorded (the process died mid-call), the
        runtime calls ``reconciler()`` instead of ``fn``: it answers the call's result
        if the side effect happened, or :data:`CALL_AGAIN` to run ``fn`` again.
        Without one, such a call runs again."""

    @abstractmethod
    def chat(
        self,
        messages: str | Sequence[ChatMessage] | None = None,
        model: str | None = None,
        tools: Sequence[Tool | Callable[..., Any]] = (),
        max_turns: int = 8,
        *,
        prompt: Prompt | str | None = None,
        values: Mapping[str, Any] | None = None,
        output_schema: Any = None,
        output_retries: int = 1,
    ) -> Awaitable[ChatMessage]:
        """Let the declared chat model ``model`` answer, calling ``tools`` as it asks (at
        most ``max_turns`` model calls); await the final answer. Model answers and tool
        results are durable calls. Tools see this action's memories, including writes
        not yet persisted, and their own writes stay inside this chat call (see
        :mod:`flink_agents_ltm.api.tools`). A plain function in ``tools`` is wrapped
        with ``@tool``.

        ``prompt`` (a :class:`~flink_agents_ltm.api.prompts.Prompt` or the name of a
        declared one) is filled with ``values`` and goes first: a message prompt's
        messages keep their roles, a text prompt is one user message; ``messages``, if
        given too, follow it. A placeholder without a value fails the call with a
        ``PromptPlaceholderError`` naming it.

        ``output_schema`` (a pydantic model class, or a JSON schema dict) asks for a
        structured answer: the reply's ``structured`` is the validated value (an
        instance of the class, or a dict) and its ``content`` the JSON text. An answer
        that does not fit goes back to the model with what was wrong, ``output_retries``
        times (those model calls are not counted in ``max_turns``); then the call fails
        with ``StructuredOutputError`` (:mod:`flink_agents_ltm.api.structured_output`).
        A replay validates the recorded answers again without calling the model."""

    def run_subagent(self, agent: Agent, event: Event | Any) -> Awaitable[list[Any]]:
        """Run ``agent`` as a subagent of this action, on the same key; await the outputs
        it sent (``OutputEvent``), in order. ``event`` is its first event (any other value
        is given to it as an ``InputEvent``).

        The subagent's actions see this action's sensory and short-term memory, pending
        writes included, by copy; their own writes stay in the subagent's scope (one per
        call, shared by its actions) and never reach this action's memory. Their durable
        calls (and ``ctx.chat`` model answers and tool results) are this action's: a
        replay after recovery answers them from the record. Their long-term memory sets
        are bound like this action's, and their memory operations become this action's
        memory events. The events they send go to the subagent's own actions. A subagent
        uses the job's resources: one that declares its own is refused.
        Call it on the mailbox thread, from an ``async def`` action."""
        raise NotImplementedError(f"{type(self).__name__} does not run subagents")
