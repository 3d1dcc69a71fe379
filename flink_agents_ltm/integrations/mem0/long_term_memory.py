"""Long-term memory in Mem0: the core of :class:`BaseLongTermMemory` over ``mem0.Memory``.

The base class has already checked the thread, the key, every input and the
scope when a core method runs here; what is left is Mem0's side: the scope
mapping (``user_id`` = job, ``agent_id`` = key, ``run_id`` = set, see
:mod:`.scope`), rows written under the ids the base minted (an upsert, so a
replay rewrites instead of appending, see :mod:`.row_writes`), reads that only
ever see rows of the scope, and deletes that leave no text behind (Mem0's
history database is off, see :mod:`.history`).

With ``infer=True`` (a chat model configured) Mem0's LLM decides what to store
and gives the rows random ids: those writes are not replay-stable.

Threading: any thread. The vector store is serialized where it is not
thread-safe (:mod:`.serialized_store`); embedding runs outside that lock, except
for the later chunks of a large add on pgvector (:mod:`.row_writes`).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import nullcontext
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from flink_agents_ltm.api.configuration import Configuration
from flink_agents_ltm.api.filters import MetadataFilter, matches
from flink_agents_ltm.api.memory.errors import LongTermMemoryError
from flink_agents_ltm.api.memory.expiry import EXPIRES_AT, Clock, Retention
from flink_agents_ltm.api.memory.items import MemoryScope, MemorySetItem, NewItem, SweptItem
from flink_agents_ltm.api.memory.long_term_memory import BaseLongTermMemory
from flink_agents_ltm.api.memory.validation import RESERVED_METADATA, MemoryLimits, check_name
from flink_agents_ltm.api.options import LongTermMemoryOptions, long_term_memory_configuration
from flink_agents_ltm.api.redaction import chainable
from flink_agents_ltm.integrations.mem0.embedding_ahead import embedded_chunks
from flink_agents_ltm.integrations.mem0.environment import import_mem0
from flink_agents_ltm.integrations.mem0.options import Mem0Options
from flink_agents_ltm.integrations.mem0.providers import backend_for, native_filter
from flink_agents_ltm.integrations.mem0.providers.filter_parts import read_matching
from flink_agents_ltm.integrations.mem0.row_writes import (
    RowWriteError,
    write_rows,
    writes_in_chunks,
)
from flink_agents_ltm.integrations.mem0.scope import Mem0Scope, mem0_id, text_of
from flink_agents_ltm.integrations.mem0.serialized_store import make_thread_safe

import_mem0()
from mem0.utils.lemmatization import lemmatize_for_bm25  # noqa: E402

log = logging.getLogger(__name__)

_PAGE = 1000
# Row fields besides user metadata that a caller's filter may test.
_FILTERABLE_FIELDS = ("created_at", "updated_at", "role", "actor_id", EXPIRES_AT)
# Fields Mem0 writes into a row that a filter does not see (_fields): a store that held a
# filter on them (a NOT on "hash") to its own values would drop rows the filter keeps.
_UNSEEN_FIELDS = RESERVED_METADATA - set(_FILTERABLE_FIELDS)
# Fields of a row Mem0 wrote itself (infer=True) that an update keeps.
_KEPT_ROW_FIELDS = ("role", "actor_id", "attributed_to", "memory_type")


class Mem0LongTermMemory(BaseLongTermMemory):
    """Mem0 scoped as ``user_id`` = job id, ``agent_id`` = key, ``run_id`` = set name.

    ``memory`` is a ``mem0.Memory``; a vector store that is not thread-safe
    (embedded Qdrant, FAISS) is wrapped so that its calls are serialized.
    ``mailbox_check`` raises ``MailboxThreadError`` off the mailbox thread; by
    default the thread that builds this object is the mailbox thread.
    """

    # ``rerank`` is the base class's (long-term-memory.reranker), never Mem0's own.
    search_options = frozenset({"threshold", "show_expired"})

    def __init__(
        self,
        job_id: str,
        memory: Any,
        mailbox_check: Callable[[], None] | None = None,
        *,
        infer: bool = False,
        limits: MemoryLimits | None = None,
        search_threshold: float = 0.0,
        on_close: Callable[[], None] | None = None,
        retention: Retention | None = None,
        clock: Clock | None = None,
    ):
        super().__init__(job_id, mailbox_check, limits=limits, retention=retention,
                         clock=clock)
        make_thread_safe(memory)
        self._memory = memory
        self._provider: str = memory.config.vector_store.provider
        self._user_id = mem0_id(job_id)
        self._infer = infer
        self._search_threshold = search_threshold
        self._on_close = on_close

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
        ``resources(kind, name)`` resolves declared chat models, embedding models and
        vector stores by name (the runtime passes it); chat and embedding models are
        wrapped as Mem0 providers here.
        """
        from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec, acquire_memory
        from flink_agents_ltm.integrations.mem0.model_providers import as_mem0_provider

        options = (config if isinstance(config, Configuration)
                   else long_term_memory_configuration(config))
        limits = LongTermMemoryOptions.limits(options)
        # The job id names the store's folder: refuse it before a folder or model is made.
        check_name(job_id, "job_id", limits, LongTermMemoryOptions.MAX_NAME_LENGTH.key)

        def resource(option: Any, kind: str) -> Any:
            name = options.get(option)
            if name is None:
                return None
            if resources is None:
                raise ValueError(f"option '{option.key}' names the {kind} '{name}', but no "
                                 "declared resources are available to resolve it")
            found = resources(kind, name)
            return found if kind == "vector_store" else as_mem0_provider(kind, found)

        vector_store = options.get(LongTermMemoryOptions.VECTOR_STORE)
        if isinstance(vector_store, str):
            vector_store = resource(LongTermMemoryOptions.VECTOR_STORE, "vector_store")
        llm = resource(Mem0Options.CHAT_MODEL_SETUP, "chat_model")
        embedder = resource(Mem0Options.EMBEDDING_MODEL_SETUP, "embedding_model")
        base_dir = options.get(LongTermMemoryOptions.BASE_DIR)
        spec = StoreSpec(job_id=job_id, vector_store=vector_store, embedder=embedder or "minilm",
                         llm=llm, base_dir=Path(base_dir).expanduser() if base_dir else None)
        memory, release = acquire_memory(spec)
        infer = options.get(Mem0Options.INFER)
        return cls(
            job_id, memory, mailbox_check,
            infer=(llm is not None) if infer is None else infer,
            limits=limits,
            search_threshold=options.get(Mem0Options.SEARCH_THRESHOLD),
            on_close=release,
            retention=LongTermMemoryOptions.retention(options),
        )

    @property
    def memory(self) -> Any:
        """The underlying ``mem0.Memory``."""
        return self._memory

    def close(self) -> None:
        """Give back this operator's share of the Mem0 client (closed with the last share)."""
        if self._on_close is not None:
            self._on_close()
            self._on_close = None

    # ------------------------------------------------------------- the core

    def _mem0_scope(self, scope: MemoryScope) -> Mem0Scope:
        return Mem0Scope(self._user_id, mem0_id(scope.partition_key), mem0_id(scope.set_name))

    def _add(self, scope: MemoryScope, items: Sequence[NewItem]) -> list[str]:
        where = self._mem0_scope(scope)
        if self._infer:
            return self._add_inferred(scope, where, items)
        texts = [item.value for item in items]
        model = self._memory.embedding_model
        store = self._memory.vector_store
        if len(texts) == 1:
            vectors: Iterable[list[list[float]]] = [[model.embed(texts[0], "add")]]
        elif writes_in_chunks(store):  # the encoder and the store's server overlap
            vectors = embedded_chunks(lambda chunk: model.embed_batch(chunk, "add"), texts)
        else:
            vectors = [model.embed_batch(texts, "add")]
        now = datetime.now(UTC).isoformat()
        payloads = [_payload(item, where, now) for item in items]
        ids = [item.id for item in items]
        try:
            write_rows(store, ids, vectors, payloads)
        except RowWriteError as error:
            raise LongTermMemoryError(
                f"add to memory set '{scope.set_name}' of key '{scope.partition_key}' failed "
                f"({error}); {error.removed} rows this call had written were "
                "removed again, so none of its items is stored") from chainable(error)
        except Exception as error:  # noqa: BLE001 - raised again, masked
            raise LongTermMemoryError(
                f"add to memory set '{scope.set_name}' of key '{scope.partition_key}' failed "
                f"({type(error).__name__}: {error}); none of its "
                f"{len(items)} items is stored") from chainable(error)
        return ids

    def _add_inferred(self, scope: MemoryScope, where: Mem0Scope,
                      items: Sequence[NewItem]) -> list[str]:
        """Mem0's LLM extracts memories; it chooses the ids and may store none or several
        rows per item, so these writes are not replay-stable."""
        added: list[str] = []
        try:
            for item in items:
                result = self._memory.add(
                    [{"role": "user", "content": item.value}], user_id=where.user_id,
                    agent_id=where.agent_id, run_id=where.run_id, metadata=dict(item.metadata),
                    infer=True)
                added.extend(r["id"] for r in result["results"] if r.get("event", "ADD") == "ADD")
        except Exception as error:  # noqa: BLE001 - raised again, masked
            undone = self._remove(added)
            raise LongTermMemoryError(
                f"add to memory set '{scope.set_name}' of key '{scope.partition_key}' failed "
                f"({type(error).__name__}: {error}); {undone} of the "
                f"{len(added)} items this call had already stored were removed again"
            ) from chainable(error)
        return added

    def _get(self, scope: MemoryScope, ids: Sequence[str] | None,
             filters: MetadataFilter | None, limit: int) -> list[MemorySetItem]:
        where = self._mem0_scope(scope)
        if ids is not None:
            rows = [row for row in map(self._owned_row(where), ids)
                    if row is not None and matches(filters, _fields(row))]
            return [_item(scope.set_name, row) for row in rows]
        return [_item(scope.set_name, row) for row in self._fetch(
            lambda top_k: self._memory.get_all(
                filters=where.filters(self._pushed(filters, search=False)),
                top_k=top_k)["results"],
            where, filters, limit)]

    def _search(self, scope: MemoryScope, query: str, limit: int,
                filters: MetadataFilter | None,
                options: Mapping[str, Any]) -> list[MemorySetItem]:
        where = self._mem0_scope(scope)
        options = {"threshold": self._search_threshold, **options}
        pushed = self._pushed(filters, search=True)
        return [_item(scope.set_name, row) for row in self._fetch(
            lambda top_k: self._memory.search(query, top_k=top_k, filters=where.filters(pushed),
                                              **options)["results"],
            where, filters, limit)]

    def _update(self, scope: MemoryScope, item: NewItem, keep_metadata: bool) -> bool:
        """Rewrite the row through the vector store's own ``update`` (vector and payload),
        not ``Memory.update``: that one writes the old text into Mem0's history and merges
        metadata. The text is written as given, also with ``infer=True``. The scope fields
        are written again from the scope, the creation time (and Mem0's role fields of a
        row it wrote itself) stay."""
        where = self._mem0_scope(scope)
        store = self._memory.vector_store
        if _owned_payload(store, where, item.id) is None:
            return False
        vector = self._memory.embedding_model.embed(item.value, "update")
        locked = getattr(store, "locked", None)
        with locked() if locked is not None else nullcontext():
            old = _owned_payload(store, where, item.id)  # deleted meanwhile: not found
            if old is None:
                return False
            metadata = ({k: v for k, v in old.items() if k not in RESERVED_METADATA}
                        if keep_metadata else item.metadata)
            payload = _payload(NewItem(item.id, item.value, metadata), where,
                               datetime.now(UTC).isoformat())
            payload["created_at"] = old.get("created_at") or payload["created_at"]
            payload.update({k: old[k] for k in _KEPT_ROW_FIELDS if k in old})
            store.update(vector_id=item.id, vector=list(vector), payload=payload)
        return True

    def _delete(self, scope: MemoryScope, ids: Sequence[str] | None) -> list[str]:
        where = self._mem0_scope(scope)
        if ids is None:
            return self._delete_all(where)
        owned = self._owned_row(where)
        found = [memory_id for memory_id in ids if owned(memory_id) is not None]
        self._remove(found, strict=True)
        return found

    def _erase_key(self, job_id: str, partition_key: str) -> int:
        return len(self._delete_all(Mem0Scope(self._user_id, mem0_id(partition_key), None)))

    def _refresh_expiry(self, scope: MemoryScope, expiries: Mapping[str, float]) -> None:
        """Rewrite the payloads' expiry (read again under the store's lock, so a concurrent
        update's text is not overwritten with the one read before)."""
        where = self._mem0_scope(scope)
        store = self._memory.vector_store
        locked = getattr(store, "locked", None)
        with locked() if locked is not None else nullcontext():
            for memory_id, expires_at in expiries.items():
                payload = _owned_payload(store, where, memory_id)
                if payload is not None:
                    store.update(vector_id=memory_id, payload={**payload,
                                                               EXPIRES_AT: expires_at})

    def _sweep_expired(self, job_id: str, expired: MetadataFilter,
                       limit: int) -> list[SweptItem]:
        """One bounded batch: the job's rows that the store (given the pushed expiry
        condition) and :func:`matches` find expired, deleted in one call where it can."""
        pushed = self._pushed(expired, search=False) or {}
        doomed = read_matching(
            lambda top_k: self._memory.get_all(filters={**pushed, "user_id": self._user_id},
                                               top_k=top_k, show_expired=True)["results"],
            lambda row: row.get("user_id") == self._user_id and matches(expired, _fields(row)),
            limit, limit, limit * 64)
        self._remove([row["id"] for row in doomed], strict=True)
        return [SweptItem(text_of(row.get("agent_id", "")), text_of(row.get("run_id", "")),
                          row["id"]) for row in doomed]

    # ------------------------------------------------------------- internals

    def _pushed(self, filters: MetadataFilter | None, *, search: bool) -> dict[str, Any] | None:
        """The part of ``filters`` that Mem0's store evaluates no narrower than
        :func:`matches` (stores differ: pgvector reads ``True`` as ``'True'`` and orders
        text as numbers, Qdrant orders ISO text as dates); :meth:`_fetch` checks all of it."""
        return native_filter(self._provider, filters, search=search,
                             reserved=_UNSEEN_FIELDS).condition

    @staticmethod
    def _fetch(read: Callable[[int], list[dict[str, Any]]], where: Mem0Scope,
               filters: MetadataFilter | None, limit: int) -> list[dict[str, Any]]:
        """Rows of ``read(top_k)`` that lie in the scope and match ``filters`` under our
        filter semantics (stores differ), reading more when those checks dropped rows."""
        return read_matching(
            read, lambda row: where.admits(row) and matches(filters, _fields(row)),
            limit, limit, limit * 64)

    def _owned_row(self, where: Mem0Scope) -> Callable[[str], Mapping[str, Any] | None]:
        """Look up an id, seeing it only if it lies in ``where``: Mem0's get and delete by
        id are not scoped, so a foreign id must read as "not found"."""

        def lookup(memory_id: str) -> Mapping[str, Any] | None:
            row = self._memory.get(memory_id)
            return row if where.owns(row) else None

        return lookup

    def _delete_all(self, where: Mem0Scope) -> list[str]:
        deleted: list[str] = []
        while True:
            page = self._memory.get_all(filters=where.filters(), top_k=_PAGE,
                                        show_expired=True)["results"]
            owned = [row["id"] for row in page if where.owns(row)]
            self._remove(owned, strict=True)
            deleted.extend(owned)
            if len(page) < _PAGE:
                return deleted
            if not owned:  # the store's filter let a full page of foreign rows through
                log.warning("deleting %s stopped early: the store returned %d rows of other "
                            "scopes for its filter", where, len(page))
                return deleted

    def _remove(self, ids: Sequence[str], strict: bool = False) -> int:
        """Delete rows from the vector store itself (``Memory.delete`` would write the old
        text into Mem0's history), in one call where the store offers ``delete_many``.
        ``strict``: a failure propagates; otherwise it is logged and the count says how many
        were removed."""
        store = self._memory.vector_store
        delete_many = backend_for(self._provider).many_deleter(store) if ids else None
        if delete_many is not None:
            try:
                delete_many(list(ids))
                return len(ids)
            except Exception:
                if strict:
                    raise
                log.exception("could not remove %d items after a failed add", len(ids))
                return 0
        removed = 0
        for memory_id in ids:
            try:
                store.delete(vector_id=memory_id)
                removed += 1
            except Exception:
                if strict:
                    raise
                log.exception("could not remove item %s after a failed add", memory_id)
        return removed


def _payload(item: NewItem, where: Mem0Scope, now: str) -> dict[str, Any]:
    """The row Mem0's ``add(infer=False)`` would store for this item (a test compares the
    two, so a Mem0 upgrade that changes its rows fails loudly)."""
    payload = dict(item.metadata)
    payload.update(
        user_id=where.user_id, agent_id=where.agent_id, run_id=where.run_id, role="user",
        data=item.value, hash=hashlib.md5(item.value.encode()).hexdigest(),
        created_at=now, updated_at=now, text_lemmatized=lemmatize_for_bm25(item.value))
    return payload


def _owned_payload(store: Any, where: Mem0Scope, memory_id: str) -> dict[str, Any] | None:
    """The stored payload of ``memory_id`` if that row lies in ``where``."""
    row = store.get(vector_id=memory_id)
    payload = getattr(row, "payload", None) if row is not None else None
    return dict(payload) if isinstance(payload, Mapping) and where.owns(payload) else None


def _fields(row: Mapping[str, Any]) -> dict[str, Any]:
    fields = {name: row[name] for name in _FILTERABLE_FIELDS if row.get(name) is not None}
    fields.update(row.get("metadata") or {})
    return fields


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
