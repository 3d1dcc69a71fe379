"""Every vector store Mem0 supports, as one agent resource.

.. code-block:: python

    @vector_store_setup
    def knowledge():
        return ResourceDescriptor(Mem0VectorStore, embedding_model="embedder",
                                  provider="pgvector", config={
                                      "host": "127.0.0.1", "port": 5433, "dbname": "kb",
                                      "user": "kb", "password": "..."})

``provider`` and ``config`` are Mem0's own (``{"provider": ..., "config": {...}}``
of its docs): Qdrant (embedded with ``path``, or a server), pgvector, Chroma,
FAISS, Milvus, Elasticsearch, ... Stores are made by Mem0's ``VectorStoreFactory``
and its config classes check the arguments, so an unknown provider or a
misspelled key fails when the descriptor is checked, before the job runs.
``embedding_model_dims`` comes from the embedding model; ``collection_name`` is
this store's default collection (``collection=``). Embedded stores without a
``path`` live under ``$FLINK_AGENTS_LTM_HOME/vector_stores/<provider>``.

Documents are Mem0 rows: the content in the payload's ``data`` (Mem0's own key,
so long-term memory rows read as documents), metadata beside it. Ids may be any
string: stores that want UUIDs (Qdrant, pgvector) get a UUID derived from the id,
and the id is kept in the payload (``flink_agents_id``).

Filters: see :mod:`flink_agents_ltm.integrations.mem0.providers`: the store narrows,
Python decides, so every operator means the same on every store.

Threading: stores that are not thread-safe (embedded Qdrant, FAISS, pgvector's
pool, see ``integrations/mem0/serialized_store``) run one call at a time under a
lock (shared by every store on the same embedded Qdrant folder); embedding and
filter checks run outside it.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from flink_agents_ltm.api.filters import MetadataFilter, field_names, matches
from flink_agents_ltm.api.home import home
from flink_agents_ltm.api.resources import ResourceLookup
from flink_agents_ltm.api.vector_stores import (
    CollectionInfo,
    CollectionManageableVectorStore,
    CollectionNotFoundError,
    DimensionMismatchError,
    Document,
    Embed,
)
from flink_agents_ltm.integrations.mem0 import private_api
from flink_agents_ltm.integrations.mem0.environment import import_mem0
from flink_agents_ltm.integrations.mem0.providers import backend_for, native_filter
from flink_agents_ltm.integrations.mem0.providers.filter_parts import read_matching
from flink_agents_ltm.integrations.mem0.providers.qdrant.backend import quiet_payload_indexes

import_mem0()
from mem0.embeddings.base import EmbeddingBase  # noqa: E402
from mem0.utils.factory import VectorStoreFactory  # noqa: E402
from mem0.vector_stores.base import VectorStoreBase  # noqa: E402
from mem0.vector_stores.configs import VectorStoreConfig  # noqa: E402
from pydantic import ValidationError  # noqa: E402

__all__ = ["CONTENT_KEY", "ID_KEY", "Mem0VectorStore"]

log = logging.getLogger(__name__)

CONTENT_KEY = "data"
ID_KEY = "flink_agents_id"
RESERVED_KEYS = frozenset({CONTENT_KEY, ID_KEY})
_ID_NAMESPACE = uuid.UUID("6f3c1a52-6c55-4bb4-9a1e-5d0f3c7f2b11")


_UNSERIALIZED = contextlib.nullcontext()


def rows_of(listed: Any) -> list[Any]:
    """Mem0's ``list`` answers ``[rows]``, ``[[rows]]`` or ``(rows, next_page)``."""
    if isinstance(listed, tuple) or (isinstance(listed, list) and listed
                                     and isinstance(listed[0], list)):
        return list(listed[0] or [])
    return list(listed or [])


def _payload_of(row: Any) -> Mapping[str, Any]:
    """A row's payload, read in place. Filters see it whole: they cannot name the
    reserved keys (``_check_fields``), and :func:`matches` reads only the keys named."""
    return getattr(row, "payload", None) or {}


def _config_class(provider: str) -> type:
    configs = private_api.provider_config_classes()
    name = configs.get(provider)
    if name is None or provider not in VectorStoreFactory.provider_to_class:
        known = sorted(set(VectorStoreFactory.provider_to_class) & set(configs))
        raise ValueError(f"unknown vector store provider {provider!r}; Mem0 supports: "
                         f"{', '.join(known)}")
    try:
        module = __import__(f"mem0.configs.vector_stores.{provider}", fromlist=[name])
    except ImportError as error:
        raise ImportError(f"vector store provider '{provider}' needs its client library, which "
                          f"is not installed: {error}") from None
    return getattr(module, name)


def _validated(provider: str, config: Mapping[str, Any]) -> Any:
    """Mem0's config object for ``provider``; errors list the fields, never the values."""
    try:
        return VectorStoreConfig(provider=provider, config=dict(config)).config
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'] if p != 'config') or 'config'}: {e['msg']}"
            for e in error.errors(include_input=False, include_url=False))
        raise ValueError(f"invalid config for vector store provider '{provider}': "
                         f"{problems}") from None


_CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def native_id(document_id: str) -> str:
    """The id the store keeps: the id itself if it is a canonical UUID (as ``str(UUID)``
    writes it), else a UUID derived from it (Qdrant and pgvector accept UUIDs only)."""
    if _CANONICAL_UUID.fullmatch(document_id):
        return document_id
    return str(uuid.uuid5(_ID_NAMESPACE, document_id))


class Mem0VectorStore(CollectionManageableVectorStore):
    """A :class:`CollectionManageableVectorStore` over Mem0's store ``provider``."""

    def __init__(self, provider: str = "qdrant", config: Mapping[str, Any] | None = None, *,
                 embedding_model: str | None = None, collection: str | None = None,
                 embedding_batch_size: int = 32):
        if not isinstance(provider, str):
            raise TypeError(f"provider is the name of a Mem0 vector store, got "
                            f"{type(provider).__name__}")
        if config is not None and not isinstance(config, Mapping):
            raise TypeError(f"config is a dict of the provider's settings, got "
                            f"{type(config).__name__}")
        config = dict(config or {})
        config_class = _config_class(provider)
        named = config.pop("collection_name", None)
        if named is not None and collection is not None and named != collection:
            raise ValueError(f"config collection_name {named!r} and collection={collection!r} "
                             "differ; give one of them")
        dimensions = config.pop("embedding_model_dims", None)
        super().__init__(embedding_model=embedding_model, dimensions=dimensions,
                         collection=collection or named or "flink_agents",
                         embedding_batch_size=embedding_batch_size)
        self.provider = provider
        fields = getattr(config_class, "model_fields", {})
        self._with_dimensions = "embedding_model_dims" in fields
        self._backend = backend_for(provider)
        if "path" in fields and not config.get("path") and self._backend.is_local(config):
            config["path"] = str(home() / "vector_stores" / provider)
        self._config, self._own = self._backend.own_settings(config)
        _validated(provider, self._settings(self.collection, dimensions or 1))
        self._stores: dict[str, VectorStoreBase] = {}
        self._retired: list[VectorStoreBase] = []
        self._owner: VectorStoreBase | None = None
        self._shared_client: Any = None
        self._lock: threading.RLock = threading.RLock()  # guards _stores
        self._calls: threading.RLock | None = None  # serializes a store that is not thread-safe
        self._connecting = False  # open() may make stores, and so may everything after it

    def _settings(self, collection: str, dimensions: int) -> dict[str, Any]:
        settings = dict(self._config, collection_name=collection)
        if self._with_dimensions:
            settings["embedding_model_dims"] = dimensions
        return settings

    # ------------------------------------------------------------- lifecycle

    def open(self, get_resource: ResourceLookup) -> None:
        """Resolve the embedding model, connect, create the default collection and
        check that it holds vectors of the model's dimension."""
        super().open(get_resource)
        local = self._config.get("path")
        if local and local != ":memory:" and self._backend.is_local(self._config):
            folder = Path(local).expanduser()  # each folder we make is private, parents too
            for missing in reversed([f for f in (folder, *folder.parents) if not f.exists()]):
                missing.mkdir(mode=0o700, exist_ok=True)
        shared = self._backend.local_client(self._config)
        if shared is not None:
            self._shared_client, self._calls = shared
        self._connecting = True
        try:
            self._store(self.collection, create=True)
        except Exception:
            self.close()
            raise
        log.info("opened %s vector store, collection '%s' (%d dimensions)%s", self.provider,
                 self.collection, self.dimensions,
                 "" if self._calls is None else ", calls serialized")

    def close(self) -> None:
        with self._lock:
            owner, self._owner, self._stores, self._retired = self._owner, None, {}, []
            shared, self._shared_client = self._shared_client, None
            self._connecting = False
        if shared is not None:
            self._backend.release_local_client(shared)
        elif owner is not None:
            self._backend.close(owner)

    def _embedder_for(self, model: Any) -> tuple[Embed, int | None]:
        if isinstance(model, EmbeddingBase):  # Mem0's own embedders serve too
            dims = getattr(model.config, "embedding_dims", None)
            return (lambda texts: model.embed_batch(texts, "add")), dims
        return super()._embedder_for(model)

    def _call(self) -> contextlib.AbstractContextManager[Any]:
        """The lock that serializes calls into the store, or a no-op for a thread-safe
        one (a plain object: a generator context manager costs microseconds per call)."""
        return _UNSERIALIZED if self._calls is None else self._calls

    # ------------------------------------------------------------- collections

    def _check_open(self) -> None:
        if not self._connecting:
            raise RuntimeError(f"the {self.provider} vector store is not open (or closed): "
                               "the runtime opens declared stores when the job starts")

    def _exists(self, name: str) -> bool:
        self._check_open()
        with self._lock:
            if name in self._stores:
                return True
        assert self._owner is not None
        with self._call():
            return name in self._backend.collections(self._owner)

    def _store(self, name: str, *, create: bool) -> VectorStoreBase:
        """Mem0's store for the collection ``name`` (Mem0 creates it when it makes one)."""
        self._check_open()
        with self._lock:
            store = self._stores.get(name)
            if store is not None:
                return store
            if self._owner is not None and not create and not self._exists(name):
                raise CollectionNotFoundError(
                    f"collection '{name}' does not exist in the {self.provider} vector store; "
                    "create it with get_or_create_collection() or add documents to it")
            settings = self._settings(name, self.dimensions)
            if self._owner is not None:
                settings.update(self._backend.connection_of(self._owner))
            elif self._shared_client is not None:
                settings["client"] = self._shared_client
            with self._call(), quiet_payload_indexes():
                store = VectorStoreFactory.create(self.provider, _validated(self.provider,
                                                                            settings))
                try:
                    self._backend.prepare(store, self.dimensions, self._own)
                    stored = self._backend.stored_dimensions(store)
                except Exception:
                    self._discard(store)
                    raise
            if stored is not None and stored != self.dimensions:
                self._discard(store)
                raise DimensionMismatchError(
                    f"collection '{name}' of the {self.provider} vector store holds {stored}-"
                    f"dimensional vectors but this store's vectors have {self.dimensions} "
                    f"(embedding model {self.embedding_model!r}); use another collection for "
                    "this model")
            if self._owner is None:
                self._owner = store
                if self._calls is None and self._backend.needs_lock(store):
                    self._calls = threading.RLock()
            self._stores[name] = store
            return store

    def _discard(self, store: VectorStoreBase) -> None:
        """Forget a store: close it if it owns its connection, else keep it until
        :meth:`close` (Mem0's pgvector closes its pool, a shared one too, when collected)."""
        if self._owner is None and self._shared_client is None:
            self._backend.close(store)
        else:
            self._retired.append(store)

    def _get_or_create_collection(self, name: str) -> CollectionInfo:
        return self._info(name, self._store(name, create=True))

    def _get_collection(self, name: str) -> CollectionInfo:
        return self._info(name, self._store(name, create=False))

    def _info(self, name: str, store: VectorStoreBase) -> CollectionInfo:
        with self._call():
            dimensions = self._backend.stored_dimensions(store) or self.dimensions
        return CollectionInfo(name, self._size(name), dimensions, {"provider": self.provider})

    def _delete_collection(self, name: str) -> None:
        store = self._store(name, create=False)
        with self._lock:
            with self._call():
                self._backend.delete_collection(store)
            self._discard(self._stores.pop(name))

    def _list_collections(self) -> list[str]:
        self._check_open()
        assert self._owner is not None
        with self._call():
            return list(self._backend.collections(self._owner))

    def _reset(self, name: str) -> None:
        store = self._store(name, create=False)
        with self._call(), quiet_payload_indexes():
            store.reset()

    # ------------------------------------------------------------- documents

    def _payload(self, document: Document, stored_id: str) -> dict[str, Any]:
        clash = RESERVED_KEYS & set(document.metadata)
        if clash:
            raise ValueError(f"metadata key(s) {sorted(clash)} are reserved by the Mem0 vector "
                             f"store (the content is kept in '{CONTENT_KEY}', the id in "
                             f"'{ID_KEY}')")
        # Document.__post_init__ makes metadata a Metadata; the field is typed as given.
        payload = document.metadata.to_dict()  # type: ignore[attr-defined]
        payload[CONTENT_KEY] = document.content
        if stored_id != document.id:
            payload[ID_KEY] = document.id
        return payload

    def _documents(self, rows: Sequence[Any], score: bool) -> list[Document]:
        """Documents of rows read back, with their scores if ``score`` (one loop: this
        runs for every hit of every query)."""
        stored = self._stored_document
        documents = []
        for row in rows:
            metadata = dict(_payload_of(row))  # the Document's own, without reserved keys
            content = metadata.pop(CONTENT_KEY, "")
            document_id = metadata.pop(ID_KEY, None) or row.id
            found = getattr(row, "score", None) if score else None
            documents.append(stored(content if type(content) is str else str(content),
                                    metadata,
                                    document_id if type(document_id) is str
                                    else str(document_id),
                                    None if found is None else float(found)))
        return documents

    def _check_fields(self, filter_: MetadataFilter | None) -> None:
        if filter_ is None:
            return
        reserved = RESERVED_KEYS & field_names(filter_)
        if reserved:
            raise ValueError(f"filters cannot use the reserved key(s) {sorted(reserved)}; they "
                             "hold the content and id, not metadata")

    def _add(self, collection: str, documents: Sequence[Document]) -> None:
        # The base class completes documents first: each has an id and an embedding.
        ids = [native_id(d.id) for d in documents]  # type: ignore[arg-type]
        payloads = [self._payload(d, i) for d, i in zip(documents, ids, strict=True)]
        vectors = [list(d.embedding) for d in documents]  # type: ignore[arg-type]
        store = self._store(collection, create=True)
        with self._call():
            self._backend.insert(store, ids, vectors, payloads)

    def _fetch(self, fetch: Any, filter_: MetadataFilter | None, limit: int | None,
               first: int) -> list[Any]:
        """Rows from ``fetch(k)`` that match ``filter_``, asking for more (``k`` x4) until
        ``limit`` match or the store has no more."""
        def read(k: int) -> list[Any]:
            with self._call():
                return list(fetch(k))

        return read_matching(read, None if filter_ is None else (
            lambda row: matches(filter_, _payload_of(row))), limit, first)

    def _query(self, collection: str, vector: tuple[float, ...], limit: int,
               filter_: MetadataFilter | None) -> list[Document]:
        self._check_fields(filter_)
        store = self._store(collection, create=False)
        native = native_filter(self.provider, filter_, search=True, reserved=RESERVED_KEYS)
        query = list(vector)
        rows = self._fetch(lambda k: self._backend.search(store, query, k, native.condition),
                           filter_, limit, limit if native.whole else max(4 * limit, 32))
        return self._documents(rows, score=True)

    def _get(self, collection: str, ids: Sequence[str] | None, filter_: MetadataFilter | None,
             limit: int | None) -> list[Document]:
        self._check_fields(filter_)
        store = self._store(collection, create=False)
        if ids is not None:
            with self._call():
                rows = self._backend.get_many(store, [native_id(i) for i in ids])
            return self._documents([r for r in rows if matches(filter_, _payload_of(r))],
                                   score=False)
        native = native_filter(self.provider, filter_, search=False, reserved=RESERVED_KEYS)
        rows = self._fetch(lambda k: rows_of(store.list(filters=native.condition, top_k=k)),
                           filter_, limit, 256 if limit is None else max(limit, 32))
        return self._documents(rows, score=False)

    def _existing_ids(self, collection: str, ids: Sequence[str]) -> set[str]:
        if not self._exists(collection):
            return set()
        # Documents read back from the store always have an id.
        return {d.id for d in self._get(collection, ids, None, None) if d.id is not None}

    def _delete(self, collection: str, ids: Sequence[str]) -> None:
        store = self._store(collection, create=False)
        with self._call():
            self._backend.delete_many(store, [native_id(i) for i in ids])

    def _update(self, collection: str, documents: Sequence[Document]) -> None:
        # The base class completes documents first: each has an id and an embedding.
        ids = [native_id(d.id) for d in documents]  # type: ignore[arg-type]
        payloads = [self._payload(d, i) for d, i in zip(documents, ids, strict=True)]
        store = self._store(collection, create=False)
        with self._call():
            for document, stored_id, payload in zip(documents, ids, payloads, strict=True):
                store.update(vector_id=stored_id,
                             vector=list(document.embedding),  # type: ignore[arg-type]
                             payload=payload)

    def _size(self, collection: str) -> int:
        store = self._store(collection, create=False)
        with self._call():
            counted = self._backend.count(store)
        if counted is not None:
            return counted
        return len(self._get(collection, None, None, None))

    def __repr__(self) -> str:
        where = Path(self._config["path"]).name if "path" in self._config else ""
        return (f"Mem0VectorStore({self.provider}{':' + where if where else ''}, collection="
                f"{self.collection!r}, embedding_model={self.embedding_model!r})")
