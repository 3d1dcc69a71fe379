"""One step of a run: what an action execution produced, and the results it may replay.

A step's durable calls are numbered in call order (0, 1, ...); the number is
the call's *index*, used twice: to replay recorded results after recovery (a
recorded result only answers the call of the same name at the same index) and
as the long-term-memory write position of the call
(:func:`~flink_agents_ltm.api.memory.write_position.call_position`).
Mailbox thread only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flink_agents_ltm.api.events import Event
from flink_agents_ltm.api.memory.write_position import call_position
from flink_agents_ltm.runtime.durable import NonDeterministicReplayError
from flink_agents_ltm.runtime.run_record import RecordedCall

_DIVERGED = ("After a restore an action must make the same durable calls in the same order as "
             "before the failure; the code changed since the checkpoint, or its control flow "
             "depends on time, randomness or outside state.")


class Step:
    def __init__(self, recorded_calls: list[RecordedCall],
                 on_replay: Callable[[], None] | None = None,
                 stored_items: Callable[[], bool] | None = None):
        self.recorded_calls = recorded_calls  # shared with the run's record
        self.next_call = 0
        self._on_replay = on_replay  # told of each recorded result returned instead of a call
        self._stored_items = stored_items  # has the step stored long-term-memory items yet?
        self.sent: list[Event] = []
        self.outputs: list[Any] = []

    @property
    def position(self) -> str:
        """The write position of the next durable call."""
        return call_position(self.next_call)

    def replay(self, name: str) -> tuple[bool, Any]:
        """``(True, result)`` if the next call was recorded before a failure; a recorded
        call of another name raises :class:`NonDeterministicReplayError`."""
        if self.next_call >= len(self.recorded_calls):
            return False, None
        recorded = self.recorded_calls[self.next_call]
        if recorded.name != name:
            raise NonDeterministicReplayError(
                f"durable call #{self.next_call} of this step was recorded as {recorded.name}, "
                f"but the replayed action now calls {name}. {_DIVERGED}")
        self.next_call += 1
        if self._on_replay is not None:
            self._on_replay()
        return True, recorded.result

    def record(self, name: str, result: Any) -> RecordedCall:
        """Record a call's result, with whether the step has stored items by now (the
        call's own writes included: a replay will not run it to write them again)."""
        stored = self._stored_items() if self._stored_items is not None else False
        recorded = RecordedCall(name, result, stored)
        self.recorded_calls.append(recorded)
        self.next_call += 1
        return recorded

    def check_replayed_all(self) -> None:
        """The action completed: every recorded call must have been asked for again."""
        if self.next_call < len(self.recorded_calls):
            left = ", ".join(c.name for c in self.recorded_calls[self.next_call:])
            raise NonDeterministicReplayError(
                f"the replayed action completed after {self.next_call} durable call(s), but "
                f"{len(self.recorded_calls)} were recorded before the failure (not asked for "
                f"again: {left}). {_DIVERGED}")
