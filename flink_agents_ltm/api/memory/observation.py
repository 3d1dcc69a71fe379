"""What one long-term-memory operation did, as seen by the action that ran it.

The runtime collects observations per action (by observation id). When the
action completes they become memory events other actions may listen to; when
it fails they are dropped. Items already written to Mem0 stay written either
way: Mem0 has no transactions.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass
from enum import StrEnum


class MemoryOp(StrEnum):
    ADD = "add"
    GET = "get"
    SEARCH = "search"
    UPDATE = "update"
    DELETE = "delete"


@dataclass(frozen=True, slots=True)
class MemoryObservation:
    op: MemoryOp
    set: str
    ids: tuple[str, ...]
    query: str | None
    key: str
    observation_id: str

    def to_dict(self) -> dict[str, object]:
        return {
            "op": self.op.value,
            "set": self.set,
            "ids": list(self.ids),
            "query": self.query,
            "key": self.key,
            "observation_id": self.observation_id,
        }


@dataclass(frozen=True, slots=True)
class ActionMemoryOutcome:
    """What an action did to long-term memory, reported to the runtime when it ends.

    ``observations`` become memory events (empty when the action failed or ran
    suppressed). ``items_added`` counts the items the action stored, whatever its
    outcome: a key that ever stored an item keeps its input counter in Flink state,
    since that counter is part of every replay-stable item id
    (see :mod:`~flink_agents_ltm.api.memory.write_position`).
    """

    observations: tuple[MemoryObservation, ...] = ()
    items_added: int = 0


class ObservationLog:
    """Observations and stored-item counts per action, until the action ends.

    Worker threads record; the mailbox thread ends the action (completed: its
    observations are handed over; failed: dropped). One lock, held for dict updates only.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[str, list[MemoryObservation]] = defaultdict(list)
        self._added: dict[str, int] = defaultdict(int)

    def record(self, observation: MemoryObservation) -> None:
        with self._lock:
            self._pending[observation.observation_id].append(observation)

    def count_added(self, observation_id: str, items: int) -> None:
        with self._lock:
            self._added[observation_id] += items

    def added(self, observation_id: str) -> int:
        """The items the action stored so far (it has not ended)."""
        with self._lock:
            return self._added.get(observation_id, 0)

    def end(self, observation_id: str, completed: bool) -> ActionMemoryOutcome:
        """The action ended: its observations in recording order (none if it failed) and
        the items it stored; forgets both."""
        with self._lock:
            observations = self._pending.pop(observation_id, [])
            added = self._added.pop(observation_id, 0)
        return ActionMemoryOutcome(tuple(observations) if completed else (), added)
