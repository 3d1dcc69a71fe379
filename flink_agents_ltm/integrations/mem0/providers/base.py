"""What long-term memory and :class:`Mem0VectorStore` need to know about one Mem0 store
provider, beyond Mem0's ``VectorStoreBase``.

One :class:`StoreBackend` per provider owns every fact about it: whether its client needs
a lock, whether its ``insert`` upserts, whether rows are written chunk by chunk, how to
delete many rows, what dimensions a collection holds, which filters it evaluates itself,
which config keys point at a server, how Mem0 is configured and opened on it and how it
is closed; and for the command line (``erase-key``, ``doctor``): which extra installs its
client, whether a job has rows in it, how its erased rows' bytes are compacted away and
how its server proves it works here. The defaults rely on ``VectorStoreBase`` alone and
serve any store we have not tested (:class:`~.generic.GenericBackend`);
:mod:`flink_agents_ltm.integrations.mem0.providers` looks a backend up by provider name.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar

from flink_agents_ltm.api.errors import FlinkAgentsLtmError
from flink_agents_ltm.api.filters import MetadataFilter
from flink_agents_ltm.integrations.mem0.environment import import_mem0
from flink_agents_ltm.integrations.mem0.providers.filter_parts import (
    NativeFilter,
    equality_only,
    merged,
)

import_mem0()
from mem0.configs.base import MemoryConfig  # noqa: E402
from mem0.vector_stores.base import VectorStoreBase  # noqa: E402

Vector = Sequence[float]


def inner(store: Any) -> Any:
    """Mem0's store behind our lock (``SerializedVectorStore.inner``), or the store."""
    return getattr(store, "inner", store)


class StoreCheckError(FlinkAgentsLtmError, RuntimeError):
    """A store's self-check failed; the message (one line, no secret) names the cause."""


class StoreBackend:
    """One provider's facts; the defaults hold for any Mem0 store."""

    #: Mem0's provider name (``{"provider": ...}``)
    provider: ClassVar[str] = ""
    #: config keys that point a store at a server (or a client) instead of a local folder
    server_keys: ClassVar[tuple[str, ...]] = ()
    #: whether long-term memory writes a large add chunk by chunk, as vectors come
    writes_in_chunks: ClassVar[bool] = False
    #: the extra of flink-agents-ltm that installs the store's client (``None``: none needed)
    extra: ClassVar[str | None] = None

    # ------------------------------------------------------------- facts about a store

    def needs_lock(self, store: Any) -> bool:
        """Whether Mem0's ``store`` must not be called from several threads at once."""
        return False

    def upserts_on_insert(self, store: Any) -> bool:
        """Whether ``store.insert`` rewrites a known id (else rows are updated one by one);
        a store of ours says so with ``upserts_on_insert = True``."""
        return bool(getattr(inner(store), "upserts_on_insert", False))

    def many_deleter(self, store: Any) -> Callable[[list[str]], None] | None:
        """``store``'s one-call delete of many ids, ``None`` to delete one by one."""
        if hasattr(inner(store), "delete_many"):
            deleter: Callable[[list[str]], None] = store.delete_many
            return deleter
        return None

    def native_filter(self, filter_: MetadataFilter, parts: list[MetadataFilter], *,
                      search: bool, reserved: frozenset[str]) -> NativeFilter:
        """The superset condition this store evaluates for ``filter_`` (a ``search``,
        else a ``list``); ``parts`` are its conjuncts. Default: equality on text."""
        return merged(list(map(equality_only(reserved, lists=False), parts)), len(parts))

    def is_local(self, config: dict[str, Any]) -> bool:
        """Whether ``config`` keeps the store in a folder of this machine."""
        return not any(config.get(key) for key in self.server_keys)

    # ------------------------------------------------------------- long-term memory

    def connect(self, config: dict[str, Any]) -> Any:
        """Check the config's connection settings before Mem0 opens the store; returns
        what :meth:`memory_config` and :meth:`opened` need of them (``None``: nothing)."""
        return None

    def memory_config(self, store: dict[str, Any], connection: Any) -> MemoryConfig:
        """Mem0's config for ``store`` (``{"provider", "config"}``); Mem0 validates it
        (``pydantic.ValidationError``)."""
        return MemoryConfig(vector_store=store, history_db_path=":memory:")

    def open_error(self, error: Exception, store: dict[str, Any],
                   connection: Any) -> Exception | None:
        """A clear error for one raised while Mem0 opened the store, ``None``: as is."""
        return None

    def opened(self, vector_store: Any, connection: Any, dimensions: int) -> None:
        """Ready the store Mem0 just opened; refuse one of other ``dimensions``
        (``ValueError`` naming both). The caller closes the store when this raises."""

    def write_chunks(self, store: Any, ids: Sequence[str], first: Sequence[Vector],
                     rest: Iterable[Sequence[Vector]], payloads: Sequence[dict[str, Any]]
                     ) -> None:
        """Upsert the rows, vectors chunk by chunk, all or none (``writes_in_chunks``)."""
        raise NotImplementedError(f"{type(self).__name__} writes rows in one batch")

    def close_memory(self, memory: Any) -> None:
        """Close what Mem0's ``memory`` (closed already) holds open of its store."""
        self.close(memory.vector_store)

    # ------------------------------------------------------------- Mem0VectorStore

    def local_client(self, config: dict[str, Any]) -> tuple[Any, threading.RLock] | None:
        """A client (and its lock) that every store of this process on ``config``'s
        folder must share, ``None`` when each store may have its own."""
        return None

    def release_local_client(self, client: Any) -> None:
        """Give back a client of :meth:`local_client`."""

    def connection_of(self, owner: VectorStoreBase) -> dict[str, Any]:
        """Config entries that let another collection reuse ``owner``'s connection."""
        return {}

    def collections(self, owner: VectorStoreBase) -> list[str]:
        return [str(getattr(c, "name", c)) for c in owner.list_cols()]

    def own_settings(self, config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """``config`` split into Mem0's config and the keys that are ours (checked; none
        unless the store has some), which :meth:`prepare` gets back."""
        return config, {}

    def prepare(self, store: VectorStoreBase, dimensions: int,
                settings: dict[str, Any] | None = None) -> None:
        """Make sure the collection exists (``store`` was just made for it)."""

    def delete_collection(self, store: VectorStoreBase) -> None:
        """Drop the collection (and whatever the store keeps beside it)."""
        store.delete_col()

    def stored_dimensions(self, store: VectorStoreBase) -> int | None:
        """The vector length the collection holds, ``None`` when the store cannot say."""
        return None

    def count(self, store: VectorStoreBase) -> int | None:
        """The number of documents, ``None`` to count by listing."""
        return None

    def insert(self, store: VectorStoreBase, ids: list[str], vectors: list[list[float]],
               payloads: list[dict[str, Any]]) -> None:
        store.insert(vectors=vectors, payloads=payloads, ids=ids)

    def search(self, store: VectorStoreBase, vector: list[float], k: int,
               filters: dict[str, Any] | None) -> list[Any]:
        """The ``k`` nearest rows (fewer only when the store has no more)."""
        return list(store.search(query="", vectors=vector, top_k=k, filters=filters))

    def get_many(self, store: VectorStoreBase, ids: Sequence[str]) -> list[Any]:
        return [row for row in (store.get(vector_id=i) for i in ids)
                if row is not None and getattr(row, "id", None) is not None]

    def delete_many(self, store: VectorStoreBase, ids: Sequence[str]) -> None:
        for vector_id in ids:
            store.delete(vector_id=vector_id)

    # ------------------------------------------------------------- the command line

    def missing_job(self, config: dict[str, Any], job_id: str, where: str) -> str | None:
        """Why ``job_id`` has nothing in the store of ``config`` (described as ``where``),
        one line for ``erase-key`` to refuse the job with, before anything is created;
        ``None`` when it has rows or the store cannot tell (the default)."""
        return None

    def compactor(self, config: dict[str, Any]) -> Callable[[], None] | None:
        """What gives the bytes of erased rows back (``erase-key --compact``), checked
        before anything is erased; ``None``: this store cannot (the default)."""
        return None

    def self_check(self, config: dict[str, Any], dims: int) -> str | None:
        """Prove that the server of ``config`` runs this store's code on this machine
        (``doctor``): a one-line summary, or :class:`StoreCheckError` naming the cause;
        ``None``: this store has no self-check (the default)."""
        return None

    def close(self, owner: Any) -> None:
        """Close the store's client, if it has one."""
        client = getattr(owner, "client", None)
        closer = getattr(client, "close", None)
        if callable(closer):
            closer()
