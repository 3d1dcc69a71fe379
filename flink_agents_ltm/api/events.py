"""Events: what flows between the actions of one agent, within one key.

An input record enters as :class:`InputEvent`; an action that sends an
:class:`OutputEvent` emits its ``output`` downstream. Users subclass
:class:`Event` for their own events. When an action that used long-term memory
completes, its observations arrive as memory events; actions triggered by a
memory event run suppressed (their own memory use raises no further events),
so memory events never cascade.

With ``agents.memory-events.*`` on (off by default), a completed action's writes and reads of
short-term and sensory memory arrive too, as Apache Flink Agents emits them:
:class:`ShortTermWriteEvent`, :class:`ShortTermReadEvent`, :class:`SensoryWriteEvent` and
:class:`SensoryReadEvent`, each with the key as text and ``value``, a map from each path the
action wrote (or read) to its last value in JSON form (a removed path: ``None``). Actions
they trigger run suppressed too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from flink_agents_ltm.api.memory.observation import MemoryObservation, MemoryOp

__all__ = [
    "Event",
    "InputEvent",
    "MemoryAccessEvent",
    "MemoryEvent",
    "MemoryReadEvent",
    "MemorySearchEvent",
    "MemoryUpdateEvent",
    "OutputEvent",
    "SensoryReadEvent",
    "SensoryWriteEvent",
    "ShortTermReadEvent",
    "ShortTermWriteEvent",
    "memory_event_for",
]


class Event:
    """Base of every event. Subclasses must be picklable: events are kept in
    Flink state while their key's run is in progress."""


@dataclass
class InputEvent(Event):
    input: Any


@dataclass
class OutputEvent(Event):
    output: Any


@dataclass
class MemoryEvent(Event):
    """One long-term-memory operation of a completed action."""

    observation: MemoryObservation


class MemoryUpdateEvent(MemoryEvent):
    """Items were added to, updated in or deleted from a memory set."""


class MemoryReadEvent(MemoryEvent):
    """Items were read by id (or all of them) from a memory set."""


class MemorySearchEvent(MemoryEvent):
    """A memory set was searched."""


@dataclass
class MemoryAccessEvent(Event):
    """The short-term or sensory memory paths one completed action wrote or read (one event
    per kind and action): ``key``, the Flink key as text; ``value``, each path's last value
    in JSON form, in the order the paths were first written or read (bytes as base64; a
    removed path is ``None``; a path whose value has no JSON form is left out, with a
    warning). ``EVENT_TYPE`` is Apache Flink Agents' name of the event's type."""

    key: str
    value: dict[str, Any] = field(default_factory=dict)
    EVENT_TYPE: ClassVar[str] = ""


class ShortTermWriteEvent(MemoryAccessEvent):
    """Writes (and removals) of short-term memory."""

    EVENT_TYPE = "_short_term_write_event"


class ShortTermReadEvent(MemoryAccessEvent):
    """Reads of short-term memory values."""

    EVENT_TYPE = "_short_term_read_event"


class SensoryWriteEvent(MemoryAccessEvent):
    """Writes (and removals) of sensory memory."""

    EVENT_TYPE = "_sensory_write_event"


class SensoryReadEvent(MemoryAccessEvent):
    """Reads of sensory memory values."""

    EVENT_TYPE = "_sensory_read_event"


_EVENT_OF_OP = {
    MemoryOp.ADD: MemoryUpdateEvent,
    MemoryOp.UPDATE: MemoryUpdateEvent,
    MemoryOp.DELETE: MemoryUpdateEvent,
    MemoryOp.GET: MemoryReadEvent,
    MemoryOp.SEARCH: MemorySearchEvent,
}


def memory_event_for(observation: MemoryObservation) -> MemoryEvent:
    return _EVENT_OF_OP[observation.op](observation)
