"""Long-term memory as agent authors see it: named memory sets of ``str`` items.

A :class:`MemorySet` is obtained inside an action with
``ctx.long_term_memory.get_memory_set(name)``. At that moment the long-term
memory stamps onto the set the partition key, observation id and suppression
flag of the action. Every item operation (``add``, ``get``, ``search``,
``update``, ``delete``) takes its scope from the set, never from the memory's mutable
"current key", so a set handed to a worker thread
(``ctx.durable_execute_async``) stays on its own key while the operator runs
other keys' actions. A set therefore belongs to one action: obtain a new one
in each action instead of keeping it across actions.

Threading rules:

* ``get_memory_set`` / ``delete_memory_set`` read the key currently in scope,
  so they only run on the operator's mailbox thread (``MailboxThreadError``
  otherwise).
* ``add`` / ``get`` / ``search`` / ``update`` / ``delete`` run on any thread.

This module imports nothing from the runtime.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from flink_agents_ltm.api.arguments import check_ids, check_limit
from flink_agents_ltm.api.configuration import ConfigOption, Configuration
from flink_agents_ltm.api.filters import MetadataFilter, parse_filter, to_mem0
from flink_agents_ltm.api.memory.audit import FILE_NAME as AUDIT_FILE_NAME
from flink_agents_ltm.api.memory.audit import AuditLogError, MemoryAuditLog
from flink_agents_ltm.api.memory.errors import (
    EmptyPartitionKeyError,
    LongTermMemoryError,
    MailboxThreadError,
    UnboundMemorySetError,
    empty_key_message,
    unbound_message,
)
from flink_agents_ltm.api.memory.expiry import (
    DEFAULT_TTL,
    EXPIRY_FIELDS,
    Clock,
    Retention,
    expired_at,
    expiry_fields,
    split_expiry,
    with_visibility,
)
from flink_agents_ltm.api.memory.mailbox import MailboxThreadCheck
from flink_agents_ltm.api.memory.observation import (
    ActionMemoryOutcome,
    MemoryObservation,
    MemoryOp,
    ObservationLog,
)
from flink_agents_ltm.api.memory.validation import (
    SCOPE_FIELDS,
    MemoryLimits,
    check_metadata,
    check_name,
    check_query,
    check_text,
    check_values,
    refuse_scope_fields,
)
from flink_agents_ltm.api.memory.write_position import current_write_position
from flink_agents_ltm.api.redaction import chainable
from flink_agents_ltm.api.rerankers import BaseReranker, reranked_order

__all__ = [
    "BaseLongTermMemory",
    "EmptyPartitionKeyError",
    "LongTermMemoryError",
    "LongTermMemoryOptions",
    "MailboxThreadError",
    "MemoryLimits",
    "MemoryScope",
    "MemorySet",
    "MemorySetItem",
    "NewItem",
    "SweptItem",
    "UnboundMemorySetError",
    "empty_key_message",
    "unbound_message",
]

log = logging.getLogger(__name__)

# Fields a store writes into every row itself (Mem0's); caller metadata may not set them.
RESERVED_METADATA = SCOPE_FIELDS | {
    "actor_id", "role", "data", "hash", "created_at", "updated_at", "id",
    "text_lemmatized", "attributed_to", "expiration_date", "memory_type",
} | EXPIRY_FIELDS  # written from a write's ttl (see .expiry)
Ttl = float | int | timedelta | None
_DEFAULTS = MemoryLimits()
_ITEM_OPTION = "long-term-memory.max-item-length"
_QUERY_OPTION = "long-term-memory.max-query-length"
_NAME_OPTION = "long-term-memory.max-name-length"
_METADATA_OPTION = "long-term-memory.max-metadata-length"
_RERANKER_OPTION = "long-term-memory.reranker"
_RERANK_CANDIDATES = 4  # a reranked search orders this many candidates per result asked for
# Replay-stable item ids are name-based UUIDs in this namespace (uuid5).
ITEM_ID_NAMESPACE = uuid.UUID("5f0c1e3a-8a9e-4d47-9a51-1f6c0b2a7d10")


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

    def _memory(self, operation: str) -> BaseLongTermMemory:
        if not isinstance(self.ltm, BaseLongTermMemory):
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


class BaseLongTermMemory(ABC):
    """The long-term memory of one operator, shared by all of its keys: a template.

    The public methods are the whole contract and enforce it for every
    implementation: the mailbox-thread rule, the key checks (unbound and empty
    keys refused before anything reaches a store, each with its own message),
    one validation of names, values, queries, metadata and filters, scope
    fields that callers can never set, by-id access confined to the set, the
    item ids (replay-stable inside an action, see
    :mod:`~flink_agents_ltm.api.memory.write_position`) and the observations.
    An implementation writes only the small core: :meth:`_add`, :meth:`_get`,
    :meth:`_search`, :meth:`_update`, :meth:`_delete` and :meth:`_erase_key`, each given a
    checked :class:`MemoryScope`.

    Threading: ``switch_context``, ``get_memory_set``, ``delete_memory_set`` and
    ``end_action`` run on the mailbox thread (the one that built this memory,
    unless ``mailbox_check`` says otherwise); the item operations and
    ``erase_key`` run on any thread, so the core must be thread-safe.
    """

    #: Search options an implementation understands besides ``limit`` and ``filters``.
    search_options: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, job_id: str, mailbox_check: Callable[[], None] | None = None, *,
                 limits: MemoryLimits | None = None, retention: Retention | None = None,
                 clock: Clock | None = None):
        self._limits = limits or MemoryLimits()
        self._retention = retention or Retention()
        self._clock: Clock = clock or time.time
        if not isinstance(job_id, str) or not job_id.strip():
            raise ValueError(f"job_id must be a non-empty string, got {job_id!r}")
        self._job_id = check_name(job_id, "job_id", self._limits, _NAME_OPTION)
        self._mailbox_check = mailbox_check or MailboxThreadCheck()
        self._context: tuple[str | None, str | None, bool] = (None, None, False)
        self._observations = ObservationLog()
        self._minted_lock = threading.Lock()
        self._minted: dict[str, dict[tuple[str, str], int]] = defaultdict(dict)
        self._audit_log: MemoryAuditLog | None = None
        self._reranker: BaseReranker | None = None
        self._rerank_candidates = _RERANK_CANDIDATES

    @property
    def job_id(self) -> str:
        return self._job_id

    @property
    def audit_log(self) -> MemoryAuditLog | None:
        """Where this memory records its operations (ids and times, never text), if
        anywhere; see :mod:`~flink_agents_ltm.api.memory.audit`."""
        return self._audit_log

    def set_audit_log(self, audit_log: MemoryAuditLog | None) -> None:
        """Record every later operation in ``audit_log`` (``None``: stop recording)."""
        if audit_log is not None and not isinstance(audit_log, MemoryAuditLog):
            raise TypeError(f"set_audit_log expects a MemoryAuditLog, got "
                            f"{type(audit_log).__name__}")
        self._audit_log = audit_log

    @property
    def reranker(self) -> BaseReranker | None:
        """What orders the candidates of ``search(..., rerank=True)``, if anything."""
        return self._reranker

    def set_reranker(self, reranker: BaseReranker | None,
                     candidates: int = _RERANK_CANDIDATES) -> None:
        """Let ``search(..., rerank=True)`` fetch ``candidates`` times ``limit`` items of the
        set and return the ``limit`` that ``reranker`` scores highest (``None``: refuse
        ``rerank=True`` again)."""
        if reranker is not None and not isinstance(reranker, BaseReranker):
            raise TypeError(f"set_reranker expects a BaseReranker, got {type(reranker).__name__}")
        if isinstance(candidates, bool) or not isinstance(candidates, int) or candidates < 1:
            raise ValueError(f"rerank candidates must be a positive int, got {candidates!r}")
        self._reranker, self._rerank_candidates = reranker, candidates

    @property
    def limits(self) -> MemoryLimits:
        return self._limits

    @property
    def retention(self) -> Retention:
        """The default ttl and whether reads refresh expiries (``long-term-memory.ttl``)."""
        return self._retention

    def set_retention(self, retention: Retention) -> None:
        if not isinstance(retention, Retention):
            raise TypeError(f"set_retention expects a Retention, got {type(retention).__name__}")
        self._retention = retention

    def set_clock(self, clock: Clock) -> None:
        """Tell time with ``clock`` (seconds since the epoch) instead of ``time.time``: the
        seam through which tests move time without sleeping."""
        if not callable(clock):
            raise TypeError(f"set_clock expects a callable returning seconds, got "
                            f"{type(clock).__name__}")
        self._clock = clock

    def now(self) -> float:
        """This memory's time, seconds since the epoch: what expiries are measured against."""
        return float(self._clock())

    # ------------------------------------------------------------ the core (implementations)

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

    # ------------------------------------------------------------ context (mailbox thread)

    def switch_context(self, partition_key: Any, observation_id: str | None = None,
                       observation_suppressed: bool = False) -> None:
        """Record the key and observation context of the next action. Never validates:
        a job with an empty key runs until it actually uses long-term memory. The key
        is kept as its text, ``str(key)``: keys that print alike (``7`` and ``"7"``)
        share one memory."""
        key = None if partition_key is None else str(partition_key)
        self._context = (key, observation_id, bool(observation_suppressed))

    def get_memory_set(self, name: str) -> MemorySet:
        """Get (or implicitly create) the set ``name`` of the key in scope, bound to the
        current action. Mailbox thread only."""
        self._mailbox_check()
        key, observation_id, suppressed = self._context
        self._check_key(key, "get_memory_set", name)
        check_name(name, "memory set name", self._limits, _NAME_OPTION)
        return MemorySet(name=name, partition_key=key, observation_id=observation_id,
                         observation_suppressed=suppressed, ltm=self)

    def delete_memory_set(self, name: str) -> bool:
        """Delete every item of set ``name`` of the key currently in scope.

        Mailbox thread only. Note it targets the *current* key, which may differ
        from the key bound to a same-named ``MemorySet`` obtained earlier;
        ``MemorySet.delete()`` deletes on the set's own key.
        Returns whether the set had any item.
        """
        self._mailbox_check()
        bound_key, observation_id, suppressed = self._context
        key = self._check_key(bound_key, "delete_memory_set", name)
        check_name(name, "memory set name", self._limits, _NAME_OPTION)
        scope = MemoryScope(self._job_id, key, name, observation_id, suppressed)
        deleted: list[str] = self._call("delete_memory_set", scope,
                                        lambda: self._delete(scope, None))
        self._observe(scope, MemoryOp.DELETE, deleted)
        self._audit("delete_memory_set", scope, deleted)
        log.info("deleted memory set '%s' of key '%s' (%d items)", name, key, len(deleted))
        return bool(deleted)

    def end_action(self, observation_id: str, completed: bool) -> ActionMemoryOutcome:
        """The action ended: its observations if it completed (dropped if it failed) and
        how many items it stored either way. Forgets the action."""
        with self._minted_lock:
            self._minted.pop(observation_id, None)
        return self._observations.end(observation_id, completed)

    def items_stored_by(self, observation_id: str) -> int:
        """How many items the action with this observation id stored so far, before it
        ends. The runtime asks each time it records a durable result: a replay does not
        repeat a recorded call's writes, so the record says whether the call stored
        items. Any thread."""
        return self._observations.added(observation_id)

    # ------------------------------------------------------------ item operations (any thread)

    def add(self, memory_set: MemorySet, memory_items: str | Sequence[str],
            metadatas: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None, *,
            ttl: Ttl | Any = DEFAULT_TTL) -> list[str]:
        """Store ``str`` items; ``metadatas`` is one dict for all or one per item; ``ttl``
        seconds (or a timedelta) they live, the default ttl when left out, forever when
        ``None``. Returns their ids in input order."""
        scope = self._scope(memory_set, "add")
        values = check_values(memory_items, self._limits, _ITEM_OPTION)
        metadata = self._metadata_per_item(metadatas, len(values))
        expiry = expiry_fields(self._retention.ttl_of(ttl, "add(ttl=...)"), self.now())
        metadata = [{**m, **expiry} for m in metadata]
        ids = self._mint(scope, len(values))
        items = [NewItem(i, v, m) for i, v, m in zip(ids, values, metadata, strict=True)]
        stored: list[str] = self._call("add", scope, lambda: self._add(scope, items))
        self._observe(scope, MemoryOp.ADD, stored)
        self._audit("add", scope, stored)
        return stored

    def get(self, memory_set: MemorySet, ids: str | Sequence[str] | None = None,
            filters: Mapping[str, Any] | None = None, limit: int = 100) -> list[MemorySetItem]:
        """Items by id (only ids inside the set's scope are found), or up to ``limit``
        items matching ``filters``."""
        scope = self._scope(memory_set, "get")
        found: list[MemorySetItem]
        if ids is not None:
            if filters:
                raise ValueError("get() takes ids or filters, not both")
            wanted = _well_formed(check_ids(ids))
            visible = with_visibility(None, self.now())
            found = self._call("get", scope, lambda: self._get(
                scope, wanted, visible, len(wanted))) if wanted else []
        else:
            check_limit(limit)
            checked = with_visibility(_caller_filter(filters), self.now())
            found = self._call("get", scope, lambda: self._get(scope, None, checked, limit))
            found = found[:limit]
        found = self._read_back(scope, "get", found)
        self._observe(scope, MemoryOp.GET, [item.id for item in found])
        self._audit("get", scope, [item.id for item in found])
        return found

    def search(self, memory_set: MemorySet, query: str, limit: int = 10,
               filters: Mapping[str, Any] | None = None, **options: Any) -> list[MemorySetItem]:
        """At most ``limit`` items most similar to ``query``, best first."""
        scope = self._scope(memory_set, "search")
        check_query(query, self._limits, _QUERY_OPTION)
        check_limit(limit)
        checked = with_visibility(_caller_filter(filters), self.now())
        refuse_scope_fields(options, "search options")
        reranker = self._reranker_for(options.pop("rerank", False))
        unknown = set(options) - self.search_options
        if unknown:
            supported = ", ".join(["limit", "filters", *sorted(self.search_options)])
            raise TypeError(f"unknown search option(s) {sorted(unknown)}; supported: {supported}")
        fetch = limit if reranker is None else limit * self._rerank_candidates
        found: list[MemorySetItem] = self._call(
            "search", scope, lambda: self._search(scope, query, fetch, checked, options))[:fetch]
        if reranker is not None:  # only the scope's own candidates reach the reranker
            order = self._call("rerank", scope, lambda: reranked_order(
                reranker, query, [item.value for item in found]))
            found = [found[index] for index in order]
        found = found[:limit]
        found = self._read_back(scope, "search", found)
        self._observe(scope, MemoryOp.SEARCH, [item.id for item in found], query)
        self._audit("search", scope, [item.id for item in found])
        return found

    def update(self, memory_set: MemorySet, item_id: str, value: str,
               metadata: Mapping[str, Any] | None = None, *,
               ttl: Ttl | Any = DEFAULT_TTL) -> bool:
        """Replace the text of one item of the set in place: the same id, the new text embedded
        again, the same checks as :meth:`add`. ``metadata`` None keeps the item's metadata; a
        dict replaces it whole (keys it leaves out are dropped). Returns whether the item was
        updated: an id outside the set's scope (another set's, key's or job's) or unknown is
        not found, like :meth:`get` and :meth:`delete` by id, and nothing is changed; so is
        an expired item. ``ttl``: seconds from now the item lives (``None``: forever); left
        out, the default ttl when one is configured, else the item keeps its expiry.

        Replay-stable: an update mints no id, so a replayed update rewrites the same row with
        the same value. Recorded as an ``update`` observation when it changed an item."""
        scope = self._scope(memory_set, "update")
        if not isinstance(item_id, str):
            raise TypeError(f"update() takes one item id (a str), got {type(item_id).__name__}")
        if not isinstance(value, str):
            raise TypeError(f"long-term memory stores str values only; update() got "
                            f"{type(value).__name__}. Encode it (e.g. json.dumps) first")
        if not value.strip():
            raise ValueError("update() got an empty value: there is nothing to remember "
                             "(delete the item instead)")
        check_values(value, self._limits, _ITEM_OPTION)
        checked = None if metadata is None else check_metadata(
            metadata, "metadata", RESERVED_METADATA, self._limits, _METADATA_OPTION)
        keep_expiry = ttl is DEFAULT_TTL and self._retention.default_ttl is None
        new_ttl = None if keep_expiry else self._retention.ttl_of(ttl, "update(ttl=...)")
        if not _well_formed([item_id]):
            return False
        now = self.now()
        # The item as it is (not expired): its metadata and expiry, when the update keeps them.
        current = self._call("update", scope, lambda: self._get(
            scope, [item_id], with_visibility(None, now), 1))
        if not current:
            return False
        stored = current[0].metadata
        kept = split_expiry(stored)[0]
        expiry = ({k: stored[k] for k in EXPIRY_FIELDS if k in stored} if keep_expiry
                  else expiry_fields(new_ttl, now))
        item = NewItem(item_id, value, {**(kept if checked is None else checked), **expiry})
        updated = bool(self._call("update", scope, lambda: self._update(scope, item, False)))
        if updated:
            self._observe(scope, MemoryOp.UPDATE, [item_id])
            self._audit("update", scope, [item_id])
        return updated

    def delete(self, memory_set: MemorySet, ids: str | Sequence[str] | None = None) -> list[str]:
        """Delete items by id (ids outside the set's scope are never deleted), or all
        items of the set. Returns the ids deleted."""
        scope = self._scope(memory_set, "delete")
        deleted: list[str]
        if ids is None:
            deleted = self._call("delete", scope, lambda: self._delete(scope, None))
        else:
            wanted = _well_formed(check_ids(ids))
            deleted = self._call("delete", scope, lambda: self._delete(scope, wanted)
                                 ) if wanted else []
        self._observe(scope, MemoryOp.DELETE, deleted)
        self._audit("delete", scope, deleted)
        return deleted

    def erase_key(self, partition_key: Any) -> int:
        """Erase everything this job remembers of ``partition_key``: every item of every
        set, text included (a right-to-be-forgotten request). Any thread; records no
        observation. Returns how many items were erased."""
        key = self._check_key(None if partition_key is None else str(partition_key),
                              "erase_key", None)
        erased: int = _store_call(f"erase_key of key '{key}'",
                                  lambda: self._erase_key(self._job_id, key))
        log.info("erased key '%s' of job '%s' from long-term memory (%d items)", key,
                 self._job_id, erased)
        if self._audit_log is not None:
            _audit_call(lambda: self._audit_log.record(  # type: ignore[union-attr]
                "erase_key", self._job_id, key, count=erased))
        return erased

    def sweep_expired(self, limit: int = 1000) -> int:
        """Delete up to ``limit`` items of this job that have expired (any key, any set), text
        included, so that expiry is erasure and not only hiding; returns how many. Call it
        again until it returns less than ``limit`` to sweep everything. Any thread; records
        no observation; the audit log gets one ``expire`` record per set swept."""
        check_limit(limit)
        now = self.now()
        swept: list[SweptItem] = _store_call(
            f"sweep of expired items of job '{self._job_id}'",
            lambda: self._sweep_expired(self._job_id, expired_at(now), limit))
        audit_log = self._audit_log
        if audit_log is not None:
            groups: dict[tuple[str, str], list[str]] = defaultdict(list)
            for item in swept:
                groups[(item.partition_key, item.set_name)].append(item.id)
            for (key, set_name), ids in groups.items():
                _audit_call(lambda k=key, n=set_name, i=ids: audit_log.record(  # type: ignore[misc]
                    "expire", self._job_id, k, n, i))
        if swept:
            log.info("swept %d expired items of job '%s' from long-term memory", len(swept),
                     self._job_id)
        return len(swept)

    # ------------------------------------------------------------ internals

    def _scope(self, memory_set: MemorySet, operation: str) -> MemoryScope:
        if not isinstance(memory_set, MemorySet):
            raise TypeError(f"{operation} expects a MemorySet, got {type(memory_set).__name__}")
        key = self._check_key(memory_set.partition_key, operation, memory_set.name)
        check_name(memory_set.name, "memory set name", self._limits, _NAME_OPTION)
        return MemoryScope(self._job_id, key, memory_set.name,
                           memory_set.observation_id or None, memory_set.observation_suppressed)

    def _check_key(self, key: str | None, operation: str, set_name: str | None) -> str:
        """``key`` if it can scope an operation, else the error naming what is wrong."""
        if key is None:
            raise UnboundMemorySetError(unbound_message(operation, set_name))
        if not key.strip():
            raise EmptyPartitionKeyError(empty_key_message(operation, set_name))
        check_text(key, "partition key")
        if len(key) > self._limits.max_name_length:
            raise ValueError(f"partition key has {len(key)} characters, more than the "
                             f"{self._limits.max_name_length} allowed ({_NAME_OPTION})")
        return key

    def _metadata_per_item(self, metadatas: Any, count: int) -> list[dict[str, Any]]:
        if metadatas is None:
            return [{} for _ in range(count)]
        if isinstance(metadatas, Mapping):
            per_item: list[Any] = [metadatas] * count
        elif isinstance(metadatas, Sequence) and not isinstance(metadatas, (str, bytes)):
            per_item = list(metadatas)
            if len(per_item) != count:
                raise ValueError(f"got {len(per_item)} metadata dicts for {count} items: pass "
                                 "one dict for all items or exactly one per item")
        else:
            raise TypeError(f"metadatas must be a dict or a list of dicts, got "
                            f"{type(metadatas).__name__}")
        return [check_metadata(m, f"metadata {index}", RESERVED_METADATA, self._limits,
                               _METADATA_OPTION) for index, m in enumerate(per_item)]

    def _mint(self, scope: MemoryScope, count: int) -> list[str]:
        """Ids for ``count`` new items: replay-stable inside an action (derived from the
        binding, the write position and the item's ordinal there), random outside one."""
        if scope.observation_id is None:
            return [str(uuid.uuid4()) for _ in range(count)]
        position = current_write_position()
        with self._minted_lock:
            counters = self._minted[scope.observation_id]
            first = counters.get((position, scope.set_name), 0)
            counters[(position, scope.set_name)] = first + count
        self._observations.count_added(scope.observation_id, count)
        return [str(uuid.uuid5(ITEM_ID_NAMESPACE, json.dumps(
            [scope.job_id, scope.partition_key, scope.set_name, scope.observation_id,
             position, ordinal], ensure_ascii=False)))
            for ordinal in range(first, first + count)]

    def _read_back(self, scope: MemoryScope, operation: str,
                   found: list[MemorySetItem]) -> list[MemorySetItem]:
        """Items as a read returns them: the expiry out of the metadata into
        ``expires_at``; with refresh on read, each expiry moved to now plus the item's ttl."""
        now = self.now()
        refreshed: dict[str, float] = {}
        items = []
        for item in found:
            if EXPIRY_FIELDS.isdisjoint(item.metadata):  # written without a ttl
                items.append(item)
                continue
            caller, expires_at, ttl = split_expiry(item.metadata)
            if self._retention.refresh_on_read and expires_at is not None and ttl is not None:
                expires_at = refreshed[item.id] = now + ttl
            items.append(replace(item, metadata=caller, expires_at=expires_at))
        if refreshed:
            self._call(operation, scope, lambda: self._refresh_expiry(scope, refreshed))
        return items

    def _call(self, operation: str, scope: MemoryScope, core: Callable[[], Any]) -> Any:
        """Run a core call; a store failure becomes a :class:`LongTermMemoryError` naming
        the operation, set and key, with secrets masked."""
        return _store_call(
            f"{operation} on memory set '{scope.set_name}' of key '{scope.partition_key}'", core)

    def _reranker_for(self, rerank: Any) -> BaseReranker | None:
        """The reranker a search with ``rerank`` uses: none for False, the configured one
        for True, refused when none is configured (a silent no-op would hide it)."""
        if not isinstance(rerank, bool):
            raise TypeError(f"search option rerank is True or False, got {rerank!r}")
        if rerank and self._reranker is None:
            raise ValueError(f"search(..., rerank=True) needs a reranker, and none is configured: "
                             f"set '{_RERANKER_OPTION}' to the name of a declared reranker "
                             "(@reranker_setup)")
        return self._reranker if rerank else None

    def _audit(self, operation: str, scope: MemoryScope, ids: Sequence[str]) -> None:
        audit_log = self._audit_log
        if audit_log is not None and audit_log.wants(operation):
            _audit_call(lambda: audit_log.record(operation, scope.job_id, scope.partition_key,
                                                 scope.set_name, ids, scope.observation_id))

    def _observe(self, scope: MemoryScope, op: MemoryOp, ids: Sequence[str],
                 query: str | None = None) -> None:
        if scope.suppressed or not scope.observation_id or (op is MemoryOp.DELETE and not ids):
            return  # no action to report to, or a delete that changed nothing
        self._observations.record(MemoryObservation(
            op=op, set=scope.set_name, ids=tuple(ids), query=query, key=scope.partition_key,
            observation_id=scope.observation_id))


def _audit_call(write: Callable[[], None]) -> None:
    """Write an audit record; a log that cannot be written fails the operation's caller
    with a :class:`LongTermMemoryError` (the store operation itself has happened)."""
    try:
        write()
    except AuditLogError as error:
        raise LongTermMemoryError(f"{error}; the operation itself was done") from None


def _store_call(what: str, core: Callable[[], Any]) -> Any:
    """Run ``core``; a store failure becomes a :class:`LongTermMemoryError` saying ``what``
    failed, with secrets masked (the failure is chained only if its text holds none)."""
    try:
        return core()
    except LongTermMemoryError:
        raise
    except Exception as error:  # noqa: BLE001 - raised again as LongTermMemoryError
        raise LongTermMemoryError(
            f"{what} failed: {type(error).__name__}: {error}"
        ) from chainable(error)


def _caller_filter(filters: Any) -> MetadataFilter | None:
    """A caller's filter, parsed, naming no scope field at any depth (the scope is the
    set's; a filter on ``agent_id`` nested in an ``OR`` would widen a read)."""
    if isinstance(filters, Mapping):
        refuse_scope_fields(filters, "filters")
    parsed = parse_filter(filters)
    if parsed is not None and not isinstance(filters, Mapping):
        refuse_scope_fields(to_mem0(parsed), "filters")
    return parsed


def _well_formed(ids: list[str]) -> list[str]:
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


class LongTermMemoryOptions:
    """Configuration of long-term memory, set through the agents' configuration.

    ``LongTermMemoryOptions.Mem0.CHAT_MODEL_SETUP`` (and ``EMBEDDING_MODEL_SETUP``,
    ``VECTOR_STORE``), Apache Flink Agents' names, are the same options as
    ``LongTermMemoryOptions.CHAT_MODEL_SETUP`` and so on; its keys
    (``long-term-memory.mem0.*``) are aliases of ours (``api.options``)."""

    class Mem0:
        """Apache Flink Agents' names of the Mem0 options: the same option objects as
        :class:`LongTermMemoryOptions`'s own (set after the class)."""

        CHAT_MODEL_SETUP: ClassVar[ConfigOption[str | None]]
        EMBEDDING_MODEL_SETUP: ClassVar[ConfigOption[str | None]]
        VECTOR_STORE: ClassVar[ConfigOption[dict[str, Any] | str | None]]

    CHAT_MODEL_SETUP: ConfigOption[str | None] = ConfigOption(
        "long-term-memory.chat-model-setup",
        str,
        None,
        "Name of a declared chat model setup that Mem0 uses to extract memories. "
        "Unset: items are stored as given (Mem0 infer=False).",
    )
    EMBEDDING_MODEL_SETUP: ConfigOption[str | None] = ConfigOption(
        "long-term-memory.embedding-model-setup",
        str,
        None,
        "Name of a declared embedding model setup. Unset: the local all-MiniLM-L6-v2 "
        "model shipped with the package (384 dimensions, offline).",
    )
    VECTOR_STORE: ConfigOption[dict[str, Any] | str | None] = ConfigOption(
        "long-term-memory.vector-store",
        (dict, str),
        None,
        'A Mem0 vector store given inline ({"provider": ..., "config": {...}}) or the '
        "name of a declared vector store. Unset: the embedded store, one SQLite file per job "
        "shared by the processes of one machine (use a server store such as pgvector for "
        "several TaskManagers).",
    )
    BASE_DIR: ConfigOption[str | None] = ConfigOption(
        "long-term-memory.embedded.base-dir",
        str,
        None,
        "Folder holding one private sub-folder per job for the embedded store. "
        "Unset: $FLINK_AGENTS_LTM_HOME, else ~/.flink-agents-ltm.",
    )
    INFER: ConfigOption[bool | None] = ConfigOption(
        "long-term-memory.infer",
        bool,
        None,
        "Let Mem0's LLM extract memories from added items. Unset: on when a chat model is "
        "configured, off otherwise.",
    )
    MAX_ITEM_LENGTH = ConfigOption(
        _ITEM_OPTION, int, _DEFAULTS.max_item_length,
        "Largest item, in characters, that add() accepts.")
    MAX_QUERY_LENGTH = ConfigOption(
        _QUERY_OPTION, int, _DEFAULTS.max_query_length,
        "Longest search query, in characters.")
    MAX_NAME_LENGTH = ConfigOption(
        _NAME_OPTION, int, _DEFAULTS.max_name_length,
        "Longest job id, partition key (as text) or memory set name, in characters.")
    MAX_METADATA_LENGTH = ConfigOption(
        _METADATA_OPTION, int, _DEFAULTS.max_metadata_length,
        "Largest metadata of one item, in characters of its JSON text.")
    SEARCH_THRESHOLD = ConfigOption(
        "long-term-memory.search-threshold",
        float,
        0.0,
        "Lowest similarity a search hit may have (Mem0's threshold); per call: "
        "search(..., threshold=x).",
    )

    AUDIT_LOG: ConfigOption[bool] = ConfigOption(
        "long-term-memory.audit-log.enabled",
        bool,
        False,
        "Append a record of every memory write and erasure (operation, job, key, set, item "
        "ids, observation id, time; never a value, query or metadata) to a private JSON-lines "
        "file shared by the jobs of one machine.",
    )
    AUDIT_LOG_FILE: ConfigOption[str | None] = ConfigOption(
        "long-term-memory.audit-log.file",
        str,
        None,
        "The audit log's file. Unset: audit/memory-audit.jsonl under the embedded base-dir, "
        "else $FLINK_AGENTS_LTM_HOME, else ~/.flink-agents-ltm.",
    )
    AUDIT_READS: ConfigOption[bool] = ConfigOption(
        "long-term-memory.audit-log.reads",
        bool,
        False,
        "Also record gets and searches (the ids they returned) in the audit log.",
    )

    TTL: ConfigOption[float | None] = ConfigOption(
        "long-term-memory.ttl",
        float,
        None,
        "Seconds an item lives when add() or update() names no ttl (expired items are never "
        "read and are deleted by a sweep). Unset: items live until deleted.",
    )
    TTL_REFRESH_ON_READ: ConfigOption[bool] = ConfigOption(
        "long-term-memory.ttl.refresh-on-read",
        bool,
        False,
        "A get or search that returns an item with a ttl extends its expiry to now plus "
        "that ttl (LangGraph's refresh_on_read).",
    )

    @classmethod
    def retention(cls, config: Configuration) -> Retention:
        """The default ttl and refresh-on-read ``config`` sets."""
        return Retention(default_ttl=config.get(cls.TTL),
                         refresh_on_read=bool(config.get(cls.TTL_REFRESH_ON_READ)))

    RERANKER: ConfigOption[str | None] = ConfigOption(
        _RERANKER_OPTION,
        str,
        None,
        "Name of a declared reranker (@reranker_setup) that orders the candidates of "
        "search(..., rerank=True). Unset: rerank=True is refused.",
    )
    RERANK_CANDIDATES: ConfigOption[int] = ConfigOption(
        "long-term-memory.rerank-candidates",
        int,
        _RERANK_CANDIDATES,
        "How many candidates per result a reranked search fetches from the store "
        "(search(..., limit=k, rerank=True) reranks k times this many).",
    )

    @classmethod
    def reranking(cls, config: Configuration | Mapping[str, Any] | None
                  ) -> tuple[str | None, int]:
        """The declared reranker ``config`` names (``None``: none) and the candidates per
        result."""
        if config is None:
            return None, _RERANK_CANDIDATES
        if not isinstance(config, Configuration):
            wanted = (cls.RERANKER, cls.RERANK_CANDIDATES)
            config = Configuration(wanted, {o.key: config[o.key] for o in wanted
                                            if config.get(o.key) is not None})
        return config.get(cls.RERANKER), config.get(cls.RERANK_CANDIDATES)

    @classmethod
    def audit_log(cls, config: Configuration | Mapping[str, Any] | None
                  ) -> MemoryAuditLog | None:
        """The audit log ``config`` (a configuration or a mapping of option keys) asks
        for, or ``None`` when it asks for none."""
        if config is None:
            return None
        if not isinstance(config, Configuration):
            wanted = (cls.AUDIT_LOG, cls.AUDIT_LOG_FILE, cls.AUDIT_READS, cls.BASE_DIR)
            config = Configuration(wanted, {o.key: config[o.key] for o in wanted
                                            if config.get(o.key) is not None})
        if not config.get(cls.AUDIT_LOG):
            return None
        file = config.get(cls.AUDIT_LOG_FILE)
        if not file:
            home = (config.get(cls.BASE_DIR) or os.environ.get("FLINK_AGENTS_LTM_HOME")
                    or "~/.flink-agents-ltm")
            file = str(Path(home).expanduser() / "audit" / AUDIT_FILE_NAME)
        return MemoryAuditLog(file, reads=bool(config.get(cls.AUDIT_READS)))


    @classmethod
    def all(cls) -> tuple[ConfigOption[Any], ...]:
        return tuple(v for v in vars(cls).values() if isinstance(v, ConfigOption))

    @classmethod
    def limits(cls, config: Configuration) -> MemoryLimits:
        """The size limits ``config`` sets (defaults where it sets none)."""
        return MemoryLimits(
            max_item_length=config.get(cls.MAX_ITEM_LENGTH),
            max_query_length=config.get(cls.MAX_QUERY_LENGTH),
            max_name_length=config.get(cls.MAX_NAME_LENGTH),
            max_metadata_length=config.get(cls.MAX_METADATA_LENGTH),
        )


LongTermMemoryOptions.Mem0.CHAT_MODEL_SETUP = LongTermMemoryOptions.CHAT_MODEL_SETUP
LongTermMemoryOptions.Mem0.EMBEDDING_MODEL_SETUP = LongTermMemoryOptions.EMBEDDING_MODEL_SETUP
LongTermMemoryOptions.Mem0.VECTOR_STORE = LongTermMemoryOptions.VECTOR_STORE
