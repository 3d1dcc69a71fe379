"""A long-term memory in a dict: the smallest complete implementation of the contract.

For fast tests (of agents and of the contract itself) and for trying an agent
without Mem0 (``agents.long-term-memory.factory: in-memory``). It keeps
nothing across processes. Search ranks by the cosine of word counts, which is
crude but deterministic; every guard comes from :class:`BaseLongTermMemory`.

Threading: any thread (one lock around the dict).
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from flink_agents_ltm.api.configuration import Configuration
from flink_agents_ltm.api.filters import MetadataFilter, matches
from flink_agents_ltm.api.memory.expiry import EXPIRES_AT, Clock, Retention
from flink_agents_ltm.api.memory.items import MemoryScope, MemorySetItem, NewItem, SweptItem
from flink_agents_ltm.api.memory.long_term_memory import BaseLongTermMemory
from flink_agents_ltm.api.memory.validation import MemoryLimits
from flink_agents_ltm.api.options import LongTermMemoryOptions

_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class _Row:
    value: str
    metadata: Mapping[str, Any]
    created_at: str
    updated_at: str


class InMemoryLongTermMemory(BaseLongTermMemory):
    """Items in a dict per (job, key, set); nothing leaves the process."""

    def __init__(self, job_id: str, mailbox_check: Callable[[], None] | None = None, *,
                 limits: MemoryLimits | None = None, retention: Retention | None = None,
                 clock: Clock | None = None):
        super().__init__(job_id, mailbox_check, limits=limits, retention=retention,
                         clock=clock)
        self._lock = threading.Lock()
        self._sets: dict[tuple[str, str, str], dict[str, _Row]] = {}

    @classmethod
    def from_config(cls, job_id: str, config: Configuration | Mapping[str, Any] | None = None,
                    mailbox_check: Callable[[], None] | None = None, *,
                    resources: Callable[[str, str], Any] | None = None
                    ) -> InMemoryLongTermMemory:
        """Only the size limits and retention of ``config`` apply; stores and models are not
        used."""
        options = config if isinstance(config, Configuration) else Configuration(
            LongTermMemoryOptions.all(), config or {})
        return cls(job_id, mailbox_check, limits=LongTermMemoryOptions.limits(options),
                   retention=LongTermMemoryOptions.retention(options))

    def _rows(self, scope: MemoryScope) -> dict[str, _Row]:
        return self._sets.setdefault((scope.job_id, scope.partition_key, scope.set_name), {})

    def _add(self, scope: MemoryScope, items: Sequence[NewItem]) -> list[str]:
        now = datetime.now(UTC).isoformat()
        with self._lock:
            rows = self._rows(scope)
            for item in items:
                known = rows.get(item.id)
                created = known.created_at if known is not None else now
                rows[item.id] = _Row(item.value, dict(item.metadata), created, now)
        return [item.id for item in items]

    def _get(self, scope: MemoryScope, ids: Sequence[str] | None,
             filters: MetadataFilter | None, limit: int) -> list[MemorySetItem]:
        with self._lock:
            rows = dict(self._rows(scope))
        if ids is not None:
            return [_item(scope, i, rows[i]) for i in ids
                    if i in rows and matches(filters, _fields(rows[i]))]
        found = [_item(scope, i, row) for i, row in rows.items()
                 if matches(filters, _fields(row))]
        return found[:limit]

    def _search(self, scope: MemoryScope, query: str, limit: int,
                filters: MetadataFilter | None,
                options: Mapping[str, Any]) -> list[MemorySetItem]:
        wanted = Counter(_WORD.findall(query.lower()))
        with self._lock:
            rows = dict(self._rows(scope))
        scored = [(_cosine(wanted, Counter(_WORD.findall(row.value.lower()))), i, row)
                  for i, row in rows.items() if matches(filters, _fields(row))]
        scored.sort(key=lambda hit: -hit[0])  # stable: equal scores keep insertion order
        return [replace(_item(scope, i, row), score=score) for score, i, row in scored[:limit]]

    def _update(self, scope: MemoryScope, item: NewItem, keep_metadata: bool) -> bool:
        now = datetime.now(UTC).isoformat()
        with self._lock:
            rows = self._rows(scope)
            known = rows.get(item.id)
            if known is None:
                return False
            metadata = known.metadata if keep_metadata else dict(item.metadata)
            rows[item.id] = _Row(item.value, metadata, known.created_at, now)
        return True

    def _refresh_expiry(self, scope: MemoryScope, expiries: Mapping[str, float]) -> None:
        with self._lock:
            rows = self._rows(scope)
            for memory_id, expires_at in expiries.items():
                known = rows.get(memory_id)
                if known is not None:
                    rows[memory_id] = replace(known, metadata={**known.metadata,
                                                               EXPIRES_AT: expires_at})

    def _sweep_expired(self, job_id: str, expired: MetadataFilter,
                       limit: int) -> list[SweptItem]:
        swept: list[SweptItem] = []
        with self._lock:
            for (job, key, set_name), rows in self._sets.items():
                if job != job_id:
                    continue
                for memory_id in [i for i, row in rows.items()
                                  if matches(expired, _fields(row))][:limit - len(swept)]:
                    del rows[memory_id]
                    swept.append(SweptItem(key, set_name, memory_id))
                if len(swept) >= limit:
                    break
        return swept

    def _delete(self, scope: MemoryScope, ids: Sequence[str] | None) -> list[str]:
        with self._lock:
            rows = self._rows(scope)
            doomed = list(rows) if ids is None else [i for i in ids if i in rows]
            for memory_id in doomed:
                del rows[memory_id]
        return doomed

    def _erase_key(self, job_id: str, partition_key: str) -> int:
        with self._lock:
            doomed = [k for k in self._sets if k[0] == job_id and k[1] == partition_key]
            return sum(len(self._sets.pop(k)) for k in doomed)


def _fields(row: _Row) -> dict[str, Any]:
    return {"created_at": row.created_at, "updated_at": row.updated_at, **row.metadata}


def _item(scope: MemoryScope, memory_id: str, row: _Row) -> MemorySetItem:
    return MemorySetItem(memory_set_name=scope.set_name, id=memory_id, value=row.value,
                         metadata=dict(row.metadata), created_at=row.created_at,
                         updated_at=row.updated_at)


def _cosine(a: Counter[str], b: Counter[str]) -> float:
    dot = sum(count * b[word] for word, count in a.items())
    if not dot:
        return 0.0
    return dot / (math.sqrt(sum(c * c for c in a.values())) *
                  math.sqrt(sum(c * c for c in b.values())))
