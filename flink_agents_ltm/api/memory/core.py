"""The core a long-term memory implements: store, read, search, update, delete and erase
the items of one checked :class:`~flink_agents_ltm.api.memory.items.MemoryScope`, plus the
optional expiry hooks. Everything else (threads, keys, validation, ids, expiry read-back,
observations, audit) is done once for every implementation by
:class:`~flink_agents_ltm.api.memory.long_term_memory.BaseLongTermMemory` before and after it
calls the core: the core trusts its arguments.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from flink_agents_ltm.api.filters import MetadataFilter
from flink_agents_ltm.api.memory.items import MemoryScope, MemorySetItem, NewItem, SweptItem

__all__ = ["LongTermMemoryCore"]


class LongTermMemoryCore(ABC):
    """The methods an implementation writes; each may run on any thread, so they must be
    thread-safe. A failure may raise anything: the base class reports it as a
    :class:`~flink_agents_ltm.api.memory.errors.LongTermMemoryError` naming the operation."""

    #: Search options an implementation understands besides ``limit`` and ``filters``.
    search_options: ClassVar[frozenset[str]] = frozenset()

    @abstractmethod
    def _add(self, scope: MemoryScope, items: Sequence[NewItem]) -> list[str]:
        """Store ``items`` under their ids, writing again (not appending) where an id is
        already stored; returns the ids stored, in input order. A failure must leave none
        of the call's items visible, or raise :class:`LongTermMemoryError` saying what stays."""

    @abstractmethod
    def _get(self, scope: MemoryScope, ids: Sequence[str] | None,
             filters: MetadataFilter | None, limit: int) -> list[MemorySetItem]:
        """Items of ``scope`` with these ids that match ``filters`` (in their order; ids
        outside the scope are not found), or up to ``limit`` items matching ``filters`` when
        ``ids`` is None. ``filters`` is parsed
        (:func:`~flink_agents_ltm.api.filters.matches` evaluates it); it always holds the
        expiry condition, so the ids branch must apply it too. The items reach the caller
        as they are, so each holds a metadata dict of its own (never one the store keeps);
        so do :meth:`_search`'s."""

    @abstractmethod
    def _search(self, scope: MemoryScope, query: str, limit: int,
                filters: MetadataFilter | None,
                options: Mapping[str, Any]) -> list[MemorySetItem]:
        """Up to ``limit`` items of ``scope`` most similar to ``query`` that match
        ``filters``, best first."""

    def _update(self, scope: MemoryScope, item: NewItem, keep_metadata: bool) -> bool:
        """Rewrite the stored item ``item.id`` of ``scope`` in place: ``item.value`` (embedded
        again) and ``item.metadata``, or the item's own metadata when ``keep_metadata``;
        its creation time stays. Returns False, writing nothing, when no item of ``scope``
        has that id (a row of another set, key or job is never touched). Writing the same
        value again must leave the same row (a replayed update repeats it).

        Not abstract, so that a memory written before ``update`` existed still builds: it
        refuses updates, naming itself."""
        raise NotImplementedError(
            f"{type(self).__qualname__} does not implement update: a long-term memory "
            "supports MemorySet.update by overriding BaseLongTermMemory._update")

    def _refresh_expiry(self, scope: MemoryScope, expiries: Mapping[str, float]) -> None:
        """Set the stored ``expires_at`` of these items of ``scope`` (id -> time) and change
        nothing else of them; an id no longer stored is skipped. Only called when reads
        refresh expiries (``long-term-memory.ttl.refresh-on-read``)."""
        raise NotImplementedError(
            f"{type(self).__qualname__} does not implement refresh on read: a long-term "
            "memory supports it by overriding BaseLongTermMemory._refresh_expiry")

    def _sweep_expired(self, job_id: str, expired: MetadataFilter,
                       limit: int) -> list[SweptItem]:
        """Delete up to ``limit`` items of job ``job_id`` (any key, any set) that match
        ``expired``, text included, and return them; fewer than ``limit`` means no more
        are expired."""
        raise NotImplementedError(
            f"{type(self).__qualname__} does not implement sweeping: a long-term memory "
            "supports sweep_expired by overriding BaseLongTermMemory._sweep_expired")

    @abstractmethod
    def _delete(self, scope: MemoryScope, ids: Sequence[str] | None) -> list[str]:
        """Delete the items of ``scope`` with these ids (others are never touched), or all
        of them when ``ids`` is None, text included; returns the ids deleted."""

    @abstractmethod
    def _erase_key(self, job_id: str, partition_key: str) -> int:
        """Delete every item of every set of this key, text included; returns how many."""

    def close(self) -> None:  # noqa: B027 - optional hook, nothing to give back by default
        """The operator closes: give back shared clients."""
