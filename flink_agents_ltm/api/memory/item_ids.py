"""Item ids: minted by the base class, never by a store, so that every store keeps the same
ids and a replayed action writes its items under the ids of its first run.

Inside an action an id is a name-based UUID (``uuid5`` in :data:`ITEM_ID_NAMESPACE`) of the
job, key, set, observation id, write position
(:mod:`~flink_agents_ltm.api.memory.write_position`) and the item's ordinal at that
position; outside one it is random. Any other id a caller passes is simply not found
(:func:`well_formed`).
"""

from __future__ import annotations

import json
import threading
import uuid
from collections import defaultdict

from flink_agents_ltm.api.memory.items import MemoryScope
from flink_agents_ltm.api.memory.write_position import current_write_position

__all__ = ["ITEM_ID_NAMESPACE", "ItemIds", "well_formed"]

# Replay-stable item ids are name-based UUIDs in this namespace (uuid5).
ITEM_ID_NAMESPACE = uuid.UUID("5f0c1e3a-8a9e-4d47-9a51-1f6c0b2a7d10")


class ItemIds:
    """The ids one memory mints, with how many it minted per action and write position so
    far (forgotten when the action ends). Any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._minted: dict[str, dict[tuple[str, str], int]] = defaultdict(dict)

    def mint(self, scope: MemoryScope, count: int) -> list[str]:
        """Ids for ``count`` new items: replay-stable inside an action (derived from the
        binding, the write position and the item's ordinal there), random outside one."""
        if scope.observation_id is None:
            return [str(uuid.uuid4()) for _ in range(count)]
        position = current_write_position()
        with self._lock:
            counters = self._minted[scope.observation_id]
            first = counters.get((position, scope.set_name), 0)
            counters[(position, scope.set_name)] = first + count
        return [str(uuid.uuid5(ITEM_ID_NAMESPACE, json.dumps(
            [scope.job_id, scope.partition_key, scope.set_name, scope.observation_id,
             position, ordinal], ensure_ascii=False)))
            for ordinal in range(first, first + count)]

    def forget(self, observation_id: str) -> None:
        """The action ended: its counters go."""
        with self._lock:
            self._minted.pop(observation_id, None)


def well_formed(ids: list[str]) -> list[str]:
    """The distinct ids that can name an item (UUIDs), in order; any other id is simply
    not found, whatever the store would make of it."""
    seen: dict[str, None] = {}
    for memory_id in ids:
        try:
            uuid.UUID(memory_id)
        except ValueError:
            continue
        seen.setdefault(memory_id)
    return list(seen)
