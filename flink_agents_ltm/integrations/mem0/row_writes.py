"""Writing Mem0 rows under ids we choose, as an upsert: the write a replay can repeat.

Mem0's ``Memory.add`` gives every item a random id and appends, so an ``add``
that a replay runs again duplicates the item. With ``infer=False`` Mem0 only
embeds the text and inserts one row through its vector store's public
``insert(vectors, payloads, ids)``, which takes the ids. We do the same, with
replay-stable ids, so that writing an id again rewrites its row:

* a store whose ``insert`` upserts (Qdrant's: one call, all points or none; the
  embedded store's; our stores under Mem0) gets one ``insert``;
* a store whose backend writes in chunks (pgvector: Mem0's ``insert`` is a plain
  ``INSERT`` that fails on a known id) gets the backend's upsert;
* any other store: known ids are updated, new ones inserted, and a failure
  removes the new rows this call had inserted.

Which store does what is its backend's to say (:mod:`.providers`).

Vectors come in chunks (:mod:`.embedding_ahead`): a chunked store (pgvector) writes each chunk as
it arrives, one statement per chunk in one transaction, so that the encoder and
the server work at the same time; every other store gets the whole batch in one
call, as before. The first chunk is embedded before the store's lock is taken, the
others while the write holds it (its transaction keeps a connection of the pool the
lock guards), so other threads' calls into the store wait for the whole add.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from flink_agents_ltm.api.errors import FlinkAgentsLtmError
from flink_agents_ltm.integrations.mem0.providers import backend_of

log = logging.getLogger(__name__)

Vector = Sequence[float]


class RowWriteError(FlinkAgentsLtmError, RuntimeError):
    """A batch could not be written; ``removed`` rows of it were taken out again."""

    def __init__(self, message: str, removed: int):
        super().__init__(message)
        self.removed = removed


def writes_in_chunks(store: Any) -> bool:
    """Whether :func:`write_rows` writes this store's rows chunk by chunk as they come (so
    that embedding the next chunk can overlap writing one)."""
    return backend_of(store).writes_in_chunks


def write_rows(store: Any, ids: Sequence[str], vector_chunks: Iterable[Sequence[Vector]],
               payloads: Sequence[dict[str, Any]]) -> None:
    """Upsert rows into a Mem0 vector store (possibly a ``SerializedVectorStore``); the
    vectors come in chunks, in the order of ``ids``. Raises :class:`RowWriteError` saying
    how many rows of the batch were removed again when it fails after writing some;
    otherwise nothing of a failed batch is visible."""
    backend = backend_of(store)
    if backend.writes_in_chunks:
        chunks = iter(vector_chunks)
        first = next(chunks, [])  # embedded before the lock is taken
        _locked(store, lambda: backend.write_chunks(store, ids, first, chunks, payloads))
        return
    vectors = [vector for chunk in vector_chunks for vector in chunk]
    if len(vectors) != len(ids):
        raise ValueError(f"{len(ids)} ids but {len(vectors)} vectors")
    if backend.upserts_on_insert(store):
        store.insert(vectors=vectors, payloads=list(payloads), ids=list(ids))
    else:
        _insert_or_update(store, ids, vectors, payloads)


def _locked(store: Any, work: Callable[[], None]) -> None:
    locked = getattr(store, "locked", None)
    if locked is None:
        work()
        return
    with locked():
        work()


def _insert_or_update(store: Any, ids: Sequence[str], vectors: Sequence[Sequence[float]],
                      payloads: Sequence[dict[str, Any]]) -> None:
    inserted: list[str] = []
    try:
        for row_id, vector, payload in zip(ids, vectors, payloads, strict=True):
            if store.get(vector_id=row_id) is not None:
                store.update(vector_id=row_id, vector=list(vector), payload=payload)
            else:
                store.insert(vectors=[list(vector)], payloads=[payload], ids=[row_id])
                inserted.append(row_id)
    except Exception as error:
        removed = 0
        for row_id in inserted:
            try:
                store.delete(vector_id=row_id)
                removed += 1
            except Exception:  # the store is failing; say how much was undone
                log.exception("could not remove row %s after a failed write", row_id)
        raise RowWriteError(f"{type(error).__name__}: {error}", removed) from error
