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

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from flink_agents_ltm.api.arguments import check_ids, check_limit
from flink_agents_ltm.api.memory.audit import record_erasure, record_expired, record_operation
from flink_agents_ltm.api.memory.core import LongTermMemoryCore
from flink_agents_ltm.api.memory.errors import (
    EmptyPartitionKeyError,
    LongTermMemoryError,
    MailboxThreadError,
    UnboundMemorySetError,
    empty_key_message,
    store_call,
    unbound_message,
)
from flink_agents_ltm.api.memory.expiry import (
    DEFAULT_TTL,
    Clock,
    Retention,
    expired_at,
    expiry_fields,
    read_back,
    updated_expiry,
    with_visibility,
)
from flink_agents_ltm.api.memory.item_ids import ITEM_ID_NAMESPACE, ItemIds, well_formed
from flink_agents_ltm.api.memory.items import MemoryScope, MemorySetItem, NewItem, SweptItem, Ttl
from flink_agents_ltm.api.memory.mailbox import MailboxThreadCheck
from flink_agents_ltm.api.memory.observation import (
    ActionMemoryOutcome,
    MemoryObservation,
    MemoryOp,
    ObservationLog,
)
from flink_agents_ltm.api.memory.settings import MemorySettings
from flink_agents_ltm.api.memory.validation import (
    ITEM_OPTION,
    NAME_OPTION,
    QUERY_OPTION,
    RESERVED_METADATA,
    MemoryLimits,
    check_filter,
    check_key,
    check_name,
    check_query,
    check_search_options,
    check_update,
    check_values,
    metadata_per_item,
)
from flink_agents_ltm.api.rerankers import reranked_order

if TYPE_CHECKING:  # its home is api.options, which imports this package: read on first use
    from flink_agents_ltm.api.options import LongTermMemoryOptions

__all__ = [
    "ITEM_ID_NAMESPACE",
    "RESERVED_METADATA",
    "ActionMemoryOutcome",
    "BaseLongTermMemory",
    "Clock",
    "EmptyPartitionKeyError",
    "LongTermMemoryError",
    "LongTermMemoryOptions",
    "MailboxThreadCheck",
    "MailboxThreadError",
    "MemoryLimits",
    "MemoryScope",
    "MemorySet",
    "MemorySetItem",
    "NewItem",
    "Retention",
    "SweptItem",
    "Ttl",
    "UnboundMemorySetError",
    "check_name",
    "empty_key_message",
    "unbound_message",
]

log = logging.getLogger(__name__)


def __getattr__(name: str) -> Any:
    """``LongTermMemoryOptions``, declared in :mod:`flink_agents_ltm.api.options` since
    issue 33, is still found here (its old home)."""
    if name == "LongTermMemoryOptions":
        from flink_agents_ltm.api.options import LongTermMemoryOptions

        return LongTermMemoryOptions
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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


class BaseLongTermMemory(MemorySettings, LongTermMemoryCore):
    """The long-term memory of one operator, shared by all of its keys: a template.

    The public methods are the whole contract and enforce it for every
    implementation: the mailbox-thread rule, the key checks (unbound and empty
    keys refused before anything reaches a store, each with its own message),
    one validation of names, values, queries, metadata and filters
    (:mod:`~flink_agents_ltm.api.memory.validation`), scope fields that callers can never
    set, by-id access confined to the set, the item ids
    (:mod:`~flink_agents_ltm.api.memory.item_ids`), expiry
    (:mod:`~flink_agents_ltm.api.memory.expiry`), the observations and the audit log
    (:mod:`~flink_agents_ltm.api.memory.audit`). Each public method validates once, then
    runs the core: an implementation writes only :meth:`_add`, :meth:`_get`,
    :meth:`_search`, :meth:`_update`, :meth:`_delete` and :meth:`_erase_key`
    (:class:`~flink_agents_ltm.api.memory.core.LongTermMemoryCore`), each given a checked
    :class:`MemoryScope`. Its settings (limits, retention, clock, audit log, reranker) are
    :class:`~flink_agents_ltm.api.memory.settings.MemorySettings`'.

    Threading: ``switch_context``, ``get_memory_set``, ``delete_memory_set`` and
    ``end_action`` run on the mailbox thread (the one that built this memory,
    unless ``mailbox_check`` says otherwise); the item operations and
    ``erase_key`` run on any thread, so the core must be thread-safe.
    """

    def __init__(self, job_id: str, mailbox_check: Callable[[], None] | None = None, *,
                 limits: MemoryLimits | None = None, retention: Retention | None = None,
                 clock: Clock | None = None):
        super().__init__(limits=limits, retention=retention, clock=clock)
        if not isinstance(job_id, str) or not job_id.strip():
            raise ValueError(f"job_id must be a non-empty string, got {job_id!r}")
        self._job_id = check_name(job_id, "job_id", self._limits, NAME_OPTION)
        self._mailbox_check = mailbox_check or MailboxThreadCheck()
        self._context: tuple[str | None, str | None, bool] = (None, None, False)
        self._observations = ObservationLog()
        self._ids = ItemIds()

    @property
    def job_id(self) -> str:
        return self._job_id

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
        check_key(key, "get_memory_set", name, self._limits)
        check_name(name, "memory set name", self._limits, NAME_OPTION)
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
        key = check_key(bound_key, "delete_memory_set", name, self._limits)
        check_name(name, "memory set name", self._limits, NAME_OPTION)
        scope = MemoryScope(self._job_id, key, name, observation_id, suppressed)
        deleted: list[str] = self._call("delete_memory_set", scope,
                                        lambda: self._delete(scope, None))
        self._done(scope, MemoryOp.DELETE, "delete_memory_set", deleted)
        log.info("deleted memory set '%s' of key '%s' (%d items)", name, key, len(deleted))
        return bool(deleted)

    def end_action(self, observation_id: str, completed: bool) -> ActionMemoryOutcome:
        """The action ended: its observations if it completed (dropped if it failed) and
        how many items it stored either way. Forgets the action."""
        self._ids.forget(observation_id)
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
        values = check_values(memory_items, self._limits, ITEM_OPTION)
        metadata = metadata_per_item(metadatas, len(values), self._limits)
        expiry = expiry_fields(self._retention.ttl_of(ttl, "add(ttl=...)"), self.now())
        ids = self._ids.mint(scope, len(values))
        if scope.observation_id is not None:
            self._observations.count_added(scope.observation_id, len(values))
        items = [NewItem(i, v, {**m, **expiry})
                 for i, v, m in zip(ids, values, metadata, strict=True)]
        stored: list[str] = self._call("add", scope, lambda: self._add(scope, items))
        self._done(scope, MemoryOp.ADD, "add", stored)
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
            wanted = well_formed(check_ids(ids))
            visible = with_visibility(None, self.now())
            found = self._call("get", scope, lambda: self._get(
                scope, wanted, visible, len(wanted))) if wanted else []
        else:
            check_limit(limit)
            checked = with_visibility(check_filter(filters), self.now())
            found = self._call("get", scope, lambda: self._get(scope, None, checked, limit))
            found = found[:limit]
        found = self._read_back(scope, "get", found)
        self._done(scope, MemoryOp.GET, "get", [item.id for item in found])
        return found

    def search(self, memory_set: MemorySet, query: str, limit: int = 10,
               filters: Mapping[str, Any] | None = None, **options: Any) -> list[MemorySetItem]:
        """At most ``limit`` items most similar to ``query``, best first."""
        scope = self._scope(memory_set, "search")
        check_query(query, self._limits, QUERY_OPTION)
        check_limit(limit)
        checked = with_visibility(check_filter(filters), self.now())
        reranker = check_search_options(options, self.search_options, self._reranker_for)
        fetch = limit if reranker is None else limit * self._rerank_candidates
        found: list[MemorySetItem] = self._call(
            "search", scope, lambda: self._search(scope, query, fetch, checked, options))[:fetch]
        if reranker is not None:  # only the scope's own candidates reach the reranker
            order = self._call("rerank", scope, lambda: reranked_order(
                reranker, query, [item.value for item in found]))
            found = [found[index] for index in order]
        found = self._read_back(scope, "search", found[:limit])
        self._done(scope, MemoryOp.SEARCH, "search", [item.id for item in found], query)
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
        checked = check_update(item_id, value, metadata, self._limits)
        keep_expiry, new_ttl = self._retention.update_ttl(ttl)
        if not well_formed([item_id]):
            return False
        now = self.now()
        # The item as it is (not expired): its metadata and expiry, when the update keeps them.
        current = self._call("update", scope, lambda: self._get(
            scope, [item_id], with_visibility(None, now), 1))
        if not current:
            return False
        kept, expiry = updated_expiry(current[0].metadata, keep_expiry, new_ttl, now)
        item = NewItem(item_id, value, {**(kept if checked is None else checked), **expiry})
        updated = bool(self._call("update", scope, lambda: self._update(scope, item, False)))
        if updated:
            self._done(scope, MemoryOp.UPDATE, "update", [item_id])
        return updated

    def delete(self, memory_set: MemorySet, ids: str | Sequence[str] | None = None) -> list[str]:
        """Delete items by id (ids outside the set's scope are never deleted), or all
        items of the set. Returns the ids deleted."""
        scope = self._scope(memory_set, "delete")
        deleted: list[str]
        if ids is None:
            deleted = self._call("delete", scope, lambda: self._delete(scope, None))
        else:
            wanted = well_formed(check_ids(ids))
            deleted = self._call("delete", scope, lambda: self._delete(scope, wanted)
                                 ) if wanted else []
        self._done(scope, MemoryOp.DELETE, "delete", deleted)
        return deleted

    def erase_key(self, partition_key: Any) -> int:
        """Erase everything this job remembers of ``partition_key``: every item of every
        set, text included (a right-to-be-forgotten request). Any thread; records no
        observation. Returns how many items were erased."""
        key = check_key(None if partition_key is None else str(partition_key),
                        "erase_key", None, self._limits)
        erased: int = store_call(f"erase_key of key '{key}'",
                                 lambda: self._erase_key(self._job_id, key))
        log.info("erased key '%s' of job '%s' from long-term memory (%d items)", key,
                 self._job_id, erased)
        record_erasure(self._audit_log, self._job_id, key, erased)
        return erased

    def sweep_expired(self, limit: int = 1000) -> int:
        """Delete up to ``limit`` items of this job that have expired (any key, any set), text
        included, so that expiry is erasure and not only hiding; returns how many. Call it
        again until it returns less than ``limit`` to sweep everything. Any thread; records
        no observation; the audit log gets one ``expire`` record per set swept."""
        check_limit(limit)
        now = self.now()
        swept: list[SweptItem] = store_call(
            f"sweep of expired items of job '{self._job_id}'",
            lambda: self._sweep_expired(self._job_id, expired_at(now), limit))
        record_expired(self._audit_log, self._job_id, swept)
        if swept:
            log.info("swept %d expired items of job '%s' from long-term memory", len(swept),
                     self._job_id)
        return len(swept)

    # ------------------------------------------------------------ internals

    def _scope(self, memory_set: MemorySet, operation: str) -> MemoryScope:
        if not isinstance(memory_set, MemorySet):
            raise TypeError(f"{operation} expects a MemorySet, got {type(memory_set).__name__}")
        key = check_key(memory_set.partition_key, operation, memory_set.name, self._limits)
        check_name(memory_set.name, "memory set name", self._limits, NAME_OPTION)
        return MemoryScope(self._job_id, key, memory_set.name,
                           memory_set.observation_id or None, memory_set.observation_suppressed)

    def _read_back(self, scope: MemoryScope, operation: str,
                   found: list[MemorySetItem]) -> list[MemorySetItem]:
        """Items as a read returns them (:func:`~.expiry.read_back`); expiries refreshed on
        read are written back through the core."""
        items, refreshed = read_back(found, self.now(), self._retention.refresh_on_read)
        if refreshed:
            self._call(operation, scope, lambda: self._refresh_expiry(scope, refreshed))
        return items

    def _call(self, operation: str, scope: MemoryScope, core: Callable[[], Any]) -> Any:
        """Run a core call; a store failure becomes a :class:`LongTermMemoryError` naming
        the operation, set and key, with secrets masked."""
        return store_call(
            f"{operation} on memory set '{scope.set_name}' of key '{scope.partition_key}'", core)

    def _done(self, scope: MemoryScope, op: MemoryOp, operation: str, ids: Sequence[str],
              query: str | None = None) -> None:
        """An operation succeeded: observe it for its action, then record it in the audit log."""
        action = None if scope.suppressed else scope.observation_id
        if action and (ids or op is not MemoryOp.DELETE):  # a delete of nothing: no change
            self._observations.record(MemoryObservation(
                op=op, set=scope.set_name, ids=tuple(ids), query=query,
                key=scope.partition_key, observation_id=action))
        record_operation(self._audit_log, operation, scope, ids)
