"""Qdrant: a server, or embedded (a folder; one client per folder and process, not
thread-safe: every store on one folder in this process shares one client and lock)."""

from __future__ import annotations

import contextlib
import threading
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from flink_agents_ltm.api.errors import FlinkAgentsLtmError
from flink_agents_ltm.api.filters import ORDERINGS, AllOf, AnyOf, Condition, MetadataFilter
from flink_agents_ltm.integrations.mem0 import private_api
from flink_agents_ltm.integrations.mem0.providers.base import StoreBackend, inner
from flink_agents_ltm.integrations.mem0.providers.filter_parts import (
    NativeFilter,
    Translate,
    equality,
    plain,
)

_IN_USE = "already accessed by another instance"


class EmbeddedStoreInUseError(FlinkAgentsLtmError, RuntimeError):
    """A configured embedded Qdrant folder is already open in another process."""


@dataclass
class _LocalQdrant:
    client: Any
    lock: threading.RLock
    users: int = 0


_local_qdrants: dict[str, _LocalQdrant] = {}
_local_qdrants_lock = threading.Lock()


@contextlib.contextmanager
def quiet_payload_indexes() -> Iterator[None]:
    """Mem0 asks any client it did not create for payload indexes; a local client
    warns that they have no effect."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*[Pp]ayload ind.*")
        yield


def shared_local_qdrant(path: str) -> tuple[Any, threading.RLock]:
    """The process's client (and lock) for the embedded Qdrant folder ``path``."""
    from qdrant_client import QdrantClient

    key = str(Path(path).expanduser().resolve())
    with _local_qdrants_lock:
        shared = _local_qdrants.get(key)
        if shared is None:
            Path(key).mkdir(mode=0o700, parents=True, exist_ok=True)
            try:
                client = QdrantClient(path=key)
            except RuntimeError as error:
                if _IN_USE in str(error):
                    raise RuntimeError(
                        f"the embedded Qdrant folder {key} is already open in another process "
                        "(or by long-term memory in this one); an embedded store serves one "
                        "client: use another path, or a Qdrant or pgvector server") from None
                raise
            shared = _LocalQdrant(client, threading.RLock())
            _local_qdrants[key] = shared
        shared.users += 1
        return shared.client, shared.lock


def release_local_qdrant(client: Any) -> None:
    with _local_qdrants_lock:
        for key, shared in list(_local_qdrants.items()):
            if shared.client is client:
                shared.users -= 1
                if shared.users == 0:
                    del _local_qdrants[key]
                    client.close()
                return


def _translator(reserved: frozenset[str]) -> Translate:
    def translate(part: MetadataFilter) -> dict[str, Any] | None:
        if isinstance(part, AnyOf | AllOf):
            parts = [translate(p) for p in part.parts]
            if any(p is None for p in parts):
                return None
            return {"OR" if isinstance(part, AnyOf) else "AND": parts}
        if not isinstance(part, Condition) or not plain(part, reserved):
            return None
        if part.op in ORDERINGS:
            # a number is a Range; a string would be a DatetimeRange (or an error), which
            # does not order as text
            return None if isinstance(part.value, str) else {part.field: {part.op.value:
                                                                          part.value}}
        return equality(part, booleans=True, lists=True)

    return translate


class QdrantBackend(StoreBackend):
    """Mem0's ``qdrant``: its ``insert`` is an upsert (one call, all points or none)."""

    provider: ClassVar[str] = "qdrant"
    server_keys: ClassVar[tuple[str, ...]] = ("host", "url", "client")

    def needs_lock(self, store: Any) -> bool:
        return private_api.qdrant_is_local(getattr(inner(store), "client", None))

    def upserts_on_insert(self, store: Any) -> bool:
        return True

    def many_deleter(self, store: Any) -> None:
        return None

    def native_filter(self, filter_: MetadataFilter, parts: list[MetadataFilter], *,
                      search: bool, reserved: frozenset[str]) -> NativeFilter:
        translated = [t for t in map(_translator(reserved), parts) if t is not None]
        condition = (None if not translated else translated[0] if len(translated) == 1
                     else {"AND": translated})
        return NativeFilter(condition, len(translated) == len(parts))

    def open_error(self, error: Exception, store: dict[str, Any],
                   connection: Any) -> Exception | None:
        if isinstance(error, RuntimeError) and _IN_USE in str(error):
            return EmbeddedStoreInUseError(
                f"the embedded Qdrant store in {store['config'].get('path')} is already open in "
                "another process. An embedded Qdrant folder serves one process: use the default "
                "embedded store (shared by the processes of one machine), run the job in thread "
                "mode (python.execution-mode: thread) or with parallelism 1, or use a server "
                "store such as pgvector for several TaskManagers.")
        return None

    def opened(self, vector_store: Any, connection: Any, dimensions: int) -> None:
        """Embedded Qdrant keeps its points in SQLite, which leaves a deleted row's bytes
        (the remembered text) in free pages; ``secure_delete`` makes SQLite overwrite them,
        so a deleted item's text leaves the disk with it."""
        storage = private_api.qdrant_local_sqlite(vector_store.client,
                                                  vector_store.collection_name)
        if storage is not None:
            storage.execute("PRAGMA secure_delete = ON")
        size = self.stored_dimensions(vector_store)
        if size is not None and size != dimensions:
            raise ValueError(f"collection '{vector_store.collection_name}' holds {size}-"
                             f"dimensional vectors but the embedding model produces "
                             f"{dimensions}; use another collection or base dir for this model")

    def local_client(self, config: dict[str, Any]) -> tuple[Any, threading.RLock] | None:
        if config.get("path") == ":memory:" or not self.is_local(config):
            return None
        return shared_local_qdrant(config["path"])

    def release_local_client(self, client: Any) -> None:
        release_local_qdrant(client)

    def connection_of(self, owner: Any) -> dict[str, Any]:
        return {"client": owner.client}

    def collections(self, owner: Any) -> list[str]:
        return [c.name for c in owner.client.get_collections().collections]

    def stored_dimensions(self, store: Any) -> int | None:
        vectors = store.client.get_collection(store.collection_name).config.params.vectors
        if isinstance(vectors, dict):
            vectors = vectors.get("")
        return getattr(vectors, "size", None)

    def count(self, store: Any) -> int | None:
        return int(store.client.count(store.collection_name, exact=True).count)

    def get_many(self, store: Any, ids: Sequence[str]) -> list[Any]:
        found = {str(r.id): r for r in store.client.retrieve(store.collection_name, ids=list(ids),
                                                             with_payload=True)}
        return [found[i] for i in ids if i in found]

    def delete_many(self, store: Any, ids: Sequence[str]) -> None:
        from qdrant_client.models import PointIdsList

        store.client.delete(store.collection_name, points_selector=PointIdsList(points=list(ids)))

    def close(self, owner: Any) -> None:
        owner.client.close()
