"""The action-state store on PostgreSQL: the job's pgvector server, for several machines.

``agents.action-state.store: postgres`` (this module's ``open_store``, an entry point)
with the job's ``long-term-memory.vector-store`` an inline pgvector store
(``{"provider": "pgvector", "config": {...}}``): the rows go to the table
``ltm_action_state_v2`` of that database, through a connection of their own with the
vector store's timeouts. psycopg2 is imported only when the store opens; errors
name the server (``host:port/db``), never the password.

Started markers and results come from the worker threads, many at once: they go through
a few connections of their own (up to :data:`WRITERS`, opened as needed), so that their
commits overlap and the server flushes them together instead of one after another; the
mailbox thread's statements (lookups, claims, done marks, pruning) use another.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.api.options import AgentsConfiguration
from flink_agents_ltm.integrations.mem0.pgvector_connection import PgvectorConnection
from flink_agents_ltm.runtime.action_state.store import Lookup, RunTag

WRITERS = 4  # connections for the worker threads' writes, per store
TABLE = "ltm_action_state_v2"  # v2: rows name the input they serve (v1 stays, unread)
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    job TEXT NOT NULL,
    observation TEXT NOT NULL,
    position TEXT NOT NULL,
    subtask INTEGER NOT NULL,
    name TEXT NOT NULL,
    token TEXT NOT NULL,
    result BYTEA,
    owner TEXT,
    done_mark BIGINT,
    done_at DOUBLE PRECISION,
    input_key TEXT NOT NULL,
    run TEXT NOT NULL,
    seq BIGINT NOT NULL,
    fingerprint TEXT NOT NULL,
    claim TEXT,
    PRIMARY KEY (job, observation, position)
);
CREATE INDEX IF NOT EXISTS {TABLE}_done ON {TABLE} (job, owner, done_mark);
CREATE INDEX IF NOT EXISTS {TABLE}_done_at ON {TABLE} (job, done_at);
CREATE INDEX IF NOT EXISTS {TABLE}_run ON {TABLE} (job, run);
CREATE INDEX IF NOT EXISTS {TABLE}_input ON {TABLE} (job, input_key, fingerprint, seq);
"""


def open_store(job_id: str, config: AgentsConfiguration) -> PostgresActionStateStore:
    from flink_agents_ltm.integrations.mem0.backends import backend_for

    store = config.get(LongTermMemoryOptions.VECTOR_STORE)
    connection = (backend_for(str(store.get("provider"))).connect(dict(store.get("config") or {}))
                  if isinstance(store, Mapping) else None)  # the store's backend knows its server
    if not isinstance(connection, PgvectorConnection):
        raise ValueError("the PostgreSQL action-state store needs the job's "
                         "long-term-memory.vector-store to be an inline pgvector store "
                         '({"provider": "pgvector", "config": {...}})')
    return PostgresActionStateStore(connection, job_id)


class PostgresActionStateStore:
    def __init__(self, connection: PgvectorConnection, job_id: str):
        self._job = job_id
        self._connection = connection
        self._lock = threading.Lock()
        self._db: Any = self._connect()
        with self._db.cursor() as cursor:
            cursor.execute(_SCHEMA)
        self._writers: queue.LifoQueue[Any] = queue.LifoQueue()
        self._opened = [self._db]  # every connection, closed by close()
        self._slots = threading.BoundedSemaphore(WRITERS)

    def _connect(self) -> Any:
        db = self._connection.connect()
        db.autocommit = True
        return db

    def _run(self, sql: str, *params: object, fetch: bool = False) -> Any:
        with self._lock, self._db.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchone() if fetch else cursor.rowcount

    @contextmanager
    def _writer(self) -> Iterator[Any]:
        """A writer connection for a worker thread's statement (one of at most WRITERS)."""
        with self._slots:
            try:
                db = self._writers.get_nowait()
            except queue.Empty:
                db = self._connect()
                with self._lock:
                    self._opened.append(db)
            try:
                yield db
            finally:
                self._writers.put(db)

    def _write(self, sql: str, *params: object) -> None:
        with self._writer() as db, db.cursor() as cursor:
            cursor.execute(sql, params)

    def started(self, subtask: int, observation: str, position: str, name: str,
                token: str, tag: RunTag, claim: str) -> None:
        self._write(f"INSERT INTO {TABLE} (job, observation, position, subtask, name, token, "
                    "input_key, run, seq, fingerprint, claim) VALUES (%s, %s, %s, %s, %s, %s, "
                    "%s, %s, %s, %s, %s) ON CONFLICT (job, observation, position) "
                    "DO UPDATE SET subtask = EXCLUDED.subtask, name = EXCLUDED.name, token = "
                    "EXCLUDED.token, result = NULL, owner = NULL, done_mark = NULL, "
                    "done_at = NULL, input_key = EXCLUDED.input_key, run = EXCLUDED.run, "
                    "seq = EXCLUDED.seq, fingerprint = EXCLUDED.fingerprint, "
                    "claim = EXCLUDED.claim", self._job, observation, position, subtask, name,
                    token, tag.key, tag.run, tag.seq, tag.fingerprint, claim)

    def completed(self, observation: str, position: str, token: str, result: bytes) -> None:
        from psycopg2 import Binary

        self._write(f"UPDATE {TABLE} SET result = %s WHERE job = %s AND observation = %s "
                    "AND position = %s AND token = %s", Binary(result), self._job, observation,
                    position, token)

    def lookup(self, observation: str, position: str) -> Lookup | None:
        row = self._run(f"SELECT name, result FROM {TABLE} WHERE job = %s AND observation = %s "
                        "AND position = %s", self._job, observation, position, fetch=True)
        if row is None:
            return None
        return Lookup(row[0], None if row[1] is None else bytes(row[1]))

    def run_state(self, run: str) -> tuple[str, str | None] | None:
        row = self._run(f"SELECT fingerprint, claim FROM {TABLE} WHERE job = %s AND run = %s "
                        "LIMIT 1", self._job, run, fetch=True)
        return None if row is None else (row[0], row[1])

    def runs_of(self, key: str, fingerprint: str, min_seq: int, owner: str) -> list[str]:
        with self._lock, self._db.cursor() as cursor:
            cursor.execute(f"SELECT run, MIN(seq) FROM {TABLE} WHERE job = %s AND input_key = "
                           "%s AND fingerprint = %s AND seq >= %s AND claim IS DISTINCT FROM "
                           "%s GROUP BY run ORDER BY MIN(seq), run",
                           (self._job, key, fingerprint, min_seq, owner))
            return [row[0] for row in cursor.fetchall()]

    def claim(self, run: str, owner: str) -> None:
        self._run(f"UPDATE {TABLE} SET claim = %s WHERE job = %s AND run = %s", owner,
                  self._job, run)

    def steps_done(self, observations: Sequence[str], owner: str, mark: int,
                   at: float) -> None:
        self._run(f"UPDATE {TABLE} SET owner = %s, done_mark = %s, done_at = %s WHERE job = %s "
                  "AND observation = ANY(%s)", owner, mark, at, self._job, list(observations))

    def prune(self, owner: str, mark: int) -> int:
        return int(self._run(f"DELETE FROM {TABLE} WHERE job = %s AND owner = %s AND "
                             "done_mark <= %s", self._job, owner, mark))

    def prune_older(self, at: float) -> int:
        return int(self._run(f"DELETE FROM {TABLE} WHERE job = %s AND done_at < %s",
                             self._job, at))

    def clear_subtask(self, subtask: int) -> int:
        return int(self._run(f"DELETE FROM {TABLE} WHERE job = %s AND subtask = %s",
                             self._job, subtask))

    def row_count(self) -> int:
        row = self._run(f"SELECT COUNT(*) FROM {TABLE} WHERE job = %s", self._job, fetch=True)
        return int(row[0])

    def close(self) -> None:
        with self._lock:
            for db in self._opened:
                db.close()
