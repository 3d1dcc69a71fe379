"""Long-term memory in Mem0, one instance per operator, shared by all of its keys.

Threading (see ``api.memory.long_term_memory``): the operator calls
:meth:`Mem0LongTermMemory.switch_context` on its mailbox thread before each
action; ``get_memory_set`` / ``delete_memory_set`` run the mailbox check, then
the key check, and read that context. ``add`` / ``get`` / ``search`` /
``delete`` read nothing mutable of this object: all scope comes from the set,
so they are safe on worker threads while the mailbox has moved to other keys.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from flink_agents_ltm.api.configuration import Configuration
from flink_agents_ltm.api.memory.long_term_memory import (
    BaseLongTermMemory,
    EmptyPartitionKeyError,
    LongTermMemoryError,
    LongTermMemoryOptions,
    MemorySet,
    MemorySetItem,
    UnboundMemorySetError,
    empty_key_message,
    unbound_message,
)
from flink_agents_ltm.api.memory.observation import (
    ActionMemoryOutcome,
    MemoryObservation,
    MemoryOp,
)
from flink_agents_ltm.runtime.mailbox import MailboxThreadCheck
from flink_agents_ltm.runtime.memory.mem0_scope import (
    RESERVED_METADATA,
    Mem0Scope,
    mem0_id,
    refuse_scope_fields,
)
from flink_agents_ltm.runtime.memory.observation_log import ObservationLog

log = logging.getLogger(__name__)

# Options of Mem0's search() that callers may pass through; anything else would be
# swallowed silently by its **kwargs (as `limit` is).
SEARCH_OPTIONS = frozenset({"threshold", "rerank", "show_expired"})
_DELETE_PAGE = 1000


class _ActionContext(NamedTuple):
    partition_key: str | None
    observation_id: str | None
    observation_suppressed: bool


class Mem0LongTermMemory(BaseLongTermMemory):
    """Mem0 scoped as ``user_id`` = job id, ``agent_id`` = key, ``run_id`` = set name.

    ``memory`` is a ``mem0.Memory``; a vector store that is not thread-safe
    (embedded Qdrant, FAISS) is wrapped so that its calls are serialized.
    ``mailbox_check`` raises ``MailboxThreadError`` off the mailbox thread; by
    default the thread that builds this object is the mailbox thread.
    """

    def __init__(
        self,
        job_id: str,
        memory: Any,
        mailbox_check: Callable[[], None] | None = None,
        *,
        infer: bool = False,
        max_item_length: int = LongTermMemoryOptions.MAX_ITEM_LENGTH.default,
        search_threshold: float = LongTermMemoryOptions.SEARCH_THRESHOLD.default,
        on_close: Callable[[], None] | None = None,
    ):
        if not isinstance(job_id, str) or not job_id.strip():
            raise ValueError(f"job_id must be a non-empty string, got {job_id!r}")
        from flink_agents_ltm.integrations.mem0.serialized_store import make_thread_safe

        make_thread_safe(memory)
        self._job_id = job_id
        self._user_id = mem0_id(job_id)
        self._memory = memory
        self._mailbox_check = mailbox_check or MailboxThreadCheck()
        self._infer = infer
        self._max_item_length = max_item_length
        self._search_threshold = search_threshold
        self._on_close = on_close
        self._context = _ActionContext(None, None, False)
        self._observations = ObservationLog()

    @classmethod
    def from_config(
        cls,
        job_id: str,
        config: Configuration | Mapping[str, Any] | None = None,
        mailbox_check: Callable[[], None] | None = None,
        *,
        resources: Callable[[str, str], Any] | None = None,
    ) -> Mem0LongTermMemory:
        """Build Mem0 from ``LongTermMemoryOptions`` (the embedded default when ``None``).

        ``config`` is a :class:`Configuration` or a mapping of option keys.
        ``resources(kind, name)`` resolves declared chat models, embedding models
        and vector stores to Mem0 providers (the runtime passes it).
        """
        from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory

        options = config if isinstance(config, Configuration) else Configuration(
            LongTermMemoryOptions.all(), config or {})

        def resource(option, kind: str) -> Any:
            name = options.get(option)
            if name is None:
                return None
            if resources is None:
                raise ValueError(f"option '{option.key}' names the {kind} '{name}', but no "
                                 "declared resources are available to resolve it")
            return resources(kind, name)

        vector_store = options.get(LongTermMemoryOptions.VECTOR_STORE)
        if isinstance(vector_store, str):
            vector_store = resource(LongTermMemoryOptions.VECTOR_STORE, "vector_store")
        llm = resource(LongTermMemoryOptions.CHAT_MODEL_SETUP, "chat_model")
        embedder = resource(LongTermMemoryOptions.EMBEDDING_MODEL_SETUP, "embedding_model")
        base_dir = options.get(LongTermMemoryOptions.BASE_DIR)
        spec = StoreSpec(job_id=job_id, vector_store=vector_store, embedder=embedder or "minilm",
                         llm=llm, base_dir=Path(base_dir).expanduser() if base_dir else None)
        memory, release = acquire_memory(spec)
        infer = options.get(LongTermMemoryOptions.INFER)
        return cls(
            job_id, memory, mailbox_check,
            infer=(llm is not None) if infer is None else infer,
            max_item_length=options.get(LongTermMemoryOptions.MAX_ITEM_LENGTH),
            search_threshold=options.get(LongTermMemoryOptions.SEARCH_THRESHOLD),
            on_close=release,
        )

    @property
    def job_id(self) -> str:
        return self._job_id

    @property
    def memory(self) -> Any:
        """The underlying ``mem0.Memory``."""
        return self._memory

    def close(self) -> None:
        """Give back this operator's share of the Mem0 client (closed with the last share)."""
        if self._on_close is not None:
            self._on_close()
            self._on_close = None

    # ------------------------------------------------------------- context (mailbox)

    def switch_context(
        self,
        partition_key: Any,
        observation_id: str | None = None,
        observation_suppressed: bool = False,
    ) -> None:
        """Record the key and observation context of the next action. Never validates:
        a job with an empty key runs until it actually uses long-term memory."""
        key = None if partition_key is None else str(partition_key)
        self._context = _ActionContext(key, observation_id, bool(observation_suppressed))

    def get_memory_set(self, name: str) -> MemorySet:
        self._mailbox_check()
        context = self._context
        self._check_key(context.partition_key, "get_memory_set", name)
        _check_set_name(name)
        return MemorySet(
            name=name,
            partition_key=context.partition_key,
            observation_id=context.observation_id,
            observation_suppressed=context.observation_suppressed,
            ltm=self,
        )

    def delete_memory_set(self, name: str) -> bool:
        self._mailbox_check()
        context = self._context
        self._check_key(context.partition_key, "delete_memory_set", name)
        _check_set_name(name)
        scope = Mem0Scope(self._user_id, mem0_id(context.partition_key), mem0_id(name))
        deleted = self._delete_all(scope)
        self._observe(context.observation_id, context.observation_suppressed, context.partition_key,
                      MemoryOp.DELETE, name, deleted)
        log.info("deleted memory set '%s' of key '%s' (%d items)", name,
                 context.partition_key, len(deleted))
        return bool(deleted)

    # ------------------------------------------------------------- observations

    def drain_observations(self, observation_id: str) -> list[MemoryObservation]:
        """The observations an action made, once it completed; forgets them."""
        return self._observations.drain(observation_id)

    def discard_observations(self, observation_id: str) -> None:
        """Forget an action's observations (it failed). Its Mem0 writes stay."""
        self._observations.discard(observation_id)

    def end_action(self, observation_id: str, completed: bool) -> ActionMemoryOutcome:
        observations, added = self._observations.end(observation_id, completed)
        return ActionMemoryOutcome(tuple(observations), added)

    # ------------------------------------------------------------- item operations (any thread)

    def add(
        self,
        memory_set: MemorySet,
        memory_items: str | Sequence[str],
        metadatas: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
    ) -> list[str]:
        scope = self._scope(memory_set, "add")
        items = _str_items(memory_items, self._max_item_length)
        per_item = _metadata_per_item(metadatas, len(items))
        added: list[str] = []
        try:
            for item, metadata in zip(items, per_item, strict=True):
                result = self._memory.add(
                    [{"role": "user", "content": item}],
                    user_id=scope.user_id, agent_id=scope.agent_id, run_id=scope.run_id,
                    metadata=metadata, infer=self._infer)
                added.extend(r["id"] for r in result["results"] if r.get("event", "ADD") == "ADD")
        except Exception as error:
            undone = self._undo_add(added)
            raise LongTermMemoryError(
                f"add to memory set '{memory_set.name}' of key '{memory_set.partition_key}' "
                f"failed ({type(error).__name__}: {error}); {undone} of the {len(added)} items "
                "this call had already stored were removed again") from error
        if memory_set.observation_id:
            self._observations.count_added(memory_set.observation_id, len(added))
        self._observe_set(memory_set, MemoryOp.ADD, added)
        return added

    def get(
        self,
        memory_set: MemorySet,
        ids: str | Sequence[str] | None = None,
        filters: Mapping[str, Any] | None = None,
        limit: int = 100,
    ) -> list[MemorySetItem]:
        scope = self._scope(memory_set, "get")
        if ids is not None:
            if filters:
                raise ValueError("get() takes ids or filters, not both")
            rows = [row for row in map(self._owned_row(scope), _id_list(ids)) if row is not None]
        else:
            _check_limit(limit)
            _check_filters(filters)
            result = self._memory.get_all(filters=scope.filters(filters), top_k=limit)
            rows = [row for row in result["results"] if scope.admits(row)]
        items = [_item(memory_set.name, row) for row in rows]
        self._observe_set(memory_set, MemoryOp.GET, [item.id for item in items])
        return items

    def search(
        self,
        memory_set: MemorySet,
        query: str,
        limit: int = 10,
        filters: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[MemorySetItem]:
        scope = self._scope(memory_set, "search")
        if not isinstance(query, str):
            raise TypeError(f"search query must be a str, got {type(query).__name__}")
        if not query.strip():
            raise ValueError("search query is empty")
        _check_limit(limit)
        _check_filters(filters)
        refuse_scope_fields(kwargs, "search options")
        unknown = set(kwargs) - SEARCH_OPTIONS
        if unknown:
            raise TypeError(f"unknown search option(s) {sorted(unknown)}; supported: limit, "
                            f"filters, {', '.join(sorted(SEARCH_OPTIONS))}")
        kwargs.setdefault("threshold", self._search_threshold)
        result = self._memory.search(query, top_k=limit, filters=scope.filters(filters), **kwargs)
        rows = [row for row in result["results"] if scope.admits(row)][:limit]
        items = [_item(memory_set.name, row) for row in rows]
        self._observe_set(memory_set, MemoryOp.SEARCH, [item.id for item in items], query)
        return items

    def delete(self, memory_set: MemorySet, ids: str | Sequence[str] | None = None) -> list[str]:
        scope = self._scope(memory_set, "delete")
        if ids is None:
            deleted = self._delete_all(scope)
        else:
            owned = self._owned_row(scope)
            deleted = []
            for memory_id in _id_list(ids):
                if owned(memory_id) is not None:
                    self._memory.delete(memory_id)
                    deleted.append(memory_id)
        self._observe_set(memory_set, MemoryOp.DELETE, deleted)
        return deleted

    # ------------------------------------------------------------- internals

    def _scope(self, memory_set: MemorySet, operation: str) -> Mem0Scope:
        if not isinstance(memory_set, MemorySet):
            raise TypeError(f"{operation} expects a MemorySet, got {type(memory_set).__name__}")
        key = memory_set.partition_key
        self._check_key(key, operation, memory_set.name)
        return Mem0Scope(self._user_id, mem0_id(key), mem0_id(memory_set.name))

    @staticmethod
    def _check_key(key: str | None, operation: str, set_name: str) -> None:
        if key is None:
            raise UnboundMemorySetError(unbound_message(operation, set_name))
        if not key.strip():
            raise EmptyPartitionKeyError(empty_key_message(operation, set_name))

    def _owned_row(self, scope: Mem0Scope) -> Callable[[str], Mapping[str, Any] | None]:
        """Look up an id, seeing it only if it lies in ``scope``: Mem0's get/delete by id
        are not scoped, so a foreign id must read as "not found"."""

        def lookup(memory_id: str) -> Mapping[str, Any] | None:
            try:
                uuid.UUID(memory_id)
            except ValueError:
                return None
            row = self._memory.get(memory_id)
            return row if scope.owns(row) else None

        return lookup

    def _delete_all(self, scope: Mem0Scope) -> list[str]:
        deleted: list[str] = []
        while True:
            page = self._memory.get_all(filters=scope.filters(), top_k=_DELETE_PAGE,
                                        show_expired=True)["results"]
            page = [row for row in page if scope.owns(row)]
            for row in page:
                self._memory.delete(row["id"])
                deleted.append(row["id"])
            if len(page) < _DELETE_PAGE:
                return deleted

    def _undo_add(self, ids: list[str]) -> int:
        undone = 0
        for memory_id in ids:
            try:
                self._memory.delete(memory_id)
                undone += 1
            except Exception:  # the store is failing; say how much was undone
                log.exception("could not remove item %s after a failed add", memory_id)
        return undone

    def _observe_set(self, memory_set: MemorySet, op: MemoryOp, ids: Sequence[str],
                     query: str | None = None) -> None:
        self._observe(memory_set.observation_id, memory_set.observation_suppressed,
                      memory_set.partition_key, op, memory_set.name, ids, query)

    def _observe(self, observation_id: str | None, suppressed: bool, key: str, op: MemoryOp,
                 set_name: str, ids: Sequence[str], query: str | None = None) -> None:
        if suppressed or not observation_id or (op is MemoryOp.DELETE and not ids):
            return  # no action to report to, or a delete that changed nothing
        self._observations.record(MemoryObservation(
            op=op, set=set_name, ids=tuple(ids), query=query, key=key,
            observation_id=observation_id))


def _check_set_name(name: Any) -> None:
    if not isinstance(name, str):
        raise TypeError(f"memory set name must be a str, got {type(name).__name__}")
    if not name.strip():
        raise ValueError("memory set name must not be empty")


def _str_items(memory_items: Any, max_length: int) -> list[str]:
    items = [memory_items] if isinstance(memory_items, str) else memory_items
    if not isinstance(items, Sequence) or isinstance(items, (bytes, bytearray)):
        raise TypeError("long-term memory stores str values only; got "
                        f"{type(memory_items).__name__}. Encode other types (e.g. json.dumps) "
                        "before adding them")
    items = list(items)
    for index, item in enumerate(items):
        if not isinstance(item, str):
            raise TypeError(f"long-term memory stores str values only; item {index} is "
                            f"{type(item).__name__}. Encode it (e.g. json.dumps) before adding")
        if not item.strip():
            raise ValueError(f"item {index} is empty: there is nothing to remember")
        if len(item) > max_length:
            raise ValueError(f"item {index} has {len(item)} characters, more than the "
                             f"{max_length} allowed (long-term-memory.max-item-length); split "
                             "or summarize it")
    return items


def _metadata_per_item(metadatas: Any, count: int) -> list[dict[str, Any] | None]:
    if metadatas is None:
        return [None] * count
    if isinstance(metadatas, Mapping):
        per_item = [metadatas] * count
    elif isinstance(metadatas, Sequence) and not isinstance(metadatas, (str, bytes)):
        per_item = list(metadatas)
        if len(per_item) != count:
            raise ValueError(f"got {len(per_item)} metadata dicts for {count} items: pass one "
                             "dict for all items or exactly one per item")
    else:
        raise TypeError(f"metadatas must be a dict or a list of dicts, got "
                        f"{type(metadatas).__name__}")
    for index, metadata in enumerate(per_item):
        if not isinstance(metadata, Mapping):
            raise TypeError(f"metadata {index} must be a dict, got {type(metadata).__name__}")
        refuse_scope_fields(metadata, f"metadata {index}")
        reserved = RESERVED_METADATA & set(metadata)
        if reserved:
            raise ValueError(f"metadata {index} uses key(s) {sorted(reserved)} that Mem0 "
                             "writes itself; rename them")
    return [dict(metadata) for metadata in per_item]


def _id_list(ids: Any) -> list[str]:
    id_list = [ids] if isinstance(ids, str) else ids
    if not isinstance(id_list, Sequence) or not all(isinstance(i, str) for i in id_list):
        raise TypeError(f"ids must be a str or a list of str, got {ids!r}")
    return list(id_list)


def _check_limit(limit: Any) -> None:
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
        raise ValueError(f"limit must be a positive int, got {limit!r}")


def _check_filters(filters: Any) -> None:
    if filters is None:
        return
    if not isinstance(filters, Mapping):
        raise TypeError(f"filters must be a dict, got {type(filters).__name__}")
    refuse_scope_fields(filters, "filters")


def _item(set_name: str, row: Mapping[str, Any]) -> MemorySetItem:
    return MemorySetItem(
        memory_set_name=set_name,
        id=row["id"],
        value=row.get("memory", ""),
        metadata=dict(row.get("metadata") or {}),
        created_at=row.get("created_at"),
        updated_at=row.get("updated_at"),
        score=row.get("score"),
    )
