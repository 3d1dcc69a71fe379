"""The statements a Mem0 pgvector store really sends, as the server gets them.

``record_statements(memory)`` gives the store's pool a cursor that keeps each statement
(``Sent.text``) and whether its connection was in autocommit (``Sent.autocommit``; if not,
psycopg2 sent a ``BEGIN`` before it and the pool a ``ROLLBACK`` after). The server is real.
"""

from __future__ import annotations

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
