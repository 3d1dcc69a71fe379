"""The embedded vector store: one SQLite file per job, exact cosine search per scope.

Why not embedded Qdrant (the earlier default): its local mode evaluates a payload
filter in Python over every stored point, so a search scoped to one key cost
~21 µs per row of the *whole* store (1 s at 50,000 rows), it kept every point in
memory, and its folder admits one process. Here the table is clustered by
scope: its primary key starts with (``user_id``, ``agent_id``, ``run_id``), so
the rows of one key lie side by side in the file (in pages large enough to hold
a vector), and a scoped search reads just those rows and scores them exactly
with numpy: its cost follows the key's rows, not the store's. It reads only their ids
and vectors (a few hundred rows at a time, one matrix product each) and the payloads
of the hits alone, all in one read transaction. The rest of a
filter runs on those rows only, in the project's filter language
(:mod:`flink_agents_ltm.api.filters`, ``parse_filter`` + ``matches``: the same
meaning as on every other store), so long-term memory hands this store its
whole filter. Lookups by id go through a unique index on the id.

Mem0 hands a store filters in two spellings: ``get_all`` passes them as given,
``search`` first rewrites them (``Memory._process_metadata_filters``): a
top-level ``OR`` / ``NOT`` becomes ``$or`` / ``$not``, an ``AND`` is merged
into the top level (deeper levels stay as written). Both are read here.

Sharing: SQLite in WAL mode lets every process of a machine open the same file
(PyFlink's process mode, several operators): readers never block, writers queue
(``busy_timeout``). Each thread gets its own connection, so searches of
different threads run in parallel; every write is one ``BEGIN IMMEDIATE``
transaction, so a batch ``insert`` is all or nothing. The file lives on local
disk (WAL needs shared memory: not on NFS), and folder and files are private
(0700 / 0600). ``insert`` with an existing id replaces that row (an upsert), so
replayed writes with the same ids do not duplicate.

Erasure: SQLite overwrites deleted rows and freed pages with zeros (``secure_delete``), and
every delete (and every write that replaces a row's text) returns only once a checkpoint that
began after its commit copied the write-ahead log into the file and truncated it, since the
log's frames still hold the rows as written. One thread of a store checkpoints at a time and
the threads that committed before it began are done when it is (SQLite refuses a second
checkpoint at once: ``busy`` without waiting, which is not a reader); a checkpoint of another
process is retried. A connection that holds a read snapshot from before the delete may still
read the deleted rows, so their bytes must stay until it ends: the delete waits for such
readers (a read here lasts one statement, or one search), at most ``erasure_wait_ms`` (default
:data:`ERASURE_WAIT_MS`). Past that bound the delete logs an error naming its items and
returns; the text leaves the log at this store's first call after the reader ended (any call,
or ``close``), which logs the items again. ``secure_delete`` does not reach one more place: a
page that a b-tree balance rebuilt keeps the bytes of the rows it moved away in its unused
space, so a deleted row may have a copy there. After the checkpoint the unused space of every
page is searched for the deleted texts (about 0.3 ms per MB of file); a text found there (and
in no live row) makes the store ``VACUUM`` the file, and an error names the items still
found after that.

Registered in Mem0's ``VectorStoreFactory`` as :data:`PROVIDER`.
"""

from __future__ import annotations

import builtins
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from flink_agents_ltm.api.filters import (
    matches,
)
from flink_agents_ltm.integrations.mem0.environment import import_mem0
from flink_agents_ltm.integrations.mem0.providers.embedded.file import (
    BUSY_TIMEOUT_MS,
    SCHEMA,
    WriteTransaction,
    add_expiry_column,
    create_private,
    in_unallocated_space,
)
from flink_agents_ltm.integrations.mem0.providers.embedded.query import (
    SCOPE_FIELDS,
    StoreFilter,
    expiry_column,
    joined,
    payload_json,
    scope_columns,
    top,
)

import_mem0()
from mem0.utils.factory import VectorStoreFactory  # noqa: E402
from mem0.vector_stores.base import VectorStoreBase  # noqa: E402

log = logging.getLogger(__name__)

PROVIDER = "flink_agents_embedded"
# How long a delete waits for readers of an older snapshot before it leaves its checkpoint
# to this store's next call; a writer of the file waits meanwhile.
ERASURE_WAIT_MS = 10_000
# Rows (a 384-dimensional vector is 1.5 kB) stay inside their b-tree page, so the rows of
# one scope lie side by side instead of on overflow pages.
PAGE_SIZE = 65_536
# Rows a search scores at a time: their vectors (1.5 kB each at 384 dimensions) are joined
# into one matrix of ~400 kB, which stays in the CPU's cache and in memory the allocator
# hands back chunk after chunk (one matrix of a 50,000-row key would be 77 MB of fresh pages).
SCAN_CHUNK = 256
# Ids a statement looks up at once (SQLite before 3.32 takes at most 999 parameters).
_IDS_PER_STATEMENT = 500

class EmbeddedStoreConfig(BaseModel):
    """What ``{"provider": "flink_agents_embedded", "config": {...}}`` takes."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="the SQLite file; its folder is created (0700)")
    collection_name: str = "flink_agents_ltm"
    embedding_model_dims: int = Field(gt=0)
    erasure_wait_ms: int = Field(default=ERASURE_WAIT_MS, ge=0, description=(
        "how long a delete waits for readers of an older snapshot to end so that the deleted "
        "text leaves the write-ahead log before the delete returns"))


@dataclass(frozen=True, slots=True)
class StoredVector:
    """A row as Mem0 reads it: ``id``, ``score`` (``None`` outside search), ``payload``."""

    id: str
    score: float | None
    payload: dict[str, Any]


class EmbeddedVectorStore(VectorStoreBase):
    """Mem0 ``VectorStoreBase`` on one SQLite file; thread-safe; shared by processes.

    Deleted text leaves the disk: SQLite overwrites deleted rows (``secure_delete``), a
    delete returns once the write-ahead log, whose frames still hold the rows as written, was
    truncated after it (waiting up to ``erasure_wait_ms`` for readers of an older snapshot),
    and copies a page rebuild left in unused space are vacuumed away; else an error names the
    items (see the module).
    """

    upserts_on_insert = True  # an existing id is replaced (see row_writes)

    def __init__(self, path: str, embedding_model_dims: int,
                 collection_name: str = "flink_agents_ltm",
                 erasure_wait_ms: int = ERASURE_WAIT_MS):
        if erasure_wait_ms < 0:
            raise ValueError(f"erasure_wait_ms must be 0 or more, got {erasure_wait_ms}")
        self.path = Path(path)
        self.erasure_wait_ms = int(erasure_wait_ms)
        # Erasure bookkeeping: every commit whose old text must leave the log takes a ticket;
        # a checkpoint that truncated the log purged every ticket handed out before it began.
        # One thread of this store checkpoints at a time (SQLite refuses a second one at
        # once), and the threads waiting meanwhile are done when its checkpoint covered them.
        self._checkpoint_lock = threading.Lock()
        self._tickets_lock = threading.Lock()
        self._tickets = 0
        self._purged = 0
        # Tickets past the wait -> their item ids: the next call of any thread retries them.
        self._unpurged: dict[int, tuple[str, ...]] = {}
        self.collection_name = collection_name
        self.embedding_model_dims = int(embedding_model_dims)
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        self._closed = False
        create_private(self.path)
        self.create_col(collection_name, self.embedding_model_dims)

    # ------------------------------------------------------------------ connections

    def _connection(self) -> sqlite3.Connection:
        if self._closed:
            raise RuntimeError(f"the embedded vector store {self.path} is closed")
        conn = getattr(self._local, "connection", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000,
                                   isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")  # only before the first table
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA secure_delete = ON")
            conn.executescript(SCHEMA)
            add_expiry_column(conn)
            self._local.connection = conn
            with self._connections_lock:
                self._connections.append(conn)
        if self._unpurged:
            with self._tickets_lock:
                last = max(self._unpurged, default=0)
            if last:
                self._purge_through(conn, last, deadline=0.0)
        return conn

    def _write(self) -> WriteTransaction:
        return WriteTransaction(self._connection())

    def _texts_of(self, conn: sqlite3.Connection, ids: Sequence[str]) -> dict[str, bytes]:
        """What of rows ``ids`` must leave the disk, by id: the text (``data``) as the payload
        holds it, or the whole payload when it has no text of 8 bytes or more."""
        texts: dict[str, bytes] = {}
        for first in range(0, len(ids), _IDS_PER_STATEMENT):
            batch = ids[first:first + _IDS_PER_STATEMENT]
            for vector_id, payload in conn.execute(
                    "SELECT id, payload FROM vectors INDEXED BY vectors_id WHERE collection = ? "
                    f"AND id IN ({', '.join('?' * len(batch))})", (self.collection_name, *batch)):
                data = json.loads(payload).get("data")
                text = json.dumps(data, ensure_ascii=False)[1:-1].encode() \
                    if isinstance(data, str) else b""
                texts[vector_id] = text if len(text) >= 8 else payload.encode()
        return texts

    def _erase_from_log(self, conn: sqlite3.Connection, ids: Sequence[str] = (),
                        texts: Mapping[str, bytes] | None = None) -> bool:
        """Return once the text this thread's last commit removed (of items ``ids``) has left
        the log: a checkpoint that began after that commit copied the log into the file (where
        ``secure_delete`` zeroed the deleted rows) and truncated it to nothing, this thread's
        or another's. Waits up to ``erasure_wait_ms`` for readers of an older snapshot, for
        writers and for checkpoints of other threads and processes; past that it logs an
        error naming ``ids``, returns ``False`` and leaves them to the next call."""
        with self._tickets_lock:
            self._tickets += 1
            ticket = self._tickets
        deadline = time.monotonic() + self.erasure_wait_ms / 1000
        if self._purge_through(conn, ticket, deadline):
            return self._scrub(conn, texts or {}, deadline)
        named = tuple(str(i) for i in ids)
        with self._tickets_lock:
            if self._purged >= ticket:  # purged by another thread just now
                return True
            self._unpurged[ticket] = named
        log.error("the deleted or replaced text of items %s of the embedded store %s is still "
                  "in its write-ahead log: a reader held a snapshot from before the delete, or "
                  "another checkpoint or writer held the file, for over %d ms; it leaves at "
                  "this store's first call after that reader ends (or raise erasure_wait_ms)",
                  list(named) if named else "(the whole collection)", self.path,
                  self.erasure_wait_ms)
        return False

    def _scrub(self, conn: sqlite3.Connection, texts: Mapping[str, bytes],
               deadline: float) -> bool:
        """Remove what ``secure_delete`` cannot: SQLite rebuilds a page when it moves rows
        between pages (a b-tree balance) without zeroing the space the moved rows left, so a
        copy of a row may stay in a page's unallocated space, and stay there after the row
        is deleted. When a deleted text is in such space (and in no live row), ``VACUUM``
        rebuilds the file and the log is truncated again; an error names the items whose
        text is still there after that."""
        stale = self._stale_copies(conn, texts)
        if not stale:
            return True
        vacuumed = False
        remaining = deadline - time.monotonic()
        if self._checkpoint_lock.acquire(timeout=max(remaining, 0.001)):
            try:
                conn.execute(f"PRAGMA busy_timeout = {max(0, int(remaining * 1000))}")
                try:
                    conn.execute("VACUUM")
                    vacuumed = True
                except sqlite3.OperationalError as error:
                    log.error("could not VACUUM the embedded store %s: %s", self.path, error)
                finally:
                    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            finally:
                self._checkpoint_lock.release()
        if vacuumed:
            with self._tickets_lock:
                self._tickets += 1
                ticket = self._tickets
            if self._purge_through(conn, ticket, max(deadline, time.monotonic() + 0.001)):
                stale = self._stale_copies(conn, {i: texts[i] for i in stale})
                if not stale:
                    return True
        log.error("the deleted or replaced text of items %s of the embedded store %s is still "
                  "in its file (a copy SQLite left in a page's unused space): VACUUM it "
                  "(flink-agents-ltm erase-key --compact) once no reader holds it", stale,
                  self.path)
        return False

    def _stale_copies(self, conn: sqlite3.Connection, texts: Mapping[str, bytes]) -> list[str]:
        """The ids of ``texts`` found in the unallocated space of the file's pages and in no
        live row (a text another row holds is not this item's to erase)."""
        if not texts:
            return []
        ids = builtins.list(texts)
        found = [i for i, hit in zip(ids, in_unallocated_space(
            self.path, [texts[i] for i in ids]), strict=True) if hit]
        return [i for i in found if conn.execute(
            "SELECT 1 FROM vectors WHERE instr(CAST(payload AS BLOB), ?) > 0 LIMIT 1",
            (texts[i],)).fetchone() is None]

    def _purge_through(self, conn: sqlite3.Connection, ticket: int, deadline: float) -> bool:
        """Checkpoint and truncate the log until every commit up to ``ticket`` has left it
        (``True``), or ``False`` at ``deadline`` (``time.monotonic()``; one try, without
        waiting for another thread, when it has passed)."""
        while True:
            if self._purged >= ticket:
                return True
            remaining = deadline - time.monotonic()
            if not self._checkpoint_lock.acquire(timeout=remaining) if remaining > 0 \
                    else not self._checkpoint_lock.acquire(blocking=False):
                return self._purged >= ticket
            try:
                if self._purged >= ticket:
                    return True
                with self._tickets_lock:
                    covered = self._tickets  # every commit with a ticket has happened
                if self._checkpoint(conn, max(0, int((deadline - time.monotonic()) * 1000))):
                    self._purged_through(covered)
                    return True
            finally:
                self._checkpoint_lock.release()
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.002)  # another process's checkpoint, or a writer between two tries

    def _checkpoint(self, conn: sqlite3.Connection, wait_ms: int) -> bool:
        """One ``wal_checkpoint(TRUNCATE)``: ``True`` when the whole log went into the file and
        was truncated to nothing. ``busy`` is 1 when a reader of an older snapshot or a writer
        outlasted ``wait_ms``, and at once when another connection was checkpointing (SQLite
        takes the checkpoint lock without waiting); ``log`` is 0 after a truncation."""
        conn.execute(f"PRAGMA busy_timeout = {wait_ms}")
        try:
            busy, frames, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        finally:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        return not busy and frames <= 0

    def _purged_through(self, covered: int) -> None:
        with self._tickets_lock:
            self._purged = max(self._purged, covered)
            done = [ticket for ticket in self._unpurged if ticket <= covered]
            items = [item for ticket in done for item in self._unpurged.pop(ticket)]
        if done:
            log.warning("the deleted text of items %s left the write-ahead log of the embedded "
                        "store %s", items or "(the whole collection)", self.path)

    def close(self) -> None:
        """Close every thread's connection (after a last try at a pending erasure); later
        calls raise."""
        if self._unpurged and not self._closed:
            try:
                self._connection()  # tries the pending purge once
            except sqlite3.Error:  # closing anyway; SQLite checkpoints at its last close
                log.warning("could not truncate the write-ahead log of %s at close", self.path)
        self._closed = True
        with self._connections_lock:
            connections, self._connections = self._connections, []
        for conn in connections:
            conn.close()

    # ------------------------------------------------------------------ collections

    def create_col(self, name: str | None = None, vector_size: int | None = None,
                   distance: str = "cosine") -> None:
        """Create collection ``name`` (default: this store's) for ``vector_size``-dimensional
        vectors; an existing one of another size raises ``ValueError`` naming both."""
        name = name or self.collection_name
        size = int(vector_size or self.embedding_model_dims)
        if distance != "cosine":
            raise ValueError(f"the embedded store measures cosine similarity, not {distance}")
        with self._write() as conn:
            conn.execute("INSERT OR IGNORE INTO collections (name, dimensions) VALUES (?, ?)",
                         (name, size))
            held = conn.execute("SELECT dimensions FROM collections WHERE name = ?",
                                (name,)).fetchone()[0]
        if held != size:
            raise ValueError(f"collection '{name}' holds {held}-dimensional vectors but the "
                             f"embedding model produces {size}; use another collection or "
                             "base dir for this model")

    def list_cols(self) -> list[str]:
        return [row[0] for row in self._connection().execute(
            "SELECT name FROM collections ORDER BY name")]

    def delete_col(self) -> None:
        with self._write() as conn:
            conn.execute("DELETE FROM vectors WHERE collection = ?", (self.collection_name,))
            conn.execute("DELETE FROM collections WHERE name = ?", (self.collection_name,))
        self._erase_from_log(conn)

    def col_info(self) -> dict[str, Any]:
        count = self._connection().execute(
            "SELECT COUNT(*) FROM vectors WHERE collection = ?",
            (self.collection_name,)).fetchone()[0]
        return {"name": self.collection_name, "count": count,
                "dimensions": self.embedding_model_dims, "path": str(self.path)}

    def reset(self) -> None:
        self.delete_col()
        self.create_col(self.collection_name, self.embedding_model_dims)

    # ------------------------------------------------------------------ rows

    def insert(self, vectors: Sequence[Sequence[float]], payloads: Sequence[Mapping] | None = None,
               ids: Sequence[str] | None = None) -> None:
        """Store rows in one transaction; an existing id is replaced (upsert)."""
        if ids is None or len(ids) != len(vectors):
            raise ValueError("insert needs one id per vector")
        payloads = payloads or [{} for _ in vectors]
        if len(payloads) != len(vectors):
            raise ValueError("insert needs one payload per vector")
        first = time.time_ns()
        rows = [(self.collection_name, *scope_columns(payload), str(vector_id), first + n,
                 self._blob(vector), payload_json(payload), expiry_column(payload))
                for n, (vector_id, vector, payload) in enumerate(
                    zip(ids, vectors, payloads, strict=True))]
        with self._write() as conn:
            old_texts = self._texts_of(conn, [str(vector_id) for vector_id in ids])
            before = conn.total_changes
            conn.executemany("DELETE FROM vectors WHERE collection = ? AND id = ?",
                             [(self.collection_name, row[4]) for row in rows])
            replaced = conn.total_changes > before
            conn.executemany(
                "INSERT INTO vectors (collection, user_id, agent_id, run_id, id, seq, vector, "
                "payload, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        if replaced:  # the replaced rows' text is still in the log's frames
            self._erase_from_log(conn, [str(vector_id) for vector_id in ids], old_texts)

    def update(self, vector_id: str, vector: Sequence[float] | None = None,
               payload: Mapping[str, Any] | None = None) -> None:
        """Replace the vector and/or the payload of a row (nothing happens for an unknown id);
        the old text leaves every file as a deleted row's does."""
        with self._write() as conn:
            old_texts = self._texts_of(conn, [str(vector_id)]) if payload is not None else {}
            if vector is not None:
                conn.execute("UPDATE vectors SET vector = ? WHERE collection = ? AND id = ?",
                             (self._blob(vector), self.collection_name, str(vector_id)))
            if payload is not None:
                conn.execute(
                    "UPDATE vectors SET user_id = ?, agent_id = ?, run_id = ?, payload = ?, "
                    "expires_at = ? WHERE collection = ? AND id = ?",
                    (*scope_columns(payload), payload_json(payload), expiry_column(payload),
                     self.collection_name, str(vector_id)))
        self._erase_from_log(conn, [str(vector_id)], old_texts)

    def delete(self, vector_id: str) -> None:
        self.delete_many([vector_id])

    def delete_many(self, vector_ids: Sequence[str]) -> None:
        """Delete rows in one transaction, then truncate the write-ahead log so that no file
        keeps their text when this returns (a reader of an older snapshot is waited for up
        to ``erasure_wait_ms``; past that, see the module)."""
        with self._write() as conn:
            texts = self._texts_of(conn, [str(i) for i in vector_ids])
            conn.executemany("DELETE FROM vectors WHERE collection = ? AND id = ?",
                             [(self.collection_name, str(i)) for i in vector_ids])
        self._erase_from_log(conn, vector_ids, texts)

    def get(self, vector_id: str) -> StoredVector | None:
        row = self._connection().execute(
            "SELECT id, payload FROM vectors WHERE collection = ? AND id = ?",
            (self.collection_name, str(vector_id))).fetchone()
        return None if row is None else StoredVector(row[0], None, json.loads(row[1]))

    def list(self, filters: Mapping[str, Any] | None = None,
             top_k: int | None = 100) -> list[list[StoredVector]]:
        """Rows matching ``filters`` in insertion order, at most ``top_k``; wrapped in one
        more list, as Mem0's ``delete_all`` expects."""
        where = StoreFilter.of(filters)
        found: list[StoredVector] = []
        rows = self._connection().execute(*self._scoped_sql(where, "id, payload", ordered=True))
        for vector_id, text in rows:
            payload = json.loads(text)
            if matches(where.rest, payload):
                found.append(StoredVector(vector_id, None, payload))
                if top_k is not None and len(found) >= top_k:
                    break
        return [found]

    def search(self, query: str, vectors: Sequence[float], top_k: int = 5,
               filters: Mapping[str, Any] | None = None) -> builtins.list[StoredVector]:
        """The ``top_k`` rows matching ``filters`` most similar to ``vectors``: exact cosine
        over the rows of the filter's scope, scores in [0, 1], best first (ties: scope order).

        The scan reads only (id, vector) and scores a chunk of :data:`SCAN_CHUNK` rows at a
        time (one ``bytes.join`` and one matrix product per chunk, memory that stays warm);
        the payloads of the hits are read after ranking. Only a filter beyond the scope makes
        every row's payload be read and checked before ranking. Scan and payloads come from
        one read transaction, so a concurrent write never mixes two versions of a row."""
        where = StoreFilter.of(filters)
        query_vector = self._normalized(vectors)
        if top_k <= 0:
            return []
        conn = self._connection()
        conn.execute("BEGIN")  # deferred: a read snapshot for the scan and the payloads
        try:
            if where.rest is None:
                ids, scores = self._score_scope(conn, where, query_vector)
                best = top(scores, top_k)
                payloads = self._payloads(conn, where, [ids[i] for i in best])
            else:
                ids, scores, kept = self._score_matching(conn, where, query_vector)
                best = top(scores, top_k)
                payloads = {ids[i]: kept[i] for i in best}
        finally:
            if conn.in_transaction:
                conn.execute("COMMIT")
        return [StoredVector(ids[i], min(1.0, max(0.0, float(scores[i]))), payloads[ids[i]])
                for i in best]

    def _score_scope(self, conn: sqlite3.Connection, where: StoreFilter,
                     query_vector: np.ndarray) -> tuple[builtins.list[str], np.ndarray]:
        """The ids of the scope's rows in scan order and their cosine with ``query_vector``."""
        cursor = conn.execute(*self._scoped_sql(where, columns="id, vector"))
        ids: list[str] = []
        scores: list[np.ndarray] = []
        while rows := cursor.fetchmany(SCAN_CHUNK):
            chunk_ids, blobs = zip(*rows, strict=True)
            ids.extend(chunk_ids)
            scores.append(self._scores(blobs, query_vector))
        return ids, joined(scores)

    def _score_matching(self, conn: sqlite3.Connection, where: StoreFilter,
                        query_vector: np.ndarray
                        ) -> tuple[builtins.list[str], np.ndarray, builtins.list[dict[str, Any]]]:
        """Like :meth:`_score_scope` for the scope's rows that match ``where.rest`` only,
        with their payloads."""
        cursor = conn.execute(*self._scoped_sql(where, columns="id, vector, payload"))
        ids: list[str] = []
        payloads: list[dict[str, Any]] = []
        scores: list[np.ndarray] = []
        while rows := cursor.fetchmany(SCAN_CHUNK):
            blobs = []
            for vector_id, blob, text in rows:
                payload = json.loads(text)
                if matches(where.rest, payload):
                    ids.append(vector_id)
                    payloads.append(payload)
                    blobs.append(blob)
            if blobs:
                scores.append(self._scores(blobs, query_vector))
        return ids, joined(scores), payloads

    def _scores(self, blobs: Sequence[bytes], query_vector: np.ndarray) -> np.ndarray:
        matrix = np.frombuffer(b"".join(blobs), dtype=np.float32)
        return matrix.reshape(len(blobs), self.embedding_model_dims) @ query_vector

    def _payloads(self, conn: sqlite3.Connection, where: StoreFilter,
                  ids: Sequence[str]) -> dict[str, dict]:
        """The payloads of ``ids`` (rows of ``where``'s scope, in this read transaction), by
        id: through the primary key when the scope pins all of it (the pages the scan just
        read), else through the id index (without INDEXED BY, SQLite 3.40 reads an IN list
        through the primary key's prefix: the whole collection)."""
        if len(where.scope) == len(SCOPE_FIELDS):
            sql = ("SELECT id, payload FROM vectors WHERE collection = ? AND user_id = ? "
                   "AND agent_id = ? AND run_id = ? AND id IN ")
            params: tuple[str, ...] = (self.collection_name,
                                       *(where.scope[name] for name in SCOPE_FIELDS))
        else:
            sql = ("SELECT id, payload FROM vectors INDEXED BY vectors_id WHERE collection = ? "
                   "AND id IN ")
            params = (self.collection_name,)
        found: dict[str, dict] = {}
        for first in range(0, len(ids), _IDS_PER_STATEMENT):
            batch = ids[first:first + _IDS_PER_STATEMENT]
            found.update((vector_id, json.loads(text)) for vector_id, text in conn.execute(
                f"{sql}({', '.join('?' * len(batch))})", (*params, *batch)))
        return found

    def keyword_search(self, query: str, top_k: int = 5,
                       filters: Mapping[str, Any] | None = None) -> None:
        """No BM25 index: Mem0 ranks by similarity only (as with embedded Qdrant)."""

    # ------------------------------------------------------------------ internals

    def query_plan(self, filters: Mapping[str, Any] | None) -> str:
        """SQLite's plan for the rows a search with ``filters`` reads (``SEARCH vectors USING
        PRIMARY KEY (collection=? AND user_id=? ...)`` when the filter pins the scope)."""
        sql, params = self._scoped_sql(StoreFilter.of(filters), columns="id, vector")
        return "\n".join(row[-1] for row in self._connection().execute(
            f"EXPLAIN QUERY PLAN {sql}", params))

    def _scoped_sql(self, where: StoreFilter, columns: str, ordered: bool = False
                    ) -> tuple[str, tuple[Any, ...]]:
        """``columns`` of the rows of ``where``'s scope (and expiry); in the order of the
        primary key, or of insertion (``seq``) when ``ordered``."""
        scope = where.scope
        sql = "".join(f" AND {name} = ?" for name in scope) + "".join(
            f" AND {condition}" for condition, _ in where.expiry)
        params = (self.collection_name, *scope.values(), *(bound for _, bound in where.expiry))
        order = " ORDER BY seq" if ordered else ""  # a search ranks the rows itself
        return f"SELECT {columns} FROM vectors WHERE collection = ?{sql}{order}", params

    def _normalized(self, vector: Sequence[float]) -> np.ndarray:
        array = np.asarray(vector, dtype=np.float32).reshape(-1)
        if array.shape[0] != self.embedding_model_dims:
            raise ValueError(f"vector dimension error: collection '{self.collection_name}' "
                             f"holds {self.embedding_model_dims}-dimensional vectors, got "
                             f"{array.shape[0]}")
        norm = float(np.linalg.norm(array))
        return array / norm if norm > 0 else array

    def _blob(self, vector: Sequence[float]) -> bytes:
        return self._normalized(vector).astype("<f4").tobytes()


VectorStoreFactory.provider_to_class[PROVIDER] = f"{__name__}.EmbeddedVectorStore"
