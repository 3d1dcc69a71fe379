"""``ctx.run_subagent``: another agent run inside the calling action, on the same key.

The subagent's run is a coroutine awaited by the calling action, so it is part of
the caller's step, like a ``ctx.chat`` call:

* **Events.** The input (an :class:`~flink_agents_ltm.api.events.Event`, or a value
  given to it as an ``InputEvent``) goes to the subagent's actions that listen to it;
  the events they send go to its actions in turn, first in, first out, as in a run of
  the operator; an ``OutputEvent`` is one output of the subagent, and the awaited
  call answers the outputs, in order. Nothing the subagent sends reaches the caller's
  actions or the operator's output.
* **Memory scope.** The subagent's actions share one read-through scope per call
  (:mod:`~flink_agents_ltm.runtime.read_through_memory`) over the caller's sensory and
  short-term memory: they see the caller's values (pending writes included) by deep
  copy, and their writes stay in the scope, for the subagent's later actions to see;
  the caller never does, and nothing of the scope reaches keyed state. A ``ctx.chat``
  inside the subagent opens its own scope over the subagent's, with the same rules.
* **Durable calls.** The subagent's durable calls (model answers and tool results of
  its chats included) are the caller's step's: recorded in its action state in call
  order, at the caller's next write positions, so a replay after recovery answers them
  from the record and makes none of them again. Its long-term memory sets are bound to
  the caller's key and observation id, so its items get replay-stable ids and its
  memory operations become the caller's memory events.
* **Replay.** After a failure the caller runs again from its start and so does the
  subagent: its actions' code runs again (their scope is rebuilt as it was), recorded
  calls answer without running. A tool's writes to a chat scope are not redone, as
  in any chat.

Resources: a subagent uses the job's resources (the calling agent's and the
environment's); a subagent that declares resources of its own is refused, naming
them. Mailbox thread only.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from flink_agents_ltm.api.agent import Action, Agent
from flink_agents_ltm.api.events import Event, InputEvent
from flink_agents_ltm.api.runner_context import RunnerContext
from flink_agents_ltm.runtime.keyed_memory import MemoryStore
from flink_agents_ltm.runtime.read_through_memory import ReadThroughMemoryStore


@dataclass
class SubagentSink:
    """Where the send_event of a subagent's action goes (a step's ``sent``/``outputs``
    for a top-level action)."""

    sent: list[Event] = field(default_factory=list)
    outputs: list[Any] = field(default_factory=list)


class SubagentCaller(Protocol):
    """What a subagent's run needs of the action that runs it (the runner context is one);
    named here so that the two modules do not import each other."""

    sensory_store: MemoryStore
    short_term_store: MemoryStore

    @property
    def action_name(self) -> str: ...

    def child_context(self, action_name: str, sensory: ReadThroughMemoryStore,
                      short_term: ReadThroughMemoryStore, listened: Callable[[Event], bool],
                      awaitable: bool, sink: SubagentSink) -> RunnerContext: ...


def subagent_input(agent: Any, value: Any, caller_action: str) -> tuple[list[Action], Event]:
    """The subagent's actions and its first event, checked (errors name the remedy)."""
    if not isinstance(agent, Agent):
        raise TypeError(f"ctx.run_subagent takes an Agent instance, got "
                        f"{type(agent).__name__}")
    name = type(agent).__qualname__
    actions = agent.actions()
    if not actions:
        raise ValueError(f"subagent {name} has no actions: declare one with @action(...)")
    declared = sorted(agent.resources())
    if declared:
        raise ValueError(
            f"subagent {name} (run by action '{caller_action}') declares resources "
            f"{', '.join(declared)}; a subagent uses the job's resources: declare them on "
            "the calling agent or with agents_env.add_resource")
    event = value if isinstance(value, Event) else InputEvent(value)
    if not any(isinstance(event, a.listens_to) for a in actions):
        raise ValueError(f"no action of subagent {name} listens to {type(event).__name__}: "
                         f"declare one with @action({type(event).__name__})")
    return actions, event


class SubagentRun:
    def __init__(self, caller: SubagentCaller, agent: Agent, actions: list[Action],
                 event: Event):
        self._caller = caller
        self._name = type(agent).__qualname__
        self._actions = actions
        self._event = event

    def _listened(self, event: Event) -> bool:
        return any(isinstance(event, a.listens_to) for a in self._actions)

    async def run(self) -> list[Any]:
        caller = self._caller
        sensory = ReadThroughMemoryStore(caller.sensory_store)
        short_term = ReadThroughMemoryStore(caller.short_term_store)
        events: deque[Event] = deque([self._event])
        outputs: list[Any] = []
        while events:
            event = events.popleft()
            for action in self._actions:
                if not isinstance(event, action.listens_to):
                    continue
                sink = SubagentSink()
                ctx = caller.child_context(
                    f"{caller.action_name} > {self._name}.{action.name}", sensory,
                    short_term, self._listened, action.is_async, sink)
                result = action.function(event, ctx)
                if action.is_async:
                    await result
                outputs.extend(sink.outputs)
                events.extend(sink.sent)
        return outputs
