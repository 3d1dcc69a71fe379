"""The action-state store on PostgreSQL: the job's pgvector server, for several machines.

``agents.action-state.store: postgres`` (this module's ``open_store``, an entry point)
with the job's ``long-term-memory.vector-store`` an inline pgvector store
(``{"provider": "pgvector", "config": {...}}``): the rows go to the table
``ltm_action_state_v2`` of that database, through a connection of their own with the
vector store's timeouts. psycopg2 is imported only when the store opens; errors
name the server (``host:port/db``), never the password.

A server restart does not stop the store: each connection is checked before a statement with
long-term memory's rule (``pgvector_connection.dropped``: the server wrote to an idle
connection, so it closed it) and replaced when the server dropped it. A statement whose
connection the server drops while it runs is sent once more on a new connection (every
statement of the store may run twice: upserts, updates to the same values, deletes); if the
server is not back yet, that one operation fails with one line naming ``host:port/db``
(:class:`PgvectorUnavailableError`, ``ConnectionError``), and the next one connects again.
The writer thread does the same for its groups, and never dies of a failed statement.

Started markers and results come from the worker threads, many at once. One writer thread
of the store takes every statement queued since its last commit and writes them in one
transaction (a group commit: one flush of the server's log for many calls, instead of one
per statement). A started marker waits for its commit, since the call's side effect must
come after it; a result is queued and the worker goes on: the queue is written in order, so
a result is committed no later than any started marker queued after it (a later call of the
action), and a crash before its commit leaves the call started, as a crash during the call
would. Done marks go through the writer too, after the results of their steps, so that no
two transactions of the store lock the same rows in different orders; a prune first waits for
the marks queued before it. The mailbox thread's other statements (lookups, claims,
pruning) use a connection of their own.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.api.options import AgentsConfiguration
from flink_agents_ltm.integrations.mem0.providers.pgvector.connection import (
    PgvectorConnection,
    dropped,
)
from flink_agents_ltm.runtime.action_state.store import Lookup, RunTag

GROUP_MOST = 512  # statements in one group commit at most
log = logging.getLogger(__name__)
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
    started_at DOUBLE PRECISION,
    PRIMARY KEY (job, observation, position)
);
ALTER TABLE {TABLE} ADD COLUMN IF NOT EXISTS started_at DOUBLE PRECISION;
CREATE INDEX IF NOT EXISTS {TABLE}_done ON {TABLE} (job, owner, done_mark);
CREATE INDEX IF NOT EXISTS {TABLE}_done_at ON {TABLE} (job, done_at);
CREATE INDEX IF NOT EXISTS {TABLE}_run ON {TABLE} (job, run);
CREATE INDEX IF NOT EXISTS {TABLE}_input ON {TABLE} (job, input_key, fingerprint, seq);
"""


def open_store(job_id: str, config: AgentsConfiguration) -> PostgresActionStateStore:
    from flink_agents_ltm.integrations.mem0.providers import backend_for

    store = config.get(LongTermMemoryOptions.VECTOR_STORE)
    connection = (backend_for(str(store.get("provider"))).connect(dict(store.get("config") or {}))
                  if isinstance(store, Mapping) else None)  # the store's backend knows its server
    if not isinstance(connection, PgvectorConnection):
        raise ValueError("the PostgreSQL action-state store needs the job's "
                         "long-term-memory.vector-store to be an inline pgvector store "
                         '({"provider": "pgvector", "config": {...}})')
    return PostgresActionStateStore(connection, job_id)


class _Link:
    """One connection to the store's server that outlives a restart of it: :meth:`run`
    connects when there is none or the server dropped it, and sends a statement whose
    connection was dropped under it once more on a new one. Not thread-safe."""

    def __init__(self, connection: PgvectorConnection, autocommit: bool):
        self._connection, self._autocommit = connection, autocommit
        self.db: Any = None
        self.live()

    def live(self) -> Any:
        """The connection, new if there was none or the server dropped it; raises a
        ``ConnectionError`` naming the server if it cannot connect."""
        if self.db is not None and dropped(self.db):
            log.info("the PostgreSQL action-state store at %s: the server closed the "
                     "connection (a restart?); connecting again", self._connection.target)
            self.close()
        if self.db is None:
            db = self._connection.connect()
            db.autocommit = self._autocommit
            self.db = db
        return self.db

    def run(self, work: Callable[[Any], Any]) -> Any:
        """``work(connection)``, once more on a new connection if the server dropped the
        first under it; errors that say the server is gone or slow name it, in one line."""
        for attempt in (1, 2):
            db = self.live()
            try:
                return work(db)
            except Exception as error:
                clear = self._connection.clear_error(error)
                if getattr(db, "closed", 0):  # the server went away: the next one connects
                    self.close()
                    if attempt == 1 and clear is not None:
                        continue
                elif not self._autocommit:
                    with contextlib.suppress(Exception):
                        db.rollback()
                if clear is None:
                    raise
                raise clear from None
        raise AssertionError("unreachable")

    def close(self) -> None:
        db, self.db = self.db, None
        if db is not None:
            with contextlib.suppress(Exception):  # a connection the server dropped
                db.close()


class _Pending:
    """A statement queued for the writer; ``wait()`` until it is committed (or failed)."""

    __slots__ = ("sql", "params", "what", "done", "error")

    def __init__(self, sql: str, params: tuple[object, ...], what: str | None):
        self.sql, self.params, self.what = sql, params, what
        self.done = threading.Event()
        self.error: BaseException | None = None

    def wait(self) -> None:
        self.done.wait()
        if self.error is not None:
            raise self.error


class _GroupWriter:
    """The worker threads' statements, written by one thread in shared transactions."""

    def __init__(self, connection: PgvectorConnection):
        self._link = _Link(connection, autocommit=False)  # a transaction per group
        self._queue: deque[_Pending] = deque()
        self._ready = threading.Condition()
        self._closing = False
        self.commits = 0  # transactions written (a test and the bench read it)
        self._thread = threading.Thread(target=self._loop, name="ltm-action-state-writer",
                                        daemon=True)
        self._thread.start()

    def submit(self, sql: str, *params: object, unawaited: str | None = None) -> _Pending:
        """Queue ``sql``; ``unawaited`` names a statement nobody waits for, in the log line
        of its failure (the failure of one waited for is raised by ``wait()``)."""
        pending = _Pending(sql, params, unawaited)
        with self._ready:
            if self._closing:
                raise RuntimeError("the PostgreSQL action-state store is closed")
            self._queue.append(pending)
            self._ready.notify()
        return pending

    def _loop(self) -> None:
        while True:
            with self._ready:
                while not self._queue and not self._closing:
                    self._ready.wait()
                if not self._queue:
                    return
                group = [self._queue.popleft()
                         for _ in range(min(len(self._queue), GROUP_MOST))]
            self._write(group)

    def _write(self, group: list[_Pending]) -> None:
        try:
            self._link.run(lambda db: self._send(db, group))
            self.commits += 1
        except Exception as error:  # noqa: BLE001 - each statement answers for itself
            # One bad statement must not fail the others; a server that cannot be reached
            # fails them all at once (one connection attempt, not one per statement).
            if len(group) > 1 and not isinstance(error, ConnectionError | TimeoutError):
                for pending in group:
                    self._write([pending])
                return
            group[0].error = error
            if group[0].what is not None:  # a lost result: the call runs again after a crash
                log.warning("the PostgreSQL action-state store could not write a %s: %s: %s",
                            group[0].what, type(error).__name__,
                            (str(error).strip().splitlines() or [""])[0][:300])
        for pending in group:
            pending.done.set()

    @staticmethod
    def _send(db: Any, group: list[_Pending]) -> None:
        from psycopg2.extras import execute_batch

        with db.cursor() as cursor:
            start = 0
            while start < len(group):  # a run of the same statement: one round trip
                end = start + 1
                while end < len(group) and group[end].sql == group[start].sql:
                    end += 1
                if end - start == 1:
                    cursor.execute(group[start].sql, group[start].params)
                else:
                    execute_batch(cursor, group[start].sql,
                                  [pending.params for pending in group[start:end]],
                                  page_size=end - start)
                start = end
        db.commit()

    def close(self) -> None:
        """Write what is queued, then stop."""
        with self._ready:
            self._closing = True
            self._ready.notify()
        self._thread.join()
        self._link.close()


class PostgresActionStateStore:
    def __init__(self, connection: PgvectorConnection, job_id: str):
        self._job = job_id
        self._connection = dataclasses.replace(connection,
                                               what="the PostgreSQL action-state store")
        self._lock = threading.Lock()
        self._link = _Link(self._connection, autocommit=True)
        try:
            self._link.run(self._create_schema)
            self._writer = _GroupWriter(self._connection)
        except BaseException:
            self._link.close()
            raise

    def _create_schema(self, db: Any) -> None:
        with db.cursor() as cursor:
            cursor.execute(_SCHEMA)
            # rows of a build before started_at: their age counts from now
            cursor.execute(f"UPDATE {TABLE} SET started_at = %s WHERE job = %s AND "
                           "started_at IS NULL", (time.time(), self._job))

    def _run(self, sql: str, *params: object, fetch: bool = False) -> Any:
        def work(db: Any) -> Any:
            with db.cursor() as cursor:
                cursor.execute(sql, params)
                return cursor.fetchone() if fetch else cursor.rowcount

        with self._lock:
            return self._link.run(work)

    def started(self, subtask: int, observation: str, position: str, name: str,
                token: str, tag: RunTag, claim: str, at: float) -> None:
        self._writer.submit(
            f"INSERT INTO {TABLE} (job, observation, position, subtask, name, token, "
            "input_key, run, seq, fingerprint, claim, started_at) VALUES (%s, %s, %s, %s, "
            "%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (job, observation, position) "
            "DO UPDATE SET subtask = EXCLUDED.subtask, name = EXCLUDED.name, token = "
            "EXCLUDED.token, result = NULL, owner = NULL, done_mark = NULL, "
            "done_at = NULL, input_key = EXCLUDED.input_key, run = EXCLUDED.run, "
            "seq = EXCLUDED.seq, fingerprint = EXCLUDED.fingerprint, "
            "claim = EXCLUDED.claim, started_at = EXCLUDED.started_at", self._job,
            observation, position, subtask, name, token, tag.key, tag.run, tag.seq,
            tag.fingerprint, claim, at).wait()

    def completed(self, observation: str, position: str, token: str, result: bytes) -> None:
        from psycopg2 import Binary

        self._writer.submit(f"UPDATE {TABLE} SET result = %s WHERE job = %s AND "
                            "observation = %s AND position = %s AND token = %s", Binary(result),
                            self._job, observation, position, token,
                            unawaited="result")  # committed in order, before later markers

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
        def work(db: Any) -> list[str]:
            with db.cursor() as cursor:
                cursor.execute(f"SELECT run, MIN(seq) FROM {TABLE} WHERE job = %s AND "
                               "input_key = %s AND fingerprint = %s AND seq >= %s AND claim "
                               "IS DISTINCT FROM %s GROUP BY run ORDER BY MIN(seq), run",
                               (self._job, key, fingerprint, min_seq, owner))
                return [row[0] for row in cursor.fetchall()]

        with self._lock:
            return self._link.run(work)

    def claim(self, run: str, owner: str) -> None:
        self._run(f"UPDATE {TABLE} SET claim = %s WHERE job = %s AND run = %s", owner,
                  self._job, run)

    def steps_done(self, observations: Sequence[str], owner: str, mark: int,
                   at: float) -> None:
        # Through the writer, after the steps' results: a row the writer's open transaction
        # holds would otherwise be locked in another order by this statement (a deadlock).
        self._writer.submit(f"UPDATE {TABLE} SET owner = %s, done_mark = %s, done_at = %s "
                            "WHERE job = %s AND observation = ANY(%s)", owner, mark, at,
                            self._job, list(observations), unawaited="done mark")

    def prune(self, owner: str, mark: int) -> int:
        self._writer.submit("SELECT 1").wait()  # the done marks queued so far are written
        return int(self._run(f"DELETE FROM {TABLE} WHERE job = %s AND owner = %s AND "
                             "done_mark <= %s", self._job, owner, mark))

    def prune_older(self, at: float) -> int:
        self._writer.submit("SELECT 1").wait()
        return int(self._run(f"DELETE FROM {TABLE} WHERE job = %s AND done_at < %s",
                             self._job, at))

    def prune_unfinished(self, at: float) -> int:
        return int(self._run(f"DELETE FROM {TABLE} WHERE job = %s AND done_at IS NULL AND "
                             "started_at < %s", self._job, at))

    def has_rows(self, subtask: int, line_suffix: str) -> bool:
        return self._run(f"SELECT EXISTS (SELECT 1 FROM {TABLE} WHERE job = %s AND "
                         "subtask = %s AND right(input_key, %s) = %s)", self._job, subtask,
                         len(line_suffix), line_suffix, fetch=True)[0] is True

    def row_count(self) -> int:
        row = self._run(f"SELECT COUNT(*) FROM {TABLE} WHERE job = %s", self._job, fetch=True)
        return int(row[0])

    @property
    def commits(self) -> int:
        """Transactions the writer thread committed (each holds one or more statements)."""
        return self._writer.commits

    def close(self) -> None:
        try:
            self._writer.close()  # queued results are written first
        finally:
            with self._lock:
                self._link.close()
