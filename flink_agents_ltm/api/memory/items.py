"""The values of long-term memory: the items a memory set returns, and the scope, new items
and swept items that the base class hands to a memory's core.

``MemorySet`` itself stays in :mod:`~flink_agents_ltm.api.memory.long_term_memory`: the
qualified names of its methods (``...long_term_memory.MemorySet.add``) are the identities of
durable calls recorded in Flink state, which a restored job must find again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

__all__ = ["MemoryScope", "MemorySetItem", "NewItem", "SweptItem", "Ttl"]

Ttl = float | int | timedelta | None


@dataclass(frozen=True, slots=True)
class MemorySetItem:
    """One stored ``str`` value with its metadata, as read back from a memory set.

    ``score`` is the similarity of a search hit (higher is closer) and ``None``
    for items read with ``get``. ``expires_at`` is when the item expires, seconds since
    the epoch (``None``: never; see :mod:`~flink_agents_ltm.api.memory.expiry`).
    """

    memory_set_name: str
    id: str
    value: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    created_at: str | None = None
    updated_at: str | None = None
    score: float | None = None
    expires_at: float | None = None


@dataclass(frozen=True, slots=True)
class MemoryScope:
    """Where one operation acts, built once per operation from a bound set and checked.

    Implementations receive it in their ``_add``/``_get``/``_search``/``_update``/``_delete``
    and must confine the operation to rows of exactly this job, key and set.
    """

    job_id: str
    partition_key: str
    set_name: str
    observation_id: str | None = None
    suppressed: bool = False

    def __post_init__(self) -> None:
        for name in ("job_id", "partition_key", "set_name"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"MemoryScope.{name} must be a non-empty str, got {value!r}")


@dataclass(frozen=True, slots=True)
class NewItem:
    """An item to store under ``id`` (the base class mints it; stores must keep it)."""

    id: str
    value: str
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SweptItem:
    """An expired item a sweep deleted: where it was, and its id."""

    partition_key: str
    set_name: str
    id: str
