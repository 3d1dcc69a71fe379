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
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from typing import Any

log = logging.getLogger(__name__)


class RowWriteError(RuntimeError):
    """A batch could not be written; ``removed`` rows of it were taken out again."""

    def __init__(self, message: str, removed: int):
        super().__init__(message)
        self.removed = removed


def write_rows(store: Any, ids: Sequence[str], vectors: Sequence[Sequence[float]],
               payloads: Sequence[dict[str, Any]]) -> None:
    """Upsert rows into a Mem0 vector store (possibly a ``SerializedVectorStore``).
    Raises :class:`RowWriteError` saying how many rows of the batch were removed again
    when it fails after writing some; otherwise nothing of a failed batch is visible."""
    inner = getattr(store, "inner", store)
    kind = type(inner).__name__
    if kind == "Qdrant" or getattr(inner, "upserts_on_insert", False):
        store.insert(vectors=list(vectors), payloads=list(payloads), ids=list(ids))
    elif kind == "PGVector":
        _locked(store, lambda: _pgvector_upsert(inner, ids, vectors, payloads))
    else:
        _insert_or_update(store, ids, vectors, payloads)


def _locked(store: Any, work: Callable[[], None]) -> None:
    locked = getattr(store, "locked", None)
    if locked is None:
        work()
        return
    with locked():
        work()


def _pgvector_upsert(pg: Any, ids: Sequence[str], vectors: Sequence[Sequence[float]],
                     payloads: Sequence[dict[str, Any]]) -> None:
    from mem0.vector_stores import pgvector as mem0_pgvector

    pg._ensure_collection()
    # A vector travels as pgvector's text form: psycopg2 adapts a list of floats one number
    # at a time into an ARRAY literal, which took most of a 100-row upsert's time.
    rows = [(i, _vector_text(v), json.dumps(p))
            for i, v, p in zip(ids, vectors, payloads, strict=True)]
    upsert = ("INSERT INTO {} (id, vector, payload) VALUES %s ON CONFLICT (id) DO UPDATE "
              "SET vector = EXCLUDED.vector, payload = EXCLUDED.payload")
    sql = mem0_pgvector.sql
    with pg._get_cursor(commit=True) as cur:
        if mem0_pgvector.PSYCOPG_VERSION == 3:
            cur.executemany(sql.SQL(upsert.replace("%s", "(%s, %s::vector, %s)"))
                            .format(pg._col()), rows)
        else:
            mem0_pgvector.execute_values(cur, sql.SQL(upsert).format(pg._col()), rows,
                                         template="(%s, %s::vector, %s)")


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
