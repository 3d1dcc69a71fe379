"""The statements a Mem0 pgvector store really sends, as the server gets them.

``record_statements(memory)`` gives the store's pool a cursor that keeps each statement
(``Sent.text``) and whether its connection was in autocommit (``Sent.autocommit``; if not,
psycopg2 sent a ``BEGIN`` before it and the pool a ``ROLLBACK`` after). ``recording(memory)``
does the same for one block only (a benchmark times calls outside it: the copy of each
statement made here would count as client time). The server is real.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, NamedTuple

import psycopg2.extensions


class Sent(NamedTuple):
    text: str
    autocommit: bool


class _RecordingCursor(psycopg2.extensions.cursor):
    sent: list[Sent]

    def execute(self, query, vars=None):
        self.sent.append(Sent(self.mogrify(query, vars).decode(), self.connection.autocommit))
        return super().execute(query, vars)


class _RecordingPool:
    def __init__(self, pool: Any, cursor: type):
        self._pool = pool
        self._cursor = cursor

    def getconn(self, *args, **kwargs):
        conn = self._pool.getconn(*args, **kwargs)
        conn.cursor_factory = self._cursor
        return conn

    def putconn(self, conn, *args, **kwargs):
        conn.cursor_factory = psycopg2.extensions.cursor  # back in the pool: not recording
        return self._pool.putconn(conn, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._pool, name)


def record_statements(memory: Any) -> list[Sent]:
    """From now on, every statement ``memory``'s pgvector store sends is appended to the
    list returned (clear it to start over)."""
    sent: list[Sent] = []
    cursor = type("RecordingCursor", (_RecordingCursor,), {"sent": sent})
    pg = memory.vector_store.inner
    pg.connection_pool = _RecordingPool(pg.connection_pool, cursor)
    return sent


def selects(sent: list[Sent], kind: str) -> list[str]:
    """The texts of the queries in ``sent`` (``SELECT``/``WITH``) that hold ``kind``."""
    return [s.text for s in sent
            if s.text.lstrip().startswith(("SELECT", "WITH")) and kind in s.text]


@contextlib.contextmanager
def recording(memory: Any) -> Iterator[list[Sent]]:
    """:func:`record_statements` for the block only; the store's own pool after it."""
    pg = memory.vector_store.inner
    pool = pg.connection_pool
    try:
        yield record_statements(memory)
    finally:
        pg.connection_pool = pool
