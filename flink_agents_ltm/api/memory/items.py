"""The values of long-term memory: a bound :class:`MemorySet`, the items it returns, and the
scope, new items and swept items that the base class hands to a memory's core.

A :class:`MemorySet` is obtained inside an action with
``ctx.long_term_memory.get_memory_set(name)``; the long-term memory stamps onto it the
partition key, observation id and suppression flag of the action, and every item operation
takes its scope from the set (see :mod:`~flink_agents_ltm.api.memory.long_term_memory`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from flink_agents_ltm.api.memory.errors import UnboundMemorySetError, unbound_message
from flink_agents_ltm.api.memory.expiry import DEFAULT_TTL

__all__ = ["MemoryScope", "MemorySet", "MemorySetItem", "MemorySetOwner", "NewItem",
           "SweptItem", "Ttl"]

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


class MemorySetOwner(ABC):
    """What a bound :class:`MemorySet` runs its operations on: a long-term memory
    (:class:`~flink_agents_ltm.api.memory.long_term_memory.BaseLongTermMemory`)."""

    @abstractmethod
    def add(self, memory_set: MemorySet, memory_items: str | Sequence[str],
            metadatas: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None, *,
            ttl: Ttl | Any = DEFAULT_TTL) -> list[str]: ...

    @abstractmethod
    def get(self, memory_set: MemorySet, ids: str | Sequence[str] | None = None,
            filters: Mapping[str, Any] | None = None,
            limit: int = 100) -> list[MemorySetItem]: ...

    @abstractmethod
    def search(self, memory_set: MemorySet, query: str, limit: int = 10,
               filters: Mapping[str, Any] | None = None,
               **options: Any) -> list[MemorySetItem]: ...

    @abstractmethod
    def update(self, memory_set: MemorySet, item_id: str, value: str,
               metadata: Mapping[str, Any] | None = None, *,
               ttl: Ttl | Any = DEFAULT_TTL) -> bool: ...

    @abstractmethod
    def delete(self, memory_set: MemorySet,
               ids: str | Sequence[str] | None = None) -> list[str]: ...


class MemorySet(BaseModel):
    """A named collection of memory items, bound to the action that obtained it.

    Only ``name`` is serialized (pickle, ``model_dump``, JSON): the binding
    (``partition_key``, ``observation_id``, ``observation_suppressed``) and the
    back-reference to the long-term memory belong to one action, so a set
    restored from bytes is unbound and refuses every operation.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    name: str
    partition_key: str | None = Field(default=None, exclude=True)
    observation_id: str | None = Field(default=None, exclude=True)
    observation_suppressed: bool = Field(default=False, exclude=True)
    ltm: Any = Field(default=None, exclude=True, repr=False)

    def add(
        self,
        memory_items: str | Sequence[str],
        metadatas: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
        *,
        ttl: Ttl | Any = DEFAULT_TTL,
    ) -> list[str]:
        """Store items in this set; returns their ids. Any thread. ``ttl``: seconds (or a
        timedelta) the items live; left out, the memory's default (``long-term-memory.ttl``);
        ``None``, forever."""
        return self._memory("add").add(self, memory_items, metadatas, ttl=ttl)

    def get(
        self,
        ids: str | Sequence[str] | None = None,
        filters: Mapping[str, Any] | None = None,
        limit: int = 100,
    ) -> list[MemorySetItem]:
        """Items of this set by id (ids outside the set are not found), or all of them."""
        return self._memory("get").get(self, ids=ids, filters=filters, limit=limit)

    def search(
        self,
        query: str,
        limit: int = 10,
        filters: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[MemorySetItem]:
        """The items of this set most similar to ``query``, best first. Any thread."""
        return self._memory("search").search(self, query, limit=limit, filters=filters, **kwargs)

    def update(self, item_id: str, value: str,
               metadata: Mapping[str, Any] | None = None, *,
               ttl: Ttl | Any = DEFAULT_TTL) -> bool:
        """Replace the text of item ``item_id`` of this set in place (same id, new embedding);
        ``metadata`` None keeps the item's metadata, a dict replaces it whole. ``ttl``:
        seconds from now the item lives (``None``: forever); left out, the default ttl if
        one is configured, else the item keeps its expiry. Returns False, changing
        nothing, when the id is not an item of this set (or it expired). Any thread."""
        return self._memory("update").update(self, item_id, value, metadata, ttl=ttl)

    def delete(self, ids: str | Sequence[str] | None = None) -> list[str]:
        """Delete items of this set by id, or all of them; returns the ids deleted."""
        return self._memory("delete").delete(self, ids=ids)

    def _memory(self, operation: str) -> MemorySetOwner:
        if not isinstance(self.ltm, MemorySetOwner):
            raise UnboundMemorySetError(unbound_message(operation, self.name))
        return self.ltm

    def __reduce__(self) -> tuple[Callable[[str], MemorySet], tuple[str]]:
        """Pickle carries only the name."""
        return (_restore_memory_set, (self.name,))

    def __copy__(self) -> MemorySet:
        return self  # frozen: a copy is the same binding

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> MemorySet:
        return self  # deep-copying the LTM back-reference would copy a whole store


def _restore_memory_set(name: str) -> MemorySet:
    return MemorySet(name=name)


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
