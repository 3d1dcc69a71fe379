"""The event log: what every key's runs did, one JSON object per line.

The engine tells one :class:`EventLog` about each run (its input, its outputs, how it
ended) and, through the :class:`StepTrace` of each step, about the action (how long it
took, how it ended), its durable calls (write position, outcome, result), its
long-term-memory operations (set name and item ids: never a value, query or metadata)
and the events it sent. Off (``agents.event-log.sink: off``, the default) it is
:data:`NO_EVENT_LOG`, whose methods do nothing.

Each record belongs to an event type (an action's record, and its calls' and memory
operations', to the type of the event that triggered it) and is written at that type's
level (``agents.event-log.levels``, else ``agents.event-log.level``); a failure at
WARNING at least. Payloads are masked (:func:`~flink_agents_ltm.api.redaction.redact`)
and then cut at ``agents.event-log.max-payload-chars``. Sinks: the logger
``flink_agents_ltm.event_log`` (whose level decides, as for any logger), or a 0600 file
appended under ``flock`` (:class:`~flink_agents_ltm.api.jsonl_file.JsonLinesFile`). A
write that fails never fails the job: the first failure is logged at WARNING.

Mailbox thread only.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import logging
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from flink_agents_ltm.api.errors import FlinkAgentsLtmError
from flink_agents_ltm.api.event_log import (
    EVENT_LOGGER,
    LEVELS,
    OFF,
    configured_file,
    parse_level,
    parse_levels,
)
from flink_agents_ltm.api.events import Event, InputEvent, OutputEvent
from flink_agents_ltm.api.execution_environment import AgentsOptions
from flink_agents_ltm.api.jsonl_file import JsonLinesFile
from flink_agents_ltm.api.memory.observation import MemoryObservation
from flink_agents_ltm.api.options import LongTermMemoryOptions
from flink_agents_ltm.api.redaction import redact, redact_text

__all__ = ["NO_EVENT_LOG", "NO_STEP", "EventLog", "EventLogError", "StepTrace", "open_event_log"]

log = logging.getLogger(__name__)
_NAMES = {level: name for name, level in LEVELS.items()}
_NO_RESULT = object()
_MAX_DEPTH = 8


class EventLogError(FlinkAgentsLtmError, RuntimeError):
    """The event log file cannot be written (its path named, never a record)."""


class _LoggerSink:
    def __init__(self) -> None:
        self._logger = logging.getLogger(EVENT_LOGGER)

    def wants(self, level: int) -> bool:
        return level < OFF and self._logger.isEnabledFor(level)

    def write(self, level: int, line: str) -> None:
        self._logger.log(level, "%s", line)


class _FileSink:
    def __init__(self, file: JsonLinesFile):
        self._file = file

    def wants(self, level: int) -> bool:
        return level < OFF

    def write(self, level: int, line: str) -> None:
        self._file.append_text((line + "\n").encode())


class StepTrace:
    """What one step (an action execution) tells the log; bound to its key, input,
    observation id, action and triggering event."""

    def __init__(self, log_: EventLog, base: dict[str, Any], event_type: type):
        self._log = log_
        self._base = base
        self._type = event_type

    def call(self, name: str, position: str, outcome: str, duration_s: float | None = None,
             error: BaseException | None = None, result: Any = _NO_RESULT) -> None:
        """A durable call ended (``completed``, ``failed``, ``timed_out``), or was answered
        without running (``replayed`` from Flink state, ``recovered`` from the
        action-state store)."""
        fields: dict[str, Any] = {"call": name, "position": position, "outcome": outcome}
        if duration_s is not None:
            fields["duration_ms"] = _ms(duration_s)
        self._log.write("call", self._type, {**self._base, **fields}, error=error,
                        payload=result)

    def memory(self, observations: Iterable[MemoryObservation]) -> None:
        for observation in observations:
            self._log.write("memory", self._type, {
                **self._base, "op": observation.op.value, "set": observation.set,
                "ids": list(observation.ids)})

    def sent(self, events: Iterable[Event], outputs: Iterable[Any]) -> None:
        for event in events:
            self._log.write("event", type(event), {**self._base,
                                                    "event_type": _type_name(type(event))},
                            payload=event)
        for output in outputs:
            self._log.write("output", OutputEvent, {**self._base, "event_type": "OutputEvent"},
                            payload=output)

    def end(self, outcome: str, duration_s: float, error: BaseException | None = None,
            **extra: Any) -> None:
        """The action ended: ``completed``, ``failed``, or ``retrying`` (with the failed
        ``attempt`` and ``retry_in_ms``, ``agents.error-handling: retry``)."""
        self._log.write("action", self._type, {**self._base, "outcome": outcome,
                                               "duration_ms": _ms(duration_s), **extra},
                        error=error)


class EventLog:
    """Records of one operator subtask (``job``, ``agent``, ``subtask``) into ``sink``."""

    def __init__(self, sink: Any, *, job: str, agent: str, subtask: int,
                 default_level: int = logging.INFO, levels: dict[str, int] | None = None,
                 max_payload_chars: int = 300, clock: Any = time.time):
        self._sink = sink
        self._context = {"job": job, "agent": agent, "subtask": subtask}
        self._default = default_level
        self._levels = dict(levels or {})
        self._max = max_payload_chars
        self._clock = clock
        self._level_of: dict[type, int] = {}
        self._failed_writes = 0

    def input(self, key: Any, seq: int, value: Any, replayed: bool = False) -> None:
        """A run starts (again, after a restore: ``replayed``)."""
        fields = {"key": str(key), "input": seq, "event_type": "InputEvent"}
        if replayed:
            fields["replayed"] = True
        self.write("input", InputEvent, fields, payload=value)

    def run_end(self, key: Any, seq: int, completed: bool, outputs: int) -> None:
        self.write("run", InputEvent, {"key": str(key), "input": seq, "event_type": "InputEvent",
                                       "outcome": "completed" if completed else "failed",
                                       "outputs": outputs})

    def step(self, key: Any, seq: int, observation_id: str, action: str,
             event: Event) -> StepTrace:
        return StepTrace(self, {"key": str(key), "input": seq, "observation_id": observation_id,
                                "action": action, "event_type": _type_name(type(event))},
                         type(event))

    # ------------------------------------------------------------------ writing

    def write(self, record: str, event_type: type, fields: dict[str, Any],
              error: BaseException | None = None, payload: Any = _NO_RESULT) -> None:
        level = self._level(event_type)
        if error is not None and level < OFF:
            level = max(level, logging.WARNING)
        if not self._sink.wants(level):
            return
        entry: dict[str, Any] = {"time": self._now(), "level": _NAMES.get(level, "INFO"),
                                 **self._context, "record": record, **fields}
        if error is not None:
            entry["error"] = type(error).__name__
            entry["error_message"] = self._cut(redact_text(" ".join(str(error).split())))[0]
        if payload is not _NO_RESULT:
            self._add_payload(entry, payload)
        try:
            self._sink.write(level, json.dumps(entry, ensure_ascii=False, default=repr))
        except Exception as failure:  # noqa: BLE001 - observability never fails the job
            self._failed_writes += 1
            if self._failed_writes == 1:
                log.warning("the event log could not be written (%s: %s); the job goes on, "
                            "later failures are not logged", type(failure).__name__,
                            redact_text(str(failure)))

    def _add_payload(self, entry: dict[str, Any], value: Any) -> None:
        masked = redact(_jsonable(value, 0))
        text = json.dumps(masked, ensure_ascii=False, default=repr)
        cut, truncated = self._cut(text)
        if truncated:
            entry["payload"] = cut
            entry["payload_chars"] = len(text)
        else:
            entry["payload"] = masked

    def _cut(self, text: str) -> tuple[str, bool]:
        if len(text) <= self._max:
            return text, False
        return text[:self._max] + "...", True

    def _level(self, event_type: type) -> int:
        level = self._level_of.get(event_type)
        if level is None:
            level = self._levels.get(_type_name(event_type),
                                     self._levels.get(_full_name(event_type), self._default))
            self._level_of[event_type] = level
        return level

    def _now(self) -> str:
        moment = datetime.fromtimestamp(self._clock(), tz=UTC)
        return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _NoStepTrace(StepTrace):
    def __init__(self) -> None:
        pass

    def call(self, *args: Any, **kwargs: Any) -> None:
        pass

    def memory(self, observations: Iterable[MemoryObservation]) -> None:
        pass

    def sent(self, events: Iterable[Event], outputs: Iterable[Any]) -> None:
        pass

    def end(self, *args: Any, **kwargs: Any) -> None:
        pass


NO_STEP = _NoStepTrace()


class _NoEventLog(EventLog):
    """The event log off: nothing is built, nothing written."""

    def __init__(self) -> None:
        pass

    def input(self, *args: Any, **kwargs: Any) -> None:
        pass

    def run_end(self, *args: Any, **kwargs: Any) -> None:
        pass

    def step(self, *args: Any, **kwargs: Any) -> StepTrace:
        return NO_STEP

    def write(self, *args: Any, **kwargs: Any) -> None:
        pass


NO_EVENT_LOG: EventLog = _NoEventLog()


def open_event_log(config: Any, *, job: str, agent: str, subtask: int) -> EventLog:
    """The event log ``config`` (an ``AgentsConfiguration``) asks for."""
    sink_name = config.get(AgentsOptions.EVENT_LOG_SINK)
    if sink_name == "off":
        return NO_EVENT_LOG
    if sink_name == "file":
        path = configured_file(config, AgentsOptions.EVENT_LOG_FILE.key,
                               LongTermMemoryOptions.BASE_DIR.key)
        sink: Any = _FileSink(JsonLinesFile(path, "the event log", EventLogError))
    else:
        sink = _LoggerSink()
    return EventLog(
        sink, job=job, agent=agent, subtask=subtask,
        default_level=parse_level(config.get(AgentsOptions.EVENT_LOG_LEVEL),
                                  AgentsOptions.EVENT_LOG_LEVEL.key),
        levels=parse_levels(config.get(AgentsOptions.EVENT_LOG_LEVELS),
                            AgentsOptions.EVENT_LOG_LEVELS.key),
        max_payload_chars=config.get(AgentsOptions.EVENT_LOG_MAX_PAYLOAD_CHARS))


def _jsonable(value: Any, depth: int) -> Any:
    """``value`` as JSON data: dataclasses and events as dicts of their fields, a memory
    observation as its op, set and ids only (never its query), anything else as its
    ``repr``."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if depth >= _MAX_DEPTH:
        return repr(value)
    if isinstance(value, MemoryObservation):
        return {"op": value.op.value, "set": value.set, "ids": list(value.ids)}
    if isinstance(value, enum.Enum):
        return _jsonable(value.value, depth + 1)
    if isinstance(value, dict):
        return {str(k): _jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v, depth + 1) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name), depth + 1)
                for f in dataclasses.fields(value) if f.repr}
    if isinstance(value, Event):
        return {k: _jsonable(v, depth + 1) for k, v in vars(value).items()}
    return repr(value)


def _type_name(event_type: type) -> str:
    return event_type.__name__


def _full_name(event_type: type) -> str:
    return f"{event_type.__module__}.{event_type.__qualname__}"


def _ms(seconds: float) -> int:
    return round(seconds * 1000)
