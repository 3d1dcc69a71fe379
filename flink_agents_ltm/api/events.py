"""Events: what flows between the actions of one agent, within one key.

An input record enters as :class:`InputEvent`; an action that sends an
:class:`OutputEvent` emits its ``output`` downstream. Users subclass
:class:`Event` for their own events. When an action that used long-term memory
completes, its observations arrive as memory events; actions triggered by a
memory event run suppressed (their own memory use raises no further events),
so memory events never cascade.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flink_agents_ltm.api.memory.observation import MemoryObservation, MemoryOp

__all__ = [
    "Event",
    "InputEvent",
    "MemoryEvent",
    "MemoryReadEvent",
    "MemorySearchEvent",
    "MemoryUpdateEvent",
    "OutputEvent",
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


_EVENT_OF_OP = {
    MemoryOp.ADD: MemoryUpdateEvent,
    MemoryOp.UPDATE: MemoryUpdateEvent,
    MemoryOp.DELETE: MemoryUpdateEvent,
    MemoryOp.GET: MemoryReadEvent,
    MemoryOp.SEARCH: MemorySearchEvent,
}


def memory_event_for(observation: MemoryObservation) -> MemoryEvent:
    return _EVENT_OF_OP[observation.op](observation)
