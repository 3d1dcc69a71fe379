"""Observations of long-term-memory operations, kept per action until it ends.

Worker threads record; the mailbox thread drains (action completed) or
discards (action failed) by observation id. One lock, held for list appends only.
"""

from __future__ import annotations

import threading
from collections import defaultdict

from flink_agents_ltm.api.memory.observation import MemoryObservation


class ObservationLog:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[str, list[MemoryObservation]] = defaultdict(list)
        self._added: dict[str, int] = defaultdict(int)  # items stored, per action

    def count_added(self, observation_id: str, items: int) -> None:
        with self._lock:
            self._added[observation_id] += items

    def end(self, observation_id: str, completed: bool) -> tuple[list[MemoryObservation], int]:
        """An action ended: its observations (none if it failed) and the items it stored."""
        with self._lock:
            observations = self._pending.pop(observation_id, [])
            added = self._added.pop(observation_id, 0)
        return (observations if completed else []), added

    def record(self, observation: MemoryObservation) -> None:
        with self._lock:
            self._pending[observation.observation_id].append(observation)

    def drain(self, observation_id: str) -> list[MemoryObservation]:
        """The observations of one action, in the order they were recorded; forgets them."""
        with self._lock:
            return self._pending.pop(observation_id, [])

    def discard(self, observation_id: str) -> None:
        with self._lock:
            self._pending.pop(observation_id, None)

    def pending_ids(self) -> list[str]:
        with self._lock:
            return list(self._pending)
