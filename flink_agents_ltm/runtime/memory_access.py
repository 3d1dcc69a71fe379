"""Short-term and sensory memory events (``agents.memory-events.*``, off by default).

When one is on, the action's stores note what the action writes (or removes) and reads
(:class:`~flink_agents_ltm.runtime.keyed_memory.KeyedMemoryStore` ``writes`` /
``reads``); when the action completes, each kind with something to say becomes one event,
as Apache Flink Agents emits them: the key as text and ``value``, a map from each path to
its last value in JSON form (first-seen order; a removed path ``None``; bytes as base64; a
value with no JSON form is left out, with a warning naming the path and type, never the
value). Upstream's order: sensory writes, short-term writes, sensory reads, short-term
reads; they follow the events the action sent and precede its long-term memory events.

An action triggered by a memory event (of either family) is suppressed: its stores note
nothing, so memory events never cascade. The read-through scopes of a ``ctx.chat`` or a
subagent note nothing either: their writes never reach the key's memory, and what they
read is a copy. Mailbox thread only.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import cloudpickle

from flink_agents_ltm.api.events import (
    Event,
    MemoryAccessEvent,
    SensoryReadEvent,
    SensoryWriteEvent,
    ShortTermReadEvent,
    ShortTermWriteEvent,
)
from flink_agents_ltm.api.options import AgentsConfiguration, AgentsOptions
from flink_agents_ltm.runtime.keyed_memory import OBJECT_NODE, KeyedMemoryStore

log = logging.getLogger(__name__)

_NO_JSON = object()


@dataclass(frozen=True)
class MemoryEventKinds:
    short_term_write: bool = False
    short_term_read: bool = False
    sensory_write: bool = False
    sensory_read: bool = False

    @classmethod
    def of(cls, config: AgentsConfiguration) -> MemoryEventKinds | None:
        """The kinds ``config`` turns on; ``None`` when none is (the default)."""
        kinds = cls(config.get(AgentsOptions.MEMORY_EVENTS_SHORT_TERM_WRITE),
                    config.get(AgentsOptions.MEMORY_EVENTS_SHORT_TERM_READ),
                    config.get(AgentsOptions.MEMORY_EVENTS_SENSORY_WRITE),
                    config.get(AgentsOptions.MEMORY_EVENTS_SENSORY_READ))
        return kinds if kinds != cls() else None


def observe(kinds: MemoryEventKinds, sensory: KeyedMemoryStore,
            short_term: KeyedMemoryStore) -> None:
    """Let the action's stores note what the kinds turned on need."""
    if kinds.sensory_write:
        sensory.writes = []
    if kinds.sensory_read:
        sensory.reads = []
    if kinds.short_term_write:
        short_term.writes = []
    if kinds.short_term_read:
        short_term.reads = []


def access_events(key: Any, sensory: KeyedMemoryStore,
                  short_term: KeyedMemoryStore) -> list[Event]:
    """The events of what a completed action wrote and read (none for what was not
    observed, or not touched)."""
    text = str(key)
    events: list[MemoryAccessEvent] = []
    writes: tuple[tuple[type[MemoryAccessEvent], KeyedMemoryStore], ...] = (
        (SensoryWriteEvent, sensory), (ShortTermWriteEvent, short_term))
    for kind, store in writes:
        if store.writes:  # each path's value now (None: removed), read point by point
            events.append(kind(text, _folded(
                kind, ((path, store.lookup(path)) for path in store.writes))))
    reads: tuple[tuple[type[MemoryAccessEvent], KeyedMemoryStore], ...] = (
        (SensoryReadEvent, sensory), (ShortTermReadEvent, short_term))
    for kind, store in reads:
        if store.reads:
            events.append(kind(text, _folded(kind, store.reads)))
    return [event for event in events if event.value]


def _folded(kind: type[MemoryAccessEvent],
            observations: Iterable[tuple[str, bytes | None]]) -> dict[str, Any]:
    """Each path's last value (``None``: removed), in first-seen order."""
    last = dict(observations)  # a path keeps its first place and takes its last value
    values: dict[str, Any] = {}
    for path, payload in last.items():
        if payload == OBJECT_NODE:
            continue  # an object node holds no value; its fields are paths of their own
        value = None if payload is None else _json_form(kind, path, payload)
        if value is not _NO_JSON:
            values[path] = value
    return values


def _json_form(kind: type[MemoryAccessEvent], path: str, payload: bytes) -> Any:
    value = cloudpickle.loads(payload)
    try:
        return json.loads(json.dumps(value, ensure_ascii=False, allow_nan=False,
                                     default=_bytes_as_base64))
    except (TypeError, ValueError):
        log.warning("%s leaves out path '%s': its value (a %s) has no JSON form",
                    kind.__name__, path, type(value).__name__)
        return _NO_JSON


def _bytes_as_base64(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii")
    raise TypeError(type(value).__name__)
