"""One lock around a vector store that is not safe to call from several threads.

Embedded Qdrant loses writes and raises IndexErrors under concurrent calls,
FAISS silently fails to save its index, and a local Chroma client shares one
SQLite file. Mem0's pgvector store with psycopg2 draws from a
``ThreadedConnectionPool`` (5 connections by default) that raises
``PoolError: connection pool exhausted`` instead of waiting: 16 threads lost
609 of 640 operations, and two threads creating the table at once collided in
the catalog. A semaphore as wide as the pool avoids the errors but was slower
than one lock (16 threads on 32 keys: 53 s with 5 permits, 17 s with 2, 8 s
with one lock; round trips take ~1 ms, and threads holding a connection wait for
the GIL), so pgvector gets the lock too; processes still share the server in
parallel. Wrapping the store (not the whole Mem0 call) keeps embedding, the
expensive part, outside the lock (all but the later chunks of a large pgvector add:
see :mod:`.row_writes`).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from flink_agents_ltm.integrations.mem0.providers import backend_of


class SerializedVectorStore:
    """Proxy that runs every method of ``inner`` under one re-entrant lock."""

    def __init__(self, inner: Any):
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "_lock", threading.RLock())

    @property
    def inner(self) -> Any:
        return self._inner

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the store's lock around work that uses ``inner`` directly."""
        with self._lock:
            yield

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._inner, name)
        if not callable(attribute) or name.startswith("__"):
            return attribute
        lock = self._lock

        @functools.wraps(attribute)
        def locked(*args: Any, **kwargs: Any) -> Any:
            with lock:
                return attribute(*args, **kwargs)

        return locked

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._inner, name, value)


def is_thread_safe(store: Any) -> bool:
    """Whether Mem0 may call ``store`` from several threads at once (its backend says)."""
    return isinstance(store, SerializedVectorStore) or not backend_of(store).needs_lock(store)


def make_thread_safe(memory: Any) -> None:
    """Serialize the vector store of a Mem0 ``Memory`` if it needs it (idempotent)."""
    store = getattr(memory, "vector_store", None)
    if store is not None and not is_thread_safe(store):
        memory.vector_store = SerializedVectorStore(store)
