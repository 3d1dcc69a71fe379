"""What one long-term-memory operation did, as seen by the action that ran it.

The runtime collects observations per action (by observation id). When the
action completes they become memory events other actions may listen to; when
it fails they are dropped. Items already written to Mem0 stay written either
way: Mem0 has no transactions.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class MemoryOp(StrEnum):
    ADD = "add"
    GET = "get"
    SEARCH = "search"
    DELETE = "delete"


@dataclass(frozen=True, slots=True)
class MemoryObservation:
    op: MemoryOp
    set: str
    ids: tuple[str, ...]
    query: str | None
    key: str
    observation_id: str

    def to_dict(self) -> dict:
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
