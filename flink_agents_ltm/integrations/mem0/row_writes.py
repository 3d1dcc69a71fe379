"""Writing Mem0 rows under ids we choose, as an upsert: the write a replay can repeat.

Mem0's ``Memory.add`` gives every item a random id and appends, so an ``add``
that a replay runs again duplicates the item. With ``infer=False`` Mem0 only
embeds the text and inserts one row through its vector store's public
``insert(vectors, payloads, ids)``, which takes the ids. We do the same, with
replay-stable ids, so that writing an id again rewrites its row:

* Qdrant's ``insert`` is an upsert already (one call, all points or none);
* Mem0's pgvector ``insert`` is a plain ``INSERT`` that fails on a known id, so
  pgvector rows are written with one ``INSERT ... ON CONFLICT (id) DO UPDATE``
  on the table Mem0 created (columns ``id``, ``vector``, ``payload``; a test
  pins that layout so a Mem0 upgrade that changes it fails loudly);
* a store that declares ``upserts_on_insert = True`` is trusted to upsert;
* any other store: known ids are updated, new ones inserted, and a failure
  removes the new rows this call had inserted.

Vectors come in chunks (:mod:`.embedding_ahead`): pgvector writes each chunk as
it arrives, one statement per chunk in one transaction, so that the encoder and
the server work at the same time; every other store gets the whole batch in one
call, as before. The first chunk is embedded before the store's lock is taken, the
others while the write holds it (its transaction keeps a connection of the pool the
lock guards), so other threads' calls into the store wait for the whole add.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

log = logging.getLogger(__name__)

Vector = Sequence[float]


class RowWriteError(RuntimeError):
    """A batch could not be written; ``removed`` rows of it were taken out again."""

    def __init__(self, message: str, removed: int):
        super().__init__(message)
        self.removed = removed


def writes_in_chunks(store: Any) -> bool:
    """Whether :func:`write_rows` writes this store's rows chunk by chunk as they come (so
    that embedding the next chunk can overlap writing one)."""
    return type(getattr(store, "inner", store)).__name__ == "PGVector"


def write_rows(store: Any, ids: Sequence[str], vector_chunks: Iterable[Sequence[Vector]],
               payloads: Sequence[dict[str, Any]]) -> None:
    """Upsert rows into a Mem0 vector store (possibly a ``SerializedVectorStore``); the
    vectors come in chunks, in the order of ``ids``. Raises :class:`RowWriteError` saying
    how many rows of the batch were removed again when it fails after writing some;
    otherwise nothing of a failed batch is visible."""
    inner = getattr(store, "inner", store)
    if writes_in_chunks(store):
        chunks = iter(vector_chunks)
        first = next(chunks, [])  # embedded before the lock is taken
        _locked(store, lambda: _pgvector_upsert(inner, ids, first, chunks, payloads))
        return
    vectors = [vector for chunk in vector_chunks for vector in chunk]
    if len(vectors) != len(ids):
        raise ValueError(f"{len(ids)} ids but {len(vectors)} vectors")
    if type(inner).__name__ == "Qdrant" or getattr(inner, "upserts_on_insert", False):
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


def _pgvector_upsert(pg: Any, ids: Sequence[str], first: Sequence[Vector],
                     rest: Iterator[Sequence[Vector]], payloads: Sequence[dict[str, Any]]
                     ) -> None:
    from mem0.vector_stores import pgvector as mem0_pgvector

    pg._ensure_collection()
    upsert = ("INSERT INTO {} (id, vector, payload) VALUES %s ON CONFLICT (id) DO UPDATE "
              "SET vector = EXCLUDED.vector, payload = EXCLUDED.payload")
    sql = mem0_pgvector.sql
    written = 0
    with pg._get_cursor(commit=True) as cur:  # one transaction: all chunks or none
        for chunk in itertools.chain([first], rest):
            # A vector travels as pgvector's text form: psycopg2 adapts a list of floats one
            # number at a time into an ARRAY literal, which took most of an upsert's time.
            rows = [(i, _vector_text(v), json.dumps(p)) for i, v, p in zip(
                ids[written:written + len(chunk)], chunk,
                payloads[written:written + len(chunk)], strict=True)]
            if mem0_pgvector.PSYCOPG_VERSION == 3:
                cur.executemany(sql.SQL(upsert.replace("%s", "(%s, %s::vector, %s)"))
                                .format(pg._col()), rows)
            else:
                mem0_pgvector.execute_values(cur, sql.SQL(upsert).format(pg._col()), rows,
                                             template="(%s, %s::vector, %s)",
                                             page_size=max(len(rows), 1))
            written += len(chunk)
        if written != len(ids):
            raise ValueError(f"{len(ids)} ids but {written} vectors")


def _vector_text(vector: Sequence[float]) -> str:
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


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
